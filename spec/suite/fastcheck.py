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
  them.  Packed chunk rows are checked by their released shape here, with integers and no floats;
  anything else in them is not certified.
* **envelope, vocabulary, surface, trace**: restated (:meth:`FastFold._event`, :meth:`FastFold._surface`,
  :meth:`FastFold._trace`).
* **payloads**: the type's schema; the types whose schema carries ``x-relations`` or
  ``x-earlierThanEventSeq`` annotations, and ``request/header`` (whose snapshot must also be
  canonical), are judged by the model's payload rules on the plain values (:data:`MODEL_PAYLOADS`),
  except a ``user/message`` whose annotated parts are absent; the three message types also pass the
  model's message rules, restated (:func:`_message_rules_hold`; ``tool/result``'s one annotation,
  its block answers the source's call id, is one of them).
* **relationships** (INV-REL): brackets, tool lifecycles and the provider restated while no
  compaction is open (:class:`_Relations`); every other event through the model's transition, on an
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
MESSAGE_TYPES: Final = frozenset({"user/message", "assistant/message", "tool/result"})
_ANNOTATIONS: Final = ('"x-relations"', '"x-earlierThanEventSeq"')

if CHUNK in relationships._HANDLERS:  # pragma: no cover - a guard on the model's table
    raise ImportError("the relationship rules now relate assistant/chunk events: the fast checker must relate them too")


def _schema_text(event_type: str) -> str:
    return (SCHEMA_DIRECTORY / schema_file(event_type)).read_text(encoding="utf-8")


MODEL_PAYLOADS: Final = frozenset(
    {"request/header"}
    | {t for t in KNOWN_EVENT_TYPES if t != "tool/result" and any(a in _schema_text(t) for a in _ANNOTATIONS)}
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

_DIGITS_AS_ZERO: Final = bytes.maketrans(b"123456789E", b"000000000e")
_DEEP: Final = 256
"""A line with this many brackets may nest deeper than an event may (INV-LOG-4): read it exactly."""

_TEXT_ROW = frozenset({"turn", "step", "index", "dt", "texts"})
_TOOL_ROW = frozenset({"turn", "step", "index", "id", "dt", "args"})
_TOOL_ROW_NAMED = _TOOL_ROW | {"name"}
_ROW_KEYS = frozenset({"type", "seq0", "time0", "data"})


def _natural(value: object) -> bool:
    """A non-negative safe integer written as an integer (floats are left to the model)."""
    return type(value) is int and 0 <= value <= MAX_SAFE_INTEGER


def _integer(value: object) -> bool:
    return type(value) is int and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER


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


class _Event:
    """An event as the fast checker holds it: the fields of the model's :class:`Event`, plain and
    mutable (a frozen dataclass costs several times as much to build), made an :class:`Event` only
    where a model function takes one (:meth:`frozen`)."""

    __slots__ = ("data", "ignorable", "seq", "source_event_seqs", "surface_op", "time", "type")

    def __init__(  # noqa: PLR0917 - the fields of Event, in its order
        self,
        type_: str,
        seq: int,
        time: int,
        data: Any,
        ignorable: bool,
        surface_op: Append | Replace | None,
        source_event_seqs: tuple[int, ...] | None,
    ) -> None:
        self.type, self.seq, self.time, self.data = type_, seq, time, data
        self.ignorable, self.surface_op, self.source_event_seqs = ignorable, surface_op, source_event_seqs

    def frozen(self) -> Event:
        """The model's event (its payload the same plain value)."""
        return Event(self.type, self.seq, self.time, self.data, self.ignorable, self.surface_op, self.source_event_seqs)


# -- relationships (INV-REL) ----------------------------------------------------------------------------------

_HOT: Final = frozenset(
    {"turn/start", "turn/end", "step/start", "step/end", "assistant/message", "tool/call", "tool/result", "request/header"}
)
"""Types whose relationship rules (brackets, tool lifecycles, the provider) are restated here, while
no compaction is open; every other event goes through the model's transition."""


class _Relations:
    """The relationship state: the model's :class:`RelationState`, with the fields the frequent
    events change (brackets, the step's tool lifecycles, the provider) kept here, mutable.

    Each lifecycle is ``[call, name, arguments, started]``, tokens as the model makes them
    (:func:`~sessionlog_spec.model.relationships.member`)."""

    __slots__ = ("ended_steps", "open_step", "open_turn", "provider", "rest", "tools")

    def __init__(self, state: RelationState) -> None:
        self.rest = state
        self._take(state)

    def _take(self, state: RelationState) -> None:
        self.rest = state
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

    def _find(self, call: object) -> list[Any] | None:
        return next((lc for lc in self.tools if lc[0] == call), None)

    def transition(self, event: _Event, log: Sequence[Event], surface: Sequence[int]) -> None:
        """Relate ``event``; :exc:`NotCertified` if a rule refuses it."""
        type_ = event.type
        if type_ not in _HOT or self.rest.compaction is not None:
            if type_ not in KNOWN_EVENT_TYPES:
                return  # ignorable unknowns relate to nothing
            if type_ == "user/message":
                source = event.data.get("source")
                if isinstance(event.surface_op, Append) or type(source) is not dict or source.get("kind") != "plugin":
                    return  # only a compaction checkpoint relates
            after = relationship_transition(self.state(), event.frozen(), log=log, surface=surface)
            if isinstance(after, Violation):
                raise NotCertified
            self._take(after)
            return
        member = relationships.member
        data: Any = event.data
        # Turn and step numbers are integers here (the trace checked them), and the message rules
        # made a tool-call block's id, name and arguments strings: their tokens are written out.
        if type_ == "turn/start":
            self.open_turn, self.open_step, self.ended_steps, self.tools = ("number", data["turn"]), relationships.NULL, 0, []
        elif type_ == "step/start":
            self.open_step = ("number", data["step"])
        elif type_ in ("turn/end", "step/end"):
            if self.tools:
                raise NotCertified
            if type_ == "turn/end":
                self.open_turn = relationships.NULL
            else:
                self.open_step, self.ended_steps = relationships.NULL, self.ended_steps + 1
        elif type_ == "assistant/message":
            content = data["message"]["content"]
            for block in content:
                if block["type"] != "tool-call":
                    continue
                call = ("string", block["id"])
                if self._find(call) is not None:
                    raise NotCertified
                self.tools.append([call, ("string", block["name"]), ("string", block["arguments"]), False])
        elif type_ == "tool/call":
            found = self._find(member(data, "callId"))
            if found is None or found[3] or found[1] != member(data, "name") or found[2] != member(data, "arguments"):
                raise NotCertified
            found[3] = True
        elif type_ == "tool/result":
            if not isinstance(event.surface_op, Append):
                return  # a rewrite resolves nothing
            message = data.get("message")
            source = message.get("source") if type(message) is dict else None
            found = self._find(member(source if type(source) is dict else None, "callId"))
            if found is None or (not found[3] and not relationships.is_not_started_repair(event.frozen(), data)):
                raise NotCertified
            self.tools.remove(found)
        else:  # request/header
            header = data.get("header")
            config = header.get("config") if type(header) is dict else None
            self.provider = member(config if type(config) is dict else None, "provider")


# -- the fold -----------------------------------------------------------------------------------------


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
        self.turn_tail: list[_Event] = []
        self.header_seed: int | None = None
        """The header's ``seedLength``: the log must hold at least this many events."""
        self._chunk_valid = validator(CHUNK)
        self._validators: dict[str, Callable[[object], bool]] = {}

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
        if type(row_type) is str and row_type in PACKED_ROW_CHUNKS:
            self._packed(parsed, row_type)
            return
        if "sourceEventSeqs" in parsed:
            decoded = row_events(parsed, self.count)
            if isinstance(decoded, str):
                raise NotCertified
            parsed = decoded[0]
        if exact:
            for key in ("data", "surfaceOp", "sourceEventSeqs"):
                if key in parsed and lossless_problem(parsed[key]) is not None:
                    raise NotCertified
        self._event(parsed, line, exact)

    def _packed(self, row: dict[str, Any], row_type: str) -> None:
        """A packed chunk row, by its released shape (:func:`~sessionlog_spec.model.rows.packed_row_events`)."""
        if row.keys() != _ROW_KEYS:
            raise NotCertified
        seq0, time, data = row["seq0"], row["time0"], row["data"]
        if seq0 != self.count or not _natural(seq0) or not _integer(time) or type(data) is not dict:
            raise NotCertified
        tool = row_type == "tool-call-chunks"
        keys = data.keys()
        if tool:
            if keys not in (_TOOL_ROW, _TOOL_ROW_NAMED):
                raise NotCertified
            call_id, name = data["id"], data.get("name", "")
            if type(call_id) is not str or call_id == "" or type(name) is not str:
                raise NotCertified
            members = data["args"]
        else:
            if keys != _TEXT_ROW:
                raise NotCertified
            members = data["texts"]
        gaps = data["dt"]
        if type(members) is not list or not members or type(gaps) is not list or len(gaps) != len(members) - 1:
            raise NotCertified
        if set(map(type, members)) != {str} or (gaps and set(map(type, gaps)) != {int}):
            raise NotCertified
        if gaps:
            times = list(itertools.accumulate(gaps, initial=time))
            if min(*times, *gaps) < -MAX_SAFE_INTEGER or max(*times, *gaps) > MAX_SAFE_INTEGER:
                raise NotCertified
        turn, step, index = data["turn"], data["step"], data["index"]
        if not (_natural(turn) and _natural(step) and _natural(index)) or not _natural(seq0 + len(members) - 1):
            raise NotCertified
        kind = PACKED_ROW_CHUNKS[row_type]
        for member in members if not ONE_VERDICT_PER_ROW else members[:1]:
            if tool:
                chunk: dict[str, object] = {"type": kind, "index": index, "id": data["id"]}
                if "name" in data:
                    chunk["name"] = data["name"]
                chunk["argumentsDelta"] = member
            else:
                chunk = {"type": kind, "index": index, "text": member}
            if not self._chunk_valid({"turn": turn, "step": step, "chunk": chunk}):
                raise NotCertified
        self._in_step(turn, step)
        self.count += len(members)
        self.log._types.extend([CHUNK] * len(members))
        self.log.length = self.count

    # -- events --

    def _event(self, raw: dict[str, Any], line: bytes, exact: bool) -> None:
        """One event row: envelope, seq, vocabulary, payload, surface, trace, relationships."""
        if not raw.keys() <= ENVELOPE_KEYS or "data" not in raw or "time" not in raw:
            raise NotCertified
        type_, seq, time, data = raw.get("type"), raw.get("seq"), raw["time"], raw["data"]
        if type(type_) is not str or type_ == "" or type(seq) is not int or seq != self.count or not _integer(time):
            raise NotCertified
        ignorable = "ignorable" in raw
        if ignorable and raw["ignorable"] is not True:
            raise NotCertified
        if type_ == CHUNK:
            if "surfaceOp" in raw or "sourceEventSeqs" in raw or not self._chunk_valid(data):
                raise NotCertified
            self._in_step(data["turn"], data["step"])
            self.count += 1
            self.log._types.append(CHUNK)
            self.log.length = self.count
            return
        surface_op = raw.get("surfaceOp")
        if surface_op == "append" and type(surface_op) is str:
            surface_op = APPEND
        elif surface_op is not None or "surfaceOp" in raw:
            surface_op = decode_surface_op(surface_op)
            if isinstance(surface_op, Violation):
                raise NotCertified
        sources: tuple[int, ...] | None = None
        if "sourceEventSeqs" in raw:
            decoded = decode_sources(raw["sourceEventSeqs"])
            if isinstance(decoded, Violation):
                raise NotCertified
            sources = decoded
        event = _Event(type_, seq, time, data, ignorable, surface_op, sources)
        known = type_ in KNOWN_EVENT_TYPES
        if type_ in LEGACY_TYPES or not (known or ignorable):
            raise NotCertified
        if known:
            self._payload(event)
        plan = self._surface(event)
        self._trace(event)
        self.relations.transition(event, self.log, self.nodes)
        self._admitted(event, line, exact, plan)

    def _payload(self, event: _Event) -> None:
        if event.type in MODEL_PAYLOADS and not _plain_user_message(event):
            if payload_problem(event.frozen()) is not None:
                raise NotCertified
            return
        valid_data = self._validators.get(event.type)
        if valid_data is None:
            valid_data = self._validators[event.type] = validator(event.type)
        try:
            valid = valid_data(event.data)
        except (ValueError, TypeError, OverflowError):  # a value the compiled schema cannot take
            raise NotCertified from None
        if not valid or (event.type in MESSAGE_TYPES and not _message_rules_hold(event.type, event.data)):
            raise NotCertified

    # -- the surface (INV-SURF) --

    def _surface(self, event: _Event) -> tuple[int, int, tuple[int, ...] | None] | None:
        """Where ``event`` goes on the surface: ``nodes[start:end]`` becomes its seq, and what it shadows."""
        if event.type not in SURFACE_TYPES:
            if event.surface_op is not None or event.source_event_seqs is not None:
                raise NotCertified
            return None
        op, sources, seq, nodes = event.surface_op, event.source_event_seqs, event.seq, self.nodes
        if op is None:
            raise NotCertified
        if sources is not None and (
            (not sources and event.type != "assistant/message")
            or len(set(sources)) != len(sources)
            or max(sources, default=-1) >= seq
        ):
            raise NotCertified
        if not isinstance(op, Replace):
            return len(nodes), len(nodes), None
        if op.start not in nodes or op.end not in nodes:
            raise NotCertified
        start, end = nodes.index(op.start), nodes.index(op.end)
        if start > end:
            raise NotCertified
        shadowed = tuple(nodes[start : end + 1])
        cited = set(sources or ())
        if any(s not in cited for s in shadowed):
            raise NotCertified
        if event.type == "tool/result":
            target = self.log[shadowed[0]] if len(shadowed) == 1 else None
            if (
                target is None
                or target.type != "tool/result"
                or not json_equal(_without_result_content(target.data), _without_result_content(event.data))
            ):
                raise NotCertified
        return start, end + 1, shadowed

    # -- the trace (INV-TRACE) --

    def _in_step(self, turn: object, step: object) -> None:
        if self.open_step is None or turn != self.open_turn or step != self.open_step or type(turn) is bool:
            raise NotCertified

    def _trace(self, event: _Event) -> None:
        type_, data = event.type, event.data
        if type_ == "turn/start":
            if self.open_turn is not None or not _natural(data["turn"]) or data["turn"] != self.last_turn + 1:
                raise NotCertified
            self.last_turn += 1
            self.open_turn = self.last_turn
            self.open_step, self.last_step, self.step_calls = None, 0, set()
        elif type_ == "turn/end":
            if self.open_turn is None or data["turn"] != self.open_turn or self.open_step is not None:
                raise NotCertified
            self.open_turn = None
            self.open_step, self.last_step, self.step_calls = None, 0, set()
        elif type_ == "step/start":
            if self.open_turn is None or data["turn"] != self.open_turn or self.open_step is not None:
                raise NotCertified
            if not _natural(data["step"]) or data["step"] != self.last_step + 1:
                raise NotCertified
            self.last_step += 1
            self.open_step = self.last_step
            self.step_calls = set()
        elif type_ == "step/end":
            self._in_step(data["turn"], data["step"])
            self.open_step, self.step_calls = None, set()
        elif type_ == "tool/result" and isinstance(event.surface_op, Replace):
            if self.open_turn is None:
                raise NotCertified
        elif type_ in ("assistant/message", "tool/call", "tool/result"):
            self._in_step(data["turn"], data["step"])
            if type_ == "tool/call":
                self.step_calls.add(str(data["callId"]))
            elif type_ == "tool/result":
                call_id = data["message"]["source"]["callId"]
                if call_id in self.step_calls:
                    self.step_calls.discard(call_id)
                elif (data.get("error") or {}).get("code") != "TOOL_NOT_STARTED":
                    raise NotCertified
        elif type_ in ("request/header", "request/context") and self.open_turn is None:
            raise NotCertified

    def _admitted(self, event: _Event, line: bytes, exact: bool, plan: tuple[int, int, tuple[int, ...] | None] | None) -> None:
        log = self.log
        log._types.append(sys.intern(event.type))  # one string per type, not one per event
        if event.type == "user/message" and _human(event.data):
            log._humans[event.seq] = (line, exact)
        if plan is not None:
            start, end, shadowed = plan
            for seq in shadowed or ():
                log._kept.pop(seq, None)
            self.nodes[start:end] = [event.seq]
            log._kept[event.seq] = (line, exact)
        self.count += 1
        log.length = self.count
        if event.type == "turn/end":
            self.turn_tail.clear()
        elif event.type == "turn/start":
            self.turn_tail[:] = [event]
        else:
            self.turn_tail.append(event)


def _human(data: Any) -> bool:
    """A message a human wrote (:func:`~sessionlog_spec.model.relationships.is_human_message`)."""
    source = data.get("source") if type(data) is dict else None
    return type(source) is dict and source.get("kind") == "user"


def _nonempty(value: object) -> bool:
    return type(value) is str and value != ""


def _message_holds(message: object, role: str) -> bool:
    """The model's rules of a message object (:mod:`~sessionlog_spec.model.messages`): identified, of
    ``role``, with a source of some kind and content blocks of some type."""
    if type(message) is not dict or not _nonempty(message.get("id")) or message.get("role") != role:
        return False
    source, content = message.get("source"), message.get("content")
    if type(source) is not dict or not _nonempty(source.get("kind")) or type(content) is not list:
        return False
    return all(type(block) is dict and _nonempty(block.get("type")) for block in content)


def _message_rules_hold(event_type: str, data: Any) -> bool:
    """The model's message rules of ``user/message``, ``assistant/message`` and ``tool/result``
    (INV-LOG-7..9), which give those types their finer codes."""
    if event_type == "user/message":
        return _message_holds(data, "user")
    if type(data) is not dict or not (_natural(data.get("turn")) and _natural(data.get("step"))):
        return False
    message: Any = data.get("message")
    if event_type == "assistant/message":
        if not data.keys() <= ASSISTANT_DATA_KEYS or not _message_holds(message, "assistant"):
            return False
        source = message["source"]
        if source["kind"] != "model" or not (_nonempty(source.get("provider")) and _nonempty(source.get("model"))):
            return False
        if "interrupted" in data and data["interrupted"] is not True:
            return False
        return all(
            _nonempty(block.get("id")) and type(block.get("name")) is str and type(block.get("arguments")) is str
            for block in message["content"]
            if block.get("type") == "tool-call"
        )
    if not data.keys() <= TOOL_RESULT_DATA_KEYS or not _message_holds(message, "user"):
        return False
    source, content = message["source"], message["content"]
    if source["kind"] != "tool" or not _nonempty(source.get("callId")) or len(content) != 1:
        return False
    block = content[0]
    if block["type"] != "tool-result" or type(block.get("content")) is not list or block.get("toolCallId") != source["callId"]:
        return False
    if "isError" in block and type(block["isError"]) is not bool:
        return False
    error = data.get("error", {"name": "", "code": ""})
    return type(error) is dict and error.keys() == {"name", "code"} and all(type(v) is str for v in error.values())


def _plain_user_message(event: _Event) -> bool:
    """A ``user/message`` whose annotated parts are absent: its source is not a legacy goal message
    (``goalStateRestatement``) and cites no ``references`` (``itemIndex``, ``uniqueMember``, ``sumOf``,
    ``flagIfAnyPositive``), so its schema states every rule of its payload."""
    if event.type != "user/message" or type(event.data) is not dict:
        return False
    source = event.data.get("source")
    return type(source) is dict and type(source.get("kind")) is str and source["kind"] != "goal" and "references" not in source


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


def _lines(data: Iterable[bytes], limit: int, torn: list[bytes]) -> Iterator[tuple[bytes, bool]]:
    """The complete lines of ``data``, each with whether it may hold a value ``orjson`` reads
    otherwise than the model's reader (:func:`_risky`); the text after the last newline is left in
    ``torn``.  A line over ``limit`` bytes is not certified (the model names it)."""
    pending: list[bytes] = []
    pending_size = 0
    for chunk in data:
        parts = chunk.split(b"\n")
        rest = parts.pop()
        clean = not _risky(chunk)  # one scan for every line of the chunk
        joined = bool(parts and pending)
        if joined:
            pending.append(parts[0])
            parts[0] = b"".join(pending)
            pending, pending_size = [], 0
        for index, part in enumerate(parts):
            if len(part) > limit:
                raise NotCertified
            deep = len(part) >= 2 * _DEEP and part.count(b"[") + part.count(b"{") >= _DEEP
            yield part, deep or ((not clean or (joined and index == 0)) and _risky(part))
        if rest:
            pending.append(rest)
            pending_size += len(rest)
            if pending_size > limit:
                raise NotCertified
    torn.append(b"".join(pending))


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
        for line, exact in _lines(data, line_limit, torn):
            number += 1
            if fold is None:
                fold = _header(line)
            else:
                fold.row(line, exact)
    except (NotCertified, DamagedCompression):
        return None
    if fold is None or data.cut is not None:
        return None
    header_seed = fold.header_seed
    if (header_seed is not None and header_seed > fold.count) or relationship_finish(fold.relations.rest) is not None:
        return None
    closers = len(interrupted_turn_closers([e.frozen() for e in fold.turn_tail])) if fold.open_turn is not None else 0
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
