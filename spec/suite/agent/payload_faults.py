"""One-fault variants of valid payloads, chosen with a seeded :class:`random.Random`.

Generic over the shape language of :mod:`sessionlog_spec.model.shapes`: nothing here knows an
event type.  :func:`fault_sites` walks a valid value along its shape and lists the *sites* where one
fault can be put (the node to edit, the JSON path broken, the kind of fault, the edit);
:func:`payload_fault` picks a kind, then a site of that kind, applies it, and asks
:func:`~sessionlog_spec.model.shapes.shape_problem` whether the shape now refuses the value.  When
the fault turns out harmless it returns ``None``: an unknown discriminant a merge-extensible union
keeps as owner-opaque JSON, a removed discriminant whose absence selects another arm the rest of the
value fits, a literal a neighbouring arm admits.

Fault kinds (:data:`FAULT_KINDS`), each the way a writer gets a payload wrong:

``missing-member``
    a required member (or one a present member depends on) left out;
``unexpected-member``
    a member the object does not admit: a ``snake_case`` spelling of a member it has, or an id,
    turn or timestamp a writer adds by habit;
``wrong-type``
    a leaf of another JSON type: a number written as a string, a flag as ``0``/``1``, an object
    serialised into a string, a value wrapped in an array, a count with a fraction;
``out-of-range``
    a number just outside its bounds (``-1`` for a count, ``0`` for a positive number, the
    event's own seq where an earlier seq is required);
``unknown-literal``
    a literal spelt another way (``allowed_once`` for ``allowed-once``, ``Normal`` for
    ``normal``, ``false`` for a flag that is only ever ``true``);
``empty``
    ``""`` where a non-empty string is required, ``[]`` where an item is, ``{}`` where a member is;
``bad-variant``
    a discriminant naming another arm of its union than the rest of the object fits, or a value
    no arm names (``""`` in a merge-extensible union).

Values stay lossless JSON (no ``-0``, no integer beyond ``2^53 - 1``), so a fault is a payload
problem and never an envelope one.
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeAlias

from sessionlog_spec.model.json_value import MAX_SAFE_INTEGER
from sessionlog_spec.model.shapes import (
    ABSENT,
    NO_CONTEXT,
    Array,
    Bool,
    Context,
    EarlierSeq,
    Finite,
    Integer,
    Literal,
    Named,
    Nullable,
    Opaque,
    Record,
    Related,
    Scalar,
    Shape,
    Str,
    Variants,
    item_path,
    member_path,
    same_scalar,
    shape_problem,
    unwrap,
)

FAULT_KINDS = ("missing-member", "unexpected-member", "wrong-type", "out-of-range", "unknown-literal", "empty", "bad-variant")
"""Every kind of fault :func:`fault_sites` offers, in the order :func:`payload_fault` draws from."""

JSON_TYPES = ("string", "number", "boolean", "null", "array", "object")

Location: TypeAlias = tuple[str | int, ...]
"""Where a node sits inside a value: member names and array indexes."""
Edit: TypeAlias = Callable[[random.Random, Any], Any]
"""Makes the faulty node from the valid one."""

HABITUAL_MEMBERS: Mapping[str, Any] = MappingProxyType({
    "id": "evt-1",
    "type": "event",
    "turn": 1,
    "sessionId": "mutant-session",
    "timestamp": "2026-07-13T10:00:00.000Z",
    "version": 1,
})
"""Members a writer adds to an object by habit (tried as unexpected members where not admitted)."""


@dataclass(frozen=True, slots=True)
class Site:
    """One place where one fault can be put."""

    location: Location
    """The node the edit replaces (the object itself for a missing or unexpected member)."""
    path: str
    """The JSON path of what is broken (``$`` is the payload)."""
    kind: str
    edit: Edit


@dataclass(frozen=True, slots=True)
class PayloadFault:
    """A payload broken in exactly one place, and the shape's verdict on it."""

    value: Any
    path: str
    kind: str
    problem: str
    """What :func:`~sessionlog_spec.model.shapes.shape_problem` says about ``value``."""


# -- reading shapes ----------------------------------------------------------------------------------


def json_type(value: object) -> str:
    """The JSON type of a plain JSON value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list | tuple) else "object"


def accepted_types(shape: Shape) -> frozenset[str]:
    """The JSON types a value of ``shape`` may have."""
    shape = unwrap(shape)
    if isinstance(shape, Opaque):
        return frozenset(JSON_TYPES)
    if isinstance(shape, Bool):
        return frozenset({"boolean"})
    if isinstance(shape, Str):
        return frozenset({"string"})
    if isinstance(shape, Literal):
        return frozenset(json_type(v) for v in shape.values)
    if isinstance(shape, Integer | Finite | EarlierSeq):
        return frozenset({"number"})
    if isinstance(shape, Nullable):
        return accepted_types(shape.shape) | {"null"}
    if isinstance(shape, Array):
        return frozenset({"array"})
    return frozenset({"object"})


# -- faulty values -----------------------------------------------------------------------------------


def wrong_typed(type_name: str, old: Any) -> Any:
    """A value of JSON type ``type_name`` standing for ``old``, as a writer mixing up types writes it."""
    if type_name == "string":
        return old if isinstance(old, str) else json.dumps(old, separators=(",", ":"))
    if type_name == "number":
        if isinstance(old, bool):
            return int(old)
        if isinstance(old, str) and re.fullmatch(r"-?[0-9]{1,15}", old):
            return int(old)
        return len(old) if isinstance(old, list | tuple | dict | str) else 1
    if type_name == "boolean":
        return bool(old) if isinstance(old, int | float | str) else True
    if type_name == "null":
        return None
    if type_name == "array":
        return [copy.deepcopy(old)]
    return {"value": copy.deepcopy(old)}


def _respelt(text: str) -> list[str]:
    """Other spellings of a literal: the other separator, capitalised, camelCase."""
    out = [text.replace("-", "_"), text.replace("_", "-"), text[:1].upper() + text[1:]]
    out.append(re.sub(r"[-_]([a-z])", lambda m: m.group(1).upper(), text))
    return [s for s in out if s != text]


def unknown_literals(values: tuple[Scalar, ...]) -> list[Scalar]:
    """Values close to ``values`` that none of them is."""
    out: list[Scalar] = []
    for value in values:
        if isinstance(value, bool):
            out.append(not value)
        elif isinstance(value, int | float):
            out.append(value + 1)
        elif isinstance(value, str):
            out.extend(_respelt(value) or [value + "d"])
    fresh: list[Scalar] = []
    for candidate in out:
        if not any(same_scalar(candidate, v) for v in values) and not any(same_scalar(candidate, f) for f in fresh):
            fresh.append(candidate)
    return fresh or ["unknown"]


def snake_case(name: str) -> str:
    """``name`` in ``snake_case`` (``callId`` → ``call_id``)."""
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)


def _const(value: Any) -> Edit:
    return lambda rng, old: copy.deepcopy(value)


def _pick(values: list[Any]) -> Edit:
    return lambda rng, old: copy.deepcopy(rng.choice(values))


def _without(name: str) -> Edit:
    def edit(rng: random.Random, old: Any) -> Any:
        return {k: v for k, v in old.items() if k != name}

    return edit


def _with_member(choices: list[tuple[str, Any]]) -> Edit:
    def edit(rng: random.Random, old: Any) -> Any:
        name, value = rng.choice(choices)
        return {**old, name: copy.deepcopy(value)}

    return edit


def _numbers(
    location: Location, path: str, *, below: float | None, above: float | None, old: object, fraction: bool
) -> Iterator[Site]:
    """Out-of-range values below and above a range, and (for an integer place) one with a fraction."""
    if below is not None and below >= -MAX_SAFE_INTEGER:
        yield Site(location, path, "out-of-range", _const(below))
    if above is not None and above <= MAX_SAFE_INTEGER:
        yield Site(location, path, "out-of-range", _const(above))
    if fraction:
        base = old if isinstance(old, int | float) and not isinstance(old, bool) and abs(old) < 2**52 else 1
        yield Site(location, path, "wrong-type", _const(base + 0.5))


# -- walking a value along its shape -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _At:
    location: Location = ()
    path: str = "$"

    def member(self, name: str) -> _At:
        return _At((*self.location, name), member_path(self.path, name))

    def item(self, index: int) -> _At:
        return _At((*self.location, index), item_path(self.path, index))


class _Walker:
    def __init__(self, context: Context) -> None:
        self.context = context

    def walk(
        self, shape: Shape, value: Any, at: _At, frozen: frozenset[str] = frozenset(), typed: bool = False
    ) -> Iterator[Site]:
        """The sites at and below ``at``.  ``frozen`` names members of this object that a union
        around it reads as its discriminant (faulted by the union, not here); ``typed`` says the
        wrong-type faults of this place were offered already (by a :class:`Nullable` around it)."""
        if isinstance(shape, Named | Related):
            yield from self.walk(shape.shape, value, at, frozen, typed)
            return
        if isinstance(shape, Opaque):
            return
        if not typed and not isinstance(shape, Literal):
            wrong = [t for t in JSON_TYPES if t not in accepted_types(shape)]
            if wrong:
                yield Site(at.location, at.path, "wrong-type", lambda rng, old: wrong_typed(rng.choice(wrong), old))
        if isinstance(shape, Str):
            if shape.non_empty:
                yield Site(at.location, at.path, "empty", _const(""))
        elif isinstance(shape, Literal):
            yield Site(at.location, at.path, "unknown-literal", _pick(unknown_literals(shape.values)))
        elif isinstance(shape, Integer):
            yield from _numbers(at.location, at.path, below=shape.minimum - 1, above=shape.maximum + 1, old=value, fraction=True)
        elif isinstance(shape, Finite):
            below = None
            if shape.minimum is not None:
                below = shape.minimum if shape.exclusive_minimum else shape.minimum - 1
            above = None if shape.maximum is None else shape.maximum + 1
            yield from _numbers(at.location, at.path, below=below, above=above, old=value, fraction=False)
        elif isinstance(shape, EarlierSeq):
            yield from _numbers(at.location, at.path, below=-1, above=None, old=value, fraction=True)
            seq = self.context.event_seq
            if seq is not None:
                yield Site(at.location, at.path, "out-of-range", _const(seq))
        elif isinstance(shape, Nullable):
            if value is not None:
                yield from self.walk(shape.shape, value, at, frozen, typed=True)
        elif isinstance(shape, Array) and isinstance(value, list):
            if shape.min_items > 0:
                yield Site(at.location, at.path, "empty", _const([]))
            for index, item in enumerate(value):
                yield from self.walk(shape.items, item, at.item(index))
        elif isinstance(shape, Record) and isinstance(value, dict):
            yield from self._record(shape, value, at, frozen)
        elif isinstance(shape, Variants) and isinstance(value, dict):
            yield from self._variants(shape, value, at, frozen)

    def _record(self, shape: Record, value: dict[str, Any], at: _At, frozen: frozenset[str]) -> Iterator[Site]:
        for name in shape.required:
            if name not in frozen:
                yield Site(at.location, at.member(name).path, "missing-member", _without(name))
        for trigger, needed in shape.dependent_required.items():
            for name in needed:
                if trigger in value and name in value and name not in shape.required and name not in frozen:
                    yield Site(at.location, at.member(name).path, "missing-member", _without(name))
        if shape.min_members and not shape.required:
            yield Site(at.location, at.path, "empty", _const({}))
        if shape.additional is None:
            admitted = set(shape.names)
            choices = [(snake_case(n), value[n]) for n in value if snake_case(n) not in admitted and snake_case(n) != n]
            choices += list(HABITUAL_MEMBERS.items())
            choices = [(n, v) for n, v in choices if n not in admitted and n not in frozen]
            if choices:
                yield Site(at.location, at.path, "unexpected-member", _with_member(choices))
        for name, item in value.items():
            member = shape.member(name)
            if member is not None and name not in frozen:
                yield from self.walk(member, item, at.member(name))

    def _variants(self, shape: Variants, value: dict[str, Any], at: _At, frozen: frozenset[str]) -> Iterator[Site]:
        name = shape.discriminant
        arm = shape.arm(value)
        where = at.member(name)
        if name not in frozen:
            others: list[Any] = [k for k, a in shape.arms if k is not ABSENT and a is not arm]
            if shape.extensible:
                others.append("")
            else:
                known = tuple(k for k in shape.keys if k is not ABSENT and isinstance(k, str | int | float | bool))
                others.extend(unknown_literals(known))
            if others:
                yield Site(at.location, where.path, "bad-variant", _with_member([(name, k) for k in others]))
            if name in value and ABSENT not in shape.keys:
                yield Site(at.location, where.path, "missing-member", _without(name))
        if arm is not None:
            yield from self.walk(arm, value, at, frozen | {name}, typed=True)


def fault_sites(shape: Shape, value: Any, context: Context = NO_CONTEXT) -> list[Site]:
    """Every site of a valid ``value`` of ``shape`` (``context`` gives the event's seq, which an
    "earlier seq" must stay below)."""
    return list(_Walker(context).walk(shape, value, _At()))


def apply_site(value: Any, site: Site, rng: random.Random) -> Any:
    """``value`` with ``site``'s fault put in: a new value sharing with ``value`` every node off the
    path to the site (only the objects and arrays on that path are copied, one level each).

    Neither is changed afterwards: an edit builds its node anew and never changes the one it is
    given (its constants it copies whole), and nothing downstream changes a candidate's parts.
    """
    return _edited(value, site.location, lambda old: site.edit(rng, old))


def _edited(node: Any, location: Location, edit: Callable[[Any], Any]) -> Any:
    """``node`` with the node at ``location`` replaced by ``edit`` of it, copying the path's containers."""
    if not location:
        return edit(node)
    step, rest = location[0], location[1:]
    out = list(node) if isinstance(node, list) else dict(node)
    out[step] = _edited(node[step], rest, edit)  # type: ignore[index]
    return out


def payload_fault(
    shape: Shape, value: Any, rng: random.Random, context: Context = NO_CONTEXT, kinds: tuple[str, ...] = FAULT_KINDS
) -> PayloadFault | None:
    """``value`` (valid under ``shape``) with one fault of one of ``kinds``, or ``None`` when the
    value has no such site or the fault drawn turns out harmless.

    A kind is drawn first, so that rare kinds (a bad variant) get their share, then a site of it.
    """
    sites = fault_sites(shape, value, context)
    present = [kind for kind in kinds if any(site.kind == kind for site in sites)]
    if not present:
        return None
    kind = rng.choice(present)
    site = rng.choice([s for s in sites if s.kind == kind])
    faulty = apply_site(value, site, rng)
    problem = shape_problem(shape, faulty, "$", context)
    return None if problem is None else PayloadFault(faulty, site.path, kind, problem)

