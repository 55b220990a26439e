"""Machine-readable reports of a run: a JSON document and JUnit XML for CI systems."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from spec.coverage import UNOBSERVABLE, merged
from spec.expectations import Judgement
from spec.runner import ERROR, FAILED, UNSUPPORTED, VOID, GroupResult, RunResult
from spec.verdict import Verdict

REPORT_FORMAT = "sessionlog-report/1"


def group_json(result: GroupResult, judgement: Judgement) -> dict[str, Any]:
    """One group's section of the report."""
    excused = judgement.excused.get(result.group)
    section: dict[str, Any] = {
        "status": result.status,
        "expected_failure": None if excused is None else {"names": excused.describe(), "reason": excused.reason},
        "detail": result.detail,
        "seconds": round(result.seconds, 3),
        "examples_per_second": round(result.examples_per_second, 2),
        "steps_per_second": round(result.steps_per_second, 1),
        **result.coverage.to_json(),
    }
    if result.failure is not None:
        section["failure"] = {
            "case": result.failure.case_id,
            "kind": result.failure.mismatch.kind,
            "message": result.failure.mismatch.message,
            "invariants": result.failure.invariants,
            "codes": result.failure.codes,
            "case_file": None if result.case_file is None else str(result.case_file),
        }
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
        excused = judgement.excused.get(result.group)
        if result.status == FAILED and excused is None:
            failures += 1
            kind = result.failure.mismatch.kind if result.failure else ""
            failure = ET.SubElement(case, "failure", message=result.detail, type=kind)
            failure.text = "\n".join([f"case file: {result.case_file}", *result.steps_shown])
        elif result.status in (FAILED, UNSUPPORTED):
            skipped += 1
            reason = f"expected failure: {excused.reason}" if excused else result.detail
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
