"""Replaying a counterexample file against a port, with a readable diff of the first disagreement.

The requests are sent in order to the port and to a fresh model, and judged by the same rules as
during the run; the file's recorded replies are not trusted, so a case stays meaningful after the
model or the port changed.
"""

from __future__ import annotations

import difflib
import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sessionlog_spec.protocol.messages import Port, PortFault, Reply
from sessionlog_spec.suite.agreement import Mismatch, compare
from sessionlog_spec.suite.exchange import Answer, answer_json
from sessionlog_spec.suite.oracle import Oracle
from sessionlog_spec.suite.output.cases import transcript_of
from sessionlog_spec.suite.ports.inprocess import InProcessPort
from sessionlog_spec.suite.ports.subprocess import DEFAULT_TIMEOUT
from sessionlog_spec.suite.storage_actions import DONE, SUITE_ACTIONS, DurabilityJudge, fresh_directories, judge_replayed, perform

QUOTE_LIMIT = 2000
"""Longest request quoted by ``replay --short`` (by default every request is shown whole)."""
PROGRAM = "python -m sessionlog_spec"
"""How the commands this suite prints start."""
IN_PROCESS_PORTS = ("python", "model")
"""``--port`` names that are not driver command lines."""


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
    strict = bool(document.get("strict_codes", True)) if strict_codes is None else strict_codes
    header_observed = "header" in port.hello.capabilities
    driver = Oracle()
    oracle = InProcessPort(driver)
    judge = DurabilityJudge()
    requests = transcript_of(document)
    # A storage case's directories are made fresh, and its damage and crashes are done again.
    with fresh_directories(requests) as moved:
        for index, ((op, args), (_, sent)) in enumerate(zip(requests, moved, strict=True)):
            expected: Reply = DONE
            try:
                if op in SUITE_ACTIONS:
                    perform(port, op, sent, driver)
                    actual: Reply = DONE
                else:
                    expected = oracle.call(op, **sent)
                    actual = port.call(op, **sent)
            except PortFault as fault:
                return Replayed(index + 1, index, op, args, expected, fault, Mismatch("port-fault", str(fault)))
            mismatch = compare(op, expected, actual, strict, header_observed)
            if mismatch is None and (wrong := judge_replayed(judge, op, sent, actual, driver)) is not None:
                mismatch = Mismatch("wrong-result", wrong)
            if mismatch is not None:
                return Replayed(index + 1, index, op, args, expected, actual, mismatch)
    return Replayed(len(requests))


def port_arguments(driver: str | None, port: str | None, timeout: float = DEFAULT_TIMEOUT) -> str:
    """The options that name the same port again, quoted so that they can be pasted into a shell.

    ``--port python`` and ``--port model`` stay as they are; any driver command line (given to
    ``--driver`` or ``--port``) becomes ``--driver 'CMD'``; a timeout other than the default is kept.
    """
    target = driver if driver is not None else port
    if target is None:
        raise ValueError("no port: give a driver command or a --port name")
    words = ["--port", target] if driver is None and target in IN_PROCESS_PORTS else ["--driver", target]
    if timeout != DEFAULT_TIMEOUT:
        words += ["--timeout", f"{timeout:g}"]
    return shlex.join(words)


def replay_command(case_file: Path, arguments: str) -> str:
    """The command that replays ``case_file`` against the port ``arguments`` name (see :func:`port_arguments`)."""
    return f"{PROGRAM} replay {shlex.quote(str(case_file))} {arguments}"


def request_json(op: str, args: dict[str, Any] | None) -> str:
    """One request as a JSON line (without its ``id``), whole and exactly as it was sent."""
    return json_line({"op": op, **(args or {})}, sort_keys=False)


def json_line(value: Any, sort_keys: bool = True) -> str:
    """One JSON value on one line, whole (large integers exact)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=sort_keys, default=_plain)


def render(outcome: Replayed, short: bool = False) -> str:
    """A readable report of a replay: the failing request and a unified diff of the two answers.

    The request is shown whole, so that it can be copied out; ``short`` cuts it at :data:`QUOTE_LIMIT` characters.
    """
    if not outcome.failed:
        return f"replayed {outcome.requests} request(s): the port agrees with the model"
    assert outcome.mismatch is not None and outcome.expected is not None and outcome.actual is not None
    request = request_json(outcome.op, outcome.args)
    if short and len(request) > QUOTE_LIMIT:
        request = request[:QUOTE_LIMIT] + f" … ({len(request) - QUOTE_LIMIT} more characters; replay without --short)"
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
    tail = unquoted_stderr(outcome.actual) if isinstance(outcome.actual, PortFault) else ""
    if tail:
        lines += ["", "driver stderr (tail):", tail]
    return "\n".join(lines)


def unquoted_stderr(fault: PortFault) -> str:
    """The driver's stderr tail when the fault's own message does not quote it already, else ``""``."""
    tail = fault.stderr_tail.rstrip("\n")
    last = tail.rsplit("\n", 1)[-1].strip()
    return "" if not last or last in str(fault) else tail


def _pretty(value: Any) -> list[str]:
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True, default=_plain).splitlines()


def _plain(value: object) -> object:
    """Read-only mappings (the model's frozen objects) as plain objects; anything else as text."""
    return dict(value) if isinstance(value, Mapping) else str(value)
