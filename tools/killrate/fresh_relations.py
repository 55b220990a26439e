"""The third half of the catalogue, relations: surface, trace, repair, tool-pairing balance and the
relationships between events (INV-SURF, INV-TRACE, INV-REPAIR, INV-COMPACT, INV-REL).

Written from the invariant list (``invariants.md``), the reference model and seqlog's source alone,
before any suite change aimed at them.  Each mutant is one decision a port's author could get wrong
while reading the same rules: a member compared and its sibling forgotten, a bound taken as
exclusive, two refusals checked in the other order, state kept one event too long or dropped one
event too soon, a legal log refused.

The relationship rules are dispatched through a table of :class:`seqlog.relations.Relations`
methods, so most of their mutants wrap :meth:`Relations.plan` and change the one decision for the
event type concerned; the helpers the rules call (``_check_owner``, ``_check_in_turn``,
``_check_span``, module functions) are replaced directly.
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
from killrate.mutants import Fn, _data, _with_data, fresh_mutant
from seqlog.errors import Code, SeqlogError
from seqlog.event import APPEND, SURFACE_TYPES, Append, Event, Replace, SurfaceOp
from seqlog.jsonvalue import FrozenObject, as_int, freeze, thaw
from seqlog.messages import tool_call_ids, tool_result_call_id
from seqlog.relations import Commit, LogIdentity, Relations, _member, _position
from seqlog.repair import NOT_STARTED_TEXT, OpenTail, PendingCall
from seqlog.session import Session
from seqlog.surface import FoldedSurface, SurfaceManager, SurfacePlan
from seqlog.trace import Brackets

T = p.T
TITLE_PLUGIN = "dsh-session-title-llm"


# --- probe events -------------------------------------------------------------------------------------


def _tool_turn(*more: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """Turn 1, a user message, step 1 advertising and starting ``c1``, then ``more``."""
    return (p.turn_start(0), p.user(1), p.step_start(2), p.assistant(3, ["c1"]), p.tool_call(4, "c1"), *more)


def _rewrite_log(message_id: str = "r-c1") -> tuple[dict[str, Any], ...]:
    """``c1`` answered at seq 5 and its result rewritten at seq 6 (the rewrite's message id given)."""
    rewrite = p.tool_result(6, "c1", op=p.replace(5, 5), sources=[5])
    rewrite["data"]["message"]["id"] = message_id
    return _tool_turn(p.tool_result(5, "c1"), rewrite)


def _shadowed_call_log() -> tuple[dict[str, Any], ...]:
    """A log whose surface goes negative: a user message replaced the assistant message that asked for ``c1``."""
    return (*_tool_turn(p.tool_result(5, "c1"), p.step_end(6)), p.user(7, p.replace(3, 3), [3]))


def _repairable() -> tuple[dict[str, Any], ...]:
    """A turn left open in step 1 after ``c1`` was started and ``c2`` only asked for."""
    return (p.turn_start(0), p.step_start(1), p.assistant(2, ["c1", "c2"]), p.tool_call(3, "c1"))


def _retry(seq: int, retry_id: str, attempt: int, *, turn: int = 1, policy: str = "default") -> dict[str, Any]:
    failure = {"message": "overloaded", "code": "OVERLOADED"}
    data = {"retryId": retry_id, "turn": turn, "step": 1, "provider": "p", "policyKey": policy, "retry": attempt,
            "delayMs": 0, "failure": failure, "mode": "always"}
    return p.event("llm/retry", seq, data)


def _retry_started(seq: int, retry_id: str, attempt: int) -> dict[str, Any]:
    return p.event("llm/retry-started", seq, {"retryId": retry_id, "turn": 1, "step": 1, "retry": attempt})


def _in_step(*more: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """Turn 1 with step 1 open and a request header in force, then ``more``."""
    return (p.turn_start(0), p.step_start(1), p.header_event(2, p.HEADER), *more)


def _compaction_start(seq: int, compaction_id: str = "k1", turn: int | None = None, **more: Any) -> dict[str, Any]:
    return p.event("compaction/start", seq, {"compactionId": compaction_id, "turn": turn, **more})


def _compaction_end(seq: int, compaction_id: str = "k1", turn: int | None = None, **more: Any) -> dict[str, Any]:
    return p.event("compaction/end", seq, {"compactionId": compaction_id, "turn": turn, **more})


def _span(start: int, end: int, shadowed: Sequence[int]) -> dict[str, Any]:
    return {"shadowedRange": {"start": start, "end": end}, "shadowedSeqs": list(shadowed), "shadowedTokenCount": 1}


def _summary(seq: int, start: int, end: int, shadowed: Sequence[int], **more: Any) -> dict[str, Any]:
    data = {"compactionId": "k1", "summary": [{"type": "text", "text": "so far"}], **_span(start, end, shadowed),
            "provider": "p", "model": "m", **more}
    return p.event("compaction/summary", seq, data)


def _dispatch(type_: str, seq: int, sub: str, *, parent: str = "root", name: str = "run") -> dict[str, Any]:
    data: dict[str, Any] = {"rootCallId": "root", "parentCallId": parent, "subCallId": sub, "name": name, "arguments": {}}
    if type_ == "tool/code-dispatch":
        data |= {"isError": False, "content": []}
    return p.event(type_, seq, data)


def _command_run(seq: int, command_id: str = "cmd-1") -> dict[str, Any]:
    return p.event("command/run", seq, {"commandId": command_id, "name": "build", "source": {"kind": "user"}})


def _title_request(seq: int, cited: Sequence[tuple[int, str]]) -> dict[str, Any]:
    frame = sl_relations.title_frame(cited)
    message = {"id": "title-0", "role": "user", "content": [{"type": "text", "text": frame}],
               "source": {"kind": "plugin", "plugin": TITLE_PLUGIN}}
    data = {"titleProvider": "p", "messageSeqs": [seq for seq, _ in cited], "route": {"provider": "p", "model": "m"},
            "system": "", "messages": [message], "maxTokens": 16}
    return p.event("session/title-llm-request", seq, data)


def _two_line_user(seq: int) -> dict[str, Any]:
    message = p.user(seq)
    message["data"]["content"] = [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}]
    return message


def _not_started_result(seq: int, call_id: str, text: str) -> dict[str, Any]:
    block = {"type": "tool-result", "toolCallId": call_id, "isError": True, "content": [{"type": "text", "text": text}]}
    message = {"id": f"interrupted-tool-result-{call_id}-{seq}", "role": "user", "source": {"kind": "tool", "callId": call_id},
               "content": [block]}
    error = {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}
    return p.event("tool/result", seq, {"turn": 1, "step": 1, "message": message, "error": error}, surfaceOp="append")


# --- INV-SURF: the surface ----------------------------------------------------------------------------


@fresh_mutant(
    "sources_allowed_on_log_events", "INV-SURF-1", "surface", sl_surface, "_check_eligibility",
    p.appends(p.user(0), p.event("turn/start", 1, {"turn": 1}, sourceEventSeqs=[0])),
)
def _sources_allowed_on_log_events(original: Fn) -> Fn:
    """The eligibility check forbids ``surfaceOp`` on log-only events but forgets ``sourceEventSeqs``, which they keep."""

    def _check_eligibility(event: Event) -> None:
        if event.type not in SURFACE_TYPES:
            event = dataclasses.replace(event, source_event_seqs=None)
        original(event)

    return _check_eligibility


@fresh_mutant(
    "assistant_message_appends_by_default", "INV-SURF-2", "surface", SurfaceManager, "_plan",
    p.appends(p.turn_start(0), p.step_start(1), {k: v for k, v in p.assistant(2).items() if k != "surfaceOp"}),
)
def _assistant_message_appends_by_default(original: Fn) -> Fn:
    """An ``assistant/message`` without ``surfaceOp`` is taken to append (what the model writes always joins the surface)."""

    def _plan(self: SurfaceManager, event: Event, expected_seq: int) -> SurfacePlan:
        if event.type == "assistant/message" and event.surface_op is None:
            event = dataclasses.replace(event, surface_op=APPEND)
        return original(self, event, expected_seq)  # type: ignore[no-any-return]

    return _plan


@fresh_mutant(
    "replace_bounds_must_be_int", "INV-SURF-3", "surface", sl_event, "decode_surface_op",
    p.appends(p.user(0), p.user(1), p.user(2, {"op": "replace", "start": 1.0, "end": 1}, [1])),
)
def _replace_bounds_must_be_int(original: Fn) -> Fn:
    """decode_surface_op wants integer-typed replace bounds: an integral float such as ``1.0``, the same JSON number, fails."""

    def decode_surface_op(raw: object) -> SurfaceOp:
        if isinstance(raw, Mapping) and raw.get("op") == "replace" and any(type(raw.get(k)) is float for k in ("start", "end")):
            raise SeqlogError(Code.SURFACE_OP_INVALID, f"invalid replace surfaceOp {dict(raw)!r}")
        return original(raw)  # type: ignore[no-any-return]

    return decode_surface_op


@fresh_mutant(
    "inverted_end_reported_missing", "INV-SURF-4", "surface", SurfaceManager, "_range",
    p.appends(p.user(0), p.user(1), p.user(2), p.user(3, p.replace(1, 0), [0, 1])),
)
def _inverted_end_reported_missing(original: Fn) -> Fn:
    """A replace's end is looked for only after its start, so an end before the start is reported as not on the surface."""

    def _range(self: SurfaceManager, op: Replace) -> tuple[int, int]:
        try:
            return original(self, op)  # type: ignore[no-any-return]
        except SeqlogError as error:
            if error.code == Code.REPLACE_RANGE_INVERTED:
                raise SeqlogError(Code.REPLACE_END_NOT_ON_SURFACE, f"replace end seq {op.end} is not on the surface") from None
            raise

    return _range


@fresh_mutant(
    "sources_not_earlier_before_duplicate", "INV-SURF-5", "surface", sl_surface, "_check_provenance",
    p.appends(p.user(0), p.user(1, "append", [4, 4])),
)
def _sources_not_earlier_before_duplicate(original: Fn) -> Fn:
    """Provenance is checked for later seqs before duplicates, so a repeated later seq is reported as not earlier."""

    def _check_provenance(event: Event, shadowed: Sequence[int]) -> None:
        late = next((s for s in event.source_event_seqs or () if s >= event.seq), None)
        if late is not None:
            raise SeqlogError(Code.SOURCES_NOT_EARLIER, f"sourceEventSeqs must reference earlier events: {late} >= {event.seq}")
        original(event, shadowed)

    return _check_provenance


@fresh_mutant(
    "shadowed_ends_only_cited", "INV-SURF-6", "surface", sl_surface, "_check_provenance",
    p.appends(p.user(0), p.user(1), p.user(2), p.user(3, p.replace(0, 2), [0, 2])),
)
def _shadowed_ends_only_cited(original: Fn) -> Fn:
    """A replace must cite the two ends of its range only: the shadowed nodes between them may go uncited."""

    def _check_provenance(event: Event, shadowed: Sequence[int]) -> None:
        ends = (shadowed[0], shadowed[-1]) if len(shadowed) > 2 else tuple(shadowed)
        original(event, ends)

    return _check_provenance


@fresh_mutant(
    "replacement_moved_to_tail", "INV-SURF-8", "surface", SurfaceManager, "_apply",
    p.appends(p.user(0), p.user(1), p.user(2), p.user(3, p.replace(0, 0), [0])),
)
def _replacement_moved_to_tail(original: Fn) -> Fn:
    """A replace removes its range and joins the tail, instead of standing where the range stood."""

    def _apply(self: SurfaceManager, plan: SurfacePlan) -> None:
        original(self, plan)
        if plan.replacement is not None:
            nodes = self._nodes
            nodes.remove(plan.seq)
            nodes.append(plan.seq)

    return _apply


@fresh_mutant(
    "rewrite_keeps_generation", "INV-SURF-10", "surface", SurfaceManager, "_apply",
    p.appends(*_rewrite_log()),
)
def _rewrite_keeps_generation(original: Fn) -> Fn:
    """Replacing one ``tool/result`` node is taken as a rewrite, not a compaction, and leaves the replace generation as it was."""

    def _apply(self: SurfaceManager, plan: SurfacePlan) -> None:
        replacement = plan.replacement
        generation = self._generation
        original(self, plan)
        shadowed = replacement.shadowed if replacement is not None else ()
        if len(shadowed) == 1 and self._event_at(shadowed[0]).type == "tool/result":
            self._generation = generation

    return _apply


@fresh_mutant(
    "rewrite_may_change_message_id", "INV-SURF-11", "surface", sl_surface, "_without_result_content",
    p.appends(*_rewrite_log("r-c1-shortened")),
)
def _rewrite_may_change_message_id(original: Fn) -> Fn:
    """A tool-result rewrite is compared without its message id, so the rewrite may give the message a new identity."""

    def _without_result_content(data: Any) -> Any:
        blank = original(data)
        message = blank.get("message") if isinstance(blank, Mapping) else None
        if isinstance(message, Mapping):
            return {**blank, "message": {k: v for k, v in message.items() if k != "id"}}
        return blank

    return _without_result_content


@fresh_mutant(
    "fold_skips_rewrites", "INV-SURF-12", "surface", sl_surface, "fold_surface",
    p.pure("fold_surface", p.tool_result(0, "c1"), p.tool_result(1, "c1", op=p.replace(0, 0), sources=[0])),
)
def _fold_skips_rewrites(original: Fn) -> Fn:
    """fold_surface leaves tool-result rewrites out of the replacements it reports, though it counts them in the generation."""

    def fold_surface(events: Sequence[Event] | Mapping[int, Event]) -> FoldedSurface:
        folded: FoldedSurface = original(events)
        listed = events.values() if isinstance(events, Mapping) else events
        types = {event.seq: event.type for event in listed}
        kept = tuple(r for r in folded.replacements if types.get(r.seq) != "tool/result")
        return FoldedSurface(folded.nodes, folded.replace_generation, kept)

    return fold_surface


# --- INV-TRACE: turns, steps and tool traffic ---------------------------------------------------------


def _naming(event: Event, **members: object) -> Event:
    """``event`` with the given data members replaced."""
    return _with_data(event, {**_data(event), **members})


@fresh_mutant(
    "turn_number_checked_before_open_turn", "INV-TRACE-1", "session", sl_trace, "advance",
    p.appends(p.turn_start(0), p.turn_start(1, turn=3)),
)
def _turn_number_checked_before_open_turn(original: Fn) -> Fn:
    """``turn/start`` checks its number before the open turn, so a misnumbered start inside an open turn is TURN_NUMBER."""

    def advance(state: Brackets, event: Event) -> Brackets:
        turn = as_int(_data(event).get("turn"))
        if event.type == "turn/start" and turn != state.last_turn + 1:
            problem = f"turn/start at seq {event.seq} must start turn {state.last_turn + 1}, got {turn}"
            raise SeqlogError(Code.TURN_NUMBER, problem)
        return original(state, event)  # type: ignore[no-any-return]

    return advance


@fresh_mutant(
    "turn_end_step_open_reported_first", "INV-TRACE-2", "session", sl_trace, "advance",
    p.appends(p.turn_start(0), p.step_start(1), p.turn_end(2, turn=2)),
)
def _turn_end_step_open_reported_first(original: Fn) -> Fn:
    """``turn/end`` looks for an open step before it compares turns: a mismatched end with a step open is STEP_STILL_OPEN."""

    def advance(state: Brackets, event: Event) -> Brackets:
        if event.type == "turn/end" and state.open_step is not None:
            raise SeqlogError(Code.STEP_STILL_OPEN, f"turn/end at seq {event.seq} while step {state.open_step} is still open")
        return original(state, event)  # type: ignore[no-any-return]

    return advance


_TURN_END_KINDS = frozenset({"completed", "aborted", "blocked", "error", "max-tokens", "interrupted"})
"""The ``turn/end`` reason kinds the released vocabulary spells out."""


@fresh_mutant(
    "unknown_turn_end_kind_refused", "INV-TRACE-3", "session", sl_trace, "check_trace_data",
    p.appends(p.turn_start(0), p.turn_end(1, kind="handed-off")),
)
def _unknown_turn_end_kind_refused(original: Fn) -> Fn:
    """A ``turn/end`` reason of a kind outside the released ones is refused, instead of kept as owner-opaque JSON."""

    def check_trace_data(event: Event) -> None:
        original(event)
        reason = _data(event).get("reason") if event.type == "turn/end" else None
        kind = reason.get("kind") if isinstance(reason, Mapping) else None
        if isinstance(kind, str) and kind not in _TURN_END_KINDS:
            raise SeqlogError(Code.TURN_END_REASON_INVALID, f"turn/end at seq {event.seq} has an unknown reason kind {kind!r}")

    return check_trace_data


@fresh_mutant(
    "step_numbers_continue_across_turns", "INV-TRACE-4", "session", sl_trace, "advance",
    p.appends(p.turn_start(0), p.step_start(1), p.step_end(2), p.turn_end(3), p.turn_start(4, turn=2),
              p.step_start(5, turn=2)),
)
def _step_numbers_continue_across_turns(original: Fn) -> Fn:
    """Turn boundaries keep the last step number, so steps are numbered across turns and a new turn's step 1 is refused."""

    def advance(state: Brackets, event: Event) -> Brackets:
        after: Brackets = original(state, event)
        if event.type in ("turn/start", "turn/end"):
            return dataclasses.replace(after, last_step=state.last_step)
        return after

    return advance


@fresh_mutant(
    "step_end_turn_unchecked", "INV-TRACE-5", "session", sl_trace, "advance",
    p.appends(p.turn_start(0), p.step_start(1), p.step_end(2, turn=2)),
)
def _step_end_turn_unchecked(original: Fn) -> Fn:
    """``step/end`` compares only the step number: one naming another turn closes the open step."""

    def advance(state: Brackets, event: Event) -> Brackets:
        if event.type == "step/end" and state.open_turn is not None:
            event = _naming(event, turn=state.open_turn)
        return original(state, event)  # type: ignore[no-any-return]

    return advance


def _result_of_turn(seq: int, turn: int) -> dict[str, Any]:
    result = p.tool_result(seq, "c1")
    result["data"]["turn"] = turn
    return result


@fresh_mutant(
    "tool_result_turn_unchecked", "INV-TRACE-6", "session", sl_trace, "advance",
    p.appends(*_tool_turn(_result_of_turn(5, 2))),
)
def _tool_result_turn_unchecked(original: Fn) -> Fn:
    """An appended ``tool/result`` is checked against the open step only: it may name another turn."""

    def advance(state: Brackets, event: Event) -> Brackets:
        if event.type == "tool/result" and isinstance(event.surface_op, Append) and state.open_turn is not None:
            event = _naming(event, turn=state.open_turn)
        return original(state, event)  # type: ignore[no-any-return]

    return advance


@fresh_mutant(
    "error_results_skip_pairing", "INV-TRACE-8", "session", sl_trace, "advance",
    p.appends(p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]),
              p.tool_result(3, "c1", is_error=True, error_code="E_TOOL")),
)
def _error_results_skip_pairing(original: Fn) -> Fn:
    """Any error ``tool/result`` is excused from pairing with a ``tool/call``, not only the ``TOOL_NOT_STARTED`` repair result."""

    def advance(state: Brackets, event: Event) -> Brackets:
        error = _data(event).get("error") if event.type == "tool/result" else None
        appended = isinstance(event.surface_op, Append)
        if isinstance(error, Mapping) and appended and tool_result_call_id(event) not in state.step_calls:
            event = _naming(event, error={**error, "code": sl_trace.TOOL_NOT_STARTED})
        return original(state, event)  # type: ignore[no-any-return]

    return advance


@fresh_mutant(
    "integral_float_turn_refused", "INV-TRACE-9", "session", sl_trace, "check_trace_data",
    p.appends(p.event("turn/start", 0, {"turn": 1.0})),
)
def _integral_float_turn_refused(original: Fn) -> Fn:
    """Bracket numbers must be integer-typed: ``turn: 1.0``, the same JSON number as 1, is refused."""

    def check_trace_data(event: Event) -> None:
        data = _data(event) if event.type in sl_trace.TRACE_DATA_KEYS else {}
        if any(type(data.get(key)) is float for key in ("turn", "step")):
            raise SeqlogError(Code.TRACE_DATA_INVALID, f"{event.type} at seq {event.seq} data: turn and step must be integers")
        original(event)

    return check_trace_data


# --- INV-REPAIR: crash repair -------------------------------------------------------------------------


@fresh_mutant(
    "unstarted_calls_not_pending", "INV-REPAIR-2", "repair", OpenTail, "observe",
    p.pure("repair", p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"])),
)
def _unstarted_calls_not_pending(original: Fn) -> Fn:
    """Repair counts a call as pending from its ``tool/call`` on, so a call only asked for gets no closing result."""

    def observe(self: OpenTail, event: Event) -> None:
        if event.type != "assistant/message":
            original(self, event)
        else:
            self.length += 1
            self.last_time = event.time
        call_id = _data(event).get("callId") if event.type == "tool/call" else None
        if isinstance(call_id, str) and call_id not in self.pending:
            self.pending[call_id] = PendingCall(call_id, as_int(_data(event).get("step")) or 0, event.seq)

    return observe


@fresh_mutant(
    "step_closed_before_results", "INV-REPAIR-2", "repair", OpenTail, "closers",
    p.pure("repair", *_repairable()),
)
def _step_closed_before_results(original: Fn) -> Fn:
    """Repair closes the open step first and answers the pending calls after it, then ends the turn."""

    def closers(self: OpenTail) -> tuple[Event, ...]:
        if self.turn is None or self.length == 0 or self.step is None:
            return original(self)  # type: ignore[no-any-return]
        seq, time, turn = self.length, self.last_time, self.turn
        out = [Event("step/end", seq, time, FrozenObject({"turn": turn, "step": self.step}))]
        for call in self.pending.values():
            seq += 1
            out.append(sl_repair._interrupted_result(turn, call, seq, time))
        reason = FrozenObject({"kind": "interrupted"})
        out.append(Event("turn/end", seq + 1, time, FrozenObject({"turn": turn, "reason": reason})))
        return tuple(out)

    return closers


@fresh_mutant(
    "outcome_unknown_closer_uncited", "INV-REPAIR-3", "repair", sl_repair, "_interrupted_result",
    p.pure("repair", *_repairable()),
)
def _outcome_unknown_closer_uncited(original: Fn) -> Fn:
    """The closer of a started call reports ``TOOL_OUTCOME_UNKNOWN`` but does not cite the ``tool/call`` that started it."""

    def _interrupted_result(turn: int, call: PendingCall, seq: int, time: int) -> Event:
        closer: Event = original(turn, call, seq, time)
        return dataclasses.replace(closer, source_event_seqs=None)

    return _interrupted_result


@fresh_mutant(
    "closers_timed_at_turn_start", "INV-REPAIR-4", "repair", OpenTail, "observe",
    p.pure("repair", p.turn_start(0), p.user(1), p.step_start(2)),
)
def _closers_timed_at_turn_start(original: Fn) -> Fn:
    """Closers take the time of the open turn's ``turn/start`` instead of the last event's."""

    def observe(self: OpenTail, event: Event) -> None:
        before = self.last_time
        original(self, event)
        if event.type != "turn/start":
            self.last_time = before

    return observe


# --- INV-COMPACT: tool-pairing balance ----------------------------------------------------------------


@fresh_mutant(
    "negative_checked_at_last_cut_only", "INV-COMPACT-1", "compaction", Session, "_check_balance",
    p.pure("cuts", *_shadowed_call_log(), p.step_start(8, step=2), p.assistant(9, ["c2"], step=2)),
)
def _negative_checked_at_last_cut_only(original: Fn) -> Fn:
    """The balance is refused only when the count at the last cut is negative; a surface negative in between gets cuts."""

    def _check_balance(self: Session) -> None:
        if self.pending_calls < 0:
            original(self)

    return _check_balance


def _interrupted_call_log() -> tuple[dict[str, Any], ...]:
    """An interrupted ``assistant/message`` that asked for ``c1``, answered by the exact repair result."""
    interrupted = p.assistant(3, ["c1"])
    interrupted["data"]["interrupted"] = True
    return (p.turn_start(0), p.user(1), p.step_start(2), interrupted, _not_started_result(4, "c1", NOT_STARTED_TEXT))


@fresh_mutant(
    "interrupted_calls_uncounted", "INV-COMPACT-1", "compaction", sl_messages, "pairing_delta",
    p.pure("cuts", *_interrupted_call_log()),
)
def _interrupted_calls_uncounted(original: Fn) -> Fn:
    """The calls of an ``interrupted`` assistant message are not counted (taken as never issued), though results answer them."""

    def pairing_delta(event: Event) -> int:
        if event.type == "assistant/message" and _data(event).get("interrupted") is True:
            return 0
        return original(event)  # type: ignore[no-any-return]

    return pairing_delta


@fresh_mutant(
    "region_split_checked_before_order", "INV-COMPACT-3", "compaction", Session, "compaction_region",
    ({"op": "cuts", "events": list(_tool_turn(p.tool_result(5, "c1"), p.step_end(6))), "region": {"start": 5, "end": 1}},),
)
def _region_split_checked_before_order(original: Fn) -> Fn:
    """A compaction region's cuts are checked before the order of its ends, so an inverted region is refused as a split pair."""

    def compaction_region(self: Session, start: object, end: object) -> tuple[int, ...]:
        nodes = list(self.surface.nodes)
        if start in nodes and end in nodes:
            counts = self._counts
            first, last = nodes.index(start), nodes.index(end)
            if counts[first] != 0 or counts[last + 1] != 0:
                raise SeqlogError(Code.REPLACE_SPLITS_TOOL_PAIR, f"compaction region {start!r}..{end!r} splits a tool pair")
        return original(self, start, end)  # type: ignore[no-any-return]

    return compaction_region


@fresh_mutant(
    "region_shadows_up_to_end", "INV-COMPACT-3", "compaction", Session, "compaction_region",
    ({"op": "cuts", "events": list(_tool_turn(p.tool_result(5, "c1"), p.step_end(6))), "region": {"start": 1, "end": 5}},),
)
def _region_shadows_up_to_end(original: Fn) -> Fn:
    """A compaction region is checked as ``start..end`` but shadows the nodes up to, not including, its end."""

    def compaction_region(self: Session, start: object, end: object) -> tuple[int, ...]:
        shadowed: tuple[int, ...] = original(self, start, end)
        return shadowed[:-1]

    return compaction_region


@fresh_mutant(
    "rewrite_answers_nothing_in_balance", "INV-COMPACT-6", "compaction", sl_messages, "pairing_delta",
    p.pure("cuts", *_rewrite_log()),
)
def _rewrite_answers_nothing_in_balance(original: Fn) -> Fn:
    """A tool-result rewrite counts 0 in the balance (it answers nothing new), yet takes back the −1 of the result it shadows."""

    def pairing_delta(event: Event) -> int:
        if event.type == "tool/result" and isinstance(event.surface_op, Replace):
            return 0
        return original(event)  # type: ignore[no-any-return]

    return pairing_delta


# --- INV-REL: tool lifecycles -------------------------------------------------------------------------


def _answered_in_step(log: Sequence[Event], call_id: object) -> bool:
    """Whether an appended ``tool/result`` of the open step (back to its ``step/start``) answered ``call_id``."""
    for event in reversed(log):
        if event.type == "step/start":
            return False
        if event.type == "tool/result" and isinstance(event.surface_op, Append) and tool_result_call_id(event) == call_id:
            return True
    return False


@fresh_mutant(
    "tool_call_name_unchecked", "INV-REL-1", "session", Relations, "plan",
    p.appends(p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]),
              p.event("tool/call", 3, {"turn": 1, "step": 1, "callId": "c1", "name": "write_file", "arguments": "{}"})),
)
def _tool_call_name_unchecked(original: Fn) -> Fn:
    """A ``tool/call`` is matched to its advertised call by id and arguments: it may run a tool of another name."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        if event.type == "tool/call":
            advertised = self._tools.get(_member(_data(event), "callId"))
            if advertised is not None and isinstance(advertised[0], str):
                event = _naming(event, name=advertised[0])
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return plan


@fresh_mutant(
    "started_call_may_start_again", "INV-REL-1", "session", Relations, "plan",
    p.appends(p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]), p.tool_call(3, "c1"), p.tool_call(4, "c1")),
)
def _started_call_may_start_again(original: Fn) -> Fn:
    """A ``tool/call`` checks that its call was advertised but not that it is still unstarted: a call may be started twice."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        call = _member(_data(event), "callId") if event.type == "tool/call" else None
        advertised = self._tools.get(call) if call is not None else None
        if advertised is None or not advertised[2]:
            return original(self, event, log, surface)  # type: ignore[no-any-return]
        self._tools[call] = (advertised[0], advertised[1], False)
        try:
            return original(self, event, log, surface)  # type: ignore[no-any-return]
        finally:
            self._tools[call] = advertised

    return plan


@fresh_mutant(
    "answered_call_id_not_readvertisable", "INV-REL-2", "session", Relations, "plan",
    p.appends(p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]), p.tool_call(3, "c1"), p.tool_result(4, "c1"),
              p.assistant(5, ["c1"])),
)
def _answered_call_id_not_readvertisable(original: Fn) -> Fn:
    """An ``assistant/message`` may not advertise a call id answered earlier in the step, though that id is no longer pending."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        for call_id in tool_call_ids(event):
            if _answered_in_step(log, call_id):
                problem = f"assistant/message at seq {event.seq} advertises {call_id!r} again"
                raise SeqlogError(Code.TOOL_CALL_ID_REPEATED, problem)
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return plan


@fresh_mutant(
    "answered_call_answered_again", "INV-REL-3", "session", Relations, "plan",
    p.appends(*_tool_turn(p.tool_result(5, "c1"), p.tool_result(6, "c1", is_error=True, error_code="TOOL_NOT_STARTED"))),
)
def _answered_call_answered_again(original: Fn) -> Fn:
    """An appended ``tool/result`` for a call already answered in the step is taken as a repeat of that answer and accepted."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        if event.type == "tool/result" and isinstance(event.surface_op, Append):
            call_id = tool_result_call_id(event)
            if self._tools.get(call_id) is None and _answered_in_step(log, call_id):
                return None
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return plan


@fresh_mutant(
    "not_started_text_unchecked", "INV-REL-4", "session", sl_relations, "is_exact_not_started_result",
    p.appends(p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]), _not_started_result(3, "c1", "The call never ran.")),
)
def _not_started_text_unchecked(original: Fn) -> Fn:
    """The exact repair result for a call that never started is recognised by its error, id and flag; its text is not compared."""

    def is_exact_not_started_result(event: Event, data: Mapping[str, Any]) -> bool:
        plain = thaw(data)
        try:
            plain["message"]["content"][0]["content"] = [{"type": "text", "text": NOT_STARTED_TEXT}]
        except (KeyError, IndexError, TypeError):
            return original(event, data)  # type: ignore[no-any-return]
        return original(event, freeze(plain))  # type: ignore[no-any-return]

    return is_exact_not_started_result


# --- INV-REL: compactions -----------------------------------------------------------------------------


@fresh_mutant(
    "failed_compaction_keeps_lock", "INV-REL-6", "session", Relations, "plan",
    p.appends(_compaction_start(0), _compaction_end(1, error="summariser failed"), _compaction_start(2, "k2")),
)
def _failed_compaction_keeps_lock(original: Fn) -> Fn:
    """A ``compaction/end`` reporting an error does not release the compaction, so the next ``compaction/start`` overlaps it."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        commit: Commit | None = original(self, event, log, surface)
        if event.type == "compaction/end" and "error" in _data(event):
            return None
        return commit

    return plan


@fresh_mutant(
    "null_owner_matches_any_turn", "INV-REL-7", "session", Relations, "_check_in_turn",
    p.appends(p.turn_start(0), _compaction_start(1)),
)
def _null_owner_matches_any_turn(original: Fn) -> Fn:
    """A compaction owned by ``turn: null`` is taken as belonging to no turn in particular, so it may act inside one."""

    def _check_in_turn(self: Relations, event: Event, owner: object) -> None:
        if owner is not None:
            original(self, event, owner)

    return _check_in_turn


@fresh_mutant(
    "absent_command_id_matches_any", "INV-REL-8", "session", Relations, "_check_owner",
    p.appends(p.user(0), _compaction_start(1, sourceCommandId="cmd-1"), _summary(2, 0, 0, [0])),
)
def _absent_command_id_matches_any(original: Fn) -> Fn:
    """``sourceCommandId`` is compared only when the event names one: a summary without it is owned by a command's compaction."""

    def _check_owner(self: Relations, event: Event, named: Mapping[str, Any] | None) -> Any:
        compaction = self._compaction
        if compaction is not None and named is not None and "sourceCommandId" not in named:
            named = {**named, "sourceCommandId": compaction.command} if isinstance(compaction.command, str) else named
        return original(self, event, named)

    return _check_owner


@fresh_mutant(
    "empty_error_end_needs_summary", "INV-REL-10", "session", Relations, "plan",
    p.appends(_compaction_start(0), _compaction_end(1, error="")),
)
def _empty_error_end_needs_summary(original: Fn) -> Fn:
    """A ``compaction/end`` counts as failed only when its ``error`` is non-empty: ``error: ""`` still needs a summary."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        commit: Commit | None = original(self, event, log, surface)
        compaction = self._compaction
        blank = event.type == "compaction/end" and _data(event).get("error") == ""
        if blank and compaction is not None and not compaction.summarized:
            problem = f"compaction/end at seq {event.seq} reports success without a summary"
            raise SeqlogError(Code.COMPACTION_SUMMARY_MISSING, problem)
        return commit

    return plan


@fresh_mutant(
    "overlap_reported_before_crossing", "INV-REL-11", "session", Relations, "plan",
    p.appends(_compaction_start(0), p.turn_start(1), _compaction_start(2, "k2", turn=1)),
)
def _overlap_reported_before_crossing(original: Fn) -> Fn:
    """A ``compaction/start`` while one is open is an overlap, even when a turn boundary already crossed the open one."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        if event.type == "compaction/start" and self._compaction is not None:
            problem = f"compaction/start at seq {event.seq} opens while another compaction is open"
            raise SeqlogError(Code.COMPACTION_OVERLAP, problem)
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return plan


@fresh_mutant(
    "crossing_refused_at_once", "INV-REL-11", "session", Relations, "plan",
    ({"op": "reset"}, {"op": "seed", "events": [_compaction_start(0), p.turn_start(1)]}, {"op": "state"}),
)
def _crossing_refused_at_once(original: Fn) -> Fn:
    """A turn boundary while a compaction is open is refused on the spot, not held until an end-seed may retire the compaction."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        if event.type in ("turn/start", "turn/end") and self._compaction is not None:
            raise SeqlogError(Code.COMPACTION_CROSSES_TURN, f"{event.type} at seq {event.seq} crosses an open compaction")
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return plan


@fresh_mutant(
    "span_end_exclusive", "INV-REL-12", "session", Relations, "_check_span",
    p.appends(p.user(0), p.user(1), p.event("compaction/prune", 2, _span(0, 1, [0, 1]))),
)
def _span_end_exclusive(original: Fn) -> Fn:
    """The span a summary or prune names is read off the surface up to, not including, ``shadowedRange.end``."""

    def _check_span(event: Event, data: Mapping[str, Any], surface: SurfaceManager) -> None:
        bounds = data.get("shadowedRange")
        nodes = tuple(surface.nodes)
        first = _position(nodes, bounds.get("start") if isinstance(bounds, Mapping) else None)
        last = _position(nodes, bounds.get("end") if isinstance(bounds, Mapping) else None)
        span = nodes[first:last] if 0 <= first <= last else ()
        named = data.get("shadowedSeqs")
        if not isinstance(named, Sequence) or list(named) != list(span):
            problem = f"{event.type} at seq {event.seq} shadowedSeqs are not an exact span"
            raise SeqlogError(Code.COMPACTION_SPAN_NOT_ON_SURFACE, problem)

    return _check_span


# --- INV-REL: retries ---------------------------------------------------------------------------------


def _chain(data: Mapping[str, Any]) -> tuple[object, object, object, object]:
    return (_member(data, "turn"), _member(data, "step"), _member(data, "provider"), _member(data, "policyKey"))


@fresh_mutant(
    "retry_turn_unchecked", "INV-REL-13", "session", Relations, "plan",
    p.appends(*_in_step(_retry(3, "r1", 1, turn=2))),
)
def _retry_turn_unchecked(original: Fn) -> Fn:
    """An ``llm/retry`` is checked against the current step number only: it may name another turn."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        if event.type == "llm/retry" and self._open_turn is not None:
            event = _naming(event, turn=self._open_turn)
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return plan


@fresh_mutant(
    "retry_before_any_header_accepted", "INV-REL-14", "session", Relations, "plan",
    p.appends(p.turn_start(0), p.step_start(1), _retry(2, "r1", 1)),
)
def _retry_before_any_header_accepted(original: Fn) -> Fn:
    """An ``llm/retry`` before any ``request/header`` has no provider to compare with, and any provider passes."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        if event.type != "llm/retry" or self._provider is not sl_relations._ABSENT:
            return original(self, event, log, surface)  # type: ignore[no-any-return]
        self._provider = _member(_data(event), "provider")
        try:
            return original(self, event, log, surface)  # type: ignore[no-any-return]
        finally:
            self._provider = sl_relations._ABSENT

    return plan


@fresh_mutant(
    "retry_chain_ignores_policy_key", "INV-REL-15", "session", Relations, "plan",
    p.appends(*_in_step(_retry(3, "r1", 1, policy="rate-limit"), _retry(4, "r2", 1, policy="server-error"))),
)
def _retry_chain_ignores_policy_key(original: Fn) -> Fn:
    """Retry chains are keyed by turn, step and provider only: a second policy's first attempt is refused as a skipped number."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        if event.type == "llm/retry":
            event = _naming(event, policyKey="*")
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return plan


@fresh_mutant(
    "retry_id_checked_before_number", "INV-REL-16", "session", Relations, "plan",
    p.appends(*_in_step(_retry(3, "r1", 1), _retry(4, "r2", 3))),
)
def _retry_id_checked_before_number(original: Fn) -> Fn:
    """A retry's ``retryId`` is compared with its chain's before its attempt number: with both wrong, the id is reported."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        if event.type == "llm/retry":
            data = _data(event)
            prior = self._chains.get(_chain(data))
            if prior is not None and prior[0] != _member(data, "retryId"):
                raise SeqlogError(Code.RETRY_ID_INVALID, f"llm/retry at seq {event.seq} changes the retryId of its policy chain")
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return plan


@fresh_mutant(
    "retry_start_matched_by_id_only", "INV-REL-17", "session", Relations, "plan",
    p.appends(*_in_step(_retry(3, "r1", 1), _retry_started(4, "r1", 2))),
)
def _retry_start_matched_by_id_only(original: Fn) -> Fn:
    """An ``llm/retry-started`` is paired with its schedule by ``retryId`` alone: it may start an attempt never scheduled."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        if event.type == "llm/retry-started":
            data = _data(event)
            retry_id = _member(data, "retryId")
            if (retry_id, _member(data, "retry")) not in self._scheduled:
                attempts = [attempt for scheduled, attempt in self._scheduled if scheduled == retry_id]
                if attempts:
                    event = _naming(event, retry=attempts[-1])
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return plan


# --- INV-REL: programmatic calls, commands, titles, delivery markers ---------------------------------


@fresh_mutant(
    "nested_dispatch_refused", "INV-REL-20", "session", Relations, "plan",
    p.appends(p.turn_start(0), _dispatch("tool/code-dispatch-start", 1, "s1"),
              _dispatch("tool/code-dispatch-start", 2, "s2", parent="s1")),
)
def _nested_dispatch_refused(original: Fn) -> Fn:
    """A PTC dispatch's ``parentCallId`` must be its root: a sub-call started under another sub-call of that root is refused."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        data = _data(event)
        if event.type.startswith("tool/code-dispatch") and _member(data, "parentCallId") != _member(data, "rootCallId"):
            raise SeqlogError(Code.PTC_ANCESTRY_INVALID, f"{event.type} at seq {event.seq} parentCallId is not its root")
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return plan


@fresh_mutant(
    "settle_name_unchecked", "INV-REL-22", "session", Relations, "plan",
    p.appends(p.turn_start(0), _dispatch("tool/code-dispatch-start", 1, "s1", name="read"),
              _dispatch("tool/code-dispatch", 2, "s1", name="write")),
)
def _settle_name_unchecked(original: Fn) -> Fn:
    """A PTC settlement is matched to its start by root, parent and arguments: it may report another tool name."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        if event.type == "tool/code-dispatch":
            started = self._dispatches.get(_member(_data(event), "subCallId"))
            if started is not None and isinstance(started.name, str):
                event = _naming(event, name=started.name)
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return plan


def _run_before_latest_turn(log: Sequence[Event], command_id: object) -> bool:
    """Whether the latest ``command/run`` of ``command_id`` came before the latest ``turn/start``."""
    turn_start = max((e.seq for e in log if e.type == "turn/start"), default=-1)
    runs = [e.seq for e in log if e.type == "command/run" and _data(e).get("commandId") == command_id]
    return bool(runs) and runs[-1] < turn_start


@fresh_mutant(
    "command_ids_reset_each_turn", "INV-REL-23", "session", Relations, "plan",
    p.appends(p.turn_start(0), _command_run(1), p.turn_end(2), p.turn_start(3, turn=2), _command_run(4)),
)
def _command_ids_reset_each_turn(original: Fn) -> Fn:
    """Command ids are taken as unique within a turn: a ``command/run`` may reuse the id of a run from an earlier turn."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        if event.type == "command/run" and _run_before_latest_turn(log, _data(event).get("commandId")):
            return None
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return plan


@fresh_mutant(
    "error_done_may_cite", "INV-REL-25", "session", Relations, "plan",
    p.appends(p.user(0), _command_run(1),
              p.event("command/done", 2, {"commandId": "cmd-1", "kind": "error", "sourceEventSeq": 0})),
)
def _error_done_may_cite(original: Fn) -> Fn:
    """``command/done`` refuses a ``sourceEventSeq`` citing a command event, but not one on a done of kind ``error``."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        data = _data(event)
        if event.type == "command/done" and data.get("kind") == "error" and "sourceEventSeq" in data:
            cited = as_int(data["sourceEventSeq"])
            if cited is not None and 0 <= cited < len(log) and log[cited].type not in ("command/run", "command/done"):
                event = _with_data(event, {k: v for k, v in data.items() if k != "sourceEventSeq"})
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return plan


@fresh_mutant(
    "typed_title_may_cite", "INV-REL-26", "session", Relations, "plan",
    p.appends(p.user(0), p.event("session/title", 1, {"title": "Greeting", "messageSeqs": [0], "source": {"kind": "user"}})),
)
def _typed_title_may_cite(original: Fn) -> Fn:
    """Only a generated title is held to its citations: a title the user typed may cite messages too."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        data = _data(event)
        source = data.get("source")
        if event.type == "session/title" and isinstance(source, Mapping) and source.get("kind") == "user":
            sl_relations._human_messages(event, data, log)
            return None
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return plan


@fresh_mutant(
    "title_text_blocks_joined_by_space", "INV-REL-28", "session", sl_relations, "message_text",
    p.appends(_two_line_user(0), _title_request(1, [(0, "first\nsecond")])),
)
def _title_text_blocks_joined_by_space(original: Fn) -> Fn:
    """The title frame joins a message's text blocks with a space instead of a newline."""

    def message_text(payload: Mapping[str, Any] | None) -> str:
        content = payload.get("content") if payload is not None else None
        blocks = content if isinstance(content, tuple | list) else ()
        return " ".join(
            b["text"] for b in blocks if isinstance(b, Mapping) and b.get("type") == "text" and type(b.get("text")) is str
        )

    return message_text


_FORK_HEADER = '{"type":"session","version":1,"id":"s","createdAt":0,"delegationDepth":0,"seedLength":3}'
_FOREIGN_MARKER = p.event(sl_relations.DELIVERY_MARKER, 1, {"sessionId": "other", "throughSeq": 0, "sessionFormatVersion": 1})


@fresh_mutant(
    "inherited_marker_needs_no_parent", "INV-REL-29", "jsonl", sl_relations, "_check_marker",
    p.load(_FORK_HEADER, p.line(p.turn_start(0)), p.line(_FOREIGN_MARKER), p.line(p.turn_end(2))),
)
def _inherited_marker_needs_no_parent(original: Fn) -> Fn:
    """A delivery marker inside ``seedLength`` is taken as inherited even when the header names no parent session."""

    def _check_marker(identity: LogIdentity, event: Event, data: Mapping[str, Any]) -> None:
        if event.seq >= identity.seed_length:
            original(identity, event, data)

    return _check_marker
