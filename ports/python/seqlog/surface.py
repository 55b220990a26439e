"""The surface: the ordered seqs of the message events the model sees, kept by :class:`SurfaceManager`.

An event joins the surface by ``append`` or takes the place of a contiguous range ``start..end``
(``replace``), citing every node it shadows in ``sourceEventSeqs``.  The manager keeps the nodes as
a flat list of ints, looks replace bounds up linearly (replaces are rare; appends are O(1)), and
folds lazily whatever was appended to the log list it was given since it last looked.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

from seqlog.errors import Code, LibCode, SeqlogError
from seqlog.event import SURFACE_TYPES, Append, Event, Replace
from seqlog.jsonvalue import as_array, as_object, json_equal


@dataclass(frozen=True, slots=True)
class Replacement:
    """One committed replace: its seq, its declared range and the nodes it actually removed."""

    seq: int
    start: int
    end: int
    shadowed: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class SurfacePlan:
    """A validated next event: ``nodes[start_index:stop_index]`` becomes ``[seq]``, or nothing changes.

    ``generation`` and ``length`` pin the surface the plan was made for, so a stale plan is refused.
    """

    seq: int
    start_index: int
    stop_index: int
    replacement: Replacement | None
    generation: int
    length: int

    @property
    def touches_surface(self) -> bool:
        """Whether committing the plan changes the nodes."""
        return self.start_index >= 0


@dataclass(frozen=True, slots=True)
class FoldedSurface:
    """A whole log replayed: the nodes, the replace generation and every replacement in log order."""

    nodes: tuple[int, ...]
    replace_generation: int
    replacements: tuple[Replacement, ...]


class NodesView(Sequence[int]):
    """A read-only live view of a manager's nodes."""

    __slots__ = ("_nodes",)

    def __init__(self, nodes: list[int]) -> None:
        self._nodes = nodes

    def __len__(self) -> int:
        return len(self._nodes)

    @overload
    def __getitem__(self, index: int) -> int: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[int]: ...
    def __getitem__(self, index: int | slice) -> int | Sequence[int]:
        if isinstance(index, slice):
            return tuple(self._nodes[index])
        return self._nodes[index]

    def __iter__(self) -> Iterator[int]:
        return iter(self._nodes)

    def __contains__(self, value: object) -> bool:
        return value in self._nodes

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return list(self._nodes) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"NodesView({self._nodes!r})"


def _check_eligibility(event: Event) -> None:
    eligible = event.type in SURFACE_TYPES
    if not eligible and event.surface_op is not None:
        raise SeqlogError(
            Code.SURFACE_OP_FORBIDDEN,
            f"event {event.type!r} at seq {event.seq} is not surface-eligible and cannot carry surfaceOp",
        )
    if not eligible and event.source_event_seqs is not None:
        raise SeqlogError(
            Code.SOURCES_FORBIDDEN,
            f"event {event.type!r} at seq {event.seq} is not surface-eligible and cannot carry sourceEventSeqs",
        )
    if eligible and event.surface_op is None:
        raise SeqlogError(
            Code.SURFACE_OP_MISSING, f"event {event.type!r} at seq {event.seq} is surface-eligible and requires surfaceOp"
        )


def _check_provenance(event: Event, shadowed: Sequence[int]) -> None:
    """``sourceEventSeqs`` cite distinct earlier events, including every shadowed node."""
    sources, seq = event.source_event_seqs, event.seq
    if sources is not None:
        if not sources and event.type != "assistant/message":
            raise SeqlogError(Code.SOURCES_EMPTY, f"sourceEventSeqs at seq {seq} must not be empty except on assistant/message")
        if len(set(sources)) != len(sources):
            raise SeqlogError(Code.SOURCES_DUPLICATE, f"sourceEventSeqs at seq {seq} must not contain duplicates")
        late = next((s for s in sources if s >= seq), None)
        if late is not None:
            raise SeqlogError(Code.SOURCES_NOT_EARLIER, f"sourceEventSeqs must reference earlier events: {late} >= {seq}")
    if shadowed:
        cited = set(sources or ())
        missing = [s for s in shadowed if s not in cited]
        if missing:
            raise SeqlogError(
                Code.SOURCES_MISSING_SHADOWED,
                f"replace at seq {seq}: sourceEventSeqs must include every shadowed node; missing {missing}",
            )


def _without_result_content(data: Any) -> Any:
    """A tool/result payload with its one block's ``content`` left out, for rewrite comparison."""
    obj = as_object(data)
    message = as_object(obj.get("message")) if obj is not None else None
    content = as_array(message.get("content")) if message is not None else None
    block = as_object(content[0]) if content else None
    if obj is None or message is None or content is None or block is None:
        return data
    blank_block = {k: v for k, v in block.items() if k != "content"}
    return {**obj, "message": {**message, "content": (blank_block, *content[1:])}}


def _check_rewrite(event: Event, target: Event, span: int) -> None:
    """A ``tool/result`` replace rewrites exactly one current ``tool/result``, content only."""
    if span != 1:
        raise SeqlogError(Code.TOOL_REWRITE_SPAN, f"tool/result replace at seq {event.seq} must rewrite exactly one node")
    if target.type != "tool/result":
        raise SeqlogError(Code.TOOL_REWRITE_TARGET, f"tool/result replace at seq {event.seq} must target a tool/result")
    if not json_equal(_without_result_content(target.data), _without_result_content(event.data)):
        raise SeqlogError(Code.TOOL_REWRITE_CHANGES, f"tool/result replace at seq {event.seq} may change only content")


class SurfaceManager:
    """The live surface over a backing log list, validated event by event.

    ``log`` is held by reference: ``log[i]`` is the event with seq ``base_seq + i``.  A manager may
    start from a loaded window (``base_seq`` > 0 with the ``nodes`` and ``replace_generation`` that
    were in force at ``base_seq``); a tool-result rewrite whose target lies before the window is
    then refused with :attr:`LibCode.OUTSIDE_WINDOW`, since its payload is not at hand.
    """

    __slots__ = ("_base", "_folded", "_generation", "_log", "_nodes", "_view")

    def __init__(
        self,
        log: list[Event] | None = None,
        *,
        base_seq: int = 0,
        nodes: Sequence[int] = (),
        replace_generation: int = 0,
    ) -> None:
        self._log: list[Event] = [] if log is None else log
        self._base = base_seq
        self._nodes: list[int] = list(nodes)
        self._generation = replace_generation
        self._folded = 0
        self._view = NodesView(self._nodes)

    @property
    def log(self) -> list[Event]:
        """The backing log list (events from ``base_seq`` on)."""
        return self._log

    @property
    def base_seq(self) -> int:
        """The seq of ``log[0]``."""
        return self._base

    @property
    def nodes(self) -> NodesView:
        """The surface as a read-only live sequence of seqs, after folding any pending log entries."""
        self._catch_up()
        return self._view

    @property
    def replace_generation(self) -> int:
        """How many replacements have been committed."""
        self._catch_up()
        return self._generation

    def validate_next(self, event: Event) -> SurfacePlan:
        """Check ``event`` as the next event of the log, changing nothing, and return its plan."""
        self._catch_up()
        return self._plan(event, self._base + len(self._log))

    def commit(self, plan: SurfacePlan) -> None:
        """Apply a plan from :meth:`validate_next`; the event may be appended to the log before or after."""
        if plan.seq != self._base + self._folded or plan.generation != self._generation or plan.length != len(self._nodes):
            raise SeqlogError(LibCode.STALE_PLAN, f"surface plan for seq {plan.seq} was made for another surface state")
        self._apply(plan)

    def _apply(self, plan: SurfacePlan) -> None:
        if plan.start_index >= 0:
            if plan.replacement is None:
                self._nodes.append(plan.seq)
            else:
                self._nodes[plan.start_index : plan.stop_index] = (plan.seq,)
                self._generation += 1
        self._folded += 1

    def _catch_up(self) -> None:
        """Fold what was appended to the backing log behind the manager's back."""
        log = self._log
        while self._folded < len(log):
            event = log[self._folded]
            self._apply(self._plan(event, self._base + self._folded))

    def _plan(self, event: Event, expected_seq: int) -> SurfacePlan:
        if event.seq != expected_seq:
            raise SeqlogError(Code.SEQ_NOT_CONTIGUOUS, f"event seq {event.seq} is not contiguous; expected {expected_seq}")
        _check_eligibility(event)
        op = event.surface_op
        nodes = self._nodes
        if op is None:
            return SurfacePlan(event.seq, -1, -1, None, self._generation, len(nodes))
        if isinstance(op, Append):
            _check_provenance(event, ())
            return SurfacePlan(event.seq, len(nodes), len(nodes), None, self._generation, len(nodes))
        assert isinstance(op, Replace)
        start_index, end_index = self._range(op)
        shadowed = nodes[start_index : end_index + 1]
        _check_provenance(event, shadowed)
        if event.type == "tool/result":
            _check_rewrite(event, self._event_at(shadowed[0]) if len(shadowed) == 1 else event, len(shadowed))
        replacement = Replacement(event.seq, op.start, op.end, tuple(shadowed))
        return SurfacePlan(event.seq, start_index, end_index + 1, replacement, self._generation, len(nodes))

    def _range(self, op: Replace) -> tuple[int, int]:
        """The surface positions of a replace range: both ends on the surface, in order."""
        nodes = self._nodes
        try:
            start_index = nodes.index(op.start)
        except ValueError:
            raise SeqlogError(Code.REPLACE_START_NOT_ON_SURFACE, f"replace start seq {op.start} is not on the surface") from None
        # The end is looked for after the start first (the usual case, one pass in all); only when
        # it is not there does the head get searched, to tell an inverted range from a missing end.
        try:
            end_index = nodes.index(op.end, start_index)
        except ValueError:
            try:
                end_index = nodes.index(op.end, 0, start_index)
            except ValueError:
                raise SeqlogError(Code.REPLACE_END_NOT_ON_SURFACE, f"replace end seq {op.end} is not on the surface") from None
        if start_index > end_index:
            raise SeqlogError(
                Code.REPLACE_RANGE_INVERTED,
                f"replace start seq {op.start} (index {start_index}) is after end seq {op.end} (index {end_index})",
            )
        return start_index, end_index

    def _event_at(self, seq: int) -> Event:
        index = seq - self._base
        if not 0 <= index < len(self._log):
            raise SeqlogError(LibCode.OUTSIDE_WINDOW, f"surface seq {seq} lies outside the loaded window")
        return self._log[index]


def fold_surface(events: Sequence[Event] | Mapping[int, Event]) -> FoldedSurface:
    """Replay a whole log from seq 0 through the surface rules, recording every replacement."""
    log: list[Event] = []
    manager = SurfaceManager(log)
    replacements: list[Replacement] = []
    for event in events if not isinstance(events, Mapping) else events.values():
        plan = manager.validate_next(event)
        log.append(event)
        manager.commit(plan)
        if plan.replacement is not None:
            replacements.append(plan.replacement)
    return FoldedSurface(tuple(manager.nodes), manager.replace_generation, tuple(replacements))
