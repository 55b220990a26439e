"""Checking one stored log offline against the model, line by line.

Every line is parsed on its own, so every malformed line is reported.  A v1 log is then folded
through the whole contract; the first violation is exact (the session is undefined after it), and
later lines still get the checks that need no session state: envelope, seq position, vocabulary
and payload shape.  A v0 log goes through the edge, and every refused legacy form is reported.
A torn final line and an open tail turn are reported as notes: a reader drops the one and repairs
the other, so neither is a violation.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from sessionlog_spec.model.event import decode_event
from sessionlog_spec.model.json_value import freeze
from sessionlog_spec.model.jsonl import FORMAT_VERSION, LEGACY_VERSION, header_line_problem, parse_line
from sessionlog_spec.model.legacy import StoredLog, refusal, upgrade_v0
from sessionlog_spec.model.repair import interrupted_turn_closers
from sessionlog_spec.model.session import EMPTY_SESSION, append_event, payload_problem, vocabulary_problem
from sessionlog_spec.model.violation import Code, Violation

_INDEX = re.compile(r"\bindex (\d+)")


@dataclass(frozen=True)
class Finding:
    """One violation at one line (1 is the header line)."""

    line: int
    code: str
    message: str
    after_first: bool = False
    """Found by the state-free checks that continue after the first violation."""


@dataclass
class LogCheck:
    """Everything found in one log."""

    violations: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, line: int, violation: Violation, after_first: bool = False) -> None:
        """Record a violation found at ``line``."""
        self.violations.append(Finding(line, violation.code.value, violation.message, after_first))


def check_log(text: str) -> LogCheck:
    """Check the stored log ``text``."""
    check = LogCheck()
    segments = text.split("\n")
    torn = segments.pop()
    if torn:
        check.notes.append(f"line {len(segments) + 1}: torn final line without its newline (a reader drops it)")
    if not segments:
        check.add(1, Violation(Code.JSONL_HEADER_MISSING, "log has no complete header line"))
        return check
    parsed: list[Mapping[str, object] | None] = []
    for number, line in enumerate(segments, start=1):
        value = parse_line(line)
        if isinstance(value, str):
            check.add(number, Violation(Code.JSONL_MALFORMED_LINE, f"line {number} {value}"))
            parsed.append(None)
        else:
            parsed.append(value)
    header, events = parsed[0], parsed[1:]
    if header is None:
        return check
    problem = header_line_problem(header)
    if problem is not None:
        check.add(1, problem)
        return check
    version = header.get("version")
    if version == FORMAT_VERSION:
        _check_v1(check, events)
    elif version == LEGACY_VERSION:
        _check_v0(check, header, events)
    else:
        check.add(1, Violation(Code.FORMAT_VERSION_UNSUPPORTED, f"line 1: format version {version} is not supported"))
    check.violations.sort(key=lambda finding: finding.line)
    return check


def _check_v1(check: LogCheck, events: list[Mapping[str, object] | None]) -> None:
    state = EMPTY_SESSION
    failed_at: int | None = None
    for index, raw in enumerate(events):
        line = index + 2
        if raw is None:
            failed_at = index if failed_at is None else failed_at
            continue
        if failed_at is None:
            following = append_event(state, raw)
            if isinstance(following, Violation):
                check.add(line, following.at(f"line {line}"))
                failed_at = index
            else:
                state = following
            continue
        problem = _state_free_problem(raw, index)
        if problem is not None:
            check.add(line, problem.at(f"line {line}"), after_first=True)
    if failed_at is None:
        closers = interrupted_turn_closers(state.events)
        if closers:
            check.notes.append(
                f"the log ends inside turn {state.trace.open_turn}: loading it appends {len(closers)} repair closer(s)"
            )


def _state_free_problem(raw: object, index: int) -> Violation | None:
    """The checks that need no session: envelope, seq position, vocabulary, payload shape."""
    event = decode_event(raw)
    if isinstance(event, Violation):
        return event
    if event.seq != index:
        return Violation(Code.SEQ_NOT_CONTIGUOUS, f"event seq {event.seq} is not contiguous; expected {index}")
    return vocabulary_problem(event) or payload_problem(event)


def _check_v0(check: LogCheck, header: Mapping[str, object], events: list[Mapping[str, object] | None]) -> None:
    if any(e is None for e in events):
        return  # a malformed line refuses the log before the edge sees it; already reported
    frozen_header = freeze(header)
    assert isinstance(frozen_header, Mapping)
    raws = [e for e in events if e is not None]
    refused = refusal(raws)
    if refused is None:
        upgraded = upgrade_v0(StoredLog(frozen_header, tuple(freeze(e) for e in raws)))  # type: ignore[misc]
        if isinstance(upgraded, Violation):
            check.add(_line_of(upgraded), upgraded)
        else:
            check.notes.append("v0 log: the v0-to-v1 edge converts it")
        return
    # Refusal looks at each event on its own, so every refused legacy form can be listed.
    offset = 0
    while refused is not None:
        index = offset + int(_INDEX.search(refused.message).group(1))  # type: ignore[union-attr]
        check.add(index + 2, Violation(refused.code, _INDEX.sub(f"index {index}", refused.message, count=1)))
        offset = index + 1
        refused = refusal(raws[offset:])


def _line_of(violation: Violation) -> int:
    found = _INDEX.search(violation.message)
    return int(found.group(1)) + 2 if found else 1
