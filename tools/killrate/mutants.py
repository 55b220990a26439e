"""The mutant catalogue: one broken variant of one seqlog function per entry, one invariant each.

Every mutant names the invariant it breaks (an ID of :mod:`sessionlog_spec.registry`), the suite group that
should catch it (the runner passes it as ``--only``), the seqlog function or method it replaces,
and a probe: a tiny request sequence on which the mutated port answers differently.  The mutants
are written as wrappers around the original so that each one changes a single decision and leaves
the rest of seqlog's behaviour alone.

:data:`CANARY` is not part of the catalogue: a mutant so broken (``append`` accepts everything)
that a run in which it survives measures nothing.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import seqlog.codec as sl_codec
import seqlog.event as sl_event
import seqlog.header as sl_header
import seqlog.headerline as sl_headerline
import seqlog.legacy as sl_legacy
import seqlog.payloads as sl_payloads
import seqlog.repair as sl_repair
import seqlog.surface as sl_surface
import seqlog.trace as sl_trace
from killrate import probes as p
from killrate.patching import Patcher, Wrapper
from seqlog.driver import SeqlogDriver, state_result
from seqlog.errors import Code, SeqlogError
from seqlog.event import END_SEED, KNOWN_TYPES, LEGACY_TYPES, Event, Replace
from seqlog.header import HEADER_KEYS, HeaderDecision, Reason, dropped_in_canonical
from seqlog.headerline import HEADER_LINE_KEYS
from seqlog.jsonvalue import EMPTY_OBJECT, FrozenObject, freeze, is_positive, is_safe_natural, thaw
from seqlog.relations import Relations
from seqlog.repair import OpenTail, PendingCall
from seqlog.session import Session
from seqlog.store import SessionStore
from seqlog.surface import FoldedSurface, SurfaceManager, SurfacePlan
from seqlog.trace import Brackets

Fn = Callable[..., Any]


@dataclass(frozen=True)
class Mutant:
    """One broken variant of one seqlog function or method."""

    name: str
    invariant: str
    """The invariant ID (``INV-SURF-8``) the mutant breaks."""
    group: str
    """The suite's capability group that targets the invariant (run with ``--only``)."""
    description: str
    owner: type | ModuleType
    attr: str
    make: Wrapper
    """Builds the broken variant from the original."""
    probe: p.Probe
    """Requests on which the mutant's replies differ from seqlog's."""
    half: str = "tuned"
    """``tuned``: written alongside the suite.  ``blind``: written from the invariant list alone,
    before any suite change aimed at it.  ``fresh``, ``unseen`` and ``sealed``: written later from the
    invariant list, the model and seqlog alone, each measured on its first run before anything was
    tuned on it."""

    @property
    def target(self) -> str:
        """The replaced function, as ``module.function`` or ``module.Class.method``."""
        if isinstance(self.owner, type):
            return f"{self.owner.__module__}.{self.owner.__qualname__}.{self.attr}"
        return f"{self.owner.__name__}.{self.attr}"

    def apply(self, patcher: Patcher) -> None:
        """Install the mutant (undo with ``patcher.undo()``)."""
        patcher.wrap(self.owner, self.attr, self.make)


CATALOGUE: list[Mutant] = []


TUNED = "tuned"
BLIND = "blind"
FRESH = "fresh"
UNSEEN = "unseen"
SEALED = "sealed"
HIDDEN = "hidden"
VEILED = "veiled"
HALVES = (TUNED, BLIND, FRESH, UNSEEN, SEALED, HIDDEN, VEILED)


def mutant(  # noqa: PLR0917 - the catalogue's row: name, invariant, group, target, probe
    name: str, invariant: str, group: str, owner: type | ModuleType, attr: str, probe: p.Probe, *, half: str = TUNED
) -> Callable[[Wrapper], Wrapper]:
    """Register the decorated wrapper factory as a catalogue mutant; its docstring is the description."""

    def register(make: Wrapper) -> Wrapper:
        doc = (make.__doc__ or "").strip().splitlines()
        CATALOGUE.append(Mutant(name, invariant, group, doc[0] if doc else name, owner, attr, make, probe, half))
        return make

    return register


def blind_mutant(  # noqa: PLR0917 - the same row as :func:`mutant`
    name: str, invariant: str, group: str, owner: type | ModuleType, attr: str, probe: p.Probe
) -> Callable[[Wrapper], Wrapper]:
    """Register a mutant of the second half: written from the invariant list alone (see ``docs/strength.md``)."""
    return mutant(name, invariant, group, owner, attr, probe, half=BLIND)


def fresh_mutant(  # noqa: PLR0917 - the same row as :func:`mutant`
    name: str, invariant: str, group: str, owner: type | ModuleType, attr: str, probe: p.Probe
) -> Callable[[Wrapper], Wrapper]:
    """Register a mutant of the third half: written from the invariant list, the model and seqlog alone,
    before any suite change aimed at it."""
    return mutant(name, invariant, group, owner, attr, probe, half=FRESH)


def unseen_mutant(  # noqa: PLR0917 - the same row as :func:`mutant`
    name: str, invariant: str, group: str, owner: type | ModuleType, attr: str, probe: p.Probe
) -> Callable[[Wrapper], Wrapper]:
    """Register a mutant of the fourth half: written from the documents, the model and seqlog alone,
    without reading the conformance suite or its tests."""
    return mutant(name, invariant, group, owner, attr, probe, half=UNSEEN)


def sealed_mutant(  # noqa: PLR0917 - the same row as :func:`mutant`
    name: str, invariant: str, group: str, owner: type | ModuleType, attr: str, probe: p.Probe
) -> Callable[[Wrapper], Wrapper]:
    """Register a mutant of the fifth half: written from the documents, the model and seqlog alone,
    without reading the conformance suite or its tests, and never run against the suite before its
    first measurement."""
    return mutant(name, invariant, group, owner, attr, probe, half=SEALED)


def hidden_mutant(  # noqa: PLR0917 - the same row as :func:`mutant`
    name: str, invariant: str, group: str, owner: type | ModuleType, attr: str, probe: p.Probe
) -> Callable[[Wrapper], Wrapper]:
    """Register a mutant of the sixth half: written from the documents, the model and seqlog alone, like the
    fifth, and never run against the suite before its first measurement."""
    return mutant(name, invariant, group, owner, attr, probe, half=HIDDEN)


def veiled_mutant(  # noqa: PLR0917 - the same row as :func:`mutant`
    name: str, invariant: str, group: str, owner: type | ModuleType, attr: str, probe: p.Probe
) -> Callable[[Wrapper], Wrapper]:
    """Register a mutant of the seventh half: written from the documents, the model and seqlog alone, like the
    fifth and sixth, and never run against the suite before its first measurement."""
    return mutant(name, invariant, group, owner, attr, probe, half=VEILED)


def _data(event: Event) -> Mapping[str, Any]:
    return event.data if isinstance(event.data, Mapping) else {}


def _with_data(event: Event, data: object) -> Event:
    return dataclasses.replace(event, data=freeze(data))


# --- INV-LOG: envelope, vocabulary, message shapes ----------------------------------------------------


@mutant(
    "envelope_unknown_key_dropped", "INV-LOG-1", "session", sl_event, "decode_event",
    p.appends({**p.turn_start(0), "id": "evt-1"}),
)
def _envelope_unknown_key_dropped(original: Fn) -> Fn:
    """decode_event silently drops envelope members the format does not have instead of refusing them."""

    def decode_event(raw: object) -> Event:
        if isinstance(raw, Mapping):
            raw = {k: v for k, v in raw.items() if k in sl_event.ENVELOPE_KEYS}
        decoded: Event = original(raw)
        return decoded

    return decode_event


@mutant(
    "fractional_time_truncated", "INV-LOG-2", "session", sl_event, "decode_event",
    p.appends({**p.turn_start(0), "time": 5.25}),
)
def _fractional_time_truncated(original: Fn) -> Fn:
    """decode_event reads a fractional time by truncating it to whole milliseconds."""

    def decode_event(raw: object) -> Event:
        if isinstance(raw, Mapping):
            time = raw.get("time")
            if type(time) is float and math.isfinite(time) and time >= 0:
                raw = {**raw, "time": int(time)}
        decoded: Event = original(raw)
        return decoded

    return decode_event


@mutant(
    "ignorable_false_accepted", "INV-LOG-3", "session", sl_event, "decode_event",
    p.appends({**p.turn_start(0), "ignorable": False}),
)
def _ignorable_false_accepted(original: Fn) -> Fn:
    """decode_event takes ``ignorable: false`` as a spelling of absent."""

    def decode_event(raw: object) -> Event:
        if isinstance(raw, Mapping) and raw.get("ignorable", None) is False:
            raw = {k: v for k, v in raw.items() if k != "ignorable"}
        decoded: Event = original(raw)
        return decoded

    return decode_event


@mutant(
    "non_lossless_json_accepted", "INV-LOG-4", "session", sl_event, "_frozen_member",
    p.appends(p.event("llm/retry", 0, {"attempt": 1, "requestId": 2**53, "backoff": -0.0})),
)
def _non_lossless_json_accepted(original: Fn) -> Fn:
    """Envelope members that are not lossless JSON (huge integers, -0, NaN) are kept as they came."""

    def _frozen_member(raw: Mapping[str, Any], key: str, seq: int) -> Any:
        try:
            return original(raw, key, seq)
        except SeqlogError as error:
            if error.code is Code.JSON_NOT_LOSSLESS:
                return raw[key]
            raise

    return _frozen_member


@mutant("append_seq_reassigned", "INV-LOG-5", "session", Session, "validate", p.appends(p.turn_start(3)))
def _append_seq_reassigned(original: Fn) -> Fn:
    """Session.validate ignores the candidate's seq and numbers it by the log length (no contiguity check)."""

    def validate(self: Session, raw: object) -> Any:
        if isinstance(raw, Mapping) and is_safe_natural(raw.get("seq")) and raw["seq"] != len(self):
            raw = {**raw, "seq": len(self)}
        return original(self, raw)

    return validate


@mutant(
    "unknown_type_accepted", "INV-LOG-6", "session", sl_event, "vocabulary_check",
    p.appends(p.event("system/message", 0, {"text": "Be terse."})),
)
def _unknown_type_accepted(original: Fn) -> Fn:
    """vocabulary_check lets unknown, non-ignorable types through (legacy types are still refused)."""

    def vocabulary_check(event: Event) -> None:
        if event.type in LEGACY_TYPES or event.type in KNOWN_TYPES:
            original(event)

    return vocabulary_check


@mutant(
    "user_message_unchecked", "INV-LOG-7", "session", sl_event, "decode_event",
    p.appends({**p.user(0), "data": {"role": "user", "content": [], "source": {"kind": "user"}}}),
)
def _user_message_unchecked(original: Fn) -> Fn:
    """A ``user/message`` without an id is stored: decode_event mints one, as only the v0 edge may."""

    # The message rules and the payload table both refuse the missing id, so the mutant supplies it
    # before either looks (one decision: the identity requirement is waived).
    def decode_event(raw: object) -> Event:
        if isinstance(raw, Mapping) and raw.get("type") == "user/message":
            data = raw.get("data")
            if isinstance(data, Mapping) and "id" not in data:
                raw = {**raw, "data": {"id": f"minted:{raw.get('seq')}", **data}}
        decoded: Event = original(raw)
        return decoded

    return decode_event


@mutant(
    "assistant_duplicate_call_ids", "INV-REL-2", "session", Relations, "plan",
    p.appends(p.turn_start(0), p.step_start(1), p.assistant(2, ["c1", "c1"])),
)
def _assistant_duplicate_call_ids(original: Fn) -> Fn:
    """An ``assistant/message`` may advertise a call id that is still pending (the repeat is ignored)."""

    # Relations dispatches through a table holding its handlers, so the INV-REL-2 check is reached
    # through ``plan``: a TOOL_CALL_ID_REPEATED refusal is replaced by the plan of the message
    # without its repeated tool-call blocks (the first advertisement stays pending).
    def plan(self: Relations, event: Event, log: Any, surface: Any) -> Any:
        try:
            return original(self, event, log, surface)
        except SeqlogError as error:
            if error.code is not Code.TOOL_CALL_ID_REPEATED or event.type != "assistant/message":
                raise
        data = thaw(event.data)
        seen = set(self._tools)
        kept = []
        for block in data["message"]["content"]:
            if isinstance(block, dict) and block.get("type") == "tool-call":
                if block.get("id") in seen:
                    continue
                seen.add(block.get("id"))
            kept.append(block)
        data["message"]["content"] = kept
        return original(self, _with_data(event, data), log, surface)

    return plan


@mutant(
    "tool_result_ids_unmatched", "INV-LOG-9", "session", sl_event, "decode_event",
    p.appends(
        p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]), p.tool_call(3, "c1"), p.tool_result(4, "c1", block_id="c2")
    ),
)
def _tool_result_ids_unmatched(original: Fn) -> Fn:
    """A ``tool/result`` whose block answers another call id than its source names is accepted
    (decode_event reads the block as answering the source's call)."""

    # The message rules and the payload table's x-relations both compare the two ids, so the mutant
    # makes them agree before either looks (one decision: the mismatch is taken as a slip).
    def decode_event(raw: object) -> Event:
        if isinstance(raw, Mapping) and raw.get("type") == "tool/result":
            data = raw.get("data")
            data = data if isinstance(data, Mapping) else {}
            message = data.get("message")
            message = message if isinstance(message, Mapping) else {}
            source = message.get("source")
            content = message.get("content")
            blocks = content if isinstance(content, list) and len(content) == 1 else []
            if isinstance(source, Mapping) and blocks and isinstance(blocks[0], Mapping):
                block = {**blocks[0], "toolCallId": source.get("callId")}
                raw = {**raw, "data": {**data, "message": {**message, "content": [block]}}}
        decoded: Event = original(raw)
        return decoded

    return decode_event


@mutant(
    "end_seed_written_twice", "INV-LOG-10", "session", Session, "create",
    ({"op": "seed", "events": [p.event(END_SEED, 0, {})]},),
)
def _end_seed_written_twice(original: Fn) -> Fn:
    """Session.create writes an end-of-seed marker even when the seed already ends with one."""

    def create(cls: type[Session], seed: Any = None, header: Any = None, *, clock: Any = None) -> Session:
        seed = None if seed is None else list(seed)
        session: Session = original(cls, seed, header, clock=clock)
        last = seed[-1] if seed else None
        if isinstance(last, Mapping) and last.get("type") == END_SEED:
            session.append_event(Event(END_SEED, len(session), session.events[-1].time, EMPTY_OBJECT))
        return session

    return create


@mutant(
    "rejected_replace_moves_generation", "INV-LOG-11", "session", Session, "validate",
    p.appends(p.user(0), p.user(1, p.replace(0, 0))),
)
def _rejected_replace_moves_generation(original: Fn) -> Fn:
    """A refused replace candidate still bumps the surface's replace generation."""

    def validate(self: Session, raw: object) -> Any:
        try:
            return original(self, raw)
        except SeqlogError:
            if isinstance(raw, Mapping) and isinstance(raw.get("surfaceOp"), Mapping):
                self.surface._generation += 1
            raise

    return validate


# --- INV-SURF: the surface ------------------------------------------------------------------------


@mutant(
    "surface_op_on_log_event", "INV-SURF-1", "surface", sl_surface, "_check_eligibility",
    p.pure("fold_surface", p.event("compaction/summary", 0, {"summary": "s"}, surfaceOp="append")),
)
def _surface_op_on_log_event(original: Fn) -> Fn:
    """Log-only events may carry surfaceOp and sourceEventSeqs (and then join the surface)."""

    def _check_eligibility(event: Event) -> None:
        if event.type in sl_event.SURFACE_TYPES:
            original(event)

    return _check_eligibility


@mutant(
    "missing_surface_op_ignored", "INV-SURF-2", "surface", sl_surface, "_check_eligibility",
    p.pure("fold_surface", {k: v for k, v in p.user(0).items() if k != "surfaceOp"}),
)
def _missing_surface_op_ignored(original: Fn) -> Fn:
    """A surface message without surfaceOp is accepted and simply stays off the surface."""

    def _check_eligibility(event: Event) -> None:
        if event.type in sl_event.SURFACE_TYPES and event.surface_op is None:
            return
        original(event)

    return _check_eligibility


@mutant(
    "replace_op_loosely_parsed", "INV-SURF-3", "surface", sl_event, "decode_surface_op",
    p.pure("fold_surface", p.user(0), p.user(1, {**p.replace(0, 0), "reason": "compaction"}, [0])),
)
def _replace_op_loosely_parsed(original: Fn) -> Fn:
    """decode_surface_op ignores extra members of a replace op and reads ``{op: "append"}`` as append."""

    def decode_surface_op(raw: object) -> Any:
        if isinstance(raw, Mapping) and raw.get("op") == "append":
            return sl_event.APPEND
        if isinstance(raw, Mapping) and raw.get("op") == "replace":
            raw = {k: v for k, v in raw.items() if k in ("op", "start", "end")}
        return original(raw)

    return decode_surface_op


@mutant(
    "inverted_range_swapped", "INV-SURF-4", "surface", SurfaceManager, "_range",
    p.pure("fold_surface", p.user(0), p.user(1), p.user(2, p.replace(1, 0), [0, 1])),
)
def _inverted_range_swapped(original: Fn) -> Fn:
    """A replace whose start lies after its end is read as the range between them."""

    def _range(self: SurfaceManager, op: Replace) -> tuple[int, int]:
        try:
            found: tuple[int, int] = original(self, op)
        except SeqlogError as error:
            if error.code is not Code.REPLACE_RANGE_INVERTED:
                raise
            found = original(self, Replace(op.end, op.start))
        return found

    return _range


@mutant(
    "sources_may_cite_later", "INV-SURF-5", "surface", sl_surface, "_check_provenance",
    p.pure("fold_surface", p.user(0), p.user(1, "append", [0, 1])),
)
def _sources_may_cite_later(original: Fn) -> Fn:
    """Provenance citing the event itself or later events is accepted (those citations are not checked)."""

    def _check_provenance(event: Event, shadowed: Sequence[int]) -> None:
        sources = event.source_event_seqs
        if sources is not None:
            earlier = tuple(s for s in sources if s < event.seq)
            if len(earlier) != len(sources):
                event = dataclasses.replace(event, source_event_seqs=earlier or None)
        original(event, shadowed)

    return _check_provenance


@mutant(
    "shadowed_node_not_cited", "INV-SURF-6", "surface", sl_surface, "_check_provenance",
    p.pure("fold_surface", p.user(0), p.user(1), p.user(2, p.replace(0, 1), [0])),
)
def _shadowed_node_not_cited(original: Fn) -> Fn:
    """A replace need not cite the nodes it shadows (the provenance check skips them)."""

    def _check_provenance(event: Event, shadowed: Sequence[int]) -> None:
        original(event, ())

    return _check_provenance


@mutant(
    "append_placed_at_head", "INV-SURF-7", "surface", SurfaceManager, "_apply",
    p.pure("fold_surface", p.user(0), p.user(1)),
)
def _append_placed_at_head(original: Fn) -> Fn:
    """An appended surface message joins the head of the surface instead of its tail."""

    def _apply(self: SurfaceManager, plan: SurfacePlan) -> None:
        if plan.start_index >= 0 and plan.replacement is None:
            self._nodes.insert(0, plan.seq)
            self._folded += 1
            return
        original(self, plan)

    return _apply


@mutant(
    "replace_range_off_by_one", "INV-SURF-8", "surface", SurfaceManager, "_apply",
    p.pure("fold_surface", p.user(0), p.user(1, p.replace(0, 0), [0])),
)
def _replace_range_off_by_one(original: Fn) -> Fn:
    """A replace removes the nodes from start up to but not including end (end stays on the surface)."""

    def _apply(self: SurfaceManager, plan: SurfacePlan) -> None:
        if plan.start_index >= 0 and plan.replacement is not None:
            self._nodes[plan.start_index : plan.stop_index - 1] = (plan.seq,)
            self._generation += 1
            self._folded += 1
            return
        original(self, plan)

    return _apply


@mutant(
    "generation_counts_shadowed_nodes", "INV-SURF-10", "surface", SurfaceManager, "_apply",
    p.pure("fold_surface", p.user(0), p.user(1), p.user(2, p.replace(0, 1), [0, 1])),
)
def _generation_counts_shadowed_nodes(original: Fn) -> Fn:
    """The replace generation grows by the number of shadowed nodes instead of by one per replacement."""

    def _apply(self: SurfaceManager, plan: SurfacePlan) -> None:
        original(self, plan)
        if plan.start_index >= 0 and plan.replacement is not None:
            self._generation += len(plan.replacement.shadowed) - 1

    return _apply


@mutant(
    "rewrite_may_flip_is_error", "INV-SURF-11", "surface", sl_surface, "_without_result_content",
    p.pure(
        "fold_surface",
        p.assistant(0, ["c1"]), p.tool_result(1, "c1"), p.tool_result(2, "c1", is_error=True, op=p.replace(1, 1), sources=[1]),
    ),
)
def _rewrite_may_flip_is_error(original: Fn) -> Fn:
    """A tool-result rewrite may change the block's isError as well as its content."""

    def _without_result_content(data: Any) -> Any:
        out = original(data)
        if out is data:
            return out
        message = out["message"]
        content = message["content"]
        block = {k: v for k, v in content[0].items() if k != "isError"}
        return {**out, "message": {**message, "content": (block, *content[1:])}}

    return _without_result_content


@mutant(
    "fold_reports_declared_ends", "INV-SURF-12", "surface", sl_surface, "fold_surface",
    p.pure("fold_surface", p.user(0), p.user(1), p.user(2), p.user(3, p.replace(0, 2), [0, 1, 2])),
)
def _fold_reports_declared_ends(original: Fn) -> Fn:
    """fold_surface reports a replacement's declared ends as what it shadowed, not the nodes it removed."""

    def fold_surface(events: Any) -> FoldedSurface:
        folded: FoldedSurface = original(events)
        replacements = tuple(dataclasses.replace(r, shadowed=tuple(dict.fromkeys((r.start, r.end)))) for r in folded.replacements)
        return dataclasses.replace(folded, replacements=replacements)

    return fold_surface


# --- INV-TRACE: turns, steps, tool pairing ------------------------------------------------------------


@mutant("turn_number_unchecked", "INV-TRACE-1", "session", sl_trace, "advance", p.appends(p.turn_start(0, turn=2)))
def _turn_number_unchecked(original: Fn) -> Fn:
    """``turn/start`` may open any turn number, not only the next one."""

    def advance(state: Brackets, event: Event) -> Brackets:
        turn = _data(event).get("turn")
        if event.type == "turn/start" and state.open_turn is None and isinstance(turn, int) and is_positive(turn):
            state = dataclasses.replace(state, last_turn=turn - 1)
        after: Brackets = original(state, event)
        return after

    return advance


@mutant(
    "turn_end_with_step_open", "INV-TRACE-2", "session", sl_trace, "advance",
    p.appends(p.turn_start(0), p.step_start(1), p.turn_end(2)),
)
def _turn_end_with_step_open(original: Fn) -> Fn:
    """``turn/end`` closes its turn even while a step is still open (closing the step with it)."""

    def advance(state: Brackets, event: Event) -> Brackets:
        if event.type == "turn/end" and state.open_step is not None and _data(event).get("turn") == state.open_turn:
            state = dataclasses.replace(state, open_step=None)
        after: Brackets = original(state, event)
        return after

    return advance


@mutant(
    "turn_end_reason_unchecked", "INV-TRACE-3", "session", sl_trace, "check_trace_data",
    p.appends(p.turn_start(0), p.event("turn/end", 1, {"turn": 1, "reason": {"kind": "aborted", "reason": {"kind": "hook"}}})),
)
def _turn_end_reason_unchecked(original: Fn) -> Fn:
    """A ``turn/end`` reason goes unchecked: an abort by a hook without its ``reason``, an ``error``
    without its failure record (the rest of the payload is still checked)."""

    def check_trace_data(event: Event) -> None:
        data = _data(event)
        if event.type == "turn/end" and "reason" in data:
            event = _with_data(event, {**data, "reason": {"kind": "completed"}})
        original(event)

    return check_trace_data


@mutant(
    "step_number_unchecked", "INV-TRACE-4", "session", sl_trace, "advance",
    p.appends(p.turn_start(0), p.step_start(1, step=2)),
)
def _step_number_unchecked(original: Fn) -> Fn:
    """``step/start`` may open any step number within the turn, not only the next one."""

    def advance(state: Brackets, event: Event) -> Brackets:
        step = _data(event).get("step")
        opens = event.type == "step/start" and state.open_turn is not None and state.open_step is None
        if opens and isinstance(step, int) and is_positive(step):
            state = dataclasses.replace(state, last_step=step - 1)
        after: Brackets = original(state, event)
        return after

    return advance


@mutant(
    "step_end_mismatch_accepted", "INV-TRACE-5", "session", sl_trace, "advance",
    p.appends(p.turn_start(0), p.step_start(1), p.step_end(2, step=2)),
)
def _step_end_mismatch_accepted(original: Fn) -> Fn:
    """``step/end`` closes the open step whatever turn and step it names."""

    def advance(state: Brackets, event: Event) -> Brackets:
        if event.type == "step/end" and state.open_step is not None:
            return Brackets(state.open_turn, state.last_turn, None, state.last_step)
        after: Brackets = original(state, event)
        return after

    return advance


@mutant(
    "model_output_outside_step", "INV-TRACE-6", "session", sl_trace, "advance",
    p.appends(p.turn_start(0), p.chunk(1)),
)
def _model_output_outside_step(original: Fn) -> Fn:
    """Assistant chunks and messages are accepted outside their step."""

    def advance(state: Brackets, event: Event) -> Brackets:
        if event.type in ("assistant/chunk", "assistant/message"):
            try:
                after: Brackets = original(state, event)
                return after
            except SeqlogError as error:
                if error.code is Code.EVENT_OUTSIDE_STEP:
                    return state
                raise
        unchanged: Brackets = original(state, event)
        return unchanged

    return advance


@mutant(
    "turn_scoped_outside_turn", "INV-TRACE-7", "session", sl_trace, "advance",
    p.appends(p.event("request/context", 0, {"provider": "p", "model": "m"})),
)
def _turn_scoped_outside_turn(original: Fn) -> Fn:
    """``request/header`` and ``request/context`` are accepted outside any turn."""

    def advance(state: Brackets, event: Event) -> Brackets:
        if event.type in sl_trace.TURN_SCOPED and state.open_turn is None:
            return state
        after: Brackets = original(state, event)
        return after

    return advance


@mutant(
    "tool_result_unpaired_accepted", "INV-TRACE-8", "session", sl_trace, "advance",
    p.appends(p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]), p.tool_result(3, "c1")),
)
def _tool_result_unpaired_accepted(original: Fn) -> Fn:
    """The step trace lets a ``tool/result`` answer no ``tool/call``; only the relationship rules refuse it."""

    def advance(state: Brackets, event: Event) -> Brackets:
        try:
            after: Brackets = original(state, event)
            return after
        except SeqlogError as error:
            if error.code is Code.TOOL_RESULT_UNPAIRED:
                return state
            raise

    return advance


@mutant(
    "trace_data_extra_members", "INV-TRACE-9", "session", sl_trace, "check_trace_data",
    p.appends(p.turn_start(0), p.event("step/start", 1, {"turn": 1, "step": 1, "model": "deepseek-chat"})),
)
def _trace_data_extra_members(original: Fn) -> Fn:
    """Bracket and tool-call payloads may carry members beyond their own (a ``step/start.model``)."""

    def check_trace_data(event: Event) -> None:
        data = _data(event)
        if event.type in sl_payloads.TRACE_TYPES:
            keys = sl_payloads.payload_members(event.type)
            if keys <= data.keys():
                event = _with_data(event, {k: v for k, v in data.items() if k in keys})
        original(event)

    return check_trace_data


# --- INV-HDR: request headers ---------------------------------------------------------------------


@mutant(
    "header_unknown_members_ignored", "INV-HDR-1", "header", sl_event, "decode_event",
    p.appends(p.turn_start(0), p.header_event(1, {**p.HEADER, "messagePrefix": []})),
)
def _header_unknown_members_ignored(original: Fn) -> Fn:
    """A header snapshot may carry members beyond config/adapterDefaults/system/tools (a messagePrefix):
    decode_event drops them instead of the snapshot being refused."""

    # The header rules and the payload table both refuse unknown header members, so the mutant drops
    # them before either looks (one decision: extra members are ignored).
    def decode_event(raw: object) -> Event:
        if isinstance(raw, Mapping) and raw.get("type") == "request/header":
            data = raw.get("data")
            header = data.get("header") if isinstance(data, Mapping) else None
            if isinstance(data, Mapping) and isinstance(header, Mapping):
                header = {k: v for k, v in header.items() if k in HEADER_KEYS}
                raw = {**raw, "data": {**data, "header": header}}
        decoded: Event = original(raw)
        return decoded

    return decode_event


@mutant(
    "header_unpinned_accepted", "INV-HDR-2", "header", sl_header, "check_header_shape",
    p.appends(p.turn_start(0), p.header_event(1, {"config": {"provider": "p"}})),
)
def _header_unpinned_accepted(original: Fn) -> Fn:
    """A header snapshot need not name its provider and model."""

    def check_header_shape(header: object) -> None:
        if isinstance(header, Mapping) and isinstance(header.get("config"), Mapping):
            config = {"provider": "unpinned", "model": "unpinned", **header["config"]}
            header = {**header, "config": config}
        original(header)

    return check_header_shape


@mutant(
    "header_reason_unchecked", "INV-HDR-4", "header", sl_header, "check_header_event",
    p.appends(p.turn_start(0), p.header_event(1, p.HEADER, "startup")),
)
def _header_reason_unchecked(original: Fn) -> Fn:
    """The header check lets any reason string through (``startup``); only the payload table refuses it."""

    def check_header_event(data: object) -> None:
        if isinstance(data, Mapping):
            reason = data.get("reason")
            if isinstance(reason, str) and reason not in set(Reason) and reason != "fallback":
                data = {**data, "reason": "change"}
        original(data)

    return check_header_event


@mutant(
    "stored_header_not_canonical", "INV-HDR-5", "header", sl_header, "check_header_event",
    p.appends(p.turn_start(0), p.header_event(1, {**p.HEADER, "system": ""})),
)
def _stored_header_not_canonical(original: Fn) -> Fn:
    """A stored snapshot may be non-canonical (empty system, empty tools, unmarked adapterDefaults)."""

    def check_header_event(data: object) -> None:
        if isinstance(data, Mapping) and isinstance(data.get("header"), Mapping):
            header = {k: v for k, v in data["header"].items() if not dropped_in_canonical(k, v)}
            data = {**data, "header": header}
        original(data)

    return check_header_event


@mutant(
    "canonical_keeps_empty_system", "INV-HDR-6", "header", sl_header, "canonical_header",
    p.decision([p.turn_start(0), p.header_event(1, p.HEADER)], {**p.HEADER, "system": ""}, first=False, series=False),
)
def _canonical_keeps_empty_system(original: Fn) -> Fn:
    """Canonicalisation keeps an empty ``system``."""

    def canonical_header(header: Mapping[str, Any]) -> FrozenObject:
        out: FrozenObject = original(header)
        if header.get("system") == "":
            return FrozenObject({**out, "system": ""})
        return out

    return canonical_header


@mutant(
    "header_equality_ignores_tools", "INV-HDR-7", "header", sl_header, "header_equals",
    p.decision(
        [p.turn_start(0), p.header_event(1, p.HEADER)], {**p.HEADER, "tools": [p.TOOL]}, first=False, series=False
    ),
)
def _header_equality_ignores_tools(original: Fn) -> Fn:
    """Header equality ignores the tool list, so a tools-only change writes no snapshot."""

    def header_equals(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
        strip: Callable[[Mapping[str, Any]], dict[str, Any]] = lambda h: {k: v for k, v in h.items() if k != "tools"}  # noqa: E731
        equal: bool = original(strip(a), strip(b))
        return equal

    return header_equals


@mutant(
    "tracked_header_not_updated", "INV-HDR-8", "header", Session, "commit",
    p.appends(p.turn_start(0), p.header_event(1, p.HEADER), p.header_event(2, p.HEADER_B, "change")),
)
def _tracked_header_not_updated(original: Fn) -> Fn:
    """The session's tracked request header keeps the first snapshot instead of the latest."""

    def commit(self: Session, plan: Any) -> Event:
        before = self._header
        event: Event = original(self, plan)
        if before is not None:
            self._header = before
        return event

    return commit


@mutant(
    "resume_written_as_initial", "INV-HDR-9", "header", sl_header, "decide_request_header",
    p.decision([p.turn_start(0), p.header_event(1, p.HEADER)], p.HEADER, first=True, series=False),
)
def _resume_written_as_initial(original: Fn) -> Fn:
    """The first request of a loop instance writes ``initial`` even when the log already has a snapshot."""

    def decide_request_header(latest: Any, assembled: Any, facts: Any) -> HeaderDecision | None:
        if facts.first_request:
            return HeaderDecision(Reason.INITIAL)
        decision: HeaderDecision | None = original(latest, assembled, facts)
        return decision

    return decide_request_header


@mutant(
    "starts_series_missing_on_change", "INV-HDR-10", "header", sl_header, "decide_request_header",
    p.decision([p.turn_start(0), p.header_event(1, p.HEADER)], p.HEADER_B, first=False, series=True),
)
def _starts_series_missing_on_change(original: Fn) -> Fn:
    """A ``change`` snapshot is never flagged ``startsSeries``, even when a series begins."""

    def decide_request_header(latest: Any, assembled: Any, facts: Any) -> HeaderDecision | None:
        decision: HeaderDecision | None = original(latest, assembled, facts)
        if decision is not None and decision.reason is Reason.CHANGE:
            return HeaderDecision(Reason.CHANGE)
        return decision

    return decide_request_header


@mutant(
    "series_never_written", "INV-HDR-11", "header", sl_header, "decide_request_header",
    p.decision([p.turn_start(0), p.header_event(1, p.HEADER)], p.HEADER, first=False, series=True),
)
def _series_never_written(original: Fn) -> Fn:
    """An unchanged header writes nothing even when a series begins (no ``series`` snapshot)."""

    def decide_request_header(latest: Any, assembled: Any, facts: Any) -> HeaderDecision | None:
        decision: HeaderDecision | None = original(latest, assembled, facts)
        return None if decision is not None and decision.reason is Reason.SERIES else decision

    return decide_request_header


# --- INV-REPAIR: crash repair ---------------------------------------------------------------------


@mutant(
    "repair_skips_step_end", "INV-REPAIR-2", "repair", OpenTail, "closers", p.pure("repair", p.turn_start(0), p.step_start(1))
)
def _repair_skips_step_end(original: Fn) -> Fn:
    """Repair closes an open turn without first closing its open step."""

    def closers(self: OpenTail) -> tuple[Event, ...]:
        out: tuple[Event, ...] = original(self)
        kept = [e for e in out if e.type != "step/end"]
        return tuple(dataclasses.replace(e, seq=self.length + i) for i, e in enumerate(kept))

    return closers


@mutant(
    "repair_not_started_as_unknown", "INV-REPAIR-3", "repair", sl_repair, "_interrupted_result",
    p.pure("repair", p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"])),
)
def _repair_not_started_as_unknown(original: Fn) -> Fn:
    """A closer for a call that never started reports TOOL_OUTCOME_UNKNOWN instead of TOOL_NOT_STARTED."""

    def _interrupted_result(turn: int, call: PendingCall, seq: int, time: int) -> Event:
        event: Event = original(turn, call, seq, time)
        if call.call_seq is not None:
            return event
        data = thaw(event.data)
        data["error"] = {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"}
        return _with_data(event, data)

    return _interrupted_result


@mutant("repair_times_advance", "INV-REPAIR-4", "repair", OpenTail, "closers", p.pure("repair", p.turn_start(0)))
def _repair_times_advance(original: Fn) -> Fn:
    """Closers are stamped one millisecond apart after the last event instead of reusing its time."""

    def closers(self: OpenTail) -> tuple[Event, ...]:
        out: tuple[Event, ...] = original(self)
        return tuple(dataclasses.replace(e, time=e.time + i + 1) for i, e in enumerate(out))

    return closers


# --- INV-COMPACT: tool-pairing balance ------------------------------------------------------------


_ORPHANING_LOG = (
    p.turn_start(0), p.user(1), p.step_start(2), p.assistant(3, ["c1"]), p.tool_call(4, "c1"), p.tool_result(5, "c1"),
    p.step_end(6), p.turn_end(7),
)
"""A closed turn whose one call is answered; a summary over ``3..3`` would leave result 5 without its call."""


@mutant(
    "negative_pending_accepted", "INV-COMPACT-1", "compaction", Session, "_check_balance",
    p.pure("cuts", *_ORPHANING_LOG, p.user(8, p.replace(3, 3), [3])),
)
def _negative_pending_accepted(original: Fn) -> Fn:
    """The cuts of a surface whose count goes negative are answered as if it had a balance."""

    def _check_balance(self: Session) -> None:
        return None

    return _check_balance


@mutant(
    "cuts_drop_head_cut", "INV-COMPACT-2", "compaction", Session, "cut_balances",
    p.pure("cuts", p.user(0)),
)
def _cuts_drop_head_cut(original: Fn) -> Fn:
    """cut_balances is off by one: it leaves out the cut before the head (N cuts for N nodes)."""

    def cut_balances(self: Session) -> tuple[bool, ...]:
        out: tuple[bool, ...] = original(self)
        return out[1:]

    return cut_balances


@mutant(
    "compaction_may_split_pair", "INV-COMPACT-3", "compaction", Session, "compaction_region",
    ({"op": "cuts", "events": list(_ORPHANING_LOG), "region": {"start": 1, "end": 3}},),
)
def _compaction_may_split_pair(original: Fn) -> Fn:
    """A compactor may take a region whose end cut has a call pending: it would separate the call from its result."""

    def compaction_region(self: Session, start: object, end: object) -> tuple[int, ...]:
        nodes = self.surface.nodes
        if start in nodes and end in nodes and nodes.index(start) <= nodes.index(end) and self.pending_calls >= 0:
            return tuple(nodes[nodes.index(start) : nodes.index(end) + 1])
        out: tuple[int, ...] = original(self, start, end)
        return out

    return compaction_region


@mutant(
    "append_refuses_unbalanced_compaction", "INV-COMPACT-3", "session", Session, "validate",
    p.appends(*_ORPHANING_LOG, p.user(8, p.replace(1, 3), [1, 3])),
)
def _append_refuses_unbalanced_compaction(original: Fn) -> Fn:
    """The log refuses a summary whose range separates a tool call from its result (the compactor's rule, not the log's)."""

    def validate(self: Session, raw: object) -> Any:
        plan = original(self, raw)
        surface = plan.surface
        if surface.replacement is not None and plan.event.type != "tool/result":
            counts = [0]
            for seq in self.surface.nodes:
                event = self.events[seq]
                counts.append(counts[-1] + (-1 if event.type == "tool/result" else len(_tool_calls(event))))
            if counts[surface.start_index] != 0 or counts[surface.stop_index] != 0:
                raise SeqlogError(Code.REPLACE_SPLITS_TOOL_PAIR, "replace would separate a tool call from its result")
        return plan

    return validate


def _tool_calls(event: Event) -> list[object]:
    message = _data(event).get("message")
    if event.type != "assistant/message" or not isinstance(message, Mapping):
        return []
    return [b for b in message.get("content") or () if isinstance(b, Mapping) and b.get("type") == "tool-call"]


@mutant(
    "cut_cache_stale_after_replace", "INV-COMPACT-4", "compaction", Session, "commit",
    p.pure("cuts", p.user(0), p.user(1), p.user(2, p.replace(0, 1), [0, 1])),
)
def _cut_cache_stale_after_replace(original: Fn) -> Fn:
    """A committed replacement leaves the per-cut balance cache as it was (the covered cuts stay)."""

    def commit(self: Session, plan: Any) -> Event:
        before = list(self._counts)
        event: Event = original(self, plan)
        if plan.surface.replacement is not None:
            self._counts[:] = before
        return event

    return commit


# --- INV-JSONL: the stored form -------------------------------------------------------------------


@mutant(
    "header_line_members_unchecked", "INV-JSONL-1", "jsonl", sl_headerline, "check_header_line",
    p.load('{"type":"session","version":1,"id":"s","createdAt":0,"delegationDepth":0,"parentId":"p-1"}'),
)
def _header_line_members_unchecked(original: Fn) -> Fn:
    """The session header line may carry members the format does not have."""

    def check_header_line(header: Mapping[str, Any]) -> None:
        original({k: v for k, v in header.items() if k in HEADER_LINE_KEYS})

    return check_header_line


@mutant(
    "save_drops_ignorable", "INV-JSONL-2", "jsonl", sl_event, "encode_event",
    (
        {"op": "reset"},
        {"op": "append", "event": p.event("vendor/telemetry", 0, {"tokens": 1}, ignorable=True)},
        {"op": "save"},
    ),
)
def _save_drops_ignorable(original: Fn) -> Fn:
    """The stored form of an event leaves out ``ignorable: true``."""

    def encode_event(event: Event) -> dict[str, object]:
        out: dict[str, object] = original(event)
        out.pop("ignorable", None)
        return out

    return encode_event


@mutant(
    "torn_tail_kept", "INV-JSONL-3", "jsonl", sl_codec, "_split",
    p.load(p.SESSION_LINE, p.note_line(0), final_newline=False),
)
def _torn_tail_kept(original: Fn) -> Fn:
    """A final segment without its newline is kept when it happens to parse."""

    def _split(data: bytes | str) -> tuple[list[Any], bool]:
        lines, torn = original(data)
        if torn:
            tail = data[data.rfind(b"\n") + 1 :] if isinstance(data, bytes) else data[data.rfind("\n") + 1 :]
            try:
                sl_codec.parse_line(tail)
            except sl_codec.LineError:
                return lines, torn
            return [*lines, tail], False
        return lines, torn

    return _split


@mutant(
    "malformed_line_dropped", "INV-JSONL-4", "jsonl", sl_codec, "_split",
    p.load(p.SESSION_LINE, p.line(p.turn_start(0)), '{"type":"todo/wri', p.line(p.turn_end(1))),
)
def _malformed_line_dropped(original: Fn) -> Fn:
    """A complete event line that does not parse is skipped instead of refusing the log."""

    def _split(data: bytes | str) -> tuple[list[Any], bool]:
        lines, torn = original(data)
        kept = lines[:1]
        for line in lines[1:]:
            try:
                sl_codec.parse_line(line)
            except sl_codec.LineError:
                continue
            kept.append(line)
        return kept, torn

    return _split


@mutant(
    "duplicate_key_first_wins", "INV-JSONL-4", "jsonl", sl_codec, "_parse_text",
    p.load(p.SESSION_LINE, '{"seq":5,"type":"todo/write","seq":0,"time":1,"data":{"todos":[]}}'),
)
def _duplicate_key_first_wins(original: Fn) -> Fn:
    """A repeated key keeps its first value, where ``JSON.parse`` (the released reader) keeps the last."""

    def _parse_text(text: str) -> object:
        original(text)  # the same refusals

        def first_wins(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for key, value in pairs:
                out.setdefault(key, value)
            return out

        return json.loads(text, object_pairs_hook=first_wins)

    return _parse_text


@mutant(
    "load_renumbers_seqs", "INV-JSONL-5", "jsonl", sl_codec, "_parse_numbered",
    p.load(p.SESSION_LINE, p.line(p.turn_start(0)), p.note_line(2), p.line(p.turn_end(3))),
)
def _load_renumbers_seqs(original: Fn) -> Fn:
    """Loading numbers events by their line instead of refusing a seq gap or a duplicated line."""

    def _parse_numbered(line: bytes | str, number: int) -> dict[str, Any]:
        value: dict[str, Any] = original(line, number)
        if number >= 2 and is_safe_natural(value.get("seq")):
            value = {**value, "seq": number - 2}
        return value

    return _parse_numbered


@mutant(
    "ignorable_unknown_dropped_on_load", "INV-JSONL-6", "jsonl", sl_codec, "_split",
    p.load(p.SESSION_LINE, '{"type":"vendor/telemetry","seq":0,"time":1,"data":{},"ignorable":true}'),
)
def _ignorable_unknown_dropped_on_load(original: Fn) -> Fn:
    """Loading drops ignorable events of unknown types instead of keeping them."""

    def _split(data: bytes | str) -> tuple[list[Any], bool]:
        lines, torn = original(data)
        kept = lines[:1]
        for line in lines[1:]:
            try:
                value = sl_codec.parse_line(line)
            except sl_codec.LineError:
                kept.append(line)
                continue
            if value.get("ignorable") is True and value.get("type") not in KNOWN_TYPES:
                continue
            kept.append(line)
        return kept, torn

    return _split


@mutant(
    "newer_version_read_as_v1", "INV-JSONL-7", "jsonl", sl_codec, "_parse_numbered",
    p.load('{"type":"session","version":2,"id":"s","createdAt":0,"delegationDepth":0}', p.note_line(0)),
)
def _newer_version_read_as_v1(original: Fn) -> Fn:
    """A log of a later format version is read as version 1."""

    def _parse_numbered(line: bytes | str, number: int) -> dict[str, Any]:
        value: dict[str, Any] = original(line, number)
        version = value.get("version")
        if number == 1 and type(version) is int and version > 1:
            value = {**value, "version": 1}
        return value

    return _parse_numbered


@mutant(
    "repair_on_every_load", "INV-JSONL-8", "jsonl", OpenTail, "observe",
    p.load(p.SESSION_LINE, '{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}',
           '{"type":"turn/end","seq":1,"time":1,"data":{"turn":1,"reason":{"kind":"interrupted"}}}'),
)
def _repair_on_every_load(original: Fn) -> Fn:
    """Repair does not recognise its own ``interrupted`` turn/end, so every load of a repaired log repairs again."""

    def observe(self: OpenTail, event: Event) -> None:
        reason = _data(event).get("reason")
        if event.type == "turn/end" and isinstance(reason, Mapping) and reason.get("kind") == "interrupted":
            self.length += 1
            self.last_time = event.time
            return
        original(self, event)

    return observe


# --- INV-LEGACY: refused forms and the v0 edge -----------------------------------------------------


@mutant(
    "header_delta_accepted", "INV-LEGACY-1", "session", sl_event, "vocabulary_check",
    p.appends(p.event("request/header-delta", 0, {"delta": {"system": "Be brief."}, "reason": "change"})),
)
def _header_delta_accepted(original: Fn) -> Fn:
    """v1 validation accepts ``request/header-delta`` events."""

    def vocabulary_check(event: Event) -> None:
        if event.type != "request/header-delta":
            original(event)

    return vocabulary_check


@mutant(
    "fallback_reason_accepted", "INV-LEGACY-2", "session", sl_header, "check_header_event",
    p.appends(p.turn_start(0), p.header_event(1, p.HEADER, "fallback")),
)
def _fallback_reason_accepted(original: Fn) -> Fn:
    """The header check lets the delta codec's ``fallback`` reason through; only the payload table refuses it."""

    def check_header_event(data: object) -> None:
        if isinstance(data, Mapping) and data.get("reason") == "fallback":
            data = {**data, "reason": "change"}
        original(data)

    return check_header_event


@mutant(
    "edge_renames_mode_set", "INV-LEGACY-3", "legacy", sl_legacy, "upgrade_with_session",
    p.upgrade(p.event("mode/set", 0, {"mode": "plan"})),
)
def _edge_renames_mode_set(original: Fn) -> Fn:
    """The v0 edge converts ``mode/set`` into ``sandbox/mode`` instead of refusing it (its payload is then refused)."""

    def upgrade_with_session(log: sl_legacy.StoredLog) -> Any:
        if log.header.get("version") == 0:
            events = tuple(
                {**e, "type": "sandbox/mode"} if isinstance(e, Mapping) and e.get("type") == "mode/set" else e for e in log.events
            )
            log = sl_legacy.StoredLog(log.header, events)
        return original(log)

    return upgrade_with_session


@mutant(
    "edge_accepts_unknown_ignorable", "INV-LEGACY-4", "legacy", sl_legacy, "check_refusals",
    p.upgrade(p.event("vendor/telemetry", 0, {"tokens": 1}, ignorable=True)),
)
def _edge_accepts_unknown_ignorable(original: Fn) -> Fn:
    """The v0 edge lets ignorable events outside the frozen v0 inventory through."""

    def check_refusals(raw_events: Sequence[object]) -> None:
        original([e for e in raw_events if not (isinstance(e, Mapping) and e.get("ignorable") is True)])

    return check_refusals


@mutant(
    "edge_keeps_message_prefix", "INV-LEGACY-5", "legacy", sl_legacy, "_normalise_data",
    p.upgrade(p.turn_start(0), p.header_event(1, {**p.HEADER, "messagePrefix": []})),
)
def _edge_keeps_message_prefix(original: Fn) -> Fn:
    """The v0 edge skips N5: a header snapshot keeps its ``messagePrefix``."""

    def _normalise_data(type_: str, data: Mapping[str, Any], session_id: str, seq: object) -> object:
        out = original(type_, data, session_id, seq)
        header = data.get("header")
        if type_ == "request/header" and isinstance(out, Mapping) and isinstance(header, Mapping) and "messagePrefix" in header:
            return {**out, "header": {**out["header"], "messagePrefix": header["messagePrefix"]}}
        return out

    return _normalise_data


@mutant(
    "edge_mints_ids_without_session", "INV-LEGACY-5", "legacy", sl_legacy, "_legacy_id",
    p.upgrade({**p.user(0), "data": {"content": [], "source": {"kind": "user"}}}),
)
def _edge_mints_ids_without_session(original: Fn) -> Fn:
    """N4 mints ``legacy-message:<seq>`` ids, leaving out the session id."""

    def _legacy_id(session_id: str, seq: object) -> str:
        return f"legacy-message:{seq}"

    return _legacy_id


# --- INV-JSONL-11: the durable store -------------------------------------------------------------------

_STORE = p.STORE
_CREATE = {"op": "store_create", "dir": _STORE, "header": json.loads(p.SESSION_LINE)}


@mutant(
    "durable_before_sync", "INV-JSONL-11", "storage", SessionStore, "durable_length",
    (_CREATE, {"op": "store_append", "event": p.turn_start(0)}),
)
def _durable_before_sync(original: Any) -> Any:
    """The store reports every appended event as durable while it still sits in the write buffer."""
    return property(lambda self: len(self.session))


@mutant(
    "reopen_keeps_dropped_bytes", "INV-JSONL-11", "storage", SessionStore, "_finish_tail",
    (
        _CREATE, {"op": "store_append", "event": p.turn_start(0)}, {"op": "store_close"},
        {"op": "store_damage", "dir": _STORE,
         "jsonl": p.SESSION_LINE + "\n" + json.dumps(p.turn_start(0)) + '\n{"type":"turn/e'},
        {"op": "store_open", "dir": _STORE}, {"op": "store_close"}, {"op": "store_open", "dir": _STORE},
    ),
)  # fmt: skip
def _reopen_keeps_dropped_bytes(original: Fn) -> Fn:
    """Reopening appends the closers after a torn tail instead of cutting it first."""

    def finish_tail(path: Any, disk: Any, pack_chunks: bool) -> None:
        original(path, dataclasses.replace(disk, cut=False), pack_chunks)

    return finish_tail


@mutant(
    "close_skips_sync", "INV-JSONL-11", "storage", SessionStore, "close",
    (_CREATE, {"op": "store_append", "event": p.turn_start(0)}, {"op": "store_close"}, {"op": "store_open", "dir": _STORE}),
)
def _close_skips_sync(original: Fn) -> Fn:
    """Closing releases the store without writing what is still buffered (and says it is durable)."""

    def close(self: SessionStore) -> None:
        self._buffer.clear()
        self._buffered.clear()
        self._buffered_bytes = 0
        self._buffered_events = 0
        self._durable = len(self.session)
        original(self)

    return close


# --- the canary -------------------------------------------------------------------------------------


def _accepts_everything(original: Fn) -> Fn:
    """``append`` replies with the state for every candidate, refusing nothing (a refused one is not stored)."""

    def op_append(self: SeqlogDriver, request: dict[str, Any]) -> Any:
        try:
            return original(self, request)
        except SeqlogError:
            return state_result(self.session)

    return op_append


CANARY = Mutant(
    "canary_append_accepts_everything",
    "INV-LOG-11",
    "session",
    (_accepts_everything.__doc__ or "").strip(),
    SeqlogDriver,
    "op_append",
    _accepts_everything,
    p.appends(p.turn_start(5)),
)
"""Must always die: a run in which it survives is void."""

# The second to seventh halves register themselves on import; their modules need the helpers above.
from killrate import (  # noqa: E402, F401
    blind_edges,
    blind_relations,
    blind_shapes,
    fresh_edges,
    fresh_relations,
    fresh_values,
    hidden_edges,
    hidden_flow,
    hidden_relations,
    hidden_values,
    sealed_edges,
    sealed_relations,
    sealed_values,
    unseen_edges,
    unseen_relations,
    unseen_values,
    veiled_edges,
    veiled_relations,
    veiled_values,
)

BY_NAME: dict[str, Mutant] = {m.name: m for m in (*CATALOGUE, CANARY)}
assert len(BY_NAME) == len(CATALOGUE) + 1, "duplicate mutant name"
