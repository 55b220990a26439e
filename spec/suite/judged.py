"""The model's judgement of one appended event, computed once per session and event.

A conformance step asks the model about the same event on the same session several times: the
builder checks that an action's event is admissible, the oracle answers the port's ``append``, the
builder commits it, and a scene replayed live folds the events a seed candidate was just judged on.
:func:`appended` is :func:`~sessionlog_spec.model.session.append_event` remembered: the answer
for a session (by identity: a :class:`~sessionlog_spec.model.session.SessionState` is frozen, and
the memory holds it, so its identity is not reused while remembered) and a raw event (by
:func:`raw_key`, which tells apart every two raw values the model could tell apart) is computed
once and returned again.  The model stays a pure function; only repeated work is skipped.

The other whole-log readings are remembered the same way, each answering exactly as the model's
function it stands for: :func:`decoded` is :func:`~sessionlog_spec.model.jsonl.decode_jsonl` reading
a stored text as the text it read before plus new lines (the texts a machine stores share their
prefix: the log grows by one event per step), :func:`upgraded` is
:func:`~sessionlog_spec.model.legacy.upgrade_v0` whose converted log :func:`folded` validates, and
:func:`saved` is :func:`~sessionlog_spec.model.load.save_session` writing each event's line once.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from sessionlog_spec.model.event import Event, encode_event
from sessionlog_spec.model.json_value import JsonObject, as_object, freeze, thaw
from sessionlog_spec.model.jsonl import (
    DecodedLog,
    RowScanner,
    encode_line,
    header_line_problem,
    parse_json,
    parse_line,
    seed_length_problem,
)
from sessionlog_spec.model.legacy import StoredLog, upgrade_v0
from sessionlog_spec.model.relationships import SessionIdentity, relations_for, relationship_finish
from sessionlog_spec.model.rows import Record, pack_chunk_runs
from sessionlog_spec.model.session import EMPTY_SESSION, SessionState, append_event, position_named
from sessionlog_spec.model.violation import Code, Violation

REMEMBERED = 8192
"""How many (session, event) answers are kept; the least recently asked go first."""


class _Unkeyable(Exception):
    """A raw value :func:`raw_key` does not describe exactly (it is judged afresh every time)."""


_LIST, _TUPLE, _DICT, _MAPPING, _INT, _FLOAT = "list", "tuple", "dict", "mapping", "int", "float"


def raw_key(value: object) -> Hashable:
    """A hashable description of a raw JSON-like value, equal for two values only when they are the
    same value of the same types, member order included (``1``, ``1.0`` and ``True`` differ, and so
    do ``0.0`` and ``-0.0``; a ``dict`` and the model's read-only mapping of the same members differ
    too).  Raises :class:`_Unkeyable` for anything else: a subclass of a JSON type, another mapping,
    a non-string key, a foreign object, a value nested too deep for the walk."""
    kind = type(value)
    if kind is str or value is None or kind is bool:
        return value
    if kind is int:
        return (_INT, value)
    if kind is float:
        return (_FLOAT, repr(value))
    if kind is dict or kind is MappingProxyType:
        members = []
        for key, member in value.items():  # type: ignore[attr-defined]
            if type(key) is not str:
                raise _Unkeyable
            members.append((key, raw_key(member)))
        return (_DICT if kind is dict else _MAPPING, tuple(members))
    if kind is list or kind is tuple:
        return (_LIST if kind is list else _TUPLE, tuple(raw_key(item) for item in value))  # type: ignore[attr-defined]
    raise _Unkeyable


_answers: OrderedDict[tuple[int, bool, Hashable], tuple[SessionState, SessionState | Violation]] = OrderedDict()
_parsed_keys: dict[int, tuple[object, Hashable]] = {}
"""The keys of the raw events :func:`decoded` parsed, by identity: nothing changes them after parsing
(they are the memory's own, and the model only reads them), so each is walked once."""


def _key_of(raw: object) -> Hashable:
    known = _parsed_keys.get(id(raw))
    if known is not None and known[0] is raw:
        return known[1]
    return raw_key(raw)


def appended(state: SessionState, raw: object, *, legacy_restart: bool = False) -> SessionState | Violation:
    """``append_event(state, raw, legacy_restart=...)``, computed once for the same session and the same raw event."""
    try:
        key = (id(state), legacy_restart, _key_of(raw))
    except (_Unkeyable, RecursionError):
        return append_event(state, raw, legacy_restart=legacy_restart)
    known = _answers.get(key)
    if known is not None and known[0] is state:
        _answers.move_to_end(key)
        return known[1]
    answer = append_event(state, raw, legacy_restart=legacy_restart)
    _answers[key] = (state, answer)
    if len(_answers) > REMEMBERED:
        _answers.popitem(last=False)
    return answer


_starts: dict[SessionIdentity, SessionState] = {}


def _start(identity: SessionIdentity | None) -> SessionState:
    """The empty session of ``identity``: one object per identity, so that folds share their prefixes."""
    if identity is None:
        return EMPTY_SESSION
    known = _starts.get(identity)
    if known is None:
        known = _starts[identity] = SessionState(relations=relations_for(identity))
    return known


def folded(
    raws: Sequence[object],
    where: str = "index",
    first: int = 0,
    positions: Sequence[int] | None = None,
    *,
    identity: SessionIdentity | None = None,
    complete: bool = True,
    legacy_restart: bool = False,
) -> SessionState | Violation:
    """:func:`~sessionlog_spec.model.session.fold_session` as the fold of :func:`appended` it is
    specified to equal (a :class:`~sessionlog_spec.model.session.Fold`): a prefix already judged,
    by the builder, a scene or an earlier read of the same log, is not judged again."""
    state = _start(identity)
    for index, raw in enumerate(raws):
        following = appended(state, raw, legacy_restart=legacy_restart)
        if isinstance(following, Violation):
            return following.at(position_named(where, index, first, positions))
        state = following
    if complete and (unfinished := relationship_finish(state.relations)) is not None:
        return unfinished.at(position_named(where, len(raws) - 1, first, positions))
    return state


# -- stored texts: read as the text read before plus new lines -----------------------------------------

READ_KEPT = 2_000_000
"""How many characters of lines the memory of stored texts holds; past it, it starts afresh."""
PARSED_KEPT = 500_000
"""How many characters of lines are kept parsed whatever text they stand in; the least recently asked go first."""

_parses: OrderedDict[str, object] = OrderedDict()
_parsed_size = [0]


def parsed_json(line: str) -> object:
    """:func:`~sessionlog_spec.model.jsonl.parse_json` of ``line``, computed once for the same text
    (a line that nests deep is read by a loop over its characters, and the same line stands in many
    texts: a crash's variants, the text a refusal's cell is looked up in).  What it returns is
    shared, and nothing changes it."""
    known = _parses.get(line, _parses)
    if known is not _parses:
        _parses.move_to_end(line)
        return known
    value = _parses[line] = parse_json(line)
    _parsed_size[0] += len(line)
    while _parsed_size[0] > PARSED_KEPT and len(_parses) > 1:
        _parsed_size[0] -= len(_parses.popitem(last=False)[0])
    return value


def parsed_line(line: str) -> Mapping[str, object] | str:
    """:func:`~sessionlog_spec.model.jsonl.parse_line` of ``line``, its parse remembered (:func:`parsed_json`)."""
    value = parsed_json(line)
    if isinstance(value, str):
        return value
    if not isinstance(value, dict):
        return "is not a JSON object"
    return value


@dataclass(slots=True)
class _Line:
    """A line of stored texts that begin alike, as the reader left it: what the line added, the
    reader's state after it, and the lines read after it so far (by their text)."""

    events: tuple[Record, ...] = ()
    count: int = 0
    issue: Violation | None = None
    issue_line: int | None = None
    unparsable: bool = False
    refused: Violation | None = None
    """The refusal of every text holding these lines (the reader stops at it)."""
    following: dict[str, _Line] = field(default_factory=dict)


@dataclass(slots=True)
class _HeaderLine(_Line):
    """The first line: the header it holds (frozen), or the refusal of every text it begins."""

    header: Mapping[str, object] = field(default_factory=dict)
    frozen: JsonObject = field(default_factory=lambda: MappingProxyType({}))


class _StoredTexts:
    """The lines of every stored text read, as a tree from each first line."""

    def __init__(self) -> None:
        self.first_lines: dict[str, _HeaderLine] = {}
        self.held = 0

    def first(self, line: str) -> _HeaderLine:
        """The reader's state after the first line ``line``."""
        known = self.first_lines.get(line)
        if known is not None:
            return known
        if self.held > READ_KEPT:
            self.first_lines.clear()
            _parsed_keys.clear()
            self.held = 0
        header = parse_line(line)
        if isinstance(header, str):
            known = _HeaderLine(refused=Violation(Code.JSONL_MALFORMED_LINE, f"line 1 {header}"))
        elif (problem := header_line_problem(header)) is not None:
            known = _HeaderLine(refused=problem)
        else:
            frozen = as_object(freeze(header))
            assert frozen is not None
            known = _HeaderLine(header=header, frozen=frozen)
        self.first_lines[line] = known
        self.held += len(line)
        return known

    def following(self, after: _Line, number: int, line: str) -> _Line:
        """The reader's state after ``line`` (line ``number``), read after ``after``."""
        known = after.following.get(line)
        if known is not None:
            return known
        kept: list[Record] = []
        scanner = RowScanner(
            lambda event, _: kept.append(event), after.count, after.issue, after.issue_line, after.unparsable, parsed_json
        )
        refused = scanner.feed(number, line)
        for event in kept:
            with contextlib.suppress(_Unkeyable, RecursionError):
                _parsed_keys[id(event)] = (event, raw_key(event))
        known = after.following[line] = _Line(
            tuple(kept), scanner.count, scanner.issue, scanner.issue_line, scanner.unparsable, refused
        )
        self.held += len(line)
        return known


_texts = _StoredTexts()


def decoded(text: str) -> DecodedLog | Violation:
    """:func:`~sessionlog_spec.model.jsonl.decode_jsonl`, reading only the lines no text read before
    began with: the reader's state after each line is remembered by the exact lines before it, so a
    text that extends (or shares a beginning with) one read before is read from where they part."""
    segments = text.split("\n")
    torn = segments.pop()
    if not segments:
        return Violation(Code.JSONL_HEADER_MISSING, "log has no complete header line")
    first = _texts.first(segments[0])
    if first.refused is not None:
        return first.refused
    events: list[Record] = []
    lines: list[int] = []
    at: _Line = first
    for number, line in enumerate(segments[1:], start=2):
        following = _texts.following(at, number, line)
        if following.refused is not None:
            return following.refused
        if following.events:
            events += following.events
            lines += [number] * len(following.events)
        at = following
    problem = seed_length_problem(first.header, at.count)
    if problem is not None:
        return problem
    return DecodedLog(first.frozen, tuple(events), tuple(lines), torn != "", at.issue_line)


# -- the v0 edge ---------------------------------------------------------------------------------------


def upgraded(log: StoredLog) -> StoredLog | Violation:
    """:func:`~sessionlog_spec.model.legacy.upgrade_v0` with its converted log validated by
    :func:`folded`: the converted events of a log the edge read before (the same log, or the log
    it grew from) are not judged again."""
    return upgrade_v0(log, folded)


# -- saving --------------------------------------------------------------------------------------------

_event_lines: OrderedDict[int, tuple[Event, str]] = OrderedDict()
EVENT_LINES_KEPT = 65_536
"""How many events' stored lines are kept (each holds its event, so its identity is not reused)."""


def _event_line(event: Event) -> str:
    known = _event_lines.get(id(event))
    if known is not None and known[0] is event:
        return known[1]
    line = encode_line(encode_event(event))
    _event_lines[id(event)] = (event, line)
    if len(_event_lines) > EVENT_LINES_KEPT:
        _event_lines.popitem(last=False)
    return line


def saved(header: JsonObject, state: SessionState, packed: bool = False) -> str:
    """:func:`~sessionlog_spec.model.load.save_session`, each event's line written once (an
    :class:`~sessionlog_spec.model.event.Event` is frozen, so its line is remembered by its identity)."""
    lines = [encode_line(thaw(header))]
    if not packed:
        lines += map(_event_line, state.events)
    else:
        # A run of chunks is packed into a new row; every other row is an event's own record, whose line is known.
        records = [encode_event(event) for event in state.events]
        line_of = {id(record): _event_line(event) for record, event in zip(records, state.events, strict=True)}
        lines += (line_of.get(id(row)) or encode_line(row) for row in pack_chunk_runs(records))
    return "".join(line + "\n" for line in lines)
