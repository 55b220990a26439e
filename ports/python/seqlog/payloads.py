"""Event payloads (INV-PAY-1..3): the ``data`` of every known event type, by its published JSON Schema.

The contract publishes one JSON Schema (draft 2020-12) per event type; seqlog carries a copy in
``seqlog/schemas/`` (``tool/result`` is ``tool.result.schema.json``) and validates each known event's
``data`` with the ``jsonschema`` library, one validator per type, compiled on first use and kept.
Unknown (ignorable) types carry any lossless JSON and are not looked at.

The schemas state what JSON Schema can; two annotation keywords state the rest, and are
implemented here as validator keywords:

``x-earlierThanEventSeq``
    the integer must also be lower than the ``seq`` of the event whose ``data`` is validated;
``x-relations``
    cross-member rules that must hold once the object or array they annotate has its shape:
    ``equal``, ``notAbove``, ``sumOf``, ``flagIfAnyPositive``, ``itemIndex``, ``uniqueMember``,
    ``membersWithin`` and ``goalStateRestatement`` (paths are arrays of member names and indexes,
    ``-1`` naming the last item).

``x-discriminant``, ``x-mergeExtensible`` and ``x-opaque`` only describe what the plain keywords
already decide (an unknown variant of a merge-extensible union, an uninspected member).

**The first problem.**  A refusal names one problem, the one every conforming implementation names:
an object's own member names first (an unexpected member, then a missing one, then the members one
needs beside it, then too few members), then its members in the schema's order, then the relations
that annotate it; an array's items in order, then its length.  The compiled validators visit each
schema's keywords in that order (the published files are not changed: JSON Schema's verdict does
not depend on keyword order, only which problem is met first does).

**Speed.**  Each schema is also compiled into an *acceptor* (see its section below), a walk that
decides the common case, a valid payload, without the library; whatever it does not accept is the
library's to judge and explain.  Every payload is validated, on append and on every read.

**Codes.**  :func:`check_data` refuses a payload with the code of its type: ``USER_MESSAGE_INVALID``,
``ASSISTANT_MESSAGE_INVALID``, ``TOOL_RESULT_INVALID``, ``HEADER_INVALID``, ``END_SEED_INVALID``, or
``PAYLOAD_INVALID`` for every other type.  The bracket, chunk and tool-call types are the trace's
(:data:`TRACE_TYPES`): :func:`seqlog.trace.check_trace_data` checks them with the trace's codes.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Final, cast

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator

from seqlog.errors import Code, SeqlogError
from seqlog.event import END_SEED, KNOWN_TYPES, Event
from seqlog.jsonvalue import MAX_SAFE_INTEGER, json_equal

SCHEMA_DIRECTORY: Final = "schemas"
"""The folder inside the package that holds the published schema files."""

TRACE_TYPES = frozenset({"turn/start", "turn/end", "step/start", "step/end", "tool/call", "assistant/chunk"})
"""The types whose payload problems answer in the trace's codes (:mod:`seqlog.trace`)."""

PAYLOAD_INVALID: Final = cast(Code, Code.__members__.get("PAYLOAD_INVALID", "PAYLOAD_INVALID"))
"""The contract's code for a payload problem of a type without a code of its own (the plain string
when :class:`seqlog.errors.Code` does not declare it)."""

TYPE_CODES: Mapping[str, Code] = {
    "user/message": Code.USER_MESSAGE_INVALID,
    "assistant/message": Code.ASSISTANT_MESSAGE_INVALID,
    "tool/result": Code.TOOL_RESULT_INVALID,
    "request/header": Code.HEADER_INVALID,
    END_SEED: Code.END_SEED_INVALID,
}
"""Types whose payload problems have a code of their own; every other non-trace type answers
``PAYLOAD_INVALID``."""

PathStep = str | int


CURRENT_GENERATION: Final = 1
"""The payload generation of v1 events; generation 0 is the v0 source the legacy edge converts."""


def schema_file(event_type: str, generation: int = CURRENT_GENERATION) -> str:
    """The schema file of an event type: ``tool/result`` is ``tool.result.schema.json``; an older
    generation's is ``tool.result.v0.schema.json`` (published only where it differs)."""
    stem = event_type.replace("/", ".")
    return f"{stem}.schema.json" if generation == CURRENT_GENERATION else f"{stem}.v{generation}.schema.json"


@cache
def generation_schema_file(event_type: str, generation: int) -> str:
    """The schema file that validates ``event_type``'s data in payload ``generation``: the
    generation's own file when one is published, else the current generation's."""
    if generation != CURRENT_GENERATION:
        own = schema_file(event_type, generation)
        if resources.files("seqlog").joinpath(SCHEMA_DIRECTORY, own).is_file():
            return own
    return schema_file(event_type)


def schema_text(name: str) -> str:
    """The text of the packaged schema file ``name``."""
    return resources.files("seqlog").joinpath(SCHEMA_DIRECTORY, name).read_text(encoding="utf-8")


def schema_names() -> list[str]:
    """The packaged schema files, sorted."""
    folder = resources.files("seqlog").joinpath(SCHEMA_DIRECTORY)
    return sorted(entry.name for entry in folder.iterdir() if entry.name.endswith(".schema.json"))


def payload_members(event_type: str) -> frozenset[str]:
    """The members a known event type's payload object declares (its schema's ``properties``)."""
    schema = json.loads(schema_text(schema_file(event_type)))
    return frozenset(schema.get("properties", ()))


# -- paths -----------------------------------------------------------------------------------------


def _name_step(name: str) -> str:
    head, rest = name[:1], name[1:]
    identifier = (head.isascii() and (head.isalpha() or head in "_$")) and all(
        c.isascii() and (c.isalnum() or c in "_$-") for c in rest
    )
    return f".{name}" if identifier else f"[{json.dumps(name, ensure_ascii=False)}]"


def json_path(steps: Sequence[PathStep]) -> str:
    """A location as a JSON path: ``$`` is ``data``, then ``.member`` (``["a b"]``) and ``[index]``."""
    return "$" + "".join(f"[{step}]" if isinstance(step, int) else _name_step(step) for step in steps)


# -- relations (x-relations) -------------------------------------------------------------------------


class _Missing:
    """No value at a path."""


_MISSING: Final = _Missing()


def _at(value: object, path: Sequence[PathStep]) -> object:
    """The value at ``path`` inside ``value`` (``-1`` is the last item), or :data:`_MISSING`."""
    for step in path:
        if isinstance(step, int):
            if not isinstance(value, list | tuple) or not -len(value) <= step < len(value):
                return _MISSING
            value = value[step]
        else:
            if not isinstance(value, Mapping) or step not in value:
                return _MISSING
            value = value[step]
    return value


def _concrete(value: object, path: Sequence[PathStep]) -> list[PathStep]:
    """``path`` with a negative index written as the index it names in ``value``."""
    out: list[PathStep] = []
    current = value
    for step in path:
        if isinstance(step, int) and step < 0 and isinstance(current, list | tuple):
            out.append(len(current) + step)
        else:
            out.append(step)
        current = _at(current, (step,))
    return out


def _is_negative_zero(value: object) -> bool:
    return isinstance(value, float) and value == 0 and math.copysign(1.0, value) < 0


def _is_number(value: object) -> bool:
    """A JSON number the format can hold: ``-0`` is none (a v1 log refuses it as lossy before any payload
    rule; the v0 edge checks payloads first, and its table refuses ``-0`` where it wants a number)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and not _is_negative_zero(value)


def _same_scalar(a: object, b: object) -> bool:
    """JavaScript's ``a === b`` on JSON scalars: ``1`` is ``1.0``, ``true`` is not ``1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if _is_number(a) and _is_number(b):
        return a == b
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    return a is None and b is None


def _numbers(value: object, paths: Sequence[Sequence[PathStep]]) -> list[float] | None:
    found = [_at(value, path) for path in paths]
    return [cast(float, n) for n in found] if all(_is_number(n) for n in found) else None


def _plain_numbers(value: object) -> object:
    if isinstance(value, Mapping):
        return {k: _plain_numbers(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain_numbers(v) for v in value]
    if type(value) is float and value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
        return int(value)
    return value


def js_stringify(value: object) -> str:
    """JavaScript's ``JSON.stringify`` of a JSON value: compact, members in order, integral numbers
    without a fraction, non-ASCII as is, lone surrogates escaped."""
    text = json.dumps(_plain_numbers(value), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    out: list[str] = []
    index, size = 0, len(text)
    while index < size:
        char = text[index]
        if "\ud800" <= char <= "\udbff" and index + 1 < size and "\udc00" <= text[index + 1] <= "\udfff":
            out.append(text[index : index + 2])
            index += 2
            continue
        out.append(f"\\u{ord(char):04x}" if "\ud800" <= char <= "\udfff" else char)
        index += 1
    return "".join(out)


@dataclass(frozen=True, slots=True)
class Broken:
    """A relation that does not hold: the member at fault and what is wrong with it.

    Paths are relative to the value the relation annotates; ``text`` names the other members it
    involves with ``{0}``, ``{1}``, … (their paths in ``others``).
    """

    where: tuple[PathStep, ...]
    text: str
    others: tuple[tuple[PathStep, ...], ...] = ()


def _goal_restatement_problem(value: object) -> Broken | None:
    """A legacy goal message (its source carries the goal change) restates that change."""
    source = _at(value, ("source",))
    if not isinstance(source, Mapping) or source.get("kind") != "goal" or "change" not in source:
        return None
    change = source["change"]
    if not isinstance(change, Mapping):
        return None
    clear = change.get("operation") == "clear"
    goal = change.get("cleared" if clear else "goal")
    if not isinstance(goal, Mapping):
        return None
    names = ("cleared", "clearedAt") if clear else ("goal", "roundsStarted", "createdAt", "updatedAt")
    restated = {name: change[name] for name in names if name in change}
    if not (_same_scalar(source.get("goalId"), goal.get("id")) and _same_scalar(source.get("revision"), goal.get("revision"))):
        return Broken(("source",), "does not name the goal its change names")
    content = ({"type": "text", "text": f"<goal_state>{js_stringify(restated)}</goal_state>"},)
    if not json_equal(_at(value, ("content",)), content):
        return Broken(("content",), "does not restate the goal change")
    return None


def _item_problem(rule: Mapping[str, Any], value: object) -> Broken | None:
    """``itemIndex`` and ``uniqueMember``: each item's member is its index / differs from earlier items'."""
    if not isinstance(value, list | tuple):
        return None
    member = rule["member"]
    seen: list[object] = []
    for index, item in enumerate(value):
        if not isinstance(item, Mapping) or member not in item:
            continue
        if rule["relation"] == "itemIndex" and not _same_scalar(item[member], index):
            return Broken((index, member), f"must be {index}, the item's position")
        if rule["relation"] == "uniqueMember" and any(json_equal(item[member], other) for other in seen):
            return Broken((index, member), f"repeats an earlier item's {member}")
        seen.append(item[member])
    return None


def _broken(value: object, where: Sequence[PathStep], text: str, *others: Sequence[PathStep]) -> Broken:
    return Broken(tuple(_concrete(value, where)), text, tuple(tuple(_concrete(value, other)) for other in others))


def _listed(count: int, joint: str) -> str:
    return joint.join(f"{{{i}}}" for i in range(count))


def relation_problem(rule: Mapping[str, Any], value: object) -> Broken | None:
    """The problem with one ``x-relations`` rule on ``value`` (whose shape holds), or ``None``.

    A rule between members that are absent holds.
    """
    kind = rule["relation"]
    if kind == "equal":
        left, right = _at(value, rule["left"]), _at(value, rule["right"])
        if left is _MISSING or right is _MISSING or json_equal(left, right):
            return None
        return _broken(value, rule["left"], "must equal {0}", rule["right"])
    if kind == "notAbove":
        pair = _numbers(value, (rule["lesser"], rule["greater"]))
        if pair is None or pair[0] <= pair[1]:
            return None
        return _broken(value, rule["lesser"], "exceeds {0}", rule["greater"])
    if kind == "sumOf":
        numbers = _numbers(value, (rule["total"], *rule["parts"]))
        if numbers is None or numbers[0] == sum(numbers[1:]):
            return None
        return _broken(value, rule["total"], "must equal " + _listed(len(rule["parts"]), " + "), *rule["parts"])
    if kind == "flagIfAnyPositive":
        flag, counts = _at(value, rule["flag"]), _numbers(value, rule["counts"])
        if not isinstance(flag, bool) or counts is None or flag == any(n > 0 for n in counts):
            return None
        return _broken(value, rule["flag"], "disagrees with " + _listed(len(rule["counts"]), ", "), *rule["counts"])
    if kind in ("itemIndex", "uniqueMember"):
        return _item_problem(rule, value)
    if kind == "membersWithin":
        source, target = _at(value, rule["source"]), _at(value, rule["target"])
        if not isinstance(source, Mapping) or not isinstance(target, Mapping):
            return None
        stray = next((name for name in source if name not in target), None)
        if stray is None:
            return None
        return _broken(value, [*rule["source"], stray], "needs {0}", [*rule["target"], stray])
    if kind == "goalStateRestatement":
        return _goal_restatement_problem(value)
    raise ValueError(f"unknown relation {kind!r}")


# -- the validator ---------------------------------------------------------------------------------

_EVENT_SEQ: ContextVar[int | None] = ContextVar("seqlog_payload_event_seq", default=None)
"""The seq of the event whose data is being validated."""


def _earlier_than_event_seq(
    validator: Validator, flag: object, instance: object, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    seq = _EVENT_SEQ.get()
    if flag is True and seq is not None and validator.is_type(cast(Any, instance), "integer") and cast(float, instance) >= seq:
        yield ValidationError(f"must identify an earlier event (below seq {seq})")


def _relations(
    validator: Validator, rules: Sequence[Mapping[str, Any]], instance: object, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    for rule in rules:
        broken = relation_problem(rule, instance)
        if broken is not None:
            yield _RelationError(broken)
            return


class _RelationError(ValidationError):
    """A broken ``x-relations`` rule, located at the member at fault."""

    def __init__(self, broken: Broken) -> None:
        super().__init__(broken.text, path=broken.where)
        self.broken = broken

    def describe(self) -> str:
        """What is wrong, the other members named by their paths below ``data``."""
        absolute = list(self.absolute_path)
        annotated = absolute[: len(absolute) - len(self.broken.where)]
        return self.broken.text.format(*(json_path([*annotated, *other]) for other in self.broken.others))


class _UnknownVariant(ValidationError):
    """A union's discriminant names no arm (or is absent and no arm takes its absence)."""


def _unknown_variant(discriminant: str, instance: Mapping[str, Any]) -> _UnknownVariant:
    if discriminant in instance:
        named = json.dumps(instance[discriminant], ensure_ascii=False)
        return _UnknownVariant(f"names no known variant ({named})", path=[discriminant])
    return _UnknownVariant(f"lacks required member {json.dumps(discriminant, ensure_ascii=False)}")


_ALL_OF = Draft202012Validator.VALIDATORS["allOf"]


def _all_of(
    validator: Any, subschemas: Sequence[object], instance: object, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    """``allOf``, naming the discriminant when a union (``x-discriminant``) refuses a variant."""
    discriminant = schema.get("x-discriminant")
    for error in _ALL_OF(validator, subschemas, instance, schema):
        if not isinstance(discriminant, str) or error.schema is not False or error.path or not isinstance(instance, Mapping):
            yield error
        else:
            yield _unknown_variant(discriminant, instance)


def _is_array(_checker: object, instance: object) -> bool:
    return isinstance(instance, list | tuple)


def _is_object(_checker: object, instance: object) -> bool:
    return isinstance(instance, Mapping)


def _number_type(_checker: object, instance: object) -> bool:
    return _is_number(instance)


def _integer_type(_checker: object, instance: object) -> bool:
    return _is_integer(instance)


PayloadValidator = validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator,
    validators={"x-earlierThanEventSeq": _earlier_than_event_seq, "x-relations": _relations, "allOf": _all_of},
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine_many(
        {"array": _is_array, "object": _is_object, "number": _number_type, "integer": _integer_type}
    ),
)
"""Draft 2020-12 with the two annotation keywords enforced; frozen arrays (tuples) are arrays; ``-0`` is no number."""

_FIRST: Final = ("type", "additionalProperties", "required", "dependentRequired", "minProperties")
_ARRAY: Final = ("items", "uniqueItems", "minItems", "maxItems")
_LAST: Final = ("x-relations",)
_SCHEMA_MAPS: Final = ("properties", "$defs")
_REF_SIBLINGS: Final = frozenset({"$ref", "$schema", "$defs", "$comment", "title", "description"})
"""Members beside a ``$ref`` that do not validate: such a reference is its definition."""
_SCHEMA_LISTS: Final = ("allOf", "anyOf", "oneOf")
_SCHEMA_VALUES: Final = ("items", "additionalProperties", "if", "then", "else", "not")


def _compile_schema(root: Mapping[str, Any]) -> dict[str, Any]:
    """A published schema made ready to validate with: the keywords of each (sub)schema in the
    order problems are named (see the module docstring), and each ``{"$ref": "#/$defs/<name>"}``
    replaced by the definition it names (shared, so a recursive definition refers to itself).
    JSON Schema's verdict is the same."""
    definitions = root.get("$defs", {})
    inlined: dict[str, dict[str, Any]] = {name: {} for name in definitions}

    def walk(schema: object) -> object:
        if not isinstance(schema, Mapping):
            return schema
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in inlined and set(schema) <= _REF_SIBLINGS:
            return inlined[ref[8:]]
        leading = [key for key in (*_FIRST, *_ARRAY) if key in schema]
        trailing = [key for key in _LAST if key in schema]
        out: dict[str, object] = {}
        for key in [*leading, *(k for k in schema if k not in leading and k not in trailing), *trailing]:
            member = schema[key]
            if key in _SCHEMA_MAPS:
                member = {name: walk(sub) for name, sub in member.items()}
            elif key in _SCHEMA_LISTS:
                member = [walk(sub) for sub in member]
            elif key in _SCHEMA_VALUES:
                member = walk(member)
            out[key] = member
        return out

    for name, definition in definitions.items():
        inlined[name].update(cast(dict[str, Any], walk(definition)))
    return cast(dict[str, Any], walk(root))


@cache
def validator_for(event_type: str, generation: int = CURRENT_GENERATION) -> Validator:
    """The compiled validator of a known event type's ``data`` in payload ``generation`` (compiled once)."""
    if event_type not in KNOWN_TYPES:
        raise KeyError(event_type)
    if generation not in (0, CURRENT_GENERATION):
        raise ValueError(f"payload generation {generation} is not 0 or 1")
    schema = _compile_schema(json.loads(schema_text(generation_schema_file(event_type, generation))))
    return cast(Validator, PayloadValidator(schema))


# -- the acceptor ----------------------------------------------------------------------------------
#
# The library enters every subschema by building a validator for it, which costs far more than
# checking a string or a count: validating every append that way makes appends several times
# slower.  So each compiled schema is also compiled once into an *acceptor* over the keywords the
# published schemas use, with the library's meaning of each (its types, its equality,
# ``re.search`` patterns); a union (``x-discriminant``) enters only the arm its discriminant
# selects.  A payload the acceptor accepts is valid; any other payload is validated by the library,
# which names the first problem (and has the last word: a payload it finds valid is valid).  A
# schema using a keyword the acceptor does not know has no acceptor.
#
# The acceptor walks a value with its own stack (a subschema checks what it says of the value
# itself and pushes its parts), so nesting depth is bounded by memory, not by the interpreter's
# recursion limit.

Predicate = Callable[[object], bool]
Condition = Callable[[Mapping[str, Any]], bool]
Work = list[tuple["Visit", object]]
Visit = Callable[[object, Work], bool]
"""Checks what a subschema says of a value itself, and pushes the checks of the value's parts."""

_NOT_VALIDATING: Final = frozenset(
    {"$schema", "$defs", "$comment", "title", "description", "x-opaque", "x-discriminant", "x-mergeExtensible"}
)


class _Unsupported(Exception):
    """A schema uses a keyword the acceptor does not compile."""


@dataclass(frozen=True, slots=True)
class _Node:
    """A compiled subschema: its visit, and for one that never looks into a value's parts, the
    predicate that decides it outright."""

    visit: Visit
    leaf: Predicate | None = None


def _leaf(test: Predicate) -> _Node:
    return _Node(lambda v, _work: test(v), test)


def _walk(node: _Node, value: object) -> bool:
    """Whether ``value`` holds under ``node``, parts included."""
    if node.leaf is not None:
        return node.leaf(value)
    work: Work = [(node.visit, value)]
    while work:
        visit, part = work.pop()
        if not visit(part, work):
            return False
    return True


def _push(node: _Node, value: object, work: Work) -> bool:
    """Check ``value`` under ``node`` now when that is a leaf, else later."""
    if node.leaf is not None:
        return node.leaf(value)
    work.append((node.visit, value))
    return True


def _is_integer(value: object) -> bool:
    """The library's ``integer``: an ``int`` (not a ``bool``) or an integral ``float`` other than ``-0``."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer() and not _is_negative_zero(value))


_TYPE_TESTS: Final[Mapping[str, Predicate]] = {
    "string": lambda v: isinstance(v, str),
    "integer": _is_integer,
    "number": _is_number,
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "object": lambda v: isinstance(v, Mapping),
    "array": lambda v: isinstance(v, list | tuple),
}


def _scalar_key(value: object) -> tuple[object, ...] | None:
    """A hashable key that two JSON scalars share exactly when they are equal (``1`` and ``1.0``
    alike, ``true`` and ``1`` not); ``None`` for arrays and objects."""
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, int | float):
        return ("number", value)
    if isinstance(value, str):
        return ("string", value)
    return ("null",) if value is None else None


def _unique(items: Sequence[object]) -> bool:
    """``uniqueItems``: no two items are equal."""
    seen: set[tuple[object, ...]] = set()
    others: list[object] = []
    for item in items:
        key = _scalar_key(item)
        if key is None:
            if any(json_equal(item, other) for other in others):
                return False
            others.append(item)
        elif key in seen:
            return False
        else:
            seen.add(key)
    return True


def _condition(schema: object) -> tuple[Condition, frozenset[str]] | None:
    """An ``if`` that tests members' presence and values (``required`` and ``properties`` with a
    ``const`` or ``enum``, ``not`` ``required``, or ``anyOf`` of those): a predicate on objects, and
    the members it reads."""
    if not isinstance(schema, Mapping):
        return None
    if set(schema) == {"anyOf"}:
        parts = [_condition(part) for part in schema["anyOf"]]
        if any(part is None for part in parts):
            return None
        tests = [cast(tuple[Condition, frozenset[str]], part) for part in parts]
        return (lambda v: any(test(v) for test, _ in tests)), frozenset().union(*(names for _, names in tests))
    if set(schema) == {"not"} and isinstance(schema["not"], Mapping) and set(schema["not"]) == {"required"}:
        absent = list(schema["not"]["required"])
        return (lambda v: not all(name in v for name in absent)), frozenset(absent)
    if set(schema) != {"required", "properties"} or not isinstance(schema["properties"], Mapping):
        return None
    needed, members = list(schema["required"]), schema["properties"]
    checks: list[tuple[str, tuple[object, ...]]] = []
    for name, sub in members.items():
        if not isinstance(sub, Mapping) or set(sub) not in ({"const"}, {"enum"}):
            return None
        checks.append((name, (sub["const"],) if "const" in sub else tuple(sub["enum"])))

    def test(v: Mapping[str, Any]) -> bool:
        return all(name in v for name in needed) and all(
            name not in v or any(json_equal(v[name], known) for known in values) for name, values in checks
        )

    return test, frozenset(needed) | frozenset(members)


_MEMO_LIMIT: Final = 64
"""Discriminant values whose arms a union remembers (the values it names, and a few more)."""


class _Union:
    """A union's ``allOf`` of ``if``/``then``/``else`` clauses whose conditions read only the
    discriminant: the subschemas an object enters follow from the discriminant's value, and are
    remembered per value."""

    def __init__(self, discriminant: str, clauses: list[tuple[Condition, _Node | None, _Node | None]]) -> None:
        self.discriminant = discriminant
        self.clauses = clauses
        self.memo: dict[tuple[object, ...], tuple[_Node, ...]] = {}

    def visit(self, value: object, work: Work) -> bool:
        """Push the arm the discriminant of ``value`` selects (a non-object is the ``type``'s to refuse)."""
        if not isinstance(value, Mapping):
            return True
        name = self.discriminant
        key = _scalar_key(value[name]) if name in value else ("absent",)
        entered = self.memo.get(key) if key is not None else None
        if entered is None:
            entered = tuple(
                chosen
                for condition, then, otherwise in self.clauses
                if (chosen := then if condition(value) else otherwise) is not None
            )
            if key is not None and len(self.memo) < _MEMO_LIMIT:
                self.memo[key] = entered
        for arm in entered:  # noqa: SIM110 - a loop: the arms may push work
            if not _push(arm, value, work):
                return False
        return True


_RECORD_KEYWORDS: Final = frozenset({"type", "properties", "required", "additionalProperties", "x-relations"})
_SCALAR_KEYWORDS: Final = frozenset(
    {
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "minLength",
        "pattern",
        "const",
        "enum",
        "x-earlierThanEventSeq",
        "required",
        "minProperties",
        "dependentRequired",
        "minItems",
        "maxItems",
        "uniqueItems",
        "then",
        "else",
    }
)
"""Keywords that decide a value without looking at its parts through other subschemas."""


def _relations_hold(rules: Sequence[Mapping[str, Any]]) -> Predicate:
    return lambda v: all(relation_problem(rule, v) is None for rule in rules)


def _string(schema: Mapping[str, Any], validating: list[str]) -> Predicate | None:
    """``{"type": "string"}`` with ``minLength``, as one predicate."""
    if schema.get("type") != "string" or not set(validating) <= {"type", "minLength"}:
        return None
    least = schema.get("minLength", 0)
    return lambda v: isinstance(v, str) and len(v) >= least


def _integer(schema: Mapping[str, Any], validating: list[str]) -> Predicate | None:
    """``{"type": "integer"}`` with ``minimum``, ``maximum`` and ``x-earlierThanEventSeq``, as one predicate."""
    if schema.get("type") != "integer" or not set(validating) <= {"type", "minimum", "maximum", "x-earlierThanEventSeq"}:
        return None
    low, high = schema.get("minimum"), schema.get("maximum")
    earlier = schema.get("x-earlierThanEventSeq") is True

    def accepts(v: object) -> bool:
        if v.__class__ is not int and not _is_integer(v):
            return False
        number = cast(float, v)
        if (low is not None and number < low) or (high is not None and number > high):
            return False
        return not earlier or (seq := _EVENT_SEQ.get()) is None or number < seq

    return accepts


class _Acceptors:
    """Compiles the (sub)schemas of one document, each subschema once."""

    def __init__(self) -> None:
        self.done: dict[int, tuple[object, _Node]] = {}

    def of(self, schema: object) -> _Node:
        known = self.done.get(id(schema))
        if known is not None and known[0] is schema:
            return known[1]
        cell: list[_Node] = []
        self.done[id(schema)] = (schema, _Node(lambda v, work: cell[0].visit(v, work)))  # a definition that contains itself
        compiled = self._compile(schema)
        cell.append(compiled)
        self.done[id(schema)] = (schema, compiled)
        return compiled

    def _compile(self, schema: object) -> _Node:
        if schema is True or schema is False:
            verdict = schema
            return _leaf(lambda _: verdict)
        if not isinstance(schema, Mapping):
            raise _Unsupported(repr(schema))
        validating = [keyword for keyword in schema if keyword not in _NOT_VALIDATING]
        leaf = _string(schema, validating) or _integer(schema, validating)
        if leaf is not None:
            return _leaf(leaf)
        record = self._record(schema, validating)
        if record is not None:
            return record
        parts = [self._keyword(schema, keyword, schema[keyword]) for keyword in validating if keyword != "x-relations"]
        if "x-relations" in schema:
            parts.append(_leaf(_relations_hold(schema["x-relations"])))
        if not parts:
            return _leaf(lambda _: True)
        if len(parts) == 1:
            return parts[0]
        if all(part.leaf is not None for part in parts):
            tests = [cast(Predicate, part.leaf) for part in parts]
            return _leaf(lambda v: all(test(v) for test in tests))

        def visit(v: object, work: Work) -> bool:
            for part in parts:  # noqa: SIM110 - a loop: the parts may push work
                if not _push(part, v, work):
                    return False
            return True

        return _Node(visit)

    def _record(self, schema: Mapping[str, Any], validating: list[str]) -> _Node | None:
        """An object schema of members (``type``, ``properties``, ``required``, ``additionalProperties``
        false or absent, ``x-relations``) as one visit."""
        if schema.get("type") != "object" or not set(validating) <= _RECORD_KEYWORDS:
            return None
        closed = schema.get("additionalProperties", True) is False
        if "additionalProperties" in schema and not closed:
            return None
        members = [(name, self.of(sub)) for name, sub in schema.get("properties", {}).items()]
        declared = frozenset(schema.get("properties", ()))
        needed = list(schema.get("required", ()))
        related = _relations_hold(schema["x-relations"]) if "x-relations" in schema else None

        def visit(v: object, work: Work) -> bool:
            if not isinstance(v, dict) and not isinstance(v, Mapping):
                return False
            if closed:
                for name in v:
                    if name not in declared:
                        return False
            for name in needed:
                if name not in v:
                    return False
            for name, member in members:
                if name in v:
                    if member.leaf is not None:
                        if not member.leaf(v[name]):
                            return False
                    else:
                        work.append((member.visit, v[name]))
            return related is None or related(v)

        return _Node(visit)

    def _keyword(self, schema: Mapping[str, Any], keyword: str, argument: Any) -> _Node:
        if keyword == "type":
            if not isinstance(argument, str) or argument not in _TYPE_TESTS:
                raise _Unsupported(f"type {argument!r}")
            return _leaf(_TYPE_TESTS[argument])
        if keyword == "properties":
            members = [(name, self.of(sub)) for name, sub in argument.items()]

            def properties(v: object, work: Work) -> bool:
                if isinstance(v, Mapping):
                    for name, member in members:
                        if name in v and not _push(member, v[name], work):
                            return False
                return True

            return _Node(properties)
        if keyword == "additionalProperties":
            if "patternProperties" in schema:
                raise _Unsupported("patternProperties")
            declared = frozenset(schema.get("properties", ()))
            extra = self.of(argument)

            def additional(v: object, work: Work) -> bool:
                if isinstance(v, Mapping):
                    for name, member in v.items():
                        if name not in declared and not _push(extra, member, work):
                            return False
                return True

            return _Node(additional)
        if keyword == "items":
            if "prefixItems" in schema:
                raise _Unsupported("prefixItems")
            each = self.of(argument)

            def items(v: object, work: Work) -> bool:
                if isinstance(v, list | tuple):
                    for item in v:
                        if not _push(each, item, work):
                            return False
                return True

            return _Node(items)
        if keyword == "anyOf":
            branches = [self.of(sub) for sub in argument]
            return _leaf(lambda v: any(_walk(branch, v) for branch in branches))
        if keyword == "allOf":
            union = self._union(schema)
            if union is not None:
                return _Node(union.visit)
            parts = [self.of(sub) for sub in argument]

            def all_of(v: object, work: Work) -> bool:
                for part in parts:  # noqa: SIM110 - a loop: the parts may push work
                    if not _push(part, v, work):
                        return False
                return True

            return _Node(all_of)
        if keyword == "if":
            condition = self.of(argument)
            then = self.of(schema["then"]) if "then" in schema else None
            otherwise = self.of(schema["else"]) if "else" in schema else None

            def if_(v: object, work: Work) -> bool:
                chosen = then if _walk(condition, v) else otherwise
                return chosen is None or _push(chosen, v, work)

            return _Node(if_)
        if keyword == "not":
            negated = self.of(argument)
            return _leaf(lambda v: not _walk(negated, v))
        if keyword in _SCALAR_KEYWORDS:
            return _leaf(_scalar_keyword(keyword, argument))
        raise _Unsupported(keyword)

    def _union(self, schema: Mapping[str, Any]) -> _Union | None:
        discriminant = schema.get("x-discriminant")
        if not isinstance(discriminant, str):
            return None
        clauses: list[tuple[Condition, _Node | None, _Node | None]] = []
        for clause in schema["allOf"]:
            if not isinstance(clause, Mapping) or "if" not in clause or not set(clause) <= {"if", "then", "else"}:
                return None
            condition = _condition(clause["if"])
            if condition is None or condition[1] != {discriminant}:
                return None
            then = self.of(clause["then"]) if "then" in clause else None
            otherwise = self.of(clause["else"]) if "else" in clause else None
            clauses.append((condition[0], then, otherwise))
        return _Union(discriminant, clauses)


def _scalar_keyword(keyword: str, argument: Any) -> Predicate:
    """The predicate of a keyword that looks at the value alone (as the library applies it: a
    keyword about another type of value holds)."""
    if keyword == "required":
        needed = list(argument)
        return lambda v: not isinstance(v, Mapping) or all(name in v for name in needed)
    if keyword == "minProperties":
        return lambda v: not isinstance(v, Mapping) or len(v) >= argument
    if keyword == "dependentRequired":
        pairs = [(trigger, list(needed)) for trigger, needed in argument.items()]
        return lambda v: (
            not isinstance(v, Mapping) or all(trigger not in v or all(name in v for name in needed) for trigger, needed in pairs)
        )
    if keyword == "minItems":
        return lambda v: not isinstance(v, list | tuple) or len(v) >= argument
    if keyword == "maxItems":
        return lambda v: not isinstance(v, list | tuple) or len(v) <= argument
    if keyword == "uniqueItems":
        return lambda v: argument is not True or not isinstance(v, list | tuple) or _unique(v)
    if keyword == "const":
        return lambda v: json_equal(v, argument)
    if keyword == "enum":
        values = list(argument)
        return lambda v: any(json_equal(v, known) for known in values)
    if keyword == "minimum":
        return lambda v: not _is_number(v) or v >= argument
    if keyword == "maximum":
        return lambda v: not _is_number(v) or v <= argument
    if keyword == "exclusiveMinimum":
        return lambda v: not _is_number(v) or v > argument
    if keyword == "minLength":
        return lambda v: not isinstance(v, str) or len(v) >= argument
    if keyword == "pattern":
        search = re.compile(argument).search
        return lambda v: not isinstance(v, str) or search(v) is not None
    if keyword == "x-earlierThanEventSeq":
        return lambda v: argument is not True or not _is_integer(v) or (seq := _EVENT_SEQ.get()) is None or cast(float, v) < seq
    # "then" and "else" are applied by "if"
    return lambda _: True


@cache
def acceptor_for(event_type: str, generation: int = CURRENT_GENERATION) -> Predicate | None:
    """The acceptor of a known event type's ``data`` in payload ``generation`` (compiled once), or
    ``None`` when its schema uses a keyword the acceptor does not compile."""
    try:
        root = _Acceptors().of(validator_for(event_type, generation).schema)
    except _Unsupported:
        return None
    return lambda data: _walk(root, data)


# -- problems --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Problem:
    """The first problem of a payload: where it is (member names and indexes below ``data``), and what."""

    path: tuple[PathStep, ...]
    text: str

    def __str__(self) -> str:
        return f"{json_path(self.path)} {self.text}"


_TYPE_NAMES: Final = {
    "object": "a JSON object",
    "array": "an array",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
}


def _literals(values: Sequence[object]) -> str:
    return ", ".join(json.dumps(v, ensure_ascii=False) for v in values)


def _deepest(error: ValidationError) -> ValidationError:
    """For a nullable member (``anyOf`` with ``null``): the problem of the non-null reading."""
    while error.validator == "anyOf" and error.context:
        branches = cast(Sequence[Any], error.validator_value)
        others = [e for e in error.context if branches[cast(int, e.relative_schema_path[0])] != {"type": "null"}]
        if not others:
            break
        error = others[0]
    return error


def _describe(error: ValidationError) -> str:
    keyword, expected, instance = error.validator, error.validator_value, error.instance
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    if isinstance(error, _RelationError):
        return error.describe()
    if isinstance(error, _UnknownVariant):
        return error.message
    if keyword is None:
        return "is not one of the known variants"
    if keyword == "type":
        return f"must be {_TYPE_NAMES.get(str(expected), str(expected))}"
    if keyword == "additionalProperties" and isinstance(instance, Mapping):
        known = schema.get("properties", {})
        name = next((key for key in instance if key not in known), "")
        return f"has unexpected member {json.dumps(name, ensure_ascii=False)}"
    if keyword == "required" and isinstance(instance, Mapping):
        name = next((key for key in cast(Sequence[str], expected) if key not in instance), "")
        return f"lacks required member {json.dumps(name, ensure_ascii=False)}"
    if keyword == "dependentRequired" and isinstance(instance, Mapping):
        for trigger, needed in cast(Mapping[str, Sequence[str]], expected).items():
            lacking = [key for key in needed if trigger in instance and key not in instance]
            if lacking:
                return f"member {json.dumps(trigger)} requires {json.dumps(lacking[0])}"
    phrases: dict[str, Callable[[], str]] = {
        "minProperties": lambda: f"must have at least {expected} member(s)",
        "minLength": lambda: "must be a non-empty string",
        "pattern": lambda: f"does not have the required form ({expected})",
        "const": lambda: f"must be {_literals([expected])}",
        "enum": lambda: f"must be one of {_literals(cast(Sequence[object], expected))}",
        "minimum": lambda: f"must be at least {expected}",
        "maximum": lambda: f"must be at most {expected}",
        "exclusiveMinimum": lambda: f"must be greater than {expected}",
        "minItems": lambda: f"must have at least {expected} item(s)",
        "maxItems": lambda: f"must have at most {expected} item(s)",
        "uniqueItems": lambda: "repeats an earlier item",
        "anyOf": lambda: "must be null or a valid value",
    }
    phrase = phrases.get(str(keyword))
    return phrase() if phrase is not None else error.message


def accepted(event_type: str, data: object, seq: int, generation: int = CURRENT_GENERATION) -> bool | None:
    """The acceptor's verdict on a known event type's ``data`` (``None`` when the type has none):
    ``True`` means valid, ``False`` means the library is to decide."""
    accepts = acceptor_for(event_type, generation)
    if accepts is None:
        return None
    token = _EVENT_SEQ.set(seq)
    try:
        return accepts(data)
    except RecursionError:
        return False
    finally:
        _EVENT_SEQ.reset(token)


def library_problem(event_type: str, data: object, seq: int, generation: int = CURRENT_GENERATION) -> Problem | None:
    """The first problem of a known event type's ``data`` by the library alone, or ``None``."""
    validator = validator_for(event_type, generation)
    token = _EVENT_SEQ.set(seq)
    try:
        error = next(validator.iter_errors(cast(Any, data)), None)
    except RecursionError:
        return Problem((), "is nested too deeply")
    finally:
        _EVENT_SEQ.reset(token)
    if error is None:
        return None
    error = _deepest(error)
    return Problem(tuple(error.absolute_path), _describe(error))


def payload_problem(event_type: str, data: object, seq: int, generation: int = CURRENT_GENERATION) -> Problem | None:
    """The first problem of a known event type's ``data``, or ``None``; ``seq`` is the event's own.

    ``generation`` 0 judges a converted v0 payload (the legacy edge): by the type's published v0
    schema where its payload differs between generations, else by its current schema.

    ``data`` may be frozen (``FrozenObject`` and tuples) or plain JSON.  What the acceptor accepts
    is valid, however deep; anything else is the library's to judge, and a value nested too deeply
    for the library to walk is refused as such.
    """
    if accepted(event_type, data, seq, generation):
        return None
    return library_problem(event_type, data, seq, generation)


def check_data(event: Event) -> None:
    """Refuse a known event whose ``data`` is not exactly its type's payload (INV-PAY-1..3).

    Runs after the type's own rules (messages, request headers, the end-of-seed marker), so those
    name their finer problems first.  The trace types are left to :func:`seqlog.trace.check_trace_data`;
    unknown types carry any JSON.
    """
    if event.type not in KNOWN_TYPES or event.type in TRACE_TYPES:
        return
    problem = payload_problem(event.type, event.data, event.seq)
    if problem is not None:
        code = TYPE_CODES.get(event.type, PAYLOAD_INVALID)
        raise SeqlogError(code, f"{event.type} at seq {event.seq} data: {problem}")
