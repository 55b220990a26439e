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

from sessionlog_spec.protocol import jsonlines
from sessionlog_spec.protocol.messages import Hello
from sessionlog_spec.suite.exchange import answer_json
from sessionlog_spec.suite.machines.base import Disagreement

CASE_FORMAT = "sessionlog-case/1"


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


def read_case(path: Path) -> dict[str, Any]:
    """A counterexample document read back exactly (large integers and ``-0.0`` included)."""
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if document.get("format") != CASE_FORMAT:
        raise ValueError(f"{path} is not a {CASE_FORMAT} file")
    return document


def transcript_of(document: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The requests of a counterexample, in order."""
    return [(str(e["op"]), dict(e.get("args", {}))) for e in document["exchanges"]]


