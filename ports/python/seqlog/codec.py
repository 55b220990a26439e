"""The JSONL codec: the session header line, the stored rows, and the recovering reader.

A stored log is a header line ``{"type": "session", "version": 1, "id", "createdAt",
"delegationDepth", …}`` followed by one row per line, every line ending in ``\\n``.  A row is one
event or a packed run of ``assistant/chunk`` events (:mod:`seqlog.rows`).  Reading follows the
released reader:

* each complete line is JSON as ``JSON.parse`` reads it: surrounding whitespace (``\\r``
  included) is fine, a duplicated key keeps its last value, bytes that are not UTF-8 read as U+FFFD;
* the header line is checked first (:mod:`seqlog.headerline`), its version before anything else;
* rows are read in order into a committed prefix contiguous from seq 0.  The first faulty row (not
  a JSON object, a malformed packed row or provenance range, or not the next seq) and everything
  after it are dropped like a torn write, unless that row or a later decodable row is a
  ``turn/end``: a ``turn/end`` is written only once its turn is durable, so damage before it is
  corruption and refuses the log, naming the first faulty line;
* the kept events are then validated as a whole (v1, or v0 through the edge).

The segment after the last newline is a torn write and is dropped.  The store and the conformance
driver both read and write through these functions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from seqlog.errors import Code, LibCode, SeqlogError
from seqlog.event import Event, encode_event
from seqlog.headerline import (
    FORMAT_VERSION,
    LEGACY_VERSION,
    check_header_line,
    check_seed_length,
    with_delegation_depth,
)
from seqlog.jsonvalue import FrozenObject, freeze, is_safe_natural
from seqlog.legacy import StoredLog, upgrade_with_session
from seqlog.relations import LogIdentity
from seqlog.rows import (
    PACKED_TAGS,
    RowError,
    SeqSpans,
    decode_packed_row,
    decode_seq_ranges,
    expand_spans,
    pack_chunk_runs,
)
from seqlog.session import Clock, Session

__all__ = [
    "FORMAT_VERSION",
    "LEGACY_VERSION",
    "LoadedLog",
    "ReadLog",
    "check_header_line",
    "encode_event_line",
    "encode_header_line",
    "encode_jsonl",
    "encode_line",
    "encode_rows",
    "load_bytes",
    "load_text",
    "parse_line",
    "read_bytes",
    "read_text",
]


class LineError(ValueError):
    """What is wrong with one line, without its number."""


@dataclass(frozen=True, slots=True)
class ReadLog:
    """A stored log read and validated, nothing repaired: what the reader keeps."""

    header: FrozenObject
    """The v1 header line (a v0 log's header after the edge)."""
    session: Session
    """The kept events as a session, without repair closers."""
    version: int
    """The format version the stored log declared."""
    dropped_torn_tail: bool
    """Whether anything was dropped: a torn final line, or a damaged suffix no ``turn/end`` committed."""
    dropped_line: int | None
    """The first faulty line when a damaged suffix was dropped, else ``None``."""
    committed_length: int
    """The length of the input (bytes, or characters for text) holding the header line and the kept rows."""


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
    """Whether anything was dropped: a torn final line, or a damaged suffix no ``turn/end`` committed."""
    closers: tuple[Event, ...]
    """Closers appended to end a crash-orphaned turn; empty when the log was closed."""
    dropped_line: int | None = None
    """The first faulty line when a damaged suffix was dropped, else ``None``."""
    committed_length: int = 0
    """The length of the input holding the header line and the kept rows: where the next row belongs."""


# Lines ------------------------------------------------------------------------------------------


def _reject_constant(name: str) -> object:
    raise LineError(f"non-JSON constant {name}")


_DIGITS_AS_FLOAT = 400
"""An integer literal longer than this is beyond every double, so ``JSON.parse`` reads it as
±infinity; it is read as a float here too, in time linear in its length, and the verdict never
depends on the interpreter's integer-string limit (whose smallest setting, 640, is longer)."""


def _js_int(text: str) -> object:
    """An integer literal as exactly as JSON.parse keeps it apart: ``-0`` is negative zero; one
    too long for any double is ±infinity (shorter ones stay exact, and outside ±(2^53 − 1) they
    are refused all the same)."""
    if text == "-0":
        return -0.0
    if len(text) > _DIGITS_AS_FLOAT:
        return float(text)
    return int(text)


def _parse_text(text: str) -> object:
    """JSON.parse's reading: JSON whitespace around the value, the last of duplicated keys, no constants.

    Like JSON.parse it reads any depth: a line too deep for the recursive decoder is read again by
    :func:`_parse_flat` (how deep a value may nest in an event is the lossless rule's business).
    """
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_int=_js_int)
    except ValueError as error:
        raise LineError(f"is not valid JSON ({error})") from None
    except RecursionError:
        return _parse_flat(text)


_TOKEN = re.compile(
    r"""[ \t\n\r]*(?:
      (?P<punct>[\[\]{},:])
    | (?P<string>"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*")
    | (?P<number>-?(?:0|[1-9][0-9]*)(?P<fraction>(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?))
    | (?P<word>true|false|null)
    )""",
    re.VERBOSE,
)
_WORDS: dict[str, object] = {"true": True, "false": False, "null": None}


def _parse_flat(text: str) -> object:
    """A pushdown reading of JSON over a token stream: no recursion, so no depth limit."""
    # Each frame is an open container: a list, or a dict with the key its next value goes to.
    frames: list[tuple[list[Any] | dict[str, Any], str | None]] = []
    at, expect = 0, "value"  # value | value-or-close | key | key-or-close | colon | comma-or-close
    result: object = None
    while True:
        token = _TOKEN.match(text, at)
        if token is None:
            if expect == "end" and text[at:].strip(" \t\n\r") == "":
                return result
            raise LineError(f"is not valid JSON (unexpected text at char {at})")
        at = token.end()
        punct, string, number, word = token.group("punct", "string", "number", "word")
        value: object = _NOTHING
        if expect in ("key", "key-or-close"):
            if string is not None:
                frame, _ = frames[-1]
                frames[-1] = (frame, json.loads(string))
                expect = "colon"
                continue
            if not (expect == "key-or-close" and punct == "}"):
                raise LineError(f"is not valid JSON (expected a member name at char {token.start()})")
        elif expect == "colon":
            if punct != ":":
                raise LineError(f"is not valid JSON (expected ':' at char {token.start()})")
            expect = "value"
            continue
        elif expect == "comma-or-close":
            frame, _ = frames[-1]
            if punct == ",":
                expect = "key" if isinstance(frame, dict) else "value"
                continue
            if punct != ("}" if isinstance(frame, dict) else "]"):
                raise LineError(f"is not valid JSON (expected ',' or a closing bracket at char {token.start()})")
        elif expect == "end":
            raise LineError(f"is not valid JSON (extra data at char {token.start()})")
        if punct in ("]", "}"):
            if expect == "value" or (punct == "]") != isinstance(frames[-1][0], list):
                raise LineError(f"is not valid JSON (unexpected {punct!r} at char {token.start()})")
            value = frames.pop()[0]
        elif punct == "[":
            frames.append(([], None))
            expect = "value-or-close"
            continue
        elif punct == "{":
            frames.append(({}, None))
            expect = "key-or-close"
            continue
        elif punct is not None:
            raise LineError(f"is not valid JSON (unexpected {punct!r} at char {token.start()})")
        elif string is not None:
            value = json.loads(string)
        elif number is not None:
            value = float(number) if token.group("fraction") else _js_int(number)
        else:
            value = _WORDS[word]
        if not frames:
            result, expect = value, "end"
            continue
        frame, key = frames[-1]
        if isinstance(frame, list):
            frame.append(value)
        else:
            frame[key or ""] = value
        expect = "comma-or-close"


_NOTHING = object()


def _parse_fast(line: bytes) -> dict[str, Any] | None:
    """The line parsed by orjson when it is exactly what orjson writes for the value, else ``None``.

    A line that round-trips byte for byte has no duplicate keys, no whitespace, no ``-0`` and only
    canonical numbers, so orjson's reading of it is the exact reading; anything else takes the
    slow path.
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

    As ``JSON.parse`` reads the line decoded with replacement: invalid UTF-8 reads as U+FFFD,
    JSON whitespace (a final ``\\r`` included) surrounds the value, a duplicated key keeps its last
    value; a byte-order mark, NaN or Infinity is not JSON.
    """
    text: str | None = None
    if isinstance(line, str):
        try:
            data = line.encode("utf-8")
        except UnicodeEncodeError:
            data, text = b"", line  # lone surrogates: only the standard reader takes them
    else:
        data = line
    if data:
        fast = _parse_fast(data)
        if fast is not None:
            return fast
        text = line if isinstance(line, str) else data.decode("utf-8", "replace")
    value = _parse_text(text or "")
    if not isinstance(value, dict):
        raise LineError("is not a JSON object")
    return value


def committed_length(data: bytes) -> int:
    """The byte length of the complete lines of ``data``: where a torn tail starts."""
    return data.rfind(b"\n") + 1


# Reading ----------------------------------------------------------------------------------------


def _is_number(value: object) -> bool:
    kind = type(value)
    return kind is int or kind is float


def _split(data: bytes | str) -> tuple[list[Any], bool]:
    """The complete lines of ``data`` and whether a torn final segment follows them."""
    newline: Any = b"\n" if isinstance(data, bytes) else "\n"
    lines: list[Any] = data.split(newline)
    torn = lines.pop()
    return lines, len(torn) > 0


def _parse_numbered(line: bytes | str, number: int) -> dict[str, Any]:
    """Line ``number`` parsed as a JSON object, or the refusal naming it."""
    try:
        return parse_line(line)
    except LineError as error:
        raise SeqlogError(Code.JSONL_MALFORMED_LINE, f"line {number} {error}") from None


def _decode_row(line: bytes | str, number: int) -> tuple[list[dict[str, Any]], bool, SeqSpans | None]:
    """The events row ``number`` stores, whether it was packed, and its decoded provenance.

    Raises the refusal naming the row when it is faulty.  Range-encoded provenance is checked here
    but expanded only once the row is kept.
    """
    value = _parse_numbered(line, number)
    type_ = value.get("type")
    try:
        if type(type_) is str and type_ in PACKED_TAGS:
            return decode_packed_row(value, type_), True, None
        if "sourceEventSeqs" in value:
            seq = value.get("seq")
            if not (isinstance(seq, int | float) and is_safe_natural(seq)):
                raise RowError("seq must be a non-negative safe integer when sourceEventSeqs is present")
            return [value], False, decode_seq_ranges(value["sourceEventSeqs"], int(seq))
    except RowError as error:
        raise SeqlogError(Code.JSONL_MALFORMED_LINE, f"line {number}: {error}") from None
    return [value], False, None


@dataclass(slots=True)
class _Scanned:
    """What the row scan keeps: raw header, raw events with their lines, and what was dropped."""

    header: dict[str, Any]
    events: list[dict[str, Any]]
    lines: list[int]
    torn: bool
    dropped_line: int | None
    committed: int


def _not_json(line: bytes | str) -> bool:
    try:
        _parse_text(line if isinstance(line, str) else line.decode("utf-8", "replace"))
    except LineError:
        return True
    return False


def _parses_as_turn_end(line: bytes | str) -> bool:
    try:
        value = parse_line(line)
    except LineError:
        return False
    return value.get("type") == "turn/end"


def _committed_damage(issue: SeqlogError, number: int) -> SeqlogError:
    return SeqlogError(
        issue.code, f"{issue.message}; line {number} is a later turn/end, so the damaged rows were committed"
    )


def _scan(data: bytes | str) -> _Scanned:
    """Split, parse and decode the rows, keeping the committed prefix (see the module docstring)."""
    lines, torn = _split(data)
    if not lines:
        raise SeqlogError(Code.JSONL_HEADER_MISSING, "log has no complete header line")
    header = _parse_numbered(lines[0], 1)
    check_header_line(header)
    events: list[dict[str, Any]] = []
    numbers: list[int] = []
    issue: SeqlogError | None = None  # the first faulty row: dropped with its suffix, or the refusal
    issue_line: int | None = None
    not_json = False  # the first faulty row was no JSON at all: the line scanner's fault, not the codec's
    committed = offset = len(lines[0]) + 1
    for number, line in enumerate(lines[1:], start=2):
        offset += len(line) + 1
        try:
            decoded, packed, spans = _decode_row(line, number)
        except SeqlogError as faulty:
            if issue is None:
                issue, issue_line, not_json = faulty, number, _not_json(line)
            elif not_json and _parses_as_turn_end(line):
                # The line scanner judges a parsed row before the codec decodes it.
                raise _committed_damage(issue, number) from None
            continue
        first = decoded[0]
        is_turn_end = not packed and first.get("type") == "turn/end"
        if issue is not None:
            if is_turn_end:
                raise _committed_damage(issue, number)
            continue
        seq = first.get("seq")
        expected = len(events)
        if not (_is_number(seq) and seq == expected):
            message = f"line {number}: event seq {seq!r} is not contiguous; expected {expected}"
            issue, issue_line = SeqlogError(Code.SEQ_NOT_CONTIGUOUS, message), number
            if is_turn_end:
                raise _committed_damage(issue, number)
            continue
        if spans is not None:
            decoded = [{**first, "sourceEventSeqs": expand_spans(spans)}]
        events.extend(decoded)
        numbers.extend([number] * len(decoded))
        committed = offset
    check_seed_length(header, len(events))
    return _Scanned(header, events, numbers, torn or issue is not None, issue_line, committed)


def _read(data: bytes | str, clock: Clock | None, upgraded: bool = False) -> ReadLog:
    scanned = _scan(data)
    header = freeze(scanned.header)
    assert isinstance(header, FrozenObject)
    version = int(header["version"])
    if version == FORMAT_VERSION:
        # Markers of this generation are checked against the session the header line names.
        session = Session(header=header, clock=clock, identity=LogIdentity.of_header(header))
        # A generation the v0 edge wrote keeps what the edge admitted (the interrupted-turn restart).
        session._legacy_restart = upgraded
        for raw, number in zip(scanned.events, scanned.lines, strict=True):
            try:
                session.commit(session.validate(raw))
            except SeqlogError as error:
                raise error.at(f"line {number}") from None
        session._legacy_restart = False
        if upgraded:
            session._legacy_length = len(session._events)
        try:
            session.check_complete()
        except SeqlogError as error:
            raise error.at(f"line {scanned.lines[-1]}") from None
    else:
        converted, session = upgrade_with_session(StoredLog(header, tuple(scanned.events)))
        header = FrozenObject(converted.header)
        session.adopt_identity(LogIdentity.of_header(header))
        if clock is not None:
            session._clock = clock
    return ReadLog(header, session, version, scanned.torn, scanned.dropped_line, scanned.committed)


def read_bytes(data: bytes, *, clock: Clock | None = None) -> ReadLog:
    """Read a stored log from its bytes, through the v0 edge when needed; nothing is repaired."""
    return _read(data, clock)


def read_text(text: str, *, clock: Clock | None = None) -> ReadLog:
    """:func:`read_bytes` for a log already decoded to text."""
    return _read(text, clock)


def _load(read: ReadLog) -> LoadedLog:
    closers = read.session.repair()
    return LoadedLog(
        read.header, read.session, read.version, read.dropped_torn_tail, closers, read.dropped_line, read.committed_length
    )


def load_bytes(data: bytes, *, clock: Clock | None = None, upgraded: bool = False) -> LoadedLog:
    """Read a stored log from its bytes, through the v0 edge when needed, and close an open turn.

    ``upgraded`` says the v1 bytes are a generation the v0 edge wrote (a store's upgraded file): the
    replay then admits what the edge admitted, and appends after it still never do.
    """
    return _load(_read(data, clock, upgraded))


def load_text(text: str, *, clock: Clock | None = None) -> LoadedLog:
    """:func:`load_bytes` for a log already decoded to text."""
    return _load(_read(text, clock))


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


def encode_header_line(header: Mapping[str, Any]) -> bytes:
    """The stored header line, newline included; ``delegationDepth`` is always written (``0`` when absent)."""
    return encode_line(with_delegation_depth(header)) + b"\n"


def encode_rows(events: Iterable[Event], *, pack_chunks: bool = False) -> bytes:
    """The stored rows of ``events``, one line each; with ``pack_chunks``, chunk runs as packed rows."""
    if not pack_chunks:
        return b"".join(encode_event_line(event) for event in events)
    rows = pack_chunk_runs([encode_event(event) for event in events])
    return b"".join(encode_line(row) + b"\n" for row in rows)


def encode_jsonl(header: Mapping[str, Any], events: Iterable[Event], *, pack_chunks: bool = False) -> bytes:
    """The stored form of a log; :func:`load_bytes` reads it back to the same events.

    ``pack_chunks`` writes every run of at least three consecutive chunk deltas of one block as one
    packed row (the released writer's default; off by default here, which writes one event a line).
    """
    return encode_header_line(header) + encode_rows(events, pack_chunks=pack_chunks)
