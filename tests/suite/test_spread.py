"""Kinds spread over a run: a copied draw picks afresh on another session, the same one replays."""

from __future__ import annotations

from collections import Counter
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.strategies import DrawFn

from sessionlog_spec.suite.spread import spread

KINDS = tuple(f"kind-{i}" for i in range(8))


def _drawing(salt: int) -> Any:
    """A draw function that answers every draw with ``salt`` (as a copied choice sequence does)."""
    return lambda strategy, label=None: salt


def test_the_same_draw_on_the_same_session_picks_the_same_kind() -> None:
    log = [{"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}}]
    assert spread(_drawing(7), KINDS, log, "kind") == spread(_drawing(7), KINDS, [dict(e) for e in log], "kind")


def test_one_copied_draw_picks_every_kind_over_the_sessions_it_lands_on() -> None:
    # Hypothesis copies choice sequences between examples: the same number drawn on 800 different
    # sessions must not keep picking one kind.
    picked = Counter(spread(_drawing(0), KINDS, {"events": n}, "kind") for n in range(800))
    assert set(picked) == set(KINDS)
    assert min(picked.values()) >= 50


def test_a_run_of_examples_picks_every_kind() -> None:
    picked: Counter[str] = Counter()

    @settings(max_examples=60, database=None)
    @given(st.data())
    def example(data: st.DataObject) -> None:
        log: list[int] = []
        for _ in range(10):
            kind = spread(cast(DrawFn, data.draw), KINDS, log, "kind")
            picked[kind] += 1
            log.append(KINDS.index(kind))

    example()
    assert set(picked) == set(KINDS)


def test_nothing_to_choose_is_an_error() -> None:
    with pytest.raises(ValueError, match="nothing to choose"):
        spread(_drawing(0), (), [], "kind")
