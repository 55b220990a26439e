"""The turn / step / tool trace: brackets, numbering, and tool-result pairing.

Turns are numbered 1, 2, … and never nest; steps are numbered from 1 within each turn and sit
inside an open turn.  Model output and tool traffic name the open turn and step; turn-scoped
bookkeeping (todos, request headers and contexts) needs an open turn.  A ``tool/result`` answers a
``tool/call`` recorded earlier in the same step, except the synthetic result for a call that never
started (``TOOL_NOT_STARTED``), which crash repair writes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sessionlog_spec.model.event import Event, Replace
from sessionlog_spec.model.json_value import as_array, as_int, as_object
from sessionlog_spec.model.messages import tool_result_call_id, tool_result_error_code
from sessionlog_spec.model.payloads import payload_problem
from sessionlog_spec.model.violation import Code, Violation

TRACE_TYPES = frozenset({"turn/start", "turn/end", "step/start", "step/end", "tool/call", "assistant/chunk"})
STEP_SCOPED = frozenset({"assistant/chunk", "assistant/message", "tool/call", "tool/result"})
TURN_SCOPED = frozenset({"request/header", "request/context"})
TURN_END_KINDS = frozenset({"completed", "aborted", "blocked", "error", "max-tokens", "interrupted"})
"""The reason kinds the released vocabulary spells out; any other non-empty kind is owner-opaque."""
ABORT_CAUSES = frozenset({"user", "parent", "hook", "disposed", "legacy"})
TOOL_NOT_STARTED = "TOOL_NOT_STARTED"
INBOX_SPLICE = "agent/inbox/spliced"
MEMBER_CODES: dict[tuple[str, str], Code] = {("turn/end", "reason"): Code.TURN_END_REASON_INVALID}
"""Payload members of the trace types whose faults have their own code, by type and member; every
other payload fault of a trace type is ``TRACE_DATA_INVALID``."""


@dataclass(frozen=True, slots=True)
class TraceState:
    """The open brackets after a prefix of the log."""

    open_turn: int | None = None
    last_turn: int = 0
    open_step: int | None = None
    last_step: int = 0
    step_calls: frozenset[str] = frozenset()
    """Call ids recorded by ``tool/call`` in the open step and not yet answered."""


def trace_data_problem(event: Event) -> Violation | None:
    """INV-TRACE-9, INV-TRACE-3: the payloads of the bracket, chunk and tool-call events, by the
    payload table; a ``turn/end`` reason problem has its own code.

    Turn and step numbers are counts here: whether a number names the open turn or step is the
    trace's question, not the payload's.
    """
    if event.type not in TRACE_TYPES:
        return None
    problem = payload_problem(event.type, event.data, event.seq)
    if problem is None:
        return None
    own = (c for (t, member), c in MEMBER_CODES.items() if event.type == t and problem.startswith(f"$.{member}"))
    code = next(own, Code.TRACE_DATA_INVALID)
    return Violation(code, f"{event.type} at seq {event.seq} data: {problem}")


def _turn_step(event: Event) -> tuple[int | None, int | None]:
    data = as_object(event.data)
    return (as_int(data.get("turn")), as_int(data.get("step"))) if data is not None else (None, None)


def restart_interrupted_turn(state: TraceState, event: Event, previous: Event | None) -> TraceState:
    """INV-LEGACY-6: the trace a ``turn/start`` of a v0 log meets, given the event before it.

    A released v0 writer that resumed with input queued for the next turn spliced it in and opened
    that turn without ever writing the interrupted turn's ``turn/end``.  The released edge's
    validator admits exactly that pattern (its ``legacyInterruptedTurnRestart`` extension) and
    writes nothing for it: a ``turn/start`` of the open turn + 1, with no step open, right after an
    ``agent/inbox/spliced`` whose ``target`` is ``next-turn`` and whose ``inserted`` is a non-empty
    array.  Then the open turn counts as abandoned (closed) and the new turn opens by the usual
    rule; in every other case the state is returned unchanged, so the open turn refuses the
    ``turn/start`` as usual.  Only the edge asks this (a v1 writer always closes its turns).
    """
    if event.type != "turn/start" or state.open_turn is None or state.open_step is not None:
        return state
    data = as_object(event.data)
    if data is None or as_int(data.get("turn")) != state.open_turn + 1:
        return state
    splice = as_object(previous.data) if previous is not None and previous.type == INBOX_SPLICE else None
    inserted = as_array(splice.get("inserted")) if splice is not None else None
    if splice is None or splice.get("target") != "next-turn" or not inserted:
        return state
    # No open step means no call is pending either (step/end resolved them), so nothing is lost.
    return TraceState(last_turn=state.last_turn)


def trace_transition(state: TraceState, event: Event) -> TraceState | Violation:
    """The trace after ``event``, or the violation that refuses it (INV-TRACE-1..8)."""
    turn, step = _turn_step(event)
    where = f"{event.type} at seq {event.seq}"
    if event.type == "turn/start":
        if state.open_turn is not None:
            return Violation(Code.TURN_ALREADY_OPEN, f"{where} while turn {state.open_turn} is still open")
        if turn != state.last_turn + 1:
            return Violation(Code.TURN_NUMBER, f"{where} must start turn {state.last_turn + 1}, got {turn}")
        return TraceState(open_turn=state.last_turn + 1, last_turn=state.last_turn + 1)
    if event.type == "turn/end":
        if state.open_turn is None or turn != state.open_turn:
            return Violation(Code.TURN_END_MISMATCH, f"{where} does not match open turn {state.open_turn}")
        if state.open_step is not None:
            return Violation(Code.STEP_STILL_OPEN, f"{where} while step {state.open_step} is still open")
        return TraceState(last_turn=state.last_turn)
    if event.type == "step/start":
        if state.open_turn is None or turn != state.open_turn:
            return Violation(Code.STEP_OUTSIDE_TURN, f"{where} names turn {turn}; open turn is {state.open_turn}")
        if state.open_step is not None:
            return Violation(Code.STEP_ALREADY_OPEN, f"{where} while step {state.open_step} is still open")
        if step != state.last_step + 1:
            return Violation(Code.STEP_NUMBER, f"{where} must start step {state.last_step + 1}, got {step}")
        return replace(state, open_step=state.last_step + 1, last_step=state.last_step + 1, step_calls=frozenset())
    if event.type == "step/end":
        if state.open_step is None or turn != state.open_turn or step != state.open_step:
            return Violation(Code.STEP_END_MISMATCH, f"{where} does not match open step {state.open_turn}/{state.open_step}")
        return replace(state, open_step=None, step_calls=frozenset())
    if event.type == "tool/result" and isinstance(event.surface_op, Replace):
        if state.open_turn is None:
            return Violation(Code.EVENT_OUTSIDE_TURN, f"{where} rewrites a tool result outside any open turn")
        return state
    if event.type in STEP_SCOPED:
        if state.open_step is None or turn != state.open_turn or step != state.open_step:
            return Violation(
                Code.EVENT_OUTSIDE_STEP,
                f"{where} names {turn}/{step}; open turn/step is {state.open_turn}/{state.open_step}",
            )
        if event.type == "tool/call":
            data = as_object(event.data)
            assert data is not None
            return replace(state, step_calls=state.step_calls | {str(data["callId"])})
        if event.type == "tool/result":
            call_id = tool_result_call_id(event)
            if call_id in state.step_calls:
                return replace(state, step_calls=state.step_calls - {call_id})
            if tool_result_error_code(event) == TOOL_NOT_STARTED:
                return state
            return Violation(Code.TOOL_RESULT_UNPAIRED, f"{where} answers {call_id!r} with no prior tool/call in this step")
        return state
    if event.type in TURN_SCOPED and state.open_turn is None:
        return Violation(Code.EVENT_OUTSIDE_TURN, f"{where} must be inside an open turn")
    return state
