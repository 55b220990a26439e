"""Request headers: canonical form, equality, the writer rule and the loop-instance writer."""

from __future__ import annotations

import pytest
from seqlog_fixtures import HEADER_LINE, data, header, user

from seqlog import (
    Code,
    HeaderWriter,
    InstanceFacts,
    Reason,
    SeqlogError,
    Session,
    canonical_header,
    decide_request_header,
    fold_request_header,
    header_equals,
)
from seqlog.event import decode_event


def test_canonical_form_drops_empty_members() -> None:
    raw = {"config": {"provider": "p", "model": "m"}, "system": "", "tools": [], "adapterDefaults": {}}
    assert canonical_header(raw) == {"config": {"provider": "p", "model": "m"}}
    assert header_equals(raw, {"config": {"model": "m", "provider": "p"}})
    assert not header_equals(raw, {"config": {"provider": "p", "model": "m"}, "system": "x"})


@pytest.mark.parametrize(
    ("latest", "facts", "expected"),
    [
        (None, (True, False, False), (Reason.INITIAL, False)),
        (header(), (True, False, False), (Reason.RESUME, False)),
        (header(), (False, False, False), None),
        (header(), (False, True, False), (Reason.SERIES, False)),
        (header(), (False, False, True), (Reason.SERIES, False)),
        (header("Other."), (False, False, False), (Reason.CHANGE, False)),
        (header("Other."), (False, True, False), (Reason.CHANGE, True)),
        (None, (False, False, False), (Reason.CHANGE, False)),
    ],
)
def test_decision_rule(latest: dict[str, object] | None, facts: tuple[bool, bool, bool], expected: object) -> None:
    decision = decide_request_header(latest, header(), InstanceFacts(*facts))
    assert (None if decision is None else (decision.reason, decision.starts_series)) == expected


def test_fold_request_header_is_the_latest_snapshot() -> None:
    events = [
        decode_event({"type": "request/header", "seq": 0, "time": 0, "data": {"header": header("A"), "reason": "initial"}}),
        decode_event({"type": "todo/write", "seq": 1, "time": 0, "data": {}}),
        decode_event({"type": "request/header", "seq": 2, "time": 0, "data": {"header": header(None), "reason": "change"}}),
    ]
    assert fold_request_header(events) == header(None)
    assert fold_request_header(events[1:2]) is None


def _open_step(session: Session, turn: int) -> None:
    session.append("turn/start", {"turn": turn})
    session.append("step/start", {"turn": turn, "step": 1})


def test_writer_anchors_changes_and_series() -> None:
    session = Session.create(header=HEADER_LINE, clock=lambda: 0)
    writer = HeaderWriter(session)
    _open_step(session, 1)
    first = writer.before_request({**header(), "tools": []})
    assert first is not None and data(first)["reason"] == "initial"
    assert "tools" not in data(first)["header"]
    assert writer.before_request(header()) is None
    changed = writer.before_request(header("New."), begins_series=True)
    assert changed is not None and data(changed)["startsSeries"] is True
    seq = session.append("user/message", user("u1"), surface_op="append").seq
    session.append("user/message", user("s1"), surface_op={"op": "replace", "start": seq, "end": seq}, source_event_seqs=[seq])
    series = writer.before_request(header("New."))
    assert series is not None and series.data == {"header": header("New."), "reason": "series"}
    assert session.request_header() == header("New.")


def test_a_new_instance_resumes() -> None:
    session = Session.create(header=HEADER_LINE, clock=lambda: 0)
    _open_step(session, 1)
    HeaderWriter(session).before_request(header())
    resumed = HeaderWriter(session).before_request(header())
    assert resumed is not None and data(resumed)["reason"] == "resume"


def test_writer_refuses_outside_a_step_and_bad_headers() -> None:
    session = Session.create(header=HEADER_LINE, clock=lambda: 0)
    writer = HeaderWriter(session)
    with pytest.raises(SeqlogError) as outside:
        writer.before_request(header())
    assert outside.value.code == Code.EVENT_OUTSIDE_STEP
    _open_step(session, 1)
    with pytest.raises(SeqlogError) as unpinned:
        writer.before_request({"config": {"provider": "p"}})
    assert unpinned.value.code == Code.HEADER_NOT_PINNED
    assert len(session) == 2
    assert writer.before_request(header()) is not None  # still the instance's first request
