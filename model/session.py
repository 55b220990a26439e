"""A session: the log, and the surface, trace and request header derived from it.

:func:`append_event` is the whole v1 contract for one candidate event, checked in a fixed order so
that every port reports the same first violation:

1. the envelope and lossless JSON (:func:`sessionlog_spec.model.event.decode_event`);
2. contiguity: ``seq`` equals the log length;
3. the vocabulary: legacy forms are refused by name, unknown types need ``ignorable: true``;
4. the payload: the specific rules of messages, request headers, brackets and the end-of-seed
   marker, then the released payload table of the event's type (:mod:`sessionlog_spec.model.payloads`);
5. the surface transition (the tool-pairing balance is the compactor's rule, not the log's:
   :mod:`sessionlog_spec.model.compaction`);
6. the turn / step / tool trace;
7. the relationships between events (tool lifecycles, compactions, retries, PTC, commands, titles,
   delivery markers).

A rejected candidate changes nothing: the functions here return a new state or a violation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Protocol

from sessionlog_spec.model.compaction import pairing_delta
from sessionlog_spec.model.event import Event, decode_event, is_known_type
from sessionlog_spec.model.header import canonical_header, header_event_problem, header_of
from sessionlog_spec.model.json_value import JsonObject, as_object
from sessionlog_spec.model.messages import message_problem
from sessionlog_spec.model.payloads import payload_problem as table_problem
from sessionlog_spec.model.relationships import (
    RelationState,
    SessionIdentity,
    relations_for,
    relationship_finish,
    relationship_transition,
)
from sessionlog_spec.model.surface import LogPrefix, Surface, SurfacePlan, apply_plan, plan_surface_event
from sessionlog_spec.model.trace import (
    TRACE_TYPES,
    TraceState,
    restart_interrupted_turn,
    trace_data_problem,
    trace_transition,
)
from sessionlog_spec.model.violation import Code, Violation

END_SEED = "session/end-seed"
EMPTY_SURFACE = Surface()
OPEN_LOG = TraceState()
"""The trace of an empty log: nothing open, no turn yet."""
OPEN_RELATIONS = relations_for(None)
"""The relationship state of an empty log of no particular session."""
LEGACY_TYPES: dict[str, Code] = {
    "request/header-delta": Code.LEGACY_HEADER_DELTA,
    "mode/set": Code.LEGACY_MODE_SET,
}


@dataclass(frozen=True, slots=True)
class SessionState:
    """Everything observable about a session after a valid log."""

    events: tuple[Event, ...] = ()
    surface: Surface = EMPTY_SURFACE
    trace: TraceState = OPEN_LOG
    header: JsonObject | None = None
    """The reconstructed request header: the canonical latest snapshot."""
    pending_calls: int = 0
    """Tool calls opened on the surface and not yet answered: the count at the last cut, negative
    when a surface result closes a call no surface node opened."""
    relations: RelationState = OPEN_RELATIONS
    """What the relationship rules remember (open lifecycles, chains, compaction)."""


EMPTY_SESSION = SessionState()


def vocabulary_problem(event: Event) -> Violation | None:
    """INV-LEGACY-1, INV-LEGACY-3, INV-LOG-6: legacy types by name; unknown types only when ignorable."""
    legacy = LEGACY_TYPES.get(event.type)
    if legacy is not None:
        return Violation(legacy, f"event seq {event.seq} uses the legacy type {event.type!r}")
    if not is_known_type(event.type) and not event.ignorable:
        return Violation(Code.UNKNOWN_EVENT_TYPE, f"event seq {event.seq} has unknown type {event.type!r} and is not ignorable")
    return None


def end_seed_problem(event: Event) -> Violation | None:
    """INV-LOG-10: the end-of-seed marker carries ``{}``."""
    if event.type != END_SEED:
        return None
    data = as_object(event.data)
    if data is None or data:
        return Violation(Code.END_SEED_INVALID, f"session/end-seed at seq {event.seq} data must be {{}}")
    return None


TYPE_CODES: dict[str, Code] = {
    "user/message": Code.USER_MESSAGE_INVALID,
    "assistant/message": Code.ASSISTANT_MESSAGE_INVALID,
    "tool/result": Code.TOOL_RESULT_INVALID,
    "request/header": Code.HEADER_INVALID,
    END_SEED: Code.END_SEED_INVALID,
}
"""Types whose payload problems have their own code; the bracket types answer in the trace's codes,
every other type with ``PAYLOAD_INVALID``."""


def payload_problem(event: Event) -> Violation | None:
    """INV-PAY-1..3 and the payload rules of messages, headers, brackets and the end-of-seed marker.

    The specific rules run first, so a port reports their finer codes; then the type's whole shape
    by the payload table.  Unknown (ignorable) types carry any lossless JSON.
    """
    if not is_known_type(event.type):
        return None
    specific = (
        header_event_problem(event.data)
        if event.type == "request/header"
        else message_problem(event) or trace_data_problem(event) or end_seed_problem(event)
    )
    if specific is not None or event.type in TRACE_TYPES or event.type == "request/header":
        return specific  # these types' own checks already end with the table
    problem = table_problem(event.type, event.data, event.seq)
    if problem is None:
        return None
    return Violation(TYPE_CODES.get(event.type, Code.PAYLOAD_INVALID), f"{event.type} at seq {event.seq} data: {problem}")


@dataclass(frozen=True, slots=True)
class Admission:
    """What admitting one event changes: the surface plan (if any) and the next trace."""

    event: Event
    plan: SurfacePlan | None
    trace: TraceState
    relations: RelationState


def admit(
    nodes: Sequence[int],
    log: Sequence[Event],
    trace: TraceState,
    raw: object,
    *,
    relations: RelationState = OPEN_RELATIONS,
    legacy_restart: bool = False,
) -> Admission | Violation:
    """Check one raw candidate against a session, in the documented order, without changing it.

    ``legacy_restart`` is the v0 edge's reading of its converted log (INV-LEGACY-6): the trace step
    first lets a ``turn/start`` abandon an open turn by the released interrupted-turn restart
    (:func:`~sessionlog_spec.model.trace.restart_interrupted_turn`).
    """
    event = raw if isinstance(raw, Event) else decode_event(raw)
    if isinstance(event, Violation):
        return event
    if event.seq != len(log):
        return Violation(Code.SEQ_NOT_CONTIGUOUS, f"event seq {event.seq} is not contiguous; expected {len(log)}")
    problem = vocabulary_problem(event) or payload_problem(event)
    if problem is not None:
        return problem
    plan = plan_surface_event(nodes, log, event)
    if isinstance(plan, Violation):
        return plan
    if legacy_restart and log:
        trace = restart_interrupted_turn(trace, event, log[event.seq - 1])  # the event just before, as released
    next_trace = trace_transition(trace, event)
    if isinstance(next_trace, Violation):
        return next_trace
    next_relations = relationship_transition(relations, event, log=log, surface=nodes)
    if isinstance(next_relations, Violation):
        return next_relations
    return Admission(event, plan, next_trace, next_relations)


def _header_after(header: JsonObject | None, event: Event) -> JsonObject | None:
    snapshot = header_of(event)
    return header if snapshot is None else canonical_header(snapshot)


def pending_after(pending: int, admission: Admission, log: Sequence[Event]) -> int:
    """The surface's pending-call count after an admitted event: a node joining the surface adds
    its delta, the nodes it shadows take theirs back; log-only events change nothing.  The count
    may go negative: the log does not police the balance, the compactor reads it (INV-COMPACT-1)."""
    plan = admission.plan
    if plan is None:
        return pending
    shadowed = () if plan.replacement is None else plan.replacement.shadowed
    return pending + pairing_delta(admission.event) - sum(pairing_delta(log[seq]) for seq in shadowed)


def append_event(state: SessionState, raw: object, *, legacy_restart: bool = False) -> SessionState | Violation:
    """The session after appending one raw event, or the violation that refuses it (``legacy_restart``
    for the v0 edge's reading only: see :func:`admit`)."""
    admission = admit(
        state.surface.nodes, state.events, state.trace, raw, relations=state.relations, legacy_restart=legacy_restart
    )
    if isinstance(admission, Violation):
        return admission
    return SessionState(
        events=(*state.events, admission.event),
        surface=state.surface if admission.plan is None else apply_plan(state.surface, admission.plan),
        trace=admission.trace,
        header=_header_after(state.header, admission.event),
        pending_calls=pending_after(state.pending_calls, admission, state.events),
        relations=admission.relations,
    )


def position_named(where: str, index: int, first: int = 0, positions: Sequence[int] | None = None) -> str:
    """Where a fold names the event at ``index``: ``where`` and ``index + first``, or ``positions[index]``
    when given (the line each event was read from)."""
    return f"{where} {index + first if positions is None else positions[index]}"


def fold_session(
    raws: Sequence[object],
    where: str = "index",
    first: int = 0,
    positions: Sequence[int] | None = None,
    *,
    identity: SessionIdentity | None = None,
    complete: bool = True,
    legacy_restart: bool = False,
) -> SessionState | Violation:
    """Validate a log from seq 0; a violation names the offending ``where`` (index or line).

    The position named is ``index + first``, or ``positions[index]`` when given (the line each
    event was read from: a packed row holds several events).  ``identity`` is what the stored
    header says about the session (delivery markers are checked against it); a ``complete`` log
    is also judged as a whole (INV-REL-11), a seed before its end-of-seed marker is not.
    ``legacy_restart`` is for the v0 edge only: see :func:`admit`.

    Equivalent to folding :func:`append_event` (with the same ``legacy_restart``) from the empty
    session of ``identity``, but accumulates locally so a long log costs one pass.
    """
    events: list[Event] = []
    nodes: list[int] = []
    generation = 0
    trace = TraceState()
    header: JsonObject | None = None
    pending = 0
    relations = relations_for(identity)
    for index, raw in enumerate(raws):
        admission = admit(nodes, LogPrefix(events, index), trace, raw, relations=relations, legacy_restart=legacy_restart)
        if isinstance(admission, Violation):
            return admission.at(position_named(where, index, first, positions))
        events.append(admission.event)
        trace = admission.trace
        relations = admission.relations
        header = _header_after(header, admission.event)
        pending = pending_after(pending, admission, events)
        if admission.plan is not None:
            nodes[admission.plan.start_index : admission.plan.end_index] = [admission.plan.seq]
            generation += admission.plan.replacement is not None
    if complete and (unfinished := relationship_finish(relations)) is not None:
        return unfinished.at(position_named(where, len(raws) - 1, first, positions))
    return SessionState(tuple(events), Surface(tuple(nodes), generation), trace, header, pending, relations)


class Fold(Protocol):
    """What validates a whole log: :func:`fold_session`, or a function that gives the same answer to
    the same arguments (one that remembers the logs it validated before)."""

    def __call__(
        self,
        raws: Sequence[object],
        where: str = "index",
        first: int = 0,
        positions: Sequence[int] | None = None,
        *,
        identity: SessionIdentity | None = None,
        complete: bool = True,
        legacy_restart: bool = False,
    ) -> SessionState | Violation:
        """The session ``raws`` build, or the first violation (see :func:`fold_session`)."""


def end_seed_marker(seq: int, time: int) -> Event:
    """The marker that separates a seed from live appends."""
    return Event(type=END_SEED, seq=seq, time=time, data=MappingProxyType({}))


def seed_session(raws: Sequence[object], fold: Fold = fold_session) -> SessionState | Violation:
    """INV-LOG-10: a session built from a seed, closed by one end-of-seed marker.

    The marker is appended at seq = seed length, with the time of the last seed event (0 for an
    empty seed), unless the seed already ends with a marker.  Nothing is constructed on a violation.
    ``fold`` validates the seed (:func:`fold_session`, or an equivalent: :class:`Fold`).
    """
    state = fold(raws, where="seed index", complete=False)
    if isinstance(state, Violation):
        return state
    if not (state.events and state.events[-1].type == END_SEED):
        time = state.events[-1].time if state.events else 0
        marked = append_event(state, end_seed_marker(len(state.events), time))
        assert not isinstance(marked, Violation), marked
        state = marked
    unfinished = relationship_finish(state.relations)
    return state if unfinished is None else unfinished.at(f"seed index {len(raws) - 1}")
