"""A port's result agrees with the model's exactly when they are the same JSON value (``spec/suite/agreement.py``)."""

from __future__ import annotations

import copy
import enum
import uuid
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import property_settings, raw_json

from sessionlog_spec.model.json_value import json_equal
from sessionlog_spec.suite.agreement import same_json

NAN = float("nan")


class _Text(str):
    """A ``str`` subclass: no JSON reader makes one."""


class _Colour(enum.Enum):
    RED = "red"


def _respelt(value: Any, how: int) -> Any:
    """``value`` written another way: numbers as floats or flags, members reordered, arrays as tuples, ``null`` as NaN."""
    if isinstance(value, dict):
        members = list(value.items())
        if how % 2:
            members.reverse()
        return {key: _respelt(member, how // 2) for key, member in members}
    if isinstance(value, list | tuple):
        items = [_respelt(item, how // 3) for item in value]
        return tuple(items) if how % 3 == 1 else items
    if value is None and how % 5 == 4:
        return NAN
    if type(value) is int and how % 7 in (1, 2):
        return float(value) if how % 7 == 1 and abs(value) < 2**53 else bool(value)
    if type(value) is str and how % 11 == 3:
        return _Text(value)
    return value


@pytest.mark.parametrize(
    ("expected", "actual"),
    [
        ({"a": 1}, {"a": 1.0}),
        ({"a": 1}, {"a": True}),
        ([0], [False]),
        ([0.0], [-0.0]),
        ({"a": None}, {"a": NAN}),
        ([NAN], [NAN]),
        ({"a": "red"}, {"a": _Colour.RED}),
        (["00000000-0000-0000-0000-000000000000"], [uuid.UUID(int=0)]),
        (["x"], [_Text("x")]),
        ({"a": 1, "b": [1, 2]}, {"b": (1, 2), "a": 1}),
        ([2**70], [2**70]),
        ([2**70], [float(2**70)]),
    ],
)
def test_results_agree_exactly_when_json_values_are_equal(expected: object, actual: object) -> None:
    assert same_json(expected, actual) == json_equal(expected, actual)
    assert same_json(actual, expected) == json_equal(actual, expected)


def test_results_agree_with_themselves_unless_not_a_number() -> None:
    # The same object on both sides proves nothing: a NaN in it is no equal of itself.
    shared = [NAN]
    assert same_json(shared, shared) is json_equal(shared, shared) is False
    result = {"length": 3, "nodes": [0, 2], "header": {"config": {"provider": "p"}}}
    assert same_json(result, result) is json_equal(result, result) is True


@property_settings()
@given(raw_json(), st.integers(0, 10_000))
def test_results_agree_as_json_values_do(value: object, how: int) -> None:
    other = _respelt(copy.deepcopy(value), how)
    assert same_json(value, other) == json_equal(value, other)
    assert same_json(value, copy.deepcopy(value)) == json_equal(value, copy.deepcopy(value))
