"""The verdict on one exchange: does the port's reply agree with the oracle's?

The rules are the protocol's: a refusal must meet a refusal (with ``strict_codes``, the same code),
an accepted request must meet an equal result, compared as JSON values.  ``save`` results are
compared by what they decode to, not byte for byte.  ``UNSUPPORTED`` from a declared group and
``BAD_REQUEST`` for a well-formed request are disagreements too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sessionlog_spec.model.json_value import json_equal, thaw
from sessionlog_spec.model.jsonl import decode_jsonl
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.protocol.messages import Ok, Refused, Reply

NOT_A_REFUSAL = frozenset({"UNSUPPORTED", "BAD_REQUEST"})
"""Protocol codes that never count as refusing a candidate."""
STATEFUL_RESULT_OPS = frozenset({"seed", "append", "state", "load"})
"""Ops whose result carries the session state (and so its ``header``)."""


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
        return Mismatch("unsupported", f"{op} replied UNSUPPORTED in a declared group: {actual.message}")
    if isinstance(expected, Ok):
        if isinstance(actual, Refused):
            return Mismatch("refused-valid", f"{op}: the model accepts; the port refused: {actual.code}: {actual.message}")
        return _result_mismatch(op, expected.result, actual.result, header_observed)
    if isinstance(actual, Ok):
        return Mismatch("accepted-invalid", f"{op}: the model refuses ({expected.code}: {expected.message}); the port accepted")
    if actual.code in NOT_A_REFUSAL and actual.code != expected.code:
        return Mismatch("wrong-code", f"{op}: {actual.code} is not a refusal; the model refuses with {expected.code}")
    if strict_codes and actual.code != expected.code:
        detail = f"the port refused with {actual.code}; the model with {expected.code}: {expected.message}"
        return Mismatch("wrong-code", f"{op}: {detail}")
    return None


def _result_mismatch(op: str, expected: Any, actual: Any, header_observed: bool) -> Mismatch | None:
    if op == "save":
        return _saved_mismatch(expected, actual)
    if op in STATEFUL_RESULT_OPS and not header_observed:
        expected, actual = _without_header(expected), _without_header(actual)
    if json_equal(expected, actual):
        return None
    return Mismatch("wrong-result", f"{op}: the port's result differs from the model's at {first_difference(expected, actual)}")


def first_difference(expected: Any, actual: Any, path: str = "$") -> str:
    """The JSONPath-like location of the first place two JSON values differ."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in sorted(expected.keys() | actual.keys()):
            if key not in expected or key not in actual or not json_equal(expected[key], actual[key]):
                return first_difference(expected.get(key), actual.get(key), f"{path}.{key}")
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        for index, (a, b) in enumerate(zip(expected, actual, strict=True)):
            if not json_equal(a, b):
                return first_difference(a, b, f"{path}[{index}]")
    return path


def _without_header(result: Any) -> Any:
    if isinstance(result, dict):
        return {k: v for k, v in result.items() if k != "header"}
    return result


def _saved_mismatch(expected: Any, actual: Any) -> Mismatch | None:
    """``save`` results agree when both texts decode to the same header line and events."""
    text = actual.get("jsonl") if isinstance(actual, dict) else None
    if not isinstance(text, str):
        return Mismatch("wrong-result", "save: the result has no jsonl text")
    ours, theirs = decode_jsonl(expected["jsonl"]), decode_jsonl(text)
    if isinstance(theirs, Violation):
        return Mismatch("wrong-result", f"save: the model cannot read the port's text: {theirs.code}: {theirs.message}")
    assert not isinstance(ours, Violation), ours
    if theirs.dropped_torn_tail:
        return Mismatch("wrong-result", "save: the port's text ends without a newline")
    if not json_equal(thaw(ours.header), thaw(theirs.header)):
        return Mismatch("wrong-result", "save: the header line differs from the model's")
    if len(ours.events) != len(theirs.events):
        return Mismatch("wrong-result", f"save: {len(theirs.events)} event lines, the model writes {len(ours.events)}")
    for index, (a, b) in enumerate(zip(ours.events, theirs.events, strict=True)):
        if not json_equal(a, b):
            return Mismatch("wrong-result", f"save: event line {index + 2} differs from the model's")
    return None
