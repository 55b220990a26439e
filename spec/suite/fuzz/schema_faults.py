"""Keyword faults: every keyword of a published payload schema, broken at every place it applies.

The published JSON Schema documents (``spec/vectors/schemas``, :func:`sessionlog_spec.schemas.schema_documents`)
state each payload rule as a keyword at a location.  :func:`keyword_sites` walks a *valid* payload
along its type's document and lists, for each keyword that constrains a part of it, the edit that
breaks that keyword there:

=========================  ==========================================================================
keyword                    the edit
=========================  ==========================================================================
``type``                   the value replaced by one of each JSON type the keyword does not admit
``required``               a required member that is present, removed
``additionalProperties``   a member the object does not declare, added (``false`` only)
``minProperties``          every member removed
``dependentRequired``      a member another present member depends on, removed
``const`` / ``enum``       a value of the same JSON type that is not admitted
``minimum`` / ``maximum``  the bound itself (inclusive: admitted) and one past it (refused)
``exclusiveMinimum``       the bound itself (refused) and one above it
``minLength``              the string cut one character short of its bound
``pattern``                a string the pattern does not match
``minItems`` / ``maxItems``  the array one item short of / past its bound
``uniqueItems``            the first item repeated
=========================  ==========================================================================

The walk follows the value: ``properties`` into the members present, ``items`` into each item,
``allOf`` into every branch, ``anyOf``/``oneOf`` into the branches the value fits, ``if`` into
``then`` or ``else`` as the value decides, ``$ref`` into its definition.  Every site is an edit of
the value as written; whether the document then refuses it is not assumed but asked
(:attr:`KeywordSite.schema_refuses`): a bound is also a valid boundary, and a fault in one branch of
a union may fit another.  The model is the judge of what a port must answer; this module only
decides what to ask.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import jsonschema_rs

from sessionlog_spec.model.json_value import MAX_SAFE_INTEGER
from sessionlog_spec.schemas import HEADER_LINE_FILE, schema_documents, schema_file

Location = tuple[str | int, ...]
RawSite = tuple[Location, str, str, object]
"""(location, keyword, detail, edited payload): a site before the document is asked about it."""

KEYWORDS: Final = (
    "type",
    "required",
    "additionalProperties",
    "minProperties",
    "dependentRequired",
    "const",
    "enum",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "minLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
)
"""Every keyword :func:`keyword_sites` breaks, in the order it lists them."""

_SAMPLE_OF_TYPE: Final[Mapping[str, object]] = {
    "string": "1",
    "integer": 7,
    "number": 0.5,
    "boolean": True,
    "null": None,
    "array": [],
    "object": {},
}
"""One value of each JSON type, for a ``type`` fault (``0.5`` is a number but no integer)."""
UNDECLARED_MEMBER: Final = "unexpectedMember"
"""The member an ``additionalProperties: false`` fault adds."""


@dataclass(frozen=True, slots=True)
class KeywordSite:
    """One keyword broken at one location of one payload."""

    location: Location
    """The JSON path of the value the keyword constrains (``("reason", "kind")``)."""
    keyword: str
    detail: str
    """What the edit does, e.g. ``maximum 599 + 1`` or ``member 'code'``."""
    payload: object
    """The whole payload with the edit applied."""
    schema_refuses: bool
    """Whether the type's published document refuses the edited payload."""

    @property
    def key(self) -> str:
        """The site's name independent of the value: ``reason.kind const``."""
        where = ".".join("[]" if isinstance(step, int) else step for step in self.location) or "$"
        return f"{where} {self.keyword}"


@functools.cache
def schema_document(event_type: str) -> Mapping[str, Any]:
    """The published document of ``event_type``'s current payload."""
    return schema_documents()[schema_file(event_type)]


@functools.cache
def _validator(event_type: str) -> jsonschema_rs.Draft202012Validator:
    return jsonschema_rs.Draft202012Validator(dict(schema_document(event_type)))


def schema_accepts(event_type: str, payload: object) -> bool:
    """Whether ``event_type``'s published document accepts ``payload`` (compiled: the walk asks it
    once for every site, and the check-log checker's differential tests hold the compiled validator
    to the same answers as ``jsonschema``'s)."""
    return bool(_validator(event_type).is_valid(payload))


_PARTS: dict[tuple[int, int], tuple[object, object, jsonschema_rs.Draft202012Validator]] = {}
"""Compiled validators of parts of documents, by the identities of the document and the part (both
kept alive beside it: the documents are read once and never change)."""


def _fits(root: Mapping[str, Any], schema: object, value: object) -> bool:
    """Whether ``value`` fits ``schema``, a part of ``root`` (its ``$ref``s resolve within ``root``)."""
    if isinstance(schema, bool):
        return schema
    if not isinstance(schema, Mapping):
        return False
    key = (id(root), id(schema))
    known = _PARTS.get(key)
    if known is None or known[0] is not root or known[1] is not schema:
        known = (root, schema, jsonschema_rs.Draft202012Validator({**schema, "$defs": root.get("$defs", {})}))
        _PARTS[key] = known
    return bool(known[2].is_valid(value))


def _resolve(root: Mapping[str, Any], schema: Mapping[str, Any]) -> Mapping[str, Any]:
    while "$ref" in schema:
        reference = schema["$ref"]
        if not reference.startswith("#/$defs/"):
            break
        schema = root["$defs"][reference.removeprefix("#/$defs/")]
    return schema


def _set(payload: object, location: Location, new: object) -> object:
    """A deep copy of ``payload`` with the value at ``location`` replaced (``location == ()``: ``new``)."""
    if not location:
        return new
    copied = copy.deepcopy(payload)
    container: Any = copied
    for step in location[:-1]:
        container = container[step]
    container[location[-1]] = new
    return copied


def _other_string(text: str, admitted: Callable[[str], bool]) -> str:
    for candidate in (text + "-x", text.upper(), text.replace("-", "_"), "x" + text, "~"):
        if candidate != text and not admitted(candidate):
            return candidate
    return text + "\u0000"


def _unadmitted(admitted: tuple[object, ...], like: object) -> object:
    """A value of ``like``'s JSON type that no member of ``admitted`` equals."""
    if isinstance(like, bool):
        return not like if (not like) not in admitted else None
    if isinstance(like, int):
        return max((v for v in admitted if isinstance(v, int) and not isinstance(v, bool)), default=like) + 1
    if isinstance(like, str):
        return _other_string(like, lambda s: s in admitted)
    return "x"


class _Walk:
    """One walk of one payload along one document, yielding raw edits."""

    def __init__(self, root: Mapping[str, Any], payload: object) -> None:
        self.root = root
        self.payload = payload

    def edit(self, location: Location, keyword: str, detail: str, new: object) -> RawSite:
        return location, keyword, detail, _set(self.payload, location, new)

    def sites(self, schema: object, value: object, location: Location) -> Iterator[RawSite]:
        if not isinstance(schema, Mapping):
            return
        schema = _resolve(self.root, schema)
        yield from self._type(schema, value, location)
        yield from self._literals(schema, value, location)
        if isinstance(value, bool):
            pass
        elif isinstance(value, int | float):
            yield from self._numbers(schema, value, location)
        elif isinstance(value, str):
            yield from self._strings(schema, value, location)
        elif isinstance(value, list):
            yield from self._arrays(schema, value, location)
        elif isinstance(value, dict):
            yield from self._objects(schema, value, location)
        yield from self._branches(schema, value, location)

    def _type(self, schema: Mapping[str, Any], value: object, location: Location) -> Iterator[RawSite]:
        declared = schema.get("type")
        if declared is None:
            return
        admitted = {declared} if isinstance(declared, str) else set(declared)
        if "number" in admitted:
            admitted.add("integer")
        for name, sample in _SAMPLE_OF_TYPE.items():
            if name not in admitted:
                yield self.edit(location, "type", f"{name} for {'/'.join(sorted(admitted))}", copy.deepcopy(sample))

    def _literals(self, schema: Mapping[str, Any], value: object, location: Location) -> Iterator[RawSite]:
        if "const" in schema:
            new = _unadmitted((schema["const"],), value)
            yield self.edit(location, "const", f"{new!r} for {schema['const']!r}", new)
        if "enum" in schema:
            new = _unadmitted(tuple(schema["enum"]), value)
            yield self.edit(location, "enum", f"{new!r} outside the enum", new)

    def _numbers(self, schema: Mapping[str, Any], value: float, location: Location) -> Iterator[RawSite]:
        integral = isinstance(value, int) or schema.get("type") == "integer"
        step = 1 if integral else 0.5
        if "minimum" in schema:
            bound = schema["minimum"]
            yield self.edit(location, "minimum", f"minimum {bound}", bound)
            yield self.edit(location, "minimum", f"minimum {bound} - {step}", bound - step)
        if "maximum" in schema:
            bound = schema["maximum"]
            yield self.edit(location, "maximum", f"maximum {bound}", bound)
            # One past 2^53 - 1 is no longer lossless JSON (an envelope-level refusal elsewhere); the
            # payload's own bound is broken with the largest double the reader still holds exactly.
            past = bound + step if bound < MAX_SAFE_INTEGER else float(2**53)
            yield self.edit(location, "maximum", f"maximum {bound} + {step}", past)
        if "exclusiveMinimum" in schema:
            bound = schema["exclusiveMinimum"]
            yield self.edit(location, "exclusiveMinimum", f"exclusiveMinimum {bound}", bound)
            yield self.edit(location, "exclusiveMinimum", f"exclusiveMinimum {bound} + {step}", bound + step)

    def _strings(self, schema: Mapping[str, Any], value: str, location: Location) -> Iterator[RawSite]:
        if "minLength" in schema and schema["minLength"] > 0:
            bound = schema["minLength"]
            yield self.edit(location, "minLength", f"minLength {bound} - 1", value[: bound - 1])
        if "pattern" in schema:
            pattern = re.compile(schema["pattern"])
            new = _other_string(value, lambda s: pattern.search(s) is not None)
            for candidate in ("", " " + value, value + " ", new):
                if pattern.search(candidate) is None:
                    yield self.edit(location, "pattern", f"{candidate!r} against {schema['pattern']}", candidate)
                    break

    def _arrays(self, schema: Mapping[str, Any], value: list[Any], location: Location) -> Iterator[RawSite]:
        if "minItems" in schema and schema["minItems"] > 0:
            bound = schema["minItems"]
            yield self.edit(location, "minItems", f"minItems {bound} - 1", copy.deepcopy(value[: bound - 1]))
        if "maxItems" in schema and value:
            bound = schema["maxItems"]
            longer = [copy.deepcopy(value[i % len(value)]) for i in range(bound + 1)]
            yield self.edit(location, "maxItems", f"maxItems {bound} + 1", longer)
        if schema.get("uniqueItems") and value:
            yield self.edit(location, "uniqueItems", "the first item repeated", [*copy.deepcopy(value), copy.deepcopy(value[0])])
        items = schema.get("items")
        if items is not None:
            for index, item in enumerate(value):
                yield from self.sites(items, item, (*location, index))

    def _objects(self, schema: Mapping[str, Any], value: dict[str, Any], location: Location) -> Iterator[RawSite]:
        for name in schema.get("required", ()):
            if name in value:
                yield self.edit(location, "required", f"member {name!r}", {k: v for k, v in value.items() if k != name})
        if schema.get("additionalProperties") is False and UNDECLARED_MEMBER not in value:
            yield self.edit(location, "additionalProperties", f"member {UNDECLARED_MEMBER!r}", {**value, UNDECLARED_MEMBER: 1})
        if schema.get("minProperties", 0) > 0 and value:
            yield self.edit(location, "minProperties", "every member removed", {})
        for trigger, dependents in schema.get("dependentRequired", {}).items():
            if trigger in value:
                for name in dependents:
                    if name in value:
                        reduced = {k: v for k, v in value.items() if k != name}
                        yield self.edit(location, "dependentRequired", f"member {name!r} (needed by {trigger!r})", reduced)
        for name, member in schema.get("properties", {}).items():
            if name in value:
                yield from self.sites(member, value[name], (*location, name))

    def _branches(self, schema: Mapping[str, Any], value: object, location: Location) -> Iterator[RawSite]:
        for branch in schema.get("allOf", ()):
            yield from self.sites(branch, value, location)
        for keyword in ("anyOf", "oneOf"):
            for branch in schema.get(keyword, ()):
                if _fits(self.root, branch, value):
                    yield from self.sites(branch, value, location)
        if "if" in schema:
            taken = schema.get("then") if _fits(self.root, schema["if"], value) else schema.get("else")
            if taken is not None:
                yield from self.sites(taken, value, location)


def document_sites(root: Mapping[str, Any], value: object, accepts: Callable[[object], bool]) -> list[KeywordSite]:
    """Every keyword of the document ``root`` broken once on ``value`` (a valid one); ``accepts`` asks
    the document about an edited value.  The same edit reached through two branches is one site."""
    seen: set[tuple[Location, str, str]] = set()
    sites = []
    for location, keyword, detail, edited in _Walk(root, value).sites(root, value, ()):
        if (location, keyword, detail) in seen:
            continue
        seen.add((location, keyword, detail))
        sites.append(KeywordSite(location, keyword, detail, edited, not accepts(edited)))
    return sites


S = TypeVar("S")


def remembered_per_payload(compute: Callable[[str, object], list[S]]) -> Callable[[str, object], list[S]]:
    """``compute(event_type, payload)`` computed once for a payload, by its JSON text (which tells
    ``1`` from ``1.0`` and ``true``): a step sweeps one family and pairs the faults of all of them on
    the same payload.  The answers share their values: copy one before changing it."""

    @functools.lru_cache(maxsize=512)
    def by_text(event_type: str, text: str) -> tuple[S, ...]:
        return tuple(compute(event_type, json.loads(text)))

    @functools.wraps(compute)
    def remembered(event_type: str, payload: object) -> list[S]:
        try:
            text = json.dumps(payload)
        except (TypeError, ValueError):
            return compute(event_type, payload)
        return list(by_text(event_type, text))

    return remembered


@remembered_per_payload
def keyword_sites(event_type: str, payload: object) -> list[KeywordSite]:
    """Every keyword of ``event_type``'s published document broken once on ``payload`` (a valid one)."""
    return document_sites(schema_document(event_type), payload, lambda edited: schema_accepts(event_type, edited))


@functools.cache
def _header_line_document() -> Mapping[str, Any]:
    return schema_documents()[HEADER_LINE_FILE]


@functools.cache
def _header_line_validator() -> jsonschema_rs.Draft202012Validator:
    return jsonschema_rs.Draft202012Validator(dict(_header_line_document()))


def header_line_sites(header: Mapping[str, Any]) -> list[KeywordSite]:
    """Every keyword of the published header-line document broken once on ``header`` (a valid line)."""
    root = _header_line_document()
    return document_sites(root, dict(header), lambda edited: bool(_header_line_validator().is_valid(edited)))
