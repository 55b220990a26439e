"""Durable JSONL storage: one directory per session, append-only, crash-safe.

The directory holds ``events.jsonl`` (or ``events.jsonl.zst``), whose first line is the session
header line.  One writer at a time: creating or opening takes an exclusive, non-blocking ``flock``
on the session directory itself, and a second writer is refused (``SESSION_LOCKED``) rather than
interleaved.  Deleting or replacing any file in the directory leaves that lock in force; other files
in the directory (a ``lock`` file included) are neither used nor touched.

Writes are buffered and made durable (written, then ``fsync``) at the loop's semantic checkpoints:
automatically after ``step/end`` and ``turn/end``, and whenever :meth:`SessionStore.checkpoint` is
called (before a model call, before a tool call).  With ``pack_chunks=True`` each flush stores runs
of chunk deltas as packed rows (the released writer's layout); the default writes one event a line.

A committed row is never changed in place.  Reopening cuts what the reader dropped, so that a new
record never follows garbage: a torn tail (bytes a crash left after the last complete line) and a
damaged suffix that no later ``turn/end`` committed.  A plain file is truncated back to its
committed prefix; a compressed file whose damaged rows sit inside a block cannot be cut there, so
its kept events are written to a new file that atomically replaces it (temp file, fsync, rename).
Reopening then appends the crash-repair closers once and makes them durable.

A v0 session goes through the v0-to-v1 edge; the upgraded log is written to a new file,
``events.v1.jsonl[.zst]``, which is the session's current file from then on, and the v0 file is never
touched.  Every refusal leaves the files exactly as they were.

When the filesystem fails, memory and disk are made to agree on the last durable state:

* A write, ``fsync`` or truncation of an open store that fails (``ENOSPC``, ``EIO``, ``EBADF``...),
  whether in an append that spills or checkpoints, in :meth:`SessionStore.checkpoint` or in
  :meth:`SessionStore.close`, ends in ``STORE_FAILED``.  Every event that was not durable is
  dropped: the buffer, and what was written since the last ``fsync``.  The file is cut back to its
  durable bytes, and the session is rewound to its durable events (:meth:`Session.rewind`), so it is
  exactly as it was when the last successful checkpoint (or the create or open) returned; an append
  that fails is therefore never in the session, and neither is any event buffered with it.  The store then refuses every
  further write with ``STORE_FAILED``, changing nothing; :meth:`SessionStore.close` still releases
  the file and the lock.  Should the cut itself fail, the error says so, and the bytes past the
  durable ones are what a crash at that moment would have left: the next open keeps the complete
  events among them (a prefix of the ones dropped from memory) and cuts the rest.
* Creating, opening or reading a session that the filesystem refuses (a read-only or forbidden
  directory, a file where a directory belongs, no space for the first write or the repair) ends in
  ``STORE_UNAVAILABLE``, naming the path, and no store exists.  What the attempt wrote is taken
  back: a new file, a temporary file and the directories ``create`` made are removed, and a repair
  that could not finish is undone, leaving the file as it was.
* Reopening a directory that is missing or not a directory is ``SESSION_NOT_FOUND``.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import orjson

from seqlog.codec import LoadedLog, encode_header_line, encode_line, encode_rows, load_bytes
from seqlog.errors import Code, LibCode, SeqlogError
from seqlog.event import Event, encode_event
from seqlog.rows import pack_chunk_runs
from seqlog.session import Clock, Session
from seqlog.zstdlog import END_BLOCK, FrameWriter, read_frames, single_frame

Compression = Literal["zstd"] | None

PLAIN_NAME = "events.jsonl"
ZSTD_NAME = "events.jsonl.zst"
UPGRADED_PLAIN_NAME = "events.v1.jsonl"
UPGRADED_ZSTD_NAME = "events.v1.jsonl.zst"
CHECKPOINT_TYPES = frozenset({"step/end", "turn/end"})
"""Events after which the store makes everything durable on its own."""

DEFAULT_BUFFER_BYTES = 1 << 16
READ_CHUNK_BYTES = 1 << 20
"""Reads of a stored file go in chunks of at most this many bytes, up to the size the file had."""
DEFAULT_MAX_LINE_BYTES = 64 << 20


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        written = os.write(fd, view)
        view = view[written:]


@contextlib.contextmanager
def _unavailable(where: Path) -> Iterator[None]:
    """Report the filesystem refusing access to a session as ``STORE_UNAVAILABLE``, naming ``where``."""
    try:
        yield
    except OSError as error:
        raise SeqlogError(LibCode.STORE_UNAVAILABLE, f"{where}: {error}") from error


def _lock(directory: Path) -> int:
    """Take the session's single-writer lock: an exclusive ``flock`` on the directory itself.

    The lock belongs to the directory's open file description, so a second open (in this process or
    another) is refused, and no file operation inside the directory can release or duplicate it.
    """
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        os.close(fd)
        if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            raise SeqlogError(LibCode.SESSION_LOCKED, f"{directory}: another writer holds this session") from None
        raise
    return fd


def _close(fd: int) -> OSError | None:
    """Close ``fd``; the error, if closing reported one (the descriptor is released either way)."""
    try:
        os.close(fd)
    except OSError as error:
        return error
    return None


def _unlock(fd: int) -> None:
    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_UN)
    _close(fd)


def _make_directories(root: Path) -> list[Path]:
    """Create ``root`` and its missing parents, durably; the directories made here, outermost first."""
    missing: list[Path] = []
    for directory in (root, *root.parents):
        if directory.is_dir():
            break
        missing.append(directory)
    made: list[Path] = []
    try:
        for directory in reversed(missing):
            try:
                os.mkdir(directory)
            except FileExistsError:
                if directory.is_dir():
                    continue  # made meanwhile by someone else, who owns it
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(directory)) from None
            made.append(directory)
            _fsync_dir(directory.parent)
    except BaseException:
        _remove_directories(made)
        raise
    return made


def _remove_directories(made: list[Path]) -> None:
    """Remove what :func:`_make_directories` made, innermost first, as far as they are still empty."""
    for directory in reversed(made):
        with contextlib.suppress(OSError):
            os.rmdir(directory)
            _fsync_dir(directory.parent)


def _open_for_append(path: Path) -> tuple[int, int]:
    """A descriptor appending to ``path``, and the file's size."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
    try:
        return fd, os.fstat(fd).st_size
    except BaseException:
        os.close(fd)
        raise


def _existing(directory: Path, *names: str) -> list[Path]:
    return [directory / name for name in names if (directory / name).exists()]


def _current_file(directory: Path) -> Path:
    """The session's current events file: an upgraded generation wins over the one it came from."""
    for names in ((UPGRADED_PLAIN_NAME, UPGRADED_ZSTD_NAME), (PLAIN_NAME, ZSTD_NAME)):
        found = _existing(directory, *names)
        if len(found) > 1:
            raise SeqlogError(LibCode.SESSION_AMBIGUOUS, f"{directory}: both {found[0].name} and {found[1].name} exist")
        if found:
            return found[0]
    raise SeqlogError(LibCode.SESSION_NOT_FOUND, f"{directory}: no {PLAIN_NAME} or {ZSTD_NAME}")


def _is_zstd(path: Path) -> bool:
    return path.name.endswith(".zst")


def _write_new_file(path: Path, contents: bytes) -> None:
    """Create ``path`` holding ``contents``, durably and atomically (temp file, fsync, rename, dir fsync).

    Until the rename, a failure removes the temp file and leaves ``path`` as it was.
    """
    temp = path.with_name(path.name + ".tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
    try:
        try:
            _write_all(fd, contents)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    _fsync_dir(path.parent)


def _initial_contents(header: Mapping[str, Any], events: Iterable[Event], zstd: bool, pack_chunks: bool) -> bytes:
    header_line = encode_header_line(header)
    body = encode_rows(events, pack_chunks=pack_chunks)
    if not zstd:
        return header_line + body
    # The header line is a frame of its own, so the session can be identified from the first frame.
    return single_frame(header_line) + (single_frame(body) if body else b"")


def _read_file(path: Path) -> bytes:
    """The bytes of a regular file, read in bounded chunks up to the size it had when opened.

    Anything else is refused before it is read: a device or a FIFO has no end to read to (and a FIFO
    is opened without waiting for a writer).
    """
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SeqlogError(LibCode.SESSION_NOT_FOUND, f"{path}: not a regular file")
        chunks: list[bytes] = []
        remaining = info.st_size
        while remaining > 0:
            chunk = os.read(fd, min(READ_CHUNK_BYTES, remaining))
            if not chunk:
                break  # the file shrank under us: what was read is all there is
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


@dataclass(frozen=True, slots=True)
class _OnDisk:
    """A stored file as read: the log, and what reopening must cut or rewrite before appending."""

    loaded: LoadedLog
    keep_bytes: int
    """Bytes of the file to keep: the header line and the kept rows (plain), or complete frames (zstd)."""
    cut: bool
    """Whether bytes past ``keep_bytes`` must be cut (a torn tail or an uncommitted damaged suffix)."""
    open_frame: bool
    """The final zstd frame was left open by a crash."""
    rewrite: bool
    """A compressed file lost rows inside a block: its kept events go to a new file that replaces it."""
    dropped: bytes
    """The bytes past ``keep_bytes``: put back if the repair that cuts them cannot finish."""


def _read(path: Path, clock: Clock | None) -> _OnDisk:
    """The log at ``path`` and what reopening it must repair."""
    data = _read_file(path)
    upgraded = path.name in (UPGRADED_PLAIN_NAME, UPGRADED_ZSTD_NAME)
    try:
        if _is_zstd(path):
            content = read_frames(data)
            if content.open_frame and content.open_frame_has_checksum:
                raise SeqlogError(Code.JSONL_MALFORMED_LINE, "the final zstd frame is unfinished and checksummed")
            loaded = load_bytes(content.text, clock=clock, upgraded=upgraded)
            rewrite = loaded.committed_length < len(content.text)
            keep = content.committed_length
            return _OnDisk(loaded, keep, content.torn, content.open_frame, rewrite, data[keep:])
        loaded = load_bytes(data, clock=clock, upgraded=upgraded)
        keep = loaded.committed_length
        return _OnDisk(loaded, keep, keep < len(data), False, False, data[keep:])
    except SeqlogError as error:
        raise error.at(str(path)) from None


def read_session(directory: str | os.PathLike[str], *, clock: Clock | None = None) -> LoadedLog:
    """Read a session directory without locking or writing anything (closers are in memory only)."""
    root = Path(directory)
    with _unavailable(root):
        return _read(_current_file(root), clock).loaded


class SessionStore:
    """A session bound to its directory: every append is written, durable at each checkpoint."""

    def __init__(
        self,
        directory: Path,
        path: Path,
        session: Session,
        lock_fd: int,
        *,
        fd: int,
        size: int,
        loaded: LoadedLog | None,
        buffer_bytes: int,
        max_line_bytes: int,
        pack_chunks: bool = False,
    ) -> None:
        """Use :meth:`create` or :meth:`open`; ``fd`` appends to ``path``, whose ``size`` bytes are all durable."""
        self.directory = directory
        self.path = path
        self.session = session
        self.loaded = loaded
        """What :meth:`open` read (torn tail or damaged suffix dropped, closers appended); ``None`` for a new session."""
        self.pack_chunks = pack_chunks
        """Whether flushes store runs of chunk deltas as packed rows."""
        self._lock_fd: int | None = lock_fd
        self._fd: int | None = fd
        self._frames = FrameWriter() if _is_zstd(path) else None
        self._buffer: list[bytes] = []
        self._buffered: list[Event] = []
        self._buffered_bytes = 0
        self._buffered_events = 0
        self._written = len(session)
        self._durable = len(session)
        self._size = size
        self._durable_size = size
        self._failure: BaseException | None = None
        self._buffer_limit = buffer_bytes
        self._max_line_bytes = max_line_bytes
        session.attach(self)

    # Opening ------------------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        directory: str | os.PathLike[str],
        *,
        seed: Iterable[object] | None = None,
        header: Mapping[str, Any] | None = None,
        compression: Compression = None,
        clock: Clock | None = None,
        buffer_bytes: int = DEFAULT_BUFFER_BYTES,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        pack_chunks: bool = False,
    ) -> SessionStore:
        """A new session directory; the seed (if any) and its end-of-seed marker are durable on return.

        The header line is written with ``delegationDepth`` (``0`` unless ``header`` gives one).
        ``pack_chunks`` stores runs of chunk deltas as packed rows.  The directory and its missing
        parents are made; a refusal removes whatever this call made.
        """
        session = Session.create(seed, header, clock=clock)
        contents = _initial_contents(session.header_line, session.events, compression == "zstd", pack_chunks)
        root = Path(directory)
        with _unavailable(root):
            made = _make_directories(root)
            try:
                lock_fd = _lock(root)
            except OSError:
                _remove_directories(made)
                raise
        try:
            with _unavailable(root):
                found = _existing(root, PLAIN_NAME, ZSTD_NAME, UPGRADED_PLAIN_NAME, UPGRADED_ZSTD_NAME)
                if found:
                    raise SeqlogError(LibCode.SESSION_EXISTS, f"{root}: a session already exists ({found[0].name})")
                path = root / (ZSTD_NAME if compression == "zstd" else PLAIN_NAME)
                _write_new_file(path, contents)
                try:
                    fd, size = _open_for_append(path)
                except BaseException:
                    with contextlib.suppress(OSError):
                        os.unlink(path)
                        _fsync_dir(root)
                    raise
            return cls(
                root,
                path,
                session,
                lock_fd,
                fd=fd,
                size=size,
                loaded=None,
                buffer_bytes=buffer_bytes,
                max_line_bytes=max_line_bytes,
                pack_chunks=pack_chunks,
            )
        except BaseException:
            _remove_directories(made)  # still locked: nobody else can be using them
            _unlock(lock_fd)
            raise

    @classmethod
    def open(
        cls,
        directory: str | os.PathLike[str],
        *,
        clock: Clock | None = None,
        buffer_bytes: int = DEFAULT_BUFFER_BYTES,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        pack_chunks: bool = False,
    ) -> SessionStore:
        """Reopen a session for writing: cut what the reader dropped, append and sync the closers of an orphaned turn."""
        root = Path(directory)
        with _unavailable(root):
            if not root.is_dir():
                problem = "not a directory" if root.exists() else "no such session directory"
                raise SeqlogError(LibCode.SESSION_NOT_FOUND, f"{root}: {problem}")
            lock_fd = _lock(root)
        upgraded: Path | None = None
        try:
            with _unavailable(root):
                path = _current_file(root)
                disk = _read(path, clock)
                loaded = disk.loaded
                if loaded.version != 1:
                    source, path = path, cls._write_upgrade(root, path, loaded, pack_chunks)
                    upgraded = path if path != source else None
                elif disk.rewrite:
                    _write_new_file(path, _initial_contents(loaded.header, loaded.session.events, _is_zstd(path), pack_chunks))
                else:
                    cls._finish_tail(path, disk, pack_chunks)
                for stale in root.glob("events*.tmp"):
                    with contextlib.suppress(OSError):
                        stale.unlink()  # a create or upgrade that never renamed: nothing in it was committed
                fd, size = _open_for_append(path)
            return cls(
                root,
                path,
                loaded.session,
                lock_fd,
                fd=fd,
                size=size,
                loaded=loaded,
                buffer_bytes=buffer_bytes,
                max_line_bytes=max_line_bytes,
                pack_chunks=pack_chunks,
            )
        except BaseException:
            if upgraded is not None:
                with contextlib.suppress(OSError):
                    os.unlink(upgraded)
            _unlock(lock_fd)
            raise

    @staticmethod
    def _write_upgrade(root: Path, source: Path, loaded: LoadedLog, pack_chunks: bool) -> Path:
        """Write the upgraded log to its new file; a failure removes that file again (the source is kept)."""
        target = root / (UPGRADED_ZSTD_NAME if _is_zstd(source) else UPGRADED_PLAIN_NAME)
        try:
            _write_new_file(target, _initial_contents(loaded.header, loaded.session.events, _is_zstd(target), pack_chunks))
        except BaseException:
            if target != source:
                with contextlib.suppress(OSError):
                    os.unlink(target)
            raise
        return target

    @staticmethod
    def _finish_tail(path: Path, disk: _OnDisk, pack_chunks: bool) -> None:
        """Cut what the reader dropped, end a frame a crash left open, append the closers; all durable before use.

        If any step fails, the file is put back as it was (the cut bytes restored) before the error goes on.
        """
        closers = disk.loaded.closers
        if not (disk.cut or disk.open_frame or closers):
            return
        tail = END_BLOCK if disk.open_frame else b""
        body = encode_rows(closers, pack_chunks=pack_chunks)
        if body:
            tail += single_frame(body) if _is_zstd(path) else body
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
        try:
            try:
                if disk.cut:
                    os.ftruncate(fd, disk.keep_bytes)
                os.lseek(fd, 0, os.SEEK_END)
                _write_all(fd, tail)
                os.fsync(fd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, disk.keep_bytes)
                    os.lseek(fd, disk.keep_bytes, os.SEEK_SET)
                    _write_all(fd, disk.dropped)
                    os.fsync(fd)
                raise
        finally:
            os.close(fd)

    # Writing ------------------------------------------------------------------------------------

    def prepare(self, event: Event) -> bytes:
        """Encode the line for ``event``, refusing what cannot be stored safely; nothing is written yet."""
        self._check_usable()
        envelope = encode_event(event)
        try:
            line = orjson.dumps(envelope) + b"\n"
        except orjson.JSONEncodeError:  # a lone surrogate, or nesting orjson does not take (the format allows 256)
            line = encode_line(envelope) + b"\n"
        if len(line) > self._max_line_bytes:
            raise SeqlogError(
                LibCode.PAYLOAD_TOO_LARGE, f"event seq {event.seq} is {len(line)} bytes; the limit is {self._max_line_bytes}"
            )
        return line

    def accept(self, event: Event, encoded: bytes) -> None:
        """Buffer a committed event's line; sync at step and turn ends, spill when the buffer is full.

        A failed spill or sync rewinds the session to its durable events before ``STORE_FAILED`` is raised.
        """
        self._buffer.append(encoded)
        self._buffered.append(event)
        self._buffered_bytes += len(encoded)
        self._buffered_events += 1
        if event.type in CHECKPOINT_TYPES:
            self.checkpoint()
        elif self._buffered_bytes >= self._buffer_limit:
            self._guarded(self._flush)

    def checkpoint(self) -> None:
        """Make every appended event durable: write the buffer, then ``fsync``.

        On failure the session is rewound to the events that were durable before, the file is cut
        back to match, and ``STORE_FAILED`` is raised; the store writes nothing more.
        """
        self._check_usable()
        self._guarded(self._sync)

    def _sync(self) -> None:
        self._flush()
        assert self._fd is not None
        if self._durable < self._written or self._durable_size < self._size:
            os.fsync(self._fd)
            self._durable = self._written
            self._durable_size = self._size

    def _flush(self) -> None:
        if not self._buffer:
            return
        payload = self._packed() if self.pack_chunks else b"".join(self._buffer)
        if self._frames is not None:
            payload = self._frames.encode(payload)
        assert self._fd is not None
        _write_all(self._fd, payload)
        self._size += len(payload)
        self._buffer.clear()
        self._buffered.clear()
        self._buffered_bytes = 0
        self._written += self._buffered_events
        self._buffered_events = 0

    def _packed(self) -> bytes:
        """The buffered events as stored rows, chunk runs packed; other events keep their prepared lines."""
        records = [encode_event(event) for event in self._buffered]
        lines = {id(record): line for record, line in zip(records, self._buffer, strict=True)}
        return b"".join(lines.get(id(row)) or encode_line(row) + b"\n" for row in pack_chunk_runs(records))

    def _guarded(self, action: Callable[[], None]) -> None:
        """Run a write or sync; if anything interrupts it, fall back to the durable state and fail the store."""
        try:
            action()
        except BaseException as error:
            outcome = self._fall_back(error)
            if isinstance(error, OSError):
                raise SeqlogError(LibCode.STORE_FAILED, f"{self.path}: {error}; {outcome}") from error
            raise

    def _fall_back(self, error: BaseException) -> str:
        """Refuse further writes, cut the file back to its durable bytes and rewind the session to its
        durable events, so that memory and disk agree; what was done, for the error message."""
        self._failure = error
        self._buffer.clear()
        self._buffered.clear()
        self._buffered_bytes = self._buffered_events = 0
        self._written = self._durable
        cut_error = self._cut_back()
        durable, length = self._durable, len(self.session)
        self.session.rewind(durable)
        if length == durable:
            outcome = f"the session keeps all its {durable} events, which are durable"
        else:
            dropped = f"seq {durable}" if length == durable + 1 else f"seq {durable} to {length - 1}"
            outcome = f"the session keeps its {durable} durable events ({dropped} dropped)"
        if cut_error is not None:
            outcome += (
                f"; cutting the file back to its {self._durable_size} durable bytes failed ({cut_error}),"
                " so the next open reads what follows them as a crash left it"
            )
        return outcome + "; the store refuses further writes"

    def _cut_back(self) -> OSError | None:
        """Truncate the file to its durable bytes (when it has more); the error, if that failed."""
        assert self._fd is not None
        try:
            if os.fstat(self._fd).st_size != self._durable_size:
                os.ftruncate(self._fd, self._durable_size)
                with contextlib.suppress(OSError):
                    os.fsync(self._fd)
        except OSError as error:
            return error
        self._size = self._durable_size
        return None

    def _check_usable(self) -> None:
        if self._fd is None:
            raise SeqlogError(LibCode.STORE_CLOSED, f"{self.path}: the store is closed")
        if self._failure is not None:
            raise SeqlogError(
                LibCode.STORE_FAILED, f"{self.path}: an earlier write failed ({self._failure}); the store refuses further writes"
            )

    def _finish_frame(self) -> None:
        assert self._fd is not None and self._frames is not None
        tail = self._frames.finish()
        _write_all(self._fd, tail)
        os.fsync(self._fd)
        self._size += len(tail)
        self._durable_size = self._size

    @property
    def durable_length(self) -> int:
        """How many events are known to be on stable storage."""
        return self._durable

    @property
    def durable_bytes(self) -> int:
        """How many bytes of the file are known to be on stable storage."""
        return self._durable_size

    def close(self) -> None:
        """Make everything durable, end an open zstd frame, and release the lock.

        A failure is raised as ``STORE_FAILED`` after the same fall-back as a failed checkpoint; the
        file is closed, the session detached and the lock released whatever happens.
        """
        fd = self._fd
        if fd is None:
            return
        try:
            if self._failure is None:
                self._guarded(self._sync)
                if self._frames is not None:
                    self._guarded(self._finish_frame)
        finally:
            self.session.attach(None)
            self._fd = None
            closing = _close(fd)
            if self._lock_fd is not None:
                _unlock(self._lock_fd)
                self._lock_fd = None
        if closing is not None and self._failure is None:
            raise SeqlogError(
                LibCode.STORE_FAILED, f"{self.path}: closing the file failed ({closing}) after every event was made durable"
            )

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()
