"""The fast checker of stored v1 logs: it certifies a valid log, or hands the log to the model.

``check-log`` judges every event of a log through the model (:mod:`sessionlog_spec.suite.check_log`),
which decodes each event into frozen values first.  Most logs are valid, and proving a log valid
needs no message and no violation code, so this module proves it on plain parsed values instead:
each line is parsed by ``orjson``, each payload is validated against its published JSON Schema
(``spec/vectors/schemas``, compiled by ``jsonschema-rs``), and the envelope, row, seq, vocabulary,
surface and trace rules are restated here over dicts and lists.  Its answer is either
:class:`Certified` (the model would read the log without a violation, and what it would note) or
``None``: the log, or something in it, is not certified, and the model judges the whole log, so
every code, line and message a report prints comes from the model.  Outputs are equal by
construction as long as this module never certifies a log the model refuses; the differential
tests (``tests/suite/test_fastcheck.py``) compare both on valid, damaged and generated logs.

What is restated and what is delegated:

* **lines and rows**: lines split from the (decompressed) bytes, JSON by ``orjson``; a line that
  ``orjson`` refuses, that is not UTF-8, torn compressed data, a damaged row, a seq off the sequence:
  not certified.  A line where ``orjson`` and the model's reader could read different values
  (``-0``, an integer of 16 or more digits, a negative exponent of three digits, 256 or more
  brackets: :func:`_risky`) is read by the model's reader instead, and its events' lossless JSON
  checked (INV-LOG-4); every other line holds only values that are lossless as ``orjson`` reads
  them.  Lines are handed over a read chunk at a time (:func:`_lines`).  Packed chunk rows are
  checked in their row form by their released shape (:meth:`FastFold._packed`), with integers and
  no floats; anything else in them is not certified.  No member event is built: the members differ
  only in strings the chunk schema leaves unconstrained, so one is validated per row, and a text or
  reasoning row's verdict is remembered by kind and index (:data:`TURN_AND_STEP_APART`).
* **envelope, vocabulary, surface, trace**: restated (:meth:`FastFold._event`, :meth:`FastFold._surface`,
  and one method per type with trace rules).  The frequent shapes (a bracket or ``tool/call`` with
  the four required envelope members alone, a message appended to the surface) take a shorter path
  that restates the same rules for that shape (:meth:`FastFold._bare`, :meth:`FastFold._appended`);
  a list of plain seqs in ``sourceEventSeqs`` is not decoded as ranges.
* **payloads**: the type's schema; the types whose schema carries ``x-relations`` or
  ``x-earlierThanEventSeq`` annotations, and ``request/header`` (whose snapshot must also be
  canonical), are judged by the model's payload rules on the plain values (:data:`MODEL_PAYLOADS`),
  except a ``user/message`` whose annotated parts are absent; the three message types also pass the
  model's message rules, restated (:data:`_MESSAGE_RULES`; ``tool/result``'s one annotation,
  its block answers the source's call id, is one of them).
* **relationships** (INV-REL): brackets, tool lifecycles and the provider restated while no
  compaction is open (:class:`_Relations`, the types' methods); every other event through the model's transition, on an
  event holding the plain values; ``assistant/chunk`` relates to nothing.  A seq a rule looks up is
  read again from its stored line.
* the end of the log: the header's ``seedLength``, the relationship verdict on the whole log, and
  the repair closers of an open tail turn, by the model's functions.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Any, Final

import jsonschema_rs
import orjson

from sessionlog_spec.model import relationships
from sessionlog_spec.model.event import (
    APPEND,
    ENVELOPE_KEYS,
    KNOWN_EVENT_TYPES,
    SURFACE_TYPES,
    Append,
    Event,
    Replace,
    decode_sources,
    decode_surface_op,
)
from sessionlog_spec.model.json_value import MAX_SAFE_INTEGER, json_equal, lossless_problem
from sessionlog_spec.model.jsonl import FORMAT_VERSION, decode_text, header_line_problem, parse_json, parse_line
from sessionlog_spec.model.load import identity_of
from sessionlog_spec.model.messages import ASSISTANT_DATA_KEYS, TOOL_RESULT_DATA_KEYS
from sessionlog_spec.model.relationships import RelationState, relations_for, relationship_finish, relationship_transition
from sessionlog_spec.model.repair import interrupted_turn_closers
from sessionlog_spec.model.rows import PACKED_ROW_CHUNKS, row_events
from sessionlog_spec.model.session import LEGACY_TYPES, payload_problem
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.schemas import SCHEMA_DIRECTORY, schema_file
from sessionlog_spec.suite.compressed import DamagedCompression, Decompressed

CHUNK: Final = "assistant/chunk"
_ANNOTATIONS: Final = ('"x-relations"', '"x-earlierThanEventSeq"')

if CHUNK in relationships._HANDLERS:  # pragma: no cover - a guard on the model's table
    raise ImportError("the relationship rules now relate assistant/chunk events: the fast checker must relate them too")
if LEGACY_TYPES.keys() & KNOWN_EVENT_TYPES:  # pragma: no cover - a guard on the model's tables
    raise ImportError("a legacy type is now known: the fast checker must refuse it before its payload")


def _schema_text(event_type: str) -> str:
    return (SCHEMA_DIRECTORY / schema_file(event_type)).read_text(encoding="utf-8")


MODEL_PAYLOADS: Final = frozenset(
    {"request/header"} | {t for t in KNOWN_EVENT_TYPES if t != "tool/result" and any(a in _schema_text(t) for a in _ANNOTATIONS)}
)
"""Types whose payload the model's rules judge: what their schema cannot state is annotated, and
``request/header`` must also be canonical."""


@cache
def validator(event_type: str) -> Callable[[object], bool]:
    """``is_valid`` of the compiled published schema of ``event_type``'s data."""
    compiled = jsonschema_rs.validator_for(json.loads(_schema_text(event_type)))
    return compiled.is_valid


def _strings_unconstrained(node: object) -> bool:
    """Whether every ``text`` and ``argumentsDelta`` member the schema names is any string: then the
    members of one packed row, which differ only there (and in seq and time), share one verdict."""
    if isinstance(node, dict):
        members = node.get("properties")
        if isinstance(members, dict) and any(
            members.get(key, {"type": "string"}) != {"type": "string"} for key in ("text", "argumentsDelta")
        ):
            return False
        return all(_strings_unconstrained(value) for value in node.values())
    if isinstance(node, list):
        return all(_strings_unconstrained(value) for value in node)
    return True


ONE_VERDICT_PER_ROW: Final = _strings_unconstrained(json.loads(_schema_text(CHUNK)))

_NATURAL_SCHEMA: Final = {"type": "integer", "minimum": 0, "maximum": MAX_SAFE_INTEGER}
_PLAIN_OBJECT_KEYWORDS: Final = frozenset(
    {"$schema", "$id", "title", "description", "$comment", "type", "properties", "required", "additionalProperties", "$defs"}
)


def _turn_and_step_apart(schema: Mapping[str, Any]) -> bool:
    """Whether the top level of ``schema`` only names its members, ``turn`` and ``step`` any
    non-negative safe integer, with no keyword that relates one member to another: then the
    verdict on data of natural turn and step does not depend on which."""
    members = schema.get("properties")
    return (
        schema.keys() <= _PLAIN_OBJECT_KEYWORDS
        and schema.get("type") == "object"
        and isinstance(members, dict)
        and members.get("turn") == _NATURAL_SCHEMA
        and members.get("step") == _NATURAL_SCHEMA
    )


TURN_AND_STEP_APART: Final = _turn_and_step_apart(json.loads(_schema_text(CHUNK)))
"""With :data:`ONE_VERDICT_PER_ROW`: a text or reasoning row's verdict depends only on its kind and
index, and is remembered (:data:`_TEXT_ROW_VERDICTS` of them)."""
_TEXT_ROW_VERDICTS: Final = 64

_DIGITS_AS_ZERO: Final = bytes.maketrans(b"123456789E", b"000000000e")
_DEEP: Final = 256
"""A line with this many brackets may nest deeper than an event may (INV-LOG-4): read it exactly."""

_INT: Final = {int}


def _natural(value: object) -> bool:
    """A non-negative safe integer written as an integer (floats are left to the model)."""
    return type(value) is int and 0 <= value <= MAX_SAFE_INTEGER


@dataclass(frozen=True)
class Certified:
    """A log the model reads without a violation, and what its check notes."""

    lines: int
    """Complete lines read."""
    events: int
    torn: bool
    """Text followed the last newline (a reader drops it)."""
    open_turn: int | None
    """The turn the log ends inside, if any."""
    closers: int
    """How many repair closers loading the log appends."""
    compression: str | None


class NotCertified(Exception):
    """Raised inside the fold: the model must judge this log."""


# -- the log as the relationship rules look it up -----------------------------------------------------


class _PlainLog(Sequence[Event]):
    """The log before the current event, as :func:`relationship_transition` sees it: its length, and
    the events a rule may look up (surface events and human messages), read again from their lines."""

    __slots__ = ("_humans", "_kept", "_types", "length")

    def __init__(self) -> None:
        self._kept: dict[int, tuple[bytes, bool]] = {}
        self._humans: dict[int, tuple[bytes, bool]] = {}
        self._types: list[str] = []
        self.length = 0

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, seq: int) -> Event:  # type: ignore[override]
        kept = self._kept.get(seq) or self._humans.get(seq)
        if kept is None:
            if 0 <= seq < len(self._types):
                return Event(type=self._types[seq], seq=seq, time=0, data=relationships.EMPTY)
            raise IndexError(seq)
        line, exact = kept
        raw = parse_json(decode_text(line)[0]) if exact else orjson.loads(line)
        assert isinstance(raw, dict), "a kept line holds one event"
        return Event(type=raw["type"], seq=seq, time=raw["time"], data=raw["data"], ignorable="ignorable" in raw)

    def __iter__(self) -> Iterator[Event]:
        raise TypeError("fast fold: the whole log is not kept")


def _event_of(raw: Mapping[str, Any]) -> Event:
    """The model's event of an event row the fold admitted (its payload the same plain value)."""
    op, sources = raw.get("surfaceOp"), raw.get("sourceEventSeqs")
    surface_op = None if op is None else decode_surface_op(op)
    decoded = None if sources is None else decode_sources(sources)
    assert not isinstance(surface_op, Violation) and not isinstance(decoded, Violation), "an admitted row decodes"
    return Event(raw["type"], raw["seq"], raw["time"], raw["data"], "ignorable" in raw, surface_op, decoded)


# -- relationships (INV-REL) ----------------------------------------------------------------------------------


class _Relations:
    """The relationship state: the model's :class:`RelationState`, with the fields the frequent
    events change (brackets, the step's tool lifecycles, the provider) kept here, mutable.

    Each lifecycle is ``[call, name, arguments, started]``, tokens as the model makes them
    (:func:`~sessionlog_spec.model.relationships.member`).  The frequent events' rules are restated
    in :class:`FastFold`'s handlers while no compaction is open (``compacting`` false); every other
    event goes through the model's transition (:meth:`model`)."""

    __slots__ = ("compacting", "ended_steps", "open_step", "open_turn", "provider", "rest", "tools")

    def __init__(self, state: RelationState) -> None:
        self.rest = state
        self._take(state)

    def _take(self, state: RelationState) -> None:
        self.rest = state
        self.compacting = state.compaction is not None
        self.open_turn, self.open_step, self.ended_steps = state.open_turn, state.open_step, state.ended_steps
        self.provider = state.provider
        self.tools: list[list[Any]] = [[lc.call, lc.name, lc.arguments, lc.started] for lc in state.tools]

    def state(self) -> RelationState:
        """The whole state, as the model keeps it."""
        return replace(
            self.rest,
            open_turn=self.open_turn,
            open_step=self.open_step,
            ended_steps=self.ended_steps,
            provider=self.provider,
            tools=tuple(relationships.ToolLifecycle(*lc) for lc in self.tools),
        )

    def find(self, call: object) -> list[Any] | None:
        """The lifecycle of the call whose id token is ``call``."""
        for lifecycle in self.tools:
            if lifecycle[0] == call:
                return lifecycle
        return None

    def model(self, event: Event, log: Sequence[Event], surface: Sequence[int]) -> None:
        """Relate ``event`` by the model's transition; :exc:`NotCertified` if a rule refuses it."""
        after = relationship_transition(self.state(), event, log=log, surface=surface)
        if isinstance(after, Violation):
            raise NotCertified
        self._take(after)


def _string_token(value: object) -> object:
    """The token of a member the payload rules made a string (:func:`~sessionlog_spec.model.relationships.token`)."""
    return ("string", value) if type(value) is str else relationships.token(value)  # type: ignore[arg-type]


# -- the fold -----------------------------------------------------------------------------------------

_BARE: Final = frozenset({"turn/start", "turn/end", "step/start", "step/end", "tool/call"})
"""Types whose payload only their schema judges and which never join the surface."""

_Plan = tuple[int, int, tuple[int, ...] | None]
"""Where an event goes on the surface: ``nodes[start:end]`` becomes its seq, and what it shadows."""
_Step = Callable[["FastFold", dict[str, Any], Any, Append | Replace | None, tuple[int, ...] | None], None]
"""A type's trace and relationship rules: called with the fold, the row, its data, surface op and sources."""


class FastFold:
    """The v1 contract over plain values, event by event; :exc:`NotCertified` when it cannot vouch."""

    def __init__(self, header: Mapping[str, object]) -> None:
        self.count = 0
        self.nodes: list[int] = []
        self.log = _PlainLog()
        self.relations = _Relations(relations_for(identity_of(header)))
        self.open_turn: int | None = None
        self.last_turn = 0
        self.open_step: int | None = None
        self.last_step = 0
        self.step_calls: set[str] = set()
        self.turn_tail: list[dict[str, Any]] = []
        """The event rows of the open turn, for its repair closers."""
        self.header_seed: int | None = None
        """The header's ``seedLength``: the log must hold at least this many events."""
        self._chunk_valid = validator(CHUNK)
        self._text_rows: set[tuple[str, int]] = set()
        """The kinds and indexes of text and reasoning rows found valid (:data:`TURN_AND_STEP_APART`)."""
        self._payloads: dict[str, tuple[Callable[[object], bool] | None, Callable[[Any], bool] | None]] = {}

    # -- rows --

    def row(self, line: bytes, exact: bool) -> None:
        """Fold one stored line (a row after the header); ``exact``: read it with the model's reader."""
        parsed: Any
        if exact:
            text, replaced = decode_text(line)
            parsed = parse_json(text)
            if replaced or isinstance(parsed, str):
                raise NotCertified
        else:
            try:
                parsed = orjson.loads(line)
            except orjson.JSONDecodeError:
                raise NotCertified from None
        if type(parsed) is not dict:
            raise NotCertified
        row_type = parsed.get("type")
        if type(row_type) is str:
            if row_type in PACKED_ROW_CHUNKS:
                self._packed(parsed, row_type)
                return
            frequent = _FREQUENT.get(row_type)
            if frequent is not None and not exact and frequent(self, parsed, line):
                return
        if "sourceEventSeqs" in parsed and not _plain_seqs(parsed["sourceEventSeqs"]):
            # Range-encoded provenance, expanded.  A list of plain integers stands for itself: the
            # surface rules below hold it to unique non-negative seqs before the event's own, which
            # is all the row's decoding would ask of it.
            decoded = row_events(parsed, self.count)
            if isinstance(decoded, str):
                raise NotCertified
            parsed = decoded[0]
        if exact:
            for key in ("data", "surfaceOp", "sourceEventSeqs"):
                if key in parsed and lossless_problem(parsed[key]) is not None:
                    raise NotCertified
        self._event(parsed, line, exact)

    def _bare(self, raw: dict[str, Any], line: bytes) -> bool:
        """An event row of a type in :data:`_BARE` whose envelope is its four required members alone
        (the frequent shape): :meth:`_event` restated for it.  ``False``: another shape."""
        if len(raw) != 4:
            return False
        try:
            type_, seq, time, data = raw["type"], raw["seq"], raw["time"], raw["data"]
        except KeyError:
            raise NotCertified from None
        if (
            seq != self.count
            or type(seq) is not int
            or type(time) is not int
            or not -MAX_SAFE_INTEGER <= time <= MAX_SAFE_INTEGER
        ):
            raise NotCertified
        valid_data = (self._payloads.get(type_) or self._payload_checks(type_))[0]
        assert valid_data is not None, "a bare type's payload has a schema"
        try:
            valid = valid_data(data)
        except (ValueError, TypeError, OverflowError):  # a value the compiled schema cannot take
            raise NotCertified from None
        if not valid:
            raise NotCertified
        _STEPS[type_](self, raw, data, None, None)
        log = self.log
        log._types.append(sys.intern(type_))
        self.count = log.length = seq + 1
        if type_ == "turn/end":
            self.turn_tail.clear()
        elif type_ == "turn/start":
            self.turn_tail = [raw]
        else:
            self.turn_tail.append(raw)
        return True

    def _appended(self, raw: dict[str, Any], line: bytes) -> bool:
        """An event row of a message type whose envelope is its four required members and
        ``"surfaceOp": "append"`` (the frequent shape), its payload judged by its schema and message
        rules: :meth:`_event` restated for it.  ``False``: another shape."""
        if len(raw) != 5 or raw.get("surfaceOp") != "append":
            return False
        try:
            type_, seq, time, data = raw["type"], raw["seq"], raw["time"], raw["data"]
        except KeyError:
            raise NotCertified from None
        valid_data, rules = self._payloads.get(type_) or self._payload_checks(type_)
        if valid_data is None or rules is None or (type_ == "user/message" and not _plain_user_message(data)):
            return False
        if (
            seq != self.count
            or type(seq) is not int
            or type(time) is not int
            or not -MAX_SAFE_INTEGER <= time <= MAX_SAFE_INTEGER
        ):
            raise NotCertified
        try:
            valid = valid_data(data)
        except (ValueError, TypeError, OverflowError):  # a value the compiled schema cannot take
            raise NotCertified from None
        if not valid or not rules(data):
            raise NotCertified
        _STEPS[type_](self, raw, data, APPEND, None)
        log = self.log
        log._types.append(sys.intern(type_))
        if type_ == "user/message" and _human(data):
            log._humans[seq] = (line, False)
        self.nodes.append(seq)
        log._kept[seq] = (line, False)
        self.count = log.length = seq + 1
        self.turn_tail.append(raw)
        return True

    def _packed(self, row: dict[str, Any], row_type: str) -> None:
        """A packed chunk row, by its released shape (:func:`~sessionlog_spec.model.rows.packed_row_events`),
        checked in its row form: no member event is built."""
        # Exactly the keys read below: a row of four members (five or seven in ``data``) that has them all.
        tool = row_type == "tool-call-chunks"
        try:
            seq0, time, data = row["seq0"], row["time0"], row["data"]
            if len(row) != 4 or type(data) is not dict:
                raise NotCertified
            turn, step, index, gaps = data["turn"], data["step"], data["index"], data["dt"]
            if tool:
                call_id, members, size = data["id"], data["args"], len(data)
                name = data["name"] if size == 7 else ""
                if size not in {6, 7} or type(call_id) is not str or call_id == "" or type(name) is not str:
                    raise NotCertified
            else:
                members = data["texts"]
                if len(data) != 5:
                    raise NotCertified
        except KeyError:
            raise NotCertified from None
        if (
            seq0 != self.count
            or type(seq0) is not int
            or type(time) is not int
            or not -MAX_SAFE_INTEGER <= time <= MAX_SAFE_INTEGER
        ):
            raise NotCertified
        if type(members) is not list or not members or type(gaps) is not list or len(gaps) != len(members) - 1:
            raise NotCertified
        try:
            "".join(members)  # every member a string, or TypeError
            total = sum(gaps)  # numbers, or TypeError
        except TypeError:
            raise NotCertified from None
        # Every member time and gap a safe integer.  Without a float the sum is an integer, and
        # gaps all above 1 are no booleans: then they are integers that make the member times rise
        # from ``time0`` to ``time0 + sum(dt)``.  Otherwise each gap and running sum is looked at.
        if gaps and (type(total) is not int or min(gaps) <= 1 or total > MAX_SAFE_INTEGER or time + total > MAX_SAFE_INTEGER):
            if set(map(type, gaps)) != _INT:
                raise NotCertified
            times = list(itertools.accumulate(gaps, initial=time))
            if min(*gaps, *times) < -MAX_SAFE_INTEGER or max(*gaps, *times) > MAX_SAFE_INTEGER:
                raise NotCertified
        # Turn and step equal the open step's, which the trace made non-negative safe integers.
        if type(turn) is not int or type(step) is not int or turn != self.open_turn or step != self.open_step:
            raise NotCertified
        if type(index) is not int or not 0 <= index <= MAX_SAFE_INTEGER or seq0 + len(members) - 1 > MAX_SAFE_INTEGER:
            raise NotCertified
        kind = PACKED_ROW_CHUNKS[row_type]
        if tool or not ONE_VERDICT_PER_ROW or (kind, index) not in self._text_rows:
            for member in members if not ONE_VERDICT_PER_ROW else members[:1]:
                if tool:
                    chunk: dict[str, object] = {"type": kind, "index": index, "id": call_id}
                    if "name" in data:
                        chunk["name"] = name
                    chunk["argumentsDelta"] = member
                else:
                    chunk = {"type": kind, "index": index, "text": member}
                if not self._chunk_valid({"turn": turn, "step": step, "chunk": chunk}):
                    raise NotCertified
            if not tool and ONE_VERDICT_PER_ROW and TURN_AND_STEP_APART and len(self._text_rows) < _TEXT_ROW_VERDICTS:
                self._text_rows.add((kind, index))
        self.count += len(members)
        self.log._types.extend(itertools.repeat(CHUNK, len(members)))
        self.log.length = self.count

    # -- events --

    def _event(self, raw: dict[str, Any], line: bytes, exact: bool) -> None:
        """One event row: envelope, seq, vocabulary, payload, surface, trace, relationships."""
        try:
            type_, seq, time, data = raw["type"], raw["seq"], raw["time"], raw["data"]
        except KeyError:
            raise NotCertified from None
        if type(type_) is not str or seq != self.count or type(seq) is not int or type(time) is not int:
            raise NotCertified
        if not -MAX_SAFE_INTEGER <= time <= MAX_SAFE_INTEGER:
            raise NotCertified
        surface_op: Append | Replace | None = None
        sources: tuple[int, ...] | None = None
        ignorable = False
        if len(raw) != 4:  # the optional envelope members beside the four read above, and nothing else
            if not raw.keys() <= ENVELOPE_KEYS:
                raise NotCertified
            ignorable = "ignorable" in raw
            if ignorable and raw["ignorable"] is not True:
                raise NotCertified
            if "surfaceOp" in raw:
                op = raw["surfaceOp"]
                decoded_op = APPEND if op == "append" and type(op) is str else decode_surface_op(op)
                if isinstance(decoded_op, Violation):
                    raise NotCertified
                surface_op = decoded_op
            if "sourceEventSeqs" in raw:
                listed = raw["sourceEventSeqs"]
                if _plain_seqs(listed) and (not listed or (min(listed) >= 0 and max(listed) <= MAX_SAFE_INTEGER)):
                    sources = tuple(listed)
                else:
                    decoded = decode_sources(listed)
                    if isinstance(decoded, Violation):
                        raise NotCertified
                    sources = decoded
        if type_ == CHUNK:
            if surface_op is not None or sources is not None or not self._chunk_valid(data):
                raise NotCertified
            self._in_step(data["turn"], data["step"])
            self.count += 1
            self.log._types.append(CHUNK)
            self.log.length = self.count
            return
        known = type_ in KNOWN_EVENT_TYPES
        if known:  # the payload: the type's schema (and message rules), or the model's payload rules
            checks = self._payloads.get(type_) or self._payload_checks(type_)
            valid_data, rules = checks
            if valid_data is None or (type_ == "user/message" and not _plain_user_message(data)):
                if payload_problem(self._frozen(raw, surface_op, sources)) is not None:
                    raise NotCertified
            else:
                try:
                    valid = valid_data(data)
                except (ValueError, TypeError, OverflowError):  # a value the compiled schema cannot take
                    raise NotCertified from None
                if not valid or (rules is not None and not rules(data)):
                    raise NotCertified
        elif not ignorable or type_ == "" or type_ in LEGACY_TYPES:
            raise NotCertified
        plan: _Plan | None = None
        if type_ in SURFACE_TYPES:
            plan = self._surface(type_, seq, data, surface_op, sources)
        elif surface_op is not None or sources is not None:
            raise NotCertified
        step = _STEPS.get(type_)
        if step is not None:
            step(self, raw, data, surface_op, sources)
        elif known:  # no trace rule; related by the model's transition
            self.relations.model(self._frozen(raw, surface_op, sources), self.log, self.nodes)
        # Admitted: kept for the rules that look it up, and for the open turn's repair closers.
        log = self.log
        log._types.append(sys.intern(type_))  # one string per type, not one per event
        if type_ == "user/message" and _human(data):
            log._humans[seq] = (line, exact)
        if plan is not None:
            start, end, shadowed = plan
            for shadowed_seq in shadowed or ():
                log._kept.pop(shadowed_seq, None)
            self.nodes[start:end] = [seq]
            log._kept[seq] = (line, exact)
        self.count = log.length = seq + 1
        if type_ == "turn/end":
            self.turn_tail.clear()
        elif type_ == "turn/start":
            self.turn_tail = [raw]
        else:
            self.turn_tail.append(raw)

    def _payload_checks(self, type_: str) -> tuple[Callable[[object], bool] | None, Callable[[Any], bool] | None]:
        """The compiled schema of a known type's payload (``None``: the model's payload rules judge it)
        and its message rules."""
        valid_data = None if type_ in MODEL_PAYLOADS and type_ != "user/message" else validator(type_)
        checks = self._payloads[type_] = (valid_data, _MESSAGE_RULES.get(type_))
        return checks

    @staticmethod
    def _frozen(raw: dict[str, Any], surface_op: Append | Replace | None, sources: tuple[int, ...] | None) -> Event:
        """The model's event of the current row (its payload the same plain value)."""
        return Event(raw["type"], raw["seq"], raw["time"], raw["data"], "ignorable" in raw, surface_op, sources)

    # -- the surface (INV-SURF) --

    def _surface(self, type_: str, seq: int, data: Any, op: Append | Replace | None, sources: tuple[int, ...] | None) -> _Plan:
        """Where an event of a surface type goes on the surface."""
        nodes = self.nodes
        if op is None:
            raise NotCertified
        if sources is not None and (
            (not sources and type_ != "assistant/message") or len(set(sources)) != len(sources) or max(sources, default=-1) >= seq
        ):
            raise NotCertified
        if op is APPEND:
            return len(nodes), len(nodes), None
        assert isinstance(op, Replace)
        if op.start not in nodes or op.end not in nodes:
            raise NotCertified
        start, end = nodes.index(op.start), nodes.index(op.end)
        if start > end:
            raise NotCertified
        shadowed = tuple(nodes[start : end + 1])
        if not set(sources or ()).issuperset(shadowed):
            raise NotCertified
        if type_ == "tool/result":
            target = self.log[shadowed[0]] if len(shadowed) == 1 else None
            if (
                target is None
                or target.type != "tool/result"
                or not _same_json(_without_result_content(target.data), _without_result_content(data))
            ):
                raise NotCertified
        return start, end + 1, shadowed

    # -- the trace (INV-TRACE) and the relationships (INV-REL), type by type --

    def _in_step(self, turn: object, step: object) -> None:
        if self.open_step is None or turn != self.open_turn or step != self.open_step or type(turn) is bool:
            raise NotCertified

    def _turn_start(self, raw: dict[str, Any], data: Any, op: Append | Replace | None, sources: tuple[int, ...] | None) -> None:
        turn = data["turn"]
        if self.open_turn is not None or not _natural(turn) or turn != self.last_turn + 1:
            raise NotCertified
        self.last_turn = self.open_turn = turn
        self.open_step, self.last_step = None, 0
        self.step_calls.clear()
        relations = self.relations
        if relations.compacting:
            relations.model(self._frozen(raw, op, sources), self.log, self.nodes)
        else:
            relations.open_turn, relations.open_step, relations.ended_steps = ("number", turn), relationships.NULL, 0
            relations.tools = []

    def _turn_end(self, raw: dict[str, Any], data: Any, op: Append | Replace | None, sources: tuple[int, ...] | None) -> None:
        if self.open_turn is None or data["turn"] != self.open_turn or self.open_step is not None:
            raise NotCertified
        self.open_turn, self.last_step = None, 0
        self.step_calls.clear()
        relations = self.relations
        if relations.compacting:
            relations.model(self._frozen(raw, op, sources), self.log, self.nodes)
        elif relations.tools:
            raise NotCertified
        else:
            relations.open_turn = relationships.NULL

    def _step_start(self, raw: dict[str, Any], data: Any, op: Append | Replace | None, sources: tuple[int, ...] | None) -> None:
        step = data["step"]
        if self.open_turn is None or data["turn"] != self.open_turn or self.open_step is not None:
            raise NotCertified
        if not _natural(step) or step != self.last_step + 1:
            raise NotCertified
        self.last_step = self.open_step = step
        self.step_calls.clear()
        relations = self.relations
        if relations.compacting:
            relations.model(self._frozen(raw, op, sources), self.log, self.nodes)
        else:
            relations.open_step = ("number", step)

    def _step_end(self, raw: dict[str, Any], data: Any, op: Append | Replace | None, sources: tuple[int, ...] | None) -> None:
        self._in_step(data["turn"], data["step"])
        self.open_step = None
        self.step_calls.clear()
        relations = self.relations
        if relations.compacting:
            relations.model(self._frozen(raw, op, sources), self.log, self.nodes)
        elif relations.tools:
            raise NotCertified
        else:
            relations.open_step, relations.ended_steps = relationships.NULL, relations.ended_steps + 1

    def _assistant_message(
        self, raw: dict[str, Any], data: Any, op: Append | Replace | None, sources: tuple[int, ...] | None
    ) -> None:
        self._in_step(data["turn"], data["step"])
        relations = self.relations
        if relations.compacting:
            relations.model(self._frozen(raw, op, sources), self.log, self.nodes)
            return
        # The message rules made a tool-call block's id, name and arguments strings: their tokens
        # are written out.
        for block in data["message"]["content"]:
            if block["type"] != "tool-call":
                continue
            call = ("string", block["id"])
            if relations.find(call) is not None:
                raise NotCertified
            relations.tools.append([call, ("string", block["name"]), ("string", block["arguments"]), False])

    def _tool_call(self, raw: dict[str, Any], data: Any, op: Append | Replace | None, sources: tuple[int, ...] | None) -> None:
        self._in_step(data["turn"], data["step"])
        call_id = data["callId"]
        self.step_calls.add(str(call_id))
        relations = self.relations
        if relations.compacting:
            relations.model(self._frozen(raw, op, sources), self.log, self.nodes)
            return
        # The schema requires the call id, name and arguments.
        found = relations.find(_string_token(call_id))
        if found is None or found[3] or found[1] != _string_token(data["name"]) or found[2] != _string_token(data["arguments"]):
            raise NotCertified
        found[3] = True

    def _tool_result(self, raw: dict[str, Any], data: Any, op: Append | Replace | None, sources: tuple[int, ...] | None) -> None:
        relations = self.relations
        if op is not APPEND:  # a rewrite: inside a turn, and it resolves nothing
            if self.open_turn is None:
                raise NotCertified
            if relations.compacting:
                relations.model(self._frozen(raw, op, sources), self.log, self.nodes)
            return
        self._in_step(data["turn"], data["step"])
        call_id = data["message"]["source"]["callId"]
        if call_id in self.step_calls:
            self.step_calls.discard(call_id)
        elif (data.get("error") or {}).get("code") != "TOOL_NOT_STARTED":
            raise NotCertified
        if relations.compacting:
            relations.model(self._frozen(raw, op, sources), self.log, self.nodes)
            return
        found = relations.find(_string_token(call_id))
        if found is None or (not found[3] and not relationships.is_not_started_repair(self._frozen(raw, op, sources), data)):
            raise NotCertified
        relations.tools.remove(found)

    def _user_message(self, raw: dict[str, Any], data: Any, op: Append | Replace | None, sources: tuple[int, ...] | None) -> None:
        source = data.get("source")
        if op is APPEND or type(source) is not dict or source.get("kind") != "plugin":
            return  # only a compaction checkpoint relates
        self.relations.model(self._frozen(raw, op, sources), self.log, self.nodes)

    def _request_header(
        self, raw: dict[str, Any], data: Any, op: Append | Replace | None, sources: tuple[int, ...] | None
    ) -> None:
        if self.open_turn is None:
            raise NotCertified
        relations = self.relations
        if relations.compacting:
            relations.model(self._frozen(raw, op, sources), self.log, self.nodes)
            return
        header = data.get("header")
        config = header.get("config") if type(header) is dict else None
        relations.provider = relationships.member(config if type(config) is dict else None, "provider")

    def _request_context(
        self, raw: dict[str, Any], data: Any, op: Append | Replace | None, sources: tuple[int, ...] | None
    ) -> None:
        if self.open_turn is None:
            raise NotCertified
        self.relations.model(self._frozen(raw, op, sources), self.log, self.nodes)


# Module tables of plain functions, not bound methods on the fold: a fold holding its own bound
# methods would be a reference cycle, freed only by the cyclic collector, with everything it keeps.
_STEPS: Final[Mapping[str, _Step]] = {
    "turn/start": FastFold._turn_start,
    "turn/end": FastFold._turn_end,
    "step/start": FastFold._step_start,
    "step/end": FastFold._step_end,
    "assistant/message": FastFold._assistant_message,
    "tool/call": FastFold._tool_call,
    "tool/result": FastFold._tool_result,
    "user/message": FastFold._user_message,
    "request/header": FastFold._request_header,
    "request/context": FastFold._request_context,
}
"""The trace and relationship rules of each type that has any (the others relate by the model's transition)."""


def _human(data: Any) -> bool:
    """A message a human wrote (:func:`~sessionlog_spec.model.relationships.is_human_message`)."""
    source = data.get("source") if type(data) is dict else None
    return type(source) is dict and source.get("kind") == "user"


def _nonempty(value: object) -> bool:
    return type(value) is str and value != ""


def _message_holds(message: object, role: str) -> bool:
    """The model's rules of a message object (:mod:`~sessionlog_spec.model.messages`): identified, of
    ``role``, with a source of some kind and content blocks of some type."""
    if type(message) is not dict or message.get("role") != role:
        return False
    identity, source, content = message.get("id"), message.get("source"), message.get("content")
    if type(identity) is not str or identity == "" or type(source) is not dict or type(content) is not list:
        return False
    kind = source.get("kind")
    if type(kind) is not str or kind == "":
        return False
    for block in content:
        if type(block) is not dict:
            return False
        block_type = block.get("type")
        if type(block_type) is not str or block_type == "":
            return False
    return True


def _step_numbers_hold(data: Any) -> bool:
    if type(data) is not dict:
        return False
    turn, step = data.get("turn"), data.get("step")
    return type(turn) is int and type(step) is int and 0 <= turn <= MAX_SAFE_INTEGER and 0 <= step <= MAX_SAFE_INTEGER


def _user_message_rules_hold(data: Any) -> bool:
    """The model's message rules of a ``user/message`` (INV-LOG-7)."""
    return _message_holds(data, "user")


def _assistant_message_rules_hold(data: Any) -> bool:
    """The model's message rules of an ``assistant/message`` (INV-LOG-8)."""
    if not _step_numbers_hold(data) or not data.keys() <= ASSISTANT_DATA_KEYS:
        return False
    message: Any = data.get("message")
    if not _message_holds(message, "assistant"):
        return False
    source = message["source"]
    if source["kind"] != "model" or not (_nonempty(source.get("provider")) and _nonempty(source.get("model"))):
        return False
    if "interrupted" in data and data["interrupted"] is not True:
        return False
    for block in message["content"]:
        if block.get("type") == "tool-call" and not (
            _nonempty(block.get("id")) and type(block.get("name")) is str and type(block.get("arguments")) is str
        ):
            return False
    return True


def _tool_result_rules_hold(data: Any) -> bool:
    """The model's message rules of a ``tool/result`` (INV-LOG-9)."""
    if not _step_numbers_hold(data) or not data.keys() <= TOOL_RESULT_DATA_KEYS:
        return False
    message: Any = data.get("message")
    if not _message_holds(message, "user"):
        return False
    source, content = message["source"], message["content"]
    if source["kind"] != "tool" or not _nonempty(source.get("callId")) or len(content) != 1:
        return False
    block = content[0]
    if block["type"] != "tool-result" or type(block.get("content")) is not list or block.get("toolCallId") != source["callId"]:
        return False
    if "isError" in block and type(block["isError"]) is not bool:
        return False
    if "error" not in data:
        return True
    error = data["error"]
    return type(error) is dict and error.keys() == {"name", "code"} and type(error["name"]) is str and type(error["code"]) is str


_MESSAGE_RULES: Final[Mapping[str, Callable[[Any], bool]]] = {
    "user/message": _user_message_rules_hold,
    "assistant/message": _assistant_message_rules_hold,
    "tool/result": _tool_result_rules_hold,
}
"""The model's message rules (INV-LOG-7..9), which give the message types their finer codes."""

_FREQUENT: Final[Mapping[str, Callable[[FastFold, dict[str, Any], bytes], bool]]] = {
    **dict.fromkeys(_BARE, FastFold._bare),
    **dict.fromkeys(_MESSAGE_RULES, FastFold._appended),
}
"""The types whose frequent row shape has a shorter path (:meth:`FastFold._bare`, :meth:`FastFold._appended`)."""

if not KNOWN_EVENT_TYPES - MODEL_PAYLOADS - SURFACE_TYPES - _MESSAGE_RULES.keys() >= _BARE:  # pragma: no cover
    raise ImportError("a bare type now has payload rules beyond its schema or joins the surface: FastFold._bare must not take it")


def _plain_user_message(data: Any) -> bool:
    """A ``user/message`` payload whose annotated parts are absent: its source is not a legacy goal
    message (``goalStateRestatement``) and cites no ``references`` (``itemIndex``, ``uniqueMember``,
    ``sumOf``, ``flagIfAnyPositive``), so its schema states every rule of its payload."""
    if type(data) is not dict:
        return False
    source = data.get("source")
    return type(source) is dict and type(source.get("kind")) is str and source["kind"] != "goal" and "references" not in source


def _plain_seqs(value: object) -> bool:
    """Whether ``value`` is a list of integers (not a bool among them)."""
    return type(value) is list and set(map(type, value)) <= _INT


def _same_json(a: object, b: object) -> bool:
    """:func:`~sessionlog_spec.model.json_value.json_equal`, first by the values' compact JSON with
    sorted keys: the same text is the same value (the values are finite, as every number both readers
    take is); different texts may still be equal values (``1`` and ``1.0``)."""
    try:
        if orjson.dumps(a, option=orjson.OPT_SORT_KEYS) == orjson.dumps(b, option=orjson.OPT_SORT_KEYS):
            return True
    except TypeError:  # a value orjson does not write (an integer past 64 bits, deep nesting)
        pass
    return json_equal(a, b)


def _without_result_content(data: object) -> object:
    """A ``tool/result``'s data with its one block's ``content`` left out (a rewrite may change only that)."""
    if type(data) is not dict:
        return data
    message = data.get("message")
    content = message.get("content") if type(message) is dict else None
    if type(content) is not list or not content or type(content[0]) is not dict:
        return data
    block = {k: v for k, v in content[0].items() if k != "content"}
    return {**data, "message": {**message, "content": [block, *content[1:]]}}  # type: ignore[dict-item]


# -- a whole log ------------------------------------------------------------------------------------------


def _lines(data: Iterable[bytes], limit: int, torn: list[bytes]) -> Iterator[tuple[list[bytes], set[int]]]:
    """The complete lines of ``data``, a chunk's at a time, each batch with the indexes of the lines
    that may hold a value ``orjson`` reads otherwise than the model's reader (:func:`_risky`) or nest
    too deep for it; the text after the last newline is left in ``torn``.  A line over ``limit``
    bytes is not certified (the model names it)."""
    pending: list[bytes] = []
    pending_size = 0
    for chunk in data:
        parts = chunk.split(b"\n")
        rest = parts.pop()
        if parts and pending:
            pending.append(parts[0])
            parts[0] = b"".join(pending)
            pending, pending_size = [], 0
            exact = {0} if _risky(parts[0]) or _deep(parts[0]) else set()
        else:
            exact = set()
        if _risky(chunk):  # one scan for every line of the chunk, then line by line only on a hit
            exact.update(index for index, part in enumerate(parts) if _risky(part))
        if len(chunk) >= 2 * _DEEP:  # else no line of the chunk (the joined first one is checked above)
            long = 2 * _DEEP
            exact.update(
                index
                for index, part in enumerate(parts)
                if len(part) >= long and part.count(b"[") + part.count(b"{") >= _DEEP  # _deep, inlined
            )
        if parts and max(map(len, parts)) > limit:
            raise NotCertified
        yield parts, exact
        if rest:
            pending.append(rest)
            pending_size += len(rest)
            if pending_size > limit:
                raise NotCertified
    torn.append(b"".join(pending))


def _deep(line: bytes) -> bool:
    """Whether ``line`` has :data:`_DEEP` brackets or more."""
    return len(line) >= 2 * _DEEP and line.count(b"[") + line.count(b"{") >= _DEEP


def _risky(data: bytes) -> bool:
    """Whether ``data`` may hold a number ``orjson`` reads otherwise than the model's reader, or one
    that is not lossless: ``-0`` (an integer 0 to ``orjson``, ``-0.0`` to the model's reader) and, with
    every digit read as ``0``, an integer of 16 or more digits (past 2^53 lossy, past 2^64 a float to
    ``orjson``) or a negative exponent of three digits (a negative number may underflow to ``-0``).
    A number beyond every double ``orjson`` refuses itself (the line is then not certified)."""
    if b"-0" in data:
        return True
    digits = data.translate(_DIGITS_AS_ZERO)
    return b"0000000000000000" in digits or b"0e-000" in digits


def certify(chunks: Iterable[bytes], chunk_bytes: int, line_limit: int) -> Certified | None:
    """The log whose bytes are ``chunks`` (decompressed as :mod:`~sessionlog_spec.suite.compressed`
    reads them) certified valid, or ``None``: the model must judge it.  Stops reading at the first
    thing it cannot vouch for."""
    data = Decompressed(chunks, chunk_bytes)
    torn: list[bytes] = []
    fold: FastFold | None = None
    number = 0
    try:
        for lines, exact in _lines(data, line_limit, torn):
            number += len(lines)
            start = 0
            if fold is None:
                if not lines:
                    continue
                fold, start = _header(lines[0]), 1
            row = fold.row
            if exact:
                for index in range(start, len(lines)):
                    row(lines[index], index in exact)
            else:
                for line in itertools.islice(lines, start, None):
                    row(line, False)
    except (NotCertified, DamagedCompression):
        return None
    if fold is None or data.cut is not None:
        return None
    header_seed = fold.header_seed
    if (header_seed is not None and header_seed > fold.count) or relationship_finish(fold.relations.rest) is not None:
        return None
    closers = len(interrupted_turn_closers([_event_of(raw) for raw in fold.turn_tail])) if fold.open_turn is not None else 0
    compression = None if data.compression is None else data.compression.value
    return Certified(number, fold.count, torn[0] != b"", fold.open_turn, closers, compression)


def _header(line: bytes) -> FastFold:
    text, replaced = decode_text(line)
    header = parse_line(text)
    if replaced or isinstance(header, str) or header_line_problem(header) is not None or header["version"] != FORMAT_VERSION:
        raise NotCertified
    if type(header["version"]) is not int:
        raise NotCertified
    fold = FastFold(header)
    seed = header.get("seedLength")
    if seed is not None and type(seed) is not int:
        raise NotCertified
    fold.header_seed = seed
    return fold
