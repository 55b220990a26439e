"""One static HTML page of a run, or of several runs side by side, rendered from JSON reports.

The page is self-contained: its CSS is inline, it has no script, and its Content-Security-Policy
forbids loading anything, so it opens from a file, a CI artefact or a mail attachment alike.  Every
value taken from a report is HTML-escaped by the template engine (Jinja2 with autoescaping), since
requests and replies hold whatever strings a port was sent or answered.

A run's page shows its summary, a matrix of invariants (rows) by groups (columns) whose cells say
whether the group passed, failed or never exercised the invariant and which of its codes it
exercised, each failure as an expandable item (the request, the model's and the port's replies and
the replay command), the coverage and the reached cells.  Several reports give the comparison:
per group and per invariant, each port's outcome in its own column, then each port's failures.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import jsonschema

from sessionlog_spec.files import FileProblem, read_regular
from sessionlog_spec.protocol import jsonlines
from sessionlog_spec.protocol.messages import GROUPS
from sessionlog_spec.registry import GROUP_NAMES, INVARIANTS
from sessionlog_spec.suite.output.report import REPORT_FORMAT
from sessionlog_spec.suite.run import ERROR, FAILED, PASSED, UNSUPPORTED, VOID

MAX_REPORT_BYTES = 256 << 20
"""The largest JSON report ``html`` reads (each failure carries whole requests; a run's report is far smaller)."""

EXPECTED, NOT_EXERCISED, NOT_RUN = "expected", "not-exercised", "not-run"
STATES: dict[str, tuple[str, str]] = {
    PASSED: ("✓", "passed"),
    FAILED: ("✗", "failed"),
    EXPECTED: ("≈", "expected failure"),
    ERROR: ("!", "error: the group did not finish"),
    VOID: ("∅", "void: no rule could run"),
    UNSUPPORTED: ("–", "unsupported by the port"),
    NOT_EXERCISED: ("·", "not exercised"),
    NOT_RUN: ("", "not run"),
}
"""Each state's symbol and what it means (the page's legend), for a matrix cell and for a group."""
_PRECEDENCE = (FAILED, EXPECTED, ERROR, VOID, PASSED, NOT_EXERCISED, UNSUPPORTED, NOT_RUN)
"""Which state a port's row shows in the comparison when its groups differ: the first one present."""

_STATEMENTS = {inv.id: inv.statement for inv in INVARIANTS}
_CODES_OF = {inv.id: tuple(code.value for code in inv.codes) for inv in INVARIANTS}
_ORDER = {inv.id: index for index, inv in enumerate(INVARIANTS)}

_NAME: dict[str, Any] = {"type": ["string", "null"]}
_COUNTS: dict[str, Any] = {"type": "object", "additionalProperties": {"type": "integer"}}
_STRINGS: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
_ENTRY: dict[str, Any] = {"type": "object", "properties": {"names": {"type": "string"}, "reason": {"type": "string"}}}
_FAULT: dict[str, Any] = {
    "type": "object",
    "properties": {"kind": {"type": "string"}, "detail": {"type": "string"}, "stderr_tail": {"type": "string"}},
}
_FAILURE: dict[str, Any] = {
    "type": "object",
    "required": ["case", "message", "replay"],
    "properties": {
        "case": {"type": "string"},
        "kind": {"type": "string"},
        "message": {"type": "string"},
        "invariants": _STRINGS,
        "codes": _STRINGS,
        "replay": {"type": "string"},
        "case_file": {"type": "string"},
        "failing": {
            "type": ["object", "null"],
            "required": ["request", "model", "port"],
            "properties": {"request_number": {"type": "integer"}, "port": {"properties": {"fault": _FAULT}}},
        },
        "flaky": {"type": "boolean"},
        "shrinking_stopped": {"type": "boolean"},
        "expected": {"anyOf": [_ENTRY, {"type": "null"}]},
    },
}
REPORT_SHAPE: dict[str, Any] = {
    "type": "object",
    "required": ["format", "verdict", "port", "groups", "coverage"],
    "properties": {
        "format": {"const": REPORT_FORMAT},
        "verdict": {"type": "string"},
        "reasons": _STRINGS,
        "port": {
            "type": "object",
            "required": ["arguments"],
            "properties": {"name": _NAME, "version": _NAME, "arguments": {"type": "string"}, "capabilities": _STRINGS},
        },
        "fault": _FAULT,
        "profile": {"type": "string"},
        "seed": {"type": ["integer", "null"]},
        "strict_codes": {"type": "boolean"},
        "seconds": {"type": "number"},
        "stale_expected_failures": {"type": "array", "items": _ENTRY},
        "groups": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["status"],
                "properties": {
                    "status": {"enum": [PASSED, FAILED, ERROR, VOID, UNSUPPORTED]},
                    "expected_failure": {"anyOf": [_ENTRY, {"type": "null"}]},
                    "detail": {"type": "string"},
                    "examples": {"type": "integer"},
                    "steps": {"type": "integer"},
                    "requests": {"type": "integer"},
                    "seconds": {"type": "number"},
                    "invariants": _COUNTS,
                    "codes": _COUNTS,
                    "cells": _COUNTS,
                    "failures": {"type": "array", "items": _FAILURE},
                },
            },
        },
        "coverage": {
            "type": "object",
            "properties": {
                "invariants": _COUNTS,
                "codes": _COUNTS,
                "never_exercised": {"type": "object", "properties": {"invariants": _STRINGS, "codes": _STRINGS}},
                "cells": {
                    "type": "object",
                    "properties": {"reached": {"type": "integer"}, "reachable": {"type": "integer"}, "never_reached": _STRINGS},
                },
                "judged": {"type": "boolean"},
            },
        },
    },
}
"""The parts of a ``sessionlog-report/1`` document the page reads; a report that breaks it is refused."""


class ReportFileError(ValueError):
    """A file that is not a readable JSON report; the message completes "cannot read REPORT: …"."""


@dataclass(frozen=True, slots=True)
class Cell:
    """One invariant in one group (or one port): its state, how often it was exercised, its codes exercised."""

    state: str
    count: int = 0
    codes: tuple[tuple[str, int], ...] = ()

    @property
    def symbol(self) -> str:
        """The state's symbol."""
        return STATES[self.state][0]

    @property
    def meaning(self) -> str:
        """The state in words."""
        return STATES[self.state][1]


@dataclass(frozen=True, slots=True)
class Row:
    """One invariant across the columns of a matrix."""

    invariant: str
    statement: str
    cells: tuple[Cell, ...]

    @property
    def differs(self) -> bool:
        """Whether the columns disagree on the invariant's state."""
        return len({cell.state for cell in self.cells}) > 1


@dataclass(frozen=True, slots=True)
class Section:
    """The rows of one section of the catalogue (``SURF``: Surface)."""

    key: str
    title: str
    rows: tuple[Row, ...]


@dataclass(frozen=True, slots=True)
class FailureView:
    """One failure as the page shows it (the replies and the request as indented JSON)."""

    group: str
    case: str
    kind: str
    message: str
    invariants: tuple[str, ...]
    codes: tuple[str, ...]
    replay: str
    case_file: str
    request_number: int | None
    request: str | None
    model: str | None
    port: str | None
    stderr_tail: str
    expected: str | None
    flaky: bool
    shrinking_stopped: bool


@dataclass(frozen=True, slots=True)
class GroupView:
    """One group's line of a run's summary table, with the cells it reached."""

    name: str
    status: str
    expected: bool
    detail: str
    examples: int
    steps: int
    requests: int
    seconds: float
    invariants: int
    codes: int
    cells: tuple[tuple[str, str, str, int], ...]

    @property
    def state(self) -> str:
        """The group's state as the page shows it (``expected`` for a failure the run excused)."""
        return EXPECTED if self.status == FAILED and self.expected else self.status


@dataclass(frozen=True, slots=True)
class RunView:
    """One report, as the page shows it."""

    label: str
    arguments: str
    verdict: str
    reasons: tuple[str, ...]
    profile: str
    seed: str
    codes_compared: bool
    seconds: float
    capabilities: tuple[str, ...]
    fault: str
    groups: tuple[GroupView, ...]
    failures: tuple[FailureView, ...]
    never_invariants: tuple[str, ...]
    never_codes: tuple[str, ...]
    coverage_judged: bool
    cells_reached: int
    cells_reachable: int
    never_reached: tuple[str, ...]
    stale: tuple[str, ...]


def read_report(path: Path) -> dict[str, Any]:
    """A JSON report read back (a ``sessionlog-report/1`` document), or :class:`ReportFileError`."""
    try:
        data = read_regular(path, MAX_REPORT_BYTES, "a JSON report")
    except FileProblem as unreadable:
        raise ReportFileError(str(unreadable)) from None
    try:
        document = jsonlines.loads(data)
    except (ValueError, RecursionError) as error:
        raise ReportFileError(f"not JSON ({(str(error).splitlines() or [type(error).__name__])[0]})") from None
    problem = report_problem(document)
    if problem is not None:
        raise ReportFileError(problem)
    assert isinstance(document, dict)
    return document


def report_problem(document: Any) -> str | None:
    """Why ``document`` is not a report the page can show (one line), or ``None``."""
    if isinstance(document, dict) and document.get("format") != REPORT_FORMAT:
        found = "no format" if "format" not in document else f"format {json.dumps(document['format'], ensure_ascii=False)[:80]}"
        return f"not a {REPORT_FORMAT} document ({found})"
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(REPORT_SHAPE).iter_errors(document))
    if error is None:
        return None
    where = "".join(f"[{part!r}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path)
    message = error.message if len(error.message) <= 200 else error.message[:200] + "…"
    return f"not a {REPORT_FORMAT} document: {message}" + (f" at ${where}" if where else "")


def run_view(document: Mapping[str, Any]) -> RunView:
    """What the page shows of one report."""
    port = document["port"]
    groups = document["groups"]
    coverage = document.get("coverage", {})
    never = coverage.get("never_exercised", {})
    cells = coverage.get("cells", {})
    fault = document.get("fault")
    return RunView(
        label=port_label(port),
        arguments=str(port["arguments"]),
        verdict=str(document["verdict"]),
        reasons=tuple(str(r) for r in document.get("reasons", ())),
        profile=str(document.get("profile", "")),
        seed="random" if document.get("seed") is None else str(document["seed"]),
        codes_compared=document.get("strict_codes") is not False,
        seconds=float(document.get("seconds", 0.0)),
        capabilities=tuple(str(c) for c in port.get("capabilities") or ()),
        fault="" if not isinstance(fault, dict) else _fault_text(fault),
        groups=tuple(_group_view(name, section) for name, section in _ordered(groups)),
        failures=tuple(_failure_view(name, f) for name, section in _ordered(groups) for f in section.get("failures", ())),
        never_invariants=tuple(never.get("invariants", ())),
        never_codes=tuple(never.get("codes", ())),
        coverage_judged=bool(coverage.get("judged", False)),
        cells_reached=int(cells.get("reached", 0)),
        cells_reachable=int(cells.get("reachable", 0)),
        never_reached=tuple(cells.get("never_reached", ())),
        stale=tuple(f"{e.get('names', '')}: {e.get('reason', '')}" for e in document.get("stale_expected_failures", ())),
    )


def port_label(port: Mapping[str, Any]) -> str:
    """How a column names its port: the name and version it said in ``hello`` (or that it never did)."""
    name = port.get("name")
    if name is None:
        return "(the port did not start)"
    version = port.get("version")
    return f"{name} {version}" if version else str(name)


def cell_state(section: Mapping[str, Any], invariant: str) -> str:
    """The state of ``invariant`` in one group's report section."""
    named = [f for f in section.get("failures", ()) if invariant in f.get("invariants", ())]
    if any(f.get("expected") is None for f in named):
        return FAILED
    if named:
        return EXPECTED
    status = str(section["status"])
    if status == UNSUPPORTED:
        return UNSUPPORTED
    if section.get("invariants", {}).get(invariant, 0) == 0:
        return NOT_EXERCISED
    return PASSED if status in (PASSED, FAILED) else status


def group_cell(section: Mapping[str, Any], invariant: str) -> Cell:
    """One invariant in one group's report section, with the codes of that invariant the group exercised."""
    exercised = section.get("codes", {})
    codes = tuple((code, exercised[code]) for code in _CODES_OF.get(invariant, ()) if exercised.get(code, 0) > 0)
    return Cell(cell_state(section, invariant), section.get("invariants", {}).get(invariant, 0), codes)


def port_cell(document: Mapping[str, Any], invariant: str) -> Cell:
    """One invariant over all the groups of one report (the comparison's cell)."""
    cells = [group_cell(section, invariant) for _, section in _ordered(document["groups"])]
    if not cells:
        return Cell(NOT_RUN)
    state = next(s for s in _PRECEDENCE if s == NOT_RUN or any(c.state == s for c in cells))
    codes: dict[str, int] = {}
    for cell in cells:
        for code, count in cell.codes:
            codes[code] = codes.get(code, 0) + count
    return Cell(state, sum(c.count for c in cells), tuple(codes.items()))


def group_status(document: Mapping[str, Any], group: str) -> str:
    """A group's status in one report (``expected`` for an excused failure, ``not-run`` when it did not run)."""
    section = document["groups"].get(group)
    if section is None:
        return NOT_RUN
    if section["status"] == FAILED and section.get("expected_failure") is not None:
        return EXPECTED
    return str(section["status"])


def matrix(sections: Iterable[tuple[str, Sequence[Cell]]]) -> tuple[Section, ...]:
    """Rows of invariants under their catalogue sections, in the catalogue's order.

    ``sections`` gives each invariant's cells; rows whose every cell is never exercised, unsupported
    or not run are left out (the coverage lists them).
    """
    rows: dict[str, list[Row]] = {}
    for invariant, cells in sorted(sections, key=lambda item: (_ORDER.get(item[0], len(_ORDER)), item[0])):
        if all(c.state in (NOT_EXERCISED, UNSUPPORTED, NOT_RUN) for c in cells):
            continue
        key = invariant.split("-")[1] if invariant.count("-") >= 2 else "OTHER"
        rows.setdefault(key, []).append(Row(invariant, _STATEMENTS.get(invariant, ""), tuple(cells)))
    return tuple(Section(key, GROUP_NAMES.get(key, "Other invariants"), tuple(found)) for key, found in rows.items())


def run_matrix(document: Mapping[str, Any]) -> tuple[Section, ...]:
    """A run's matrix: every invariant a group exercised or a failure names, by group."""
    sections = [section for _, section in _ordered(document["groups"])]
    return matrix((invariant, [group_cell(s, invariant) for s in sections]) for invariant in _named_invariants([document]))


def comparison_matrix(documents: Sequence[Mapping[str, Any]]) -> tuple[Section, ...]:
    """The comparison's matrix: every invariant some report names, by port."""
    return matrix((invariant, [port_cell(d, invariant) for d in documents]) for invariant in _named_invariants(documents))


def render_page(documents: Sequence[Mapping[str, Any]]) -> str:
    """The page of one report (a run) or of several (the comparison), as HTML text."""
    if not documents:
        raise ValueError("no report to show")
    template = _environment().get_template("report.html.j2")
    runs = [run_view(d) for d in documents]
    if len(documents) == 1:
        return template.render(comparison=False, runs=runs, sections=run_matrix(documents[0]), states=STATES)
    return template.render(
        comparison=True,
        runs=runs,
        sections=comparison_matrix(documents),
        group_rows=[(g, tuple(Cell(group_status(d, g)) for d in documents)) for g in _group_order(documents)],
        states=STATES,
    )


def write_html(path: Path, page: str) -> None:
    """Write a page (missing directories are created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")


def pretty_json(value: Any) -> str:
    """A JSON value indented for reading, keys in the order they were written."""
    return json.dumps(value, ensure_ascii=False, indent=2)


@functools.cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("sessionlog_spec.suite.output", "."),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _ordered(groups: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """A report's groups in the protocol's order (any other name after them)."""
    return sorted(groups.items(), key=lambda item: (GROUPS.index(item[0]) if item[0] in GROUPS else len(GROUPS), item[0]))


def _group_order(documents: Iterable[Mapping[str, Any]]) -> list[str]:
    names = {name for d in documents for name in d["groups"]}
    return sorted(names, key=lambda name: (GROUPS.index(name) if name in GROUPS else len(GROUPS), name))


def _named_invariants(documents: Iterable[Mapping[str, Any]]) -> set[str]:
    """Every invariant a group of ``documents`` exercised or a failure names."""
    found: set[str] = set()
    for document in documents:
        for section in document["groups"].values():
            found.update(section.get("invariants", {}))
            for failure in section.get("failures", ()):
                found.update(failure.get("invariants", ()))
    return found


def _group_view(name: str, section: Mapping[str, Any]) -> GroupView:
    cells = []
    for key, count in sorted(section.get("cells", {}).items()):
        parts = key.split(" ")
        invariant, kind, op = parts if len(parts) == 3 else (key, "", "")
        cells.append((invariant, kind, op, count))
    return GroupView(
        name=name,
        status=str(section["status"]),
        expected=section.get("expected_failure") is not None,
        detail=str(section.get("detail", "")),
        examples=int(section.get("examples", 0)),
        steps=int(section.get("steps", 0)),
        requests=int(section.get("requests", 0)),
        seconds=float(section.get("seconds", 0.0)),
        invariants=sum(1 for count in section.get("invariants", {}).values() if count),
        codes=sum(1 for count in section.get("codes", {}).values() if count),
        cells=tuple(cells),
    )


def _failure_view(group: str, failure: Mapping[str, Any]) -> FailureView:
    failing = failure.get("failing")
    expected = failure.get("expected")
    actual = failing["port"] if isinstance(failing, dict) else None
    fault = actual.get("fault") if isinstance(actual, dict) else None
    return FailureView(
        group=group,
        case=str(failure["case"]),
        kind=str(failure.get("kind", "")),
        message=str(failure["message"]),
        invariants=tuple(failure.get("invariants", ())),
        codes=tuple(failure.get("codes", ())),
        replay=str(failure["replay"]),
        case_file=str(failure.get("case_file", "")),
        request_number=failing.get("request_number") if isinstance(failing, dict) else None,
        request=pretty_json(failing["request"]) if isinstance(failing, dict) else None,
        model=pretty_json(failing["model"]) if isinstance(failing, dict) else None,
        port=pretty_json(actual) if isinstance(failing, dict) else None,
        stderr_tail=str(fault.get("stderr_tail") or "").rstrip("\n") if isinstance(fault, dict) else "",
        expected=None if not isinstance(expected, dict) else f"{expected.get('names', '')}: {expected.get('reason', '')}",
        flaky=bool(failure.get("flaky", False)),
        shrinking_stopped=bool(failure.get("shrinking_stopped", False)),
    )


def _fault_text(fault: Mapping[str, Any]) -> str:
    text = f"port fault ({fault.get('kind', '?')}): {fault.get('detail', '')}"
    tail = str(fault.get("stderr_tail") or "").rstrip("\n")
    return f"{text}\ndriver stderr (tail):\n{tail}" if tail else text
