"""A fast yes/no check for the subset of JSON Schema that ``protocol.schema.json`` uses.

jsonschema takes hundreds of microseconds per reply, several times a driver's round trip, so
:mod:`sessionlog_spec.protocol.schema` asks this compiled predicate first and only runs jsonschema to explain a
failure.  The compiler refuses any keyword it does not implement, so the schema cannot grow a rule
this check silently ignores; ``tests/suite/test_client.py`` checks it agrees with jsonschema.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

Check = Callable[[Any], bool]

ANNOTATIONS = frozenset({"$schema", "$id", "$defs", "title", "description"})
"""Keywords that never affect validity."""


def _is_integer(value: Any) -> bool:
    """JSON Schema's integer: an int that is not a bool, or a float with no fractional part."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


TYPES: dict[str, Check] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": _is_integer,
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
}


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: booleans are not numbers, ``1`` equals ``1.0``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if TYPES["number"](a) and TYPES["number"](b):
        return bool(a == b)
    return type(a) is type(b) and bool(a == b)


def _every(checks: list[Check]) -> Check:
    """The conjunction of several checks, without a generator per call."""
    if len(checks) == 1:
        return checks[0]

    def check(v: Any) -> bool:
        for part in checks:  # noqa: SIM110 -- a loop, not all(): this runs per keyword per message
            if not part(v):
                return False
        return True

    return check


class Compiler:
    """Turns the definitions of one schema document into predicates, resolving local ``$ref``s."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self.document = document
        self.checks: dict[str, Check] = {}

    def definition(self, name: str) -> Check:
        """The predicate for ``#/$defs/<name>``, compiled once on first use."""
        check = self.checks.get(name)
        if check is None:
            check = self.checks[name] = self.compile(self.document["$defs"][name])
        return check

    def compile(self, schema: Any) -> Check:
        """The predicate for one schema: every keyword's check must hold."""
        if schema is True:
            return lambda v: True
        if schema is False:
            return lambda v: False
        if not isinstance(schema, Mapping):
            raise ValueError(f"not a schema: {schema!r}")
        parts = [self.keyword(key, value, schema) for key, value in schema.items() if key not in ANNOTATIONS]
        return _every([part for part in parts if part is not None])

    def keyword(self, key: str, value: Any, schema: Mapping[str, Any]) -> Check | None:
        """The predicate for one keyword (``None`` for keywords handled by a sibling, like ``then``)."""
        compilers: dict[str, Callable[[Any, Mapping[str, Any]], Check | None]] = {
            "$ref": self._ref,
            "type": self._type,
            "required": self._required,
            "properties": self._properties,
            "additionalProperties": self._additional,
            "items": self._items,
            "enum": self._enum,
            "const": self._const,
            "pattern": self._pattern,
            "minimum": self._minimum,
            "minItems": self._min_items,
            "uniqueItems": self._unique,
            "if": self._if,
            "then": lambda _v, _s: None,
            "else": lambda _v, _s: None,
            "allOf": self._all_of,
            "anyOf": self._any_of,
            "oneOf": self._one_of,
            "not": self._not,
        }
        if key not in compilers:
            raise ValueError(f"keyword {key!r} is not supported by the fast check")
        return compilers[key](value, schema)

    def _ref(self, ref: str, _: Mapping[str, Any]) -> Check:
        prefix = "#/$defs/"
        if not ref.startswith(prefix):
            raise ValueError(f"only local $defs references are supported, not {ref!r}")
        name = ref[len(prefix) :]
        if name not in self.document["$defs"]:
            raise ValueError(f"dangling reference {ref!r}")
        # Resolved on first call rather than now, so that definitions may refer to each other freely.
        resolved: list[Check] = []

        def check(v: Any) -> bool:
            if not resolved:
                resolved.append(self.definition(name))
            return resolved[0](v)

        return check

    def _type(self, names: str | list[str], _: Mapping[str, Any]) -> Check:
        if isinstance(names, str):
            return TYPES[names]
        checks = [TYPES[n] for n in names]
        return lambda v: any(check(v) for check in checks)

    def _required(self, keys: list[str], _: Mapping[str, Any]) -> Check:
        wanted = frozenset(keys)
        return lambda v: not isinstance(v, dict) or wanted <= v.keys()

    def _properties(self, props: Mapping[str, Any], _: Mapping[str, Any]) -> Check:
        checks = [(key, self.compile(sub)) for key, sub in props.items()]

        def check(v: Any) -> bool:
            if isinstance(v, dict):
                for key, sub in checks:
                    if key in v and not sub(v[key]):
                        return False
            return True

        return check

    def _additional(self, sub: Any, schema: Mapping[str, Any]) -> Check:
        known = frozenset(schema.get("properties", {}))
        if sub is False:
            return lambda v: not isinstance(v, dict) or v.keys() <= known
        extra = self.compile(sub)
        return lambda v: not isinstance(v, dict) or all(extra(v[k]) for k in v if k not in known)

    def _items(self, sub: Any, _: Mapping[str, Any]) -> Check:
        item_check = self.compile(sub)

        def check(v: Any) -> bool:
            if isinstance(v, list):
                for item in v:
                    if not item_check(item):
                        return False
            return True

        return check

    def _enum(self, options: list[Any], _: Mapping[str, Any]) -> Check:
        if all(isinstance(option, str) for option in options):
            strings = frozenset(options)
            return lambda v: isinstance(v, str) and v in strings
        return lambda v: any(json_equal(v, option) for option in options)

    def _const(self, option: Any, _: Mapping[str, Any]) -> Check:
        return lambda v: json_equal(v, option)

    def _pattern(self, pattern: str, _: Mapping[str, Any]) -> Check:
        regex = re.compile(pattern)
        return lambda v: not isinstance(v, str) or regex.search(v) is not None

    def _minimum(self, bound: float, _: Mapping[str, Any]) -> Check:
        return lambda v: not TYPES["number"](v) or v >= bound

    def _min_items(self, count: int, _: Mapping[str, Any]) -> Check:
        return lambda v: not isinstance(v, list) or len(v) >= count

    def _unique(self, unique: bool, _: Mapping[str, Any]) -> Check:
        def distinct(v: Any) -> bool:
            if not unique or not isinstance(v, list):
                return True
            return not any(json_equal(v[i], v[j]) for i in range(len(v)) for j in range(i + 1, len(v)))

        return distinct

    def _if(self, condition: Any, schema: Mapping[str, Any]) -> Check:
        test = self.compile(condition)
        then = self.compile(schema.get("then", True))
        otherwise = self.compile(schema.get("else", True))
        return lambda v: then(v) if test(v) else otherwise(v)

    def _all_of(self, subs: list[Any], _: Mapping[str, Any]) -> Check:
        return _every([self.compile(sub) for sub in subs])

    def _any_of(self, subs: list[Any], _: Mapping[str, Any]) -> Check:
        checks = [self.compile(sub) for sub in subs]
        return lambda v: any(check(v) for check in checks)

    def _one_of(self, subs: list[Any], _: Mapping[str, Any]) -> Check:
        checks = [self.compile(sub) for sub in subs]
        return lambda v: sum(1 for check in checks if check(v)) == 1

    def _not(self, sub: Any, _: Mapping[str, Any]) -> Check:
        check = self.compile(sub)
        return lambda v: not check(v)
