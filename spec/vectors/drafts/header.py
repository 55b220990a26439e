"""Request headers: reconstruction, canonical form, equality and the writer decision rule (INV-HDR)."""

from __future__ import annotations

from typing import Any

from sessionlog_spec.suite.agent.builder import PROVIDER, SessionBuilder, basic_header
from sessionlog_spec.vectors.drafts import steps
from sessionlog_spec.vectors.drafts.scenes import scene
from sessionlog_spec.vectors.drafts.steps import case
from sessionlog_spec.vectors.format import Draft

FILE = "header"
TUNED = {"config": {**PROVIDER, "reasoningEffort": "high", "maxTokens": 8192}, "adapterDefaults": {"maxTokens": True}}
SHUFFLED = {
    "tools": basic_header()["tools"],
    "system": basic_header()["system"],
    "config": {"model": PROVIDER["model"], "provider": PROVIDER["provider"]},
    "adapterDefaults": {},
}
"""The basic header with members reordered and a marker-free ``adapterDefaults``: equal to it as a header."""


def _snapshot(seq: int, header: Any, reason: str = "initial") -> dict[str, Any]:
    return {"type": "request/header", "seq": seq, "time": seq, "data": {"header": header, "reason": reason}}


def _decisions(log: list[dict[str, Any]]) -> list[Draft]:
    """The writer rule on every combination that matters, after a log whose latest snapshot is the basic header."""
    changed = basic_header(system="You are terse.")
    table = [
        ("first-request-empty-log", "INV-HDR-9", [], basic_header(), {"first": True}),
        ("first-request-resumes", "INV-HDR-9", log, basic_header(), {"first": True}),
        ("first-request-resumes-changed", "INV-HDR-9", log, changed, {"first": True, "begins": True}),
        ("later-unchanged-nothing", "INV-HDR-11", log, basic_header(), {}),
        ("later-unchanged-series", "INV-HDR-11", log, basic_header(), {"begins": True}),
        ("later-unchanged-after-replace", "INV-HDR-11", log, basic_header(), {"replaced": True}),
        ("later-changed", "INV-HDR-10", log, changed, {}),
        ("later-changed-series", "INV-HDR-10", log, changed, {"begins": True}),
        ("later-changed-after-replace", "INV-HDR-10", log, changed, {"replaced": True}),
        ("later-without-snapshot", "INV-HDR-10", [], basic_header(), {}),
        ("equal-up-to-canonical-form", "INV-HDR-7 INV-HDR-11", log, SHUFFLED, {}),
        ("refuses-unpinned-header", "INV-HDR-2", log, {"config": {"provider": "p"}}, {}),
    ]
    return [
        case(FILE, f"decide-{slug}", invariants, f"header_decision: {slug.replace('-', ' ')}",
             steps.header_decision(events, header, **facts))
        for slug, invariants, events, header, facts in table
    ]


def drafts() -> list[Draft]:
    """The HDR vectors."""
    closed = scene("closed")
    log = closed.events
    b = SessionBuilder(closed.builder.state)
    b.turn_start()
    b.step_start()
    change = b.request_header(basic_header(system="You are terse."), "change", commit=False)
    reasons = {
        reason: SessionBuilder(b.state).request_header(basic_header(), reason, starts_series=series, commit=False)
        for reason, series in (("resume", False), ("change", True), ("series", False))
    }
    tuned = SessionBuilder(b.state).request_header(TUNED, "change", commit=False)
    live = [steps.append(e) for e in b.events[len(log):]]
    non_canonical = {**basic_header(), "system": "", "tools": [], "adapterDefaults": {}}
    return [
        *_decisions(log),
        case(FILE, "fold-empty", "INV-HDR-8", "no snapshot, no header", steps.fold_header([])),
        case(FILE, "fold-latest-wins", "INV-HDR-8", "the latest of two snapshots is in force",
             steps.fold_header([_snapshot(0, basic_header()), _snapshot(1, TUNED, "change")])),
        case(FILE, "fold-refuses-non-canonical", "INV-HDR-5",
             "the fold judges a snapshot as seed and append do: empty system, empty tools or marker-free defaults are refused",
             steps.fold_header([_snapshot(0, non_canonical)])),
        case(FILE, "decision-refuses-unappendable-header", "INV-HDR-1 INV-HDR-12",
             "a header whose snapshot append would refuse (a tool without parameters) gets no decision",
             steps.header_decision([], {**basic_header(), "tools": [{"name": "read_file", "description": "Read."}]}, first=True)),
        case(FILE, "fold-canonical-is-fixed-point", "INV-HDR-6", "a canonical snapshot folds to itself",
             steps.fold_header([_snapshot(0, {"config": dict(PROVIDER)})])),
        case(FILE, "state-after-change", "INV-HDR-8 INV-HDR-12",
             "after the writer appends a change, the session's header is the assembled one",
             *closed.replay(), *live, steps.append(change)),
        *(
            case(FILE, f"reason-{reason}", "INV-HDR-4 INV-HDR-1", f"a snapshot with reason {reason} is accepted",
                 *closed.replay(), *live, steps.append(event))
            for reason, event in reasons.items()
        ),
        case(FILE, "adapter-defaults-marked", "INV-HDR-3 INV-HDR-5", "a marker for a present maxTokens is canonical and accepted",
             *closed.replay(), *live, steps.append(tuned)),
    ]
