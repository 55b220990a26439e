"""``sessionlog-check ask``: one request in, the port's reply out, as JSON lines."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from sessionlog_spec.cli import main
from sessionlog_spec.protocol.model_driver import ModelDriver

BAD_DRIVERS = Path(__file__).parent / "bad_drivers"
TURN_START = {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}}
NON_CANONICAL = {
    "type": "request/header",
    "seq": 0,
    "time": 0,
    "data": {"header": {"config": {"provider": "p", "model": "m"}, "system": ""}, "reason": "initial"},
}


def ask(capsys: pytest.CaptureFixture[str], *argv: str, stdin: str | None = None) -> tuple[int, list[Any], str]:
    """Run ``ask`` with ``argv``; its exit status, the replies it printed and its stderr."""
    if stdin is not None:
        sys.stdin = io.StringIO(stdin)
    try:
        status = main(["ask", *argv])
    finally:
        sys.stdin = sys.__stdin__
    out, err = capsys.readouterr()
    return status, [json.loads(line) for line in out.splitlines()], err


def model_reply(request: dict[str, Any]) -> dict[str, Any]:
    """What the model answers, in the reply spelling ``ask`` prints (no id unless the request had one)."""
    reply = ModelDriver()({"id": 0, **request})
    del reply["id"]
    return reply


@pytest.mark.parametrize(
    "request_",
    [
        {"op": "fold_header", "events": [NON_CANONICAL]},
        {"op": "fold_surface", "events": [TURN_START]},
        {"op": "repair", "events": [TURN_START]},
        {"op": "no_such_op"},
    ],
    ids=["refusal", "answer", "repair", "unknown-op"],
)
def test_ask_prints_the_model_reply_to_one_request(capsys: pytest.CaptureFixture[str], request_: dict[str, Any]) -> None:
    status, replies, _ = ask(capsys, json.dumps(request_))
    assert status == 0
    assert replies == [model_reply(request_)]


def test_ask_sends_stdin_lines_to_one_session_in_order(capsys: pytest.CaptureFixture[str]) -> None:
    lines = [
        {"op": "reset"},
        {"id": "a", "op": "append", "event": TURN_START},
        {"op": "state"},
        {"op": "append", "event": TURN_START},
    ]
    status, replies, _ = ask(capsys, stdin="\n".join(json.dumps(line) for line in lines) + "\n\n")
    assert status == 0
    assert replies[1]["id"] == "a" and "id" not in replies[2]
    # The state the third line asks about is the session the second line appended to.
    assert replies[2] == {"ok": True, "result": replies[1]["result"]}
    assert replies[2]["result"]["length"] == 1
    # The same event again is no longer next: the session remembered it.
    assert replies[3] == {"ok": False, "error": replies[3]["error"]} and replies[3]["error"]["code"] == "SEQ_NOT_CONTIGUOUS"


@pytest.mark.parametrize("text", ["[1]", "not json", '{"op": ""}', '{"events": []}', "7"])
def test_ask_refuses_a_request_that_is_not_an_object_naming_an_op(capsys: pytest.CaptureFixture[str], text: str) -> None:
    status, replies, err = ask(capsys, stdin=f'{{"op": "state"}}\n{text}\n{{"op": "state"}}\n')
    assert status == 2
    assert len(replies) == 1, "nothing is sent for the bad line or after it"
    assert "stdin line 2" in err


def test_ask_keeps_integers_beyond_2_53_exact(capsys: pytest.CaptureFixture[str]) -> None:
    big = 2**64 + 1
    request = {"op": "fold_surface", "events": [{**TURN_START, "time": big}]}
    status, replies, _ = ask(capsys, json.dumps(request))
    assert status == 0
    assert replies == [model_reply(request)]
    assert str(big) in replies[0]["error"]["message"]


def test_ask_asks_the_named_port(capsys: pytest.CaptureFixture[str]) -> None:
    request = {"op": "fold_header", "events": [NON_CANONICAL]}
    status, replies, _ = ask(capsys, "--port", "python", json.dumps(request))
    assert status == 0
    assert replies[0]["error"]["code"] == model_reply(request)["error"]["code"]


def test_ask_exits_1_when_the_port_breaks_the_protocol(capsys: pytest.CaptureFixture[str]) -> None:
    driver = f"{sys.executable} {BAD_DRIVERS / 'garbage.py'}"
    status, replies, err = ask(capsys, "--driver", driver, '{"op": "state"}')
    assert status == 1
    assert replies == []
    assert err.strip()
