"""INV-JSONL: the stored form, its strict reader, and load with repair."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence

import icontract

from sessionlog_spec.contracts import ENABLED
from sessionlog_spec.contracts._support import accepted
from sessionlog_spec.model import jsonl as _jsonl
from sessionlog_spec.model import load as _load
from sessionlog_spec.model.event import KNOWN_EVENT_TYPES, Event, encode_event
from sessionlog_spec.model.json_value import JsonObject, json_equal
from sessionlog_spec.model.jsonl import DecodedLog
from sessionlog_spec.model.load import LoadedSession
from sessionlog_spec.model.violation import Violation


def header_line_is_session(result: DecodedLog) -> bool:
    """INV-JSONL-1."""
    h = result.header
    return h.get("type") == "session" and isinstance(h.get("id"), str) and h.get("id") != "" and "version" in h


def only_torn_tail_dropped(text: str, result: DecodedLog) -> bool:
    """INV-JSONL-3: every complete line is kept; the segment after the last newline is dropped."""
    complete = text.count("\n")
    tail = text[text.rfind("\n") + 1 :]
    return len(result.events) == complete - 1 and result.dropped_torn_tail == (tail != "")


def _recording(pairs: list[list[tuple[str, object]]]) -> Callable[[list[tuple[str, object]]], dict[str, object]]:
    def hook(p: list[tuple[str, object]]) -> dict[str, object]:
        pairs.append(p)
        return dict(p)

    return hook


def complete_lines_are_objects(text: str) -> bool:
    """INV-JSONL-4: a strict reading of every complete line gives one JSON object."""
    for line in text.split("\n")[:-1]:
        if line.startswith("\ufeff") or "\r" in line:
            return False
        pairs: list[list[tuple[str, object]]] = []
        try:
            value = json.loads(line, object_pairs_hook=_recording(pairs))
        except ValueError:
            return False
        if not isinstance(value, dict) or any(len({k for k, _ in p}) != len(p) for p in pairs):
            return False
        if "NaN" in line or "Infinity" in line:
            # Only a problem when outside a string; re-parse refusing the constants to tell.
            try:
                json.loads(line, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
            except ValueError:
                return False
    return True


@icontract.ensure(lambda result: not accepted(result) or header_line_is_session(result), "INV-JSONL-1", enabled=ENABLED)
@icontract.ensure(
    lambda text, result: not accepted(result) or only_torn_tail_dropped(text, result),
    "INV-JSONL-3",
    enabled=ENABLED,
)
@icontract.ensure(lambda text, result: not accepted(result) or complete_lines_are_objects(text), "INV-JSONL-4", enabled=ENABLED)
def decode_jsonl(text: str) -> DecodedLog | Violation:
    """Split and parse a stored log."""
    return _jsonl.decode_jsonl(text)


def reads_back(header: JsonObject, events: Sequence[Event], result: str) -> bool:
    """INV-JSONL-2."""
    decoded = _jsonl.decode_jsonl(result)
    return (
        isinstance(decoded, DecodedLog)
        and not decoded.dropped_torn_tail
        and json_equal(decoded.header, header)
        and len(decoded.events) == len(events)
        and all(json_equal(raw, encode_event(e)) for raw, e in zip(decoded.events, events, strict=True))
    )


@icontract.ensure(lambda header, events, result: reads_back(header, events, result), "INV-JSONL-2", enabled=ENABLED)
def encode_jsonl(header: JsonObject, events: Sequence[Event]) -> str:
    """The stored form of a log."""
    return _jsonl.encode_jsonl(header, events)


def loaded_is_contiguous(result: LoadedSession) -> bool:
    """INV-JSONL-5."""
    return all(e.seq == i for i, e in enumerate(result.state.events))


def loaded_types_are_known_or_ignorable(text: str, result: LoadedSession) -> bool:
    """INV-JSONL-6: and no ignorable event was dropped on the way."""
    events = result.state.events
    ignorable_lines = sum(1 for line in text.split("\n")[1:-1] if _ignorable(line))
    return all(e.type in KNOWN_EVENT_TYPES or e.ignorable for e in events) and ignorable_lines <= sum(
        1 for e in events if e.ignorable
    )


def _ignorable(line: str) -> bool:
    try:
        value = json.loads(line)
    except ValueError:
        return False
    return isinstance(value, Mapping) and value.get("ignorable") is True


def version_is_current(result: LoadedSession) -> bool:
    """INV-JSONL-7."""
    return result.header.get("version") == 1


def reload_is_stable(result: LoadedSession) -> bool:
    """INV-JSONL-8."""
    again = _load.load_session(_load.save_session(result.header, result.state))
    return isinstance(again, LoadedSession) and again.closers == () and again.state == result.state


@icontract.ensure(lambda result: not accepted(result) or loaded_is_contiguous(result), "INV-JSONL-5", enabled=ENABLED)
@icontract.ensure(
    lambda text, result: not accepted(result) or loaded_types_are_known_or_ignorable(text, result),
    "INV-JSONL-6",
    enabled=ENABLED,
)
@icontract.ensure(lambda result: not accepted(result) or version_is_current(result), "INV-JSONL-7", enabled=ENABLED)
@icontract.ensure(lambda result: not accepted(result) or reload_is_stable(result), "INV-JSONL-8", enabled=ENABLED)
def load_session(text: str) -> LoadedSession | Violation:
    """Read a stored log as a repaired v1 session."""
    return _load.load_session(text)
