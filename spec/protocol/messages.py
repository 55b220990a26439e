"""A port under test, as the suite sees it: something that answers protocol requests.

Every implementation is reached through :class:`Port`, whether it runs in this process
(:class:`sessionlog_spec.suite.ports.inprocess.InProcessPort` around a request handler) or as a subprocess
speaking ``sessionlog-driver/1`` over JSON Lines (:class:`sessionlog_spec.suite.ports.subprocess.SubprocessPort`).
``call`` returns :class:`Ok` or :class:`Refused`; anything else the port does wrong raises :class:`PortFault`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

PROTOCOL = "sessionlog-driver/1"
GROUPS = ("session", "surface", "header", "repair", "jsonl", "read", "legacy", "compaction", "storage")
"""The capability groups, in report order."""

OPS_BY_GROUP: dict[str, tuple[str, ...]] = {
    "session": ("reset", "seed", "append", "state"),
    "surface": ("fold_surface",),
    "header": ("fold_header", "header_decision"),
    "repair": ("repair",),
    "jsonl": ("save", "load"),
    "read": ("read",),
    "legacy": ("upgrade_v0",),
    "compaction": ("cuts",),
    "storage": ("store_create", "store_open", "store_append", "store_checkpoint", "store_close"),
}
PROTOCOL_CODES = frozenset({"UNSUPPORTED", "BAD_REQUEST", "UNMAPPED"})


@dataclass(frozen=True, slots=True)
class Ok:
    """A successful reply."""

    result: Any


@dataclass(frozen=True, slots=True)
class Refused:
    """A refusal: the port's error code and message."""

    code: str
    message: str


Reply = Ok | Refused


@dataclass(frozen=True, slots=True)
class Hello:
    """What a port says about itself."""

    protocol: str
    name: str
    version: str
    capabilities: tuple[str, ...]
    format_version: int


class PortFault(Exception):
    """The port broke the protocol: it hung, exited, printed garbage or replied out of shape."""

    def __init__(self, kind: str, detail: str, stderr_tail: str = "") -> None:
        super().__init__(f"port fault ({kind}): {detail}")
        self.kind = kind
        self.detail = detail
        self.stderr_tail = stderr_tail

    def __reduce__(self) -> tuple[type[PortFault], tuple[str, str, str], dict[str, Any]]:
        """Pickled with its own arguments, so a fault found in a job process (``--jobs``) reaches the report."""
        return type(self), (self.kind, self.detail, self.stderr_tail), self.__dict__


class Port(Protocol):
    """An implementation under test."""

    @property
    def hello(self) -> Hello:
        """The port's ``hello`` reply, read once when the port starts."""
        ...

    def call(self, op: str, **args: Any) -> Reply:
        """Send one request and return its reply; raises :class:`PortFault` on a protocol failure."""
        ...

    def close(self) -> None:
        """Say ``bye`` and release the port."""
        ...


Handler = Callable[[dict[str, Any]], dict[str, Any]]
"""A driver's request handler: one request object in, one reply object out."""


def hello_from(result: Any) -> Hello:
    """Parse a ``hello`` result."""
    impl = result["implementation"]
    return Hello(
        protocol=result["protocol"],
        name=impl["name"],
        version=impl["version"],
        capabilities=tuple(result["capabilities"]),
        format_version=result["format_version"],
    )


def reply_from(message: dict[str, Any]) -> Reply:
    """Turn a reply object into :class:`Ok` or :class:`Refused`."""
    if message["ok"]:
        return Ok(message.get("result"))
    error = message["error"]
    return Refused(error["code"], error["message"])
