"""How a port's reply is held against a vector's expectation (the rules ``vectors/README.md`` states)."""

from __future__ import annotations

import json
from typing import Any

from sessionlog_spec.model.json_value import json_equal
from sessionlog_spec.protocol.messages import Ok, Refused, Reply

NOT_A_REFUSAL = frozenset({"UNSUPPORTED", "BAD_REQUEST"})
"""Protocol codes that never count as refusing a candidate."""
STATE_RESULTS = frozenset({"seed", "append", "state", "load"})
"""Ops whose result carries the session state, and so its ``header``."""


def refusal_problem(expected_code: str, reply: Reply, strict_codes: bool) -> str | None:
    """Why ``reply`` is not the refusal the model gave, or ``None``."""
    if isinstance(reply, Ok):
        return f"accepted; the model refuses with {expected_code}"
    if reply.code in NOT_A_REFUSAL:
        return f"replied {reply.code} ({reply.message}); the model refuses with {expected_code}"
    if strict_codes and reply.code != expected_code:
        return f"refused with {reply.code} ({reply.message}); the model refuses with {expected_code}"
    return None


def result_problem(op: str, expected: Any, reply: Reply, header_observed: bool) -> str | None:
    """Why ``reply`` is not the accepted result the model gave, or ``None``."""
    if isinstance(reply, Refused):
        return f"refused with {reply.code} ({reply.message}); the model accepts"
    actual = reply.result
    if op == "save":
        return _saved_problem(expected, actual)
    if op in STATE_RESULTS and not header_observed:
        expected, actual = _without_header(expected), _without_header(actual)
    if json_equal(expected, actual):
        return None
    return f"result differs: expected {_short(expected)}, got {_short(actual)}"


def _without_header(result: Any) -> Any:
    return {k: v for k, v in result.items() if k != "header"} if isinstance(result, dict) else result


def decoded_lines(text: Any) -> list[Any] | None:
    """A stored log's lines as JSON values, or ``None`` when it is not newline-terminated JSON Lines."""
    if not isinstance(text, str) or not text.endswith("\n"):
        return None
    try:
        return [json.loads(line) for line in text[:-1].split("\n")]
    except ValueError:
        return None


def _saved_problem(expected: Any, actual: Any) -> str | None:
    """``save`` results agree when their lines decode to the same JSON values: bytes and key order are the port's."""
    ours = decoded_lines(expected["jsonl"])
    theirs = decoded_lines(actual.get("jsonl") if isinstance(actual, dict) else None)
    if theirs is None:
        return "save: the result is not newline-terminated JSON Lines"
    assert ours is not None
    if len(ours) != len(theirs):
        return f"save: {len(theirs)} lines, expected {len(ours)}"
    for number, (a, b) in enumerate(zip(ours, theirs, strict=True), start=1):
        if not json_equal(a, b):
            return f"save: line {number} differs: expected {_short(a)}, got {_short(b)}"
    return None


def _short(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= limit else text[:limit] + "…"
