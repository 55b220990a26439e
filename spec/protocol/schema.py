"""The JSON Schemas of ``sessionlog-driver/1``, applied to every message that crosses a port.

``spec/protocol.schema.json`` holds one schema per op for its request (``<op>.request``), its reply
(``<op>.reply``) and its result (``<op>.result``).  Requests are checked before they are sent: a
request that does not fit is the suite's own bug and raises :class:`InvalidRequest`.  Replies are
checked on receipt against the schema of the op that was sent: a reply that does not fit is the
port's fault and raises :class:`~sessionlog_spec.protocol.messages.PortFault` of kind ``"schema"`` naming the field.
"""

from __future__ import annotations

import functools
import json
from collections import deque
from collections.abc import Iterable, Mapping
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from sessionlog_spec.protocol.fastschema import Compiler
from sessionlog_spec.protocol.messages import OPS_BY_GROUP, PortFault

SCHEMA_FILE = "schema.json"
OPS = ("hello", "bye", *(op for ops in OPS_BY_GROUP.values() for op in ops))
"""Every op of the protocol: ``hello`` and ``bye`` plus the ops of every capability group."""

DETAIL_LIMIT = 400
"""Longest validation message quoted in a fault: messages repeat the offending value, which may be huge."""


class InvalidRequest(ValueError):
    """The suite tried to send a request that does not fit the protocol."""


@functools.cache
def schema() -> dict[str, Any]:
    """The protocol schema document, read once from the package data."""
    text = resources.files("sessionlog_spec.protocol").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    document: dict[str, Any] = json.loads(text)
    return document


@functools.cache
def validator(name: str) -> Draft202012Validator:
    """A compiled validator for the definition ``name`` in ``$defs`` (``"state.result"``, ``"reply"``)."""
    document = schema()
    if name not in document["$defs"]:
        raise KeyError(f"no schema named {name!r} in {SCHEMA_FILE}")
    registry: Registry[Any] = Registry().with_resource(document["$id"], DRAFT202012.create_resource(document))
    return Draft202012Validator({"$ref": f"{document['$id']}#/$defs/{name}"}, registry=registry)


def field_path(path: Iterable[str | int]) -> str:
    """A JSONPath-like rendering of a jsonschema instance path: ``$.result.nodes[2]``."""
    out = "$"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


@functools.cache
def _compiler() -> Compiler:
    """The fast predicates for the schema document."""
    return Compiler(schema())


def fits(name: str, instance: Any) -> bool:
    """Whether ``instance`` fits ``$defs/name``, by the fast compiled check."""
    return _compiler().definition(name)(instance)


def first_error(name: str, instance: Any) -> ValidationError | None:
    """The most relevant reason ``instance`` does not fit ``$defs/name``, or ``None`` when it fits."""
    # jsonschema is the authority but slow; it only runs to explain what the fast check rejected.
    if fits(name, instance):
        return None
    error: ValidationError | None = best_match(validator(name).iter_errors(instance))
    return error


def describe(error: ValidationError) -> str:
    """One line naming where an instance went wrong and why."""
    # An ``absent`` member fails ``not: {}``, whose stock message only repeats the value.
    message = "must be absent" if error.validator == "not" and error.validator_value == {} else error.message
    if len(message) > DETAIL_LIMIT:
        message = message[:DETAIL_LIMIT] + "…"
    return f"at {field_path(error.absolute_path)}: {message}"


def validate_request(request: Mapping[str, Any]) -> None:
    """Check a request before it is sent; raises :class:`InvalidRequest` when it is malformed."""
    op = request.get("op")
    name = f"{op}.request" if op in OPS else "request"
    error = first_error(name, request)
    if error is not None:
        raise InvalidRequest(f"{op!r} request {describe(error)}")


def validate_reply(op: str, reply: Any) -> None:
    """Check a reply against the schema of ``op``; raises ``PortFault("schema")`` naming the field."""
    error = first_error(f"{op}.reply", reply)
    if error is not None:
        raise PortFault("schema", f"{op} reply {describe(error)}")
    problem = result_problem(op, reply)
    if problem is not None:
        raise PortFault("schema", f"{op} reply {problem}")


def result_problem(op: str, reply: Mapping[str, Any]) -> str | None:
    """Shape rules JSON Schema cannot express: ``cuts`` has one ``balanced`` entry per cut."""
    if op != "cuts" or not reply["ok"]:
        return None
    result = reply["result"]
    expected = len(result["nodes"]) + 1
    if len(result["balanced"]) != expected:
        path = field_path(deque(["result", "balanced"]))
        return f"at {path}: {len(result['balanced'])} entries for {len(result['nodes'])} nodes, expected {expected}"
    return None
