"""Relationships between events: the pairings a log keeps across events (INV-REL).

The trace (:mod:`sessionlog_spec.model.trace`) says where events may sit; this module says which
earlier event each one answers.  Seven families, one forward pass:

* tool lifecycles: a ``tool-call`` block of an ``assistant/message`` *advertises* a call for the
  rest of its step; ``tool/call`` starts exactly that call (same id, name and raw arguments); an
  appended ``tool/result`` resolves it, and a call that never started is resolved only by the
  exact crash-repair result; a step or turn never ends with an advertised call unresolved;
* compactions: one open at a time, owned by the turn it started in (``null``: between turns),
  summarised at most once and before a successful end, never crossed by a turn boundary, and its
  summary (like a prune) names an exact span of the current surface;
* retries: ``llm/retry`` sits at the current turn and step, uses the provider of the latest
  request header and continues its policy chain; ``llm/retry-started`` starts one scheduled attempt;
* programmatic tool calls (PTC): each dispatch keeps its root, hangs under its root, starts once
  and settles once with the same call;
* commands: ``command/done`` follows its ``command/run``; a run id is used once;
* titles: the cited messages are human ``user/message`` events, and a title request frames them
  exactly;
* delivery markers of the log's own generation name the log's own session.

Every collection here is either step-scoped (tool lifecycles) or small and whole-log (retries,
PTC calls, commands), so a state is cheap to copy.  Two facts are too large to copy per event and
are passed in instead: the log so far (titles and commands cite earlier events by seq) and the
current surface (compaction spans).

Equality follows JSON as a JavaScript reader sees it, because the rules compare raw payload
members: ``1`` equals ``1.0``, ``true`` is not ``1``, a missing member equals only a missing
member, and an object or array is never equal to another one (only PTC arguments are compared
deeply, with :func:`json_equal`).

A compaction left open by a crash is the one place where a verdict depends on what follows: the
crash-repair closers end the turn while the compaction is still open, and the ``session/end-seed``
written when the log is resumed or forked retires the orphan.  So a turn boundary that crosses an
open compaction is held as *pending* and is refused only once the log shows it was not an orphan
(a later ``compaction/start`` or ``compaction/end`` before any end-seed) or ends without an
end-seed (:func:`relationship_finish`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TypeVar

from sessionlog_spec.model.event import Append, Event, is_known_type
from sessionlog_spec.model.json_value import JsonObject, JsonValue, as_array, as_int, as_object, json_equal
from sessionlog_spec.model.repair import NOT_STARTED_TEXT
from sessionlog_spec.model.violation import Code, Violation

NOT_STARTED_NAME = "ToolNotStartedError"
NOT_STARTED_CODE = "TOOL_NOT_STARTED"
COMPACT_PLUGIN = "compact"
TITLE_PLUGIN = "dsh-session-title-llm"
TITLE_FRAME_PREFIX = "Generate the session title from this JSON array of human messages:\n"
COMMAND_TYPES = frozenset({"command/run", "command/done"})

EMPTY: JsonObject = MappingProxyType({})

# -- strict equality of raw members ---------------------------------------------------------------

Token = Hashable
"""A hashable stand-in for a raw JSON member, equal exactly when the members are strictly equal."""


class _Unique:
    """An object or array member: equal to nothing but itself, as under strict equality."""

    __slots__ = ()


ABSENT: Token = ("absent",)
NULL: Token = ("null",)


def token(value: JsonValue) -> Token:
    """The token of a present member: numbers by value (``1`` is ``1.0``), strings and booleans by
    type and value, ``null`` by itself, an object or array by identity."""
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, int | float):
        return ("number", value)
    if isinstance(value, str):
        return ("string", value)
    if value is None:
        return NULL
    return ("object", _Unique())


def member(obj: JsonObject | None, key: str) -> Token:
    """The token of ``obj[key]``; :data:`ABSENT` when ``obj`` is not an object or lacks ``key``."""
    if obj is None or key not in obj:
        return ABSENT
    return token(obj[key])


def string(text: str) -> Token:
    """The token of a string member."""
    return ("string", text)


def number(value: int) -> Token:
    """The token of a number member."""
    return ("number", value)


def _object_at(obj: JsonObject | None, key: str) -> JsonObject | None:
    return as_object(obj.get(key)) if obj is not None else None


def _array_at(obj: JsonObject | None, key: str) -> tuple[JsonValue, ...]:
    """``obj[key]`` as an array; empty when it is not one (the payload rules refuse that earlier)."""
    return (as_array(obj.get(key)) if obj is not None else None) or ()


def _show(tok: Token) -> str:
    """A token for a message: the value it stands for."""
    if isinstance(tok, tuple) and len(tok) == 2 and not isinstance(tok[1], _Unique):
        return repr(tok[1])
    return "<absent>" if tok == ABSENT else "null" if tok == NULL else "<object>"


K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def _with(mapping: Mapping[K, V], key: K, value: V) -> Mapping[K, V]:
    """A read-only copy of ``mapping`` with ``key`` set to ``value``."""
    return MappingProxyType({**mapping, key: value})


# -- the state ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SessionIdentity:
    """What the session header tells the delivery-marker rule about the log it heads."""

    session_id: str
    format_version: int = 1
    """The generation of the log being checked: a marker is checked only when it was accepted in
    this generation (a v1 log checks markers with ``sessionFormatVersion: 1``; the v0 source of the
    edge checks markers without one)."""
    has_parent: bool = False
    """The header names a ``parentSession``."""
    inherited_event_count: int = 0
    """The seed length: events before this seq were copied from an ancestor."""


@dataclass(frozen=True, slots=True)
class ToolLifecycle:
    """A call advertised in the open step and not yet resolved."""

    call: Token
    name: Token
    arguments: Token
    started: bool = False
    """A ``tool/call`` recorded that the harness started it."""


@dataclass(frozen=True, slots=True)
class OpenCompaction:
    """The compaction between its ``compaction/start`` and its ``compaction/end``."""

    compaction_id: Token
    source_command_id: Token
    turn: Token
    """The owner turn; :data:`NULL` for a standalone compaction between turns."""
    start_seq: int
    summarized: bool = False
    crossed_at: int | None = None
    """The seq of the first turn boundary met while open: refused unless an end-seed retires this
    compaction as a crash orphan before any other ``compaction/start`` or ``compaction/end``."""


@dataclass(frozen=True, slots=True)
class RetryAttempt:
    """The latest scheduled attempt of one retry policy chain."""

    retry_id: Token
    retry: JsonValue


@dataclass(frozen=True, slots=True)
class PtcStart:
    """A started programmatic tool call, by ``subCallId``."""

    root: Token
    parent: Token
    name: Token
    arguments: tuple[bool, JsonValue]
    """Whether ``arguments`` was present, and its value (compared deeply, it is opaque JSON)."""
    settled: bool = False


def _empty_map() -> Mapping[K, V]:
    return MappingProxyType({})


ChainKey = tuple[Token, Token, Token, Token]
"""A retry policy chain: turn, step, provider, policyKey."""
AttemptKey = tuple[Token, Token]
"""One scheduled attempt: retryId, retry."""


@dataclass(frozen=True, slots=True)
class RelationState:
    """What the relationship rules remember after a prefix of the log."""

    identity: SessionIdentity | None = None
    """The session header facts; without them delivery markers are not checked."""
    open_turn: Token = NULL
    open_step: Token = NULL
    ended_steps: int = 0
    """``step/end`` events in the open turn: a retry after its step names this step."""
    tools: tuple[ToolLifecycle, ...] = ()
    provider: Token = ABSENT
    """The provider of the latest ``request/header``."""
    compaction: OpenCompaction | None = None
    chains: Mapping[ChainKey, RetryAttempt] = field(default_factory=_empty_map)
    retry_ids: frozenset[Token] = frozenset()
    scheduled: Mapping[AttemptKey, tuple[Token, Token]] = field(default_factory=_empty_map)
    """Each scheduled attempt's turn and step."""
    retries_started: frozenset[AttemptKey] = frozenset()
    ptc_roots: Mapping[Token, Token] = field(default_factory=_empty_map)
    """Each PTC ``subCallId`` seen so far, with its root."""
    ptc_starts: Mapping[Token, PtcStart] = field(default_factory=_empty_map)
    commands: frozenset[Token] = frozenset()


def relations_for(identity: SessionIdentity | None) -> RelationState:
    """The state before the first event of a log headed by ``identity``."""
    return RelationState(identity=identity)


@dataclass(frozen=True, slots=True)
class At:
    """The event being related, and what it may cite: the log and the surface before it."""

    event: Event
    data: JsonObject
    """The event's payload (empty when it is not an object: the payload rules refuse that first)."""
    log: Sequence[Event]
    surface: Sequence[int]


# -- one event ------------------------------------------------------------------------------------


def relationship_transition(
    state: RelationState, event: Event, *, log: Sequence[Event], surface: Sequence[int]
) -> RelationState | Violation:
    """The state after ``event``, or the violation that refuses it (INV-REL-1..29).

    ``log`` is the log before ``event`` (``log[s]`` is the event at seq ``s``) and ``surface`` the
    surface node seqs before it.  The event has passed the envelope, payload, surface and trace
    rules, so its brackets are trusted: the open turn and step recorded here are the trace's.
    Events outside the v1 vocabulary (ignorable unknowns) relate to nothing.
    """
    if not is_known_type(event.type):
        return state
    data = as_object(event.data) or EMPTY
    if event.type in ("turn/start", "turn/end"):
        state = _note_crossing(state, event)
    handler = _HANDLERS.get(event.type)
    return state if handler is None else handler(state, At(event, data, log, surface))


def relationship_finish(state: RelationState) -> Violation | None:
    """INV-REL-11: the verdict on a complete log; a turn boundary crossed a compaction that no
    end-seed retired."""
    compaction = state.compaction
    if compaction is not None and compaction.crossed_at is not None:
        return _crossing(compaction)
    return None


# -- brackets: tracked, not judged (the trace judges them) -----------------------------------------


def _turn_start(state: RelationState, at: At) -> RelationState | Violation:
    return replace(state, open_turn=member(at.data, "turn"), open_step=NULL, ended_steps=0, tools=())


def _turn_end(state: RelationState, at: At) -> RelationState | Violation:
    problem = _unresolved(state, at.event)
    return problem or replace(state, open_turn=NULL)


def _step_start(state: RelationState, at: At) -> RelationState | Violation:
    return replace(state, open_step=member(at.data, "step"))


def _step_end(state: RelationState, at: At) -> RelationState | Violation:
    problem = _unresolved(state, at.event)
    return problem or replace(state, open_step=NULL, ended_steps=state.ended_steps + 1, tools=())


# -- tool lifecycles (INV-REL-1..5) ------------------------------------------------------------------


def _lifecycle(state: RelationState, call: Token) -> ToolLifecycle | None:
    return next((lc for lc in state.tools if lc.call == call), None)


def _unresolved(state: RelationState, event: Event) -> Violation | None:
    """INV-REL-5: a step or turn ends only when every call advertised in it is resolved."""
    if not state.tools:
        return None
    return Violation(
        Code.TOOL_CALL_UNRESOLVED,
        f"{event.type} at seq {event.seq} leaves the advertised tool call {_show(state.tools[0].call)} unresolved",
    )


def _assistant_message(state: RelationState, at: At) -> RelationState | Violation:
    """INV-REL-2: every tool-call block advertises a call id not already pending in the step."""
    tools = list(state.tools)
    for raw in _array_at(_object_at(at.data, "message"), "content"):
        block = as_object(raw)
        if member(block, "type") != string("tool-call"):
            continue
        call = member(block, "id")
        if any(lc.call == call for lc in tools):
            return Violation(
                Code.TOOL_CALL_ID_REPEATED,
                f"assistant/message at seq {at.event.seq} advertises tool call {_show(call)}, "
                "which is already pending in this step",
            )
        tools.append(ToolLifecycle(call, member(block, "name"), member(block, "arguments")))
    return replace(state, tools=tuple(tools))


def _tool_call(state: RelationState, at: At) -> RelationState | Violation:
    """INV-REL-1: ``tool/call`` starts one advertised, not yet started call with the same name and
    raw arguments, so the log never records running something the model did not ask for."""
    call = member(at.data, "callId")
    lc = _lifecycle(state, call)
    if lc is None or lc.started or lc.name != member(at.data, "name") or lc.arguments != member(at.data, "arguments"):
        return Violation(
            Code.TOOL_CALL_NOT_ADVERTISED,
            f"tool/call at seq {at.event.seq} ({_show(call)}) does not match one advertised, not yet started tool call",
        )
    return replace(state, tools=tuple(replace(x, started=True) if x is lc else x for x in state.tools))


def repair_result_id(call_id: str, seq: int) -> str:
    """The message id crash repair gives the result it writes for ``call_id`` at ``seq``."""
    return f"interrupted-tool-result-{call_id}-{seq}"


def is_not_started_repair(event: Event, data: JsonObject) -> bool:
    """Whether a ``tool/result`` is exactly the crash-repair result for a call that never started:
    the ``ToolNotStartedError`` error, no sources, the repair's id, one error block with the
    repair's text.  Anything less is a result for work that never ran."""
    error = _object_at(data, "error")
    message = _object_at(data, "message")
    source = _object_at(message, "source")
    call_id = source.get("callId") if source is not None else None
    content = _array_at(message, "content")
    block = as_object(content[0]) if content else None
    inner = _array_at(block, "content")
    text = as_object(inner[0]) if len(inner) == 1 else None
    return (
        member(error, "name") == string(NOT_STARTED_NAME)
        and member(error, "code") == string(NOT_STARTED_CODE)
        and event.source_event_seqs is None
        and isinstance(call_id, str)
        and member(message, "id") == string(repair_result_id(call_id, event.seq))
        and member(block, "isError") == token(True)
        and member(text, "type") == string("text")
        and member(text, "text") == string(NOT_STARTED_TEXT)
    )


def _tool_result(state: RelationState, at: At) -> RelationState | Violation:
    """INV-REL-3, INV-REL-4: an appended result resolves one pending advertised call; a call that
    never started only by the exact repair result.  A rewrite (replace) resolves nothing."""
    if not isinstance(at.event.surface_op, Append):
        return state
    call = member(_object_at(_object_at(at.data, "message"), "source"), "callId")
    lc = _lifecycle(state, call)
    if lc is None:
        return Violation(
            Code.TOOL_RESULT_UNADVERTISED,
            f"tool/result at seq {at.event.seq} answers {_show(call)}, which no assistant message of this step left pending",
        )
    if not lc.started and not is_not_started_repair(at.event, at.data):
        return Violation(
            Code.TOOL_RESULT_NOT_EXACT_REPAIR,
            f"tool/result at seq {at.event.seq} answers {_show(call)}, which never started, "
            f"but is not the exact {NOT_STARTED_NAME} repair result",
        )
    return replace(state, tools=tuple(x for x in state.tools if x is not lc))


# -- request headers ---------------------------------------------------------------------------------


def _request_header(state: RelationState, at: At) -> RelationState | Violation:
    """The provider in force for later retries (any later step or turn)."""
    return replace(state, provider=member(_object_at(_object_at(at.data, "header"), "config"), "provider"))


# -- compactions (INV-REL-6..12) ---------------------------------------------------------------------


def _crossing(compaction: OpenCompaction) -> Violation:
    return Violation(
        Code.COMPACTION_CROSSES_TURN,
        f"the turn boundary at seq {compaction.crossed_at} crosses the compaction started at seq "
        f"{compaction.start_seq}, which no session/end-seed retired",
    )


def _note_crossing(state: RelationState, event: Event) -> RelationState:
    """INV-REL-11: remember the first turn boundary met while a compaction is open."""
    compaction = state.compaction
    if compaction is None or compaction.crossed_at is not None:
        return state
    return replace(state, compaction=replace(compaction, crossed_at=event.seq))


def _owner_problem(state: RelationState, event: Event, named: JsonObject | None) -> Violation | None:
    """INV-REL-8: ``named`` carries the open compaction's id and source command id."""
    compaction = state.compaction
    if (
        compaction is None
        or member(named, "compactionId") != compaction.compaction_id
        or member(named, "sourceCommandId") != compaction.source_command_id
    ):
        return Violation(
            Code.COMPACTION_NOT_OWNED,
            f"{event.type} at seq {event.seq} names compaction {_show(member(named, 'compactionId'))}, "
            "which is not the open compaction",
        )
    return None


def _turn_problem(state: RelationState, event: Event, owner: Token) -> Violation | None:
    """INV-REL-7: a compaction acts inside its owner turn, or between turns when it has none."""
    if owner != state.open_turn:
        return Violation(
            Code.COMPACTION_TURN_MISMATCH,
            f"{event.type} at seq {event.seq} belongs to turn {_show(owner)}; the open turn is {_show(state.open_turn)}",
        )
    return None


def _index(surface: Sequence[int], value: JsonValue) -> int:
    """The position of node ``value`` on the surface, or -1."""
    seq = as_int(value)
    if seq is None or seq not in surface:
        return -1
    return surface.index(seq)


def _span_problem(event: Event, data: JsonObject, surface: Sequence[int]) -> Violation | None:
    """INV-REL-12: ``shadowedSeqs`` is exactly the current surface from ``shadowedRange.start`` to
    ``shadowedRange.end``, so the summary prices what the replacement will remove."""
    shadowed_range = _object_at(data, "shadowedRange")
    start = _index(surface, shadowed_range.get("start") if shadowed_range is not None else None)
    end = _index(surface, shadowed_range.get("end") if shadowed_range is not None else None)
    expected = () if start < 0 or end < start else tuple(surface[start : end + 1])
    named = _array_at(data, "shadowedSeqs")
    if len(expected) != len(named) or any(number(s) != token(n) for s, n in zip(expected, named, strict=True)):
        return Violation(
            Code.COMPACTION_SPAN_NOT_ON_SURFACE,
            f"{event.type} at seq {event.seq} shadowedSeqs do not name an exact span of the current surface",
        )
    return None


def _compaction_start(state: RelationState, at: At) -> RelationState | Violation:
    """INV-REL-6, INV-REL-7: one compaction at a time, started in its owner turn."""
    compaction = state.compaction
    if compaction is not None and compaction.crossed_at is not None:
        return _crossing(compaction)
    if compaction is not None:
        return Violation(
            Code.COMPACTION_OVERLAP,
            f"compaction/start at seq {at.event.seq} overlaps the compaction started at seq {compaction.start_seq}",
        )
    owner = member(at.data, "turn")
    problem = _turn_problem(state, at.event, owner)
    if problem is not None:
        return problem
    opened = OpenCompaction(member(at.data, "compactionId"), member(at.data, "sourceCommandId"), owner, at.event.seq)
    return replace(state, compaction=opened)


def _compaction_summary(state: RelationState, at: At) -> RelationState | Violation:
    """INV-REL-8, INV-REL-7, INV-REL-9, INV-REL-12: one summary of the open compaction, in its turn,
    over a current span."""
    problem = _owner_problem(state, at.event, at.data)
    if problem is not None:
        return problem
    compaction = state.compaction
    assert compaction is not None
    problem = _turn_problem(state, at.event, compaction.turn)
    if problem is None and compaction.summarized:
        problem = Violation(
            Code.COMPACTION_SUMMARY_REPEATED,
            f"compaction/summary at seq {at.event.seq} repeats the summary of the compaction "
            f"started at seq {compaction.start_seq}",
        )
    problem = problem or _span_problem(at.event, at.data, at.surface)
    return problem or replace(state, compaction=replace(compaction, summarized=True))


def _compaction_end(state: RelationState, at: At) -> RelationState | Violation:
    """INV-REL-8, INV-REL-7, INV-REL-10: the open compaction ends in its owner turn, with a summary
    unless it reports an error."""
    compaction = state.compaction
    if compaction is not None and compaction.crossed_at is not None:
        return _crossing(compaction)
    problem = _owner_problem(state, at.event, at.data)
    if problem is not None:
        return problem
    assert compaction is not None
    if member(at.data, "turn") != compaction.turn:
        return Violation(
            Code.COMPACTION_TURN_MISMATCH,
            f"compaction/end at seq {at.event.seq} names turn {_show(member(at.data, 'turn'))}; "
            f"its compaction belongs to turn {_show(compaction.turn)}",
        )
    problem = _turn_problem(state, at.event, compaction.turn)
    if problem is None and "error" not in at.data and not compaction.summarized:
        problem = Violation(
            Code.COMPACTION_SUMMARY_MISSING,
            f"compaction/end at seq {at.event.seq} reports success, but its compaction has no summary",
        )
    return problem or replace(state, compaction=None)


def _compaction_prune(state: RelationState, at: At) -> RelationState | Violation:
    """INV-REL-12: a prune names an exact current span."""
    return _span_problem(at.event, at.data, at.surface) or state


def _user_message(state: RelationState, at: At) -> RelationState | Violation:
    """INV-REL-8: a compaction checkpoint (a replacement from the ``compact`` plugin) belongs to the
    open compaction."""
    source = _object_at(at.data, "source")
    if isinstance(at.event.surface_op, Append) or member(source, "kind") != string("plugin"):
        return state
    if member(source, "plugin") != string(COMPACT_PLUGIN):
        return state
    return _owner_problem(state, at.event, source) or state


def _end_seed(state: RelationState, at: At) -> RelationState | Violation:
    """INV-REL-11: a compaction still open at the end of a seed is a crash orphan; it holds nothing."""
    return replace(state, compaction=None)


# -- retries (INV-REL-13..18) ------------------------------------------------------------------------


def _retry(state: RelationState, at: At) -> RelationState | Violation:
    """INV-REL-13..16: a retry is scheduled for the current step (or the step that just ended), by
    the provider in force, as the next attempt of its policy chain under the chain's one id."""
    step = state.open_step if state.open_step != NULL else number(state.ended_steps)
    if state.open_turn == NULL or member(at.data, "turn") != state.open_turn or member(at.data, "step") != step:
        return Violation(
            Code.RETRY_OUTSIDE_STEP,
            f"llm/retry at seq {at.event.seq} names turn {_show(member(at.data, 'turn'))} step {_show(member(at.data, 'step'))}; "
            f"the current turn is {_show(state.open_turn)} and step {_show(step)}",
        )
    provider = member(at.data, "provider")
    if provider != state.provider:
        return Violation(
            Code.RETRY_PROVIDER_MISMATCH,
            f"llm/retry at seq {at.event.seq} names provider {_show(provider)}; "
            f"the latest request/header uses {_show(state.provider)}",
        )
    chain: ChainKey = (member(at.data, "turn"), member(at.data, "step"), provider, member(at.data, "policyKey"))
    prior = state.chains.get(chain)
    retry_id = member(at.data, "retryId")
    retry = at.data.get("retry")
    expected = _next_attempt(prior)
    if expected is None or member(at.data, "retry") != ("number", expected):
        return Violation(
            Code.RETRY_NUMBER_INVALID,
            f"llm/retry at seq {at.event.seq} must be attempt {expected if expected is not None else '?'} of its policy chain",
        )
    if prior is not None and prior.retry_id != retry_id:
        return Violation(Code.RETRY_ID_INVALID, f"llm/retry at seq {at.event.seq} changes the retryId of its policy chain")
    if prior is None and retry_id in state.retry_ids:
        return Violation(
            Code.RETRY_ID_INVALID, f"llm/retry at seq {at.event.seq} reuses retryId {_show(retry_id)} of another policy chain"
        )
    attempt: AttemptKey = (retry_id, member(at.data, "retry"))
    scheduled = state.scheduled if attempt in state.scheduled else _with(state.scheduled, attempt, chain[:2])
    return replace(
        state,
        chains=_with(state.chains, chain, RetryAttempt(retry_id, retry)),
        retry_ids=state.retry_ids | {retry_id},
        scheduled=scheduled,
    )


def _next_attempt(prior: RetryAttempt | None) -> int | float | None:
    """The attempt number after ``prior`` (1 for a new chain); ``None`` when ``prior`` has none."""
    if prior is None:
        return 1
    last = prior.retry
    return last + 1 if isinstance(last, int | float) and not isinstance(last, bool) else None


def _retry_started(state: RelationState, at: At) -> RelationState | Violation:
    """INV-REL-17, INV-REL-18: an attempt starts once, at the turn and step it was scheduled for."""
    attempt: AttemptKey = (member(at.data, "retryId"), member(at.data, "retry"))
    where = state.scheduled.get(attempt)
    if where is None:
        return Violation(
            Code.RETRY_START_UNPAIRED,
            f"llm/retry-started at seq {at.event.seq} starts attempt {_show(attempt[1])} of {_show(attempt[0])}, "
            "which no llm/retry scheduled",
        )
    if where != (member(at.data, "turn"), member(at.data, "step")):
        return Violation(
            Code.RETRY_START_MISMATCH, f"llm/retry-started at seq {at.event.seq} names another turn or step than its llm/retry"
        )
    if attempt in state.retries_started:
        return Violation(Code.RETRY_START_REPEATED, f"llm/retry-started at seq {at.event.seq} starts an attempt a second time")
    return replace(state, retries_started=state.retries_started | {attempt})


# -- programmatic tool calls (INV-REL-19..22) --------------------------------------------------------


def _ptc(state: RelationState, at: At) -> RelationState | Violation:
    """INV-REL-19..22: dispatches run inside a turn, under one root, start once and settle once as started."""
    where = f"{at.event.type} at seq {at.event.seq}"
    if state.open_turn == NULL:
        return Violation(Code.PTC_OUTSIDE_TURN, f"{where} is outside an open turn")
    root, parent, child = member(at.data, "rootCallId"), member(at.data, "parentCallId"), member(at.data, "subCallId")
    known = state.ptc_roots.get(child)
    if known is not None and known != root:
        return Violation(Code.PTC_ANCESTRY_INVALID, f"{where} moves subCallId {_show(child)} to another rootCallId")
    if parent != root and state.ptc_roots.get(parent) != root:
        return Violation(
            Code.PTC_ANCESTRY_INVALID, f"{where} parentCallId {_show(parent)} is neither the root nor a call under it"
        )
    arguments = ("arguments" in at.data, at.data.get("arguments"))
    starts = state.ptc_starts
    if at.event.type == "tool/code-dispatch-start":
        if child in starts:
            return Violation(Code.PTC_START_REPEATED, f"{where} starts subCallId {_show(child)} a second time")
        starts = _with(starts, child, PtcStart(root, parent, member(at.data, "name"), arguments))
    else:
        start = starts.get(child)
        if start is None or start.settled:
            return Violation(Code.PTC_SETTLE_UNPAIRED, f"{where} settles subCallId {_show(child)}, which has no unsettled start")
        if (
            start.root != root
            or start.parent != parent
            or start.name != member(at.data, "name")
            or start.arguments[0] != arguments[0]
            or not json_equal(start.arguments[1], arguments[1])
        ):
            return Violation(Code.PTC_SETTLE_MISMATCH, f"{where} settles a different call than its start")
        starts = _with(starts, child, replace(start, settled=True))
    return replace(state, ptc_roots=_with(state.ptc_roots, child, root), ptc_starts=starts)


# -- commands (INV-REL-23..25) -----------------------------------------------------------------------


def _earlier(log: Sequence[Event], value: JsonValue) -> Event | None:
    """The event at seq ``value`` in ``log``, or ``None``."""
    seq = as_int(value)
    return log[seq] if seq is not None and 0 <= seq < len(log) else None


def _command_run(state: RelationState, at: At) -> RelationState | Violation:
    """INV-REL-23: a command id names one run."""
    command = member(at.data, "commandId")
    if command in state.commands:
        return Violation(Code.COMMAND_RUN_REPEATED, f"command/run at seq {at.event.seq} repeats commandId {_show(command)}")
    return replace(state, commands=state.commands | {command})


def _command_done(state: RelationState, at: At) -> RelationState | Violation:
    """INV-REL-24, INV-REL-25: a command finishes after its run; only a success cites the event it
    produced, and that event is not command bookkeeping."""
    command = member(at.data, "commandId")
    if command not in state.commands:
        return Violation(
            Code.COMMAND_DONE_UNPAIRED, f"command/done at seq {at.event.seq} ({_show(command)}) has no prior command/run"
        )
    if "sourceEventSeq" in at.data:
        source = _earlier(at.log, at.data["sourceEventSeq"])
        if member(at.data, "kind") != string("success") or (source is not None and source.type in COMMAND_TYPES):
            return Violation(
                Code.COMMAND_DONE_SOURCE_INVALID,
                f"command/done at seq {at.event.seq} cites sourceEventSeq, which only a success may, and never a command event",
            )
    return state


# -- titles (INV-REL-26..28) -------------------------------------------------------------------------


def js_string(text: str) -> str:
    """``text`` as JavaScript's ``JSON.stringify`` writes a string: only quote, backslash, control
    characters and unpaired surrogates are escaped."""
    out = ['"']
    index = 0
    while index < len(text):
        char = text[index]
        code = ord(char)
        following = ord(text[index + 1]) if index + 1 < len(text) else 0
        if char in _JS_ESCAPES:
            out.append(_JS_ESCAPES[char])
        elif code < 0x20:
            out.append(f"\\u{code:04x}")
        elif 0xD800 <= code <= 0xDBFF and 0xDC00 <= following <= 0xDFFF:
            out.append(chr(0x10000 + ((code - 0xD800) << 10) + (following - 0xDC00)))
            index += 1
        elif 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
        index += 1
    out.append('"')
    return "".join(out)


_JS_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def human_text(message: Event) -> str:
    """The text a title sees of a human message: its text blocks, one per line."""
    blocks = _array_at(as_object(message.data), "content")
    texts = [
        b["text"] for b in map(as_object, blocks) if b is not None and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    return "\n".join(str(t) for t in texts)


def title_frame(cited: Sequence[tuple[int, str]]) -> str:
    """The one user message a title request sends for the cited ``(seq, text)`` human messages."""
    items = ",".join(f'{{"seq":{seq},"text":{js_string(text)}}}' for seq, text in cited)
    return f"{TITLE_FRAME_PREFIX}[{items}]"


def is_human_message(event: Event) -> bool:
    """Whether ``event`` is a ``user/message`` a human wrote (what a title may cite)."""
    origin = _object_at(as_object(event.data), "source")
    return event.type == "user/message" and member(origin, "kind") == string("user")


def _cited_humans(event: Event, data: JsonObject, log: Sequence[Event]) -> list[tuple[int, str]] | Violation:
    """INV-REL-27: every cited seq is a ``user/message`` a human wrote."""
    cited: list[tuple[int, str]] = []
    for raw in _array_at(data, "messageSeqs"):
        source = _earlier(log, raw)
        if source is None or not is_human_message(source):
            return Violation(
                Code.TITLE_SOURCE_NOT_HUMAN,
                f"{event.type} at seq {event.seq} messageSeqs cites {raw!r}, which is not a human user/message",
            )
        cited.append((source.seq, human_text(source)))
    return cited


def _title(state: RelationState, at: At) -> RelationState | Violation:
    """INV-REL-26, INV-REL-27: a title the user typed cites nothing; any other cites human messages."""
    user_title = member(_object_at(at.data, "source"), "kind") == string("user")
    if (len(_array_at(at.data, "messageSeqs")) == 0) != user_title:
        return Violation(
            Code.TITLE_SEQS_CARDINALITY, f"session/title at seq {at.event.seq} messageSeqs must be empty exactly for a user title"
        )
    cited = _cited_humans(at.event, at.data, at.log)
    return cited if isinstance(cited, Violation) else state


def _title_request(state: RelationState, at: At) -> RelationState | Violation:
    """INV-REL-27, INV-REL-28: the request sends exactly one framed message built from its citations."""
    cited = _cited_humans(at.event, at.data, at.log)
    if isinstance(cited, Violation):
        return cited
    messages = _array_at(at.data, "messages")
    message = as_object(messages[0]) if messages else None
    content = _array_at(message, "content")
    source = _object_at(message, "source")
    framed = as_object(content[0]) if content else None
    if (
        len(messages) != 1
        or member(message, "role") != string("user")
        or len(content) != 1
        or member(source, "kind") != string("plugin")
        or member(source, "plugin") != string(TITLE_PLUGIN)
        or member(framed, "type") != string("text")
        or member(framed, "text") != string(title_frame(cited))
    ):
        return Violation(
            Code.TITLE_REQUEST_FRAMING,
            f"session/title-llm-request at seq {at.event.seq} messages are not the one framed message of its messageSeqs",
        )
    return state


# -- delivery markers (INV-REL-29) -------------------------------------------------------------------


def _delivery(state: RelationState, at: At) -> RelationState | Violation:
    """INV-REL-29: a marker accepted by this generation names this session, unless it was inherited
    from an ancestor along with the seed."""
    identity = state.identity
    if identity is None:
        return state
    generation = member(at.data, "sessionFormatVersion")
    if generation in (ABSENT, NULL):
        generation = number(0)
    if generation != number(identity.format_version):
        return state
    inherited = identity.has_parent and at.event.seq < identity.inherited_event_count
    if not inherited and member(at.data, "sessionId") != string(identity.session_id):
        return Violation(
            Code.DELIVERY_MARKER_WRONG_SESSION,
            f"delivery marker at seq {at.event.seq} names session {_show(member(at.data, 'sessionId'))}, "
            f"not {identity.session_id!r}",
        )
    return state


_HANDLERS = {
    "turn/start": _turn_start,
    "turn/end": _turn_end,
    "step/start": _step_start,
    "step/end": _step_end,
    "assistant/message": _assistant_message,
    "tool/call": _tool_call,
    "tool/result": _tool_result,
    "request/header": _request_header,
    "compaction/start": _compaction_start,
    "compaction/summary": _compaction_summary,
    "compaction/end": _compaction_end,
    "compaction/prune": _compaction_prune,
    "user/message": _user_message,
    "session/end-seed": _end_seed,
    "llm/retry": _retry,
    "llm/retry-started": _retry_started,
    "tool/code-dispatch-start": _ptc,
    "tool/code-dispatch": _ptc,
    "command/run": _command_run,
    "command/done": _command_done,
    "session/title": _title,
    "session/title-llm-request": _title_request,
    "session-log-deepseek/delivery-accepted": _delivery,
}
"""The rule for each event type that relates to others; every other type relates to nothing."""
