"""Lossless JSON values and their frozen snapshots."""

from __future__ import annotations

import copy
import pickle

import pytest

from seqlog.jsonvalue import (
    MAX_NESTING,
    FrozenObject,
    NotLossless,
    as_int,
    freeze,
    is_safe_integer,
    is_safe_natural,
    json_equal,
    lossless_problem,
    thaw,
)


def test_freeze_copies_into_immutable_containers() -> None:
    items: list[object] = [1, {"b": "c"}]
    frozen = freeze({"a": items, "d": None})
    assert isinstance(frozen, FrozenObject)
    assert frozen == {"a": (1, FrozenObject({"b": "c"})), "d": None}
    items.append(2)
    assert frozen["a"] == (1, {"b": "c"})


@pytest.mark.parametrize(
    "mutate",
    [
        lambda o: o.__setitem__("x", 1),
        lambda o: o.__delitem__("a"),
        lambda o: o.update(x=1),
        lambda o: o.pop("a"),
        lambda o: o.popitem(),
        lambda o: o.setdefault("x", 1),
        lambda o: o.clear(),
    ],
)
def test_frozen_objects_refuse_every_mutation(mutate: object) -> None:
    frozen = freeze({"a": 1})
    with pytest.raises(TypeError):
        mutate(frozen)  # type: ignore[operator]
    assert frozen == {"a": 1}


def test_frozen_objects_copy_and_pickle_as_themselves() -> None:
    frozen = freeze({"a": [1, 2]})
    assert copy.copy(frozen) is frozen
    assert copy.deepcopy(frozen) is frozen
    assert pickle.loads(pickle.dumps(frozen)) == frozen


@pytest.mark.parametrize(
    "value",
    [float("nan"), float("inf"), -0.0, 2**53, -(2**53), b"x", {1: "a"}, {"a": {1, 2}}, object(), [1, [2, complex(1, 1)]]],
)
def test_not_lossless_values_are_refused_with_a_path(value: object) -> None:
    with pytest.raises(NotLossless):
        freeze(value)
    assert lossless_problem(value) is not None


def test_the_refusal_names_where_it_is() -> None:
    assert lossless_problem({"a": [0, {"b": float("nan")}]}) == "$.a[1].b is not a finite number"


def test_safe_bounds_and_integral_floats() -> None:
    assert is_safe_integer(2**53 - 1) and not is_safe_integer(2**53)
    assert is_safe_natural(3.0) and as_int(3.0) == 3
    assert not is_safe_natural(True) and not is_safe_natural(-0.0) and not is_safe_natural(1.5)
    assert as_int("3") is None


def _nested(levels: int, leaf: object = "leaf") -> object:
    value = leaf
    for level in range(levels):
        value = [value] if level % 2 else {"k": value}
    return value


def test_inv_log_4_values_nest_at_most_256_levels_whatever_the_depth() -> None:
    frozen = freeze(_nested(MAX_NESTING))
    depth, node = 0, frozen
    while isinstance(node, tuple | dict):
        node, depth = (node[0] if isinstance(node, tuple) else node["k"]), depth + 1
    assert depth == MAX_NESTING and node == "leaf"
    assert json_equal(thaw(frozen), _nested(MAX_NESTING))
    for levels in (MAX_NESTING + 1, 5_000, 200_000):
        with pytest.raises(NotLossless, match=f"nests deeper than {MAX_NESTING} levels"):
            freeze(_nested(levels))
    with pytest.raises(NotLossless, match="not a finite number"):
        freeze(_nested(100, float("nan")))  # the first fault found, within the limit


def test_deep_values_thaw_without_recursion_limits() -> None:
    deep: object = "leaf"
    for _ in range(5000):
        deep = (deep,)
    node = thaw(deep)
    for _ in range(5000):
        assert isinstance(node, list)
        node = node[0]
    assert node == "leaf"


def test_json_equality() -> None:
    assert json_equal({"a": 1, "b": [1.0]}, {"b": (1,), "a": 1.0})
    assert not json_equal(True, 1)
    assert not json_equal({"a": 1}, {"a": 1, "b": None})
    assert json_equal(None, None) and not json_equal(None, 0)
