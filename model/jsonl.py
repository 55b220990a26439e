"""The JSONL codec, as pure functions over text: the stored form as the released reader reads it.

A stored log is a header line ``{"type": "session", "version", "id", "createdAt", "delegationDepth",
…}`` followed by rows, one per line (:mod:`.rows`: an event, or a packed run of chunks).  The design
note says nothing about the physical form, so the released reader decides it (the rule of
authority in ``invariants.md``): a torn final line is dropped; so is the first *faulty* row
(unparsable, malformed, or off the seq sequence) with everything after it, unless that row or a
later one is a ``turn/end``, which proves the damaged region was committed and refuses the log,
naming the faulty line.  See ``docs/conformance/on-disk-format.md``.
"""

from __future__ import annotations

import json
import json.decoder
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from sessionlog_spec.model.event import Event, encode_event
from sessionlog_spec.model.json_value import (
    JsonObject,
    as_int,
    freeze,
    is_safe_natural,
    lossless_problem,
    thaw,
)
from sessionlog_spec.model.rows import Record, is_number, pack_chunk_runs, row_events
from sessionlog_spec.model.violation import Code, Violation

FORMAT_VERSION = 1
LEGACY_VERSION = 0
READABLE_VERSIONS = frozenset({LEGACY_VERSION, FORMAT_VERSION})
HEADER_LINE_REQUIRED = ("type", "version", "id", "createdAt", "delegationDepth")
HEADER_LINE_OPTIONAL = ("cwd", "parentSession", "seedLength", "origin", "agentPreset")
HEADER_LINE_KEYS = frozenset(HEADER_LINE_REQUIRED + HEADER_LINE_OPTIONAL)
_DIGITS_AS_FLOAT = 400
"""Integer literals longer than this are beyond every double and read as ±infinity, as ``JSON.parse``
reads them (INV-LOG-4): in time linear in their length, and never through the interpreter's
integer-string limit (whose smallest setting, 640 digits, is longer), so no setting of it changes a
verdict.  Shorter literals stay exact integers, refused all the same outside the safe range."""


@dataclass(frozen=True, slots=True)
class DecodedLog:
    """The rows of a stored log that a reader keeps: its header line and its raw events."""

    header: JsonObject
    events: tuple[Mapping[str, object], ...]
    """Parsed and expanded from rows but not yet validated: the session fold checks each one."""
    lines: tuple[int, ...]
    """The line each event was read from (a packed row gives several events the same line)."""
    dropped_torn_tail: bool
    """A final segment without its newline was dropped."""
    dropped_from_line: int | None = None
    """The first faulty row, dropped with everything after it (no later ``turn/end`` committed it)."""

    @property
    def dropped_anything(self) -> bool:
        """Whether the reader left out any text: a torn tail or an uncommitted damaged suffix."""
        return self.dropped_torn_tail or self.dropped_from_line is not None


def _reject_constant(name: str) -> object:
    raise ValueError(f"non-JSON constant {name}")


def _parse_int(digits: str) -> int | float:
    if digits == "-0":
        return -0.0  # JSON.parse reads -0 as negative zero, which no count or integer accepts
    if len(digits) > _DIGITS_AS_FLOAT:
        return float(digits)
    return int(digits)


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_parse_int)
"""One decoder for every line (``json.loads`` with hooks builds a new one per call)."""


def decode_text(data: bytes) -> tuple[str, bool]:
    """INV-JSONL-4: stored bytes as the released reader decodes a line (UTF-8, each maximal invalid
    sequence read as U+FFFD, as ``Buffer.toString("utf8")`` does), and whether anything was replaced.

    A newline is never part of a multi-byte sequence, so decoding a whole log gives the text of
    its lines decoded one by one.
    """
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace"), True


_WHITESPACE = re.compile(r"[ \t\n\r]*")
# The decoder's own string and scalar readers (untyped in the standard library's stubs).
scanstring: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
_scan_once: Callable[[str, int], tuple[object, int]] = _DECODER.scan_once  # type: ignore[attr-defined]


def _key(text: str, at: int) -> tuple[str, int]:
    """The member name at ``at`` and where its value starts (after the colon and whitespace)."""
    if text[at : at + 1] != '"':
        raise ValueError(f"Expecting property name enclosed in double quotes: char {at}")
    key, end = scanstring(text, at + 1, True)
    end = _WHITESPACE.match(text, end).end()  # type: ignore[union-attr]
    if text[end : end + 1] != ":":
        raise ValueError(f"Expecting ':' delimiter: char {end}")
    return key, _WHITESPACE.match(text, end + 1).end()  # type: ignore[union-attr]


def _parse_nested(text: str) -> object:
    """``text`` read as :data:`_DECODER` reads it, but with arrays and objects on an explicit stack.

    The decoder recurses once per level and gives up near the interpreter's recursion limit, where
    ``JSON.parse`` reads any depth; this reading is the fallback for such lines, so that how deep a
    line nests never decides whether it is JSON.  Scalars go through the decoder itself.
    """
    scan = _scan_once
    space = _WHITESPACE.match
    open_: list[tuple[list[object] | dict[str, object], str]] = []  # each open container, and its pending key
    at = space(text, 0).end()  # type: ignore[union-attr]
    while True:
        opener = text[at : at + 1]
        value: object
        if opener in ("[", "{"):
            at = space(text, at + 1).end()  # type: ignore[union-attr]
            empty = text[at : at + 1] == ("]" if opener == "[" else "}")
            if not empty:
                if opener == "[":
                    open_.append(([], ""))
                else:
                    key, at = _key(text, at)
                    open_.append(({}, key))
                continue
            value, at = ([] if opener == "[" else {}), at + 1
        else:
            try:
                value, at = scan(text, at)
            except StopIteration:
                raise ValueError(f"Expecting value: char {at}") from None
        while True:  # hand the finished value to its container; close the containers that end here
            if not open_:
                at = space(text, at).end()  # type: ignore[union-attr]
                if at != len(text):
                    raise ValueError(f"Extra data: char {at}")
                return value
            container, key = open_[-1]
            if isinstance(container, list):
                container.append(value)
            else:
                container[key] = value
            at = space(text, at).end()  # type: ignore[union-attr]
            follows = text[at : at + 1]
            if follows == ",":
                at = space(text, at + 1).end()  # type: ignore[union-attr]
                if isinstance(container, dict):
                    key, at = _key(text, at)
                    open_[-1] = (container, key)
                break
            if follows != ("]" if isinstance(container, list) else "}"):
                raise ValueError(f"Expecting ',' delimiter: char {at}")
            at += 1
            open_.pop()
            value = container


def parse_json(line: str) -> object | str:
    """A line parsed as ``JSON.parse`` parses it, or what is wrong with it.

    JSON whitespace (space, tab, CR, LF) may surround the value, so a CRLF line is read; a
    byte-order mark, ``NaN`` and ``Infinity`` are not JSON; a repeated key keeps its last value.
    Any depth is JSON, as for ``JSON.parse`` (whether an event may nest that deep is the lossless
    rule's question, INV-LOG-4).
    """
    try:
        value: object = _DECODER.decode(line)
    except ValueError as error:
        return f"is not valid JSON ({error})"
    except RecursionError:
        try:
            value = _parse_nested(line)
        except ValueError as error:
            return f"is not valid JSON ({error})"
    return value


def parse_line(line: str) -> Mapping[str, object] | str:
    """A line parsed as one JSON object, or what is wrong with it."""
    value = parse_json(line)
    if isinstance(value, str):
        return value
    if not isinstance(value, dict):
        return "is not a JSON object"
    return value


def header_line_problem(header: Mapping[str, object]) -> Violation | None:
    """INV-JSONL-1, INV-JSONL-7: the header line, exactly as the released physical codec reads it.

    The version is looked at first: a log of another format need not satisfy this one's shape.
    """
    version = header.get("version")
    if is_safe_natural(version) and as_int(version) not in READABLE_VERSIONS:
        return Violation(Code.FORMAT_VERSION_UNSUPPORTED, f"line 1: format version {version} is not supported")
    problems = []
    unexpected = [key for key in header if key not in HEADER_LINE_KEYS]
    if unexpected:
        problems.append(f"unexpected member(s) {unexpected}")
    missing = [key for key in HEADER_LINE_REQUIRED if key not in header]
    if missing:
        problems.append(f"missing member(s) {missing}")
    if header.get("type") != "session":
        problems.append('type must be "session"')
    if "version" in header and not is_safe_natural(version):
        problems.append("version must be a non-negative integer")
    if "id" in header and not isinstance(header["id"], str):
        problems.append("id must be a string")
    for key in ("createdAt", "delegationDepth", "seedLength"):
        if key in header and not is_safe_natural(header[key]):
            problems.append(f"{key} must be a non-negative safe integer")
    for key in ("cwd", "parentSession", "agentPreset"):
        if key in header and not isinstance(header[key], str):
            problems.append(f"{key} must be a string")
    cwd = header.get("cwd")
    if isinstance(cwd, str) and not cwd.startswith("/"):
        problems.append("cwd must be an absolute path")
    if "origin" in header and header["origin"] != "subagent":
        problems.append('origin must be "subagent"')
    if not problems and lossless_problem(header) is not None:
        problems.append("is not lossless JSON")
    if problems:
        return Violation(Code.JSONL_HEADER_INVALID, "line 1: session header " + "; ".join(problems))
    return None


def _is_turn_end_row(parsed: object) -> bool:
    return isinstance(parsed, Mapping) and parsed.get("type") == "turn/end"


@dataclass(slots=True)
class RowScanner:
    """The released reader's row loop, one complete line at a time.

    Keeps the committed prefix (contiguous from seq 0); remembers the first faulty row and drops
    everything from it on, unless a ``turn/end`` at or after it proves the region committed.
    Each kept event goes to ``keep`` with its line; the scanner itself holds only counts, so a
    reader can feed it from a stream in bounded memory.
    """

    keep: Callable[[Record, int], None]
    """Receives each kept event and the line it was read from, in order."""
    count: int = 0
    """How many events were kept: the seq the next row must start at."""
    issue: Violation | None = None
    issue_line: int | None = None
    unparsable: bool = False
    """The first faulty row was not JSON at all (the line scanner's fault, not the codec's)."""
    parse: Callable[[str], object | str] = parse_json
    """How a line is parsed: :func:`parse_json`, or a function that gives the same answer (one that
    remembers the lines it parsed before)."""

    def feed(self, number: int, line: str) -> Violation | None:
        """Read line ``number``; the refusal of the whole log, or ``None`` to go on."""
        parsed = self.parse(line)
        decoded = parsed if isinstance(parsed, str) else row_events(parsed, self.count)
        if self.issue is not None:
            # Past the damage only a turn/end matters.  After an unparsable line, one that parses
            # proves the damage committed (the released line scanner judges the parsed row); after
            # a row the codec refused, it must decode (the released codec judges decoded rows).
            proves = _is_turn_end_row(parsed) and (self.unparsable or not isinstance(decoded, str))
            return self._committed(number) if proves else None
        if isinstance(decoded, str):
            self.issue = Violation(Code.JSONL_MALFORMED_LINE, f"line {number} {decoded}")
            self.issue_line = number
            self.unparsable = isinstance(parsed, str)
            return None
        first_seq = decoded[0].get("seq")
        expected = self.count
        if not (is_number(first_seq) and first_seq == expected):
            self.issue = Violation(
                Code.SEQ_NOT_CONTIGUOUS, f"line {number}: seq {first_seq!r} is not contiguous; expected {expected}"
            )
            self.issue_line = number
            return self._committed(number) if _is_turn_end_row(parsed) else None
        for event in decoded:
            self.keep(event, number)
        self.count += len(decoded)
        return None

    def _committed(self, number: int) -> Violation:
        assert self.issue is not None
        return Violation(self.issue.code, f"{self.issue.message} (the turn/end at line {number} proves it was committed)")


def decode_jsonl(text: str) -> DecodedLog | Violation:
    """INV-JSONL-1, INV-JSONL-3..5, INV-JSONL-9..10: the header line and the rows a reader keeps."""
    segments = text.split("\n")
    torn = segments.pop()  # the text after the last newline: empty, or a torn write
    if not segments:
        return Violation(Code.JSONL_HEADER_MISSING, "log has no complete header line")
    header = parse_line(segments[0])
    if isinstance(header, str):
        return Violation(Code.JSONL_MALFORMED_LINE, f"line 1 {header}")
    problem = header_line_problem(header)
    if problem is not None:
        return problem
    events: list[Record] = []
    lines: list[int] = []

    def keep(event: Record, number: int) -> None:
        events.append(event)
        lines.append(number)

    scanner = RowScanner(keep)
    for number, line in enumerate(segments[1:], start=2):
        refused = scanner.feed(number, line)
        if refused is not None:
            return refused
    problem = seed_length_problem(header, scanner.count)
    if problem is not None:
        return problem
    return DecodedLog(
        header=_frozen_object(header),
        events=tuple(events),
        lines=tuple(lines),
        dropped_torn_tail=torn != "",
        dropped_from_line=scanner.issue_line,
    )


def seed_length_problem(header: Mapping[str, object], events_read: int) -> Violation | None:
    """INV-JSONL-1: the declared seed must lie within what was read (checked once every line is in)."""
    seed_length = as_int(header.get("seedLength"))
    if seed_length is not None and seed_length > events_read:
        return Violation(
            Code.JSONL_HEADER_INVALID,
            f"line 1: session header seedLength {seed_length} exceeds the {events_read} events read",
        )
    return None


def _frozen_object(value: Mapping[str, object]) -> JsonObject:
    frozen = freeze(value)
    assert isinstance(frozen, Mapping)
    return frozen


def encode_line(value: object) -> str:
    """One compact JSON line (without its newline); non-ASCII text is written as UTF-8, not escaped."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def encode_jsonl(header: JsonObject, events: Sequence[Event], packed: bool = False) -> str:
    """INV-JSONL-2: the stored form of a log; :func:`decode_jsonl` reads it back exactly.

    ``packed`` writes runs of chunks as packed rows, as upstream's writer does by default.
    """
    records: Sequence[Record] = [encode_event(e) for e in events]
    if packed:
        records = pack_chunk_runs(records)
    lines = [encode_line(thaw(header)), *(encode_line(r) for r in records)]
    return "".join(line + "\n" for line in lines)


def version_of(header: JsonObject) -> int:
    """The format version a header line declares."""
    version = as_int(header.get("version"))
    assert version is not None, "checked by header_line_problem"
    return version
