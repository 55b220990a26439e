"""The writer's notes of ``docs/conformance/on-disk-format.md``: how the stored form reads numbers,
``-0``, seqs and stored ``sourceEventSeqs``, checked against the model's reader."""

from __future__ import annotations

import pytest

from sessionlog_spec.model.jsonl import encode_line
from sessionlog_spec.model.load import ReadLog, read_log
from sessionlog_spec.model.violation import Violation

HEADER = '{"type":"session","version":1,"id":"s","createdAt":0,"delegationDepth":0}\n'
TURN_START = '{"type":"turn/start","seq":%s,"time":5,"data":{"turn":1}}'
TURN_END = '{"type":"turn/end","seq":%s,"time":5,"data":{"turn":1,"reason":{"kind":"completed"}}}'
USER = (
    '{"type":"user/message","seq":%s,"time":5,'
    '"data":{"id":"u%s","role":"user","content":[],"source":{"kind":"user"}},"surfaceOp":"append"%s}'
)


def _read(*lines: str) -> ReadLog | Violation:
    return read_log(HEADER + "".join(line + "\n" for line in lines))


def _code(*lines: str) -> str | None:
    read = _read(*lines)
    return read.code.value if isinstance(read, Violation) else None


def test_a_float_beyond_2_53_spelt_as_a_float_is_kept_and_in_integer_digits_is_refused() -> None:
    event = '{"type":"x/y","ignorable":true,"seq":0,"time":5,"data":{"v":%s}}'
    assert _code(event % "-4.607427877621723e+16") is None
    assert _code(event % "-46074278776217230") == "JSON_NOT_LOSSLESS"
    assert encode_line({"v": -4.607427877621723e16, "w": 2.0**53}) == '{"v":-4.607427877621723e+16,"w":9007199254740992.0}'


def test_a_first_seq_of_minus_zero_is_kept_in_sequence_then_refused_by_the_envelope() -> None:
    assert _code(TURN_START % "-0") == "ENVELOPE_BAD_SEQ"
    assert _code(TURN_START % "0", TURN_END % "-0") == "SEQ_NOT_CONTIGUOUS"


@pytest.mark.parametrize("spelling", ["1", "1.0", "1e0"])
def test_seqs_are_compared_as_numbers(spelling: str) -> None:
    read = _read(TURN_START % "0", TURN_END % spelling)
    assert isinstance(read, ReadLog)
    assert [e.seq for e in read.state.events] == [0, 1]


def test_stored_sources_are_read_before_the_row_is_judged() -> None:
    # a non-array list is a faulty row: dropped at the end, refused when a later turn/end proves it
    read = _read(USER % (0, 0, ""), USER % (1, 1, ',"sourceEventSeqs":5'))
    assert isinstance(read, ReadLog) and read.decoded.dropped_from_line == 3
    assert _code(USER % (0, 0, ""), USER % (1, 1, ',"sourceEventSeqs":5'), TURN_END % 2) == "JSONL_MALFORMED_LINE"
    # a plain list longer than the row's seq is a faulty row too
    read = _read(USER % (0, 0, ""), USER % (1, 1, ',"sourceEventSeqs":[0,0]'))
    assert isinstance(read, ReadLog) and read.decoded.dropped_from_line == 3
    # a plain list need not increase; integral doubles are kept as integers
    read = _read(USER % (0, 0, ""), USER % (1, 1, ""), USER % (2, 2, ',"sourceEventSeqs":[1.0,0]'))
    assert isinstance(read, ReadLog) and read.state.events[2].source_event_seqs == (1, 0)
    # with a range, the whole list must increase
    read = _read(USER % (0, 0, ""), USER % (1, 1, ""), USER % (2, 2, ',"sourceEventSeqs":[1,[0,0]]'))
    assert isinstance(read, ReadLog) and read.decoded.dropped_from_line == 4
