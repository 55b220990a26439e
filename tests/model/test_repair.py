"""INV-REPAIR: deterministic closers for a turn a crash left open."""

from __future__ import annotations

from typing import Any

from model_cases import (
    T0,
    assistant_data,
    call_data,
    ev,
    open_step_with_pending,
    opened,
    realistic,
    refusal,
    result_data,
    session,
    title_data,
)

from sessionlog_spec.contracts.log import fold_session
from sessionlog_spec.contracts.repair import interrupted_turn_closers
from sessionlog_spec.model.event import encode_event
from sessionlog_spec.model.repair import NOT_STARTED_TEXT, OUTCOME_UNKNOWN_TEXT, repair
from sessionlog_spec.model.session import SessionState
from sessionlog_spec.model.violation import Code
from sessionlog_spec.suite.agent.builder import SessionBuilder

INTERRUPTED = {"kind": "interrupted"}


def closer_result(seq: int, time: int, call: str, step: int, call_seq: int | None) -> dict[str, Any]:
    """The closer a pending call gets, written out from the rule."""
    recorded = call_seq is not None
    block = {
        "type": "tool-result",
        "toolCallId": call,
        "isError": True,
        "content": [{"type": "text", "text": OUTCOME_UNKNOWN_TEXT if recorded else NOT_STARTED_TEXT}],
    }
    data = {
        "turn": 1,
        "step": step,
        "message": {
            "id": f"interrupted-tool-result-{call}-{seq}",
            "role": "user",
            "source": {"kind": "tool", "callId": call},
            "content": [block],
        },
        "error": (
            {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"}
            if recorded
            else {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}
        ),
    }
    raw: dict[str, Any] = {"type": "tool/result", "seq": seq, "time": time, "data": data, "surfaceOp": "append"}
    if recorded:
        raw["sourceEventSeqs"] = [call_seq]
    return raw


def closers_of(state: SessionState) -> list[dict[str, Any]]:
    """The closers for a session's log, in their stored form."""
    return [encode_event(e) for e in interrupted_turn_closers(state.events)]


# -- INV-REPAIR-1: nothing for a closed log ---------------------------------------------------------------------


def test_inv_repair_1_closed_log_needs_no_closers() -> None:
    """A realistic session whose turns all ended gets nothing."""
    assert interrupted_turn_closers(realistic().state.events) == ()


def test_inv_repair_1_empty_log_and_log_without_turns_need_no_closers() -> None:
    """No events, or only events outside turns, get nothing."""
    assert interrupted_turn_closers(()) == ()
    assert interrupted_turn_closers(session([ev("session/title", 0, title_data())]).events) == ()


def test_inv_repair_1_open_turn_needs_closers() -> None:
    """A turn left open is closed, even when it has no step."""
    state = session([ev("turn/start", 0, {"turn": 1}, time=5)])
    assert closers_of(state) == [ev("turn/end", 1, {"turn": 1, "reason": INTERRUPTED}, time=5)]


# -- INV-REPAIR-2: closers in shutdown order --------------------------------------------------------------


def test_inv_repair_2_open_step_with_pending_calls_is_closed_in_order() -> None:
    """Results for the pending calls ``d`` then ``e``, then ``step/end`` 1/2, then ``turn/end`` interrupted."""
    b = open_step_with_pending()
    last = b.state.events[-1]
    assert (last.seq, last.type) == (14, "tool/call")
    time = last.time
    assert closers_of(b.state) == [
        closer_result(15, time, "d", step=2, call_seq=14),
        closer_result(16, time, "e", step=2, call_seq=None),
        ev("step/end", 17, {"turn": 1, "step": 2}, time=time),
        ev("turn/end", 18, {"turn": 1, "reason": INTERRUPTED}, time=time),
    ]


def test_inv_repair_2_open_step_without_pending_calls_gets_step_end_and_turn_end() -> None:
    """No pending call: only the brackets are closed."""
    state = session([*opened(), ev("assistant/message", 2, assistant_data(1, 1), surfaceOp="append", time=T0 + 3)])
    assert closers_of(state) == [
        ev("step/end", 3, {"turn": 1, "step": 1}, time=T0 + 3),
        ev("turn/end", 4, {"turn": 1, "reason": INTERRUPTED}, time=T0 + 3),
    ]


def test_inv_repair_2_calls_of_an_ended_step_are_not_answered() -> None:
    """A step ends only once its calls are resolved, so a turn whose step ended gets no result and no
    step/end: only the turn is closed."""
    asked = [*opened(), ev("assistant/message", 2, assistant_data(1, 1, ["c1"]), surfaceOp="append")]
    assert refusal(session(asked), ev("step/end", 3, {"turn": 1, "step": 1})) is Code.TOOL_CALL_UNRESOLVED
    raws = [
        *asked,
        ev("tool/call", 3, call_data(1, 1, "c1")),
        ev("tool/result", 4, result_data(1, 1, "c1"), surfaceOp="append"),
        ev("step/end", 5, {"turn": 1, "step": 1}),
    ]
    assert [c["type"] for c in closers_of(session(raws))] == ["turn/end"]


def test_inv_repair_2_only_the_last_turn_is_closed() -> None:
    """Earlier, properly ended turns are left alone; the open turn 2 is closed."""
    b = realistic()
    b.turn_start()
    b.user_message("Another request")
    closers = closers_of(b.state)
    assert [(c["type"], c["data"]["turn"]) for c in closers] == [("turn/end", 4)]


# -- INV-REPAIR-3: what a closer result says -----------------------------------------------------------------


def test_inv_repair_3_recorded_call_gets_outcome_unknown_citing_its_call() -> None:
    """A call whose tool/call was logged may have run: TOOL_OUTCOME_UNKNOWN, citing the tool/call seq."""
    raws = [
        *opened(),
        ev("assistant/message", 2, assistant_data(1, 1, ["c1"]), surfaceOp="append"),
        ev("tool/call", 3, call_data(1, 1, "c1")),
    ]
    first = closers_of(session(raws))[0]
    assert first == closer_result(4, T0, "c1", step=1, call_seq=3)
    assert first["data"]["error"]["code"] == "TOOL_OUTCOME_UNKNOWN" and first["sourceEventSeqs"] == [3]


def test_inv_repair_3_unrecorded_call_gets_not_started_without_sources() -> None:
    """A call never logged as started did not run: TOOL_NOT_STARTED, no sources."""
    raws = [*opened(), ev("assistant/message", 2, assistant_data(1, 1, ["c1"]), surfaceOp="append")]
    first = closers_of(session(raws))[0]
    assert first == closer_result(3, T0, "c1", step=1, call_seq=None)
    assert "sourceEventSeqs" not in first


def test_inv_repair_3_answered_calls_get_no_closer() -> None:
    """A call with a result is not pending."""
    raws = [
        *opened(),
        ev("assistant/message", 2, assistant_data(1, 1, ["c1", "c2"]), surfaceOp="append"),
        ev("tool/call", 3, call_data(1, 1, "c1")),
        ev("tool/result", 4, result_data(1, 1, "c1"), surfaceOp="append"),
    ]
    results = [c for c in closers_of(session(raws)) if c["type"] == "tool/result"]
    assert [r["data"]["message"]["source"]["callId"] for r in results] == ["c2"]


# -- INV-REPAIR-4: seqs and times ------------------------------------------------------------------------


def test_inv_repair_4_closers_continue_seqs_and_reuse_the_last_time() -> None:
    """Closers are numbered from the log length and all carry the last event's time, not a later clock."""
    raws = [
        ev("turn/start", 0, {"turn": 1}, time=100),
        ev("step/start", 1, {"turn": 1, "step": 1}, time=200),
        ev("assistant/message", 2, assistant_data(1, 1, ["c1", "c2"]), surfaceOp="append", time=150),
    ]
    closers = closers_of(session(raws))
    assert [(c["seq"], c["time"]) for c in closers] == [(3, 150), (4, 150), (5, 150), (6, 150)]


def test_inv_repair_4_repair_is_deterministic() -> None:
    """The same crashed log always gets the same closers."""
    assert closers_of(open_step_with_pending().state) == closers_of(open_step_with_pending().state)


# -- INV-REPAIR-5: the repaired log is valid and final ---------------------------------------------------------


def test_inv_repair_5_repaired_log_is_valid_and_needs_nothing_more() -> None:
    """The closers append cleanly, leave no turn open, and a second repair adds nothing."""
    state = open_step_with_pending().state
    repaired = repair(state.events)
    folded = fold_session([encode_event(e) for e in repaired])
    assert isinstance(folded, SessionState)
    assert folded.trace.open_turn is None and folded.trace.open_step is None
    assert interrupted_turn_closers(repaired) == ()
    assert repair(repaired) == repaired


def test_inv_repair_5_closers_answer_every_pending_call_on_the_surface() -> None:
    """After repairing the open step, the pending calls of that step are answered on the surface."""
    state = open_step_with_pending().state
    assert state.pending_calls == 2
    repaired = session(closers_of(state), state)
    assert repaired.pending_calls == 0


def test_inv_repair_5_seeded_crash_is_repaired_after_the_marker() -> None:
    """A fork child seeded from a crashed parent gets its closers after the end-of-seed marker."""
    parent = SessionBuilder()
    parent.turn_start()
    parent.user_message()
    child = fold_session([*parent.events, ev("session/end-seed", 2, {}, time=parent.time)])
    assert isinstance(child, SessionState)
    closers = closers_of(child)
    assert closers == [ev("turn/end", 3, {"turn": 1, "reason": INTERRUPTED}, time=parent.time)]
    assert repair(repair(child.events)) == repair(child.events)
