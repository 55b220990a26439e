"""INV-TRACE: turn and step brackets, numbering, scoping, and tool-result pairing."""

from __future__ import annotations

from typing import Any

import icontract
import pytest
from model_cases import (
    assistant_data,
    call_data,
    ev,
    header_data,
    not_started_data,
    opened,
    refusal,
    replace,
    result_data,
    session,
    title_data,
    user,
)

from sessionlog_spec.contracts.log import decode_event
from sessionlog_spec.contracts.trace import trace_data_problem, trace_transition
from sessionlog_spec.model.event import Event
from sessionlog_spec.model.session import EMPTY_SESSION, SessionState
from sessionlog_spec.model.trace import TraceState
from sessionlog_spec.model.violation import Code

COMPLETED = {"kind": "completed"}


def turn_start(seq: int, turn: int) -> dict[str, Any]:
    """A ``turn/start``."""
    return ev("turn/start", seq, {"turn": turn})


def turn_end(seq: int, turn: int, reason: Any = COMPLETED) -> dict[str, Any]:
    """A ``turn/end`` (completed unless ``reason`` is given)."""
    return ev("turn/end", seq, {"turn": turn, "reason": reason})


def step_start(seq: int, turn: int, step: int) -> dict[str, Any]:
    """A ``step/start``."""
    return ev("step/start", seq, {"turn": turn, "step": step})


def step_end(seq: int, turn: int, step: int) -> dict[str, Any]:
    """A ``step/end``."""
    return ev("step/end", seq, {"turn": turn, "step": step})


def one_turn() -> list[dict[str, Any]]:
    """A closed turn 1 with one empty step: seqs 0..3."""
    return [turn_start(0, 1), step_start(1, 1, 1), step_end(2, 1, 1), turn_end(3, 1)]


def asked(seq: int, calls: list[str], turn: int = 1, step: int = 1) -> dict[str, Any]:
    """An assistant message asking for ``calls``."""
    return ev("assistant/message", seq, assistant_data(turn, step, calls, id_=f"a{seq}"), surfaceOp="append")


def call(seq: int, call_id: str, turn: int = 1, step: int = 1) -> dict[str, Any]:
    """A ``tool/call`` starting ``call_id`` as :func:`asked` advertised it."""
    return ev("tool/call", seq, call_data(turn, step, call_id))


def result(seq: int, call: str, turn: int = 1, step: int = 1, **data: Any) -> dict[str, Any]:
    """An appended tool result for ``call``."""
    return ev("tool/result", seq, {**result_data(turn, step, call), **data}, surfaceOp="append")


def decoded(raw: dict[str, Any]) -> Event:
    """One raw event decoded."""
    event = decode_event(raw)
    assert isinstance(event, Event)
    return event


# -- INV-TRACE-1: turn/start ----------------------------------------------------------------------------------


def test_inv_trace_1_turns_are_numbered_from_one_without_gaps() -> None:
    """Turns 1, 2, 3 in a row are accepted and recorded as the last turn."""
    state = session([turn_start(0, 1), turn_end(1, 1), turn_start(2, 2), turn_end(3, 2), turn_start(4, 3)])
    assert (state.trace.open_turn, state.trace.last_turn) == (3, 3)


def test_inv_trace_1_turn_start_while_turn_open_is_refused() -> None:
    """A turn/start while turn 1 is open is refused, even numbered 2."""
    assert refusal(session([turn_start(0, 1)]), turn_start(1, 2)) is Code.TURN_ALREADY_OPEN
    assert refusal(session(opened()), turn_start(2, 2)) is Code.TURN_ALREADY_OPEN


@pytest.mark.parametrize("turn", [2, 3, 100])
def test_inv_trace_1_first_turn_must_be_one(turn: int) -> None:
    """The first turn of a log is turn 1."""
    assert refusal(EMPTY_SESSION, turn_start(0, turn)) is Code.TURN_NUMBER


@pytest.mark.parametrize("turn", [1, 3])
def test_inv_trace_1_next_turn_must_follow_the_last(turn: int) -> None:
    """After turn 1 only turn 2 may start: no repeat, no gap."""
    assert refusal(session(one_turn()), turn_start(4, turn)) is Code.TURN_NUMBER


def test_inv_trace_1_open_turn_is_reported_before_the_number() -> None:
    """A misnumbered turn/start while a turn is open is reported as the open turn."""
    assert refusal(session([turn_start(0, 1)]), turn_start(1, 5)) is Code.TURN_ALREADY_OPEN


# -- INV-TRACE-2: turn/end ------------------------------------------------------------------------------------


def test_inv_trace_2_turn_end_closes_the_open_turn() -> None:
    """turn/end naming the open turn closes it; the step counter starts again."""
    state = session(one_turn())
    assert state.trace == TraceState(open_turn=None, last_turn=1, open_step=None, last_step=0)


@pytest.mark.parametrize("turn", [2, 7])
def test_inv_trace_2_turn_end_naming_another_turn_is_refused(turn: int) -> None:
    """turn/end must name the open turn."""
    assert refusal(session([turn_start(0, 1)]), turn_end(1, turn)) is Code.TURN_END_MISMATCH


def test_inv_trace_2_turn_end_without_open_turn_is_refused() -> None:
    """A second turn/end, or one on an empty log, is refused."""
    assert refusal(session(one_turn()), turn_end(4, 1)) is Code.TURN_END_MISMATCH
    assert refusal(EMPTY_SESSION, turn_end(0, 1)) is Code.TURN_END_MISMATCH


def test_inv_trace_2_turn_end_with_step_open_is_refused() -> None:
    """A turn closes its step first."""
    assert refusal(session(opened()), turn_end(2, 1)) is Code.STEP_STILL_OPEN


def test_inv_trace_2_mismatch_is_reported_before_the_open_step() -> None:
    """A wrong turn number with a step open is reported as the mismatch."""
    assert refusal(session(opened()), turn_end(2, 2)) is Code.TURN_END_MISMATCH


# -- INV-TRACE-3: turn/end reasons -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reason",
    [
        {"kind": "completed"},
        {"kind": "blocked"},
        {"kind": "max-tokens"},
        {"kind": "interrupted"},
        {"kind": "aborted", "reason": {"kind": "user"}},
        {"kind": "aborted", "reason": {"kind": "parent"}},
        {"kind": "aborted", "reason": {"kind": "hook", "reason": "policy"}},
        {"kind": "aborted", "reason": {"kind": "disposed"}},
        {"kind": "aborted", "reason": {"kind": "legacy"}},
        {"kind": "error", "error": {"message": "overloaded", "code": "E_OVERLOADED", "status": 529}},
    ],
    ids=lambda r: f"{r['kind']}-{r.get('reason', {}).get('kind', '')}",
)
def test_inv_trace_3_known_reasons_are_accepted(reason: dict[str, Any]) -> None:
    """The six kinds, aborted with each of its causes, error with message and code."""
    assert refusal(session([turn_start(0, 1)]), turn_end(1, 1, reason)) is None


@pytest.mark.parametrize(
    "reason",
    [
        {"kind": "aborted"},
        {"kind": "aborted", "reason": {"kind": "timeout"}},
        {"kind": "aborted", "reason": {"kind": "hook"}},
        {"kind": "aborted", "reason": {"kind": "hook", "reason": 3}},
        {"kind": "aborted", "reason": "user"},
        {"kind": "completed", "reason": {"kind": "user"}},
        {"kind": "error", "error": {"message": "boom"}},
        {"kind": "error", "error": {"message": "", "code": "E"}},
        {"kind": "error", "failure": {"message": "boom", "code": "E"}},
        {"kind": ""},
        {"kind": 3},
        {},
        "completed",
        None,
    ],
    ids=repr,
)
def test_inv_trace_3_other_reasons_are_refused(reason: object) -> None:
    """A reason of a released kind without that kind's shape (a hook abort without its reason, an
    error without its failure's code), and a reason with no kind, are refused (the v0 edge normalises
    the legacy ones before v1 sees them)."""
    assert refusal(session([turn_start(0, 1)]), turn_end(1, 1, reason)) is Code.TURN_END_REASON_INVALID


@pytest.mark.parametrize(
    "reason",
    [{"kind": "disposed"}, {"kind": "cancelled"}, {"kind": "handed-off", "to": {"session": "s-2"}, "at": [1, 2]}],
    ids=repr,
)
def test_inv_trace_3_reason_of_an_unknown_kind_is_owner_opaque(reason: dict[str, Any]) -> None:
    """A reason whose kind is a non-empty string the released vocabulary does not name is kept as
    owner-opaque JSON, whatever its other members."""
    assert trace_data_problem(decoded(turn_end(1, 1, reason))) is None
    state = session([turn_start(0, 1), turn_end(1, 1, reason)])
    assert state.trace == TraceState(open_turn=None, last_turn=1)


def test_inv_trace_3_reason_is_checked_before_the_bracket() -> None:
    """A bad reason on a turn/end with no open turn is reported as the bad reason (payload before trace)."""
    assert refusal(EMPTY_SESSION, turn_end(0, 1, {"kind": "aborted"})) is Code.TURN_END_REASON_INVALID


# -- INV-TRACE-4: step/start -------------------------------------------------------------------------------


def test_inv_trace_4_steps_are_numbered_from_one_within_each_turn() -> None:
    """Steps 1, 2 in turn 1, then step 1 again in turn 2."""
    raws = [*one_turn(), turn_start(4, 2), step_start(5, 2, 1), step_end(6, 2, 1), step_start(7, 2, 2)]
    state = session(raws)
    assert (state.trace.open_turn, state.trace.open_step, state.trace.last_step) == (2, 2, 2)


def test_inv_trace_4_step_start_outside_a_turn_is_refused() -> None:
    """No step before the first turn or after a turn ended."""
    assert refusal(EMPTY_SESSION, step_start(0, 1, 1)) is Code.STEP_OUTSIDE_TURN
    assert refusal(session(one_turn()), step_start(4, 1, 2)) is Code.STEP_OUTSIDE_TURN


def test_inv_trace_4_step_start_naming_another_turn_is_refused() -> None:
    """A step names the open turn."""
    assert refusal(session([turn_start(0, 1)]), step_start(1, 2, 1)) is Code.STEP_OUTSIDE_TURN


def test_inv_trace_4_step_start_while_step_open_is_refused() -> None:
    """Steps never nest."""
    assert refusal(session(opened()), step_start(2, 1, 2)) is Code.STEP_ALREADY_OPEN


@pytest.mark.parametrize("step", [1, 3])
def test_inv_trace_4_next_step_must_follow_the_last(step: int) -> None:
    """After step 1 only step 2 may start."""
    state = session([*opened(), step_end(2, 1, 1)])
    assert refusal(state, step_start(3, 1, step)) is Code.STEP_NUMBER


def test_inv_trace_4_first_step_must_be_one() -> None:
    """A turn's first step is step 1."""
    assert refusal(session([turn_start(0, 1)]), step_start(1, 1, 2)) is Code.STEP_NUMBER


# -- INV-TRACE-5: step/end ---------------------------------------------------------------------------------


@pytest.mark.parametrize("turn, step", [(1, 2), (2, 1)])
def test_inv_trace_5_step_end_naming_another_step_is_refused(turn: int, step: int) -> None:
    """step/end names the open step of the open turn."""
    assert refusal(session(opened()), step_end(2, turn, step)) is Code.STEP_END_MISMATCH


def test_inv_trace_5_step_end_without_open_step_is_refused() -> None:
    """A second step/end, or one between turns, is refused."""
    assert refusal(session([*opened(), step_end(2, 1, 1)]), step_end(3, 1, 1)) is Code.STEP_END_MISMATCH
    assert refusal(session(one_turn()), step_end(4, 1, 1)) is Code.STEP_END_MISMATCH


def test_inv_trace_5_step_end_closes_the_step_and_keeps_the_turn() -> None:
    """After step/end the turn is still open and the step counter remembers 1."""
    state = session([*opened(), step_end(2, 1, 1)])
    assert state.trace == TraceState(open_turn=1, last_turn=1, open_step=None, last_step=1)


# -- INV-TRACE-6: step-scoped events ----------------------------------------------------------------------


def _chunk(seq: int, turn: int, step: int) -> dict[str, Any]:
    return ev("assistant/chunk", seq, {"turn": turn, "step": step, "chunk": {"type": "text-delta", "index": 0, "text": "Hi"}})


@pytest.mark.parametrize(
    "make",
    [
        lambda seq, t, s: asked(seq, [], t, s),
        _chunk,
        lambda seq, t, s: call(seq, "c1", t, s),
    ],
    ids=["assistant/message", "assistant/chunk", "tool/call"],
)
def test_inv_trace_6_step_scoped_event_outside_a_step_is_refused(make: Any) -> None:
    """Model output and tool calls need the open step: not between steps, not naming another one.
    (Inside the step a ``tool/call`` also needs its advertised call, so the accepted case has one.)"""
    assert refusal(session([turn_start(0, 1)]), make(1, 1, 1)) is Code.EVENT_OUTSIDE_STEP
    assert refusal(session([*opened(), step_end(2, 1, 1)]), make(3, 1, 1)) is Code.EVENT_OUTSIDE_STEP
    assert refusal(session([*opened(), asked(2, ["c1"])]), make(3, 1, 2)) is Code.EVENT_OUTSIDE_STEP
    assert refusal(session([*opened(), asked(2, ["c1"])]), make(3, 1, 1)) is None


def test_inv_trace_6_appended_tool_result_outside_its_step_is_refused() -> None:
    """A result must name the open step: one naming another step or turn, its call still pending, is
    refused.  (A step never ends with a call pending, so a late result after its step is refused
    earlier, by the surface balance.)"""
    pending = session([*opened(), asked(2, ["c1"]), call(3, "c1")])
    assert refusal(pending, result(4, "c1", step=2)) is Code.EVENT_OUTSIDE_STEP
    assert refusal(pending, result(4, "c1", turn=2)) is Code.EVENT_OUTSIDE_STEP
    assert refusal(pending, result(4, "c1")) is None


# -- INV-TRACE-7: turn-scoped events ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "type_, data",
    [
        ("request/header", header_data()),
        ("request/context", {"provider": "deepseek", "model": "deepseek-chat", "contextWindow": 65536}),
    ],
)
def test_inv_trace_7_turn_scoped_event_needs_an_open_turn(type_: str, data: Any) -> None:
    """Outside a turn these are refused; inside one (with or without a step) they are accepted."""
    assert refusal(EMPTY_SESSION, ev(type_, 0, data)) is Code.EVENT_OUTSIDE_TURN
    assert refusal(session(one_turn()), ev(type_, 4, data)) is Code.EVENT_OUTSIDE_TURN
    assert refusal(session([turn_start(0, 1)]), ev(type_, 1, data)) is None
    assert refusal(session(opened()), ev(type_, 2, data)) is None


def test_inv_trace_7_todo_write_needs_no_open_turn() -> None:
    """A todo list may change anywhere: before the first turn, between turns and inside one."""
    todo = {"todos": [{"content": "Run the tests", "status": "pending"}]}
    assert refusal(EMPTY_SESSION, ev("todo/write", 0, todo)) is None
    assert refusal(session(one_turn()), ev("todo/write", 4, todo)) is None
    assert refusal(session(opened()), ev("todo/write", 2, todo)) is None


def _answered() -> list[dict[str, Any]]:
    return [*opened(), asked(2, ["c1"]), call(3, "c1"), result(4, "c1"), step_end(5, 1, 1)]


def _rewrite(seq: int) -> dict[str, Any]:
    return ev("tool/result", seq, result_data(1, 1, "c1", text="[elided]"), surfaceOp=replace(4, 4), sourceEventSeqs=[4])


def test_inv_trace_7_tool_result_rewrite_needs_an_open_turn() -> None:
    """A rewrite after the turn ended is refused."""
    assert refusal(session([*_answered(), turn_end(6, 1)]), _rewrite(7)) is Code.EVENT_OUTSIDE_TURN


def test_inv_trace_7_tool_result_rewrite_needs_no_open_step() -> None:
    """Inside the turn a rewrite is accepted between steps, and in a later step."""
    assert refusal(session(_answered()), _rewrite(6)) is None
    assert refusal(session([*_answered(), step_start(6, 1, 2)]), _rewrite(7)) is None


# -- INV-TRACE-8: results answer recorded calls -----------------------------------------------------------


def test_inv_trace_8_result_needs_recorded_call_in_same_step() -> None:
    """A result for a call the model asked for but whose tool/call was not recorded is refused."""
    assert refusal(session([*opened(), asked(2, ["c1"])]), result(3, "c1")) is Code.TOOL_RESULT_UNPAIRED


def test_inv_trace_8_result_after_recorded_call_is_accepted() -> None:
    """asked → tool/call → tool/result pairs up; the trace forgets the answered call."""
    state = session([*opened(), asked(2, ["c1", "c2"]), call(3, "c1"), result(4, "c1")])
    assert state.trace.step_calls == frozenset()
    assert state.pending_calls == 1


def test_inv_trace_8_call_recorded_in_an_earlier_step_does_not_pair() -> None:
    """A result in step 2 for a call id recorded in step 1 is refused: step 2 asks for the same id
    again but records no tool/call for it, and step 1's record does not carry over."""
    raws = [*_answered(), step_start(6, 1, 2), asked(7, ["c1"], step=2)]
    assert refusal(session(raws), result(8, "c1", step=2)) is Code.TOOL_RESULT_UNPAIRED


def test_inv_trace_8_a_call_is_answered_once() -> None:
    """A second result for an answered call is refused while another call is still pending."""
    raws = [*opened(), asked(2, ["c1", "c2"]), call(3, "c1"), result(4, "c1")]
    assert refusal(session(raws), result(5, "c1")) is Code.TOOL_RESULT_UNPAIRED


def test_inv_trace_8_synthetic_not_started_result_needs_no_call() -> None:
    """The crash-repair result for a call that never started pairs without a tool/call."""
    repaired = ev("tool/result", 3, not_started_data(1, 1, "c1", 3), surfaceOp="append")
    state = session([*opened(), asked(2, ["c1"]), repaired])
    assert state.pending_calls == 0
    assert state.trace.step_calls == frozenset()


def test_inv_trace_8_other_error_codes_still_need_a_call() -> None:
    """Only ``TOOL_NOT_STARTED`` is exempt."""
    error = {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"}
    assert refusal(session([*opened(), asked(2, ["c1"])]), result(3, "c1", error=error)) is Code.TOOL_RESULT_UNPAIRED


# -- INV-TRACE-9: bracket and tool-call payloads ----------------------------------------------------------


@pytest.mark.parametrize(
    "type_, data",
    [
        ("turn/start", {"turn": 1, "trigger": "user"}),
        ("turn/start", {"turn": -1}),
        ("turn/start", {"turn": "1"}),
        ("turn/start", {}),
        ("turn/end", {"turn": 1}),
        ("step/start", {"turn": 1, "step": -1}),
        ("step/end", {"turn": True, "step": 1}),
        ("step/start", {"turn": 1, "step": 1.5}),
        ("step/end", {"step": 1}),
        ("tool/call", {"turn": 1, "step": 1, "callId": "", "name": "read_file", "arguments": "{}"}),
        ("tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "read_file", "arguments": {}}),
        ("tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": None, "arguments": "{}"}),
        ("tool/call", {"turn": 1, "step": 1, "callId": "c1", "arguments": "{}"}),
        ("assistant/chunk", {"turn": 1, "step": 1}),
        ("assistant/chunk", [1, 1]),
    ],
    ids=repr,
)
def test_inv_trace_9_malformed_bracket_or_call_payload_is_refused(type_: str, data: Any) -> None:
    """Exactly the listed members, turn and step counts, string callId, name and arguments."""
    event = decoded(ev(type_, 2, data))
    problem = trace_data_problem(event)
    assert problem is not None and problem.code is Code.TRACE_DATA_INVALID
    assert refusal(session(opened()), ev(type_, 2, data)) is Code.TRACE_DATA_INVALID


_HI = {"type": "text-delta", "index": 0, "text": "Hi"}


@pytest.mark.parametrize(
    "before, type_, data, code",
    [
        ([], "turn/start", {"turn": 0}, Code.TURN_NUMBER),
        ([turn_start(0, 1)], "turn/end", {"turn": 0, "reason": COMPLETED}, Code.TURN_END_MISMATCH),
        ([turn_start(0, 1)], "step/start", {"turn": 0, "step": 1}, Code.STEP_OUTSIDE_TURN),
        ([turn_start(0, 1)], "step/start", {"turn": 1, "step": 0}, Code.STEP_NUMBER),
        (opened(), "step/end", {"turn": 1, "step": 0}, Code.STEP_END_MISMATCH),
        ([*opened(), asked(2, ["c1"])], "tool/call", call_data(1, 0, "c1"), Code.EVENT_OUTSIDE_STEP),
        (opened(), "assistant/chunk", {"turn": 0, "step": 1, "chunk": _HI}, Code.EVENT_OUTSIDE_STEP),
    ],
    ids=lambda v: repr(v) if not isinstance(v, list) else f"after-{len(v)}",
)
def test_inv_trace_9_zero_turn_or_step_is_a_count_the_trace_refuses(
    before: list[dict[str, Any]], type_: str, data: Any, code: Code
) -> None:
    """Turn and step are counts in these payloads, so 0 is well formed; no turn or step is numbered
    0, so the trace refuses it with its bracket or scope code."""
    candidate = ev(type_, len(before), data)
    assert trace_data_problem(decoded(candidate)) is None
    assert refusal(session(before), candidate) is code


@pytest.mark.parametrize(
    "type_, data",
    [
        ("turn/start", {"turn": 1}),
        ("step/end", {"turn": 1, "step": 1}),
        ("tool/call", call_data(1, 1, "c1")),
        ("user/message", {"anything": True}),
        ("session/title", None),
    ],
)
def test_inv_trace_9_well_formed_or_unrelated_payload_passes(type_: str, data: Any) -> None:
    """Well-formed brackets pass, and the rule says nothing about other types."""
    assert trace_data_problem(decoded(ev(type_, 0, data))) is None


# -- INV-TRACE-10: the trace state ----------------------------------------------------------------------------


def test_inv_trace_10_trace_state_follows_the_brackets() -> None:
    """Open turn and step are the latest started ones; recorded calls live only in the open step."""
    steps = [
        (turn_start(0, 1), TraceState(open_turn=1, last_turn=1)),
        (step_start(1, 1, 1), TraceState(open_turn=1, last_turn=1, open_step=1, last_step=1)),
        (ev("tool/call", 2, call_data(1, 1, "c1")), TraceState(1, 1, 1, 1, frozenset({"c1"}))),
        (step_end(3, 1, 1), TraceState(open_turn=1, last_turn=1, open_step=None, last_step=1)),
        (turn_end(4, 1), TraceState(open_turn=None, last_turn=1)),
    ]
    state = TraceState()
    for raw, expected in steps:
        after = trace_transition(state, decoded(raw))
        assert after == expected, raw
        assert isinstance(after, TraceState)
        state = after


def test_inv_trace_10_non_bracket_events_leave_the_trace_alone() -> None:
    """A user message or a title does not change the trace."""
    state = TraceState(open_turn=1, last_turn=1)
    assert trace_transition(state, decoded(user(1))) == state
    assert trace_transition(state, decoded(ev("session/title", 1, title_data()))) == state


def test_inv_trace_10_inconsistent_trace_state_is_rejected_by_the_contract() -> None:
    """The contract refuses a trace with a step open outside any turn."""
    with pytest.raises(icontract.ViolationError, match="INV-TRACE-10"):
        trace_transition(TraceState(open_turn=None, last_turn=0, open_step=1, last_step=1), decoded(user(0)))


def test_inv_trace_10_session_trace_matches_its_log() -> None:
    """A session's tracked trace equals the trace folded from its events."""
    state = session([*opened(), asked(2, ["c1"]), call(3, "c1")])
    folded = TraceState()
    for event in state.events:
        step = trace_transition(folded, event)
        assert isinstance(step, TraceState)
        folded = step
    assert folded == state.trace == TraceState(1, 1, 1, 1, frozenset({"c1"}))
    assert isinstance(state, SessionState)
