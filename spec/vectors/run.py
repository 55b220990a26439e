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
from sessionlog_spec.suite.agreement import compare, short
from sessionlog_spec.suite.output.replay import unquoted_stderr
from sessionlog_spec.vectors.format import LARGE, Case
from sessionlog_spec.vectors.realistic import expand_step

PASSED, FAILED, UNSUPPORTED = "passed", "failed", "unsupported"


@dataclass(frozen=True, slots=True)
class CaseResult:
    """What one vector did on the port; a failure also says which request of the input it was at and both verdicts."""

    file: str
    id: str
    status: str
    detail: str = ""
    seconds: float = 0.0
    step: int | None = None
    """The index in the case's ``input`` of the request the port got wrong (``None``: the ``reset`` before it)."""
    expected: str = ""
    """The model's verdict on that request, in words (``refused with CODE``, ``accepted: RESULT``)."""
    actual: str = ""
    """The port's answer to it, in words (a port fault with the driver's stderr tail)."""


@dataclass
class _Progress:
    """The request being asked and what the model answers it, for the report of a port fault."""

    step: int | None = None
    expected: Reply | None = None


@dataclass(frozen=True, slots=True)
class Options:
    """How a run judges and waits."""

    strict_codes: bool = True
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
    progress = _Progress()
    try:
        problem = _read_problem(port, case, options, progress) if as_reads else _problem(port, case, options, progress)
    except PortFault as fault:
        expected = SETUP if progress.expected is None else verdict(progress.expected)
        problem = _Problem(f"port fault ({fault.kind}): {fault.detail}", progress.step, expected, verdict(fault))
    seconds = time.monotonic() - started
    if problem is None:
        return CaseResult(file, case["id"], PASSED, seconds=seconds)
    return CaseResult(file, case["id"], FAILED, problem.message, seconds, problem.step, problem.expected, problem.actual)


@dataclass(frozen=True, slots=True)
class _Problem:
    """Why a case failed, at which request, and both verdicts on it."""

    message: str
    step: int | None
    expected: str
    actual: str


SETUP = "accepted (a setup request)"
VERDICT_LIMIT = 2000
"""Longest result quoted in a verdict; the whole expected result is in the vector file."""


def verdict(answer: Reply | PortFault) -> str:
    """A reply or fault in words: ``accepted: RESULT``, ``refused with CODE: message``, ``port fault (kind): …``."""
    if isinstance(answer, Ok):
        return f"accepted: {short(answer.result, VERDICT_LIMIT)}"
    if isinstance(answer, Refused):
        return f"refused with {answer.code}" + (f": {answer.message}" if answer.message else "")
    tail = unquoted_stderr(answer)
    return str(answer) + (f"\ndriver stderr (tail):\n{tail}" if tail else "")


def _problem(port: Port, case: Case, options: Options, progress: _Progress) -> _Problem | None:
    if "session" in port.hello.capabilities:
        progress.expected = Ok(None)
        reset = port.call("reset")
        if not isinstance(reset, Ok):
            return _Problem(f"reset refused: {reset.code}: {reset.message}", None, verdict(Ok(None)), verdict(reset))
    refused = {r["step"]: r["code"] for r in case.get("refused_steps", ())}
    steps = case["input"]
    header_observed = "header" in port.hello.capabilities

    def problem(index: int, op: str, expected: Reply, actual: Reply, where: str) -> _Problem | None:
        mismatch = compare(op, expected, actual, options.strict_codes, header_observed)
        return None if mismatch is None else _Problem(f"{where}: {mismatch.message}", index, verdict(expected), verdict(actual))

    for index, step in enumerate(steps):
        request = expand_step(step)
        op = request.pop("op")
        last = index == len(steps) - 1
        expected = expected_reply(case["expected"]) if last else Refused(refused[index], "") if index in refused else None
        progress.step, progress.expected = index, expected
        reply = port.call(op, **request)
        where = f"step {index}"
        if expected is None:
            if not isinstance(reply, Ok):
                message = f"{where} ({op}): setup refused with {reply.code}: {reply.message}"
                return _Problem(message, index, SETUP, verdict(reply))
            continue
        found = problem(index, op, expected, reply, where)
        if found is not None:
            return found
        if last and "state" in case["expected"]:
            state = Ok(case["expected"]["state"])
            progress.expected = state
            return problem(index, "state", state, port.call("state"), "after the refusal")
    return None


def _stored_texts(case: Case) -> list[str]:
    """The texts a vector's ``load`` steps hand to the port."""
    return [text for _, text in _loads(case)]


def _loads(case: Case) -> list[tuple[int, str]]:
    """Each ``load`` step's index in the input, with the text it hands to the port."""
    texts = [(index, expand_step(step).get("jsonl")) for index, step in enumerate(case["input"]) if step["op"] == "load"]
    return [(index, text) for index, text in texts if isinstance(text, str)]


def _read_problem(port: Port, case: Case, options: Options, progress: _Progress) -> _Problem | None:
    reader = ModelDriver()
    for index, (step, text) in enumerate(_loads(case)):
        expected = reader({"id": 0, "op": "read", "jsonl": text})
        want: Reply = Ok(expected["result"]) if expected["ok"] else Refused(expected["error"]["code"], "")
        progress.step, progress.expected = step, want
        actual = port.call("read", jsonl=text)
        mismatch = compare("read", want, actual, options.strict_codes, header_observed=False)
        if mismatch is not None:
            return _Problem(f"read of stored text {index}: {mismatch.message}", step, verdict(want), verdict(actual))
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
