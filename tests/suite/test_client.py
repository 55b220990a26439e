"""SubprocessPort: every way a driver can break the protocol is a PortFault of the right kind, in time.

The bad drivers in ``bad_drivers/`` answer ``hello`` and ``reset`` properly and misbehave on
``state`` (or the op named by their first argument).  The model run as a subprocess must answer
exactly as the model in-process does.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sessionlog_spec.protocol.messages import PROTOCOL, Ok, Port, PortFault, Refused, Reply
from sessionlog_spec.protocol.model_driver import ModelDriver
from sessionlog_spec.protocol.schema import InvalidRequest
from sessionlog_spec.suite.ports import PortUnavailable, port_for
from sessionlog_spec.suite.ports.inprocess import InProcessPort
from sessionlog_spec.suite.ports.subprocess import STDERR_TAIL_BYTES, PortStats, SubprocessPort

DRIVERS = Path(__file__).parent / "bad_drivers"
TIMEOUT = 1.0
SLACK = 2.5
"""Seconds a fault may take beyond the timeout: killing the driver and collecting its stderr."""
MODEL_DRIVER = [sys.executable, "-m", "sessionlog_spec.protocol.model_driver"]


def bad(name: str, *args: str) -> list[str]:
    """The command line of a bad driver."""
    return [sys.executable, str(DRIVERS / f"{name}.py"), *args]


@pytest.fixture
def model_subprocess() -> Iterator[SubprocessPort]:
    """The model as a driver program."""
    port = SubprocessPort(MODEL_DRIVER, timeout=10.0)
    yield port
    port.close()


FAULTS = [
    pytest.param("hang", "timeout", "hang: going quiet now", "timed out after 1 s waiting for the reply", {}, id="hang"),
    pytest.param("exit_midrun", "exit", "exit_midrun: giving up", "status 3", {}, id="exit"),
    pytest.param("garbage", "garbage", "garbage: printing to the wrong stream", "INFO computing", {}, id="garbage"),
    pytest.param("wrong_id", "wrong-id", "wrong_id: replying to the wrong request", "carries id 103", {}, id="wrong-id"),
    pytest.param("bad_schema", "schema", "bad_schema: nodes are strings today", "$.result.nodes[1]", {}, id="schema"),
    pytest.param("not_object", "schema", "not_object: replying with an array", "is not of type 'object'", {}, id="not-object"),
    pytest.param(
        "oversize", "oversize", "oversize: here comes a big one", "exceeds the limit", {"max_reply_bytes": 1 << 20}, id="oversize"
    ),
]


@pytest.mark.parametrize(("driver", "kind", "stderr", "detail", "options"), FAULTS)
def test_bad_driver_is_a_port_fault_of_its_kind(
    driver: str, kind: str, stderr: str, detail: str, options: dict[str, Any]
) -> None:
    port = SubprocessPort(bad(driver), timeout=TIMEOUT, **options)
    try:
        assert port.call("reset") == Ok(None)
        started = time.monotonic()
        with pytest.raises(PortFault) as info:
            port.call("state")
        assert time.monotonic() - started < TIMEOUT + SLACK
        assert (info.value.kind, stderr in info.value.stderr_tail) == (kind, True), info.value
        assert detail in info.value.detail
        assert "state (id 3)" in info.value.detail
    finally:
        port.close()


def test_a_dead_port_refuses_calls_until_restarted() -> None:
    port = SubprocessPort(bad("exit_midrun"), timeout=TIMEOUT)
    try:
        first_pid = port.pid
        with pytest.raises(PortFault):
            port.call("state")
        assert not port.alive
        with pytest.raises(PortFault, match="restart it") as info:
            port.call("reset")
        assert info.value.kind == "exit"
        port.restart()
        assert port.alive and port.pid != first_pid
        assert port.hello.protocol == PROTOCOL
        assert port.call("reset") == Ok(None)
    finally:
        port.close()


def test_a_driver_that_hangs_on_hello_times_out_at_start() -> None:
    started = time.monotonic()
    with pytest.raises(PortFault) as info:
        SubprocessPort(bad("hang", "hello"), timeout=TIMEOUT)
    assert info.value.kind == "timeout"
    assert "hello (id 1)" in info.value.detail
    assert time.monotonic() - started < TIMEOUT + SLACK


def test_a_program_that_cannot_start_is_a_start_fault() -> None:
    with pytest.raises(PortFault) as info:
        SubprocessPort(["/nonexistent/driver-program"], timeout=TIMEOUT)
    assert info.value.kind == "start"


def test_a_driver_speaking_another_protocol_is_a_start_fault() -> None:
    with pytest.raises(PortFault) as info:
        SubprocessPort(bad("wrong_protocol"), timeout=TIMEOUT)
    assert info.value.kind == "start"
    assert "sessionlog-driver/9" in info.value.detail


def test_a_request_the_driver_does_not_read_times_out_while_writing() -> None:
    port = SubprocessPort(bad("deaf"), timeout=TIMEOUT)
    try:
        started = time.monotonic()
        with pytest.raises(PortFault) as info:
            port.call("load", jsonl="x" * (4 << 20))
        assert info.value.kind == "timeout"
        assert "writing the request" in info.value.detail
        assert "deaf: no longer reading" in info.value.stderr_tail
        assert time.monotonic() - started < TIMEOUT + SLACK
    finally:
        port.close()


def test_a_driver_writing_instead_of_reading_is_stopped_at_the_reply_limit() -> None:
    port = SubprocessPort(bad("deaf", "babble"), timeout=5.0, max_reply_bytes=1 << 20)
    try:
        started = time.monotonic()
        with pytest.raises(PortFault) as info:
            port.call("load", jsonl="x" * (4 << 20))
        assert info.value.kind == "oversize"
        assert "before reading the request" in info.value.detail
        assert time.monotonic() - started < SLACK
    finally:
        port.close()


def test_a_chatty_stderr_never_blocks_the_driver_and_only_its_tail_is_kept() -> None:
    with SubprocessPort(bad("chatty"), timeout=5.0) as port:
        for _ in range(3):
            assert isinstance(port.call("state"), Ok)
        # stderr is drained by a reader thread, so the last line may land just after the reply.
        deadline = time.monotonic() + SLACK
        while not (tail := port.stderr_tail()).endswith("chatty: last line\n") and time.monotonic() < deadline:
            time.sleep(0.01)
        assert tail.endswith("chatty: last line\n")
        assert len(tail.encode()) <= STDERR_TAIL_BYTES


def test_close_kills_a_driver_that_ignores_bye() -> None:
    port = SubprocessPort(bad("ignore_bye", "bye"), timeout=5.0)
    pid = port.pid
    assert pid is not None
    started = time.monotonic()
    port.close()
    assert time.monotonic() - started < SLACK
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert "ignore_bye: not leaving" in port.stderr_tail()
    port.close()  # closing twice is harmless


def test_close_lets_a_well_behaved_driver_exit_on_bye(model_subprocess: SubprocessPort) -> None:
    pid = model_subprocess.pid
    assert pid is not None
    model_subprocess.close()
    assert model_subprocess.pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_malformed_request_is_refused_before_sending_and_the_port_stays_alive(model_subprocess: SubprocessPort) -> None:
    with pytest.raises(InvalidRequest, match="'event' is a required property"):
        model_subprocess.call("append")
    with pytest.raises(InvalidRequest, match="not JSON"):
        model_subprocess.call("append", event={"type": "x", "seq": 0, "time": 0, "data": float("nan")})
    assert model_subprocess.alive
    assert isinstance(model_subprocess.call("state"), Ok)


def test_stats_count_requests_and_time(model_subprocess: SubprocessPort) -> None:
    before = model_subprocess.stats
    assert before.requests == 1  # hello
    for _ in range(5):
        model_subprocess.call("state")
    after = model_subprocess.stats
    assert after.requests == 6
    assert after.seconds > before.seconds
    assert isinstance(after, PortStats)


# The model as a subprocess must answer like the model in-process.

TURN = {"type": "turn/start", "seq": 0, "time": 5, "data": {"turn": 1}}
USER: dict[str, Any] = {
    "type": "user/message",
    "seq": 2,
    "time": 6,
    "data": {"id": "u1", "role": "user", "content": [{"type": "text", "text": "héllo ✓ \u0000"}], "source": {"kind": "user"}},
    "surfaceOp": "append",
}
HEADER = {
    "type": "request/header",
    "seq": 0,
    "time": 0,
    "data": {"header": {"config": {"provider": "p", "model": "m"}}, "reason": "initial"},
}
FACTS = {"first_request": True, "begins_series": False, "replaced_since_last_request": False}


def run_script(port: Port) -> list[Reply]:
    """A run over every op: valid input, refusals, edge values."""
    header = {"type": "session", "version": 1, "id": "s-1", "createdAt": 0, "delegationDepth": 0}
    v0_log = {
        "header": {**header, "version": 0},
        "events": [{"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1, "trigger": "user"}}],
    }
    replies = [
        port.call("reset", header=header),
        port.call("seed", events=[TURN]),
        port.call("append", event=USER),
        port.call("append", event={**USER, "seq": 3, "data": {**USER["data"], "extra": 2**64}}),  # beyond 64 bits
        port.call("append", event={**USER, "seq": 3, "time": 2**53}),  # beyond the safe range
        port.call("append", event={**USER, "seq": 3, "data": {**USER["data"], "x": -0.0}}),
        port.call("append", event="not an event"),
        port.call("append", event={**TURN, "seq": 3}),
        port.call("state"),
        port.call("save"),
        port.call("fold_surface", events=[{**USER, "seq": 0}]),
        port.call("fold_header", events=[HEADER]),
        port.call("header_decision", events=[], header={"config": {"provider": "p", "model": "m"}}, instance=FACTS),
        port.call("header_decision", events=[], header="not a header", instance=FACTS),
        port.call("repair", events=[TURN]),
        port.call("cuts", events=[]),
        port.call("cuts", events=[{**USER, "seq": 0}]),
        port.call("upgrade_v0", log=v0_log),
    ]
    saved = replies[9]
    assert isinstance(saved, Ok)
    replies.append(port.call("load", jsonl=saved.result["jsonl"] + '{"type":"turn'))
    replies.append(port.call("load", jsonl="not jsonl"))
    replies.append(port.call("seed", events=[{"seq": 0}]))
    replies.append(port.call("state"))
    return replies


def canonical(reply: Reply) -> str:
    """A reply as canonical JSON text, so that ``1`` and ``1.0`` or ``true`` and ``1`` do not compare equal."""
    if isinstance(reply, Refused):
        return json.dumps(["refused", reply.code, reply.message])
    return json.dumps(["ok", reply.result], sort_keys=True, ensure_ascii=False)


def test_the_model_subprocess_answers_like_the_model_in_process(model_subprocess: SubprocessPort) -> None:
    expected = run_script(InProcessPort(ModelDriver()))
    got = run_script(model_subprocess)
    assert [canonical(r) for r in got] == [canonical(r) for r in expected]
    assert any(isinstance(r, Refused) for r in expected) and any(isinstance(r, Ok) for r in expected)


def test_port_for_builds_each_kind_of_port() -> None:
    assert isinstance(port_for("model"), InProcessPort)
    port = port_for(f"{sys.executable} -m sessionlog_spec.protocol.model_driver")
    try:
        assert isinstance(port, SubprocessPort)
        assert port.hello.name == ModelDriver.name
    finally:
        port.close()


def test_port_for_python_explains_a_missing_seqlog_package() -> None:
    try:
        import seqlog.driver  # noqa: F401, PLC0415
    except ImportError:
        with pytest.raises(PortUnavailable, match="seqlog"):
            port_for("python")
    else:
        assert isinstance(port_for("python"), InProcessPort)
