"""Crash repair: deterministic closers for a turn a crash left open.

A single forward scan tracks the open turn, the open step and the calls the model asked for that
have no result yet (a ``tool/call`` records the seq at which the call was started).  If a turn is
still open at the end, the closers are, in order: one error ``tool/result`` per pending call,
``step/end`` if a step is open, and ``turn/end`` with reason ``interrupted``.  Closers continue the
seqs and reuse the last event's time, so repairing the same log twice writes the same bytes, and
repairing a repaired log adds nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType

from sessionlog_spec.model.event import APPEND, Event, Replace
from sessionlog_spec.model.json_value import JsonValue, as_int, as_object, freeze
from sessionlog_spec.model.messages import tool_call_ids, tool_result_call_id

OUTCOME_UNKNOWN_TEXT = (
    "The tool call was interrupted after it was recorded, but no result was durably recorded. "
    "Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the "
    "operation is read-only or idempotent; if it may have side effects, first verify external state "
    "or ask the user. Do not retry blindly."
)
NOT_STARTED_TEXT = "The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed."


@dataclass(frozen=True, slots=True)
class PendingCall:
    """A call the model asked for, with the seq of its ``tool/call`` once one was recorded."""

    call_id: str
    step: int
    call_seq: int | None


@dataclass(frozen=True, slots=True)
class OpenTail:
    """What a forward scan leaves open at the end of a log."""

    turn: int | None
    step: int | None
    pending: tuple[PendingCall, ...]


def _int(data: JsonValue, key: str) -> int | None:
    obj = as_object(data)
    return as_int(obj.get(key)) if obj is not None else None


def scan_open_tail(events: Sequence[Event]) -> OpenTail:
    """The open turn, open step and pending calls after ``events``."""
    turn: int | None = None
    step: int | None = None
    pending: dict[str, PendingCall] = {}
    for event in events:
        if event.type == "turn/start":
            turn, step, pending = _int(event.data, "turn"), None, {}
        elif event.type == "turn/end":
            turn, step, pending = None, None, {}
        elif event.type == "step/start":
            step = _int(event.data, "step")
        elif event.type == "step/end":
            step, pending = None, {}
        elif event.type == "assistant/message":
            call_step = _int(event.data, "step") or 0
            for call_id in tool_call_ids(event):
                pending[call_id] = PendingCall(call_id, call_step, None)
        elif event.type == "tool/call":
            data = as_object(event.data)
            started = data.get("callId") if data is not None else None
            if isinstance(started, str) and started in pending:
                pending[started] = PendingCall(started, pending[started].step, event.seq)
        elif event.type == "tool/result" and not isinstance(event.surface_op, Replace):
            # A rewrite restates an answered call's result; it answers nothing new.
            pending.pop(tool_result_call_id(event) or "", None)
    return OpenTail(turn, step, tuple(pending.values()))


def _interrupted_result(turn: int, call: PendingCall, seq: int, time: int) -> Event:
    recorded = call.call_seq is not None
    text = OUTCOME_UNKNOWN_TEXT if recorded else NOT_STARTED_TEXT
    error = (
        {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"}
        if recorded
        else {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}
    )
    data = {
        "turn": turn,
        "step": call.step,
        "message": {
            "id": f"interrupted-tool-result-{call.call_id}-{seq}",
            "role": "user",
            "source": {"kind": "tool", "callId": call.call_id},
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": call.call_id,
                    "isError": True,
                    "content": [{"type": "text", "text": text}],
                }
            ],
        },
        "error": error,
    }
    sources = (call.call_seq,) if call.call_seq is not None else None
    return Event("tool/result", seq, time, freeze(data), surface_op=APPEND, source_event_seqs=sources)


def interrupted_turn_closers(events: Sequence[Event]) -> tuple[Event, ...]:
    """INV-REPAIR-1..4: the closers for an open tail turn; empty when no turn is open."""
    tail = scan_open_tail(events)
    if tail.turn is None or not events:
        return ()
    seq, time = len(events), events[-1].time
    closers: list[Event] = []
    for call in tail.pending:
        closers.append(_interrupted_result(tail.turn, call, seq, time))
        seq += 1
    if tail.step is not None:
        closers.append(Event("step/end", seq, time, freeze({"turn": tail.turn, "step": tail.step})))
        seq += 1
    closers.append(Event("turn/end", seq, time, MappingProxyType({"turn": tail.turn, "reason": freeze({"kind": "interrupted"})})))
    return tuple(closers)


def repair(events: Sequence[Event]) -> tuple[Event, ...]:
    """INV-REPAIR-5: the log with its closers appended; a fixed point after one application."""
    return (*events, *interrupted_turn_closers(events))
