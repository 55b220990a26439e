"""INV-PAY: the payload of each event type, its members, shapes and merge-extensible unions.

INV-PAY-1 is restated from the table's member lists, INV-PAY-2 by the committed JSON Schema
documents (:mod:`sessionlog_spec.schemas`) under the ``jsonschema`` library, and INV-PAY-3 as two
metamorphic rules: replacing the value of an opaque member changes no verdict, and an unknown
variant of a merge-extensible union is accepted whatever its other members.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

import icontract
from jsonschema import Draft202012Validator

from sessionlog_spec.contracts import ENABLED
from sessionlog_spec.model import payloads as _payloads
from sessionlog_spec.model.json_value import JsonValue, RawJson
from sessionlog_spec.model.payloads import CURRENT_GENERATION, MERGE_EXTENSIBLE, payload_members, payload_shape
from sessionlog_spec.model.shapes import ABSENT, Array, Named, Nullable, Record, Related, Shape, Variants
from sessionlog_spec.schemas import schema_documents, schema_file

PROBE: Any = {"contractProbe": [None, True, 0, -1.5, "", "\u00e9\U0001f600", {"nested": []}]}
"""A lossless JSON value no payload rule names: what an opaque member or an unknown variant's other
members are replaced by."""

MAX_UNKNOWN_VARIANTS = 8
"""At most this many unknown variants of one payload are probed (each probe re-runs the checker)."""


def _plain(value: object) -> Any:
    """A plain ``dict``/``list`` copy of a frozen or plain JSON value."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _same_scalar(a: object, b: object) -> bool:
    """``a === b`` on JSON scalars: ``1`` is ``1.0``, ``true`` is not ``1``."""
    if isinstance(a, bool) or isinstance(b, bool) or isinstance(a, str) or isinstance(b, str):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return a is None and b is None


# -- INV-PAY-1 --------------------------------------------------------------------------------------


def _opaque_descriptor(event_type: str, data: Mapping[str, object], version: int) -> bool:
    """A v1 ``subagent/descriptor`` of a version other than 3: owner-opaque beside its ``version``."""
    return event_type == "subagent/descriptor" and version >= 1 and not _same_scalar(data.get("version"), 3)


def members_are_exact(event_type: str, data: object, version: int) -> bool:
    """INV-PAY-1: an object holding every required member of its type and no member outside the
    required and optional ones (a v1 descriptor of another version: its ``version``, and anything)."""
    if not isinstance(data, Mapping):
        return False
    if _opaque_descriptor(event_type, data, version):
        return "version" in data
    members = payload_members(event_type, version)
    names = set(data)
    return set(members.required) <= names <= {*members.required, *members.optional}


# -- INV-PAY-2 --------------------------------------------------------------------------------------


@cache
def _documents() -> Mapping[str, dict[str, object]]:
    return schema_documents()


@cache
def schema_validator(event_type: str) -> Draft202012Validator:
    """The compiled JSON Schema validator of an event type's ``data`` (payload generation 1)."""
    return Draft202012Validator(_documents()[schema_file(event_type)])


def satisfies_schema(event_type: str, data: object, version: int) -> bool:
    """INV-PAY-2: the payload validates against its type's JSON Schema.  The schemas state
    generation 1; the context-only rules they annotate (earlier seqs, relations) are not checked
    here."""
    if version != CURRENT_GENERATION:
        return True
    return bool(schema_validator(event_type).is_valid(_plain(data)))


# -- INV-PAY-3 --------------------------------------------------------------------------------------


def _verdict(event_type: str, data: object, seq: int, version: int) -> bool:
    """Whether the (uncontracted) model accepts ``data``."""
    return _payloads.payload_problem(event_type, data, seq, version) is None


def opaque_members_are_uninspected(event_type: str, data: object, seq: int, version: int, result: str | None) -> bool:
    """INV-PAY-3: replacing the value of an opaque member by another lossless JSON value gives the same verdict."""
    if not isinstance(data, Mapping):
        return True
    verdict = result is None
    for name in payload_members(event_type, version).opaque:
        if name in data and _verdict(event_type, {**data, name: PROBE}, seq, version) != verdict:
            return False
    return True


def _arm(union: Variants, value: Mapping[str, object]) -> Shape | None:
    """The arm a value takes: the one its discriminant names (or its absence), else ``otherwise``."""
    present = union.discriminant in value
    for key, arm in union.arms:
        if (key is ABSENT and not present) or (key is not ABSENT and present and _same_scalar(key, value[union.discriminant])):
            return arm
    return union.otherwise


def _unknown_variant(named: Named, value: object) -> str | None:
    """The discriminant of ``value`` when it is an unknown variant of the merge-extensible union ``named``."""
    discriminant = MERGE_EXTENSIBLE.get(named.name)
    union = named.shape
    if discriminant is None or not isinstance(union, Variants) or not isinstance(value, Mapping):
        return None
    found = value.get(discriminant)
    if not isinstance(found, str) or found == "" or any(_same_scalar(key, found) for key, _ in union.arms):
        return None
    return discriminant


Location = tuple[tuple[str | int, ...], str]


def unknown_variants(shape: Shape, value: object, path: tuple[str | int, ...] = ()) -> Iterator[Location]:
    """Where ``value`` (valid under ``shape``) holds an unknown variant of a merge-extensible union,
    with that union's discriminant."""
    while isinstance(shape, Named | Related):
        if isinstance(shape, Named):
            discriminant = _unknown_variant(shape, value)
            if discriminant is not None:
                yield path, discriminant
                return
        shape = shape.shape
    if isinstance(shape, Nullable):
        if value is not None:
            yield from unknown_variants(shape.shape, value, path)
    elif isinstance(shape, Array) and isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from unknown_variants(shape.items, item, (*path, index))
    elif isinstance(shape, Record) and isinstance(value, Mapping):
        for name, item in value.items():
            member = shape.member(name)
            if member is not None:
                yield from unknown_variants(member, item, (*path, name))
    elif isinstance(shape, Variants) and isinstance(value, Mapping):
        arm = _arm(shape, value)
        if arm is not None:
            yield from unknown_variants(arm, value, path)


def _replaced(value: object, path: tuple[str | int, ...], new: object) -> Any:
    """A plain copy of ``value`` with the value at ``path`` replaced by ``new``."""
    out = _plain(value)
    if not path:
        return new
    parent = out
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = new
    return out


def unknown_variants_are_opaque(event_type: str, data: object, seq: int, version: int) -> bool:
    """INV-PAY-3: an unknown variant of a merge-extensible union (a discriminant value no arm names)
    is accepted whatever its other members: replaced by its discriminant and a probe member, the
    payload is still accepted."""
    try:
        found = list(unknown_variants(payload_shape(event_type, version), data))
    except RecursionError:
        return True
    original = _plain(data)
    for path, discriminant in found[:MAX_UNKNOWN_VARIANTS]:
        target: Any = original
        for step in path:
            target = target[step]
        probe = {discriminant: target[discriminant], "contractProbe": PROBE}
        if not _verdict(event_type, _replaced(original, path, probe), seq, version):
            return False
    return True


# -- the contracted function ------------------------------------------------------------------------


def payload_accepted(result: str | None) -> bool:
    """Whether the payload checker accepted (named no problem)."""
    return result is None


@icontract.require(lambda event_type: event_type in _payloads.EVENT_PAYLOADS, "a type of the v1 vocabulary", enabled=ENABLED)
@icontract.require(lambda version: version in _payloads.GENERATIONS, "a payload generation", enabled=ENABLED)
@icontract.ensure(
    lambda event_type, data, version, result: not payload_accepted(result) or members_are_exact(event_type, data, version),
    "INV-PAY-1",
    enabled=ENABLED,
)
@icontract.ensure(
    lambda event_type, data, version, result: not payload_accepted(result) or satisfies_schema(event_type, data, version),
    "INV-PAY-2",
    enabled=ENABLED,
)
@icontract.ensure(
    lambda event_type, data, seq, version, result: opaque_members_are_uninspected(event_type, data, seq, version, result),
    "INV-PAY-3",
    enabled=ENABLED,
)
@icontract.ensure(
    lambda event_type, data, seq, version, result: (
        not payload_accepted(result) or unknown_variants_are_opaque(event_type, data, seq, version)
    ),
    "INV-PAY-3",
    enabled=ENABLED,
)
def payload_problem(event_type: str, data: JsonValue | RawJson, seq: int, version: int = CURRENT_GENERATION) -> str | None:
    """The first problem of an event's ``data`` (``seq`` its event's seq), or ``None`` when it is accepted."""
    return _payloads.payload_problem(event_type, data, seq, version)
