"""check-log: the stored form as the model's reader reads it, streaming, several paths, exit statuses."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import strategies as S
from conformance_helpers import ROOT, run_cli
from hypothesis import given
from hypothesis import strategies as st

from sessionlog_spec.model.event import decode_event
from sessionlog_spec.model.json_value import JsonObject, as_object, freeze, thaw
from sessionlog_spec.model.jsonl import encode_jsonl, encode_line
from sessionlog_spec.model.load import read_log, save_session
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.suite import check_log as C
from sessionlog_spec.suite.agent.builder import SessionBuilder
from sessionlog_spec.suite.agent.crashes import CORRUPTIONS, damage_line
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
        assert (check.verdict.code, check.verdict.message) == (expected.code.value, expected.message)
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
    assert out.splitlines()[0].endswith("log.jsonl: ok")
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
    assert "repair closer" in out and ": ok" in out


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
    assert out[0] == f"{single}: ok"
    assert out[1].startswith(f"{logs / 'a.jsonl'}:1002: ")
    assert out[-2] == f"{logs / 'b' / 'two.jsonl'}: ok"
    assert out[-1] == "check-log: 3 log(s) checked: 2 clean, 1 with violations, 0 unreadable"
    assert "notes.txt" not in checked.stdout + checked.stderr


def test_an_unreadable_path_exits_2_unless_a_log_has_violations(tmp_path: Path) -> None:
    clean = _write(tmp_path / "clean.jsonl", chunky_text())
    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    status, out, err = _run(clean, tmp_path / "missing.jsonl", empty_dir)
    assert status == 2
    assert "missing.jsonl: cannot read: No such file or directory" in err and "no *.jsonl files" in err
    assert out.splitlines()[-1] == "check-log: 3 log(s) checked: 1 clean, 0 with violations, 2 unreadable"
    violating = _write(tmp_path / "bad.jsonl", _joined(_contract_violation(_stored(_realistic_2000()))))
    assert _run(clean, tmp_path / "missing.jsonl", violating)[0] == 1
    assert _run(clean)[0] == 0


def test_a_fifo_is_refused_with_exit_2_without_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    checked = run_cli("check-log", fifo, timeout=60)  # nobody writes: opening it for a read would block
    assert checked.returncode == 2, checked.stdout + checked.stderr
    refusal = "cannot read: a FIFO, not a regular file; give it as '-' (standard input) to read it"
    assert checked.stderr.strip() == f"{fifo}: {refusal}"
    walked = run_cli("check-log", tmp_path, timeout=60)
    assert walked.returncode == 2 and "a FIFO" in walked.stderr
    assert "Traceback" not in checked.stderr + walked.stderr


def test_a_character_device_is_refused() -> None:
    status, _, err = _run("/dev/zero")
    assert status == 2 and "a character device, not a regular file" in err


def test_standard_input_is_read_in_chunks() -> None:
    text = chunky_text()
    command = [sys.executable, "-m", "spec", "check-log", "-"]
    done = subprocess.run(command, cwd=ROOT, input=text.encode(), capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.decode().splitlines()[0] == "<stdin>: ok"


def test_an_over_long_line_makes_the_log_unreadable_not_a_memory_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(C, "MAX_LINE_BYTES", 1000)
    monkeypatch.setattr(C, "READ_CHUNK_BYTES", 64)
    lines = _lines(chunky_text())
    lines[5] = lines[5][:-1] + ',"pad":"' + "x" * 2000 + '"}'
    status, out, err = _run(_write(tmp_path / "long.jsonl", _joined(lines)))
    assert status == 2
    refusal = "cannot read: line 6 is longer than 1,000 bytes (the checker's line limit); the log was not checked"
    assert err.strip() == f"{tmp_path / 'long.jsonl'}: {refusal}"
    assert out.splitlines()[-1].endswith("0 clean, 0 with violations, 1 unreadable")
    endless = C.check_chunks(itertools.repeat(b"\0" * 64))  # /dev/zero through stdin: no newline ever
    assert endless.unreadable is not None and endless.unreadable.startswith("line 1 is longer than 1,000 bytes")


def test_a_log_without_a_complete_line_has_no_header() -> None:
    check = C.check_log('{"type":"session"')
    assert check.verdict is not None and (check.verdict.line, check.verdict.code) == (1, "JSONL_HEADER_MISSING")
    assert "torn final line" in check.notes[0]
