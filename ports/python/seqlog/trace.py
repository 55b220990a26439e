"""The turn / step / tool trace: bracket numbering and tool-result pairing within a step.

Turns are numbered 1, 2, … and never nest; steps are numbered from 1 within each turn.  Model output
and tool traffic name the open turn and step; turn-scoped bookkeeping needs an open turn.  A
``tool/result`` answers a ``tool/call`` recorded earlier in the same step, except the synthetic
``TOOL_NOT_STARTED`` result that crash repair writes for a call that never started.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from seqlog.errors import Code, SeqlogError
from seqlog.event import Event, Replace
from seqlog.jsonvalue import as_int, as_object, is_positive
from seqlog.messages import tool_result_call_id, tool_result_error_code

TRACE_DATA_KEYS: dict[str, frozenset[str]] = {
    "turn/start": frozenset({"turn"}),
    "turn/end": frozenset({"turn", "reason"}),
    "step/start": frozenset({"turn", "step"}),
    "step/end": frozenset({"turn", "step"}),
    "tool/call": frozenset({"turn", "step", "callId", "name", "arguments"}),
    "assistant/chunk": frozenset({"turn", "step", "chunk"}),
}
STEP_SCOPED = frozenset({"assistant/chunk", "assistant/message", "tool/call", "tool/result"})
TURN_SCOPED = frozenset({"todo/write", "request/header", "request/context"})
TURN_END_KINDS = frozenset({"completed", "aborted", "blocked", "error", "max-tokens", "interrupted"})
ABORT_CAUSES = frozenset({"user", "parent", "hook", "disposed", "legacy"})
TOOL_NOT_STARTED = "TOOL_NOT_STARTED"


@dataclass(frozen=True, slots=True)
class Brackets:
    """The open brackets after a prefix of the log."""

    open_turn: int | None = None
    last_turn: int = 0
    open_step: int | None = None
    last_step: int = 0
    step_calls: frozenset[str] = frozenset()
    """Call ids recorded by ``tool/call`` in the open step and not yet answered."""


CLOSED = Brackets()


def check_trace_data(event: Event) -> None:
    """Refuse a bracket or tool-call payload of the wrong shape; other types pass."""
    keys = TRACE_DATA_KEYS.get(event.type)
    if keys is None:
        return
    where = f"{event.type} at seq {event.seq}"
    data = as_object(event.data)
    if data is None or data.keys() != keys:
        raise SeqlogError(Code.TRACE_DATA_INVALID, f"{where} data must have exactly {sorted(keys)}")
    if not is_positive(data["turn"]) or ("step" in keys and not is_positive(data["step"])):
        raise SeqlogError(Code.TRACE_DATA_INVALID, f"{where} turn/step must be positive integers")
    if event.type == "tool/call" and not (
        isinstance(data["callId"], str)
        and data["callId"] != ""
        and isinstance(data["name"], str)
        and isinstance(data["arguments"], str)
    ):
        raise SeqlogError(Code.TRACE_DATA_INVALID, f"tool/call at seq {event.seq} needs string callId, name, arguments")
    if event.type == "turn/end":
        _check_turn_end_reason(event.seq, data)


def _check_turn_end_reason(seq: int, data: Mapping[str, Any]) -> None:
    reason = as_object(data["reason"])
    kind = reason.get("kind") if reason is not None else None
    problem = None
    if reason is None or not (isinstance(kind, str) and kind in TURN_END_KINDS):
        problem = f"unknown kind {kind!r}"
    elif kind == "aborted":
        cause = as_object(reason.get("reason"))
        cause_kind = cause.get("kind") if cause is not None else None
        if not (isinstance(cause_kind, str) and cause_kind in ABORT_CAUSES):
            problem = "aborted needs a reason whose kind is user, parent, hook, disposed or legacy"
    elif kind == "error":
        error = as_object(reason.get("error"))
        if error is None or not isinstance(error.get("message"), str) or not isinstance(error.get("code"), str):
            problem = "error needs an error with string message and code"
    if problem is not None:
        raise SeqlogError(Code.TURN_END_REASON_INVALID, f"turn/end at seq {seq} has an invalid reason: {problem}")


def advance(state: Brackets, event: Event) -> Brackets:
    """The brackets after ``event``; raises for an event the trace refuses."""
    type_ = event.type
    data = event.data if isinstance(event.data, Mapping) else None
    turn = as_int(data.get("turn")) if data is not None else None
    step = as_int(data.get("step")) if data is not None else None
    where = f"{type_} at seq {event.seq}"
    if type_ == "turn/start":
        if state.open_turn is not None:
            raise SeqlogError(Code.TURN_ALREADY_OPEN, f"{where} while turn {state.open_turn} is still open")
        if turn != state.last_turn + 1:
            raise SeqlogError(Code.TURN_NUMBER, f"{where} must start turn {state.last_turn + 1}, got {turn}")
        return Brackets(open_turn=turn, last_turn=turn)
    if type_ == "turn/end":
        if state.open_turn is None or turn != state.open_turn:
            raise SeqlogError(Code.TURN_END_MISMATCH, f"{where} does not match open turn {state.open_turn}")
        if state.open_step is not None:
            raise SeqlogError(Code.STEP_STILL_OPEN, f"{where} while step {state.open_step} is still open")
        return Brackets(last_turn=state.last_turn)
    if type_ == "step/start":
        if state.open_turn is None or turn != state.open_turn:
            raise SeqlogError(Code.STEP_OUTSIDE_TURN, f"{where} names turn {turn}; open turn is {state.open_turn}")
        if state.open_step is not None:
            raise SeqlogError(Code.STEP_ALREADY_OPEN, f"{where} while step {state.open_step} is still open")
        if step != state.last_step + 1:
            raise SeqlogError(Code.STEP_NUMBER, f"{where} must start step {state.last_step + 1}, got {step}")
        return Brackets(state.open_turn, state.last_turn, step, step)
    if type_ == "step/end":
        if state.open_step is None or turn != state.open_turn or step != state.open_step:
            raise SeqlogError(Code.STEP_END_MISMATCH, f"{where} does not match open step {state.open_turn}/{state.open_step}")
        return Brackets(state.open_turn, state.last_turn, None, state.last_step)
    if type_ == "tool/result" and isinstance(event.surface_op, Replace):
        if state.open_turn is None:
            raise SeqlogError(Code.EVENT_OUTSIDE_TURN, f"{where} rewrites a tool result outside any open turn")
        return state
    if type_ in STEP_SCOPED:
        if state.open_step is None or turn != state.open_turn or step != state.open_step:
            raise SeqlogError(
                Code.EVENT_OUTSIDE_STEP, f"{where} names {turn}/{step}; open turn/step is {state.open_turn}/{state.open_step}"
            )
        if type_ == "tool/call":
            assert data is not None
            calls = state.step_calls | {data["callId"]}
            return Brackets(state.open_turn, state.last_turn, state.open_step, state.last_step, calls)
        if type_ == "tool/result":
            call_id = tool_result_call_id(event)
            if call_id in state.step_calls:
                calls = state.step_calls - {call_id}
                return Brackets(state.open_turn, state.last_turn, state.open_step, state.last_step, calls)
            if tool_result_error_code(event) == TOOL_NOT_STARTED:
                return state
            raise SeqlogError(Code.TOOL_RESULT_UNPAIRED, f"{where} answers {call_id!r} with no prior tool/call in this step")
        return state
    if type_ in TURN_SCOPED and state.open_turn is None:
        raise SeqlogError(Code.EVENT_OUTSIDE_TURN, f"{where} must be inside an open turn")
    return state
