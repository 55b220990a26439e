"""INV-JSONL: the stored form, the released reader's recovery, and load with repair."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import icontract

from sessionlog_spec.contracts import ENABLED
from sessionlog_spec.contracts._support import accepted
from sessionlog_spec.model import durability as _durability
from sessionlog_spec.model import jsonl as _jsonl
from sessionlog_spec.model import load as _load
from sessionlog_spec.model.event import KNOWN_EVENT_TYPES, Event, encode_event
from sessionlog_spec.model.json_value import JsonObject, is_safe_natural, json_equal
from sessionlog_spec.model.jsonl import DecodedLog
from sessionlog_spec.model.load import LoadedSession
from sessionlog_spec.model.rows import PACKED_ROW_CHUNKS, row_events
from sessionlog_spec.model.violation import Code, Violation


def header_line_is_session(result: DecodedLog) -> bool:
    """INV-JSONL-1: the released header members, `delegationDepth` among the required ones."""
    h = result.header
    return (
        h.get("type") == "session"
        and isinstance(h.get("id"), str)
        and set(h) <= _jsonl.HEADER_LINE_KEYS
        and all(key in h for key in _jsonl.HEADER_LINE_REQUIRED)
        and is_safe_natural(h.get("delegationDepth"))
    )


def _complete_lines(text: str) -> list[str]:
    return text.split("\n")[:-1]


def _parsed(line: str) -> object:
    try:
        return json.loads(line, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        return None


def _proves_commit(value: object, after_unparsable: bool) -> bool:
    """A ``turn/end`` row that proves the damage before it committed (one the codec can decode,
    unless the damage was a line that was not JSON at all)."""
    if not (isinstance(value, Mapping) and value.get("type") == "turn/end"):
        return False
    return after_unparsable or not isinstance(row_events(value, next_seq=-1), str)  # -1: validate, never expand


def only_uncommitted_suffix_dropped(text: str, result: DecodedLog) -> bool:
    """INV-JSONL-3: every complete row before the first faulty one is kept, none after it, and no
    ``turn/end`` at or after the first faulty row proves the suffix committed."""
    lines = _complete_lines(text)
    kept_until = len(lines) + 1 if result.dropped_from_line is None else result.dropped_from_line
    kept_lines = sorted(set(result.lines))
    if kept_lines != list(range(2, kept_until)) or result.dropped_torn_tail != (not text.endswith("\n")):
        return False
    if result.dropped_from_line is None:
        return True
    first = _parsed(lines[kept_until - 1]) if lines[kept_until - 1].strip() else None
    after_unparsable = first is None and lines[kept_until - 1] != "null"
    return not any(_proves_commit(_parsed(line), after_unparsable) for line in lines[kept_until - 1 :])


def kept_rows_are_json_objects(text: str, result: DecodedLog) -> bool:
    """INV-JSONL-4: each kept row is one JSON object as a JSON reader reads it."""
    lines = _complete_lines(text)
    for number in set(result.lines):
        try:
            value = json.loads(lines[number - 1], parse_constant=_refuse_constant)
        except ValueError:
            return False
        if not isinstance(value, dict):
            return False
    return True


def _refuse_constant(name: str) -> object:
    raise ValueError(name)


def kept_events_are_contiguous(result: DecodedLog) -> bool:
    """INV-JSONL-5: the kept events run from seq 0 without a gap."""
    return all(event.get("seq") == index for index, event in enumerate(result.events))


def packed_rows_expand_whole(text: str, result: DecodedLog) -> bool:
    """INV-JSONL-9: a packed row gives all of its members as chunk events, a plain row one event."""
    lines = _complete_lines(text)
    counts: dict[int, int] = {}
    for number in result.lines:
        counts[number] = counts.get(number, 0) + 1
    for number, count in counts.items():
        row = json.loads(lines[number - 1])
        if row.get("type") in PACKED_ROW_CHUNKS:
            payload = row["data"]["args" if row["type"] == "tool-call-chunks" else "texts"]
            expected_types = {"assistant/chunk"}
        else:
            payload, expected_types = [row], {row.get("type")}
        events = [e for e, n in zip(result.events, result.lines, strict=True) if n == number]
        if count != len(payload) or {e.get("type") for e in events} != expected_types:
            return False
    return True


def provenance_is_expanded(result: DecodedLog) -> bool:
    """INV-JSONL-10: kept events carry plain seq lists, never ranges."""
    return all(
        all(type(seq) is int for seq in event["sourceEventSeqs"])  # type: ignore[attr-defined]
        for event in result.events
        if isinstance(event.get("sourceEventSeqs"), list)
    )


@icontract.ensure(lambda result: not accepted(result) or header_line_is_session(result), "INV-JSONL-1", enabled=ENABLED)
@icontract.ensure(
    lambda text, result: not accepted(result) or only_uncommitted_suffix_dropped(text, result),
    "INV-JSONL-3",
    enabled=ENABLED,
)
@icontract.ensure(
    lambda text, result: not accepted(result) or kept_rows_are_json_objects(text, result), "INV-JSONL-4", enabled=ENABLED
)
@icontract.ensure(lambda result: not accepted(result) or kept_events_are_contiguous(result), "INV-JSONL-5", enabled=ENABLED)
@icontract.ensure(
    lambda text, result: not accepted(result) or packed_rows_expand_whole(text, result), "INV-JSONL-9", enabled=ENABLED
)
@icontract.ensure(lambda result: not accepted(result) or provenance_is_expanded(result), "INV-JSONL-10", enabled=ENABLED)
def decode_jsonl(text: str) -> DecodedLog | Violation:
    """The header line and the rows a reader keeps."""
    return _jsonl.decode_jsonl(text)


def reads_back(header: JsonObject, events: Sequence[Event], result: str) -> bool:
    """INV-JSONL-2."""
    decoded = _jsonl.decode_jsonl(result)
    return (
        isinstance(decoded, DecodedLog)
        and not decoded.dropped_anything
        and json_equal(decoded.header, header)
        and len(decoded.events) == len(events)
        and all(json_equal(raw, encode_event(e)) for raw, e in zip(decoded.events, events, strict=True))
    )


@icontract.ensure(lambda header, events, result: reads_back(header, events, result), "INV-JSONL-2", enabled=ENABLED)
def encode_jsonl(header: JsonObject, events: Sequence[Event], packed: bool = False) -> str:
    """The stored form of a log, one event per line or with chunk runs packed."""
    return _jsonl.encode_jsonl(header, events, packed)


def loaded_is_contiguous(result: LoadedSession) -> bool:
    """INV-JSONL-5."""
    return all(e.seq == i for i, e in enumerate(result.state.events))


def loaded_types_are_known_or_ignorable(text: str, result: LoadedSession) -> bool:
    """INV-JSONL-6: and no ignorable event was dropped on the way."""
    events = result.state.events
    ignorable_lines = sum(1 for line in text.split("\n")[1:-1] if _ignorable(line)) if not result.dropped_torn_tail else 0
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


def _stored_version(text: str) -> object:
    try:
        line = json.loads(text.split("\n", 1)[0])
    except ValueError:
        return None
    return line.get("version") if isinstance(line, dict) else None


def reload_is_stable(text: str, result: LoadedSession) -> bool:
    """INV-JSONL-8, less the v0 interrupted-turn restart, whose v1 form the v1 reader refuses (INV-LEGACY-6)."""
    again = _load.load_session(_load.save_session(result.header, result.state))
    if isinstance(again, Violation):
        return again.code is Code.TURN_ALREADY_OPEN and _stored_version(text) == 0
    return again.closers == () and again.state == result.state


@icontract.ensure(lambda result: not accepted(result) or loaded_is_contiguous(result), "INV-JSONL-5", enabled=ENABLED)
@icontract.ensure(
    lambda text, result: not accepted(result) or loaded_types_are_known_or_ignorable(text, result),
    "INV-JSONL-6",
    enabled=ENABLED,
)
@icontract.ensure(lambda result: not accepted(result) or version_is_current(result), "INV-JSONL-7", enabled=ENABLED)
@icontract.ensure(lambda text, result: not accepted(result) or reload_is_stable(text, result), "INV-JSONL-8", enabled=ENABLED)
def load_session(text: str) -> LoadedSession | Violation:
    """Read a stored log as a repaired v1 session."""
    return _load.load_session(text)


def keeps_the_acknowledged(acknowledged: Sequence[Event], stored: str, result: LoadedSession | Violation | int) -> bool:
    """INV-JSONL-11: a recovery is accepted only when its events begin with every acknowledged event."""
    if not isinstance(result, LoadedSession):
        return True
    events = result.state.events
    return len(events) >= len(acknowledged) and all(a == b for a, b in zip(acknowledged, events, strict=False))


@icontract.ensure(
    lambda acknowledged, stored, result: keeps_the_acknowledged(acknowledged, stored, result), "INV-JSONL-11", enabled=ENABLED
)
@icontract.ensure(lambda result: not isinstance(result, int) or result > 0, "INV-JSONL-11", enabled=ENABLED)
def recovery(acknowledged: Sequence[Event], stored: str) -> LoadedSession | Violation | int:
    """What reopening a store's bytes recovers, or the refusal, or how many acknowledged events were lost."""
    return _durability.recovery(acknowledged, stored)
