"""The turn / step / tool trace: bracket numbering and tool-result pairing within a step.

Turns are numbered 1, 2, … and never nest; steps are numbered from 1 within each turn.  Model output
and tool traffic name the open turn and step; turn-scoped bookkeeping needs an open turn.  A
``tool/result`` answers a ``tool/call`` recorded earlier in the same step, except the synthetic
``TOOL_NOT_STARTED`` result that crash repair writes for a call that never started.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from seqlog.errors import Code, SeqlogError
from seqlog.event import Event, Replace
from seqlog.jsonvalue import as_array, as_int, as_object
from seqlog.messages import tool_result_call_id, tool_result_error_code
from seqlog.payloads import TRACE_TYPES, payload_members, payload_problem

TRACE_DATA_KEYS: dict[str, frozenset[str]] = {event_type: payload_members(event_type) for event_type in sorted(TRACE_TYPES)}
"""The members of each bracket, chunk and tool-call payload (all required; their shapes are the schema's)."""
STEP_SCOPED = frozenset({"assistant/chunk", "assistant/message", "tool/call", "tool/result"})
TURN_SCOPED = frozenset({"request/header", "request/context"})
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


def abandon_for_restart(state: Brackets, event: Event, before: Event | None) -> Brackets:
    """The brackets a ``turn/start`` of a converted v0 log is checked against, given the event before it.

    Released v0 writers resuming with input queued for the next turn spliced it in and started that
    turn without writing the interrupted turn's ``turn/end``; the released edge admits exactly that
    (``legacyInterruptedTurnRestart``) and writes nothing for it.  So when ``event`` starts the
    open turn + 1, no step is open, and ``before`` is an ``agent/inbox/spliced`` with ``target``
    ``next-turn`` and a non-empty ``inserted`` array, the open turn is treated as closed; otherwise
    the brackets are unchanged and :func:`advance` refuses as it always does.  Only the v0 edge
    calls this: a v1 writer closes its turns.
    """
    if event.type != "turn/start" or state.open_turn is None or state.open_step is not None:
        return state
    if before is None or before.type != "agent/inbox/spliced":
        return state
    data = as_object(event.data)
    if data is None or as_int(data.get("turn")) != state.open_turn + 1:
        return state
    splice = as_object(before.data)
    if splice is None or splice.get("target") != "next-turn" or not as_array(splice.get("inserted")):
        return state
    # With no step open, no call is pending (the step's end resolved them): the turn just closes.
    return Brackets(last_turn=state.last_turn)


def check_trace_data(event: Event) -> None:
    """Refuse a bracket, chunk or tool-call payload that is not exactly its type's payload; other types pass.

    The payload is checked against its published schema (:mod:`seqlog.payloads`): a problem in a
    ``turn/end`` reason is ``TURN_END_REASON_INVALID`` (an unknown non-empty kind is owner-opaque;
    an abort by a hook carries a string ``reason``), any other ``TRACE_DATA_INVALID``.  Turn and
    step numbers are counts here; whether they name the open turn and step is :func:`advance`'s
    question.
    """
    if event.type not in TRACE_TYPES:
        return
    problem = payload_problem(event.type, event.data, event.seq)
    if problem is None:
        return
    reason = event.type == "turn/end" and problem.path[:1] == ("reason",)
    code = Code.TURN_END_REASON_INVALID if reason else Code.TRACE_DATA_INVALID
    raise SeqlogError(code, f"{event.type} at seq {event.seq} data: {problem}")


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
