"""Invalid candidates of the turn / step / tool trace (``INV-TRACE``; the contracts are
:mod:`sessionlog_spec.contracts.trace`): trace payloads, turn and step numbering and nesting, events
outside their turn or step, and tool results without their call (INV-TRACE-1..9).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from sessionlog_spec.model.messages import tool_call_ids, tool_result_call_id
from sessionlog_spec.model.payloads import CURRENT_GENERATION, payload_members
from sessionlog_spec.model.session import append_event as model_append_event
from sessionlog_spec.model.violation import Code, Violation
from sessionlog_spec.suite.agent.actions import open_calls
from sessionlog_spec.suite.agent.builder import PROVIDER, RawEvent, SessionBuilder, basic_header
from sessionlog_spec.suite.agent.candidates.base import (
    Registry,
    _asked_call,
    _assistant,
    _data,
    _elided,
    _enter_turn,
    _header_event,
    _leave_step,
    _open_step,
    _open_turn,
    _put,
    _refused,
    _rewrite,
    _scratch,
    _seed_with,
    _step_events,
    _tool_results,
    _unstarted_calls,
)
from sessionlog_spec.suite.agent.legacy_forms import restarted_turn

REGISTERED = Registry()
"""This module's mutations, in the order their builders are defined below."""
candidate = REGISTERED.candidate


# -- trace (INV-TRACE-1..9) ------------------------------------------------------------------------


@candidate(Code.TRACE_DATA_INVALID, "append")
def turn_start_with_trigger(builder: SessionBuilder, rng: random.Random) -> object:
    """A v0 ``turn/start`` that still carries ``trigger``."""
    b = _scratch(builder)
    if _open_turn(b) is not None:
        return None
    e = b.turn_start(commit=False)
    e["data"]["trigger"] = rng.choice(("user", "schedule"))
    return e


TRACE_EXTRA_MEMBERS = ("trigger", "model", "provider", "startedAt", "id", "meta", "status")
"""Members a harness might leave on a bracket, tool-call or chunk payload: a v0 leftover
(``trigger``), what the step's request says (``model``, ``provider``), bookkeeping of its own."""


@candidate(Code.TRACE_DATA_INVALID, "append")
def trace_payload_extra_member(builder: SessionBuilder, rng: random.Random) -> object:
    """A trace payload that is valid but for one member its type does not have, the type drawn
    first among those that may come next (a bracket, a recorded call, a chunk)."""
    b = _scratch(builder)
    step = _open_step(b)
    unstarted = _unstarted_calls(b) if step is not None else []
    makers: dict[str, Callable[[], RawEvent]] = {}
    if _open_turn(b) is None:
        makers["turn/start"] = lambda: b.turn_start(commit=False)
    elif step is None:
        makers["step/start"] = lambda: b.step_start(commit=False)
        makers["turn/end"] = lambda: b.turn_end(commit=False)
    else:
        makers["step/end"] = lambda: b.step_end(commit=False)
        makers["assistant/chunk"] = lambda: b.chunk(commit=False)
        if unstarted:
            makers["tool/call"] = lambda: b.tool_call(unstarted[0], commit=False)
    type_ = rng.choice(sorted(makers))
    e = makers[type_]()
    if isinstance(model_append_event(b.state, e), Violation):
        return None  # not even the valid form fits here (a compaction held open, a call unanswered)
    members = payload_members(str(e["type"]), CURRENT_GENERATION)
    name = rng.choice([m for m in TRACE_EXTRA_MEMBERS if m not in (*members.required, *members.optional)])
    e["data"][name] = rng.choice(("user", 1, None, True, [], {}))
    return _refused(b, "append", Code.TRACE_DATA_INVALID, e)


@candidate(Code.TRACE_DATA_INVALID, "append")
def tool_call_arguments_object(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``tool/call`` whose arguments were parsed into an object."""
    b = _scratch(builder)
    if _open_step(b) is None:
        return None
    e = b.tool_call(f"call-{rng.randrange(1000)}", commit=False)
    e["data"]["arguments"] = {"path": "a.py"}
    return e


@candidate(Code.TRACE_DATA_INVALID, "append")
def step_end_without_turn(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``step/end`` that names its step but not its turn."""
    b = _scratch(builder)
    if _open_step(b) is None:
        return None
    e = b.step_end(commit=False)
    del e["data"]["turn"]
    return e


@candidate(Code.TURN_ALREADY_OPEN, "append")
def turn_start_while_open(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``turn/start`` while a turn is still open (a turn/end was lost)."""
    b = _scratch(builder)
    return None if _open_turn(b) is None else b.turn_start(commit=False)


@candidate(Code.TURN_ALREADY_OPEN, "seed")
def seed_turn_restarted_after_splice(builder: SessionBuilder, rng: random.Random) -> object:
    """A v1 seed holding the interrupted-turn restart of released v0 writers (an inbox splice into the
    next turn, then that turn's start, the open one never ended): the edge admits it in v0 logs only
    (INV-LEGACY-6), so a v1 session refuses it wherever it enters."""
    b = _scratch(builder)
    if not _enter_turn(b) or not _leave_step(b):
        return None
    return [*b.events, *restarted_turn(b, rng.randint(1, 3))]


@candidate(Code.TURN_NUMBER, "append")
def turn_number_skipped(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``turn/start`` that skips a number, or restarts numbering at 1 after a resume."""
    b = _scratch(builder)
    if _open_turn(b) is not None:
        return None
    last = b.state.trace.last_turn
    choices = [last + 2, last + 3] + ([1] if last >= 1 else [])
    return b.event("turn/start", {"turn": rng.choice(choices)}, False)


@candidate(Code.TURN_END_MISMATCH, "append")
def turn_end_wrong_number(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``turn/end`` naming another turn than the open one."""
    b = _scratch(builder)
    turn = _open_turn(b)
    if turn is None or _open_step(b) is not None:
        return None
    other = rng.choice([turn + 1] + ([turn - 1] if turn >= 2 else []))
    return b.event("turn/end", {"turn": other, "reason": {"kind": "completed"}}, False)


@candidate(Code.TURN_END_MISMATCH, "append")
def turn_end_twice(builder: SessionBuilder, rng: random.Random) -> object:
    """A second ``turn/end`` for a turn that is already closed."""
    b = _scratch(builder)
    last = b.state.trace.last_turn
    if _open_turn(b) is not None or last == 0:
        return None
    return b.event("turn/end", {"turn": last, "reason": {"kind": "completed"}}, False)


@candidate(Code.TURN_END_REASON_INVALID, "append")
def turn_end_legacy_reason(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``turn/end`` with a v0 reason (aborted without cause, error with failure), an empty kind, or a
    released kind with a member it does not have (a v0 ``disposed`` is an owner-opaque kind in v1)."""
    b = _scratch(builder)
    if _open_turn(b) is None or _open_step(b) is not None:
        return None
    reason = rng.choice(
        (
            {"kind": "aborted"},
            {"kind": "completed", "step": 1},
            {"kind": "error", "step": 1, "failure": {"message": "overloaded", "code": "E_OVERLOADED"}},
            {"kind": ""},
        )
    )
    return b.turn_end(reason, commit=False)


@candidate(Code.STEP_OUTSIDE_TURN, "append")
def step_start_outside_turn(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``step/start`` after the turn ended."""
    b = _scratch(builder)
    if _open_turn(b) is not None:
        return None
    return b.event("step/start", {"turn": max(b.state.trace.last_turn, 1), "step": 1}, False)


@candidate(Code.STEP_OUTSIDE_TURN, "append")
def step_start_other_turn(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``step/start`` naming the next turn while this one is open."""
    b = _scratch(builder)
    turn = _open_turn(b)
    if turn is None or _open_step(b) is not None:
        return None
    return b.event("step/start", {"turn": turn + 1, "step": b.state.trace.last_step + 1}, False)


@candidate(Code.STEP_ALREADY_OPEN, "append")
def step_start_while_open(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``step/start`` while a step is still open (a step/end was lost)."""
    b = _scratch(builder)
    step = _open_step(b)
    if step is None:
        return None
    return b.event("step/start", {"turn": step[0], "step": step[1] + 1}, False)


@candidate(Code.STEP_NUMBER, "append")
def step_number_skipped(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``step/start`` that skips a number, or restarts at 1 within the turn."""
    b = _scratch(builder)
    turn = _open_turn(b)
    if turn is None or _open_step(b) is not None:
        return None
    last = b.state.trace.last_step
    return b.event("step/start", {"turn": turn, "step": rng.choice([last + 2] + ([1] if last >= 1 else []))}, False)


@candidate(Code.STEP_END_MISMATCH, "append")
def step_end_wrong_step(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``step/end`` naming another step than the open one."""
    b = _scratch(builder)
    step = _open_step(b)
    if step is None:
        return None
    other = rng.choice([step[1] + 1] + ([step[1] - 1] if step[1] >= 2 else []))
    return b.event("step/end", {"turn": step[0], "step": other}, False)


@candidate(Code.STEP_END_MISMATCH, "append")
def step_end_twice(builder: SessionBuilder, rng: random.Random) -> object:
    """A second ``step/end`` for a step that is already closed."""
    b = _scratch(builder)
    turn, last = _open_turn(b), b.state.trace.last_step
    if turn is None or _open_step(b) is not None or last == 0:
        return None
    return b.event("step/end", {"turn": turn, "step": last}, False)


@candidate(Code.STEP_STILL_OPEN, "append")
def turn_end_step_open(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``turn/end`` written while its last step is still open (every call that step asked for answered)."""
    b = _scratch(builder)
    if _open_step(b) is None or _unstarted_calls(b) or b.state.trace.step_calls:
        return None
    return b.turn_end(commit=False)


@candidate(Code.EVENT_OUTSIDE_TURN, "append")
def header_before_turn(builder: SessionBuilder, rng: random.Random) -> object:
    """A request header written before the turn that sends it has started."""
    b = _scratch(builder)
    if _open_turn(b) is not None:
        return None
    return _header_event(b, basic_header(), "initial" if b.state.header is None else "resume")


@candidate(Code.EVENT_OUTSIDE_TURN, "append")
def context_outside_turn(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``request/context`` between turns (written before the turn that sends the request started)."""
    b = _scratch(builder)
    if _open_turn(b) is not None:
        return None
    return b.event("request/context", {**PROVIDER, "contextWindow": rng.choice((128_000, 64_000))}, False)


@candidate(Code.EVENT_OUTSIDE_TURN, "append")
def late_rewrite(builder: SessionBuilder, rng: random.Random) -> object:
    """A tool-result rewrite written after its turn ended."""
    b = _scratch(builder)
    results = _tool_results(b)
    if _open_turn(b) is not None or not results:
        return None
    seq = rng.choice(results)
    return _rewrite(b, seq, seq, _elided(_data(b.state.events[seq])))


@candidate(Code.EVENT_OUTSIDE_STEP, "append")
def assistant_after_step_end(builder: SessionBuilder, rng: random.Random) -> object:
    """An assistant message written after its ``step/end``."""
    b = _scratch(builder)
    turn, last = _open_turn(b), b.state.trace.last_step
    if turn is None or _open_step(b) is not None or last == 0:
        return None
    e = _assistant(b, ())
    e["data"]["step"] = last
    return e


def _step_scoped(b: SessionBuilder, rng: random.Random) -> RawEvent | None:
    """One event of a type that names its turn and step, valid in the open step of the scratch
    builder ``b``: a chunk, an assistant message, the start of an asked call, the result of a
    started one (``None`` without an open step)."""
    if _open_step(b) is None:
        return None
    unstarted, started = open_calls(b)
    makers: list[Callable[[], RawEvent]] = [lambda: b.chunk(commit=False), lambda: _assistant(b, ())]
    if unstarted:
        makers.append(lambda: b.tool_call(rng.choice(unstarted), commit=False))
    if started:
        makers.append(lambda: b.tool_result(rng.choice(started), commit=False))
    return rng.choice(makers)()


def _elsewhere(event: RawEvent, rng: random.Random) -> RawEvent:
    """``event`` naming another turn or another step than the open one (a neighbour of either)."""
    data = event["data"]
    member = rng.choice(("turn", "step"))
    own = int(data[member])
    data[member] = rng.choice([own + 1] + ([own - 1] if own >= 2 else []))
    return event


@candidate(Code.EVENT_OUTSIDE_STEP, "append")
def step_event_names_other_step(builder: SessionBuilder, rng: random.Random) -> object:
    """A chunk, assistant message, tool call or tool result naming another turn or step than the open one."""
    b = _scratch(builder)
    event = _step_scoped(b, rng)
    return None if event is None else _elsewhere(event, rng)


@candidate(Code.EVENT_OUTSIDE_STEP, "seed")
def seed_tool_traffic_names_other_step(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which the model asks for a call and its start, or its result, names another turn or
    step than the open one (a tool runner that kept the step of an earlier request)."""
    b = _scratch(builder)
    call = _asked_call(b)
    if call is None:
        return None
    if rng.random() < 0.5:
        return _seed_with(b, _elsewhere(b.tool_call(call, commit=False), rng))
    if not _put(b, b.tool_call(call, commit=False)):
        return None
    return _seed_with(b, _elsewhere(b.tool_result(call, commit=False), rng))


def _answered_in_step(b: SessionBuilder) -> list[str]:
    """The calls answered by a ``tool/result`` in the open step."""
    return [c for e in _step_events(b) if e.type == "tool/result" and (c := tool_result_call_id(e))]


@candidate(Code.TOOL_RESULT_UNPAIRED, "append")
def result_for_unrecorded_call(builder: SessionBuilder, rng: random.Random) -> object:
    """A tool result for a call the model asked for but whose start was never recorded."""
    b = _scratch(builder)
    if _open_step(b) is None or b.state.pending_calls == 0:
        return None
    events = _step_events(b)
    asked = [c for e in events for c in tool_call_ids(e)]
    recorded = {str(_data(e)["callId"]) for e in events if e.type == "tool/call"}
    unrecorded = [c for c in asked if c not in recorded] or ["call-never-asked"]
    return b.tool_result(rng.choice(unrecorded), commit=False)


@candidate(Code.TOOL_RESULT_UNPAIRED, "append")
def result_answered_twice(builder: SessionBuilder, rng: random.Random) -> object:
    """A second tool result for a call already answered in this step, while other calls are pending."""
    b = _scratch(builder)
    if _open_step(b) is None or b.state.pending_calls == 0:
        return None
    answered = _answered_in_step(b)
    return b.tool_result(rng.choice(answered), commit=False) if answered else None
