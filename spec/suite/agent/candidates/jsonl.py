"""Invalid candidates of the stored form (``INV-JSONL``; the contracts are
:mod:`sessionlog_spec.contracts.jsonl`): ``load`` candidates with a torn or wrong header line, a
damaged row in committed history, a byte-order mark or a newer format version.
"""

from __future__ import annotations

import json
import random
from typing import Any

from sessionlog_spec.model.violation import Code
from sessionlog_spec.suite.agent import crashes
from sessionlog_spec.suite.agent.builder import SessionBuilder
from sessionlog_spec.suite.agent.candidates.base import STORED_HEADER, Registry, _jsonl_lines, _refused, _text
from sessionlog_spec.suite.agent.candidates.log import _committed_damage, _not_natural

REGISTERED = Registry()
"""This module's mutations, in the order their builders are defined below."""
candidate = REGISTERED.candidate


# -- stored logs (INV-JSONL) -----------------------------------------------------------------------


@candidate(Code.JSONL_HEADER_MISSING, "load")
def torn_header(builder: SessionBuilder, rng: random.Random) -> object:
    """A log whose header line was torn by a crash (or an empty file)."""
    return rng.choice((json.dumps(STORED_HEADER), json.dumps(STORED_HEADER)[:20], ""))


def _header_line(builder: SessionBuilder, **changes: Any) -> str:
    lines = _jsonl_lines(builder)
    lines[0] = json.dumps({**STORED_HEADER, **changes})
    return _text(lines)


@candidate(Code.JSONL_HEADER_INVALID, "load")
def header_retired_member(builder: SessionBuilder, rng: random.Random) -> object:
    """A header line with the retired ``sandboxMode`` or ``approvalPolicy``."""
    return _header_line(builder, **rng.choice(({"sandboxMode": "workspace-write"}, {"approvalPolicy": "on-request"})))


HEADER_LINE_FAULTS = ("unknown", "type", "id", "version", "count", "text", "origin")
"""The kinds of header-line fault :func:`header_line_member_wrong` draws first: a member the
format does not have, or one member of the wrong type or value."""


@candidate(Code.JSONL_HEADER_INVALID, "load")
def header_line_member_wrong(builder: SessionBuilder, rng: random.Random) -> object:
    """A header line with one member wrong, the kind of fault drawn first: a member the format does
    not have (another writer's, a misspelt one), or a member of the wrong type or value."""
    kind = rng.choice(HEADER_LINE_FAULTS)
    change: dict[str, Any]
    if kind == "unknown":
        names = ("parentId", "sessionId", "created_at", "delegation_depth", "Cwd", "model", "title", f"x-{rng.randrange(100)}")
        change = {rng.choice(names): rng.choice(("p-1", 1, None, True, [], {}))}
    elif kind == "type":
        change = {"type": rng.choice(("Session", "session ", "log", 1, None))}
    elif kind == "id":
        change = {"id": rng.choice((1, None, ["s"], {"id": "s"}))}
    elif kind == "version":
        change = {"version": rng.choice(("1", 1.5, -1, None, True))}
    elif kind == "count":
        key = rng.choice(("createdAt", "delegationDepth", "seedLength"))
        change = {key: _not_natural(0 if key == "seedLength" else int(STORED_HEADER[key]), rng)}
    elif kind == "text":
        change = {rng.choice(("cwd", "parentSession", "agentPreset")): rng.choice((1, None, True, [], {}))}
    else:
        change = {"origin": rng.choice(("Subagent", "user", "", 1, None))}
    return _refused(builder, "load", Code.JSONL_HEADER_INVALID, _header_line(builder, **change))


@candidate(Code.JSONL_HEADER_INVALID, "load")
def header_fractional_created_at(builder: SessionBuilder, rng: random.Random) -> object:
    """A header line with a fractional ``createdAt``."""
    return _header_line(builder, createdAt=1_700_000_000_000.5)


@candidate(Code.JSONL_HEADER_INVALID, "load")
def header_without_delegation_depth(builder: SessionBuilder, rng: random.Random) -> object:
    """A header line without the required ``delegationDepth``, or with one that is no count."""
    lines = _jsonl_lines(builder)
    header = dict(STORED_HEADER)
    del header["delegationDepth"]
    choice = rng.choice((None, -1, 0.5, "0", 2**53, True))
    lines[0] = json.dumps(header if choice is None else {**header, "delegationDepth": choice})
    return _text(lines)


@candidate(Code.JSONL_HEADER_INVALID, "load")
def header_seed_length_beyond_the_log(builder: SessionBuilder, rng: random.Random) -> object:
    """A header line whose ``seedLength`` counts more events than the log holds."""
    return _header_line(builder, seedLength=len(builder.events) + rng.randint(1, 3))


@candidate(Code.JSONL_HEADER_INVALID, "load")
def header_relative_cwd(builder: SessionBuilder, rng: random.Random) -> object:
    """A header line whose ``cwd`` is a relative path."""
    return _header_line(builder, cwd=rng.choice(("project", "./src", "~/work")))


@candidate(Code.JSONL_MALFORMED_LINE, "load")
def torn_row_in_committed_history(builder: SessionBuilder, rng: random.Random) -> object:
    """A torn write followed by more rows and a ``turn/end``: damage inside committed history."""

    def tear(lines: list[str], i: int) -> None:
        lines[i] = lines[i][: rng.randrange(1, len(lines[i]))]

    return _committed_damage(builder, rng, tear)


@candidate(Code.JSONL_MALFORMED_LINE, "load")
def unparsable_row_in_committed_history(builder: SessionBuilder, rng: random.Random) -> object:
    """A row that is no JSON object (garbage, a blank line, a BOM, an array, a bare constant) before a ``turn/end``."""

    def spoil(lines: list[str], i: int) -> None:
        how = rng.choice(("garbage", "blank", "bom", "array", "nan"))
        line = lines[i]
        lines[i] = {
            "garbage": "\x00\x00\x00",
            "blank": "",
            "bom": "\ufeff" + line,
            "array": "[" + line + "]",
            "nan": line.replace('"time":', '"time":NaN,"t":', 1),
        }[how]

    return _committed_damage(builder, rng, spoil)


@candidate(Code.JSONL_MALFORMED_LINE, "load")
def malformed_packed_row_in_committed_history(builder: SessionBuilder, rng: random.Random) -> object:
    """A packed chunk row with one bad member (wrong ``dt`` length, a non-string text, a negative
    ``seq0``, an unexpected member) before a ``turn/end``: the whole row is faulty."""
    how = rng.choice(crashes.FAULTY_ROWS)

    def insert(lines: list[str], i: int) -> None:
        lines[i] = crashes.faulty_packed_row(i - 1, 0, how, rng.randint(3, 5), rng.choice(("text-chunks", "reasoning-chunks")))

    return _committed_damage(builder, rng, insert)


RANGE_FAULTS = ("inverted", "not a pair", "past its seq", "not integers", "repeated", "step back", "not a list")
"""What a range list a row may not hold can get wrong (:func:`_malformed_ranges`)."""


def _malformed_ranges(seq: int, rng: random.Random, fault: str | None = None) -> object:
    """A range list a row at ``seq`` may not hold, with ``fault`` (one of :data:`RANGE_FAULTS`,
    drawn first when not given, so no fault is crowded out by one with more spellings): a pair
    inverted, not a pair, past the row's seq, of no integers; a seq repeated; a step back with no seq
    repeated, so the order is its only fault (a reader that checks repeats but not order keeps it);
    not a list."""
    fault = rng.choice(RANGE_FAULTS) if fault is None else fault
    a = rng.randrange(max(seq - 1, 1))
    b = rng.randrange(a, max(seq - 1, a + 1))
    spellings: dict[str, tuple[object, ...]] = {
        "inverted": ([[b + 1, a]],),
        "not a pair": ([[a]], [[a, b, b + 1]]),
        "past its seq": ([[a, seq]], [[a, seq + rng.randrange(1, 5)]]),
        "not integers": ([[a, b + 0.5]], [["0", b]]),
        "repeated": ([[a, b], b], [[a, b], a], [b, [a, b]], [b, [b, b]], [[a, b], [b, b + 1]], [[a, b], [a, b]]),
        "step back": ([[b + 1, b + 1], a], [b + 1, [a, b]], [[b + 1, b + 1], [a, b]]),
        "not a list": ("0-1", {"start": a, "end": b}),
    }
    return rng.choice(spellings[fault])


@candidate(Code.JSONL_MALFORMED_LINE, "load")
def malformed_range_provenance_in_committed_history(builder: SessionBuilder, rng: random.Random) -> object:
    """A row whose ``sourceEventSeqs`` is a malformed range list (inverted, not a pair, past its seq,
    not increasing) before a ``turn/end``."""

    # The fault is the first choice, so a sweep walking this candidate's choices sends every fault.
    fault = rng.choice(RANGE_FAULTS)

    def spoil(lines: list[str], i: int) -> None:
        row = json.loads(lines[i])
        seq = row["seq"]
        row["sourceEventSeqs"] = _malformed_ranges(seq, rng, fault)
        lines[i] = json.dumps(row)

    # A list the codec reads after all (a range ending at the row's own seq) is the session's to
    # refuse, for another reason: draw again.
    for _ in range(4):
        # From seq 3 on, where a list can step back below earlier seqs without a bound past its own.
        text = _committed_damage(builder, rng, spoil, first=3)
        if text is None or _refused(builder, "load", Code.JSONL_MALFORMED_LINE, text) is not None:
            return text
    return None


@candidate(Code.JSONL_MALFORMED_LINE, "load")
def bom_header(builder: SessionBuilder, rng: random.Random) -> object:
    """A log starting with a UTF-8 byte-order mark."""
    return "\ufeff" + _text(_jsonl_lines(builder))


@candidate(Code.FORMAT_VERSION_UNSUPPORTED, "load")
def newer_version(builder: SessionBuilder, rng: random.Random) -> object:
    """A log written by a later format version."""
    return _header_line(builder, version=rng.choice((2, 3, 4)))
