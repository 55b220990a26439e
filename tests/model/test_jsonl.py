"""INV-JSONL: the stored form, the released reader's recovery, packed rows and ranges, versions, load with repair."""

from __future__ import annotations

import dataclasses
import json
import math
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from model_cases import code_of, ev, realistic, session, title_data, user

from sessionlog_spec.contracts.jsonl import decode_jsonl, encode_jsonl, load_session
from sessionlog_spec.model.event import Event, decode_event, encode_event
from sessionlog_spec.model.json_value import MAX_NESTING, as_object, freeze, thaw
from sessionlog_spec.model.jsonl import _DECODER, DecodedLog, _parse_nested, decode_text, parse_json
from sessionlog_spec.model.load import LoadedSession, save_session
from sessionlog_spec.model.relationships import SessionIdentity
from sessionlog_spec.model.violation import Code, Violation
from sessionlog_spec.suite.agent.crashes import STRAY_LINES, duplicate_line, insert_stray_line

HEADER: dict[str, Any] = {"type": "session", "version": 1, "id": "s-1", "createdAt": 0, "delegationDepth": 0}


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
        {"id": 7},
        {"id": None},
        {"createdAt": 1.5, "delegationDepth": 0},
        {"createdAt": -1, "delegationDepth": 0},
        {"cwd": "relative/path"},
        {"seedLength": -1},
        {"delegationDepth": "0"},
        {"parentSession": 1},
        {"agentPreset": 3},
        {"origin": "user"},
    ],
    ids=repr,
)
def test_inv_jsonl_1_invalid_header_line_is_refused(change: dict[str, Any]) -> None:
    """Type ``session``, released members only, natural version, createdAt and delegationDepth, string id, absolute cwd."""
    stored = text(*TURN, header={**HEADER, **change})
    assert code_of(decode_jsonl(stored)) is Code.JSONL_HEADER_INVALID


@pytest.mark.parametrize("key", ["type", "version", "id", "createdAt", "delegationDepth"])
def test_inv_jsonl_1_header_line_needs_its_required_members(key: str) -> None:
    """Type, version, id, createdAt and delegationDepth are required (the released codec's list)."""
    header = dict(HEADER)
    del header[key]
    assert code_of(decode_jsonl(text(header=header))) is Code.JSONL_HEADER_INVALID


def test_inv_jsonl_1_header_line_with_every_optional_member_is_accepted() -> None:
    """cwd, parentSession, seedLength, origin and agentPreset are the optional members; any string is an id."""
    header = {
        **HEADER,
        "id": "",
        "cwd": "/work/project",
        "parentSession": "",
        "seedLength": 2,
        "origin": "subagent",
        "delegationDepth": 1,
        "agentPreset": "coder",
    }
    decoded = decode_jsonl(text(*TURN, header=header))
    assert isinstance(decoded, DecodedLog) and thaw(decoded.header) == header


def test_inv_jsonl_1_seed_length_beyond_the_events_read_is_refused() -> None:
    """A header that declares more inherited events than the log holds is refused."""
    assert code_of(decode_jsonl(text(*TURN, header={**HEADER, "seedLength": 2}))) is None
    assert code_of(decode_jsonl(text(*TURN, header={**HEADER, "seedLength": 3}))) is Code.JSONL_HEADER_INVALID


def test_inv_jsonl_7_another_version_is_refused_before_the_header_shape_is_judged() -> None:
    """A later format's header need not have this format's members."""
    assert code_of(decode_jsonl(line({"type": "session", "version": 2}))) is Code.FORMAT_VERSION_UNSUPPORTED


# -- INV-JSONL-2: encode and decode are inverse -------------------------------------------------------------


def test_inv_jsonl_2_encoded_form_is_one_compact_line_per_event() -> None:
    """Compact separators, UTF-8 text unescaped, every line ending in a newline."""
    state = session([ev("turn/start", 0, {"turn": 1}, time=5), {**user(1), "time": 6}])
    stored = encode_jsonl(freeze(HEADER), state.events)  # type: ignore[arg-type]
    assert stored == (
        '{"type":"session","version":1,"id":"s-1","createdAt":0,"delegationDepth":0}\n'
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


# -- INV-JSONL-4/5: a faulty row drops the suffix, unless a turn/end proves it committed -------------------


FAULTY_ROWS = {
    "truncated": '{"type":"turn/start","seq":0,\n',
    "nan": '{"type":"turn/start","seq":0,"time":NaN,"data":{"turn":1}}\n',
    "infinity": '{"type":"turn/start","seq":0,"time":5,"data":{"turn":Infinity}}\n',
    "array": '["turn/start",0,5,{"turn":1}]\n',
    "string": '"turn/start"\n',
    "blank": "\n",
    "bom": "\ufeff" + line(TURN[0]),
    "bad-packed-row": line(
        {"type": "text-chunks", "seq0": 0, "time0": 5, "data": {"turn": 1, "step": 1, "index": 0, "dt": [1], "texts": ["a", 2]}}
    ),
    "bad-range": line({**TURN[0], "sourceEventSeqs": [[3, 1]]}),
}


@pytest.mark.parametrize("bad", FAULTY_ROWS.values(), ids=FAULTY_ROWS.keys())
def test_inv_jsonl_4_faulty_row_before_a_turn_end_refuses_the_log_naming_it(bad: str) -> None:
    """The turn/end on line 3 proves line 2 was committed: the damage is corruption, named as line 2."""
    stored = line(HEADER) + bad + line(TURN[1])
    result = decode_jsonl(stored)
    assert isinstance(result, Violation) and result.code is Code.JSONL_MALFORMED_LINE
    assert result.message.startswith("line 2 ")
    assert code_of(load_session(stored)) is Code.JSONL_MALFORMED_LINE


@pytest.mark.parametrize("bad", FAULTY_ROWS.values(), ids=FAULTY_ROWS.keys())
def test_inv_jsonl_3_faulty_row_without_a_later_turn_end_is_dropped_with_its_suffix(bad: str) -> None:
    """Nothing after the damage proves it committed: the reader keeps the prefix, as after a crash."""
    title = ev("session/title", 2, title_data("t"))
    stored = text(*TURN) + bad + line(title)
    decoded = decode_jsonl(stored)
    assert isinstance(decoded, DecodedLog) and decoded.dropped_from_line == 4 and not decoded.dropped_torn_tail
    assert [e["seq"] for e in decoded.events] == [0, 1]
    result = loaded(stored)
    assert len(result.state.events) == 2 and result.dropped_torn_tail


def test_inv_jsonl_4_a_later_turn_end_after_several_rows_still_proves_the_commit() -> None:
    """The proving turn/end need not follow the faulty row directly; rows between are skipped."""
    events = [ev("turn/start", 0, {"turn": 1}), ev("session/title", 1, title_data("t")), ev("session/title", 2, title_data("u"))]
    stored = (
        line(HEADER)
        + line(events[0])
        + "garbage\n"
        + line(events[2])
        + line(ev("turn/end", 3, {"turn": 1, "reason": {"kind": "completed"}}))
    )
    result = decode_jsonl(stored)
    assert isinstance(result, Violation) and result.message.startswith("line 3 ") and "line 5" in result.message


def test_inv_jsonl_4_crlf_and_repeated_keys_are_read_as_json_parse_reads_them() -> None:
    """CR is JSON whitespace and a repeated key keeps its last value: neither makes a row faulty."""
    crlf = line(HEADER)[:-1] + "\r\n" + line(TURN[0])[:-1] + "\r\n" + line(TURN[1])
    repeated = line(HEADER) + '{"type":"turn/start","seq":7,"seq":0,"time":5,"data":{"turn":1}}\n' + line(TURN[1])
    for stored in (crlf, repeated):
        decoded = decode_jsonl(stored)
        assert isinstance(decoded, DecodedLog) and not decoded.dropped_anything
        assert [e["seq"] for e in decoded.events] == [0, 1]


def test_inv_jsonl_4_byte_order_mark_on_the_header_line_is_refused() -> None:
    """The header line is line 1 and must be JSON."""
    result = decode_jsonl("\ufeff" + text(*TURN))
    assert isinstance(result, Violation) and result.code is Code.JSONL_MALFORMED_LINE and result.message.startswith("line 1 ")


def test_inv_jsonl_4_nan_inside_a_string_is_fine() -> None:
    """Only the bare constants are refused."""
    stored = text(ev("session/title", 0, title_data("NaN and Infinity")))
    assert [e.type for e in loaded(stored).state.events] == ["session/title"]


def test_inv_jsonl_4_a_huge_integer_is_judged_the_same_whatever_its_length() -> None:
    """A number too long for the interpreter's integer limit is still a number, refused as not lossless."""
    for digits in (30, 5000):
        stored = text(ev("session/title", 0, {**title_data("t"), "n": int("9" * 30) if digits == 30 else 0}))
        stored = stored.replace('"n":' + ("9" * 30 if digits == 30 else "0"), '"n":' + "9" * digits)
        assert code_of(load_session(stored)) is Code.JSON_NOT_LOSSLESS


@pytest.mark.parametrize(
    ("literal", "value"),
    [
        ("9" * 400, int("9" * 400)),  # exact, and refused all the same outside the safe range
        ("-" + "9" * 399, -int("9" * 399)),
        ("9" * 401, math.inf),  # beyond every double: what JSON.parse reads
        ("-" + "9" * 400, -math.inf),
        ("9" * 5000, math.inf),
        ("1" + "0" * 99_999, math.inf),
    ],
    ids=["400", "-399", "401", "-400", "5000", "100000"],
)
def test_inv_log_4_an_integer_literal_is_read_as_json_parse_reads_it_under_any_digit_limit(
    digit_limit: int, literal: str, value: float
) -> None:
    assert parse_json('{"n":' + literal + "}") == {"n": value}


def test_inv_log_4_a_huge_integer_is_refused_in_linear_time_under_any_digit_limit(digit_limit: int) -> None:
    for digits in (5000, 100_000, 10_000_000):
        stored = text(ev("session/title", 0, {**title_data("t"), "n": 0})).replace('"n":0', '"n":' + "9" * digits)
        start = time.monotonic()
        result = load_session(stored)
        assert time.monotonic() - start < 5.0  # int() of 10^7 digits is quadratic: minutes
        assert isinstance(result, Violation) and result.code is Code.JSON_NOT_LOSSLESS
        assert result.message.endswith("$.n is not a finite number"), result.message


@pytest.mark.parametrize(
    ("raw", "decoded"),
    [
        # What the released reader (Buffer.toString("utf8") in Node 22) reads, measured byte for byte.
        (b"\xff", "\ufffd"),
        (b"\xed\xa0\x80", "\ufffd" * 3),  # an encoded surrogate: three maximal invalid sequences
        (b"\xf0\x9f\x98", "\ufffd"),  # a truncated four-byte sequence: one
        (b"\xe2\x82b", "\ufffdb"),
        (b"\xc0\xaf", "\ufffd" * 2),  # an overlong encoding
        (b"\xf4\x90\x80\x80", "\ufffd" * 4),  # beyond U+10FFFF
    ],
)
def test_inv_jsonl_4_bytes_that_are_not_utf8_read_as_replacement_characters(raw: bytes, decoded: str) -> None:
    """Inside a string they are kept as U+FFFD; elsewhere the row is not JSON."""
    stored, replaced = decode_text(text(ev("session/title", 0, title_data("TITLE"))).encode().replace(b"TITLE", raw))
    data = as_object(loaded(stored).state.events[0].data)
    assert replaced and data is not None and data["title"] == decoded
    outside, replaced = decode_text(b"\xff" + line(ev("session/title", 0, title_data())).encode())
    assert replaced and isinstance(parse_json(outside), str)
    assert decode_text("Requête ✓".encode()) == ("Requête ✓", False)


@pytest.mark.parametrize("what", STRAY_LINES)
@pytest.mark.parametrize("at", [1, 2])
def test_inv_jsonl_4_a_stray_line_before_a_turn_end_refuses_the_log(what: str, at: int) -> None:
    """Every event is intact and in order, so only the rule itself refuses: skipping the line would load."""
    stored = text(*TURN)
    damaged = insert_stray_line(stored, at, what)
    lines = damaged.split("\n")
    assert "\n".join(lines[:at] + lines[at + 1 :]) == stored
    assert isinstance(load_session(stored), LoadedSession)
    result = decode_jsonl(damaged)
    assert isinstance(result, Violation) and result.code in (Code.JSONL_MALFORMED_LINE, Code.SEQ_NOT_CONTIGUOUS)
    assert result.message.startswith(f"line {at + 1}")


@pytest.mark.parametrize("what", STRAY_LINES)
def test_inv_jsonl_3_a_stray_line_after_the_last_turn_end_is_dropped(what: str) -> None:
    """After the last turn/end nothing proves the stray line committed."""
    decoded = decode_jsonl(insert_stray_line(text(*TURN), 3, what))
    assert isinstance(decoded, DecodedLog) and decoded.dropped_from_line == 4 and len(decoded.events) == 2


def test_inv_jsonl_5_seq_gap_before_a_turn_end_refuses_the_log_naming_the_line() -> None:
    """INV-JSONL-5: The event on line 3 should have seq 1, and it is the turn/end itself."""
    result = load_session(text(TURN[0], {**TURN[1], "seq": 2}))
    assert isinstance(result, Violation) and result.code is Code.SEQ_NOT_CONTIGUOUS
    assert result.message.startswith("line 3:")


def test_inv_jsonl_5_duplicated_row_before_a_turn_end_refuses_the_log() -> None:
    """A row written twice repeats its seq; the turn/end after it proves the region committed."""
    assert code_of(load_session(text(TURN[0], TURN[0], {**TURN[1], "seq": 1}))) is Code.SEQ_NOT_CONTIGUOUS


@pytest.mark.parametrize("at", [1, 2])
def test_inv_jsonl_5_a_row_duplicated_anywhere_before_the_last_refuses_the_log_naming_the_copy(at: int) -> None:
    """The copy repeats its seq and the lines after it prove it committed, wherever it stands."""
    log = [TURN[0], ev("session/title", 1, title_data("t")), {**TURN[1], "seq": 2}]
    damaged = duplicate_line(text(*log), at)
    assert damaged.count(line(log[at - 1])) == 2
    result = load_session(damaged)
    assert isinstance(result, Violation) and result.code is Code.SEQ_NOT_CONTIGUOUS
    assert result.message.startswith(f"line {at + 2}:")


def test_inv_jsonl_5_duplicated_last_row_is_dropped() -> None:
    """A retried final write (not a turn/end) is dropped like a torn one."""
    title = ev("session/title", 2, title_data("t"))
    result = loaded(text(*TURN, title, title))
    assert len(result.state.events) == 3 and result.dropped_torn_tail


def test_inv_jsonl_5_log_must_start_at_seq_zero() -> None:
    """A log cut from the middle of another keeps nothing; with a turn/end in it, it is refused."""
    decoded = decode_jsonl(text(ev("session/title", 1, title_data())))
    assert isinstance(decoded, DecodedLog) and decoded.events == () and decoded.dropped_from_line == 2
    assert (
        code_of(
            load_session(text(ev("turn/start", 1, {"turn": 1}), ev("turn/end", 2, {"turn": 1, "reason": {"kind": "completed"}})))
        )
        is Code.SEQ_NOT_CONTIGUOUS
    )


# -- INV-JSONL-9: packed chunk rows ---------------------------------------------------------------------------


def chunk(seq: int, time: int, text_: str, kind: str = "text-delta") -> dict[str, Any]:
    """One assistant/chunk event of turn 1, step 1, block 0."""
    delta: dict[str, Any] = {"type": kind, "index": 0, "text": text_}
    if kind == "tool-call-delta":
        delta = {"type": kind, "index": 0, "id": "call-1", "name": "read", "argumentsDelta": text_}
    return ev("assistant/chunk", seq, {"turn": 1, "step": 1, "chunk": delta}, time=time)


STEP_OPEN = [ev("turn/start", 0, {"turn": 1}, time=5), ev("step/start", 1, {"turn": 1, "step": 1}, time=5)]


@pytest.mark.parametrize("kind", ["text-delta", "reasoning-delta", "tool-call-delta"])
def test_inv_jsonl_9_a_packed_row_stands_for_its_chunk_events(kind: str) -> None:
    """Member k has seq seq0 + k and time time0 plus the first k gaps (gaps may be negative)."""
    chunks = [chunk(2, 10, "a", kind), chunk(3, 12, "b", kind), chunk(4, 11, "c", kind)]
    row_type = {"text-delta": "text-chunks", "reasoning-delta": "reasoning-chunks", "tool-call-delta": "tool-call-chunks"}[kind]
    data: dict[str, Any] = {"turn": 1, "step": 1, "index": 0, "dt": [2, -1]}
    if kind == "tool-call-delta":
        data |= {"id": "call-1", "name": "read", "args": ["a", "b", "c"]}
    else:
        data["texts"] = ["a", "b", "c"]
    stored = text(*STEP_OPEN) + line({"type": row_type, "seq0": 2, "time0": 10, "data": data})
    decoded = decode_jsonl(stored)
    assert isinstance(decoded, DecodedLog) and decoded.lines == (2, 3, 4, 4, 4)
    assert [json.loads(json.dumps(e)) for e in decoded.events[2:]] == chunks
    assert [encode_event(e) for e in loaded(stored).state.events[2:5]] == chunks


PACKED_ROW: dict[str, Any] = {
    "type": "text-chunks",
    "seq0": 2,
    "time0": 10,
    "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 1], "texts": ["a", "b", "c"]},
}


@pytest.mark.parametrize(
    "change",
    [
        {"extra": 1},
        {"seq0": -1},
        {"seq0": 2.5},
        {"time0": "10"},
        {"data": []},
        {"data": {**PACKED_ROW["data"], "texts": []}},
        {"data": {**PACKED_ROW["data"], "texts": ["a", None, "c"]}},
        {"data": {**PACKED_ROW["data"], "dt": [1]}},
        {"data": {**PACKED_ROW["data"], "dt": [1, 0.5]}},
        {"data": {**PACKED_ROW["data"], "dt": [1, 2**53]}},
        {"data": {**PACKED_ROW["data"], "turn": -1}},
        {"data": {**PACKED_ROW["data"], "index": "0"}},
        {"data": {**PACKED_ROW["data"], "chunk": {}}},
        {"data": {k: v for k, v in PACKED_ROW["data"].items() if k != "step"}},
        {"type": "tool-call-chunks", "data": {**PACKED_ROW["data"]}},
        {"type": "tool-call-chunks", "data": {"turn": 1, "step": 1, "index": 0, "id": "", "dt": [1, 1], "args": ["a", "b", "c"]}},
        {
            "type": "tool-call-chunks",
            "data": {"turn": 1, "step": 1, "index": 0, "id": "c", "name": 3, "dt": [1, 1], "args": ["a", "b", "c"]},
        },
    ],
    ids=repr,
)
def test_inv_jsonl_9_one_bad_member_makes_the_whole_packed_row_faulty(change: dict[str, Any]) -> None:
    """Validated as a whole: no partial run is kept, and a later turn/end makes it a refusal."""
    row = line({**PACKED_ROW, **change})
    decoded = decode_jsonl(text(*STEP_OPEN) + row)
    assert isinstance(decoded, DecodedLog) and len(decoded.events) == 2 and decoded.dropped_from_line == 4
    closing = [ev("step/end", 5, {"turn": 1, "step": 1}), ev("turn/end", 6, {"turn": 1, "reason": {"kind": "completed"}})]
    refused = decode_jsonl(text(*STEP_OPEN) + row + "".join(line(e) for e in closing))
    assert isinstance(refused, Violation) and refused.code is Code.JSONL_MALFORMED_LINE and refused.message.startswith("line 4 ")


def test_inv_jsonl_9_a_packed_row_off_the_sequence_is_a_gap() -> None:
    """A packed row's first seq must be the next one."""
    decoded = decode_jsonl(text(*STEP_OPEN) + line({**PACKED_ROW, "seq0": 3}))
    assert isinstance(decoded, DecodedLog) and decoded.dropped_from_line == 4 and len(decoded.events) == 2


# -- INV-JSONL-10: range-encoded provenance ----------------------------------------------------------------


def _user(seq: int, **extra: Any) -> dict[str, Any]:
    return {**user(seq, f"u{seq}"), **extra}


@pytest.mark.parametrize(
    ("sources", "expanded"),
    [([[0, 2]], [0, 1, 2]), ([[0, 1], 2], [0, 1, 2]), ([0, [1, 2]], [0, 1, 2]), ([2, 1, 0], [2, 1, 0])],
    ids=repr,
)
def test_inv_jsonl_10_ranges_expand_to_their_seqs(sources: list[Any], expanded: list[int]) -> None:
    """`[start, end]` pairs expand in place; a plain list passes through as it is."""
    summary = _user(3, surfaceOp={"op": "replace", "start": 0, "end": 2}, sourceEventSeqs=sources)
    decoded = decode_jsonl(text(_user(0), _user(1), _user(2), summary))
    assert isinstance(decoded, DecodedLog) and decoded.events[3]["sourceEventSeqs"] == expanded


@pytest.mark.parametrize(
    "sources",
    ["0-2", [[0]], [[0, 1, 2]], [[2, 0]], [[0, 3]], [[0, 1], 1], [0, 1, 2, 3], [[0, 1], [-1, 0]], [[0, 1.5]], [True]],
    ids=repr,
)
def test_inv_jsonl_10_malformed_provenance_makes_the_row_faulty(sources: object) -> None:
    """Not an array, a bad pair, past the event's own seq, or not increasing once ranged."""
    summary = _user(3, surfaceOp={"op": "replace", "start": 0, "end": 2}, sourceEventSeqs=sources)
    decoded = decode_jsonl(text(_user(0), _user(1), _user(2), summary))
    assert isinstance(decoded, DecodedLog) and decoded.dropped_from_line == 5 and len(decoded.events) == 3


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
    v0_start = ev("turn/start", 0, {"turn": 1, "trigger": {"kind": "user"}}, time=5)
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
    assert result.closers == ()
    # The loaded session also knows the identity its header line gives it; nothing else differs.
    assert result.state.relations.identity == SessionIdentity("s-1")
    assert dataclasses.replace(result.state, relations=dataclasses.replace(result.state.relations, identity=None)) == state


def test_inv_jsonl_4_a_later_turn_end_proves_the_commit_even_when_its_row_is_faulty() -> None:
    """The released line scanner looks at the parsed row's type before any row decoding."""
    bad_end = {**TURN[1], "sourceEventSeqs": [[1, 0]]}
    stored = line(HEADER) + line(TURN[0]) + "garbage\n" + line(bad_end)
    result = decode_jsonl(stored)
    assert isinstance(result, Violation) and result.code is Code.JSONL_MALFORMED_LINE and result.message.startswith("line 3 ")


def test_inv_jsonl_4_after_a_row_the_codec_refused_only_a_decodable_turn_end_proves_the_commit() -> None:
    """A malformed packed row is the codec's fault; a later turn/end the codec cannot decode proves nothing."""
    bad_row = {**PACKED_ROW, "seq0": 1, "data": {**PACKED_ROW["data"], "dt": [1]}}
    bad_end = {**TURN[1], "sourceEventSeqs": [[1, 0]]}
    decoded = decode_jsonl(line(HEADER) + line(TURN[0]) + line(bad_row) + line(bad_end))
    assert isinstance(decoded, DecodedLog) and decoded.dropped_from_line == 3 and len(decoded.events) == 1


def test_inv_jsonl_10_a_forged_range_on_a_row_off_the_sequence_is_never_expanded() -> None:
    """A row claiming seq 2^53 - 1 with one range over all of it is a gap, read in constant memory."""
    huge = 2**53 - 1
    forged = {**_user(huge), "sourceEventSeqs": [[0, huge - 1]]}
    decoded = decode_jsonl(text(_user(0)) + line(forged))
    assert isinstance(decoded, DecodedLog) and decoded.dropped_from_line == 3 and len(decoded.events) == 1


def test_inv_jsonl_2_packed_writing_reads_back_and_packs_only_what_the_codec_reads() -> None:
    """Runs of three or more become rows; a run the codec would refuse (an empty call id) stays unpacked."""
    chunks = [chunk(2 + k, 10 + k, str(k), "tool-call-delta") for k in range(3)]
    header = as_object(freeze(HEADER))
    assert header is not None
    stored = encode_jsonl(header, [decode_or_fail(e) for e in [*STEP_OPEN, *chunks]], packed=True)
    assert stored.count("\n") == 4 and '"tool-call-chunks"' in stored
    empty_id = [{**c, "data": {**c["data"], "chunk": {**c["data"]["chunk"], "id": ""}}} for c in chunks]
    unpacked = encode_jsonl(header, [decode_or_fail(e) for e in [*STEP_OPEN, *empty_id]], packed=True)
    assert unpacked.count("\n") == 6


def decode_or_fail(raw: dict[str, Any]) -> Event:
    """A raw event decoded by the model's envelope decoder."""
    event = decode_event(raw)
    assert isinstance(event, Event), event
    return event


# -- nesting depth (INV-LOG-4): decided by the format, not by the reader's stack ---------------------


def _deep_text(levels: int) -> str:
    """``levels`` nested arrays and objects around a zero, written without an encoder (which would recurse)."""
    opens = ["[" if level % 2 else '{"k":' for level in range(levels)]
    return "".join(opens) + "0" + "".join("]" if o == "[" else "}" for o in reversed(opens))


def _with_deep_row(levels: int, *after: object) -> str:
    """TURN, then an ignorable vendor event whose ``data`` nests ``levels`` deep, then ``after``."""
    row = '{"type":"vendor/x","seq":2,"time":7,"ignorable":true,"data":' + _deep_text(levels) + "}\n"
    return text(*TURN) + row + "".join(line(e) for e in after)


@pytest.mark.parametrize("levels", [MAX_NESTING + 1, 1_000, 5_000, 200_000])
def test_inv_log_4_a_row_nesting_deeper_than_the_limit_is_refused_for_its_value_at_any_depth(levels: int) -> None:
    for stored in (_with_deep_row(levels), _with_deep_row(levels, ev("session/title", 3, title_data("t")))):
        result = load_session(stored)
        assert isinstance(result, Violation), result  # not dropped as a damaged tail: it is JSON
        assert result.code is Code.JSON_NOT_LOSSLESS and result.message.startswith("line 4:"), result.message
        assert f"nests deeper than {MAX_NESTING} levels" in result.message


def test_inv_log_4_a_value_nesting_exactly_256_levels_is_lossless_and_round_trips() -> None:
    loaded = load_session(_with_deep_row(MAX_NESTING))
    assert isinstance(loaded, LoadedSession), loaded
    saved = save_session(HEADER, loaded.state).splitlines()[3]
    assert json.loads(saved) == json.loads(_with_deep_row(MAX_NESTING).splitlines()[3])
    assert decode_event(ev("vendor/x", 0, json.loads(_deep_text(MAX_NESTING)), ignorable=True)).__class__ is Event
    refused = decode_event(ev("vendor/x", 0, json.loads(_deep_text(MAX_NESTING + 1)), ignorable=True))
    assert isinstance(refused, Violation) and refused.code is Code.JSON_NOT_LOSSLESS


@settings(max_examples=300, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=30),
       st.data())  # fmt: skip
def test_inv_jsonl_4_the_deep_reading_parses_exactly_what_the_decoder_parses(value: object, data: st.DataObject) -> None:
    """The explicit-stack parser (for lines too deep for the recursive decoder) agrees with the decoder
    on every text, valid or damaged, so only a line's depth decides which of the two reads it."""
    written = json.dumps(value, indent=data.draw(st.sampled_from([None, 1])))
    cut = data.draw(st.integers(0, len(written)))
    damaged = data.draw(st.sampled_from(["", ",", "]", "}", ":", '"', "x", " ", "\x01", "NaN", "-0"]))
    for candidate in (written, written[:cut] + damaged + written[cut:], written[:cut]):
        try:
            expected: object = ("ok", json.dumps(_DECODER.decode(candidate), sort_keys=True))
        except ValueError:
            expected = "error"
        try:
            actual: object = ("ok", json.dumps(_parse_nested(candidate), sort_keys=True))
        except ValueError:
            actual = "error"
        assert actual == expected, candidate
