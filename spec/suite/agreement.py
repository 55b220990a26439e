"""The verdict on one exchange: does the port's reply agree with the oracle's?

This is the one rule: the conformance machines, ``replay``, the vector runner and the upstream
divergence tool all judge with :func:`compare`.  A refusal must meet a refusal (with
``strict_codes``, the same code), an accepted request must meet an equal result, compared as JSON
values.  ``save`` results are compared by what the model's own JSONL decoder reads from them, not
byte for byte: the port's text must be one the model can load (a final newline, no byte-order
mark, no carriage return, no duplicate keys, no ``NaN``) and decode to the same header line and
events.  ``UNSUPPORTED`` from a declared group and ``BAD_REQUEST`` for a well-formed request are
disagreements too.

Every message names where the replies part and shows both sides, shortened:
``differs at $.nodes[2]: expected 3, got 4``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from sessionlog_spec.model.json_value import json_equal, thaw
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.protocol.messages import Ok, Refused, Reply
from sessionlog_spec.suite.judged import decoded

NOT_A_REFUSAL = frozenset({"UNSUPPORTED", "BAD_REQUEST"})
"""Protocol codes that never count as refusing a candidate."""
STATEFUL_RESULT_OPS = frozenset({"seed", "append", "state", "load", "store_create", "store_open", "store_append"})
"""Ops whose result carries the session state (and so its ``header``)."""
SHORT_LIMIT = 160
"""Longest rendering of one JSON value in a message."""


@dataclass(frozen=True, slots=True)
class Mismatch:
    """How a reply disagrees with the oracle: a stable ``kind`` and a sentence."""

    kind: str
    """``accepted-invalid``, ``refused-valid``, ``wrong-code``, ``wrong-result``, ``unsupported`` or ``port-fault``."""
    message: str


def compare(op: str, expected: Reply, actual: Reply, strict_codes: bool, header_observed: bool = True) -> Mismatch | None:
    """The disagreement between the oracle's ``expected`` and the port's ``actual`` reply, if any."""
    if isinstance(actual, Refused) and actual.code == "UNSUPPORTED" and not (
        isinstance(expected, Refused) and expected.code == "UNSUPPORTED"
    ):
        model = "accepts" if isinstance(expected, Ok) else f"refuses with {_refusal(expected)}"
        return Mismatch("unsupported", f"{op} replied UNSUPPORTED in a declared group: {actual.message}; the model {model}")
    if isinstance(expected, Ok):
        if isinstance(actual, Refused):
            return Mismatch("refused-valid", f"{op}: the model accepts; the port refused: {_refusal(actual)}")
        return _result_mismatch(op, expected.result, actual.result, header_observed)
    if isinstance(actual, Ok):
        return Mismatch(
            "accepted-invalid", f"{op}: the model refuses ({_refusal(expected)}); the port accepted: {short(actual.result)}"
        )
    if actual.code in NOT_A_REFUSAL and actual.code != expected.code:
        return Mismatch("wrong-code", f"{op}: {_refusal(actual)} is not a refusal; the model refuses with {_refusal(expected)}")
    if strict_codes and actual.code != expected.code:
        detail = f"the port refused with {_refusal(actual)}; the model with {_refusal(expected)}"
        return Mismatch("wrong-code", f"{op}: {detail}")
    return None


def _refusal(reply: Refused) -> str:
    """``CODE: message``, or the bare code when there is no message (a vector stores only the code)."""
    return f"{reply.code}: {reply.message}" if reply.message else reply.code


def _result_mismatch(op: str, expected: Any, actual: Any, header_observed: bool) -> Mismatch | None:
    if op == "save":
        return _saved_mismatch(expected, actual)
    if op.startswith("store_"):
        # When events become durable is the port's choice; the storage machine holds it to its word.
        expected, actual = _without(expected, "durable_length"), _without(actual, "durable_length")
    if op in STATEFUL_RESULT_OPS and not header_observed:
        expected, actual = _without_header(expected), _without_header(actual)
    if same_json(expected, actual):
        return None
    return Mismatch("wrong-result", f"{op}: the port's result differs from the model's {difference(expected, actual)}")


_ONLY_JSON = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
"""orjson writes the JSON types themselves and refuses their subclasses, dataclasses and dates."""


def same_json(expected: Any, actual: Any) -> bool:
    """:func:`~sessionlog_spec.model.json_value.json_equal` of the model's ``expected`` result and a
    port's ``actual`` one, answered at once when both are written the same way.

    Two values that orjson writes as the same bytes are the same JSON value, member order and types
    included (``true``, ``1`` and ``1.0`` are written apart, and so are ``0.0`` and ``-0.0``), save
    that it writes ``NaN`` and the infinities as ``null`` (so bytes holding a ``null`` prove nothing)
    and some objects that are no JSON value (an enum member, a UUID) as the value they stand for,
    which Python's ``==`` tells from it.  Subclasses of the JSON types (which the comparison tells
    apart), dataclasses and dates orjson is told not to write.  Anything else is compared member by member.
    """
    try:
        written = orjson.dumps(expected, option=_ONLY_JSON)
        if b"null" not in written and written == orjson.dumps(actual, option=_ONLY_JSON) and expected == actual:
            return True
    except TypeError:  # orjson.JSONEncodeError: an integer beyond 64 bits, a foreign object
        pass
    return json_equal(expected, actual)


def _without(result: Any, member: str) -> Any:
    return {k: v for k, v in result.items() if k != member} if isinstance(result, Mapping) else result


class _Absent:
    """A member one side of a comparison lacks."""

    def __repr__(self) -> str:
        return "(absent)"


ABSENT: Any = _Absent()
"""Stands for a missing object member in :func:`locate`'s answer."""


def locate(expected: Any, actual: Any, path: str = "$") -> tuple[str, Any, Any]:
    """Where two JSON values first differ (a JSONPath-like location), and the two values there.

    A member only one side has is :data:`ABSENT` on the other.
    """
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        for key in sorted(expected.keys() | actual.keys()):
            a, b = expected.get(key, ABSENT), actual.get(key, ABSENT)
            if a is ABSENT or b is ABSENT or not json_equal(a, b):
                return locate(a, b, f"{path}.{key}")
    if isinstance(expected, list | tuple) and isinstance(actual, list | tuple) and len(expected) == len(actual):
        for index, (a, b) in enumerate(zip(expected, actual, strict=True)):
            if not json_equal(a, b):
                return locate(a, b, f"{path}[{index}]")
    return path, expected, actual


def first_difference(expected: Any, actual: Any, path: str = "$") -> str:
    """The JSONPath-like location of the first place two JSON values differ."""
    return locate(expected, actual, path)[0]


def difference(expected: Any, actual: Any) -> str:
    """``at $.path: expected X, got Y``: the first difference, with both values shortened."""
    path, a, b = locate(expected, actual)
    return f"at {path}: expected {short(a)}, got {short(b)}"


def short(value: Any, limit: int = SHORT_LIMIT) -> str:
    """One JSON value on one line (sorted keys), cut to ``limit`` characters."""
    if value is ABSENT:
        return "(absent)"
    text = json.dumps(thaw(value), sort_keys=True, ensure_ascii=False, default=repr)
    return text if len(text) <= limit else text[:limit] + "…"


def _without_header(result: Any) -> Any:
    if isinstance(result, dict):
        return {k: v for k, v in result.items() if k != "header"}
    return result


def _saved_mismatch(expected: Any, actual: Any) -> Mismatch | None:
    """``save`` results agree when the model's decoder reads the same header line and events from both texts."""
    text = actual.get("jsonl") if isinstance(actual, dict) else None
    if not isinstance(text, str):
        return Mismatch("wrong-result", f"save: the result has no jsonl text: {short(actual)}")
    ours = decoded(expected["jsonl"])
    theirs = ours if text == expected["jsonl"] else decoded(text)  # the same text reads the same
    if isinstance(theirs, Violation):
        return Mismatch("wrong-result", f"save: the model cannot read the port's text: {theirs.code}: {theirs.message}")
    assert not isinstance(ours, Violation), ours
    if theirs.dropped_torn_tail:
        tail = text.rsplit("\n", 1)[-1]
        return Mismatch("wrong-result", f"save: the port's text ends without a newline (after {short(tail)})")
    if theirs.dropped_from_line is not None:
        faulty = text.split("\n")[theirs.dropped_from_line - 1]
        return Mismatch(
            "wrong-result", f"save: a reader drops the port's text from line {theirs.dropped_from_line} on: {short(faulty)}"
        )
    header, their_header = thaw(ours.header), thaw(theirs.header)
    if not json_equal(header, their_header):
        return Mismatch("wrong-result", f"save: the header line differs from the model's {difference(header, their_header)}")
    for index, (a, b) in enumerate(zip(ours.events, theirs.events, strict=False)):
        if a is not b and not json_equal(a, b):
            line = theirs.lines[index]
            return Mismatch("wrong-result", f"save: event {index} (line {line}) differs from the model's {difference(a, b)}")
    if len(ours.events) != len(theirs.events):
        shorter = min(len(ours.events), len(theirs.events))
        extra = (
            f"first extra line {shorter + 2}: {short(theirs.events[shorter])}"
            if len(theirs.events) > shorter
            else f"first missing line {shorter + 2}: {short(ours.events[shorter])}"
        )
        return Mismatch(
            "wrong-result", f"save: {len(theirs.events)} event lines, the model writes {len(ours.events)}; {extra}"
        )
    return None
