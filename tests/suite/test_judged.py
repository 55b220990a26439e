"""The oracle's remembered judgements answer exactly as the model does (``spec/suite/judged.py``)."""

from __future__ import annotations

import copy
from collections import OrderedDict
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from strategies import V0Case, candidates, mutated, next_events, property_settings, sessions, v0_logs

from sessionlog_spec.model.event import encode_event
from sessionlog_spec.model.json_value import as_object, freeze, thaw
from sessionlog_spec.model.jsonl import DecodedLog, RowScanner, decode_jsonl, encode_jsonl, parse_json, parse_line
from sessionlog_spec.model.legacy import StoredLog, upgrade_v0
from sessionlog_spec.model.load import load_session, read_log, save_session
from sessionlog_spec.model.payloads import payload_reaches_opaque
from sessionlog_spec.model.session import EMPTY_SESSION, SessionState, append_event, fold_session, seed_session
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.suite import judged
from sessionlog_spec.suite.agent import layouts
from sessionlog_spec.suite.agent.builder import SessionBuilder, realistic_session
from sessionlog_spec.suite.agent.legacy_forms import restarted_turn
from sessionlog_spec.suite.judged import _Unkeyable, appended, decoded, folded, parsed_line, raw_key, saved, upgraded
from sessionlog_spec.suite.machines.base import _keeps_opaque_parts
from sessionlog_spec.suite.machines.jsonl import CRASHES, DrawnChoices, crashed_text

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
        ({"a": 1}, MappingProxyType({"a": 1})),
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


# -- stored texts, the v0 edge and saving -------------------------------------------------------------


def _read_exactly(read: DecodedLog | Violation) -> object:
    """What a reading is, to the last type and member order (``1`` and ``True`` apart)."""
    if isinstance(read, Violation):
        return read
    return (
        raw_key(read.header),
        tuple(raw_key(event) for event in read.events),
        read.lines,
        read.dropped_torn_tail,
        read.dropped_from_line,
    )


@property_settings(0.5)
@given(sessions(max_actions=25), st.booleans(), st.lists(st.sampled_from(CRASHES), max_size=4), st.data())
def test_remembered_reads_answer_as_decode_jsonl(
    builder: SessionBuilder, packed: bool, crashed: list[str], data: st.DataObject
) -> None:
    header = as_object(freeze(HEADER))
    assert header is not None
    # The texts a machine reads: the log as it grows, then what crashes and other layouts make of it.
    texts = [
        save_session(header, replace(builder.state, events=builder.state.events[:n]), packed)
        for n in range(len(builder.events) + 1)
    ]
    whole = texts[-1]
    texts += [crashed_text(whole, HEADER, DrawnChoices(data), crash) for crash in crashed]
    texts += [layout(whole) for layout in layouts.LAYOUTS.values()]
    texts += [whole[: data.draw(st.integers(0, len(whole)), label="cut")], whole + whole.split("\n", 1)[1]]
    for text in texts:
        assert _read_exactly(decoded(text)) == _read_exactly(decode_jsonl(text))
        assert read_log(text, folded, decoded) == read_log(text)
        assert load_session(text, folded, decoded) == load_session(text)


def test_remembered_reads_read_only_the_lines_no_text_began_with(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[int] = []

    class Counted(RowScanner):
        def feed(self, number: int, line: str) -> Violation | None:
            read.append(number)
            return super().feed(number, line)

    monkeypatch.setattr(judged, "RowScanner", Counted)
    monkeypatch.setattr(judged, "_texts", judged._StoredTexts())
    builder = realistic_session(turns=2, calls_per_step=2)
    header = as_object(freeze(HEADER))
    assert header is not None
    text = save_session(header, builder.state)
    lines = text.split("\n")[:-1]
    decoded("\n".join(lines[:5]) + "\n")
    assert read == [2, 3, 4, 5]  # the header line is read apart
    decoded(text)
    assert read[4:] == list(range(6, len(lines) + 1))  # the lines after the text read before, and no other
    decoded(text[:-1])  # the same lines, the last one torn
    assert len(read) == len(lines) - 1
    decoded(lines[0] + "\n" + lines[1] + "\n" + lines[3] + "\n")  # a line lost: read from where the texts part
    assert read[len(lines) - 1 :] == [3]


def test_remembered_line_parses_parse_a_line_once(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []

    def counted(line: str) -> object:
        parsed.append(line)
        return parse_json(line)

    monkeypatch.setattr(judged, "parse_json", counted)
    monkeypatch.setattr(judged, "_parses", OrderedDict())
    deep = "[" * 3000 + "]" * 3000  # read by a loop over its characters: the line read again in every text
    assert parsed_line(deep) == parsed_line(deep) == "is not a JSON object"
    assert parsed == [deep]


@pytest.mark.parametrize(
    "line", ['{"a":1}', '{"a":1,"a":true}', "[1]", '"text"', "{", "", " \t{}\r", "NaN", "[" * 3000 + "]" * 3000]
)
def test_remembered_line_parses_answer_as_parse_line(line: str) -> None:
    assert parsed_line(line) == parse_line(line)
    assert parsed_line(line) == parse_line(line)  # answered from memory


@property_settings(0.5)
@given(v0_logs(max_actions=20), st.data())
def test_remembered_upgrades_answer_as_upgrade_v0(case: V0Case, data: st.DataObject) -> None:
    v0 = case.v0
    logs = [StoredLog(v0.header, v0.events[:n]) for n in range(len(v0.events) + 1)]
    if v0.events:
        last = thaw(v0.events[-1])
        assert isinstance(last, dict)
        spoilt = data.draw(mutated(last), label="a spoilt last event")
        logs.append(StoredLog(v0.header, (*v0.events[:-1], spoilt)))  # type: ignore[arg-type]
    for log in logs:
        assert upgraded(log) == upgrade_v0(log)
    converted = upgrade_v0(v0)
    assert isinstance(converted, StoredLog)
    assert upgraded(converted) == upgrade_v0(converted) == converted  # the edge's fixed point


def test_remembered_upgrades_admit_the_released_restart_only_through_the_edge() -> None:
    # A v0 writer's interrupted-turn restart: the edge admits it (INV-LEGACY-6), a v1 fold does not,
    # and the remembered answers for one reading are never given for the other.
    builder = realistic_session(turns=1, calls_per_step=1)
    builder.turn_start()
    builder.user_message("Fix the lexer.")
    events = [*builder.events, *restarted_turn(builder, 2)]
    header = as_object(freeze({**HEADER, "version": 0}))
    assert header is not None
    log = StoredLog(header, tuple(events))
    assert isinstance(upgrade_v0(log), StoredLog)
    assert upgraded(log) == upgrade_v0(log)
    assert isinstance(folded(events, legacy_restart=True), SessionState)
    assert folded(events, legacy_restart=True) == fold_session(events, legacy_restart=True)
    assert isinstance(folded(events), Violation)
    assert folded(events) == fold_session(events)
    assert folded(events, legacy_restart=True) == fold_session(events, legacy_restart=True)


@property_settings(0.5)
@given(sessions(max_actions=30, closed=True), st.booleans())
def test_remembered_saves_write_as_save_session(builder: SessionBuilder, packed: bool) -> None:
    header = as_object(freeze(HEADER))
    assert header is not None
    builder.streamed_turn("Stream it.", ["a", "b", "c", "d"])  # a run of chunks a packed row holds
    assert saved(header, builder.state, packed) == save_session(header, builder.state, packed)
    assert saved(header, builder.state, packed) == save_session(header, builder.state, packed)  # answered from memory


@property_settings(0.5)
@given(sessions(max_actions=25))
def test_a_builders_events_are_encode_event_and_new_objects_each_time(builder: SessionBuilder) -> None:
    expected = [encode_event(event) for event in builder.state.events]
    first = builder.events
    assert [raw_key(event) for event in first] == [raw_key(event) for event in expected]
    for event in first:  # a caller changes the events it is given (a v0 log spells them its way)
        event["data"] = {"changed": True}
    assert [raw_key(event) for event in builder.events] == [raw_key(event) for event in expected]


@property_settings(0.5)
@given(sessions(max_actions=25), st.data())
def test_inv_pay_3_is_tagged_for_what_the_accepted_events_keep_without_inspecting_it(
    builder: SessionBuilder, data: st.DataObject
) -> None:
    raw = data.draw(next_events(builder), label="next event")
    state = appended(builder.state, raw)
    assume(not isinstance(state, Violation))
    assert isinstance(state, SessionState)
    assert _keeps_opaque_parts("append", state) == payload_reaches_opaque(raw["type"], raw["data"])
    seeded = seed_session(builder.events, folded)
    assume(not isinstance(seeded, Violation))
    assert isinstance(seeded, SessionState)
    assert _keeps_opaque_parts("seed", seeded) == any(payload_reaches_opaque(e["type"], e["data"]) for e in builder.events)
