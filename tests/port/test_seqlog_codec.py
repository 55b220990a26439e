"""The JSONL codec: strict lines, torn tails, round trips, and what wins when several lines are bad."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from seqlog_fixtures import HEADER_LINE, user
from seqlog_fixtures import data as data_of

from seqlog import Code, SeqlogError, Session, encode_jsonl, load_bytes, load_text
from seqlog.codec import LineError, _js_int, _parse_flat, encode_line, parse_line, read_bytes
from seqlog.codec import _reject_constant as _reject
from seqlog.event import encode_event
from sessionlog_spec.model.load import LoadedSession
from sessionlog_spec.model.load import load_session as model_load

HEAD = json.dumps(HEADER_LINE).encode() + b"\n"


def _line(event: dict[str, object]) -> bytes:
    return json.dumps(event).encode() + b"\n"


TURN = {"type": "turn/start", "seq": 0, "time": 5, "data": {"turn": 1}}
END = {"type": "turn/end", "seq": 1, "time": 6, "data": {"turn": 1, "reason": {"kind": "completed"}}}


@pytest.mark.parametrize(
    "line",
    [
        b"\xef\xbb\xbf{}",
        b'{"a":NaN}',
        b'{"a":Infinity}',
        b"[1]",
        b"5",
        b"",
        b"\r",
        b'{"a":1',
        b"{'a':1}",
        b'{"a":1,}',
    ],
)
def test_lines_that_are_not_json_objects(line: bytes) -> None:
    with pytest.raises(LineError):
        parse_line(line)


@pytest.mark.parametrize(
    ("line", "value"),
    [
        (b'{"a":1}\r', {"a": 1}),  # a CRLF line: \r is JSON whitespace
        (b' \t{"a":1}\r\r', {"a": 1}),
        (b'{"a":1,"a":2}', {"a": 2}),  # a repeated key keeps its last value
        (b'{"a":{"b":1},"a":[]}', {"a": []}),
        (b'{"a":"\xff"}', {"a": "\ufffd"}),  # invalid UTF-8 reads as U+FFFD
        (b'{"a":"x\xf0\x80\x80y"}', {"a": "x\ufffd\ufffd\ufffdy"}),
    ],
)
def test_lines_read_as_json_parse_reads_them(line: bytes, value: dict[str, object]) -> None:
    assert parse_line(line) == value


def test_minus_zero_stays_negative_zero() -> None:
    parsed = parse_line(b'{"a":-0,"b":0,"c":-0.0}')
    assert [math.copysign(1.0, parsed[k]) for k in "abc"] == [-1.0, 1.0, -1.0]


def test_lines_read_exactly() -> None:
    assert parse_line(b'{"n": 123456789012345678901234567890, "f": 1.5e3}') == {"n": 123456789012345678901234567890, "f": 1500.0}
    assert parse_line('{"s":"\\ud800"}') == {"s": "\ud800"}
    assert parse_line(b' {"a":[1,2]} ') == {"a": [1, 2]}
    assert parse_line(b'{"n":' + b"9" * 5000 + b"}") == {"n": math.inf}  # what JSON.parse reads


@pytest.mark.parametrize(
    ("literal", "value"),
    [
        (b"9" * 400, int("9" * 400)),
        (b"-" + b"9" * 399, -int("9" * 399)),
        (b"9" * 401, math.inf),
        (b"-" + b"9" * 400, -math.inf),
        (b"9" * 5000, math.inf),
        (b"1" + b"0" * 99_999, math.inf),
    ],
    ids=["400", "-399", "401", "-400", "5000", "100000"],
)
def test_an_integer_literal_is_read_as_json_parse_reads_it_under_any_digit_limit(
    digit_limit: int, literal: bytes, value: float
) -> None:
    """As the model reads it (INV-LOG-4): a literal beyond every double is ±infinity, never a digit-limit error."""
    assert parse_line(b'{"n":' + literal + b"}") == {"n": value}
    assert parse_line(' {"n":' + literal.decode() + "}") == {"n": value}  # the slow path, from text


def test_ten_megabytes_of_digits_are_read_in_linear_time_without_a_digit_limit() -> None:
    """In a child process, so that a quadratic ``int()`` (minutes for 10^7 digits) fails the test, not hangs it."""
    program = (
        "import sys, time\n"
        "sys.set_int_max_str_digits(0)\n"
        "from seqlog.codec import parse_line\n"
        "start = time.monotonic()\n"
        "value = parse_line(b'{\"n\":' + b'9' * 10_000_000 + b'}')['n']\n"
        "print(value, round(time.monotonic() - start, 2))\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=False)
    value, seconds = done.stdout.split()
    assert value == "inf" and float(seconds) < 5.0, done.stdout + done.stderr


def test_encode_line_round_trips_what_orjson_cannot_write() -> None:
    value = {"s": "\ud800", "deep": [[[[1]]]]}
    assert parse_line(encode_line(value)) == value
    deep: object = 1
    for _ in range(300):
        deep = [deep]
    assert parse_line(encode_line({"d": deep})) == {"d": deep}


def test_round_trip_and_torn_tail() -> None:
    session = Session.create(header=HEADER_LINE, clock=lambda: 3)
    session.append("turn/start", {"turn": 1})
    session.append("user/message", user(text="é→ü"), surface_op="append")
    data = encode_jsonl(HEADER_LINE, session.events)
    loaded = load_bytes(data)
    assert list(loaded.session.events)[:2] == list(session.events)
    assert [c.type for c in loaded.closers] == ["turn/end"] and not loaded.dropped_torn_tail
    torn = load_bytes(data + b'{"type":"turn/e\xc3')
    assert torn.dropped_torn_tail and len(torn.session) == 3
    assert load_text(data.decode()).header == HEADER_LINE
    assert torn.committed_length == len(data) and torn.dropped_line is None


@pytest.mark.parametrize(
    ("data", "code", "where"),
    [
        (b"", Code.JSONL_HEADER_MISSING, ""),
        (HEAD[:-1], Code.JSONL_HEADER_MISSING, ""),
        (b"{bad\n", Code.JSONL_MALFORMED_LINE, "line 1"),
        (b"[1]\n", Code.JSONL_MALFORMED_LINE, "line 1"),
        (b"\xef\xbb\xbf" + HEAD, Code.JSONL_MALFORMED_LINE, "line 1"),
        (b'{"type":"session","version":1}\n', Code.JSONL_HEADER_INVALID, "line 1"),
        (_line({**HEADER_LINE, "version": 7}), Code.FORMAT_VERSION_UNSUPPORTED, "line 1"),
        (HEAD + _line({**TURN, "type": "x/y"}), Code.UNKNOWN_EVENT_TYPE, "line 2"),
        # The header line is checked before any row: a bad one wins over a damaged row.
        (b'{"type":"session"}\n' + b"{bad\n", Code.JSONL_HEADER_INVALID, "line 1"),
        # Damage that a later turn/end proves committed refuses the log, naming the first faulty line.
        (HEAD + _line(TURN) + b"{bad\n" + _line(END), Code.JSONL_MALFORMED_LINE, "line 3"),
        (HEAD + _line({**TURN, "seq": 1}) + _line(END), Code.SEQ_NOT_CONTIGUOUS, "line 2"),
        # A committed-damage refusal wins over a contract violation in the kept prefix.
        (HEAD + _line({**TURN, "type": "x/y"}) + b"{bad\n" + _line(END), Code.JSONL_MALFORMED_LINE, "line 3"),
    ],
)
def test_refusals_name_the_line(data: bytes, code: Code, where: str) -> None:
    with pytest.raises(SeqlogError) as refused:
        load_bytes(data)
    assert refused.value.code == code
    assert where in refused.value.message


def test_v0_logs_are_upgraded_on_load() -> None:
    v0 = {"type": "session", "version": 0, "id": "old", "createdAt": 0, "delegationDepth": 0}
    events = [{"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1, "trigger": {"kind": "user"}}}]
    loaded = load_bytes(_line(v0) + _line(events[0]))
    assert loaded.version == 0 and loaded.header["version"] == 1
    assert loaded.session.events[0].data == {"turn": 1}
    refused = [{"type": "mode/set", "seq": 0, "time": 1, "data": {}}]
    with pytest.raises(SeqlogError) as legacy:
        load_bytes(_line(v0) + _line(refused[0]))
    assert legacy.value.code == Code.LEGACY_MODE_SET


# The header line -------------------------------------------------------------------------------

VALID_HEADER = {"type": "session", "version": 1, "id": "s", "createdAt": 0, "delegationDepth": 0}


def _without(header: dict[str, object], key: str) -> dict[str, object]:
    return {k: v for k, v in header.items() if k != key}


@pytest.mark.parametrize(
    "header",
    [
        VALID_HEADER,
        {**VALID_HEADER, "id": ""},
        {**VALID_HEADER, "delegationDepth": 4, "createdAt": 2**53 - 1},
        {**VALID_HEADER, "cwd": "/", "parentSession": "", "origin": "subagent", "agentPreset": "", "seedLength": 0},
        {**VALID_HEADER, "version": 1.0, "delegationDepth": 2.0},
    ],
)
def test_header_lines_the_reader_reads(header: dict[str, object]) -> None:
    loaded = load_bytes(_line(header))
    assert loaded.header == header and len(loaded.session) == 0


@pytest.mark.parametrize(
    ("header", "code"),
    [
        (_without(VALID_HEADER, "delegationDepth"), Code.JSONL_HEADER_INVALID),
        (_without(VALID_HEADER, "id"), Code.JSONL_HEADER_INVALID),
        (_without(VALID_HEADER, "createdAt"), Code.JSONL_HEADER_INVALID),
        ({**VALID_HEADER, "delegationDepth": -1}, Code.JSONL_HEADER_INVALID),
        ({**VALID_HEADER, "delegationDepth": 1.5}, Code.JSONL_HEADER_INVALID),
        ({**VALID_HEADER, "delegationDepth": "0"}, Code.JSONL_HEADER_INVALID),
        ({**VALID_HEADER, "delegationDepth": 2**53}, Code.JSONL_HEADER_INVALID),
        ({**VALID_HEADER, "sandboxMode": "off"}, Code.JSONL_HEADER_INVALID),
        ({**VALID_HEADER, "type": "log"}, Code.JSONL_HEADER_INVALID),
        ({**VALID_HEADER, "id": 5}, Code.JSONL_HEADER_INVALID),
        ({**VALID_HEADER, "cwd": "relative/path"}, Code.JSONL_HEADER_INVALID),
        ({**VALID_HEADER, "origin": "user"}, Code.JSONL_HEADER_INVALID),
        ({**VALID_HEADER, "parentSession": None}, Code.JSONL_HEADER_INVALID),
        ({**VALID_HEADER, "agentPreset": 1}, Code.JSONL_HEADER_INVALID),
        ({**VALID_HEADER, "seedLength": 1}, Code.JSONL_HEADER_INVALID),  # more than the 0 events read
        ({**VALID_HEADER, "version": "1"}, Code.JSONL_HEADER_INVALID),
        ({**VALID_HEADER, "version": -1}, Code.JSONL_HEADER_INVALID),
        # The version is dispatched before anything else is looked at.
        ({"version": 2}, Code.FORMAT_VERSION_UNSUPPORTED),
        ({**VALID_HEADER, "version": 3, "delegationDepth": -1, "extra": 1}, Code.FORMAT_VERSION_UNSUPPORTED),
    ],
)
def test_header_lines_the_reader_refuses(header: dict[str, object], code: Code) -> None:
    with pytest.raises(SeqlogError) as refused:
        load_bytes(_line(header))
    assert refused.value.code == code and "line 1" in refused.value.message


def test_a_negative_zero_created_at_is_refused() -> None:
    with pytest.raises(SeqlogError) as refused:
        load_bytes(b'{"type":"session","version":1,"id":"s","createdAt":-0,"delegationDepth":0}\n')
    assert refused.value.code == Code.JSONL_HEADER_INVALID


def test_seed_length_counts_the_events_kept() -> None:
    seeded = _line({**VALID_HEADER, "seedLength": 2})
    seed = _line(TURN) + _line({"type": "session/end-seed", "seq": 1, "time": 5, "data": {}})
    assert len(load_bytes(seeded + seed).session) == 3  # and the closer of the open turn
    with pytest.raises(SeqlogError) as refused:
        load_bytes(seeded + _line(TURN) + b"{bad\n" + _line({"type": "session/end-seed", "seq": 1, "time": 5, "data": {}}))
    assert refused.value.code == Code.JSONL_HEADER_INVALID and "seedLength" in refused.value.message


def test_encode_always_writes_delegation_depth() -> None:
    bare = _without(VALID_HEADER, "delegationDepth")
    assert json.loads(encode_jsonl(bare, ()).split(b"\n")[0])["delegationDepth"] == 0
    assert json.loads(encode_jsonl({**bare, "delegationDepth": 2}, ()).split(b"\n")[0])["delegationDepth"] == 2


# Recovery --------------------------------------------------------------------------------------

STEP = {"type": "step/start", "seq": 1, "time": 6, "data": {"turn": 1, "step": 1}}
LATER_END = {"type": "turn/end", "seq": 9, "time": 7, "data": {"turn": 1, "reason": {"kind": "completed"}}}
BAD_PACKED = {
    "type": "text-chunks",
    "seq0": 1,
    "time0": 6,
    "data": {"turn": 1, "step": 1, "index": -1, "dt": [0, 0], "texts": ["a", "b", "c"]},
}
BAD_RANGES = {**STEP, "sourceEventSeqs": [[0, 1]]}  # two seqs listed on an event whose seq is 1

FAULTY_ROWS = [
    (b"{bad\n", Code.JSONL_MALFORMED_LINE),
    (b"\n", Code.JSONL_MALFORMED_LINE),
    (b"[1]\n", Code.JSONL_MALFORMED_LINE),
    (b"null\n", Code.JSONL_MALFORMED_LINE),
    (b"{}\n", Code.SEQ_NOT_CONTIGUOUS),
    (_line({**STEP, "seq": 2}), Code.SEQ_NOT_CONTIGUOUS),  # a gap
    (_line(TURN), Code.SEQ_NOT_CONTIGUOUS),  # a duplicate
    (_line({**STEP, "seq": "1"}), Code.SEQ_NOT_CONTIGUOUS),
    (_line(BAD_PACKED), Code.JSONL_MALFORMED_LINE),
    (_line(BAD_RANGES), Code.JSONL_MALFORMED_LINE),
]


@pytest.mark.parametrize(("faulty", "code"), FAULTY_ROWS)
def test_a_faulty_row_and_everything_after_it_are_dropped(faulty: bytes, code: Code) -> None:
    kept = HEAD + _line(TURN)
    data = kept + faulty + _line(STEP) + b"{more damage\n" + _line({**STEP, "seq": 2, "data": {"turn": 1, "step": 2}})
    loaded = load_bytes(data)
    assert loaded.dropped_torn_tail and loaded.dropped_line == 3 and loaded.committed_length == len(kept)
    assert [e.type for e in loaded.session.events] == ["turn/start", "turn/end"]  # the kept event and its closer
    read = read_bytes(data)
    assert len(read.session) == 1 and read.dropped_line == 3


@pytest.mark.parametrize(("faulty", "code"), FAULTY_ROWS)
def test_a_later_turn_end_proves_the_damage_committed(faulty: bytes, code: Code) -> None:
    with pytest.raises(SeqlogError) as refused:
        load_bytes(HEAD + _line(TURN) + faulty + _line(STEP) + b"{more damage\n" + _line(LATER_END) + _line(STEP))
    assert refused.value.code == code
    assert refused.value.message.startswith("line 3") and "line 6" in refused.value.message


def test_a_faulty_turn_end_itself_refuses_the_log() -> None:
    with pytest.raises(SeqlogError) as refused:
        load_bytes(HEAD + _line(TURN) + _line({**LATER_END, "seq": 5}))
    assert refused.value.code == Code.SEQ_NOT_CONTIGUOUS and "line 3" in refused.value.message


def test_what_a_later_turn_end_proves_depends_on_who_found_the_damage() -> None:
    undecodable_end = {**LATER_END, "sourceEventSeqs": "all"}
    # The faulty row itself: a turn/end whose provenance does not decode is dropped, not proof.
    assert load_bytes(HEAD + _line(TURN) + _line({**undecodable_end, "seq": 1})).dropped_line == 3
    # After a row the codec refused, only a turn/end the codec decodes proves the damage committed.
    bad_range = _line({**TURN, "seq": 1, "sourceEventSeqs": [[1, 0]]})
    loaded = load_bytes(HEAD + _line(TURN) + bad_range + _line(undecodable_end) + b'{"type":"turn/end"\n')
    assert loaded.dropped_line == 3 and len(loaded.session) == 2
    # After a line that is no JSON at all, the line scanner sees any turn/end that parses.
    with pytest.raises(SeqlogError) as refused:
        load_bytes(HEAD + _line(TURN) + b"{bad\n" + _line(undecodable_end))
    assert refused.value.code is Code.JSONL_MALFORMED_LINE and refused.value.message.startswith("line 3 ")
    # A packed row is never a turn/end, however it is spelled.
    packed = {"type": "text-chunks", "seq0": 7, "time0": 0, "data": {"turn": 1, "step": 1, "index": 0, "dt": [], "texts": ["x"]}}
    assert load_bytes(HEAD + _line(TURN) + b"{bad\n" + _line(packed)).dropped_line == 3


def test_a_torn_tail_after_dropped_damage() -> None:
    loaded = load_bytes(HEAD + _line(TURN) + b"{bad\n" + b'{"type":"turn/end","seq":1')
    assert loaded.dropped_torn_tail and loaded.dropped_line == 3 and len(loaded.session) == 2


def test_crlf_lines_and_repeated_keys_read_as_the_same_log() -> None:
    session = Session.create(header=HEADER_LINE, clock=lambda: 3)
    session.append("turn/start", {"turn": 1})
    session.append("user/message", user(text="é→ü"), surface_op="append")
    session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    data = encode_jsonl(HEADER_LINE, session.events)
    expected = [encode_event(e) for e in session.events]
    crlf = load_bytes(data.replace(b"\n", b"\r\n"))
    assert [encode_event(e) for e in crlf.session.events] == expected and not crlf.dropped_torn_tail
    lines = data.split(b"\n")[:-1]
    stale = b"".join(b'{"seq":-1,"type":"x/y",' + line[1:] + b"\n" for line in lines[1:])
    repeated = load_bytes(lines[0] + b"\n" + stale)
    assert [encode_event(e) for e in repeated.session.events] == expected


def test_invalid_utf8_reads_as_replacement_characters() -> None:
    session = Session.create(header=HEADER_LINE, clock=lambda: 3)
    session.append("turn/start", {"turn": 1})
    session.append("user/message", user(text="hi"), surface_op="append")
    data = encode_jsonl(HEADER_LINE, session.events).replace(b"hi", b"h\xff")
    loaded = load_bytes(data)
    assert data_of(loaded.session.events[1])["content"][0]["text"] == "h\ufffd"


def test_v0_logs_read_packed_rows_and_ranges() -> None:
    v0 = {"type": "session", "version": 0, "id": "old", "createdAt": 0, "delegationDepth": 0}
    rows = [
        {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1, "trigger": {"kind": "user"}}},
        {"type": "step/start", "seq": 1, "time": 1, "data": {"turn": 1, "step": 1}},
        {
            "type": "reasoning-chunks",
            "seq0": 2,
            "time0": 5,
            "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 1], "texts": ["a", "b", "c"]},
        },
    ]
    read = read_bytes(b"".join(_line(x) for x in [v0, *rows]))
    assert read.version == 0 and read.header["version"] == 1
    assert [e.type for e in read.session.events] == ["turn/start", "step/start", *["assistant/chunk"] * 3]
    assert [e.time for e in read.session.events[2:]] == [5, 6, 7]


# -- nesting depth (INV-LOG-4) -----------------------------------------------------------------------


def _deep(levels: int) -> str:
    opens = ["[" if level % 2 else '{"k":' for level in range(levels)]
    return "".join(opens) + "0" + "".join("]" if o == "[" else "}" for o in reversed(opens))


@pytest.mark.parametrize("levels", [256, 257, 1_500, 100_000])
def test_inv_log_4_a_deep_row_gets_the_same_answer_as_from_the_model(levels: int) -> None:
    row = '{"type":"vendor/x","seq":1,"time":7,"ignorable":true,"data":' + _deep(levels) + "}"
    stored = HEAD.decode() + '{"type":"turn/start","seq":0,"time":5,"data":{"turn":1}}\n' + row + "\n"
    expected = model_load(stored)
    try:
        load_bytes(stored.encode())
    except SeqlogError as error:
        assert not isinstance(expected, LoadedSession) and error.code.value == expected.code.value
        assert error.code is Code.JSON_NOT_LOSSLESS and "line 3" in str(error)
    else:
        assert isinstance(expected, LoadedSession) and levels <= 256


@settings(max_examples=300, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=30),
       st.data())  # fmt: skip
def test_the_flat_reading_of_deep_lines_parses_exactly_what_json_loads_parses(value: object, data: st.DataObject) -> None:
    written = json.dumps(value, indent=data.draw(st.sampled_from([None, 1])))
    cut = data.draw(st.integers(0, len(written)))
    damaged = data.draw(st.sampled_from(["", ",", "]", "}", ":", '"', "x", " ", "\x01", "NaN", "-0", "1.", "01"]))
    for candidate in (written, written[:cut] + damaged + written[cut:], written[:cut]):
        try:
            parsed = json.loads(candidate, parse_constant=_reject, parse_int=_js_int)
            expected: object = ("ok", json.dumps(parsed, sort_keys=True))
        except ValueError:
            expected = "error"
        try:
            actual: object = ("ok", json.dumps(_parse_flat(candidate), sort_keys=True))
        except LineError:
            actual = "error"
        assert actual == expected, candidate
