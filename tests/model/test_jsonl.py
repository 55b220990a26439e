"""INV-JSONL: the stored form, its strict reader, versions, and load with repair."""

from __future__ import annotations

import json
from typing import Any

import pytest
from model_cases import code_of, ev, realistic, session, user

from sessionlog_spec.contracts.jsonl import decode_jsonl, encode_jsonl, load_session
from sessionlog_spec.model.event import encode_event
from sessionlog_spec.model.json_value import freeze, thaw
from sessionlog_spec.model.jsonl import DecodedLog
from sessionlog_spec.model.load import LoadedSession, save_session
from sessionlog_spec.model.violation import Code, Violation
from sessionlog_spec.suite.agent.crashes import STRAY_LINES, insert_stray_line

HEADER: dict[str, Any] = {"type": "session", "version": 1, "id": "s-1", "createdAt": 0}


def line(value: object) -> str:
    """One stored line, newline included."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False) + "\n"


def text(*events: object, header: object = HEADER) -> str:
    """A stored log: the header line and one line per event."""
    return line(header) + "".join(line(e) for e in events)


TURN = [
    ev("turn/start", 0, {"turn": 1}, time=5),
    ev("turn/end", 1, {"turn": 1, "reason": {"kind": "completed"}}, time=6),
]


def loaded(stored: str) -> LoadedSession:
    """A stored log that must load."""
    result = load_session(stored)
    assert isinstance(result, LoadedSession), result
    return result


# -- INV-JSONL-1: the header line ----------------------------------------------------------------------------


@pytest.mark.parametrize("stored", ["", line(HEADER)[:-1], line(HEADER)[:12]], ids=["empty", "torn-header", "half-header"])
def test_inv_jsonl_1_log_without_a_complete_header_line_is_refused(stored: str) -> None:
    """The first line must be complete (end in a newline)."""
    assert code_of(decode_jsonl(stored)) is Code.JSONL_HEADER_MISSING
    assert code_of(load_session(stored)) is Code.JSONL_HEADER_MISSING


@pytest.mark.parametrize(
    "change",
    [
        {"type": "log"},
        {"type": None},
        {"sandboxMode": "workspace-write"},
        {"approvalPolicy": "on-request"},
        {"version": "1"},
        {"version": -1},
        {"version": 1.5},
        {"id": ""},
        {"createdAt": 1.5},
        {"createdAt": -1},
        {"cwd": "relative/path"},
        {"seedLength": -1},
        {"delegationDepth": "0"},
        {"parentSession": ""},
        {"agentPreset": 3},
        {"origin": "user"},
    ],
    ids=repr,
)
def test_inv_jsonl_1_invalid_header_line_is_refused(change: dict[str, Any]) -> None:
    """Type ``session``, known members only, natural version and createdAt, non-empty id, absolute cwd."""
    stored = text(*TURN, header={**HEADER, **change})
    assert code_of(decode_jsonl(stored)) is Code.JSONL_HEADER_INVALID


@pytest.mark.parametrize("key", ["type", "version", "id", "createdAt"])
def test_inv_jsonl_1_header_line_needs_its_required_members(key: str) -> None:
    """Type, version, id and createdAt are required."""
    header = dict(HEADER)
    del header[key]
    assert code_of(decode_jsonl(text(header=header))) is Code.JSONL_HEADER_INVALID


def test_inv_jsonl_1_header_line_with_every_optional_member_is_accepted() -> None:
    """cwd, parentSession, seedLength, origin, delegationDepth and agentPreset are the optional members."""
    header = {
        **HEADER,
        "cwd": "/work/project",
        "parentSession": "s-0",
        "seedLength": 12,
        "origin": "subagent",
        "delegationDepth": 1,
        "agentPreset": "coder",
    }
    decoded = decode_jsonl(text(*TURN, header=header))
    assert isinstance(decoded, DecodedLog) and thaw(decoded.header) == header


# -- INV-JSONL-2: encode and decode are inverse -------------------------------------------------------------


def test_inv_jsonl_2_encoded_form_is_one_compact_line_per_event() -> None:
    """Compact separators, UTF-8 text unescaped, every line ending in a newline."""
    state = session([ev("turn/start", 0, {"turn": 1}, time=5), {**user(1), "time": 6}])
    stored = encode_jsonl(freeze(HEADER), state.events)  # type: ignore[arg-type]
    assert stored == (
        '{"type":"session","version":1,"id":"s-1","createdAt":0}\n'
        '{"type":"turn/start","seq":0,"time":5,"data":{"turn":1}}\n'
        '{"type":"user/message","seq":1,"time":6,"data":{"id":"u1","role":"user",'
        '"content":[{"type":"text","text":"message 1"}],"source":{"kind":"user"}},"surfaceOp":"append"}\n'
    )


def test_inv_jsonl_2_decoding_the_encoded_form_gives_the_log_back() -> None:
    """Header and events of a realistic session survive the round trip, non-ASCII text included."""
    b = realistic()
    b.turn_start()
    b.user_message("Übersetze bitte: 日本語")
    stored = encode_jsonl(freeze(HEADER), b.state.events)  # type: ignore[arg-type]
    assert "日本語" in stored
    decoded = decode_jsonl(stored)
    assert isinstance(decoded, DecodedLog) and not decoded.dropped_torn_tail
    assert thaw(decoded.header) == HEADER
    assert list(decoded.events) == [encode_event(e) for e in b.state.events]


# -- INV-JSONL-3: only a torn tail is dropped --------------------------------------------------------------


def test_inv_jsonl_3_final_segment_without_newline_is_dropped() -> None:
    """A crash mid-write leaves a partial last line; it is dropped and reported."""
    stored = text(TURN[0]) + '{"type":"turn/end","seq":1,"ti'
    decoded = decode_jsonl(stored)
    assert isinstance(decoded, DecodedLog) and decoded.dropped_torn_tail
    assert list(decoded.events) == [TURN[0]]


def test_inv_jsonl_3_complete_json_without_newline_is_still_a_torn_tail() -> None:
    """Without its newline the last write is not committed, even if it parses."""
    stored = text(TURN[0]) + line(TURN[1])[:-1]
    decoded = decode_jsonl(stored)
    assert isinstance(decoded, DecodedLog) and decoded.dropped_torn_tail and len(decoded.events) == 1


def test_inv_jsonl_3_log_ending_in_newline_drops_nothing() -> None:
    """Every complete line is kept."""
    decoded = decode_jsonl(text(*TURN))
    assert isinstance(decoded, DecodedLog) and not decoded.dropped_torn_tail
    assert list(decoded.events) == TURN


def test_inv_jsonl_3_load_reports_the_dropped_tail_and_closes_the_turn() -> None:
    """Loading a torn log keeps the complete lines and repairs the turn the tear left open."""
    result = loaded(text(TURN[0]) + '{"type":"turn/e')
    assert result.dropped_torn_tail
    assert [e.type for e in result.state.events] == ["turn/start", "turn/end"]
    assert [e.type for e in result.closers] == ["turn/end"]


# -- INV-JSONL-4: any other malformed line refuses the log ---------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        line(TURN[0])[:-1] + "\r\n",
        '{"type":"turn/start","seq":0,"seq":0,"time":5,"data":{"turn":1}}\n',
        '{"type":"turn/start","seq":0,"time":NaN,"data":{"turn":1}}\n',
        '{"type":"turn/start","seq":0,"time":5,"data":{"turn":Infinity}}\n',
        '["turn/start",0,5,{"turn":1}]\n',
        '"turn/start"\n',
        "\n",
        '{"type":"turn/start","seq":0,\n',
        "\ufeff" + line(TURN[0]),
    ],
    ids=["crlf", "duplicate-key", "nan", "infinity", "array", "string", "blank", "truncated", "bom"],
)
def test_inv_jsonl_4_malformed_line_refuses_the_log_naming_it(bad: str) -> None:
    """A bad second line is refused as line 2, even though the lines after it are fine."""
    stored = line(HEADER) + bad + line(TURN[1])
    result = decode_jsonl(stored)
    assert isinstance(result, Violation) and result.code is Code.JSONL_MALFORMED_LINE
    assert result.message.startswith("line 2 ")
    assert code_of(load_session(stored)) is Code.JSONL_MALFORMED_LINE


def test_inv_jsonl_4_byte_order_mark_on_the_header_line_is_refused() -> None:
    """The header line is line 1 and read as strictly as the rest."""
    result = decode_jsonl("\ufeff" + text(*TURN))
    assert isinstance(result, Violation) and result.code is Code.JSONL_MALFORMED_LINE and result.message.startswith("line 1 ")


def test_inv_jsonl_4_nan_inside_a_string_is_fine() -> None:
    """Only the bare constants are refused."""
    stored = text(ev("session/title", 0, {"title": "NaN and Infinity"}))
    assert [e.type for e in loaded(stored).state.events] == ["session/title"]


@pytest.mark.parametrize("what", STRAY_LINES)
@pytest.mark.parametrize("at", [1, 2, 3])
def test_inv_jsonl_4_a_stray_line_between_events_refuses_the_log(what: str, at: int) -> None:
    """Every event is intact and in order, so only the rule itself refuses: skipping the line would load."""
    stored = text(*TURN)
    damaged = insert_stray_line(stored, at, what)
    lines = damaged.split("\n")
    assert "\n".join(lines[:at] + lines[at + 1 :]) == stored
    assert isinstance(load_session(stored), LoadedSession)
    result = decode_jsonl(damaged)
    assert isinstance(result, Violation) and result.code is Code.JSONL_MALFORMED_LINE
    assert result.message.startswith(f"line {at + 1} ")


# -- INV-JSONL-5: contiguity on load ---------------------------------------------------------------------------


def test_inv_jsonl_5_seq_gap_refuses_the_log_naming_the_line() -> None:
    """The event on line 3 should have seq 1."""
    result = load_session(text(TURN[0], {**TURN[1], "seq": 2}))
    assert isinstance(result, Violation) and result.code is Code.SEQ_NOT_CONTIGUOUS
    assert result.message.startswith("line 3:")


def test_inv_jsonl_5_duplicated_line_refuses_the_log() -> None:
    """A line written twice repeats its seq."""
    assert code_of(load_session(text(*TURN, TURN[1]))) is Code.SEQ_NOT_CONTIGUOUS


def test_inv_jsonl_5_log_must_start_at_seq_zero() -> None:
    """A log cut from the middle of another is refused."""
    assert code_of(load_session(text(ev("session/title", 1, {})))) is Code.SEQ_NOT_CONTIGUOUS


# -- INV-JSONL-6: unknown types -----------------------------------------------------------------------------


def test_inv_jsonl_6_unknown_ignorable_event_is_kept() -> None:
    """An event from a newer writer marked ignorable is loaded, not dropped."""
    attempt = ev("assistant/attempt", 1, {"stream": []}, ignorable=True)
    result = loaded(text(TURN[0], attempt, {**TURN[1], "seq": 2}))
    assert [(e.type, e.ignorable) for e in result.state.events] == [
        ("turn/start", False),
        ("assistant/attempt", True),
        ("turn/end", False),
    ]


def test_inv_jsonl_6_unknown_event_without_ignorable_refuses_the_log() -> None:
    """Without the marker the reader may not skip it."""
    assert code_of(load_session(text(TURN[0], ev("assistant/attempt", 1, {"stream": []})))) is Code.UNKNOWN_EVENT_TYPE


# -- INV-JSONL-7: versions ------------------------------------------------------------------------------------


def test_inv_jsonl_7_version_one_is_read_directly() -> None:
    """A v1 log loads with its header unchanged."""
    result = loaded(text(*TURN))
    assert thaw(result.header) == HEADER and len(result.state.events) == 2


def test_inv_jsonl_7_version_zero_goes_through_the_edge() -> None:
    """A v0 log is upgraded: the header says version 1 and v0 forms are normalised."""
    v0_start = ev("turn/start", 0, {"turn": 1, "trigger": "user"}, time=5)
    result = loaded(text(v0_start, TURN[1], header={**HEADER, "version": 0}))
    assert thaw(result.header) == HEADER
    assert encode_event(result.state.events[0]) == TURN[0]


@pytest.mark.parametrize("version", [2, 3, 4, 99])
def test_inv_jsonl_7_other_versions_are_refused(version: int) -> None:
    """A later format is refused before its events are interpreted."""
    stored = text(ev("assistant/attempt", 0, {"stream": []}), header={**HEADER, "version": version})
    assert code_of(load_session(stored)) is Code.FORMAT_VERSION_UNSUPPORTED


# -- INV-JSONL-8: load closes a crashed turn once --------------------------------------------------------------


def test_inv_jsonl_8_loading_a_crashed_log_closes_its_turn() -> None:
    """The open turn gets its closers, and the state includes them."""
    result = loaded(text(TURN[0], ev("step/start", 1, {"turn": 1, "step": 1}, time=7)))
    assert [(e.type, e.seq, e.time) for e in result.closers] == [("step/end", 2, 7), ("turn/end", 3, 7)]
    assert result.state.events[-2:] == result.closers
    assert result.state.trace.open_turn is None


def test_inv_jsonl_8_saving_and_loading_again_adds_nothing() -> None:
    """The saved repaired log loads with no closers and the same session."""
    first = loaded(text(TURN[0], ev("step/start", 1, {"turn": 1, "step": 1}, time=7)))
    again = loaded(save_session(first.header, first.state))
    assert again.closers == () and again.state == first.state and not again.dropped_torn_tail


def test_inv_jsonl_8_closed_log_loads_without_closers() -> None:
    """A realistic closed session needs no repair; saving and loading it is the identity."""
    state = realistic().state
    result = loaded(save_session(freeze(HEADER), state))  # type: ignore[arg-type]
    assert result.closers == () and result.state == state
