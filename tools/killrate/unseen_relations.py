"""The fourth half of the catalogue, relations: surface, trace, repair, tool-pairing balance and the
relationships between events (INV-SURF, INV-TRACE, INV-REPAIR, INV-COMPACT, INV-REL).

Written from the invariant list (``invariants.md``), the protocol, the reference model and seqlog's
source alone, without reading the conformance suite or its tests.  Each mutant is one decision a
port's author could get wrong while reading the same rules: an exception applied to every type, a
bound checked as an integer and not a count, two refusals checked in the other order, a member left
out of a comparison, state forgotten one boundary too early, a frame serialised another way.

The relationship rules are dispatched through a table of :class:`seqlog.relations.Relations`
methods, so most of their mutants wrap :meth:`Relations.plan` and change the one decision for the
event type concerned; module helpers the rules call are replaced directly.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

import seqlog.event as sl_event
import seqlog.messages as sl_messages
import seqlog.relations as sl_relations
import seqlog.repair as sl_repair
import seqlog.surface as sl_surface
import seqlog.trace as sl_trace
from killrate import probes as p
from killrate.mutants import Fn, _data, _with_data, unseen_mutant
from seqlog.errors import Code, SeqlogError
from seqlog.event import Append, Event, Replace, SurfaceOp
from seqlog.jsonvalue import as_int, freeze, json_equal, thaw
from seqlog.relations import _ABSENT, Commit, LogIdentity, Relations, _Dispatch, _member, _refuse
from seqlog.repair import NOT_STARTED_TEXT, OpenTail, PendingCall
from seqlog.session import Session
from seqlog.surface import SurfaceManager

T = p.T
TITLE_PLUGIN = "dsh-session-title-llm"


# --- probe events -------------------------------------------------------------------------------------


def _step_open(*more: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """Turn 1 with step 1 open and a request header in force, then ``more``."""
    return (p.turn_start(0), p.step_start(1), p.header_event(2, p.HEADER), *more)


def _answered(*more: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """Turn 1, a user message, step 1 in which ``c1`` was asked for, started and answered (seq 5), then ``more``."""
    return (p.turn_start(0), p.user(1), p.step_start(2), p.assistant(3, ["c1"]), p.tool_call(4, "c1"),
            p.tool_result(5, "c1"), *more)


def _retry(seq: int, retry_id: str, attempt: int, *, turn: int = 1, step: int = 1) -> dict[str, Any]:
    data = {"retryId": retry_id, "turn": turn, "step": step, "provider": "p", "policyKey": "default", "retry": attempt,
            "delayMs": 0, "failure": {"message": "overloaded", "code": "OVERLOADED"}, "mode": "always"}
    return p.event("llm/retry", seq, data)


def _retry_started(seq: int, retry_id: str, attempt: int, *, step: int = 1) -> dict[str, Any]:
    return p.event("llm/retry-started", seq, {"retryId": retry_id, "turn": 1, "step": step, "retry": attempt})


def _compaction(type_: str, seq: int, compaction_id: str = "k1", turn: int | None = None, **more: Any) -> dict[str, Any]:
    return p.event(type_, seq, {"compactionId": compaction_id, "turn": turn, **more})


def _span(start: int, end: int, shadowed: Sequence[int]) -> dict[str, Any]:
    return {"shadowedRange": {"start": start, "end": end}, "shadowedSeqs": list(shadowed), "shadowedTokenCount": 1}


def _summary(seq: int, start: int, end: int, shadowed: Sequence[int]) -> dict[str, Any]:
    data = {"compactionId": "k1", "summary": [{"type": "text", "text": "so far"}], **_span(start, end, shadowed),
            "provider": "p", "model": "m"}
    return p.event("compaction/summary", seq, data)


def _dispatch(type_: str, seq: int, sub: str, *, root: str = "root", parent: str = "root") -> dict[str, Any]:
    data: dict[str, Any] = {"rootCallId": root, "parentCallId": parent, "subCallId": sub, "name": "run", "arguments": {}}
    if type_ == "tool/code-dispatch":
        data |= {"isError": False, "content": []}
    return p.event(type_, seq, data)


def _user_from(seq: int, source: dict[str, Any], text: str = "hi", op: Any = "append") -> dict[str, Any]:
    event = p.user(seq, op)
    event["data"]["source"] = source
    event["data"]["content"] = [{"type": "text", "text": text}]
    return event


def _title_request(seq: int, cited: Sequence[tuple[int, str]]) -> dict[str, Any]:
    frame = sl_relations.title_frame(cited)
    message = {"id": "title-0", "role": "user", "content": [{"type": "text", "text": frame}],
               "source": {"kind": "plugin", "plugin": TITLE_PLUGIN}}
    data = {"titleProvider": "p", "messageSeqs": [seq for seq, _ in cited], "route": {"provider": "p", "model": "m"},
            "system": "", "messages": [message], "maxTokens": 16}
    return p.event("session/title-llm-request", seq, data)


def _not_started_result(seq: int, call_id: str, **envelope: Any) -> dict[str, Any]:
    """The exact crash-repair result for ``call_id``, with ``envelope`` members added."""
    block = {"type": "tool-result", "toolCallId": call_id, "isError": True,
             "content": [{"type": "text", "text": NOT_STARTED_TEXT}]}
    message = {"id": f"interrupted-tool-result-{call_id}-{seq}", "role": "user", "source": {"kind": "tool", "callId": call_id},
               "content": [block]}
    error = {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}
    return p.event("tool/result", seq, {"turn": 1, "step": 1, "message": message, "error": error}, surfaceOp="append",
                   **envelope)


def _cuts(events: Sequence[dict[str, Any]], **more: Any) -> p.Probe:
    return ({"op": "cuts", "events": list(events), **more},)


_ONE_CALL = (p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]), p.tool_call(3, "c1"), p.tool_result(4, "c1"))


# --- INV-SURF: the surface ----------------------------------------------------------------------------


@unseen_mutant(
    "rewrite_needs_no_provenance", "INV-SURF-6", "surface", sl_surface, "_check_provenance",
    p.appends(*_answered(p.tool_result(6, "c1", op=p.replace(5, 5)))),
)
def _rewrite_needs_no_provenance(original: Fn) -> Fn:
    """A tool-result rewrite restates the result it replaces, so it is not held to cite the node it shadows."""

    def _check_provenance(event: Event, shadowed: Sequence[int]) -> None:
        if event.type == "tool/result" and isinstance(event.surface_op, Replace):
            shadowed = ()
        original(event, shadowed)

    return _check_provenance


@unseen_mutant(
    "negative_replace_bound_reaches_surface", "INV-SURF-3", "surface", sl_event, "decode_surface_op",
    p.appends(p.user(0), p.user(1, {"op": "replace", "start": -1, "end": 0}, [0])),
)
def _negative_replace_bound_reaches_surface(original: Fn) -> Fn:
    """decode_surface_op reads replace bounds as integers, not counts: a negative bound is looked for on the surface."""

    def decode_surface_op(raw: object) -> SurfaceOp:
        if isinstance(raw, Mapping) and raw.get("op") == "replace" and len(raw) == 3:
            start, end = raw.get("start"), raw.get("end")
            if type(start) is int and type(end) is int and min(start, end) < 0:
                return Replace(start, end)
        return original(raw)  # type: ignore[no-any-return]

    return decode_surface_op


@unseen_mutant(
    "replace_end_checked_before_start", "INV-SURF-4", "surface", SurfaceManager, "_range",
    p.appends(p.user(0), p.user(1, p.replace(5, 7), [0])),
)
def _replace_end_checked_before_start(original: Fn) -> Fn:
    """A replace's end is looked up before its start: a range with both ends off the surface is reported for its end."""

    def _range(self: SurfaceManager, op: Replace) -> tuple[int, int]:
        if op.end not in self._nodes:
            raise SeqlogError(Code.REPLACE_END_NOT_ON_SURFACE, f"replace end seq {op.end} is not on the surface")
        return original(self, op)  # type: ignore[no-any-return]

    return _range


@unseen_mutant(
    "empty_sources_allowed_on_user_message", "INV-SURF-5", "surface", sl_surface, "_check_provenance",
    p.appends(p.user(0, sources=[])),
)
def _empty_sources_allowed_on_user_message(original: Fn) -> Fn:
    """The known-empty-stream exception is applied to every surface type: an empty ``sourceEventSeqs`` passes anywhere."""

    def _check_provenance(event: Event, shadowed: Sequence[int]) -> None:
        if event.source_event_seqs == ():
            event = dataclasses.replace(event, source_event_seqs=None)
        original(event, shadowed)

    return _check_provenance


@unseen_mutant(
    "append_sources_may_repeat", "INV-SURF-5", "surface", sl_surface, "_check_provenance",
    p.appends(p.user(0), p.user(1, sources=[0, 0])),
)
def _append_sources_may_repeat(original: Fn) -> Fn:
    """Provenance is checked for repeats only on a replace (where it is matched against the shadowed nodes), not on an append."""

    def _check_provenance(event: Event, shadowed: Sequence[int]) -> None:
        sources = event.source_event_seqs
        if not shadowed and sources:
            event = dataclasses.replace(event, source_event_seqs=tuple(dict.fromkeys(sources)))
        original(event, shadowed)

    return _check_provenance


def _rewrite_with_error() -> dict[str, Any]:
    return p.tool_result(6, "c1", op=p.replace(5, 5), sources=[5], error_code="E_TRUNCATED")


@unseen_mutant(
    "rewrite_may_add_error", "INV-SURF-11", "surface", sl_surface, "_without_result_content",
    p.appends(*_answered(_rewrite_with_error())),
)
def _rewrite_may_add_error(original: Fn) -> Fn:
    """A tool-result rewrite is compared on its message only: it may add, drop or change the result's ``error``."""

    def _without_result_content(data: Any) -> Any:
        blank = original(data)
        if isinstance(blank, Mapping):
            return {k: v for k, v in blank.items() if k != "error"}
        return blank

    return _without_result_content


@unseen_mutant(
    "rewrite_target_type_unchecked", "INV-SURF-11", "surface", sl_surface, "_check_rewrite",
    p.appends(p.turn_start(0), p.user(1), p.tool_result(2, "c1", op=p.replace(1, 1), sources=[1])),
)
def _rewrite_target_type_unchecked(original: Fn) -> Fn:
    """A tool-result rewrite's target is compared with it but its type is not checked: a rewrite of a user message is a change."""

    def _check_rewrite(event: Event, target: Event, span: int) -> None:
        if span == 1 and target.type != "tool/result":
            if not json_equal(sl_surface._without_result_content(target.data), sl_surface._without_result_content(event.data)):
                raise SeqlogError(Code.TOOL_REWRITE_CHANGES, f"tool/result replace at seq {event.seq} may change only content")
            return
        original(event, target, span)

    return _check_rewrite


@unseen_mutant(
    "single_node_replace_refused", "INV-SURF-4", "surface", SurfaceManager, "_range",
    p.appends(p.user(0), p.user(1), p.user(2, p.replace(0, 0), [0])),
)
def _single_node_replace_refused(original: Fn) -> Fn:
    """A replace's start must come before its end: a range of one node (``start == end``) is refused as inverted."""

    def _range(self: SurfaceManager, op: Replace) -> tuple[int, int]:
        start_index, end_index = original(self, op)
        if start_index == end_index:
            raise SeqlogError(Code.REPLACE_RANGE_INVERTED, f"replace start seq {op.start} is not before end seq {op.end}")
        return start_index, end_index

    return _range


# --- INV-TRACE: turns, steps and tool traffic ---------------------------------------------------------


@unseen_mutant(
    "repeated_turn_end_accepted", "INV-TRACE-2", "session", sl_trace, "advance",
    p.appends(p.turn_start(0), p.turn_end(1), p.turn_end(2)),
)
def _repeated_turn_end_accepted(original: Fn) -> Fn:
    """A ``turn/end`` of the turn that just ended is taken as a harmless repeat, not refused as naming no open turn."""

    def advance(state: Any, event: Event) -> Any:
        if event.type == "turn/end" and state.open_turn is None and as_int(_data(event).get("turn")) == state.last_turn > 0:
            return state
        return original(state, event)

    return advance


@unseen_mutant(
    "empty_hook_reason_refused", "INV-TRACE-3", "session", sl_trace, "check_trace_data",
    p.appends(p.turn_start(0), p.event("turn/end", 1, {"turn": 1, "reason": {"kind": "aborted", "reason": {"kind": "hook",
                                                                                                       "reason": ""}}})),
)
def _empty_hook_reason_refused(original: Fn) -> Fn:
    """An abort by a hook must give a non-empty ``reason``: a hook that aborted with an empty string is refused."""

    def check_trace_data(event: Event) -> None:
        reason = _data(event).get("reason") if event.type == "turn/end" else None
        cause = reason.get("reason") if isinstance(reason, Mapping) and reason.get("kind") == "aborted" else None
        if isinstance(cause, Mapping) and cause.get("kind") == "hook" and cause.get("reason") == "":
            raise SeqlogError(Code.TURN_END_REASON_INVALID, f"turn/end at seq {event.seq} data: $.reason.reason.reason is empty")
        original(event)

    return check_trace_data


@unseen_mutant(
    "step_start_turn_unchecked", "INV-TRACE-4", "session", sl_trace, "advance",
    p.appends(p.turn_start(0), p.step_start(1, turn=2)),
)
def _step_start_turn_unchecked(original: Fn) -> Fn:
    """``step/start`` needs an open turn but is not checked to name it: a step naming another turn opens in the open one."""

    def advance(state: Any, event: Event) -> Any:
        if event.type == "step/start" and state.open_turn is not None:
            event = _with_data(event, {**thaw(_data(event)), "turn": state.open_turn})
        return original(state, event)

    return advance


@unseen_mutant(
    "step_number_checked_before_open_step", "INV-TRACE-4", "session", sl_trace, "advance",
    p.appends(p.turn_start(0), p.step_start(1), p.step_start(2, step=5)),
)
def _step_number_checked_before_open_step(original: Fn) -> Fn:
    """``step/start`` checks its number before the open step: a misnumbered start inside an open step is STEP_NUMBER."""

    def advance(state: Any, event: Event) -> Any:
        if event.type == "step/start" and state.open_turn is not None and state.open_step is not None:
            step = as_int(_data(event).get("step"))
            if as_int(_data(event).get("turn")) == state.open_turn and step != state.last_step + 1:
                raise SeqlogError(Code.STEP_NUMBER, f"step/start at seq {event.seq} must start step {state.last_step + 1}")
        return original(state, event)

    return advance


@unseen_mutant(
    "header_outside_step_refused", "INV-TRACE-7", "session", sl_trace, "advance",
    p.appends(p.turn_start(0), p.header_event(1, p.HEADER)),
)
def _header_outside_step_refused(original: Fn) -> Fn:
    """A ``request/header`` is taken as step-scoped (it precedes a model call): one between the steps of a turn is refused."""

    def advance(state: Any, event: Event) -> Any:
        if event.type == "request/header" and state.open_turn is not None and state.open_step is None:
            raise SeqlogError(Code.EVENT_OUTSIDE_STEP, f"request/header at seq {event.seq} is outside any open step")
        return original(state, event)

    return advance


def _misnamed_not_started(seq: int) -> dict[str, Any]:
    event = p.tool_result(seq, "c1", is_error=True, error_code="E")
    event["data"]["error"] = {"name": "ToolNotStartedError", "code": "E_CANCELLED"}
    return event


@unseen_mutant(
    "not_started_exemption_by_error_name", "INV-TRACE-8", "session", sl_trace, "advance",
    p.appends(p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]), _misnamed_not_started(3)),
)
def _not_started_exemption_by_error_name(original: Fn) -> Fn:
    """The trace knows the never-started result by its error name, not its code: any ``ToolNotStartedError`` needs no call."""

    def advance(state: Any, event: Event) -> Any:
        if event.type == "tool/result" and isinstance(event.surface_op, Append):
            error = _data(event).get("error")
            name = error.get("name") if isinstance(error, Mapping) else None
            call_id = sl_messages.tool_result_call_id(event)
            placed = (as_int(_data(event).get("turn")), as_int(_data(event).get("step"))) == (state.open_turn, state.open_step)
            if call_id not in state.step_calls and state.open_step is not None and placed:
                if name == "ToolNotStartedError":
                    return state
                if sl_messages.tool_result_error_code(event) == sl_trace.TOOL_NOT_STARTED:
                    raise SeqlogError(Code.TOOL_RESULT_UNPAIRED, f"tool/result at seq {event.seq} answers no tool/call")
        return original(state, event)

    return advance


@unseen_mutant(
    "negative_turn_judged_by_trace", "INV-TRACE-9", "session", sl_trace, "check_trace_data",
    p.appends(p.turn_start(0, turn=-1)),
)
def _negative_turn_judged_by_trace(original: Fn) -> Fn:
    """Bracket numbers are read as integers, not counts: a negative turn passes the payload check and is misnumbered."""

    def check_trace_data(event: Event) -> None:
        data = _data(event)
        negative = {k: 1 for k in ("turn", "step") if type(data.get(k)) is int and data[k] < 0}
        if negative:
            event = _with_data(event, {**thaw(data), **negative})
        original(event)

    return check_trace_data


# --- INV-REPAIR: crash repair -------------------------------------------------------------------------

_OPEN_CALLS = (p.turn_start(0), p.step_start(1), p.assistant(2, ["c1", "c2"]), p.tool_call(3, "c1"))


@unseen_mutant(
    "closer_turn_end_aborted", "INV-REPAIR-2", "repair", OpenTail, "closers",
    p.pure("repair", p.turn_start(0)),
)
def _closer_turn_end_aborted(original: Fn) -> Fn:
    """Repair ends the orphaned turn as aborted (a crash stops the turn), not with reason ``interrupted``."""

    def closers(self: OpenTail) -> tuple[Event, ...]:
        out: tuple[Event, ...] = original(self)
        if out and out[-1].type == "turn/end":
            reason = {"kind": "aborted", "reason": {"kind": "user"}}
            out = (*out[:-1], _with_data(out[-1], {**thaw(_data(out[-1])), "reason": reason}))
        return out

    return closers


@unseen_mutant(
    "closer_id_without_seq", "INV-REPAIR-3", "repair", sl_repair, "_interrupted_result",
    p.pure("repair", *_OPEN_CALLS),
)
def _closer_id_without_seq(original: Fn) -> Fn:
    """A closer result's message id is ``interrupted-tool-result-<callId>``, without the closer's seq."""

    def _interrupted_result(turn: int, call: PendingCall, seq: int, time: int) -> Event:
        event: Event = original(turn, call, seq, time)
        data = thaw(event.data)
        data["message"]["id"] = f"interrupted-tool-result-{call.call_id}"
        return dataclasses.replace(event, data=freeze(data))

    return _interrupted_result


@unseen_mutant(
    "repair_skips_ignorable_events", "INV-REPAIR-4", "repair", OpenTail, "observe",
    p.pure("repair", p.turn_start(0), {"type": "x/note", "seq": 1, "time": T + 5, "data": {}, "ignorable": True}),
)
def _repair_skips_ignorable_events(original: Fn) -> Fn:
    """Repair follows only the events it understands: ignorable ones are skipped, so the closers' seqs and time come too early."""

    def observe(self: OpenTail, event: Event) -> None:
        if event.ignorable:
            return
        original(self, event)

    return observe


@unseen_mutant(
    "empty_open_turn_left_open", "INV-REPAIR-1", "repair", OpenTail, "closers",
    p.pure("repair", p.turn_start(0), p.step_start(1), p.step_end(2)),
)
def _empty_open_turn_left_open(original: Fn) -> Fn:
    """Repair closes a turn only when something in it is still open (a step or a call): a turn between its steps is left open."""

    def closers(self: OpenTail) -> tuple[Event, ...]:
        if self.step is None and not self.pending:
            return ()
        return original(self)  # type: ignore[no-any-return]

    return closers


# --- INV-COMPACT: the balance and compaction regions --------------------------------------------------


def _result_block_user(seq: int) -> dict[str, Any]:
    event = p.user(seq)
    event["data"]["content"] = [{"type": "tool-result", "toolCallId": "c0", "content": [{"type": "text", "text": "out"}]}]
    return event


@unseen_mutant(
    "tool_result_blocks_counted_in_user_messages", "INV-COMPACT-1", "compaction", sl_messages, "pairing_delta",
    _cuts([p.user(0), _result_block_user(1)]),
)
def _tool_result_blocks_counted_in_user_messages(original: Fn) -> Fn:
    """The balance counts results by their ``tool-result`` blocks: a user message holding one counts −1 like a ``tool/result``."""

    def pairing_delta(event: Event) -> int:
        if event.type == "user/message":
            message = _data(event)
            content = message.get("content")
            blocks = content if isinstance(content, tuple | list) else ()
            return -sum(1 for b in blocks if isinstance(b, Mapping) and b.get("type") == "tool-result")
        return original(event)  # type: ignore[no-any-return]

    return pairing_delta


@unseen_mutant(
    "region_end_cut_before_end", "INV-COMPACT-3", "compaction", Session, "compaction_region",
    _cuts(_ONE_CALL, region={"start": 2, "end": 2}),
)
def _region_end_cut_before_end(original: Fn) -> Fn:
    """A region's closing cut is read at its end node's index, the cut before ``end``, not the one after it."""

    def compaction_region(self: Session, start: object, end: object) -> tuple[int, ...]:
        nodes = self.surface.nodes
        if start in nodes and end in nodes and nodes.index(start) <= nodes.index(end):
            counts = self._counts
            last = nodes.index(end)
            kept = counts[last + 1]
            counts[last + 1] = counts[last]
            try:
                return original(self, start, end)  # type: ignore[no-any-return]
            finally:
                counts[last + 1] = kept
        return original(self, start, end)  # type: ignore[no-any-return]

    return compaction_region


@unseen_mutant(
    "around_cuts_shifted", "INV-COMPACT-5", "compaction", Session, "balanced_around",
    _cuts(_ONE_CALL, seq=2),
)
def _around_cuts_shifted(original: Fn) -> Fn:
    """balanced_around reads its two cuts one place too far along the surface: after the node and after the next one."""

    def balanced_around(self: Session, seq: object) -> tuple[bool, bool]:
        original(self, seq)  # its refusals stand
        counts = self._counts
        index = self.surface.nodes.index(seq) + 1
        return counts[index] == 0, counts[index + 1] == 0 if index + 1 < len(counts) else True

    return balanced_around


# --- INV-REL: relationships between events ------------------------------------------------------------


def _plan_wrapper(original: Fn, types: frozenset[str], mutated: Fn) -> Fn:
    """Relations.plan with ``mutated(self, event, data, log, surface)`` deciding for ``types`` (it calls ``original``)."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        if event.type in types:
            return mutated(self, event, _data(event), log, surface)  # type: ignore[no-any-return]
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return plan


_FORK_LINE = p.line({"type": "session", "version": 1, "id": "child", "createdAt": 0, "delegationDepth": 0,
                     "parentSession": "parent", "seedLength": 3})
_PARENT_MARKER = p.event("session-log-deepseek/delivery-accepted", 1,
                         {"sessionId": "parent", "throughSeq": 0, "sessionFormatVersion": 1})


@unseen_mutant(
    "inherited_marker_checked_as_own", "INV-REL-29", "jsonl", sl_relations, "_check_marker",
    p.load(_FORK_LINE, p.line(p.user(0)), p.line(_PARENT_MARKER), p.line(p.event("session/end-seed", 2, {}))),
)
def _inherited_marker_checked_as_own(original: Fn) -> Fn:
    """Every delivery marker of the log's generation must name the log's session, even one a fork inherited with its seed."""

    def _check_marker(identity: LogIdentity, event: Event, data: Mapping[str, Any]) -> None:
        original(dataclasses.replace(identity, has_parent=False), event, data)

    return _check_marker


@unseen_mutant(
    "rewrite_must_answer_pending_call", "INV-REL-3", "session", Relations, "plan",
    p.appends(*_answered(p.tool_result(6, "c1", op=p.replace(5, 5), sources=[5]))),
)
def _rewrite_must_answer_pending_call(original: Fn) -> Fn:
    """Every ``tool/result`` must answer a call pending in the step, a rewrite of an answered result too."""

    def mutated(self: Relations, event: Event, data: Any, log: Any, surface: Any) -> Commit | None:
        if isinstance(event.surface_op, Replace):
            source = sl_relations._at(sl_relations._at(data, "message"), "source")
            if _member(source, "callId") not in self._tools:
                problem = "answers a call no assistant message of this step left pending"
                raise _refuse(Code.TOOL_RESULT_UNADVERTISED, event, problem)
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return _plan_wrapper(original, frozenset({"tool/result"}), mutated)


@unseen_mutant(
    "not_started_result_may_cite_sources", "INV-REL-4", "session", sl_relations, "is_exact_not_started_result",
    p.appends(p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]), _not_started_result(3, "c1", sourceEventSeqs=[2])),
)
def _not_started_result_may_cite_sources(original: Fn) -> Fn:
    """The exact repair result for a call that never started is recognised by its payload alone: it may cite sources."""

    def is_exact_not_started_result(event: Event, data: Mapping[str, Any]) -> bool:
        return original(dataclasses.replace(event, source_event_seqs=None), data)  # type: ignore[no-any-return]

    return is_exact_not_started_result


@unseen_mutant(
    "start_turn_checked_before_overlap", "INV-REL-6", "session", Relations, "plan",
    p.appends(p.turn_start(0), _compaction("compaction/start", 1, turn=1), _compaction("compaction/start", 2, "k2", turn=5)),
)
def _start_turn_checked_before_overlap(original: Fn) -> Fn:
    """``compaction/start`` checks its owner turn before the open compaction: a misplaced overlapping start is a turn mismatch."""

    def mutated(self: Relations, event: Event, data: Any, log: Any, surface: Any) -> Commit | None:
        if self._compaction is not None and self._compaction.crossed_at is None:
            self._check_in_turn(event, _member(data, "turn"))
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return _plan_wrapper(original, frozenset({"compaction/start"}), mutated)


@unseen_mutant(
    "compaction_start_turn_unchecked", "INV-REL-7", "session", Relations, "plan",
    p.appends(p.turn_start(0), _compaction("compaction/start", 1, turn=5)),
)
def _compaction_start_turn_unchecked(original: Fn) -> Fn:
    """``compaction/start`` takes the open turn as its owner whatever turn it names (only summary and end are checked)."""

    def mutated(self: Relations, event: Event, data: Any, log: Any, surface: Any) -> Commit | None:
        if self._compaction is None and isinstance(self._open_turn, int):
            event = _with_data(event, {**thaw(data), "turn": self._open_turn})
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return _plan_wrapper(original, frozenset({"compaction/start"}), mutated)


_COMPACT_CHECKPOINT = {"kind": "plugin", "plugin": "compact", "compactionId": "k9"}


@unseen_mutant(
    "appended_checkpoint_needs_owner", "INV-REL-8", "session", Relations, "plan",
    p.appends(_user_from(0, _COMPACT_CHECKPOINT, "Summary so far.")),
)
def _appended_checkpoint_needs_owner(original: Fn) -> Fn:
    """Every ``user/message`` of the ``compact`` plugin must name the open compaction, an appended one too."""

    def mutated(self: Relations, event: Event, data: Any, log: Any, surface: Any) -> Commit | None:
        source = sl_relations._at(data, "source")
        if sl_relations._is(source, "kind", "plugin") and sl_relations._is(source, "plugin", "compact"):
            self._check_owner(event, source)
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return _plan_wrapper(original, frozenset({"user/message"}), mutated)


@unseen_mutant(
    "summary_span_checked_before_repeat", "INV-REL-9", "session", Relations, "plan",
    p.appends(p.user(0), _compaction("compaction/start", 1), _summary(2, 0, 0, [0]), _summary(3, 1, 1, [1])),
)
def _summary_span_checked_before_repeat(original: Fn) -> Fn:
    """A second summary's span is checked before the repeat: a repeated summary over a bad span is refused for the span."""

    def mutated(self: Relations, event: Event, data: Any, log: Any, surface: Any) -> Commit | None:
        if self._compaction is not None and self._compaction.summarized:
            Relations._check_span(event, data, surface)
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return _plan_wrapper(original, frozenset({"compaction/summary"}), mutated)


@unseen_mutant(
    "prune_counts_as_summary", "INV-REL-10", "session", Relations, "plan",
    p.appends(p.user(0), _compaction("compaction/start", 1), p.event("compaction/prune", 2, _span(0, 0, [0])),
              _compaction("compaction/end", 3)),
)
def _prune_counts_as_summary(original: Fn) -> Fn:
    """A ``compaction/prune`` inside a compaction counts as its summary, so the compaction may end successfully without one."""

    def mutated(self: Relations, event: Event, data: Any, log: Any, surface: Any) -> Commit | None:
        commit = original(self, event, log, surface)
        compaction = self._compaction
        if compaction is None:
            return commit  # type: ignore[no-any-return]

        def both() -> None:
            if commit is not None:
                commit()
            compaction.summarized = True

        return both

    return _plan_wrapper(original, frozenset({"compaction/prune"}), mutated)


@unseen_mutant(
    "crossed_compaction_may_end", "INV-REL-11", "session", Relations, "plan",
    p.appends(_compaction("compaction/start", 0), p.turn_start(1), p.turn_end(2), _compaction("compaction/end", 3, error="")),
)
def _crossed_compaction_may_end(original: Fn) -> Fn:
    """A compaction a turn boundary crossed may still end: its ``compaction/end`` settles the crossing instead of refusing it."""

    def mutated(self: Relations, event: Event, data: Any, log: Any, surface: Any) -> Commit | None:
        held = self._compaction
        crossed = held.crossed_at if held is not None else None
        if held is not None:
            held.crossed_at = None
        try:
            return original(self, event, log, surface)  # type: ignore[no-any-return]
        finally:
            if held is not None and self._compaction is held:
                held.crossed_at = crossed

    return _plan_wrapper(original, frozenset({"compaction/end"}), mutated)


@unseen_mutant(
    "span_read_as_seq_range", "INV-REL-12", "session", Relations, "_check_span",
    p.appends(p.user(0), {"type": "x/note", "seq": 1, "time": T, "data": {}, "ignorable": True}, p.user(2),
              p.event("compaction/prune", 3, _span(0, 2, [0, 2]))),
)
def _span_read_as_seq_range(original: Fn) -> Fn:
    """The seqs a summary or prune must name are read as the seq range ``start..end``, not the surface nodes between them."""

    def _check_span(event: Event, data: Mapping[str, Any], surface: SurfaceManager) -> None:
        bounds = data.get("shadowedRange")
        start = as_int(bounds.get("start")) if isinstance(bounds, Mapping) else None
        end = as_int(bounds.get("end")) if isinstance(bounds, Mapping) else None
        named = data.get("shadowedSeqs")
        if start is None or end is None or not isinstance(named, tuple | list):
            original(event, data, surface)
            return
        if list(named) != list(range(start, end + 1)):
            raise _refuse(Code.COMPACTION_SPAN_NOT_ON_SURFACE, event, "shadowedSeqs are not the seqs of shadowedRange")

    return _check_span


@unseen_mutant(
    "retry_between_turns_unchecked", "INV-REL-13", "session", Relations, "plan",
    p.appends(*_step_open(p.step_end(3), p.turn_end(4), _retry(5, "r1", 1))),
)
def _retry_between_turns_unchecked(original: Fn) -> Fn:
    """An ``llm/retry`` is placed only while a turn is open: between turns it is taken at the turn and step it names."""

    def mutated(self: Relations, event: Event, data: Any, log: Any, surface: Any) -> Commit | None:
        if self._open_turn is not None:
            return original(self, event, log, surface)  # type: ignore[no-any-return]
        kept = (self._open_turn, self._open_step)
        self._open_turn, self._open_step = _member(data, "turn"), _member(data, "step")
        try:
            return original(self, event, log, surface)  # type: ignore[no-any-return]
        finally:
            self._open_turn, self._open_step = kept

    return _plan_wrapper(original, frozenset({"llm/retry"}), mutated)


@unseen_mutant(
    "retry_provider_forgotten_at_turn_start", "INV-REL-14", "session", Relations, "plan",
    p.appends(*_step_open(p.step_end(3), p.turn_end(4), p.turn_start(5, turn=2), p.step_start(6, turn=2),
                          _retry(7, "r1", 1, turn=2))),
)
def _retry_provider_forgotten_at_turn_start(original: Fn) -> Fn:
    """The provider a retry must name is forgotten at each ``turn/start``: a retry before the turn's own header matches none."""

    def mutated(self: Relations, event: Event, data: Any, log: Any, surface: Any) -> Commit | None:
        commit = original(self, event, log, surface)

        def forget() -> None:
            if commit is not None:
                commit()
            self._provider = _ABSENT

        return forget

    return _plan_wrapper(original, frozenset({"turn/start"}), mutated)


@unseen_mutant(
    "first_attempt_restarts_chain", "INV-REL-15", "session", Relations, "plan",
    p.appends(*_step_open(_retry(3, "r1", 1), _retry(4, "r1", 1))),
)
def _first_attempt_restarts_chain(original: Fn) -> Fn:
    """An attempt numbered 1 always starts its policy chain afresh, so a repeated first attempt is read as a new chain."""

    def mutated(self: Relations, event: Event, data: Any, log: Any, surface: Any) -> Commit | None:
        chain = (_member(data, "turn"), _member(data, "step"), _member(data, "provider"), _member(data, "policyKey"))
        prior = self._chains.get(chain)
        if _member(data, "retry") != 1 or prior is None:
            return original(self, event, log, surface)  # type: ignore[no-any-return]
        del self._chains[chain]
        self._retry_ids.discard(prior[0])
        try:
            return original(self, event, log, surface)  # type: ignore[no-any-return]
        finally:
            self._chains[chain] = prior
            self._retry_ids.add(prior[0])

    return _plan_wrapper(original, frozenset({"llm/retry"}), mutated)


@unseen_mutant(
    "repeated_start_reported_before_mismatch", "INV-REL-18", "session", Relations, "plan",
    p.appends(*_step_open(_retry(3, "r1", 1), _retry_started(4, "r1", 1), _retry_started(5, "r1", 1, step=2))),
)
def _repeated_start_reported_before_mismatch(original: Fn) -> Fn:
    """An ``llm/retry-started`` is checked for a repeat before its turn and step: a repeat naming another step is REPEATED."""

    def mutated(self: Relations, event: Event, data: Any, log: Any, surface: Any) -> Commit | None:
        attempt = (_member(data, "retryId"), _member(data, "retry"))
        if attempt in self._started_attempts:
            raise _refuse(Code.RETRY_START_REPEATED, event, "starts an attempt that already started")
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return _plan_wrapper(original, frozenset({"llm/retry-started"}), mutated)


@unseen_mutant(
    "ancestry_checked_on_start_only", "INV-REL-20", "session", Relations, "plan",
    p.appends(p.turn_start(0), _dispatch("tool/code-dispatch-start", 1, "s1"),
              _dispatch("tool/code-dispatch", 2, "s1", root="r2", parent="r2")),
)
def _ancestry_checked_on_start_only(original: Fn) -> Fn:
    """PTC ancestry is checked when a sub-call starts; a settlement naming another root is only a mismatch with its start."""

    def mutated(self: Relations, event: Event, data: Any, log: Any, surface: Any) -> Commit | None:
        started = self._dispatches.get(_member(data, "subCallId"))
        named = (_member(data, "rootCallId"), _member(data, "parentCallId"))
        moved = started is not None and (started.root, started.parent) != named
        if self._open_turn is not None and started is not None and not started.settled and moved:
            raise _refuse(Code.PTC_SETTLE_MISMATCH, event, "settles another call than the one that started")
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return _plan_wrapper(original, frozenset({"tool/code-dispatch"}), mutated)


@unseen_mutant(
    "unstarted_settle_accepted", "INV-REL-22", "session", Relations, "plan",
    p.appends(p.turn_start(0), _dispatch("tool/code-dispatch", 1, "s1")),
)
def _unstarted_settle_accepted(original: Fn) -> Fn:
    """A ``tool/code-dispatch`` with no start is taken as a sub-call that started and settled at once."""

    def mutated(self: Relations, event: Event, data: Any, log: Any, surface: Any) -> Commit | None:
        child = _member(data, "subCallId")
        if child in self._dispatches:
            return original(self, event, log, surface)  # type: ignore[no-any-return]
        start = {k: v for k, v in thaw(data).items() if k not in ("isError", "content")}
        commit = original(self, dataclasses.replace(event, type="tool/code-dispatch-start", data=freeze(start)), log, surface)

        def started_and_settled() -> None:
            if commit is not None:
                commit()
            dispatch: _Dispatch | None = self._dispatches.get(child)
            if dispatch is not None:
                dispatch.settled = True

        return started_and_settled

    return _plan_wrapper(original, frozenset({"tool/code-dispatch"}), mutated)


def _command_run(seq: int, command_id: str = "cmd-1") -> dict[str, Any]:
    return p.event("command/run", seq, {"commandId": command_id, "name": "build", "source": {"kind": "user"}})


@unseen_mutant(
    "done_may_cite_its_own_run", "INV-REL-25", "session", Relations, "plan",
    p.appends(_command_run(0), p.event("command/done", 1, {"commandId": "cmd-1", "kind": "success", "sourceEventSeq": 0})),
)
def _done_may_cite_its_own_run(original: Fn) -> Fn:
    """A successful ``command/done`` may cite its own ``command/run`` (what it finished); other command events are refused."""

    def mutated(self: Relations, event: Event, data: Any, log: Any, surface: Any) -> Commit | None:
        cited = sl_relations._cited(log, data.get("sourceEventSeq"))
        command = _member(data, "commandId")
        own_run = cited is not None and cited.type == "command/run" and _member(_data(cited), "commandId") == command
        if own_run and sl_relations._is(data, "kind", "success") and _member(data, "commandId") in self._commands:
            return None
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return _plan_wrapper(original, frozenset({"command/done"}), mutated)


@unseen_mutant(
    "generated_title_may_cite_nothing", "INV-REL-26", "session", Relations, "plan",
    p.appends(p.event("session/title", 0, {"title": "t", "messageSeqs": [], "source": {"kind": "provider", "provider": "p"}})),
)
def _generated_title_may_cite_nothing(original: Fn) -> Fn:
    """Only a typed title is held to its citations' count: a generated title may cite no message at all."""

    def mutated(self: Relations, event: Event, data: Any, log: Any, surface: Any) -> Commit | None:
        seqs = data.get("messageSeqs")
        if isinstance(seqs, tuple | list) and not seqs:
            return None
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return _plan_wrapper(original, frozenset({"session/title"}), mutated)


@unseen_mutant(
    "dispatch_needs_open_step", "INV-REL-19", "session", Relations, "plan",
    p.appends(p.turn_start(0), _dispatch("tool/code-dispatch-start", 1, "s1")),
)
def _dispatch_needs_open_step(original: Fn) -> Fn:
    """PTC dispatches are placed in the open step (they run for a tool call), so one between the steps of a turn is refused."""

    def mutated(self: Relations, event: Event, data: Any, log: Any, surface: Any) -> Commit | None:
        if self._open_turn is not None and self._open_step is None:
            raise _refuse(Code.PTC_OUTSIDE_TURN, event, "is outside an open step")
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return _plan_wrapper(original, frozenset({"tool/code-dispatch-start", "tool/code-dispatch"}), mutated)


@unseen_mutant(
    "title_frame_spaced_json", "INV-REL-28", "session", sl_relations, "title_frame",
    p.appends(p.user(0), _title_request(1, [(0, "hi")])),
)
def _title_frame_spaced_json(original: Fn) -> Fn:
    """The title frame serialises its messages with the default JSON separators (``", "``, ``": "``), not as JSON.stringify."""

    def title_frame(cited: Sequence[tuple[int, str]]) -> str:
        items = [{"seq": seq, "text": text} for seq, text in cited]
        return sl_relations.TITLE_FRAME_PREFIX + json.dumps(items, ensure_ascii=False)

    return title_frame

