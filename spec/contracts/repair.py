"""INV-REPAIR: deterministic closers for a crash-orphaned turn."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import icontract

from sessionlog_spec.contracts import ENABLED
from sessionlog_spec.model import repair as _repair
from sessionlog_spec.model.event import Event
from sessionlog_spec.model.session import fold_session
from sessionlog_spec.model.violation import Violation


def _open_turn(events: Sequence[Event]) -> bool:
    depth = 0
    for event in events:
        depth += {"turn/start": 1, "turn/end": -1}.get(event.type, 0)
    return depth > 0


def _get(event: Event, key: str) -> object:
    return event.data.get(key) if isinstance(event.data, Mapping) else None


def nothing_for_closed_log(events: Sequence[Event], result: tuple[Event, ...]) -> bool:
    """INV-REPAIR-1."""
    return (len(result) == 0) == (not _open_turn(events))


def closers_in_shutdown_order(result: tuple[Event, ...]) -> bool:
    """INV-REPAIR-2."""
    if not result:
        return True
    types = [e.type for e in result]
    results = types.count("tool/result")
    last = result[-1]
    reason = _get(last, "reason")
    return (
        types[:results] == ["tool/result"] * results
        and types[results:-1] in ([], ["step/end"])
        and last.type == "turn/end"
        and isinstance(reason, Mapping)
        and reason.get("kind") == "interrupted"
    )


def _recorded_calls(events: Sequence[Event]) -> dict[str, int]:
    calls: dict[str, int] = {}
    for event in events:
        if event.type == "tool/call" and isinstance(_get(event, "callId"), str):
            calls[str(_get(event, "callId"))] = event.seq
    return calls


def closer_results_cite_started_calls(events: Sequence[Event], result: tuple[Event, ...]) -> bool:
    """INV-REPAIR-3."""
    recorded = _recorded_calls(events)
    for closer in result:
        if closer.type != "tool/result":
            continue
        message = _get(closer, "message")
        source = message.get("source") if isinstance(message, Mapping) else None
        call_id = source.get("callId") if isinstance(source, Mapping) else None
        error = _get(closer, "error")
        code = error.get("code") if isinstance(error, Mapping) else None
        if call_id in recorded:
            ok = code == "TOOL_OUTCOME_UNKNOWN" and closer.source_event_seqs == (recorded[str(call_id)],)
        else:
            ok = code == "TOOL_NOT_STARTED" and closer.source_event_seqs is None
        if not ok:
            return False
    return True


def closers_continue_seqs(events: Sequence[Event], result: tuple[Event, ...]) -> bool:
    """INV-REPAIR-4."""
    return all(c.seq == len(events) + i and c.time == events[-1].time for i, c in enumerate(result))


def repaired_log_is_valid_and_final(events: Sequence[Event], result: tuple[Event, ...]) -> bool:
    """INV-REPAIR-5."""
    repaired = (*events, *result)
    return not isinstance(fold_session(repaired), Violation) and _repair.interrupted_turn_closers(repaired) == ()


@icontract.require(lambda events: not isinstance(fold_session(events), Violation), "the log is a valid v1 log", enabled=ENABLED)
@icontract.ensure(lambda events, result: nothing_for_closed_log(events, result), "INV-REPAIR-1", enabled=ENABLED)
@icontract.ensure(lambda result: closers_in_shutdown_order(result), "INV-REPAIR-2", enabled=ENABLED)
@icontract.ensure(lambda events, result: closer_results_cite_started_calls(events, result), "INV-REPAIR-3", enabled=ENABLED)
@icontract.ensure(lambda events, result: closers_continue_seqs(events, result), "INV-REPAIR-4", enabled=ENABLED)
@icontract.ensure(lambda events, result: repaired_log_is_valid_and_final(events, result), "INV-REPAIR-5", enabled=ENABLED)
def interrupted_turn_closers(events: Sequence[Event]) -> tuple[Event, ...]:
    """The closers for an open tail turn."""
    return _repair.interrupted_turn_closers(events)
