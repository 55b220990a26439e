"""The fifth half of the catalogue, relations: surface, trace, repair, tool-pairing balance and the
relationships between events (INV-SURF, INV-TRACE, INV-REPAIR, INV-COMPACT, INV-REL).

Written from the documents (``invariants.md``, the protocol, the on-disk format), the reference model
and seqlog's source alone, without reading the conformance suite or its tests, and never run against
the suite before the measurement that first judges them.  Each mutant is one decision a port's author
could get wrong while reading the same rules: two refusals met in the other order, a rule applied to
some event types but not all, an absent member read as its default, a rare-but-legal order refused,
numbering started from the other end, a set where a sequence is meant, a crash-repair event built
slightly wrong, state kept one boundary too long or dropped one too early.

The relationship rules are dispatched through a table of :class:`seqlog.relations.Relations`
methods, so most of their mutants wrap :meth:`Relations.plan` and change the one decision for the
event type concerned; module helpers the rules call are replaced directly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import seqlog.event as sl_event
import seqlog.messages as sl_messages
import seqlog.relations as sl_relations
import seqlog.repair as sl_repair
import seqlog.surface as sl_surface
import seqlog.trace as sl_trace
from killrate import probes as p
from killrate.mutants import Fn, _data, _with_data, sealed_mutant
from seqlog.errors import Code, SeqlogError
from seqlog.event import SURFACE_TYPES, Append, Event, Replace
from seqlog.jsonvalue import as_int, freeze
from seqlog.relations import Commit, Relations, _member, _refuse, title_frame
from seqlog.repair import NOT_STARTED_TEXT, OpenTail, PendingCall
from seqlog.session import Session
from seqlog.surface import FoldedSurface, Replacement, SurfaceManager, SurfacePlan
from seqlog.trace import Brackets

T = p.T
TITLE_PLUGIN = "dsh-session-title-llm"
_REPAIR_CODES = frozenset({"TOOL_NOT_STARTED", "TOOL_OUTCOME_UNKNOWN"})
_ABORT_CAUSES = frozenset({"user", "parent", "disposed", "legacy", "hook"})


# --- probe events -------------------------------------------------------------------------------------


def _step_open(*more: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """Turn 1 with step 1 open and a request header of provider ``p`` in force, then ``more``."""
    return (p.turn_start(0), p.step_start(1), p.header_event(2, p.HEADER), *more)


def _answered(*more: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """Turn 1, a user message, step 1 in which ``c1`` was asked for, started and answered (seq 5), then ``more``."""
    return (p.turn_start(0), p.user(1), p.step_start(2), p.assistant(3, ["c1"]), p.tool_call(4, "c1"),
            p.tool_result(5, "c1"), *more)


def _rewrite(seq: int, target: int) -> dict[str, Any]:
    """A rewrite of the ``c1`` result at ``target``, citing it."""
    return p.tool_result(seq, "c1", op=p.replace(target, target), sources=[target])


def _retry(seq: int, retry_id: str, attempt: int, *, turn: int = 1, step: int = 1, provider: str = "p") -> dict[str, Any]:
    data = {"retryId": retry_id, "turn": turn, "step": step, "provider": provider, "policyKey": "default",
            "retry": attempt, "delayMs": 0, "failure": {"message": "overloaded", "code": "OVERLOADED"}, "mode": "always"}
    return p.event("llm/retry", seq, data)


def _compaction(type_: str, seq: int, compaction_id: str = "k1", turn: int | None = None, **more: Any) -> dict[str, Any]:
    return p.event(type_, seq, {"compactionId": compaction_id, "turn": turn, **more})


def _span(start: int, end: int, shadowed: Sequence[int]) -> dict[str, Any]:
    return {"shadowedRange": {"start": start, "end": end}, "shadowedSeqs": list(shadowed), "shadowedTokenCount": 1}


def _summary(seq: int, start: int, end: int, shadowed: Sequence[int], compaction_id: str = "k1") -> dict[str, Any]:
    data = {"compactionId": compaction_id, "summary": [{"type": "text", "text": "so far"}], **_span(start, end, shadowed),
            "provider": "p", "model": "m"}
    return p.event("compaction/summary", seq, data)


def _prune(seq: int, start: int, end: int, shadowed: Sequence[int]) -> dict[str, Any]:
    return p.event("compaction/prune", seq, _span(start, end, shadowed))


def _dispatch_start(seq: int, sub: str, root: str = "root") -> dict[str, Any]:
    return p.event("tool/code-dispatch-start", seq,
                   {"rootCallId": root, "parentCallId": root, "subCallId": sub, "name": "run", "arguments": {}})


def _title(seq: int, cited: Sequence[int]) -> dict[str, Any]:
    source = {"kind": "provider", "provider": "p"}
    return p.event("session/title", seq, {"title": "t", "messageSeqs": list(cited), "source": source})


def _title_request(seq: int, cited: Sequence[tuple[int, str]], *extra: dict[str, Any]) -> dict[str, Any]:
    message = {"id": "title-0", "role": "user", "content": [{"type": "text", "text": title_frame(cited)}],
               "source": {"kind": "plugin", "plugin": TITLE_PLUGIN}}
    data = {"titleProvider": "p", "messageSeqs": [seq for seq, _ in cited], "route": {"provider": "p", "model": "m"},
            "system": "", "messages": [message, *extra], "maxTokens": 16}
    return p.event("session/title-llm-request", seq, data)


def _cuts(events: Sequence[dict[str, Any]], **more: Any) -> p.Probe:
    return ({"op": "cuts", "events": list(events), **more},)


def _plan_of(self: Relations, event: Event, original: Fn, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
    """What the unmutated rules plan for ``event``."""
    result: Commit | None = original(self, event, log, surface)
    return result


# --- INV-SURF: the surface ----------------------------------------------------------------------------


@sealed_mutant(
    "sources_forbidden_reported_first", "INV-SURF-1", "surface", sl_surface, "_check_eligibility",
    p.appends(p.user(0), {**p.turn_start(1), "surfaceOp": "append", "sourceEventSeqs": [0]}),
)
def _sources_forbidden_reported_first(original: Fn) -> Fn:
    """Eligibility looks at ``sourceEventSeqs`` before ``surfaceOp``: a log-only event carrying both is SOURCES_FORBIDDEN."""

    def _check_eligibility(event: Event) -> None:
        if event.type not in SURFACE_TYPES and event.source_event_seqs is not None:
            raise SeqlogError(Code.SOURCES_FORBIDDEN, f"event {event.type!r} at seq {event.seq} cannot carry sourceEventSeqs")
        original(event)

    return _check_eligibility


@sealed_mutant(
    "provenance_checked_before_range", "INV-SURF-4", "surface", SurfaceManager, "_plan",
    p.appends(p.user(0), p.user(1, p.replace(7, 7), sources=[0, 0])),
)
def _provenance_checked_before_range(original: Fn) -> Fn:
    """A replace's provenance is checked before its range: a replace off the surface citing a seq twice is SOURCES_DUPLICATE."""

    def _plan(self: SurfaceManager, event: Event, expected_seq: int) -> SurfacePlan:
        if event.seq == expected_seq and isinstance(event.surface_op, Replace) and event.type in SURFACE_TYPES:
            sl_surface._check_provenance(event, ())
        return original(self, event, expected_seq)  # type: ignore[no-any-return]

    return _plan


@sealed_mutant(
    "null_sources_as_absent", "INV-SURF-5", "surface", sl_event, "decode_event",
    p.appends({**p.user(0), "sourceEventSeqs": None}),
)
def _null_sources_as_absent(original: Fn) -> Fn:
    """``sourceEventSeqs: null`` is read as no provenance (``value ?? absent``) instead of refused as not an array."""

    def decode_event(raw: object) -> Event:
        if isinstance(raw, Mapping) and "sourceEventSeqs" in raw and raw["sourceEventSeqs"] is None:
            raw = {k: v for k, v in raw.items() if k != "sourceEventSeqs"}
        return original(raw)  # type: ignore[no-any-return]

    return decode_event


@sealed_mutant(
    "cited_append_bumps_generation", "INV-SURF-10", "surface", SurfaceManager, "_plan",
    p.appends(p.user(0), p.user(1, sources=[0])),
)
def _cited_append_bumps_generation(original: Fn) -> Fn:
    """An appended message that cites sources is taken for a rewrite of the surface and counted in the replace generation."""

    def _plan(self: SurfaceManager, event: Event, expected_seq: int) -> SurfacePlan:
        plan: SurfacePlan = original(self, event, expected_seq)
        if isinstance(event.surface_op, Append) and event.source_event_seqs and plan.replacement is None:
            cited = Replacement(event.seq, event.seq, event.seq, ())
            return dataclasses.replace(plan, replacement=cited)
        return plan

    return _plan


def _without_is_error(event: dict[str, Any]) -> dict[str, Any]:
    del event["data"]["message"]["content"][0]["isError"]
    return event


@sealed_mutant(
    "rewrite_is_error_absent_as_false", "INV-SURF-11", "surface", sl_surface, "_without_result_content",
    p.appends(*_answered(_without_is_error(_rewrite(6, 5)))),
)
def _rewrite_is_error_absent_as_false(original: Fn) -> Fn:
    """A rewrite is compared with an absent ``isError`` read as ``false``: dropping a successful result's flag is no change."""

    def _without_result_content(data: Any) -> Any:
        blank = original(data)
        message = blank.get("message") if isinstance(blank, Mapping) else None
        content = message.get("content") if isinstance(message, Mapping) else None
        if not content or not isinstance(content[0], Mapping) or "isError" in content[0]:
            return blank
        block = {**content[0], "isError": False}
        return {**blank, "message": {**message, "content": (block, *content[1:])}}  # type: ignore[dict-item]

    return _without_result_content


@sealed_mutant(
    "rewrite_of_rewrite_refused", "INV-SURF-11", "surface", sl_surface, "_check_rewrite",
    p.appends(*_answered(_rewrite(6, 5), _rewrite(7, 6))),
)
def _rewrite_of_rewrite_refused(original: Fn) -> Fn:
    """A rewrite's target must be a result that answered its call (an appended one): a rewrite of a rewrite is refused."""

    def _check_rewrite(event: Event, target: Event, span: int) -> None:
        original(event, target, span)
        if target is not event and isinstance(target.surface_op, Replace):
            raise SeqlogError(Code.TOOL_REWRITE_TARGET, f"tool/result replace at seq {event.seq} must target an appended result")

    return _check_rewrite


@sealed_mutant(
    "fold_shadowed_sorted", "INV-SURF-12", "surface", sl_surface, "fold_surface",
    p.pure("fold_surface", p.user(0), p.user(1), p.user(2), p.user(3, p.replace(0, 1), sources=[0, 1]),
           p.user(4, p.replace(3, 2), sources=[2, 3])),
)
def _fold_shadowed_sorted(original: Fn) -> Fn:
    """fold_surface reports the nodes a replacement removed in seq order (as a set), not in the surface order they stood in."""

    def fold_surface(events: Any) -> FoldedSurface:
        folded: FoldedSurface = original(events)
        replacements = tuple(dataclasses.replace(r, shadowed=tuple(sorted(r.shadowed))) for r in folded.replacements)
        return dataclasses.replace(folded, replacements=replacements)

    return fold_surface


# --- INV-TRACE: turns, steps and tool results ---------------------------------------------------------


@sealed_mutant(
    "turns_numbered_from_zero", "INV-TRACE-1", "session", sl_trace, "advance",
    p.appends(p.turn_start(0)),
)
def _turns_numbered_from_zero(original: Fn) -> Fn:
    """Turns are numbered from 0, like seqs: the log's first ``turn/start`` must open turn 0, and turn 1 is misnumbered."""

    def advance(state: Brackets, event: Event) -> Brackets:
        if event.type == "turn/start" and state.open_turn is None:
            turn = as_int(_data(event).get("turn"))
            if turn != state.last_turn:
                raise SeqlogError(Code.TURN_NUMBER, f"turn/start at seq {event.seq} must start turn {state.last_turn}")
            return Brackets(open_turn=turn, last_turn=state.last_turn + 1)
        return original(state, event)  # type: ignore[no-any-return]

    return advance


@sealed_mutant(
    "abort_cause_kind_open", "INV-TRACE-3", "session", sl_trace, "check_trace_data",
    p.appends(p.turn_start(0), p.event("turn/end", 1, {"turn": 1, "reason": {"kind": "aborted", "reason": {"kind": "timeout"}}})),
)
def _abort_cause_kind_open(original: Fn) -> Fn:
    """An abort's cause is read as merge-extensible like the reason itself: a cause of an unreleased kind is kept, not refused."""

    def check_trace_data(event: Event) -> None:
        reason = _data(event).get("reason") if event.type == "turn/end" else None
        cause = reason.get("reason") if isinstance(reason, Mapping) and reason.get("kind") == "aborted" else None
        if isinstance(cause, Mapping) and isinstance(cause.get("kind"), str) and cause["kind"] not in _ABORT_CAUSES:
            event = _with_data(event, {**_data(event), "reason": {"kind": "aborted", "reason": {"kind": "user"}}})
        original(event)

    return check_trace_data


@sealed_mutant(
    "repeated_step_end_accepted", "INV-TRACE-5", "session", sl_trace, "advance",
    p.appends(p.turn_start(0), p.step_start(1), p.step_end(2), p.step_end(3)),
)
def _repeated_step_end_accepted(original: Fn) -> Fn:
    """A ``step/end`` of the step that just ended is taken as a harmless repeat, not refused as naming no open step."""

    def advance(state: Brackets, event: Event) -> Brackets:
        data = _data(event)
        if (
            event.type == "step/end"
            and state.open_step is None
            and state.open_turn is not None
            and as_int(data.get("turn")) == state.open_turn
            and as_int(data.get("step")) == state.last_step
        ):
            return state
        return original(state, event)  # type: ignore[no-any-return]

    return advance


def _outcome_unknown(seq: int) -> dict[str, Any]:
    result = p.tool_result(seq, "c1", is_error=True, error_code="TOOL_OUTCOME_UNKNOWN")
    result["data"]["error"]["name"] = "ToolOutcomeUnknownError"
    return result


@sealed_mutant(
    "repair_codes_skip_pairing", "INV-TRACE-8", "session", sl_trace, "advance",
    p.appends(p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]), _outcome_unknown(3)),
)
def _repair_codes_skip_pairing(original: Fn) -> Fn:
    """Both crash-repair codes excuse a result from pairing with a ``tool/call``: ``TOOL_OUTCOME_UNKNOWN`` too."""

    def advance(state: Brackets, event: Event) -> Brackets:
        if event.type == "tool/result" and isinstance(event.surface_op, Append):
            error = _data(event).get("error")
            if isinstance(error, Mapping) and error.get("code") in _REPAIR_CODES:
                event = _with_data(event, {**_data(event), "error": {**error, "code": "TOOL_NOT_STARTED"}})
        return original(state, event)  # type: ignore[no-any-return]

    return advance


@sealed_mutant(
    "tool_call_arguments_any_json", "INV-TRACE-9", "session", sl_trace, "check_trace_data",
    p.appends(p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]),
              p.event("tool/call", 3, {"turn": 1, "step": 1, "callId": "c1", "name": "read_file", "arguments": {}})),
)
def _tool_call_arguments_any_json(original: Fn) -> Fn:
    """A ``tool/call``'s ``arguments`` are read as the parsed JSON the tool receives, so an object passes the payload check."""

    def check_trace_data(event: Event) -> None:
        data = _data(event)
        if event.type == "tool/call" and "arguments" in data and not isinstance(data["arguments"], str):
            event = _with_data(event, {**data, "arguments": "{}"})
        original(event)

    return check_trace_data


@sealed_mutant(
    "rewrite_needs_open_step", "INV-TRACE-7", "session", sl_trace, "advance",
    p.appends(*_answered(p.step_end(6), _rewrite(7, 5))),
)
def _rewrite_needs_open_step(original: Fn) -> Fn:
    """A tool-result rewrite is placed like an appended result, in the step it names: one between the turn's steps is refused."""

    def advance(state: Brackets, event: Event) -> Brackets:
        if event.type == "tool/result" and isinstance(event.surface_op, Replace) and state.open_turn is not None:
            data = _data(event)
            if state.open_step is None or as_int(data.get("step")) != state.open_step:
                raise SeqlogError(Code.EVENT_OUTSIDE_STEP, f"tool/result at seq {event.seq} names a step that is not open")
        return original(state, event)  # type: ignore[no-any-return]

    return advance


# --- INV-REPAIR: crash repair -------------------------------------------------------------------------


@sealed_mutant(
    "started_calls_closed_first", "INV-REPAIR-2", "repair", OpenTail, "closers",
    p.pure("repair", p.turn_start(0), p.step_start(1), p.assistant(2, ["c1", "c2"]), p.tool_call(3, "c2")),
)
def _started_calls_closed_first(original: Fn) -> Fn:
    """Repair answers the started calls before the ones never started, not in the order the model asked for them."""

    def closers(self: OpenTail) -> tuple[Event, ...]:
        pending = self.pending
        ordered = sorted(pending.values(), key=lambda call: call.call_seq is None)
        self.pending = {call.call_id: call for call in ordered}
        try:
            return original(self)  # type: ignore[no-any-return]
        finally:
            self.pending = pending

    return closers


@sealed_mutant(
    "closer_block_not_flagged_error", "INV-REPAIR-3", "repair", sl_repair, "_interrupted_result",
    p.pure("repair", p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"])),
)
def _closer_block_not_flagged_error(original: Fn) -> Fn:
    """A closer's tool-result block is written without ``isError: true``, the error being carried by the ``error`` member."""

    def _interrupted_result(turn: int, call: PendingCall, seq: int, time: int) -> Event:
        closer: Event = original(turn, call, seq, time)
        data = _data(closer)
        message = data["message"]
        block = {k: v for k, v in message["content"][0].items() if k != "isError"}
        return dataclasses.replace(closer, data=freeze({**data, "message": {**message, "content": [block]}}))

    return _interrupted_result


def _interrupted_assistant(seq: int, calls: Sequence[str]) -> dict[str, Any]:
    event = p.assistant(seq, calls)
    event["data"]["interrupted"] = True
    return event


@sealed_mutant(
    "interrupted_message_calls_not_repaired", "INV-REPAIR-2", "repair", OpenTail, "observe",
    p.pure("repair", p.turn_start(0), p.step_start(1), _interrupted_assistant(2, ["c1"])),
)
def _interrupted_message_calls_not_repaired(original: Fn) -> Fn:
    """Repair takes the calls of an ``interrupted`` assistant message as never issued, so they get no closing result."""

    def observe(self: OpenTail, event: Event) -> None:
        if event.type == "assistant/message" and _data(event).get("interrupted") is True:
            pending = dict(self.pending)
            original(self, event)
            self.pending = pending
            return
        original(self, event)

    return observe


@sealed_mutant(
    "closers_timed_at_latest_time", "INV-REPAIR-4", "repair", OpenTail, "observe",
    p.pure("repair", {**p.turn_start(0), "time": T + 5}, {**p.step_start(1), "time": T + 1}),
)
def _closers_timed_at_latest_time(original: Fn) -> Fn:
    """Closers take the latest time seen in the log, times taken as never going back, not the last event's time."""

    def observe(self: OpenTail, event: Event) -> None:
        latest = self.last_time if self.length else event.time
        original(self, event)
        self.last_time = max(latest, event.time)

    return observe


# --- INV-COMPACT: the tool-pairing balance ------------------------------------------------------------


@sealed_mutant(
    "cuts_drop_tail_cut", "INV-COMPACT-2", "compaction", Session, "cut_balances",
    _cuts([p.user(0), p.user(1)]),
)
def _cuts_drop_tail_cut(original: Fn) -> Fn:
    """cut_balances leaves out the cut after the tail, taking the cuts as the places before each node (N cuts for N nodes)."""

    def cut_balances(self: Session) -> tuple[bool, ...]:
        balances: tuple[bool, ...] = original(self)
        return balances[:-1]

    return cut_balances


@sealed_mutant(
    "message_with_calls_counted_once", "INV-COMPACT-1", "compaction", sl_messages, "pairing_delta",
    _cuts([p.turn_start(0), p.step_start(1), p.assistant(2, ["c1", "c2"]), p.tool_call(3, "c1"), p.tool_call(4, "c2"),
           p.tool_result(5, "c1"), p.tool_result(6, "c2")]),
)
def _message_with_calls_counted_once(original: Fn) -> Fn:
    """An assistant message asking for tools counts one pending exchange, not one per ``tool-call`` block."""

    def pairing_delta(event: Event) -> int:
        delta: int = original(event)
        return min(delta, 1) if event.type == "assistant/message" else delta

    return pairing_delta


@sealed_mutant(
    "single_node_region_refused", "INV-COMPACT-3", "compaction", Session, "compaction_region",
    _cuts([p.user(0), p.user(1)], region={"start": 0, "end": 0}),
)
def _single_node_region_refused(original: Fn) -> Fn:
    """A compaction region's start must come before its end: a region of one node (``start == end``) is refused as inverted."""

    def compaction_region(self: Session, start: object, end: object) -> tuple[int, ...]:
        if start == end and start in self.surface.nodes:
            raise SeqlogError(Code.REPLACE_RANGE_INVERTED, f"compaction region start seq {start!r} is not before its end")
        return original(self, start, end)  # type: ignore[no-any-return]

    return compaction_region


# --- INV-REL: relationships between events ------------------------------------------------------------


@sealed_mutant(
    "later_message_replaces_advertised", "INV-REL-1", "session", Relations, "plan",
    p.appends(p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]), p.assistant(3, ["c2"]), p.tool_call(4, "c1")),
)
def _later_message_replaces_advertised(original: Fn) -> Fn:
    """An ``assistant/message``'s calls replace the step's advertised calls instead of joining them: earlier ones cannot start."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        commit = _plan_of(self, event, original, log, surface)
        if event.type != "assistant/message" or commit is None:
            return commit
        adds = commit

        def replace_all() -> None:
            self._tools.clear()
            adds()

        return replace_all

    return plan


def _not_started_result(seq: int, call_id: str) -> dict[str, Any]:
    """The exact crash-repair result for ``call_id``, except that its block does not say ``isError``."""
    block = {"type": "tool-result", "toolCallId": call_id, "content": [{"type": "text", "text": NOT_STARTED_TEXT}]}
    message = {"id": f"interrupted-tool-result-{call_id}-{seq}", "role": "user", "source": {"kind": "tool", "callId": call_id},
               "content": [block]}
    error = {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}
    return p.event("tool/result", seq, {"turn": 1, "step": 1, "message": message, "error": error}, surfaceOp="append")


@sealed_mutant(
    "not_started_flag_implied", "INV-REL-4", "session", sl_relations, "is_exact_not_started_result",
    p.appends(p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]), _not_started_result(3, "c1")),
)
def _not_started_flag_implied(original: Fn) -> Fn:
    """The exact repair result's block may leave ``isError`` out, as implied by its ``ToolNotStartedError``."""

    def is_exact_not_started_result(event: Event, data: Mapping[str, Any]) -> bool:
        message = data.get("message")
        content = message.get("content") if isinstance(message, Mapping) else None
        blocks = list(content) if isinstance(content, tuple | list) else []
        if isinstance(message, Mapping) and blocks and isinstance(blocks[0], Mapping) and "isError" not in blocks[0]:
            blocks[0] = {**blocks[0], "isError": True}
            data = {**data, "message": {**message, "content": blocks}}
        return original(event, data)  # type: ignore[no-any-return]

    return is_exact_not_started_result


@sealed_mutant(
    "summary_turn_unchecked", "INV-REL-7", "session", Relations, "plan",
    p.appends(p.user(0), p.user(1), _compaction("compaction/start", 2), p.turn_start(3), _summary(4, 0, 1, [0, 1])),
)
def _summary_turn_unchecked(original: Fn) -> Fn:
    """Only a compaction's start and end are checked against its owner turn: its summary may come in another turn."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        compaction = self._compaction
        if event.type != "compaction/summary" or compaction is None:
            return _plan_of(self, event, original, log, surface)
        owner, compaction.turn = compaction.turn, self._open_turn
        try:
            commit = _plan_of(self, event, original, log, surface)
        finally:
            compaction.turn = owner
        return commit

    return plan


@sealed_mutant(
    "repeat_checked_before_owner", "INV-REL-9", "session", Relations, "plan",
    p.appends(p.user(0), p.user(1), _compaction("compaction/start", 2), _summary(3, 0, 1, [0, 1]),
              _summary(4, 0, 1, [0, 1], compaction_id="k2")),
)
def _repeat_checked_before_owner(original: Fn) -> Fn:
    """A summary is checked for a repeat before its owner: a second summary naming another compaction is SUMMARY_REPEATED."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        compaction = self._compaction
        if event.type == "compaction/summary" and compaction is not None and compaction.summarized:
            raise _refuse(Code.COMPACTION_SUMMARY_REPEATED, event, f"repeats the summary of compaction {compaction.start_seq}")
        return _plan_of(self, event, original, log, surface)

    return plan


@sealed_mutant(
    "prune_span_unchecked", "INV-REL-12", "session", Relations, "plan",
    p.appends(p.user(0), p.user(1), p.user(2), _prune(3, 0, 2, [0, 2])),
)
def _prune_span_unchecked(original: Fn) -> Fn:
    """Only a summary's span is matched with the surface: a ``compaction/prune`` may name any seqs between its range's ends."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        if event.type == "compaction/prune":
            return None
        return _plan_of(self, event, original, log, surface)

    return plan


@sealed_mutant(
    "span_compared_as_set", "INV-REL-12", "session", Relations, "_check_span",
    p.appends(p.user(0), p.user(1), p.user(2), p.user(3), _prune(4, 0, 3, [0, 2, 1, 3])),
)
def _span_compared_as_set(original: Fn) -> Fn:
    """``shadowedSeqs`` are compared with the surface span as a set: the span's seqs in another order pass."""

    def _check_span(event: Event, data: Mapping[str, Any], surface: SurfaceManager) -> None:
        named = data.get("shadowedSeqs")
        if isinstance(named, tuple | list) and all(isinstance(n, int) for n in named):
            data = {**data, "shadowedSeqs": [n for n in surface.nodes if n in named]}
        original(event, data, surface)

    return _check_span


@sealed_mutant(
    "retry_provider_from_request_context", "INV-REL-14", "session", Relations, "plan",
    p.appends(*_step_open(p.event("request/context", 3, {"provider": "q", "model": "m"}), _retry(4, "r1", 1))),
)
def _retry_provider_from_request_context(original: Fn) -> Fn:
    """A retry must name the provider of the latest request event, a ``request/context`` too, not of the latest header."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        if event.type != "request/context":
            return _plan_of(self, event, original, log, surface)
        provider = _member(_data(event), "provider")

        def commit() -> None:
            self._provider = provider

        return commit

    return plan


@sealed_mutant(
    "chain_keyed_by_retry_id", "INV-REL-16", "session", Relations, "plan",
    p.appends(*_step_open(_retry(3, "r1", 1), _retry(4, "r2", 1))),
)
def _chain_keyed_by_retry_id(original: Fn) -> Fn:
    """Retry chains are told apart by their ``retryId``: a new id in the same turn, step, provider and policy starts a chain."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        data = _data(event)
        retry_id = _member(data, "retryId")
        if event.type != "llm/retry" or retry_id in self._retry_ids:
            return _plan_of(self, event, original, log, surface)
        chain = (_member(data, "turn"), _member(data, "step"), _member(data, "provider"), _member(data, "policyKey"))
        prior = self._chains.pop(chain, None)
        try:
            return _plan_of(self, event, original, log, surface)
        finally:
            if prior is not None:
                self._chains[chain] = prior

    return plan


def _second_turn_retry() -> tuple[dict[str, Any], ...]:
    return (*_step_open(_retry(3, "r1", 1)), p.step_end(4), p.turn_end(5), p.turn_start(6, turn=2),
            p.step_start(7, turn=2), _retry(8, "r1", 1, turn=2))


@sealed_mutant(
    "retry_id_unique_per_turn", "INV-REL-16", "session", Relations, "plan",
    p.appends(*_second_turn_retry()),
)
def _retry_id_unique_per_turn(original: Fn) -> Fn:
    """A ``retryId`` is taken as unique within its turn: a chain of a later turn may reuse an earlier turn's id."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        data = _data(event)
        retry_id, turn = _member(data, "retryId"), _member(data, "turn")
        earlier = event.type == "llm/retry" and retry_id in self._retry_ids and all(
            chain[0] != turn for chain, (used, _) in self._chains.items() if used == retry_id
        )
        if not earlier:
            return _plan_of(self, event, original, log, surface)
        self._retry_ids.discard(retry_id)
        try:
            return _plan_of(self, event, original, log, surface)
        finally:
            self._retry_ids.add(retry_id)

    return plan


@sealed_mutant(
    "repeated_start_checked_before_ancestry", "INV-REL-21", "session", Relations, "plan",
    p.appends(p.turn_start(0), _dispatch_start(1, "s1"), _dispatch_start(2, "s1", root="other")),
)
def _repeated_start_checked_before_ancestry(original: Fn) -> Fn:
    """A dispatch start is checked for a repeat before its ancestry: a repeated start under another root is START_REPEATED."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        if event.type == "tool/code-dispatch-start" and self._open_turn is not None:
            child = _member(_data(event), "subCallId")
            if child in self._dispatches:
                raise _refuse(Code.PTC_START_REPEATED, event, f"starts subCallId {child!r} again")
        return _plan_of(self, event, original, log, surface)

    return plan


def _command_run(seq: int) -> dict[str, Any]:
    return p.event("command/run", seq, {"commandId": "cmd-1", "name": "review", "source": {"kind": "user"}})


@sealed_mutant(
    "done_must_follow_in_same_turn", "INV-REL-24", "session", Relations, "plan",
    p.appends(p.turn_start(0), _command_run(1), p.turn_end(2), p.turn_start(3, turn=2),
              p.event("command/done", 4, {"commandId": "cmd-1", "kind": "success"})),
)
def _done_must_follow_in_same_turn(original: Fn) -> Fn:
    """A ``command/done`` pairs only with a ``command/run`` of its own turn: one after a turn boundary is unpaired."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        if event.type == "command/done":
            command = _member(_data(event), "commandId")
            for earlier in reversed(log):
                if earlier.type == "command/run" and _member(_data(earlier), "commandId") == command:
                    break
                if earlier.type in ("turn/start", "turn/end"):
                    raise _refuse(Code.COMMAND_DONE_UNPAIRED, event, "has no command/run in this turn")
        return _plan_of(self, event, original, log, surface)

    return plan


@sealed_mutant(
    "title_cites_surface_only", "INV-REL-27", "session", Relations, "plan",
    p.appends(p.user(0), p.user(1, p.replace(0, 0), sources=[0]), _title(2, [0])),
)
def _title_cites_surface_only(original: Fn) -> Fn:
    """A title may cite only messages still on the surface (what the model sees): a shadowed human message is refused."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        if event.type in ("session/title", "session/title-llm-request"):
            cited = _data(event).get("messageSeqs")
            for seq in cited if isinstance(cited, tuple | list) else ():
                if as_int(seq) not in surface.nodes:
                    raise _refuse(Code.TITLE_SOURCE_NOT_HUMAN, event, f"messageSeqs cites {seq!r}, which is not on the surface")
        return _plan_of(self, event, original, log, surface)

    return plan


_SYSTEM_NOTE = {"id": "title-sys", "role": "system", "content": [{"type": "text", "text": "Be brief."}],
                "source": {"kind": "plugin", "plugin": TITLE_PLUGIN}}


@sealed_mutant(
    "title_request_extra_messages_ignored", "INV-REL-28", "session", Relations, "plan",
    p.appends(p.user(0), _title_request(1, [(0, "hi")], _SYSTEM_NOTE)),
)
def _title_request_extra_messages_ignored(original: Fn) -> Fn:
    """A title request is judged by its first message: further messages after the framed one are not refused."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        messages = _data(event).get("messages")
        if event.type == "session/title-llm-request" and isinstance(messages, tuple | list) and len(messages) > 1:
            event = _with_data(event, {**_data(event), "messages": messages[:1]})
        return _plan_of(self, event, original, log, surface)

    return plan


def _repeated_block(seq: int) -> dict[str, Any]:
    return p.assistant(seq, ["c1", "c1"])


@sealed_mutant(
    "repeat_within_message_allowed", "INV-REL-2", "session", Relations, "plan",
    p.appends(p.turn_start(0), p.step_start(1), _repeated_block(2)),
)
def _repeat_within_message_allowed(original: Fn) -> Fn:
    """An ``assistant/message``'s calls are collected by id, so a message naming one call id in two blocks advertises it once."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        message = _data(event).get("message")
        content = message.get("content") if event.type == "assistant/message" and isinstance(message, Mapping) else None
        if isinstance(message, Mapping) and isinstance(content, tuple | list):
            seen: set[object] = set()
            kept = []
            for block in content:
                call = block.get("id") if isinstance(block, Mapping) and block.get("type") == "tool-call" else None
                if call is None or call not in seen:
                    kept.append(block)
                seen.add(call)
            event = _with_data(event, {**_data(event), "message": {**message, "content": kept}})
        return _plan_of(self, event, original, log, surface)

    return plan


@sealed_mutant(
    "same_id_start_taken_as_resend", "INV-REL-6", "session", Relations, "plan",
    p.appends(_compaction("compaction/start", 0), _compaction("compaction/start", 1)),
)
def _same_id_start_taken_as_resend(original: Fn) -> Fn:
    """A ``compaction/start`` naming the open compaction's id is taken as a resent start, not refused as an overlap."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        compaction = self._compaction
        if (
            event.type == "compaction/start"
            and compaction is not None
            and compaction.crossed_at is None
            and _member(_data(event), "compactionId") == compaction.compaction_id
        ):
            return None
        return _plan_of(self, event, original, log, surface)

    return plan


def _checkpoint(seq: int, start: int, end: int, shadowed: Sequence[int]) -> dict[str, Any]:
    event = p.user(seq, p.replace(start, end), sources=shadowed)
    event["data"]["source"] = {"kind": "plugin", "plugin": "compact", "compactionId": "k1"}
    return event


@sealed_mutant(
    "checkpoint_without_compaction_accepted", "INV-REL-8", "session", Relations, "plan",
    p.appends(p.user(0), p.user(1), _checkpoint(2, 0, 1, [0, 1])),
)
def _checkpoint_without_compaction_accepted(original: Fn) -> Fn:
    """A compaction checkpoint is matched with the open compaction only when one is open: with none it is a plain replacement."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        if event.type == "user/message" and self._compaction is None:
            return None
        return _plan_of(self, event, original, log, surface)

    return plan


@sealed_mutant(
    "turn_end_does_not_cross", "INV-REL-11", "session", Relations, "plan",
    p.appends(p.turn_start(0), _compaction("compaction/start", 1, turn=1), p.turn_end(2),
              _compaction("compaction/end", 3, turn=1, error="stopped")),
)
def _turn_end_does_not_cross(original: Fn) -> Fn:
    """Only a ``turn/start`` crosses an open compaction: a ``turn/end`` while one is open is not held as a crossing."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        commit = _plan_of(self, event, original, log, surface)
        compaction = self._compaction
        if event.type != "turn/end" or commit is None or compaction is None or compaction.crossed_at is not None:
            return commit
        ends = commit

        def end_without_crossing() -> None:
            ends()
            compaction.crossed_at = None

        return end_without_crossing

    return plan
