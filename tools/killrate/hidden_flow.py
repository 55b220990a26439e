"""The sixth half of the catalogue, flow: the surface, the turn / step / tool trace, crash repair and the
tool-pairing balance (INV-SURF, INV-TRACE, INV-REPAIR, INV-COMPACT).

Written from the documents (``invariants.md``, the protocol, the on-disk format), the reference model
and seqlog's source alone, without reading the conformance suite or its tests, and never run against
the suite before the measurement that first judges them.  Each mutant is one decision a port's author
could get wrong while reading the same rules: a member given a default, a range read over seqs
instead of surface nodes, provenance held to a stricter rule than the format's, two checks met in
the other order, a message kept off the surface, a rewrite compared without members a turn changes,
a rule enforced on append but trusted on read, a fold reporting positions for seqs, a trace that
forgets an answer, a code chosen for the wrong fault, a closer built slightly wrong, a count taken
for the wrong blocks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import seqlog.codec as sl_codec
import seqlog.event as sl_event
import seqlog.messages as sl_messages
import seqlog.repair as sl_repair
import seqlog.surface as sl_surface
import seqlog.trace as sl_trace
from killrate import probes as p
from killrate.mutants import Fn, _data, _with_data, hidden_mutant
from seqlog.errors import Code, SeqlogError
from seqlog.event import Append, Event, Replace
from seqlog.jsonvalue import as_object
from seqlog.repair import NOT_STARTED_TEXT, OpenTail, PendingCall
from seqlog.session import Session
from seqlog.surface import FoldedSurface, Replacement, SurfaceManager, SurfacePlan
from seqlog.trace import Brackets

_BARE_REASONS = frozenset({"completed", "blocked", "max-tokens", "interrupted"})


# --- probe pieces -------------------------------------------------------------------------------------


def _answered(*more: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """Turn 1, a user message, step 1 in which ``c1`` was asked for, started and answered (seq 5), then ``more``."""
    return (p.turn_start(0), p.user(1), p.step_start(2), p.assistant(3, ["c1"]), p.tool_call(4, "c1"),
            p.tool_result(5, "c1"), *more)


def _started(*more: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """Turn 1, step 1 in which ``c1`` was asked for (seq 2) and started (seq 3), then ``more``."""
    return (p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]), p.tool_call(3, "c1"), *more)


def _interrupted(seq: int) -> dict[str, Any]:
    event = p.assistant(seq)
    event["data"]["interrupted"] = True
    return event


def _repair(*events: dict[str, Any]) -> p.Probe:
    return ({"op": "repair", "events": list(events)},)


def _cuts(events: Sequence[dict[str, Any]], **more: Any) -> p.Probe:
    return ({"op": "cuts", "events": list(events), **more},)


# --- INV-SURF: the surface ----------------------------------------------------------------------------


@hidden_mutant(
    "replace_end_defaults_to_start", "INV-SURF-3", "surface", sl_event, "decode_surface_op",
    p.pure("fold_surface", p.user(0), p.user(1, {"op": "replace", "start": 0}, [0])),
)
def _replace_end_defaults_to_start(original: Fn) -> Fn:
    """A replace op without ``end`` is read as replacing its one ``start`` node (the end defaulting to the
    start), instead of refused as not exactly ``{op, start, end}``."""

    def decode_surface_op(raw: object) -> Any:
        if isinstance(raw, Mapping) and raw.keys() == {"op", "start"} and raw.get("op") == "replace":
            raw = {**raw, "end": raw["start"]}
        return original(raw)

    return decode_surface_op


@hidden_mutant(
    "replace_bounds_read_as_seq_interval", "INV-SURF-4", "surface", SurfaceManager, "_range",
    p.pure("fold_surface", p.user(0), p.turn_start(1), p.user(2), p.user(3, p.replace(1, 2), [2])),
)
def _replace_bounds_read_as_seq_interval(original: Fn) -> Fn:
    """A replace's bounds are read as an interval of seqs: the surface nodes between them are replaced,
    whether or not the bounds themselves are surface nodes."""

    def _range(self: SurfaceManager, op: Replace) -> tuple[int, int]:
        try:
            return original(self, op)  # type: ignore[no-any-return]
        except SeqlogError as error:
            if error.code not in (Code.REPLACE_START_NOT_ON_SURFACE, Code.REPLACE_END_NOT_ON_SURFACE):
                raise
            inside = [index for index, seq in enumerate(self._nodes) if op.start <= seq <= op.end]
            if not inside:
                raise
            return inside[0], inside[-1]

    return _range


@hidden_mutant(
    "sources_must_be_surface_nodes", "INV-SURF-5", "surface", SurfaceManager, "_plan",
    p.appends(p.turn_start(0), p.user(1, sources=[0])),
)
def _sources_must_be_surface_nodes(original: Fn) -> Fn:
    """Provenance may cite only what the model saw: a ``sourceEventSeqs`` entry naming an event that is
    not on the surface (a bracket, a ``tool/call``) is refused as not an earlier surface node."""

    def _plan(self: SurfaceManager, event: Event, expected_seq: int) -> SurfacePlan:
        nodes = list(self._nodes)
        plan: SurfacePlan = original(self, event, expected_seq)
        stray = next((seq for seq in event.source_event_seqs or () if seq not in nodes), None)
        if stray is not None:
            raise SeqlogError(Code.SOURCES_NOT_EARLIER, f"sourceEventSeqs must cite earlier surface nodes: {stray}")
        return plan

    return _plan


@hidden_mutant(
    "missing_shadowed_checked_first", "INV-SURF-6", "surface", sl_surface, "_check_provenance",
    p.pure("fold_surface", p.user(0), p.user(1), p.user(2, p.replace(0, 0), [1, 1])),
)
def _missing_shadowed_checked_first(original: Fn) -> Fn:
    """A replace's provenance is matched against the shadowed nodes before it is checked for repeats: one
    citing another seq twice and not its shadowed node is SOURCES_MISSING_SHADOWED."""

    def _check_provenance(event: Event, shadowed: Sequence[int]) -> None:
        if shadowed:
            distinct = tuple(dict.fromkeys(event.source_event_seqs or ()))
            original(dataclasses.replace(event, source_event_seqs=distinct), shadowed)
        original(event, shadowed)

    return _check_provenance


@hidden_mutant(
    "interrupted_message_off_surface", "INV-SURF-7", "surface", SurfaceManager, "_plan",
    p.pure("fold_surface", p.user(0), _interrupted(1)),
)
def _interrupted_message_off_surface(original: Fn) -> Fn:
    """An ``assistant/message`` marked ``interrupted`` is kept in the log but off the surface (the model
    never finished it), though its ``append`` puts it at the tail like any other."""

    def _plan(self: SurfaceManager, event: Event, expected_seq: int) -> SurfacePlan:
        plan: SurfacePlan = original(self, event, expected_seq)
        interrupted = event.type == "assistant/message" and _data(event).get("interrupted") is True
        if interrupted and isinstance(event.surface_op, Append):
            return SurfacePlan(plan.seq, -1, -1, None, plan.generation, plan.length)
        return plan

    return _plan


def _renumbered_rewrite(seq: int, target: int) -> dict[str, Any]:
    event = p.tool_result(seq, "c1", op=p.replace(target, target), sources=[target])
    event["data"]["turn"] = 2
    return event


@hidden_mutant(
    "rewrite_may_renumber_turn", "INV-SURF-11", "surface", sl_surface, "_without_result_content",
    p.appends(*_answered(p.step_end(6), p.turn_end(7), p.turn_start(8, turn=2), _renumbered_rewrite(9, 5))),
)
def _rewrite_may_renumber_turn(original: Fn) -> Fn:
    """A tool-result rewrite is compared without its ``turn`` and ``step``: a rewrite written in a later
    turn may name that turn, where only the block's content may change."""

    def _without_result_content(data: Any) -> Any:
        blank = original(data)
        if isinstance(blank, Mapping):
            return {key: value for key, value in blank.items() if key not in ("turn", "step")}
        return blank

    return _without_result_content


def _flipped_rewrite(seq: int, target: int) -> dict[str, Any]:
    return p.tool_result(seq, "c1", op=p.replace(target, target), sources=[target], is_error=True)


def _trusting_rewrites(event: Event, target: Event, span: int) -> None:
    if span != 1:
        raise SeqlogError(Code.TOOL_REWRITE_SPAN, f"tool/result replace at seq {event.seq} must rewrite exactly one node")


@hidden_mutant(
    "stored_rewrites_trusted", "INV-SURF-11", "jsonl", sl_codec, "_read",
    p.load(p.SESSION_LINE, *map(p.line, _answered(_flipped_rewrite(6, 5)))),
)
def _stored_rewrites_trusted(original: Fn) -> Fn:
    """The reader trusts what was written: a stored tool-result rewrite is checked for its span but not
    compared with the result it replaces, so one that changed ``isError`` loads (appends still check it)."""

    def _read(data: Any, clock: Any, upgraded: bool = False) -> Any:
        checking = sl_surface._check_rewrite
        sl_surface._check_rewrite = _trusting_rewrites
        try:
            return original(data, clock, upgraded)
        finally:
            sl_surface._check_rewrite = checking

    return _read


@hidden_mutant(
    "fold_reports_range_as_positions", "INV-SURF-12", "surface", sl_surface, "fold_surface",
    p.pure("fold_surface", p.user(0), p.turn_start(1), p.user(2), p.user(3, p.replace(2, 2), [2])),
)
def _fold_reports_range_as_positions(original: Fn) -> Fn:
    """fold_surface reports a replacement's ``start`` and ``end`` as the surface positions it covered,
    not the seqs the replace named."""

    def fold_surface(events: Any) -> FoldedSurface:
        log: list[Event] = []
        manager = SurfaceManager(log)
        replacements: list[Replacement] = []
        for event in events if not isinstance(events, Mapping) else events.values():
            plan = manager.validate_next(event)
            log.append(event)
            manager.commit(plan)
            if plan.replacement is not None:
                done = plan.replacement
                replacements.append(Replacement(done.seq, plan.start_index, plan.stop_index - 1, done.shadowed))
        return FoldedSurface(tuple(manager.nodes), manager.replace_generation, tuple(replacements))

    return fold_surface


# --- INV-TRACE: the turn / step / tool trace ----------------------------------------------------------


@hidden_mutant(
    "turn_end_outside_turn_code", "INV-TRACE-2", "session", sl_trace, "advance",
    p.appends(p.turn_end(0)),
)
def _turn_end_outside_turn_code(original: Fn) -> Fn:
    """A ``turn/end`` while no turn is open is refused as an event outside a turn (EVENT_OUTSIDE_TURN),
    not as naming no open turn (TURN_END_MISMATCH)."""

    def advance(state: Brackets, event: Event) -> Brackets:
        if event.type == "turn/end" and state.open_turn is None:
            raise SeqlogError(Code.EVENT_OUTSIDE_TURN, f"turn/end at seq {event.seq} must be inside an open turn")
        return original(state, event)  # type: ignore[no-any-return]

    return advance


@hidden_mutant(
    "bare_reason_extra_members_kept", "INV-TRACE-3", "session", sl_trace, "check_trace_data",
    p.appends(p.turn_start(0), p.event("turn/end", 1, {"turn": 1, "reason": {"kind": "completed", "summary": "done"}})),
)
def _bare_reason_extra_members_kept(original: Fn) -> Fn:
    """A released bare reason (``completed``, ``blocked``, ``max-tokens``, ``interrupted``) is checked for
    its ``kind`` only: further members are kept as an owner's extension, not refused."""

    def check_trace_data(event: Event) -> None:
        reason = as_object(_data(event).get("reason")) if event.type == "turn/end" else None
        if reason is not None and reason.get("kind") in _BARE_REASONS:
            event = _with_data(event, {**_data(event), "reason": {"kind": reason["kind"]}})
        original(event)

    return check_trace_data


@hidden_mutant(
    "v0_error_reason_accepted_in_v1", "INV-TRACE-3", "session", sl_trace, "check_trace_data",
    p.appends(p.turn_start(0),
              p.event("turn/end", 1, {"turn": 1, "reason": {"kind": "error", "step": 0, "message": "boom", "code": "E"}})),
)
def _v0_error_reason_accepted_in_v1(original: Fn) -> Fn:
    """A v1 ``turn/end`` may carry the v0 error reason ``{kind, step, message, code?}`` (read as an error
    with its record spread out), where v1 wants ``{kind, error}``."""

    def check_trace_data(event: Event) -> None:
        reason = as_object(_data(event).get("reason")) if event.type == "turn/end" else None
        if reason is not None and reason.get("kind") == "error" and "error" not in reason and "message" in reason:
            event = _with_data(event, {**_data(event), "reason": {"kind": "completed"}})
        original(event)

    return check_trace_data


@hidden_mutant(
    "step_end_forgets_step_number", "INV-TRACE-4", "session", sl_trace, "advance",
    p.appends(p.turn_start(0), p.step_start(1), p.step_end(2), p.step_start(3, step=2)),
)
def _step_end_forgets_step_number(original: Fn) -> Fn:
    """``step/end`` clears the step it closes, number included, so the next step of the turn must be
    numbered 1 again and step 2 is refused."""

    def advance(state: Brackets, event: Event) -> Brackets:
        after: Brackets = original(state, event)
        if event.type == "step/end":
            return Brackets(after.open_turn, after.last_turn, None, 0, after.step_calls)
        return after

    return advance


@hidden_mutant(
    "answered_call_stays_recorded", "INV-TRACE-8", "session", sl_trace, "advance",
    p.appends(*_started(p.tool_result(4, "c1"), p.tool_result(5, "c1"))),
)
def _answered_call_stays_recorded(original: Fn) -> Fn:
    """The trace records which calls a ``tool/call`` started but not which were answered: a second
    result for a started call passes the trace (and is left to the relationship rules)."""

    def advance(state: Brackets, event: Event) -> Brackets:
        after: Brackets = original(state, event)
        if event.type == "tool/result" and isinstance(event.surface_op, Append):
            return Brackets(after.open_turn, after.last_turn, after.open_step, after.last_step, state.step_calls)
        return after

    return advance


@hidden_mutant(
    "tool_call_empty_id_passes_payload", "INV-TRACE-9", "session", sl_trace, "check_trace_data",
    p.appends(p.turn_start(0), p.step_start(1), p.tool_call(2, "")),
)
def _tool_call_empty_id_passes_payload(original: Fn) -> Fn:
    """``tool/call.callId`` is typed as a string, not a non-empty one: an empty id passes the payload check
    (and is then judged as a call never advertised)."""

    def check_trace_data(event: Event) -> None:
        if event.type == "tool/call" and _data(event).get("callId") == "":
            event = _with_data(event, {**_data(event), "callId": "x"})
        original(event)

    return check_trace_data


# --- INV-REPAIR: crash repair -------------------------------------------------------------------------


@hidden_mutant(
    "closers_sorted_by_call_id", "INV-REPAIR-2", "repair", OpenTail, "closers",
    _repair(p.turn_start(0), p.step_start(1), p.assistant(2, ["c2", "c1"])),
)
def _closers_sorted_by_call_id(original: Fn) -> Fn:
    """Repair answers the pending calls in call-id order (the pending calls kept as a set), not in the
    order the model asked for them."""

    def closers(self: OpenTail) -> tuple[Event, ...]:
        pending = self.pending
        self.pending = dict(sorted(pending.items()))
        try:
            return original(self)  # type: ignore[no-any-return]
        finally:
            self.pending = pending

    return closers


@hidden_mutant(
    "closer_step_end_after_closed_step", "INV-REPAIR-2", "repair", OpenTail, "observe",
    _repair(p.turn_start(0), p.step_start(1), p.step_end(2)),
)
def _closer_step_end_after_closed_step(original: Fn) -> Fn:
    """Repair takes ``step/end`` as answering the step's calls but keeps the step as the current one, so a
    turn crashed between its steps gets a second ``step/end`` before its ``turn/end``."""

    def observe(self: OpenTail, event: Event) -> None:
        step = self.step
        original(self, event)
        if event.type == "step/end":
            self.step = step

    return observe


@hidden_mutant(
    "outcome_unknown_closer_not_started_text", "INV-REPAIR-3", "repair", sl_repair, "_interrupted_result",
    _repair(*_started()),
)
def _outcome_unknown_closer_not_started_text(original: Fn) -> Fn:
    """The closer of a started call reports ``TOOL_OUTCOME_UNKNOWN`` but says the not-started text (the
    one text written for both closers)."""

    def _interrupted_result(turn: int, call: PendingCall, seq: int, time: int) -> Event:
        event: Event = original(turn, call, seq, time)
        if call.call_seq is None:
            return event
        data = _data(event)
        message = data["message"]
        block = {**message["content"][0], "content": [{"type": "text", "text": NOT_STARTED_TEXT}]}
        return _with_data(event, {**data, "message": {**message, "content": [block]}})

    return _interrupted_result


@hidden_mutant(
    "closer_cites_advertising_message", "INV-REPAIR-3", "repair", OpenTail, "observe",
    _repair(*_started()),
)
def _closer_cites_advertising_message(original: Fn) -> Fn:
    """The closer of a started call cites the ``assistant/message`` that asked for the call, not the
    ``tool/call`` that started it."""
    asked_at: dict[tuple[int, str], int] = {}

    def observe(self: OpenTail, event: Event) -> None:
        original(self, event)
        if event.type == "assistant/message":
            for call_id in sl_messages.tool_call_ids(event):
                asked_at[(id(self), call_id)] = event.seq
        elif event.type == "tool/call":
            for call_id, call in self.pending.items():
                if call.call_seq == event.seq and (id(self), call_id) in asked_at:
                    self.pending[call_id] = PendingCall(call_id, call.step, asked_at[(id(self), call_id)])

    return observe


# --- INV-COMPACT: the tool-pairing balance and compaction regions --------------------------------------


@hidden_mutant(
    "user_message_tool_calls_counted", "INV-COMPACT-1", "compaction", sl_messages, "pairing_delta",
    _cuts([{**p.user(0), "data": {**p.user(0)["data"], "content": [
        {"type": "text", "text": "run this"}, {"type": "tool-call", "id": "c9", "name": "read_file", "arguments": "{}"}]}}]),
)
def _user_message_tool_calls_counted(original: Fn) -> Fn:
    """The balance counts the ``tool-call`` blocks of every message, a user message's too, where only an
    ``assistant/message`` asks for calls."""

    def pairing_delta(event: Event) -> int:
        if event.type == "user/message":
            message = _data(event)
            content = message.get("content")
            blocks = content if isinstance(content, tuple | list) else ()
            return sum(1 for block in blocks if isinstance(block, Mapping) and block.get("type") == "tool-call")
        return original(event)  # type: ignore[no-any-return]

    return pairing_delta


@hidden_mutant(
    "error_results_not_counted", "INV-COMPACT-1", "compaction", sl_messages, "pairing_delta",
    _cuts(_started(p.tool_result(4, "c1", is_error=True, error_code="EACCES"))),
)
def _error_results_not_counted(original: Fn) -> Fn:
    """A ``tool/result`` carrying an ``error`` counts 0 in the balance (a failed call taken as answering
    nothing), so the call it answers stays pending."""

    def pairing_delta(event: Event) -> int:
        if event.type == "tool/result" and "error" in _data(event):
            return 0
        return original(event)  # type: ignore[no-any-return]

    return pairing_delta


@hidden_mutant(
    "empty_surface_has_no_cuts", "INV-COMPACT-2", "compaction", Session, "cut_balances",
    _cuts([p.turn_start(0)]),
)
def _empty_surface_has_no_cuts(original: Fn) -> Fn:
    """An empty surface is answered with no cuts (nothing to cut between), where N nodes have N + 1 cuts
    and the one cut of an empty surface is balanced."""

    def cut_balances(self: Session) -> tuple[bool, ...]:
        balances: tuple[bool, ...] = original(self)
        return balances if len(self.surface.nodes) else ()

    return cut_balances


@hidden_mutant(
    "inverted_region_swapped", "INV-COMPACT-3", "compaction", Session, "compaction_region",
    _cuts([p.user(0), p.user(1), p.user(2)], region={"start": 2, "end": 0}),
)
def _inverted_region_swapped(original: Fn) -> Fn:
    """A compaction region whose start comes after its end on the surface is read as the region between
    them (the two ends taken in either order), instead of refused as inverted."""

    def compaction_region(self: Session, start: object, end: object) -> tuple[int, ...]:
        nodes = self.surface.nodes
        if start in nodes and end in nodes and nodes.index(start) > nodes.index(end):
            start, end = end, start
        return original(self, start, end)  # type: ignore[no-any-return]

    return compaction_region


@hidden_mutant(
    "integral_float_around_seq_not_found", "INV-COMPACT-5", "compaction", Session, "balanced_around",
    _cuts([p.user(0), p.user(1)], seq=1.0),
)
def _integral_float_around_seq_not_found(original: Fn) -> Fn:
    """balanced_around looks the seq up by its type as well as its value: ``1.0``, the same JSON number as
    the surface node 1, is not found on the surface."""

    def balanced_around(self: Session, seq: object) -> tuple[bool, bool]:
        if type(seq) is not int:
            raise SeqlogError(Code.NOT_ON_SURFACE, f"surface seq {seq!r} not found")
        return original(self, seq)  # type: ignore[no-any-return]

    return balanced_around
