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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from sessionlog_spec.contracts.compaction import balanced_around
from sessionlog_spec.contracts.jsonl import load_session
from sessionlog_spec.contracts.legacy import upgrade_v0
from sessionlog_spec.contracts.log import append_event, seed_session
from sessionlog_spec.model.compaction import running_counts
from sessionlog_spec.model.event import SURFACE_TYPES, Event
from sessionlog_spec.model.json_value import MAX_SAFE_INTEGER, freeze, thaw
from sessionlog_spec.model.jsonl import encode_jsonl
from sessionlog_spec.model.legacy import StoredLog
from sessionlog_spec.model.messages import tool_call_ids, tool_result_call_id
from sessionlog_spec.model.violation import Code, Violation
from sessionlog_spec.suite.agent.builder import PROVIDER, RawEvent, SessionBuilder, basic_header, text_block

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
    """A seq written as a string, or negative."""
    e = _benign(_scratch(builder), rng)
    return {**e, "seq": rng.choice((str(e["seq"]), -1 - e["seq"]))}


@candidate(Code.ENVELOPE_BAD_TIME, "append")
def time_not_integer(builder: SessionBuilder, rng: random.Random) -> object:
    """A time from a sub-millisecond clock, or as an ISO string."""
    e = _benign(_scratch(builder), rng)
    return {**e, "time": rng.choice((e["time"] + 0.25, "2026-07-13T10:00:00Z"))}


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
    return events[rng.randrange(1, len(events)) :] if len(events) >= 2 else None


def _committed_damage(builder: SessionBuilder, rng: random.Random, damage: Callable[[list[str], int], None]) -> object:
    """The builder's stored log with ``damage(lines, index)`` done to an event row that a later
    ``turn/end`` proves committed (``None`` when the log has no ``turn/end``)."""
    lines = _jsonl_lines(builder)
    ends = [i for i, line in enumerate(lines) if i > 1 and '"type":"turn/end"' in line]
    if not ends:
        return None
    damage(lines, rng.randrange(1, ends[-1]))
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


@candidate(Code.ASSISTANT_MESSAGE_INVALID, "append")
def assistant_duplicate_call_ids(builder: SessionBuilder, rng: random.Random) -> object:
    """An assistant message asking for two tool calls with the same id."""
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
def header_duplicate_tools(builder: SessionBuilder, rng: random.Random) -> object:
    """A header listing the same tool twice."""
    b = _in_turn(builder)
    return None if b is None else _header_event(b, basic_header(tools=("read_file", "read_file")))


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
def rewrite_flips_is_error(builder: SessionBuilder, rng: random.Random) -> object:
    """A tool-result rewrite that also flips ``isError``."""
    b = _rewrite_context(builder)
    if b is None:
        return None
    seq = rng.choice(_tool_results(b))
    data = _elided(_data(b.state.events[seq]))
    block = data["message"]["content"][0]
    block["isError"] = not block.get("isError", False)
    return _rewrite(b, seq, seq, data)


@candidate(Code.TOOL_REWRITE_CHANGES, "append")
def rewrite_changes_call(builder: SessionBuilder, rng: random.Random) -> object:
    """A tool-result rewrite that answers a different call (or renames the message)."""
    b = _rewrite_context(builder)
    if b is None:
        return None
    seq = rng.choice(_tool_results(b))
    data = _elided(_data(b.state.events[seq]))
    message = data["message"]
    if rng.random() < 0.5:
        message["source"]["callId"] = message["content"][0]["toolCallId"] = message["source"]["callId"] + "-retry"
    else:
        message["id"] = message["id"] + "-rewritten"
    return _rewrite(b, seq, seq, data)


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
    """A ``turn/end`` with a v0 reason (aborted without cause, disposed, error with failure) or an unknown kind."""
    b = _scratch(builder)
    if _open_turn(b) is None or _open_step(b) is not None:
        return None
    reason = rng.choice(
        (
            {"kind": "aborted"},
            {"kind": "disposed"},
            {"kind": "error", "step": 1, "failure": {"message": "overloaded", "code": "E_OVERLOADED"}},
            {"kind": "cancelled"},
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


@candidate(Code.EVENT_OUTSIDE_STEP, "append")
def chunk_wrong_step(builder: SessionBuilder, rng: random.Random) -> object:
    """A streaming chunk naming another step than the open one."""
    b = _scratch(builder)
    step = _open_step(b)
    if step is None:
        return None
    e = b.chunk(commit=False)
    e["data"]["step"] = rng.choice([step[1] + 1] + ([step[1] - 1] if step[1] >= 2 else []))
    return e


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


@candidate(Code.TOOL_PAIRING_NEGATIVE, "append")
def result_without_pending_call(builder: SessionBuilder, rng: random.Random) -> object:
    """A tool result appended when no call is pending on the surface (a retried write of an answered result)."""
    b = _scratch(builder)
    if b.state.pending_calls != 0:
        return None
    step = _open_step(b)
    answered = _answered_in_step(b) if step else []
    call = rng.choice(answered) if answered else "call-orphan"
    if step is not None:
        return b.tool_result(call, commit=False)
    trace = b.state.trace
    data = b.tool_result_data(call, "ok")
    data["turn"], data["step"] = max(trace.last_turn, 1), max(trace.last_step, 1)
    return b.event("tool/result", data, False, surfaceOp="append")


@candidate(Code.TOOL_PAIRING_NEGATIVE, "append")
def not_started_result_without_pending_call(builder: SessionBuilder, rng: random.Random) -> object:
    """A "never started" result in the open step when no call is pending on the surface.

    The trace exempts such results from needing a recorded start, so the tool-pairing balance is
    the only rule that refuses it: a port that skips the balance accepts it (with an ordinary
    result the trace would refuse first and hide the missing check).
    """
    b = _scratch(builder)
    if b.state.pending_calls != 0 or _open_step(b) is None:
        return None
    return b.not_started_result(rng.choice(["call-orphan", *_answered_in_step(b)]), commit=False)


@candidate(Code.REPLACE_SPLITS_TOOL_PAIR, "append")
def compaction_splits_pair(builder: SessionBuilder, rng: random.Random) -> object:
    """A compaction whose range separates a tool call from its result."""
    b = _scratch(builder)
    nodes = b.state.surface.nodes
    counts = running_counts(nodes, b.state.events)
    assert not isinstance(counts, Violation)
    splits = [
        (nodes[i], nodes[j]) for i in range(len(nodes)) for j in range(i, len(nodes)) if (counts[i] == 0) != (counts[j + 1] == 0)
    ]
    if not splits:
        return None
    return b.compaction(*rng.choice(splits), commit=False)


@candidate(Code.REPLACE_SPLITS_TOOL_PAIR, "append")
def summary_asks_for_tools(builder: SessionBuilder, rng: random.Random) -> object:
    """An assistant-message replacement over a legal range that asks for a tool call of its own."""
    b = _scratch(builder)
    picked = _legal_range(b, rng)
    if picked is None or _open_step(b) is None:
        return None
    start, end = picked
    e = _assistant(b, (f"call-{rng.randrange(1000)}",))
    return {**e, "surfaceOp": {"op": "replace", "start": start, "end": end}, "sourceEventSeqs": _shadowed_by(b, start, end)}


@candidate(Code.NOT_ON_SURFACE, "cuts")
def cuts_off_surface(builder: SessionBuilder, rng: random.Random) -> object:
    """A balance query for a seq that is not on the surface: shadowed, log-only, or not yet written."""
    b = _scratch(builder)
    return rng.choice(_shadowed_seqs(b) or _off_surface_seqs(b) or [b.next_seq])


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
    texts = ["a", "b", "c"]
    data: dict[str, Any] = {"turn": 1, "step": 1, "index": 0, "dt": [1, 1], "texts": texts}
    bad = rng.choice(
        (
            {"data": {**data, "dt": [1]}},
            {"data": {**data, "texts": ["a", 1, "c"]}},
            {"seq0": -1},
            {"data": {**data, "chunk": "x"}},
            {"data": {**data, "turn": 1.5}},
            {"time0": "0"},
        )
    )
    row_type = rng.choice(("text-chunks", "reasoning-chunks"))

    def insert(lines: list[str], i: int) -> None:
        lines[i] = json.dumps({"type": row_type, "seq0": i - 1, "time0": 0, "data": data, **bad})

    return _committed_damage(builder, rng, insert)


@candidate(Code.JSONL_MALFORMED_LINE, "load")
def malformed_range_provenance_in_committed_history(builder: SessionBuilder, rng: random.Random) -> object:
    """A row whose ``sourceEventSeqs`` is a malformed range list (inverted, not a pair, past its seq,
    not increasing) before a ``turn/end``."""

    def spoil(lines: list[str], i: int) -> None:
        row = json.loads(lines[i])
        seq = row["seq"]
        row["sourceEventSeqs"] = rng.choice(([[1, 0]], [[0]], [[0, seq]], [[0, 0], 0], "0-1", [[0, 0.5]]))
        lines[i] = json.dumps(row)

    return _committed_damage(builder, rng, spoil)


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
    return balanced_around(state.surface.nodes, state.events, value)
