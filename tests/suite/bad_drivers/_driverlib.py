"""The well-behaved part of every bad driver: answer ``hello``, ``reset`` and ``bye``, misbehave on one op.

A bad driver calls :func:`serve` with what to do instead of replying to its trigger op (``state``
unless the first command-line argument names another).  Only the standard library is used, so the
scripts run under any Python.
"""

from __future__ import annotations

import json
import sys
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


def serve(misbehave: Misbehave, hello: dict[str, Any] | None = None) -> None:
    """Answer requests until ``bye``, calling ``misbehave`` instead of replying to the trigger op."""
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
