"""Lossless JSON values, frozen.

A value is *lossless* when every JSON implementation reads back exactly what was written: null,
booleans, strings, integers within the IEEE-754 safe range, finite floats other than ``-0.0``,
arrays, and objects whose keys are strings.  The model stores such values frozen: arrays become
tuples and objects become read-only mappings, so nothing reachable from an event can change.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, TypeAlias, TypeGuard, cast

MAX_SAFE_INTEGER = 2**53 - 1
MAX_NESTING = 256
"""The deepest a value an event carries may nest: a scalar is at depth 0, an array or object one
level deeper than its deepest member.  A rule of the format, so that no reader's verdict depends on
its own stack (``JSON.parse`` reads any depth; the released writer's ``JSON.stringify`` fails
somewhere past 4,000 levels, depending on its stack size)."""

JsonValue: TypeAlias = bool | int | float | str | tuple["JsonValue", ...] | Mapping[str, "JsonValue"] | None
"""A frozen lossless JSON value."""

JsonObject: TypeAlias = Mapping[str, JsonValue]

RawJson: TypeAlias = object
"""Anything that might be JSON: the input side of :func:`freeze`."""


_NOT_OBJECTS = frozenset({str, int, float, bool, type(None), list, tuple})


def is_object(value: object) -> TypeGuard[Mapping[Any, Any]]:
    """Whether ``value`` is a JSON object: any ``Mapping``.  The types a JSON value is made of are
    told apart by their type first; only another type asks the ``Mapping`` ABC."""
    kind = type(value)
    if kind in _NOT_OBJECTS:
        return False
    return kind is dict or kind is MappingProxyType or isinstance(value, Mapping)


def is_safe_integer(value: object) -> bool:
    """Whether ``value`` is an integral number (not a ``bool``, not -0) within ±(2^53 − 1).

    JSON has one number type: ``1.0`` and ``1`` are the same value, and a reader in another
    language cannot tell them apart, so an integral float counts as an integer.
    """
    if type(value) is int:
        return -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER
    return (
        type(value) is float
        and value.is_integer()
        and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER
        and not (value == 0 and math.copysign(1.0, value) < 0)
    )


def is_safe_natural(value: object) -> bool:
    """Whether ``value`` is a non-negative safe integer."""
    return is_safe_integer(value) and value >= 0  # type: ignore[operator]


def is_safe_positive(value: object) -> bool:
    """Whether ``value`` is a safe integer of at least 1 (turn and step numbers)."""
    return is_safe_natural(value) and value != 0


def as_int(value: object) -> int | None:
    """``value`` as an ``int`` when it is a safe integer (``1.0`` included), else ``None``."""
    return int(value) if is_safe_integer(value) else None  # type: ignore[call-overload]


def lossless_problem(value: RawJson) -> str | None:
    """The first reason ``value`` is not a lossless JSON value, or ``None`` when it is one.

    The walk is iterative and stops below :data:`MAX_NESTING`, so a value of any depth gets its
    answer without exhausting the interpreter's stack.
    """
    stack: list[tuple[RawJson, str, int]] = [(value, "$", 0)]
    while stack:
        item, path, depth = stack.pop()
        if depth == MAX_NESTING and (isinstance(item, list | tuple) or is_object(item)):
            return f"{path} nests deeper than {MAX_NESTING} levels"
        if item is None or isinstance(item, bool | str):
            continue
        if type(item) is int:
            if not -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:
                return f"{path} is an integer outside the safe range"
            continue
        if type(item) is float:
            if not math.isfinite(item):
                return f"{path} is not a finite number"
            if item == 0.0 and math.copysign(1.0, item) < 0:
                return f"{path} is -0"
            continue
        if isinstance(item, list | tuple):
            stack.extend((child, f"{path}[{i}]", depth + 1) for i, child in enumerate(item))
            continue
        if is_object(item):
            for key, child in item.items():
                if type(key) is not str:
                    return f"{path} has a non-string key {key!r}"
                stack.append((child, f"{path}.{key}", depth + 1))
            continue
        return f"{path} is a {type(item).__name__}, not a JSON value"
    return None


def freeze(value: RawJson) -> JsonValue:
    """A frozen copy of a lossless JSON value (check it with :func:`lossless_problem` first)."""
    if is_object(value):
        return MappingProxyType({cast(str, k): freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    return cast(JsonValue, value)


def thaw(value: JsonValue) -> object:
    """A plain ``dict``/``list`` copy of a frozen value, ready for a JSON encoder."""
    if is_object(value):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [thaw(v) for v in value]
    return value


def same_number(a: int | float, b: int | float) -> bool:
    """Whether two JSON numbers are the same number: the same double when either is a float.

    A JSON number is a double to most readers: ``JSON.stringify`` writes an integral double beyond
    2^53 in integer digits (the float ``-4.607427877621723e+16`` as ``-46074278776217230``), which
    reads back as an integer whose exact value differs from the float's but which is the same
    double.  For a safe integer the two comparisons agree, since it is exactly a double.
    """
    if type(a) is float or type(b) is float:
        try:
            return float(a) == float(b)
        except OverflowError:  # an integer beyond every double is no float's value
            return False
    return a == b


def json_equal(a: object, b: object) -> bool:
    """JSON equality: ``true`` is not ``1``, ``1`` is ``1.0``, key order is irrelevant."""
    if isinstance(a, bool | str) or isinstance(b, bool | str):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return same_number(a, b)
    if is_object(a) and is_object(b):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return a is None and b is None


def as_object(value: JsonValue) -> JsonObject | None:
    """``value`` when it is a JSON object, else ``None``."""
    return value if is_object(value) else None


def as_array(value: object) -> tuple[JsonValue, ...] | None:
    """``value`` as a tuple when it is a JSON array (frozen or not), else ``None``."""
    if isinstance(value, tuple):
        return value
    return tuple(value) if isinstance(value, list) else None


def is_nonempty_string(value: object) -> bool:
    """Whether ``value`` is a ``str`` with at least one character."""
    return isinstance(value, str) and value != ""
