"""Invalid candidates of the tool-pairing balance a compactor reads (``INV-COMPACT``; the contracts
are :mod:`sessionlog_spec.contracts.compaction`): ``cuts`` candidates whose region splits a tool
pair, is inverted or leaves the surface, and cuts that would orphan results (INV-COMPACT-1, -3, -5,
with the INV-SURF-4 codes a region shares with a replace).
"""

from __future__ import annotations

import random
from typing import Any

from sessionlog_spec.model.compaction import pairing_delta, running_counts
from sessionlog_spec.model.session import append_event as model_append_event
from sessionlog_spec.model.violation import Code, Violation
from sessionlog_spec.suite.agent.builder import RawEvent, SessionBuilder
from sessionlog_spec.suite.agent.candidates.base import Registry, _off_surface_seqs, _scratch, _shadowed_seqs

REGISTERED = Registry()
"""This module's mutations, in the order their builders are defined below."""
candidate = REGISTERED.candidate


# -- tool-pairing balance (INV-COMPACT-1, -3, -5) --------------------------------------------------
# The log accepts any contiguous replacement; the balance is read by a compactor through ``cuts``.
# A ``cuts`` candidate is the request's members beyond the builder's log: ``seq``, ``region``, or
# a whole ``events`` list that replaces the log.


def _splitting_regions(b: SessionBuilder) -> dict[str, list[tuple[int, int]]]:
    """Ranges that are not legal, by which bounding cut has a call pending: the start's, the end's, or both."""
    nodes = b.state.surface.nodes
    counts = running_counts(nodes, b.state.events)
    if isinstance(counts, Violation):
        return {}
    out: dict[str, list[tuple[int, int]]] = {}
    for i in range(len(nodes)):
        for j in range(i, len(nodes)):
            kind = {(True, False): "start", (False, True): "end", (True, True): "both"}.get((counts[i] != 0, counts[j + 1] != 0))
            if kind is not None:
                out.setdefault(kind, []).append((nodes[i], nodes[j]))
    return out


@candidate(Code.REPLACE_SPLITS_TOOL_PAIR, "cuts")
def region_splits_pair(builder: SessionBuilder, rng: random.Random) -> object:
    """A compaction region whose start or end cut (or both) has a call pending: it would separate a
    call from its result.  Which cut is drawn first, so a check of one cut alone is caught as often
    as a check of the other."""
    splits = _splitting_regions(_scratch(builder))
    if not splits:
        return None
    start, end = rng.choice(splits[rng.choice(sorted(splits))])
    return {"region": {"start": start, "end": end}}


@candidate(Code.REPLACE_RANGE_INVERTED, "cuts")
def region_inverted(builder: SessionBuilder, rng: random.Random) -> object:
    """A compaction region whose start comes after its end on the surface."""
    nodes = _scratch(builder).state.surface.nodes
    if len(nodes) < 2:
        return None
    i, j = sorted(rng.sample(range(len(nodes)), 2))
    return {"region": {"start": nodes[j], "end": nodes[i]}}


@candidate(Code.REPLACE_START_NOT_ON_SURFACE, "cuts")
def region_start_off_surface(builder: SessionBuilder, rng: random.Random) -> object:
    """A compaction region starting at a seq that is not a surface node (shadowed, log-only or unwritten)."""
    b = _scratch(builder)
    if not b.state.surface.nodes:
        return None
    start = rng.choice(_shadowed_seqs(b) or _off_surface_seqs(b) or [b.next_seq])
    return {"region": {"start": start, "end": rng.choice(b.state.surface.nodes)}}


@candidate(Code.REPLACE_END_NOT_ON_SURFACE, "cuts")
def region_end_off_surface(builder: SessionBuilder, rng: random.Random) -> object:
    """A compaction region ending at a seq that is not a surface node."""
    b = _scratch(builder)
    if not b.state.surface.nodes:
        return None
    end = rng.choice(_shadowed_seqs(b) or _off_surface_seqs(b) or [b.next_seq + rng.randrange(3)])
    return {"region": {"start": rng.choice(b.state.surface.nodes), "end": end}}


def orphaning_spans(b: SessionBuilder) -> list[tuple[int, int]]:
    """The ranges a summary may replace (the log takes them) that leave a surface result without its
    call: from an assistant message that asked for calls to before the last result answering them."""
    nodes = b.state.surface.nodes
    deltas = [pairing_delta(b.state.events[seq]) for seq in nodes]

    def orphans(i: int, j: int) -> bool:
        count = 0
        for delta in (*deltas[:i], 0, *deltas[j + 1 :]):
            count += delta
            if count < 0:
                return True
        return False

    return [(nodes[i], nodes[j]) for i in range(len(nodes)) if deltas[i] > 0 for j in range(i, len(nodes)) if orphans(i, j)]


def _orphaning_compaction(b: SessionBuilder, rng: random.Random) -> RawEvent | None:
    """A summary the log accepts over one of the :func:`orphaning_spans`."""
    spans = orphaning_spans(b)
    if not spans:
        return None
    summary = b.compaction(*rng.choice(spans), commit=False)
    return None if isinstance(model_append_event(b.state, summary), Violation) else summary


@candidate(Code.TOOL_PAIRING_NEGATIVE, "cuts")
def cuts_of_orphaned_results(builder: SessionBuilder, rng: random.Random) -> object:
    """The cuts of a log whose compaction orphaned results: the log accepts it, but its surface has no balance."""
    b = _scratch(builder)
    summary = _orphaning_compaction(b, rng)
    if summary is None:
        return None
    ask: dict[str, Any] = {"events": [*b.events, summary]}
    choice = rng.randrange(3)
    if choice == 1:
        ask["seq"] = rng.choice(b.state.surface.nodes)
    elif choice == 2:
        ask["region"] = {"start": b.state.surface.nodes[0], "end": b.state.surface.nodes[-1]}
    return ask


@candidate(Code.NOT_ON_SURFACE, "cuts")
def cuts_off_surface(builder: SessionBuilder, rng: random.Random) -> object:
    """A balance query for a seq that is not on the surface: shadowed, log-only, or not yet written."""
    b = _scratch(builder)
    return {"seq": rng.choice(_shadowed_seqs(b) or _off_surface_seqs(b) or [b.next_seq])}
