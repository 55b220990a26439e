"""Importing a counterexample file as a regression vector, its expectation recomputed by the model."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from sessionlog_spec.registry import BY_ID, INVARIANTS
from sessionlog_spec.suite.output.cases import CaseFileError, read_case
from sessionlog_spec.vectors.format import (
    REGRESSIONS,
    VECTORS_DIR,
    Case,
    Draft,
    document,
    dumps_document,
    dumps_value,
    load_document,
    path_of,
)
from sessionlog_spec.vectors.oracle import case_of

CASE_FORMAT = "sessionlog-case/1"
DESCRIPTION_LIMIT = 200


class NotACounterexample(ValueError):
    """The file is not a counterexample the suite wrote."""


def steps_of(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The requests of a counterexample, as vector steps; the leading plain ``reset`` is the runner's own."""
    exchanges = document.get("exchanges")
    if not isinstance(exchanges, list) or not exchanges:
        raise NotACounterexample("it holds no exchanges")
    steps = [{"op": str(e["op"]), **dict(e.get("args") or {})} for e in exchanges]
    if steps[0] == {"op": "reset"}:
        steps = steps[1:]
    if not steps:
        raise NotACounterexample("it holds nothing but a reset")
    return steps


def invariants_of(document: dict[str, Any]) -> tuple[str, ...]:
    """The invariants the counterexample names, or those owning its codes, known IDs only."""
    named = [i for i in document.get("invariants") or () if i in BY_ID]
    if not named:
        codes = set(document.get("codes") or ())
        named = [inv.id for inv in INVARIANTS if codes & {c.value for c in inv.codes}]
    return tuple(dict.fromkeys(named))


def describe(document: dict[str, Any]) -> str:
    """One line: what kind of disagreement, in which group, and the suite's message."""
    text = f"regression: {document.get('kind', 'disagreement')} in {document.get('group', '?')}: {document.get('message', '')}"
    text = " ".join(text.split())
    return text if len(text) <= DESCRIPTION_LIMIT else text[: DESCRIPTION_LIMIT - 1] + "…"


def draft_from(document: dict[str, Any]) -> Draft:
    """The regression draft for a counterexample: its id is a hash of the steps, so the same run imports once."""
    if document.get("format") != CASE_FORMAT:
        raise NotACounterexample(f"its format is {document.get('format')!r}, not {CASE_FORMAT!r}")
    steps = steps_of(document)
    digest = hashlib.sha256(dumps_value(steps).encode("utf-8")).hexdigest()[:16]
    return Draft(f"{REGRESSIONS}/{digest}", REGRESSIONS, invariants_of(document), describe(document), tuple(steps))


def add(path: Path, root: Path = VECTORS_DIR) -> tuple[Case, bool]:
    """Append the counterexample at ``path`` to the regressions file; returns the case and whether it was new."""
    try:
        counterexample = read_case(path)  # bounded, regular files only, checked as a counterexample
    except CaseFileError as error:
        raise NotACounterexample(str(error)) from None
    case = case_of(draft_from(counterexample), refusals_allowed=True)
    target = path_of(REGRESSIONS, root)
    cases: list[Case] = load_document(target)["cases"] if target.exists() else []
    if any(c["id"] == case["id"] for c in cases):
        return case, False
    root.mkdir(parents=True, exist_ok=True)
    target.write_text(dumps_document(document(REGRESSIONS, [*cases, case])), encoding="utf-8")
    return case, True
