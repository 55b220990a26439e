"""seqlog's relationship rules (INV-REL-1..29) against the model's.

For every rule: the one-fault logs of ``tests/model/relationship_logs.py`` that break it are refused
by seqlog with the model's code, and a valid form is accepted by both.  The differential tests feed
generated agent loops (forks, crashes inside compactions, resumes), every prefix of them, and
one-fault mutations to seqlog and to the model and require the same verdict and code, on the
replay path (with the header's identity, as ``fold_session(identity=...)``), the append path and
the stored-log read path.  Atomicity: a refused append leaves the relationship state exactly as it
was.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqlog import Code, LibCode, SeqlogError, Session, load_text
from seqlog.event import APPEND, Event, Replace
from seqlog.jsonvalue import freeze
from seqlog.relations import _HANDLERS, LogIdentity, Relations, js_json_string, title_frame
from seqlog.surface import SurfaceManager
from sessionlog_spec.model.load import load_session
from sessionlog_spec.model.relationships import js_string as model_js_string
from sessionlog_spec.model.relationships import relations_for, relationship_finish
from sessionlog_spec.model.relationships import title_frame as model_title_frame
from sessionlog_spec.model.session import EMPTY_SESSION, SessionState, append_event, fold_session
from sessionlog_spec.model.violation import Violation

MODEL_TESTS = Path(__file__).resolve().parents[1] / "model"
if str(MODEL_TESTS) not in sys.path:
    sys.path.append(str(MODEL_TESTS))

from relationship_logs import (  # noqa: E402 - the model's artifact builders live beside the model's tests
    FAULTS,
    PARENT_ID,
    PROVIDERS,
    SESSION_ID,
    Artifact,
    Call,
    LogBuilder,
    closed_turn_with_human,
    faulty_artifact,
    header_line,
    in_step,
    text,
    valid_artifact,
)

# -- verdicts -------------------------------------------------------------------------------------------


def seqlog_code(artifact: Artifact) -> str | None:
    """seqlog's verdict on a whole log, replayed with the header's identity and judged complete."""
    try:
        Session.restore(artifact.events, identity=LogIdentity.of_header(artifact.header))
    except SeqlogError as error:
        return str(error.code)
    return None


def model_code(artifact: Artifact) -> str | None:
    """The model's verdict: ``fold_session`` with the header's identity, judged complete."""
    state = fold_session(artifact.events, identity=artifact.identity())
    return str(state.code) if isinstance(state, Violation) else None


def both(artifact: Artifact) -> str | None:
    """The verdict, asserting seqlog and the model agree on it."""
    ours, theirs = seqlog_code(artifact), model_code(artifact)
    assert ours == theirs, (artifact.name, ours, theirs)
    return ours


def jsonl(artifact: Artifact) -> str:
    """The artifact as a stored log."""
    return "".join(json.dumps(row) + "\n" for row in [artifact.header, *artifact.events])


# -- every rule: the faults refused with the model's code, a valid form accepted --------------------------

RULE_FAULTS: dict[int, tuple[str, ...]] = {
    1: ("call_name", "call_arguments", "call_unadvertised", "call_twice", "call_from_earlier_step"),
    2: ("advertised_twice",),
    3: ("repair_unadvertised", "result_twice"),
    4: ("repair_name", "repair_id", "repair_text", "repair_sources", "repair_not_error", "result_never_started"),
    5: ("step_end_unresolved", "turn_end_unresolved"),
    6: ("compaction_overlap",),
    7: ("compaction_null_in_turn", "compaction_turn_between_turns", "compaction_end_turn"),
    8: ("summary_unowned", "summary_command", "end_unowned", "checkpoint_unowned"),
    9: ("summary_twice",),
    10: ("end_unsummarised",),
    11: ("crossing_turn_end", "crossing_turn_start"),
    12: ("summary_span_gap", "summary_span_stale", "prune_span"),
    13: ("retry_step", "retry_outside_turn", "retry_after_step"),
    14: ("retry_provider",),
    15: ("retry_number",),
    16: ("retry_id",),
    17: ("retry_started_unpaired", "retry_started_step"),
    18: ("retry_started_twice",),
    19: ("ptc_outside_turn",),
    20: ("ptc_parent", "ptc_root"),
    21: ("ptc_start_twice",),
    22: ("ptc_settle_unpaired", "ptc_settle_mismatch"),
    23: ("command_run_twice",),
    24: ("command_done_unpaired",),
    25: ("command_done_source",),
    26: ("title_cardinality",),
    27: ("title_not_human",),
    28: ("title_framing",),
    29: ("delivery_session",),
}
"""The faults of ``relationship_logs.FAULTS`` that break each rule.  Three of them are refused by the
trace first (``result_twice``, ``result_never_started``: TOOL_RESULT_UNPAIRED; ``turn_end_unresolved``:
STEP_STILL_OPEN), as in the model."""


def test_the_rule_table_covers_every_rule_and_every_fault() -> None:
    assert sorted(RULE_FAULTS) == list(range(1, 30))
    assert sorted(name for names in RULE_FAULTS.values() for name in names) == sorted(FAULTS)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(("rule", "fault"), [(rule, name) for rule, names in RULE_FAULTS.items() for name in names])
def test_inv_rel_fault_is_refused_with_the_models_code(rule: int, fault: str, seed: int) -> None:
    artifact = faulty_artifact(random.Random(100 * rule + seed), fault)
    assert artifact.expect is not None
    assert seqlog_code(artifact) == str(artifact.expect)
    assert model_code(artifact) == str(artifact.expect)


def _answered(b: LogBuilder, call: Call) -> None:
    b.tool_call(call)
    b.tool_result(call.id)


def valid_1(b: LogBuilder) -> None:
    """The advertised call starts with its own name and arguments."""
    in_step(b)
    call = Call("c1", "read", '{"path": "a.py"}')
    b.assistant([call])
    _answered(b, call)
    b.step_end()
    b.turn_end()


def valid_2(b: LogBuilder) -> None:
    """An answered id may be asked again, in the same step and in the next."""
    in_step(b)
    call = Call("c1", "read", "{}")
    for _ in range(2):
        b.assistant([call])
        _answered(b, call)
    b.step_end()
    b.step_start()
    b.assistant([call])
    _answered(b, call)
    b.step_end()
    b.turn_end()


def valid_3(b: LogBuilder) -> None:
    """An appended result answers its call; a rewrite of it answers nothing and is no second answer."""
    in_step(b)
    call = Call("c1", "read", "{}")
    b.assistant([call])
    b.tool_call(call)
    result = b.tool_result(call.id)
    b.rewrite_result(result, "(elided)")
    b.step_end()
    b.turn_end()


def valid_4(b: LogBuilder) -> None:
    """The exact repair answers a call that never started (and a started call too)."""
    in_step(b)
    b.assistant([Call("c1", "read", "{}"), Call("c2", "read", "{}")])
    b.repair_result("c1")
    b.tool_call(Call("c2", "read", "{}"))
    b.repair_result("c2")
    b.step_end()
    b.turn_end()


def valid_5(b: LogBuilder) -> None:
    """Steps and the turn end once every advertised call is answered."""
    in_step(b)
    calls = [Call("c1", "read", "{}"), Call("c2", "grep", "{}")]
    b.assistant(calls)
    for call in calls:
        _answered(b, call)
    b.step_end()
    b.step_start()
    b.assistant([])
    b.step_end()
    b.turn_end()


def _compaction(b: LogBuilder, compaction_id: str, command: str | None = None) -> None:
    """A whole successful compaction over the whole (balanced) surface."""
    start = b.compaction_start(compaction_id, b.open_turn, command)
    span = b.span((0, len(b.surface) - 1))
    summary = b.summary(compaction_id, span, command)
    b.checkpoint(compaction_id, span, [start, summary], command)
    b.compaction_end(compaction_id, b.open_turn, command)


def valid_6(b: LogBuilder) -> None:
    """Compactions one after the other."""
    in_step(b)
    _compaction(b, "first")
    b.user("more")
    _compaction(b, "second")
    b.step_end()
    b.turn_end()


def valid_7(b: LogBuilder) -> None:
    """A compaction inside its turn, and a standalone one (turn null) between turns."""
    in_step(b)
    _compaction(b, "in-turn")
    b.step_end()
    b.turn_end()
    _compaction(b, "between")
    b.turn_start()
    b.turn_end()


def valid_8(b: LogBuilder) -> None:
    """Summary, checkpoint and end name the open compaction and its command."""
    b.command_run("cmd")
    closed_turn_with_human(b)
    _compaction(b, "c", "cmd")
    b.command_done("cmd", "success", b.seq - 1)


def valid_9(b: LogBuilder) -> None:
    """One summary per compaction, the next compaction has its own."""
    closed_turn_with_human(b)
    _compaction(b, "one")
    _compaction(b, "two")


def valid_10(b: LogBuilder) -> None:
    """A failed compaction ends without a summary."""
    in_step(b)
    b.compaction_start("c", b.open_turn, "cmd")
    b.compaction_end("c", b.open_turn, "cmd", error="provider unavailable")
    b.step_end()
    b.turn_end()


def valid_11(b: LogBuilder) -> None:
    """A crash inside a compaction: the closers cross it, the resume's end-seed retires it."""
    in_step(b)
    b.assistant([Call("c1", "run", "{}")])
    b.compaction_start("orphan", b.open_turn)
    b.close_crash()
    b.turn_start()
    b.user("Continue.")
    b.turn_end()
    _compaction(b, "after")


def valid_12(b: LogBuilder) -> None:
    """Spans follow surface order (here 4 before 3), and a prune names an exact span."""
    b.turn_start()
    one, two, _ = b.user("zero"), b.user("one"), b.user("two")
    b.user("prior checkpoint", op={"op": "replace", "start": one, "end": two}, sources=[one, two])
    assert b.surface == [4, 3]
    b.compaction_start("c", 1)
    span = b.span((0, 1))
    summary = b.summary("c", span)
    b.checkpoint("c", span, [5, summary])
    b.compaction_end("c", 1)
    b.prune(random.Random(0))
    b.turn_end()


def valid_13(b: LogBuilder) -> None:
    """A retry in its step, and one after its step ended naming that step."""
    in_step(b)
    b.retry("r", 1)
    b.step_end()
    b.retry("s", 1, policy="rate-limit", step=1)
    b.retry_started("s", 1, 1, 1)
    b.turn_end()


def valid_14(b: LogBuilder) -> None:
    """The latest request header's provider stays in force across steps and turns."""
    in_step(b)
    b.header(PROVIDERS[1], "change")
    b.step_end()
    b.turn_end()
    b.turn_start()
    b.step_start()
    b.retry("r", 1, provider=PROVIDERS[1])
    b.step_end()
    b.turn_end()


def valid_15(b: LogBuilder) -> None:
    """Attempts count 1, 2, 3; a chain of the next step starts again at 1."""
    in_step(b)
    for attempt in (1, 2, 3):
        b.retry("r", attempt)
    b.step_end()
    b.step_start()
    b.retry("q", 1)
    b.step_end()
    b.turn_end()


def valid_16(b: LogBuilder) -> None:
    """Chains of other policies run side by side, each under its own id."""
    in_step(b)
    b.retry("r", 1)
    b.retry("s", 1, policy="rate-limit")
    b.retry("r", 2)
    b.retry("s", 2, policy="rate-limit")
    b.step_end()
    b.turn_end()


def valid_17(b: LogBuilder) -> None:
    """A start names the attempt scheduled for its turn and step."""
    in_step(b)
    b.retry("r", 1)
    b.retry_started("r", 1, b.turn, b.step)
    b.step_end()
    b.turn_end()


def valid_18(b: LogBuilder) -> None:
    """Each attempt starts once."""
    in_step(b)
    for attempt in (1, 2):
        b.retry("r", attempt)
        b.retry_started("r", attempt, b.turn, b.step)
    b.step_end()
    b.turn_end()


def valid_19(b: LogBuilder) -> None:
    """Dispatches inside a turn, between its steps too."""
    in_step(b)
    b.ptc(False, "root", "root", "sub")
    b.step_end()
    b.ptc(True, "root", "root", "sub")
    b.turn_end()


def valid_20(b: LogBuilder) -> None:
    """A tree under one root: a grandchild hangs under a child already seen."""
    in_step(b)
    b.ptc(False, "root", "root", "child")
    b.ptc(False, "root", "child", "grandchild")
    b.ptc(True, "root", "child", "grandchild")
    b.ptc(True, "root", "root", "child")
    b.ptc(False, "other", "other", "second")
    b.step_end()
    b.turn_end()


def valid_21(b: LogBuilder) -> None:
    """Each sub-call starts once (a settle is no second start)."""
    in_step(b)
    b.ptc(False, "root", "root", "a")
    b.ptc(False, "root", "root", "b")
    b.ptc(True, "root", "root", "a")
    b.step_end()
    b.turn_end()


def valid_22(b: LogBuilder) -> None:
    """Arguments compare as JSON: key order and 1 / 1.0 do not matter."""
    in_step(b)
    b.ptc(False, "root", "root", "child", arguments={"a": 1, "b": [True, None]})
    b.ptc(True, "root", "root", "child", arguments={"b": [True, None], "a": 1.0})
    b.step_end()
    b.turn_end()


def valid_23(b: LogBuilder) -> None:
    """Each run has its own command id."""
    b.command_run("one")
    b.command_run("two")
    b.command_done("two", "error")
    b.command_done("one")


def valid_24(b: LogBuilder) -> None:
    """A command finishes after its run (and may report again)."""
    b.command_run("cmd")
    closed_turn_with_human(b)
    b.command_done("cmd", "error")
    b.command_done("cmd")


def valid_25(b: LogBuilder) -> None:
    """A success cites the event it produced."""
    b.command_run("cmd")
    closed_turn_with_human(b)
    _compaction(b, "c", "cmd")
    b.command_done("cmd", "success", b.seq - 1)


def valid_26(b: LogBuilder) -> None:
    """A typed title cites nothing; a generated one cites messages."""
    question, _, _ = closed_turn_with_human(b)
    b.title([], "user")
    b.title([question], "fallback")
    b.title([question], "provider")


def valid_27(b: LogBuilder) -> None:
    """Titles and requests cite human user messages."""
    question, _, _ = closed_turn_with_human(b)
    b.turn_start()
    second = b.user("And the docs.")
    b.turn_end()
    b.title([question, second])
    b.title_request([second, question])


def valid_28(b: LogBuilder) -> None:
    """The request's one message is the frame of its citations, strings as JSON.stringify writes them."""
    b.turn_start()
    first = b.user('quote " backslash \\ tab \t newline \n control \u0001 \x7f line-sep \u2028 😀')
    mixed = {
        "id": "mixed",
        "role": "user",
        "content": [{"type": "reasoning", "text": "hidden"}, text("a"), text("b")],
        "source": {"kind": "user"},
    }
    second = b.add("user/message", mixed, surfaceOp="append")
    b.title_request([second, first])
    b.turn_end()


def valid_29(b: LogBuilder) -> None:
    """Markers of this session, of an earlier generation (no version) and of another generation."""
    closed_turn_with_human(b)
    b.delivery(SESSION_ID)
    b.delivery("an-ancestor", version=None)
    b.delivery("some-v2-reader", version=2)


VALID: dict[int, Callable[[LogBuilder], None]] = {
    int(name.removeprefix("valid_")): value for name, value in dict(globals()).items() if name.removeprefix("valid_").isdigit()
}


def test_every_rule_has_a_valid_form() -> None:
    assert sorted(VALID) == list(range(1, 30))


@pytest.mark.parametrize("rule", range(1, 30))
def test_inv_rel_valid_form_is_accepted(rule: int) -> None:
    b = LogBuilder()
    VALID[rule](b)
    artifact = b.artifact(name=f"valid form of INV-REL-{rule}")
    assert seqlog_code(artifact) is None
    assert model_code(artifact) is None


def test_inv_rel_5_a_turn_end_with_an_unanswered_call_is_refused_by_the_rule_too() -> None:
    """The trace refuses such a turn/end first (its step is open); the rule holds on its own."""
    relations = Relations()
    log = [Event("turn/start", 0, 0, freeze({"turn": 1})), Event("step/start", 1, 0, freeze({"turn": 1, "step": 1}))]
    message = {"id": "a", "role": "assistant", "content": [{"type": "tool-call", "id": "c1", "name": "n", "arguments": "{}"}]}
    log.append(Event("assistant/message", 2, 0, freeze({"turn": 1, "step": 1, "message": message}), surface_op=APPEND))
    surface = SurfaceManager()
    for event in log:
        commit = relations.plan(event, (), surface)
        if commit is not None:
            commit()
    with pytest.raises(SeqlogError) as refused:
        relations.plan(Event("turn/end", 3, 0, freeze({"turn": 1, "reason": {"kind": "completed"}})), log, surface)
    assert refused.value.code is Code.TOOL_CALL_UNRESOLVED


# -- INV-REL-11: a held crossing, on every path ------------------------------------------------------------


def _crash_in_compaction() -> LogBuilder:
    """A turn cut off inside a compaction and closed by the repair closers, not yet resumed."""
    b = LogBuilder()
    in_step(b)
    b.assistant([Call("c1", "run", "{}")])
    b.compaction_start("orphan", b.open_turn)
    b.close_crash()
    assert b.events.pop()["type"] == "session/end-seed"
    return b


def test_inv_rel_11_a_held_crossing_is_refused_when_the_log_ends_with_it() -> None:
    events = _crash_in_compaction().events
    with pytest.raises(SeqlogError) as replayed:
        Session.restore(events)
    assert replayed.value.code is Code.COMPACTION_CROSSES_TURN
    assert replayed.value.message.startswith(f"index {len(events) - 1}:")
    session = Session.restore(events, complete=False)
    with pytest.raises(SeqlogError) as judged:
        session.check_complete()
    assert judged.value.code is Code.COMPACTION_CROSSES_TURN


def test_inv_rel_11_a_held_crossing_on_the_read_path_names_the_last_line() -> None:
    events = _crash_in_compaction().events
    text = jsonl(Artifact(header_line(), events))
    with pytest.raises(SeqlogError) as loaded:
        load_text(text)
    assert loaded.value.code is Code.COMPACTION_CROSSES_TURN
    assert loaded.value.message.startswith(f"line {len(events) + 1}:")
    model = load_session(text)
    assert isinstance(model, Violation) and str(model.code) == str(loaded.value.code)


def test_inv_rel_11_a_seed_ending_in_a_held_crossing_is_retired_by_its_marker() -> None:
    events = _crash_in_compaction().events
    session = Session.create(events, header_line())
    assert session.events[-1].type == "session/end-seed"
    session.check_complete()
    session.append("compaction/start", {"compactionId": "next", "turn": None}, time=0)
    b = _crash_in_compaction()
    b.compaction_start("next", None)
    with pytest.raises(SeqlogError) as refused:
        Session.create(b.events, header_line())
    assert refused.value.code is Code.COMPACTION_CROSSES_TURN
    assert refused.value.message.startswith(f"seed index {len(b.events) - 1}:")


def test_inv_rel_11_a_held_crossing_is_refused_at_the_next_compaction_event() -> None:
    session = Session.restore(_crash_in_compaction().events, complete=False)
    before = relation_state(session)
    with pytest.raises(SeqlogError) as refused:
        session.append("compaction/end", {"compactionId": "orphan", "turn": 1, "error": "late"}, time=0)
    assert refused.value.code is Code.COMPACTION_CROSSES_TURN
    assert relation_state(session) == before
    session.append("session/end-seed", {}, time=0)
    session.check_complete()


# -- INV-REL-29: the identity -------------------------------------------------------------------------------


def test_inv_rel_29_the_identity_comes_from_the_header_line() -> None:
    assert LogIdentity.of_header(header_line()) == LogIdentity(SESSION_ID, 1, False, 0)
    assert LogIdentity.of_header(header_line(SESSION_ID, PARENT_ID, 7)) == LogIdentity(SESSION_ID, 1, True, 7)
    # An integral float is the count it writes, as the header line's own check reads it.
    assert LogIdentity.of_header(header_line(SESSION_ID, PARENT_ID, 7.0)) == LogIdentity(SESSION_ID, 1, True, 7)


def test_inv_rel_29_inherited_markers_keep_their_ancestors_id() -> None:
    b = LogBuilder(PARENT_ID)
    closed_turn_with_human(b)
    b.delivery(PARENT_ID)
    b.add("session/end-seed", {})
    b.session_id = SESSION_ID
    b.delivery(SESSION_ID)
    fork = b.artifact(header_line(SESSION_ID, PARENT_ID, seed_length=b.seq - 2))
    assert both(fork) is None
    not_a_fork = b.artifact(header_line(SESSION_ID))
    assert both(not_a_fork) == Code.DELIVERY_MARKER_WRONG_SESSION
    seed_too_short = b.artifact(header_line(SESSION_ID, PARENT_ID, seed_length=b.seq - 3))
    assert both(seed_too_short) == Code.DELIVERY_MARKER_WRONG_SESSION


def test_inv_rel_29_markers_are_checked_only_against_a_known_identity() -> None:
    """Appends to a new session and seeds carry no identity, in seqlog as in the model; a replay given
    one checks, and so does the read path (next tests)."""
    b = LogBuilder()
    closed_turn_with_human(b)
    b.delivery("someone-else")
    events = b.events
    Session.restore(events)
    Session.create(events, header_line())
    session = Session.restore(events[:-1])
    session.append_event(events[-1])
    with pytest.raises(SeqlogError) as refused:
        Session.restore(events, identity=LogIdentity("rel-session"))
    assert refused.value.code is Code.DELIVERY_MARKER_WRONG_SESSION
    v0 = Relations(LogIdentity("rel-session", version=0))
    unversioned = Event("session-log-deepseek/delivery-accepted", 0, 0, freeze({"sessionId": "other", "throughSeq": 0}))
    with pytest.raises(SeqlogError):
        v0.plan(unversioned, (), SurfaceManager())
    assert Relations(LogIdentity("rel-session")).plan(unversioned, (), SurfaceManager()) is None


def _marker_log(session_id: str) -> Artifact:
    b = LogBuilder()
    closed_turn_with_human(b)
    b.delivery(session_id)
    return b.artifact()


@pytest.mark.parametrize("named", [SESSION_ID, "someone-else"])
def test_inv_rel_29_the_read_path_checks_markers_against_the_header_line(named: str) -> None:
    text = jsonl(_marker_log(named))
    model = load_session(text)
    if named == SESSION_ID:
        assert not isinstance(model, Violation)
        assert len(load_text(text).session) == len(model.state.events)
        return
    with pytest.raises(SeqlogError) as refused:
        load_text(text)
    assert refused.value.code is Code.DELIVERY_MARKER_WRONG_SESSION
    assert refused.value.message.startswith(f"line {len(_marker_log(named).events) + 1}:")
    assert isinstance(model, Violation) and str(model.code) == str(refused.value.code)


def test_inv_rel_29_a_loaded_session_keeps_checking_markers_as_the_models_does() -> None:
    text = jsonl(_marker_log(SESSION_ID))
    session = load_text(text).session
    model = load_session(text)
    assert not isinstance(model, Violation)
    for named, verdict in ((SESSION_ID, None), ("someone-else", Code.DELIVERY_MARKER_WRONG_SESSION)):
        marker = {
            "type": "session-log-deepseek/delivery-accepted",
            "seq": len(session),
            "time": 0,
            "data": {"sessionId": named, "throughSeq": 0, "sessionFormatVersion": 1},
        }
        theirs = append_event(model.state, marker)
        assert (str(theirs.code) if isinstance(theirs, Violation) else None) == (str(verdict) if verdict else None)
        if verdict is None:
            session.append_event(marker)
            assert not isinstance(theirs, Violation)
            model = replace(model, state=theirs)
        else:
            with pytest.raises(SeqlogError) as refused:
                session.append_event(marker)
            assert refused.value.code is verdict


@pytest.mark.parametrize("named", ["v0-session", "someone-else"])
def test_inv_rel_29_a_session_read_from_a_v0_log_checks_later_markers_with_its_upgraded_header(named: str) -> None:
    """The edge checks the v0 log's own (unversioned) markers; the session read from it knows its
    identity too, so a marker of this generation appended later is checked, as the model's is."""
    header = {"type": "session", "version": 0, "id": "v0-session", "createdAt": 0, "delegationDepth": 0}
    events = [
        {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}},
        {"type": "turn/end", "seq": 1, "time": 0, "data": {"turn": 1, "reason": {"kind": "completed"}}},
        {"type": "session-log-deepseek/delivery-accepted", "seq": 2, "time": 0, "data": {"sessionId": named, "throughSeq": 0}},
    ]
    text = "".join(json.dumps(row) + "\n" for row in [header, *events])
    model = load_session(text)
    if named != "v0-session":
        with pytest.raises(SeqlogError) as refused:
            load_text(text)
        assert isinstance(model, Violation) and str(model.code) == str(refused.value.code) == "LEGACY_SOURCE_INVALID"
        return
    session = load_text(text).session
    assert not isinstance(model, Violation)
    marker: dict[str, Any] = {"sessionId": "someone-else", "throughSeq": 2, "sessionFormatVersion": 1}
    later: dict[str, Any] = {"type": "session-log-deepseek/delivery-accepted", "seq": 3, "time": 0, "data": marker}
    theirs = append_event(model.state, later)
    assert isinstance(theirs, Violation) and theirs.code.value == "DELIVERY_MARKER_WRONG_SESSION"
    with pytest.raises(SeqlogError) as refused:
        session.append_event(later)
    assert refused.value.code is Code.DELIVERY_MARKER_WRONG_SESSION
    session.append_event({**later, "data": {**marker, "sessionId": "v0-session"}})


def test_inv_rel_29_adopting_an_identity_checks_the_markers_already_logged() -> None:
    events = _marker_log("someone-else").events
    session = Session.restore(events)
    before = relation_state(session)
    with pytest.raises(SeqlogError) as refused:
        session.adopt_identity(LogIdentity(SESSION_ID))
    assert refused.value.code is Code.DELIVERY_MARKER_WRONG_SESSION
    assert refused.value.message.startswith(f"index {len(events) - 1}:")
    assert relation_state(session) == before
    session.adopt_identity(LogIdentity("someone-else"))
    assert session._relations.identity == LogIdentity("someone-else")


# -- atomicity ----------------------------------------------------------------------------------------------


def _dump(value: object) -> object:
    """A comparable picture of a relationship state, records and all."""
    if isinstance(value, dict):
        return [(_dump(k), _dump(v)) for k, v in value.items()]
    if isinstance(value, set | frozenset):
        return sorted(repr(_dump(v)) for v in value)
    if isinstance(value, tuple):
        return tuple(_dump(v) for v in value)
    slots = getattr(type(value), "__slots__", None)
    if slots is not None and not isinstance(value, str | int | float):
        return (type(value).__name__, tuple((name, _dump(getattr(value, name))) for name in slots))
    return repr(value)


def relation_state(session: Session) -> object:
    """Everything the session's relationship rules remember."""
    return _dump(session._relations)


def _snapshot(session: Session) -> tuple[object, ...]:
    return (len(session), tuple(session.surface.nodes), session.brackets, session.pending_calls, relation_state(session))


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_refused_append_leaves_the_session_as_it_was(fault: str) -> None:
    artifact = faulty_artifact(random.Random(7), fault)
    *prefix, last = artifact.events
    identity = LogIdentity.of_header(artifact.header)
    session = Session.restore(prefix, complete=False, identity=identity)
    before = _snapshot(session)
    try:
        session.append_event(last)
    except SeqlogError as error:
        assert str(error.code) == str(artifact.expect)
        assert _snapshot(session) == before
        assert _snapshot(session) == _snapshot(Session.restore(prefix, complete=False, identity=identity))
    else:
        with pytest.raises(SeqlogError):
            session.check_complete()  # a crossing, held until the log ends


def test_validation_changes_nothing_until_the_plan_is_committed() -> None:
    b = LogBuilder()
    in_step(b)
    call = Call("c1", "read", "{}")
    b.assistant([call])
    session = Session.restore(b.events, complete=False)
    before = relation_state(session)
    b.tool_call(call)
    plan = session.validate(b.events[-1])
    assert relation_state(session) == before
    session.commit(plan)
    assert relation_state(session) != before


def test_a_stale_plan_changes_nothing() -> None:
    """Two plans for one seq: once one is committed, the other is refused and changes nothing."""
    b = LogBuilder()
    in_step(b)
    call = Call("c1", "read", "{}")
    b.assistant([call])
    session = Session.restore(b.events, complete=False)
    b.tool_call(call)
    start = b.events.pop()
    b.repair_result(call.id)
    repaired = b.events[-1]
    stale = session.validate(start)
    session.commit(session.validate(repaired))
    after = relation_state(session)
    assert after == relation_state(Session.restore(b.events, complete=False))
    with pytest.raises(SeqlogError) as refused:
        session.commit(stale)
    assert refused.value.code is LibCode.STALE_PLAN
    assert relation_state(session) == after


# -- robustness ---------------------------------------------------------------------------------------------

GARBAGE: list[Any] = [
    None,
    1,
    "x",
    [],
    {},
    {"message": 5, "content": "no", "retry": True, "turn": None, "step": None},
    {"turn": "1", "step": [1], "callId": {"a": 1}, "rootCallId": [], "subCallId": None, "parentCallId": None},
    {
        "message": {"content": [None, 3, {"type": "tool-call"}, {"type": "tool-call", "id": {}}], "source": []},
        "shadowedRange": 7,
        "shadowedSeqs": {"0": 1},
        "messageSeqs": [1.5, -1, True, 99, 0.0],
        "messages": "m",
        "arguments": [1],
        "sourceEventSeq": "0",
        "header": {"config": 3},
        "retry": "1",
        "source": {"kind": "plugin", "plugin": "compact"},
        "sessionFormatVersion": True,
    },
]


def _busy() -> tuple[Relations, list[Event], SurfaceManager]:
    """A state with something open in every family, and its log and surface."""
    b = LogBuilder()
    in_step(b)
    b.assistant([Call("c1", "read", "{}")])
    b.retry("r", 1)
    b.ptc(False, "root", "root", "sub")
    b.command_run("cmd")
    b.compaction_start("c", b.open_turn)
    session = Session.restore(b.events, complete=False, identity=LogIdentity(SESSION_ID))
    return session._relations, list(session.events), session.surface


@pytest.mark.parametrize("data", GARBAGE, ids=range(len(GARBAGE)))
def test_malformed_payloads_are_answered_never_raised(data: Any) -> None:
    """Payload rules run first; when one lets something through, the relationship rules still answer."""
    for type_ in sorted(_HANDLERS):
        for op in (APPEND, Replace(0, 0), None):
            for busy in (False, True):
                relations, log, surface = _busy() if busy else (Relations(LogIdentity("s")), [], SurfaceManager())
                event = Event(type_, len(log), 0, freeze(data), surface_op=op)
                try:
                    commit = relations.plan(event, log, surface)
                except SeqlogError as error:
                    assert isinstance(error.code, Code)
                    continue
                if commit is not None:
                    commit()
                try:
                    relations.finish()
                except SeqlogError as error:
                    assert error.code is Code.COMPACTION_CROSSES_TURN


# -- titles are framed as JSON.stringify writes them --------------------------------------------------------


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=30))
def test_strings_are_framed_as_the_model_frames_them(value: str) -> None:
    assert js_json_string(value) == model_js_string(value)
    assert title_frame([(3, value), (0, "")]) == model_title_frame([(3, value), (0, "")])


def test_strings_are_framed_as_json_stringify_writes_them() -> None:
    assert js_json_string("\ud800x") == '"\\ud800x"'
    assert js_json_string("\udc00\ud800") == '"\\udc00\\ud800"'
    assert js_json_string("\ud83d\ude00") == '"😀"'
    assert js_json_string('\x7f\u2029"\\\b\f\n\r\t\x00\x1f') == '"\x7f\u2029\\"\\\\\\b\\f\\n\\r\\t\\u0000\\u001f"'
    assert title_frame([]) == "Generate the session title from this JSON array of human messages:\n[]"


# -- differential: seqlog and the model, artifact by artifact ------------------------------------------------


def _model_prefix_codes(artifact: Artifact) -> list[str | None]:
    """The model's verdict on every prefix (``[:0]`` to the whole), folding ``append_event`` once."""
    state: SessionState = replace(EMPTY_SESSION, relations=relations_for(artifact.identity()))
    codes: list[str | None] = []
    refused: str | None = None
    for raw in [None, *artifact.events]:
        if refused is None and raw is not None:
            after = append_event(state, raw)
            if isinstance(after, Violation):
                refused = str(after.code)
            else:
                state = after
        finished = relationship_finish(state.relations) if refused is None else None
        codes.append(refused or (str(finished.code) if finished is not None else None))
    return codes


def _seqlog_prefix_codes(artifact: Artifact) -> list[str | None]:
    """seqlog's verdict on every prefix, appending once and judging each prefix complete."""
    session = Session(identity=LogIdentity.of_header(artifact.header))
    codes: list[str | None] = []
    refused: str | None = None
    for raw in [None, *artifact.events]:
        if refused is None and raw is not None:
            try:
                session.append_event(raw)
            except SeqlogError as error:
                refused = str(error.code)
        if refused is None:
            try:
                session.check_complete()
            except SeqlogError as error:
                codes.append(str(error.code))
                continue
        codes.append(refused)
    return codes


@pytest.mark.parametrize("chunk", range(4))
def test_differential_agent_loops_and_every_prefix(chunk: int) -> None:
    """Valid loops are accepted by both; every prefix gets the same verdict and code (a prefix may
    end inside a crossed compaction), and randomly cut prefixes agree through the whole-log fold."""
    for seed in range(30 * chunk, 30 * chunk + 30):
        rng = random.Random(seed)
        artifact = valid_artifact(rng)
        assert both(artifact) is None
        assert _seqlog_prefix_codes(artifact) == _model_prefix_codes(artifact), (seed, artifact.name)
        for _ in range(2):
            cut = rng.randint(1, len(artifact.events))
            both(Artifact(artifact.header, artifact.events[:cut], f"{artifact.name}[:{cut}] seed {seed}"))


def _fault_artifacts() -> list[Artifact]:
    return [faulty_artifact(random.Random(1000 * i + k), name) for i, name in enumerate(sorted(FAULTS)) for k in range(6)]


def test_differential_one_fault_mutations() -> None:
    """Every fault: the same code from both, the one the fault names, on the replay and the append path."""
    for artifact in _fault_artifacts():
        assert both(artifact) == str(artifact.expect), artifact.name
        ours, theirs = _seqlog_prefix_codes(artifact), _model_prefix_codes(artifact)
        assert ours == theirs, artifact.name
        assert ours[-1] == str(artifact.expect), artifact.name


def test_differential_stored_logs_read_and_repaired() -> None:
    """The read path (which checks markers against the header line's identity): the same verdict and
    code, and for an accepted log the same length and closers."""
    artifacts = [valid_artifact(random.Random(seed)) for seed in range(40)]
    artifacts += _fault_artifacts()[::2]
    for artifact in artifacts:
        text = jsonl(artifact)
        model = load_session(text)
        try:
            loaded = load_text(text)
        except SeqlogError as error:
            assert isinstance(model, Violation), (artifact.name, error)
            assert str(model.code) == str(error.code), artifact.name
            continue
        assert not isinstance(model, Violation), (artifact.name, model)
        assert (len(loaded.session), len(loaded.closers)) == (len(model.state.events), len(model.closers)), artifact.name
