"""A port that runs as a subprocess and speaks ``sessionlog-driver/1`` over JSON Lines.

:class:`SubprocessPort` starts the driver once, says ``hello`` and then sends one request at a time.
Every way a driver can break the protocol becomes a :class:`~sessionlog_spec.protocol.messages.PortFault` carrying the tail
of the driver's stderr:

* ``start``: the program cannot be started, or its ``hello`` is refused or names another protocol;
* ``timeout``: no complete reply line within the per-request timeout (the write counts too);
* ``exit``: the driver exited or closed its stdout before replying;
* ``oversize``: a reply line longer than ``max_reply_bytes``;
* ``garbage``: a reply line that is not UTF-8 JSON;
* ``wrong-id``: a reply object whose ``id`` is not the request's;
* ``schema``: a reply that is not an object or does not fit the op's schema.

A fault while the driver starts (anything up to its ``hello``) also quotes the stderr tail in its
detail, so the one-line report of a driver that cannot even start says why.

Reads and writes go through a selector on non-blocking pipes with a deadline, so no driver can hang
the suite; stderr is drained by a thread into a bounded buffer, so a chatty driver cannot block on
it either.  The driver process itself is watched while the suite waits (a pidfd on Linux, a short
poll elsewhere): a driver that exits is an ``exit`` fault with its status at once, even when a
process it started still holds its pipes open.

Each driver runs in a session of its own.  After a fault, on :meth:`~SubprocessPort.restart` and on
:meth:`~SubprocessPort.close`, the driver is killed together with every process it started and the
dead are collected, so nothing outlives the port.  On Linux this process is the child subreaper
while drivers run (``prctl(PR_SET_CHILD_SUBREAPER)``), so a descendant whose parent exits is
re-parented here instead of to init, and :class:`DriverTree` finds every descendant, even one in a
session of its own (see there); elsewhere the driver's process group is killed.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import selectors
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import IO, Any, Self

from sessionlog_spec.protocol import jsonlines
from sessionlog_spec.protocol.messages import PROTOCOL, Hello, Ok, PortFault, Reply, hello_from, reply_from
from sessionlog_spec.protocol.schema import InvalidRequest, validate_reply, validate_request

MIB = 1 << 20
DEFAULT_TIMEOUT = 5.0
DEFAULT_MAX_REPLY_BYTES = 64 * MIB
STDERR_KEEP_BYTES = 64 * 1024
"""How much of a driver's stderr is kept: the most recent bytes, older ones are dropped."""
STDERR_TAIL_BYTES = 8 * 1024
"""How much of the kept stderr a fault carries."""
START_TAIL_BYTES = 4 * 1024
"""How much of the stderr tail a start-up fault quotes in its detail."""
READ_CHUNK = 64 * 1024
GRACE_SECONDS = 1.0
"""How long an exiting or closing driver gets before it is killed."""
QUOTE_LIMIT = 200
POLL_SECONDS = 0.05
"""How often a wait for the driver wakes up to look at the process itself."""
TRACK_SECONDS = 0.25
"""How often, while waiting, the driver's process tree is looked over (Linux)."""
STOP_ROUNDS = 64
"""How many times the tree is looked over again for processes started while it was being stopped."""
TOKEN_VARIABLE = "SESSIONLOG_DRIVER_TOKEN"
"""An environment variable set, with a value unique to each driver process, for the driver and its descendants."""
PR_SET_CHILD_SUBREAPER = 36
TRACKS_TREES = sys.platform == "linux" and os.path.isdir("/proc/self")


@dataclass(frozen=True, slots=True)
class PortStats:
    """Requests sent over a port and the wall time spent waiting for their replies."""

    requests: int
    seconds: float


class StderrBuffer:
    """A driver's stderr, drained continuously by a daemon thread into a bounded buffer."""

    def __init__(self, stream: IO[bytes], keep: int = STDERR_KEEP_BYTES) -> None:
        self._stream = stream
        self._keep = keep
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, name="driver-stderr", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        """Read until end of file, keeping only the most recent bytes."""
        fd = self._stream.fileno()
        while chunk := _read_or_empty(fd):
            with self._lock:
                self._chunks.append(chunk)
                self._size += len(chunk)
                while self._size - len(self._chunks[0]) >= self._keep:
                    self._size -= len(self._chunks.popleft())

    def finish(self, timeout: float = GRACE_SECONDS) -> bool:
        """Wait for the drain to reach end of file, bounded because a process may still hold the pipe open."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def tail(self, limit: int = STDERR_TAIL_BYTES) -> str:
        """The last ``limit`` bytes of stderr, decoded leniently."""
        with self._lock:
            data = b"".join(self._chunks)
        return data[-limit:].decode("utf-8", errors="replace")


def _read_or_empty(fd: int) -> bytes:
    """One blocking read; end of file and a closed descriptor both read as empty."""
    try:
        return os.read(fd, READ_CHUNK)
    except OSError:
        return b""


# -- processes (Linux) ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProcessInfo:
    """One line of ``/proc/<pid>/stat``: what the tree walk needs."""

    pid: int
    ppid: int
    pgid: int
    state: str
    started: int
    """Start time in clock ticks after boot: with the pid, it names one process even if the pid is reused."""


def process_info(pid: int) -> ProcessInfo | None:
    """A process as ``/proc`` shows it now, or ``None`` when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            data = stat.read()
        # The command name may hold spaces and parentheses: the fields start after the last ')'.
        fields = data[data.rindex(b")") + 2 :].split()
        return ProcessInfo(pid, int(fields[1]), int(fields[2]), fields[0].decode("ascii", "replace"), int(fields[19]))
    except (OSError, ValueError, IndexError):
        return None


def all_processes() -> list[ProcessInfo]:
    """Every process ``/proc`` lists."""
    found = []
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if name.isdigit() and (info := process_info(int(name))) is not None:
                found.append(info)
    return found


def environment_of(pid: int) -> list[bytes]:
    """A process's environment as ``NAME=value`` entries; empty when it cannot be read (a zombie, another user)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as environ:
            return environ.read().split(b"\0")
    except OSError:
        return []


def _send(pid: int, sig: signal.Signals) -> None:
    """Send a signal to a process that may have gone already."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


class _Subreaper:
    """This process as the child subreaper while at least one driver runs (Linux)."""

    _lock = threading.Lock()
    _users = 0

    @classmethod
    def acquire(cls) -> None:
        """One more driver: the first one makes this process the subreaper."""
        with cls._lock:
            if cls._users == 0:
                _set_child_subreaper(True)
            cls._users += 1

    @classmethod
    def release(cls) -> None:
        """One driver less, all its processes collected: after the last one, orphans go to init again."""
        with cls._lock:
            cls._users -= 1
            if cls._users == 0:
                _set_child_subreaper(False)


def _set_child_subreaper(on: bool) -> bool:
    """``prctl(PR_SET_CHILD_SUBREAPER, on)``; false when the call is not available."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        result = libc.prctl(
            ctypes.c_int(PR_SET_CHILD_SUBREAPER), ctypes.c_ulong(int(on)), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)
        )
    except (OSError, AttributeError):
        return False
    return int(result) == 0


class DriverTree:
    """Every process a driver started, however it detached itself (Linux).

    With this process as the child subreaper, a process of the driver's tree is always either a
    descendant of the driver or, once its parent has exited, a child of this process.  Such a child
    belongs to the driver when it is in the driver's process group while the driver is unreaped
    (until then no other group can have that id), or when it was seen in the driver's tree before
    (same pid, same start time).  Any process that carries the driver's token in its environment
    belongs to it too, wherever it was re-parented.  Everything below a member is a member.  Other
    children of this process have none of these marks and are left alone.

    A descendant that leaves the tree before it is ever seen and also drops the token from its
    environment cannot be told apart from other children of this process, and is not killed.
    """

    def __init__(self, leader: int, token: str) -> None:
        self.leader = leader
        self._token = f"{TOKEN_VARIABLE}={token}".encode()
        self._seen: dict[int, int] = {}
        self._tracked = 0.0
        if (info := process_info(leader)) is not None:
            self._seen[leader] = info.started

    def track(self, group_pinned: bool) -> None:
        """Look the tree over now and then while the driver runs, remembering who is in it."""
        now = time.monotonic()
        if now - self._tracked >= TRACK_SECONDS:
            self._tracked = now
            self.members(all_processes(), group_pinned, everywhere=False)

    def members(self, processes: Iterable[ProcessInfo], group_pinned: bool, everywhere: bool = True) -> dict[int, ProcessInfo]:
        """The driver's processes among ``processes``; ``group_pinned`` while the driver is unreaped.

        ``everywhere`` looks for the token in every process, not only in the children of this one.
        """
        me = os.getpid()
        children: dict[int, list[ProcessInfo]] = {}
        roots: list[ProcessInfo] = []
        for info in processes:
            children.setdefault(info.ppid, []).append(info)
            if (info.ppid == me and self._marked(info, group_pinned)) or (
                everywhere and info.ppid != me and self._carries_token(info.pid)
            ):
                roots.append(info)
        found: dict[int, ProcessInfo] = {}
        while roots:
            info = roots.pop()
            if info.pid not in found:
                found[info.pid] = info
                roots.extend(children.get(info.pid, ()))
        self._seen.update((pid, info.started) for pid, info in found.items())
        return found

    def _marked(self, info: ProcessInfo, group_pinned: bool) -> bool:
        """Whether a child of this process belongs to the driver."""
        if self._seen.get(info.pid) == info.started:
            return True
        if group_pinned and info.pgid == self.leader:
            return True
        return self._carries_token(info.pid)

    def _carries_token(self, pid: int) -> bool:
        """Whether a process's environment holds the driver's token."""
        return pid != os.getpid() and self._token in environment_of(pid)

    def kill(self, group_pinned: bool) -> dict[int, ProcessInfo]:
        """Stop every member, look again until no new one appears, then kill them all; returns the members."""
        stopped: dict[int, ProcessInfo] = {}
        for _ in range(STOP_ROUNDS):
            new = [info for pid, info in self.members(all_processes(), group_pinned).items() if pid not in stopped]
            if not new:
                break
            for info in new:
                _send(info.pid, signal.SIGSTOP)
                stopped[info.pid] = info
            # A stopped process cannot fork, so once all are stopped the next look finds every child.
            _await_stopped(new, time.monotonic() + GRACE_SECONDS)
        for pid in stopped:
            _send(pid, signal.SIGKILL)
        return stopped

    def reap(self, members: Mapping[int, ProcessInfo], deadline: float) -> None:
        """Collect the members that died as children of this process, so that no zombie remains."""
        me = os.getpid()
        waiting = {pid: info.started for pid, info in members.items() if pid != self.leader}
        while waiting:
            for pid, started in list(waiting.items()):
                now = process_info(pid)
                if now is None or now.started != started:
                    del waiting[pid]
                elif now.ppid == me:
                    with contextlib.suppress(ChildProcessError):
                        os.waitpid(pid, os.WNOHANG)
            if not waiting or time.monotonic() >= deadline:
                return
            time.sleep(0.005)


def _await_stopped(processes: Sequence[ProcessInfo], deadline: float) -> None:
    """Wait, bounded, until each process is stopped, dead or gone."""
    for info in processes:
        while time.monotonic() < deadline:
            now = process_info(info.pid)
            if now is None or now.started != info.started or now.state in "TtZXx":
                break
            time.sleep(0.001)


# -- one driver ----------------------------------------------------------------------------------


class DriverProcess:
    """One running driver: its pipes, its stderr buffer, the unread part of its stdout and its process tree."""

    def __init__(self, argv: Sequence[str], cwd: str | os.PathLike[str] | None, env: Mapping[str, str] | None) -> None:
        environment = dict(os.environ if env is None else env)
        environment[TOKEN_VARIABLE] = secrets.token_hex(16)
        if TRACKS_TREES:
            _Subreaper.acquire()
        try:
            # A session of its own: a kill of its group also reaches anything a wrapper script started.
            self.popen = subprocess.Popen(
                list(argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=environment,
                bufsize=0,
                start_new_session=True,
            )
        except (OSError, ValueError) as error:
            if TRACKS_TREES:
                _Subreaper.release()
            raise PortFault("start", f"cannot start {shlex.join(argv)}: {error}") from error
        assert self.popen.stdin is not None and self.popen.stdout is not None and self.popen.stderr is not None
        self.tree = DriverTree(self.popen.pid, environment[TOKEN_VARIABLE]) if TRACKS_TREES else None
        self.stdin_fd = self.popen.stdin.fileno()
        self.stdout_fd = self.popen.stdout.fileno()
        os.set_blocking(self.stdin_fd, False)
        os.set_blocking(self.stdout_fd, False)
        self.stderr = StderrBuffer(self.popen.stderr)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.stdout_fd, selectors.EVENT_READ)
        # Readable once the driver has exited; without it the wait polls every POLL_SECONDS.
        self.pidfd: int | None = None
        if sys.platform == "linux":
            with contextlib.suppress(OSError):
                self.pidfd = os.pidfd_open(self.popen.pid)
                self.selector.register(self.pidfd, selectors.EVENT_READ)
        self.pending = bytearray()
        self._scanned = 0
        self._status: int | None = None
        self._stdout_held = False
        self._killed = False
        self._released = False

    def exchange(self, request: bytes, deadline: float, max_bytes: int) -> bytes:
        """Write one request line and read one reply line before ``deadline``; raises on failure."""
        rest = memoryview(request)
        rest = rest[self._write(rest) :]
        if rest:
            self.selector.register(self.stdin_fd, selectors.EVENT_WRITE)
            try:
                while rest:
                    ready = self._wait(deadline, "writing the request")
                    if not ready:
                        self._read_remaining(max_bytes)
                        raise _Failure("exit", f"{self._exited()} before reading the whole request")
                    # Whatever the driver writes meanwhile is kept, or a full stdout would spin this loop.
                    if self.stdout_fd in ready:
                        self._read_some()
                        if len(self.pending) > max_bytes:
                            raise _Failure("oversize", f"the driver wrote over {max_bytes} bytes before reading the request")
                    rest = rest[self._write(rest) :]
            finally:
                self.selector.unregister(self.stdin_fd)
        return self._read_line(deadline, max_bytes)

    def _write(self, data: memoryview) -> int:
        """Write what the pipe takes now."""
        try:
            return os.write(self.stdin_fd, data)
        except BlockingIOError:
            return 0
        except BrokenPipeError as error:
            raise _Failure("exit", self._gone("stdin")) from error

    def _read_line(self, deadline: float, max_bytes: int) -> bytes:
        """The next stdout line without its newline; stops reading once a line grows past ``max_bytes``."""
        while True:
            end = self.pending.find(b"\n", self._scanned)
            if end >= 0:
                if end > max_bytes:
                    raise _Failure("oversize", f"reply line of {end} bytes exceeds the limit of {max_bytes}")
                line = bytes(self.pending[:end])
                del self.pending[: end + 1]
                self._scanned = 0
                return line
            self._scanned = len(self.pending)
            if self._scanned > max_bytes:
                raise _Failure("oversize", f"reply line exceeds the limit of {max_bytes} bytes (not finished)")
            if self._status is not None:
                # Everything the driver wrote before it exited has been read: there is no reply.
                raise _Failure("exit", f"{self._exited()} before replying")
            if self._wait(deadline, "waiting for the reply"):
                self._read_some()
            else:
                self._read_remaining(max_bytes)

    def _read_some(self) -> None:
        """Append what stdout has now; end of file means the driver is gone."""
        try:
            chunk = os.read(self.stdout_fd, READ_CHUNK)
        except BlockingIOError:
            return
        if not chunk:
            raise _Failure("exit", self._gone("stdout"))
        self.pending += chunk

    def _read_remaining(self, max_bytes: int) -> None:
        """After the driver exited: read what it left in the pipe, which may hold its last reply."""
        while len(self.pending) <= max_bytes:
            try:
                chunk = os.read(self.stdout_fd, READ_CHUNK)
            except BlockingIOError:
                # No end of file although the driver is gone: something it started holds the pipe.
                self._stdout_held = True
                return
            if not chunk:
                return
            self.pending += chunk

    def _wait(self, deadline: float, doing: str) -> set[int]:
        """The pipes ready before the deadline, or none once the driver has exited; raises a timeout."""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Failure("timeout", doing)
            ready = {key.fd for key, _ in self.selector.select(min(remaining, POLL_SECONDS))}
            ready.discard(self.pidfd if self.pidfd is not None else -1)
            if ready:
                return ready
            if self.exit_status() is not None:
                return ready
            if self.tree is not None:
                self.tree.track(group_pinned=self.popen.returncode is None)

    def exit_status(self) -> int | None:
        """The driver's exit status once it has exited, negative for a signal; on Linux it is left unreaped."""
        if self._status is None:
            if self.popen.returncode is not None:
                self._status = self.popen.returncode
            elif hasattr(os, "waitid"):
                # WNOWAIT: the exited driver stays a zombie, so its pid, the group's id, cannot be reused yet.
                try:
                    info = os.waitid(os.P_PID, self.popen.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
                except ChildProcessError:
                    self._status = self.popen.poll()
                else:
                    if info is not None:
                        self._status = info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
            else:
                self._status = self.popen.poll()
        return self._status

    def wait_exit(self, timeout: float) -> int | None:
        """The exit status, waiting up to ``timeout`` seconds for it."""
        deadline = time.monotonic() + timeout
        while (status := self.exit_status()) is None and time.monotonic() < deadline:
            time.sleep(min(0.01, max(0.0, deadline - time.monotonic())))
        return status

    def _exited(self) -> str:
        """The driver's exit in words, and whether a process it started still holds its stdout."""
        status = self.exit_status()
        assert status is not None
        held = " (a process it started still holds its stdout)" if self._stdout_held else ""
        return f"the driver exited with {describe_status(status)}{held}"

    def _gone(self, stream: str) -> str:
        """Why a pipe closed: the driver's exit status, or a driver that closed it and kept running."""
        status = self.wait_exit(GRACE_SECONDS)
        if status is None:
            return f"the driver closed its {stream} but did not exit"
        return f"the driver exited with {describe_status(status)}"

    def kill(self) -> None:
        """Kill the driver and every process it started, collect them all and then its stderr; safe to call twice."""
        if self._killed:
            return
        self._killed = True
        # While the driver is unreaped its pid, the group's id, cannot be reused, so the group is safe to signal.
        group_pinned = self.popen.returncode is None
        members = self.tree.kill(group_pinned) if self.tree is not None else {}
        if group_pinned:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.popen.pid, signal.SIGKILL)
        deadline = time.monotonic() + GRACE_SECONDS
        if self.tree is not None:
            self.tree.reap(members, deadline)
        # The driver is reaped last, after everything found through its group.
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(max(0.0, deadline - time.monotonic()))
        if self.tree is not None:
            _Subreaper.release()
        self.release()

    def release(self) -> None:
        """Close our ends of the pipes once the driver is gone; safe to call twice."""
        if self._released:
            return
        self._released = True
        self.selector.close()
        if self.pidfd is not None:
            os.close(self.pidfd)
        streams = [self.popen.stdin, self.popen.stdout]
        # A drain still blocked in read keeps its pipe: closing it could hand the number to another file.
        if self.stderr.finish():
            streams.append(self.popen.stderr)
        for stream in streams:
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


class _Failure(Exception):
    """A fault found while talking to the driver, before the stderr tail is attached."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


def describe_status(status: int) -> str:
    """An exit status in words: ``status 3`` or ``signal 9 (SIGKILL)``."""
    if status >= 0:
        return f"status {status}"
    try:
        name = signal.Signals(-status).name
    except ValueError:
        return f"signal {-status}"
    return f"signal {-status} ({name})"


def encode_request(request: Mapping[str, Any]) -> bytes:
    """One request line, exact for every JSON value; raises :class:`InvalidRequest` for anything else."""
    try:
        return jsonlines.dumps(request)
    except (TypeError, ValueError) as error:
        raise InvalidRequest(f"{request.get('op')!r} request is not JSON: {error}") from error


def decode_reply(line: bytes) -> Any:
    """Parse one reply line exactly; raises :class:`_Failure` ``garbage`` when it is not JSON."""
    try:
        return jsonlines.loads(line)
    except ValueError as error:
        raise _Failure("garbage", f"reply is not JSON ({error}): {quote(line)}") from error


def quote(line: bytes) -> str:
    """The start of a line, for a fault message."""
    text = repr(line[:QUOTE_LIMIT])
    return text + ("…" if len(line) > QUOTE_LIMIT else "")


def with_stderr(detail: str, tail: str, limit: int = START_TAIL_BYTES) -> str:
    """A fault detail followed by the end of the driver's stderr, indented."""
    text = tail.encode()[-limit:].decode("utf-8", errors="replace").rstrip("\n")
    if not text.strip():
        return f"{detail}\nthe driver wrote nothing to stderr"
    return f"{detail}\nthe driver's stderr ends with:\n" + "\n".join(f"  | {line}" for line in text.split("\n"))


def same_id(got: object, expected: int) -> bool:
    """Whether a reply id is the request's: ``1`` and ``1.0`` are the same JSON number, ``true`` is not."""
    return isinstance(got, int | float) and not isinstance(got, bool) and got == expected


class SubprocessPort:
    """A driver program as a :class:`~sessionlog_spec.protocol.messages.Port`: one process per run, ``hello`` first."""

    def __init__(
        self,
        command: str | Sequence[str],
        timeout: float = DEFAULT_TIMEOUT,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise ValueError("empty driver command")
        self.timeout = timeout
        self.max_reply_bytes = max_reply_bytes
        self.cwd = cwd
        self.env = env
        self._next_id = 0
        self._requests = 0
        self._seconds = 0.0
        self._process: DriverProcess | None = None
        self._stderr: StderrBuffer | None = None
        self._fault: PortFault | None = None
        self._hello: Hello | None = None
        self.restart()

    @property
    def hello(self) -> Hello:
        """The driver's ``hello``, read when the current process started."""
        if self._hello is None:
            raise self._dead()
        return self._hello

    @property
    def stats(self) -> PortStats:
        """Requests sent so far (``hello`` and ``bye`` included) and the seconds spent on them."""
        return PortStats(self._requests, self._seconds)

    @property
    def alive(self) -> bool:
        """Whether a driver process is running and has not faulted."""
        return self._process is not None and self._fault is None

    @property
    def pid(self) -> int | None:
        """The process id of the current driver, while there is one."""
        return None if self._process is None else self._process.popen.pid

    def stderr_tail(self, limit: int = STDERR_TAIL_BYTES) -> str:
        """The end of the current (or last) driver's stderr."""
        return "" if self._stderr is None else self._stderr.tail(limit)

    def restart(self) -> None:
        """Kill any running driver, start a fresh one and say ``hello``; raises :class:`PortFault`.

        A fault on the way quotes the driver's stderr tail in its detail: a driver that cannot start
        (a missing import, a wrong path) usually says why only there.
        """
        self._stop()
        self._fault = None
        self._hello = None
        try:
            self._process = DriverProcess(self.argv, self.cwd, self.env)
            self._stderr = self._process.stderr
        except PortFault as fault:
            self._fault = fault
            raise
        try:
            self._hello = self._say_hello()
        except PortFault as fault:
            self._fault = PortFault(fault.kind, with_stderr(fault.detail, fault.stderr_tail), fault.stderr_tail)
            raise self._fault from None

    def crash(self, op: str, args: Mapping[str, Any], delay: float) -> None:
        """Send one request, kill the driver and all it started ``delay`` seconds later (SIGKILL, no
        reply read: the request may have been carried out in part, whole or not at all), then start
        a fresh driver.  The storage group's crash trials; raises :class:`PortFault` if the new one
        cannot start."""
        process = self._process
        if process is None or self._fault is not None:
            raise self._dead()
        self._next_id += 1
        line = encode_request({"id": self._next_id, "op": op, **args})
        validate_request(jsonlines.loads(line))
        with contextlib.suppress(_Failure):
            process._write(memoryview(line))  # whatever the pipe takes now: a crash may cut the request too
        time.sleep(delay)
        self._process = None
        process.kill()
        self.restart()

    def _say_hello(self) -> Hello:
        """The driver's ``hello``, checked; raises :class:`PortFault`."""
        reply = self.call("hello")
        if not isinstance(reply, Ok):
            raise self._fault_now("start", f"hello refused: {reply.code}: {reply.message}")
        hello = hello_from(reply.result)
        if hello.protocol != PROTOCOL:
            raise self._fault_now("start", f"the driver speaks {hello.protocol!r}, the suite speaks {PROTOCOL!r}")
        return hello

    def call(self, op: str, **args: Any) -> Reply:
        """Send one request and return its reply; raises :class:`PortFault` when the driver breaks the protocol."""
        return self._call(op, args, self.timeout)

    def _call(self, op: str, args: Mapping[str, Any], timeout: float) -> Reply:
        """:meth:`call` with an explicit timeout."""
        if self._process is None or self._fault is not None:
            raise self._dead()
        self._next_id += 1
        line = encode_request({"id": self._next_id, "op": op, **args})
        # Validate what goes on the wire, which is plain JSON whatever containers the caller used.
        validate_request(jsonlines.loads(line))
        started = time.monotonic()
        self._requests += 1
        try:
            reply = self._exchange(op, line, timeout)
        finally:
            self._seconds += time.monotonic() - started
        return reply_from(reply)

    def _exchange(self, op: str, line: bytes, timeout: float) -> dict[str, Any]:
        """One round trip, every failure turned into a fault that kills the driver."""
        assert self._process is not None
        where = f"{op} (id {self._next_id})"
        try:
            reply = decode_reply(self._process.exchange(line, time.monotonic() + timeout, self.max_reply_bytes))
        except _Failure as failure:
            if failure.kind == "timeout":
                raise self._fault_now("timeout", f"{where}: timed out after {timeout:g} s {failure.detail}") from None
            raise self._fault_now(failure.kind, f"{where}: {failure.detail}") from None
        if isinstance(reply, dict) and "id" in reply and not same_id(reply["id"], self._next_id):
            raise self._fault_now("wrong-id", f"{where}: reply carries id {reply['id']!r}")
        try:
            validate_reply(op, reply)
        except PortFault as fault:
            raise self._fault_now(fault.kind, f"{where}: {fault.detail}") from None
        result: dict[str, Any] = reply
        return result

    def _fault_now(self, kind: str, detail: str) -> PortFault:
        """Kill the driver, record the fault with its stderr tail and return it for raising."""
        assert self._process is not None
        self._process.kill()
        self._fault = PortFault(kind, detail, self._process.stderr.tail())
        return self._fault

    def _dead(self) -> PortFault:
        """The fault to raise when a dead port is used."""
        if self._fault is None:
            return PortFault("exit", "the port is closed")
        fault = self._fault
        return PortFault(fault.kind, f"the port is dead after an earlier fault ({fault.detail}); restart it", fault.stderr_tail)

    def close(self) -> None:
        """Say ``bye``, give the driver a moment to exit, then kill it and what it started; safe to call twice."""
        process = self._process
        if process is None:
            return
        if self._fault is None:
            with contextlib.suppress(PortFault):
                self._call("bye", {}, min(self.timeout, GRACE_SECONDS))
        self._stop()

    def _stop(self) -> None:
        """Close stdin, give the driver a moment to exit, then kill it and everything it started."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.popen.stdin is not None:
            with contextlib.suppress(OSError):
                process.popen.stdin.close()
        process.wait_exit(GRACE_SECONDS)
        # Even a driver that left on its own may leave processes behind.
        process.kill()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.close()
