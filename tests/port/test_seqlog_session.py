"""Session: validated atomic appends, seeding, derived state, plans."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from seqlog_fixtures import HEADER_LINE, assistant, data, header, tool_call, tool_result, user

from seqlog import Code, LibCode, SeqlogError, Session, encode_jsonl
from seqlog.codec import load_text
from seqlog.event import encode_event
from seqlog.jsonvalue import FrozenObject


def _clock() -> Iterator[int]:
    yield from range(100, 10**6)


def _session() -> Session:
    ticks = _clock()
    return Session.create(header=HEADER_LINE, clock=lambda: next(ticks))


def _snapshot(session: Session) -> tuple[object, ...]:
    return (
        [encode_event(e) for e in session.events],
        tuple(session.surface.nodes),
        session.surface.replace_generation,
        session.brackets,
        session.request_header(),
        session.cut_balances(),
        session.closers(),
    )


def _through_a_tool_call(session: Session) -> None:
    session.append("turn/start", {"turn": 1})
    session.append("user/message", user(), surface_op="append")
    session.append("step/start", {"turn": 1, "step": 1})
    session.append("request/header", {"header": header(), "reason": "initial"})
    session.append("assistant/message", assistant(1, 1, calls=("c1",)), surface_op="append")
    session.append("tool/call", tool_call(1, 1, "c1"))


def test_append_assigns_seq_and_time_from_the_clock() -> None:
    session = _session()
    first = session.append("turn/start", {"turn": 1})
    second = session.append("user/message", user(), surface_op="append", time=5)
    assert (first.seq, first.time) == (0, 100)
    assert (second.seq, second.time) == (1, 5)
    assert list(session.surface.nodes) == [1]


def test_derived_state_follows_the_log() -> None:
    session = _session()
    _through_a_tool_call(session)
    assert session.open_turn == 1 and session.open_step == 1
    assert session.pending_calls == 1
    assert session.cut_balances() == (True, True, False)
    assert session.balanced_around(4) == (True, False)
    assert session.request_header() == {"config": {"provider": "deepseek", "model": "deepseek-chat"}, "system": "Be careful."}
    session.append("tool/result", tool_result(1, 1, "c1"), surface_op="append")
    assert session.pending_calls == 0 and session.cut_balances() == (True, True, False, True)


@pytest.mark.parametrize(
    ("type_", "data", "extra", "code"),
    [
        ("turn/start", {"turn": 1}, {}, Code.TURN_ALREADY_OPEN),
        ("step/start", {"turn": 1, "step": 2}, {}, Code.STEP_ALREADY_OPEN),
        ("tool/result", tool_result(1, 1, "zz"), {"surface_op": "append"}, Code.TOOL_RESULT_UNPAIRED),
        ("user/message", user(), {}, Code.SURFACE_OP_MISSING),
        ("user/message", {"id": "", "role": "user"}, {"surface_op": "append"}, Code.USER_MESSAGE_INVALID),
        ("mode/set", {}, {}, Code.LEGACY_MODE_SET),
        ("x-vendor/thing", {}, {}, Code.UNKNOWN_EVENT_TYPE),
        ("todo/write", {"x": float("nan")}, {}, Code.JSON_NOT_LOSSLESS),
        ("request/header", {"header": header(system=""), "reason": "change"}, {}, Code.HEADER_NOT_CANONICAL),
        ("user/message", user("s"), {"surface_op": {"op": "replace", "start": 1, "end": 4}}, Code.SOURCES_MISSING_SHADOWED),
    ],
)
def test_a_refused_append_changes_nothing(type_: str, data: object, extra: dict[str, object], code: Code) -> None:
    session = _session()
    _through_a_tool_call(session)
    before = _snapshot(session)
    with pytest.raises(SeqlogError) as refused:
        session.append(type_, data, **extra)  # type: ignore[arg-type]
    assert refused.value.code == code
    assert _snapshot(session) == before


def test_ignorable_unknown_types_are_kept() -> None:
    session = _session()
    event = session.append("x-vendor/thing", {"any": [1]}, ignorable=True)
    assert event.ignorable and len(session) == 1


def test_appended_data_is_a_deep_immutable_snapshot() -> None:
    session = _session()
    payload = user()
    event = session.append("user/message", payload, surface_op="append")
    payload["content"][0]["text"] = "changed"
    assert data(event)["content"][0]["text"] == "hi"
    assert isinstance(event.data, FrozenObject)
    with pytest.raises(TypeError):
        data(event)["id"] = "x"
    with pytest.raises(AttributeError):
        event.seq = 3  # type: ignore[misc]


def test_append_event_takes_the_given_seq_and_time() -> None:
    session = _session()
    event = session.append_event({"type": "turn/start", "seq": 0, "time": 42, "data": {"turn": 1}})
    assert event.time == 42
    with pytest.raises(SeqlogError) as refused:
        session.append_event({"type": "turn/end", "seq": 5, "time": 42, "data": {"turn": 1, "reason": {"kind": "completed"}}})
    assert refused.value.code == Code.SEQ_NOT_CONTIGUOUS


def test_validate_then_commit_and_stale_plans() -> None:
    session = _session()
    plan = session.validate({"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}})
    assert len(session) == 0
    session.commit(plan)
    with pytest.raises(SeqlogError) as stale:
        session.commit(plan)
    assert stale.value.code == LibCode.STALE_PLAN


def test_seed_is_validated_whole_and_marked() -> None:
    events = [
        {"type": "turn/start", "seq": 0, "time": 9, "data": {"turn": 1}},
        {"type": "turn/end", "seq": 1, "time": 11, "data": {"turn": 1, "reason": {"kind": "completed"}}},
    ]
    session = Session.create(events, header=HEADER_LINE)
    marker = session.events[-1]
    assert (marker.type, marker.seq, marker.time, marker.data) == ("session/end-seed", 2, 11, {})
    assert len(Session.create([*events, encode_event(marker)], header=HEADER_LINE)) == 3
    assert Session.create([], header=HEADER_LINE).events[0].time == 0
    bad = [events[0], {**events[1], "data": {"turn": 2, "reason": {"kind": "completed"}}}]
    with pytest.raises(SeqlogError) as refused:
        Session.create(bad, header=HEADER_LINE)
    assert refused.value.code == Code.TURN_END_MISMATCH
    assert "seed index 1" in refused.value.message


def test_create_checks_the_header_line_and_defaults_one() -> None:
    session = Session.create(clock=lambda: 77)
    assert session.header_line["version"] == 1 and session.header_line["createdAt"] == 77
    assert session.header_line["delegationDepth"] == 0
    with pytest.raises(SeqlogError) as refused:
        Session.create(header={"type": "session", "version": 1, "id": 5, "createdAt": 0})
    assert refused.value.code == Code.JSONL_HEADER_INVALID
    with pytest.raises(SeqlogError) as old:
        Session.create(header={"type": "session", "version": 0, "id": "x", "createdAt": 0})
    assert old.value.code == Code.FORMAT_VERSION_UNSUPPORTED


def test_closers_and_repair() -> None:
    session = _session()
    _through_a_tool_call(session)
    closers = session.closers()
    assert [c.type for c in closers] == ["tool/result", "step/end", "turn/end"]
    assert data(closers[0])["error"]["code"] == "TOOL_OUTCOME_UNKNOWN"
    assert closers[0].source_event_seqs == (5,)
    assert session.repair() == closers
    assert session.closers() == () and session.open_turn is None


def test_events_view_is_read_only() -> None:
    session = _session()
    session.append("turn/start", {"turn": 1})
    with pytest.raises(TypeError):
        session.events[0] = session.events[0]  # type: ignore[index]
    assert session.events[0:1][0].type == "turn/start"


def test_create_writes_delegation_depth_and_keeps_a_given_one() -> None:
    bare = {"type": "session", "version": 1, "id": "", "createdAt": 0}
    assert Session.create(header=bare).header_line == {**bare, "delegationDepth": 0}
    assert Session.create(header={**bare, "delegationDepth": 3}).header_line["delegationDepth"] == 3
    with pytest.raises(SeqlogError) as negative:
        Session.create(header={**bare, "delegationDepth": -1})
    assert negative.value.code == Code.JSONL_HEADER_INVALID


def test_create_refuses_a_seed_length_beyond_the_seed() -> None:
    seeded = {"type": "session", "version": 1, "id": "s", "createdAt": 0, "seedLength": 2}
    seed = [{"type": "turn/start", "seq": 0, "time": 4, "data": {"turn": 1}}]
    assert len(Session.create(seed, seeded)) == 2  # the seed event and its end-of-seed marker
    with pytest.raises(SeqlogError) as refused:
        Session.create(header=seeded)
    assert refused.value.code == Code.JSONL_HEADER_INVALID and "seedLength" in refused.value.message


# -- the tool-pairing balance is the compactor's rule, not the log's ------------------------------


def _closed_tool_step(session: Session) -> None:
    """Seqs 0..6: turn 1, user message 1, step 1 with assistant message 3 (one call), call 4,
    result 5, step end 6.  Surface 1, 3, 5; cuts balanced, balanced, pending, balanced."""
    session.append("turn/start", {"turn": 1})
    session.append("user/message", user(), surface_op="append")
    session.append("step/start", {"turn": 1, "step": 1})
    session.append("assistant/message", assistant(1, 1, "a3", calls=("c1",)), surface_op="append")
    session.append("tool/call", tool_call(1, 1, "c1"))
    session.append("tool/result", tool_result(1, 1, "c1"), surface_op="append")
    session.append("step/end", {"turn": 1, "step": 1})


def _compact(session: Session, start: int, end: int, sources: list[int], message_id: str = "s1") -> None:
    op = {"op": "replace", "start": start, "end": end}
    session.append("user/message", user(message_id, "summary"), surface_op=op, source_event_seqs=sources)


def _code(call: object) -> Code:
    assert callable(call)
    with pytest.raises(SeqlogError) as refused:
        call()
    code = refused.value.code
    assert isinstance(code, Code)
    return code


def test_a_replace_over_an_open_call_is_accepted_and_takes_its_count_back() -> None:
    """The released session does not police the balance: a summary over 1..4 (the call still
    pending) is accepted, and the pending count loses the shadowed message's call."""
    session = _session()
    _through_a_tool_call(session)
    assert session.pending_calls == 1
    _compact(session, 1, 4, [1, 4])
    assert list(session.surface.nodes) == [6]
    assert session.pending_calls == 0 and session.cut_balances() == (True, True)


def test_a_compaction_that_orphans_a_result_is_accepted_and_leaves_no_balance() -> None:
    """A summary over the assistant message alone leaves result 5 without its call: accepted on
    append, seed and load; every balance query then refuses TOOL_PAIRING_NEGATIVE."""
    session = _session()
    _closed_tool_step(session)
    assert session.pending_calls == 0 and session.cut_balances() == (True, True, False, True)
    _compact(session, 3, 3, [3])
    assert list(session.surface.nodes) == [1, 7, 5]
    assert session.pending_calls == -1
    assert _code(session.cut_balances) is Code.TOOL_PAIRING_NEGATIVE
    assert _code(lambda: session.balanced_around(5)) is Code.TOOL_PAIRING_NEGATIVE
    assert _code(lambda: session.balanced_around(3)) is Code.NOT_ON_SURFACE  # off the surface comes first
    assert _code(lambda: session.compaction_region(1, 1)) is Code.TOOL_PAIRING_NEGATIVE
    assert _code(lambda: session.compaction_region(3, 5)) is Code.REPLACE_START_NOT_ON_SURFACE
    assert _code(lambda: session.compaction_region(1, 3)) is Code.REPLACE_END_NOT_ON_SURFACE
    assert _code(lambda: session.compaction_region(5, 1)) is Code.REPLACE_RANGE_INVERTED
    raws = [encode_event(e) for e in session.events]
    seeded = Session.create(raws, header=HEADER_LINE)
    assert seeded.pending_calls == -1 and list(seeded.surface.nodes) == [1, 7, 5]
    loaded = load_text(encode_jsonl(HEADER_LINE, session.events).decode("utf-8"), clock=lambda: 0).session
    assert loaded.pending_calls == -1 and [e.type for e in loaded.events[len(session) :]] == ["turn/end"]  # repaired
    assert _code(loaded.cut_balances) is Code.TOOL_PAIRING_NEGATIVE


def test_pending_calls_follow_replacements_through_negative_counts() -> None:
    """Each replacement takes back the counts of what it shadows: -1 after orphaning result 5,
    0 again once a second summary covers the orphan, and the cut cache agrees from scratch."""
    session = _session()
    _closed_tool_step(session)
    _compact(session, 3, 3, [3])
    assert session.pending_calls == -1
    _compact(session, 7, 5, [7, 5], "s2")
    assert list(session.surface.nodes) == [1, 8]
    assert session.pending_calls == 0 and session.cut_balances() == (True, True, True)
    assert session.compaction_region(1, 8) == (1, 8)
    again = Session.create([encode_event(e) for e in session.events], header=HEADER_LINE)
    assert again.cut_balances() == session.cut_balances() and again.pending_calls == 0


def test_an_orphan_cut_ahead_of_later_appends_stays_refused() -> None:
    """Appends after the corruption extend the cut cache; the surface still has no balance."""
    session = _session()
    _closed_tool_step(session)
    _compact(session, 3, 3, [3])
    session.append("step/start", {"turn": 1, "step": 2})
    session.append("assistant/message", assistant(1, 2, "a9", calls=("c2",)), surface_op="append")
    assert session.pending_calls == 0  # -1 + 1: the count is a sum, not a balance
    assert _code(session.cut_balances) is Code.TOOL_PAIRING_NEGATIVE
    assert _code(lambda: session.balanced_around(9)) is Code.TOOL_PAIRING_NEGATIVE


def test_compaction_region_checks_a_balanced_surface_in_order() -> None:
    """On surface 1, 3, 5 (cut after 3 pending): each refusal code, and the shadowed nodes."""
    session = _session()
    _closed_tool_step(session)
    assert session.compaction_region(1, 5) == (1, 3, 5)
    assert session.compaction_region(1, 1) == (1,)
    assert session.compaction_region(3, 5) == (3, 5)
    assert _code(lambda: session.compaction_region(3, 3)) is Code.REPLACE_SPLITS_TOOL_PAIR  # the cut after 3
    assert _code(lambda: session.compaction_region(5, 5)) is Code.REPLACE_SPLITS_TOOL_PAIR  # the cut before 5
    assert _code(lambda: session.compaction_region(9, 9)) is Code.REPLACE_START_NOT_ON_SURFACE
    assert _code(lambda: session.compaction_region(2, 5)) is Code.REPLACE_START_NOT_ON_SURFACE
    assert _code(lambda: session.compaction_region(1, 9)) is Code.REPLACE_END_NOT_ON_SURFACE
    assert _code(lambda: session.compaction_region(5, 3)) is Code.REPLACE_RANGE_INVERTED
    assert _code(lambda: session.compaction_region(5, 9)) is Code.REPLACE_END_NOT_ON_SURFACE  # end before order
    # The log itself takes the region the compactor would refuse.
    _compact(session, 3, 3, [3])
    assert len(session) == 8
