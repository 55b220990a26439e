"""Logs written by upstream's real JSONL writer read the same in the model, seqlog and check-log.

``@deepseek-ai/dsh-session-persistence-jsonl@0.1.0-rc.8`` (Node 22, from the npm registry) writes a
session with runs of streamed chunks; it packs them into chunk rows by default.  Its text, as
written (format version 0) and with the v1 version the driver reports, must give the same events
in the model's reader, seqlog's reader and ``check-log``.  Skipped when the Node 22 binary or the
persistence package is not installed (``cd ports/dsh-session && npm ci``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from seqlog import read_text
from seqlog.codec import encode_event_line
from sessionlog_spec.model.event import encode_event
from sessionlog_spec.model.load import ReadLog, read_log
from sessionlog_spec.protocol.messages import Ok
from sessionlog_spec.suite.agent.builder import SessionBuilder, basic_header
from sessionlog_spec.suite.ports.subprocess import SubprocessPort

ROOT = Path(__file__).resolve().parents[2]
PORT_DIR = ROOT / "ports" / "dsh-session"
NODE22 = PORT_DIR / "node_modules" / ".bin" / "node"

pytestmark = pytest.mark.skipif(
    not (NODE22.exists() and (PORT_DIR / "node_modules" / "@deepseek-ai" / "dsh-session-persistence-jsonl").is_dir()),
    reason="Node 22 or the persistence package is missing: run `cd ports/dsh-session && npm ci`",
)


@pytest.fixture(scope="module")
def upstream() -> Iterator[SubprocessPort]:
    port = SubprocessPort([str(NODE22), str(PORT_DIR / "driver.mjs")], timeout=60.0)
    yield port
    port.close()


def streamed_session() -> SessionBuilder:
    """Two turns with streamed answers (runs of four text chunks), the second asking for a tool call."""
    b = SessionBuilder()
    b.streamed_turn("Explain the failure.", ("The ", "loop ", "never ", "ends."), (), basic_header(), "initial")
    b.streamed_turn("Fix it.", ("I ", "will ", "read ", "it."), ("call-1",))
    return b


def written_by_upstream(upstream: SubprocessPort) -> str:
    assert "jsonl" in upstream.hello.capabilities
    b = streamed_session()
    assert isinstance(upstream.call("reset"), Ok)
    assert isinstance(upstream.call("seed", events=b.events), Ok)
    saved = upstream.call("save")
    assert isinstance(saved, Ok), saved
    text: str = saved.result["jsonl"]
    return text


@pytest.mark.parametrize("version", [0, 1])
def test_inv_jsonl_9_upstreams_packed_log_reads_the_same_everywhere(
    upstream: SubprocessPort, version: int, tmp_path: Path
) -> None:
    text = written_by_upstream(upstream)
    assert text.count('"type":"text-chunks"') == 2, "upstream's writer packs each run of four chunks"
    if version == 0:
        text = text.replace('"version":1', '"version":0', 1)
    model = read_log(text)
    assert isinstance(model, ReadLog), model
    events = [encode_event(e) for e in model.state.events]
    assert sum(e["type"] == "assistant/chunk" for e in events) == 8
    seqlog = read_text(text)
    assert [json.loads(encode_event_line(e)) for e in seqlog.session.events] == events
    path = tmp_path / "upstream.jsonl"
    path.write_text(text, encoding="utf-8")
    checked = subprocess.run(
        [sys.executable, "-m", "sessionlog_spec", "check-log", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
