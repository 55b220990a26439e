"""Loading a stored log: codec, the v0 edge when needed, validation, then crash repair.

This is the read path every port must agree on byte for byte: the same text gives the same
session (and the same closers) or the same violation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from sessionlog_spec.model.event import Event
from sessionlog_spec.model.json_value import JsonObject, as_int, as_object, freeze
from sessionlog_spec.model.jsonl import (
    FORMAT_VERSION,
    LEGACY_VERSION,
    DecodedLog,
    decode_jsonl,
    encode_jsonl,
    version_of,
)
from sessionlog_spec.model.legacy import StoredLog, upgrade_v0
from sessionlog_spec.model.relationships import SessionIdentity
from sessionlog_spec.model.repair import interrupted_turn_closers
from sessionlog_spec.model.session import Fold, SessionState, append_event, fold_session
from sessionlog_spec.model.violation import Violation


@dataclass(frozen=True, slots=True)
class ReadLog:
    """A stored log as a reader keeps it: the v1 header line and the validated v1 events."""

    header: JsonObject
    """The v1 header line (a v0 log's header after the edge)."""
    state: SessionState
    """The session the events build, before any repair."""
    decoded: DecodedLog
    """What the codec read: which lines the events came from and what it dropped."""


@dataclass(frozen=True, slots=True)
class LoadedSession:
    """A stored log, read and repaired."""

    header: JsonObject
    """The v1 header line (a v0 log's header after the edge)."""
    state: SessionState
    """The session, closers included."""
    dropped_torn_tail: bool
    """The reader dropped text: a torn final line, or an uncommitted damaged suffix."""
    closers: tuple[Event, ...]
    """The repair events appended to close a crash-orphaned turn (empty when the log was closed)."""


def identity_of(header: Mapping[str, object]) -> SessionIdentity:
    """What a (v1) header line tells the relationship rules about its session (INV-REL-29)."""
    seed_length = header.get("seedLength", 0)
    return SessionIdentity(
        session_id=str(header.get("id", "")),
        format_version=FORMAT_VERSION,
        has_parent="parentSession" in header,
        # A count is read as the number it is: ``3.0`` is the seed length 3, as the header check reads it.
        inherited_event_count=as_int(seed_length) or 0,
    )


Decode = Callable[[str], DecodedLog | Violation]
"""What reads a stored text's lines: :func:`~sessionlog_spec.model.jsonl.decode_jsonl`, or a function
that gives the same answer to the same text (one that remembers the texts it read before)."""


def read_log(text: str, fold: Fold = fold_session, decode: Decode = decode_jsonl) -> ReadLog | Violation:
    """INV-JSONL-1..7, INV-JSONL-9..10: read a stored log as v1 events, with no repair.

    ``fold`` validates the events (:func:`~sessionlog_spec.model.session.fold_session`, or an
    equivalent), ``decode`` reads the lines (:func:`~sessionlog_spec.model.jsonl.decode_jsonl`, or an
    equivalent).
    """
    decoded = decode(text)
    if isinstance(decoded, Violation):
        return decoded
    version = version_of(decoded.header)
    header = decoded.header
    if version == FORMAT_VERSION:
        state = fold(decoded.events, where="line", positions=decoded.lines, identity=identity_of(header))
    else:
        assert version == LEGACY_VERSION, "header_line_problem refuses every other version"
        upgraded = upgrade_v0(StoredLog(decoded.header, tuple(_frozen_events(decoded.events))), fold)
        if isinstance(upgraded, Violation):
            return upgraded
        header = upgraded.header
        # Still the edge's reading: a v0 log may restart an interrupted turn (INV-LEGACY-6).
        state = fold(upgraded.events, identity=identity_of(header), legacy_restart=True)
    if isinstance(state, Violation):
        return state
    return ReadLog(header, state, decoded)


def load_session(text: str, fold: Fold = fold_session, decode: Decode = decode_jsonl) -> LoadedSession | Violation:
    """INV-JSONL-1..10, INV-REPAIR-5: read a stored log as a v1 session, closing an open tail turn
    (``fold`` and ``decode`` as for :func:`read_log`)."""
    read = read_log(text, fold, decode)
    if isinstance(read, Violation):
        return read
    state = read.state
    closers = interrupted_turn_closers(state.events)
    for closer in closers:
        repaired = append_event(state, closer)
        assert not isinstance(repaired, Violation), repaired
        state = repaired
    return LoadedSession(read.header, state, read.decoded.dropped_anything, closers)


def _frozen_events(raws: tuple[Mapping[str, object], ...]) -> list[JsonObject]:
    """The parsed lines as frozen JSON objects, the form the v0 edge reads."""
    frozen = [as_object(freeze(raw)) for raw in raws]
    return [f for f in frozen if f is not None]


def save_session(header: JsonObject, state: SessionState, packed: bool = False) -> str:
    """The stored form of a session: what :func:`load_session` reads back unchanged."""
    return encode_jsonl(header, state.events, packed)
