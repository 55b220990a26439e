"""Large logs, stored as generator descriptions: a 100k-event crashed log and medium ones for the pure ops."""

from __future__ import annotations

from typing import Any

from sessionlog_spec.vectors.drafts import steps
from sessionlog_spec.vectors.drafts.steps import case
from sessionlog_spec.vectors.format import LARGE, Draft

HUGE: dict[str, Any] = {"generate": "realistic", "turns": 7483, "seed": 2026, "drop_last": 6}
"""100 049 events, cut by a crash right after a ``tool/call`` (the six events that close turn 7483 are lost)."""
MEDIUM: dict[str, Any] = {"generate": "realistic", "turns": 205, "seed": 7}


def drafts() -> list[Draft]:
    """The large vectors."""
    return [
        case(LARGE, "load-100k-crashed", "INV-JSONL-2 INV-JSONL-8 INV-REPAIR-2 INV-REPAIR-3 INV-SURF-10",
             "a 100 049-event log, 7483 turns with periodic compactions and rewrites, repaired on load", steps.load(HUGE)),
        case(LARGE, "seed-medium", "INV-LOG-5 INV-TRACE-10 INV-HDR-8", "a 205-turn session as a seed", steps.seed(MEDIUM)),
        case(LARGE, "fold-surface-medium", "INV-SURF-12", "the surface of the 205-turn session", steps.fold_surface(MEDIUM)),
        case(LARGE, "cuts-medium", "INV-COMPACT-2 INV-COMPACT-4", "every cut of the 205-turn session", steps.cuts(MEDIUM)),
        case(LARGE, "repair-medium-crashed", "INV-REPAIR-2", "the closers of the 205-turn session cut mid-step",
             steps.repair({**MEDIUM, "drop_last": 4})),
    ]
