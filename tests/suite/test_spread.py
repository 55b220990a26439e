"""Kinds spread over a run: a copied draw picks afresh on another session, the same one replays."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.strategies import DrawFn

from sessionlog_spec.suite.agent.actions import NOTE_VARIANTS, TEXTS, TURN_END_KINDS, build_action
from sessionlog_spec.suite.agent.builder import SessionBuilder
from sessionlog_spec.suite.spread import choose, spread

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


# -- the values an event holds ------------------------------------------------------------------


def _prompted(start: int) -> SessionBuilder:
    """A session whose turn opened at ``start`` (sessions that differ in nothing else)."""
    builder = SessionBuilder(time=start)
    builder.turn_start()
    return builder


def test_a_copied_draw_types_every_text_over_the_sessions_it_lands_on() -> None:
    # The text of a prompt is drawn deep inside build_action, which sees only a draw function: the
    # draw carries the session there, so one copied number still types every text of the pool.
    texts = Counter(
        build_action(_drawing(0), _prompted(start), "user_message")["data"]["content"][0]["text"] for start in range(400)
    )
    assert set(texts) == set(TEXTS)
    assert min(texts.values()) >= 20


def test_every_value_pool_spreads_over_the_sessions_it_lands_on() -> None:
    ended = Counter(build_action(_drawing(0), _prompted(start), "turn_end")["data"]["reason"]["kind"] for start in range(400))
    assert set(ended) == set(TURN_END_KINDS)
    notes = Counter(
        json.dumps(build_action(_drawing(1), _prompted(start), "turn_only")["data"], sort_keys=True) for start in range(400)
    )
    assert len(notes) >= NOTE_VARIANTS


@settings(max_examples=20, database=None)
@given(st.data())
def test_a_plain_draw_function_still_draws_from_the_pool(data: st.DataObject) -> None:
    assert choose(cast(DrawFn, data.draw), TEXTS, "text") in TEXTS


def test_a_session_taken_over_from_its_state_has_the_fingerprint_of_the_live_one() -> None:
    live = _prompted(7)
    live.user_message("first")
    before = live.fingerprint
    live.user_message("second")
    assert live.fingerprint != before
    assert SessionBuilder(live.state).fingerprint == live.fingerprint
