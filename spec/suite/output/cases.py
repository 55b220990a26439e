"""Counterexample files: a shrunk failing run, stored so that ``python -m sessionlog_spec replay`` can re-run it.

A case file holds every request the machine sent to the port in the minimal failing example (the
``reset`` first), the model's reply and the port's answer to each, and which invariants and codes
the failing step was about.  Replaying sends the same requests to a port and to the model again.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sessionlog_spec.files import FileProblem, read_regular
from sessionlog_spec.protocol import jsonlines
from sessionlog_spec.protocol.messages import PROTOCOL, Hello
from sessionlog_spec.protocol.schema import InvalidRequest, validate_request
from sessionlog_spec.suite.agreement import short
from sessionlog_spec.suite.exchange import answer_json
from sessionlog_spec.suite.machines.base import Disagreement
from sessionlog_spec.suite.storage_actions import SUITE_ACTIONS, action_problem

CASE_FORMAT = "sessionlog-case/1"
MAX_CASE_BYTES = 64 << 20
"""The largest counterexample file ``replay`` reads (a shrunk case is far smaller; a port's reply may be 64 MiB)."""


def case_json(
    failure: Disagreement, hello: Hello, *, strict_codes: bool, steps_shown: list[str], seed: int | None = None
) -> dict[str, Any]:
    """A failure as a counterexample document."""
    failing = failure.transcript[-1] if failure.transcript else None
    return {
        "format": CASE_FORMAT,
        "case": failure.case_id,
        "group": failure.group,
        "kind": failure.mismatch.kind,
        "message": failure.mismatch.message,
        "rule": failure.rule,
        "invariants": failure.invariants,
        "codes": failure.codes,
        "strict_codes": strict_codes,
        "seed": seed,
        "port": {"name": hello.name, "version": hello.version, "capabilities": list(hello.capabilities)},
        "failing": None
        if failing is None
        else {"op": failing.op, "expected": answer_json(failing.expected), "actual": answer_json(failing.actual)},
        "exchanges": [e.to_json() for e in failure.transcript],
        "hypothesis_steps": steps_shown,
    }


def case_name(document: dict[str, Any]) -> str:
    """A file name that says what failed and tells different transcripts apart."""
    digest = hashlib.sha256(jsonlines.dumps(document["exchanges"])).hexdigest()[:10]
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", document["case"]).strip("-")
    return f"{stem}-{digest}.json"


def write_case(
    directory: Path, failure: Disagreement, hello: Hello, *, strict_codes: bool, steps_shown: list[str], seed: int | None = None
) -> Path:
    """Write the counterexample for ``failure`` into ``directory``; returns its path."""
    document = case_json(failure, hello, strict_codes=strict_codes, steps_shown=steps_shown, seed=seed)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / case_name(document)
    path.write_text(json.dumps(document, ensure_ascii=False, allow_nan=False, indent=1, default=_plain) + "\n", encoding="utf-8")
    return path


def _plain(value: object) -> object:
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not a JSON value")


class CaseFileError(ValueError):
    """A file ``replay`` cannot use, with the reason in one line."""


def read_case(path: Path, limit: int = MAX_CASE_BYTES) -> dict[str, Any]:
    """A counterexample document read back exactly (large integers and ``-0.0`` included).

    Raises :class:`CaseFileError` for anything that is not a readable ``sessionlog-case/1`` file:
    a missing path, a directory or device, a file over ``limit`` bytes, text that is not JSON, or a
    document whose exchanges are not requests the protocol accepts.
    """
    data = _bounded_read(path, limit)
    try:
        document = jsonlines.loads(data)
    except (ValueError, RecursionError) as error:
        raise CaseFileError(f"not JSON ({_first_line(error)})") from None
    if not isinstance(document, dict):
        raise CaseFileError(f"not a {CASE_FORMAT} file: the document is a JSON {_kind(document)}, not an object")
    if document.get("format") != CASE_FORMAT:
        found = "no format" if "format" not in document else f"format {short(document['format'])}"
        raise CaseFileError(f"not a {CASE_FORMAT} file ({found})")
    for key in ("case", "message"):
        if not isinstance(document.get(key), str):
            raise CaseFileError(f"{key!r} is missing or not a string")
    exchanges = document.get("exchanges")
    if not isinstance(exchanges, list) or not exchanges:
        raise CaseFileError("'exchanges' is missing, empty or not a list: there is nothing to replay")
    for index, exchange in enumerate(exchanges):
        problem = _exchange_problem(exchange)
        if problem is not None:
            raise CaseFileError(f"exchange {index + 1} of {len(exchanges)}: {problem}")
    return document


def _bounded_read(path: Path, limit: int) -> bytes:
    """At most ``limit`` bytes of a regular file; anything else is a :class:`CaseFileError`."""
    try:
        return read_regular(path, limit, "a counterexample file")
    except FileProblem as problem:
        text = str(problem)
        if text == "it is a directory":
            text += "; give one of the .json files in it"
        raise CaseFileError(text) from None


def _exchange_problem(exchange: Any) -> str | None:
    """Why one stored exchange cannot be sent again, or ``None``."""
    if not isinstance(exchange, dict):
        return f"a JSON {_kind(exchange)}, not an object"
    op, args = exchange.get("op"), exchange.get("args", {})
    if not isinstance(op, str):
        return "'op' is missing or not a string"
    if not isinstance(args, dict):
        return f"'args' of {op} is a JSON {_kind(args)}, not an object"
    if op in SUITE_ACTIONS:  # done by the suite itself on replay, never sent
        return action_problem(op, args)
    if "id" in args or "op" in args:
        return f"'args' of {op} may not hold 'id' or 'op'"
    try:
        validate_request({"id": 1, "op": op, **args})
    except InvalidRequest as error:
        return f"not a {PROTOCOL} request: {error}"
    return None


def _kind(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(type(value), "number")


def _first_line(error: BaseException) -> str:
    return (str(error).splitlines() or [type(error).__name__])[0]


def transcript_of(document: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The requests of a counterexample, in order."""
    return [(str(e["op"]), dict(e.get("args", {}))) for e in document["exchanges"]]


