"""Lossless JSON values and their deep-immutable snapshots.

A value is lossless when every JSON reader gets back exactly what was written: null, booleans,
strings, integers within ±(2^53 − 1), finite floats other than ``-0.0``, arrays, and objects with
string keys.  :func:`freeze` checks that and copies the value in one walk: arrays become tuples and
objects become :class:`FrozenObject`, a ``dict`` subclass that refuses mutation (a ``dict`` so that
orjson serialises it natively, which keeps the write path in C).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NoReturn, TypeAlias

MAX_SAFE_INTEGER = 2**53 - 1
MAX_NESTING = 256
"""The format's bound on how deep a value may nest (a scalar is depth 0, a container one more than
its deepest member): deeper values are not lossless JSON."""

# Recursion is the fast path; below this depth a subtree is finished by an explicit stack so that
# no lossless value, however deep, can exhaust the interpreter's stack.
_RECURSION_BUDGET = 200


class FrozenObject(dict[str, Any]):
    """A JSON object that cannot be changed after it is built."""

    __slots__ = ()

    def _refuse(self, *_: object, **__: object) -> NoReturn:
        raise TypeError("a frozen JSON object cannot be modified")

    __setitem__ = _refuse
    __delitem__ = _refuse
    __ior__ = _refuse
    clear = _refuse
    pop = _refuse
    popitem = _refuse
    setdefault = _refuse
    update = _refuse

    def __copy__(self) -> FrozenObject:
        return self

    def __deepcopy__(self, memo: object) -> FrozenObject:
        return self

    def __reduce__(self) -> tuple[type[FrozenObject], tuple[dict[str, Any]]]:
        return FrozenObject, (dict(self),)

    def __repr__(self) -> str:
        return f"FrozenObject({dict.__repr__(self)})"


class DeepArray(tuple[Any, ...]):
    """An array frozen below the recursion budget.

    A distinct type on purpose: orjson bounds its recursion on lists and dicts but not on tuples,
    and overflows its stack on a few thousand nested ones, so it must refuse these instead (it
    does, as an unknown type) and leave deep values to an encoder that bounds its recursion.
    """

    __slots__ = ()


JsonValue: TypeAlias = bool | int | float | str | tuple["JsonValue", ...] | FrozenObject | None
"""A frozen lossless JSON value."""

EMPTY_OBJECT = FrozenObject()


class NotLossless(ValueError):
    """A value is not lossless JSON; ``path`` locates the first offending member."""

    def __init__(self, problem: str, path: str = "") -> None:
        super().__init__(problem)
        self.problem = problem
        self.path = path

    def __str__(self) -> str:
        return f"${self.path} {self.problem}"


def _in_range(value: object, low: int) -> bool:
    """Whether ``value`` is an integral number (never a ``bool`` or ``-0.0``) in ``low``..2^53 − 1.

    JSON has one number type, so ``3.0`` is the integer 3: a reader in another language cannot
    tell the two apart, and the contract does not either.
    """
    kind = type(value)
    if kind is int:
        return low <= value <= MAX_SAFE_INTEGER  # type: ignore[operator]
    if kind is float:
        number = float(value)  # type: ignore[arg-type]
        return (
            number.is_integer()
            and low <= number <= MAX_SAFE_INTEGER
            and not (number == 0.0 and math.copysign(1.0, number) < 0)
        )
    return False


def is_safe_integer(value: object) -> bool:
    """Whether ``value`` is an integral number within ±(2^53 − 1)."""
    return _in_range(value, -MAX_SAFE_INTEGER)


def is_safe_natural(value: object) -> bool:
    """Whether ``value`` is a non-negative safe integer."""
    return _in_range(value, 0)


def is_positive(value: object) -> bool:
    """Whether ``value`` is a safe integer of at least 1."""
    return _in_range(value, 1)


def as_int(value: object) -> int | None:
    """``value`` as an ``int`` when it is a safe integer (``3.0`` included), else ``None``."""
    return int(value) if is_safe_integer(value) else None  # type: ignore[call-overload]


def is_nonempty_string(value: object) -> bool:
    """Whether ``value`` is a ``str`` with at least one character."""
    return isinstance(value, str) and value != ""


def _scalar(value: object) -> object:
    """``value`` itself when it is a lossless scalar; raises for anything that is not JSON."""
    kind = type(value)
    if kind is int:
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:  # type: ignore[operator]
            return value
        raise NotLossless("is an integer outside the safe range")
    if kind is float:
        number = float(value)  # type: ignore[arg-type]
        if not math.isfinite(number):
            raise NotLossless("is not a finite number")
        if number == 0.0 and math.copysign(1.0, number) < 0:
            raise NotLossless("is -0")
        return value
    if value is None or isinstance(value, bool | str):
        return value
    raise NotLossless(f"is a {kind.__name__}, not a JSON value")


def _freeze(value: object, budget: int) -> JsonValue:
    # Exact builtin types are tested first and scalars are kept inline, because this walk runs
    # over every member of every event: ABC instance checks and a call per leaf would dominate.
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value  # type: ignore[return-value]
    if kind is dict or kind is FrozenObject:
        if budget == 0:
            return _freeze_deep(value)
        out: dict[str, Any] = {}
        for key, child in value.items():  # type: ignore[attr-defined]
            if type(key) is not str:
                raise NotLossless(f"has a non-string key {key!r}")
            child_kind = type(child)
            if child_kind is str or child_kind is bool or child is None or (
                child_kind is int and -MAX_SAFE_INTEGER <= child <= MAX_SAFE_INTEGER
            ):
                out[key] = child
            else:
                try:
                    out[key] = _freeze(child, budget - 1)
                except NotLossless as error:
                    error.path = f".{key}{error.path}"
                    raise
        return FrozenObject(out)
    if kind is list or kind is tuple:
        if budget == 0:
            return _freeze_deep(value)
        items: list[Any] = []
        for index, child in enumerate(value):  # type: ignore[arg-type]
            child_kind = type(child)
            if child_kind is str or child_kind is bool or child is None:
                items.append(child)
            else:
                try:
                    items.append(_freeze(child, budget - 1))
                except NotLossless as error:
                    error.path = f"[{index}]{error.path}"
                    raise
        return tuple(items)
    if kind is int or kind is float:
        return _scalar(value)  # type: ignore[return-value]
    if isinstance(value, Mapping):
        return _freeze(dict(value.items()), budget) if budget else _freeze_deep(value)
    if isinstance(value, list | tuple):
        return _freeze(list(value), budget) if budget else _freeze_deep(value)
    return _scalar(value)  # type: ignore[return-value]


def _freeze_deep(value: object) -> JsonValue:
    """The same walk as :func:`_freeze` with an explicit stack, for subtrees too deep to recurse.

    The recursive walk hands over at depth ``_RECURSION_BUDGET + 1``, so the subtree may nest the
    rest of :data:`MAX_NESTING` and no further.
    """
    levels = MAX_NESTING - _RECURSION_BUDGET
    return _rebuild(value, FrozenObject, DeepArray, strict=True, levels=levels)  # type: ignore[return-value]


def freeze(value: object) -> JsonValue:
    """A deep-immutable copy of ``value``; raises :class:`NotLossless` when it is not lossless JSON."""
    return _freeze(value, _RECURSION_BUDGET)


def lossless_problem(value: object) -> str | None:
    """Why ``value`` is not lossless JSON, or ``None`` when it is."""
    try:
        freeze(value)
    except NotLossless as error:
        return str(error)
    return None


def _rebuild(
    value: object,
    make_object: Callable[[dict[str, Any]], object],
    make_array: Callable[[list[object]], object],
    strict: bool,
    levels: int | None = None,
) -> object:
    """Copy a JSON tree bottom-up without recursion, building containers with the given makers.

    With ``levels``, a container nested deeper than that below ``value`` is refused as not lossless.
    """
    # Each frame: (container, its keys or None for arrays, children built so far).
    root: list[object] = []
    stack: list[tuple[list[object] | None, list[str] | None, list[object], Iterable[Any], str]] = []

    def open_frame(node: object, path: str) -> object | None:
        if levels is not None and len(stack) == levels and isinstance(node, Mapping | list | tuple):
            raise NotLossless(f"nests deeper than {MAX_NESTING} levels", path)
        if isinstance(node, Mapping) and not isinstance(node, list):
            keys = list(node.keys())
            for key in keys:
                if strict and type(key) is not str:
                    raise NotLossless(f"has a non-string key {key!r}", path)
            stack.append((None, keys, [], iter(list(node.values())), path))
            return None
        if isinstance(node, list | tuple):
            stack.append((None, None, [], iter(list(node)), path))
            return None
        if not strict:
            return node
        try:
            return _scalar(node)
        except NotLossless as error:
            error.path = path
            raise

    result = open_frame(value, "")
    if not stack:
        return result
    while stack:
        _, keys, built, children, path = stack[-1]
        child = next(children, _END)  # type: ignore[call-overload]
        if child is _END:
            stack.pop()
            node = make_object(dict(zip(keys, built, strict=True))) if keys is not None else make_array(built)
            if stack:
                stack[-1][2].append(node)
            else:
                root.append(node)
            continue
        index = len(built)
        child_path = f"{path}.{keys[index]}" if keys is not None else f"{path}[{index}]"
        leaf = open_frame(child, child_path)
        if leaf is not None or not (isinstance(child, Mapping | list | tuple)):
            built.append(leaf)
    return root[0]


_END = object()


def thaw(value: object) -> Any:
    """A plain ``dict``/``list`` copy of a JSON value, for callers that want mutable data."""
    return _thaw(value, _RECURSION_BUDGET)


def _thaw(value: object, budget: int) -> Any:
    if isinstance(value, Mapping):
        if budget == 0:
            return _rebuild(value, dict, list, strict=False)
        return {k: _thaw(v, budget - 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        if budget == 0:
            return _rebuild(value, dict, list, strict=False)
        return [_thaw(v, budget - 1) for v in value]
    return value


def json_equal(a: object, b: object) -> bool:
    """JSON equality: ``true`` is not ``1``, ``1`` is ``1.0``, key order is irrelevant."""
    if isinstance(a, bool | str) or isinstance(b, bool | str):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return a is None and b is None


def as_object(value: object) -> Mapping[str, Any] | None:
    """``value`` when it is a JSON object, else ``None``."""
    return value if isinstance(value, Mapping) else None


def as_array(value: object) -> tuple[Any, ...] | list[Any] | None:
    """``value`` when it is a JSON array, else ``None``."""
    return value if isinstance(value, tuple | list) else None
