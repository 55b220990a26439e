"""Small builders of valid events for seqlog's unit tests."""

from __future__ import annotations

from typing import Any

from seqlog import Event
from seqlog.jsonvalue import FrozenObject

HEADER_LINE = {"type": "session", "version": 1, "id": "unit", "createdAt": 1, "delegationDepth": 0}
CONFIG = {"provider": "deepseek", "model": "deepseek-chat"}


def user(message_id: str = "u1", text: str = "hi") -> dict[str, Any]:
    return {"id": message_id, "role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "user"}}


def assistant(turn: int, step: int, message_id: str = "a1", calls: tuple[str, ...] = ()) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": "ok"}]
    content += [{"type": "tool-call", "id": c, "name": "bash", "arguments": "{}"} for c in calls]
    message = {"id": message_id, "role": "assistant", "content": content, "source": {"kind": "model", **CONFIG}}
    return {"turn": turn, "step": step, "message": message}


def tool_result(turn: int, step: int, call_id: str, text: str = "out", message_id: str | None = None) -> dict[str, Any]:
    block = {"type": "tool-result", "toolCallId": call_id, "content": [{"type": "text", "text": text}]}
    source = {"kind": "tool", "callId": call_id}
    message = {"id": message_id or f"r-{call_id}", "role": "user", "source": source, "content": [block]}
    return {"turn": turn, "step": step, "message": message}


def tool_call(turn: int, step: int, call_id: str) -> dict[str, Any]:
    return {"turn": turn, "step": step, "callId": call_id, "name": "bash", "arguments": "{}"}


def header(system: str | None = "Be careful.", **config: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"config": {**CONFIG, **config}}
    if system is not None:
        out["system"] = system
    return out


def data(event: Event) -> Any:
    """An event's payload, typed loosely for indexing in assertions."""
    assert isinstance(event.data, FrozenObject)
    return event.data
