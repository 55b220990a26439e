"""INV-SURF: the surface transition, provenance, rewrites, and the fold."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import icontract

from sessionlog_spec.contracts import ENABLED
from sessionlog_spec.contracts._support import accepted
from sessionlog_spec.model import event as _event
from sessionlog_spec.model import surface as _surface
from sessionlog_spec.model.event import SURFACE_TYPES, Append, Event, Replace, SurfaceOp
from sessionlog_spec.model.json_value import json_equal
from sessionlog_spec.model.surface import FoldedSurface, Surface
from sessionlog_spec.model.violation import Violation


def metadata_only_on_surface_types(event: Event) -> bool:
    """INV-SURF-1."""
    return event.type in SURFACE_TYPES or (event.surface_op is None and event.source_event_seqs is None)


def surface_types_carry_op(event: Event) -> bool:
    """INV-SURF-2."""
    return event.type not in SURFACE_TYPES or event.surface_op is not None


def op_has_one_spelling(raw: object, op: SurfaceOp) -> bool:
    """INV-SURF-3."""
    if isinstance(op, Append):
        return raw == "append"
    return isinstance(raw, Mapping) and dict(raw) == {"op": "replace", "start": op.start, "end": op.end}


def range_is_on_surface(surface: Surface, event: Event) -> bool:
    """INV-SURF-4."""
    op = event.surface_op
    if not isinstance(op, Replace):
        return True
    nodes = surface.nodes
    return op.start in nodes and op.end in nodes and nodes.index(op.start) <= nodes.index(op.end)


def sources_point_back(event: Event) -> bool:
    """INV-SURF-5."""
    sources = event.source_event_seqs
    if sources is None:
        return True
    return (
        len(set(sources)) == len(sources)
        and all(s < event.seq for s in sources)
        and (len(sources) > 0 or event.type == "assistant/message")
    )


def _shadowed(surface: Surface, event: Event) -> tuple[int, ...]:
    op = event.surface_op
    assert isinstance(op, Replace)
    return surface.nodes[surface.nodes.index(op.start) : surface.nodes.index(op.end) + 1]


def replace_cites_shadowed(surface: Surface, event: Event) -> bool:
    """INV-SURF-6."""
    if not isinstance(event.surface_op, Replace):
        return True
    return set(_shadowed(surface, event)) <= set(event.source_event_seqs or ())


def append_goes_to_tail(surface: Surface, event: Event, result: Surface) -> bool:
    """INV-SURF-7."""
    if isinstance(event.surface_op, Append):
        return result.nodes == (*surface.nodes, event.seq)
    return event.surface_op is not None or result == surface


def replace_takes_range_place(surface: Surface, event: Event, result: Surface) -> bool:
    """INV-SURF-8."""
    op = event.surface_op
    if not isinstance(op, Replace):
        return True
    i, j = surface.nodes.index(op.start), surface.nodes.index(op.end)
    return result.nodes == (*surface.nodes[:i], event.seq, *surface.nodes[j + 1 :])


def nodes_are_surface_events(log: Sequence[Event], event: Event, result: Surface) -> bool:
    """INV-SURF-9."""
    full = (*log, event)
    return len(set(result.nodes)) == len(result.nodes) and all(
        0 <= n < len(full) and full[n].type in SURFACE_TYPES for n in result.nodes
    )


def generation_counts_replacements(surface: Surface, event: Event, result: Surface) -> bool:
    """INV-SURF-10."""
    grew = result.replace_generation - surface.replace_generation
    return grew == (1 if isinstance(event.surface_op, Replace) else 0)


def _blank(data: object) -> object:
    if not isinstance(data, Mapping):
        return data
    message = data.get("message")
    if not isinstance(message, Mapping):
        return data
    content = message.get("content")
    if not isinstance(content, tuple) or not content or not isinstance(content[0], Mapping):
        return data
    block = {k: v for k, v in content[0].items() if k != "content"}
    return {**data, "message": {**message, "content": (block, *content[1:])}}


def rewrite_changes_content_only(surface: Surface, log: Sequence[Event], event: Event) -> bool:
    """INV-SURF-11."""
    if event.type != "tool/result" or not isinstance(event.surface_op, Replace):
        return True
    shadowed = _shadowed(surface, event)
    if len(shadowed) != 1 or log[shadowed[0]].type != "tool/result":
        return False
    return json_equal(_blank(log[shadowed[0]].data), _blank(event.data))


@icontract.require(lambda surface: len(set(surface.nodes)) == len(surface.nodes), "surface nodes are distinct", enabled=ENABLED)
@icontract.require(lambda surface, log: all(n < len(log) for n in surface.nodes), "surface nodes are in the log", enabled=ENABLED)
@icontract.ensure(
    lambda event, result: not accepted(result) or metadata_only_on_surface_types(event), "INV-SURF-1", enabled=ENABLED
)
@icontract.ensure(lambda event, result: not accepted(result) or surface_types_carry_op(event), "INV-SURF-2", enabled=ENABLED)
@icontract.ensure(
    lambda surface, event, result: not accepted(result) or range_is_on_surface(surface, event), "INV-SURF-4", enabled=ENABLED
)
@icontract.ensure(lambda event, result: not accepted(result) or sources_point_back(event), "INV-SURF-5", enabled=ENABLED)
@icontract.ensure(
    lambda surface, event, result: not accepted(result) or replace_cites_shadowed(surface, event), "INV-SURF-6", enabled=ENABLED
)
@icontract.ensure(
    lambda surface, event, result: not accepted(result) or append_goes_to_tail(surface, event, result),
    "INV-SURF-7",
    enabled=ENABLED,
)
@icontract.ensure(
    lambda surface, event, result: not accepted(result) or replace_takes_range_place(surface, event, result),
    "INV-SURF-8",
    enabled=ENABLED,
)
@icontract.ensure(
    lambda log, event, result: not accepted(result) or nodes_are_surface_events(log, event, result), "INV-SURF-9", enabled=ENABLED
)
@icontract.ensure(
    lambda surface, event, result: not accepted(result) or generation_counts_replacements(surface, event, result),
    "INV-SURF-10",
    enabled=ENABLED,
)
@icontract.ensure(
    lambda surface, log, event, result: not accepted(result) or rewrite_changes_content_only(surface, log, event),
    "INV-SURF-11",
    enabled=ENABLED,
)
def surface_transition(surface: Surface, log: Sequence[Event], event: Event) -> Surface | Violation:
    """The surface after ``event`` is appended to ``log``."""
    return _surface.surface_transition(surface, log, event)


@icontract.ensure(
    lambda raw, result: not accepted(result) or op_has_one_spelling(raw, result),
    "INV-SURF-3",
    enabled=ENABLED,
)
def decode_surface_op(raw: object) -> SurfaceOp | Violation:
    """Decode a raw ``surfaceOp``."""
    return _event.decode_surface_op(raw)


def fold_matches_transitions(events: Sequence[Event], result: FoldedSurface) -> bool:
    """INV-SURF-12: the fold equals the transition applied event by event."""
    surface = Surface()
    replacements = []
    for index, event in enumerate(events):
        step = _surface.surface_transition(surface, events[:index], event)
        if isinstance(step, Violation):
            return False
        if step.replace_generation != surface.replace_generation:
            removed = tuple(n for n in surface.nodes if n not in step.nodes)
            replacements.append(removed)
        surface = step
    return surface == result.surface and [r.shadowed for r in result.replacements] == replacements


def shadowed_never_returns(result: FoldedSurface) -> bool:
    """INV-SURF-13."""
    gone = {n for r in result.replacements for n in r.shadowed}
    return not gone & set(result.surface.nodes)


@icontract.ensure(
    lambda events, result: not accepted(result) or fold_matches_transitions(events, result), "INV-SURF-12", enabled=ENABLED
)
@icontract.ensure(lambda result: not accepted(result) or shadowed_never_returns(result), "INV-SURF-13", enabled=ENABLED)
def fold_surface(events: Sequence[Event]) -> FoldedSurface | Violation:
    """Replay a whole log onto an empty surface."""
    return _surface.fold_surface(events)


@icontract.require(lambda start, end: start >= 0 and end >= 0, "range endpoints are seqs", enabled=ENABLED)
@icontract.ensure(
    lambda nodes, start, end, result: (
        not accepted(result) or (nodes[result[0]] == start and nodes[result[1]] == end and result[0] <= result[1])
    ),
    "INV-SURF-4",
    enabled=ENABLED,
)
def replacement_range(nodes: tuple[int, ...], start: int, end: int) -> tuple[int, int] | Violation:
    """The surface positions of a replace range."""
    return _surface.replacement_range(nodes, start, end)


@icontract.ensure(
    lambda event_type, seq, sources, result: (
        result is not None
        or sources is None
        or (
            len(set(sources)) == len(sources)
            and all(s < seq for s in sources)
            and (bool(sources) or event_type == "assistant/message")
        )
    ),
    "INV-SURF-5",
    enabled=ENABLED,
)
@icontract.ensure(
    lambda sources, shadowed, result: result is not None or set(shadowed) <= set(sources or ()), "INV-SURF-6", enabled=ENABLED
)
def provenance_problem(event_type: str, seq: int, sources: tuple[int, ...] | None, shadowed: tuple[int, ...]) -> Violation | None:
    """Whether ``sourceEventSeqs`` cite distinct earlier events, including every shadowed node."""
    return _surface.provenance_problem(event_type, seq, sources, shadowed)
