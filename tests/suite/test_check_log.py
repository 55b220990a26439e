"""check-log: the stored form as the model's reader reads it, streaming, several paths, exit statuses."""

from __future__ import annotations

import contextlib
import gzip
import io
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import strategies as S
import zstandard
from conformance_helpers import ROOT, run_cli
from hypothesis import given
from hypothesis import strategies as st

from seqlog import SessionStore
from seqlog.codec import read_bytes as seqlog_read_bytes
from seqlog.errors import SeqlogError
from seqlog.zstdlog import FrameWriter, read_frames, single_frame
from sessionlog_spec.model.event import decode_event
from sessionlog_spec.model.json_value import JsonObject, as_object, freeze, thaw
from sessionlog_spec.model.jsonl import decode_text, encode_jsonl, encode_line
from sessionlog_spec.model.load import read_log, save_session
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.suite import check_log as C
from sessionlog_spec.suite import expectations
from sessionlog_spec.suite.agent.builder import SessionBuilder
from sessionlog_spec.suite.agent.crashes import CORRUPTIONS, damage_line
from sessionlog_spec.suite.compressed import ZSTD_MAGIC
from sessionlog_spec.vectors.realistic import HEADER_LINE, realistic_events

HEADER: JsonObject = as_object(freeze(HEADER_LINE))  # type: ignore[assignment]


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


def _lines(text: str) -> list[str]:
    return text.split("\n")[:-1]


def _joined(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


def chunky_session(turns: int = 3) -> SessionBuilder:
    """Closed turns whose steps stream text, reasoning and tool-call chunk runs, then a compaction."""
    b = SessionBuilder()
    for turn in range(turns):
        call = f"call-{turn}"
        b.turn_start()
        b.user_message(f"Request {turn}")
        b.step_start()
        trace = b.state.trace
        for kind, text in (("reasoning-delta", "Think"), ("text-delta", "Let")):
            for piece in (text, " about", " it", "."):
                chunk = {"type": kind, "index": 0, "text": piece}
                b.event("assistant/chunk", {"turn": trace.open_turn, "step": trace.open_step, "chunk": chunk})
        for piece in ('{"pa', 'th": ', '"a.py"}'):
            chunk = {"type": "tool-call-delta", "index": 1, "id": call, "name": "read_file", "argumentsDelta": piece}
            b.event("assistant/chunk", {"turn": trace.open_turn, "step": trace.open_step, "chunk": chunk})
        b.assistant_message("Let me look.", [call])
        b.tool_call(call)
        b.tool_result(call)
        b.step_end()
        b.turn_end()
    # A compaction of the whole surface citing every earlier seq: stored as one range below.
    nodes = b.state.surface.nodes
    data = {"id": "summary", "role": "user", "content": [{"type": "text", "text": "Summary."}], "source": {"kind": "user"}}
    op = {"op": "replace", "start": nodes[0], "end": nodes[-1]}
    b.event("user/message", data, surfaceOp=op, sourceEventSeqs=list(range(b.next_seq)))
    return b


def _ranged(text: str) -> str:
    """Every strictly increasing ``sourceEventSeqs`` written as ``[start, end]`` ranges, one per run."""
    out = []
    for line in _lines(text):
        try:
            value = json.loads(line)
        except ValueError:
            value = None  # a damaged line stays as it is
        sources = value.get("sourceEventSeqs") if isinstance(value, dict) else None
        if isinstance(sources, list) and sources and all(a < b for a, b in itertools.pairwise(sources)):
            runs: list[list[int]] = []
            for seq in sources:
                if runs and runs[-1][1] == seq - 1:
                    runs[-1][1] = seq
                else:
                    runs.append([seq, seq])
            value["sourceEventSeqs"] = runs
            out.append(encode_line(value))
        else:
            out.append(line)
    return _joined(out)


def chunky_text(packed: bool = True, ranged: bool = True) -> str:
    text = save_session(HEADER, chunky_session().state, packed=packed)
    return _ranged(text) if ranged else text


def _run(*paths: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = C.run([str(p) for p in paths], out, err)
    return status, out.getvalue(), err.getvalue()


def _run_strict(*paths: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = C.run([str(p) for p in paths], out, err, strict=True)
    return status, out.getvalue(), err.getvalue()


def _line_of(violation: Violation) -> int:
    found = re.match(r"line (\d+)", violation.message)
    assert found, violation.message
    return int(found.group(1))


def _same_verdict(text: str, check: C.LogCheck) -> None:
    """``check`` refuses the log exactly when ``read_log`` does, with its code, line and message."""
    expected = read_log(text)
    assert check.unreadable is None
    if isinstance(expected, Violation):
        assert check.verdict is not None, (expected, check)
        assert (check.verdict.code, check.verdict.message) == (expected.code.value, C.bounded(expected.message))
        if expected.message.startswith("line "):
            assert check.verdict.line == _line_of(expected)
    else:
        assert check.verdict is None and check.violations == [], check


def _in_chunks(text: str, size: int) -> Iterator[bytes]:
    data = text.encode("utf-8")
    return (data[i : i + size] for i in range(0, len(data), size))


# -- the stored form -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["packed", "packed+ranged", "plain+ranged", "packed+ranged+crlf"])
def test_packed_ranged_and_crlf_logs_are_accepted(tmp_path: Path, layout: str) -> None:
    text = chunky_text(packed="packed" in layout, ranged="ranged" in layout)
    if "packed" in layout:
        assert '"text-chunks"' in text and '"reasoning-chunks"' in text and '"tool-call-chunks"' in text
    if "ranged" in layout:
        assert '"sourceEventSeqs":[[0,' in text
    if "crlf" in layout:
        text = text.replace("\n", "\r\n")
    status, out, err = _run(_write(tmp_path / "log.jsonl", text))
    assert (status, err) == (0, ""), out
    assert out.splitlines()[0].endswith(f"log.jsonl: ok: {len(_lines(text))} line(s) read, none dropped")
    assert C.check_log(text).events == len(chunky_session().state.events)


def test_events_of_a_packed_row_are_reported_at_the_row_line() -> None:
    lines = _lines(chunky_text())
    row = next(i for i, line in enumerate(lines) if '"text-chunks"' in line)
    packed = json.loads(lines[row])
    packed["data"]["turn"] = 7  # every chunk of the run names a turn that is not open
    lines[row] = encode_line(packed)
    text = _joined(lines)
    check = C.check_log(text)
    assert check.verdict is not None and check.verdict.line == row + 1
    assert check.verdict.code == "EVENT_OUTSIDE_STEP", check.verdict
    _same_verdict(text, check)


def test_a_damaged_uncommitted_suffix_is_a_note_and_exits_0(tmp_path: Path) -> None:
    lines = _lines(chunky_text())
    last_turn_start = max(i for i, line in enumerate(lines) if '"turn/start"' in line)
    lines = lines[: last_turn_start + 4]  # the last turn, cut after its first rows: no turn/end follows
    damaged = last_turn_start + 2
    lines[damaged] = lines[damaged][:25]
    status, out, _ = _run(_write(tmp_path / "crashed.jsonl", _joined(lines)))
    assert status == 0, out
    assert f"line {damaged + 1} is not valid JSON" in out and "a reader drops this row and the 1 line(s) after it" in out
    assert "repair closer" in out
    dropped = f"lines {damaged + 1} to {damaged + 2} (a damaged suffix no later turn/end commits)"
    assert out.splitlines()[-2].endswith(f"crashed.jsonl: ok: {len(lines)} line(s) read, 2 dropped: {dropped}"), out


@pytest.mark.parametrize("how", CORRUPTIONS)
def test_committed_damage_is_a_violation_naming_the_first_faulty_line(tmp_path: Path, how: str) -> None:
    text = chunky_text()
    damaged = damage_line(text, 3, how)  # line 4; the turn/ends after it prove it committed
    status, out, _ = _run(_write(tmp_path / "corrupt.jsonl", damaged))
    check = C.check_log(damaged)
    if how == "crlf":  # JSON whitespace: not damage at all
        assert status == 0 and check.verdict is None, out
        return
    assert status == 1, out
    assert check.verdict is not None and check.verdict.line == 4 and "proves it was committed" in check.verdict.message
    assert f"corrupt.jsonl:4: {check.verdict.code}:" in out
    _same_verdict(damaged, check)


def test_a_malformed_packed_row_before_a_turn_end_is_committed_damage() -> None:
    lines = _lines(chunky_text())
    row = next(i for i, line in enumerate(lines) if '"tool-call-chunks"' in line)
    packed = json.loads(lines[row])
    packed["data"]["dt"] = []  # one shorter than args no more
    lines[row] = encode_line(packed)
    text = _joined(lines)
    check = C.check_log(text)
    assert check.verdict is not None and (check.verdict.code, check.verdict.line) == ("JSONL_MALFORMED_LINE", row + 1)
    _same_verdict(text, check)


def test_a_forged_range_past_the_damage_is_not_expanded() -> None:
    lines = _lines(chunky_text())
    huge = 2**53 - 1
    forged = {"type": "user/message", "seq": huge, "time": 0, "data": {}, "sourceEventSeqs": [[0, huge - 1]]}
    lines[3:3] = ["garbage", encode_line(forged)]  # damage, a row claiming 2^53 sources, then the turn/ends
    text = _joined(lines)
    check = C.check_log(text)  # would need petabytes if the range were expanded
    assert check.verdict is not None and check.verdict.line == 4
    assert [(f.line, f.code) for f in check.violations if f.after_first] == [(5, "SEQ_NOT_CONTIGUOUS")]
    _same_verdict(text, check)


DAMAGES: dict[str, tuple[Callable[[list[str]], list[str]], int, list[int]]] = {
    # name: (damage, the first faulty line, the lines of the other findings)
    "lost": (lambda lines: [*lines[:5], *lines[6:]], 6, []),
    "stray": (lambda lines: [*lines[:5], "{}", *lines[5:]], 6, []),
    "twice": (lambda lines: [*lines[:5], lines[4], *lines[5:]], 6, []),
    "two-strays": (lambda lines: [*lines[:5], "", "garbage", *lines[5:]], 6, [7]),
}


@pytest.mark.parametrize("name", sorted(DAMAGES))
def test_one_damaged_place_is_reported_once_without_a_cascade(name: str) -> None:
    damage, faulty, others = DAMAGES[name]
    text = _joined(damage(_lines(chunky_text(packed=False))))
    check = C.check_log(text)
    assert check.verdict is not None and check.verdict.line == faulty
    assert [f.line for f in check.violations] == sorted([faulty, *others]), check.violations
    _same_verdict(text, check)


# -- the model's verdict, at scale -----------------------------------------------------------------------------


def _realistic_2000() -> list[dict[str, Any]]:
    events = realistic_events(turns=200, seed=7)[:2000]
    assert len(events) == 2000
    return events


def _stored(events: list[dict[str, Any]], header: object = HEADER_LINE) -> list[str]:
    return [encode_line(header), *(encode_line(e) for e in events)]


def _contract_violation(lines: list[str]) -> list[str]:
    raw = json.loads(lines[1001])
    raw["data"]["turn"] = 999
    return [*lines[:1001], encode_line(raw), *lines[1002:]]


def _retarget(lines: list[str], kind: str, occurrence: int, start: Callable[[int], int]) -> list[str]:
    """The ``occurrence``-th replace of a ``kind`` event re-aimed at ``start(its start)`` (provenance kept complete)."""
    found = [i for i, line in enumerate(lines) if f'"type":"{kind}"' in line and '"op":"replace"' in line]
    index = found[occurrence]
    raw = json.loads(lines[index])
    target = start(raw["surfaceOp"]["start"])
    raw["surfaceOp"]["start"] = target
    if raw["surfaceOp"]["end"] < target or kind == "tool/result":
        raw["surfaceOp"]["end"] = target
    raw["sourceEventSeqs"] = sorted({*raw["sourceEventSeqs"], target})
    return [*lines[:index], encode_line(raw), *lines[index + 1 :]]


VARIANTS: dict[str, Callable[[list[str]], list[str]]] = {
    "clean": lambda lines: lines,
    "contract-violation": _contract_violation,
    "committed-damage": lambda lines: [*lines[:700], lines[700][:30], *lines[701:]],
    "seq-gap": lambda lines: [*lines[:500], *lines[501:]],
    "uncommitted-damage": lambda lines: [*lines[:-3], "{}", *lines[-2:]],
    "violation-then-committed-damage": lambda lines: _contract_violation([*lines[:1500], "garbage", *lines[1501:]]),
    "compaction-from-a-shadowed-node": lambda lines: _retarget(lines, "user/message", 3, lambda _: 1),
    "rewrite-of-an-assistant-message": lambda lines: _retarget(lines, "tool/result", 5, lambda seq: seq - 2),
    "seed-too-long": lambda lines: [encode_line({**HEADER_LINE, "seedLength": 5000}), *lines[1:]],
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_2000_event_log_gets_the_verdict_of_read_log(variant: str) -> None:
    text = _joined(VARIANTS[variant](_stored(_realistic_2000())))
    whole = C.check_log(text)
    _same_verdict(text, whole)
    streamed = C.check_chunks(_in_chunks(text, 4093))  # lines assembled across chunk boundaries
    assert (streamed.verdict, streamed.violations, streamed.notes) == (whole.verdict, whole.violations, whole.notes)
    if variant == "clean":
        assert whole.events == 2000 and whole.verdict is None


def test_a_packed_2000_event_log_gets_the_verdict_of_read_log() -> None:
    events = [decode_event(raw) for raw in _realistic_2000()]
    text = encode_jsonl(HEADER, events, packed=True)  # type: ignore[arg-type]
    _same_verdict(text, C.check_log(text))


@st.composite
def damaged_logs(draw: st.DrawFn) -> str:
    """A drawn session, stored plain or packed, then possibly damaged, extended by a hostile event
    and closed by a turn/end that commits what came before."""
    builder = draw(S.sessions(max_actions=25))
    header = {**HEADER_LINE, "version": 1}
    lines = _lines(save_session(as_object(freeze(header)), builder.state, packed=draw(st.booleans())))  # type: ignore[arg-type]
    hostile = draw(st.sampled_from(["none", "candidate", "mutated"]))
    if hostile != "none":
        raw = draw(S.candidates(builder.next_seq) if hostile == "candidate" else S.mutated(draw(S.next_events(builder))))
        with contextlib.suppress(TypeError, ValueError):  # unless no JSON text can hold it (NaN, an opaque object)
            lines.append(encode_line(raw))
    if len(lines) > 1 and draw(st.booleans()):
        lines = _lines(damage_line(_joined(lines), draw(st.integers(1, len(lines) - 1)), draw(st.sampled_from(CORRUPTIONS))))
    if draw(st.booleans()):
        data = {"turn": 1, "reason": {"kind": "completed"}}
        lines.append(encode_line({"type": "turn/end", "seq": len(lines) + 5, "time": 0, "data": data}))
    text = _joined(lines)
    return text + draw(st.sampled_from(["", '{"type":"tu']))


@S.property_settings()
@given(damaged_logs())
def test_any_drawn_log_gets_the_verdict_of_read_log(text: str) -> None:
    _same_verdict(text, C.check_log(text))
    with mock.patch.object(C, "DECODED_SURFACE_EVENTS", 1):  # every surface lookup decodes its stored line
        _same_verdict(text, C.check_log(text))


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_surface_events_decoded_again_from_their_lines_give_the_same_verdict(
    variant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(C, "DECODED_SURFACE_EVENTS", 1)
    text = _ranged(_joined(VARIANTS[variant](_stored(_realistic_2000()))))
    _same_verdict(text, C.check_log(text))


@S.property_settings(scale=0.5)
@given(S.v0_logs())
def test_any_drawn_v0_log_gets_the_verdict_of_read_log(case: S.V0Case) -> None:
    text = _joined([encode_line(thaw(case.v0.header)), *(encode_line(thaw(e)) for e in case.v0.events)])
    check = C.check_log(text)
    expected = read_log(text)
    if isinstance(expected, Violation):
        assert check.verdict is not None and check.verdict.code == expected.code.value
    else:
        assert check.verdict is None and "v0-to-v1 edge converts it" in " ".join(check.notes)


# -- paths, streams and limits ------------------------------------------------------------------------------------


def test_several_files_and_a_directory_are_checked_in_order_with_one_summary_line(tmp_path: Path) -> None:
    clean = chunky_text()
    broken = _joined(_contract_violation(_stored(_realistic_2000())))
    logs = tmp_path / "logs"
    _write(logs / "b" / "two.jsonl", clean)
    _write(logs / "a.jsonl", broken)
    _write(logs / "b" / "notes.txt", "not a log")
    single = _write(tmp_path / "single.jsonl", clean)
    checked = run_cli("check-log", single, logs)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    out = checked.stdout.splitlines()
    lines = len(_lines(clean))
    assert out[0] == f"{single}: ok: {lines} line(s) read, none dropped"
    assert out[1].startswith(f"{logs / 'a.jsonl'}:1002: ")
    assert out[2] == f"{logs / 'a.jsonl'}: 1 violation(s): 2,001 line(s) read, none dropped"
    assert out[-2] == f"{logs / 'b' / 'two.jsonl'}: ok: {lines} line(s) read, none dropped"
    assert out[-1] == "check-log: 3 log(s) checked: 2 clean, 0 with dropped lines, 1 with violations, 0 unreadable"
    assert "notes.txt" not in checked.stdout + checked.stderr


def test_an_unreadable_path_exits_2_unless_a_log_has_violations(tmp_path: Path) -> None:
    clean = _write(tmp_path / "clean.jsonl", chunky_text())
    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    status, out, err = _run(clean, tmp_path / "missing.jsonl", empty_dir)
    assert status == 2
    assert f"{tmp_path / 'missing.jsonl'}: cannot read: PATH_NOT_FOUND: No such file or directory" in err
    no_logs = "no *.jsonl, *.jsonl.zst or *.jsonl.gz files in this directory"
    assert f"{empty_dir}: cannot read: NO_LOGS_IN_DIRECTORY: {no_logs}" in err
    assert out.splitlines()[-1] == "check-log: 3 log(s) checked: 1 clean, 0 with dropped lines, 0 with violations, 2 unreadable"
    violating = _write(tmp_path / "bad.jsonl", _joined(_contract_violation(_stored(_realistic_2000()))))
    assert _run(clean, tmp_path / "missing.jsonl", violating)[0] == 1
    assert _run(clean)[0] == 0


def test_a_fifo_is_refused_with_exit_2_without_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    checked = run_cli("check-log", fifo, timeout=60)  # nobody writes: opening it for a read would block
    assert checked.returncode == 2, checked.stdout + checked.stderr
    refusal = "cannot read: NOT_A_REGULAR_FILE: a FIFO, not a regular file; give it as '-' (standard input) to read it"
    assert checked.stderr.strip() == f"{fifo}: {refusal}"
    walked = run_cli("check-log", tmp_path, timeout=60)
    assert walked.returncode == 2 and "a FIFO" in walked.stderr
    assert "Traceback" not in checked.stderr + walked.stderr


def test_a_character_device_is_refused() -> None:
    status, _, err = _run("/dev/zero")
    assert status == 2 and "/dev/zero: cannot read: NOT_A_REGULAR_FILE: a character device, not a regular file" in err


def test_standard_input_is_read_in_chunks() -> None:
    text = chunky_text()
    command = [sys.executable, "-m", "spec", "check-log", "-"]
    done = subprocess.run(command, cwd=ROOT, input=text.encode(), capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.decode().splitlines()[0] == f"<stdin>: ok: {len(_lines(text))} line(s) read, none dropped"


def test_an_over_long_line_makes_the_log_unreadable_not_a_memory_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(C, "MAX_LINE_BYTES", 1000)
    monkeypatch.setattr(C, "READ_CHUNK_BYTES", 64)
    lines = _lines(chunky_text())
    lines[5] = lines[5][:-1] + ',"pad":"' + "x" * 2000 + '"}'
    status, out, err = _run(_write(tmp_path / "long.jsonl", _joined(lines)))
    assert status == 2
    refusal = (
        "cannot read: LINE_OVER_LIMIT: line 6 is longer than 1,000 bytes (the checker's line limit); the log was not checked"
    )
    assert err.strip() == f"{tmp_path / 'long.jsonl'}:6: {refusal}"
    assert out.splitlines()[-1].endswith("0 clean, 0 with dropped lines, 0 with violations, 1 unreadable")
    endless = C.check_chunks(itertools.repeat(b"\0" * 64))  # /dev/zero through stdin: no newline ever
    assert endless.unreadable is not None and endless.unreadable.startswith("line 1 is longer than 1,000 bytes")


def test_a_log_without_a_complete_line_has_no_header() -> None:
    check = C.check_log('{"type":"session"')
    assert check.verdict is not None and (check.verdict.line, check.verdict.code) == (1, "JSONL_HEADER_MISSING")
    assert "torn final line" in check.notes[0]


# -- hostile input: every bad input gets a coded answer, in bounded time and memory ---------------------------------


HOSTILE_SECONDS = 10.0
HOSTILE_PEAK_MB = 300.0
GIB = 1 << 30


@dataclass(frozen=True)
class Ran:
    """One ``check-log`` child: its exit status, output, wall time and peak resident memory."""

    status: int
    out: str
    err: str
    seconds: float
    peak_mb: float


_MEASURED = """\
import os, subprocess, sys
report, command = sys.argv[1], sys.argv[2:]
child = subprocess.Popen(command)
_, status, usage = os.wait4(child.pid, 0)
with open(report, "w") as file:
    file.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status) % 256)
"""
"""Runs a command and writes its peak RSS (KiB).  A fresh small interpreter starts it, because a
child's ``ru_maxrss`` also counts the image it was forked from (pytest's, which may be large)."""


def _check_log_child(args: list[str], stdin: Path | None = None, env: dict[str, str] | None = None) -> Ran:
    """``check-log ARGS`` in a child process, killed after :data:`HOSTILE_SECONDS`, with its peak RSS."""
    with contextlib.ExitStack() as stack:
        out, err = stack.enter_context(tempfile.TemporaryFile()), stack.enter_context(tempfile.TemporaryFile())
        source = stack.enter_context(stdin.open("rb")) if stdin is not None else subprocess.DEVNULL
        report = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "peak"
        command = [sys.executable, "-c", _MEASURED, str(report), sys.executable, "-m", "spec", "check-log", *args]
        start = time.monotonic()
        child = subprocess.Popen(
            command, cwd=ROOT, stdin=source, stdout=out, stderr=err, env={**os.environ, **(env or {})}, start_new_session=True
        )
        try:
            status = child.wait(timeout=HOSTILE_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            pytest.fail(f"check-log {args} did not end within {HOSTILE_SECONDS} s")
        seconds = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        return Ran(status, out.read().decode(), err.read().decode(), seconds, int(report.read_text()) / 1024)


def _small_log() -> list[bytes]:
    """A short clean log, one line per row: the header line, then line 2 opening a turn and line 3 a user message."""
    lines = [line.encode() for line in _lines(save_session(HEADER, chunky_session(turns=1).state))]
    assert b'"type":"user/message"' in lines[2] and b'"text":"Request 0"' in lines[2]
    return lines


def _log_file(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def _user_line_with(member: bytes) -> list[bytes]:
    """The small log with ``member`` written into line 3's text block."""
    lines = _small_log()
    lines[2] = lines[2].replace(b'"text":"Request 0"', b'"text":"Request 0",' + member, 1)
    return lines


def _sparse(path: Path, prefix: bytes, size: int) -> Path:
    """``prefix`` then NUL bytes up to ``size``, as a sparse file (no disk space, built at once)."""
    with path.open("wb") as file:
        file.write(prefix)
        file.truncate(size)
    return path


@dataclass(frozen=True)
class Hostile:
    """One hostile input: how to make it (the arguments and, for '-', the file on standard input)
    and the answer expected: the exit status and a line of the output naming the code and the line."""

    make: Callable[[Path], tuple[list[str], Path | None]]
    status: int
    answer: str
    """A regular expression one output line must match in full; ``{path}`` is the first argument."""
    env: dict[str, str] = field(default_factory=dict)
    needs_non_root: bool = False


def _path(make: Callable[[Path], Path]) -> Callable[[Path], tuple[list[str], Path | None]]:
    return lambda tmp: ([str(make(tmp))], None)


def _fifo(tmp: Path) -> Path:
    os.mkfifo(tmp / "pipe.jsonl")
    return tmp / "pipe.jsonl"


def _empty_dir(tmp: Path) -> Path:
    (tmp / "logs").mkdir()
    (tmp / "logs" / "notes.txt").write_text("not a log")
    return tmp / "logs"


def _unreadable(tmp: Path) -> Path:
    path = _log_file(tmp / "secret.jsonl", _small_log())
    path.chmod(0)
    return path


def _huge_seqs(tmp: Path) -> Path:
    """Committed damage, then 60 rows each quoting a 5 MB seq: 300 MB that every finding would quote whole."""
    lines = _small_log()
    turn_end = next(line for line in lines if b'"type":"turn/end"' in line)
    path = tmp / "quoting.jsonl"
    with path.open("wb") as file:
        file.write(lines[0] + b"\ngarbage\n")
        for _ in range(60):
            file.write(b'{"type":"turn/start","seq":"' + b"x" * 5_000_000 + b'","time":0,"data":{"turn":1}}\n')
        file.write(turn_end + b"\n")
    return path


def _zstd_bomb(path: Path, prefix: bytes, size: int) -> Path:
    """``prefix`` then NUL bytes up to ``size``, zstd-compressed (a few kilobytes for a gibibyte)."""
    compressor = zstandard.ZstdCompressor().compressobj()
    with path.open("wb") as file:
        file.write(compressor.compress(prefix))
        block = b"\0" * (1 << 20)
        for _ in range((size - len(prefix)) >> 20):
            file.write(compressor.compress(block))
        file.write(compressor.flush())
    return path


def _gzip_bomb(path: Path, size: int) -> Path:
    """``size`` NUL bytes, gzip-compressed (deflate keeps to about 1:1000)."""
    with gzip.open(path, "wb", compresslevel=1) as file:
        block = b"\0" * (1 << 20)
        for _ in range(size >> 20):
            file.write(block)
    return path


DIGITS_5000 = b'"n":' + b"9" * 5000
LINE_CAP_BYTES = 64 << 20
NOT_LOSSLESS = (
    r"{path}:3: JSON_NOT_LOSSLESS: line 3: event seq 1 data is not lossless JSON: \$\.content\[0\]\.n is not a finite number"
)

HOSTILE: dict[str, Hostile] = {
    "dev-zero-by-path": Hostile(
        lambda tmp: (["/dev/zero"], None),
        2,
        r"/dev/zero: cannot read: NOT_A_REGULAR_FILE: a character device, not a regular file; give it as '-' .*",
    ),
    "dev-zero-on-stdin": Hostile(
        lambda tmp: (["-"], Path("/dev/zero")),
        2,
        r"<stdin>:1: cannot read: LINE_OVER_LIMIT: line 1 is longer than 67,108,864 bytes .*",
    ),
    "fifo-without-a-writer": Hostile(
        _path(_fifo), 2, r"{path}: cannot read: NOT_A_REGULAR_FILE: a FIFO, not a regular file; give it as '-' .*"
    ),
    "sparse-2-gib-of-nul": Hostile(
        _path(lambda tmp: _sparse(tmp / "sparse.jsonl", b"", 2 * GIB)),
        2,
        r"{path}:1: cannot read: LINE_OVER_LIMIT: line 1 is longer than 67,108,864 bytes .*",
    ),
    "one-2-gib-line": Hostile(
        _path(lambda tmp: _sparse(tmp / "giant.jsonl", b"\n".join(_small_log()[:2]) + b'\n{"type":"user/message","d', 2 * GIB)),
        2,
        r"{path}:3: cannot read: LINE_OVER_LIMIT: line 3 is longer than 67,108,864 bytes .*",
    ),
    "a-line-over-the-cap": Hostile(
        _path(lambda tmp: _sparse(tmp / "long.jsonl", _small_log()[0] + b"\n", len(_small_log()[0]) + 2 + LINE_CAP_BYTES)),
        2,
        r"{path}:2: cannot read: LINE_OVER_LIMIT: line 2 is longer than 67,108,864 bytes .*",
    ),
    "invalid-utf-8-in-a-string": Hostile(
        _path(
            lambda tmp: _log_file(tmp / "utf8.jsonl", [row.replace(b"Request 0", b"\xff\xed\xa0\x80") for row in _small_log()])
        ),
        0,  # read as U+FFFD, as the released reader reads it: accepted, and the line is named
        r"{path}: note: line 3: bytes that are not UTF-8 are read as U\+FFFD, as the released reader decodes them",
    ),
    "invalid-utf-8-outside-a-string": Hostile(
        _path(lambda tmp: _log_file(tmp / "utf8.jsonl", [*_small_log()[:2], b"\xff" + _small_log()[2], *_small_log()[3:]])),
        1,
        r"{path}:3: JSONL_MALFORMED_LINE: line 3 is not valid JSON .* proves it was committed\)",
    ),
    **{
        f"5000-digit-integer-digit-limit-{limit}": Hostile(
            _path(lambda tmp: _log_file(tmp / "digits.jsonl", _user_line_with(DIGITS_5000))),
            1,
            NOT_LOSSLESS,
            env={"PYTHONINTMAXSTRDIGITS": str(limit)},
        )
        for limit in (0, 4300, 640)
    },
    "100000-digit-integer-no-digit-limit": Hostile(
        _path(lambda tmp: _log_file(tmp / "digits.jsonl", _user_line_with(b'"n":' + b"9" * 100_000))),
        1,
        NOT_LOSSLESS,
        env={"PYTHONINTMAXSTRDIGITS": "0"},
    ),
    "10-mb-of-digits-no-digit-limit": Hostile(
        _path(lambda tmp: _log_file(tmp / "digits.jsonl", _user_line_with(b'"n":' + b"9" * 10_000_000))),
        1,
        NOT_LOSSLESS,
        env={"PYTHONINTMAXSTRDIGITS": "0"},
    ),
    "zstd-bomb-of-a-1-gib-line": Hostile(
        _path(lambda tmp: _zstd_bomb(tmp / "bomb.jsonl.zst", b"", GIB)),
        2,
        r"{path}:1: cannot read: LINE_OVER_LIMIT: line 1 is longer than 67,108,864 bytes .*",
    ),
    "zstd-bomb-after-the-header-line": Hostile(
        _path(lambda tmp: _zstd_bomb(tmp / "bomb.jsonl", _small_log()[0] + b"\n", GIB)),
        2,
        r"{path}:2: cannot read: LINE_OVER_LIMIT: line 2 is longer than 67,108,864 bytes .*",
    ),
    "gzip-bomb-of-a-256-mib-line": Hostile(
        _path(lambda tmp: _gzip_bomb(tmp / "bomb.jsonl.gz", 256 << 20)),
        2,
        r"{path}:1: cannot read: LINE_OVER_LIMIT: line 1 is longer than 67,108,864 bytes .*",
    ),
    "a-body-of-100000-unparsable-lines": Hostile(
        _path(lambda tmp: _log_file(tmp / "garbage.jsonl", [_small_log()[0], *[b"not json"] * 100_000])),
        0,  # the released reader drops the suffix; the log's line says so
        r"{path}: ok: 100,001 line\(s\) read, 100,000 dropped: lines 2 to 100,001 \(a damaged suffix no later turn/end commits\)",
    ),
    "empty-file": Hostile(
        _path(lambda tmp: _sparse(tmp / "empty.jsonl", b"", 0)),
        1,
        r"{path}:1: JSONL_HEADER_MISSING: log has no complete header line",
    ),
    "directory-without-logs": Hostile(
        _path(_empty_dir),
        2,
        r"{path}: cannot read: NO_LOGS_IN_DIRECTORY: no \*\.jsonl, \*\.jsonl\.zst or \*\.jsonl\.gz files in this directory",
    ),
    "missing-path": Hostile(
        _path(lambda tmp: tmp / "missing.jsonl"), 2, r"{path}: cannot read: PATH_NOT_FOUND: No such file or directory"
    ),
    "no-read-permission": Hostile(
        _path(_unreadable), 2, r"{path}: cannot read: PERMISSION_DENIED: Permission denied", needs_non_root=True
    ),
    "findings-quoting-huge-values": Hostile(
        _path(_huge_seqs),
        1,
        # Each message is cut after 2,000 characters: the finding quotes 1,987 of the 5,000,000 x.
        r"{path}:4: SEQ_NOT_CONTIGUOUS: line 4: seq 'x{1987}… \(4,998,\d\d\d more characters\)"
        r" \(state-free check after the first violation\)",
    ),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_every_hostile_input_gets_a_coded_answer_in_bounded_time_and_memory(name: str, tmp_path: Path) -> None:
    row = HOSTILE[name]
    if row.needs_non_root and os.geteuid() == 0:
        pytest.skip("root reads any file: permission cannot be denied")
    args, stdin = row.make(tmp_path)
    ran = _check_log_child(args, stdin, row.env)
    shown = f"exit {ran.status}\n{ran.out[-3000:]}\n{ran.err[-3000:]}"
    assert ran.status == row.status, shown
    answer = re.compile(row.answer.replace("{path}", re.escape(args[0])))
    assert any(answer.fullmatch(line) for line in (ran.out + ran.err).splitlines()), shown
    assert "Traceback" not in ran.err, shown
    summary = ran.out.splitlines()[-1]
    assert summary.startswith("check-log: 1 log(s) checked: "), shown
    assert ("1 unreadable" if row.status == 2 else "0 unreadable") in summary.split(";")[0], shown
    assert ran.seconds < HOSTILE_SECONDS and ran.peak_mb < HOSTILE_PEAK_MB, (ran.seconds, ran.peak_mb)
    print(f"{name}: {ran.seconds:.2f} s, {ran.peak_mb:.0f} MB peak")


def _opened_paths(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths ``os.open`` is asked for from now on (the call goes through)."""
    opened: list[str] = []
    real_open = os.open

    def recording_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        opened.append(str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", recording_open)
    return opened


def test_a_fifo_or_a_device_is_judged_by_stat_and_never_opened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fifo = _fifo(tmp_path)
    opened = _opened_paths(monkeypatch)
    for path, kind in ((str(fifo), "a FIFO"), ("/dev/zero", "a character device")):
        check = C.check_path(path)
        assert (check.unreadable_code, check.unreadable_line) == (C.Unchecked.NOT_A_REGULAR_FILE, None)
        assert check.unreadable is not None and check.unreadable.startswith(f"{kind}, not a regular file")
    assert opened == []  # opening a FIFO without a writer blocks; opening a device may act on it


def test_a_path_that_became_a_fifo_after_its_stat_is_opened_without_blocking_and_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fifo = _fifo(tmp_path)
    real_stat = os.stat
    regular = real_stat(_log_file(tmp_path / "regular.jsonl", _small_log()))
    monkeypatch.setattr(os, "stat", lambda path, *a, **k: regular if str(path) == str(fifo) else real_stat(path, *a, **k))
    done: list[C.LogCheck] = []
    worker = threading.Thread(target=lambda: done.append(C.check_path(str(fifo))), daemon=True)
    worker.start()
    worker.join(timeout=HOSTILE_SECONDS)
    if worker.is_alive():  # blocked in open: a writer releases it, then the test fails
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(timeout=HOSTILE_SECONDS)
        pytest.fail("opening a FIFO blocked: the path was not opened with O_NONBLOCK")
    assert done[0].unreadable_code is C.Unchecked.NOT_A_REGULAR_FILE, done[0]


def test_an_os_error_is_a_coded_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Permission (testable even as root), and a read of standard input failing midway."""
    denied = _log_file(tmp_path / "secret.jsonl", _small_log())
    real_open = os.open

    def refusing_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if str(path) == str(denied):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing_open)
    check = C.check_path(str(denied))
    assert (check.unreadable_code, check.unreadable) == (C.Unchecked.PERMISSION_DENIED, "Permission denied")

    class FailingStream(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def readinto(self, buffer: Any) -> int:
            raise OSError(5, "Input/output error")

    check = C.check_path(C.STDIN, stdin=FailingStream())  # type: ignore[arg-type]
    assert (check.unreadable_code, check.unreadable) == (C.Unchecked.READ_FAILED, "Input/output error")


def test_a_directory_that_cannot_be_walked_is_named_not_reported_empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    logs = tmp_path / "logs"
    (logs / "locked").mkdir(parents=True)
    _log_file(logs / "a.jsonl", _small_log())
    real_scandir = os.scandir

    def refusing_scandir(path: Any = ".") -> Any:
        if str(path) == str(logs / "locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", refusing_scandir)
    status, out, err = _run(logs)
    assert status == 2, out + err  # one clean log, one place that could not be read: not a clean run
    assert out.splitlines()[0] == f"{logs / 'a.jsonl'}: ok: {len(_small_log())} line(s) read, none dropped"
    assert err.strip() == f"{logs / 'locked'}: cannot read: PERMISSION_DENIED: Permission denied"
    assert out.splitlines()[-1] == "check-log: 2 log(s) checked: 1 clean, 0 with dropped lines, 0 with violations, 1 unreadable"


# -- the model, seqlog and check-log give bad bytes and huge numbers the same verdict --------------------------------


def _three_verdicts(data: bytes) -> tuple[tuple[str, int] | None, tuple[str, int] | None, C.LogCheck]:
    """(code, line) of the model's and seqlog's refusal (``None``: accepted), and check-log's whole answer;
    the model's and seqlog's messages must say the same where both name a stored value."""
    model = read_log(decode_text(data)[0])
    model_verdict = (model.code.value, _line_of(model)) if isinstance(model, Violation) else None
    try:
        seqlog_read_bytes(data)
        seqlog_verdict = None
    except SeqlogError as error:
        found = re.search(r"\bline (\d+)", error.message)
        seqlog_verdict = (error.code.value, int(found.group(1)) if found else 0)
        if isinstance(model, Violation) and model.code.value in ("JSON_NOT_LOSSLESS", "ENVELOPE_BAD_TIME"):
            assert error.message == model.message
    check = C.check_chunks(data[i : i + 4096] for i in range(0, len(data), 4096))
    if isinstance(model, Violation):
        assert check.verdict is not None and check.verdict.message == C.bounded(model.message), (model, check.verdict)
    return model_verdict, seqlog_verdict, check


@pytest.mark.parametrize("digits", [5000, 100_000])
@pytest.mark.parametrize("place", ["data", "time", "header"])
def test_a_huge_integer_gets_one_verdict_from_every_reader_under_any_digit_limit(
    digit_limit: int, digits: int, place: str
) -> None:
    lines = _small_log()
    huge = b"9" * digits
    if place == "data":
        lines = _user_line_with(b'"n":' + huge)
        expected = ("JSON_NOT_LOSSLESS", 3)
    elif place == "time":
        lines[2] = re.sub(rb'"time":\d+', b'"time":' + huge, lines[2], count=1)
        expected = ("ENVELOPE_BAD_TIME", 3)
    else:
        lines[0] = re.sub(rb'"createdAt":\d+', b'"createdAt":' + huge, lines[0], count=1)
        expected = ("JSONL_HEADER_INVALID", 1)
    model, seqlog, check = _three_verdicts(b"".join(line + b"\n" for line in lines))
    assert model == seqlog == expected, (model, seqlog)
    assert check.verdict is not None and (check.verdict.code, check.verdict.line) == expected
    if place != "header":  # the header line names no value; the others say what JSON.parse read
        assert "inf" in check.verdict.message or "not a finite number" in check.verdict.message, check.verdict


def test_ten_megabytes_of_digits_are_judged_in_linear_time(digit_limit: int) -> None:
    data = b"".join(line + b"\n" for line in _user_line_with(b'"n":' + b"9" * 10_000_000))
    start = time.monotonic()
    model, seqlog, check = _three_verdicts(data)
    assert model == seqlog == ("JSON_NOT_LOSSLESS", 3) and check.verdict is not None and check.verdict.line == 3
    assert time.monotonic() - start < 5.0  # a quadratic int() of 10^7 digits takes minutes


INVALID_UTF8: dict[str, tuple[Callable[[bytes], bytes], tuple[str, int] | None]] = {
    # name: (how line 3 is damaged, the verdict every reader gives: (code, line) or None)
    "in-a-string": (lambda line: line.replace(b"Request 0", b"Request \xff\xed\xa0\x80\xf0\x9f"), None),
    "a-lone-continuation-byte-in-a-string": (lambda line: line.replace(b"Request 0", b"\x80"), None),
    "before-the-row": (lambda line: b"\xff" + line, ("JSONL_MALFORMED_LINE", 3)),
    "in-a-key": (lambda line: line.replace(b'"role"', b'"r\xffle"', 1), ("USER_MESSAGE_INVALID", 3)),
}


@pytest.mark.parametrize("name", sorted(INVALID_UTF8))
def test_invalid_utf8_gets_one_verdict_from_every_reader_and_check_log_names_its_line(name: str) -> None:
    damage, expected = INVALID_UTF8[name]
    lines = _small_log()
    lines[2] = damage(lines[2])
    model, seqlog, check = _three_verdicts(b"".join(line + b"\n" for line in lines))
    assert model == seqlog == expected, (model, seqlog)
    assert (None if check.verdict is None else (check.verdict.code, check.verdict.line)) == expected
    assert check.unreadable is None
    note = "line 3: bytes that are not UTF-8 are read as U+FFFD, as the released reader decodes them"
    assert check.notes.count(note) == 1, check.notes


def test_invalid_utf8_in_the_header_line_or_the_torn_tail() -> None:
    lines = _small_log()
    lines[0] = lines[0].replace(b'"createdAt"', b'"created\xffAt"')
    check = C.check_chunks([b"".join(line + b"\n" for line in lines)])
    assert check.verdict is not None and (check.verdict.code, check.verdict.line) == ("JSONL_HEADER_INVALID", 1)
    assert check.notes == ["line 1: bytes that are not UTF-8 are read as U+FFFD, as the released reader decodes them"]
    torn = C.check_chunks([b"".join(line + b"\n" for line in _small_log()) + b'{"type":"\xff'])
    assert torn.verdict is None and not any("UTF-8" in note for note in torn.notes), torn.notes  # dropped unread


def test_a_character_split_across_chunks_is_not_invalid_utf8() -> None:
    lines = _small_log()
    lines[2] = lines[2].replace(b"Request 0", "Requête 0 ✓ 🙂".encode())
    data = b"".join(line + b"\n" for line in lines)
    check = C.check_chunks(data[i : i + 1] for i in range(len(data)))  # every multi-byte character split
    assert check.verdict is None and check.notes == [], check.notes


def test_lines_with_invalid_utf8_are_named_up_to_a_limit_then_counted() -> None:
    rows = [_small_log()[0], *[b'{"t\xffpe":1}'] * (C.MAX_REPLACED_NOTES + 5)]
    check = C.check_chunks([b"".join(row + b"\n" for row in rows)])
    note = "bytes that are not UTF-8 are read as U+FFFD, as the released reader decodes them"
    named = [f"line {number}: {note}" for number in range(2, 2 + C.MAX_REPLACED_NOTES)]
    assert check.notes[: C.MAX_REPLACED_NOTES + 1] == [*named, "5 further line(s) with bytes that are not UTF-8"]


def test_an_expected_failures_file_is_read_bounded_like_a_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--expect-fail`` reads a regular file only, judged before it is opened, and only up to its cap."""
    fifo = _fifo(tmp_path)
    outcome: list[BaseException] = []

    def load(path: Path) -> None:
        try:
            expectations.load_expectations(path)
        except Exception as error:  # the outcome is examined below
            outcome.append(error)

    for path in (fifo, Path("/dev/zero")):
        outcome.clear()
        worker = threading.Thread(target=load, args=(path,), daemon=True)
        worker.start()
        worker.join(timeout=HOSTILE_SECONDS)
        if worker.is_alive():
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # release a reader blocked in open
            pytest.fail(f"reading {path} as an expected-failures file did not end")
        assert isinstance(outcome[0], expectations.ExpectationError) and "not a regular file" in str(outcome[0])
    listed = tmp_path / "expected.json"
    listed.write_text(json.dumps([{"group": "surface", "reason": "known"}]))
    assert [entry.group for entry in expectations.load_expectations(listed)] == ["surface"]
    monkeypatch.setattr(expectations, "MAX_EXPECTATIONS_BYTES", 10)
    with pytest.raises(expectations.ExpectationError, match="over the 10 byte limit of an expected-failures file"):
        expectations.load_expectations(listed)


@pytest.mark.parametrize("levels", [300, 600, 50_000])
def test_inv_log_4_a_deeply_nested_line_is_a_violation_of_its_line_not_a_checker_error(tmp_path: Path, levels: int) -> None:
    opens = ["[" if level % 2 else '{"k":' for level in range(levels)]
    deep = "".join(opens) + "0" + "".join("]" if o == "[" else "}" for o in reversed(opens))
    stored = "".join(
        line + "\n"
        for line in (
            '{"type":"session","version":1,"id":"deep","createdAt":1700000000000,"delegationDepth":0}',
            '{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}',
            '{"type":"vendor/x","seq":1,"time":2,"ignorable":true,"data":' + deep + "}",
            '{"type":"turn/end","seq":2,"time":3,"data":{"turn":1,"reason":{"kind":"completed"}}}',
        )
    )
    path = tmp_path / "deep.jsonl"
    path.write_text(stored, encoding="utf-8")
    status, out, err = _run(path)
    assert status == 1, out + err
    assert "CHECKER_ERROR" not in out + err and "RecursionError" not in out + err
    assert "JSON_NOT_LOSSLESS" in out and "line 3" in out, out[:2000]


# -- compressed logs: seqlog's zstd store and gzip, read as the plain text is --------------------------------------


def _seqlog_store(directory: Path, compression: str | None, events: list[dict[str, Any]], reopen_at: int) -> SessionStore:
    """A store seqlog writes: ``events[:reopen_at]`` in one writing session, closed, then the rest in a second
    one, left open (each writing session of a zstd store is a frame of its own)."""
    store = SessionStore.create(directory, header=HEADER_LINE, compression=compression, pack_chunks=True)  # type: ignore[arg-type]
    for raw in events[:reopen_at]:
        store.session.append_event(raw)
    store.close()
    store = SessionStore.open(directory, pack_chunks=True)
    for raw in events[reopen_at:]:
        store.session.append_event(raw)
    return store


def _crash(store: SessionStore) -> None:
    """Stop writing as a killed writer does: the open zstd frame is never ended, the lock never released."""
    os.close(store._fd)  # type: ignore[arg-type]
    os.close(store._lock_fd)  # type: ignore[arg-type]


def _between_turns(events: list[dict[str, Any]]) -> int:
    """The index after a ``turn/end`` near the middle (reopening there appends no repair closers)."""
    return max(i for i, raw in enumerate(events[: len(events) // 2]) if raw["type"] == "turn/end") + 1


def _answer(check: C.LogCheck) -> tuple[object, ...]:
    """Everything a check says about a log but how it was stored."""
    return (check.verdict, check.violations, check.notes, check.dropped, check.lines, check.events, check.unreadable)


def _zstd_frames(text: str, flushes: int = 3) -> bytes:
    """``text`` compressed as seqlog's store writes it: a complete frame for the header line, then one
    streaming frame flushed block by block, ended; a skippable frame between the two."""
    data = text.encode()
    header_end = data.index(b"\n") + 1
    writer = FrameWriter()
    body = data[header_end:]
    step = max(1, len(body) // flushes)
    streamed = b"".join(writer.encode(body[i : i + step]) for i in range(0, len(body), step)) + writer.finish()
    skippable = (0x184D2A50).to_bytes(4, "little") + (3).to_bytes(4, "little") + b"pad"
    return single_frame(data[:header_end]) + skippable + streamed


def test_a_seqlog_zstd_store_gets_the_verdict_of_the_same_events_stored_as_plain_text(tmp_path: Path) -> None:
    events = realistic_events(turns=20, seed=3)
    middle = _between_turns(events)
    for compression in ("zstd", None):
        _seqlog_store(tmp_path / (compression or "plain"), compression, events, middle).close()
    zst = tmp_path / "zstd" / "events.jsonl.zst"
    assert zst.read_bytes().count(ZSTD_MAGIC) >= 2, "two writing sessions are two frames"
    plain = C.check_path(str(tmp_path / "plain" / "events.jsonl"))
    assert plain.verdict is None and plain.events == len(events) and plain.unreadable is None
    compressed = C.check_path(str(zst))
    assert _answer(compressed) == _answer(plain)
    assert (compressed.compression, plain.compression) == ("zstd", None)
    status, out, err = _run(tmp_path / "zstd", zst)
    assert (status, err) == (0, ""), out
    assert out.splitlines() == [
        f"{zst}: ok: {plain.lines} line(s) read, none dropped",
        f"{zst}: ok: {plain.lines} line(s) read, none dropped",
        "check-log: 2 log(s) checked: 2 clean, 0 with dropped lines, 0 with violations, 0 unreadable",
    ]


@pytest.mark.parametrize("variant", ["clean", "contract-violation", "committed-damage", "uncommitted-damage"])
def test_a_zstd_log_of_several_frames_gets_the_verdict_of_its_text(variant: str, tmp_path: Path) -> None:
    text = _joined(VARIANTS[variant](_stored(_realistic_2000())))
    plain = C.check_log(text)
    _same_verdict(text, plain)
    for name, compressed in (("frames.jsonl.zst", _zstd_frames(text)), ("one-frame.jsonl", single_frame(text.encode()))):
        (tmp_path / name).write_bytes(compressed)
        check = C.check_path(str(tmp_path / name))
        assert _answer(check) == _answer(plain), name
        assert check.compression == "zstd", "known by its magic number, whatever the file is called"


@pytest.mark.parametrize("variant", ["clean", "contract-violation", "uncommitted-damage"])
def test_a_gzip_log_gets_the_verdict_of_its_text(variant: str, tmp_path: Path) -> None:
    text = _joined(VARIANTS[variant](_stored(_realistic_2000())))
    plain = C.check_log(text)
    data = text.encode()
    members = gzip.compress(data[:12345]) + gzip.compress(data[12345:])  # two members, split inside a line
    path = tmp_path / "session.jsonl.gz"
    path.write_bytes(members)
    check = C.check_path(str(path))
    assert _answer(check) == _answer(plain)
    assert check.compression == "gzip"
    status, out, _ = _run(path)
    plain_status, plain_out, _ = _run(_write(tmp_path / "session.jsonl", text))
    assert status == plain_status == (1 if plain.violations else 0)
    assert out.replace("session.jsonl.gz", "session.jsonl") == plain_out


def test_a_directory_walk_takes_plain_zstd_and_gzip_logs_by_name(tmp_path: Path) -> None:
    text = chunky_text()
    logs = tmp_path / "logs"
    _write(logs / "a.jsonl", text)
    (logs / "b.jsonl.gz").write_bytes(gzip.compress(text.encode()))
    (logs / "s" / "events.jsonl.zst").parent.mkdir()
    (logs / "s" / "events.jsonl.zst").write_bytes(_zstd_frames(text))
    (logs / "notes.gz").write_bytes(gzip.compress(b"not a log"))
    status, out, err = _run(logs)
    assert (status, err) == (0, ""), out
    checked = [line.split(": ok: ")[0] for line in out.splitlines()[:-1]]
    assert checked == [str(logs / "a.jsonl"), str(logs / "b.jsonl.gz"), str(logs / "s" / "events.jsonl.zst")]


def test_a_zstd_store_left_open_at_a_flush_drops_nothing(tmp_path: Path) -> None:
    events = realistic_events(turns=6, seed=5)
    store = _seqlog_store(tmp_path / "s", "zstd", events, _between_turns(events))
    store.checkpoint()
    _crash(store)
    path = tmp_path / "s" / "events.jsonl.zst"
    content = read_frames(path.read_bytes())
    assert content.open_frame and not content.torn, "the last frame is open at a block boundary"
    check = C.check_path(str(path))
    assert _answer(check) == _answer(C.check_log(content.text.decode()))
    assert check.dropped == [] and check.events == len(events)


def test_zstd_data_cut_inside_a_block_ends_in_a_torn_line_that_strict_fails(tmp_path: Path) -> None:
    events = realistic_events(turns=6, seed=5)
    store = _seqlog_store(tmp_path / "s", "zstd", events, _between_turns(events))
    store.checkpoint()
    _crash(store)
    path = tmp_path / "s" / "events.jsonl.zst"
    os.truncate(path, path.stat().st_size - 3)  # the last block loses its end
    kept = read_frames(path.read_bytes())
    assert kept.open_frame and kept.torn
    check = C.check_path(str(path))
    as_seqlog_reads_it = C.check_log(kept.text.decode())
    assert (check.verdict, check.violations) == (as_seqlog_reads_it.verdict, as_seqlog_reads_it.violations)
    assert check.dropped == [C.Dropped(check.lines + 1, 1, "a torn final line")]
    assert any("the zstd data ends inside a block" in note for note in check.notes), check.notes
    assert _run(path)[0] == 0
    status, out, _ = _run_strict(path)
    assert status == 1
    torn = check.lines + 1
    assert f"{path}: FAILED (--strict): {torn:,} line(s) read, 1 dropped: line {torn:,} (a torn final line)" in out


def test_gzip_data_cut_inside_a_member_ends_in_a_torn_line(tmp_path: Path) -> None:
    text = chunky_text()
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(gzip.compress(text.encode())[:-8])  # the member's check value and size are missing
    check = C.check_path(str(path))
    assert check.verdict is None and check.dropped == [C.Dropped(check.lines + 1, 1, "a torn final line")]
    assert any("the gzip data ends inside a member" in note for note in check.notes), check.notes


@pytest.mark.parametrize(
    ("name", "damage", "problem"),
    [
        ("zstd-a-flipped-byte", _zstd_frames, "zstd data cannot be decoded"),
        ("zstd-garbage-after-the-frames", lambda text: _zstd_frames(text) + b"garbage!", "zstd data cannot be decoded"),
        ("gzip-a-flipped-byte", lambda text: gzip.compress(text.encode()), "gzip data cannot be decoded"),
        ("gzip-garbage-after-the-member", lambda text: gzip.compress(text.encode()) + b"garbage!", "gzip data cannot be decoded"),
    ],
)
def test_damaged_compressed_data_is_an_unreadable_log_naming_the_byte(
    tmp_path: Path, name: str, damage: Callable[[str], bytes], problem: str
) -> None:
    data = bytearray(damage(chunky_text()))
    if "flipped" in name:
        data[len(data) // 2] ^= 0xFF
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(bytes(data))
    status, out, err = _run(path)
    assert status == 2, out + err
    [line] = err.splitlines()
    refusal = rf"{re.escape(str(path))}:\d+: cannot read: COMPRESSED_DATA_DAMAGED: {problem} \(bytes? [\d,]+.*"
    assert re.fullmatch(refusal, line), line
    assert line.endswith("; the log was not checked")


# -- what a reader drops is said for every log, and --strict fails it --------------------------------------------------


def _header_then(row: bytes, count: int) -> bytes:
    """The header line, then ``count`` copies of ``row``: a log whose whole body a reader drops."""
    return _small_log()[0] + b"\n" + row * count


DROPPED_BODIES: dict[str, tuple[bytes, int]] = {
    # name: (the row repeated after the header line, how many rows)
    "whitespace-lines": (b"   \n", 100_000),
    "unparsable-lines": (b"not json at all\n", 100_000),
    "nan-rows": (b'{"type":"turn/start","seq":0,"time":NaN,"data":{"turn":1}}\n', 2000),
    "nul-rows": (b"\0\0\0\0\0\0\n", 2000),
}


@pytest.mark.parametrize("name", sorted(DROPPED_BODIES))
def test_a_log_whose_body_a_reader_drops_says_how_many_lines_and_fails_under_strict(name: str, tmp_path: Path) -> None:
    row, count = DROPPED_BODIES[name]
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(_header_then(row, count))
    dropped = f"{count:,} dropped: lines 2 to {count + 1:,} (a damaged suffix no later turn/end commits)"
    status, out, err = _run(path)
    assert (status, err) == (0, ""), out  # the released reader drops such a suffix: the verdict is right
    lines = out.splitlines()
    assert lines[-2] == f"{path}: ok: {count + 1:,} line(s) read, {dropped}"
    counts = "0 clean, 1 with dropped lines, 0 with violations, 0 unreadable"
    assert lines[-1] == f"check-log: 1 log(s) checked: {counts}; {count:,} line(s) dropped"
    assert not any("violation" in line for line in lines[:-1]), "no violation count beside ok"
    status, out, _ = _run_strict(path)
    assert status == 1
    assert out.splitlines()[-2] == f"{path}: FAILED (--strict): {count + 1:,} line(s) read, {dropped}"
    assert out.splitlines()[-1].endswith(f"; {count:,} line(s) dropped, a failure under --strict")


def test_strict_passes_a_log_read_whole_and_fails_a_torn_tail_from_the_command_line(tmp_path: Path) -> None:
    whole = _log_file(tmp_path / "whole.jsonl", _small_log())
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(whole.read_bytes() + b'{"type":"turn/st')
    assert run_cli("check-log", "--strict", whole).returncode == 0
    assert run_cli("check-log", torn).returncode == 0
    checked = run_cli("check-log", "--strict", torn)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    read = len(_small_log()) + 1
    assert f"{torn}: FAILED (--strict): {read} line(s) read, 1 dropped: line {read} (a torn final line)" in checked.stdout


def test_state_free_findings_past_uncommitted_damage_are_never_counted_as_violations() -> None:
    rows = b'{"type":"turn/start","seq":"x","time":0,"data":{"turn":1}}\n' * (C.MAX_AFTER_FIRST + 50)
    check = C.check_chunks([_small_log()[0] + b"\n" + b"garbage\n" + rows])
    assert check.violations == [] and check.verdict is None
    assert not any("not listed" in note for note in check.notes), check.notes
    turn_end = next(line for line in _small_log() if b'"type":"turn/end"' in line)
    committed = C.check_chunks([_small_log()[0] + b"\n" + b"garbage\n" + rows + turn_end + b"\n"])
    assert committed.verdict is not None and len(committed.violations) == 1 + C.MAX_AFTER_FIRST
    assert "50 further state-free violation(s) not listed" in committed.notes, committed.notes
    assert C.status_line(committed).startswith(f"{1 + C.MAX_AFTER_FIRST + 50:,} violation(s): "), "the unlisted ones are counted"


# -- file names are printed one to a line --------------------------------------------------------------------------


def test_a_file_name_holding_a_newline_or_an_escape_is_printed_escaped(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    odd = [logs / "a\nb.jsonl", logs / "c\x1b[31md.jsonl", logs / "e\tf.jsonl"]
    for path in odd:
        _log_file(path, _small_log())
    missing = tmp_path / "gone\n.jsonl"
    status, out, err = _run(logs, missing)
    assert status == 2
    lines = out.splitlines()
    assert len(lines) == len(odd) + 1, out  # one line per log, and the summary
    for line, path in zip(lines[:-1], odd, strict=True):
        assert line == f"{str(path)!r}: ok: {len(_small_log())} line(s) read, none dropped"
    assert err.splitlines() == [f"{str(missing)!r}: cannot read: PATH_NOT_FOUND: No such file or directory"]
    assert C.shown(str(logs / "plain é name.jsonl")) == str(logs / "plain é name.jsonl"), "printable names stay as they are"


@pytest.mark.parametrize("piece", [1, 7, 64, 4096])
def test_compressed_text_handed_on_in_small_pieces_comes_out_whole(piece: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """However small the pieces the text is handed on in, zlib and zstd give all of it (none held back)."""
    monkeypatch.setattr(C, "READ_CHUNK_BYTES", piece)
    text = chunky_text()
    plain = C.check_log(text)
    for compressed in (gzip.compress(text.encode()), _zstd_frames(text)):
        check = C.check_chunks([compressed])
        assert _answer(check) == _answer(plain)
