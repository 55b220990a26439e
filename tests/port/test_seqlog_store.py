"""SessionStore: append-only durable JSONL (plain and zstd), torn tails, repair, locking, bad input, v0."""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from seqlog_fixtures import HEADER_LINE, assistant, data, header, tool_call, user

from seqlog import Code, LibCode, Replace, SeqlogError, Session, SessionStore, read_session
from seqlog import store as store_module
from seqlog.event import encode_event
from seqlog.jsonvalue import MAX_NESTING
from seqlog.zstdlog import read_frames, single_frame

COMPRESSIONS = [None, "zstd"]


def _clock() -> Iterator[int]:
    yield from range(1000, 10**9)


def _store(directory: Path, compression: str | None = None, **kwargs: object) -> SessionStore:
    ticks = _clock()
    return SessionStore.create(directory, header=HEADER_LINE, compression=compression, clock=lambda: next(ticks), **kwargs)  # type: ignore[arg-type]


def _events(directory: Path) -> list[object]:
    return [encode_event(e) for e in read_session(directory).session.events]


def _open_turn(store: SessionStore) -> None:
    session = store.session
    session.append("turn/start", {"turn": 1})
    session.append("user/message", user(), surface_op="append")
    session.append("step/start", {"turn": 1, "step": 1})


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_round_trip_and_checkpoints(tmp_path: Path, compression: str | None) -> None:
    store = _store(tmp_path / "s", compression)
    _open_turn(store)
    assert store.durable_length == 0
    store.checkpoint()
    assert store.durable_length == 3
    store.session.append("step/end", {"turn": 1, "step": 1})
    assert store.durable_length == 4  # step/end is a checkpoint of its own
    store.session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    assert store.durable_length == 5
    store.close()
    assert _events(tmp_path / "s") == [encode_event(e) for e in store.session.events]
    name = "events.jsonl.zst" if compression else "events.jsonl"
    assert sorted(os.listdir(tmp_path / "s")) == [name]


def test_the_first_line_is_the_header_line(tmp_path: Path) -> None:
    _store(tmp_path / "s").close()
    assert json.loads((tmp_path / "s" / "events.jsonl").read_bytes().split(b"\n")[0]) == HEADER_LINE


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_reopen_repairs_once_and_durably(tmp_path: Path, compression: str | None) -> None:
    store = _store(tmp_path / "s", compression)
    _open_turn(store)
    store.session.append("assistant/message", assistant(1, 1, calls=("c1", "c2")), surface_op="append")
    store.checkpoint()
    store.session.append("tool/call", tool_call(1, 1, "c1"))
    store.checkpoint()
    os.close(store._fd)  # type: ignore[arg-type]  # a crash: nothing more is written, nothing is unlocked cleanly
    os.close(store._lock_fd)  # type: ignore[arg-type]
    reopened = SessionStore.open(tmp_path / "s")
    assert reopened.loaded is not None
    closers = [c.type for c in reopened.loaded.closers]
    assert closers == ["tool/result", "tool/result", "step/end", "turn/end"]
    codes = [data(c)["error"]["code"] for c in reopened.loaded.closers[:2]]
    assert codes == ["TOOL_OUTCOME_UNKNOWN", "TOOL_NOT_STARTED"]
    assert reopened.durable_length == 9
    reopened.close()
    again = SessionStore.open(tmp_path / "s")
    assert again.loaded is not None and again.loaded.closers == () and len(again.session) == 9
    again.close()


def test_a_torn_tail_is_cut_and_committed_lines_are_kept(tmp_path: Path) -> None:
    store = _store(tmp_path / "s")
    _open_turn(store)
    store.close()
    path = tmp_path / "s" / "events.jsonl"
    committed = path.read_bytes()
    with path.open("ab") as file:
        file.write(b'{"type":"step/end","seq":3,"ti')
    reopened = SessionStore.open(tmp_path / "s")
    assert reopened.loaded is not None and reopened.loaded.dropped_torn_tail
    reopened.close()
    data = path.read_bytes()
    assert data.startswith(committed) and data.endswith(b"\n")
    assert [e["type"] for e in _events(tmp_path / "s")][3:] == ["step/end", "turn/end"]  # type: ignore[index]


def test_a_torn_zstd_block_is_cut_and_the_frame_ended(tmp_path: Path) -> None:
    store = _store(tmp_path / "s", "zstd")
    _open_turn(store)
    store.checkpoint()
    store.session.append("todo/write", {"todos": [{"content": "x" * 5000, "status": "pending"}]})
    store.checkpoint()
    os.close(store._fd)  # type: ignore[arg-type]
    os.close(store._lock_fd)  # type: ignore[arg-type]
    path = tmp_path / "s" / "events.jsonl.zst"
    durable = path.stat().st_size
    content = read_frames(path.read_bytes())
    assert content.open_frame and not content.torn
    os.truncate(path, durable - 3)  # the last block loses its end
    reopened = SessionStore.open(tmp_path / "s")
    assert reopened.loaded is not None and len(reopened.session) == 5  # three durable events and the closers
    reopened.close()
    assert not read_frames(path.read_bytes()).open_frame


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_a_second_writer_is_refused(tmp_path: Path, compression: str | None) -> None:
    store = _store(tmp_path / "s", compression)
    with pytest.raises(SeqlogError) as locked:
        SessionStore.open(tmp_path / "s")
    assert locked.value.code == LibCode.SESSION_LOCKED
    lines = ["import sys", "from seqlog import SessionStore", "try:", " SessionStore.open(sys.argv[1])"]
    script = "\n".join([*lines, "except Exception as e:", " print(e.code)"])
    other = subprocess.run([sys.executable, "-c", script, str(tmp_path / "s")], capture_output=True, text=True, check=True)
    assert other.stdout.strip() == "SESSION_LOCKED"
    store.close()
    SessionStore.open(tmp_path / "s").close()


def test_create_refuses_an_existing_session_and_open_a_missing_one(tmp_path: Path) -> None:
    _store(tmp_path / "s").close()
    with pytest.raises(SeqlogError) as exists:
        _store(tmp_path / "s")
    assert exists.value.code == LibCode.SESSION_EXISTS
    with pytest.raises(SeqlogError) as missing:
        SessionStore.open(tmp_path / "nothing")
    assert missing.value.code == LibCode.SESSION_NOT_FOUND


@pytest.mark.parametrize(
    ("type_", "data", "code"),
    [
        ("todo/write", {"x": float("nan")}, Code.JSON_NOT_LOSSLESS),
        ("todo/write", {"x": 2**60}, Code.JSON_NOT_LOSSLESS),
        ("todo/write", {"x": b"bytes"}, Code.JSON_NOT_LOSSLESS),
        ("todo/write", {1: "x"}, Code.JSON_NOT_LOSSLESS),
        ("step/start", {"turn": "1", "step": 1}, Code.TRACE_DATA_INVALID),
        ("todo/write", {"todos": [{"content": "y" * 5000, "status": "pending"}]}, LibCode.PAYLOAD_TOO_LARGE),
    ],
)
def test_bad_input_is_refused_and_loses_nothing(tmp_path: Path, type_: str, data: object, code: object) -> None:
    store = _store(tmp_path / "s", max_line_bytes=4096)
    _open_turn(store)
    with pytest.raises(SeqlogError) as refused:
        store.session.append(type_, data)
    assert refused.value.code == code
    store.session.append("todo/write", {"todos": []})
    store.close()
    assert [e["type"] for e in _events(tmp_path / "s")][:4] == ["turn/start", "user/message", "step/start", "todo/write"]  # type: ignore[index]


def _dispatch_start(sub_call: str, arguments: object) -> dict[str, object]:
    return {"rootCallId": "root", "parentCallId": "root", "subCallId": sub_call, "name": "run", "arguments": arguments}


def test_deep_payloads_are_stored_up_to_the_limit(tmp_path: Path) -> None:
    store = _store(tmp_path / "s")
    _open_turn(store)
    deep: object = "leaf"
    for _ in range(MAX_NESTING - 1):  # the arguments nest 255 levels, so the event's data nests 256
        deep = [deep]
    # A programmatic call's arguments are the payload table's opaque JSON: any depth the codec takes.
    store.session.append("tool/code-dispatch-start", _dispatch_start("sub-1", deep))
    with pytest.raises(SeqlogError) as refused:
        store.session.append("tool/code-dispatch-start", _dispatch_start("sub-2", [deep]))
    assert refused.value.code == Code.JSON_NOT_LOSSLESS
    store.close()
    assert len(read_session(tmp_path / "s").session) == 4 + 2  # and a closer pair


def _closed_turn(store: SessionStore) -> None:
    _open_turn(store)
    store.session.append("step/end", {"turn": 1, "step": 1})
    store.session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})


@pytest.mark.parametrize(
    ("damage", "code"),
    [
        # Damage before a turn/end is corruption, not a crash: the log is refused, naming the line.
        (lambda data: data.replace(b'"seq":1', b'"seq":2', 1), Code.SEQ_NOT_CONTIGUOUS),
        (lambda data: data.replace(b"\n", b"\n{oops\n", 2), Code.JSONL_MALFORMED_LINE),
        (lambda data: data.replace(b"\n", b"\n[]\n", 2), Code.JSONL_MALFORMED_LINE),
        (lambda data: data.replace(b'"type":"user/message"', b'"type":"user/massage"', 1), Code.UNKNOWN_EVENT_TYPE),
        (lambda data: b"\xef\xbb\xbf" + data, Code.JSONL_MALFORMED_LINE),
        (lambda data: data.replace(b',"delegationDepth":0', b"", 1), Code.JSONL_HEADER_INVALID),
    ],
)
def test_damaged_files_are_refused_and_left_untouched(tmp_path: Path, damage: object, code: Code) -> None:
    store = _store(tmp_path / "s")
    _closed_turn(store)
    store.close()
    path = tmp_path / "s" / "events.jsonl"
    damaged = damage(path.read_bytes()) + b'{"torn'  # type: ignore[operator]
    path.write_bytes(damaged)
    with pytest.raises(SeqlogError) as refused:
        SessionStore.open(tmp_path / "s")
    assert refused.value.code == code
    assert "line" in refused.value.message and str(path) in refused.value.message
    assert path.read_bytes() == damaged
    with pytest.raises(SeqlogError):
        read_session(tmp_path / "s")


@pytest.mark.parametrize(
    "spelling",
    [
        lambda data: data.replace(b"\n", b"\r\n"),
        lambda data: data.replace(b'"turn":1}', b'"turn":7,"turn":1}', 1),
        lambda data: data.replace(b"hi", b"h\xff", 1),
    ],
)
def test_what_the_released_reader_reads_is_read(tmp_path: Path, spelling: object) -> None:
    store = _store(tmp_path / "s")
    _closed_turn(store)
    store.close()
    expected = _events(tmp_path / "s")
    path = tmp_path / "s" / "events.jsonl"
    path.write_bytes(spelling(path.read_bytes()))  # type: ignore[operator]
    loaded = read_session(tmp_path / "s")
    assert len(loaded.session) == len(expected) and not loaded.dropped_torn_tail and loaded.closers == ()


def _recompressed(path: Path, change: object) -> None:
    """Rewrite a compressed log's content through ``change``, as complete frames."""
    text = read_frames(path.read_bytes()).text
    changed: bytes = change(text)  # type: ignore[operator]
    header, _, body = changed.partition(b"\n")
    path.write_bytes(single_frame(header + b"\n") + single_frame(body))


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_an_uncommitted_damaged_suffix_is_cut_before_the_next_append(tmp_path: Path, compression: str | None) -> None:
    store = _store(tmp_path / "s", compression)
    _open_turn(store)
    for n in range(3):
        store.session.append("todo/write", {"todos": [{"content": f"n{n}", "status": "pending"}]})
    store.close()
    path = store.path

    def damage(data: bytes) -> bytes:
        return data.replace(b'"content":"n1"', b'"content":"n1', 1)  # the row of seq 4, line 6, left unparsable

    if compression:
        _recompressed(path, damage)
    else:
        path.write_bytes(damage(path.read_bytes()))
    damaged = path.read_bytes()
    committed = damaged[: damaged.index(b'{"type":"todo/write","seq":4')] if not compression else b""

    reopened = SessionStore.open(tmp_path / "s")
    loaded = reopened.loaded
    assert loaded is not None and loaded.dropped_torn_tail and loaded.dropped_line == 6
    assert [e.type for e in reopened.session.events] == [
        "turn/start", "user/message", "step/start", "todo/write", "step/end", "turn/end"
    ]
    reopened.session.append("turn/start", {"turn": 2})
    reopened.session.append("turn/end", {"turn": 2, "reason": {"kind": "completed"}})
    reopened.close()
    after = path.read_bytes()
    if not compression:
        # Truncated back to the committed prefix: the closers and the new event follow it directly.
        assert after.startswith(committed) and b'"n":1' not in after and b'"n":2' not in after
        assert after[len(committed):].startswith(b'{"type":"step/end","seq":4')
    again = read_session(tmp_path / "s")
    assert not again.dropped_torn_tail and again.closers == ()
    assert [e.type for e in again.session.events][-4:] == ["step/end", "turn/end", "turn/start", "turn/end"]


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_a_store_can_write_packed_rows(tmp_path: Path, compression: str | None) -> None:
    store = _store(tmp_path / "s", compression, pack_chunks=True)
    _open_turn(store)
    for n in range(4):
        chunk = {"type": "text-delta", "index": 0, "text": str(n)}
        store.session.append("assistant/chunk", {"turn": 1, "step": 1, "chunk": chunk})
    store.session.append("step/end", {"turn": 1, "step": 1})
    written = [encode_event(e) for e in store.session.events]
    store.close()
    data = store.path.read_bytes()
    text = read_frames(data).text if compression else data
    kinds = [json.loads(line)["type"] for line in text.split(b"\n")[1:-1]]
    assert kinds == ["turn/start", "user/message", "step/start", "text-chunks", "step/end"]
    assert _events(tmp_path / "s")[: len(written)] == written
    reopened = SessionStore.open(tmp_path / "s", pack_chunks=True)
    assert [encode_event(e) for e in reopened.session.events][: len(written)] == written
    reopened.close()


def test_the_header_line_always_has_a_delegation_depth(tmp_path: Path) -> None:
    bare = {k: v for k, v in HEADER_LINE.items() if k != "delegationDepth"}
    SessionStore.create(tmp_path / "s", header=bare).close()
    assert json.loads((tmp_path / "s" / "events.jsonl").read_bytes().split(b"\n")[0]) == {**bare, "delegationDepth": 0}
    SessionStore.create(tmp_path / "t", header={**bare, "delegationDepth": 3}).close()
    assert read_session(tmp_path / "t").header["delegationDepth"] == 3


def test_a_fifo_or_device_is_refused_without_reading_it(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    os.mkfifo(tmp_path / "s" / "events.jsonl")  # nobody writes to it: reading it would never end
    with pytest.raises(SeqlogError) as refused:
        read_session(tmp_path / "s")
    assert refused.value.code == LibCode.SESSION_NOT_FOUND and "regular file" in refused.value.message
    with pytest.raises(SeqlogError):
        SessionStore.open(tmp_path / "s")


def test_reads_go_in_bounded_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(tmp_path / "s")
    _closed_turn(store)
    store.close()
    sizes: list[int] = []
    real_read = os.read

    def read(fd: int, size: int) -> bytes:
        sizes.append(size)
        return real_read(fd, size)

    monkeypatch.setattr(store_module, "READ_CHUNK_BYTES", 64)
    monkeypatch.setattr(os, "read", read)
    assert len(read_session(tmp_path / "s").session) == 5
    assert len(sizes) > 1 and max(sizes) <= 64


def _v0_dir(directory: Path, *events: dict[str, object]) -> Path:
    directory.mkdir()
    header = {"type": "session", "version": 0, "id": "old", "createdAt": 0, "delegationDepth": 0}
    path = directory / "events.jsonl"
    path.write_bytes(b"".join(json.dumps(x).encode() + b"\n" for x in (header, *events)))
    return path


def test_a_v0_session_is_upgraded_into_a_new_file(tmp_path: Path) -> None:
    v0 = _v0_dir(tmp_path / "s", {"type": "turn/start", "seq": 0, "time": 3, "data": {"turn": 1, "trigger": {"kind": "user"}}})
    original = v0.read_bytes()
    store = SessionStore.open(tmp_path / "s")
    assert store.path.name == "events.v1.jsonl"
    assert store.loaded is not None and store.loaded.version == 0
    assert [e.type for e in store.session.events] == ["turn/start", "turn/end"]
    store.session.append("turn/start", {"turn": 2})
    store.close()
    assert v0.read_bytes() == original
    reopened = SessionStore.open(tmp_path / "s")
    assert reopened.path.name == "events.v1.jsonl" and len(reopened.session) == 4
    reopened.close()


def test_a_refused_v0_session_leaves_files_untouched(tmp_path: Path) -> None:
    v0 = _v0_dir(tmp_path / "s", {"type": "mode/set", "seq": 0, "time": 3, "data": {}})
    original = v0.read_bytes()
    with pytest.raises(SeqlogError) as refused:
        SessionStore.open(tmp_path / "s")
    assert refused.value.code == Code.LEGACY_MODE_SET
    assert v0.read_bytes() == original and sorted(os.listdir(tmp_path / "s")) == ["events.jsonl"]


def test_seeded_store_is_durable_on_return(tmp_path: Path) -> None:
    seed = [{"type": "turn/start", "seq": 0, "time": 4, "data": {"turn": 1}}]
    store = SessionStore.create(tmp_path / "s", seed=seed, header=HEADER_LINE)
    assert store.durable_length == 2
    assert [e["type"] for e in _events(tmp_path / "s")] == ["turn/start", "session/end-seed", "turn/end"]  # type: ignore[index]
    store.close()


def test_a_closed_store_refuses_appends(tmp_path: Path) -> None:
    store = _store(tmp_path / "s")
    store.close()
    store.close()
    store.session.append("turn/start", {"turn": 1})  # detached: the session itself stays usable
    with pytest.raises(SeqlogError) as closed:
        store.checkpoint()
    assert closed.value.code == LibCode.STORE_CLOSED


# Failures of the filesystem -------------------------------------------------------------------------


def _state(session: Session) -> tuple[object, ...]:
    """Everything a caller can observe of a session: the log, the surface, the header, the trace, the closers."""
    return (
        [encode_event(e) for e in session.events],
        tuple(session.surface.nodes),
        session.surface.replace_generation,
        session.request_header(),
        session.brackets,
        session.pending_calls,
        session.cut_balances(),
        [encode_event(c) for c in session.closers()],
    )


def _kept(directory: Path) -> list[Any]:
    """The events stored in ``directory``, without the closers a read adds in memory."""
    loaded = read_session(directory)
    return [encode_event(e) for e in loaded.session.events][: len(loaded.session) - len(loaded.closers)]


def _fail_on(
    monkeypatch: pytest.MonkeyPatch, name: str, number: int, applies: Callable[[int], bool], *, pass_bytes: int = 0
) -> None:
    """Make ``os.<name>`` raise ``number`` for the descriptors ``applies`` picks; a write may first pass ``pass_bytes``."""
    real = getattr(os, name)
    budget = [pass_bytes]

    def failing(fd: int, *args: Any) -> Any:
        if applies(fd):
            if name == "write" and budget[0] > 0:
                written: int = real(fd, bytes(args[0])[: budget[0]])
                budget[0] -= written
                return written
            raise OSError(number, os.strerror(number))
        return real(fd, *args)

    monkeypatch.setattr(os, name, failing)


def _under(root: Path) -> Callable[[int], bool]:
    """Whether a descriptor is open on something under ``root``."""

    def applies(fd: int) -> bool:
        try:
            return os.readlink(f"/proc/self/fd/{fd}").startswith(f"{root}/")
        except OSError:
            return False

    return applies


def _step(store: SessionStore) -> None:
    """An open turn and step with a request header: surface, header and trace all have state."""
    _open_turn(store)
    store.session.append("request/header", {"header": header(), "reason": "initial"})


FAILURES = [("write", errno.ENOSPC), ("write", errno.EIO), ("write", errno.EBADF), ("fsync", errno.EIO), ("fsync", errno.ENOSPC)]


@pytest.mark.parametrize("compression", COMPRESSIONS)
@pytest.mark.parametrize(("call", "number"), FAILURES)
def test_an_append_that_fails_to_reach_the_file_is_not_in_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compression: str | None, call: str, number: int
) -> None:
    store = _store(tmp_path / "s", compression)
    _step(store)
    store.checkpoint()
    before, stored = _state(store.session), store.path.read_bytes()
    _fail_on(monkeypatch, call, number, lambda fd: fd == store._fd)
    with pytest.raises(SeqlogError) as failed:
        store.session.append("step/end", {"turn": 1, "step": 1})  # a checkpoint: written and synced at once
    assert failed.value.code == LibCode.STORE_FAILED and str(store.path) in failed.value.message
    assert _state(store.session) == before
    assert store.path.read_bytes() == stored and store.durable_bytes == len(stored)
    monkeypatch.undo()
    assert _kept(tmp_path / "s") == before[0]
    # The store refuses from now on, and every refusal leaves the session and the file as they were.
    for refused_call in (lambda: store.session.append("step/end", {"turn": 1, "step": 1}), store.checkpoint):
        with pytest.raises(SeqlogError) as refused:
            refused_call()
        assert refused.value.code == LibCode.STORE_FAILED
    assert _state(store.session) == before and store.path.read_bytes() == stored
    store.close()
    reopened = SessionStore.open(tmp_path / "s")
    assert reopened.loaded is not None
    assert [encode_event(e) for e in reopened.session.events][: len(before[0])] == before[0]
    reopened.close()


@pytest.mark.parametrize("compression", COMPRESSIONS)
@pytest.mark.parametrize("failure", [("fsync", errno.EIO, 0), ("write", errno.ENOSPC, 0), ("write", errno.ENOSPC, 5)])
def test_a_failed_checkpoint_rolls_the_session_back_to_the_last_durable_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compression: str | None, failure: tuple[str, int, int]
) -> None:
    call, number, pass_bytes = failure  # a write may pass a few bytes of the spill before failing
    # A one-byte buffer spills every event: written, not synced, until the checkpoint at step/end.
    store = _store(tmp_path / "s", compression, buffer_bytes=1)
    _open_turn(store)
    store.checkpoint()
    durable, stored = _state(store.session), store.path.read_bytes()
    store.session.append("request/header", {"header": header(), "reason": "initial"})
    store.session.append("todo/write", {"todos": []})
    assert len(store.session) == 5 and store.durable_length == 3
    _fail_on(monkeypatch, call, number, lambda fd: fd == store._fd, pass_bytes=pass_bytes)
    with pytest.raises(SeqlogError) as failed:
        if call == "fsync":
            store.session.append("step/end", {"turn": 1, "step": 1})
        else:
            store.session.append("todo/write", {"todos": []})  # the spill of this event fails
    assert failed.value.code == LibCode.STORE_FAILED and "seq 3" in failed.value.message
    assert _state(store.session) == durable and len(store.session) == store.durable_length == 3
    assert store.path.read_bytes() == stored  # what was written past the last sync is cut
    monkeypatch.undo()
    assert _kept(tmp_path / "s") == durable[0]
    store.close()


def test_a_failed_explicit_checkpoint_rolls_back_and_refuses_further_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path / "s")
    _open_turn(store)
    store.checkpoint()
    durable, stored = _state(store.session), store.path.read_bytes()
    store.session.append("request/header", {"header": header(), "reason": "initial"})
    store.session.append("todo/write", {"todos": []})
    _fail_on(monkeypatch, "write", errno.EIO, lambda fd: fd == store._fd)
    with pytest.raises(SeqlogError) as failed:
        store.checkpoint()
    assert failed.value.code == LibCode.STORE_FAILED
    assert _state(store.session) == durable and store.path.read_bytes() == stored
    monkeypatch.undo()
    with pytest.raises(SeqlogError) as refused:
        store.session.append("todo/write", {"todos": []})
    assert refused.value.code == LibCode.STORE_FAILED
    assert _state(store.session) == durable and store.path.read_bytes() == stored
    store.close()


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_a_failed_close_rolls_back_and_still_releases_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compression: str | None
) -> None:
    store = _store(tmp_path / "s", compression)
    _open_turn(store)
    store.checkpoint()
    durable, stored = _state(store.session), store.path.read_bytes()
    store.session.append("todo/write", {"todos": []})
    _fail_on(monkeypatch, "fsync", errno.EIO, lambda fd: fd == store._fd)
    with pytest.raises(SeqlogError) as failed:
        store.close()
    assert failed.value.code == LibCode.STORE_FAILED and str(store.path) in failed.value.message
    assert _state(store.session) == durable and store.path.read_bytes() == stored
    monkeypatch.undo()
    SessionStore.open(tmp_path / "s").close()  # the lock was released


def test_a_failing_close_of_the_file_is_coded_and_releases_the_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(tmp_path / "s")
    _open_turn(store)
    written = _state(store.session)
    fd, real_close = store._fd, os.close

    def close(number: int) -> None:
        real_close(number)
        if number == fd:
            raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "close", close)
    with pytest.raises(SeqlogError) as failed:
        store.close()
    assert failed.value.code == LibCode.STORE_FAILED and str(store.path) in failed.value.message
    monkeypatch.undo()
    assert _state(store.session) == written and _kept(tmp_path / "s") == written[0]  # synced before the close
    SessionStore.open(tmp_path / "s").close()


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_deleting_the_lock_file_does_not_admit_a_second_writer(tmp_path: Path, compression: str | None) -> None:
    store = _store(tmp_path / "s", compression)
    (tmp_path / "s" / "lock").unlink(missing_ok=True)
    attempts: list[Callable[[], SessionStore]] = [
        lambda: SessionStore.open(tmp_path / "s"),
        lambda: _store(tmp_path / "s", compression),
    ]
    for attempt in attempts:
        with pytest.raises(SeqlogError) as locked:
            attempt()
        assert locked.value.code == LibCode.SESSION_LOCKED
    lines = ["import sys", "from seqlog import SessionStore", "try:", " SessionStore.open(sys.argv[1])"]
    script = "\n".join([*lines, "except Exception as e:", " print(e.code)", "else:", " print('OPENED')"])
    other = subprocess.run([sys.executable, "-c", script, str(tmp_path / "s")], capture_output=True, text=True, check=True)
    assert other.stdout.strip() == "SESSION_LOCKED"
    store.session.append("turn/start", {"turn": 1})
    store.close()
    reopened = SessionStore.open(tmp_path / "s")
    assert [e.type for e in reopened.session.events] == ["turn/start", "turn/end"]
    reopened.close()


def _listing(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))}


def _refuse_inside(monkeypatch: pytest.MonkeyPatch, directory: Path, number: int) -> None:
    """Make every ``os.open`` of a file inside ``directory`` fail as a read-only or forbidden one would."""
    real = os.open

    def refusing(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if Path(path).parent == directory:
            raise OSError(number, os.strerror(number), str(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing)


@pytest.mark.parametrize(
    "case",
    ["path is a file", "parent is a file", "read-only filesystem", "permission denied", "no space", "chmod 0o555"],
)
def test_create_codes_filesystem_errors_and_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    (tmp_path / "file").write_bytes(b"x")
    target = {"path is a file": tmp_path / "file", "parent is a file": tmp_path / "file" / "s"}.get(case, tmp_path / "new" / "s")
    if case == "read-only filesystem":
        _refuse_inside(monkeypatch, target, errno.EROFS)
    elif case == "permission denied":
        _refuse_inside(monkeypatch, target, errno.EACCES)
    elif case == "no space":
        _fail_on(monkeypatch, "write", errno.ENOSPC, _under(tmp_path))
    elif case == "chmod 0o555":
        if os.geteuid() == 0:
            pytest.skip("root ignores directory permissions; the permission-denied case simulates it")
        target.mkdir(parents=True)
        target.chmod(0o555)
    before = _listing(tmp_path)
    with pytest.raises(SeqlogError) as refused:
        _store(target)
    assert refused.value.code == LibCode.STORE_UNAVAILABLE and str(target) in refused.value.message
    assert _listing(tmp_path) == before


@pytest.mark.parametrize("case", ["read-only filesystem", "permission denied", "no space"])
def test_open_codes_filesystem_errors_and_releases_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    store = _store(tmp_path / "s")
    _open_turn(store)
    store.close()  # the turn is open: reopening must append and sync its closers
    before = _listing(tmp_path)
    if case == "no space":
        _fail_on(monkeypatch, "write", errno.ENOSPC, _under(tmp_path), pass_bytes=20)
    else:
        _refuse_inside(monkeypatch, tmp_path / "s", errno.EROFS if case == "read-only filesystem" else errno.EACCES)
    with pytest.raises(SeqlogError) as refused:
        SessionStore.open(tmp_path / "s")
    assert refused.value.code == LibCode.STORE_UNAVAILABLE and str(tmp_path / "s") in refused.value.message
    monkeypatch.undo()
    assert _listing(tmp_path) == before
    SessionStore.open(tmp_path / "s").close()


def test_open_and_read_name_a_path_that_is_no_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_bytes(b"x")
    for path in (tmp_path / "file", tmp_path / "missing", tmp_path / "file" / "s"):
        with pytest.raises(SeqlogError) as refused:
            SessionStore.open(path)
        assert refused.value.code == LibCode.SESSION_NOT_FOUND and str(path) in refused.value.message
    _store(tmp_path / "s").close()
    _refuse_inside(monkeypatch, tmp_path / "s", errno.EACCES)
    with pytest.raises(SeqlogError) as unreadable:
        read_session(tmp_path / "s")
    assert unreadable.value.code == LibCode.STORE_UNAVAILABLE and str(tmp_path / "s") in unreadable.value.message


QUEUED = {"id": "queued", "role": "user", "content": [{"type": "text", "text": "later"}], "source": {"kind": "user"}}
V0_RESTART = [
    {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}},
    {"type": "step/start", "seq": 1, "time": 0, "data": {"turn": 1, "step": 1}},
    {"type": "step/end", "seq": 2, "time": 0, "data": {"turn": 1, "step": 1}},
    {"type": "agent/inbox/spliced", "seq": 3, "time": 0, "data": {"target": "next-turn", "start": 0, "inserted": [QUEUED]}},
    {"type": "turn/start", "seq": 4, "time": 0, "data": {"turn": 2}},
]
"""A released v0 writer's resume: turn 2 starts after a next-turn splice while turn 1 never ended."""


def test_a_rolled_back_session_is_replayed_under_the_rules_that_accepted_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _v0_dir(tmp_path / "s", *V0_RESTART)
    store = SessionStore.open(tmp_path / "s")  # upgraded: the restart is admitted by the v0 edge only
    session = store.session
    session.append("turn/start", {"turn": 3})
    session.append("user/message", user("u2"), surface_op="append")
    first = len(session) - 1
    session.append("user/message", user("u3"), surface_op=Replace(first, first), source_event_seqs=[first])
    store.checkpoint()
    durable, stored = _state(session), store.path.read_bytes()
    assert durable[2] == 1  # one replacement is durable
    session.append("user/message", user("u4"), surface_op=Replace(first + 1, first + 1), source_event_seqs=[first + 1])
    _fail_on(monkeypatch, "write", errno.EIO, lambda fd: fd == store._fd)
    with pytest.raises(SeqlogError) as failed:
        store.checkpoint()
    assert failed.value.code == LibCode.STORE_FAILED
    assert _state(session) == durable and store.path.read_bytes() == stored
    store.close()


@pytest.mark.parametrize("failure", ["write", "fsync of the directory"])
def test_a_v0_upgrade_that_fails_leaves_the_v0_session_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: str
) -> None:
    _v0_dir(tmp_path / "s", {"type": "turn/start", "seq": 0, "time": 3, "data": {"turn": 1, "trigger": {"kind": "user"}}})
    before = _listing(tmp_path)
    if failure == "write":
        _fail_on(monkeypatch, "write", errno.ENOSPC, _under(tmp_path))
    else:  # the upgraded file is in place by then: it must be taken back
        _fail_on(monkeypatch, "fsync", errno.EIO, lambda fd: stat.S_ISDIR(os.fstat(fd).st_mode))
    with pytest.raises(SeqlogError) as refused:
        SessionStore.open(tmp_path / "s")
    assert refused.value.code == LibCode.STORE_UNAVAILABLE and str(tmp_path / "s") in refused.value.message
    monkeypatch.undo()
    assert _listing(tmp_path) == before


def test_an_upgraded_generation_with_the_v0_restart_reopens(tmp_path: Path) -> None:
    """INV-LEGACY-6: the upgraded file keeps what the edge admitted, so the store opens it again as it
    wrote it (the same events), and goes on appending to it."""
    _v0_dir(tmp_path / "s", *V0_RESTART)
    with SessionStore.open(tmp_path / "s") as store:
        upgraded, events = store.path, [encode_event(e) for e in store.session.events]
    assert upgraded.name.startswith("events.v1")
    with SessionStore.open(tmp_path / "s") as again:
        assert again.path == upgraded
        assert [encode_event(e) for e in again.session.events] == events
        again.session.append("turn/start", {"turn": 3})
    with SessionStore.open(tmp_path / "s") as third:
        assert len(third.session.events) > len(events)
