"""INV-LOG-1..4 and INV-JSONL-2/4 strength tests: number boundaries, JSON equality, strict lines.

Mutation testing of ``model/json_value.py``, ``model/event.py`` and ``model/jsonl.py`` showed these
decisions were not pinned: the exact ends of the safe range for integers and integral floats, -0,
the full walk of a value, JSON equality across types, and the reasons a strict line is refused.
"""

from __future__ import annotations

import math

import pytest
from model_cases import ev

from sessionlog_spec.model.event import decode_event
from sessionlog_spec.model.json_value import MAX_SAFE_INTEGER, as_array, is_safe_integer, json_equal, lossless_problem
from sessionlog_spec.model.jsonl import encode_line, parse_line
from sessionlog_spec.model.violation import Violation


@pytest.mark.parametrize(
    "value",
    [
        MAX_SAFE_INTEGER,
        -MAX_SAFE_INTEGER,
        0,
        0.0,
        1.0,
        -1.0,
        -5.0,
        float(MAX_SAFE_INTEGER),
        float(-MAX_SAFE_INTEGER),
    ],
)
def test_inv_log_2_safe_integers_include_both_ends_and_integral_floats(value: object) -> None:
    assert is_safe_integer(value)


@pytest.mark.parametrize("value", [MAX_SAFE_INTEGER + 1, -MAX_SAFE_INTEGER - 1, -0.0, 0.5, float(2**53), math.inf, True])
def test_inv_log_2_unsafe_or_fractional_numbers_are_not_safe_integers(value: object) -> None:
    assert not is_safe_integer(value)


def test_inv_log_2_an_integral_float_seq_is_read_as_an_integer() -> None:
    event = decode_event(ev("turn/start", 3.0, {"turn": 1}))  # type: ignore[arg-type]
    assert not isinstance(event, Violation)
    assert event.seq == 3 and type(event.seq) is int


def test_inv_log_4_the_whole_value_is_walked() -> None:
    assert lossless_problem([math.nan, 1.5]) == "$[0] is not a finite number"
    assert lossless_problem([-0.0, 2.5, 0.5]) == "$[0] is -0"


def test_inv_log_4_problems_name_their_path_and_kind() -> None:
    assert lossless_problem({"a": -0.0}) == "$.a is -0"
    assert lossless_problem({"a": [2**60]}) == "$.a[0] is an integer outside the safe range"
    problem = lossless_problem({"s": {1, 2}})
    assert problem is not None and problem.startswith("$.s is a set")


def test_inv_log_4_json_equality_tells_booleans_from_numbers() -> None:
    assert not json_equal(True, 1)
    assert not json_equal(1, True)
    assert not json_equal(False, 0)
    assert json_equal(1, 1.0)


def test_inv_log_4_json_equality_compares_a_float_as_the_double_it_is() -> None:
    # JSON.stringify writes this integral double beyond 2^53 in integer digits; read back, the
    # integer's exact value is not the float's, but it is the same double.
    assert json_equal(-4.607427877621723e16, -46074278776217230)
    assert json_equal([2.0**60], [1152921504606846976])
    assert not json_equal(2.0**60, 2**60 + 1024)
    assert not json_equal(2.5, 2)
    assert not json_equal(1e308, 10**400)
    # Two integers are compared exactly, safe or not.
    assert not json_equal(2**60, 2**60 + 1)


def test_inv_log_4_null_equals_only_null() -> None:
    assert json_equal(None, None)
    assert not json_equal(None, [])
    assert not json_equal({}, None)
    assert not json_equal(None, 0)


def test_inv_log_4_arrays_are_read_from_lists_and_tuples() -> None:
    assert as_array([1, 2]) == (1, 2)
    assert as_array((1, 2)) == (1, 2)
    assert as_array({"a": 1}) is None


def test_inv_log_1_unknown_envelope_keys_are_named() -> None:
    refused = decode_event({**ev("turn/start", 0, {"turn": 1}), "id": "evt-1"})
    assert isinstance(refused, Violation)
    assert "'id'" in refused.message


def test_inv_jsonl_4_a_refused_line_says_why() -> None:
    constant = parse_line('{"a": NaN}')
    not_object = parse_line("[1]")
    assert isinstance(constant, str) and "NaN" in constant
    assert not_object == "is not a JSON object"
    assert parse_line('{"a": 1, "a": 2}') == {"a": 2}


def test_inv_jsonl_2_the_writer_never_emits_a_non_json_number() -> None:
    for value in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError):
            encode_line({"x": value})
