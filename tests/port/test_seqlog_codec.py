"""The JSONL codec: strict lines, torn tails, round trips, and what wins when several lines are bad."""

from __future__ import annotations

import json

import pytest
from seqlog_fixtures import HEADER_LINE, user

from seqlog import Code, SeqlogError, Session, encode_jsonl, load_bytes, load_text
from seqlog.codec import LineError, encode_line, parse_line

HEAD = json.dumps(HEADER_LINE).encode() + b"\n"


def _line(event: dict[str, object]) -> bytes:
    return json.dumps(event).encode() + b"\n"


TURN = {"type": "turn/start", "seq": 0, "time": 5, "data": {"turn": 1}}


@pytest.mark.parametrize(
    "line",
    [
        b"\xef\xbb\xbf{}",
        b'{"a":1}\r',
        b'{"a":1,"a":2}',
        b'{"a":NaN}',
        b'{"a":Infinity}',
        b"[1]",
        b"",
        b'{"a":"\xff"}',
        b'{"a":1',
        b"{'a':1}",
    ],
)
def test_strict_lines(line: bytes) -> None:
    with pytest.raises(LineError):
        parse_line(line)


def test_lines_read_exactly() -> None:
    assert parse_line(b'{"n": 123456789012345678901234567890, "f": 1.5e3}') == {"n": 123456789012345678901234567890, "f": 1500.0}
    assert parse_line('{"s":"\\ud800"}') == {"s": "\ud800"}
    assert parse_line(b' {"a":[1,2]} ') == {"a": [1, 2]}


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


@pytest.mark.parametrize(
    ("data", "code", "where"),
    [
        (b"", Code.JSONL_HEADER_MISSING, ""),
        (HEAD[:-1], Code.JSONL_HEADER_MISSING, ""),
        (b'{"type":"session","version":1}\n', Code.JSONL_HEADER_INVALID, "line 1"),
        (b'{"type":"session","version":7,"id":"x","createdAt":0}\n', Code.FORMAT_VERSION_UNSUPPORTED, "line 1"),
        (HEAD + _line({**TURN, "seq": 1}), Code.SEQ_NOT_CONTIGUOUS, "line 2"),
        (HEAD + _line({**TURN, "type": "x/y"}), Code.UNKNOWN_EVENT_TYPE, "line 2"),
        (HEAD + _line(TURN) + b"{bad\n", Code.JSONL_MALFORMED_LINE, "line 3"),
        # A malformed line anywhere wins over an earlier contract violation and over a bad header.
        (HEAD + _line({**TURN, "seq": 4}) + b"{bad\n", Code.JSONL_MALFORMED_LINE, "line 3"),
        (b'{"type":"session"}\n' + b"{bad\n", Code.JSONL_MALFORMED_LINE, "line 2"),
        (HEAD + _line(TURN) + b'{"type":"turn/end"}\r\n', Code.JSONL_MALFORMED_LINE, "line 3"),
    ],
)
def test_refusals_name_the_line(data: bytes, code: Code, where: str) -> None:
    with pytest.raises(SeqlogError) as refused:
        load_bytes(data)
    assert refused.value.code == code
    assert where in refused.value.message


def test_v0_logs_are_upgraded_on_load() -> None:
    v0 = {"type": "session", "version": 0, "id": "old", "createdAt": 0}
    events = [{"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1, "trigger": "user"}}]
    loaded = load_bytes(_line(v0) + _line(events[0]))
    assert loaded.version == 0 and loaded.header["version"] == 1
    assert loaded.session.events[0].data == {"turn": 1}
    refused = [{"type": "mode/set", "seq": 0, "time": 1, "data": {}}]
    with pytest.raises(SeqlogError) as legacy:
        load_bytes(_line(v0) + _line(refused[0]))
    assert legacy.value.code == Code.LEGACY_MODE_SET
