"""Mutants of the second half (see :func:`killrate.mutants.blind_mutant`).

Shapes: the envelope, the vocabulary and the message shapes (INV-LOG), the payloads (INV-PAY), the
surface (INV-SURF), the trace (INV-TRACE), crash repair (INV-REPAIR) and the tool-pairing balance
(INV-COMPACT).  Each mutant was written from the invariant list and seqlog's source alone.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any

import seqlog.event as sl_event
import seqlog.messages as sl_messages
import seqlog.payloads as sl_payloads
import seqlog.repair as sl_repair
import seqlog.surface as sl_surface
import seqlog.trace as sl_trace
from killrate import probes as p
from killrate.mutants import Fn, blind_mutant
from seqlog.errors import Code, SeqlogError
from seqlog.event import END_SEED, KNOWN_TYPES, Event, Replace
from seqlog.jsonvalue import freeze, is_safe_natural
from seqlog.repair import OpenTail, PendingCall
from seqlog.session import Session
from seqlog.surface import FoldedSurface, SurfaceManager, SurfacePlan
from seqlog.trace import Brackets

# --- helpers ------------------------------------------------------------------------------------------


def _data(event: Event) -> Mapping[str, Any]:
    return event.data if isinstance(event.data, Mapping) else {}


def _with_data(event: Event, data: object) -> Event:
    return dataclasses.replace(event, data=freeze(data))


def _raw_data(raw: object) -> Mapping[str, Any]:
    data = raw.get("data") if isinstance(raw, Mapping) else None
    return data if isinstance(data, Mapping) else {}


def _assistant_with(seq: int, calls: Sequence[str] = (), **data: Any) -> dict[str, Any]:
    """An ``assistant/message`` with extra data members (``interrupted``) beside the usual ones."""
    event = p.assistant(seq, calls)
    event["data"] = {**event["data"], **data}
    return event


def _title(seq: int, **data: Any) -> dict[str, Any]:
    """A ``session/title`` the user typed, with ``data`` overriding its members."""
    return p.event("session/title", seq, {"title": "t", "messageSeqs": [], "source": {"kind": "user"}, **data})


def _read(*lines: str) -> p.Probe:
    """``read`` of a stored log made of ``lines``."""
    return ({"op": "read", "jsonl": "\n".join(lines) + "\n"},)


_ANSWERED_TURN = (
    p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]), p.tool_call(3, "c1"), p.tool_result(4, "c1"),
    p.step_end(5), p.turn_end(6),
)  # fmt: skip
"""A closed turn whose one call (advertised at 2, started at 3) is answered at 4."""

_SPLIT_LOG = (
    p.turn_start(0), p.user(1), p.step_start(2), p.assistant(3, ["c1"]), p.tool_call(4, "c1"), p.tool_result(5, "c1"),
    p.step_end(6), p.turn_end(7),
)  # fmt: skip
"""Surface ``[1, 3, 5]`` with counts ``0, 0, 1, 0``: the call opened at 3 is pending at the cut between 3 and 5."""

_declared_members = functools.cache(sl_payloads.payload_members)
"""A payload's declared members, read once per type (the suite appends many events under a mutant)."""

_USER_BLOCK_TYPES = frozenset({"text", "reasoning", "image", "tool-call", "tool-result"})
"""The content-block types the released rules spell out (the union is merge-extensible)."""


# --- INV-LOG: envelope, vocabulary, message shapes ------------------------------------------------------


@blind_mutant(
    "negative_zero_seq_read_as_zero", "INV-LOG-2", "session", sl_event, "decode_event",
    p.appends({**p.turn_start(0), "seq": -0.0}),
)  # fmt: skip
def _negative_zero_seq_read_as_zero(original: Fn) -> Fn:
    """decode_event reads a seq of ``-0`` as 0 (a ``seq >= 0`` sign check that -0 passes) instead of refusing it."""

    def decode_event(raw: object) -> Event:
        if isinstance(raw, Mapping):
            seq = raw.get("seq")
            if type(seq) is float and seq == 0.0:
                raw = {**raw, "seq": 0}
        decoded: Event = original(raw)
        return decoded

    return decode_event


@blind_mutant(
    "surface_fold_numbers_by_position", "INV-LOG-5", "surface", sl_surface, "fold_surface",
    p.pure("fold_surface", p.user(0), p.user(2)),
)  # fmt: skip
def _surface_fold_numbers_by_position(original: Fn) -> Fn:
    """fold_surface numbers the events it replays by their position instead of refusing a seq gap or repeat."""

    def fold_surface(events: Sequence[Event] | Mapping[int, Event]) -> FoldedSurface:
        listed = list(events.values()) if isinstance(events, Mapping) else list(events)
        folded: FoldedSurface = original([dataclasses.replace(e, seq=i) if e.seq != i else e for i, e in enumerate(listed)])
        return folded

    return fold_surface


def _tool_call_blocks_reserialised(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    data = _raw_data(raw)
    message = data.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    if not isinstance(content, list):
        return raw
    blocks = [
        {**b, "arguments": json.dumps(b["arguments"], separators=(",", ":"))}
        if isinstance(b, Mapping) and b.get("type") == "tool-call" and "arguments" in b and not isinstance(b["arguments"], str)
        else b
        for b in content
    ]
    assert isinstance(message, Mapping)
    return {**raw, "data": {**data, "message": {**message, "content": blocks}}}


_OBJECT_ARGUMENTS = p.assistant(2, ["c1"])
_OBJECT_ARGUMENTS["data"]["message"]["content"][1]["arguments"] = {"path": "a.txt"}


@blind_mutant(
    "call_arguments_reserialised", "INV-LOG-8", "session", sl_event, "decode_event",
    p.appends(p.turn_start(0), p.step_start(1), _OBJECT_ARGUMENTS),
)  # fmt: skip
def _call_arguments_reserialised(original: Fn) -> Fn:
    """A tool-call block whose arguments are parsed JSON, not a raw string, is accepted: decode_event serialises them."""

    # The message rules and the payload table both refuse non-string arguments, so the mutant
    # rewrites them before either looks (one decision: parsed arguments are taken as a spelling).
    def decode_event(raw: object) -> Event:
        if isinstance(raw, Mapping) and raw.get("type") == "assistant/message":
            raw = _tool_call_blocks_reserialised(raw)
        decoded: Event = original(raw)
        return decoded

    return decode_event


@blind_mutant(
    "sources_stored_sorted", "INV-LOG-12", "read", sl_event, "decode_sources",
    _read(p.SESSION_LINE, p.line(p.user(0)), p.line(p.user(1)), p.line(p.user(2, "append", [1, 0]))),
)  # fmt: skip
def _sources_stored_sorted(original: Fn) -> Fn:
    """decode_sources stores provenance in ascending order, not as written: the stored event differs from its candidate."""

    def decode_sources(raw: object) -> tuple[int, ...]:
        return tuple(sorted(original(raw)))

    return decode_sources


# --- INV-PAY: payloads ----------------------------------------------------------------------------------


@blind_mutant(
    "plugin_payload_extra_member_ignored", "INV-PAY-1", "session", sl_payloads, "check_data",
    p.appends(p.event("todo/write", 0, {"todos": [], "merge": True})),
)  # fmt: skip
def _plugin_payload_extra_member_ignored(original: Fn) -> Fn:
    """check_data ignores top-level members a plugin payload does not declare (the event is stored with them)."""

    def check_data(event: Event) -> None:
        data = _data(event)
        if event.type in KNOWN_TYPES and event.type not in sl_payloads.TYPE_CODES and event.type not in sl_payloads.TRACE_TYPES:
            declared = _declared_members(event.type)
            if declared and not declared.issuperset(data):
                event = _with_data(event, {k: v for k, v in data.items() if k in declared})
        original(event)

    return check_data


@blind_mutant(
    "absent_message_seqs_read_as_empty", "INV-PAY-1", "session", sl_payloads, "check_data",
    p.appends({**_title(0), "data": {"title": "t", "source": {"kind": "user"}}}),
)  # fmt: skip
def _absent_message_seqs_read_as_empty(original: Fn) -> Fn:
    """A ``session/title`` without its required ``messageSeqs`` is accepted: check_data reads the absent array as empty."""

    def check_data(event: Event) -> None:
        data = _data(event)
        if event.type == "session/title" and isinstance(event.data, Mapping) and "messageSeqs" not in data:
            event = _with_data(event, {**data, "messageSeqs": []})
        original(event)

    return check_data


@blind_mutant(
    "payload_seq_bound_off_by_one", "INV-PAY-2", "session", sl_payloads, "check_data",
    p.appends(
        p.event("command/run", 0, {"commandId": "k1", "name": "build", "source": {"kind": "user"}}),
        p.event("command/done", 1, {"commandId": "k1", "kind": "success", "sourceEventSeq": 1}),
    ),
)  # fmt: skip
def _payload_seq_bound_off_by_one(original: Fn) -> Fn:
    """Payload seqs that must name earlier events are checked against the next seq, so a payload may cite its own event.

    The probe's ``command/done`` cites itself through its optional ``sourceEventSeq``.
    """

    def check_data(event: Event) -> None:
        original(dataclasses.replace(event, seq=event.seq + 1))

    return check_data


@blind_mutant(
    "unknown_block_type_refused", "INV-PAY-3", "session", sl_messages, "_check_user_message",
    p.appends({**p.user(0), "data": {**p.user(0)["data"], "content": [{"type": "audio", "clip": "a.wav"}]}}),
)  # fmt: skip
def _unknown_block_type_refused(original: Fn) -> Fn:
    """A ``user/message`` content block of a type outside the released ones is refused instead of kept as owner-opaque JSON."""

    def _check_user_message(data: object) -> None:
        original(data)
        content = data.get("content") if isinstance(data, Mapping) else None
        for block in content if isinstance(content, Sequence) else ():
            if isinstance(block, Mapping) and block.get("type") not in _USER_BLOCK_TYPES:
                raise SeqlogError(Code.USER_MESSAGE_INVALID, f"user/message content block type {block.get('type')!r} is unknown")

    return _check_user_message


@blind_mutant(
    "opaque_meta_inspected", "INV-PAY-3", "session", sl_messages, "_tool_result_problem",
    p.appends(
        p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]), p.tool_call(3, "c1"),
        {**p.tool_result(4, "c1"), "data": {**p.tool_result(4, "c1")["data"], "meta": ["cached"]}},
    ),
)  # fmt: skip
def _opaque_meta_inspected(original: Fn) -> Fn:
    """The opaque ``tool/result.meta`` is inspected: anything but a JSON object is refused."""

    def _tool_result_problem(data: object) -> str | None:
        problem: str | None = original(data)
        if problem is None and isinstance(data, Mapping) and "meta" in data and not isinstance(data["meta"], Mapping):
            return "meta must be a JSON object"
        return problem

    return _tool_result_problem


# --- INV-SURF: the surface --------------------------------------------------------------------------------


@blind_mutant(
    "unknown_ignorable_joins_surface", "INV-SURF-1", "surface", sl_surface, "_check_eligibility",
    p.pure("fold_surface", p.event("vendor/note", 0, {"text": "n"}, ignorable=True, surfaceOp="append")),
)  # fmt: skip
def _unknown_ignorable_joins_surface(original: Fn) -> Fn:
    """Ignorable events of unknown types skip the eligibility check: one carrying surfaceOp joins the surface."""

    def _check_eligibility(event: Event) -> None:
        if event.ignorable and event.type not in KNOWN_TYPES:
            return
        original(event)

    return _check_eligibility


@blind_mutant(
    "empty_stream_sources_refused", "INV-SURF-5", "surface", sl_surface, "_check_provenance",
    p.pure("fold_surface", p.user(0), {**p.assistant(1), "sourceEventSeqs": []}),
)  # fmt: skip
def _empty_stream_sources_refused(original: Fn) -> Fn:
    """Empty sourceEventSeqs are refused on ``assistant/message`` too (the known-empty-stream exception is missing)."""

    def _check_provenance(event: Event, shadowed: Sequence[int]) -> None:
        if event.source_event_seqs == ():
            raise SeqlogError(Code.SOURCES_EMPTY, f"sourceEventSeqs at seq {event.seq} must not be empty")
        original(event, shadowed)

    return _check_provenance


@blind_mutant(
    "rewrite_may_change_meta", "INV-SURF-11", "surface", sl_surface, "_without_result_content",
    p.pure(
        "fold_surface",
        p.assistant(0, ["c1"]), p.tool_result(1, "c1"),
        {**p.tool_result(2, "c1", op=p.replace(1, 1), sources=[1]),
         "data": {**p.tool_result(2, "c1")["data"], "meta": {"truncated": True}}},
    ),
)  # fmt: skip
def _rewrite_may_change_meta(original: Fn) -> Fn:
    """A tool-result rewrite is compared without its ``meta``: a rewrite may add, drop or change it."""

    def _without_result_content(data: Any) -> Any:
        out = original(data)
        if out is data or not isinstance(out, Mapping):
            return out
        return {k: v for k, v in out.items() if k != "meta"}

    return _without_result_content


def _standing(log: Sequence[Event]) -> dict[int, int]:
    """Each shadowed seq of ``log`` → the replacement that shadowed it."""
    standing: dict[int, int] = {}
    for replacement in sl_surface.fold_surface(log).replacements:
        standing.update(dict.fromkeys(replacement.shadowed, replacement.seq))
    return standing


@blind_mutant(
    "shadowed_bound_resolved", "INV-SURF-13", "surface", SurfaceManager, "_range",
    p.pure("fold_surface", p.user(0), p.user(1), p.user(2, p.replace(0, 0), [0]), p.user(3, p.replace(0, 1), [0, 1, 2])),
)  # fmt: skip
def _shadowed_bound_resolved(original: Fn) -> Fn:
    """A replace may name a shadowed node: the bound is read as the replacement standing in its place."""

    def _range(self: SurfaceManager, op: Replace) -> tuple[int, int]:
        try:
            found: tuple[int, int] = original(self, op)
            return found
        except SeqlogError as error:
            if error.code not in (Code.REPLACE_START_NOT_ON_SURFACE, Code.REPLACE_END_NOT_ON_SURFACE) or self.base_seq:
                raise
            standing = _standing(self.log)

            def current(seq: int) -> int:
                while seq in standing:
                    seq = standing[seq]
                return seq

            moved = Replace(current(op.start), current(op.end))
            if moved == op:
                raise
            resolved: tuple[int, int] = original(self, moved)
            return resolved

    return _range


# --- INV-TRACE: turns, steps, tool pairing -----------------------------------------------------------------


@blind_mutant(
    "turn_start_closes_open_turn", "INV-TRACE-1", "session", sl_trace, "advance",
    p.appends(p.turn_start(0), p.turn_start(1, turn=2)),
)  # fmt: skip
def _turn_start_closes_open_turn(original: Fn) -> Fn:
    """A ``turn/start`` while a turn is open (and no step) implicitly ends that turn instead of being refused."""

    def advance(state: Brackets, event: Event) -> Brackets:
        if event.type == "turn/start" and state.open_turn is not None and state.open_step is None:
            state = Brackets(last_turn=state.last_turn)
        after: Brackets = original(state, event)
        return after

    return advance


@blind_mutant(
    "tool_call_step_unchecked", "INV-TRACE-6", "session", sl_trace, "advance",
    p.appends(p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]), p.tool_call(3, "c1", step=2)),
)  # fmt: skip
def _tool_call_step_unchecked(original: Fn) -> Fn:
    """A ``tool/call`` needs an open step but may name another turn or step than the open one."""

    def advance(state: Brackets, event: Event) -> Brackets:
        data = _data(event)
        if event.type == "tool/call" and state.open_step is not None and "callId" in data:
            event = _with_data(event, {**data, "turn": state.open_turn, "step": state.open_step})
        after: Brackets = original(state, event)
        return after

    return advance


@blind_mutant(
    "rewrite_outside_turn_accepted", "INV-TRACE-7", "session", sl_trace, "advance",
    p.appends(*_ANSWERED_TURN, p.tool_result(7, "c1", op=p.replace(4, 4), sources=[4])),
)  # fmt: skip
def _rewrite_outside_turn_accepted(original: Fn) -> Fn:
    """A tool-result rewrite (a ``tool/result`` replace) is accepted outside any open turn."""

    def advance(state: Brackets, event: Event) -> Brackets:
        if event.type == "tool/result" and isinstance(event.surface_op, Replace) and state.open_turn is None:
            return state
        after: Brackets = original(state, event)
        return after

    return advance


@blind_mutant(
    "interrupted_message_closes_step", "INV-TRACE-10", "session", sl_trace, "advance",
    p.appends(p.turn_start(0), p.step_start(1), _assistant_with(2, interrupted=True), p.step_end(3)),
)  # fmt: skip
def _interrupted_message_closes_step(original: Fn) -> Fn:
    """An ``assistant/message`` marked ``interrupted`` closes the open step in the trace (a non-bracket event moves it)."""

    def advance(state: Brackets, event: Event) -> Brackets:
        after: Brackets = original(state, event)
        if event.type == "assistant/message" and _data(event).get("interrupted") is True and after.open_step is not None:
            return Brackets(after.open_turn, after.last_turn, None, after.last_step)
        return after

    return advance


# --- INV-REPAIR: crash repair ------------------------------------------------------------------------------


@blind_mutant(
    "repair_reopens_unfinished_turn", "INV-REPAIR-1", "repair", OpenTail, "observe",
    p.pure("repair", p.turn_start(0), p.turn_end(1, kind="blocked")),
)  # fmt: skip
def _repair_reopens_unfinished_turn(original: Fn) -> Fn:
    """Repair takes only a completed or interrupted ``turn/end`` as closing the turn (a blocked one gets closers)."""

    def observe(self: OpenTail, event: Event) -> None:
        reason = _data(event).get("reason")
        kind = reason.get("kind") if isinstance(reason, Mapping) else None
        if event.type == "turn/end" and kind not in ("completed", "interrupted"):
            self.length += 1
            self.last_time = event.time
            return
        original(self, event)

    return observe


@blind_mutant(
    "repair_skips_end_seed", "INV-REPAIR-4", "repair", OpenTail, "observe",
    p.pure("repair", p.turn_start(0), p.event(END_SEED, 1, {})),
)  # fmt: skip
def _repair_skips_end_seed(original: Fn) -> Fn:
    """Repair does not count the ``session/end-seed`` marker, so closers after a seeded crash start one seq too early."""

    def observe(self: OpenTail, event: Event) -> None:
        if event.type == END_SEED:
            return
        original(self, event)

    return observe


@blind_mutant(
    "closer_results_off_surface", "INV-REPAIR-5", "repair", sl_repair, "_interrupted_result",
    p.pure("repair", p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"])),
)  # fmt: skip
def _closer_results_off_surface(original: Fn) -> Fn:
    """Closer ``tool/result`` events are written without surfaceOp, so the repaired log is not a valid log."""

    def _interrupted_result(turn: int, call: PendingCall, seq: int, time: int) -> Event:
        event: Event = original(turn, call, seq, time)
        return dataclasses.replace(event, surface_op=None)

    return _interrupted_result


# --- INV-COMPACT: tool-pairing balance ------------------------------------------------------------------


@blind_mutant(
    "region_start_cut_unchecked", "INV-COMPACT-3", "compaction", Session, "compaction_region",
    ({"op": "cuts", "events": list(_SPLIT_LOG), "region": {"start": 5, "end": 5}},),
)  # fmt: skip
def _region_start_cut_unchecked(original: Fn) -> Fn:
    """A compaction region is checked only at the cut after its end; an unbalanced cut before its start goes unnoticed."""

    def compaction_region(self: Session, start: object, end: object) -> tuple[int, ...]:
        try:
            region: tuple[int, ...] = original(self, start, end)
            return region
        except SeqlogError as error:
            if error.code is not Code.REPLACE_SPLITS_TOOL_PAIR:
                raise
            nodes = list(self.surface.nodes)
            first, last = nodes.index(start), nodes.index(end)  # type: ignore[arg-type]
            if self._counts[last + 1] != 0:
                raise
            return tuple(nodes[first : last + 1])

    return compaction_region


@blind_mutant(
    "balance_around_off_surface", "INV-COMPACT-5", "compaction", Session, "balanced_around",
    ({"op": "cuts", "events": [p.user(0), p.user(1, p.replace(0, 0), [0])], "seq": 0},),
)  # fmt: skip
def _balance_around_off_surface(original: Fn) -> Fn:
    """balanced_around answers for a seq off the surface (shadowed or log-only) with the cut it would sort to."""

    def balanced_around(self: Session, seq: object) -> tuple[bool, bool]:
        nodes = list(self.surface.nodes)
        if seq not in nodes and is_safe_natural(seq):
            self._check_balance()
            balanced = self._counts[bisect.bisect_left(nodes, int(seq))] == 0  # type: ignore[call-overload]
            return balanced, balanced
        around: tuple[bool, bool] = original(self, seq)
        return around

    return balanced_around


@blind_mutant(
    "replacement_leaves_later_counts", "INV-COMPACT-6", "compaction", Session, "_count_cuts",
    p.pure("cuts", *_SPLIT_LOG, p.user(8, p.replace(3, 3), [3])),
)  # fmt: skip
def _replacement_leaves_later_counts(original: Fn) -> Fn:
    """A replacement leaves the later cuts' counts as they were: the pending count keeps what the shadowed nodes opened."""

    def _count_cuts(self: Session, surface: SurfacePlan, delta: int) -> None:
        if surface.replacement is None:
            original(self, surface, delta)
            return
        counts = self._counts
        start, stop = surface.start_index, surface.stop_index
        joined = counts[start] + delta
        self._negative += (joined < 0) - sum(1 for count in counts[start + 1 : stop + 1] if count < 0)
        counts[start + 1 : stop + 1] = (joined,)

    return _count_cuts
