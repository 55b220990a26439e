"""Examples are generated afresh: no example is a copy of parts of another."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionlog_spec.suite.profiles import fresh_examples

_SETTINGS = settings(max_examples=80, database=None, derandomize=True, deadline=None)


def _examples() -> list[list[int]]:
    """The lists of three wide integers a Hypothesis test is given, in order."""
    seen: list[list[int]] = []

    @_SETTINGS
    @given(st.lists(st.integers(0, 2**40), min_size=3, max_size=3))
    def collect(values: list[int]) -> None:
        seen.append(values)

    collect()
    return seen


def _repeating(examples: list[list[int]]) -> int:
    """How many examples hold a drawn value twice: a copy of one span over another of the same label.

    Zero is left out: Hypothesis fills the tail of its first few examples with the simplest value.
    """
    return sum(any(v and values.count(v) > 1 for v in values) for values in examples)


def test_hypothesis_on_its_own_copies_values_between_spans() -> None:
    # The behaviour fresh_examples switches off: without it, copies show up among the examples.
    assert _repeating(_examples()) > 0


def test_under_fresh_examples_no_example_copies_a_span() -> None:
    with fresh_examples():
        examples = _examples()
    assert len(examples) >= 60
    assert _repeating(examples) == 0


def test_fresh_examples_puts_the_mutator_back() -> None:
    with fresh_examples():
        pass
    assert _repeating(_examples()) > 0
