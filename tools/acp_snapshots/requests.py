"""What a model request is made of, and how the surface projects to its messages.

A request is the header in force (the canonical request envelope: config, system prompt, tools)
plus the messages: one per surface node, in surface order, where a ``user/message`` contributes
its data, an ``assistant/message`` its ``message`` unless that has no content, and a
``tool/result`` its ``message``.  The agent builds requests from its live session; replay rebuilds
them from the stored log.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


def project_node(event_type: str, data: Any) -> Any | None:
    """The provider message one surface node contributes, as plain JSON, or ``None``."""
    if event_type == "user/message":
        return data
    if event_type == "assistant/message":
        message = data["message"]
        return message if len(message["content"]) > 0 else None
    if event_type == "tool/result":
        return data["message"]
    raise ValueError(f"{event_type} is not a surface type")


def project_surface(nodes: Iterable[tuple[str, Any]]) -> list[Any]:
    """The messages of a request: every surface node ``(type, plain data)`` projected, empties dropped."""
    messages = []
    for event_type, data in nodes:
        message = project_node(event_type, data)
        if message is not None:
            messages.append(message)
    return messages


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One model request as the agent recorded it (the params of a ``_sessionlog/model_request``)."""

    turn: int
    step: int
    log_length: int
    """How many events the log held when the request was sent: the seq its answer gets."""
    header: dict[str, Any]
    messages: list[Any]
    header_event: dict[str, Any] | None
    """The ``request/header`` written just before this request (seq, reason, startsSeries), if any."""

    def to_json(self) -> dict[str, Any]:
        """The notification params."""
        return {
            "turn": self.turn,
            "step": self.step,
            "logLength": self.log_length,
            "headerEvent": self.header_event,
            "header": self.header,
            "messages": self.messages,
        }

    @classmethod
    def from_json(cls, params: Mapping[str, Any]) -> ModelRequest:
        """Read the notification params back."""
        return cls(
            turn=int(params["turn"]),
            step=int(params["step"]),
            log_length=int(params["logLength"]),
            header=dict(params["header"]),
            messages=list(params["messages"]),
            header_event=None if params["headerEvent"] is None else dict(params["headerEvent"]),
        )
