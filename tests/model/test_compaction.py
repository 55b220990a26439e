"""INV-COMPACT: the pending-call balance at every cut, legal compaction ranges and the per-cut cache.

Most tests use one closed turn whose surface is ``(1, 3, 5, 7, 10)``: a user message (1), an
assistant message asking two calls (3), their results (5, 7) and a final answer (10).  Walking it,
the pending count at the six cuts is ``[0, 0, 2, 1, 0, 0]``.
"""

from __future__ import annotations

from typing import Any

import pytest
from model_cases import (
    assistant_data,
    call_data,
    code_of,
    ev,
    open_step_with_pending,
    refusal,
    replace,
    replacing,
    result_data,
    session,
    user,
)

from sessionlog_spec.contracts.compaction import (
    balanced_around,
    cut_balances,
    legal_ranges,
    region_shadowed,
    running_counts,
    update_cut_cache,
)
from sessionlog_spec.model.compaction import CutCache
from sessionlog_spec.model.event import Event
from sessionlog_spec.model.session import SessionState
from sessionlog_spec.model.surface import Surface
from sessionlog_spec.model.violation import Code

NODES = (1, 3, 5, 7, 10)
COUNTS = (0, 0, 2, 1, 0, 0)
LEGAL = ((1, 1), (1, 7), (1, 10), (3, 7), (3, 10), (10, 10))


def turn_raws() -> list[dict[str, Any]]:
    """The example turn, still open after its second step ended (seqs 0..11)."""
    return [
        ev("turn/start", 0, {"turn": 1}),
        user(1),
        ev("step/start", 2, {"turn": 1, "step": 1}),
        ev("assistant/message", 3, assistant_data(1, 1, ["c1", "c2"], id_="a3"), surfaceOp="append"),
        ev("tool/call", 4, call_data(1, 1, "c1")),
        ev("tool/result", 5, result_data(1, 1, "c1"), surfaceOp="append"),
        ev("tool/call", 6, call_data(1, 1, "c2")),
        ev("tool/result", 7, result_data(1, 1, "c2"), surfaceOp="append"),
        ev("step/end", 8, {"turn": 1, "step": 1}),
        ev("step/start", 9, {"turn": 1, "step": 2}),
        ev("assistant/message", 10, assistant_data(1, 2, id_="a10", text="Done."), surfaceOp="append"),
        ev("step/end", 11, {"turn": 1, "step": 2}),
    ]


def example() -> SessionState:
    """The example session."""
    state = session(turn_raws())
    assert state.surface.nodes == NODES
    return state


# -- INV-COMPACT-1: the count never goes negative -------------------------------------------------------------


def test_inv_compact_1_running_counts_walk_the_surface() -> None:
    """+2 for the two-call message, −1 per result, 0 for the rest."""
    state = example()
    assert running_counts(state.surface.nodes, state.events) == COUNTS


def test_inv_compact_1_result_before_its_call_is_negative() -> None:
    """A surface order with a result ahead of every call is refused."""
    state = example()
    assert code_of(running_counts((5, 3, 7), state.events)) is Code.TOOL_PAIRING_NEGATIVE


def test_inv_compact_1_the_log_accepts_a_compaction_that_orphans_results() -> None:
    """Replacing the two-call message alone leaves results 5 and 7 without a call: the log takes
    it (the released session does), and the surface then has no balance to read."""
    state = session([replacing(12, 3, 3, 3)], example())
    assert state.surface.nodes == (1, 12, 5, 7, 10)
    assert code_of(running_counts(state.surface.nodes, state.events)) is Code.TOOL_PAIRING_NEGATIVE
    assert code_of(cut_balances(state.surface.nodes, state.events)) is Code.TOOL_PAIRING_NEGATIVE
    assert code_of(balanced_around(state.surface.nodes, state.events, 10)) is Code.TOOL_PAIRING_NEGATIVE
    assert code_of(region_shadowed(state.surface.nodes, state.events, 10, 10)) is Code.TOOL_PAIRING_NEGATIVE


def test_inv_compact_1_surplus_results_are_refused_by_the_trace_not_the_balance() -> None:
    """A second result for an answered call, or one outside any step, has its own trace code."""
    state = session([ev("step/start", 12, {"turn": 1, "step": 3})], example())
    again = ev("tool/result", 13, result_data(1, 3, "c1", id_="r-again"), surfaceOp="append")
    assert refusal(state, again) is Code.TOOL_RESULT_UNPAIRED
    assert refusal(example(), ev("tool/result", 12, result_data(1, 2, "c9"), surfaceOp="append")) is Code.EVENT_OUTSIDE_STEP


# -- INV-COMPACT-2: cuts -----------------------------------------------------------------------------------


def test_inv_compact_2_n_nodes_have_n_plus_one_cuts() -> None:
    """Five nodes, six cuts; balanced exactly where the count is zero."""
    state = example()
    assert cut_balances(state.surface.nodes, state.events) == (True, True, False, False, True, True)


def test_inv_compact_2_empty_surface_has_one_balanced_cut() -> None:
    """The cut before the head exists even with no nodes."""
    assert cut_balances((), ()) == (True,)


def test_inv_compact_2_open_trailing_step_leaves_its_cuts_unbalanced() -> None:
    """With calls ``d`` and ``e`` still pending, no cut after the step's assistant message is balanced."""
    state = open_step_with_pending().state
    assert state.surface.nodes == (1, 4, 6, 8, 11, 13)
    assert cut_balances(state.surface.nodes, state.events) == (True, True, False, False, True, False, False)


# -- INV-COMPACT-3: legal ranges -----------------------------------------------------------------------------


def test_inv_compact_3_legal_ranges_have_balanced_bounds() -> None:
    """Every (start, end) whose cut before start and cut after end are both balanced, in surface order."""
    state = example()
    assert legal_ranges(state.surface.nodes, state.events) == LEGAL


def test_inv_compact_3_open_step_has_no_legal_range_into_it() -> None:
    """Nothing that touches the open step's message or results is legal."""
    state = open_step_with_pending().state
    assert legal_ranges(state.surface.nodes, state.events) == ((1, 1), (1, 8), (4, 8))


@pytest.mark.parametrize("start, end", LEGAL)
def test_inv_compact_3_a_legal_region_shadows_its_nodes(start: int, end: int) -> None:
    """A compactor may take any legal range; the region shadows the nodes from start to end, and the
    log takes the summary that replaces them."""
    state = example()
    shadowed = tuple(n for n in NODES if NODES.index(start) <= NODES.index(n) <= NODES.index(end))
    assert region_shadowed(state.surface.nodes, state.events, start, end) == shadowed
    assert refusal(state, replacing(12, start, end, *shadowed)) is None


SPLITTING = [(1, 3), (1, 5), (3, 3), (3, 5), (5, 5), (5, 7), (5, 10), (7, 10)]


@pytest.mark.parametrize("start, end", SPLITTING)
def test_inv_compact_3_a_region_splitting_a_tool_pair_is_refused(start: int, end: int) -> None:
    """A region that ends between a call and its result, or starts between them, is refused."""
    state = example()
    assert code_of(region_shadowed(state.surface.nodes, state.events, start, end)) is Code.REPLACE_SPLITS_TOOL_PAIR


@pytest.mark.parametrize("start, end", SPLITTING)
def test_inv_compact_3_the_log_accepts_a_replacement_over_any_contiguous_range(start: int, end: int) -> None:
    """The balance is the compactor's rule: the released session appends such a summary."""
    shadowed = [n for n in NODES if NODES.index(start) <= NODES.index(n) <= NODES.index(end)]
    assert refusal(example(), replacing(12, start, end, *shadowed)) is None


@pytest.mark.parametrize(
    "start, end, code",
    [
        (2, 10, Code.REPLACE_START_NOT_ON_SURFACE),
        (1, 11, Code.REPLACE_END_NOT_ON_SURFACE),
        (2, 11, Code.REPLACE_START_NOT_ON_SURFACE),
        (10, 1, Code.REPLACE_RANGE_INVERTED),
        (7, 3, Code.REPLACE_RANGE_INVERTED),
    ],
)
def test_inv_compact_3_region_bounds_are_checked_first(start: int, end: int, code: Code) -> None:
    """Both bounds on the surface, start first, then their order; only then the balance."""
    state = example()
    assert code_of(region_shadowed(state.surface.nodes, state.events, start, end)) is code


def test_inv_compact_3_a_replacement_may_add_tool_calls() -> None:
    """The released session takes an assistant message that replaces a node and asks for a call."""
    state = session([ev("step/start", 12, {"turn": 1, "step": 3})], example())
    raw = ev("assistant/message", 13, assistant_data(1, 3, ["c9"], id_="a13"), surfaceOp=replace(10, 10), sourceEventSeqs=[10])
    after = session([raw], state)
    assert after.pending_calls == 1
    assert cut_balances(after.surface.nodes, after.events) == (True, True, False, False, True, False)


def test_inv_compact_3_tool_result_rewrite_is_exempt() -> None:
    """Rewriting result 5 inside the unbalanced span is allowed: it keeps the pairing."""
    raw = ev("tool/result", 12, result_data(1, 1, "c1", text="[elided]"), surfaceOp=replace(5, 5), sourceEventSeqs=[5])
    assert refusal(example(), raw) is None


def test_inv_compact_3_an_unbalanced_replacement_is_still_held_to_its_provenance() -> None:
    """The log takes a range that splits a pair, but not one that forgets a node it shadows."""
    assert refusal(example(), replacing(12, 3, 5, 3)) is Code.SOURCES_MISSING_SHADOWED


# -- INV-COMPACT-4: the per-cut cache --------------------------------------------------------------------------


def test_inv_compact_4_cache_built_from_nothing_equals_the_counts() -> None:
    """A first cache holds the counts for every cut."""
    state = example()
    cache = update_cut_cache(None, state.surface, state.events)
    assert cache == CutCache(0, NODES, COUNTS)
    assert isinstance(cache, CutCache) and cache.balanced == (True, True, False, False, True, True)


def test_inv_compact_4_cache_extended_by_appends_equals_a_fresh_one() -> None:
    """A cache for the first two nodes, extended to all five, equals the fresh cache."""
    state = example()
    partial = CutCache(0, (1, 3), (0, 0, 2))
    assert update_cut_cache(partial, state.surface, state.events) == CutCache(0, NODES, COUNTS)


def test_inv_compact_4_cache_is_rebuilt_after_a_replacement() -> None:
    """After compacting 1..7 the generation moves and the stale cache is not extended."""
    state = session([replacing(12, 1, 7, 1, 3, 5, 7)], example())
    assert state.surface == Surface((12, 10), 1)
    stale = CutCache(0, NODES, COUNTS)
    assert update_cut_cache(stale, state.surface, state.events) == CutCache(1, (12, 10), (0, 0, 0))


def test_inv_compact_4_cache_with_a_different_prefix_is_rebuilt() -> None:
    """A cache whose nodes are not a prefix of the surface is not trusted, even at the same generation."""
    state = example()
    wrong = CutCache(0, (3, 5), (0, 9, 9))
    assert update_cut_cache(wrong, state.surface, state.events) == CutCache(0, NODES, COUNTS)


def test_inv_compact_4_extension_refuses_a_negative_count() -> None:
    """Extending over a node that closes a call nobody opened is refused."""
    state = example()
    log: tuple[Event, ...] = state.events
    assert code_of(update_cut_cache(CutCache(0, (1,), (0, 0)), Surface((1, 5), 0), log)) is Code.TOOL_PAIRING_NEGATIVE


# -- INV-COMPACT-5: balance around a node -------------------------------------------------------------------


@pytest.mark.parametrize(
    "seq, expected", [(1, (True, True)), (3, (True, False)), (5, (False, False)), (7, (False, True)), (10, (True, True))]
)
def test_inv_compact_5_balance_around_a_surface_node(seq: int, expected: tuple[bool, bool]) -> None:
    """The cuts just before and just after each node."""
    state = example()
    assert balanced_around(state.surface.nodes, state.events, seq) == expected


@pytest.mark.parametrize("seq", [0, 2, 4, 8, 11, 12, 99])
def test_inv_compact_5_balance_around_a_seq_off_the_surface_is_refused(seq: int) -> None:
    """Brackets, tool calls and seqs past the log have no cuts."""
    state = example()
    assert code_of(balanced_around(state.surface.nodes, state.events, seq)) is Code.NOT_ON_SURFACE


def test_inv_compact_5_shadowed_node_has_no_cuts() -> None:
    """After a compaction the shadowed nodes are off the surface."""
    state = session([replacing(12, 1, 7, 1, 3, 5, 7)], example())
    assert code_of(balanced_around(state.surface.nodes, state.events, 3)) is Code.NOT_ON_SURFACE
    assert balanced_around(state.surface.nodes, state.events, 12) == (True, True)


# -- INV-COMPACT-6: the tracked pending count --------------------------------------------------------------


def test_inv_compact_6_pending_count_follows_the_tail_balance() -> None:
    """The session's pending count after each event equals the count at the last cut."""
    state = SessionState()
    pending = []
    for raw in turn_raws():
        state = session([raw], state)
        pending.append(state.pending_calls)
    assert pending == [0, 0, 0, 2, 2, 1, 1, 0, 0, 0, 0, 0]


def test_inv_compact_6_replacements_keep_the_pending_count() -> None:
    """A rewrite and a compaction leave the tail balance where it was."""
    raws = turn_raws()[:6]  # c2 still pending
    state = session(raws)
    assert state.pending_calls == 1
    rewritten = session(
        [ev("tool/result", 6, result_data(1, 1, "c1", text="[elided]"), surfaceOp=replace(5, 5), sourceEventSeqs=[5])], state
    )
    assert rewritten.pending_calls == 1
    compacted = session([replacing(7, 1, 1, 1)], rewritten)
    assert compacted.pending_calls == 1
    assert running_counts(compacted.surface.nodes, compacted.events) == (0, 0, 2, 1)
