"""Machine-readable reports of a run: a JSON document and JUnit XML for CI systems."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from sessionlog_spec.suite.coverage import UNOBSERVABLE, merged
from sessionlog_spec.suite.expectations import Judgement
from sessionlog_spec.suite.run import ERROR, FAILED, UNSUPPORTED, VOID, Failure, GroupResult, RunResult
from sessionlog_spec.suite.verdict import Verdict

REPORT_FORMAT = "sessionlog-report/1"


def failure_json(failure: Failure, judgement: Judgement) -> dict[str, Any]:
    """One disagreement of a group, with the entry that excuses it (if any)."""
    disagreement, entry = failure.disagreement, judgement.entry_for(failure)
    return {
        "case": disagreement.case_id,
        "kind": disagreement.mismatch.kind,
        "message": disagreement.mismatch.message,
        "invariants": disagreement.invariants,
        "codes": disagreement.codes,
        "case_file": str(failure.case_file),
        "flaky": failure.flaky,
        "expected": None if entry is None else {"names": entry.describe(), "reason": entry.reason},
    }


def group_json(result: GroupResult, judgement: Judgement) -> dict[str, Any]:
    """One group's section of the report (``failure`` is the first of ``failures``)."""
    failures = [failure_json(f, judgement) for f in result.failures]
    section: dict[str, Any] = {
        "status": result.status,
        "expected_failure": failures[0]["expected"] if failures and judgement.excused(result) else None,
        "detail": result.detail,
        "seconds": round(result.seconds, 3),
        "examples_per_second": round(result.examples_per_second, 2),
        "steps_per_second": round(result.steps_per_second, 1),
        **result.coverage.to_json(),
    }
    if failures:
        section["failure"] = failures[0]
        section["failures"] = failures
    return section


def report_json(run: RunResult, judgement: Judgement, verdict: Verdict) -> dict[str, Any]:
    """The whole run as a JSON document."""
    invariants, codes = merged(r.coverage for r in run.groups)
    hello = run.hello
    return {
        "format": REPORT_FORMAT,
        "verdict": "passed" if verdict.passed else ("void" if run.void else "failed"),
        "reasons": verdict.reasons,
        "port": {
            "name": hello.name,
            "version": hello.version,
            "protocol": hello.protocol,
            "capabilities": list(hello.capabilities),
            "format_version": hello.format_version,
        },
        "profile": run.options.profile.name,
        "seed": run.options.seed,
        "strict_codes": run.options.strict_codes,
        "seconds": round(run.seconds, 3),
        "groups": {r.group: group_json(r, judgement) for r in run.groups},
        "coverage": {
            "invariants": dict(sorted(invariants.items())),
            "codes": dict(sorted(codes.items())),
            "never_exercised": {"invariants": verdict.never_invariants, "codes": verdict.never_codes},
            "judged": verdict.coverage_judged,
            "unobservable": UNOBSERVABLE,
        },
        "stale_expected_failures": [{"names": e.describe(), "reason": e.reason} for e in judgement.stale],
    }


def write_json(path: Path, document: dict[str, Any]) -> None:
    """Write a report document."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def junit_xml(run: RunResult, judgement: Judgement, verdict: Verdict) -> ET.ElementTree[ET.Element]:
    """The run as JUnit XML: one test case per group, plus one per stale expected failure."""
    suite = ET.Element("testsuite", name=f"sessionlog-conformance ({run.hello.name})", time=f"{run.seconds:.3f}")
    failures = errors = skipped = 0
    for result in run.groups:
        case = ET.SubElement(suite, "testcase", classname="sessionlog", name=result.group, time=f"{result.seconds:.3f}")
        unexcused = judgement.unexcused(result)
        if unexcused:
            failures += 1
            message = "; ".join(str(f.disagreement) for f in unexcused)
            failure = ET.SubElement(case, "failure", message=message, type=unexcused[0].disagreement.mismatch.kind)
            failure.text = "\n\n".join("\n".join([f"case file: {f.case_file}", *f.steps_shown]) for f in unexcused)
        elif result.status in (FAILED, UNSUPPORTED):
            skipped += 1
            reasons = [entry.reason for f in result.failures if (entry := judgement.entry_for(f)) is not None]
            reason = f"expected failure: {'; '.join(reasons)}" if reasons else result.detail
            ET.SubElement(case, "skipped", message=reason)
        elif result.status in (VOID, ERROR):
            errors += 1
            ET.SubElement(case, "error", message=f"{result.status}: {result.detail}")
    for entry in judgement.stale:
        failures += 1
        case = ET.SubElement(suite, "testcase", classname="sessionlog.expected-failures", name=entry.describe())
        ET.SubElement(case, "failure", message=f"stale expected failure: {entry.reason}")
    if verdict.coverage_judged and (verdict.never_invariants or verdict.never_codes):
        failures += 1
        case = ET.SubElement(suite, "testcase", classname="sessionlog.coverage", name="everything exercised")
        missing = ", ".join([*verdict.never_invariants, *verdict.never_codes])
        ET.SubElement(case, "failure", message=f"never exercised: {missing}")
    suite.set("tests", str(len(suite)))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("skipped", str(skipped))
    return ET.ElementTree(suite)


def write_junit(path: Path, tree: ET.ElementTree[ET.Element]) -> None:
    """Write JUnit XML."""
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.indent(tree)
    tree.write(path, encoding="utf-8", xml_declaration=True)
