"""Build every vector file from the model, write them, and compare them with the committed copy."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sessionlog_spec.vectors.divergences import still_diverges
from sessionlog_spec.vectors.drafts import (
    compaction,
    header,
    jsonl,
    large,
    legacy,
    log,
    payloads,
    refusals,
    repair,
    surface,
    trace,
)
from sessionlog_spec.vectors.format import (
    GENERATED,
    REGRESSIONS,
    VECTORS_DIR,
    Case,
    Draft,
    document,
    dumps_document,
    load_document,
    path_of,
)
from sessionlog_spec.vectors.oracle import case_of

DRAFTERS: tuple[Callable[[], list[Draft]], ...] = (
    log.drafts,
    payloads.drafts,
    surface.drafts,
    trace.drafts,
    header.drafts,
    repair.drafts,
    compaction.drafts,
    jsonl.drafts,
    legacy.drafts,
    refusals.drafts,
    large.drafts,
)


@dataclass
class Generated:
    """The text of every file, and the drafts withheld as known model divergences."""

    texts: dict[str, str]
    withheld: list[str] = field(default_factory=list)


def all_drafts() -> list[Draft]:
    """Every draft, ids unique."""
    drafts = [d for drafter in DRAFTERS for d in drafter()]
    seen: set[str] = set()
    for d in drafts:
        if d.id in seen:
            raise ValueError(f"duplicate vector id {d.id}")
        seen.add(d.id)
    return drafts


def refreshed_regressions(root: Path) -> list[Case]:
    """The regression cases under ``root`` with their expectations recomputed by the model."""
    path = path_of(REGRESSIONS, root)
    if not path.exists():
        return []
    return [case_of(draft_of(case, REGRESSIONS), refusals_allowed=True) for case in load_document(path)["cases"]]


def draft_of(case: Case, file: str) -> Draft:
    """A stored case back as a draft, to be answered again."""
    return Draft(case["id"], file, tuple(case["invariants"]), case["description"], tuple(case["input"]))


def generate(root: Path = VECTORS_DIR, skip: Iterable[str] = ()) -> Generated:
    """Every vector file as the model answers it now; ``skip`` names file stems not to build (slow ones in tests)."""
    skipped = set(skip)
    by_file: dict[str, list[Case]] = {stem: [] for stem in GENERATED if stem not in skipped}
    out = Generated({})
    for draft in all_drafts():
        if draft.file in skipped:
            continue
        case = case_of(draft)
        if still_diverges(case):
            out.withheld.append(draft.id)
            continue
        by_file[draft.file].append(case)
    regressions = refreshed_regressions(root)
    if regressions:
        by_file[REGRESSIONS] = regressions
    for stem, cases in by_file.items():
        ordered = cases if stem == REGRESSIONS else sorted(cases, key=lambda c: str(c["id"]))
        out.texts[stem] = dumps_document(document(stem, ordered))
    return out


def write(generated: Generated, root: Path = VECTORS_DIR) -> list[Path]:
    """Write every generated file under ``root``; returns the paths written."""
    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for stem, text in generated.texts.items():
        path = path_of(stem, root)
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def _cases_by_id(text: str) -> dict[str, Any]:
    try:
        return {c["id"]: c for c in json.loads(text)["cases"]}
    except (ValueError, KeyError, TypeError):
        return {}


def differences(generated: Generated, root: Path = VECTORS_DIR) -> list[str]:
    """One line per file that differs from what the model produces now, naming the cases involved."""
    lines = []
    for stem, text in generated.texts.items():
        path = path_of(stem, root)
        if not path.exists():
            lines.append(f"{path.name}: missing")
            continue
        current = path.read_text(encoding="utf-8")
        if current == text:
            continue
        ours, theirs = _cases_by_id(text), _cases_by_id(current)
        added = sorted(set(ours) - set(theirs))
        removed = sorted(set(theirs) - set(ours))
        changed = sorted(i for i in set(ours) & set(theirs) if ours[i] != theirs[i])
        parts = [f"{label} {len(ids)} ({', '.join(ids[:5])}{', …' if len(ids) > 5 else ''})"
                 for label, ids in (("new", added), ("gone", removed), ("changed", changed)) if ids]
        lines.append(f"{path.name}: " + ("; ".join(parts) if parts else "same cases, different text (order or formatting)"))
    return lines
