"""``python -m seqlog.driver``: JSON Lines on stdin/stdout, exact numbers, exit after ``bye``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from seqlog.driver import SeqlogDriver, read_request


def _exchange(lines: list[bytes]) -> tuple[list[dict[str, object]], subprocess.CompletedProcess[bytes]]:
    done = subprocess.run(
        [sys.executable, "-m", "seqlog.driver"], input=b"".join(lines), capture_output=True, timeout=30, check=False
    )
    return [json.loads(line) for line in done.stdout.splitlines()], done


def test_the_driver_speaks_json_lines_and_exits_after_bye() -> None:
    huge = b'{"id":3,"op":"append","event":{"type":"todo/write","seq":0,"time":0,"data":{"n":123456789012345678901234567890}}}\n'
    replies, done = _exchange(
        [
            b'{"id":1,"op":"hello"}\n',
            b'{"id":2,"op":"reset"}\n',
            b"this is not json\n",
            huge,
            b'{"id":4,"op":"append","event":{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}}\n',
            b'{"id":5,"op":"frobnicate"}\n',
            b'{"id":6,"op":"bye"}\n',
            b'{"id":7,"op":"state"}\n',
        ]
    )
    assert done.returncode == 0
    assert [r["id"] for r in replies] == [1, 2, 3, 4, 5, 6]
    hello = replies[0]["result"]
    assert hello["implementation"]["name"] == "seqlog" and hello["format_version"] == 1  # type: ignore[index]
    assert replies[2]["error"]["code"] == "JSON_NOT_LOSSLESS"  # type: ignore[index]
    assert replies[3]["result"] == {"length": 1, "nodes": [], "replace_generation": 0, "header": None}
    assert replies[4]["error"]["code"] == "UNSUPPORTED"  # type: ignore[index]
    assert b"unreadable request" in done.stderr


def test_bad_requests_and_library_refusals() -> None:
    driver = SeqlogDriver()
    assert driver({"id": 1, "op": "seed", "events": {}})["error"]["code"] == "BAD_REQUEST"
    assert driver({"id": 2, "op": "append"})["error"]["code"] == "BAD_REQUEST"
    assert driver({"id": 3, "op": "reset", "header": {"type": "session"}})["error"]["code"] == "BAD_REQUEST"
    assert driver({"id": 4, "op": "load", "jsonl": 5})["error"]["code"] == "BAD_REQUEST"
    decision = driver({"id": 5, "op": "header_decision", "events": [], "header": {"config": {}}})
    assert decision["error"]["code"] == "HEADER_NOT_PINNED"
    reply = driver({"id": 6, "op": "cuts", "events": [], "seq": 3})
    assert reply["error"]["code"] == "NOT_ON_SURFACE"


HEADER = {"type": "session", "version": 1, "id": "s", "createdAt": 0, "delegationDepth": 0}
TURN = {"type": "turn/start", "seq": 0, "time": 5, "data": {"turn": 1}}


def _text(*rows: object) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def test_hello_declares_read_and_reset_writes_a_delegation_depth() -> None:
    driver = SeqlogDriver()
    assert "read" in driver({"id": 1, "op": "hello"})["result"]["capabilities"]
    driver({"id": 2, "op": "reset"})
    saved = driver({"id": 3, "op": "save"})["result"]["jsonl"]
    assert json.loads(saved.split("\n")[0]) == {**HEADER, "id": "conformance"}
    bare = {k: v for k, v in HEADER.items() if k != "delegationDepth"}
    assert driver({"id": 4, "op": "reset", "header": bare})["error"]["code"] == "BAD_REQUEST"


def test_read_is_the_stateless_reader() -> None:
    driver = SeqlogDriver()
    driver({"id": 1, "op": "reset"})
    driver({"id": 2, "op": "append", "event": TURN})
    data = {"turn": 1, "step": 1, "index": 0, "dt": [1, 1], "texts": ["a", "b", "c"]}
    packed = {"type": "text-chunks", "seq0": 2, "time0": 9, "data": data}
    step = {"type": "step/start", "seq": 1, "time": 6, "data": {"turn": 1, "step": 1}}
    reply = driver({"id": 3, "op": "read", "jsonl": _text(HEADER, TURN, step, packed, {"type": "step/end"}) + '{"to'})
    events = reply["result"]["events"]
    assert reply["result"]["header"] == HEADER
    assert [e["type"] for e in events] == ["turn/start", "step/start", *["assistant/chunk"] * 3]  # no repair closers
    chunk = {"type": "text-delta", "index": 0, "text": "c"}
    assert events[4] == {"type": "assistant/chunk", "seq": 4, "time": 11, "data": {"turn": 1, "step": 1, "chunk": chunk}}
    assert driver({"id": 4, "op": "state"})["result"]["length"] == 1  # the session is untouched
    v0 = {**HEADER, "version": 0}
    v0_turn = {**TURN, "data": {"turn": 1, "trigger": {"kind": "user"}}}
    upgraded = driver({"id": 5, "op": "read", "jsonl": _text(v0, v0_turn)})["result"]
    assert upgraded == {"header": HEADER, "events": [TURN]}
    refused = driver({"id": 6, "op": "read", "jsonl": _text(HEADER, TURN, {**step, "seq": 3}, {"type": "turn/end", "seq": 2})})
    assert refused["error"]["code"] == "SEQ_NOT_CONTIGUOUS"
    assert driver({"id": 7, "op": "read", "jsonl": 5})["error"]["code"] == "BAD_REQUEST"


# -- cuts with a compaction region (spec/PROTOCOL.md, `cuts`) -----------------------------------

_ASSISTANT = {
    "id": "a3",
    "role": "assistant",
    "content": [{"type": "tool-call", "id": "c1", "name": "read", "arguments": "{}"}],
    "source": {"kind": "model", "provider": "deepseek", "model": "deepseek-chat"},
}
_RESULT = {
    "id": "r5",
    "role": "user",
    "source": {"kind": "tool", "callId": "c1"},
    "content": [{"type": "tool-result", "toolCallId": "c1", "content": [{"type": "text", "text": "ok"}], "isError": False}],
}
_USER = {"id": "u1", "role": "user", "content": [], "source": {"kind": "user"}}
_STEP = {"turn": 1, "step": 1}
TOOL_STEP: list[dict[str, object]] = [
    TURN,
    {"type": "user/message", "seq": 1, "time": 5, "data": _USER, "surfaceOp": "append"},
    {"type": "step/start", "seq": 2, "time": 5, "data": _STEP},
    {"type": "assistant/message", "seq": 3, "time": 5, "data": {**_STEP, "message": _ASSISTANT}, "surfaceOp": "append"},
    {"type": "tool/call", "seq": 4, "time": 5, "data": {**_STEP, "callId": "c1", "name": "read", "arguments": "{}"}},
    {"type": "tool/result", "seq": 5, "time": 5, "data": {**_STEP, "message": _RESULT}, "surfaceOp": "append"},
    {"type": "step/end", "seq": 6, "time": 5, "data": _STEP},
]
"""The protocol's `cuts` example: surface 1, 3, 5 with the cut after 3 pending."""
ORPHANING = {
    "type": "user/message",
    "seq": 7,
    "time": 5,
    "data": {"id": "s7", "role": "user", "content": [{"type": "text", "text": "summary"}], "source": {"kind": "user"}},
    "surfaceOp": {"op": "replace", "start": 3, "end": 3},
    "sourceEventSeqs": [3],
}
"""A summary over the assistant message alone: result 5 loses its call."""


def _cuts(driver: SeqlogDriver, events: list[dict[str, object]], **extra: object) -> dict[str, object]:
    reply = driver({"id": 1, "op": "cuts", "events": events, **extra})
    return reply["result"] if reply["ok"] else {"code": reply["error"]["code"]}


def test_cuts_checks_a_region_like_a_compactor() -> None:
    driver = SeqlogDriver()
    assert _cuts(driver, TOOL_STEP, region={"start": 1, "end": 5}) == {
        "nodes": [1, 3, 5],
        "balanced": [True, True, False, True],
        "shadowed": [1, 3, 5],
    }
    assert _cuts(driver, TOOL_STEP, region={"start": 3, "end": 3}) == {"code": "REPLACE_SPLITS_TOOL_PAIR"}
    assert _cuts(driver, TOOL_STEP, region={"start": 5, "end": 5}) == {"code": "REPLACE_SPLITS_TOOL_PAIR"}
    assert _cuts(driver, TOOL_STEP, region={"start": 2, "end": 5}) == {"code": "REPLACE_START_NOT_ON_SURFACE"}
    assert _cuts(driver, TOOL_STEP, region={"start": 1, "end": 4}) == {"code": "REPLACE_END_NOT_ON_SURFACE"}
    assert _cuts(driver, TOOL_STEP, region={"start": 5, "end": 1}) == {"code": "REPLACE_RANGE_INVERTED"}
    # `seq` is answered before `region`.
    assert _cuts(driver, TOOL_STEP, seq=2, region={"start": 5, "end": 1}) == {"code": "NOT_ON_SURFACE"}
    assert _cuts(driver, TOOL_STEP, region={"start": 1}) == {"code": "BAD_REQUEST"}


def test_cuts_on_a_surface_with_no_balance_refuses_before_seq_and_region() -> None:
    driver = SeqlogDriver()
    orphaned = [*TOOL_STEP, ORPHANING]
    assert _cuts(driver, orphaned) == {"code": "TOOL_PAIRING_NEGATIVE"}
    assert _cuts(driver, orphaned, seq=3) == {"code": "TOOL_PAIRING_NEGATIVE"}
    assert _cuts(driver, orphaned, region={"start": 3, "end": 3}) == {"code": "TOOL_PAIRING_NEGATIVE"}
    assert _cuts(driver, orphaned, region={"start": 5, "end": 1}) == {"code": "TOOL_PAIRING_NEGATIVE"}
    # The log itself takes the orphaning summary: append and seed accept it.
    driver({"id": 2, "op": "seed", "events": TOOL_STEP})
    appended = driver({"id": 3, "op": "append", "event": {**ORPHANING, "seq": 8}})
    assert appended["ok"] and appended["result"]["nodes"] == [1, 8, 5]
    seeded = driver({"id": 4, "op": "seed", "events": orphaned})
    assert seeded["ok"] and seeded["result"]["nodes"] == [1, 7, 5]


@pytest.mark.parametrize(
    ("line", "value"),
    [
        (b'{"n":123456789012345678901234}', 123456789012345678901234),
        (b'{"n":-9223372036854775809}', -9223372036854775809),
        (b'{"n":1234567890123456789.5}', 1234567890123456789.5),
        (b'{"n":12345678901234567,"s":"1234567890123456789"}', 12345678901234567),
    ],
)
def test_requests_keep_every_integer_exact(line: bytes, value: object) -> None:
    request = read_request(line)
    assert request["n"] == value
    assert type(request["n"]) is type(value)
