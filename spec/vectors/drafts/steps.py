"""Constructors for vector steps: one protocol request each, without its ``id``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sessionlog_spec.model.jsonl import encode_line
from sessionlog_spec.vectors.format import Draft, Step

DEFAULT_LINE: dict[str, Any] = {"type": "session", "version": 1, "id": "conformance", "createdAt": 0, "delegationDepth": 0}
V0_LINE: dict[str, Any] = {
    "type": "session",
    "version": 0,
    "id": "legacy-session",
    "createdAt": 1_700_000_000_000,
    "delegationDepth": 0,
}


Events = Sequence[Any] | Mapping[str, Any]
"""A log, or a generator description standing for one (``sessionlog_spec.vectors.realistic``)."""


def _events(events: Events) -> Any:
    return dict(events) if isinstance(events, Mapping) else list(events)


def seed(events: Events) -> Step:
    """Replace the session with a seed."""
    return {"op": "seed", "events": _events(events)}


def append(event: Any) -> Step:
    """Append one candidate event."""
    return {"op": "append", "event": event}


def state() -> Step:
    """Observe the session."""
    return {"op": "state"}


def save() -> Step:
    """The session's stored form."""
    return {"op": "save"}


def load(text: str | Mapping[str, Any]) -> Step:
    """Replace the session with a stored log."""
    return {"op": "load", "jsonl": text}


def fold_surface(events: Events) -> Step:
    """Replay a log through the surface rules."""
    return {"op": "fold_surface", "events": _events(events)}


def fold_header(events: Events) -> Step:
    """The request header in force after a log."""
    return {"op": "fold_header", "events": _events(events)}


def header_decision(
    events: Sequence[Any], header: Any, first: bool = False, begins: bool = False, replaced: bool = False
) -> Step:
    """Ask the writer rule which snapshot the next request needs."""
    instance = {"first_request": first, "begins_series": begins, "replaced_since_last_request": replaced}
    return {"op": "header_decision", "events": list(events), "header": header, "instance": instance}


def repair(events: Events) -> Step:
    """The closers for a log."""
    return {"op": "repair", "events": _events(events)}


def cuts(events: Events) -> Step:
    """The balance at every cut of a log's surface."""
    return {"op": "cuts", "events": _events(events)}


def upgrade(header: Mapping[str, Any], events: Sequence[Any]) -> Step:
    """Run the v0-to-v1 edge on a whole log."""
    return {"op": "upgrade_v0", "log": {"header": dict(header), "events": list(events)}}


def jsonl(events: Sequence[Any], header: Mapping[str, Any] = DEFAULT_LINE) -> str:
    """A stored log: the header line, then one line per event, each ending in a newline."""
    return "".join(encode_line(value) + "\n" for value in (header, *events))


def case(file: str, slug: str, invariants: str, description: str, *steps_: Step) -> Draft:
    """A draft in ``file`` with id ``file/slug``; ``invariants`` is a space-separated list of IDs."""
    return Draft(f"{file}/{slug}", file, tuple(invariants.split()), description, steps_)
