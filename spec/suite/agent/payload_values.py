"""Hypothesis strategies over payload shapes: valid values, and one-fault variants of them.

Both are generic over the shape language of :mod:`sessionlog_spec.model.shapes`; nothing here knows
an event type.

:func:`valid_payload` draws values a shape accepts, boundaries included (0, 1, ``2^53 - 1``, the
ends of every range, empty and non-empty strings, non-ASCII and lone-surrogate text, integral
floats such as ``3.0``).  Relations are made to hold by a generic repair per relation kind
(an :class:`~sessionlog_spec.model.shapes.Equal` copies one side onto the other, a
:class:`~sessionlog_spec.model.shapes.SumOf` recomputes its total, …).

:func:`invalid_payload` draws a valid value and breaks it in exactly one place, returning a
:class:`Fault`: the value, the JSON path it broke, the kind of fault, and whether only context
knows it is a fault (an "earlier seq" that is not earlier, a broken relation: JSON Schema only
annotates those).  Fault kinds: a missing required member, an unexpected member, a leaf of the
wrong JSON type, a number out of range or with a fraction, an unknown literal or discriminant, an
empty string or array where one is required to be non-empty, too many or repeated items, a string
not of its form, a seq that is not earlier, a broken relation.
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any, TypeAlias

from hypothesis import assume
from hypothesis import strategies as st

from sessionlog_spec.model.json_value import MAX_SAFE_INTEGER, json_equal
from sessionlog_spec.model.shapes import (
    ABSENT,
    JS_WHITESPACE,
    MISSING,
    NO_CONTEXT,
    Absent,
    ArmKey,
    Array,
    Bool,
    Context,
    EarlierSeq,
    Equal,
    Finite,
    FlagIfAnyPositive,
    GoalStateRestatement,
    Integer,
    ItemIndex,
    Literal,
    MembersWithin,
    Named,
    NotAbove,
    Nullable,
    Opaque,
    Path,
    Record,
    Related,
    Relation,
    Shape,
    Str,
    StrForm,
    SumOf,
    UniqueMember,
    Variants,
    item_path,
    member_path,
    members_of,
    restated_goal,
    same_scalar,
    shape_problem,
    step_path,
    unwrap,
    value_at,
)
from sessionlog_spec.suite.agent.payload_faults import accepted_types

Draw: TypeAlias = Callable[[st.SearchStrategy[Any]], Any]

ARRAY_DEPTH = 4
"""Arrays nested deeper than this hold only their minimum number of items (content blocks nest)."""

# -- leaves ------------------------------------------------------------------------------------

_ODD_CHARACTERS = "\u0085\u180e\u001c\u0000\u2028\ud800\udfff\U0001f600" + "\t\n\u00a0\u3000\ufeff "
_CHARACTERS = st.one_of(
    st.characters(min_codepoint=0x20, max_codepoint=0x7E),
    st.characters(),
    st.sampled_from(_ODD_CHARACTERS),
)
NON_EMPTY_TEXT: st.SearchStrategy[str] = st.text(_CHARACTERS, min_size=1, max_size=10)
"""Non-empty strings: ASCII, any Unicode, JavaScript whitespace, control characters and lone surrogates."""
TEXT: st.SearchStrategy[str] = st.one_of(st.just(""), NON_EMPTY_TEXT)
"""Strings, the empty one included."""

_JS_EDGES = re.compile(rf"^[{JS_WHITESPACE}]+|[{JS_WHITESPACE}]+$")


def js_trim(text: str) -> str:
    """``text.trim()`` as JavaScript trims it."""
    return _JS_EDGES.sub("", text)


def _instant(m: datetime) -> str:
    return f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}.{m.microsecond // 1000:03d}Z"


_YEAR_ONE = datetime(1, 1, 1)
_LAST_MOMENT = datetime(9999, 12, 31, 23, 59, 59, 999000)
INSTANTS: st.SearchStrategy[str] = st.one_of(
    st.sampled_from([_YEAR_ONE, _LAST_MOMENT, datetime(2000, 2, 29), datetime(2024, 2, 29, 23, 59, 59, 999000)]),
    st.datetimes(min_value=_YEAR_ONE, max_value=_LAST_MOMENT),
).map(_instant)
"""Canonical UTC instants, years 0001 to 9999."""

_FORMS: Mapping[StrForm, st.SearchStrategy[str]] = {
    StrForm.TRIMMED: NON_EMPTY_TEXT.map(js_trim),
    StrForm.INSTANT: INSTANTS,
    StrForm.ABSOLUTE_PATH: TEXT.map(lambda s: "/" + s),
}

_SCALARS: st.SearchStrategy[object] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER),
    st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: not (x == 0 and str(x).startswith("-"))),
    TEXT,
)
OPAQUE_VALUES: st.SearchStrategy[object] = st.recursive(
    _SCALARS,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(TEXT, children, max_size=3),
    max_leaves=6,
)
"""Lossless JSON values, as a parser returns them."""


def _integers(lo: int, hi: int) -> st.SearchStrategy[object]:
    edges = sorted({n for n in (lo, hi, lo + 1, hi - 1, 0, 1) if lo <= n <= hi})
    ints: st.SearchStrategy[int] = st.one_of(st.sampled_from(edges), st.integers(lo, hi))
    return st.one_of(ints, ints.map(float))  # JSON has one number type: 3.0 is 3


def _finite(shape: Finite) -> st.SearchStrategy[object]:
    lo, hi = shape.minimum, shape.maximum
    floats = st.floats(
        min_value=lo, max_value=hi, exclude_min=shape.exclusive_minimum and lo is not None, allow_nan=False, allow_infinity=False
    ).filter(lambda x: not (x == 0 and str(x).startswith("-")))
    int_lo = -MAX_SAFE_INTEGER if lo is None else int(lo) + (1 if shape.exclusive_minimum else 0)
    int_hi = MAX_SAFE_INTEGER if hi is None else int(hi)
    edges = [n for n in (int_lo, int_hi, 0) if int_lo <= n <= int_hi]
    return st.one_of(floats, st.integers(int_lo, int_hi), st.sampled_from(edges))


def _canonical(value: object) -> str:
    """A text equal for JSON-equal values (``1`` and ``1.0`` alike), for uniqueness."""

    def plain(v: object) -> object:
        if isinstance(v, Mapping):
            return {k: plain(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [plain(x) for x in v]
        if type(v) is float and v.is_integer():
            return int(v)
        return v

    return json.dumps(plain(value), sort_keys=True)


# -- valid values ------------------------------------------------------------------------------


class Unknown(Enum):
    """The arm key naming a union's ``otherwise`` (its unknown variants) in a focus or an arm list."""

    OTHERWISE = "otherwise"


OTHERWISE = Unknown.OTHERWISE
AnyArm: TypeAlias = "ArmKey | Unknown"

Focus: TypeAlias = Sequence[tuple[Variants, AnyArm]]
"""Union arms to take whenever the union is met: ``(union, key)``, :data:`OTHERWISE` for its unknown variants."""


class _Valid:
    """The strategies of one context, built once per (shape, array depth)."""

    def __init__(self, context: Context, focus: Focus = ()) -> None:
        self.context = context
        self.focused = {id(union): (union, key) for union, key in focus}
        self.focus = {id(union): key for union, key in focus}
        self.cache: dict[tuple[int, int], tuple[Shape, st.SearchStrategy[object]]] = {}
        self.reach: dict[int, bool] = {}

    def reaches(self, shape: Shape) -> bool:
        """Whether a focused union lies in ``shape`` (so arrays and optional members on the way are drawn)."""
        if not self.focus:
            return False
        known = self.reach.get(id(shape))
        if known is None:
            self.reach[id(shape)] = False  # a shape that contains itself does not reach through itself
            known = any(self.reaches(child) for child in _children(shape)) or id(shape) in self.focus
            self.reach[id(shape)] = known
        return known

    def of(self, shape: Shape, depth: int = 0) -> st.SearchStrategy[object]:
        key = (id(shape), min(depth, ARRAY_DEPTH + 1))
        known = self.cache.get(key)
        if known is None:
            known = (shape, self._build(shape, depth))
            self.cache[key] = known
        return known[1]

    def _build(self, shape: Shape, depth: int) -> st.SearchStrategy[object]:
        if isinstance(shape, Opaque):
            return OPAQUE_VALUES
        if isinstance(shape, Bool):
            return st.booleans()
        if isinstance(shape, Str):
            if shape.form is not None:
                return _FORMS[shape.form].filter(bool) if shape.non_empty else _FORMS[shape.form]
            return NON_EMPTY_TEXT if shape.non_empty else TEXT
        if isinstance(shape, Literal):
            return st.sampled_from(shape.values)
        if isinstance(shape, Integer):
            return _integers(shape.minimum, shape.maximum)
        if isinstance(shape, Finite):
            return _finite(shape)
        if isinstance(shape, EarlierSeq):
            seq = self.context.event_seq
            if seq is None:
                return _integers(0, MAX_SAFE_INTEGER)
            return _integers(0, seq - 1) if seq > 0 else st.nothing()
        if isinstance(shape, Nullable):
            return st.one_of(st.none(), self.of(shape.shape, depth))
        if isinstance(shape, Array):
            return self._array(shape, depth)
        if isinstance(shape, Record):
            return self._record(shape, depth)
        if isinstance(shape, Variants):
            return self._variants(shape, depth)
        if isinstance(shape, Related):
            relations = shape.relations
            return self.of(shape.shape, depth).map(lambda v: repair(relations, v))
        named = shape
        return st.deferred(lambda: self.of(named.shape, depth))

    def _array(self, shape: Array, depth: int) -> st.SearchStrategy[object]:
        least = shape.min_items
        most = least if depth >= ARRAY_DEPTH else least + 3
        if shape.max_items is not None:
            most = min(most, shape.max_items)
        if most == 0:
            return st.builds(list)
        if depth < ARRAY_DEPTH and self.reaches(shape.items):
            least = max(least, 1)
        items = self.of(shape.items, depth + 1)
        return st.lists(items, min_size=least, max_size=most, unique_by=_canonical if shape.unique else None)

    def _record(self, shape: Record, depth: int) -> st.SearchStrategy[object]:
        members = {name: self.of(member, depth) for name, member in (*shape.required.items(), *shape.optional.items())}
        extras = None
        if shape.additional is not None:
            names = set(members)
            extras = st.dictionaries(
                NON_EMPTY_TEXT.filter(lambda k: k not in names), self.of(shape.additional, depth), max_size=3
            )

        wanted = {name for name, member in shape.optional.items() if self.reaches(member)}

        @st.composite
        def record(draw: Draw) -> dict[str, object]:
            out: dict[str, object] = {name: draw(members[name]) for name in shape.required}
            for name in shape.optional:
                if name in wanted or draw(st.booleans()):
                    out[name] = draw(members[name])
            for trigger, needed in shape.dependent_required.items():
                if trigger in out:
                    for name in needed:
                        if name not in out:
                            out[name] = draw(members[name])
            for name in shape.optional:
                if len(out) >= shape.min_members:
                    break
                if name not in out:
                    out[name] = draw(members[name])
            if extras is not None:
                out.update(draw(extras))
            return out

        return record()

    def _variants(self, shape: Variants, depth: int) -> st.SearchStrategy[object]:
        name = shape.discriminant

        def with_key(key: object) -> Callable[[object], object]:
            def put(value: object) -> object:
                assert isinstance(value, dict)
                out = {k: v for k, v in value.items() if k != name}
                if key is not ABSENT:
                    out[name] = key
                return out

            return put

        focus = self.focus.get(id(shape), None)
        arms = [self.of(arm, depth).map(with_key(key)) for key, arm in shape.arms if focus is None or same_key(key, focus)]
        if shape.otherwise is not None and focus in (None, OTHERWISE):
            otherwise = shape.otherwise
            arms.append(self.of(otherwise, depth).filter(lambda v: isinstance(v, dict) and shape.arm(v) is otherwise))
        return st.one_of(arms)


def same_key(key: ArmKey, other: object) -> bool:
    """Whether two arm keys are the same key (:data:`ABSENT` only equals itself)."""
    if key is ABSENT or other is ABSENT:
        return key is other
    return isinstance(other, str | int | float | bool) and same_scalar(key, other)


_VALID_CACHE: OrderedDict[tuple[Context, tuple[tuple[int, AnyArm], ...]], _Valid] = OrderedDict()
_VALID_CACHE_SIZE = 64


def _valid_for(context: Context, focus: Focus) -> _Valid:
    """The strategy builder of a context and focus, kept for reuse (building strategies is the dear part)."""
    key = (context, tuple((id(union), arm) for union, arm in focus))
    known = _VALID_CACHE.get(key)
    if known is None or any(known.focused[id(u)][0] is not u for u, _ in focus):
        known = _Valid(context, focus)
        _VALID_CACHE[key] = known
        while len(_VALID_CACHE) > _VALID_CACHE_SIZE:
            _VALID_CACHE.popitem(last=False)
    _VALID_CACHE.move_to_end(key)
    return known


def valid_payload(shape: Shape, context: Context = NO_CONTEXT, focus: Focus = ()) -> st.SearchStrategy[object]:
    """Values ``shape`` accepts in ``context`` (plain ``dict``/``list`` JSON).

    With ``context.event_seq`` set, earlier seqs are drawn below it (a shape that requires one has
    no value at seq 0).  ``focus`` pins the arm of some unions wherever they occur, and draws the
    arrays and optional members that lead to them, so that every arm can be reached on purpose
    (see :func:`union_routes`).
    """
    return _valid_for(context, focus).of(shape)


def _children(node: Shape) -> list[Shape]:
    if isinstance(node, Named | Related | Nullable):
        return [node.shape]
    if isinstance(node, Array):
        return [node.items]
    if isinstance(node, Record):
        return [*node.required.values(), *node.optional.values(), *([] if node.additional is None else [node.additional])]
    if isinstance(node, Variants):
        return [*(arm for _, arm in node.arms), *([] if node.otherwise is None else [node.otherwise])]
    return []


def union_routes(shape: Shape) -> Iterator[tuple[Variants, AnyArm, tuple[tuple[Variants, AnyArm], ...]]]:
    """Every ``(union, arm key)`` reachable in ``shape``, each once (:data:`OTHERWISE` for unknown
    variants), with the arms of the enclosing unions on the way to it: focusing on the route and the
    arm draws values that take the arm."""
    seen: set[int] = set()
    stack: list[tuple[Shape, tuple[tuple[Variants, AnyArm], ...]]] = [(shape, ())]
    while stack:
        node, route = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Variants):
            keys: list[AnyArm] = [key for key, _ in node.arms]
            arms = [arm for _, arm in node.arms]
            if node.otherwise is not None:
                keys.append(OTHERWISE)
                arms.append(node.otherwise)
            for key in keys:
                yield node, key, route
            stack.extend(reversed([(arm, (*route, (node, key))) for key, arm in zip(keys, arms, strict=True)]))
        else:
            stack.extend(reversed([(child, route) for child in _children(node)]))


def member_names(shape: Shape) -> tuple[str, ...]:
    """Every member name declared anywhere in ``shape``, sorted."""
    names: set[str] = set()
    seen: set[int] = set()
    stack = [shape]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Record):
            names.update(node.names)
        elif isinstance(node, Variants):
            names.add(node.discriminant)
        stack.extend(_children(node))
    return tuple(sorted(names))


def union_arms(shape: Shape) -> Iterator[tuple[Variants, AnyArm]]:
    """Every ``(union, arm key)`` reachable in ``shape``, each once, :data:`OTHERWISE` for unknown variants."""
    for union, key, _ in union_routes(shape):
        yield union, key


def arms_taken(shape: Shape, value: object) -> Iterator[tuple[Variants, AnyArm]]:
    """The ``(union, arm key)`` pairs a value of ``shape`` takes (assuming it is valid)."""
    if isinstance(shape, Named | Related):
        yield from arms_taken(shape.shape, value)
    elif isinstance(shape, Nullable):
        if value is not None:
            yield from arms_taken(shape.shape, value)
    elif isinstance(shape, Array) and isinstance(value, list | tuple):
        for item in value:
            yield from arms_taken(shape.items, item)
    elif isinstance(shape, Record) and isinstance(value, Mapping):
        for name, item in value.items():
            member = shape.member(name)
            if member is not None:
                yield from arms_taken(member, item)
    elif isinstance(shape, Variants) and isinstance(value, Mapping):
        arm = shape.arm(value)
        if arm is None:
            return
        present = shape.discriminant in value
        key: AnyArm = next(
            (k for k, a in shape.arms if a is arm and same_key(k, value[shape.discriminant] if present else ABSENT)),
            OTHERWISE,
        )
        yield shape, key
        yield from arms_taken(arm, value)


# -- relations made to hold --------------------------------------------------------------------


def _copy(value: object) -> object:
    if isinstance(value, Mapping):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_copy(v) for v in value]
    return value


def _container(value: object, path: Path) -> tuple[Any, str | int] | None:
    if not path:
        return None
    parent = value_at(value, path[:-1])
    if parent is MISSING:
        return None
    return parent, path[-1]


def set_at(value: object, path: Path, new: object) -> None:
    """Set the value at ``path`` inside a plain (mutable) value; nothing when the parent is missing."""
    found = _container(value, path)
    if found is not None:
        parent, step = found
        parent[step] = new


def repair(relations: Sequence[Relation], value: object) -> object:
    """A copy of ``value`` with each relation made to hold (drops before the rest, so indexes stay right)."""
    out = _copy(value)
    ordered = sorted(relations, key=lambda r: not isinstance(r, UniqueMember))
    for relation in ordered:
        _repair_one(relation, out)
    return out


def _number(value: object) -> float | int | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _repair_one(relation: Relation, value: Any) -> None:
    if isinstance(relation, Equal):
        right = value_at(value, relation.right)
        if right is not MISSING and value_at(value, relation.left) is not MISSING:
            set_at(value, relation.left, _copy(right))
    elif isinstance(relation, NotAbove):
        lesser, greater = value_at(value, relation.lesser), value_at(value, relation.greater)
        a, b = _number(lesser), _number(greater)
        if a is not None and b is not None and a > b:
            set_at(value, relation.lesser, greater)
            set_at(value, relation.greater, lesser)
    elif isinstance(relation, SumOf):
        parts = [_number(value_at(value, p)) for p in relation.parts]
        if value_at(value, relation.total) is not MISSING and all(p is not None for p in parts):
            total = sum(int(p) for p in parts if p is not None)
            if total > MAX_SAFE_INTEGER:
                for path in relation.parts[1:]:
                    set_at(value, path, 0)
                total = int(parts[0] or 0)
            set_at(value, relation.total, total)
    elif isinstance(relation, FlagIfAnyPositive):
        counts = [_number(value_at(value, p)) for p in relation.counts]
        if value_at(value, relation.flag) is not MISSING:
            set_at(value, relation.flag, any(c is not None and c > 0 for c in counts))
    elif isinstance(relation, UniqueMember):
        if isinstance(value, list):
            seen: list[object] = []
            kept = []
            for item in value:
                member = item.get(relation.member, MISSING) if isinstance(item, dict) else MISSING
                if member is not MISSING and any(json_equal(member, s) for s in seen):
                    continue
                seen.append(member)
                kept.append(item)
            value[:] = kept
    elif isinstance(relation, ItemIndex):
        if isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, dict) and relation.member in item:
                    item[relation.member] = index
    elif isinstance(relation, MembersWithin):
        source, target = value_at(value, relation.source), value_at(value, relation.target)
        if isinstance(source, dict) and isinstance(target, Mapping):
            for name in [n for n in source if n not in target]:
                del source[name]
    elif isinstance(relation, GoalStateRestatement):
        source = value_at(value, ("source",))
        restated = restated_goal(source) if isinstance(source, dict) else None
        if restated is not None and isinstance(source, dict) and isinstance(value, dict):
            goal_id, revision, content = restated
            source["goalId"], source["revision"] = goal_id, revision
            value["content"] = _copy(content)


# -- one-fault variants ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Fault:
    """A payload broken in exactly one place."""

    value: object
    path: str
    """The JSON path of what was broken (``$`` is the payload)."""
    kind: str
    context_only: bool = False
    """Only the event's seq or a cross-member relation makes this a fault (JSON Schema annotates those)."""


@dataclass(frozen=True, slots=True)
class _At:
    """A place inside the payload: its location (member names and indexes) and its JSON path."""

    location: Path = ()
    path: str = "$"

    def member(self, name: str) -> _At:
        return _At((*self.location, name), member_path(self.path, name))

    def item(self, index: int) -> _At:
        return _At((*self.location, index), item_path(self.path, index))


@dataclass(frozen=True, slots=True)
class _Site:
    """One place a value can be broken: ``edit`` turns the value at ``location`` into the broken one."""

    location: Path
    path: str
    kind: str
    edit: Callable[[Draw, object], object]
    context_only: bool = False


_WRONG_TYPE: Mapping[str, object] = {"string": "wrong", "number": 7, "boolean": True, "null": None, "array": (), "object": {}}
_UNEXPECTED_NAMES = ("unexpected", "", "__proto__", "0", "x-é")
_UNKNOWN_SCALARS: tuple[object, ...] = ("x-unknown", "", 2, 99, False, True)


def _const(new: object) -> Callable[[Draw, object], object]:
    return lambda _draw, _old: _copy(new)


def _pick(choices: Sequence[object]) -> Callable[[Draw, object], object]:
    options = list(choices)
    return lambda draw, _old: _copy(draw(st.sampled_from(options)))


@dataclass(frozen=True, slots=True)
class _Guard:
    """Members of the object at hand that select a union arm: ``frozen`` are not touched at all
    (they name a known arm), ``kept`` are not removed (they name an unknown variant); ``siblings``
    are the members other arms of the union admit (the likeliest unexpected members)."""

    frozen: frozenset[str] = frozenset()
    kept: frozenset[str] = frozenset()
    siblings: frozenset[str] = frozenset()


_NO_GUARD = _Guard()


class _Sites:
    """The fault sites of one valid value."""

    def __init__(self, context: Context, vocabulary: tuple[str, ...] = ()) -> None:
        self.context = context
        self.valid = _valid_for(context, ())
        self.vocabulary = vocabulary
        """Member names found anywhere in the shape, tried as unexpected members too."""

    def walk(self, shape: Shape, value: object, at: _At, accepted: frozenset[str], guard: _Guard = _NO_GUARD) -> Iterator[_Site]:
        """Sites at and below ``at``; ``accepted`` are the JSON types the place admits."""
        if isinstance(shape, Named):
            yield from self.walk(shape.shape, value, at, accepted, guard)
            return
        if isinstance(shape, Related):
            yield from self.walk(shape.shape, value, at, accepted, guard)
            if self.context.relations:
                for relation in shape.relations:
                    yield from self._broken_relation(shape.shape, relation, value, at)
            return
        if isinstance(shape, Opaque):
            return
        wrong = [_WRONG_TYPE[name] for name in sorted(set(_WRONG_TYPE) - accepted)]
        if wrong and not isinstance(shape, Literal):
            yield _Site(at.location, at.path, "wrong-type", _pick(wrong))
        if isinstance(shape, Str):
            yield from self._string(shape, value, at)
        elif isinstance(shape, Literal):
            unknown = [v for v in _UNKNOWN_SCALARS if not any(same_scalar(v, known) for known in shape.values)]
            yield _Site(at.location, at.path, "unknown-literal", _pick(unknown))
        elif isinstance(shape, Integer):
            yield from _numbers(at, shape.minimum - 1, shape.maximum + 1, fraction=True)
        elif isinstance(shape, Finite):
            below = None
            if shape.minimum is not None:
                below = shape.minimum if shape.exclusive_minimum else shape.minimum - 1
            yield from _numbers(at, below, None if shape.maximum is None else shape.maximum + 1, fraction=False)
        elif isinstance(shape, EarlierSeq):
            yield from _numbers(at, -1, MAX_SAFE_INTEGER + 1, fraction=True)
            seq = self.context.event_seq
            if seq is not None and seq <= MAX_SAFE_INTEGER:
                later = [n for n in (seq, seq + 1) if n <= MAX_SAFE_INTEGER]
                yield _Site(at.location, at.path, "not-earlier", _pick(later), context_only=True)
        elif isinstance(shape, Nullable):
            if value is not None:
                yield from self.walk(shape.shape, value, at, accepted)
        elif isinstance(shape, Array) and isinstance(value, list):
            yield from self._array(shape, value, at)
        elif isinstance(shape, Record) and isinstance(value, dict):
            yield from self._record(shape, value, at, guard)
        elif isinstance(shape, Variants) and isinstance(value, dict):
            yield from self._variants(shape, value, at, guard)

    def _string(self, shape: Str, value: object, at: _At) -> Iterator[_Site]:
        if shape.non_empty:
            yield _Site(at.location, at.path, "empty", _const(""))
        if not isinstance(value, str) or shape.form is None:
            return
        if shape.form is StrForm.TRIMMED:
            wrong = [" " + value, value + "\u3000", "\ufeff" + value, value + "\n"]
        elif shape.form is StrForm.INSTANT:
            wrong = [value[:-5] + "Z", value[:-1], "2021-02-29" + value[10:], "1900-02-29" + value[10:], value.replace("T", " ")]
        else:
            wrong = ["relative" + value]
        yield _Site(at.location, at.path, "not-of-form", _pick(wrong))

    def _array(self, shape: Array, value: list[object], at: _At) -> Iterator[_Site]:
        if shape.min_items > 0:
            yield _Site(at.location, at.path, "empty", _const([]))
        if value and shape.max_items is not None:
            yield _Site(at.location, at.path, "too-many", _const([value[0]] * (shape.max_items + 1)))
        if value and shape.unique:
            yield _Site(at.location, at.path, "duplicate", _const([*value, value[0]]))
        items = accepted_types(shape.items)
        for index, item in enumerate(value):
            yield from self.walk(shape.items, item, at.item(index), items)

    def _record(self, shape: Record, value: dict[str, object], at: _At, guard: _Guard) -> Iterator[_Site]:
        untouchable = guard.frozen | guard.kept
        for name in shape.required:
            if name not in untouchable:
                yield _Site(at.location, at.member(name).path, "missing-member", _without(name))
        for trigger, needed in shape.dependent_required.items():
            for name in needed:
                if trigger in value and name in value and name not in shape.required and name not in untouchable:
                    yield _Site(at.location, at.member(name).path, "missing-member", _without(name))
        if shape.min_members and not shape.required:
            yield _Site(at.location, at.path, "empty", _const({}))
        if shape.additional is None:
            candidates = (*_UNEXPECTED_NAMES, *sorted(guard.siblings), *self.vocabulary)
            # A discriminant is never an unexpected member: adding or overwriting it picks another arm.
            taken = {*shape.required, *shape.optional, *untouchable}
            names = [n for n in dict.fromkeys(candidates) if n not in taken]

            def add(draw: Draw, old: object) -> object:
                assert isinstance(old, dict)
                return {**old, draw(st.sampled_from(names)): draw(OPAQUE_VALUES)}

            yield _Site(at.location, at.path, "unexpected-member", add)
        for name, item in value.items():
            member = shape.member(name)
            if member is not None and name not in guard.frozen:
                yield from self.walk(member, item, at.member(name), accepted_types(member))

    def _variants(self, shape: Variants, value: dict[str, object], at: _At, guard: _Guard) -> Iterator[_Site]:
        name = shape.discriminant
        arm = shape.arm(value)
        keyed = arm is not shape.otherwise or any(arm is a for _, a in shape.arms)
        if not shape.extensible and name not in guard.frozen:
            known = [k for k in shape.keys if not isinstance(k, Absent)]
            unknown = [v for v in _UNKNOWN_SCALARS if not any(same_scalar(v, k) for k in known)]
            yield _Site(at.member(name).location, at.member(name).path, "unknown-literal", _pick(unknown))
        otherwise_needs = shape.otherwise is None or name in members_of(shape.otherwise).required
        if ABSENT not in shape.keys and otherwise_needs and name in value and name not in guard.frozen | guard.kept:
            yield _Site(at.location, at.member(name).path, "missing-member", _without(name))
        if arm is None:
            return
        siblings = guard.siblings.union(*(members_of(a).optional + members_of(a).required for _, a in shape.arms))
        if keyed:
            yield from self.walk(arm, value, at, frozenset({"object"}), _Guard(guard.frozen | {name}, guard.kept, siblings))
        else:
            yield from self.walk(arm, value, at, frozenset({"object"}), _Guard(guard.frozen, guard.kept | {name}, siblings))

    def _broken_relation(self, shape: Shape, relation: Relation, value: object, at: _At) -> Iterator[_Site]:
        """A site that breaks ``relation`` and nothing else, when one is found."""
        if isinstance(relation, Equal | SumOf | NotAbove | FlagIfAnyPositive):
            yield from self._changed_leaf(shape, relation, value, at)
        elif isinstance(relation, ItemIndex) and isinstance(value, list) and value and isinstance(value[0], dict):
            yield _Site((*at.location, 0, relation.member), at.item(0).path, "relation", _const(1), context_only=True)
        elif isinstance(relation, UniqueMember) and isinstance(value, list) and len(value) >= 2:
            first = value[0]
            if isinstance(first, dict) and relation.member in first:
                again = first[relation.member]
                yield _Site((*at.location, 1, relation.member), at.item(1).path, "relation", _const(again), context_only=True)
        elif isinstance(relation, MembersWithin):
            yield from self._stray_member(shape, relation, value, at)
        elif isinstance(relation, GoalStateRestatement) and isinstance(value, dict):
            source = value.get("source")
            if isinstance(source, dict) and restated_goal(source) is not None:
                other = [{"type": "text", "text": "x"}]
                yield _Site(
                    at.member("content").location, at.member("content").path, "relation", _const(other), context_only=True
                )

    def _changed_leaf(
        self, shape: Shape, relation: Equal | SumOf | NotAbove | FlagIfAnyPositive, value: object, at: _At
    ) -> Iterator[_Site]:
        """Breaks a relation by changing one leaf to another value its own shape accepts."""
        if isinstance(relation, Equal):
            target, others = relation.left, [value_at(value, relation.right)]
        elif isinstance(relation, SumOf):
            target, others = relation.total, [value_at(value, relation.total)]
        elif isinstance(relation, NotAbove):
            target, others = relation.lesser, []
        else:
            target, others = relation.flag, [value_at(value, relation.flag)]
        leaf = shape_at(shape, value, target)
        current = value_at(value, target)
        if leaf is None or current is MISSING:
            return
        if isinstance(relation, NotAbove):
            greater = _number(value_at(value, relation.greater))
            candidates: list[object] = [] if greater is None else [greater + 1]
        else:
            candidates = _neighbours(current)
        for candidate in candidates:
            if shape_problem(leaf, candidate, "$", self.context) is None and not any(json_equal(candidate, o) for o in others):
                where = _concrete(value, target)
                yield _Site(
                    (*at.location, *where), step_path_of(at.path, value, target), "relation", _const(candidate), context_only=True
                )
                return

    def _stray_member(self, shape: Shape, relation: MembersWithin, value: object, at: _At) -> Iterator[_Site]:
        source_shape = shape_at(shape, value, relation.source)
        source, target = value_at(value, relation.source), value_at(value, relation.target)
        if not isinstance(source_shape, Record) or not isinstance(source, dict) or not isinstance(target, Mapping):
            return
        stray = [n for n in source_shape.names if n not in source and n not in target]
        if stray:
            name = stray[0]
            member = source_shape.member(name)
            assert member is not None
            strategy = self.valid.of(member)

            def add(draw: Draw, old: object) -> object:
                assert isinstance(old, dict)
                return {**old, name: draw(strategy)}

            where = step_path_of(at.path, value, relation.source)
            yield _Site((*at.location, *relation.source), member_path(where, name), "relation", add, context_only=True)


def _numbers(at: _At, below: float | None, above: float | None, *, fraction: bool) -> Iterator[_Site]:
    if below is not None and below >= -MAX_SAFE_INTEGER - 1:
        yield _Site(at.location, at.path, "out-of-range", _const(below))
    if above is not None:
        yield _Site(at.location, at.path, "out-of-range", _const(above))
    if fraction:
        yield _Site(at.location, at.path, "not-integer", _const(0.5))


def _without(name: str) -> Callable[[Draw, object], object]:
    def edit(_draw: Draw, old: object) -> object:
        assert isinstance(old, dict)
        return {k: v for k, v in old.items() if k != name}

    return edit


def _neighbours(value: object) -> list[object]:
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int | float):
        return [value + 1, value - 1]
    if isinstance(value, str):
        return [value + "x", "x"]
    return []


def _concrete(value: object, path: Path) -> Path:
    """``path`` with negative indexes resolved against ``value``."""
    out: list[str | int] = []
    current = value
    for step in path:
        resolved = len(current) + step if isinstance(step, int) and isinstance(current, list) and step < 0 else step
        out.append(resolved)
        current = value_at(current, (resolved,))
    return tuple(out)


def step_path_of(path: str, value: object, steps: Path) -> str:
    """The JSON path of ``steps`` below ``path`` inside ``value``."""
    for step in _concrete(value, steps):
        path = step_path(path, step)
    return path


def shape_at(shape: Shape, value: object, path: Path) -> Shape | None:
    """The shape governing the value at ``path`` (``None`` when no shape admits it)."""
    current: Shape | None = shape
    here = value
    for step in path:
        while current is not None and isinstance(unwrap(current), Variants | Nullable):
            inner = unwrap(current)
            if isinstance(inner, Nullable):
                current = inner.shape
            elif isinstance(inner, Variants) and isinstance(here, Mapping):
                current = inner.arm(here)
            else:
                return None
        bare = None if current is None else unwrap(current)
        if isinstance(bare, Record) and isinstance(step, str):
            current = bare.member(step)
        elif isinstance(bare, Array) and isinstance(step, int):
            current = bare.items
        else:
            return None
        here = value_at(here, (step,))
    return current


def _apply(value: object, location: Path, new: object) -> object:
    if not location:
        return new
    out = _copy(value)
    set_at(out, location, new)
    return out


def invalid_payload(shape: Shape, context: Context = NO_CONTEXT, focus: Focus = ()) -> st.SearchStrategy[Fault]:
    """One-fault variants of values ``shape`` accepts in ``context`` (drawn with ``focus``), each
    with the path it broke."""
    valid = valid_payload(shape, context, focus)
    vocabulary = member_names(shape)

    @st.composite
    def broken(draw: Draw) -> Fault:
        value = draw(valid)
        sites = list(_Sites(context, vocabulary).walk(shape, value, _At(), accepted_types(shape)))
        assume(sites)
        kinds = sorted({site.kind for site in sites})  # a kind first, so that rare kinds (relations) get their share
        kind = draw(st.sampled_from(kinds))
        site = draw(st.sampled_from([site for site in sites if site.kind == kind]))
        new = site.edit(draw, value_at(value, site.location))
        return Fault(_apply(value, site.location, new), site.path, site.kind, site.context_only)

    return broken()
