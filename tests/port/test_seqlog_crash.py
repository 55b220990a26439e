"""Crash consistency: a writer killed with SIGKILL at random moments never loses a durable event.

Each trial runs :mod:`seqlog_crash_writer` in a subprocess, kills it after a random delay, and
sometimes also cuts the file at a random byte past the last durable offset (what a power loss may
do to bytes that were written but not yet synced).  Reopening must then yield a prefix of the
planned events that includes every event reported durable, with at most a torn tail dropped, closed
by the model's repair closers exactly once; reopening again must change nothing.
"""

from __future__ import annotations

import functools
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from seqlog_compare import same_json
from seqlog_crash_writer import planned_events

from seqlog import Event, SessionStore, read_session, thaw
from seqlog.event import encode_event
from sessionlog_spec.model.event import decode_event
from sessionlog_spec.model.event import encode_event as model_encode
from sessionlog_spec.model.repair import interrupted_turn_closers

WRITER = Path(__file__).with_name("seqlog_crash_writer.py")


@functools.cache
def _planned(seed: int) -> list[Event]:
    return planned_events(seed)


def _raw(event: Event) -> Any:
    return thaw(encode_event(event))


def _run_and_kill(directory: Path, seed: int, compression: str, delay: float) -> tuple[int, int, bool]:
    """Start the writer, kill it ``delay`` seconds after it is ready; the last durable (events, bytes) and whether it finished."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(WRITER.parent), os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen(
        [sys.executable, str(WRITER), str(directory), str(seed), compression], stdout=subprocess.PIPE, env=env
    )
    assert process.stdout is not None
    assert process.stdout.readline() == b"ready\n"
    time.sleep(delay)
    process.send_signal(signal.SIGKILL)
    output = process.stdout.read().decode()
    process.wait()
    durable = (0, 0)
    for line in output.splitlines():
        if line.startswith("D "):
            _, events, size = line.split()
            durable = (int(events), int(size))
    return durable[0], durable[1], "done" in output


def _events_file(directory: Path) -> Path:
    return next(p for p in directory.iterdir() if p.name.startswith("events."))


def _trial(tmp_path: Path, trial: int) -> None:
    rng = random.Random(trial)
    seed, compression = trial % 5, ("zstd" if trial % 2 else "plain")
    directory = tmp_path / f"trial-{trial}"
    durable_events, durable_bytes, finished = _run_and_kill(directory, seed, compression, rng.uniform(0.0, 0.9))
    path = _events_file(directory)
    size = path.stat().st_size
    assert size >= durable_bytes
    if not finished and rng.random() < 0.5 and size > durable_bytes:
        # Bytes past the last fsync may be lost in part: keep a random prefix of them.
        os.truncate(path, rng.randint(durable_bytes, size))
    before = path.read_bytes()
    planned = _planned(seed)

    first = SessionStore.open(directory)
    try:
        loaded = first.loaded
        assert loaded is not None
        events = list(first.session.events)
        closers = loaded.closers
        kept = events[: len(events) - len(closers)]
        assert len(kept) >= durable_events, "a durable event was lost"
        assert [_raw(e) for e in kept] == [_raw(e) for e in planned[: len(kept)]], "the log is not a prefix of what was written"
        if compression == "plain":
            assert loaded.dropped_torn_tail == (not before.endswith(b"\n"))
        model_log = [decode_event(_raw(e)) for e in kept]
        expected = [model_encode(c) for c in interrupted_turn_closers(model_log)]  # type: ignore[arg-type]
        assert same_json([_raw(c) for c in closers], expected)
    finally:
        first.close()
    after_first = path.read_bytes()
    if compression == "plain":
        assert after_first.startswith(before[: before.rfind(b"\n") + 1]), "a committed line was rewritten"

    second = SessionStore.open(directory)
    try:
        assert second.loaded is not None
        assert second.loaded.closers == ()
        assert not second.loaded.dropped_torn_tail
        assert [_raw(e) for e in second.session.events] == [_raw(e) for e in events]
    finally:
        second.close()
    again = read_session(directory)
    assert [_raw(e) for e in again.session.events] == [_raw(e) for e in events]
    assert again.closers == ()
    if compression == "plain":
        assert path.read_bytes() == after_first


@pytest.mark.parametrize("trial", range(30))
def test_crash_consistency(tmp_path: Path, trial: int) -> None:
    """30 random kills (the CI profile)."""
    _trial(tmp_path, trial)


@pytest.mark.slow
@pytest.mark.parametrize("trial", range(30, 230))
def test_crash_consistency_deep(tmp_path: Path, trial: int) -> None:
    """200 further random kills."""
    _trial(tmp_path, trial)
