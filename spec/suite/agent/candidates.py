"""The registry of invalid candidates: at least one named mutation per violation code.

A *mutation* turns a :class:`~sessionlog_spec.suite.agent.builder.SessionBuilder` holding a valid session into one
invalid candidate that the model refuses with exactly the mutation's ``code``, as the **first**
violation in the model's check order (``model/session.py``): envelope, contiguity, vocabulary,
payload shape, surface, tool-pairing balance, trace.  As far as the state allows, a candidate
breaks exactly one rule; a mutation whose rule cannot be broken cleanly from the given state
returns ``None`` (for example a tool-result rewrite needs a tool result on the surface and an open
turn).  The candidates copy realistic faults: a ``turn/start`` while a turn is open, a replace
whose start was shadowed, a compaction that separates a tool call from its result, a rewrite that
flips ``isError``, a header with ``system: ""``, a CRLF line in the middle of a stored log, a v0 log
with ``mode/set``.

API (stable; the conformance state machines draw from it):

* :class:`Mutation` ``(name, code, context, build)``: ``build(builder, rng)`` returns the
  candidate or ``None``.  ``build`` never changes ``builder``; ``rng`` only picks among equally
  realistic variants, so a fixed seed gives a fixed candidate.
* :data:`MUTATIONS`: every mutation, in a fixed order (the order the builders are defined in this
  module); names are unique.
* :func:`candidate` ``(code, context)``: the decorator that registers a builder as a mutation
  named after the function.
* :func:`mutations_for` ``(code)``: the mutations that produce ``code``.
* :func:`applicable` ``(builder, rng)``: every mutation that applies to the builder's state,
  each with its candidate, as :class:`Candidate` values.
* :func:`submit` ``(builder, candidate)``: the reference answer, through the contracted model.

A candidate's *context* says where it goes, and what kind of value it is:

=========== ======================================================= =====================================
context     candidate                                               submitted to
=========== ======================================================= =====================================
``append``  one raw event (usually a ``dict``) for the builder's    ``append_event(builder.state, c)``
            session
``seed``    a whole raw event list                                  ``seed_session(c)``
``load``    the text of a stored JSONL log                          ``load_session(c)``
``upgrade`` a v0 log ``{"header": {...}, "events": [...]}``         ``upgrade_v0(StoredLog(...))``
``cuts``    a seq that is not on the builder's surface              ``balanced_around(nodes, log, c)``
=========== ======================================================= =====================================

Every candidate is plain JSON (``dict``, ``list``, ``str``, ``int``, ``float``, ``bool``, ``None``)
and keeps its meaning through a JSON encoder and decoder, so a driver-based machine can send it to
a port unchanged (the ``append``/``seed`` candidates as the protocol's ``event``/``events``, the
``upgrade`` candidate as ``log``, the ``load`` candidate as ``jsonl``).

Each builder is registered where it is defined, by ``@candidate(code, context)``, and appended to
:data:`MUTATIONS` in definition order.  The state machines draw from that order with a seeded
generator, so moving a builder (like adding one) changes what a seeded run does.
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from sessionlog_spec.contracts import compaction as contracted_compaction
from sessionlog_spec.contracts.jsonl import load_session
from sessionlog_spec.contracts.legacy import upgrade_v0
from sessionlog_spec.contracts.log import append_event, seed_session
from sessionlog_spec.model import compaction as model_compaction
from sessionlog_spec.model.compaction import pairing_delta, running_counts
from sessionlog_spec.model.event import SURFACE_TYPES, Event
from sessionlog_spec.model.json_value import MAX_NESTING, MAX_SAFE_INTEGER, freeze, thaw
from sessionlog_spec.model.jsonl import LEGACY_VERSION, encode_jsonl
from sessionlog_spec.model.legacy import DELIVERY_MARKER, V0_INVENTORY, StoredLog
from sessionlog_spec.model.legacy import upgrade_v0 as model_upgrade_v0
from sessionlog_spec.model.load import load_session as model_load_session
from sessionlog_spec.model.messages import tool_call_ids, tool_result_call_id
from sessionlog_spec.model.payloads import CURRENT_GENERATION, EVENT_PAYLOADS, payload_members, payload_shape
from sessionlog_spec.model.relationships import COMMAND_TYPES, TITLE_FRAME_PREFIX, TITLE_PLUGIN, human_text, title_frame
from sessionlog_spec.model.session import TYPE_CODES, SessionState
from sessionlog_spec.model.session import append_event as model_append_event
from sessionlog_spec.model.session import fold_session as model_fold_session
from sessionlog_spec.model.session import seed_session as model_seed_session
from sessionlog_spec.model.shapes import Context as ShapeContext
from sessionlog_spec.model.shapes import shape_problem
from sessionlog_spec.model.trace import TRACE_TYPES
from sessionlog_spec.model.violation import Code, Violation
from sessionlog_spec.suite.agent import crashes
from sessionlog_spec.suite.agent.actions import NOTE_VARIANTS, note_event, open_calls, title_request_data
from sessionlog_spec.suite.agent.builder import PROVIDER, RawEvent, SessionBuilder, basic_header, text_block
from sessionlog_spec.suite.agent.legacy_forms import FORMS, restarted_turn, v0_events
from sessionlog_spec.suite.agent.message_exemplars import MESSAGE_EXEMPLARS
from sessionlog_spec.suite.agent.payload_faults import Site, apply_site, fault_sites, payload_fault

Context = Literal["append", "seed", "load", "upgrade", "cuts"]
CONTEXTS: tuple[Context, ...] = ("append", "seed", "load", "upgrade", "cuts")
Build = Callable[[SessionBuilder, random.Random], Any]

_USER_TITLE = {"title": "Untitled", "messageSeqs": [], "source": {"kind": "user"}}
"""The payload of a title the user set: valid anywhere."""
STORED_HEADER: dict[str, Any] = {
    "type": "session",
    "version": 1,
    "id": "mutant-session",
    "createdAt": 1_700_000_000_000,
    "delegationDepth": 0,
}
"""The header line of every ``load`` candidate (before the mutation changes it)."""


@dataclass(frozen=True, slots=True)
class Mutation:
    """A named way to make one invalid candidate refused with ``code`` in ``context``."""

    name: str
    code: Code
    context: Context
    build: Build
    """``build(builder, rng)``: the candidate, or ``None`` when the builder's state does not allow it."""
    lifted_from: str | None = None
    """For an ``append`` candidate lifted to another path: the mutation it was lifted from.  The path
    may refuse it for another reason first (the edge checks the v0 source before the v1 rules), so its
    candidates are refused, but not always with ``code``."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """One built candidate and the mutation that built it."""

    mutation: Mutation
    value: Any

    @property
    def code(self) -> Code:
        """The code the model refuses ``value`` with."""
        return self.mutation.code

    @property
    def context(self) -> Context:
        """Where ``value`` is submitted."""
        return self.mutation.context


MUTATIONS: list[Mutation] = []
"""Every mutation, in the order its builder is defined below (seeded draws depend on this order)."""

_B = TypeVar("_B", bound=Build)


def candidate(code: Code, context: Context) -> Callable[[_B], _B]:
    """Register the decorated builder as a mutation named after it, refused with ``code`` in ``context``."""

    def register(build: _B) -> _B:
        name = build.__name__
        assert name not in {m.name for m in MUTATIONS}, f"duplicate mutation name {name}"
        MUTATIONS.append(Mutation(name, code, context, build))
        return build

    return register


# -- reading the builder's state -------------------------------------------------------------------


def edge_int(rng: random.Random, lo: int, hi: int) -> int:
    """An integer from ``lo`` to ``hi`` (both included), each end one time in four.

    Where a rule compares a seq with a bound (a seed's length, the latest event), the value at the
    bound is the one a port gets wrong by one; drawn uniformly it came up once in the log's length.
    """
    pick = rng.randrange(4)
    return lo if pick == 0 else hi if pick == 1 else rng.randint(lo, hi)


def _scratch(builder: SessionBuilder) -> SessionBuilder:
    """A copy to build uncommitted events with, so the caller's clock and id counter do not move."""
    return copy.copy(builder)


def _open_turn(b: SessionBuilder) -> int | None:
    return b.state.trace.open_turn


def _open_step(b: SessionBuilder) -> tuple[int, int] | None:
    trace = b.state.trace
    if trace.open_turn is None or trace.open_step is None:
        return None
    return trace.open_turn, trace.open_step


def _step_events(b: SessionBuilder) -> list[Event]:
    """The events of the open step, after its ``step/start``."""
    out: list[Event] = []
    for event in reversed(b.state.events):
        if event.type == "step/start":
            break
        out.append(event)
    return out[::-1]


def _data(event: Event) -> dict[str, Any]:
    data = thaw(event.data)
    assert isinstance(data, dict)
    return data


def _shadowed_seqs(b: SessionBuilder) -> list[int]:
    """Message events a replacement took off the surface."""
    nodes = set(b.state.surface.nodes)
    return [e.seq for e in b.state.events if e.type in SURFACE_TYPES and e.seq not in nodes]


def _off_surface_seqs(b: SessionBuilder) -> list[int]:
    """Seqs in the log that are not surface nodes."""
    nodes = set(b.state.surface.nodes)
    return [e.seq for e in b.state.events if e.seq not in nodes]


def _tool_results(b: SessionBuilder) -> list[int]:
    return b.tool_result_seqs()


def _shadowed_by(b: SessionBuilder, start: int, end: int) -> list[int]:
    nodes = b.state.surface.nodes
    return list(nodes[nodes.index(start) : nodes.index(end) + 1])


def _benign(b: SessionBuilder, rng: random.Random) -> RawEvent:
    """A plugin event that is valid in every state: a session title the user set (it cites no message)."""
    title = rng.choice(("Fix the failing test", "Refactor the parser", "Untitled"))
    return b.event("session/title", {"title": title, "messageSeqs": [], "source": {"kind": "user"}}, False)


def _elided(data: dict[str, Any], text: str = "[output elided]") -> dict[str, Any]:
    """A tool-result payload with its block's content replaced, as a rewrite writes it."""
    out = copy.deepcopy(data)
    out["message"]["content"][0]["content"] = [text_block(text)]
    return out


def _rewrite(b: SessionBuilder, start: int, end: int, data: dict[str, Any]) -> RawEvent:
    op = {"op": "replace", "start": start, "end": end}
    return b.event("tool/result", data, False, surfaceOp=op, sourceEventSeqs=_shadowed_by(b, start, end))


def _header_event(b: SessionBuilder, header: dict[str, Any], reason: str = "change", **extra: Any) -> RawEvent:
    return b.event("request/header", {"header": header, "reason": reason, **extra}, False)


def _legal_range(b: SessionBuilder, rng: random.Random) -> tuple[int, int] | None:
    ranges = b.legal_ranges()
    return rng.choice(ranges) if ranges else None


def _summary_event(b: SessionBuilder, rng: random.Random, **envelope: Any) -> RawEvent | None:
    """A ``compaction/summary`` over a legal range with ``envelope`` added (``None`` when the surface
    has no legal range).

    It is the summary the open compaction waits for when there is one, so that the envelope member
    is its only fault.  Elsewhere it names a compaction of its own that no ``compaction/start``
    opened: a second fault, but one no reader reaches, since the envelope is checked first (by the
    model and by the released reader alike).
    """
    picked = _legal_range(b, rng)
    if picked is None:
        return None
    start, end = picked
    compaction = b.open_compaction()
    if compaction is not None and not compaction.summarized:
        event = b.compaction_summary(start, end, commit=False)
    else:
        shadowed = _shadowed_by(b, start, end)
        data = {
            "compactionId": f"compaction-{b.next_seq}",
            "summary": [text_block("Summary of earlier work.")],
            "shadowedRange": {"start": start, "end": end},
            "shadowedSeqs": shadowed,
            "shadowedTokenCount": 40 * len(shadowed),
            **PROVIDER,
        }
        event = b.event("compaction/summary", data, False)
    return {**event, **{k: v(start, end) for k, v in envelope.items()}}


def _jsonl_lines(builder: SessionBuilder, header: dict[str, Any] | None = None) -> list[str]:
    """The stored form of the builder's log, one string per line (without newlines)."""
    return encode_jsonl(header or STORED_HEADER, builder.state.events).split("\n")[:-1]


def _text(lines: Sequence[str]) -> str:
    return "".join(line + "\n" for line in lines)


# -- envelope, JSON values and contiguity (INV-LOG-1..5, INV-JSONL-5) ------------------------------


@candidate(Code.ENVELOPE_NOT_OBJECT, "append")
def event_as_array(builder: SessionBuilder, rng: random.Random) -> object:
    """An event written positionally, as ``[type, seq, time, data]``."""
    e = _benign(_scratch(builder), rng)
    return [e["type"], e["seq"], e["time"], e["data"]]


@candidate(Code.ENVELOPE_NOT_OBJECT, "append")
def event_double_encoded(builder: SessionBuilder, rng: random.Random) -> object:
    """An event serialised twice: the log holds a JSON string instead of an object."""
    return json.dumps(_benign(_scratch(builder), rng))


@candidate(Code.ENVELOPE_UNKNOWN_KEY, "append")
def envelope_stray_key(builder: SessionBuilder, rng: random.Random) -> object:
    """An envelope with a member the format does not have (an event id, a snake_case spelling, a turn)."""
    e = _benign(_scratch(builder), rng)
    key, value = rng.choice((("id", "evt-1"), ("source_event_seqs", [0]), ("turn", 1), ("sessionId", "s-1")))
    return {**e, key: value}


@candidate(Code.ENVELOPE_MISSING_KEY, "append")
def envelope_missing_key(builder: SessionBuilder, rng: random.Random) -> object:
    """An envelope that lost one required member."""
    e = _benign(_scratch(builder), rng)
    del e[rng.choice(("type", "seq", "time", "data"))]
    return e


@candidate(Code.ENVELOPE_BAD_TYPE, "append")
def empty_type(builder: SessionBuilder, rng: random.Random) -> object:
    """An event whose type is empty or null."""
    return {**_benign(_scratch(builder), rng), "type": rng.choice(("", None))}


@candidate(Code.ENVELOPE_BAD_SEQ, "append")
def seq_not_natural(builder: SessionBuilder, rng: random.Random) -> object:
    """A seq that is no non-negative safe integer, in any of the ways a writer spells one wrong."""
    b = _scratch(builder)
    e = _benign(b, rng)
    return _refused(b, "append", Code.ENVELOPE_BAD_SEQ, {**e, "seq": _not_natural(e["seq"], rng)})


def _not_natural(value: int, rng: random.Random) -> object:
    """A wrong spelling of the natural ``value``, its kind drawn first: another JSON type, out of
    range (a sign, past ``2^53 - 1``), a fraction, or ``-0``.  Each kind is what some reader's check
    lets through (a type test passes ``-0`` and ``1.5``, a range test passes ``"7"``), so each gets
    its share however many spellings it has."""
    kinds: tuple[tuple[object, ...], ...] = (
        (str(value), True, None, [value], {"value": value}),
        (-1 - value, MAX_SAFE_INTEGER + 1, float(MAX_SAFE_INTEGER + 2), -MAX_SAFE_INTEGER),
        (value + 0.5, value + 1e-9 if value < 2**40 else value + 0.5),
        (-0.0,),
    )
    return rng.choice(rng.choice(kinds))


@candidate(Code.ENVELOPE_BAD_TIME, "append")
def time_not_integer(builder: SessionBuilder, rng: random.Random) -> object:
    """A time from a sub-millisecond clock, as an ISO string, or any other wrong spelling of a natural."""
    b = _scratch(builder)
    e = _benign(b, rng)
    spelling = rng.choice((e["time"] + 0.25, "2026-07-13T10:00:00Z", _not_natural(e["time"], rng)))
    return _refused(b, "append", Code.ENVELOPE_BAD_TIME, {**e, "time": spelling})


@candidate(Code.ENVELOPE_BAD_IGNORABLE, "append")
def ignorable_false(builder: SessionBuilder, rng: random.Random) -> object:
    """``ignorable: false``, a second spelling of absent."""
    return {**_benign(_scratch(builder), rng), "ignorable": False}


def _hook_result(b: SessionBuilder, exit_code: int, duration_ms: float) -> dict[str, Any]:
    """What a hook that ran in the latest turn reports: valid but for a non-lossless number put in."""
    trace = b.state.trace
    turn = trace.open_turn if trace.open_turn is not None else trace.last_turn
    data: dict[str, Any] = {"turn": turn, "point": "Stop", "handlerId": "hook-1", "decision": "allow"}
    return {**data, "durationMs": duration_ms, "exitCode": exit_code}


@candidate(Code.JSON_NOT_LOSSLESS, "append")
def unsafe_integer(builder: SessionBuilder, rng: random.Random) -> object:
    """A payload number beyond 2^53 − 1 (a hook's exit code), which a JavaScript reader would round."""
    b = _scratch(builder)
    return b.event("hook/result", _hook_result(b, MAX_SAFE_INTEGER + rng.choice((1, 2, 1000)), 12), False)


@candidate(Code.JSON_NOT_LOSSLESS, "append")
def negative_zero(builder: SessionBuilder, rng: random.Random) -> object:
    """A payload holding ``-0`` (a hook's duration), which JSON readers disagree about."""
    b = _scratch(builder)
    return b.event("hook/result", _hook_result(b, rng.choice((0, 1)), -0.0), False)


def nested_value(depth: int, rng: random.Random) -> object:
    """A JSON value nesting exactly ``depth`` levels, each an array or an object (built without recursion)."""
    value: object = rng.choice((0, "leaf", None))
    for _ in range(depth):
        value = [value] if rng.random() < 0.5 else {"next": value}
    return value


def _deep_telemetry(b: SessionBuilder, depth: int, rng: random.Random) -> RawEvent:
    """An ignorable vendor event (valid anywhere) whose ``data`` nests ``depth`` levels."""
    data = {"spans": nested_value(depth - 1, rng)}
    return {"type": "vendor/trace", "seq": b.next_seq, "time": b.time, "ignorable": True, "data": data}


@candidate(Code.JSON_NOT_LOSSLESS, "append")
def value_nested_too_deep(builder: SessionBuilder, rng: random.Random) -> object:
    """A payload nesting deeper than the format's 256 levels (a runaway serialiser of a span tree)."""
    return _deep_telemetry(_scratch(builder), MAX_NESTING + rng.choice((1, 2, 40)), rng)


@candidate(Code.JSON_NOT_LOSSLESS, "load")
def stored_value_nested_too_deep(builder: SessionBuilder, rng: random.Random) -> object:
    """A stored row nesting deeper than 256 levels, some far deeper than a recursive JSON parser reaches;
    still JSON as ``JSON.parse`` reads it, so it is refused for its value, not dropped as malformed."""
    b = _scratch(builder)
    # 2,000 is past Python's recursion limit, 20,000 past Go's decoder limit of 10,000 levels; deeper
    # tells no reader more and costs every read of the row in proportion (a ci jsonl run spent a
    # third of its time reading 50,000-level rows).
    depth = MAX_NESTING + rng.choice((1, 2_000, 20_000))
    # Written as text: an encoder would recurse once per level.
    opens = [rng.choice(("[", '{"next":')) for _ in range(depth - 1)]
    spans = "".join(opens) + "0" + "".join("]" if o == "[" else "}" for o in reversed(opens))
    row = f'{{"type":"vendor/trace","seq":{b.next_seq},"time":{b.time},"ignorable":true,"data":{{"spans":{spans}}}}}'
    return _text([*_jsonl_lines(b), row])


@candidate(Code.SEQ_NOT_CONTIGUOUS, "append")
def duplicate_last_event(builder: SessionBuilder, rng: random.Random) -> object:
    """The last event written again (a retried write), so its seq repeats."""
    events = builder.events
    return events[-1] if events else None


@candidate(Code.SEQ_NOT_CONTIGUOUS, "append")
def skipped_seq(builder: SessionBuilder, rng: random.Random) -> object:
    """An event that skips a seq (a lost write before it)."""
    e = _benign(_scratch(builder), rng)
    return {**e, "seq": e["seq"] + rng.choice((1, 2))}


@candidate(Code.SEQ_NOT_CONTIGUOUS, "seed")
def seed_window(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed copied from the middle of a parent's log, keeping the parent's seqs."""
    events = builder.events
    return events[edge_int(rng, 1, len(events) - 1) :] if len(events) >= 2 else None


def _committed_damage(
    builder: SessionBuilder, rng: random.Random, damage: Callable[[list[str], int], None], first: int = 0
) -> object:
    """The builder's stored log with ``damage(lines, index)`` done to an event row that a later
    ``turn/end`` proves committed, at seq ``first`` or later where the log has one.  A log with no
    ``turn/end`` yet is taken on until it has one (its open turn ended, or a turn started and
    ended): a session's first turn is long, and damage in committed history is a rule of every log,
    not only of one past its first turn."""

    def turn_ends(lines: list[str]) -> list[int]:
        return [i for i, line in enumerate(lines) if i > 1 and '"type":"turn/end"' in line]

    lines = _jsonl_lines(builder)
    ends = turn_ends(lines)
    if not ends:
        b = _scratch(builder)
        if not (_enter_turn(b) and _leave_turn(b) and b.state.trace.last_turn > 0):
            return None
        lines = _jsonl_lines(b)
        ends = turn_ends(lines)
        if not ends:
            return None
    damage(lines, rng.randrange(1 + first if 1 + first < ends[-1] else 1, ends[-1]))
    return _text(lines)


@candidate(Code.SEQ_NOT_CONTIGUOUS, "load")
def duplicated_committed_row(builder: SessionBuilder, rng: random.Random) -> object:
    """A row written twice before a later ``turn/end``: the repeated seq lies in committed history."""
    return _committed_damage(builder, rng, lambda lines, i: lines.insert(i, lines[i]))


@candidate(Code.SEQ_NOT_CONTIGUOUS, "load")
def lost_committed_row(builder: SessionBuilder, rng: random.Random) -> object:
    """A row lost before a later ``turn/end`` (a gap in committed history)."""
    return _committed_damage(builder, rng, lambda lines, i: lines.__delitem__(i))


@candidate(Code.SEQ_NOT_CONTIGUOUS, "load")
def stray_object_in_committed_history(builder: SessionBuilder, rng: random.Random) -> object:
    """A JSON object that is no next event (``{}``, an old header line, a far seq) before a ``turn/end``."""
    stray = rng.choice(
        ("{}", json.dumps(STORED_HEADER), json.dumps({"type": "session/title", "seq": 10**6, "time": 0, "data": _USER_TITLE}))
    )
    return _committed_damage(builder, rng, lambda lines, i: lines.insert(i, stray))


# -- vocabulary and payload shapes (INV-LOG-6..10) -------------------------------------------------


@candidate(Code.UNKNOWN_EVENT_TYPE, "append")
def later_format_event(builder: SessionBuilder, rng: random.Random) -> object:
    """An event type from a later format version (v2 attempts, v3 system or v4 developer messages)."""
    b = _scratch(builder)
    turn, step = _open_step(b) or (max(b.state.trace.last_turn, 1), 1)
    type_ = rng.choice(("assistant/attempt", "system/message", "developer/message"))
    data: dict[str, Any] = {"turn": turn, "step": step}
    if type_ == "assistant/attempt":
        data["stream"] = []
    else:
        role = "system" if type_ == "system/message" else "developer"
        data["message"] = {"id": "m-1", "role": role, "content": [text_block("Be terse.")], "source": {"kind": role}}
    return b.event(type_, data, False)


@candidate(Code.UNKNOWN_EVENT_TYPE, "load")
def jsonl_unknown_line(builder: SessionBuilder, rng: random.Random) -> object:
    """A v1 log holding a line of a later format's event type."""
    return _text([*_jsonl_lines(builder), json.dumps(later_format_event(builder, rng))])


@candidate(Code.END_SEED_INVALID, "append")
def end_seed_not_inherited(builder: SessionBuilder, rng: random.Random) -> object:
    """An end-of-seed marker with ``inherited: false`` or a v0-style seed length."""
    b = _scratch(builder)
    return b.event("session/end-seed", rng.choice(({"inherited": False}, {"seedLength": b.next_seq})), False)


@candidate(Code.END_SEED_INVALID, "seed")
def seed_bad_marker(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed closed by a malformed end-of-seed marker."""
    return [*builder.events, end_seed_not_inherited(builder, rng)]


@candidate(Code.USER_MESSAGE_INVALID, "append")
def user_message_without_id(builder: SessionBuilder, rng: random.Random) -> object:
    """A pre-identity user message: role, content and source, but no id."""
    b = _scratch(builder)
    data = {"role": "user", "content": [text_block("Please continue.")], "source": {"kind": "user"}}
    return b.event("user/message", data, False, surfaceOp="append")


@candidate(Code.USER_MESSAGE_INVALID, "append")
def user_message_assistant_role(builder: SessionBuilder, rng: random.Random) -> object:
    """A user/message carrying an assistant-role message."""
    b = _scratch(builder)
    data = {"id": "u-1", "role": "assistant", "content": [text_block("Sure.")], "source": {"kind": "user"}}
    return b.event("user/message", data, False, surfaceOp="append")


def _assistant(b: SessionBuilder, calls: Sequence[str] = ("call-x",)) -> RawEvent:
    return b.assistant_message("Reading.", calls, commit=False)


@candidate(Code.ASSISTANT_MESSAGE_INVALID, "append")
def assistant_arguments_object(builder: SessionBuilder, rng: random.Random) -> object:
    """A tool-call block whose arguments were parsed into an object instead of kept as the raw string."""
    b = _scratch(builder)
    if _open_step(b) is None:
        return None
    e = _assistant(b, (f"call-{rng.randrange(1000)}",))
    e["data"]["message"]["content"][-1]["arguments"] = {"path": "a.py"}
    return e


@candidate(Code.TOOL_CALL_ID_REPEATED, "append")
def assistant_duplicate_call_ids(builder: SessionBuilder, rng: random.Random) -> object:
    """An assistant message asking for two tool calls with the same id (the second advert repeats a pending id)."""
    b = _scratch(builder)
    if _open_step(b) is None:
        return None
    call = f"call-{rng.randrange(1000)}"
    return _assistant(b, (call, call))


@candidate(Code.ASSISTANT_MESSAGE_INVALID, "append")
def assistant_v0_provenance(builder: SessionBuilder, rng: random.Random) -> object:
    """A v0 assistant message: ``content`` and ``provenance`` instead of a message (the edge would convert it)."""
    b = _scratch(builder)
    step = _open_step(b)
    if step is None:
        return None
    data = {"turn": step[0], "step": step[1], "content": [text_block("Done.")], "provenance": dict(PROVIDER)}
    return b.event("assistant/message", data, False, surfaceOp="append")


def _unstarted_calls(b: SessionBuilder) -> list[str]:
    """Calls the open step asked for whose start is not recorded yet (in the order they were asked for)."""
    events = _step_events(b)
    asked = [c for e in events for c in tool_call_ids(e)]
    done = {str(_data(e)["callId"]) for e in events if e.type == "tool/call"}
    done |= {c for e in events if e.type == "tool/result" and (c := tool_result_call_id(e))}
    return [c for c in asked if c not in done]


def _recorded_call(b: SessionBuilder, rng: random.Random) -> str | None:
    """A call recorded by ``tool/call`` in the open step and not yet answered."""
    calls = sorted(b.state.trace.step_calls)
    return rng.choice(calls) if calls and b.state.pending_calls > 0 else None


@candidate(Code.TOOL_RESULT_INVALID, "append")
def tool_result_mismatched_ids(builder: SessionBuilder, rng: random.Random) -> object:
    """A tool result whose block answers a different call than its source names."""
    b = _scratch(builder)
    call = _recorded_call(b, rng)
    if call is None:
        return None
    e = b.tool_result(call, commit=False)
    e["data"]["message"]["content"][0]["toolCallId"] = call + "-other"
    return e


@candidate(Code.TOOL_RESULT_INVALID, "append")
def tool_result_is_error_string(builder: SessionBuilder, rng: random.Random) -> object:
    """A tool result whose ``isError`` is the string ``"true"``."""
    b = _scratch(builder)
    call = _recorded_call(b, rng)
    if call is None:
        return None
    e = b.tool_result(call, commit=False)
    e["data"]["message"]["content"][0]["isError"] = rng.choice(("true", 1))
    return e


@candidate(Code.TOOL_RESULT_INVALID, "append")
def tool_result_v0_flat(builder: SessionBuilder, rng: random.Random) -> object:
    """A v0 tool result: ``callId``, ``content`` and ``isError`` without a message."""
    b = _scratch(builder)
    call = _recorded_call(b, rng)
    step = _open_step(b)
    if call is None or step is None:
        return None
    data = {"turn": step[0], "step": step[1], "callId": call, "content": [text_block("ok")], "isError": False}
    return b.event("tool/result", data, False, surfaceOp="append")


# -- request headers (INV-HDR-1..5) ----------------------------------------------------------------


def _in_turn(builder: SessionBuilder) -> SessionBuilder | None:
    b = _scratch(builder)
    return b if _open_turn(b) is not None else None


@candidate(Code.HEADER_INVALID, "append")
def header_message_prefix(builder: SessionBuilder, rng: random.Random) -> object:
    """A header snapshot that still carries the retired ``messagePrefix``."""
    b = _in_turn(builder)
    return None if b is None else _header_event(b, {**basic_header(), "messagePrefix": []})


@candidate(Code.HEADER_INVALID, "append")
def header_starts_series_false(builder: SessionBuilder, rng: random.Random) -> object:
    """A header event with ``startsSeries: false`` (the flag is absent or true)."""
    b = _in_turn(builder)
    return None if b is None else _header_event(b, basic_header(), rng.choice(("change", "series")), startsSeries=False)


@candidate(Code.HEADER_INVALID, "append")
def header_tool_without_parameters(builder: SessionBuilder, rng: random.Random) -> object:
    """A header one of whose tool schemas lacks ``parameters``."""
    b = _in_turn(builder)
    if b is None:
        return None
    header = basic_header(tools=("read_file", "grep"))
    del header["tools"][rng.randrange(2)]["parameters"]
    return _header_event(b, header)


TOOL_EXTRA_MEMBERS = ("strict", "type", "input_schema", "inputSchema", "cache_control", "function")
"""Members of tool definitions in other vocabularies (provider APIs, older formats) that a header's
tool schema does not admit."""


@candidate(Code.HEADER_INVALID, "append")
def header_tool_extra_member(builder: SessionBuilder, rng: random.Random) -> object:
    """A header whose tool schema carries a member a tool schema does not have (a provider API's
    ``strict``, ``input_schema``, ``cache_control``, …), on any of its tools."""
    b = _in_turn(builder)
    if b is None:
        return None
    header = basic_header(tools=("read_file", "grep", "bash")[: rng.randint(1, 3)])
    tool = rng.choice(header["tools"])
    name = rng.choice(TOOL_EXTRA_MEMBERS)
    tool[name] = rng.choice((True, {"type": "ephemeral"}, copy.deepcopy(tool["parameters"]), "function"))
    return _header_event(b, header)


@candidate(Code.HEADER_NOT_PINNED, "append")
def header_unpinned(builder: SessionBuilder, rng: random.Random) -> object:
    """A header whose config names no model (or an empty one)."""
    b = _in_turn(builder)
    if b is None:
        return None
    config = rng.choice(({"provider": "deepseek"}, {"provider": "deepseek", "model": ""}, {"model": "deepseek-chat"}))
    return _header_event(b, {**basic_header(), "config": config})


@candidate(Code.HEADER_ADAPTER_DEFAULTS_INVALID, "append")
def adapter_default_without_value(builder: SessionBuilder, rng: random.Random) -> object:
    """An ``adapterDefaults`` marker for a config field that is not there."""
    b = _in_turn(builder)
    if b is None:
        return None
    return _header_event(b, {**basic_header(), "adapterDefaults": {rng.choice(("maxTokens", "reasoningEffort")): True}})


@candidate(Code.HEADER_NOT_CANONICAL, "append")
def header_empty_system(builder: SessionBuilder, rng: random.Random) -> object:
    """A header snapshot with ``system: ""``, which canonical form drops."""
    b = _in_turn(builder)
    return None if b is None else _header_event(b, {**basic_header(), "system": ""})


@candidate(Code.HEADER_NOT_CANONICAL, "append")
def header_empty_tools(builder: SessionBuilder, rng: random.Random) -> object:
    """A header snapshot with ``tools: []`` or a marker-free ``adapterDefaults: {}``."""
    b = _in_turn(builder)
    if b is None:
        return None
    return _header_event(b, {**basic_header(), **rng.choice(({"tools": []}, {"adapterDefaults": {}}))})


@candidate(Code.HEADER_REASON_INVALID, "append")
def header_unknown_reason(builder: SessionBuilder, rng: random.Random) -> object:
    """A header reason from another vocabulary (a session-start source, a retry)."""
    b = _in_turn(builder)
    return None if b is None else _header_event(b, basic_header(), rng.choice(("startup", "compact", "retry")))


# -- surface (INV-SURF-1..11) ----------------------------------------------------------------------


@candidate(Code.SURFACE_OP_FORBIDDEN, "append")
def summary_with_surface_op(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``compaction/summary`` (the open compaction's, when one waits for it) carrying the surfaceOp that
    belongs on the replacement."""
    return _summary_event(_scratch(builder), rng, surfaceOp=lambda start, end: {"op": "replace", "start": start, "end": end})


@candidate(Code.SURFACE_OP_FORBIDDEN, "append")
def tool_call_with_surface_op(builder: SessionBuilder, rng: random.Random) -> object:
    """The ``tool/call`` of a call the open step asked for, written with ``surfaceOp: "append"`` as if it were a message."""
    b = _scratch(builder)
    unstarted = _unstarted_calls(b)
    if _open_step(b) is None or not unstarted:
        return None
    return {**b.tool_call(rng.choice(unstarted), commit=False), "surfaceOp": "append"}


def _off_surface_event(b: SessionBuilder, rng: random.Random) -> RawEvent:
    """An event of a type that never joins the surface: a note the log allows here, or an ignorable
    event of a type outside the vocabulary (which is no message either)."""
    if rng.random() < 0.5:
        return b.event(f"vendor/{rng.choice(('telemetry', 'trace', 'note'))}", {"n": 1}, False, ignorable=True)
    return _benign(b, rng)


@candidate(Code.SURFACE_OP_FORBIDDEN, "append")
def off_surface_event_with_surface_op(builder: SessionBuilder, rng: random.Random) -> object:
    """Any event that is no message (a note, an unknown ignorable event) written with a ``surfaceOp``."""
    b = _scratch(builder)
    op: object = rng.choice(("append", {"op": "replace", "start": 0, "end": 0}))
    return _refused(b, "append", Code.SURFACE_OP_FORBIDDEN, {**_off_surface_event(b, rng), "surfaceOp": op})


@candidate(Code.SOURCES_FORBIDDEN, "append")
def off_surface_event_with_sources(builder: SessionBuilder, rng: random.Random) -> object:
    """Any event that is no message (a note, an unknown ignorable event) carrying ``sourceEventSeqs``."""
    b = _scratch(builder)
    sources = [rng.randrange(b.next_seq)] if b.next_seq else []
    return _refused(b, "append", Code.SOURCES_FORBIDDEN, {**_off_surface_event(b, rng), "sourceEventSeqs": sources})


@candidate(Code.SOURCES_FORBIDDEN, "append")
def summary_with_sources(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``compaction/summary`` (the open compaction's, when one waits for it) carrying the provenance that
    belongs on the replacement."""
    b = _scratch(builder)
    return _summary_event(b, rng, sourceEventSeqs=lambda start, end: _shadowed_by(b, start, end))


@candidate(Code.SURFACE_OP_MISSING, "append")
def user_message_without_op(builder: SessionBuilder, rng: random.Random) -> object:
    """A user message with the surfaceOp left implicit, as v0 writers did."""
    e = _scratch(builder).user_message(rng.choice(("Go on.", "Thanks")), commit=False)
    del e["surfaceOp"]
    return e


@candidate(Code.SURFACE_OP_INVALID, "append")
def surface_op_misspelt(builder: SessionBuilder, rng: random.Random) -> object:
    """A surfaceOp in a spelling the format does not have."""
    b = _scratch(builder)
    nodes = b.state.surface.nodes
    s = nodes[0] if nodes else 0
    op = rng.choice(
        (
            "prepend",
            "replace",
            {"op": "append"},
            {"op": "replace", "start": s, "end": s, "reason": "compaction"},
            {"op": "replace", "start": s},
            {"op": "replace", "start": str(s), "end": s},
        )
    )
    return {**b.user_message("Go on.", commit=False), "surfaceOp": op}


def _replace_starting_at(b: SessionBuilder, rng: random.Random, starts: Sequence[int]) -> object:
    """A compaction whose start is one of ``starts`` (none on the surface) and whose end is a later surface node."""
    nodes = b.state.surface.nodes
    if not starts or not nodes:
        return None
    start = rng.choice(starts)
    end = rng.choice([n for n in nodes if n > start] or list(nodes))
    e = b.compaction(nodes[0], nodes[0], commit=False)
    return {**e, "surfaceOp": {"op": "replace", "start": start, "end": end}, "sourceEventSeqs": sorted({start, end})}


@candidate(Code.REPLACE_START_NOT_ON_SURFACE, "append")
def replace_start_shadowed(builder: SessionBuilder, rng: random.Random) -> object:
    """A compaction planned on a stale view: its start was already shadowed by an earlier replacement."""
    b = _scratch(builder)
    return _replace_starting_at(b, rng, _shadowed_seqs(b))


@candidate(Code.REPLACE_START_NOT_ON_SURFACE, "append")
def replace_start_off_surface(builder: SessionBuilder, rng: random.Random) -> object:
    """A replace whose start names a log-only event (a bracket, a tool call) instead of a surface node."""
    b = _scratch(builder)
    return _replace_starting_at(b, rng, [s for s in _off_surface_seqs(b) if b.state.events[s].type not in SURFACE_TYPES])


@candidate(Code.REPLACE_END_NOT_ON_SURFACE, "append")
def replace_end_off_surface(builder: SessionBuilder, rng: random.Random) -> object:
    """A replace whose end names the last log event (a ``step/end``, a ``turn/end``) or itself, not a surface node."""
    b = _scratch(builder)
    nodes = b.state.surface.nodes
    if not nodes:
        return None
    start = rng.choice(nodes)
    later = [s for s in _off_surface_seqs(b) if s > start] or [b.next_seq]
    end = rng.choice(later)
    shadowed = [n for n in nodes if start <= n <= end]
    e = b.compaction(nodes[0], nodes[0], commit=False)
    return {**e, "surfaceOp": {"op": "replace", "start": start, "end": end}, "sourceEventSeqs": shadowed}


@candidate(Code.REPLACE_RANGE_INVERTED, "append")
def replace_range_swapped(builder: SessionBuilder, rng: random.Random) -> object:
    """A compaction whose start and end were swapped."""
    b = _scratch(builder)
    ranges = [(s, e) for s, e in b.legal_ranges() if s != e]
    if not ranges:
        nodes = b.state.surface.nodes
        if len(nodes) < 2:
            return None
        ranges = [(nodes[0], nodes[-1])]
    start, end = rng.choice(ranges)
    e = b.compaction(start, end, commit=False)
    return {**e, "surfaceOp": {"op": "replace", "start": end, "end": start}}


@candidate(Code.SOURCES_INVALID, "append")
def sources_range_encoded(builder: SessionBuilder, rng: random.Random) -> object:
    """Sources in the physical rows' range encoding (``"0-5"``, ``[[0, 5]]``) leaked into an event."""
    b = _scratch(builder)
    last = max(b.next_seq - 1, 0)
    return {**b.user_message("Continue.", commit=False), "sourceEventSeqs": rng.choice((f"0-{last}", [[0, last]]))}


@candidate(Code.SOURCES_EMPTY, "append")
def sources_empty(builder: SessionBuilder, rng: random.Random) -> object:
    """A user message citing ``sourceEventSeqs: []`` (only assistant messages may)."""
    return {**_scratch(builder).user_message("Continue.", commit=False), "sourceEventSeqs": []}


@candidate(Code.SOURCES_DUPLICATE, "append")
def compaction_cites_twice(builder: SessionBuilder, rng: random.Random) -> object:
    """A compaction citing one shadowed node twice."""
    b = _scratch(builder)
    picked = _legal_range(b, rng)
    if picked is None:
        return None
    e = b.compaction(*picked, commit=False)
    sources = e["sourceEventSeqs"]
    return {**e, "sourceEventSeqs": [*sources, rng.choice(sources)]}


@candidate(Code.SOURCES_DUPLICATE, "append")
def append_cites_twice(builder: SessionBuilder, rng: random.Random) -> object:
    """A user message citing the same earlier event twice."""
    b = _scratch(builder)
    if b.next_seq == 0:
        return None
    cited = rng.randrange(b.next_seq)
    return {**b.user_message("Continue.", commit=False), "sourceEventSeqs": [cited, cited]}


@candidate(Code.SOURCES_NOT_EARLIER, "append")
def sources_cite_self(builder: SessionBuilder, rng: random.Random) -> object:
    """A message citing its own seq (or a later one) as its source."""
    b = _scratch(builder)
    e = b.user_message("Continue.", commit=False)
    return {**e, "sourceEventSeqs": [e["seq"] + rng.choice((0, 1))]}


@candidate(Code.SOURCES_MISSING_SHADOWED, "append")
def compaction_misses_shadowed(builder: SessionBuilder, rng: random.Random) -> object:
    """A compaction that forgets to cite one shadowed node (or cites the summary event instead)."""
    b = _scratch(builder)
    picked = _legal_range(b, rng)
    if picked is None:
        return None
    e = b.compaction(*picked, commit=False)
    shadowed: list[int] = e["sourceEventSeqs"]
    if len(shadowed) >= 2:
        dropped = rng.choice(shadowed)
        return {**e, "sourceEventSeqs": [s for s in shadowed if s != dropped]}
    others = [s for s in range(b.next_seq) if s not in shadowed]
    return {**e, "sourceEventSeqs": [rng.choice(others)]} if others else None


def _rewrite_context(builder: SessionBuilder) -> SessionBuilder | None:
    """A scratch builder when a tool-result rewrite is otherwise legal: an open turn and a tool result on the surface."""
    b = _scratch(builder)
    return b if _open_turn(b) is not None and _tool_results(b) else None


@candidate(Code.TOOL_REWRITE_SPAN, "append")
def rewrite_spans_two(builder: SessionBuilder, rng: random.Random) -> object:
    """A tool-result rewrite whose range also covers a neighbouring node."""
    b = _rewrite_context(builder)
    if b is None:
        return None
    nodes = b.state.surface.nodes
    seq = rng.choice(_tool_results(b))
    i = nodes.index(seq)
    spans = [(nodes[i - 1], seq)] if i > 0 else []
    spans += [(seq, nodes[i + 1])] if i + 1 < len(nodes) else []
    if not spans:
        return None
    start, end = rng.choice(spans)
    return _rewrite(b, start, end, _elided(_data(b.state.events[seq])))


@candidate(Code.TOOL_REWRITE_TARGET, "append")
def rewrite_targets_message(builder: SessionBuilder, rng: random.Random) -> object:
    """A tool-result rewrite used to elide a user or assistant message."""
    b = _rewrite_context(builder)
    if b is None:
        return None
    targets = [n for n in b.state.surface.nodes if b.state.events[n].type != "tool/result"]
    if not targets:
        return None
    target = rng.choice(targets)
    return _rewrite(b, target, target, _elided(_data(b.state.events[rng.choice(_tool_results(b))])))


@candidate(Code.TOOL_REWRITE_CHANGES, "append")
def rewrite_changes_beyond_content(builder: SessionBuilder, rng: random.Random) -> object:
    """A tool-result rewrite with more changed than its content: ``meta`` added, changed or dropped,
    ``isError`` flipped, the call or the message renamed, an error note added."""
    b = _rewrite_context(builder)
    if b is None:
        return None
    seq = rng.choice(_tool_results(b))
    return _rewrite(b, seq, seq, _changed_beyond_content(_elided(_data(b.state.events[seq])), rng))


RESULT_META: tuple[object, ...] = ({"truncated": True}, {"bytes": 18_204, "lines": 412}, {"exitCode": 0}, {})
"""What a tool runner notes beside a result (``meta`` is opaque JSON)."""


def _answered_call(b: SessionBuilder, rng: random.Random) -> int | None:
    """On the scratch builder ``b``: the seq of a tool result on the surface of the open turn, logging
    a call and its result (with a ``meta`` note half the time) when there is none."""
    results = _tool_results(b) if _open_turn(b) is not None else []
    if results and rng.random() < 0.5:
        return rng.choice(results)
    call = _started_call(b)
    if call is None:
        return None
    result = b.tool_result(call, commit=False)
    if rng.random() < 0.5:
        result["data"]["meta"] = copy.deepcopy(rng.choice(RESULT_META))
    return result["seq"] if _put(b, result) else None


def _changed_beyond_content(data: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """``data`` (a rewrite's payload) with one thing changed that a rewrite must keep: ``meta``
    added, changed or dropped, ``isError`` flipped, the call or the message renamed, the error note
    added."""
    message, block = data["message"], data["message"]["content"][0]
    ways = ["meta", "isError", "call", "message id", "error"]
    way = rng.choice(ways)
    if way == "meta":
        if "meta" in data and rng.random() < 0.5:
            del data["meta"]
        else:
            data["meta"] = next(m for m in RESULT_META if m != data.get("meta"))
    elif way == "isError":
        block["isError"] = not block.get("isError", False)
    elif way == "call":
        message["source"]["callId"] = block["toolCallId"] = f"{block['toolCallId']}-retry"
    elif way == "message id":
        message["id"] = f"{message['id']}-rewritten"
    else:
        data["error"] = {"name": "ToolTimeout", "code": "TIMEOUT"}
    return data


@candidate(Code.TOOL_REWRITE_CHANGES, "seed")
def seed_rewrite_changes_more_than_content(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a tool result is rewritten with more changed than its content: its ``meta``,
    its error flag or note, the call it answers, its message id."""
    b = _scratch(builder)
    seq = _answered_call(b, rng)
    if seq is None:
        return None
    return _seed_with(b, _rewrite(b, seq, seq, _changed_beyond_content(_elided(_data(b.state.events[seq])), rng)))


@candidate(Code.EVENT_OUTSIDE_TURN, "seed")
def seed_late_rewrite(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a tool result is rewritten after its turn ended (a pruning pass run between turns)."""
    b = _scratch(builder)
    seq = _answered_call(b, rng)
    if seq is None or not _leave_turn(b):
        return None
    return _seed_with(b, _rewrite(b, seq, seq, _elided(_data(b.state.events[seq]))))


# -- trace (INV-TRACE-1..9) ------------------------------------------------------------------------


@candidate(Code.TRACE_DATA_INVALID, "append")
def turn_start_with_trigger(builder: SessionBuilder, rng: random.Random) -> object:
    """A v0 ``turn/start`` that still carries ``trigger``."""
    b = _scratch(builder)
    if _open_turn(b) is not None:
        return None
    e = b.turn_start(commit=False)
    e["data"]["trigger"] = rng.choice(("user", "schedule"))
    return e


TRACE_EXTRA_MEMBERS = ("trigger", "model", "provider", "startedAt", "id", "meta", "status")
"""Members a harness might leave on a bracket, tool-call or chunk payload: a v0 leftover
(``trigger``), what the step's request says (``model``, ``provider``), bookkeeping of its own."""


@candidate(Code.TRACE_DATA_INVALID, "append")
def trace_payload_extra_member(builder: SessionBuilder, rng: random.Random) -> object:
    """A trace payload that is valid but for one member its type does not have, the type drawn
    first among those that may come next (a bracket, a recorded call, a chunk)."""
    b = _scratch(builder)
    step = _open_step(b)
    unstarted = _unstarted_calls(b) if step is not None else []
    makers: dict[str, Callable[[], RawEvent]] = {}
    if _open_turn(b) is None:
        makers["turn/start"] = lambda: b.turn_start(commit=False)
    elif step is None:
        makers["step/start"] = lambda: b.step_start(commit=False)
        makers["turn/end"] = lambda: b.turn_end(commit=False)
    else:
        makers["step/end"] = lambda: b.step_end(commit=False)
        makers["assistant/chunk"] = lambda: b.chunk(commit=False)
        if unstarted:
            makers["tool/call"] = lambda: b.tool_call(unstarted[0], commit=False)
    type_ = rng.choice(sorted(makers))
    e = makers[type_]()
    if isinstance(model_append_event(b.state, e), Violation):
        return None  # not even the valid form fits here (a compaction held open, a call unanswered)
    members = payload_members(str(e["type"]), CURRENT_GENERATION)
    name = rng.choice([m for m in TRACE_EXTRA_MEMBERS if m not in (*members.required, *members.optional)])
    e["data"][name] = rng.choice(("user", 1, None, True, [], {}))
    return _refused(b, "append", Code.TRACE_DATA_INVALID, e)


@candidate(Code.TRACE_DATA_INVALID, "append")
def tool_call_arguments_object(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``tool/call`` whose arguments were parsed into an object."""
    b = _scratch(builder)
    if _open_step(b) is None:
        return None
    e = b.tool_call(f"call-{rng.randrange(1000)}", commit=False)
    e["data"]["arguments"] = {"path": "a.py"}
    return e


@candidate(Code.TRACE_DATA_INVALID, "append")
def step_end_without_turn(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``step/end`` that names its step but not its turn."""
    b = _scratch(builder)
    if _open_step(b) is None:
        return None
    e = b.step_end(commit=False)
    del e["data"]["turn"]
    return e


@candidate(Code.TURN_ALREADY_OPEN, "append")
def turn_start_while_open(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``turn/start`` while a turn is still open (a turn/end was lost)."""
    b = _scratch(builder)
    return None if _open_turn(b) is None else b.turn_start(commit=False)


@candidate(Code.TURN_ALREADY_OPEN, "seed")
def seed_turn_restarted_after_splice(builder: SessionBuilder, rng: random.Random) -> object:
    """A v1 seed holding the interrupted-turn restart of released v0 writers (an inbox splice into the
    next turn, then that turn's start, the open one never ended): the edge admits it in v0 logs only
    (INV-LEGACY-6), so a v1 session refuses it wherever it enters."""
    b = _scratch(builder)
    if not _enter_turn(b) or not _leave_step(b):
        return None
    return [*b.events, *restarted_turn(b, rng.randint(1, 3))]


@candidate(Code.TURN_NUMBER, "append")
def turn_number_skipped(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``turn/start`` that skips a number, or restarts numbering at 1 after a resume."""
    b = _scratch(builder)
    if _open_turn(b) is not None:
        return None
    last = b.state.trace.last_turn
    choices = [last + 2, last + 3] + ([1] if last >= 1 else [])
    return b.event("turn/start", {"turn": rng.choice(choices)}, False)


@candidate(Code.TURN_END_MISMATCH, "append")
def turn_end_wrong_number(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``turn/end`` naming another turn than the open one."""
    b = _scratch(builder)
    turn = _open_turn(b)
    if turn is None or _open_step(b) is not None:
        return None
    other = rng.choice([turn + 1] + ([turn - 1] if turn >= 2 else []))
    return b.event("turn/end", {"turn": other, "reason": {"kind": "completed"}}, False)


@candidate(Code.TURN_END_MISMATCH, "append")
def turn_end_twice(builder: SessionBuilder, rng: random.Random) -> object:
    """A second ``turn/end`` for a turn that is already closed."""
    b = _scratch(builder)
    last = b.state.trace.last_turn
    if _open_turn(b) is not None or last == 0:
        return None
    return b.event("turn/end", {"turn": last, "reason": {"kind": "completed"}}, False)


@candidate(Code.TURN_END_REASON_INVALID, "append")
def turn_end_legacy_reason(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``turn/end`` with a v0 reason (aborted without cause, error with failure), an empty kind, or a
    released kind with a member it does not have (a v0 ``disposed`` is an owner-opaque kind in v1)."""
    b = _scratch(builder)
    if _open_turn(b) is None or _open_step(b) is not None:
        return None
    reason = rng.choice(
        (
            {"kind": "aborted"},
            {"kind": "completed", "step": 1},
            {"kind": "error", "step": 1, "failure": {"message": "overloaded", "code": "E_OVERLOADED"}},
            {"kind": ""},
        )
    )
    return b.turn_end(reason, commit=False)


@candidate(Code.STEP_OUTSIDE_TURN, "append")
def step_start_outside_turn(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``step/start`` after the turn ended."""
    b = _scratch(builder)
    if _open_turn(b) is not None:
        return None
    return b.event("step/start", {"turn": max(b.state.trace.last_turn, 1), "step": 1}, False)


@candidate(Code.STEP_OUTSIDE_TURN, "append")
def step_start_other_turn(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``step/start`` naming the next turn while this one is open."""
    b = _scratch(builder)
    turn = _open_turn(b)
    if turn is None or _open_step(b) is not None:
        return None
    return b.event("step/start", {"turn": turn + 1, "step": b.state.trace.last_step + 1}, False)


@candidate(Code.STEP_ALREADY_OPEN, "append")
def step_start_while_open(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``step/start`` while a step is still open (a step/end was lost)."""
    b = _scratch(builder)
    step = _open_step(b)
    if step is None:
        return None
    return b.event("step/start", {"turn": step[0], "step": step[1] + 1}, False)


@candidate(Code.STEP_NUMBER, "append")
def step_number_skipped(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``step/start`` that skips a number, or restarts at 1 within the turn."""
    b = _scratch(builder)
    turn = _open_turn(b)
    if turn is None or _open_step(b) is not None:
        return None
    last = b.state.trace.last_step
    return b.event("step/start", {"turn": turn, "step": rng.choice([last + 2] + ([1] if last >= 1 else []))}, False)


@candidate(Code.STEP_END_MISMATCH, "append")
def step_end_wrong_step(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``step/end`` naming another step than the open one."""
    b = _scratch(builder)
    step = _open_step(b)
    if step is None:
        return None
    other = rng.choice([step[1] + 1] + ([step[1] - 1] if step[1] >= 2 else []))
    return b.event("step/end", {"turn": step[0], "step": other}, False)


@candidate(Code.STEP_END_MISMATCH, "append")
def step_end_twice(builder: SessionBuilder, rng: random.Random) -> object:
    """A second ``step/end`` for a step that is already closed."""
    b = _scratch(builder)
    turn, last = _open_turn(b), b.state.trace.last_step
    if turn is None or _open_step(b) is not None or last == 0:
        return None
    return b.event("step/end", {"turn": turn, "step": last}, False)


@candidate(Code.STEP_STILL_OPEN, "append")
def turn_end_step_open(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``turn/end`` written while its last step is still open (every call that step asked for answered)."""
    b = _scratch(builder)
    if _open_step(b) is None or _unstarted_calls(b) or b.state.trace.step_calls:
        return None
    return b.turn_end(commit=False)


@candidate(Code.EVENT_OUTSIDE_TURN, "append")
def header_before_turn(builder: SessionBuilder, rng: random.Random) -> object:
    """A request header written before the turn that sends it has started."""
    b = _scratch(builder)
    if _open_turn(b) is not None:
        return None
    return _header_event(b, basic_header(), "initial" if b.state.header is None else "resume")


@candidate(Code.EVENT_OUTSIDE_TURN, "append")
def context_outside_turn(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``request/context`` between turns (written before the turn that sends the request started)."""
    b = _scratch(builder)
    if _open_turn(b) is not None:
        return None
    return b.event("request/context", {**PROVIDER, "contextWindow": rng.choice((128_000, 64_000))}, False)


@candidate(Code.EVENT_OUTSIDE_TURN, "append")
def late_rewrite(builder: SessionBuilder, rng: random.Random) -> object:
    """A tool-result rewrite written after its turn ended."""
    b = _scratch(builder)
    results = _tool_results(b)
    if _open_turn(b) is not None or not results:
        return None
    seq = rng.choice(results)
    return _rewrite(b, seq, seq, _elided(_data(b.state.events[seq])))


@candidate(Code.EVENT_OUTSIDE_STEP, "append")
def assistant_after_step_end(builder: SessionBuilder, rng: random.Random) -> object:
    """An assistant message written after its ``step/end``."""
    b = _scratch(builder)
    turn, last = _open_turn(b), b.state.trace.last_step
    if turn is None or _open_step(b) is not None or last == 0:
        return None
    e = _assistant(b, ())
    e["data"]["step"] = last
    return e


def _step_scoped(b: SessionBuilder, rng: random.Random) -> RawEvent | None:
    """One event of a type that names its turn and step, valid in the open step of the scratch
    builder ``b``: a chunk, an assistant message, the start of an asked call, the result of a
    started one (``None`` without an open step)."""
    if _open_step(b) is None:
        return None
    unstarted, started = open_calls(b)
    makers: list[Callable[[], RawEvent]] = [lambda: b.chunk(commit=False), lambda: _assistant(b, ())]
    if unstarted:
        makers.append(lambda: b.tool_call(rng.choice(unstarted), commit=False))
    if started:
        makers.append(lambda: b.tool_result(rng.choice(started), commit=False))
    return rng.choice(makers)()


def _elsewhere(event: RawEvent, rng: random.Random) -> RawEvent:
    """``event`` naming another turn or another step than the open one (a neighbour of either)."""
    data = event["data"]
    member = rng.choice(("turn", "step"))
    own = int(data[member])
    data[member] = rng.choice([own + 1] + ([own - 1] if own >= 2 else []))
    return event


@candidate(Code.EVENT_OUTSIDE_STEP, "append")
def step_event_names_other_step(builder: SessionBuilder, rng: random.Random) -> object:
    """A chunk, assistant message, tool call or tool result naming another turn or step than the open one."""
    b = _scratch(builder)
    event = _step_scoped(b, rng)
    return None if event is None else _elsewhere(event, rng)


@candidate(Code.EVENT_OUTSIDE_STEP, "seed")
def seed_tool_traffic_names_other_step(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which the model asks for a call and its start, or its result, names another turn or
    step than the open one (a tool runner that kept the step of an earlier request)."""
    b = _scratch(builder)
    call = _asked_call(b)
    if call is None:
        return None
    if rng.random() < 0.5:
        return _seed_with(b, _elsewhere(b.tool_call(call, commit=False), rng))
    if not _put(b, b.tool_call(call, commit=False)):
        return None
    return _seed_with(b, _elsewhere(b.tool_result(call, commit=False), rng))


def _answered_in_step(b: SessionBuilder) -> list[str]:
    """The calls answered by a ``tool/result`` in the open step."""
    return [c for e in _step_events(b) if e.type == "tool/result" and (c := tool_result_call_id(e))]


@candidate(Code.TOOL_RESULT_UNPAIRED, "append")
def result_for_unrecorded_call(builder: SessionBuilder, rng: random.Random) -> object:
    """A tool result for a call the model asked for but whose start was never recorded."""
    b = _scratch(builder)
    if _open_step(b) is None or b.state.pending_calls == 0:
        return None
    events = _step_events(b)
    asked = [c for e in events for c in tool_call_ids(e)]
    recorded = {str(_data(e)["callId"]) for e in events if e.type == "tool/call"}
    unrecorded = [c for c in asked if c not in recorded] or ["call-never-asked"]
    return b.tool_result(rng.choice(unrecorded), commit=False)


@candidate(Code.TOOL_RESULT_UNPAIRED, "append")
def result_answered_twice(builder: SessionBuilder, rng: random.Random) -> object:
    """A second tool result for a call already answered in this step, while other calls are pending."""
    b = _scratch(builder)
    if _open_step(b) is None or b.state.pending_calls == 0:
        return None
    answered = _answered_in_step(b)
    return b.tool_result(rng.choice(answered), commit=False) if answered else None


# -- tool-pairing balance (INV-COMPACT-1, -3, -5) --------------------------------------------------
# The log accepts any contiguous replacement; the balance is read by a compactor through ``cuts``.
# A ``cuts`` candidate is the request's members beyond the builder's log: ``seq``, ``region``, or
# a whole ``events`` list that replaces the log.


def _splitting_regions(b: SessionBuilder) -> dict[str, list[tuple[int, int]]]:
    """Ranges that are not legal, by which bounding cut has a call pending: the start's, the end's, or both."""
    nodes = b.state.surface.nodes
    counts = running_counts(nodes, b.state.events)
    if isinstance(counts, Violation):
        return {}
    out: dict[str, list[tuple[int, int]]] = {}
    for i in range(len(nodes)):
        for j in range(i, len(nodes)):
            kind = {(True, False): "start", (False, True): "end", (True, True): "both"}.get((counts[i] != 0, counts[j + 1] != 0))
            if kind is not None:
                out.setdefault(kind, []).append((nodes[i], nodes[j]))
    return out


@candidate(Code.REPLACE_SPLITS_TOOL_PAIR, "cuts")
def region_splits_pair(builder: SessionBuilder, rng: random.Random) -> object:
    """A compaction region whose start or end cut (or both) has a call pending: it would separate a
    call from its result.  Which cut is drawn first, so a check of one cut alone is caught as often
    as a check of the other."""
    splits = _splitting_regions(_scratch(builder))
    if not splits:
        return None
    start, end = rng.choice(splits[rng.choice(sorted(splits))])
    return {"region": {"start": start, "end": end}}


@candidate(Code.REPLACE_RANGE_INVERTED, "cuts")
def region_inverted(builder: SessionBuilder, rng: random.Random) -> object:
    """A compaction region whose start comes after its end on the surface."""
    nodes = _scratch(builder).state.surface.nodes
    if len(nodes) < 2:
        return None
    i, j = sorted(rng.sample(range(len(nodes)), 2))
    return {"region": {"start": nodes[j], "end": nodes[i]}}


@candidate(Code.REPLACE_START_NOT_ON_SURFACE, "cuts")
def region_start_off_surface(builder: SessionBuilder, rng: random.Random) -> object:
    """A compaction region starting at a seq that is not a surface node (shadowed, log-only or unwritten)."""
    b = _scratch(builder)
    if not b.state.surface.nodes:
        return None
    start = rng.choice(_shadowed_seqs(b) or _off_surface_seqs(b) or [b.next_seq])
    return {"region": {"start": start, "end": rng.choice(b.state.surface.nodes)}}


@candidate(Code.REPLACE_END_NOT_ON_SURFACE, "cuts")
def region_end_off_surface(builder: SessionBuilder, rng: random.Random) -> object:
    """A compaction region ending at a seq that is not a surface node."""
    b = _scratch(builder)
    if not b.state.surface.nodes:
        return None
    end = rng.choice(_shadowed_seqs(b) or _off_surface_seqs(b) or [b.next_seq + rng.randrange(3)])
    return {"region": {"start": rng.choice(b.state.surface.nodes), "end": end}}


def orphaning_spans(b: SessionBuilder) -> list[tuple[int, int]]:
    """The ranges a summary may replace (the log takes them) that leave a surface result without its
    call: from an assistant message that asked for calls to before the last result answering them."""
    nodes = b.state.surface.nodes
    deltas = [pairing_delta(b.state.events[seq]) for seq in nodes]

    def orphans(i: int, j: int) -> bool:
        count = 0
        for delta in (*deltas[:i], 0, *deltas[j + 1 :]):
            count += delta
            if count < 0:
                return True
        return False

    return [(nodes[i], nodes[j]) for i in range(len(nodes)) if deltas[i] > 0 for j in range(i, len(nodes)) if orphans(i, j)]


def _orphaning_compaction(b: SessionBuilder, rng: random.Random) -> RawEvent | None:
    """A summary the log accepts over one of the :func:`orphaning_spans`."""
    spans = orphaning_spans(b)
    if not spans:
        return None
    summary = b.compaction(*rng.choice(spans), commit=False)
    return None if isinstance(model_append_event(b.state, summary), Violation) else summary


@candidate(Code.TOOL_PAIRING_NEGATIVE, "cuts")
def cuts_of_orphaned_results(builder: SessionBuilder, rng: random.Random) -> object:
    """The cuts of a log whose compaction orphaned results: the log accepts it, but its surface has no balance."""
    b = _scratch(builder)
    summary = _orphaning_compaction(b, rng)
    if summary is None:
        return None
    ask: dict[str, Any] = {"events": [*b.events, summary]}
    choice = rng.randrange(3)
    if choice == 1:
        ask["seq"] = rng.choice(b.state.surface.nodes)
    elif choice == 2:
        ask["region"] = {"start": b.state.surface.nodes[0], "end": b.state.surface.nodes[-1]}
    return ask


@candidate(Code.NOT_ON_SURFACE, "cuts")
def cuts_off_surface(builder: SessionBuilder, rng: random.Random) -> object:
    """A balance query for a seq that is not on the surface: shadowed, log-only, or not yet written."""
    b = _scratch(builder)
    return {"seq": rng.choice(_shadowed_seqs(b) or _off_surface_seqs(b) or [b.next_seq])}


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


# -- legacy forms, on v1 paths and at the v0 edge (INV-LEGACY) -------------------------------------


def _delta_data() -> dict[str, Any]:
    return {"system": {"keepStart": 1, "keepEnd": 0, "insert": ["Be terse."]}}


def _v0_log(builder: SessionBuilder, rng: random.Random, extra: RawEvent, version: int = 0) -> dict[str, Any]:
    """The builder's log as a v0 log (with v0 ``turn/start`` triggers), plus ``extra`` at the end."""
    events = builder.events
    for event in events:
        if event["type"] == "turn/start" and rng.random() < 0.5:
            event["data"]["trigger"] = {"kind": "user"}
    return {"header": {**STORED_HEADER, "version": version}, "events": [*events, extra]}


@candidate(Code.LEGACY_HEADER_DELTA, "append")
def header_delta(builder: SessionBuilder, rng: random.Random) -> RawEvent:
    """A ``request/header-delta`` event from the retired delta codec."""
    return _scratch(builder).event("request/header-delta", _delta_data(), False)


@candidate(Code.LEGACY_HEADER_DELTA, "seed")
def seed_header_delta(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed taken from an old log that still holds a header delta."""
    return [*builder.events, header_delta(builder, rng)]


@candidate(Code.LEGACY_HEADER_DELTA, "upgrade")
def v0_header_delta(builder: SessionBuilder, rng: random.Random) -> object:
    """A v0 log holding a ``request/header-delta``."""
    return _v0_log(builder, rng, header_delta(builder, rng))


@candidate(Code.LEGACY_FALLBACK_REASON, "append")
def header_fallback_reason(builder: SessionBuilder, rng: random.Random) -> object:
    """A full snapshot with the delta codec's ``fallback`` reason."""
    b = _in_turn(builder)
    return None if b is None else _header_event(b, basic_header(), "fallback")


@candidate(Code.LEGACY_FALLBACK_REASON, "upgrade")
def v0_fallback(builder: SessionBuilder, rng: random.Random) -> object:
    """A v0 log holding a ``fallback`` full header."""
    return _v0_log(builder, rng, _header_event(_scratch(builder), basic_header(), "fallback"))


@candidate(Code.LEGACY_MODE_SET, "append")
def mode_set(builder: SessionBuilder, rng: random.Random) -> RawEvent:
    """A retired ``mode/set`` event."""
    return _scratch(builder).event("mode/set", {"mode": rng.choice(("plan", "default"))}, False)


@candidate(Code.LEGACY_MODE_SET, "upgrade")
def v0_mode_set(builder: SessionBuilder, rng: random.Random) -> object:
    """A v0 log holding a ``mode/set``."""
    return _v0_log(builder, rng, mode_set(builder, rng))


@candidate(Code.LEGACY_MODE_SET, "load")
def jsonl_v0_mode_set(builder: SessionBuilder, rng: random.Random) -> object:
    """A v0 log holding a ``mode/set``: the edge refuses it on load."""
    return _text([*_jsonl_lines(builder, {**STORED_HEADER, "version": 0}), json.dumps(mode_set(builder, rng))])


@candidate(Code.LEGACY_UNKNOWN_TYPE, "upgrade")
def v0_ignorable_unknown(builder: SessionBuilder, rng: random.Random) -> object:
    """A v0 log holding an ignorable event outside the frozen v0 inventory."""
    e = later_format_event(builder, rng)
    assert isinstance(e, dict)
    return _v0_log(builder, rng, {**e, "ignorable": True})


@candidate(Code.FORMAT_VERSION_UNSUPPORTED, "upgrade")
def v0_newer_version(builder: SessionBuilder, rng: random.Random) -> object:
    """A log of a later format version handed to the v0 edge."""
    return _v0_log(builder, rng, _benign(_scratch(builder), rng), version=rng.choice((2, 3)))


# -- scenes: the valid events a rule needs before its fault can be shown ---------------------------
#
# The builders below cover the payload table (INV-PAY), the relationships between events (INV-REL)
# and the v0 source (INV-LEGACY-9).  The relationship rules run last in the model's check order, so
# each of those candidates is otherwise valid where it stands.  Where a rule bites only in a state
# the builder may not be in (an open compaction, a scheduled retry, a started programmatic call), a
# ``seed`` or ``load`` candidate writes the valid events that lead there on a scratch builder, then
# the fault.


def _put(b: SessionBuilder, raw: RawEvent) -> bool:
    """Commit ``raw`` on the scratch builder ``b`` when the model accepts it there."""
    if isinstance(model_append_event(b.state, raw), Violation):
        return False
    b.commit(raw)
    return True


def _compaction_open(b: SessionBuilder) -> bool:
    return b.state.relations.compaction is not None


def _enter_turn(b: SessionBuilder) -> bool:
    """Open a turn on the scratch builder ``b`` with the user's message, when none is open; ``False``
    when that would cross an open compaction."""
    if b.state.trace.open_turn is not None:
        return True
    if _compaction_open(b) or not _put(b, b.turn_start(commit=False)):
        return False
    return _put(b, b.user_message("Please fix the failing test in parser.py.", commit=False))


def _enter_step(b: SessionBuilder) -> bool:
    """Open a step on the scratch builder ``b`` (a turn with a user message first, when none is open)
    with a request header in force; ``False`` when that would cross an open compaction."""
    if b.state.trace.open_step is None and not (_enter_turn(b) and _put(b, b.step_start(commit=False))):
        return False
    if b.request_provider() is None:
        return _put(b, b.request_header(basic_header(), "initial" if b.state.header is None else "resume", commit=False))
    return True


def _leave_turn(b: SessionBuilder) -> bool:
    """Close the open turn on the scratch builder ``b`` (answering what its step asked for);
    ``False`` when that would cross an open compaction."""
    return b.state.trace.open_turn is None or (not _compaction_open(b) and _close_turn(b))


def _close_turn(b: SessionBuilder) -> bool:
    """End the open turn on the scratch builder ``b``: answer what its open step asked for (a result
    for each started call, the repair record for each call never started), end the step, end the turn."""
    return _leave_step(b) and _put(b, b.turn_end(commit=False))


def _leave_step(b: SessionBuilder) -> bool:
    """End the open step on the scratch builder ``b``, if one is open, answering what it asked for."""
    if b.state.trace.open_step is None:
        return True
    unstarted, started = open_calls(b)
    for call in unstarted:
        if not _put(b, b.not_started_result(call, commit=False)):
            return False
    for call in started:
        if not _put(b, b.tool_result(call, commit=False)):
            return False
    return _put(b, b.step_end(commit=False))


def _advertised(b: SessionBuilder, started: bool | None = None) -> list[str]:
    """The calls advertised in the open step and not yet answered (only the started ones, or only the
    unstarted ones, when ``started`` says so), as the relationship rules track them."""
    out = []
    for lifecycle in b.state.relations.tools:
        call = lifecycle.call
        if not (isinstance(call, tuple) and len(call) == 2 and call[0] == "string"):
            continue
        if isinstance(call[1], str) and (started is None or lifecycle.started == started):
            out.append(call[1])
    return out


def _asked_call(b: SessionBuilder) -> str | None:
    """On the scratch builder ``b``: open a step and commit an assistant message asking for one new
    call; its id, or ``None`` when the state does not allow it."""
    if not _enter_step(b):
        return None
    call = f"call-{b.next_seq}"
    return call if _put(b, b.assistant_message("Let me read the parser.", [call], commit=False)) else None


def _started_call(b: SessionBuilder) -> str | None:
    """On the scratch builder ``b``: a call asked for (see :func:`_asked_call`) and started; its id."""
    call = _asked_call(b)
    return call if call is not None and _put(b, b.tool_call(call, commit=False)) else None


OPENINGS = ("compaction", "crossed-compaction", "turn", "step", "asked-call", "started-call", "sub-call", "command")
"""What a valid seed may leave open at its end (:func:`opened_scene`)."""


def opened_scene(builder: SessionBuilder, what: str, rng: random.Random) -> list[RawEvent] | None:
    """The session so far with ``what`` left open at its end (a compaction, one a turn boundary
    crossed, a turn, a step, a call asked for or started, a PTC sub-call, a command), built on a
    copy and valid; ``None`` when the session cannot hold it.  A seed of it puts the end-of-seed
    marker in the middle of what was under way: the rules for what the marker retires, and for
    what may follow it, are then decided on every kind of open thing."""
    b = _scratch(builder)
    opened = {
        "compaction": lambda: _compaction_opened(b, rng, command=rng.random() < 0.5),
        "crossed-compaction": lambda: _crossed(b, rng),
        "turn": lambda: _enter_turn(b),
        "step": lambda: _enter_step(b),
        "asked-call": lambda: _asked_call(b) is not None,
        "started-call": lambda: _started_call(b) is not None,
        "sub-call": lambda: _ptc_started(b) is not None,
        "command": lambda: _put(b, _command_run(b, f"cmd-{b.next_seq}")),
    }[what]()
    return list(b.events) if opened else None


def _seed_with(b: SessionBuilder, *faults: RawEvent) -> list[RawEvent]:
    """The scratch builder's log followed by ``faults``: a seed candidate."""
    return [*b.events, *faults]


def _stored_with(b: SessionBuilder, *faults: RawEvent, header: dict[str, Any] | None = None) -> str:
    """The scratch builder's log as a stored v1 log, followed by ``faults``: a load candidate."""
    return _text([*_jsonl_lines(b, header), *(json.dumps(f) for f in faults)])


def _as_stored(seed: object) -> str | None:
    """A seed candidate (an event list ending with its fault) as a stored v1 log: the same scene and
    fault on the load path (``None`` stays ``None``)."""
    if not isinstance(seed, list):
        return None
    return _text([json.dumps(STORED_HEADER), *(json.dumps(event) for event in seed)])


def cuts_answer(state: SessionState, ask: Mapping[str, Any], balance: Any) -> object:
    """What ``cuts`` answers for ``ask`` (its members beyond the log) after ``state``, in the op's
    order: the log (a whole session), the balance at every cut, then ``seq``, then ``region``.
    ``balance`` is the compaction module, contracted or plain."""
    if "events" in ask:
        folded = model_fold_session(ask["events"])
        if isinstance(folded, Violation):
            return folded
        state = folded
    nodes, events = state.surface.nodes, state.events
    answer: object = balance.cut_balances(nodes, events)
    if not isinstance(answer, Violation) and "seq" in ask:
        answer = balance.balanced_around(nodes, events, ask["seq"])
    if not isinstance(answer, Violation) and "region" in ask:
        answer = balance.region_shadowed(nodes, events, ask["region"]["start"], ask["region"]["end"])
    return answer


def _model_answer(builder: SessionBuilder, context: Context, value: Any) -> object:
    """The model's answer to ``value`` in ``context`` (what :func:`submit` answers, without the contracts)."""
    if context == "append":
        return model_append_event(builder.state, value)
    if context == "seed":
        return model_seed_session(value)
    if context == "load":
        return model_load_session(value)
    if context == "upgrade":
        header, events = freeze(value["header"]), tuple(freeze(e) for e in value["events"])
        assert isinstance(header, Mapping)
        return model_upgrade_v0(StoredLog(header, events))  # type: ignore[arg-type]
    return cuts_answer(builder.state, value, model_compaction)


def _refused(builder: SessionBuilder, context: Context, code: Code, value: Any) -> Any:
    """``value`` when the model refuses it with ``code`` in ``context``, else ``None``."""
    answer = _model_answer(builder, context, value)
    return value if isinstance(answer, Violation) and answer.code is code else None


# -- tool lifecycles (INV-REL-1..5) ----------------------------------------------------------------


def _misrecorded(call: RawEvent, rng: random.Random) -> RawEvent:
    """A ``tool/call`` that names its call but not as the model asked for it: another tool, or the
    arguments re-serialised (or dropped) by the harness."""
    data = call["data"]
    name, arguments = data["name"], data["arguments"]
    variants: list[tuple[str, str]] = [(other, arguments) for other in ("write_file", "bash", "read_file") if other != name]
    try:
        parsed = json.loads(arguments)
    except ValueError:
        parsed = None
    if parsed is not None:
        for text in (json.dumps(parsed, separators=(",", ":")), json.dumps(parsed, indent=2), "{}"):
            if text != arguments:
                variants.append((name, text))
    data["name"], data["arguments"] = rng.choice(variants)
    return call


@candidate(Code.TOOL_CALL_NOT_ADVERTISED, "append")
def tool_call_not_as_advertised(builder: SessionBuilder, rng: random.Random) -> object:
    """The ``tool/call`` of a call the open step asked for, naming another tool or carrying the
    arguments re-serialised: the log would record running something the model did not ask for."""
    b = _scratch(builder)
    unstarted = _advertised(b, started=False)
    if _open_step(b) is None or not unstarted:
        return None
    return _misrecorded(b.tool_call(rng.choice(unstarted), commit=False), rng)


@candidate(Code.TOOL_CALL_NOT_ADVERTISED, "append")
def tool_call_recorded_again(builder: SessionBuilder, rng: random.Random) -> object:
    """A second ``tool/call`` for a call that already started (a retried write), or for one this step
    already answered."""
    b = _scratch(builder)
    if _open_step(b) is None:
        return None
    calls = sorted(set(_advertised(b, started=True)) | set(_answered_in_step(b)))
    return b.tool_call(rng.choice(calls), commit=False) if calls else None


@candidate(Code.TOOL_CALL_NOT_ADVERTISED, "seed")
def seed_tool_call_not_as_advertised(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed whose last step asks for a call and records starting it under another name or arguments."""
    b = _scratch(builder)
    call = _asked_call(b)
    return None if call is None else _seed_with(b, _misrecorded(b.tool_call(call, commit=False), rng))


@candidate(Code.TOOL_CALL_ID_REPEATED, "append")
def assistant_repeats_pending_call(builder: SessionBuilder, rng: random.Random) -> object:
    """An assistant message (the answer to a re-sent request) asking again for a call id still pending
    in the step, alone or beside a new call."""
    b = _scratch(builder)
    pending = _advertised(b)
    if _open_step(b) is None or not pending:
        return None
    repeated = rng.choice(pending)
    calls = rng.choice(((repeated,), (f"call-{b.next_seq}", repeated)))
    return b.assistant_message("Reading the file again.", calls, commit=False)


@candidate(Code.TOOL_CALL_ID_REPEATED, "seed")
def seed_assistant_repeats_pending_call(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed whose last step asks for a call (maybe starts it) and then asks for the same id again."""
    b = _scratch(builder)
    call = _asked_call(b)
    if call is None or (rng.random() < 0.5 and not _put(b, b.tool_call(call, commit=False))):
        return None
    return _seed_with(b, b.assistant_message("Reading the file again.", [call], commit=False))


def _unadvertised_repair(b: SessionBuilder, rng: random.Random) -> RawEvent | None:
    """A crash-repair result in the open step for a call it does not leave pending: one it answered,
    one an earlier step asked for, or one nobody asked for (``None`` without a pending call, where
    the tool-pairing balance refuses first)."""
    if _open_step(b) is None or b.state.pending_calls == 0:
        return None
    pending = set(_advertised(b))
    earlier = [c for e in b.state.events for c in tool_call_ids(e) if c not in pending]
    return b.not_started_result(rng.choice([*earlier[-3:], "call-never-asked"]), commit=False)


@candidate(Code.TOOL_RESULT_UNADVERTISED, "append")
def repair_result_for_unadvertised_call(builder: SessionBuilder, rng: random.Random) -> object:
    """The "never started" repair result written for a call the open step does not leave pending."""
    return _unadvertised_repair(_scratch(builder), rng)


@candidate(Code.TOOL_RESULT_UNADVERTISED, "seed")
def seed_repair_result_for_unadvertised_call(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed whose last step asks for a call, then holds a repair result for another call."""
    b = _scratch(builder)
    if _asked_call(b) is None:
        return None
    fault = _unadvertised_repair(b, rng)
    return None if fault is None else _seed_with(b, fault)


def _inexact_repair(b: SessionBuilder, call: str, rng: random.Random) -> RawEvent:
    """A result for ``call`` (asked for, never started) that looks like crash repair's but is not it."""
    event = b.not_started_result(call, commit=False)
    data = event["data"]
    block = data["message"]["content"][0]
    how = rng.choice(("id", "text", "is-error", "error-name", "sources"))
    if how == "id":
        data["message"]["id"] = f"interrupted-tool-result-{call}"
    elif how == "text":
        block["content"] = [text_block("Tool execution was interrupted.")]
    elif how == "is-error":
        block["isError"] = False
    elif how == "error-name":
        data["error"]["name"] = "ToolInterruptedError"
    else:
        asked = [e.seq for e in b.state.events if call in tool_call_ids(e)]
        event["sourceEventSeqs"] = asked[-1:] or [b.next_seq - 1]
    return event


@candidate(Code.TOOL_RESULT_NOT_EXACT_REPAIR, "append")
def inexact_repair_result(builder: SessionBuilder, rng: random.Random) -> object:
    """A result for a call asked for but never started that is not the exact repair record (another
    message id, text, flag or error name, or citing the request)."""
    b = _scratch(builder)
    unstarted = _advertised(b, started=False)
    if _open_step(b) is None or not unstarted:
        return None
    return _inexact_repair(b, rng.choice(unstarted), rng)


@candidate(Code.TOOL_RESULT_NOT_EXACT_REPAIR, "seed")
def seed_inexact_repair_result(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed whose last step asks for a call and answers it, unstarted, with an inexact repair record."""
    b = _scratch(builder)
    call = _asked_call(b)
    return None if call is None else _seed_with(b, _inexact_repair(b, call, rng))


@candidate(Code.TOOL_CALL_UNRESOLVED, "append")
def step_end_with_call_unanswered(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``step/end`` while a call the step asked for is unanswered (the harness moved on after a tool hung)."""
    b = _scratch(builder)
    return b.step_end(commit=False) if _open_step(b) is not None and _advertised(b) else None


@candidate(Code.TOOL_CALL_UNRESOLVED, "seed")
def seed_step_end_with_call_unanswered(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed whose last step asks for a call (maybe starts it) and ends without its result."""
    b = _scratch(builder)
    call = _asked_call(b)
    if call is None or (rng.random() < 0.5 and not _put(b, b.tool_call(call, commit=False))):
        return None
    return _seed_with(b, b.step_end(commit=False))


# -- compactions (INV-REL-6..12) -------------------------------------------------------------------


def _compaction_opened(b: SessionBuilder, rng: random.Random, command: bool = False) -> bool:
    """On the scratch builder ``b``: open a compaction (started by a ``/compact`` command when
    ``command``) unless one is open; ``False`` when one is open with a turn boundary held against it."""
    open_ = b.state.relations.compaction
    if open_ is not None:
        return open_.crossed_at is None
    return _earlier_compaction(b, rng.choice(EARLIER_COMPACTIONS), rng.random() < 0.5) and _compaction_started(b, command)


def _compaction_started(b: SessionBuilder, command: bool) -> bool:
    """On the scratch builder ``b``: start a compaction, by a ``/compact`` command when ``command``."""
    command_id = None
    if command:
        command_id = f"cmd-{b.next_seq}"
        if not _put(b, b.event("command/run", {"commandId": command_id, "name": "compact", "source": {"kind": "user"}}, False)):
            return False
    return _put(b, b.compaction_start(command_id, commit=False))


EARLIER_COMPACTIONS = ("none", "none", "summarised", "failed", "summary-failed")
"""What the scene holds before the compaction a candidate faults: nothing, or a whole earlier
compaction (a success, a failure, a failure after its summary), so that no rule's state may leak
from one compaction into the next."""


def _earlier_compaction(b: SessionBuilder, kind: str, command: bool) -> bool:
    """On the scratch builder ``b``: a whole compaction of ``kind`` (``none`` adds nothing); ``False``
    when the scene cannot hold it."""
    if kind == "none":
        return True
    if not _compaction_started(b, command):
        return False
    if kind != "failed" and not (_summarisable(b) and _put(b, b.compaction_summary(*b.legal_ranges()[-1], commit=False))):
        return False
    return _put(b, b.compaction_end(None if kind == "summarised" else "the summary request failed", commit=False))


def _summarisable(b: SessionBuilder) -> bool:
    """Give the scratch builder ``b`` a surface a summary can cover (a user message when it has none)."""
    return bool(b.legal_ranges()) or (_put(b, b.user_message("Keep going.", commit=False)) and bool(b.legal_ranges()))


COMPACTION_STAGES = ("started", "summarised", "checkpointed")
"""How far the open compaction has got when a rule about it is put to the test: a lock or an owner
check a port drops after the summary or the checkpoint holds at every stage until the end."""


def _compaction_at(b: SessionBuilder, stage: str) -> bool:
    """On the scratch builder ``b``, whose compaction is open: take it on to ``stage``
    (:data:`COMPACTION_STAGES`); ``False`` when it is past it or the scene cannot hold it."""
    open_ = b.open_compaction()
    if open_ is None or (open_.summarized and stage == "started"):
        return False
    summarised = stage == "started" or open_.summarized
    if not (summarised or (_summarisable(b) and _put(b, b.compaction_summary(*b.legal_ranges()[-1], commit=False)))):
        return False
    if stage == "checkpointed":
        ranges = b.legal_ranges()
        return bool(ranges) and _put(b, _checkpoint(b, *ranges[-1]))
    return True


@candidate(Code.COMPACTION_OVERLAP, "append")
def second_compaction_start(builder: SessionBuilder, rng: random.Random) -> object:
    """A second compaction started (a repeated ``/compact``) while the session's compaction runs,
    whether or not it has its summary yet."""
    b = _scratch(builder)
    open_ = b.state.relations.compaction
    return b.compaction_start(commit=False) if open_ is not None and open_.crossed_at is None else None


@candidate(Code.COMPACTION_OVERLAP, "seed")
def seed_second_compaction_start(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a second compaction starts (a repeated ``/compact``) while the first still
    runs: just started, summarised, or checkpointed."""
    stage = rng.choice(COMPACTION_STAGES)
    b = _scratch(builder)
    if not _compaction_opened(b, rng, command=rng.random() < 0.5) or not _compaction_at(b, stage):
        return None
    return _seed_with(b, b.compaction_start(commit=False))


@candidate(Code.COMPACTION_OVERLAP, "load")
def jsonl_second_compaction_start(builder: SessionBuilder, rng: random.Random) -> object:
    """A stored log in which a second compaction starts while the first still runs (at any stage)."""
    stage = rng.choice(COMPACTION_STAGES)
    b = _scratch(builder)
    if not _compaction_opened(b, rng) or not _compaction_at(b, stage):
        return None
    return _stored_with(b, b.compaction_start(commit=False))


@candidate(Code.COMPACTION_TURN_MISMATCH, "append")
def compaction_start_wrong_owner(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``compaction/start`` owned by the wrong turn: ``null`` (or the next turn) inside a turn, the
    turn that just ended (or the next one) between turns."""
    b = _scratch(builder)
    if _compaction_open(b):
        return None
    trace = b.state.trace
    owners: list[int | None]
    if trace.open_turn is not None:
        owners = [None, trace.open_turn + 1, *([trace.open_turn - 1] if trace.open_turn > 1 else [])]
    else:
        owners = [trace.last_turn + 1, *([trace.last_turn] if trace.last_turn >= 1 else [])]
    return b.event("compaction/start", {"compactionId": f"compaction-{b.next_seq}", "turn": rng.choice(owners)}, False)


@candidate(Code.COMPACTION_TURN_MISMATCH, "seed")
def seed_compaction_end_other_turn(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a compaction ends naming another turn than the one that owns it."""
    b = _scratch(builder)
    if b.state.relations.compaction is not None or not _compaction_opened(b, rng):
        return None
    end = b.compaction_end("The summary request failed." if rng.random() < 0.5 else None, commit=False)
    owner, trace = end["data"]["turn"], b.state.trace
    end["data"]["turn"] = trace.last_turn + 1 if owner is None else rng.choice((None, owner + 1))
    return _seed_with(b, end)


@candidate(Code.COMPACTION_NOT_OWNED, "append")
def compaction_end_without_start(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``compaction/end`` when no compaction is open: written twice, or for a compaction never started."""
    b = _scratch(builder)
    if _compaction_open(b):
        return None
    started = [str(_data(e)["compactionId"]) for e in b.state.events if e.type == "compaction/start"]
    compaction = rng.choice([*started[-1:], f"compaction-{max(b.next_seq - 3, 0)}"])
    return b.event("compaction/end", {"compactionId": compaction, "turn": b.state.trace.open_turn}, False)


@candidate(Code.COMPACTION_NOT_OWNED, "append")
def checkpoint_without_compaction(builder: SessionBuilder, rng: random.Random) -> object:
    """A compaction checkpoint (a replacement from the ``compact`` plugin) over a legal range while no
    compaction is open."""
    b = _scratch(builder)
    picked = _legal_range(b, rng)
    if picked is None or _compaction_open(b):
        return None
    event = b.compaction(*picked, commit=False)
    event["data"]["source"] = {"kind": "plugin", "plugin": "compact", "compactionId": f"compaction-{b.next_seq}"}
    return event


def _checkpoint(b: SessionBuilder, start: int, end: int) -> RawEvent:
    """The open compaction's checkpoint: its summary replacing ``start..end``, from the ``compact``
    plugin, naming the compaction (and the command that started it)."""
    open_ = b.open_compaction()
    assert open_ is not None, "a checkpoint belongs to an open compaction"
    event = b.compaction(start, end, commit=False)
    source: RawEvent = {"kind": "plugin", "plugin": "compact", "compactionId": open_.compaction_id}
    if open_.source_command_id is not None:
        source["sourceCommandId"] = open_.source_command_id
    event["data"]["source"] = source
    return event


MISOWNINGS = ("another compaction", "the command left out", "another command")
"""How a compaction step names another compaction than the open one (without a command, the
command's two become one: a command the compaction was not started by)."""


def _misowned(names: RawEvent, b: SessionBuilder, how: str) -> None:
    """Make ``names`` (the members naming a compaction) name another one than the open one as ``how``
    (:data:`MISOWNINGS`): another ``compactionId``, or the ``sourceCommandId`` dropped, added or changed."""
    if how == "another compaction":
        names["compactionId"] = f"compaction-{b.next_seq}"
    elif how == "the command left out" and "sourceCommandId" in names:
        del names["sourceCommandId"]
    else:
        names["sourceCommandId"] = f"cmd-{b.next_seq}"


def _step_of_another(b: SessionBuilder, step: str, how: str) -> RawEvent | None:
    """On the scratch builder ``b``, whose compaction is open: its ``step`` (``summary``,
    ``checkpoint`` or ``end``; summarised first when the step needs it) naming another compaction
    as ``how`` (:data:`MISOWNINGS`); ``None`` when the surface leaves nothing to summarise."""
    open_ = b.state.relations.compaction
    assert open_ is not None, "a compaction step belongs to an open compaction"
    if step != "summary" and not open_.summarized:
        ranges = b.legal_ranges()
        if not ranges or not _put(b, b.compaction_summary(*ranges[-1], commit=False)):
            return None
    if step == "end":
        fault = b.compaction_end(commit=False)
        names = fault["data"]
    else:
        ranges = b.legal_ranges()
        if not ranges:
            return None
        if step == "summary":
            fault = b.compaction_summary(*ranges[-1], commit=False)
            names = fault["data"]
        else:
            fault = _checkpoint(b, *ranges[-1])
            names = fault["data"]["source"]
    _misowned(names, b, how)
    return fault


@candidate(Code.COMPACTION_NOT_OWNED, "seed")
def seed_compaction_step_of_another(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which the open compaction's summary, checkpoint or end names another compaction
    (another id, or not the command that started it, or a command that did not).

    What the fault is (which step, which way, started by a command or not) is drawn before the
    scene, so that the variant walk (:mod:`~sessionlog_spec.suite.agent.variants`) combines those
    choices first."""
    step = rng.choice(("summary", "checkpoint", "end"))
    how = rng.choice(MISOWNINGS)
    command = rng.random() < 0.5
    b = _scratch(builder)
    if _compaction_open(b) or not _summarisable(b) or not _compaction_opened(b, rng, command):
        return None
    fault = _step_of_another(b, step, how)
    return None if fault is None else _seed_with(b, fault)


@candidate(Code.COMPACTION_NOT_OWNED, "append")
def compaction_step_of_another(builder: SessionBuilder, rng: random.Random) -> object:
    """The session's open compaction's next step (its summary, else a checkpoint or its end) naming
    another compaction: another id, or not the command that started it, or a command that did not."""
    how = rng.choice(MISOWNINGS)
    b = _scratch(builder)
    open_ = b.state.relations.compaction
    if open_ is None or open_.crossed_at is not None:
        return None
    step = "summary"
    if open_.summarized:
        step = "checkpoint" if b.legal_ranges() and rng.random() < 0.5 else "end"
    return _step_of_another(b, step, how)


@candidate(Code.COMPACTION_SUMMARY_REPEATED, "append")
def second_summary(builder: SessionBuilder, rng: random.Random) -> object:
    """The open compaction, summarised already, summarised again (a retried summary request logged twice)."""
    b = _scratch(builder)
    open_ = b.open_compaction()
    ranges = b.legal_ranges() if open_ is not None and open_.summarized else ()
    return b.compaction_summary(*rng.choice(ranges), commit=False) if ranges else None


@candidate(Code.COMPACTION_SUMMARY_REPEATED, "seed")
def seed_second_summary(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which the open compaction is summarised twice (a retried summary request logged again)."""
    b = _scratch(builder)
    if _compaction_open(b) or not _summarisable(b) or not _compaction_opened(b, rng):
        return None
    if not _put(b, b.compaction_summary(*rng.choice(b.legal_ranges()), commit=False)):
        return None
    return _seed_with(b, b.compaction_summary(*rng.choice(b.legal_ranges()), commit=False))


@candidate(Code.COMPACTION_SUMMARY_MISSING, "seed")
def seed_compaction_end_without_summary(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a compaction ends as a success without having been summarised."""
    b = _scratch(builder)
    open_ = b.open_compaction()
    if (open_ is not None and open_.summarized) or not _compaction_opened(b, rng, command=rng.random() < 0.5):
        return None
    return _seed_with(b, b.compaction_end(commit=False))


@candidate(Code.COMPACTION_SUMMARY_MISSING, "load")
def jsonl_compaction_end_without_summary(builder: SessionBuilder, rng: random.Random) -> object:
    """A stored log in which a compaction ends as a success without having been summarised."""
    b = _scratch(builder)
    if _compaction_open(b) or not _compaction_opened(b, rng):
        return None
    return _stored_with(b, b.compaction_end(commit=False))


def _crossed(b: SessionBuilder, rng: random.Random) -> bool:
    """On the scratch builder ``b``: open a compaction and cross it with a turn boundary (between
    turns: a ``turn/start``; in a turn: the turn's end)."""
    if _compaction_open(b) or not _compaction_opened(b, rng):
        return False
    if b.state.trace.open_turn is None:
        return _put(b, b.turn_start(commit=False))
    return _close_turn(b)


@candidate(Code.COMPACTION_CROSSES_TURN, "seed")
def seed_compaction_across_turn(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a compaction runs across a turn boundary and then ends."""
    b = _scratch(builder)
    if not _crossed(b, rng):
        return None
    return _seed_with(b, b.compaction_end(rng.choice((None, "Cancelled when the turn changed.")), commit=False))


@candidate(Code.COMPACTION_CROSSES_TURN, "load")
def jsonl_compaction_across_turn(builder: SessionBuilder, rng: random.Random) -> object:
    """A stored log that ends with a compaction still open across a turn boundary (no end-seed retired it)."""
    b = _scratch(builder)
    return _stored_with(b) if _crossed(b, rng) else None


def _span(b: SessionBuilder, rng: random.Random) -> list[int] | None:
    """Seqs that are no exact span of the current surface: a span with a node left out, a node a
    replacement already shadowed, or a log-only event counted in."""
    nodes = list(b.state.surface.nodes)
    spans: list[list[int]] = []
    if len(nodes) >= 3:
        i = rng.randrange(len(nodes) - 2)
        spans.append([nodes[i], nodes[rng.randrange(i + 2, len(nodes))]])
    shadowed = _shadowed_seqs(b)
    if shadowed:
        spans.append([rng.choice(shadowed)])
    log_only = [(i, s) for i in range(len(nodes) - 1) for s in range(nodes[i] + 1, nodes[i + 1]) if s not in nodes]
    if log_only:
        i, s = rng.choice(log_only)
        spans.append([nodes[i], s, nodes[i + 1]])
    return rng.choice(spans) if spans else None


def _span_members(seqs: list[int]) -> dict[str, Any]:
    return {"shadowedRange": {"start": seqs[0], "end": seqs[-1]}, "shadowedSeqs": seqs, "shadowedTokenCount": 40 * len(seqs)}


@candidate(Code.COMPACTION_SPAN_NOT_ON_SURFACE, "append")
def prune_span_off_surface(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``compaction/prune`` planned on a stale or miscounted view: its seqs leave out a node, name one
    already shadowed, or count a log-only event in."""
    b = _scratch(builder)
    seqs = _span(b, rng)
    return None if seqs is None else b.event("compaction/prune", _span_members(seqs), False)


@candidate(Code.COMPACTION_SPAN_NOT_ON_SURFACE, "seed")
def seed_summary_span_off_surface(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which the open compaction's summary prices seqs that are no exact span of the surface."""
    b = _scratch(builder)
    if _compaction_open(b) or not _compaction_opened(b, rng):
        return None
    seqs = _span(b, rng)
    nodes = b.state.surface.nodes
    if seqs is None or not nodes:
        return None
    summary = b.compaction_summary(nodes[0], nodes[0], commit=False)
    summary["data"].update(_span_members(seqs))
    return _seed_with(b, summary)


# -- retries (INV-REL-13..18) ----------------------------------------------------------------------


def _retry_data(
    turn: int, step: int, provider: str, *, attempt: int = 1, retry_id: str = "retry-1", policy: str = "transient"
) -> RawEvent:
    """An ``llm/retry`` payload: the ``attempt`` of the ``policy`` chain ``retry_id`` after an overloaded provider."""
    mode = "normal" if attempt <= 5 else "always"
    data: RawEvent = {"retryId": retry_id, "turn": turn, "step": step, "provider": provider, "mode": mode, "policyKey": policy}
    data["retry"] = attempt
    if mode == "normal":
        data["maxRetries"] = 5
    data.update(
        delayMs=min(500 * 2 ** (attempt - 1), 60_000),
        failure={"message": "The server is overloaded.", "code": "PROVIDER_OVERLOADED", "status": 503},
    )
    return data


def _retry_step(b: SessionBuilder) -> int:
    """The step a retry names now: the open one, else the one that ended last in the open turn."""
    trace = b.state.trace
    return trace.open_step if trace.open_step is not None else b.state.relations.ended_steps


@candidate(Code.RETRY_OUTSIDE_STEP, "append")
def retry_outside_step(builder: SessionBuilder, rng: random.Random) -> object:
    """An ``llm/retry`` logged after its turn ended, or naming a step (or turn) that is not the current one."""
    b = _scratch(builder)
    trace = b.state.trace
    provider = b.request_provider() or PROVIDER["provider"]
    if trace.open_turn is None:
        turn, step = max(trace.last_turn, 1), max(trace.last_step, 1)
    elif rng.random() < 0.5:
        turn, step = trace.open_turn, _retry_step(b) + 1
    else:
        turn, step = trace.open_turn + 1, 1
    return b.event("llm/retry", _retry_data(turn, step, provider, retry_id=f"retry-{b.next_seq}"), False)


@candidate(Code.RETRY_PROVIDER_MISMATCH, "append")
def retry_other_provider(builder: SessionBuilder, rng: random.Random) -> object:
    """An ``llm/retry`` of the current step naming a provider the latest request header does not use
    (the harness fell back to another provider without logging its header)."""
    b = _scratch(builder)
    turn = _open_turn(b)
    if turn is None:
        return None
    current = b.request_provider()
    provider = rng.choice([p for p in ("openai", "deepseek", "anthropic") if p != current])
    return b.event("llm/retry", _retry_data(turn, _retry_step(b), provider, retry_id=f"retry-{b.next_seq}"), False)


def _chain_head(b: SessionBuilder, turn: int, step: int, provider: str, policy: str) -> tuple[str, int] | None:
    """The retry id and latest attempt of a policy chain, when the log has one."""
    for event in reversed(b.state.events):
        if event.type == "llm/retry":
            data = _data(event)
            chain = (data.get("turn"), data.get("step"), data.get("provider"), data.get("policyKey"))
            if chain == (turn, step, provider, policy):
                return str(data["retryId"]), int(data["retry"])
    return None


@candidate(Code.RETRY_PROVIDER_MISMATCH, "seed")
def seed_retry_names_previous_provider(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed whose step switches provider with a new request header, then retries naming the provider
    of the header before it."""
    b = _scratch(builder)
    if not _enter_step(b):
        return None
    before = b.request_provider()
    after = "openai" if before != "openai" else "deepseek"
    header = {**basic_header(), "config": {"provider": after, "model": "gpt-5" if after == "openai" else "deepseek-chat"}}
    if before is None or not _put(b, b.request_header(header, "change", commit=False)):
        return None
    turn = b.state.trace.open_turn
    assert turn is not None
    return _seed_with(b, b.event("llm/retry", _retry_data(turn, _retry_step(b), before, retry_id=f"retry-{b.next_seq}"), False))


@candidate(Code.RETRY_NUMBER_INVALID, "append")
def retry_skips_attempt(builder: SessionBuilder, rng: random.Random) -> object:
    """An ``llm/retry`` that skips an attempt of its policy chain (the first one logged as attempt 2),
    or repeats the latest one."""
    b = _scratch(builder)
    turn, provider = _open_turn(b), b.request_provider()
    if turn is None or provider is None:
        return None
    step, policy = _retry_step(b), rng.choice(("transient", "rate-limit"))
    head = _chain_head(b, turn, step, provider, policy)
    retry_id, last = head or (f"retry-{b.next_seq}", 0)
    attempt = rng.choice([last + 2] + ([last] if last else []))
    return b.event("llm/retry", _retry_data(turn, step, provider, attempt=attempt, retry_id=retry_id, policy=policy), False)


@candidate(Code.RETRY_NUMBER_INVALID, "seed")
def seed_retry_skips_attempt(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed whose step retries its request, then logs attempt 3 (the second attempt's record was lost)
    or attempt 1 again."""
    b = _scratch(builder)
    if not _enter_step(b) or not _put(b, b.retry("transient", commit=False)):
        return None
    turn, step, provider = b.state.trace.open_turn, _retry_step(b), b.request_provider()
    assert turn is not None and provider is not None
    retry_id, last = _chain_head(b, turn, step, provider, "transient") or ("", 0)
    attempt = rng.choice((last + 2, last))
    return _seed_with(b, b.event("llm/retry", _retry_data(turn, step, provider, attempt=attempt, retry_id=retry_id), False))


@candidate(Code.RETRY_ID_INVALID, "seed")
def seed_retry_chain_changes_id(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed whose step retries its request, then logs the next attempt under a new retry id, or opens
    another policy chain under the first chain's id."""
    b = _scratch(builder)
    if not _enter_step(b) or not _put(b, b.retry("transient", commit=False)):
        return None
    turn, step, provider = b.state.trace.open_turn, _retry_step(b), b.request_provider()
    assert turn is not None and provider is not None
    retry_id, last = _chain_head(b, turn, step, provider, "transient") or ("", 0)
    fresh = [p for p in ("rate-limit", "overloaded") if _chain_head(b, turn, step, provider, p) is None]
    if not fresh or rng.random() < 0.5:
        data = _retry_data(turn, step, provider, attempt=last + 1, retry_id=f"retry-{b.next_seq}")
    else:
        data = _retry_data(turn, step, provider, retry_id=retry_id, policy=rng.choice(fresh))
    return _seed_with(b, b.event("llm/retry", data, False))


@candidate(Code.RETRY_START_UNPAIRED, "append")
def retry_started_unscheduled(builder: SessionBuilder, rng: random.Random) -> object:
    """An ``llm/retry-started`` for an attempt no ``llm/retry`` scheduled (its schedule was never logged)."""
    b = _scratch(builder)
    trace = b.state.trace
    turn, step = (trace.last_turn, trace.last_step) if trace.open_turn is None else (trace.open_turn, _retry_step(b))
    data = {"retryId": f"retry-{b.next_seq}", "turn": turn, "step": step, "retry": rng.choice((1, 2))}
    return b.event("llm/retry-started", data, False)


def _start_of(retry: RawEvent) -> dict[str, Any]:
    """The ``llm/retry-started`` payload that starts the attempt ``retry`` scheduled."""
    return {k: retry["data"][k] for k in ("retryId", "turn", "step", "retry")}


def _scheduled_retry(b: SessionBuilder) -> RawEvent | None:
    """On the scratch builder ``b``: open a step and schedule a retry of its request; the retry."""
    if not _enter_step(b):
        return None
    retry = b.retry(commit=False)
    return retry if _put(b, retry) else None


@candidate(Code.RETRY_START_UNPAIRED, "seed")
def seed_retry_started_before_scheduled(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed whose step schedules a retry, then starts the attempt after it (not scheduled yet), or the
    scheduled attempt under another retry id."""
    b = _scratch(builder)
    retry = _scheduled_retry(b)
    if retry is None:
        return None
    data = _start_of(retry)
    if rng.random() < 0.5:
        data["retry"] += 1
    else:
        data["retryId"] = f"retry-{b.next_seq}"
    return _seed_with(b, b.event("llm/retry-started", data, False))


@candidate(Code.RETRY_START_MISMATCH, "seed")
def seed_retry_started_other_step(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a scheduled retry's start names the next step (the one that re-sent the request)
    or another turn."""
    b = _scratch(builder)
    retry = _scheduled_retry(b)
    if retry is None:
        return None
    data = _start_of(retry)
    where = rng.choice(("step", "turn"))
    data[where] += 1
    return _seed_with(b, b.event("llm/retry-started", data, False))


@candidate(Code.RETRY_START_REPEATED, "seed")
def seed_retry_started_twice(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which one scheduled retry attempt is logged as started twice."""
    b = _scratch(builder)
    retry = _scheduled_retry(b)
    if retry is None:
        return None
    data = _start_of(retry)
    if not _put(b, b.event("llm/retry-started", data, False)):
        return None
    return _seed_with(b, b.event("llm/retry-started", dict(data), False))


# -- programmatic tool calls (INV-REL-19..22) ------------------------------------------------------


def _dispatch(b: SessionBuilder, root: str, parent: str, sub: str, settle: bool, **changes: Any) -> RawEvent:
    """A PTC dispatch start (or settlement, with its output) of ``sub`` under ``parent`` in the tree of ``root``."""
    data: RawEvent = {"rootCallId": root, "parentCallId": parent, "subCallId": sub, "name": "read_file"}
    data["arguments"] = {"path": "src/parser.py", "lines": [1, 40]}
    data.update(changes)
    if settle:
        data.update(isError=False, content=[text_block("def parse(tokens): ...")])
    return b.event("tool/code-dispatch" if settle else "tool/code-dispatch-start", data, False)


def _ptc_root(b: SessionBuilder) -> str:
    """The tool call a dispatch runs under: one started in the open step, else the latest recorded one."""
    started = sorted(b.state.trace.step_calls)
    if started:
        return started[0]
    recorded = [str(_data(e)["callId"]) for e in b.state.events if e.type == "tool/call"]
    return recorded[-1] if recorded else "call-1"


@candidate(Code.PTC_OUTSIDE_TURN, "append")
def dispatch_outside_turn(builder: SessionBuilder, rng: random.Random) -> object:
    """A PTC dispatch (or its settlement) logged after its turn ended."""
    b = _scratch(builder)
    if _open_turn(b) is not None:
        return None
    root = _ptc_root(b)
    return _dispatch(b, root, root, f"sub-{b.next_seq}", rng.random() < 0.5)


@candidate(Code.PTC_OUTSIDE_TURN, "seed")
def seed_dispatch_after_turn(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed whose turn ends and is followed by a late PTC dispatch of its tool call."""
    b = _scratch(builder)
    if not _leave_turn(b):
        return None
    root = _ptc_root(b)
    return _seed_with(b, _dispatch(b, root, root, f"sub-{b.next_seq}", rng.random() < 0.5))


@candidate(Code.PTC_ANCESTRY_INVALID, "append")
def dispatch_unknown_parent(builder: SessionBuilder, rng: random.Random) -> object:
    """A PTC dispatch in an open turn whose parent is neither its root nor a sub-call seen under it."""
    b = _scratch(builder)
    if _open_turn(b) is None:
        return None
    root = _ptc_root(b)
    return _dispatch(b, root, f"sub-{rng.randrange(1, 9)}-of-{root}", f"sub-{b.next_seq}", rng.random() < 0.3)


@candidate(Code.PTC_ANCESTRY_INVALID, "seed")
def seed_dispatch_parent_under_other_root(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a sub-call is dispatched under one root call and a later dispatch under a
    sibling root names it as parent (a code runner that shares its sub-call ids across calls)."""
    b = _scratch(builder)
    started = _ptc_started(b)
    if started is None:
        return None
    call, sub = started
    if rng.random() < 0.5 and not _put(b, _dispatch(b, call, call, sub, True)):
        return None
    sibling = rng.choice((f"{call}-b", "call-1" if call != "call-1" else "call-2"))
    if rng.random() < 0.5 and not _put(b, _dispatch(b, sibling, sibling, f"sub-{b.next_seq}", False)):
        return None
    return _seed_with(b, _dispatch(b, sibling, sub, f"sub-{b.next_seq}", False))


@candidate(Code.PTC_ANCESTRY_INVALID, "seed")
def seed_dispatch_moves_root(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a started sub-call is dispatched again under another root call."""
    b = _scratch(builder)
    started = _ptc_started(b)
    if started is None:
        return None
    call, sub = started
    other = f"{call}-retry"
    return _seed_with(b, _dispatch(b, other, other, sub, rng.random() < 0.5))


def _ptc_started(b: SessionBuilder) -> tuple[str, str] | None:
    """On the scratch builder ``b``: a started tool call with one dispatched sub-call; (root, sub)."""
    call = _started_call(b)
    if call is None:
        return None
    sub = f"sub-{b.next_seq}"
    return (call, sub) if _put(b, _dispatch(b, call, call, sub, False)) else None


@candidate(Code.PTC_START_REPEATED, "seed")
def seed_dispatch_started_twice(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a PTC sub-call is started a second time (before or after it settled)."""
    b = _scratch(builder)
    started = _ptc_started(b)
    if started is None:
        return None
    root, sub = started
    if rng.random() < 0.5 and not _put(b, _dispatch(b, root, root, sub, True)):
        return None
    return _seed_with(b, _dispatch(b, root, root, sub, False))


@candidate(Code.PTC_SETTLE_UNPAIRED, "append")
def dispatch_settled_unstarted(builder: SessionBuilder, rng: random.Random) -> object:
    """A PTC settlement in an open turn for a sub-call whose start was never logged."""
    b = _scratch(builder)
    if _open_turn(b) is None:
        return None
    root = _ptc_root(b)
    return _dispatch(b, root, root, f"sub-{b.next_seq}", True)


@candidate(Code.PTC_SETTLE_UNPAIRED, "seed")
def seed_dispatch_settled_twice(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a PTC sub-call settles twice (a retried write of its settlement)."""
    b = _scratch(builder)
    started = _ptc_started(b)
    if started is None:
        return None
    root, sub = started
    if not _put(b, _dispatch(b, root, root, sub, True)):
        return None
    return _seed_with(b, _dispatch(b, root, root, sub, True))


@candidate(Code.PTC_SETTLE_MISMATCH, "seed")
def seed_dispatch_settles_other_call(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a PTC sub-call settles as another call than it started: another tool, or other
    arguments (another file; ``1.5``, ``true`` or ``"1"`` for ``1``; one more item)."""
    b = _scratch(builder)
    started = _ptc_started(b)
    if started is None:
        return None
    root, sub = started
    change = rng.choice(
        (
            {"name": "grep"},
            {"arguments": {"path": "src/parser.py", "lines": [1.5, 40]}},
            {"arguments": {"path": "src/parser.py", "lines": [True, 40]}},
            {"arguments": {"path": "src/parser.py", "lines": ["1", 40]}},
            {"arguments": {"path": "src/parser.py", "lines": [1, 40, None]}},
            {"arguments": {"path": "src/lexer.py", "lines": [1, 40]}},
        )
    )
    return _seed_with(b, _dispatch(b, root, root, sub, True, **change))


# -- commands (INV-REL-23..25) ---------------------------------------------------------------------


def _command_run_data(command: str) -> RawEvent:
    """A ``/compact`` command the user ran."""
    return {"commandId": command, "name": "compact", "source": {"kind": "user"}, "args": "--keep 2"}


def _commands_ran(b: SessionBuilder) -> list[str]:
    """The ids of the commands the session ran, in order."""
    return [str(_data(e)["commandId"]) for e in b.state.events if e.type == "command/run"]


def _command_run(b: SessionBuilder, command: str) -> RawEvent:
    return b.event("command/run", _command_run_data(command), False)


@candidate(Code.COMMAND_RUN_REPEATED, "seed")
def seed_command_run_twice(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a command id is used by a second run (a client that reuses its counter after a restart)."""
    b = _scratch(builder)
    command = f"cmd-{b.next_seq}"
    if not _put(b, _command_run(b, command)):
        return None
    if rng.random() < 0.5 and not _put(b, b.event("command/done", {"commandId": command, "kind": "success"}, False)):
        return None
    return _seed_with(b, _command_run(b, command))


@candidate(Code.COMMAND_DONE_UNPAIRED, "append")
def command_done_without_run(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``command/done`` whose ``command/run`` was never logged."""
    b = _scratch(builder)
    ran = set(_commands_ran(b))
    command = next(c for c in (f"cmd-{b.next_seq + i}" for i in range(len(ran) + 1)) if c not in ran)
    data = rng.choice(
        ({"kind": "success", "text": "Compacted the conversation."}, {"kind": "error", "text": "Nothing to compact."})
    )
    return b.event("command/done", {"commandId": command, **data}, False)


@candidate(Code.COMMAND_DONE_UNPAIRED, "seed")
def seed_command_done_other_id(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a command runs and finishes under another command id (the client's next id)."""
    b = _scratch(builder)
    command = f"cmd-{b.next_seq}"
    if not _put(b, _command_run(b, command)):
        return None
    return _seed_with(b, b.event("command/done", {"commandId": f"{command}-next", "kind": "success"}, False))


@candidate(Code.COMMAND_DONE_SOURCE_INVALID, "seed")
def seed_command_done_cites_wrongly(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed whose command finishes citing command bookkeeping (its own run, an earlier command's
    run or done), or failing yet citing an event."""
    b = _scratch(builder)
    cited = rng.choice(CITED_BY_A_WRONG_DONE)
    finished = any(e.type == "command/done" for e in b.state.events)
    if (cited == "command/done" and not finished) or rng.random() < 0.5:
        earlier = f"cmd-{b.next_seq}"
        done = {"commandId": earlier, "kind": "success"}
        if not (_put(b, _command_run(b, earlier)) and _put(b, b.event("command/done", done, False))):
            return None
    command = f"cmd-{b.next_seq}"
    if not _put(b, _command_run(b, command)):
        return None
    return _seed_with(b, b.event("command/done", _done_citing_wrongly(command, b, rng, cited), False))


CITED_BY_A_WRONG_DONE = (*sorted(COMMAND_TYPES), "error")
"""What a wrong ``command/done`` cites: command bookkeeping (for a success), anything (for an error)."""


def _done_citing_wrongly(command: str, b: SessionBuilder, rng: random.Random, cited: str | None = None) -> RawEvent:
    """How ``command`` finishes next in ``b``, citing wrongly: a success citing command bookkeeping
    (a run or a done, the type drawn first, so a log with one done among many runs cites it as often
    as a run), or an error citing any earlier event.  A seed draws ``cited`` before it builds its
    scene, so the scene holds what it cites."""
    by_type = {t: [e.seq for e in b.state.events if e.type == t] for t in COMMAND_TYPES}
    if cited is None or (cited != "error" and not by_type[cited]):
        cited = rng.choice([t for t in sorted(by_type) if by_type[t]] + ["error"])
    if cited != "error":
        return {"commandId": command, "kind": "success", "sourceEventSeq": rng.choice(by_type[cited])}
    cited_seq = edge_int(rng, 0, b.next_seq - 1)
    return {"commandId": command, "kind": "error", "text": "Nothing to compact.", "sourceEventSeq": cited_seq}


@candidate(Code.COMMAND_RUN_REPEATED, "append")
def command_run_reused(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``command/run`` under the id of a command the session already ran, finished or not."""
    ran = _commands_ran(builder)
    return _command_run(_scratch(builder), rng.choice(ran)) if ran else None


@candidate(Code.COMMAND_DONE_SOURCE_INVALID, "append")
def command_done_cites_wrongly(builder: SessionBuilder, rng: random.Random) -> object:
    """How a command the session ran finishes, citing wrongly: a success citing command bookkeeping
    (any run or done of the log), or an error citing any earlier event."""
    b = _scratch(builder)
    ran = _commands_ran(b)
    if not ran:
        return None
    return b.event("command/done", _done_citing_wrongly(rng.choice(ran), b, rng), False)


# -- titles (INV-REL-26..28) -----------------------------------------------------------------------


@candidate(Code.TITLE_SEQS_CARDINALITY, "append")
def title_cardinality_wrong(builder: SessionBuilder, rng: random.Random) -> object:
    """A generated title (by the provider or the fallback) citing no message, or a title the user
    typed citing the messages it was typed after."""
    b = _scratch(builder)
    humans = b.human_message_seqs()
    variants: list[RawEvent] = [
        {"title": "Fix the failing parser test", "messageSeqs": [], "source": {"kind": "fallback"}},
        {"title": "Fix the failing parser test", "messageSeqs": [], "source": {"kind": "provider", "provider": "deepseek"}},
    ]
    if humans:
        variants.append({"title": "My parser fix", "messageSeqs": humans[:2], "source": {"kind": "user"}})
    return b.event("session/title", rng.choice(variants), False)


def _from_human(event: Event) -> bool:
    """Whether a title may cite ``event``: a ``user/message`` whose source is the user."""
    source = _data(event).get("source") if event.type == "user/message" else None
    return isinstance(source, dict) and source.get("kind") == "user"


NON_HUMAN_SOURCES: tuple[RawEvent, ...] = (
    {"kind": "plugin", "plugin": "memo"},
    {"kind": "team-message", "teamId": "team-1", "messageId": "m-1", "senderId": "agent-2", "senderName": "Reviewer"},
    {"kind": "skill-invocation", "name": "review", "form": "instructions"},
    {"kind": "subagent-settled", "form": "notice", "summary": "Tests pass.", "senderSessionId": "child-1"},
)
"""Sources of ``user/message`` events no person wrote: a plugin's note, a team member's message, a
skill's instructions, a sub-agent's notice."""


def _title_citing(b: SessionBuilder, rng: random.Random, cited: list[int]) -> RawEvent:
    """A generated title, or a title request, citing ``cited``."""
    if rng.random() < 0.5:
        source = rng.choice(({"kind": "fallback"}, {"kind": "provider", "provider": "deepseek"}))
        return b.event("session/title", {"title": "Fix the failing parser test", "messageSeqs": cited, "source": source}, False)
    return b.event("session/title-llm-request", title_request_data(b, cited, TITLE_FRAME_PREFIX + "[]"), False)


@candidate(Code.TITLE_SOURCE_NOT_HUMAN, "append")
def title_cites_non_human(builder: SessionBuilder, rng: random.Random) -> object:
    """A generated title (or title request) citing an assistant answer, a tool result, a summary or a
    bracket event beside or instead of the user's own messages."""
    b = _scratch(builder)
    humans = b.human_message_seqs()
    others = [e.seq for e in b.state.events if not _from_human(e)]
    if not others:
        return None
    # A user message from no human (a compaction checkpoint, a team member's, a tool's) is the
    # subtle case: half the time it is the one cited, when the log has one.
    unsent = [e.seq for e in b.state.events if e.type == "user/message" and not _from_human(e)]
    return _title_citing(b, rng, sorted({*humans[:1], rng.choice(unsent if unsent and rng.random() < 0.5 else others)}))


@candidate(Code.TITLE_SOURCE_NOT_HUMAN, "seed")
def seed_title_cites_unsent_message(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a ``user/message`` that no person wrote (a plugin's, a team member's, a
    skill's, a sub-agent's) is cited by a generated title or title request, alone or beside the
    user's own."""
    b = _scratch(builder)
    if not _enter_turn(b):
        return None
    data = {"id": f"note-{b.next_seq}", "role": "user", "content": [text_block("Remember: run the tests.")]}
    unsent = b.next_seq
    if not _put(b, b.event("user/message", {**data, "source": rng.choice(NON_HUMAN_SOURCES)}, False, surfaceOp="append")):
        return None
    humans = b.human_message_seqs()
    return _seed_with(b, _title_citing(b, rng, sorted({*humans[: rng.randint(0, 1)], unsent})))


@candidate(Code.TITLE_REQUEST_FRAMING, "append")
def title_request_misframed(builder: SessionBuilder, rng: random.Random) -> object:
    """A title request whose one message is not the frame of its cited messages: serialised with
    Python's separators, without the instruction, from another plugin, or sent twice."""
    b = _scratch(builder)
    humans = b.human_message_seqs()
    if not humans:
        return None
    cited = humans[-2:]
    texts = [(s, human_text(b.state.events[s])) for s in cited]
    how = rng.choice(("python-json", "no-prefix", "other-plugin", "twice"))
    frame = title_frame(texts)
    if how == "python-json":
        frame = TITLE_FRAME_PREFIX + json.dumps([{"seq": s, "text": t} for s, t in texts])
    elif how == "no-prefix":
        frame = frame.removeprefix(TITLE_FRAME_PREFIX)
    data = title_request_data(b, cited, frame, "dsh-session-title" if how == "other-plugin" else TITLE_PLUGIN)
    if how == "twice":
        data["messages"].append({**data["messages"][0], "id": f"title-{b.next_seq}-retry"})
    return b.event("session/title-llm-request", data, False)


# -- delivery markers (INV-REL-29) -----------------------------------------------------------------


def _marker(b: SessionBuilder, session_id: str, version: int | None = 1) -> RawEvent:
    data: RawEvent = {"sessionId": session_id, "throughSeq": b.next_seq - 1}
    if version is not None:
        data["sessionFormatVersion"] = version
    return b.event(DELIVERY_MARKER, data, False)


def _marked(builder: SessionBuilder) -> SessionBuilder:
    """A scratch builder with at least one event (a delivery marker confirms events up to an earlier seq)."""
    b = _scratch(builder)
    if b.next_seq == 0:
        b.commit(_benign(b, random.Random(0)))
    return b


@candidate(Code.DELIVERY_MARKER_WRONG_SESSION, "load")
def jsonl_marker_other_session(builder: SessionBuilder, rng: random.Random) -> object:
    """A stored log holding a delivery marker of its own format that names another session (its
    parent's, a sibling fork's, one copied from another log)."""
    b = _marked(builder)
    other = rng.choice(("parent-session", "mutant-session-fork-2", "3f0c2a9e-7b1d-4e5f-a6c8-9d2e1b4f7a30"))
    return _stored_with(b, _marker(b, other))


@candidate(Code.DELIVERY_MARKER_WRONG_SESSION, "load")
def jsonl_fork_marker_past_seed(builder: SessionBuilder, rng: random.Random) -> object:
    """A fork child's stored log (its header names the parent and the seed length) holding, after the
    inherited seed, a marker that names the parent: only markers inside the seed keep their ancestor's id."""
    b = _marked(builder)
    seed_length = edge_int(rng, 1, b.next_seq)
    header = {**STORED_HEADER, "parentSession": "parent-session", "seedLength": seed_length, "delegationDepth": 1}
    return _stored_with(b, _marker(b, "parent-session"), header=header)


# -- payload shapes of every other type (INV-PAY) ---------------------------------------------------


def _turn_now(b: SessionBuilder) -> int:
    trace = b.state.trace
    return trace.open_turn if trace.open_turn is not None else trace.last_turn


Exemplar = Callable[[SessionBuilder, int, int], Any]
"""Makes the data of a note for a builder's state: (builder, payload generation, variant)."""


def _note(type_: str) -> Exemplar:
    """The data of the realistic note ``type_`` (:func:`note_event`) in the variant asked for, when it
    can stand here as that type."""

    def make(b: SessionBuilder, generation: int, variant: int) -> Any:
        event = note_event(b, type_, variant)
        return event["data"] if event["type"] == type_ else None

    return make


def _compaction_step(type_: str) -> Exemplar:
    def make(b: SessionBuilder, generation: int, variant: int) -> Any:
        open_ = b.open_compaction()
        if type_ == "compaction/start":
            return None if open_ is not None else b.compaction_start(commit=False)["data"]
        if open_ is None:
            return None
        if type_ == "compaction/summary":
            ranges = b.legal_ranges()
            if not ranges or open_.summarized:
                return None
            return b.compaction_summary(*ranges[variant % len(ranges)], commit=False)["data"]
        return b.compaction_end(None if open_.summarized else "The summary request failed.", commit=False)["data"]

    return make


def _exemplar_prune(b: SessionBuilder, generation: int, variant: int) -> Any:
    ranges = b.legal_ranges()
    if not ranges:
        return None
    nodes = list(b.state.surface.nodes)
    start, end = ranges[variant % len(ranges)]
    return _span_members(nodes[nodes.index(start) : nodes.index(end) + 1])


def _exemplar_retry_started(b: SessionBuilder, generation: int, variant: int) -> Any:
    scheduled = [_data(e) for e in b.state.events if e.type == "llm/retry"]
    if not scheduled:
        return None
    latest = scheduled[-1]
    return {k: latest[k] for k in ("retryId", "turn", "step", "retry")}


def _exemplar_command_done(b: SessionBuilder, generation: int, variant: int) -> Any:
    """How the latest command finished: a success with or without a text, one citing the event it
    produced (the latest or the earliest that is not command bookkeeping), or an error."""
    ran = _commands_ran(b)
    if not ran:
        return None
    if variant == 2:
        return {"commandId": ran[-1], "kind": "error", "text": "Nothing to compact."}
    data: RawEvent = {"commandId": ran[-1], "kind": "success"}
    if variant != 3:
        data["text"] = "Compacted the conversation."
    produced = [e.seq for e in b.state.events if e.type not in COMMAND_TYPES]
    if produced and variant in (1, 4):
        data["sourceEventSeq"] = produced[-1] if variant == 1 else produced[0]
    return data


def _exemplar_marker(b: SessionBuilder, generation: int, variant: int) -> Any:
    if b.next_seq == 0:
        return None
    data: RawEvent = {"sessionId": STORED_HEADER["id"], "throughSeq": b.next_seq - 1}
    if generation >= 1:
        data["sessionFormatVersion"] = 1
    return data


def _exemplar_dispatch(settle: bool) -> Exemplar:
    def make(b: SessionBuilder, generation: int, variant: int) -> Any:
        if b.state.trace.open_turn is None:
            return None
        root = _ptc_root(b)
        if not settle:
            return _dispatch(b, root, root, f"sub-{b.next_seq}", False)["data"]
        for event in reversed(b.state.events):
            if event.type == "tool/code-dispatch-start":
                started = _data(event)
                return _dispatch(b, started["rootCallId"], started["parentCallId"], started["subCallId"], True)["data"]
        return None

    return make


def _fixed(data: Any) -> Exemplar:
    return lambda b, generation, variant: copy.deepcopy(data)


_TEAM = {"version": 1, "teamId": "team-parser"}
_EXEMPLARS: dict[str, Exemplar] = {
    "agent-preset/selected": _fixed({"agentPreset": "reviewer"}),
    "agent/inbox/spliced": lambda b, g, v: {
        "target": "next-turn",
        "start": len(b.state.surface.nodes),
        "inserted": [
            {
                "id": f"inbox-{b.next_seq}",
                "role": "user",
                "content": [text_block("The lexer tests pass on my side.")],
                "source": {
                    "kind": "team-message",
                    "teamId": "team-parser",
                    "messageId": "msg-7",
                    "senderId": "member-2",
                    "senderName": "Reviewer",
                },
            }
        ],
        "removedCount": 0,
    },
    "approval/asked": _note("approval/asked"),
    "approval/decided": _note("approval/decided"),
    "approval/policy": _fixed({"policy": "ask"}),
    "command/done": _exemplar_command_done,
    "command/run": lambda b, g, v: _command_run_data(f"cmd-{b.next_seq}"),
    "compaction/end": _compaction_step("compaction/end"),
    "compaction/prune": _exemplar_prune,
    "compaction/start": _compaction_step("compaction/start"),
    "compaction/summary": _compaction_step("compaction/summary"),
    "feedback/record": _note("feedback/record"),
    "goal/change": _note("goal/change"),
    "hook/invoked": _note("hook/invoked"),
    "hook/result": lambda b, g, v: {**_hook_result(b, (0, 1, 2, 0, 127)[v], (412, 0, 1.5, 30_000, 7)[v]), "stderrSummary": ""},
    "llm/retry": _note("llm/retry"),
    "llm/retry-started": _exemplar_retry_started,
    "model/selection": _note("model/selection"),
    "permission/preset": _fixed({"preset": "auto-edit"}),
    "plan/mode": _note("plan/mode"),
    "request/context": _note("request/context"),
    "sandbox/mode": _fixed({"mode": "workspace-write", "source": "delegation"}),
    "schedule/change": _fixed(
        {
            "version": 1,
            "operation": "create",
            "schedule": {
                "id": "nightly-tests",
                "prompt": "Run the whole test suite and report failures.",
                "scheduledAt": "2026-07-13T10:00:00.000Z",
                "kind": "every",
                "everySeconds": 86_400,
            },
        }
    ),
    DELIVERY_MARKER: _exemplar_marker,
    "session/title": _note("session/title"),
    "session/title-llm-request": _note("session/title-llm-request"),
    "subagent/descriptor": _fixed(
        {
            "version": 3,
            "mode": "continuable",
            "provider": "deepseek",
            "label": "reviewer",
            "agentProvider": "deepseek",
            "agentModel": "deepseek-reasoner",
            "persona": "A careful reviewer of parser changes.",
            "toolFilter": {"allow": ["read_file", "grep"]},
        }
    ),
    "subagent/model-selection-policy": _fixed(
        {"allowedModels": [dict(PROVIDER), {"provider": "deepseek", "model": "deepseek-reasoner"}]}
    ),
    "team/member": _fixed(
        {
            **_TEAM,
            "member": {
                "id": "member-2",
                "name": "Reviewer",
                "description": "Reviews every patch before it lands.",
                "provider": "deepseek",
                "context": "fresh",
                "phase": "active",
            },
        }
    ),
    "team/message/delivered": _fixed({**_TEAM, "messageId": "msg-7", "targetId": "member-2"}),
    "team/message/queued": _fixed(
        {
            **_TEAM,
            "message": {
                "id": "msg-7",
                "senderId": "lead",
                "senderName": "Lead",
                "targetId": "member-2",
                "delivery": "wakeup",
                "content": [text_block("Please review the parser patch.")],
            },
        }
    ),
    "team/task": _fixed(
        {
            **_TEAM,
            "task": {
                "id": "task-3",
                "revision": 2,
                "subject": "Fix the parser",
                "description": "The last token is dropped.",
                "status": "in_progress",
                "blockedBy": [],
                "writeScopes": ["src/parser.py"],
                "ownerId": "member-2",
            },
        }
    ),
    "todo/write": _note("todo/write"),
    "tool-workflow/agent-end": _fixed({"runId": "run-review", "seq": 1, "outcome": "completed"}),
    "tool-workflow/agent-start": _fixed(
        {"runId": "run-review", "seq": 1, "label": "review", "childId": "child-1", "phase": "review"}
    ),
    "tool-workflow/run-end": _fixed({"runId": "run-review", "stopReason": "completed"}),
    "tool-workflow/run-start": _fixed({"runId": "run-review", "name": "parallel-review"}),
    "tool/code-dispatch": _exemplar_dispatch(True),
    "tool/code-dispatch-start": _exemplar_dispatch(False),
    "web/deepseek-search-llm-request": _fixed(
        {
            "endpoint": "https://api.deepseek.com/anthropic/v1/messages",
            "apiVersion": "2023-06-01",
            "body": {
                "model": "deepseek-chat",
                "max_tokens": 1024,
                "messages": [{"role": "user", "content": [{"type": "text", "text": "latest CPython release"}]}],
                "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}],
            },
        }
    ),
}
"""A realistic payload of each type whose payload problems are ``PAYLOAD_INVALID``, made for the
builder's state (``None`` where the type cannot stand there), by payload generation, in one of
:data:`NOTE_VARIANTS` variants where the type has several (a title the user set, citing nothing, or
one the model made from the user's messages; a command that failed or one citing what it produced)."""
assert set(_EXEMPLARS) == set(EVENT_PAYLOADS) - set(TYPE_CODES) - TRACE_TYPES, sorted(set(_EXEMPLARS) ^ set(EVENT_PAYLOADS))


def standing_note(builder: SessionBuilder, type_: str, variant: int) -> RawEvent | None:
    """The uncommitted exemplar note of ``type_`` (any type a harness writes outside the turn and step
    protocol) in ``variant``, as the builder could write it now; ``None`` where it cannot stand."""
    return next(_standing_notes(builder, (type_,), CURRENT_GENERATION, variant), None)


HARNESS_NOTE_TYPES = tuple(sorted(_EXEMPLARS))
"""Every type :func:`standing_note` writes."""


def _faulty_payload(builder: SessionBuilder, rng: random.Random, generation: int = CURRENT_GENERATION) -> RawEvent | None:
    """A valid event the builder could write now, of a type whose payload problems are
    ``PAYLOAD_INVALID``, with one fault drawn along its shape in payload ``generation``
    (``None`` when the fault drawn is harmless)."""
    types = sorted(_EXEMPLARS)
    rng.shuffle(types)
    for event in _standing_notes(builder, types, generation, rng.randrange(NOTE_VARIANTS)):
        fault = payload_fault(payload_shape(event["type"], generation), event["data"], rng, ShapeContext(event["seq"]))
        return None if fault is None else {**event, "data": fault.value}
    return None


def _standing_notes(builder: SessionBuilder, types: Sequence[str], generation: int, variant: int) -> Iterator[RawEvent]:
    """The exemplar note of each of ``types`` (in that order), in ``variant``, that the builder could
    write now; a type with its own code (:data:`MESSAGE_EXEMPLARS`) has a current exemplar only."""
    for type_ in types:
        b = _scratch(builder)
        envelope: dict[str, Any] = {}
        if type_ in _EXEMPLARS:
            data = _EXEMPLARS[type_](b, generation, variant)
        elif generation == CURRENT_GENERATION:
            data = MESSAGE_EXEMPLARS[type_](b, variant)
            envelope = {"surfaceOp": "append"} if type_ in SURFACE_TYPES else {}
        else:
            data = None
        if data is None:
            continue
        event = b.event(type_, data, False, **envelope)
        if not isinstance(model_append_event(builder.state, event), Violation):
            yield event


@candidate(Code.PAYLOAD_INVALID, "append")
def payload_fault_in_event(builder: SessionBuilder, rng: random.Random) -> object:
    """A note the harness could write now (a title, an approval, a retry, a compaction step, a team
    message, …) with one fault drawn along its payload shape: a member missing or unexpected, a leaf
    of another type, a number out of range, a literal spelt another way, an empty string, a bad variant."""
    fault = _faulty_payload(builder, rng)
    return None if fault is None else _refused(builder, "append", Code.PAYLOAD_INVALID, fault)


def _message_fault(type_: str) -> Build:
    """A payload of ``type_`` (a type with its own code) as the builder could write it now, with one
    fault drawn along its shape, refused with the type's code; ``None`` where the type cannot stand
    or the fault drawn is refused for another reason first (a header's unpinned model)."""

    def build(builder: SessionBuilder, rng: random.Random) -> object:
        for event in _standing_notes(builder, (type_,), CURRENT_GENERATION, rng.randrange(NOTE_VARIANTS)):
            # A few draws: a header fault may be refused with a finer code first (an unpinned model,
            # a snapshot no longer canonical), which another candidate owns.
            for _ in range(MESSAGE_FAULT_DRAWS):
                fault = payload_fault(payload_shape(type_, CURRENT_GENERATION), event["data"], rng, ShapeContext(event["seq"]))
                faulty = None if fault is None else _refused(builder, "append", TYPE_CODES[type_], {**event, "data": fault.value})
                if faulty is not None:
                    return faulty
        return None

    return build


MESSAGE_FAULT_DRAWS = 4
"""How many faults a typed payload candidate draws before it gives up on a build."""
MESSAGE_FAULTS: dict[str, str] = {}
"""The candidate of each type with its own code that breaks one member of its payload, by type."""
for _type in MESSAGE_EXEMPLARS:
    _name = _type.replace("request/", "").replace("/", "_") + "_payload_fault"
    _build = _message_fault(_type)
    _build.__name__ = _build.__qualname__ = _name
    _build.__doc__ = (
        f"A ``{_type}`` the builder could write now with one fault drawn along its payload shape (any member,"
        " nested ones included), refused with the type's own code."
    )
    candidate(TYPE_CODES[_type], "append")(_build)
    MESSAGE_FAULTS[_type] = _name


SWEPT_TYPE_NAMES = (*sorted(_EXEMPLARS), *sorted(MESSAGE_EXEMPLARS))
"""The types a payload sweep breaks: every note type, and every type with its own code (whose faults
are refused with that code, :data:`MESSAGE_FAULTS`)."""
SWEPT_SITES = 60
"""How many fault sites a payload sweep breaks (one variant of each)."""


def _site_key(event: RawEvent, site: Site, ordinal: int) -> tuple[str, str, str, int]:
    """What makes two faults the same: the type, the path with item indexes left out, the kind, and
    which of the sites of that kind at that path (a seq below zero, or the event's own)."""
    return event["type"], re.sub(r"\[\d+\]", "[]", site.path), site.kind, ordinal


def payload_fault_sweep(builder: SessionBuilder, rng: random.Random) -> list[RawEvent]:
    """One-fault variants of the events the builder could write now (every note type in every
    variant, and the types with their own codes): :data:`SWEPT_SITES` sites drawn from all of them,
    each broken in one variant that has it.

    A site is a type's member broken one way (left out, of another type, past a bound, ...).  The
    same site in each of a note's variants is one site, so one that every variant has is drawn no
    more often than one a single variant has (a generated title's model, the ``sourceEventSeq`` of
    a command's success).  Sweeps once drew all the sites of two types, or one kind of fault at
    forty of its instances; a given site of a given type came up in about one sweep in twenty, and
    a site every variant has in clusters of five, so a check a port forgot on one member of one type
    was missed in whole runs."""
    distinct = {
        json.dumps(event, sort_keys=True): event
        for variant in range(NOTE_VARIANTS)
        for event in _standing_notes(builder, SWEPT_TYPE_NAMES, CURRENT_GENERATION, variant)
    }
    faults: dict[tuple[str, str, str, int], list[RawEvent]] = {}
    for event in distinct.values():
        shape, context = payload_shape(event["type"], CURRENT_GENERATION), ShapeContext(event["seq"])
        seen: Counter[tuple[str, str]] = Counter()
        for site in fault_sites(shape, event["data"], context):
            ordinal = seen[(site.path, site.kind)]
            seen[(site.path, site.kind)] += 1
            value = apply_site(event["data"], site, rng)
            if shape_problem(shape, value, "$", context) is not None:
                faults.setdefault(_site_key(event, site, ordinal), []).append({**event, "data": value})
    keys = sorted(faults)
    return [rng.choice(faults[key]) for key in rng.sample(keys, min(SWEPT_SITES, len(keys)))]


# -- the v0 source (INV-LEGACY-9) ------------------------------------------------------------------


def _v0_writable(builder: SessionBuilder) -> bool:
    """Whether a v0 writer could have written the builder's log (no type outside the v0 inventory,
    such as an ignorable extension event)."""
    return all(event.type in V0_INVENTORY for event in builder.state.events)


@candidate(Code.LEGACY_SOURCE_INVALID, "upgrade")
def v0_payload_fault(builder: SessionBuilder, rng: random.Random) -> object:
    """A v0 log ending with a note whose payload the released v0 payload table refuses (one fault drawn
    along its v0 shape)."""
    fault = _faulty_payload(builder, rng, generation=LEGACY_VERSION) if _v0_writable(builder) else None
    return None if fault is None else _refused(builder, "upgrade", Code.LEGACY_SOURCE_INVALID, _v0_log(builder, rng, fault))


def _legacy_log(builder: SessionBuilder) -> list[RawEvent] | None:
    """The builder's log as a v0 writer using every legacy form wrote it, with a turn started and a
    request header written first when the log has none: each is a legacy form to get wrong, and a
    session's first moments hold neither."""
    b = _scratch(builder)
    if not _v0_writable(b):
        return None
    started = any(e.type == "turn/start" for e in b.state.events)
    if not started and (_open_turn(b) is not None or _compaction_open(b) or not _put(b, b.turn_start(commit=False))):
        return None
    if not any(e.type == "request/header" for e in b.state.events):
        _put(b, b.request_header(basic_header(), "initial", commit=False))
    return v0_events(b.events, frozenset(FORMS))


NOT_AN_ARRAY: tuple[object, ...] = ("earlier conversation", {"role": "user"}, None, 0, True)
"""Values of every JSON type but an array, as a writer that mixed up a list's type writes them."""


def _malformed_forms(event: RawEvent) -> list[RawEvent]:
    """Ways a v0 writer got the legacy form of ``event`` wrong (none when it has no legacy form)."""
    type_, data = event["type"], event["data"]
    out: list[Any] = []
    if type_ == "turn/start" and "trigger" in data:
        trigger = data["trigger"]
        out += [{**data, "trigger": trigger["kind"]}, {**data, "trigger": {k: v for k, v in trigger.items() if k != "kind"}}]
        out.append({**data, "trigger": {**trigger, "kind": ""}})
    elif type_ == "turn/end":
        reason = data["reason"]
        out.append({**data, "reason": {"kind": "error", "message": "The server is overloaded.", "code": "PROVIDER_OVERLOADED"}})
        if set(reason) == {"kind"}:
            out.append({**data, "reason": {**reason, "step": 1}})
        if isinstance(reason.get("failure"), dict):
            out.append({**data, "reason": {**reason, "failure": {**reason["failure"], "retryable": True}}})
    elif type_ == "steering/message":
        if "message" in data:
            out.append({**data, "content": data["message"]["content"]})
        else:
            out.append({"turn": data["turn"], "content": data["content"]})
        out.append({**data, "turn": str(data["turn"])})
    elif type_ == "assistant/message" and isinstance(data.get("provenance"), dict):
        provenance = data["provenance"]
        out.append({**data, "provenance": f"{provenance.get('provider')}/{provenance.get('model')}"})
    elif type_ == "request/header" and "messagePrefix" in data["header"]:
        out += [{**data, "header": {**data["header"], "messagePrefix": value}} for value in NOT_AN_ARRAY]
    return [{**event, "data": d} for d in out]


def _malformed_v0(builder: SessionBuilder, rng: random.Random) -> list[RawEvent] | None:
    """The builder's log in legacy spelling with one legacy form malformed: the type of event is
    drawn first, so a form the log holds once (a header's prefix) is not crowded out by one it holds
    at every turn."""
    events = _legacy_log(builder)
    if events is None:
        return None
    options: dict[str, list[tuple[int, RawEvent]]] = {}
    for i, event in enumerate(events):
        for bad in _malformed_forms(event):
            options.setdefault(str(event["type"]), []).append((i, bad))
    if not options:
        return None
    index, bad = rng.choice(options[rng.choice(sorted(options))])
    return [*events[:index], bad, *events[index + 1 :]]


@candidate(Code.LEGACY_SOURCE_INVALID, "upgrade")
def v0_malformed_legacy_form(builder: SessionBuilder, rng: random.Random) -> object:
    """A v0 log written in legacy spelling with one legacy form malformed: a trigger that is a string or
    has no kind, a legacy error reason without its step, a plain reason with extra members, a steering
    message with both shapes (or a string turn), a provenance that is a string, a non-array ``messagePrefix``."""
    events = _malformed_v0(builder, rng)
    if events is None:
        return None
    header: dict[str, Any] = {**STORED_HEADER, "version": LEGACY_VERSION}
    return {"header": header, "events": events}


@candidate(Code.LEGACY_SOURCE_INVALID, "load")
def jsonl_v0_malformed_legacy_form(builder: SessionBuilder, rng: random.Random) -> object:
    """A stored v0 log with one legacy form malformed: the edge refuses it on load."""
    events = _malformed_v0(builder, rng)
    if events is None:
        return None
    return _text([json.dumps({**STORED_HEADER, "version": LEGACY_VERSION}), *(json.dumps(e) for e in events)])


@candidate(Code.LEGACY_SOURCE_INVALID, "upgrade")
def v0_marker_not_v0(builder: SessionBuilder, rng: random.Random) -> object:
    """A v0 log with a delivery marker that names another session, or that carries the v1-only
    ``sessionFormatVersion``."""
    if not _v0_writable(builder):
        return None
    b = _marked(builder)
    marker = _marker(b, "parent-session", None) if rng.random() < 0.5 else _marker(b, str(STORED_HEADER["id"]), 1)
    return _v0_log(b, rng, marker)


# -- every event candidate on every path that admits events ---------------------------------------
#
# A rule holds wherever an event enters a session: appended live, in a seed, on a line of a stored
# log, in a v0 log through the edge.  A port may check it on one path and forget another, so every
# ``append`` candidate is also submitted on the other three, standing where it stood: the last
# event of the seed, the last line of the stored log, the last event of the v0 log.  The model
# decides what the path answers: a lifted candidate is used whenever the path refuses it, with its
# own code or another (the edge refuses some faults as v0 source problems first, a line that is not
# an event object is a malformed line), and dropped where the path accepts it (a form the edge
# converts).

LIFTED_CONTEXTS: tuple[Context, ...] = ("seed", "load", "upgrade")
READ_ON_PATH: dict[tuple[str, Context], str] = {
    ("assistant_v0_provenance", "upgrade"): "the edge converts the v0 form",
    ("header_message_prefix", "upgrade"): "the edge drops a v0 header's messagePrefix (N5)",
    ("tool_result_v0_flat", "upgrade"): "the edge converts the v0 form",
    ("event_as_array", "load"): "a last line that is no event is a torn tail, dropped",
    ("event_double_encoded", "load"): "a last line that is no event is a torn tail, dropped",
    ("seq_not_natural", "load"): "a last line whose seq is not a natural is a torn tail, dropped",
    ("skipped_seq", "load"): "a last line whose seq does not follow is a torn tail, dropped",
    ("duplicate_last_event", "load"): "a last line whose seq does not follow is a torn tail, dropped",
    ("sources_range_encoded", "load"): "a stored line may encode sourceEventSeqs as ranges (INV-JSONL-10)",
}
"""Lifts the model accepts on every builder state: the path reads the candidate as valid (why, per pair)."""


def _upgraded_as_v1(builder: SessionBuilder, rng: random.Random, event: object) -> object:
    return {"header": {**STORED_HEADER, "version": 1}, "events": [*builder.events, event]}


def _upgraded_as_v0(builder: SessionBuilder, rng: random.Random, event: object) -> object:
    return _v0_log(builder, rng, event) if isinstance(event, dict) and _v0_writable(builder) else None


def lift_event(builder: SessionBuilder, rng: random.Random, event: RawEvent, context: Context, code: Code) -> object:
    """``event`` (an append candidate after the builder's log) as a candidate of ``context``: the last
    event of a seed, the last line of a stored log, the last event of a v0 or v1 log through the
    edge; ``None`` where that path does not refuse it with ``code``."""
    if context == "append":
        return event if _refused_with(_model_answer(builder, context, event), code) else None
    if context == "seed":
        value: object = [*builder.events, event]
    elif context == "load":
        value = _stored_with(builder, event)
    else:
        # A v1 log through the edge is validated as v1 and comes back unchanged, or is refused;
        # a v0 log is checked as a v0 source first, so either route may give another code.
        routes = [_upgraded_as_v1, _upgraded_as_v0]
        rng.shuffle(routes)
        logs = [log for log in (route(builder, rng, event) for route in routes) if log is not None]
        return next((log for log in logs if _refused_with(_model_answer(builder, context, log), code)), None)
    return value if _refused_with(_model_answer(builder, context, value), code) else None


def _lifted(mutation: Mutation, context: Context) -> Build:
    def build(builder: SessionBuilder, rng: random.Random) -> object:
        event = mutation.build(builder, rng)
        if event is None and builder.state.trace.open_turn is None:
            # A whole-log candidate may take its scene into a turn first.  The groups that store
            # or seed logs are between turns at most of their inject steps (one ci run of the
            # jsonl group: 179 of 183), so a rule that needs an open turn (a header snapshot, a
            # step) came up there once a run.
            b = _scratch(builder)
            if _put(b, b.turn_start(commit=False)):
                builder, event = b, mutation.build(b, rng)
        return None if event is None else lift_event(builder, rng, event, context, mutation.code)

    build.__name__ = build.__qualname__ = f"{mutation.name}@{context}"
    build.__doc__ = f"``{mutation.name}``'s candidate, submitted in a ``{context}`` candidate."
    return build


def _refused_with(answer: object, code: Code) -> bool:
    # A twin refused for another reason is another rule's candidate: it would be labelled, and
    # routed to groups, by a code the path does not give.
    return isinstance(answer, Violation) and answer.code is code


def _as_v1_text(mutation: Mutation) -> Build:
    """``mutation``'s v0 log written out as a stored v1 log: the v1 reader admits none of the edge's
    conversions (a legacy form, a v0 payload, the restart the edge lets stand)."""

    def build(builder: SessionBuilder, rng: random.Random) -> object:
        log = mutation.build(builder, rng)
        if not isinstance(log, Mapping) or not isinstance(log.get("events"), list):
            return None
        text = _text([json.dumps({**STORED_HEADER, "version": 1}), *(json.dumps(e) for e in log["events"])])
        return text if _refused_with(_model_answer(builder, "load", text), mutation.code) else None

    build.__name__ = build.__qualname__ = f"{mutation.name}@v1-load"
    build.__doc__ = f"``{mutation.name}``'s v0 log, stored as a v1 log."
    return build


NO_V1_TWIN: dict[str, str] = {
    "v0_ignorable_unknown": "the v1 reader keeps an ignorable event of a type it does not know (INV-LOG-6)",
    "v0_newer_version": "stored as v1 the log has version 1; its v0 trace forms are refused by the v1 trace rules",
    "v0_payload_fault": "the v1 reader refuses the fault under the v1 payload or trace rules, not as a v0 source",
    "v0_malformed_legacy_form": "the v1 reader refuses the v0 trace form under the v1 trace rules",
    "v0_marker_not_v0": "the v1 reader refuses the v0 trace form under the v1 trace rules",
}
"""Upgrade mutations with no ``@v1-load`` twin: stored as v1, the log is accepted or refused under
another rule, whose own candidates already cover it (why, per name)."""

for _upgraded in [m for m in MUTATIONS if m.context == "upgrade" and m.name not in NO_V1_TWIN]:
    _build = _as_v1_text(_upgraded)
    MUTATIONS.append(Mutation(_build.__name__, _upgraded.code, "load", _build, lifted_from=_upgraded.name))

def _stored_seed(mutation: Mutation) -> Build:
    """``mutation``'s seed written out as a stored v1 log: the same scene and fault on the load path."""

    def build(builder: SessionBuilder, rng: random.Random) -> object:
        text = _as_stored(mutation.build(builder, rng))
        return text if text is not None and _refused_with(_model_answer(builder, "load", text), mutation.code) else None

    build.__name__ = build.__qualname__ = f"{mutation.name}@load"
    build.__doc__ = f"``{mutation.name}``'s seed, stored as a v1 log."
    return build


for _seeded in [m for m in MUTATIONS if m.context == "seed"]:
    _build = _stored_seed(_seeded)
    MUTATIONS.append(Mutation(_build.__name__, _seeded.code, "load", _build, lifted_from=_seeded.name))

for _appended in [m for m in MUTATIONS if m.context == "append"]:
    for _context in (c for c in LIFTED_CONTEXTS if (_appended.name, c) not in READ_ON_PATH):
        _build = _lifted(_appended, _context)
        MUTATIONS.append(Mutation(_build.__name__, _appended.code, _context, _build, lifted_from=_appended.name))


_BY_CODE: dict[Code, tuple[Mutation, ...]] = {code: tuple(m for m in MUTATIONS if m.code is code) for code in Code}


def mutations_for(code: Code) -> tuple[Mutation, ...]:
    """The mutations that produce ``code``, in registry order."""
    return _BY_CODE[code]


def applicable(builder: SessionBuilder, rng: random.Random) -> tuple[Candidate, ...]:
    """Every mutation that applies to ``builder``'s state, with the candidate it built."""
    built = (Candidate(m, m.build(builder, rng)) for m in MUTATIONS)
    return tuple(c for c in built if c.value is not None)


def submit(builder: SessionBuilder, candidate: Candidate) -> object:
    """The contracted model's answer to ``candidate`` in its context: a :class:`Violation` or the accepted result."""
    value, state = candidate.value, builder.state
    if candidate.context == "append":
        return append_event(state, value)
    if candidate.context == "seed":
        return seed_session(value)
    if candidate.context == "load":
        return load_session(value)
    if candidate.context == "upgrade":
        header, events = freeze(value["header"]), tuple(freeze(e) for e in value["events"])
        assert isinstance(header, Mapping)
        return upgrade_v0(StoredLog(header, events))  # type: ignore[arg-type]
    return cuts_answer(state, value, contracted_compaction)
