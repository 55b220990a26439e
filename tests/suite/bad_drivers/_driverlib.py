"""The well-behaved part of every bad driver: answer ``hello``, ``reset`` and ``bye``, misbehave on one op.

A bad driver calls :func:`serve` with what to do instead of replying to its trigger op (``state``
unless the first command-line argument names another).  Only the standard library is used, so the
scripts run under any Python.

When the environment names a file in ``BAD_DRIVER_PIDS``, every driver process and every process it
starts through :func:`spawn` appends ``<pid> <start time>`` to it, so a test can check that none of
them outlives the port (the start time, from ``/proc`` on Linux and 0 elsewhere, tells a reused pid
apart).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

HELLO: dict[str, Any] = {
    "protocol": "sessionlog-driver/1",
    "implementation": {"name": "bad-driver", "version": "0"},
    "capabilities": ["session"],
    "format_version": 1,
}

Misbehave = Callable[[dict[str, Any]], None]


def say(message: str) -> None:
    """Write to stderr, which the suite must show in the fault."""
    print(message, file=sys.stderr, flush=True)


def write(data: bytes) -> None:
    """Write raw bytes to stdout at once."""
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def reply(request_id: Any, result: Any) -> None:
    """Write a success reply line."""
    write(json.dumps({"id": request_id, "ok": True, "result": result}).encode() + b"\n")


def start_time(pid: int) -> int:
    """A process's start time in clock ticks after boot (Linux), 0 where ``/proc`` cannot tell."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            data = stat.read()
        return int(data[data.rindex(b")") + 2 :].split()[19])
    except (OSError, ValueError, IndexError):
        return 0


def record_pid() -> None:
    """Append this process's pid and start time to the ``BAD_DRIVER_PIDS`` file, when there is one."""
    path = os.environ.get("BAD_DRIVER_PIDS")
    if path:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, f"{os.getpid()} {start_time(os.getpid())}\n".encode())
        finally:
            os.close(fd)


def spawn(escape: bool) -> None:
    """Start a process that keeps stdin, stdout and stderr open and sleeps; return once it has recorded its pid.

    With ``escape`` it leaves the driver's tree as far as it can: a double fork, so its parent is gone,
    and a session of its own, so a kill of the driver's process group misses it.
    """
    ready, told = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(ready)
        if escape:
            os.setsid()
            if os.fork() != 0:
                os._exit(0)
        record_pid()
        os.write(told, b"x")
        os.close(told)
        time.sleep(3600)
        os._exit(0)
    os.close(told)
    os.read(ready, 1)
    os.close(ready)
    if escape:
        os.waitpid(child, 0)


def serve(misbehave: Misbehave, hello: dict[str, Any] | None = None) -> None:
    """Answer requests until ``bye``, calling ``misbehave`` instead of replying to the trigger op."""
    record_pid()
    trigger = sys.argv[1] if len(sys.argv) > 1 else "state"
    for line in sys.stdin.buffer:
        request = json.loads(line)
        op = request["op"]
        if op == trigger:
            misbehave(request)
        elif op == "hello":
            reply(request["id"], HELLO if hello is None else hello)
        else:
            reply(request["id"], None)
        if op == "bye":
            return
