"""The seventh half of the catalogue, relations: surface, trace, repair, tool-pairing balance and the
relationships between events (INV-SURF, INV-TRACE, INV-REPAIR, INV-COMPACT, INV-REL).

Written from the documents (``invariants.md``, the protocol, the on-disk format), the reference model
and seqlog's source alone, without reading the conformance suite or its tests, and never run against
the suite before the measurement that first judges them.  Each mutant is one decision a port's author
could get wrong while reading the same rules: two refusals met in the other order, a rule kept on the
live path and relaxed on a replayed one (or the other way round), an exception read too widely, state a
fork or a loaded log brings with it taken as fresh, a crash-repair event built slightly wrong, a cache
kept in step by a shortcut that forgets part of it, a comparison made the way one language compares.

The relationship rules are dispatched through a table of :class:`seqlog.relations.Relations`
methods, so most of their mutants wrap :meth:`Relations.plan` and change the one decision for the
event type concerned; module helpers the rules call are replaced directly.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

import seqlog.codec as sl_codec
import seqlog.event as sl_event
import seqlog.messages as sl_messages
import seqlog.relations as sl_relations
import seqlog.repair as sl_repair
import seqlog.rows as sl_rows
import seqlog.surface as sl_surface
import seqlog.trace as sl_trace
from killrate import probes as p
from killrate.mutants import Fn, veiled_mutant
from seqlog.errors import Code, SeqlogError
from seqlog.event import END_SEED, SURFACE_TYPES, Event, Replace
from seqlog.jsonvalue import FrozenObject, as_int, freeze, thaw
from seqlog.messages import tool_call_ids
from seqlog.relations import Relations, _member, _refuse
from seqlog.repair import NOT_STARTED_TEXT, OpenTail, PendingCall
from seqlog.session import Session
from seqlog.surface import SurfaceManager, SurfacePlan
from seqlog.trace import Brackets

T = p.T


# --- probe pieces -------------------------------------------------------------------------------------


def _with(event: dict[str, Any], path: Sequence[str | int], value: object) -> dict[str, Any]:
    """A deep copy of ``event`` with the member at ``path`` set to ``value``."""
    out: dict[str, Any] = json.loads(json.dumps(event))
    target: Any = out
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return out


def _step(*more: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """Turn 1 with step 1 open, then ``more``."""
    return (p.turn_start(0), p.step_start(1), *more)


def _answered(*more: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """Turn 1, step 1, in which ``c1`` was asked for, started and answered (seq 4), then ``more``."""
    return _step(p.assistant(2, ["c1"]), p.tool_call(3, "c1"), p.tool_result(4, "c1"), *more)


_NEGATIVE = _step(p.assistant(2, ["c1"]), p.tool_call(3, "c1"), p.user(4, p.replace(2, 2), [2]), p.tool_result(5, "c1"))
"""A log whose surface count goes negative: the message that asked for ``c1`` is replaced (surface ``[4]``)
before ``c1``'s result joins it (surface ``[4, 5]``, counts ``0, 0, -1``)."""


def _cuts(events: Sequence[dict[str, Any]], **more: Any) -> p.Probe:
    return ({"op": "cuts", "events": list(events), **more},)


def _repair(*events: dict[str, Any]) -> p.Probe:
    return ({"op": "repair", "events": list(events)},)


def _compaction(type_: str, seq: int, turn: int | None = 1, **more: Any) -> dict[str, Any]:
    return p.event(type_, seq, {"compactionId": "k1", "turn": turn, **more})


def _summary(seq: int, start: int, end: int, shadowed: Sequence[int]) -> dict[str, Any]:
    data = {"compactionId": "k1", "summary": [{"type": "text", "text": "so far"}],
            "shadowedRange": {"start": start, "end": end}, "shadowedSeqs": list(shadowed), "shadowedTokenCount": 10,
            "provider": "p", "model": "m"}
    return p.event("compaction/summary", seq, data)


def _retry(seq: int, attempt: int, mode: str, **more: Any) -> dict[str, Any]:
    data = {"retryId": "r1", "turn": 1, "step": 1, "provider": "p", "policyKey": "k", "retry": attempt, "delayMs": 0,
            "failure": {"message": "overloaded", "code": "OVERLOADED"}, "mode": mode}
    data.update(more)
    return p.event("llm/retry", seq, data)


# --- INV-SURF -----------------------------------------------------------------------------------------


@veiled_mutant(
    "sources_decoded_before_surface_op", "INV-SURF-3", "surface", sl_event, "decode_event",
    p.appends({**p.user(0, op="prepend"), "sourceEventSeqs": ["first"]}),
)
def _sources_decoded_before_surface_op(original: Fn) -> Fn:
    """decode_event decodes ``sourceEventSeqs`` before ``surfaceOp`` (provenance first, then what to do with
    it): an event whose op and provenance are both malformed is refused for its provenance."""

    def decode_event(raw: object) -> Event:
        try:
            decoded: Event = original(raw)
        except SeqlogError as error:
            if error.code is Code.SURFACE_OP_INVALID and isinstance(raw, Mapping) and "sourceEventSeqs" in raw:
                sl_event.decode_sources(raw["sourceEventSeqs"])
            raise
        return decoded

    return decode_event


@veiled_mutant(
    "stored_surface_op_defaulted", "INV-SURF-2", "jsonl", sl_codec, "_decode_row",
    p.load(p.SESSION_LINE, p.line({k: v for k, v in p.user(0).items() if k != "surfaceOp"})),
)
def _stored_surface_op_defaulted(original: Fn) -> Fn:
    """The reader takes a stored surface message without ``surfaceOp`` as an append (the common case a
    writer might leave implicit), so a stored log of such a message loads where it is refused."""

    def _decode_row(line: bytes | str, number: int) -> Any:
        rows, packed, spans = original(line, number)
        first = rows[0]
        if not packed and first.get("type") in SURFACE_TYPES and "surfaceOp" not in first:
            rows = [{**first, "surfaceOp": "append"}]
        return rows, packed, spans

    return _decode_row


@veiled_mutant(
    "stored_sources_deduplicated", "INV-SURF-5", "jsonl", sl_rows, "expand_spans",
    p.load(p.SESSION_LINE, p.line(p.user(0)), p.line(p.user(1)), p.line(p.user(2, sources=[0, 0]))),
)
def _stored_sources_deduplicated(original: Fn) -> Fn:
    """The reader collects a stored row's provenance into an ordered set while expanding it, so a plain list
    citing one seq twice loads with the repeat removed instead of being refused as a duplicate."""

    def expand_spans(spans: Any) -> list[int]:
        return list(dict.fromkeys(original(spans)))

    return expand_spans


def _empty_stream_replace(seq: int, start: int, end: int) -> dict[str, Any]:
    return {**p.assistant(seq), "surfaceOp": p.replace(start, end), "sourceEventSeqs": []}


@veiled_mutant(
    "empty_stream_replace_cites_nothing", "INV-SURF-6", "surface", sl_surface, "_check_provenance",
    p.pure("fold_surface", p.user(0), _empty_stream_replace(1, 0, 0)),
)
def _empty_stream_replace_cites_nothing(original: Fn) -> Fn:
    """An ``assistant/message`` with empty ``sourceEventSeqs`` is taken as a known-empty stream that cites
    nothing at all, so a replace by one skips the check that it cites every node it shadows."""

    def _check_provenance(event: Event, shadowed: Sequence[int]) -> None:
        if event.type == "assistant/message" and event.source_event_seqs == ():
            return
        original(event, shadowed)

    return _check_provenance


@veiled_mutant(
    "ignorable_message_off_surface", "INV-SURF-7", "surface", SurfaceManager, "_plan",
    p.pure("fold_surface", {**p.user(0), "ignorable": True}, p.user(1)),
)
def _ignorable_message_off_surface(original: Fn) -> Fn:
    """An appended surface message marked ``ignorable`` is kept in the log but off the surface (an older
    reader may skip it), where the marker changes nothing about where a message stands."""

    def _plan(self: SurfaceManager, event: Event, expected_seq: int) -> SurfacePlan:
        plan: SurfacePlan = original(self, event, expected_seq)
        if event.ignorable and plan.touches_surface and plan.replacement is None:
            return SurfacePlan(event.seq, -1, -1, None, plan.generation, plan.length)
        return plan

    return _plan


def _span_only(event: Event, target: Event, span: int) -> None:
    if span != 1:
        raise SeqlogError(Code.TOOL_REWRITE_SPAN, f"tool/result replace at seq {event.seq} must rewrite exactly one node")


@veiled_mutant(
    "edge_rewrites_unchecked", "INV-SURF-11", "legacy", Session, "restore",
    p.upgrade(*_answered(p.tool_result(5, "c1", is_error=True, op=p.replace(4, 4), sources=[4]))),
)
def _edge_rewrites_unchecked(original: Fn) -> Fn:
    """The v0 edge replays its converted log trusting the tool-result rewrites a v0 writer made: it checks
    that each rewrites one node, not what it changed, so a rewrite flipping ``isError`` is converted."""

    def restore(cls: type[Session], events: Any, **options: Any) -> Session:
        if not options.get("legacy_restart"):
            restored: Session = original(cls, events, **options)
            return restored
        check = sl_surface._check_rewrite
        sl_surface._check_rewrite = _span_only
        try:
            replayed: Session = original(cls, events, **options)
        finally:
            sl_surface._check_rewrite = check
        return replayed

    return restore


def _retargeted(seq: int, target: int) -> dict[str, Any]:
    rewrite = p.tool_result(seq, "c9", op=p.replace(target, target), sources=[target])
    return _with(rewrite, ("data", "message", "id"), "r-c1")


@veiled_mutant(
    "rewrite_may_retarget_call", "INV-SURF-11", "surface", sl_surface, "_without_result_content",
    p.appends(*_answered(_retargeted(5, 4))),
)
def _rewrite_may_retarget_call(original: Fn) -> Fn:
    """A tool-result rewrite is compared on what the result says (message id, flags, error, meta), leaving
    out the call ids it answers, so a rewrite may make the result answer another call."""

    def _without_result_content(data: Any) -> Any:
        out = original(data)
        message = out.get("message") if isinstance(out, Mapping) and out is not data else None
        if not isinstance(message, Mapping):
            return out
        block = {k: v for k, v in message["content"][0].items() if k != "toolCallId"}
        source = message.get("source")
        source = {k: v for k, v in source.items() if k != "callId"} if isinstance(source, Mapping) else source
        return {**out, "message": {**message, "source": source, "content": (block, *message["content"][1:])}}

    return _without_result_content


# --- INV-TRACE ----------------------------------------------------------------------------------------


@veiled_mutant(
    "end_seed_restarts_turn_numbers", "INV-TRACE-1", "session", sl_trace, "advance",
    ({"op": "reset"}, {"op": "seed", "events": [p.turn_start(0), p.turn_end(1)]},
     {"op": "append", "event": p.turn_start(3)}, {"op": "state"}),
)
def _end_seed_restarts_turn_numbers(original: Fn) -> Fn:
    """A fork numbers its own turns: the end-of-seed marker resets the turn count, so the first live turn
    of a seeded session is turn 1 again instead of the inherited count plus one."""

    def advance(state: Brackets, event: Event) -> Brackets:
        if event.type == END_SEED and state.open_turn is None:
            return Brackets()
        after: Brackets = original(state, event)
        return after

    return advance


@veiled_mutant(
    "end_seed_closes_inherited_turn", "INV-TRACE-10", "session", sl_trace, "advance",
    ({"op": "reset"}, {"op": "seed", "events": [p.turn_start(0)]}, {"op": "append", "event": p.turn_start(2, turn=2)},
     {"op": "state"}),
)
def _end_seed_closes_inherited_turn(original: Fn) -> Fn:
    """The end-of-seed marker closes a turn the seed left open between its steps (inherited history ends
    there), so a live ``turn/start`` opens the next turn instead of being refused while that turn is open."""

    def advance(state: Brackets, event: Event) -> Brackets:
        if event.type == END_SEED and state.open_turn is not None and state.open_step is None:
            return Brackets(last_turn=state.last_turn)
        after: Brackets = original(state, event)
        return after

    return advance


@veiled_mutant(
    "interrupted_end_closes_step", "INV-TRACE-2", "session", sl_trace, "advance",
    p.appends(*_step(p.turn_end(2, kind="interrupted"))),
)
def _interrupted_end_closes_step(original: Fn) -> Fn:
    """A ``turn/end`` with reason ``interrupted`` may end its turn in the middle of a step (an interruption
    does not wait for the step), closing the step with it, where every ``turn/end`` needs no open step."""

    def advance(state: Brackets, event: Event) -> Brackets:
        data = event.data if isinstance(event.data, Mapping) else None
        reason = data.get("reason") if data is not None else None
        if (
            event.type == "turn/end"
            and state.open_step is not None
            and isinstance(reason, Mapping)
            and reason.get("kind") == "interrupted"
            and data is not None
            and as_int(data.get("turn")) == state.open_turn
        ):
            state = Brackets(state.open_turn, state.last_turn, None, state.last_step)
        after: Brackets = original(state, event)
        return after

    return advance


def _reason_data(event: Event, reason: object) -> Event:
    assert isinstance(event.data, Mapping)
    return dataclasses.replace(event, data=freeze({**thaw(event.data), "reason": reason}))


@veiled_mutant(
    "causeless_abort_accepted", "INV-TRACE-3", "session", sl_trace, "check_trace_data",
    p.appends(p.turn_start(0), p.turn_end(1, kind="aborted")),
)
def _causeless_abort_accepted(original: Fn) -> Fn:
    """An ``aborted`` reason's cause is read as optional (who aborted is not always known): a v1 ``turn/end``
    aborted without its cause passes, where only the v0 edge may supply one."""

    def check_trace_data(event: Event) -> None:
        data = event.data if isinstance(event.data, Mapping) else None
        reason = data.get("reason") if data is not None else None
        if event.type == "turn/end" and isinstance(reason, Mapping) and dict(reason) == {"kind": "aborted"}:
            event = _reason_data(event, {"kind": "aborted", "reason": {"kind": "user"}})
        original(event)

    return check_trace_data


@veiled_mutant(
    "legacy_abort_cause_refused", "INV-TRACE-3", "session", sl_trace, "check_trace_data",
    p.appends(p.turn_start(0), p.event("turn/end", 1, {"turn": 1, "reason": {"kind": "aborted", "reason": {"kind": "legacy"}}})),
)
def _legacy_abort_cause_refused(original: Fn) -> Fn:
    """The cause ``legacy`` is taken as the v0 edge's alone (a v1 writer never writes it): a v1 ``turn/end``
    aborted with cause ``legacy``, one of the released causes, is refused."""

    def check_trace_data(event: Event) -> None:
        data = event.data if isinstance(event.data, Mapping) else None
        reason = data.get("reason") if data is not None else None
        cause = reason.get("reason") if isinstance(reason, Mapping) and reason.get("kind") == "aborted" else None
        if event.type == "turn/end" and isinstance(cause, Mapping) and cause.get("kind") == "legacy":
            raise SeqlogError(Code.TURN_END_REASON_INVALID, f"turn/end at seq {event.seq} has the edge's cause legacy")
        original(event)

    return check_trace_data


def _delta(seq: int, **chunk: Any) -> dict[str, Any]:
    return p.event("assistant/chunk", seq, {"turn": 1, "step": 1, "chunk": {"type": "tool-call-delta", "index": 0, **chunk}})


@veiled_mutant(
    "empty_delta_name_refused", "INV-TRACE-9", "session", sl_trace, "check_trace_data",
    p.appends(*_step(_delta(2, id="c1", name="", argumentsDelta="{"))),
)
def _empty_delta_name_refused(original: Fn) -> Fn:
    """A tool-call delta's optional ``name`` must be non-empty like the tool names elsewhere, where a stream
    may send an empty name while the call is still being named: such a chunk is refused."""

    def check_trace_data(event: Event) -> None:
        data = event.data if isinstance(event.data, Mapping) else None
        chunk = data.get("chunk") if data is not None else None
        delta = isinstance(chunk, Mapping) and chunk.get("type") == "tool-call-delta"
        if event.type == "assistant/chunk" and delta and isinstance(chunk, Mapping) and chunk.get("name") == "":
            raise SeqlogError(Code.TRACE_DATA_INVALID, f"assistant/chunk at seq {event.seq} has an empty tool name")
        original(event)

    return check_trace_data


# --- INV-REPAIR ---------------------------------------------------------------------------------------


@veiled_mutant(
    "repair_ends_open_compaction", "INV-REPAIR-1", "repair", sl_repair, "interrupted_turn_closers",
    _repair(_compaction("compaction/start", 0, turn=None)),
)
def _repair_ends_open_compaction(original: Fn) -> Fn:
    """Repair closes everything a crash left open: with no turn open, a compaction still open gets a failed
    ``compaction/end``, where repair writes nothing when no turn is open."""

    def interrupted_turn_closers(events: Any) -> tuple[Event, ...]:
        log = list(events)
        closers: tuple[Event, ...] = original(log)
        if closers or not log:
            return closers
        opened: Event | None = None
        for event in log:
            if event.type == "compaction/start":
                opened = event
            elif event.type in ("compaction/end", END_SEED):
                opened = None
        if opened is None or not isinstance(opened.data, Mapping):
            return closers
        data = {**thaw(opened.data), "error": "interrupted"}
        return (Event("compaction/end", len(log), log[-1].time, freeze(data)),)

    return interrupted_turn_closers


@veiled_mutant(
    "pending_calls_of_last_message_only", "INV-REPAIR-2", "repair", OpenTail, "observe",
    _repair(*_step(p.assistant(2, ["c1"]), p.assistant(3, ["c2"]))),
)
def _pending_calls_of_last_message_only(original: Fn) -> Fn:
    """Repair takes the pending calls to be the latest model message's: an ``assistant/message`` asking for
    tools replaces the calls an earlier message of the step left unanswered, which then get no closer."""

    def observe(self: OpenTail, event: Event) -> None:
        if event.type == "assistant/message" and tool_call_ids(event):
            self.pending = {}
        original(self, event)

    return observe


@veiled_mutant(
    "closers_marked_ignorable", "INV-REPAIR-2", "repair", OpenTail, "closers",
    _repair(*_step(p.assistant(2, ["c1"]))),
)
def _closers_marked_ignorable(original: Fn) -> Fn:
    """Repair marks the events it synthesises ``ignorable`` (an older reader may skip a crash's closers), so
    its closers are not the exact events the rule writes."""

    def closers(self: OpenTail) -> tuple[Event, ...]:
        written: tuple[Event, ...] = original(self)
        return tuple(dataclasses.replace(event, ignorable=True) for event in written)

    return closers


@veiled_mutant(
    "closer_id_names_call_seq", "INV-REPAIR-3", "repair", sl_repair, "_interrupted_result",
    _repair(*_step(p.assistant(2, ["c1"]), p.tool_call(3, "c1"))),
)
def _closer_id_names_call_seq(original: Fn) -> Fn:
    """The closer of a started call takes the seq in its message id from the ``tool/call`` it answers
    (``interrupted-tool-result-<callId>-<call seq>``), not from its own seq."""

    def _interrupted_result(turn: int, call: PendingCall, seq: int, time: int) -> Event:
        event: Event = original(turn, call, seq, time)
        if call.call_seq is None or not isinstance(event.data, Mapping):
            return event
        data = thaw(event.data)
        data["message"]["id"] = f"interrupted-tool-result-{call.call_id}-{call.call_seq}"
        return dataclasses.replace(event, data=freeze(data))

    return _interrupted_result


# --- INV-COMPACT --------------------------------------------------------------------------------------


@veiled_mutant(
    "append_refuses_negative_balance", "INV-COMPACT-1", "session", Session, "validate",
    p.appends(*_NEGATIVE),
)
def _append_refuses_negative_balance(original: Fn) -> Fn:
    """The log polices the tool-pairing balance itself: an appended surface node that would take the count
    negative is refused, where the log accepts such a surface and only the compactor's balance refuses it."""

    def validate(self: Session, raw: object) -> Any:
        plan = original(self, raw)
        surface = plan.surface
        if surface.touches_surface and surface.replacement is None and self._counts[-1] + plan.pairing_delta < 0:
            raise SeqlogError(Code.TOOL_PAIRING_NEGATIVE, f"surface seq {plan.event.seq} takes the pending count below zero")
        return plan

    return validate


def _count_cuts_recounting_moved(self: Session, surface: SurfacePlan, delta: int) -> None:
    counts = self._counts
    if surface.replacement is None:
        joined = counts[-1] + delta
        counts.append(joined)
        self._negative += joined < 0
        return
    start, stop = surface.start_index, surface.stop_index
    joined = counts[start] + delta
    shift = joined - counts[stop]
    if shift == 0:
        self._negative += (joined < 0) - sum(1 for count in counts[start + 1 : stop + 1] if count < 0)
        counts[start + 1 : stop + 1] = (joined,)
        return
    counts[start + 1 :] = [joined, *(count + shift for count in counts[stop + 1 :])]
    self._negative = sum(1 for count in counts[start + 1 :] if count < 0)


@veiled_mutant(
    "negative_recount_from_replacement", "INV-COMPACT-4", "compaction", Session, "_count_cuts",
    _cuts((*_NEGATIVE, p.assistant(6, ["c2"]), p.assistant(7, ["c3"]), p.user(8, p.replace(7, 7), [7]))),
)
def _negative_recount_from_replacement(original: Fn) -> Fn:
    """After a replacement that moves the later cuts, the count of negative cuts is recomputed over the cuts
    that moved only: a negative cut before the replaced range is forgotten, and the surface gets a balance."""
    return _count_cuts_recounting_moved


@veiled_mutant(
    "replacing_message_calls_uncounted", "INV-COMPACT-6", "compaction", sl_messages, "pairing_delta",
    _cuts(_step(p.user(2), {**p.assistant(3, ["c1"]), "surfaceOp": p.replace(2, 2), "sourceEventSeqs": [2]})),
)
def _replacing_message_calls_uncounted(original: Fn) -> Fn:
    """An ``assistant/message`` that replaces a range is counted 0 in the balance (a replacement summarises,
    it asks for nothing), so the calls it advertises are not pending on the surface."""

    def pairing_delta(event: Event) -> int:
        if event.type == "assistant/message" and isinstance(event.surface_op, Replace):
            return 0
        delta: int = original(event)
        return delta

    return pairing_delta


@veiled_mutant(
    "around_pair_reversed", "INV-COMPACT-5", "compaction", Session, "balanced_around",
    _cuts(_step(p.user(2), p.assistant(3, ["c1"])), seq=3),
)
def _around_pair_reversed(original: Fn) -> Fn:
    """balanced_around answers the cut after the node first and the cut before it second (the pair read from
    the node's end), where the answer is the cut before, then the cut after."""

    def balanced_around(self: Session, seq: object) -> tuple[bool, bool]:
        before, after = original(self, seq)
        return after, before

    return balanced_around


# --- INV-REL ------------------------------------------------------------------------------------------


def _exact_not_started(seq: int, call_id: str, *parts: str) -> dict[str, Any]:
    texts = [{"type": "text", "text": text} for text in (NOT_STARTED_TEXT, *parts)]
    block = {"type": "tool-result", "toolCallId": call_id, "isError": True, "content": texts}
    message = {"id": f"interrupted-tool-result-{call_id}-{seq}", "role": "user", "source": {"kind": "tool", "callId": call_id},
               "content": [block]}
    data = {"turn": 1, "step": 1, "message": message, "error": {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}}
    return p.event("tool/result", seq, data, surfaceOp="append")


@veiled_mutant(
    "not_started_extra_parts_allowed", "INV-REL-4", "session", sl_relations, "is_exact_not_started_result",
    p.appends(*_step(p.assistant(2, ["c1"]), _exact_not_started(3, "c1", "Retried by the user."))),
)
def _not_started_extra_parts_allowed(original: Fn) -> Fn:
    """The exact repair result of a call that never started is recognised by its first text part: a result
    adding a part after the repair's text is taken as that repair."""

    def is_exact_not_started_result(event: Event, data: Mapping[str, Any]) -> bool:
        message = data.get("message")
        content = message.get("content") if isinstance(message, Mapping) else None
        block = content[0] if isinstance(content, tuple) and content else None
        parts = block.get("content") if isinstance(block, Mapping) else None
        if isinstance(parts, tuple) and len(parts) > 1 and isinstance(message, Mapping) and isinstance(content, tuple):
            first = {**content[0], "content": parts[:1]}
            data = {**data, "message": {**message, "content": (first, *content[1:])}}
        exact: bool = original(event, data)
        return exact

    return is_exact_not_started_result


@veiled_mutant(
    "end_command_id_unchecked", "INV-REL-8", "session", Relations, "plan",
    p.appends(_compaction("compaction/start", 0, turn=None, sourceCommandId="cmd-1"),
              _compaction("compaction/end", 1, turn=None, sourceCommandId="cmd-2", error="cancelled")),
)
def _end_command_id_unchecked(original: Fn) -> Fn:
    """A ``compaction/end`` is matched to the open compaction by ``compactionId`` alone (the end only closes
    it): one naming another ``sourceCommandId`` than the start's closes it."""

    def plan(self: Relations, event: Event, log: Any, surface: SurfaceManager) -> Any:
        compaction = self._compaction
        if event.type == "compaction/end" and compaction is not None and isinstance(event.data, Mapping):
            data = {k: v for k, v in event.data.items() if k != "sourceCommandId"}
            if compaction.command is not sl_relations._ABSENT:
                data["sourceCommandId"] = compaction.command
            event = dataclasses.replace(event, data=FrozenObject(data))
        return original(self, event, log, surface)

    return plan


@veiled_mutant(
    "retry_chain_keyed_by_mode", "INV-REL-15", "session", Relations, "plan",
    p.appends(*_step(p.header_event(2, p.HEADER), _retry(3, 1, "normal", maxRetries=3), _retry(4, 2, "always"))),
)
def _retry_chain_keyed_by_mode(original: Fn) -> Fn:
    """Retry policy chains are keyed by their ``mode`` as well as turn, step, provider and policy (a bounded
    and an unbounded policy taken as two chains): an attempt that changes mode must start again at 1."""

    def plan(self: Relations, event: Event, log: Any, surface: SurfaceManager) -> Any:
        data = event.data if isinstance(event.data, Mapping) else None
        if event.type == "llm/retry" and data is not None and isinstance(data.get("policyKey"), str):
            keyed = {**data, "policyKey": f"{data['policyKey']}\n{data.get('mode')}"}
            event = dataclasses.replace(event, data=FrozenObject(keyed))
        return original(self, event, log, surface)

    return plan


def _dispatch(type_: str, seq: int, sub: str, arguments: object, **more: Any) -> dict[str, Any]:
    data = {"rootCallId": "root", "parentCallId": "root", "subCallId": sub, "name": "grep", "arguments": arguments, **more}
    return p.event(type_, seq, data)


@veiled_mutant(
    "dispatch_root_must_be_advertised", "INV-REL-20", "session", Relations, "plan",
    p.appends(p.turn_start(0), _dispatch("tool/code-dispatch-start", 1, "s1", {"q": "x"})),
)
def _dispatch_root_must_be_advertised(original: Fn) -> Fn:
    """A programmatic call's ``rootCallId`` must name a tool call the open step advertised (the tool that
    runs the program): a dispatch under a root the log never saw asked for is refused."""

    def plan(self: Relations, event: Event, log: Any, surface: SurfaceManager) -> Any:
        data = event.data if isinstance(event.data, Mapping) else None
        if event.type == "tool/code-dispatch-start" and _member(data, "rootCallId") not in self._tools:
            raise _refuse(Code.PTC_ANCESTRY_INVALID, event, "names a root call no assistant message advertised")
        return original(self, event, log, surface)

    return plan


@veiled_mutant(
    "settle_arguments_by_bytes", "INV-REL-22", "session", Relations, "plan",
    p.appends(p.turn_start(0), _dispatch("tool/code-dispatch-start", 1, "s1", {"q": "x", "n": 2}),
              _dispatch("tool/code-dispatch", 2, "s1", {"n": 2, "q": "x"}, isError=False, content=[])),
)
def _settle_arguments_by_bytes(original: Fn) -> Fn:
    """A settlement's arguments are compared with its start's by their serialised text (``JSON.stringify``
    of each), so the same object written with its members in another order is a mismatch."""

    def plan(self: Relations, event: Event, log: Any, surface: SurfaceManager) -> Any:
        if event.type == "tool/code-dispatch" and isinstance(event.data, Mapping):
            started = self._dispatches.get(_member(event.data, "subCallId"))
            if started is not None and not started.settled and "arguments" in event.data:
                written = json.dumps(thaw(event.data["arguments"]), separators=(",", ":"))
                if written != json.dumps(thaw(started.arguments), separators=(",", ":")):
                    raise _refuse(Code.PTC_SETTLE_MISMATCH, event, "settles another call than the one that started")
        return original(self, event, log, surface)

    return plan


def _command(type_: str, seq: int, command: str, **more: Any) -> dict[str, Any]:
    if type_ == "command/run":
        return p.event(type_, seq, {"commandId": command, "name": "compact", "source": {"kind": "user"}, **more})
    return p.event(type_, seq, {"commandId": command, "kind": "success", **more})


@veiled_mutant(
    "second_done_refused", "INV-REL-24", "session", Relations, "plan",
    p.appends(_command("command/run", 0, "c1"), _command("command/done", 1, "c1", kind="error"),
              _command("command/done", 2, "c1")),
)
def _second_done_refused(original: Fn) -> Fn:
    """A ``command/done`` is taken to consume its ``command/run``: a second done for the same command, which
    still follows that run, is refused as unpaired."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Any:
        if event.type == "command/done" and isinstance(event.data, Mapping):
            command = _member(event.data, "commandId")
            for earlier in reversed(log):
                data = earlier.data if isinstance(earlier.data, Mapping) else None
                if earlier.type == "command/run" and _member(data, "commandId") == command:
                    break
                if earlier.type == "command/done" and _member(data, "commandId") == command:
                    raise _refuse(Code.COMMAND_DONE_UNPAIRED, event, "has no command/run left to finish")
        return original(self, event, log, surface)

    return plan


@veiled_mutant(
    "done_may_cite_other_commands", "INV-REL-25", "session", Relations, "plan",
    p.appends(_command("command/run", 0, "c1"), _command("command/done", 1, "c1"), _command("command/run", 2, "c2"),
              _command("command/done", 3, "c2", sourceEventSeq=0)),
)
def _done_may_cite_other_commands(original: Fn) -> Fn:
    """A successful ``command/done`` may not cite its own command's bookkeeping, read as the events of its
    own ``commandId``: a done citing another command's ``command/run`` passes."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Any:
        data = event.data if isinstance(event.data, Mapping) else None
        if event.type == "command/done" and data is not None and "sourceEventSeq" in data:
            seq = as_int(data["sourceEventSeq"])
            cited = log[seq] if seq is not None and 0 <= seq < len(log) else None
            cited_data = cited.data if cited is not None and isinstance(cited.data, Mapping) else None
            other = cited is not None and cited.type in ("command/run", "command/done")
            if other and _member(cited_data, "commandId") != _member(data, "commandId"):
                uncited = {k: v for k, v in data.items() if k != "sourceEventSeq"}
                event = dataclasses.replace(event, data=FrozenObject(uncited))
        return original(self, event, log, surface)

    return plan


_FRAME = sl_relations.TITLE_FRAME_PREFIX + '[{"seq":0,"text":" fix the flaky test "}]'


def _title_request(seq: int, frame: str) -> dict[str, Any]:
    message = {"id": "t1", "role": "user", "content": [{"type": "text", "text": frame}],
               "source": {"kind": "plugin", "plugin": sl_relations.TITLE_PLUGIN}}
    data = {"titleProvider": "p", "messageSeqs": [0], "route": {"provider": "p", "model": "m"}, "system": "Title it.",
            "messages": [message], "maxTokens": 16}
    return p.event("session/title-llm-request", seq, data)


@veiled_mutant(
    "title_text_trimmed", "INV-REL-28", "session", sl_relations, "message_text",
    p.appends(_with(p.user(0), ("data", "content", 0, "text"), " fix the flaky test "), _title_request(1, _FRAME)),
)
def _title_text_trimmed(original: Fn) -> Fn:
    """The title frame trims each cited message's text (a title is made of words, not of the spaces around
    them), so a request framing the text as the person wrote it is refused."""

    def message_text(payload: Mapping[str, Any] | None) -> str:
        text: str = original(payload)
        return text.strip()

    return message_text


@veiled_mutant(
    "identity_forgotten_after_load", "INV-REL-29", "jsonl", sl_codec, "_load",
    ({"op": "reset"}, {"op": "load", "jsonl": p.SESSION_LINE + "\n" + p.note_line(0) + "\n"},
     {"op": "append", "event": p.event("session-log-deepseek/delivery-accepted", 1,
                                       {"sessionId": "another", "throughSeq": 0, "sessionFormatVersion": 1})},
     {"op": "state"}),
)
def _identity_forgotten_after_load(original: Fn) -> Fn:
    """The session id a stored log's header line names is used to check the delivery markers read with it,
    then dropped: a marker appended after the load names any session."""

    def _load(read: Any) -> Any:
        loaded = original(read)
        loaded.session._relations.identity = None
        return loaded

    return _load


@veiled_mutant(
    "summary_decides_crossing", "INV-REL-11", "session", Relations, "plan",
    p.appends(p.turn_start(0), p.user(1), _compaction("compaction/start", 2), p.turn_end(3), _summary(4, 1, 1, [1])),
)
def _summary_decides_crossing(original: Fn) -> Fn:
    """Any later event of a compaction decides a held turn crossing, its summary too: a summary after a turn
    boundary crossed its compaction is refused as the crossing instead of for the turn it acts in."""

    def plan(self: Relations, event: Event, log: Any, surface: SurfaceManager) -> Any:
        compaction = self._compaction
        if event.type == "compaction/summary" and compaction is not None and compaction.crossed_at is not None:
            raise self._crossing(compaction)
        return original(self, event, log, surface)

    return plan


@veiled_mutant(
    "seed_judged_complete_before_marker", "INV-REL-11", "session", Session, "create",
    ({"op": "reset"},
     {"op": "seed", "events": [p.turn_start(0), p.user(1), _compaction("compaction/start", 2), p.turn_end(3)]},
     {"op": "state"}),
)
def _seed_judged_complete_before_marker(original: Fn) -> Fn:
    """A seed is judged as a complete log before its end-of-seed marker is written, so a seed a crash left
    with a turn boundary across an open compaction is refused, where the marker retires that compaction."""

    def create(cls: type[Session], seed: Any = None, header: Any = None, *, clock: Any = None) -> Session:
        if seed is not None:
            seed = list(seed)
            cls.restore(seed, where="seed index", clock=clock)
        created: Session = original(cls, seed, header, clock=clock)
        return created

    return create


@veiled_mutant(
    "ended_steps_carried_across_turns", "INV-REL-13", "session", Relations, "plan",
    p.appends(p.turn_start(0), p.header_event(1, p.HEADER), p.step_start(2), p.step_end(3), p.turn_end(4),
              p.turn_start(5, turn=2), p.step_start(6, turn=2), p.step_end(7, turn=2),
              _retry(8, 1, "always", turn=2)),
)
def _ended_steps_carried_across_turns(original: Fn) -> Fn:
    """The count of ended steps a retry between steps is placed by is kept across turns, so in a later turn
    a retry for the step that just ended is refused as naming another step."""

    def plan(self: Relations, event: Event, log: Any, surface: SurfaceManager) -> Any:
        commit = original(self, event, log, surface)
        if event.type != "turn/start" or commit is None:
            return commit
        ended = self._ended_steps

        def carried() -> None:
            commit()
            self._ended_steps = ended

        return carried

    return plan
