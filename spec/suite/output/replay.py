"""Replaying a counterexample file against a port, with a readable diff of the first disagreement.

The requests are sent in order to the port and to a fresh model, and judged by the same rules as
during the run; the file's recorded replies are not trusted, so a case stays meaningful after the
model or the port changed.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Any

from sessionlog_spec.protocol.messages import Port, PortFault
from sessionlog_spec.suite.agreement import Mismatch, compare
from sessionlog_spec.suite.exchange import Answer, answer_json
from sessionlog_spec.suite.oracle import Oracle
from sessionlog_spec.suite.output.cases import transcript_of
from sessionlog_spec.suite.ports.inprocess import InProcessPort

QUOTE_LIMIT = 2000
"""Longest request quoted in a replay report; whole logs can be long."""


@dataclass(frozen=True)
class Replayed:
    """The outcome of a replay: the first disagreeing exchange, or none."""

    requests: int
    index: int | None = None
    op: str = ""
    args: dict[str, Any] | None = None
    expected: Answer | None = None
    actual: Answer | None = None
    mismatch: Mismatch | None = None

    @property
    def failed(self) -> bool:
        """Whether the port still disagrees with the model."""
        return self.mismatch is not None


def replay(document: dict[str, Any], port: Port, strict_codes: bool | None = None) -> Replayed:
    """Send a counterexample's requests to ``port`` and to the model; stop at the first disagreement."""
    strict = bool(document.get("strict_codes")) if strict_codes is None else strict_codes
    header_observed = "header" in port.hello.capabilities
    oracle = InProcessPort(Oracle())
    requests = transcript_of(document)
    for index, (op, args) in enumerate(requests):
        expected = oracle.call(op, **args)
        try:
            actual = port.call(op, **args)
        except PortFault as fault:
            return Replayed(index + 1, index, op, args, expected, fault, Mismatch("port-fault", str(fault)))
        mismatch = compare(op, expected, actual, strict, header_observed)
        if mismatch is not None:
            return Replayed(index + 1, index, op, args, expected, actual, mismatch)
    return Replayed(len(requests))


def render(outcome: Replayed) -> str:
    """A readable report of a replay: the failing request and a unified diff of the two answers."""
    if not outcome.failed:
        return f"replayed {outcome.requests} request(s): the port agrees with the model"
    assert outcome.mismatch is not None and outcome.expected is not None and outcome.actual is not None
    request = json.dumps({"op": outcome.op, **(outcome.args or {})}, ensure_ascii=False, default=str)
    if len(request) > QUOTE_LIMIT:
        request = request[:QUOTE_LIMIT] + " …"
    expected = _pretty(answer_json(outcome.expected))
    actual = _pretty(answer_json(outcome.actual))
    diff = difflib.unified_diff(expected, actual, fromfile="model", tofile="port", lineterm="")
    lines = [
        f"request {outcome.requests} ({outcome.op}): {outcome.mismatch.kind}",
        outcome.mismatch.message,
        "",
        f"request: {request}",
        "",
        *diff,
    ]
    if "fault" in answer_json(outcome.actual):
        tail = answer_json(outcome.actual)["fault"].get("stderr_tail", "")
        if tail:
            lines += ["", "driver stderr (tail):", tail]
    return "\n".join(lines)


def _pretty(value: Any) -> list[str]:
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True, default=str).splitlines()
