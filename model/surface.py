"""The surface: the ordered seqs of the message events the model sees.

The surface is a plain tuple of event seqs.  An event joins it by ``append`` (its seq goes to the
tail) or replaces a contiguous range ``start..end`` of it (its seq takes the place of the range),
citing every node it shadows in ``sourceEventSeqs``.  :func:`surface_transition` is the one
transition; :func:`fold_surface` replays a whole log with it and also reports the replacements.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sessionlog_spec.model.event import SURFACE_TYPES, Append, Event, Replace
from sessionlog_spec.model.json_value import JsonValue, as_array, as_object, json_equal
from sessionlog_spec.model.violation import Code, Violation


@dataclass(frozen=True, slots=True)
class Surface:
    """The current surface and how many positional replacements produced it."""

    nodes: tuple[int, ...] = ()
    replace_generation: int = 0


@dataclass(frozen=True, slots=True)
class Replacement:
    """One committed replace: its seq, its declared range and the nodes it actually removed."""

    seq: int
    start: int
    end: int
    shadowed: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class SurfacePlan:
    """Where a validated surface event goes: ``nodes[start_index:end_index]`` becomes ``(seq,)``."""

    seq: int
    start_index: int
    end_index: int
    replacement: Replacement | None


@dataclass(frozen=True, slots=True)
class FoldedSurface:
    """The result of replaying a whole log: the surface and every replacement, in log order."""

    surface: Surface
    replacements: tuple[Replacement, ...]


def eligibility_problem(event: Event) -> Violation | None:
    """INV-SURF-1, INV-SURF-2: only surface types carry surface metadata, and they always carry ``surfaceOp``."""
    eligible = event.type in SURFACE_TYPES
    if not eligible and event.surface_op is not None:
        return Violation(
            Code.SURFACE_OP_FORBIDDEN,
            f"event {event.type!r} at seq {event.seq} is not surface-eligible and cannot carry surfaceOp",
        )
    if not eligible and event.source_event_seqs is not None:
        return Violation(
            Code.SOURCES_FORBIDDEN,
            f"event {event.type!r} at seq {event.seq} is not surface-eligible and cannot carry sourceEventSeqs",
        )
    if eligible and event.surface_op is None:
        return Violation(
            Code.SURFACE_OP_MISSING, f"event {event.type!r} at seq {event.seq} is surface-eligible and requires surfaceOp"
        )
    return None


def replacement_range(nodes: Sequence[int], start: int, end: int) -> tuple[int, int] | Violation:
    """INV-SURF-4: the surface positions of a replace range; both ends on the surface, in order."""
    if start not in nodes:
        return Violation(Code.REPLACE_START_NOT_ON_SURFACE, f"replace start seq {start} is not on the surface")
    if end not in nodes:
        return Violation(Code.REPLACE_END_NOT_ON_SURFACE, f"replace end seq {end} is not on the surface")
    start_index, end_index = nodes.index(start), nodes.index(end)
    if start_index > end_index:
        return Violation(
            Code.REPLACE_RANGE_INVERTED,
            f"replace start seq {start} (index {start_index}) is after end seq {end} (index {end_index})",
        )
    return start_index, end_index


def provenance_problem(event_type: str, seq: int, sources: tuple[int, ...] | None, shadowed: tuple[int, ...]) -> Violation | None:
    """INV-SURF-5, INV-SURF-6: ``sourceEventSeqs`` cite distinct earlier events, including every shadowed node."""
    if sources is not None:
        if len(sources) == 0 and event_type != "assistant/message":
            return Violation(Code.SOURCES_EMPTY, f"sourceEventSeqs at seq {seq} must not be empty except on assistant/message")
        if len(set(sources)) != len(sources):
            return Violation(Code.SOURCES_DUPLICATE, f"sourceEventSeqs at seq {seq} must not contain duplicates")
        late = [s for s in sources if s >= seq]
        if late:
            return Violation(Code.SOURCES_NOT_EARLIER, f"sourceEventSeqs must reference earlier events: {late[0]} >= {seq}")
    cited = set(sources or ())
    missing = [s for s in shadowed if s not in cited]
    if missing:
        return Violation(
            Code.SOURCES_MISSING_SHADOWED,
            f"replace at seq {seq}: sourceEventSeqs must include every shadowed node; missing {missing}",
        )
    return None


def _without_result_content(data: JsonValue) -> JsonValue:
    """``data`` of a tool/result with the one block's ``content`` blanked out, for rewrite comparison."""
    obj = as_object(data)
    message = as_object(obj.get("message")) if obj is not None else None
    content = as_array(message.get("content")) if message is not None else None
    block = as_object(content[0]) if content else None
    if obj is None or message is None or content is None or block is None:
        return data
    blank_block = {k: v for k, v in block.items() if k != "content"}
    blank_message = {**message, "content": (blank_block, *content[1:])}
    return {**obj, "message": blank_message}


def tool_rewrite_problem(log: Sequence[Event], event: Event, shadowed: tuple[int, ...]) -> Violation | None:
    """INV-SURF-11: a ``tool/result`` replace rewrites exactly one current ``tool/result``, content only."""
    if len(shadowed) != 1:
        return Violation(Code.TOOL_REWRITE_SPAN, f"tool/result replace at seq {event.seq} must rewrite exactly one node")
    target = log[shadowed[0]]
    if target.type != "tool/result":
        return Violation(Code.TOOL_REWRITE_TARGET, f"tool/result replace at seq {event.seq} must target a tool/result")
    if not json_equal(_without_result_content(target.data), _without_result_content(event.data)):
        return Violation(Code.TOOL_REWRITE_CHANGES, f"tool/result replace at seq {event.seq} may change only content")
    return None


def plan_surface_event(nodes: Sequence[int], log: Sequence[Event], event: Event) -> SurfacePlan | Violation | None:
    """Validate ``event`` as the next event after ``log`` on ``nodes`` without changing anything.

    Returns the plan for a surface event, ``None`` for an event that does not touch the surface,
    or the first violation in the order: contiguity, eligibility, range, provenance, rewrite.
    """
    if event.seq != len(log):
        return Violation(Code.SEQ_NOT_CONTIGUOUS, f"event seq {event.seq} is not contiguous; expected {len(log)}")
    problem = eligibility_problem(event)
    if problem is not None:
        return problem
    op = event.surface_op
    if op is None:
        return None
    if isinstance(op, Append):
        problem = provenance_problem(event.type, event.seq, event.source_event_seqs, ())
        return problem or SurfacePlan(event.seq, len(nodes), len(nodes), None)
    assert isinstance(op, Replace)
    positions = replacement_range(nodes, op.start, op.end)
    if isinstance(positions, Violation):
        return positions
    start_index, end_index = positions
    shadowed = tuple(nodes[start_index : end_index + 1])
    problem = provenance_problem(event.type, event.seq, event.source_event_seqs, shadowed)
    if problem is None and event.type == "tool/result":
        problem = tool_rewrite_problem(log, event, shadowed)
    if problem is not None:
        return problem
    return SurfacePlan(event.seq, start_index, end_index + 1, Replacement(event.seq, op.start, op.end, shadowed))


def apply_plan(surface: Surface, plan: SurfacePlan) -> Surface:
    """INV-SURF-7, INV-SURF-8, INV-SURF-10: commit a validated plan."""
    nodes = (*surface.nodes[: plan.start_index], plan.seq, *surface.nodes[plan.end_index :])
    generation = surface.replace_generation + (plan.replacement is not None)
    return Surface(nodes, generation)


def surface_transition(surface: Surface, log: Sequence[Event], event: Event) -> Surface | Violation:
    """The surface after ``event`` is appended to ``log``, or the violation that refuses it."""
    plan = plan_surface_event(surface.nodes, log, event)
    if plan is None:
        return surface
    if isinstance(plan, Violation):
        return plan
    return apply_plan(surface, plan)


def fold_surface(events: Sequence[Event]) -> FoldedSurface | Violation:
    """Replay a whole log through :func:`plan_surface_event`.

    The fold accumulates into a local list so that a long log costs one pass, not one tuple copy
    per event; what it returns is immutable.
    """
    nodes: list[int] = []
    generation = 0
    replacements: list[Replacement] = []
    for index, event in enumerate(events):
        plan = plan_surface_event(nodes, LogPrefix(events, index), event)
        if isinstance(plan, Violation):
            return plan
        if plan is None:
            continue
        nodes[plan.start_index : plan.end_index] = [plan.seq]
        if plan.replacement is not None:
            generation += 1
            replacements.append(plan.replacement)
    return FoldedSurface(Surface(tuple(nodes), generation), tuple(replacements))


class LogPrefix(Sequence[Event]):
    """The first ``length`` events of a log, without copying them."""

    __slots__ = ("_events", "_length")

    def __init__(self, events: Sequence[Event], length: int) -> None:
        self._events = events
        self._length = length

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: int) -> Event:  # type: ignore[override]
        if not 0 <= index < self._length:
            raise IndexError(index)
        return self._events[index]
