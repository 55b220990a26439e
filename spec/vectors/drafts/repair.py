"""Crash repair: the closers for every shape of open tail, and their convergence (INV-REPAIR)."""

from __future__ import annotations

from sessionlog_spec.model.event import encode_event
from sessionlog_spec.model.repair import interrupted_turn_closers
from sessionlog_spec.model.session import fold_session
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.vectors.drafts import steps
from sessionlog_spec.vectors.drafts.scenes import scene
from sessionlog_spec.vectors.drafts.steps import case
from sessionlog_spec.vectors.format import Draft

FILE = "repair"
OPEN_TAILS = (
    ("open-turn", "a turn with no step open: only turn/end"),
    ("open-step", "an open step: step/end, then turn/end"),
    ("pending-call", "call-1 started, call-2 only asked for: OUTCOME_UNKNOWN citing the call, NOT_STARTED without sources"),
    ("answered", "call-1 answered, call-2 never started: one NOT_STARTED result"),
    ("between-steps", "every call answered and the step closed: only turn/end"),
    ("compacted", "an open turn after a compaction and a rewrite"),
)


def repaired(events: list[dict[str, object]]) -> list[dict[str, object]]:
    """``events`` with the model's closers appended."""
    state = fold_session(events)
    assert not isinstance(state, Violation), state
    return [*events, *(encode_event(e) for e in interrupted_turn_closers(state.events))]


def drafts() -> list[Draft]:
    """The REPAIR vectors."""
    out = [
        case(FILE, f"closers-{name}", "INV-REPAIR-2 INV-REPAIR-3 INV-REPAIR-4", f"repair of {description}",
             steps.repair(scene(name).events))
        for name, description in OPEN_TAILS
    ]
    pending = repaired(scene("pending-call").events)
    return [
        *out,
        case(FILE, "nothing-when-closed", "INV-REPAIR-1", "a closed session needs no closers",
             steps.repair(scene("closed").events)),
        case(FILE, "nothing-when-empty", "INV-REPAIR-1", "an empty log needs no closers", steps.repair([])),
        case(FILE, "nothing-after-seed-marker", "INV-REPAIR-1", "a log of one end-of-seed marker needs no closers",
             steps.repair(scene("fresh").events)),
        case(FILE, "repaired-log-is-valid", "INV-REPAIR-5", "a log with its closers appended seeds as a valid session",
             steps.seed(pending)),
        case(FILE, "repair-converges", "INV-REPAIR-5", "repairing a repaired log adds nothing", steps.repair(pending)),
    ]
