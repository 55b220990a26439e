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

Reads and writes go through a selector on non-blocking pipes with a deadline, so no driver can hang
the suite; stderr is drained by a thread into a bounded buffer, so a chatty driver cannot block on
it either.  After a fault the process is killed and the port is dead until :meth:`restart`.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shlex
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
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
READ_CHUNK = 64 * 1024
GRACE_SECONDS = 1.0
"""How long an exiting or closing driver gets before it is killed."""
QUOTE_LIMIT = 200


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
        """Wait for the drain to reach end of file, bounded because a grandchild may hold the pipe open."""
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


class DriverProcess:
    """One running driver: its pipes, its stderr buffer and the unread part of its stdout."""

    def __init__(self, argv: Sequence[str], cwd: str | os.PathLike[str] | None, env: Mapping[str, str] | None) -> None:
        try:
            # Its own process group, so that a kill also reaches anything a wrapper script started.
            self.popen = subprocess.Popen(
                list(argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=None if env is None else dict(env),
                bufsize=0,
                process_group=0,
            )
        except (OSError, ValueError) as error:
            raise PortFault("start", f"cannot start {shlex.join(argv)}: {error}") from error
        assert self.popen.stdin is not None and self.popen.stdout is not None and self.popen.stderr is not None
        self.stdin_fd = self.popen.stdin.fileno()
        self.stdout_fd = self.popen.stdout.fileno()
        os.set_blocking(self.stdin_fd, False)
        os.set_blocking(self.stdout_fd, False)
        self.stderr = StderrBuffer(self.popen.stderr)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.stdout_fd, selectors.EVENT_READ)
        self.pending = bytearray()
        self._scanned = 0
        self._released = False

    def exchange(self, request: bytes, deadline: float, max_bytes: int) -> bytes:
        """Write one request line and read one reply line before ``deadline``; raises on failure."""
        rest = memoryview(request)
        rest = rest[self._write(rest) :]
        if rest:
            self.selector.register(self.stdin_fd, selectors.EVENT_WRITE)
            try:
                while rest:
                    # Whatever the driver writes meanwhile is kept, or a full stdout would spin this loop.
                    if self.stdout_fd in self._wait(deadline, "writing the request"):
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
            self._wait(deadline, "waiting for the reply")
            self._read_some()

    def _read_some(self) -> None:
        """Append what stdout has now; end of file means the driver is gone."""
        try:
            chunk = os.read(self.stdout_fd, READ_CHUNK)
        except BlockingIOError:
            return
        if not chunk:
            raise _Failure("exit", self._gone("stdout"))
        self.pending += chunk

    def _wait(self, deadline: float, doing: str) -> set[int]:
        """The descriptors ready before the deadline; raises a timeout when there are none."""
        remaining = deadline - time.monotonic()
        ready = self.selector.select(remaining) if remaining > 0 else []
        if not ready:
            raise _Failure("timeout", doing)
        return {key.fd for key, _ in ready}

    def _gone(self, stream: str) -> str:
        """Why a pipe closed: the driver's exit status, or a driver that closed it and kept running."""
        try:
            status = self.popen.wait(GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            return f"the driver closed its {stream} but did not exit"
        return f"the driver exited with {describe_status(status)}"

    def kill(self) -> None:
        """Kill the driver and everything in its process group, then collect its stderr."""
        # Only while the leader is unreaped: until then its pid, the group's id, cannot be reused.
        if self.popen.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.popen.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(GRACE_SECONDS)
        self.release()

    def release(self) -> None:
        """Close our ends of the pipes once the driver is gone; safe to call twice."""
        if self._released:
            return
        self._released = True
        self.selector.close()
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
        """Kill any running driver, start a fresh one and say ``hello``; raises :class:`PortFault`."""
        self._stop()
        self._fault = None
        self._hello = None
        try:
            self._process = DriverProcess(self.argv, self.cwd, self.env)
            self._stderr = self._process.stderr
        except PortFault as fault:
            self._fault = fault
            raise
        reply = self.call("hello")
        if not isinstance(reply, Ok):
            raise self._fault_now("start", f"hello refused: {reply.code}: {reply.message}")
        hello = hello_from(reply.result)
        if hello.protocol != PROTOCOL:
            raise self._fault_now("start", f"the driver speaks {hello.protocol!r}, the suite speaks {PROTOCOL!r}")
        self._hello = hello

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
        """Say ``bye``, give the driver a moment to exit, then kill it; safe to call twice."""
        process = self._process
        if process is None:
            return
        if self._fault is None:
            with contextlib.suppress(PortFault):
                self._call("bye", {}, min(self.timeout, GRACE_SECONDS))
        self._stop()

    def _stop(self) -> None:
        """Close stdin, wait briefly for the driver to exit and kill it if it does not."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.popen.stdin is not None:
            with contextlib.suppress(OSError):
                process.popen.stdin.close()
        try:
            process.popen.wait(GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            return
        process.release()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.close()
