"""The variant walk: every option of every choice is tried, alone before combined, deterministically."""

from __future__ import annotations

import random

from sessionlog_spec.suite.agent.variants import BRANCHING_CHOICES, FEW, variants


def _two_choices(_: None, rng: random.Random) -> str:
    return rng.choice("abc") + rng.choice("xyz")


def test_every_option_of_every_choice_is_tried() -> None:
    found = list(variants(_two_choices, None))
    assert {v[0] for v in found} == set("abc")
    assert {v[1] for v in found} == set("xyz")


def test_single_changes_come_before_pairs() -> None:
    found = list(variants(_two_choices, None))
    first_pair = next(i for i, v in enumerate(found) if v[0] != "a" and v[1] != "x")
    singles = [v for v in found if v[0] == "a" or v[1] == "x"]
    assert first_pair == len(singles) == 5  # "ax", "ay", "az", "bx", "cx"


def test_a_probability_is_tried_both_ways() -> None:
    found = list(variants(lambda _, rng: "rare" if rng.random() < 0.01 else "common", None))
    assert sorted(found) == ["common", "rare"]


def test_a_choice_among_many_is_tried_at_a_few_options() -> None:
    found = list(variants(lambda _, rng: rng.randrange(1000), None))
    assert 0 in found and 999 in found and len(found) < FEW


def test_unbuildable_paths_are_skipped_and_duplicates_dropped() -> None:
    found = list(variants(lambda _, rng: None if rng.random() < 0.5 else rng.choice([1, 1, 2]), None))
    assert sorted(found) == [1, 2]


def test_the_walk_is_deterministic_and_bounded() -> None:
    def many(_: None, rng: random.Random) -> tuple[int, ...]:
        return tuple(rng.randrange(5) for _ in range(6))

    assert list(variants(many, None, limit=10)) == list(variants(many, None, limit=10))
    assert len(list(variants(many, None, limit=10))) == 10


def test_a_builder_with_thousands_of_choices_is_walked_in_bounded_time_and_memory() -> None:
    def deep(_: None, rng: random.Random) -> str:
        return "".join(rng.choice("[{") for _ in range(50_000))

    found = list(variants(deep, None, limit=5, runs=10))
    assert len(found) == 5
    assert all(v[BRANCHING_CHOICES:] == "[" * (50_000 - BRANCHING_CHOICES) for v in found)
