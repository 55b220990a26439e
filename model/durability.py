"""Durability: what a store that acknowledged events as durable must recover after a crash.

A store tells its caller how many of its events are on stable storage.  Whatever happens next (the
process killed mid-write, the machine losing power, bytes past the durable ones damaged), the
stored bytes, read as :func:`~sessionlog_spec.model.load.load_session` reads them, must give a session
whose events begin with every acknowledged event.  Reopening then leaves a file that reads back
as exactly that session (INV-JSONL-8).
"""

from __future__ import annotations

from collections.abc import Sequence

from sessionlog_spec.model.event import Event
from sessionlog_spec.model.load import LoadedSession, load_session
from sessionlog_spec.model.violation import Violation


def lost_durable_events(acknowledged: Sequence[Event], recovered: Sequence[Event]) -> int:
    """INV-JSONL-11: how many acknowledged events the recovered session does not keep, from the
    first one it lost or changed on (0: nothing acknowledged was lost)."""
    for index, event in enumerate(acknowledged):
        if index >= len(recovered) or recovered[index] != event:
            return len(acknowledged) - index
    return 0


def recovery(acknowledged: Sequence[Event], stored: str) -> LoadedSession | Violation | int:
    """INV-JSONL-11: what reopening ``stored`` recovers, or the refusal of the bytes, or (a positive
    number) how many acknowledged events the bytes lost."""
    loaded = load_session(stored)
    if isinstance(loaded, Violation):
        return loaded
    lost = lost_durable_events(acknowledged, loaded.state.events)
    return lost if lost else loaded
