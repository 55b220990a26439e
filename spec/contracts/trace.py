"""INV-TRACE: turn and step brackets, scoping, and tool-result pairing."""

from __future__ import annotations

from collections.abc import Mapping

import icontract

from sessionlog_spec.contracts import ENABLED
from sessionlog_spec.contracts._support import accepted
from sessionlog_spec.model import trace as _trace
from sessionlog_spec.model.event import Event, Replace
from sessionlog_spec.model.json_value import is_safe_natural
from sessionlog_spec.model.trace import TraceState
from sessionlog_spec.model.violation import Violation

STEP_SCOPED = ("assistant/chunk", "assistant/message", "tool/call", "tool/result")
TURN_SCOPED = ("request/header", "request/context")
"""Turn-scoped bookkeeping (``todo/write`` is not: the released rules let a todo list change anywhere)."""


def _get(event: Event, key: str) -> object:
    return event.data.get(key) if isinstance(event.data, Mapping) else None


def turn_start_is_next(state: TraceState, event: Event) -> bool:
    """INV-TRACE-1."""
    return event.type != "turn/start" or (state.open_turn is None and _get(event, "turn") == state.last_turn + 1)


def turn_end_closes_open_turn(state: TraceState, event: Event) -> bool:
    """INV-TRACE-2."""
    return event.type != "turn/end" or (_get(event, "turn") == state.open_turn and state.open_step is None)


def step_start_is_next(state: TraceState, event: Event) -> bool:
    """INV-TRACE-4."""
    return event.type != "step/start" or (
        state.open_turn is not None
        and _get(event, "turn") == state.open_turn
        and state.open_step is None
        and _get(event, "step") == state.last_step + 1
    )


def step_end_closes_open_step(state: TraceState, event: Event) -> bool:
    """INV-TRACE-5."""
    return event.type != "step/end" or (
        state.open_step is not None and _get(event, "turn") == state.open_turn and _get(event, "step") == state.open_step
    )


def _rewrite(event: Event) -> bool:
    return event.type == "tool/result" and isinstance(event.surface_op, Replace)


def step_scoped_names_open_step(state: TraceState, event: Event) -> bool:
    """INV-TRACE-6."""
    if event.type not in STEP_SCOPED or _rewrite(event):
        return True
    return state.open_step is not None and (_get(event, "turn"), _get(event, "step")) == (state.open_turn, state.open_step)


def turn_scoped_inside_turn(state: TraceState, event: Event) -> bool:
    """INV-TRACE-7."""
    return not (event.type in TURN_SCOPED or _rewrite(event)) or state.open_turn is not None


def result_answers_recorded_call(state: TraceState, event: Event) -> bool:
    """INV-TRACE-8."""
    if event.type != "tool/result" or _rewrite(event):
        return True
    message = _get(event, "message")
    source = message.get("source") if isinstance(message, Mapping) else None
    call_id = source.get("callId") if isinstance(source, Mapping) else None
    error = _get(event, "error")
    code = error.get("code") if isinstance(error, Mapping) else None
    return call_id in state.step_calls or code == "TOOL_NOT_STARTED"


def brackets_are_consistent(result: TraceState) -> bool:
    """INV-TRACE-10."""
    return (
        (result.open_turn is None or result.open_turn == result.last_turn)
        and (result.open_step is None or (result.open_turn is not None and result.open_step == result.last_step))
        and (result.open_step is not None or not result.step_calls)
    )


@icontract.require(lambda state: brackets_are_consistent(state), "INV-TRACE-10", enabled=ENABLED)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or turn_start_is_next(state, event), "INV-TRACE-1", enabled=ENABLED
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or turn_end_closes_open_turn(state, event), "INV-TRACE-2", enabled=ENABLED
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or step_start_is_next(state, event), "INV-TRACE-4", enabled=ENABLED
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or step_end_closes_open_step(state, event), "INV-TRACE-5", enabled=ENABLED
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or step_scoped_names_open_step(state, event), "INV-TRACE-6", enabled=ENABLED
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or turn_scoped_inside_turn(state, event), "INV-TRACE-7", enabled=ENABLED
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or result_answers_recorded_call(state, event),
    "INV-TRACE-8",
    enabled=ENABLED,
)
@icontract.ensure(lambda result: not accepted(result) or brackets_are_consistent(result), "INV-TRACE-10", enabled=ENABLED)
def trace_transition(state: TraceState, event: Event) -> TraceState | Violation:
    """The trace after ``event``."""
    return _trace.trace_transition(state, event)


def _non_empty(value: object) -> bool:
    return isinstance(value, str) and value != ""


def reason_is_well_formed(event: Event) -> bool:
    """INV-TRACE-3: a reason of a released kind has that kind's shape (an aborted turn names a known
    cause, a hook abort its reason; an error turn its failure's message and code); a reason of any
    other non-empty kind is owner-opaque."""
    if event.type != "turn/end":
        return True
    reason = _get(event, "reason")
    if not isinstance(reason, Mapping) or not _non_empty(reason.get("kind")):
        return False
    kind = reason.get("kind")
    if kind == "aborted":
        cause = reason.get("reason")
        if not isinstance(cause, Mapping) or cause.get("kind") not in ("user", "parent", "hook", "disposed", "legacy"):
            return False
        return cause.get("kind") != "hook" or isinstance(cause.get("reason"), str)
    if kind == "error":
        error = reason.get("error")
        return isinstance(error, Mapping) and _non_empty(error.get("message")) and _non_empty(error.get("code"))
    if kind in ("completed", "blocked", "max-tokens", "interrupted"):
        return set(reason) == {"kind"}
    return True


def bracket_numbers_are_counts(event: Event) -> bool:
    """INV-TRACE-9: turn and step in these payloads are counts (whether they name the open turn or
    step is the trace's question)."""
    if event.type not in ("turn/start", "turn/end", "step/start", "step/end", "tool/call", "assistant/chunk"):
        return True
    keys = ("turn",) if event.type.startswith("turn/") else ("turn", "step")
    return all(is_safe_natural(_get(event, k)) for k in keys)


@icontract.ensure(lambda event, result: result is not None or reason_is_well_formed(event), "INV-TRACE-3", enabled=ENABLED)
@icontract.ensure(lambda event, result: result is not None or bracket_numbers_are_counts(event), "INV-TRACE-9", enabled=ENABLED)
def trace_data_problem(event: Event) -> Violation | None:
    """What is wrong with a bracket or tool-call payload."""
    return _trace.trace_data_problem(event)
