"""Crash repair: the deterministic closers for a turn that a crash left open.

:class:`OpenTail` follows the log event by event (O(1) each) and remembers the open turn, the open
step and the calls the model asked for that have no result yet.  The closers are, in order: one
error ``tool/result`` per pending call, ``step/end`` if a step is open, and ``turn/end`` with reason
``interrupted``; they continue the seqs and reuse the last event's time, so repairing twice writes
the same bytes and repairing a repaired log adds nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from seqlog.event import APPEND, Event, Replace
from seqlog.jsonvalue import FrozenObject, as_int, as_object, freeze
from seqlog.messages import tool_call_ids, tool_result_call_id

OUTCOME_UNKNOWN_TEXT = (
    "The tool call was interrupted after it was recorded, but no result was durably recorded. "
    "Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the "
    "operation is read-only or idempotent; if it may have side effects, first verify external state "
    "or ask the user. Do not retry blindly."
)
NOT_STARTED_TEXT = (
    "The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed."
)


@dataclass(frozen=True, slots=True)
class PendingCall:
    """A call the model asked for, with the seq of its ``tool/call`` once one was recorded."""

    call_id: str
    step: int
    call_seq: int | None


def _int_member(data: object, key: str) -> int | None:
    obj = as_object(data)
    return as_int(obj.get(key)) if obj is not None else None


class OpenTail:
    """What is open at the end of the events seen so far."""

    __slots__ = ("last_time", "length", "pending", "step", "turn")

    def __init__(self) -> None:
        self.turn: int | None = None
        self.step: int | None = None
        self.pending: dict[str, PendingCall] = {}
        self.length = 0
        self.last_time = 0

    def observe(self, event: Event) -> None:
        """Account for the next event of the log."""
        self.length += 1
        self.last_time = event.time
        type_ = event.type
        if type_ == "turn/start":
            self.turn, self.step, self.pending = _int_member(event.data, "turn"), None, {}
        elif type_ == "turn/end":
            self.turn, self.step, self.pending = None, None, {}
        elif type_ == "step/start":
            self.step = _int_member(event.data, "step")
        elif type_ == "step/end":
            self.step, self.pending = None, {}
        elif type_ == "assistant/message":
            step = _int_member(event.data, "step") or 0
            for call_id in tool_call_ids(event):
                self.pending[call_id] = PendingCall(call_id, step, None)
        elif type_ == "tool/call":
            data = as_object(event.data)
            started = data.get("callId") if data is not None else None
            known = self.pending.get(started) if isinstance(started, str) else None
            if known is not None:
                self.pending[known.call_id] = PendingCall(known.call_id, known.step, event.seq)
        elif type_ == "tool/result" and not isinstance(event.surface_op, Replace):
            # Only an appended result answers a call; a rewrite restates one already answered.
            self.pending.pop(tool_result_call_id(event) or "", None)

    def closers(self) -> tuple[Event, ...]:
        """The closers for the open turn; empty when no turn is open."""
        if self.turn is None or self.length == 0:
            return ()
        turn, seq, time = self.turn, self.length, self.last_time
        out: list[Event] = []
        for call in self.pending.values():
            out.append(_interrupted_result(turn, call, seq, time))
            seq += 1
        if self.step is not None:
            out.append(Event("step/end", seq, time, FrozenObject({"turn": turn, "step": self.step})))
            seq += 1
        reason = FrozenObject({"kind": "interrupted"})
        out.append(Event("turn/end", seq, time, FrozenObject({"turn": turn, "reason": reason})))
        return tuple(out)


def _interrupted_result(turn: int, call: PendingCall, seq: int, time: int) -> Event:
    recorded = call.call_seq is not None
    error = (
        {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"}
        if recorded
        else {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}
    )
    block = {
        "type": "tool-result",
        "toolCallId": call.call_id,
        "isError": True,
        "content": [{"type": "text", "text": OUTCOME_UNKNOWN_TEXT if recorded else NOT_STARTED_TEXT}],
    }
    message = {
        "id": f"interrupted-tool-result-{call.call_id}-{seq}",
        "role": "user",
        "source": {"kind": "tool", "callId": call.call_id},
        "content": [block],
    }
    data = freeze({"turn": turn, "step": call.step, "message": message, "error": error})
    sources = (call.call_seq,) if call.call_seq is not None else None
    return Event("tool/result", seq, time, data, surface_op=APPEND, source_event_seqs=sources)


def interrupted_turn_closers(events: Iterable[Event]) -> tuple[Event, ...]:
    """The closers for the open tail turn of ``events``; empty when the log is closed."""
    tail = OpenTail()
    for event in events:
        tail.observe(event)
    return tail.closers()
