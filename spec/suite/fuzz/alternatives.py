"""Alternatives: each value of a valid payload replaced by another a writer could plausibly write there.

A keyword fault (:mod:`~sessionlog_spec.suite.fuzz.schema_faults`) asks whether a port refuses what
the schema refuses.  Many rules a port gets wrong are about values the schema *admits*: a rule that
reads one member of a union's arms and not another, a relationship that holds for one error code and
not its sibling, a comparison made with the host language's equality, a member whose absence a port
takes for its default.  :func:`alternative_sites` walks a valid payload along its type's published
document (the same walk as the keyword faults) and lists, at every place:

=================  ===================================================================================
edit               what it writes
=================  ===================================================================================
``sibling``        every other value the document names for a member of that name (``const`` and
                   ``enum`` anywhere under it, a union's discriminant values from all its arms), and
                   every value the model itself writes there (:func:`model_values`: the repair's
                   error records, the legacy reason the edge refuses)
``flipped``        a boolean's other value
``twin``           a value a host language takes for equal that JSON does not: ``true``/``1``,
                   ``false``/``0``, ``1``/``1.0`` and back
``optional``       a member the document does not require, left out
``declared``       a member the document declares and the value leaves out, written with a value of
                   its schema (both booleans; a ``const``; each ``enum`` value; a number at its bound)
``emptied``        a string made empty, wherever it stands (a rule may want it non-empty where no
                   keyword says so)
``grown``          an array with a copy of its last item added (a block after the one a rule reads)
``shortened``      an array without its first item
``reversed``       an array's items in the other order (an order a rule may read: cited seqs, blocks)
=================  ===================================================================================

None of these is assumed valid or invalid: the model judges each.  Most are valid-but-rare events (a
result saying ``isError: false``, the other abort cause); others break a rule no keyword states (a
relationship that only one error code satisfies, a rewrite that changes a member it must keep).
"""

from __future__ import annotations

import copy
import functools
import json
import random
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final, TypeVar

from sessionlog_spec.model.header import LEGACY_REASON_FALLBACK
from sessionlog_spec.model.repair import interrupted_turn_closers
from sessionlog_spec.suite.agent.builder import SessionBuilder
from sessionlog_spec.suite.fuzz.schema_faults import Location, RawSite, _resolve, _Walk, remembered_per_payload, schema_document

EDITS: Final = ("sibling", "flipped", "twin", "optional", "declared", "emptied", "grown", "shortened", "reversed")
T = TypeVar("T")


def _repair_records() -> dict[str, set[object]]:
    """The error records the model's repair writes, member by member: both crash-repair codes and
    names, read off the closers of a step with one call recorded and one only advertised."""
    b = SessionBuilder()
    b.turn_start()
    b.step_start()
    b.assistant_message("Reading.", ["call-recorded", "call-advertised"])
    b.tool_call("call-recorded")
    records: dict[str, set[object]] = {}
    for closer in interrupted_turn_closers(b.state.events):
        error = closer.data.get("error") if isinstance(closer.data, Mapping) else None
        if isinstance(error, Mapping):
            for key, value in error.items():
                records.setdefault(f"error.{key}", set()).add(value)
    return records


@functools.cache
def model_values() -> Mapping[str, frozenset[object]]:
    """The values the model itself writes or names, by member name (with its parent's where the
    name alone says too little): the repair's error records and the legacy reason the edge refuses."""
    values: dict[str, set[object]] = {"reason": {LEGACY_REASON_FALLBACK}}
    for key, found in _repair_records().items():
        values.setdefault(key, set()).update(found)
    return {key: frozenset(found) for key, found in values.items()}


def _literals_of(root: Mapping[str, Any], schema: object, seen: set[int]) -> set[object]:
    """Every ``const`` and ``enum`` value of ``schema`` and its branches (``$ref``s followed once)."""
    if not isinstance(schema, Mapping) or id(schema) in seen:
        return set()
    seen.add(id(schema))
    schema = _resolve(root, schema)
    found: set[object] = set()
    if "const" in schema and isinstance(schema["const"], str | int | bool):
        found.add(schema["const"])
    for value in schema.get("enum", ()):
        if isinstance(value, str | int | bool):
            found.add(value)
    for keyword in ("allOf", "anyOf", "oneOf"):
        for branch in schema.get(keyword, ()):
            found |= _literals_of(root, branch, seen)
    for keyword in ("if", "then", "else"):
        found |= _literals_of(root, schema.get(keyword), seen)
    return found


def _pools_in(root: Mapping[str, Any], node: object, pools: dict[str, set[object]]) -> None:
    if isinstance(node, Mapping):
        for name, member in node.get("properties", {}).items() if isinstance(node.get("properties"), Mapping) else ():
            pools.setdefault(name, set()).update(_literals_of(root, member, set()))
        for value in node.values():
            _pools_in(root, value, pools)
    elif isinstance(node, list):
        for item in node:
            _pools_in(root, item, pools)


@functools.cache
def value_pools(event_type: str) -> Mapping[str, tuple[object, ...]]:
    """For each member name, every literal value ``event_type``'s document names for a member of
    that name, anywhere in it; and the model's own values, by member name and its parent's
    (``error.code``)."""
    root = schema_document(event_type)
    pools: dict[str, set[object]] = {}
    _pools_in(root, root, pools)
    for name, found in model_values().items():
        pools.setdefault(name, set()).update(found)
    return {name: tuple(sorted(found, key=repr)) for name, found in pools.items() if found}


def _twins(value: object) -> list[object]:
    if isinstance(value, bool):
        return [int(value)]
    if isinstance(value, int):
        return [float(value), *([bool(value)] if value in (0, 1) else [])]
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return [int(value)]
    return []


def _declared_values(root: Mapping[str, Any], schema: object) -> list[object]:
    """Values a declared member could be written with: from its schema's literals, type and bounds."""
    if not isinstance(schema, Mapping):
        return []
    schema = _resolve(root, schema)
    literals = sorted(_literals_of(root, schema, set()), key=repr)
    if literals:
        return list(literals)
    declared = schema.get("type")
    if declared == "boolean":
        return [True, False]
    if declared in ("integer", "number"):
        return [schema.get("minimum", schema.get("exclusiveMinimum", 0) + 1)]
    if declared == "string":
        return ["x" * max(1, int(schema.get("minLength", 1)))]
    return []


class _Alternatives(_Walk):
    """The walk of :mod:`~sessionlog_spec.suite.fuzz.schema_faults`, yielding alternatives instead of faults."""

    def __init__(self, root: Mapping[str, Any], payload: object, pools: Mapping[str, tuple[object, ...]]) -> None:
        super().__init__(root, payload)
        self.pools = pools

    def _type(self, schema: Mapping[str, Any], value: object, location: Location) -> Iterator[RawSite]:
        for twin in _twins(value):
            yield self.edit(location, "twin", f"{twin!r} for {value!r}", twin)
        if isinstance(value, bool):
            yield self.edit(location, "flipped", f"{not value!r}", not value)
        names = [str(step) for step in location[-2:]]
        if names and isinstance(value, str | int) and not isinstance(value, bool):
            pool = {*self.pools.get(names[-1], ()), *self.pools.get(".".join(names), ())}
            for other in sorted(pool, key=repr):
                if other != value and type(other) is type(value):
                    yield self.edit(location, "sibling", f"{other!r} for {value!r}", other)

    def _literals(self, schema: Mapping[str, Any], value: object, location: Location) -> Iterator[RawSite]:
        return iter(())

    def _numbers(self, schema: Mapping[str, Any], value: float, location: Location) -> Iterator[RawSite]:
        return iter(())

    def _strings(self, schema: Mapping[str, Any], value: str, location: Location) -> Iterator[RawSite]:
        return iter(())

    def _arrays(self, schema: Mapping[str, Any], value: list[Any], location: Location) -> Iterator[RawSite]:
        items = schema.get("items")
        if items is not None:
            for index, item in enumerate(value):
                yield from self.sites(items, item, (*location, index))

    def _objects(self, schema: Mapping[str, Any], value: dict[str, Any], location: Location) -> Iterator[RawSite]:
        required = set(schema.get("required", ()))
        properties = schema.get("properties", {})
        for name, member in properties.items():
            if name in value:
                if name not in required:
                    yield self.edit(
                        location, "optional", f"member {name!r} left out", {k: v for k, v in value.items() if k != name}
                    )
                yield from self.sites(member, value[name], (*location, name))
            else:
                for written in _declared_values(self.root, member):
                    yield self.edit(location, "declared", f"member {name!r} = {written!r}", {**value, name: written})


def _everywhere(walk: _Walk, value: object, location: Location) -> Iterator[RawSite]:
    """The edits that need no schema, at every place of ``value`` (the parts no schema describes, an
    opaque tool schema, included): a twin at every leaf, every string emptied, every array grown by
    a copy of its last item, shortened by its first and reversed."""
    if isinstance(value, dict):
        for key, member in value.items():
            yield from _everywhere(walk, member, (*location, key))
    elif isinstance(value, list):
        if value:
            yield walk.edit(location, "grown", f"by a copy of item {len(value) - 1}", [*value, copy.deepcopy(value[-1])])
            yield walk.edit(location, "shortened", "by its first item", value[1:])
        if len(value) > 1:
            yield walk.edit(location, "reversed", f"{len(value)} items", copy.deepcopy(value[::-1]))
        for index, item in enumerate(value):
            yield from _everywhere(walk, item, (*location, index))
    elif isinstance(value, str) and value:
        yield walk.edit(location, "emptied", f"for {value[:12]!r}", "")
    else:
        for twin in _twins(value):
            yield walk.edit(location, "twin", f"{twin!r} for {value!r}", twin)


def _spelled(value: object) -> str:
    """``value`` as JSON text: ``1`` and ``1.0``, ``true`` and ``1`` spelled apart, as a port reads them."""
    return json.dumps(value, sort_keys=True)


@remembered_per_payload
def alternative_sites(event_type: str, payload: object) -> list[tuple[str, object]]:
    """Every alternative of ``payload`` (a valid payload of ``event_type``) as ``(site, payload)``; a
    site names the place and the edit (``message.content.0.isError flipped``), one entry per value."""
    root = schema_document(event_type)
    original = _spelled(payload)
    seen: set[tuple[Location, str, str]] = set()
    found: list[tuple[str, object]] = []
    walk = _Alternatives(root, payload, value_pools(event_type))
    for location, keyword, detail, edited in [*walk.sites(root, payload, ()), *_everywhere(walk, payload, ())]:
        if (location, keyword, detail) in seen or _spelled(edited) == original:
            continue
        seen.add((location, keyword, detail))
        where = ".".join(str(step) for step in location) or "$"
        found.append((f"{where} {keyword} {detail}", edited))
    return found


def by_edit(sites: Sequence[tuple[str, T]], rng: random.Random) -> tuple[str, T]:
    """One of ``sites`` (named as :func:`alternative_sites` names them), the edit drawn evenly first
    (:data:`EDITS`), then its place: a value has many twins and few siblings."""
    kinds: dict[str, list[tuple[str, T]]] = {}
    for site in sites:
        kind = next((edit for edit in EDITS if f" {edit} " in f" {site[0]} "), "")
        kinds.setdefault(kind, []).append(site)
    return rng.choice(kinds[rng.choice(sorted(kinds))])
