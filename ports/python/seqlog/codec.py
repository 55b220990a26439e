"""The JSONL codec: the session header line, one event per line, and the strict reader.

A stored log is a header line ``{"type": "session", "version": 1, "id", "createdAt", …}`` followed by
one event per line, every line ending in ``\\n``.  Reading is strict: the segment after the last
newline is a torn write and is dropped; any other malformed line refuses the whole log, naming the
line, and a log is never half-read.  The store and the conformance driver both read and write
through these functions.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from seqlog.errors import Code, LibCode, SeqlogError
from seqlog.event import Event, encode_event
from seqlog.headerline import FORMAT_VERSION, LEGACY_VERSION, check_header_line
from seqlog.jsonvalue import FrozenObject, freeze
from seqlog.legacy import StoredLog, upgrade_with_session
from seqlog.session import Clock, Session

__all__ = [
    "FORMAT_VERSION",
    "LEGACY_VERSION",
    "LoadedLog",
    "check_header_line",
    "encode_event_line",
    "encode_jsonl",
    "encode_line",
    "load_bytes",
    "load_text",
    "parse_line",
]

_BOM = b"\xef\xbb\xbf"


class LineError(ValueError):
    """What is wrong with one line, without its number."""


@dataclass(frozen=True, slots=True)
class LoadedLog:
    """A stored log read, validated and repaired in memory."""

    header: FrozenObject
    """The v1 header line (a v0 log's header after the edge)."""
    session: Session
    """The session, repair closers included."""
    version: int
    """The format version the stored log declared."""
    dropped_torn_tail: bool
    closers: tuple[Event, ...]
    """Closers appended to end a crash-orphaned turn; empty when the log was closed."""


# Reading ----------------------------------------------------------------------------------------


def _reject_constant(name: str) -> object:
    raise LineError(f"non-JSON constant {name}")


def _unique_object(pairs: list[tuple[str, object]]) -> dict[str, object]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        duplicate = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise LineError(f"duplicate key {duplicate!r}")
    return obj


def _parse_strict(text: str) -> object:
    """The exact reading rules: Python's strict JSON grammar, no constants, no duplicate keys."""
    try:
        return json.loads(text, object_pairs_hook=_unique_object, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as error:
        raise LineError(f"is not valid JSON ({error})") from None


def _parse_fast(line: bytes) -> dict[str, Any] | None:
    """The line parsed by orjson when it is exactly what orjson writes for the value, else ``None``.

    A line that round-trips byte for byte has no duplicate keys, no whitespace and only canonical
    numbers, so orjson's reading of it is the strict reading; anything else takes the slow path.
    """
    try:
        value = orjson.loads(line)
        if type(value) is dict and orjson.dumps(value) == line:
            return value
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):
        pass
    return None


def parse_line(line: bytes | str) -> dict[str, Any]:
    """One line (without its newline) parsed as a JSON object; raises :class:`LineError`.

    Strict: no byte-order mark, no carriage return, valid UTF-8, no NaN/Infinity, no duplicate keys.
    """
    if isinstance(line, str):
        if line.startswith("\ufeff"):
            raise LineError("starts with a byte-order mark")
        if "\r" in line:
            raise LineError("contains a carriage return (CRLF line endings are not allowed)")
        text: str | None = None
        try:
            data = line.encode("utf-8")
        except UnicodeEncodeError:
            data, text = b"", line  # lone surrogates: only the strict reader can take them
    else:
        if line.startswith(_BOM):
            raise LineError("starts with a byte-order mark")
        if b"\r" in line:
            raise LineError("contains a carriage return (CRLF line endings are not allowed)")
        data, text = line, None
    if data:
        fast = _parse_fast(data)
        if fast is not None:
            return fast
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise LineError(f"is not valid UTF-8 ({error})") from None
    value = _parse_strict(text or "")
    if not isinstance(value, dict):
        raise LineError("is not a JSON object")
    return value


def _split(data: bytes | str) -> tuple[list[Any], bool]:
    """Complete lines and whether a torn final segment was dropped."""
    newline: Any = b"\n" if isinstance(data, bytes) else "\n"
    lines = data.split(newline)
    torn = lines.pop()
    return lines, len(torn) > 0


def committed_length(data: bytes) -> int:
    """The byte length of the complete lines of ``data``: where a torn tail starts."""
    return data.rfind(b"\n") + 1


def load_bytes(data: bytes, *, clock: Clock | None = None) -> LoadedLog:
    """Read a stored log from its bytes, through the v0 edge when needed, and close an open turn."""
    lines, torn = _split(data)
    return _load(lines, torn, clock)


def load_text(text: str, *, clock: Clock | None = None) -> LoadedLog:
    """:func:`load_bytes` for a log already decoded to text."""
    lines, torn = _split(text)
    return _load(lines, torn, clock)


def _parse_numbered(line: bytes | str, number: int) -> dict[str, Any]:
    try:
        return parse_line(line)
    except LineError as error:
        raise SeqlogError(Code.JSONL_MALFORMED_LINE, f"line {number} {error}") from None


def _load(lines: Sequence[bytes | str], torn: bool, clock: Clock | None) -> LoadedLog:
    # Every line is parsed before any other problem is reported: a malformed line anywhere wins over
    # an invalid header or a contract violation on an earlier line, so validation runs alongside
    # parsing and its first refusal is held back until the last line has parsed.
    if not lines:
        raise SeqlogError(Code.JSONL_HEADER_MISSING, "log has no complete header line")
    raw_header = _parse_numbered(lines[0], 1)
    held: SeqlogError | None = None
    try:
        check_header_line(raw_header)
    except SeqlogError as error:
        held = error
    version = raw_header.get("version")
    header = freeze(raw_header) if held is None else None
    folding = held is None and version == FORMAT_VERSION
    session = Session(header=header, clock=clock) if folding else None  # type: ignore[arg-type]
    collected: list[object] = []
    for number, line in enumerate(lines[1:], start=2):
        raw = _parse_numbered(line, number)
        if session is not None and held is None:
            try:
                session.commit(session.validate(raw))
            except SeqlogError as error:
                held = error.at(f"line {number}")
        elif held is None and version == LEGACY_VERSION:
            collected.append(raw)
    if held is not None:
        raise held
    assert isinstance(header, FrozenObject)
    if session is None:
        if version != LEGACY_VERSION:
            raise SeqlogError(Code.FORMAT_VERSION_UNSUPPORTED, f"line 1: format version {version} is not supported")
        upgraded, session = upgrade_with_session(StoredLog(header, tuple(collected)))
        header = FrozenObject(upgraded.header)
        session = _with_clock(session, clock)
    closers = session.repair()
    return LoadedLog(header, session, int(version), torn, closers)  # type: ignore[arg-type]


def _with_clock(session: Session, clock: Clock | None) -> Session:
    if clock is not None:
        session._clock = clock
    return session


# Writing ----------------------------------------------------------------------------------------


def encode_line(value: object) -> bytes:
    """One compact JSON line without its newline; UTF-8 text, escaped only where UTF-8 cannot hold it."""
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        pass
    # orjson refuses lone surrogates and nesting past 254 levels; the standard encoder takes both,
    # escaping to ASCII so that the line is valid UTF-8 and reads back to the same value.
    try:
        return json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode("ascii")
    except RecursionError:
        raise SeqlogError(LibCode.PAYLOAD_TOO_DEEP, "value is nested too deeply to encode") from None
    except (TypeError, ValueError) as error:
        raise SeqlogError(Code.JSON_NOT_LOSSLESS, f"value cannot be encoded as JSON: {error}") from None


def encode_event_line(event: Event) -> bytes:
    """The stored line of one event, newline included."""
    return encode_line(encode_event(event)) + b"\n"


def encode_jsonl(header: Mapping[str, Any], events: Iterable[Event]) -> bytes:
    """The stored form of a log; :func:`load_bytes` reads it back to the same events."""
    parts = [encode_line(header) + b"\n"]
    parts.extend(encode_event_line(event) for event in events)
    return b"".join(parts)
