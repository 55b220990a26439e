"""INV-COMPACT: pending-call balance at every cut, legal ranges, and the per-cut cache."""

from __future__ import annotations

from collections.abc import Sequence

import icontract

from sessionlog_spec.contracts import ENABLED
from sessionlog_spec.contracts._support import accepted, rejected_with
from sessionlog_spec.model import compaction as _compaction
from sessionlog_spec.model.compaction import CutCache
from sessionlog_spec.model.event import Event
from sessionlog_spec.model.messages import tool_call_ids
from sessionlog_spec.model.surface import Surface
from sessionlog_spec.model.violation import Code, Violation


def _counts(nodes: Sequence[int], log: Sequence[Event]) -> list[int]:
    counts = [0]
    for seq in nodes:
        event = log[seq]
        delta = -1 if event.type == "tool/result" else len(tool_call_ids(event))
        counts.append(counts[-1] + delta)
    return counts


@icontract.ensure(
    lambda nodes, log, result: not accepted(result) or (len(result) == len(nodes) + 1 and min(result) >= 0),
    "INV-COMPACT-1",
    enabled=ENABLED,
)
@icontract.ensure(lambda nodes, log, result: accepted(result) or min(_counts(nodes, log)) < 0, "INV-COMPACT-1", enabled=ENABLED)
def running_counts(nodes: Sequence[int], log: Sequence[Event]) -> tuple[int, ...] | Violation:
    """The pending-call count at every cut."""
    return _compaction.running_counts(nodes, log)


@icontract.ensure(
    lambda nodes, result: not accepted(result) or (len(result) == len(nodes) + 1 and result[0]),
    "INV-COMPACT-2",
    enabled=ENABLED,
)
def cut_balances(nodes: Sequence[int], log: Sequence[Event]) -> tuple[bool, ...] | Violation:
    """Whether each cut is balanced."""
    return _compaction.cut_balances(nodes, log)


def ranges_have_balanced_bounds(nodes: Sequence[int], log: Sequence[Event], result: tuple[tuple[int, int], ...]) -> bool:
    """INV-COMPACT-3."""
    counts = _counts(nodes, log)
    position = {seq: i for i, seq in enumerate(nodes)}
    expected = {
        (nodes[i], nodes[j]) for i in range(len(nodes)) for j in range(i, len(nodes)) if counts[i] == 0 and counts[j + 1] == 0
    }
    return set(result) == expected and all(position[s] <= position[e] for s, e in result)


@icontract.ensure(
    lambda nodes, log, result: not accepted(result) or ranges_have_balanced_bounds(nodes, log, result),
    "INV-COMPACT-3",
    enabled=ENABLED,
)
def legal_ranges(nodes: Sequence[int], log: Sequence[Event]) -> tuple[tuple[int, int], ...] | Violation:
    """Every range a compaction may replace."""
    return _compaction.legal_ranges(nodes, log)


@icontract.ensure(
    lambda surface, log, result: not accepted(result) or list(result.counts) == _counts(surface.nodes, log),
    "INV-COMPACT-4",
    enabled=ENABLED,
)
def update_cut_cache(cache: CutCache | None, surface: Surface, log: Sequence[Event]) -> CutCache | Violation:
    """The per-cut balance cache for ``surface``."""
    return _compaction.update_cut_cache(cache, surface, log)


@icontract.ensure(
    lambda nodes, seq, result: seq in nodes or rejected_with(result, Code.NOT_ON_SURFACE), "INV-COMPACT-5", enabled=ENABLED
)
def balanced_around(nodes: Sequence[int], log: Sequence[Event], seq: int) -> tuple[bool, bool] | Violation:
    """Whether the cuts around surface node ``seq`` are balanced."""
    return _compaction.balanced_around(nodes, log, seq)


def pending_is_tail_balance(nodes: Sequence[int], log: Sequence[Event], pending: int) -> bool:
    """INV-COMPACT-6."""
    return _counts(nodes, log)[-1] == pending


def region_is_legal(nodes: Sequence[int], log: Sequence[Event], start: int, end: int, result: tuple[int, ...]) -> bool:
    """INV-COMPACT-3: an accepted region is one of the legal ranges, and shadows exactly its nodes."""
    counts = _counts(nodes, log)
    i, j = list(nodes).index(start), list(nodes).index(end)
    return i <= j and counts[i] == 0 and counts[j + 1] == 0 and min(counts) >= 0 and result == tuple(nodes[i : j + 1])


def region_refusal_is_right(nodes: Sequence[int], log: Sequence[Event], start: int, end: int, result: Violation) -> bool:
    """INV-COMPACT-3: a refused region is off the surface, inverted, on a corrupt surface, or unbalanced at a bound."""
    if start not in nodes:
        return result.code is Code.REPLACE_START_NOT_ON_SURFACE
    if end not in nodes:
        return result.code is Code.REPLACE_END_NOT_ON_SURFACE
    i, j = list(nodes).index(start), list(nodes).index(end)
    counts = _counts(nodes, log)
    if i > j:
        return result.code is Code.REPLACE_RANGE_INVERTED
    if min(counts) < 0:
        return result.code is Code.TOOL_PAIRING_NEGATIVE
    return result.code is Code.REPLACE_SPLITS_TOOL_PAIR and (counts[i] != 0 or counts[j + 1] != 0)


@icontract.ensure(
    lambda nodes, log, start, end, result: (
        region_is_legal(nodes, log, start, end, result)
        if accepted(result)
        else region_refusal_is_right(nodes, log, start, end, result)
    ),
    "INV-COMPACT-3",
    enabled=ENABLED,
)
def region_shadowed(nodes: Sequence[int], log: Sequence[Event], start: int, end: int) -> tuple[int, ...] | Violation:
    """The nodes a compaction of ``start..end`` would replace, if that region is legal."""
    return _compaction.region_shadowed(nodes, log, start, end)
