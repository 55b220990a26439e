"""Checking stored logs offline against the model, streaming, in time linear in the log.

A log is read exactly as the model's reader reads it (:class:`~sessionlog_spec.model.jsonl.RowScanner`,
``docs/conformance/on-disk-format.md``): rows are packed chunk runs or single events, provenance may
be range-encoded, CRLF endings are JSON whitespace, a torn final line is dropped, and so is the
first faulty row with everything after it unless a later ``turn/end`` proves the damage committed.
Dropped text is a *note*; committed damage is a violation naming the first faulty line.

Each log is first read by the fast checker (:mod:`sessionlog_spec.suite.fastcheck`), which either
certifies it valid (the model would find no violation; the notes are then a torn tail and an open
turn's repair closers) or stops at the first thing it cannot vouch for; the model then checks the
log from its start (a file or a seekable stream is read again, any other stream from a copy kept as
it was read), so every finding printed is the model's.  ``model=True`` (``--model``) skips the fast
checker.

The input is read in chunks of :data:`READ_CHUNK_BYTES`, assembled into lines and decoded one
complete line at a time (UTF-8 with replacement, as the released reader decodes: INV-JSONL-4), so
memory is bounded by the longest line (at most :data:`MAX_LINE_BYTES`), by messages of at most
:data:`MAX_MESSAGE_CHARS` characters, and by what the model must keep: a v1
log is folded event by event by :class:`StreamingFold`, which keeps only the events on the surface
(the only ones the contract looks up again, kept as their stored lines) and the open turn's
brackets, never a copy of the state per event.
A v0 log goes through the edge as a whole (the edge refuses over the whole log before converting).

What is reported:

* the *verdict*: the violation :func:`sessionlog_spec.model.load.read_log` refuses the log with
  (committed damage first, then the header's ``seedLength``, then the first contract violation);
* every other violation found: after the first violation the session is undefined, so later events
  get only the checks that need no session state (envelope, seq position, vocabulary, payload
  shape), reported as ``after_first``; a v0 log lists every refused legacy form;
* notes: a line holding bytes that are not UTF-8 (read as U+FFFD), a dropped torn tail, a dropped
  uncommitted damaged suffix, an open tail turn that loading would close with repair closers, a v0
  log the edge converts;
* what was dropped (:class:`Dropped`): the lines a reader drops without a violation, a torn final
  line and an uncommitted damaged suffix, so that every log's answer says how many lines it lost and
  why (``--strict`` makes any dropped line a failure).

A log may be compressed (:mod:`sessionlog_spec.suite.compressed`): zstd, as seqlog's store writes
``events.jsonl.zst``, or gzip, known by its magic number whatever the file is called, and
decompressed as it streams into the same line reader, so the line limit bounds a decompression bomb
as it bounds a huge plain line.  Compressed data that ends inside a zstd block or a gzip member ends
in a torn final line; data that cannot be decoded makes the log unreadable.

A log that cannot be checked at all gets one coded answer instead (:class:`Unchecked`): a path that
is missing, unreadable or not a regular file, a directory without logs, or a line over
:data:`MAX_LINE_BYTES` (named by its number).  Only regular files are opened by path, after their
type is known from ``stat``, so a FIFO or a device never blocks or feeds the check; standard input
(``-``) is read as a stream, bounded by the line limit.
"""

from __future__ import annotations

import errno
import io
import itertools
import os
import re
import stat
import sys
import tempfile
import textwrap
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import BinaryIO, Final, TextIO

from sessionlog_spec.model.event import Event, decode_event
from sessionlog_spec.model.json_value import JsonValue, as_int, freeze, is_safe_natural
from sessionlog_spec.model.jsonl import (
    FORMAT_VERSION,
    LEGACY_VERSION,
    RowScanner,
    decode_text,
    header_line_problem,
    parse_json,
    parse_line,
    seed_length_problem,
)
from sessionlog_spec.model.legacy import StoredLog, refusal, upgrade_v0
from sessionlog_spec.model.load import identity_of
from sessionlog_spec.model.relationships import SessionIdentity, is_human_message, relations_for, relationship_finish
from sessionlog_spec.model.repair import interrupted_turn_closers
from sessionlog_spec.model.rows import Record, row_events
from sessionlog_spec.model.session import admit, payload_problem, vocabulary_problem
from sessionlog_spec.model.trace import TraceState
from sessionlog_spec.model.violation import Code, Violation
from sessionlog_spec.suite import fastcheck
from sessionlog_spec.suite.compressed import DamagedCompression, Decompressed

READ_CHUNK_BYTES: Final = 1 << 20
"""How much is read at a time (1 MiB)."""
MAX_LINE_BYTES: Final = 64 << 20
"""The longest line checked (64 MiB): a longer one stops the check of its log (the log is unreadable)."""
DECODED_SURFACE_EVENTS: Final = 512
"""How many surface events the streaming fold also keeps decoded (the most recently used)."""
MAX_AFTER_FIRST: Final = 1000
"""At most this many ``after_first`` findings are listed per log; the rest are counted in a note."""
MAX_MESSAGE_CHARS: Final = 2000
"""A finding's or note's message is cut after this many characters (a message may quote a stored
value, and a line may be 64 MiB: without the cut, a thousand findings could hold gigabytes)."""
MAX_REPLACED_NOTES: Final = 20
"""At most this many lines with bytes that are not UTF-8 are named one by one; the rest are counted."""
EXIT_CLEAN: Final = 0
EXIT_VIOLATIONS: Final = 1
EXIT_UNREADABLE: Final = 2
SPOOL_BYTES: Final = 8 << 20
"""How much of a stream that cannot seek is copied in memory while the fast checker reads it (the
rest goes to a temporary file)."""
STDIN: Final = "-"
_V0_INDEX = re.compile(r"\bv0 index (\d+)")


class Unchecked(StrEnum):
    """Why a log could not be checked at all: the checker's answer, not a violation of the contract."""

    PATH_NOT_FOUND = "PATH_NOT_FOUND"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    READ_FAILED = "READ_FAILED"
    """Any other error of the operating system while opening, walking or reading."""
    NOT_A_REGULAR_FILE = "NOT_A_REGULAR_FILE"
    """A FIFO, a device, a socket given by path (give it as ``-`` to read it as a stream)."""
    NO_LOGS_IN_DIRECTORY = "NO_LOGS_IN_DIRECTORY"
    LINE_OVER_LIMIT = "LINE_OVER_LIMIT"
    """A line longer than :data:`MAX_LINE_BYTES`; the answer names the line."""
    COMPRESSED_DATA_DAMAGED = "COMPRESSED_DATA_DAMAGED"
    """zstd or gzip data that cannot be decoded; the answer names the compressed byte and the line reached."""
    CHECKER_ERROR = "CHECKER_ERROR"
    """The checker itself failed (a bug): reported so that the other logs are still checked."""


def bounded(message: str) -> str:
    """``message`` cut after :data:`MAX_MESSAGE_CHARS` characters, saying how much was left out."""
    if len(message) <= MAX_MESSAGE_CHARS:
        return message
    return f"{message[:MAX_MESSAGE_CHARS]}… ({len(message) - MAX_MESSAGE_CHARS:,} more characters)"


@dataclass(frozen=True)
class Finding:
    """One violation at one line (1 is the header line)."""

    line: int
    code: str
    message: str
    after_first: bool = False
    """Found by the state-free checks that continue after the first violation."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "message", bounded(self.message))


@dataclass(frozen=True)
class Dropped:
    """Lines a reader drops without a violation: ``count`` lines from line ``line``, and why."""

    line: int
    count: int
    why: str

    def describe(self) -> str:
        """Which lines, and why, in one phrase."""
        where = f"line {self.line:,}" if self.count == 1 else f"lines {self.line:,} to {self.line + self.count - 1:,}"
        return f"{where} ({self.why})"


@dataclass
class LogCheck:
    """Everything found in one log."""

    violations: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    verdict: Finding | None = None
    """What the model's reader refuses the log with (:func:`~sessionlog_spec.model.load.read_log`), if anything."""
    unreadable: str | None = None
    """Why the log could not be checked; nothing else is then reported."""
    unreadable_code: Unchecked | None = None
    """The code of :attr:`unreadable`."""
    unreadable_line: int | None = None
    """The line :attr:`unreadable` is about (a line over :data:`MAX_LINE_BYTES`), if any."""
    lines: int = 0
    """Complete lines read."""
    events: int = 0
    """Events the reader keeps (a packed row counts every chunk it stands for)."""
    unlisted: int = 0
    """Violations found past :data:`MAX_AFTER_FIRST` and counted, not listed."""
    dropped: list[Dropped] = field(default_factory=list)
    """What a reader drops without a violation: a torn final line, an uncommitted damaged suffix."""
    torn: bool = False
    """The log ends in a torn final line (counted in :attr:`dropped`, not in :attr:`lines`)."""
    compression: str | None = None
    """How the log was stored: ``zstd``, ``gzip``, or ``None`` for plain text."""

    @property
    def lines_read(self) -> int:
        """Lines read: the complete ones, and a torn final line."""
        return self.lines + self.torn

    @property
    def lines_dropped(self) -> int:
        """How many lines a reader drops (see :attr:`dropped`)."""
        return sum(drop.count for drop in self.dropped)

    def add(self, line: int, violation: Violation, after_first: bool = False) -> None:
        """Record a violation found at ``line``."""
        self.violations.append(Finding(line, violation.code.value, violation.message, after_first))


def unchecked(code: Unchecked, message: str, line: int | None = None) -> LogCheck:
    """The answer for a log that could not be checked."""
    return LogCheck(unreadable=bounded(message), unreadable_code=code, unreadable_line=line)


# -- the streaming fold ------------------------------------------------------------------------------


_NO_DATA: Final[JsonValue] = MappingProxyType({})


class _SurfaceLog(Sequence[Event]):
    """The log as :func:`~sessionlog_spec.model.session.admit` sees it: its length, and the events
    on the surface (a surface plan and the tool-pairing balance look up only surface nodes).

    A surface event is kept as the stored line it came from (and its place in that row), a
    fraction of the size of the frozen event, and decoded again when it is looked up, the way it
    was read; the most recently used events are also kept decoded.
    """

    __slots__ = ("_decoded", "_humans", "_kept", "_types", "length")

    def __init__(self) -> None:
        self._kept: dict[int, tuple[str, int]] = {}
        self._humans: dict[int, tuple[str, int]] = {}
        self._types: list[str] = []
        self._decoded: OrderedDict[int, Event] = OrderedDict()
        self.length = 0

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, seq: int) -> Event:  # type: ignore[override]
        event = self._decoded.get(seq)
        if event is not None:
            self._decoded.move_to_end(seq)
            return event
        kept = self._kept.get(seq) or self._humans.get(seq)
        if kept is None:
            if 0 <= seq < len(self._types):
                # Off the surface and not a human message: the relationship rules ask only its type.
                return Event(type=self._types[seq], seq=seq, time=0, data=_NO_DATA)
            raise LookupError(f"streaming fold: event seq {seq} was not kept")
        line, position = kept
        parsed = parse_json(line)
        rows = parsed if isinstance(parsed, str) else row_events(parsed, seq - position)
        decoded = decode_event(rows[position]) if not isinstance(rows, str) else Violation(Code.JSONL_MALFORMED_LINE, rows)
        assert isinstance(decoded, Event), f"an admitted event no longer decodes: {decoded}"
        self._cache(decoded)
        return decoded

    def __iter__(self) -> Iterator[Event]:
        raise TypeError("streaming fold: the whole log is not kept")

    def keep(self, event: Event, line: str, position: int) -> None:
        """Put ``event``, read as member ``position`` of row ``line``, on the surface."""
        self._kept[event.seq] = (line, position)
        self._cache(event)

    def note(self, event: Event, line: str, position: int) -> None:
        """Record an admitted event's type, and keep a human message titles may cite later."""
        self._types.append(sys.intern(event.type))
        if event.type == "user/message" and is_human_message(event):
            self._humans[event.seq] = (line, position)

    def forget(self, seq: int) -> None:
        """Take ``seq`` off the surface."""
        self._kept.pop(seq, None)
        self._decoded.pop(seq, None)

    def _cache(self, event: Event) -> None:
        self._decoded[event.seq] = event
        if len(self._decoded) > DECODED_SURFACE_EVENTS:
            self._decoded.popitem(last=False)


class StreamingFold:
    """:func:`~sessionlog_spec.model.session.fold_session`, one event at a time, keeping only what
    the contract needs later: the surface's nodes and events, the trace,
    and the open turn's bracket and message events (for the repair closers)."""

    def __init__(self, identity: SessionIdentity | None = None) -> None:
        self.nodes: list[int] = []
        self.log = _SurfaceLog()
        self.trace = TraceState()
        self.relations = relations_for(identity)
        self._turn_tail: list[Event] = []

    def feed(self, raw: object, line: str, position: int) -> Violation | None:
        """Admit the next raw event, member ``position`` of row ``line``; the violation that refuses it, or ``None``."""
        admission = admit(self.nodes, self.log, self.trace, raw, relations=self.relations)
        if isinstance(admission, Violation):
            return admission
        event, plan = admission.event, admission.plan
        self.trace = admission.trace
        self.relations = admission.relations
        self.log.note(event, line, position)
        if plan is not None:
            if plan.replacement is not None:
                for seq in plan.replacement.shadowed:
                    self.log.forget(seq)
            self.nodes[plan.start_index : plan.end_index] = [plan.seq]
            self.log.keep(event, line, position)
        self.log.length += 1
        # The repair scan restarts at every turn bracket and ignores chunks, so the events since
        # the last bracket, less chunks, give the same closers as the whole log.
        if event.type == "turn/end":
            self._turn_tail.clear()
        elif event.type == "turn/start":
            self._turn_tail[:] = [event]
        elif event.type != "assistant/chunk":
            self._turn_tail.append(event)
        return None

    def closers(self) -> int:
        """How many repair closers loading the log appends (0 when no turn is open)."""
        return len(interrupted_turn_closers(self._turn_tail))


# -- one log -------------------------------------------------------------------------------------------


class LogChecker:
    """Checks one log fed line by line (:meth:`feed`), then :meth:`finish` it."""

    def __init__(self) -> None:
        self.check = LogCheck()
        self.header: Mapping[str, object] | None = None
        self.version: int | None = None
        self.done = False
        """The rest of the log cannot change the result (the header line was refused)."""
        self._line = 0
        self._text = ""
        self._position = 0
        self._scanner: RowScanner | None = None
        self._v0_events: list[Record] = []
        self._v0_lines: list[int] = []
        self._fold: StreamingFold | None = None
        self._fold_violation: Finding | None = None
        self._committed: Finding | None = None
        self._issue_line: int | None = None
        self._damaged: list[Finding] = []
        """State-free findings from the first faulty row on: reported only if the damage is committed."""
        self._low = 0
        self._high = 0
        """Past damage: the seqs the next row may plausibly start with, ``_low`` to ``_high`` …"""
        self._shifted: int | None = None
        """… or this one (the seq after a misplaced row, if the sequence shifted)."""
        self._after_first = 0
        self._after_first_dropped = 0
        self._damaged_unlisted = 0
        """Findings past the damage beyond :data:`MAX_AFTER_FIRST`: reported only if the damage is committed."""
        self._replaced = 0

    # -- feeding --

    def feed(self, number: int, line: str) -> None:
        """Read complete line ``number`` (without its newline)."""
        self._line = number
        self._text = line
        self._position = 0
        self.check.lines = number
        if number == 1:
            self._header(line)
            return
        scanner = self._scanner
        assert scanner is not None and not self.done
        if self._committed is not None:  # the verdict is settled: only the state-free checks go on
            self._damaged_row(number, line, first=False)
            return
        had_issue = scanner.issue is not None
        refused = scanner.feed(number, line)
        if scanner.issue is not None:
            if not had_issue:
                self._issue_line = number
            self._damaged_row(number, line, first=not had_issue)
        if refused is not None and self._committed is None:
            assert self._issue_line is not None
            self._committed = Finding(self._issue_line, refused.code.value, refused.message)

    def replaced(self, number: int) -> None:
        """Line ``number`` held bytes that are not UTF-8, read as U+FFFD (INV-JSONL-4): named in a note."""
        self._replaced += 1
        if self._replaced <= MAX_REPLACED_NOTES:
            self.check.notes.append(
                f"line {number}: bytes that are not UTF-8 are read as U+FFFD, as the released reader decodes them"
            )

    def _header(self, line: str) -> None:
        header = parse_line(line)
        if isinstance(header, str):
            self._refuse_header(Violation(Code.JSONL_MALFORMED_LINE, f"line 1 {header}"))
            return
        problem = header_line_problem(header)
        if problem is not None:
            self._refuse_header(problem)
            return
        self.header = header
        self.version = int(header["version"])  # type: ignore[call-overload]
        if self.version == FORMAT_VERSION:
            self._fold = StreamingFold(identity_of(header))
            self._scanner = RowScanner(lambda raw, _line: self._v1_event(raw))
        else:
            assert self.version == LEGACY_VERSION, "header_line_problem refuses every other version"
            # The edge refuses over the whole log before it converts, so a v0 log is held whole.
            self._scanner = RowScanner(self._v0_event)

    def _v0_event(self, raw: Record, line: int) -> None:
        self._v0_events.append(raw)
        self._v0_lines.append(line)

    def _refuse_header(self, violation: Violation) -> None:
        finding = Finding(1, violation.code.value, violation.message)
        self.check.violations.append(finding)
        self.check.verdict = finding
        self.done = True

    def _v1_event(self, raw: Record) -> None:
        """One event the reader keeps, from the current line."""
        line = self._line
        position = self._position
        self._position += 1
        self.check.events += 1
        if self._fold is not None:
            violation = self._fold.feed(raw, self._text, position)
            if violation is None:
                return
            self._fold_violation = Finding(line, violation.code.value, violation.at(f"line {line}").message)
            self.check.violations.append(self._fold_violation)
            self._fold = None  # the session is undefined after its first violation
            return
        problem = _state_free_problem(raw)
        if problem is not None:
            self._report_after_first(Finding(line, problem.code.value, problem.at(f"line {line}").message, True))

    def _damaged_row(self, number: int, line: str, first: bool) -> None:
        """State-free checks of a row at or after the first faulty one (the first is the issue itself).

        Past damage the next row's seq is uncertain, so any seq a plausible story explains is
        accepted: the damaged row was a stray (it took no seq), stood in for the events it should
        have held, or carried the right seq of a shifted sequence.  Only a row off every story is
        reported, so one damaged row is reported once.  Range-encoded provenance is expanded only
        for a row that is in place (as the reader does: a forged seq could claim any memory).
        """
        if first:
            assert self._scanner is not None
            self._low = self._high = self._scanner.count
            self._shifted = None
        parsed = parse_json(line)
        decoded = parsed if isinstance(parsed, str) else row_events(parsed, -1)
        if isinstance(decoded, str):
            self._high += 1  # a stray line, or a row that held one event
            if not first:
                self._damage(Finding(number, Code.JSONL_MALFORMED_LINE.value, f"line {number} {decoded}", True))
            return
        raw_seq = decoded[0].get("seq")
        seq = as_int(raw_seq) if is_safe_natural(raw_seq) else None
        size = len(decoded)
        if not first and seq is not None and (self._low <= seq <= self._high or seq == self._shifted):
            self._low = self._high = seq + size
            self._shifted = None
            if self.version == FORMAT_VERSION:
                self._check_damaged_events(number, row_events(parsed, seq))
            return
        if not first:
            expected = str(self._low) if self._low == self._high else f"one of {self._low} to {self._high}"
            message = f"line {number}: seq {raw_seq!r} is not contiguous; expected {expected}"
            self._damage(Finding(number, Code.SEQ_NOT_CONTIGUOUS.value, message, True))
        self._high += size
        self._shifted = None if seq is None else seq + size

    def _check_damaged_events(self, number: int, decoded: tuple[Record, ...] | str) -> None:
        if isinstance(decoded, str):
            return
        for raw in decoded:
            problem = _state_free_problem(raw)
            if problem is not None:
                self._damage(Finding(number, problem.code.value, problem.at(f"line {number}").message, True))

    def _damage(self, finding: Finding) -> None:
        if len(self._damaged) < MAX_AFTER_FIRST:
            self._damaged.append(finding)
        else:
            self._damaged_unlisted += 1

    def _report_after_first(self, finding: Finding) -> None:
        if self._after_first < MAX_AFTER_FIRST:
            self.check.violations.append(finding)
            self._after_first += 1
        else:
            self._after_first_dropped += 1

    # -- finishing --

    def finish(self, torn: bool, cut: str | None = None) -> LogCheck:
        """The result, once every complete line was fed; ``torn`` when text followed the last newline,
        ``cut`` when compressed data ended inside a block or member (the last line is torn then, too)."""
        check = self.check
        if self._replaced > MAX_REPLACED_NOTES:
            check.notes.append(f"{self._replaced - MAX_REPLACED_NOTES} further line(s) with bytes that are not UTF-8")
        if torn or cut is not None:
            why = "without its newline" if cut is None else f"({cut})"
            check.notes.append(f"line {check.lines + 1}: torn final line {why} (a reader drops it)")
            check.torn = True
            check.dropped.append(Dropped(check.lines + 1, 1, "a torn final line"))
        if check.lines == 0:
            check.add(1, Violation(Code.JSONL_HEADER_MISSING, "log has no complete header line"))
            check.verdict = check.violations[-1]
        if self.done or self._scanner is None:
            return check
        if self._committed is not None:
            check.violations.append(self._committed)
            check.verdict = self._committed
            for finding in self._damaged:
                self._report_after_first(finding)
            self._after_first_dropped += self._damaged_unlisted
        elif self._issue_line is not None:
            assert self._scanner.issue is not None
            dropped = check.lines - self._issue_line
            check.notes.append(
                bounded(f"{self._scanner.issue.message}: a reader drops this row and the {dropped} line(s) after it")
                + " (no later turn/end proves them committed)"
            )
            check.dropped.insert(0, Dropped(self._issue_line, dropped + 1, "a damaged suffix no later turn/end commits"))
        assert self.header is not None
        seed = None if self._committed is not None else seed_length_problem(self.header, self._scanner.count)
        if seed is not None:
            check.add(1, seed)
            check.verdict = check.verdict or check.violations[-1]
        if self.version == FORMAT_VERSION:
            self._finish_v1()
        else:
            self._finish_v0()
        if self._after_first_dropped:
            check.unlisted = self._after_first_dropped
            check.notes.append(f"{self._after_first_dropped} further state-free violation(s) not listed")
        check.violations.sort(key=lambda finding: finding.line)
        return check

    def _finish_v1(self) -> None:
        check = self.check
        if self._fold_violation is not None:
            check.verdict = check.verdict or self._fold_violation
        elif self._fold is not None and (unfinished := relationship_finish(self._fold.relations)) is not None:
            check.add(check.lines, unfinished)
            check.verdict = check.verdict or check.violations[-1]
        elif self._fold is not None and check.verdict is None:
            closers = self._fold.closers()
            if closers:
                check.notes.append(
                    f"the log ends inside turn {self._fold.trace.open_turn}: loading it appends {closers} repair closer(s)"
                )

    def _finish_v0(self) -> None:
        check = self.check
        assert self._scanner is not None and self.header is not None
        raws, lines = self._v0_events, self._v0_lines
        check.events = len(raws)
        if check.verdict is not None:
            return  # the reader refused the log before the edge sees it
        # Refusal looks at each event on its own, so every refused legacy form is listed.
        first_refusal: Finding | None = None
        for index, raw in enumerate(raws):
            refused = refusal((raw,))
            if refused is not None:
                message = _V0_INDEX.sub(f"v0 index {index}", refused.message, count=1)
                check.add(lines[index], Violation(refused.code, message))
                first_refusal = first_refusal or check.violations[-1]
        if first_refusal is not None:
            check.verdict = first_refusal
            return
        frozen_header = freeze(self.header)
        assert isinstance(frozen_header, Mapping)
        upgraded = upgrade_v0(StoredLog(frozen_header, tuple(freeze(e) for e in raws)))  # type: ignore[misc]
        if isinstance(upgraded, Violation):
            found = _V0_INDEX.search(upgraded.message)
            line = lines[int(found.group(1))] if found and int(found.group(1)) < len(lines) else 1
            check.add(line, upgraded)
            check.verdict = check.violations[-1]
        else:
            check.notes.append("v0 log: the v0-to-v1 edge converts it")


def _state_free_problem(raw: object) -> Violation | None:
    """The checks that need no session: envelope, vocabulary, payload shape."""
    event = decode_event(raw)
    if isinstance(event, Violation):
        return event
    return vocabulary_problem(event) or payload_problem(event)


# -- reading -----------------------------------------------------------------------------------------------


class LineTooLong(Exception):
    """A line longer than :data:`MAX_LINE_BYTES`."""

    def __init__(self, number: int, limit: int) -> None:
        super().__init__(f"line {number} is longer than {limit:,} bytes (the checker's line limit); the log was not checked")
        self.number = number


def _lines(chunks: Iterable[bytes], limit: int, torn: list[bytes]) -> Iterator[tuple[int, str, bool]]:
    """The complete lines of ``chunks``, numbered from 1, decoded, and whether bytes that are not
    UTF-8 were replaced; the text after the last newline is left in ``torn``.  Only the pieces of the
    current line are ever held."""
    pending: list[bytes] = []
    pending_size = 0
    number = 0
    for chunk in chunks:
        parts = chunk.split(b"\n")
        for part in parts[:-1]:
            number += 1
            if pending_size + len(part) > limit:
                raise LineTooLong(number, limit)
            line = part
            if pending:
                pending.append(part)
                line = b"".join(pending)
                pending, pending_size = [], 0
            yield number, *decode_text(line)
        rest = parts[-1]
        if rest:
            pending.append(rest)
            pending_size += len(rest)
            if pending_size > limit:
                raise LineTooLong(number + 1, limit)
    torn.append(b"".join(pending))


def _chunks(stream: BinaryIO) -> Iterator[bytes]:
    while chunk := stream.read(READ_CHUNK_BYTES):
        yield chunk


def _teed(chunks: Iterator[bytes], copy: BinaryIO) -> Iterator[bytes]:
    for chunk in chunks:
        copy.write(chunk)
        yield chunk


def certified_check(certified: fastcheck.Certified) -> LogCheck:
    """What the model's check says of a log the fast checker certified: no violation, and the notes."""
    check = LogCheck(lines=certified.lines, events=certified.events, compression=certified.compression)
    if certified.torn:
        check.notes.append(f"line {check.lines + 1}: torn final line without its newline (a reader drops it)")
        check.torn = True
        check.dropped.append(Dropped(check.lines + 1, 1, "a torn final line"))
    if certified.closers:
        check.notes.append(
            f"the log ends inside turn {certified.open_turn}: loading it appends {certified.closers} repair closer(s)"
        )
    return check


def _certify(chunks: Iterable[bytes]) -> LogCheck | None:
    certified = fastcheck.certify(chunks, READ_CHUNK_BYTES, MAX_LINE_BYTES)
    return None if certified is None else certified_check(certified)


def check_stream(stream: BinaryIO, model: bool = False) -> LogCheck:
    """Check the log read from ``stream`` in chunks of :data:`READ_CHUNK_BYTES`: by the fast checker,
    and by the model when it does not certify the log (or ``model``).  A stream that cannot seek is
    copied as it is read (to a temporary file past :data:`SPOOL_BYTES`), so the model can read it again."""
    if model:
        return check_chunks(_chunks(stream), model=True)
    if stream.seekable():
        start = stream.tell()
        result = _certify(_chunks(stream))
        if result is not None:
            return result
        stream.seek(start)
        return check_chunks(_chunks(stream), model=True)
    return check_chunks(_chunks(stream))


def check_chunks(chunks: Iterable[bytes], model: bool = False) -> LogCheck:
    """Check the log whose bytes are ``chunks``, decompressed first when they start with a zstd or gzip
    magic number; lines over :data:`MAX_LINE_BYTES` and damaged compressed data make it unreadable.

    The fast checker (:mod:`~sessionlog_spec.suite.fastcheck`) reads it first, keeping a copy of what
    it read; when it does not certify the log, the model checks the copy and the rest.  With
    ``model``, the model alone checks it."""
    if model:
        return _model_check(chunks)
    source = iter(chunks)
    with tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES) as copy:
        result = _certify(_teed(source, copy))  # type: ignore[arg-type]
        if result is not None:
            return result
        copy.seek(0)
        return _model_check(itertools.chain(_chunks(copy), source))  # type: ignore[arg-type]


def _model_check(chunks: Iterable[bytes]) -> LogCheck:
    checker = LogChecker()
    torn: list[bytes] = []
    data = Decompressed(chunks, READ_CHUNK_BYTES)
    try:
        for number, line, replaced in _lines(data, MAX_LINE_BYTES, torn):
            if replaced:
                checker.replaced(number)
            checker.feed(number, line)
            if checker.done:
                result = checker.finish(False)
                break
        else:
            result = checker.finish(torn[0] != b"", data.cut)
    except LineTooLong as error:
        return unchecked(Unchecked.LINE_OVER_LIMIT, str(error), error.number)
    except DamagedCompression as error:
        reached = checker.check.lines + 1
        message = f"{error}, in line {reached:,}; the log was not checked"
        return unchecked(Unchecked.COMPRESSED_DATA_DAMAGED, message, reached)
    result.compression = None if data.compression is None else data.compression.value
    return result


def check_log(text: str, model: bool = False) -> LogCheck:
    """Check the stored log ``text`` (already decoded): by the fast checker, and by the model when it
    does not certify the log (or ``model``)."""
    if not model:
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: the model reads the text as it is
            data = None
        result = None if data is None else _certify([data])
        if result is not None:
            return result
    checker = LogChecker()
    segments = text.split("\n")
    torn = segments.pop()
    for number, line in enumerate(segments, start=1):
        checker.feed(number, line)
        if checker.done:
            return checker.finish(False)
    return checker.finish(torn != "")


# -- paths and the command line -----------------------------------------------------------------------------------


_CODES = textwrap.fill(", ".join(code.value for code in Unchecked), width=100)

HELP = f"""\
Check stored logs offline against the model, the way the released reader reads them.

PATH is a log file, a directory (every *.jsonl, *.jsonl.zst and *.jsonl.gz file under it,
recursively, in sorted order) or '-' for standard input.  A log compressed with zstd (seqlog's
events.jsonl.zst, appended frames, the last one possibly left open by its writer) or gzip is known
by its magic number, whatever its name, and decompressed as it is read.  Only regular files are read
from a path: a FIFO, a device or a socket is refused without being opened (give it as '-' to read it
as a stream).  Input is read in {READ_CHUNK_BYTES >> 20} MiB chunks; a line over {MAX_LINE_BYTES >> 20} MiB (after decompression)
stops the check of its log.  File names holding control characters are printed quoted, with escapes.

Output: every violation as PATH:LINE: CODE: MESSAGE, notes (a line holding bytes that are not
UTF-8, read as U+FFFD as the released reader reads them; a dropped torn tail or uncommitted damaged
suffix; an open turn that loading repairs), then one line per log: 'PATH: ok: N line(s) read, none
dropped', or how many lines a reader drops and why ('PATH: ok: N line(s) read, K dropped: lines A to
B (a damaged suffix no later turn/end commits)'), or 'PATH: V violation(s): …'; and a final summary
line.  A log that cannot be checked at all is reported on standard error as
PATH[:LINE]: cannot read: CODE: MESSAGE, with CODE one of
{_CODES}.

--strict: a dropped line (a torn final line, a damaged suffix no turn/end commits, compressed data
cut inside a block) is a failure, as a violation is: the log's line says FAILED (--strict).

--model: every event is judged by the model.  By default a fast checker reads each log first
(plain parsed values, the published payload schemas) and the model judges only a log it cannot
certify valid; the output is the same either way.

Exit status: {EXIT_VIOLATIONS} if any log has violations (or, with --strict, dropped lines); otherwise {EXIT_UNREADABLE} if any
log could not be checked (the codes above); otherwise {EXIT_CLEAN}: every log was read and has no violations.
Usage errors also exit {EXIT_UNREADABLE}.
"""


@dataclass
class Tally:
    """How the checked paths came out."""

    strict: bool = False
    """Dropped lines fail the run (``--strict``)."""
    clean: int = 0
    dropping: int = 0
    """Logs without violations from which a reader drops lines."""
    violations: int = 0
    unreadable: int = 0
    lines_dropped: int = 0

    def count(self, result: LogCheck) -> None:
        """Count one log's result."""
        if result.unreadable is not None:
            self.unreadable += 1
            return
        self.lines_dropped += result.lines_dropped
        if result.violations:
            self.violations += 1
        elif result.dropped:
            self.dropping += 1
        else:
            self.clean += 1

    @property
    def status(self) -> int:
        """The exit status (see :data:`HELP`)."""
        if self.violations or (self.strict and self.dropping):
            return EXIT_VIOLATIONS
        return EXIT_UNREADABLE if self.unreadable else EXIT_CLEAN

    def summary(self) -> str:
        """The final summary line."""
        total = self.clean + self.dropping + self.violations + self.unreadable
        counts = (
            f"{self.clean} clean, {self.dropping} with dropped lines, {self.violations} with violations, "
            f"{self.unreadable} unreadable"
        )
        if self.lines_dropped:
            counts += f"; {self.lines_dropped:,} line(s) dropped" + (", a failure under --strict" if self.strict else "")
        return f"check-log: {total} log(s) checked: {counts}"


def _os_refusal(error: OSError) -> LogCheck:
    """The answer for a path the operating system would not open, walk or read."""
    if error.errno in (errno.ENOENT, errno.ENOTDIR):
        code = Unchecked.PATH_NOT_FOUND
    elif error.errno in (errno.EACCES, errno.EPERM):
        code = Unchecked.PERMISSION_DENIED
    else:
        code = Unchecked.READ_FAILED
    return unchecked(code, error.strerror or str(error))


LOG_SUFFIXES: Final = (".jsonl", ".jsonl.zst", ".jsonl.gz")
"""The names a directory walk takes for logs (a file given by path is read whatever its name)."""


def expand_paths(paths: Sequence[str]) -> Iterator[tuple[str, LogCheck | None]]:
    """The logs to check, in order, each with its answer when it cannot be checked (else ``None``):
    files and '-' as given, directories walked for files named by :data:`LOG_SUFFIXES` (sorted), then
    the places of a directory that could not be walked, or the directory itself when it holds no log."""
    for path in paths:
        if path == STDIN or not os.path.isdir(path):
            yield path, None
            continue
        found: list[str] = []
        failures: list[OSError] = []
        for root, dirs, files in os.walk(path, onerror=failures.append):
            dirs.sort()
            found.extend(os.path.join(root, name) for name in files if name.endswith(LOG_SUFFIXES))
        yield from ((name, None) for name in sorted(found))
        for failure in failures:
            yield str(failure.filename or path), _os_refusal(failure)
        if not found and not failures:
            yield path, unchecked(Unchecked.NO_LOGS_IN_DIRECTORY, "no *.jsonl, *.jsonl.zst or *.jsonl.gz files in this directory")


_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a directory",
}
_OPEN_FLAGS: Final = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
"""Never blocking in ``open`` (a path swapped for a FIFO after its ``stat``), never taking a terminal."""


def _not_a_file(mode: int) -> LogCheck:
    kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
    return unchecked(Unchecked.NOT_A_REGULAR_FILE, f"{kind}, not a regular file; give it as '-' (standard input) to read it")


def check_path(path: str, stdin: BinaryIO | None = None, model: bool = False) -> LogCheck:
    """Check one log file (``-``: ``stdin``); :attr:`LogCheck.unreadable` says why it could not be.

    A path is judged by ``stat`` before it is opened: opening a FIFO without a writer blocks, and
    opening a device may act on it.  It is then opened without blocking and judged again by
    ``fstat``, so a path replaced in between is refused as well.  ``model``: the model alone checks
    it (:func:`check_stream`).
    """
    if path == STDIN:
        stream = stdin if stdin is not None else getattr(sys.stdin, "buffer", None)
        if stream is None:
            return unchecked(Unchecked.READ_FAILED, "standard input is closed")
        try:
            return check_stream(stream, model)
        except OSError as error:
            return _os_refusal(error)
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        return _os_refusal(error)
    if not stat.S_ISREG(mode):
        return _not_a_file(mode)
    try:
        descriptor = os.open(path, _OPEN_FLAGS)
    except OSError as error:
        return _os_refusal(error)
    with os.fdopen(descriptor, "rb", buffering=0) as opened:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            return _not_a_file(mode)
        if hasattr(os, "set_blocking"):
            os.set_blocking(descriptor, True)
        try:
            return check_stream(opened, model)
        except OSError as error:
            return _os_refusal(error)


def shown(path: str) -> str:
    """``path`` as printed: as it is, or quoted with escapes when it holds a character that is not
    printable (a newline, an escape, bytes that are not text), so that one log is one line."""
    return path if path.isprintable() else repr(path)


def status_line(result: LogCheck, strict: bool = False) -> str:
    """What one readable log came to: ok or its violation count, the lines read, and what was dropped and why."""
    read = f"{result.lines_read:,} line(s) read"
    if result.dropped:
        dropped = "; ".join(drop.describe() for drop in result.dropped)
        lines = f"{read}, {result.lines_dropped:,} dropped: {dropped}"
    else:
        lines = f"{read}, none dropped"
    if result.violations:
        return f"{len(result.violations) + result.unlisted:,} violation(s): {lines}"
    return f"FAILED (--strict): {lines}" if strict and result.dropped else f"ok: {lines}"


def report(name: str, result: LogCheck, out: TextIO, err: TextIO, strict: bool = False) -> None:
    """Print one log's result (``name`` is printed as :func:`shown` gives it)."""
    name = shown(name)
    if result.unreadable is not None:
        where = name if result.unreadable_line is None else f"{name}:{result.unreadable_line}"
        code = "" if result.unreadable_code is None else f"{result.unreadable_code.value}: "
        print(f"{where}: cannot read: {code}{result.unreadable}", file=err)
        return
    for finding in result.violations:
        suffix = " (state-free check after the first violation)" if finding.after_first else ""
        print(f"{name}:{finding.line}: {finding.code}: {finding.message}{suffix}", file=out)
    for note in result.notes:
        print(f"{name}: note: {note}", file=out)
    print(f"{name}: {status_line(result, strict)}", file=out)


def run(
    paths: Sequence[str], out: TextIO | None = None, err: TextIO | None = None, strict: bool = False, model: bool = False
) -> int:
    """``check-log [--strict] [--model] PATH...``: check every log, print each result and a summary; the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    for stream in (out, err):
        if isinstance(stream, io.TextIOWrapper):  # a log's text or a path's bytes must not fail the output
            stream.reconfigure(errors="backslashreplace")
    tally = Tally(strict=strict)
    try:
        for path, refusal in expand_paths(paths):
            name = "<stdin>" if path == STDIN else path
            result = refusal
            if result is None:
                try:
                    result = check_path(path, model=model)
                except Exception as error:  # a checker bug must not hide the other logs' results
                    result = unchecked(Unchecked.CHECKER_ERROR, f"{type(error).__name__}: {error}")
            report(name, result, out, err, strict)
            tally.count(result)
        print(tally.summary(), file=out)
    except BrokenPipeError:  # the reader of the output went away (``check-log DIR | head``)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return tally.status
