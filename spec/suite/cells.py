"""Reach cells: which rule a refusal enforced, on which event type, through which op.

A rule is enforced in many places: the same payload check runs on every event type that carries
the member, and on every path that admits events (``append``, ``seed``, ``load``, ``upgrade_v0``,
the pure folds, reopening a store).  A suite that sends a rule's bad value on one type through one
op says nothing about the others, so coverage counts *cells*: (invariant × event type × op), one for
every refusal the model gave and the port was asked about.

The event type is the type of the event the refusal names.  The model's messages begin with where
the problem is (``seed index 3``, ``line 7``, ``v0 index 2``); an ``append`` names its candidate.  A
refusal that names no event (a missing header line, a log-level check) is the type :data:`LOG_LEVEL`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from sessionlog_spec.model.legacy import REFUSED_TYPES, V0_INVENTORY
from sessionlog_spec.suite.judged import parsed_line
from sessionlog_spec.suite.rule_table import CODE_OWNERS

Cell = tuple[str, str, str]
"""(invariant ID, event type, op)."""

LOG_LEVEL = "(log)"
"""The type of a refusal that names no event."""
NOT_AN_EVENT = "(not-an-event)"
"""The type of a refusal whose event is not an object with a string ``type`` (a malformed line, a stray value)."""
UNKNOWN_TYPE = "(unknown-type)"
"""The type of an event whose ``type`` is a string outside every vocabulary (all such strings are one cell)."""
HEADER_LINE = "(header-line)"
"""Line 1 of a stored log: the session header."""
ANY_TYPE = "*"
"""The type of a cell whose rule is about the line or the envelope, whatever the event's type."""
TYPE_AGNOSTIC = frozenset({"INV-LOG-1", "INV-LOG-2", "INV-LOG-3", "INV-LOG-4", "INV-LOG-5"})
"""Envelope and JSON-value rules: every event carries them alike, so the type an example happened to
break them on is no cell of its own (nor is it for the codec's line rules, ``INV-JSONL-*``)."""

_WHERE = re.compile(r"^(?:seed |v0 |v1 log: )?(index|line) (\d+)\b")


KNOWN_TYPES = frozenset(V0_INVENTORY | REFUSED_TYPES.keys())
"""Every type a cell names by itself: the current vocabulary, the v0 inventory and the refused legacy forms."""


def cell_key(cell: Cell) -> str:
    """A cell as one report key: ``INV-PAY-1 turn/start append``."""
    return " ".join(cell)


def _type_of(raw: object) -> str:
    if isinstance(raw, Mapping):
        type_ = raw.get("type")
        if isinstance(type_, str):
            return type_ if type_ in KNOWN_TYPES else UNKNOWN_TYPE
    return NOT_AN_EVENT


def _events(op: str, args: Mapping[str, Any]) -> Sequence[object]:
    if op == "upgrade_v0":
        log = args.get("log")
        events = log.get("events") if isinstance(log, Mapping) else None
    else:
        events = args.get("events")
    return events if isinstance(events, list) else []


def _line(text: object, number: int) -> str:
    if not isinstance(text, str):
        return LOG_LEVEL
    if number == 1:
        return HEADER_LINE
    lines = text.split("\n")
    if not 1 <= number <= len(lines):
        return LOG_LEVEL
    # The model's own reader: a line may nest deeper than Python's recursive decoder goes (and the
    # reader remembers it: the line was just read, by the oracle).
    parsed = parsed_line(lines[number - 1])
    return NOT_AN_EVENT if isinstance(parsed, str) else _type_of(parsed)


def refused_type(op: str, args: Mapping[str, Any], message: str) -> str:
    """The type of the event the model's refusal ``message`` names."""
    if op in ("append", "store_append"):
        return _type_of(args.get("event"))
    where = _WHERE.match(message)
    if where is None:
        return LOG_LEVEL
    kind, number = where.group(1), int(where.group(2))
    if kind == "line":
        return _line(args.get("jsonl"), number)
    events = _events(op, args)
    return _type_of(events[number]) if number < len(events) else LOG_LEVEL


def refusal_cells(op: str, args: Mapping[str, Any], code: str, message: str) -> tuple[Cell, ...]:
    """The cells one refusal reached: one per invariant that owns ``code``."""
    type_ = refused_type(op, args, message)
    return tuple((invariant, _typed(invariant, type_), op) for invariant in CODE_OWNERS.get(code, ()))


def _typed(invariant: str, type_: str) -> str:
    agnostic = invariant in TYPE_AGNOSTIC or invariant.startswith("INV-JSONL-")
    return ANY_TYPE if agnostic and type_ not in (HEADER_LINE, LOG_LEVEL) else type_
