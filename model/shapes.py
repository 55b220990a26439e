"""A small language of JSON payload shapes, read two ways: as a checker and as a JSON Schema.

A *shape* is a tree of frozen dataclasses that says which JSON values a payload member may hold.
:func:`shape_problem` names the first problem of a value (with its JSON path, ``$.message.id``),
and :func:`json_schema` states the same shape as JSON Schema (draft 2020-12).  Both are pure.

Nodes:

``Opaque()``
    Any lossless JSON value, kept without inspection (an owner's member).
``Bool()``
    ``true`` or ``false``.
``Str(non_empty, form)``
    A string; ``non_empty`` forbids ``""``; ``form`` names a textual form from :data:`STRING_FORMS`
    (a trimmed identifier, a canonical UTC instant, an absolute path), each a regular expression.
``Literal(values)``
    One of a few JSON scalars, compared as JavaScript's ``===`` compares them (``1`` is ``1.0``,
    ``true`` is not ``1``).
``Integer(minimum, maximum)``
    A safe integer (``|n| <= 2^53 - 1``, not ``-0``; ``3.0`` counts) within the bounds.
    :data:`SAFE_INT`, :data:`COUNT` (non-negative) and :data:`POSITIVE` are the common ones.
``Finite(minimum, maximum, exclusive_minimum)``
    A finite number other than ``-0`` within the bounds.
``EarlierSeq()``
    A count lower than the ``seq`` of the event that carries the payload (a context leaf).
``Nullable(shape)``
    ``null`` or ``shape``.
``Array(items, min_items, max_items, unique)``
    An array of ``items``; ``unique`` forbids two equal items (JSON equality).
``Record(required, optional, additional, min_members, dependent_required)``
    An object with exactly the named members (``additional=None``), or with any further members of
    shape ``additional``; ``min_members`` counts the members present; ``dependent_required`` maps a
    member to the members it needs beside it.
``Variants(discriminant, arms, otherwise)``
    A discriminated union of objects: the value of member ``discriminant`` (or its absence,
    :data:`ABSENT`) selects the arm.  A value no arm names is refused when ``otherwise`` is ``None``
    and must match ``otherwise`` when it is not.  *Merge-extensible* unions
    (:func:`merge_extensible`) accept an unknown discriminant as owner-opaque JSON: any object whose
    discriminant is a non-empty string.
``Related(shape, relations)``
    ``shape`` plus cross-member relations (:data:`Relation`), checked once the shape holds.
``Named(name, doc, define)``
    A named shared sub-shape (``define`` is a thunk, so a shape may contain itself: a
    ``tool-result`` content block holds content blocks).

Relations state what one member says about another: :class:`Equal`, :class:`NotAbove`,
:class:`SumOf`, :class:`FlagIfAnyPositive`, :class:`ItemIndex`, :class:`UniqueMember`,
:class:`MembersWithin` and :class:`GoalStateRestatement`.

**Context.**  Two kinds of rule depend on more than the value: :class:`EarlierSeq` needs the event's
own ``seq``, and relations compare members with each other.  :class:`Context` carries the seq (``None``
skips the "earlier" comparison, keeping the count check) and whether relations are checked.
``Context(None, relations=False)`` is exactly what the JSON Schema states.

**JSON Schema.**  What JSON Schema cannot state becomes the nearest plain constraint plus an
annotation keyword (annotations never change a validator's verdict):

``"x-earlierThanEventSeq": true``
    on an integer schema (an :class:`EarlierSeq`): the integer must also be lower than the ``seq``
    of the event whose ``data`` is validated.
``"x-relations": [...]``
    on an object or array schema (a :class:`Related`): the cross-member rules, one object each
    (``{"relation": "equal", "left": [...], "right": [...]}``, paths as arrays of member names and
    indexes, ``-1`` meaning the last item), which must also hold.
``"x-discriminant": "<member>"`` and ``"x-mergeExtensible": true``
    on a union (a :class:`Variants`): the member that selects the arm, and whether an unknown
    value of it is accepted as owner-opaque JSON.
``"x-opaque": true``
    on a member kept as lossless JSON without inspection.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from types import MappingProxyType
from typing import TypeAlias

from sessionlog_spec.model.json_value import MAX_SAFE_INTEGER, is_object, is_safe_integer, json_equal

# -- values ------------------------------------------------------------------------------------

Scalar: TypeAlias = str | int | float | bool | None
"""A JSON scalar, as a literal or a discriminant value."""


class Absent(Enum):
    """The key of a union arm chosen when the discriminant member is missing."""

    ABSENT = "absent"


ABSENT = Absent.ABSENT
ArmKey: TypeAlias = str | int | bool | Absent

PathStep: TypeAlias = str | int
Path: TypeAlias = tuple[PathStep, ...]
"""A location inside a value: member names and array indexes (``-1`` is the last item)."""


def same_scalar(a: object, b: object) -> bool:
    """JavaScript's ``a === b`` on JSON scalars: ``1`` is ``1.0``, ``true`` is not ``1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    return a is None and b is None


def _is_array(value: object) -> bool:
    return isinstance(value, list | tuple)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _finite(value: object) -> bool:
    """A number other than ``-0``, ``NaN`` and the infinities (an ``int`` is always finite)."""
    if type(value) is int:
        return True
    return type(value) is float and math.isfinite(value) and not (value == 0 and math.copysign(1.0, value) < 0)


# -- string forms ------------------------------------------------------------------------------

JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
"""The characters JavaScript's ``String.prototype.trim`` removes (a character-class body)."""

_END = r"(?![\s\S])"
"""The end of the text, in a form ECMA-262 and Python read alike (``$`` also matches before a final
newline in Python)."""

_DATE = (
    r"(?:(?!0000)[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
    r"|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
    r"|02-(?:0[1-9]|1[0-9]|2[0-8]))"
    r"|(?!0000)(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)"
)
"""A Gregorian calendar date from 0001-01-01 to 9999-12-31 (February 29th only in leap years)."""


class StrForm(Enum):
    """Textual forms a string may be required to have."""

    TRIMMED = "trimmed"
    """No leading or trailing JavaScript whitespace (schedule ids)."""
    INSTANT = "instant"
    """A canonical UTC instant, ``YYYY-MM-DDTHH:MM:SS.sssZ``, naming a real calendar date."""
    ABSOLUTE_PATH = "absolute-path"
    """A POSIX absolute path: it starts with ``/``."""


STRING_FORMS: Mapping[StrForm, str] = MappingProxyType(
    {
        StrForm.TRIMMED: rf"^(?![{JS_WHITESPACE}])[\s\S]*(?<![{JS_WHITESPACE}]){_END}",
        StrForm.INSTANT: rf"^{_DATE}T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.[0-9]{{3}}Z{_END}",
        StrForm.ABSOLUTE_PATH: r"^/",
    }
)
"""Each form as a regular expression that ECMA-262 (JSON Schema's dialect) and Python read alike,
searched (not matched) as JSON Schema's ``pattern`` is."""

_FORM_PATTERNS = {form: re.compile(pattern) for form, pattern in STRING_FORMS.items()}
_FORM_PROBLEMS = {
    StrForm.TRIMMED: "must not have surrounding whitespace",
    StrForm.INSTANT: "must be a canonical UTC instant",
    StrForm.ABSOLUTE_PATH: "must be an absolute path",
}


def has_form(form: StrForm, text: str) -> bool:
    """Whether ``text`` has the textual ``form``."""
    return _FORM_PATTERNS[form].search(text) is not None


# -- nodes -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Opaque:
    """Any lossless JSON value, retained without inspection."""


@dataclass(frozen=True, slots=True)
class Bool:
    """A boolean."""


@dataclass(frozen=True, slots=True)
class Str:
    """A string, non-empty when ``non_empty``, of the textual ``form`` when one is named."""

    non_empty: bool = False
    form: StrForm | None = None


@dataclass(frozen=True, slots=True)
class Literal:
    """One of ``values`` (JSON scalars)."""

    values: tuple[Scalar, ...]

    def __init__(self, *values: Scalar) -> None:
        object.__setattr__(self, "values", tuple(values))


@dataclass(frozen=True, slots=True)
class Integer:
    """A safe integer within ``minimum..maximum`` (both inclusive)."""

    minimum: int = -MAX_SAFE_INTEGER
    maximum: int = MAX_SAFE_INTEGER


SAFE_INT = Integer()
COUNT = Integer(0)
"""A non-negative safe integer."""
POSITIVE = Integer(1)
"""A safe integer of at least 1."""


@dataclass(frozen=True, slots=True)
class Finite:
    """A finite number (not ``-0``) within the bounds; ``None`` leaves a side open."""

    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False


@dataclass(frozen=True, slots=True)
class EarlierSeq:
    """A count lower than the ``seq`` of the event carrying the payload."""


@dataclass(frozen=True, slots=True)
class Nullable:
    """``null`` or ``shape``."""

    shape: Shape


@dataclass(frozen=True, slots=True)
class Array:
    """An array of ``items``: at least ``min_items``, at most ``max_items``, pairwise different when ``unique``."""

    items: Shape
    min_items: int = 0
    max_items: int | None = None
    unique: bool = False


def _frozen_members(members: Mapping[str, Shape]) -> Mapping[str, Shape]:
    return MappingProxyType(dict(members))


@dataclass(frozen=True, slots=True)
class Record:
    """An object with the named members, exactly (``additional=None``) or open to members of shape ``additional``."""

    required: Mapping[str, Shape] = field(default_factory=lambda: MappingProxyType({}))
    optional: Mapping[str, Shape] = field(default_factory=lambda: MappingProxyType({}))
    additional: Shape | None = None
    min_members: int = 0
    dependent_required: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        object.__setattr__(self, "required", _frozen_members(self.required))
        object.__setattr__(self, "optional", _frozen_members(self.optional))
        object.__setattr__(self, "dependent_required", MappingProxyType(dict(self.dependent_required)))

    def member(self, name: str) -> Shape | None:
        """The shape of member ``name``: declared, else ``additional`` (``None`` when not admitted)."""
        return self.required[name] if name in self.required else self.optional.get(name, self.additional)

    @property
    def names(self) -> tuple[str, ...]:
        """The declared member names, required first."""
        return (*self.required, *self.optional)


@dataclass(frozen=True, slots=True)
class Variants:
    """A union of objects told apart by the value (or absence) of one member."""

    discriminant: str
    arms: tuple[tuple[ArmKey, Shape], ...]
    otherwise: Shape | None = None
    """The shape of a value no arm names; ``None`` refuses it."""

    @property
    def extensible(self) -> bool:
        """Whether an unknown discriminant value is accepted (as owner-opaque JSON)."""
        return self.otherwise is not None

    @property
    def keys(self) -> tuple[ArmKey, ...]:
        """The discriminant values (and :data:`ABSENT`) the arms name, in order."""
        return tuple(key for key, _ in self.arms)

    def arm(self, value: Mapping[str, object]) -> Shape | None:
        """The arm for an object: the named one, else ``otherwise`` (``None`` when refused)."""
        present = self.discriminant in value
        found = value.get(self.discriminant)
        for key, shape in self.arms:
            if (key is ABSENT and not present) or (key is not ABSENT and present and same_scalar(key, found)):
                return shape
        return self.otherwise


def merge_extensible(discriminant: str, arms: Mapping[str, Shape]) -> Variants:
    """A union whose unknown variants are owner-opaque: any object whose ``discriminant`` is a non-empty string."""
    return Variants(discriminant, tuple(arms.items()), Record(required={discriminant: Str(non_empty=True)}, additional=Opaque()))


@dataclass(frozen=True, slots=True)
class Equal:
    """The values at ``left`` and ``right`` are equal (JSON equality)."""

    left: Path
    right: Path


@dataclass(frozen=True, slots=True)
class NotAbove:
    """When both are present, the number at ``lesser`` is not greater than the number at ``greater``."""

    lesser: Path
    greater: Path


@dataclass(frozen=True, slots=True)
class SumOf:
    """The count at ``total`` is the sum of the counts at ``parts``."""

    total: Path
    parts: tuple[Path, ...]


@dataclass(frozen=True, slots=True)
class FlagIfAnyPositive:
    """The boolean at ``flag`` is true exactly when one of the counts at ``counts`` is positive."""

    flag: Path
    counts: tuple[Path, ...]


@dataclass(frozen=True, slots=True)
class ItemIndex:
    """On an array of objects: each item's ``member`` is that item's index."""

    member: str


@dataclass(frozen=True, slots=True)
class UniqueMember:
    """On an array of objects: no two items share the value of ``member``."""

    member: str


@dataclass(frozen=True, slots=True)
class MembersWithin:
    """Every member name of the object at ``source`` is also a member of the object at ``target``."""

    source: Path
    target: Path


@dataclass(frozen=True, slots=True)
class GoalStateRestatement:
    """On a message: a legacy goal message restates its change.

    When ``source`` is ``{kind: "goal", change, goalId, revision, …}`` (the pre-v2 form that carries
    the goal change itself), ``goalId`` and ``revision`` name the goal the change names (``cleared``
    for a ``clear``, ``goal`` otherwise) and the content is exactly one text block
    ``<goal_state>{…}</goal_state>`` around the JSON (JavaScript's ``JSON.stringify``) of
    ``{cleared, clearedAt}`` for a ``clear`` or ``{goal, roundsStarted, createdAt, updatedAt}``
    otherwise.  Other messages are not concerned.
    """


Relation: TypeAlias = (
    Equal | NotAbove | SumOf | FlagIfAnyPositive | ItemIndex | UniqueMember | MembersWithin | GoalStateRestatement
)


@dataclass(frozen=True, slots=True)
class Related:
    """``shape`` plus cross-member relations, checked (in order) once ``shape`` holds."""

    shape: Shape
    relations: tuple[Relation, ...]


@dataclass(frozen=True, eq=False)
class Named:
    """A named shared sub-shape; ``define`` returns it (a thunk, so shapes may be recursive)."""

    name: str
    doc: str
    define: Callable[[], Shape] = field(repr=False)

    @cached_property
    def shape(self) -> Shape:
        """The shape this name stands for (defined once, on first use)."""
        return self.define()


Shape: TypeAlias = (
    Opaque | Bool | Str | Literal | Integer | Finite | EarlierSeq | Nullable | Array | Record | Variants | Related | Named
)


@dataclass(frozen=True, slots=True)
class Context:
    """What a check may know beyond the value: the event's seq, and whether relations are checked."""

    event_seq: int | None = None
    """The ``seq`` of the event carrying the payload; ``None`` skips the "earlier than" comparison."""
    relations: bool = True
    """Check :class:`Related` relations; ``False`` checks exactly what the JSON Schema states."""


NO_CONTEXT = Context()
"""No event seq known; relations checked."""
STRUCTURE_ONLY = Context(None, relations=False)
"""The context in which :func:`shape_problem` and :func:`json_schema` agree exactly."""


def unwrap(shape: Shape) -> Shape:
    """``shape`` without its :class:`Named` and :class:`Related` wrappers."""
    while isinstance(shape, Named | Related):
        shape = shape.shape
    return shape


# -- paths -------------------------------------------------------------------------------------

_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*")


def member_path(path: str, name: str) -> str:
    """``path`` extended by member ``name`` (``$.a``, or ``$["a b"]`` when not identifier-like)."""
    if _IDENTIFIER.fullmatch(name):
        return f"{path}.{name}"
    return f"{path}[{json.dumps(name, ensure_ascii=False)}]"


def item_path(path: str, index: int) -> str:
    """``path`` extended by array index ``index``."""
    return f"{path}[{index}]"


def step_path(path: str, step: PathStep) -> str:
    """``path`` extended by one step."""
    return item_path(path, step) if isinstance(step, int) else member_path(path, step)


class _Missing:
    """No value at a path."""


MISSING = _Missing()


def value_at(value: object, path: Path) -> object:
    """The value at ``path`` inside ``value``, or :data:`MISSING`."""
    for step in path:
        if isinstance(step, int):
            if not _is_array(value):
                return MISSING
            items: Sequence[object] = value  # type: ignore[assignment]
            if not -len(items) <= step < len(items):
                return MISSING
            value = items[step]
        else:
            if not isinstance(value, Mapping) or step not in value:
                return MISSING
            value = value[step]
    return value


def _concrete(path: str, steps: Path, value: object) -> str:
    """The JSON path of ``steps`` below ``path``, with ``-1`` written as the index it names."""
    out = path
    current = value
    for step in steps:
        if isinstance(step, int) and _is_array(current):
            index = step if step >= 0 else len(current) + step  # type: ignore[arg-type]
            out = item_path(out, index)
        else:
            out = step_path(out, step)
        current = value_at(current, (step,))
    return out


# -- checking ----------------------------------------------------------------------------------


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if _is_number(value):
        return "a number"
    if _is_array(value):
        return "an array"
    return "an object" if is_object(value) else type(value).__name__


def _literal_text(values: Sequence[Scalar]) -> str:
    return ", ".join(json.dumps(v, ensure_ascii=False) for v in values)


def _integer_problem(shape: Integer, value: object, path: str) -> str | None:
    if not is_safe_integer(value):
        if shape.minimum >= 0:
            return f"{path} must be a non-negative safe integer"
        return f"{path} must be a safe integer"
    number = value
    assert isinstance(number, int | float)
    if number < shape.minimum or number > shape.maximum:
        if shape.maximum == MAX_SAFE_INTEGER:
            return f"{path} must be positive" if shape.minimum == 1 else f"{path} must be at least {shape.minimum}"
        return f"{path} must be {shape.minimum} through {shape.maximum}"
    return None


def _finite_problem(shape: Finite, value: object, path: str) -> str | None:
    if not _finite(value):
        return f"{path} must be a finite number"
    number = value
    assert isinstance(number, int | float)
    if shape.minimum is not None:
        if shape.exclusive_minimum and number <= shape.minimum:
            return f"{path} must be greater than {shape.minimum:g}"
        if not shape.exclusive_minimum and number < shape.minimum:
            return f"{path} must be at least {shape.minimum:g}"
    if shape.maximum is not None and number > shape.maximum:
        return f"{path} must be at most {shape.maximum:g}"
    return None


_Check: TypeAlias = "tuple[Shape, object, str] | Callable[[], str | None]"
"""A pending check: a value to hold against a shape at a path, or a check to run once the
checks pushed after it have passed."""


def _record_problem(shape: Record, value: object, path: str, work: list[_Check]) -> str | None:
    if not is_object(value):
        return f"{path} must be a JSON object"
    if shape.additional is None:
        unexpected = next((key for key in value if key not in shape.required and key not in shape.optional), None)
        if unexpected is not None:
            return f"{path} has unexpected member {json.dumps(unexpected, ensure_ascii=False)}"
    missing = next((key for key in shape.required if key not in value), None)
    if missing is not None:
        return f"{path} lacks required member {json.dumps(missing)}"
    for trigger, needed in shape.dependent_required.items():
        if trigger in value:
            lacking = next((key for key in needed if key not in value), None)
            if lacking is not None:
                return f"{member_path(path, trigger)} requires {json.dumps(lacking)}"
    if len(value) < shape.min_members:
        return f"{path} must have at least {shape.min_members} member(s)"
    checks: list[_Check] = [
        (member, value[name], member_path(path, name))
        for name, member in (*shape.required.items(), *shape.optional.items())
        if name in value
    ]
    if shape.additional is not None:
        extra = shape.additional
        declared = shape.names
        checks += [(extra, item, member_path(path, name)) for name, item in value.items() if name not in declared]
    work.extend(reversed(checks))
    return None


def _variants_problem(shape: Variants, value: object, path: str, work: list[_Check]) -> str | None:
    if not is_object(value):
        return f"{path} must be a JSON object"
    arm = shape.arm(value)
    if arm is None:
        if shape.discriminant not in value:
            return f"{path} lacks required member {json.dumps(shape.discriminant)}"
        known = [key for key in shape.keys if not isinstance(key, Absent)]
        return f"{member_path(path, shape.discriminant)} must be one of {_literal_text(known)}"
    work.append((arm, value, path))
    return None


def _array_problem(shape: Array, value: object, path: str, work: list[_Check]) -> str | None:
    if not _is_array(value):
        return f"{path} must be an array"
    items: Sequence[object] = value  # type: ignore[assignment]

    def counted() -> str | None:
        if len(items) < shape.min_items:
            return f"{path} must be non-empty" if shape.min_items == 1 else f"{path} must have at least {shape.min_items} items"
        if shape.max_items is not None and len(items) > shape.max_items:
            return f"{path} must have at most {shape.max_items} item(s)"
        return None

    def distinct(index: int) -> Callable[[], str | None]:
        def check() -> str | None:
            if any(json_equal(items[index], earlier) for earlier in items[:index]):
                return f"{item_path(path, index)} repeats an earlier item"
            return None

        return check

    work.append(counted)
    for index in reversed(range(len(items))):
        if shape.unique:
            work.append(distinct(index))
        work.append((shape.items, items[index], item_path(path, index)))
    return None


def _leaf_problem(shape: Shape, value: object, path: str, context: Context) -> str | None:
    if isinstance(shape, Bool):
        return None if isinstance(value, bool) else f"{path} must be a boolean"
    if isinstance(shape, Str):
        if not isinstance(value, str) or (shape.non_empty and value == ""):
            return f"{path} must be a non-empty string" if shape.non_empty else f"{path} must be a string"
        if shape.form is not None and not has_form(shape.form, value):
            return f"{path} {_FORM_PROBLEMS[shape.form]}"
        return None
    if isinstance(shape, Literal):
        if any(same_scalar(candidate, value) for candidate in shape.values):
            return None
        return f"{path} must be one of {_literal_text(shape.values)}"
    if isinstance(shape, Integer):
        return _integer_problem(shape, value, path)
    if isinstance(shape, Finite):
        return _finite_problem(shape, value, path)
    if isinstance(shape, EarlierSeq):
        if not is_safe_integer(value) or value < 0:  # type: ignore[operator]
            return f"{path} must be a non-negative safe integer"
        if context.event_seq is not None and value >= context.event_seq:  # type: ignore[operator]
            return f"{path} must identify an earlier event"
    return None


def _visit(shape: Shape, value: object, path: str, context: Context, work: list[_Check]) -> str | None:
    """Check what ``shape`` says of ``value`` itself; push the checks of its parts onto ``work``."""
    if isinstance(shape, Nullable):
        if value is not None:
            work.append((shape.shape, value, path))
        return None
    if isinstance(shape, Array):
        return _array_problem(shape, value, path, work)
    if isinstance(shape, Record):
        return _record_problem(shape, value, path, work)
    if isinstance(shape, Variants):
        return _variants_problem(shape, value, path, work)
    if isinstance(shape, Related):
        if context.relations:
            relations = shape.relations
            work.append(lambda: next((p for r in relations if (p := relation_problem(r, value, path)) is not None), None))
        work.append((shape.shape, value, path))
        return None
    if isinstance(shape, Named):
        work.append((shape.shape, value, path))
        return None
    return _leaf_problem(shape, value, path, context)


def shape_problem(shape: Shape, value: object, path: str = "$", context: Context = NO_CONTEXT) -> str | None:
    """The first problem of ``value`` under ``shape``, naming its JSON path, or ``None``.

    Objects may be plain ``dict`` or frozen mappings, arrays ``list`` or ``tuple``.  Members are
    looked at in the shape's declared order, after the object's own member names (unexpected
    first, then missing), as the released validators look at them; relations once their shape
    holds.  The walk keeps its own stack, so nesting depth is bounded by memory, not by the
    interpreter's recursion limit.
    """
    work: list[_Check] = [(shape, value, path)]
    while work:
        item = work.pop()
        problem = item() if callable(item) else _visit(*item, context, work)
        if problem is not None:
            return problem
    return None


def reaches_opaque(shape: Shape, value: object) -> bool:
    """Whether a value that fits ``shape`` holds a part kept without inspection (INV-PAY-3): a value
    at an :class:`Opaque` node, or an object a merge-extensible union takes as an unknown variant.

    Parts that do not fit are skipped (``shape_problem`` is what judges them); the walk keeps its own
    stack, as that one does.
    """
    work: list[tuple[Shape, object]] = [(shape, value)]
    while work:
        node, item = work.pop()
        if isinstance(node, Opaque):
            return True
        if isinstance(node, Named | Related):
            work.append((node.shape, item))
        elif isinstance(node, Nullable):
            if item is not None:
                work.append((node.shape, item))
        elif isinstance(node, Array):
            if _is_array(item):
                work.extend((node.items, element) for element in item)  # type: ignore[attr-defined]
        elif isinstance(node, Variants):
            if is_object(item):
                arm = node.arm(item)
                if arm is not None and arm is node.otherwise:
                    return True
                if arm is not None:
                    work.append((arm, item))
        elif isinstance(node, Record) and is_object(item):
            for name, member in item.items():
                inner = node.member(name)
                if inner is not None:
                    work.append((inner, member))
    return False


# -- relations ---------------------------------------------------------------------------------


def js_json_text(value: object) -> str:
    """``JSON.stringify(value)`` of a JSON value: compact, members in order, integral numbers without
    a fraction, non-ASCII kept, lone surrogates escaped."""
    text = json.dumps(_plain_numbers(value), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        code = ord(char)
        if 0xD800 <= code <= 0xDBFF and index + 1 < len(text) and 0xDC00 <= ord(text[index + 1]) <= 0xDFFF:
            out.append(text[index : index + 2])
            index += 2
            continue
        out.append(f"\\u{code:04x}" if 0xD800 <= code <= 0xDFFF else char)
        index += 1
    return "".join(out)


def _plain_numbers(value: object) -> object:
    if isinstance(value, Mapping):
        return {k: _plain_numbers(v) for k, v in value.items()}
    if _is_array(value):
        return [_plain_numbers(v) for v in value]  # type: ignore[attr-defined]
    if type(value) is float and value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
        return int(value)
    return value


def restated_goal(source: Mapping[str, object]) -> tuple[object, object, object] | None:
    """For a legacy goal source: the ``(goalId, revision, content)`` it must carry, else ``None``.

    ``None`` also when the change is too malformed to restate (its shape check reports that).
    """
    if source.get("kind") != "goal" or "change" not in source:
        return None
    change = source["change"]
    if not isinstance(change, Mapping):
        return None
    clear = change.get("operation") == "clear"
    ref = change.get("cleared" if clear else "goal")
    if not isinstance(ref, Mapping):
        return None
    members = ("cleared", "clearedAt") if clear else ("goal", "roundsStarted", "createdAt", "updatedAt")
    payload = {name: change[name] for name in members if name in change}
    content = ({"type": "text", "text": f"<goal_state>{js_json_text(payload)}</goal_state>"},)
    return ref.get("id"), ref.get("revision"), content


def _numbers_at(value: object, paths: Sequence[Path]) -> list[float] | None:
    found = [value_at(value, p) for p in paths]
    if not all(_is_number(n) for n in found):
        return None
    return [float(n) if type(n) is float else n for n in found]  # type: ignore[misc]


def relation_problem(relation: Relation, value: object, path: str = "$") -> str | None:
    """The problem with ``relation`` on ``value`` (whose shape already holds), or ``None``.

    A relation between members that are absent holds vacuously.
    """
    if isinstance(relation, Equal):
        left, right = value_at(value, relation.left), value_at(value, relation.right)
        if left is MISSING or right is MISSING or json_equal(left, right):
            return None
        return f"{_concrete(path, relation.left, value)} must equal {_concrete(path, relation.right, value)}"
    if isinstance(relation, NotAbove):
        pair = _numbers_at(value, (relation.lesser, relation.greater))
        if pair is None or pair[0] <= pair[1]:
            return None
        return f"{_concrete(path, relation.lesser, value)} exceeds {_concrete(path, relation.greater, value)}"
    if isinstance(relation, SumOf):
        numbers = _numbers_at(value, (relation.total, *relation.parts))
        if numbers is None or numbers[0] == sum(numbers[1:]):
            return None
        parts = " + ".join(_concrete(path, p, value) for p in relation.parts)
        return f"{_concrete(path, relation.total, value)} must equal {parts}"
    if isinstance(relation, FlagIfAnyPositive):
        flag = value_at(value, relation.flag)
        counts = _numbers_at(value, relation.counts)
        if not isinstance(flag, bool) or counts is None or flag == any(n > 0 for n in counts):
            return None
        counted = ", ".join(_concrete(path, p, value) for p in relation.counts)
        return f"{_concrete(path, relation.flag, value)} disagrees with {counted}"
    if isinstance(relation, ItemIndex | UniqueMember):
        if not _is_array(value):
            return None
        seen: list[object] = []
        items: Sequence[object] = value  # type: ignore[assignment]
        for index, item in enumerate(items):
            if not isinstance(item, Mapping) or relation.member not in item:
                continue
            where = member_path(item_path(path, index), relation.member)
            member = item[relation.member]
            if isinstance(relation, ItemIndex) and not same_scalar(member, index):
                return f"{where} must be {index}, the item's position"
            if isinstance(relation, UniqueMember) and any(json_equal(member, s) for s in seen):
                return f"{where} repeats an earlier item's {relation.member}"
            seen.append(member)
        return None
    if isinstance(relation, MembersWithin):
        source, target = value_at(value, relation.source), value_at(value, relation.target)
        if not isinstance(source, Mapping) or not isinstance(target, Mapping):
            return None
        stray = next((name for name in source if name not in target), None)
        if stray is None:
            return None
        needed = member_path(_concrete(path, relation.target, value), stray)
        return f"{member_path(_concrete(path, relation.source, value), stray)} needs {needed}"
    source = value_at(value, ("source",))
    restated = restated_goal(source) if isinstance(source, Mapping) else None
    if restated is None:
        return None
    assert isinstance(source, Mapping)
    goal_id, revision, content = restated
    if not (same_scalar(source.get("goalId"), goal_id) and same_scalar(source.get("revision"), revision)):
        return f"{member_path(path, 'source')} does not name the goal its change names"
    if not json_equal(value_at(value, ("content",)), content):
        return f"{member_path(path, 'content')} does not restate the goal change"
    return None


# -- reading shapes ----------------------------------------------------------------------------


def arms_of(shape: Shape) -> Iterator[Shape]:
    """The object shapes a value of ``shape`` may take, through named, related and variant nodes
    (a union's ``otherwise`` excluded)."""
    shape = unwrap(shape)
    if isinstance(shape, Variants):
        for _, arm in shape.arms:
            yield from arms_of(arm)
    else:
        yield shape


@dataclass(frozen=True, slots=True)
class Members:
    """The member names of an object shape: present in every known arm, admitted, and opaque."""

    required: tuple[str, ...]
    optional: tuple[str, ...]
    opaque: tuple[str, ...]


def members_of(shape: Shape) -> Members:
    """The members of an object shape, over the arms of its unions (unknown variants excluded).

    ``required``: members every arm requires; ``optional``: every other member some arm admits;
    ``opaque``: members that every arm admitting them keeps as :class:`Opaque`.
    """
    records = [arm for arm in arms_of(shape) if isinstance(arm, Record)]
    admitted: dict[str, list[Shape]] = {}
    for record in records:
        for name in record.names:
            admitted.setdefault(name, []).append(unwrap(record.required.get(name) or record.optional[name]))
    required = tuple(name for name in admitted if all(name in r.required for r in records))
    optional = tuple(name for name in admitted if name not in required)
    opaque = tuple(name for name, shapes in admitted.items() if all(isinstance(s, Opaque) for s in shapes))
    return Members(required, optional, opaque)


# -- JSON Schema -------------------------------------------------------------------------------

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _path_json(path: Path) -> list[PathStep]:
    return list(path)


def relation_annotation(relation: Relation) -> dict[str, object]:
    """The ``x-relations`` entry of a relation."""
    if isinstance(relation, Equal):
        return {"relation": "equal", "left": _path_json(relation.left), "right": _path_json(relation.right)}
    if isinstance(relation, NotAbove):
        return {"relation": "notAbove", "lesser": _path_json(relation.lesser), "greater": _path_json(relation.greater)}
    if isinstance(relation, SumOf):
        return {"relation": "sumOf", "total": _path_json(relation.total), "parts": [_path_json(p) for p in relation.parts]}
    if isinstance(relation, FlagIfAnyPositive):
        return {
            "relation": "flagIfAnyPositive",
            "flag": _path_json(relation.flag),
            "counts": [_path_json(p) for p in relation.counts],
        }
    if isinstance(relation, ItemIndex):
        return {"relation": "itemIndex", "member": relation.member}
    if isinstance(relation, UniqueMember):
        return {"relation": "uniqueMember", "member": relation.member}
    if isinstance(relation, MembersWithin):
        return {"relation": "membersWithin", "source": _path_json(relation.source), "target": _path_json(relation.target)}
    return {"relation": "goalStateRestatement"}


class _SchemaWriter:
    """One JSON Schema document: the root and the ``$defs`` its named shapes need."""

    def __init__(self) -> None:
        self.defs: dict[str, dict[str, object]] = {}
        self.named: dict[str, Named] = {}

    def write(self, shape: Shape) -> dict[str, object] | bool:
        if isinstance(shape, Opaque):
            return {"x-opaque": True}
        if isinstance(shape, Bool):
            return {"type": "boolean"}
        if isinstance(shape, Str):
            out: dict[str, object] = {"type": "string"}
            if shape.non_empty:
                out["minLength"] = 1
            if shape.form is not None:
                out["pattern"] = STRING_FORMS[shape.form]
            return out
        if isinstance(shape, Literal):
            values = list(shape.values)
            return {"const": values[0]} if len(values) == 1 else {"enum": values}
        if isinstance(shape, Integer):
            return {"type": "integer", "minimum": shape.minimum, "maximum": shape.maximum}
        if isinstance(shape, Finite):
            out = {"type": "number"}
            if shape.minimum is not None:
                out["exclusiveMinimum" if shape.exclusive_minimum else "minimum"] = _number_json(shape.minimum)
            if shape.maximum is not None:
                out["maximum"] = _number_json(shape.maximum)
            return out
        if isinstance(shape, EarlierSeq):
            return {"type": "integer", "minimum": 0, "maximum": MAX_SAFE_INTEGER, "x-earlierThanEventSeq": True}
        if isinstance(shape, Nullable):
            return {"anyOf": [{"type": "null"}, self.write(shape.shape)]}
        if isinstance(shape, Array):
            out = {"type": "array", "items": self.write(shape.items)}
            if shape.min_items:
                out["minItems"] = shape.min_items
            if shape.max_items is not None:
                out["maxItems"] = shape.max_items
            if shape.unique:
                out["uniqueItems"] = True
            return out
        if isinstance(shape, Record):
            return self._record(shape)
        if isinstance(shape, Variants):
            return self._variants(shape)
        if isinstance(shape, Related):
            inner = self.write(shape.shape)
            assert isinstance(inner, dict)
            return {**inner, "x-relations": [relation_annotation(r) for r in shape.relations]}
        return self._named(shape)

    def _named(self, shape: Named) -> dict[str, object]:
        known = self.named.get(shape.name)
        if known is not None and known is not shape:
            raise ValueError(f"two different shapes are named {shape.name!r}")
        if known is None:
            self.named[shape.name] = shape
            self.defs[shape.name] = {}
            body = self.write(shape.shape)
            assert isinstance(body, dict)
            self.defs[shape.name] = {"description": shape.doc, **body}
        return {"$ref": f"#/$defs/{shape.name}"}

    def _record(self, shape: Record) -> dict[str, object]:
        out: dict[str, object] = {"type": "object"}
        properties = {name: self.write(member) for name, member in (*shape.required.items(), *shape.optional.items())}
        if properties:
            out["properties"] = properties
        if shape.required:
            out["required"] = list(shape.required)
        if shape.additional is None:
            out["additionalProperties"] = False
        elif not isinstance(shape.additional, Opaque):
            out["additionalProperties"] = self.write(shape.additional)
        if shape.min_members:
            out["minProperties"] = shape.min_members
        if shape.dependent_required:
            out["dependentRequired"] = {k: list(v) for k, v in shape.dependent_required.items()}
        return out

    def _variants(self, shape: Variants) -> dict[str, object]:
        groups: list[tuple[list[ArmKey], Shape]] = []
        for key, arm in shape.arms:
            group = next((g for g in groups if g[1] is arm), None)
            if group is None:
                groups.append(([key], arm))
            else:
                group[0].append(key)
        name = shape.discriminant
        conditions = [_arm_condition(name, keys) for keys, _ in groups]
        clauses: list[object] = [
            {"if": condition, "then": self.write(arm)} for condition, (_, arm) in zip(conditions, groups, strict=True)
        ]
        otherwise = False if shape.otherwise is None else self.write(shape.otherwise)
        clauses.append({"if": {"anyOf": conditions}, "else": otherwise})
        out: dict[str, object] = {"type": "object", "x-discriminant": name}
        if shape.extensible:
            out["x-mergeExtensible"] = True
        out["allOf"] = clauses
        return out


def _number_json(number: float) -> int | float:
    return int(number) if float(number).is_integer() else number


def _arm_condition(name: str, keys: Sequence[ArmKey]) -> dict[str, object]:
    values = [k for k in keys if not isinstance(k, Absent)]
    present: dict[str, object] = {
        "required": [name],
        "properties": {name: {"const": values[0]} if len(values) == 1 else {"enum": values}},
    }
    absent: dict[str, object] = {"not": {"required": [name]}}
    if not values:
        return absent
    if len(values) < len(keys):
        return {"anyOf": [present, absent]}
    return present


def json_schema(shape: Shape) -> dict[str, object]:
    """``shape`` as a JSON Schema (draft 2020-12) object, with the ``$defs`` of its named shapes.

    The schema and :func:`shape_problem` in :data:`STRUCTURE_ONLY` accept the same values; the
    annotations (module docstring) state the rest.
    """
    writer = _SchemaWriter()
    root = writer.write(shape)
    assert isinstance(root, dict)
    if writer.defs:
        root = {**root, "$defs": dict(sorted(writer.defs.items()))}
    return root
