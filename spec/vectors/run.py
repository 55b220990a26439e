"""Running vectors against a port: each case from a fresh ``reset``, judged against its expectation.

A vector's expectation is turned into the model's reply (``Ok(result)`` or ``Refused(code, "")``: a
vector stores no message) and held against the port's with the suite's one rule,
:func:`sessionlog_spec.suite.agreement.compare`, so a port passes a vector exactly when the
conformance machines would accept the same reply.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from sessionlog_spec.protocol.messages import Ok, Port, PortFault, Refused, Reply
from sessionlog_spec.protocol.model_driver import ModelDriver
from sessionlog_spec.suite.agreement import compare
from sessionlog_spec.vectors.format import LARGE, Case
from sessionlog_spec.vectors.realistic import expand_step

PASSED, FAILED, UNSUPPORTED = "passed", "failed", "unsupported"


@dataclass(frozen=True, slots=True)
class CaseResult:
    """What one vector did on the port."""

    file: str
    id: str
    status: str
    detail: str = ""
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class Options:
    """How a run judges and waits."""

    strict_codes: bool = False
    large_timeout: float | None = 300.0
    """Per-request timeout for ``large`` vectors on ports that have one (a subprocess driver)."""


def run_case(port: Port, case: Case, file: str, options: Options) -> CaseResult:
    """Run one vector; a port fault fails the case (the caller restarts the port).

    A reader-only port (``read`` without ``session``) is asked to ``read`` every stored text a
    ``jsonl`` vector loads, and judged against the model's reader on the same text.
    """
    started = time.monotonic()
    capabilities = port.hello.capabilities
    missing = [g for g in case["requires"] if g not in capabilities]
    as_reads = bool(missing) and "read" in capabilities and _stored_texts(case) and set(missing) <= {"session", "jsonl"}
    if missing and not as_reads:
        return CaseResult(file, case["id"], UNSUPPORTED, f"needs {', '.join(missing)}")
    try:
        problem = _read_problem(port, case, options) if as_reads else _problem(port, case, options)
    except PortFault as fault:
        problem = f"port fault ({fault.kind}): {fault.detail}"
    status = PASSED if problem is None else FAILED
    return CaseResult(file, case["id"], status, problem or "", time.monotonic() - started)


def _problem(port: Port, case: Case, options: Options) -> str | None:
    if "session" in port.hello.capabilities:
        reset = port.call("reset")
        if not isinstance(reset, Ok):
            return f"reset refused: {reset.code}: {reset.message}"
    refused = {r["step"]: r["code"] for r in case.get("refused_steps", ())}
    steps = case["input"]
    header_observed = "header" in port.hello.capabilities

    def problem(op: str, expected: Reply, actual: Reply) -> str | None:
        mismatch = compare(op, expected, actual, options.strict_codes, header_observed)
        return None if mismatch is None else mismatch.message

    for index, step in enumerate(steps):
        request = expand_step(step)
        op = request.pop("op")
        reply = port.call(op, **request)
        where = f"step {index}"
        if index < len(steps) - 1:
            if index in refused:
                found = problem(op, Refused(refused[index], ""), reply)
                if found is not None:
                    return f"{where}: {found}"
            elif not isinstance(reply, Ok):
                return f"{where} ({op}): setup refused with {reply.code}: {reply.message}"
            continue
        found = problem(op, expected_reply(case["expected"]), reply)
        if found is not None:
            return f"{where}: {found}"
        if "state" in case["expected"]:
            found = problem("state", Ok(case["expected"]["state"]), port.call("state"))
            return None if found is None else f"after the refusal: {found}"
    return None


def _stored_texts(case: Case) -> list[str]:
    """The texts a vector's ``load`` steps hand to the port."""
    texts = [expand_step(step).get("jsonl") for step in case["input"] if step["op"] == "load"]
    return [text for text in texts if isinstance(text, str)]


def _read_problem(port: Port, case: Case, options: Options) -> str | None:
    reader = ModelDriver()
    for index, text in enumerate(_stored_texts(case)):
        expected = reader({"id": 0, "op": "read", "jsonl": text})
        want: Reply = Ok(expected["result"]) if expected["ok"] else Refused(expected["error"]["code"], "")
        mismatch = compare("read", want, port.call("read", jsonl=text), options.strict_codes, header_observed=False)
        if mismatch is not None:
            return f"read of stored text {index}: {mismatch.message}"
    return None


def expected_reply(expected: dict[str, Any]) -> Reply:
    """A vector's ``expected`` as the model's reply: ``Ok(result)``, or ``Refused(code, "")`` (no message is stored)."""
    return Ok(expected["result"]) if expected["ok"] else Refused(expected["code"], "")


def run_files(port: Port, documents: Mapping[str, Mapping[str, Any]], options: Options) -> list[CaseResult]:
    """Run every case of every document, in order; a dead subprocess port is restarted once per fault."""
    results: list[CaseResult] = []
    for stem, doc in documents.items():
        with _timeout(port, options.large_timeout if stem == LARGE else None):
            for case in doc["cases"]:
                result = run_case(port, case, stem, options)
                results.append(result)
                if result.detail.startswith("port fault"):
                    _restart(port)
    return results


def _restart(port: Port) -> None:
    restart = getattr(port, "restart", None)
    if callable(restart):
        # A port that cannot come back fails every later case with its own fault.
        with contextlib.suppress(PortFault):
            restart()


@contextlib.contextmanager
def _timeout(port: Port, seconds: float | None) -> Iterator[None]:
    """Raise a subprocess port's per-request timeout for the duration of a block."""
    target: Any = port
    saved = getattr(target, "timeout", None)
    if seconds is not None and isinstance(saved, int | float):
        target.timeout = max(seconds, saved)
    try:
        yield
    finally:
        if seconds is not None and isinstance(saved, int | float):
            target.timeout = saved


def counts(results: Iterable[CaseResult]) -> dict[str, dict[str, int]]:
    """Per file: how many cases passed, failed and were unsupported."""
    table: dict[str, dict[str, int]] = {}
    for r in results:
        row = table.setdefault(r.file, {PASSED: 0, FAILED: 0, UNSUPPORTED: 0})
        row[r.status] += 1
    return table
