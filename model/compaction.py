"""Tool-pairing balance at the cuts of the surface, and the ranges a replacement may cover.

Walking the surface from head to tail, an ``assistant/message`` opens one pending call per
``tool-call`` block and a ``tool/result`` closes one.  A *cut* is a gap between adjacent nodes
(a surface of N nodes has N + 1 cuts); it is *balanced* when no call is pending there.  A
compaction may only cover a region whose bounding cuts are both balanced, so no compaction
separates a tool call from its result.  The balance is the compactor's rule, read when it chooses
a region; the log accepts a replacement over any contiguous range, as the released session does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sessionlog_spec.model.event import Event
from sessionlog_spec.model.messages import tool_call_ids
from sessionlog_spec.model.surface import Surface
from sessionlog_spec.model.violation import Code, Violation


def pairing_delta(event: Event) -> int:
    """How an event moves the pending-call count: +calls for assistant messages, −1 for results."""
    if event.type == "tool/result":
        return -1
    return len(tool_call_ids(event))


def running_counts(nodes: Sequence[int], log: Sequence[Event]) -> tuple[int, ...] | Violation:
    """INV-COMPACT-1: the pending-call count at each of the N + 1 cuts; never negative."""
    return _extend_counts((0,), nodes, log)


def _extend_counts(counted: tuple[int, ...], nodes: Sequence[int], log: Sequence[Event]) -> tuple[int, ...] | Violation:
    """``counted`` followed by the counts at the cuts after each of ``nodes``."""
    counts = list(counted)
    for seq in nodes:
        count = counts[-1] + pairing_delta(log[seq])
        if count < 0:
            return Violation(Code.TOOL_PAIRING_NEGATIVE, f"tool/result at surface seq {seq} has no matching tool call")
        counts.append(count)
    return tuple(counts)


def cut_balances(nodes: Sequence[int], log: Sequence[Event]) -> tuple[bool, ...] | Violation:
    """INV-COMPACT-2: whether each of the N + 1 cuts is balanced."""
    counts = running_counts(nodes, log)
    return counts if isinstance(counts, Violation) else tuple(c == 0 for c in counts)


def surface_index(nodes: Sequence[int], seq: object) -> int | None:
    """Where ``seq`` stands on the surface, compared as JSON compares numbers: ``1.0`` is the node 1;
    ``true``, ``"1"`` or ``null`` is no seq (``None`` when not on the surface)."""
    if isinstance(seq, bool) or not isinstance(seq, int | float):
        return None
    return next((index for index, node in enumerate(nodes) if node == seq), None)


def balanced_around(nodes: Sequence[int], log: Sequence[Event], seq: object) -> tuple[bool, bool] | Violation:
    """INV-COMPACT-5: whether the cuts just before and just after surface node ``seq`` are balanced."""
    index = surface_index(nodes, seq)
    if index is None:
        return Violation(Code.NOT_ON_SURFACE, f"surface seq {seq} not found")
    balances = cut_balances(nodes, log)
    if isinstance(balances, Violation):
        return balances
    return balances[index], balances[index + 1]


def legal_ranges(nodes: Sequence[int], log: Sequence[Event]) -> tuple[tuple[int, int], ...] | Violation:
    """INV-COMPACT-3: every ``(start, end)`` seq pair a compaction may replace, in surface order."""
    balances = cut_balances(nodes, log)
    if isinstance(balances, Violation):
        return balances
    return tuple((nodes[i], nodes[j]) for i in range(len(nodes)) if balances[i] for j in range(i, len(nodes)) if balances[j + 1])


def region_shadowed(nodes: Sequence[int], log: Sequence[Event], start: object, end: object) -> tuple[int, ...] | Violation:
    """INV-COMPACT-3: the surface nodes a compaction of ``start..end`` would replace, if that region is legal.

    A compactor checks its region before it writes anything: both bounds on the surface, in
    order, and the cuts before ``start`` and after ``end`` balanced, so no compaction separates a
    tool call from its result.  The session itself accepts a replacement over any contiguous range.
    """
    first, last = surface_index(nodes, start), surface_index(nodes, end)
    if first is None:
        return Violation(Code.REPLACE_START_NOT_ON_SURFACE, f"compaction region start seq {start} not found in surface")
    if last is None:
        return Violation(Code.REPLACE_END_NOT_ON_SURFACE, f"compaction region end seq {end} not found in surface")
    if first > last:
        return Violation(Code.REPLACE_RANGE_INVERTED, f"compaction region start seq {start} comes after end seq {end}")
    balances = cut_balances(nodes, log)
    if isinstance(balances, Violation):
        return balances
    for cut, bound in ((first, f"before {start}"), (last + 1, f"after {end}")):
        if not balances[cut]:
            return Violation(Code.REPLACE_SPLITS_TOOL_PAIR, f"compaction region {start}..{end}: the cut {bound} is not balanced")
    return tuple(nodes[first : last + 1])


@dataclass(frozen=True, slots=True)
class CutCache:
    """Per-cut balance for one surface, kept across appends and rebuilt after a replacement."""

    generation: int
    nodes: tuple[int, ...]
    counts: tuple[int, ...]

    @property
    def balanced(self) -> tuple[bool, ...]:
        """Whether each of the N + 1 cuts is balanced."""
        return tuple(c == 0 for c in self.counts)


def update_cut_cache(cache: CutCache | None, surface: Surface, log: Sequence[Event]) -> CutCache | Violation:
    """INV-COMPACT-4: the cache for ``surface``, extended when only appends happened, else rebuilt.

    The result always equals :func:`running_counts` computed from scratch; the cache only saves work.
    """
    extends = (
        cache is not None
        and cache.generation == surface.replace_generation
        and len(surface.nodes) >= len(cache.nodes)
        and surface.nodes[: len(cache.nodes)] == cache.nodes
    )
    if cache is not None and extends:
        extended = _extend_counts(cache.counts, surface.nodes[len(cache.nodes) :], log)
        if isinstance(extended, Violation):
            return extended
        return CutCache(surface.replace_generation, surface.nodes, extended)
    fresh = running_counts(surface.nodes, log)
    if isinstance(fresh, Violation):
        return fresh
    return CutCache(surface.replace_generation, surface.nodes, fresh)
