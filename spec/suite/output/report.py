"""Machine-readable reports of a run: a JSON document and JUnit XML for CI systems.

Both name the port by the options that start it again (``--driver 'CMD'`` or ``--port NAME``), so
every failure carries a replay command that can be pasted as it is, next to the failing request and
the model's and the port's replies.  Both are written too when the port cannot start: one error per
selected group, carrying the fault and the driver's stderr tail.  Both name every invariant and code
no step exercised (the JSON ``coverage.never_exercised``, the JUnit ``never-exercised.*`` properties).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from sessionlog_spec.protocol.messages import PortFault
from sessionlog_spec.suite.coverage import UNOBSERVABLE, GroupCoverage, merged, never_exercised, reached_cells
from sessionlog_spec.suite.exchange import Exchange, answer_json
from sessionlog_spec.suite.expectations import Judgement
from sessionlog_spec.suite.output.replay import json_line, replay_command, request_json, unquoted_stderr
from sessionlog_spec.suite.rule_space import declared_reach
from sessionlog_spec.suite.run import ERROR, FAILED, UNSUPPORTED, VOID, Failure, GroupResult, RunOptions, RunResult
from sessionlog_spec.suite.verdict import Verdict

REPORT_FORMAT = "sessionlog-report/1"


def failing_exchange(failure: Failure) -> Exchange | None:
    """The exchange the port got wrong (the last of the transcript), if there is one."""
    transcript = failure.disagreement.transcript
    return transcript[-1] if transcript else None


def failure_json(failure: Failure, judgement: Judgement, port: str) -> dict[str, Any]:
    """One disagreement of a group, with the entry that excuses it (if any) and how to replay it.

    ``port`` is the options naming the port (:func:`~sessionlog_spec.suite.output.replay.port_arguments`).
    """
    disagreement, entry = failure.disagreement, judgement.entry_for(failure)
    exchange = failing_exchange(failure)
    return {
        "case": disagreement.case_id,
        "kind": disagreement.mismatch.kind,
        "message": disagreement.mismatch.message,
        "invariants": disagreement.invariants,
        "codes": disagreement.codes,
        "case_file": str(failure.case_file),
        "replay": replay_command(failure.case_file, port),
        "failing": None
        if exchange is None
        else {
            "request_number": len(disagreement.transcript),
            "request": {"op": exchange.op, **exchange.args},
            "model": answer_json(exchange.expected),
            "port": answer_json(exchange.actual),
        },
        "flaky": failure.flaky,
        "shrinking_stopped": bool(failure.shrink_note),
        "expected": None if entry is None else {"names": entry.describe(), "reason": entry.reason},
    }


def failure_text(failure: Failure, port: str) -> str:
    """A failure as a person reads it in a CI log: what failed, the failing request whole, the
    model's (expected) and the port's (actual) replies, the driver's stderr tail on a fault, and the
    replay command, followed by Hypothesis's minimal example."""
    disagreement = failure.disagreement
    lines = [
        str(disagreement),
        f"invariants: {', '.join(disagreement.invariants) or '-'}; codes: {', '.join(disagreement.codes) or '-'}",
    ]
    exchange = failing_exchange(failure)
    if exchange is not None:
        count = len(disagreement.transcript)
        lines += [
            f"request {count} of {count}: {request_json(exchange.op, exchange.args)}",
            f"model (expected): {json_line(answer_json(exchange.expected))}",
            f"port (actual): {json_line(answer_json(exchange.actual))}",
        ]
        tail = unquoted_stderr(exchange.actual) if isinstance(exchange.actual, PortFault) else ""
        if tail:
            lines += ["driver stderr (tail):", tail]
    lines += [f"replay: {replay_command(failure.case_file, port)}", f"case file: {failure.case_file}"]
    if failure.steps_shown:
        lines += ["", *failure.steps_shown]
    return "\n".join(lines)


def group_json(result: GroupResult, judgement: Judgement, port: str) -> dict[str, Any]:
    """One group's section of the report (``failure`` is the first of ``failures``)."""
    failures = [failure_json(f, judgement, port) for f in result.failures]
    section: dict[str, Any] = {
        "status": result.status,
        "expected_failure": failures[0]["expected"] if failures and judgement.excused(result) else None,
        "detail": result.detail,
        "seconds": round(result.seconds, 3),
        "found_after_seconds": None if result.found_after is None else round(result.found_after, 3),
        "examples_per_second": round(result.examples_per_second, 2),
        "steps_per_second": round(result.steps_per_second, 1),
        **result.coverage.to_json(),
    }
    if failures:
        section["failure"] = failures[0]
        section["failures"] = failures
    return section


def report_json(run: RunResult, judgement: Judgement, verdict: Verdict, port: str) -> dict[str, Any]:
    """The whole run as a JSON document; ``port`` is the options naming the port (``--driver 'CMD'``)."""
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
            "arguments": port,
        },
        "profile": run.options.profile.name,
        "seed": run.options.seed,
        "strict_codes": run.options.strict_codes,
        "seconds": round(run.seconds, 3),
        "groups": {r.group: group_json(r, judgement, port) for r in run.groups},
        "coverage": {
            "invariants": dict(sorted(invariants.items())),
            "codes": dict(sorted(codes.items())),
            "never_exercised": {"invariants": verdict.never_invariants, "codes": verdict.never_codes},
            "cells": {
                "reached": len(reached_cells(r.coverage for r in run.groups)),
                "reachable": verdict.reachable_cells,
                "never_reached": verdict.never_cells,
                "declared": declared_reach(reached_cells(r.coverage for r in run.groups)).to_json(),
            },
            "judged": verdict.coverage_judged,
            "unobservable": UNOBSERVABLE,
        },
        "stale_expected_failures": [{"names": e.describe(), "reason": e.reason} for e in judgement.stale],
    }


def start_failure_json(options: RunOptions, fault: PortFault, port: str) -> dict[str, Any]:
    """The report of a run whose port could not start: every selected group is an error carrying the fault."""
    reason = f"cannot start the port: {fault}"
    never_ids, never_codes = never_exercised([])
    fault_json = answer_json(fault)["fault"]
    group = {
        "status": ERROR,
        "expected_failure": None,
        "detail": reason,
        "fault": fault_json,
        "seconds": 0.0,
        "examples_per_second": 0.0,
        "steps_per_second": 0.0,
    }
    return {
        "format": REPORT_FORMAT,
        "verdict": "failed",
        "reasons": [reason],
        "port": {
            "name": None,
            "version": None,
            "protocol": None,
            "capabilities": [],
            "format_version": None,
            "arguments": port,
        },
        "fault": fault_json,
        "profile": options.profile.name,
        "seed": options.seed,
        "strict_codes": options.strict_codes,
        "seconds": 0.0,
        "groups": {g: {**group, **GroupCoverage(g).to_json()} for g in options.groups()},
        "coverage": {
            "invariants": {},
            "codes": {},
            "never_exercised": {"invariants": never_ids, "codes": never_codes},
            "cells": {"reached": 0, "reachable": 0, "never_reached": []},
            "judged": False,
            "unobservable": UNOBSERVABLE,
        },
        "stale_expected_failures": [],
    }


def write_json(path: Path, document: dict[str, Any]) -> None:
    """Write a report document."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def junit_xml(run: RunResult, judgement: Judgement, verdict: Verdict, port: str) -> ET.ElementTree[ET.Element]:
    """The run as JUnit XML: one test case per group, plus one per stale expected failure.

    A failure's body is :func:`failure_text` of each unexcused disagreement; ``port`` is the options naming the port.
    """
    suite = ET.Element("testsuite", name=f"sessionlog-conformance ({run.hello.name})", time=f"{run.seconds:.3f}")
    _properties(suite, port, verdict.never_invariants, verdict.never_codes, verdict.coverage_judged, run.options.strict_codes)
    failures = errors = skipped = 0
    for result in run.groups:
        case = ET.SubElement(suite, "testcase", classname="sessionlog", name=result.group, time=f"{result.seconds:.3f}")
        unexcused = judgement.unexcused(result)
        if unexcused:
            failures += 1
            message = "; ".join(str(f.disagreement) for f in unexcused)
            failure = ET.SubElement(case, "failure", message=message, type=unexcused[0].disagreement.mismatch.kind)
            failure.text = "\n\n".join(failure_text(f, port) for f in unexcused)
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
    return _counted(suite, failures, errors, skipped)


def start_failure_junit(options: RunOptions, fault: PortFault, port: str) -> ET.ElementTree[ET.Element]:
    """JUnit XML of a run whose port could not start: one ``<error type="port-fault">`` per selected group."""
    suite = ET.Element("testsuite", name="sessionlog-conformance (the port did not start)", time="0.000")
    _properties(suite, port, *never_exercised([]), judged=False, strict_codes=options.strict_codes)
    message = f"cannot start the port: {fault}"
    body = [message, f"port: {port}"]
    tail = unquoted_stderr(fault)
    if tail:
        body += ["driver stderr (tail):", tail]
    for group in options.groups():
        case = ET.SubElement(suite, "testcase", classname="sessionlog", name=group, time="0.000")
        error = ET.SubElement(case, "error", message=message, type="port-fault")
        error.text = "\n".join(body)
    return _counted(suite, 0, len(options.groups()), 0)


def _properties(  # noqa: PLR0917 - one per property
    suite: ET.Element, port: str, never_invariants: list[str], never_codes: list[str], judged: bool, strict_codes: bool
) -> None:
    """The suite's ``<properties>``: the port's options, whether codes were compared, what no step exercised."""
    properties = ET.SubElement(suite, "properties")
    for name, value in (
        ("port", port),
        ("codes-compared", "true" if strict_codes else "false (--any-code)"),
        ("never-exercised.invariants", ", ".join(never_invariants)),
        ("never-exercised.codes", ", ".join(never_codes)),
        ("never-exercised.judged", "true" if judged else "false"),
    ):
        ET.SubElement(properties, "property", name=name, value=value)


def _counted(suite: ET.Element, failures: int, errors: int, skipped: int) -> ET.ElementTree[ET.Element]:
    suite.set("tests", str(sum(1 for child in suite if child.tag == "testcase")))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("skipped", str(skipped))
    return ET.ElementTree(suite)


def write_junit(path: Path, tree: ET.ElementTree[ET.Element]) -> None:
    """Write JUnit XML."""
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.indent(tree)
    tree.write(path, encoding="utf-8", xml_declaration=True)
