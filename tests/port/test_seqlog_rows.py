"""Storage rows: packed chunk rows (read atomically, written for runs of three or more) and range-encoded provenance."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from seqlog_fixtures import HEADER_LINE, user

from seqlog import Code, SeqlogError, Session, encode_jsonl, load_bytes
from seqlog.codec import read_bytes
from seqlog.event import encode_event
from seqlog.rows import MIN_RUN, RowError, decode_packed_row, decode_seq_ranges, expand_spans, pack_chunk_runs

MAX = 2**53 - 1
TEXT_ROW: dict[str, Any] = {
    "type": "text-chunks",
    "seq0": 4,
    "time0": 100,
    "data": {"turn": 1, "step": 2, "index": 0, "dt": [3, 0], "texts": ["Hel", "lo", "!"]},
}
TOOL_ROW: dict[str, Any] = {
    "type": "tool-call-chunks",
    "seq0": 0,
    "time0": 7,
    "data": {"turn": 1, "step": 1, "index": 1, "id": "c1", "name": "bash", "dt": [1], "args": ['{"a"', ":1}"]},
}


def _chunk_event(seq: int, time: int, chunk: dict[str, Any], turn: int = 1, step: int = 1) -> dict[str, Any]:
    return {"type": "assistant/chunk", "seq": seq, "time": time, "data": {"turn": turn, "step": step, "chunk": chunk}}


def _text(seq: int, time: int, text: str = "t", kind: str = "text-delta", index: int = 0) -> dict[str, Any]:
    return _chunk_event(seq, time, {"type": kind, "index": index, "text": text})


def _tool(seq: int, time: int, call_id: str = "c1", name: str | None = "bash", index: int = 0) -> dict[str, Any]:
    chunk: dict[str, Any] = {"type": "tool-call-delta", "index": index, "id": call_id}
    if name is not None:
        chunk["name"] = name
    chunk["argumentsDelta"] = "{}"
    return _chunk_event(seq, time, chunk)


# Reading packed rows ---------------------------------------------------------------------------


def test_a_text_row_expands_to_its_chunk_events() -> None:
    assert decode_packed_row(TEXT_ROW, "text-chunks") == [
        _chunk_event(4, 100, {"type": "text-delta", "index": 0, "text": "Hel"}, step=2),
        _chunk_event(5, 103, {"type": "text-delta", "index": 0, "text": "lo"}, step=2),
        _chunk_event(6, 103, {"type": "text-delta", "index": 0, "text": "!"}, step=2),
    ]
    reasoning = {**TEXT_ROW, "type": "reasoning-chunks"}
    assert decode_packed_row(reasoning, "reasoning-chunks")[0]["data"]["chunk"]["type"] == "reasoning-delta"


def test_a_tool_call_row_expands_with_id_and_optional_name() -> None:
    events = decode_packed_row(TOOL_ROW, "tool-call-chunks")
    assert [e["data"]["chunk"] for e in events] == [
        {"type": "tool-call-delta", "index": 1, "id": "c1", "name": "bash", "argumentsDelta": '{"a"'},
        {"type": "tool-call-delta", "index": 1, "id": "c1", "name": "bash", "argumentsDelta": ":1}"},
    ]
    unnamed = copy.deepcopy(TOOL_ROW)
    del unnamed["data"]["name"]
    assert "name" not in decode_packed_row(unnamed, "tool-call-chunks")[0]["data"]["chunk"]


def test_a_single_member_row_and_negative_gaps_are_read() -> None:
    single = {**TEXT_ROW, "data": {**TEXT_ROW["data"], "dt": [], "texts": [""]}}
    assert len(decode_packed_row(single, "text-chunks")) == 1
    back = {**TEXT_ROW, "time0": -5, "data": {**TEXT_ROW["data"], "dt": [-1, 10]}}
    assert [e["time"] for e in decode_packed_row(back, "text-chunks")] == [-5, -6, 4]


def _mutated(row: dict[str, Any], path: tuple[str, ...], value: object) -> dict[str, Any]:
    out = copy.deepcopy(row)
    target = out
    for key in path[:-1]:
        target = target[key]
    if value is DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return out


DELETE = object()


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("extra",), 1),
        (("time0",), DELETE),
        (("seq0",), -1),
        (("seq0",), 1.5),
        (("seq0",), "4"),
        (("seq0",), MAX - 1),  # the last member's seq would pass the safe range
        (("time0",), 2.5),
        (("time0",), MAX),  # a member time would pass the safe range
        (("data",), [1]),
        (("data", "extra"), 0),
        (("data", "id"), "c1"),  # text rows have no id
        (("data", "turn"), -1),
        (("data", "step"), "2"),
        (("data", "index"), 0.5),
        (("data", "index"), True),
        (("data", "dt"), [3]),  # one gap too few
        (("data", "dt"), [3, 0, 0]),
        (("data", "dt"), [3, 0.5]),
        (("data", "dt"), [3, None]),
        (("data", "texts"), []),
        (("data", "texts"), ["Hel", "lo", 5]),  # one bad member makes the whole row faulty
        (("data", "texts"), "Hello!"),
    ],
)
def test_a_text_row_with_one_bad_member_is_faulty(path: tuple[str, ...], value: object) -> None:
    with pytest.raises(RowError):
        decode_packed_row(_mutated(TEXT_ROW, path, value), "text-chunks")


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("data", "id"), ""),
        (("data", "id"), DELETE),
        (("data", "id"), 5),
        (("data", "name"), None),
        (("data", "texts"), ["x", "y"]),
        (("data", "args"), ["x", 1]),
    ],
)
def test_a_tool_call_row_with_one_bad_member_is_faulty(path: tuple[str, ...], value: object) -> None:
    with pytest.raises(RowError):
        decode_packed_row(_mutated(TOOL_ROW, path, value), "tool-call-chunks")


def _log(*rows: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(row).encode() + b"\n" for row in (HEADER_LINE, *rows))


OPEN_STEP = [
    {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}},
    {"type": "step/start", "seq": 1, "time": 1, "data": {"turn": 1, "step": 1}},
]


def test_a_log_reads_packed_rows_as_events() -> None:
    row = {**TEXT_ROW, "seq0": 2, "data": {**TEXT_ROW["data"], "step": 1}}
    read = read_bytes(_log(*OPEN_STEP, row, {"type": "step/end", "seq": 5, "time": 200, "data": {"turn": 1, "step": 1}}))
    assert [e.type for e in read.session.events] == ["turn/start", "step/start", *["assistant/chunk"] * 3, "step/end"]
    assert not read.dropped_torn_tail


def test_a_faulty_packed_row_is_dropped_whole_or_refuses_the_log() -> None:
    bad = {**TEXT_ROW, "seq0": 2, "data": {**TEXT_ROW["data"], "step": 1, "texts": ["a", "b", None]}}
    read = read_bytes(_log(*OPEN_STEP, bad))
    assert len(read.session) == 2 and read.dropped_line == 4  # no partial run
    end = {"type": "turn/end", "seq": 5, "time": 9, "data": {"turn": 1, "reason": {"kind": "completed"}}}
    with pytest.raises(SeqlogError) as refused:
        read_bytes(_log(*OPEN_STEP, bad, end))
    assert refused.value.code == Code.JSONL_MALFORMED_LINE and refused.value.message.startswith("line 4")


def test_a_packed_row_off_the_sequence_is_a_gap() -> None:
    ahead = {**TEXT_ROW, "seq0": 3, "data": {**TEXT_ROW["data"], "step": 1}}
    assert len(read_bytes(_log(*OPEN_STEP, ahead)).session) == 2
    end = {"type": "turn/end", "seq": 2, "time": 9, "data": {"turn": 1, "reason": {"kind": "completed"}}}
    with pytest.raises(SeqlogError) as refused:
        read_bytes(_log(*OPEN_STEP, ahead, end))
    assert refused.value.code == Code.SEQ_NOT_CONTIGUOUS


def test_expanded_chunks_are_validated_as_events() -> None:
    row = {**TEXT_ROW, "seq0": 2, "data": {**TEXT_ROW["data"], "step": 7}}  # no step 7 is open
    with pytest.raises(SeqlogError) as refused:
        read_bytes(_log(*OPEN_STEP, row))
    assert refused.value.code == Code.EVENT_OUTSIDE_STEP and refused.value.message.startswith("line 4")


# Range-encoded provenance ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "seq", "expanded"),
    [
        ([], 0, []),
        ([1, 3], 5, [1, 3]),
        ([3, 1], 5, [3, 1]),  # plain lists are left to the provenance rules
        ([1, 1], 5, [1, 1]),
        ([2.0], 5, [2]),
        ([[1, 3], 7], 8, [1, 2, 3, 7]),
        ([[0, 0]], 1, [0]),
        ([0, [2, 4]], 4, [0, 2, 3, 4]),  # exactly as many seqs as the event's seq
    ],
)
def test_ranges_decode(value: object, seq: int, expanded: list[int]) -> None:
    assert expand_spans(decode_seq_ranges(value, seq)) == expanded


@pytest.mark.parametrize(
    ("value", "seq"),
    [
        (None, 5),
        ("1-3", 5),
        ({"start": 1}, 5),
        ([1, 2, 3], 2),  # longer than the event's seq
        ([[0, 3]], 3),
        ([[0, MAX - 1]], 10),  # a forged range is refused without being expanded
        ([[3, 1]], 5),
        ([[1, 2, 3]], 5),
        ([[1]], 5),
        ([[-1, 2]], 5),
        ([[1, 2.5]], 5),
        ([-1], 5),
        ([1.5], 5),
        (["1"], 5),
        ([True], 5),
        ([None], 5),
        ([[1, 2], 2], 5),  # with a range present the whole list must strictly increase
        ([3, [1, 2]], 5),
        ([[1, 2], [2, 3]], 5),
    ],
)
def test_malformed_ranges_are_refused(value: object, seq: int) -> None:
    with pytest.raises(RowError):
        decode_seq_ranges(value, seq)


def _summarised_session() -> Session:
    session = Session.create(header=HEADER_LINE, clock=lambda: 3)
    session.append("turn/start", {"turn": 1})
    for n in range(1, 4):
        session.append("user/message", user(f"u{n}"), surface_op="append")
    session.append("user/message", user("s"), surface_op={"op": "replace", "start": 1, "end": 3}, source_event_seqs=[1, 2, 3])
    return session


def test_a_log_reads_range_encoded_provenance() -> None:
    session = _summarised_session()
    lines = encode_jsonl(HEADER_LINE, session.events).split(b"\n")
    assert b'"sourceEventSeqs":[1,2,3]' in lines[5]
    lines[5] = lines[5].replace(b'"sourceEventSeqs":[1,2,3]', b'"sourceEventSeqs":[[1,3]]')
    read = read_bytes(b"\n".join(lines))
    assert [encode_event(e) for e in read.session.events] == [encode_event(e) for e in session.events]


def test_malformed_ranges_make_the_row_faulty() -> None:
    session = _summarised_session()
    lines = encode_jsonl(HEADER_LINE, session.events).split(b"\n")
    lines[5] = lines[5].replace(b'"sourceEventSeqs":[1,2,3]', b'"sourceEventSeqs":[[3,1]]')
    read = read_bytes(b"\n".join(lines))
    assert len(read.session) == 4 and read.dropped_line == 6
    lines[5] = lines[5].replace(b'"seq":4', b'"seq":"4"')  # sourceEventSeqs needs a real seq to be bounded by
    assert read_bytes(b"\n".join(lines)).dropped_line == 6


# Writing packed rows ---------------------------------------------------------------------------


def test_runs_of_three_or_more_are_packed_and_shorter_ones_are_not() -> None:
    assert MIN_RUN == 3
    two = [_text(0, 1), _text(1, 2)]
    assert pack_chunk_runs(two) == two
    three = [_text(0, 1, "a"), _text(1, 3, "b"), _text(2, 3, "c")]
    data = {"turn": 1, "step": 1, "index": 0, "dt": [2, 0], "texts": ["a", "b", "c"]}
    assert pack_chunk_runs(three) == [{"type": "text-chunks", "seq0": 0, "time0": 1, "data": data}]


@pytest.mark.parametrize(
    "breaker",
    [
        _text(3, 4, kind="reasoning-delta"),  # another delta kind
        _text(3, 4, index=1),  # another block
        _chunk_event(3, 4, {"type": "text-delta", "index": 0, "text": "t"}, step=2),
        _chunk_event(3, 4, {"type": "text-delta", "index": 0, "text": "t"}, turn=2),
        _text(4, 4),  # seq gap
        {"type": "todo/write", "seq": 3, "time": 4, "data": {}},  # not a chunk
        {**_text(3, 4), "ignorable": True},  # an envelope member a row cannot carry
        _chunk_event(3, 4, {"type": "text-delta", "index": 0, "text": "t", "extra": 1}),  # a chunk member it cannot carry
        _chunk_event(3, 4, {"type": "text-delta", "index": 0, "text": 5}),
        _chunk_event(3, 4, {"type": "block-end", "index": 0}),
    ],
)
def test_a_run_ends_where_the_whitelisted_shape_or_the_block_changes(breaker: dict[str, Any]) -> None:
    before = [_text(0, 1), _text(1, 2), _text(2, 3)]
    after = _text(breaker["seq"] + 1, 9, index=5)
    rows = pack_chunk_runs([*before, breaker, after])
    assert rows[0] == {
        "type": "text-chunks", "seq0": 0, "time0": 1, "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 1], "texts": ["t"] * 3}
    }
    assert rows[1:] == [breaker, after]
    assert pack_chunk_runs([*before[:2], breaker]) == [*before[:2], breaker]


def test_tool_call_runs_need_the_same_id_and_name() -> None:
    same = [_tool(0, 1), _tool(1, 1), _tool(2, 1)]
    assert [r["type"] for r in pack_chunk_runs(same)] == ["tool-call-chunks"]
    unnamed = [_tool(0, 1, name=None), _tool(1, 1, name=None), _tool(2, 1, name=None)]
    assert "name" not in pack_chunk_runs(unnamed)[0]["data"]
    for odd in (_tool(2, 1, call_id="c2"), _tool(2, 1, name="grep"), _tool(2, 1, name=None)):
        assert [r["type"] for r in pack_chunk_runs([_tool(0, 1), _tool(1, 1), odd])] == ["assistant/chunk"] * 3


def test_time_gaps_must_stay_safe_integers() -> None:
    events = [_text(0, 0), _text(1, 5), _text(2, MAX)]
    fractional = [{**e, "time": float(e["time"]) + 0.5} for e in events]
    assert [r["type"] for r in pack_chunk_runs(fractional)] == ["assistant/chunk"] * 3
    assert pack_chunk_runs(events)[0]["data"]["dt"] == [5, MAX - 5]


def test_shapes_the_reader_would_refuse_are_never_packed() -> None:
    """The released writer packs an empty call id or a negative index, which its own reader refuses."""
    for event in (_tool(0, 1, call_id=""), _text(0, 1, index=-1)):
        run = [{**event, "seq": s} for s in range(3)]
        assert pack_chunk_runs(run) == run


def _streamed_session() -> Session:
    session = Session.create(header=HEADER_LINE, clock=lambda: 3)
    session.append("turn/start", {"turn": 1})
    session.append("user/message", user(), surface_op="append")
    session.append("step/start", {"turn": 1, "step": 1})
    for n, text in enumerate(["Hel", "lo", " wor", "ld"]):
        chunk = {"type": "text-delta", "index": 0, "text": text}
        session.append("assistant/chunk", {"turn": 1, "step": 1, "chunk": chunk}, time=10 + n)
    for n in range(2):
        chunk = {"type": "reasoning-delta", "index": 1, "text": str(n)}
        session.append("assistant/chunk", {"turn": 1, "step": 1, "chunk": chunk}, time=20)
    for n in range(5):
        chunk = {"type": "tool-call-delta", "index": 2, "id": "c1", "name": "bash", "argumentsDelta": "{}"[n % 2]}
        session.append("assistant/chunk", {"turn": 1, "step": 1, "chunk": chunk}, time=30 - n)
    session.append("step/end", {"turn": 1, "step": 1})
    return session


def test_packed_writing_round_trips() -> None:
    session = _streamed_session()
    packed = encode_jsonl(HEADER_LINE, session.events, pack_chunks=True)
    kinds = [json.loads(line)["type"] for line in packed.split(b"\n")[1:-1]]
    reasoning = ["assistant/chunk"] * 2  # a run of two stays one event a line
    assert kinds == ["turn/start", "user/message", "step/start", "text-chunks", *reasoning, "tool-call-chunks", "step/end"]
    assert encode_jsonl(HEADER_LINE, session.events) != packed  # unpacked by default
    loaded = load_bytes(packed)
    assert [encode_event(e) for e in loaded.session.events[: len(session)]] == [encode_event(e) for e in session.events]
    assert [encode_event(e) for e in load_bytes(encode_jsonl(HEADER_LINE, session.events)).session.events] == [
        encode_event(e) for e in loaded.session.events
    ]
