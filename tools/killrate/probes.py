"""Tiny hand-written events and request sequences that show each mutant's patch at work.

A probe is a list of driver requests (without ids).  The tests send it to a fresh
:class:`seqlog.driver.SeqlogDriver` with and without the mutant's patch and require the replies to
differ, so every catalogue entry provably changes seqlog's behaviour.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

Request = dict[str, Any]
Probe = tuple[Request, ...]

T = 1_700_000_000_000
HEADER: dict[str, Any] = {"config": {"provider": "p", "model": "m"}}
HEADER_B: dict[str, Any] = {"config": {"provider": "p", "model": "m"}, "system": "Be terse."}
TOOL: dict[str, Any] = {"name": "read_file", "description": "Read a file.", "parameters": {"type": "object"}}
"""A header tool as the released rules have it: ``{name, description, parameters}``."""
SESSION_LINE = '{"type":"session","version":1,"id":"s","createdAt":0,"delegationDepth":0}'
STORE = "<store>"
"""The directory of a storage probe's store: a fresh one for every run of the probe."""


def event(type_: str, seq: int, data: dict[str, Any], **envelope: Any) -> dict[str, Any]:
    """One raw event at ``seq``."""
    return {"type": type_, "seq": seq, "time": T + seq, "data": data, **envelope}


def turn_start(seq: int, turn: int = 1) -> dict[str, Any]:
    return event("turn/start", seq, {"turn": turn})


def turn_end(seq: int, turn: int = 1, kind: str = "completed") -> dict[str, Any]:
    return event("turn/end", seq, {"turn": turn, "reason": {"kind": kind}})


def step_start(seq: int, turn: int = 1, step: int = 1) -> dict[str, Any]:
    return event("step/start", seq, {"turn": turn, "step": step})


def step_end(seq: int, turn: int = 1, step: int = 1) -> dict[str, Any]:
    return event("step/end", seq, {"turn": turn, "step": step})


def user(seq: int, op: Any = "append", sources: Sequence[int] | None = None) -> dict[str, Any]:
    """A ``user/message`` joining or replacing part of the surface."""
    data = {"id": f"u{seq}", "role": "user", "content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}}
    extra: dict[str, Any] = {"surfaceOp": op}
    if sources is not None:
        extra["sourceEventSeqs"] = list(sources)
    return event("user/message", seq, data, **extra)


def replace(start: int, end: int) -> dict[str, Any]:
    return {"op": "replace", "start": start, "end": end}


def assistant(seq: int, calls: Sequence[str] = (), turn: int = 1, step: int = 1) -> dict[str, Any]:
    """An ``assistant/message`` asking for ``calls``."""
    content: list[dict[str, Any]] = [{"type": "text", "text": "ok"}]
    content += [{"type": "tool-call", "id": c, "name": "read_file", "arguments": "{}"} for c in calls]
    source = {"kind": "model", "provider": "p", "model": "m"}
    message = {"id": f"a{seq}", "role": "assistant", "content": content, "source": source}
    return event("assistant/message", seq, {"turn": turn, "step": step, "message": message}, surfaceOp="append")


def chunk(seq: int, turn: int = 1, step: int = 1) -> dict[str, Any]:
    """An ``assistant/chunk`` streaming a piece of text."""
    return event("assistant/chunk", seq, {"turn": turn, "step": step, "chunk": {"type": "text-delta", "index": 0, "text": "h"}})


def tool_call(seq: int, call_id: str, turn: int = 1, step: int = 1) -> dict[str, Any]:
    return event("tool/call", seq, {"turn": turn, "step": step, "callId": call_id, "name": "read_file", "arguments": "{}"})


def tool_result(
    seq: int,
    call_id: str,
    *,
    block_id: str | None = None,
    is_error: bool = False,
    op: Any = "append",
    sources: Sequence[int] | None = None,
    error_code: str | None = None,
) -> dict[str, Any]:
    """A ``tool/result`` answering ``call_id`` (its block may claim ``block_id`` instead)."""
    block = {
        "type": "tool-result",
        "toolCallId": block_id or call_id,
        "isError": is_error,
        "content": [{"type": "text", "text": "out"}],
    }
    message = {"id": f"r-{call_id}", "role": "user", "source": {"kind": "tool", "callId": call_id}, "content": [block]}
    data: dict[str, Any] = {"turn": 1, "step": 1, "message": message}
    if error_code is not None:
        data["error"] = {"name": "E", "code": error_code}
    extra: dict[str, Any] = {"surfaceOp": op}
    if sources is not None:
        extra["sourceEventSeqs"] = list(sources)
    return event("tool/result", seq, data, **extra)


def header_event(seq: int, header: dict[str, Any], reason: str = "initial", **more: Any) -> dict[str, Any]:
    return event("request/header", seq, {"header": header, "reason": reason, **more})


# Request sequences ----------------------------------------------------------------------------------


def appends(*events: dict[str, Any]) -> Probe:
    """``reset``, then each event appended, then ``state``."""
    return ({"op": "reset"}, *({"op": "append", "event": e} for e in events), {"op": "state"})


def pure(op: str, *events: dict[str, Any]) -> Probe:
    """One pure op over a whole log."""
    return ({"op": op, "events": list(events)},)


def load(*lines: str, final_newline: bool = True) -> Probe:
    """``load`` of a stored log made of ``lines``, then ``state``."""
    text = "\n".join(lines) + ("\n" if final_newline else "")
    return ({"op": "reset"}, {"op": "load", "jsonl": text}, {"op": "state"})


def decision(events: Sequence[dict[str, Any]], header: dict[str, Any], *, first: bool, series: bool) -> Probe:
    """One ``header_decision``."""
    instance = {"first_request": first, "begins_series": series, "replaced_since_last_request": False}
    return ({"op": "header_decision", "events": list(events), "header": header, "instance": instance},)


def upgrade(*events: dict[str, Any]) -> Probe:
    """``upgrade_v0`` of a v0 log holding ``events``."""
    header = {"type": "session", "version": 0, "id": "s", "createdAt": 0, "delegationDepth": 0}
    return ({"op": "upgrade_v0", "log": {"header": header, "events": list(events)}},)


def line(event_: dict[str, Any]) -> str:
    """The stored (compact JSON) line of ``event_``."""
    return json.dumps(event_, separators=(",", ":"))


def note_line(seq: int) -> str:
    """The stored line of a log-only event at ``seq``: a session title the user typed (it cites no message)."""
    return line(event("session/title", seq, {"title": "t", "messageSeqs": [], "source": {"kind": "user"}}))
