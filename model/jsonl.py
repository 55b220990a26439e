"""The JSONL codec, as pure functions over text.

A stored log is a header line ``{"type": "session", "version": 1, "id", "createdAt", …}`` followed by
one event per line, each line ending in ``\\n``.  Reading is strict: a final segment without its
newline is a torn write and is dropped; any other malformed line refuses the whole log, naming the
line.  Nothing is half-read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sessionlog_spec.model.event import Event, encode_event
from sessionlog_spec.model.json_value import (
    JsonObject,
    as_int,
    freeze,
    is_nonempty_string,
    is_safe_natural,
    lossless_problem,
    thaw,
)
from sessionlog_spec.model.violation import Code, Violation

FORMAT_VERSION = 1
LEGACY_VERSION = 0
HEADER_LINE_KEYS = frozenset(
    {"type", "version", "id", "createdAt", "cwd", "parentSession", "seedLength", "origin", "delegationDepth", "agentPreset"}
)


@dataclass(frozen=True, slots=True)
class DecodedLog:
    """The lines of a stored log: its header, its raw events, and whether a torn tail was dropped."""

    header: JsonObject
    events: tuple[Mapping[str, object], ...]
    """Parsed but not yet validated: the session fold decodes and checks each one."""
    dropped_torn_tail: bool


class _LineError(ValueError):
    pass


def _reject_constant(name: str) -> object:
    raise _LineError(f"non-JSON constant {name}")


def _unique_pairs(pairs: list[tuple[str, object]]) -> dict[str, object]:
    obj: dict[str, object] = {}
    for key, value in pairs:
        if key in obj:
            raise _LineError(f"duplicate key {key!r}")
        obj[key] = value
    return obj


def parse_line(line: str) -> Mapping[str, object] | str:
    """A line parsed as one JSON object, or what is wrong with it.

    Strict: no byte-order mark, no carriage return, no NaN/Infinity, no duplicate keys.
    """
    if line.startswith("\ufeff"):
        return "starts with a byte-order mark"
    if "\r" in line:
        return "contains a carriage return (CRLF line endings are not allowed)"
    try:
        value = json.loads(line, object_pairs_hook=_unique_pairs, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as error:
        return f"is not valid JSON ({error})"
    if not isinstance(value, dict):
        return "is not a JSON object"
    return value


def header_line_problem(header: Mapping[str, object]) -> Violation | None:
    """INV-JSONL-1: the header line names the session and its format version."""
    problems = []
    if header.get("type") != "session":
        problems.append('type must be "session"')
    extra = sorted(set(header) - HEADER_LINE_KEYS)
    if extra:
        problems.append(f"unknown member(s) {extra}")
    if not is_safe_natural(header.get("version")):
        problems.append("version must be a non-negative integer")
    if not is_nonempty_string(header.get("id")):
        problems.append("id must be a non-empty string")
    if not is_safe_natural(header.get("createdAt")):
        problems.append("createdAt must be a non-negative safe integer")
    cwd = header.get("cwd")
    if cwd is not None and not (isinstance(cwd, str) and cwd.startswith("/")):
        problems.append("cwd must be an absolute path")
    for key in ("seedLength", "delegationDepth"):
        if key in header and not is_safe_natural(header[key]):
            problems.append(f"{key} must be a non-negative integer")
    for key in ("parentSession", "agentPreset"):
        if key in header and not is_nonempty_string(header[key]):
            problems.append(f"{key} must be a non-empty string")
    if "origin" in header and header["origin"] != "subagent":
        problems.append('origin must be "subagent"')
    if lossless_problem(header) is not None:
        problems.append("is not lossless JSON")
    if problems:
        return Violation(Code.JSONL_HEADER_INVALID, "line 1: session header " + "; ".join(problems))
    return None


def decode_jsonl(text: str) -> DecodedLog | Violation:
    """INV-JSONL-1, INV-JSONL-3, INV-JSONL-4: split and parse a stored log, dropping only a torn tail."""
    segments = text.split("\n")
    torn = segments.pop()  # the text after the last newline: empty, or a torn write
    if not segments:
        return Violation(Code.JSONL_HEADER_MISSING, "log has no complete header line")
    parsed: list[Mapping[str, object]] = []
    for number, line in enumerate(segments, start=1):
        value = parse_line(line)
        if isinstance(value, str):
            return Violation(Code.JSONL_MALFORMED_LINE, f"line {number} {value}")
        parsed.append(value)
    header, events = parsed[0], parsed[1:]
    problem = header_line_problem(header)
    if problem is not None:
        return problem
    return DecodedLog(
        header=_frozen_object(header),
        events=tuple(events),
        dropped_torn_tail=torn != "",
    )


def _frozen_object(value: Mapping[str, object]) -> JsonObject:
    frozen = freeze(value)
    assert isinstance(frozen, Mapping)
    return frozen


def encode_line(value: object) -> str:
    """One compact JSON line (without its newline); non-ASCII text is written as UTF-8, not escaped."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def encode_jsonl(header: JsonObject, events: Sequence[Event]) -> str:
    """INV-JSONL-2: the stored form of a log; :func:`decode_jsonl` reads it back exactly."""
    lines = [encode_line(thaw(header)), *(encode_line(encode_event(e)) for e in events)]
    return "".join(line + "\n" for line in lines)


def version_of(header: JsonObject) -> int:
    """The format version a header line declares."""
    version = as_int(header.get("version"))
    assert version is not None, "checked by header_line_problem"
    return version
