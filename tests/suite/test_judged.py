"""The oracle's remembered judgements answer exactly as the model does (``spec/suite/judged.py``)."""

from __future__ import annotations

import copy
from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import candidates, mutated, property_settings, sessions

from sessionlog_spec.model.json_value import as_object, freeze
from sessionlog_spec.model.jsonl import encode_jsonl
from sessionlog_spec.model.load import load_session, read_log
from sessionlog_spec.model.session import EMPTY_SESSION, SessionState, append_event, fold_session, seed_session
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.suite.agent.builder import SessionBuilder, realistic_session
from sessionlog_spec.suite.judged import _Unkeyable, appended, folded, raw_key

HEADER = {"type": "session", "version": 1, "id": "s-1", "createdAt": 0, "delegationDepth": 0}


class _Text(str):
    """A ``str`` subclass: a value no JSON reader produces."""


@pytest.mark.parametrize(
    ("one", "other"),
    [
        (1, 1.0),
        (1, True),
        (0, False),
        (0.0, -0.0),
        ("1", 1),
        ([1], (1,)),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
        ({"a": [1, {"b": None}]}, {"a": [1, {"b": False}]}),
        (2**53, float(2**53)),
    ],
)
def test_remembered_judgements_tell_apart_raw_values_of_other_types_or_order(one: object, other: object) -> None:
    assert raw_key(one) != raw_key(other)
    assert raw_key(copy.deepcopy(one)) == raw_key(one)


@pytest.mark.parametrize("value", [_Text("x"), OrderedDict(a=1), {1: "a"}, {"a": {2: "b"}}, [b"x"], {"a": {1, 2}}])
def test_remembered_judgements_take_no_key_of_a_value_no_json_reader_makes(value: object) -> None:
    with pytest.raises(_Unkeyable):
        raw_key(value)


def test_remembered_appends_answer_for_the_value_not_the_first_value_asked() -> None:
    builder = realistic_session(turns=1, calls_per_step=1)
    event: dict[str, Any] = {"type": "vendor/note", "seq": builder.next_seq, "time": 1, "data": {}, "ignorable": True}
    assert isinstance(appended(builder.state, event), SessionState)
    # ``ignorable: 1`` is refused where ``ignorable: true`` is not: the same dict, changed, is judged again.
    event["ignorable"] = 1
    assert isinstance(appended(builder.state, event), Violation)
    assert appended(builder.state, event) == append_event(builder.state, event)
    event["ignorable"] = True
    assert isinstance(appended(builder.state, event), SessionState)


@property_settings()
@given(sessions(max_actions=20), st.data())
def test_remembered_appends_answer_as_append_event(builder: SessionBuilder, data: st.DataObject) -> None:
    state = builder.state
    raw = data.draw(st.one_of(candidates(builder.next_seq), mutated(builder.events[-1]) if builder.events else st.nothing()))
    expected = append_event(state, raw)
    assert appended(state, raw) == expected
    assert appended(state, copy.deepcopy(raw)) == expected  # answered from memory, the same answer


@property_settings(0.5)
@given(sessions(max_actions=25), st.integers(0, 40), st.data())
def test_remembered_folds_answer_as_fold_session(builder: SessionBuilder, cut: int, data: st.DataObject) -> None:
    events = builder.events
    raws: list[Any] = events[: cut % (len(events) + 1)]
    spoil: bool = data.draw(st.booleans(), label="spoil the last")
    if raws and spoil:
        raws[-1] = data.draw(mutated(raws[-1]))
    assert folded(raws) == fold_session(raws)
    assert folded(raws, where="line", first=2, complete=False) == fold_session(raws, where="line", first=2, complete=False)
    assert seed_session(raws, folded) == seed_session(raws)
    assert seed_session(raws, folded) == seed_session(copy.deepcopy(raws))
    header = as_object(freeze(HEADER))
    assert header is not None
    text = encode_jsonl(header, builder.state.events[: len(raws)])
    assert read_log(text, folded) == read_log(text)
    assert load_session(text, folded) == load_session(text)


def test_remembered_appends_fold_from_the_empty_session() -> None:
    builder = realistic_session(turns=2, calls_per_step=2)
    state = EMPTY_SESSION
    for raw in builder.events:
        following = appended(state, raw)
        assert isinstance(following, SessionState)
        state = following
    assert state == builder.state == folded(builder.events)


def test_remembered_folds_judge_a_complete_log_as_a_whole() -> None:
    # A compaction left open across the turn's end: every append is accepted, the whole log is not (INV-REL-11).
    crossed = realistic_session(turns=1, calls_per_step=1)
    crossed.turn_start()
    crossed.user_message("compact while working")
    crossed.compaction_start()
    crossed.turn_end()
    whole = folded(crossed.events)
    assert isinstance(whole, Violation)
    assert whole == fold_session(crossed.events)
    assert folded(crossed.events, complete=False) == crossed.state
