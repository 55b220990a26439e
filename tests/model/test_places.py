"""The places where ``fault_in_place`` submits every candidate of some codes: each is where those
candidates can be built, and the candidates that need a rare moment of a session have a place."""

from __future__ import annotations

import functools
import random

import pytest
from model_cases import BUILDER_STATES

from sessionlog_spec.model.violation import Code
from sessionlog_spec.suite.agent.builder import SessionBuilder
from sessionlog_spec.suite.agent.candidates import MUTATIONS
from sessionlog_spec.suite.agent.loop import AgentLoop
from sessionlog_spec.suite.machines.agent import PLACES, Place

SEEDS = range(4)


@functools.cache
def _builders() -> dict[str, SessionBuilder]:
    return {name: make() for name, make in BUILDER_STATES.items()}


def _reached(place: Place, builder: SessionBuilder) -> bool:
    return place.reached(AgentLoop.from_state(builder.state))


@pytest.mark.parametrize("place", PLACES, ids=[p.name for p in PLACES])
def test_every_place_builds_a_candidate_of_each_of_its_codes_where_it_is_reached(place: Place) -> None:
    reached = [b for b in _builders().values() if _reached(place, b)]
    assert reached, f"no builder state reaches {place.name!r}"
    for code in place.codes:
        mutations = [m for m in MUTATIONS if m.code is code and (m.context == "append" or not place.live_only)]
        built = any(m.build(b, random.Random(seed)) is not None for b in reached for m in mutations for seed in SEEDS)
        assert built, f"{code.value}: no candidate builds at {place.name!r}"


REWRITE_CODES = frozenset({Code.TOOL_REWRITE_SPAN, Code.TOOL_REWRITE_TARGET, Code.TOOL_REWRITE_CHANGES})


def test_inv_surf_11_every_live_rewrite_candidate_builds_only_at_a_place_of_its_code() -> None:
    """A live tool-result rewrite needs a tool result on the surface of an open turn, a moment an
    inject step finds now and then: wherever one builds, a place submits every rewrite candidate
    (one of them changes the result's ``meta``, which a port that compares rewrites loosely keeps)."""
    checked = 0
    for name, builder in _builders().items():
        for m in (m for m in MUTATIONS if m.code in REWRITE_CODES and m.context == "append" and m.lifted_from is None):
            if any(m.build(builder, random.Random(seed)) is not None for seed in SEEDS):
                checked += 1
                places = [p for p in PLACES if m.code in p.codes and _reached(p, builder)]
                assert places, f"{m.name} builds on {name} at no place of {m.code.value}"
    assert checked
