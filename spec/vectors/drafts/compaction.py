"""Tool-pairing balance at every cut, and the ranges a compaction may cover (INV-COMPACT)."""

from __future__ import annotations

from sessionlog_spec.model.compaction import pairing_delta
from sessionlog_spec.suite.agent.builder import SessionBuilder
from sessionlog_spec.vectors.drafts import steps
from sessionlog_spec.vectors.drafts.scenes import scene, seeded
from sessionlog_spec.vectors.drafts.steps import case
from sessionlog_spec.vectors.drafts.surface import two_turns
from sessionlog_spec.vectors.format import Draft

FILE = "compaction"
CUT_SCENES = (
    ("fresh", "INV-COMPACT-2", "an empty surface has one balanced cut"),
    ("closed", "INV-COMPACT-2 INV-COMPACT-1", "every cut of a closed turn; the ones inside the tool exchange are unbalanced"),
    ("pending-call", "INV-COMPACT-6 INV-COMPACT-1", "two calls asked for, none answered: the last cut is unbalanced"),
    ("answered", "INV-COMPACT-6", "one of two calls answered: still unbalanced at the tail"),
    ("all-answered", "INV-COMPACT-6 INV-COMPACT-2", "both calls answered: balanced again at the tail"),
    ("compacted", "INV-COMPACT-4", "after a compaction and a rewrite, balance is recomputed over the new surface"),
)


def drafts() -> list[Draft]:
    """The COMPACT vectors."""
    history = two_turns()
    b = seeded(history)
    out = [case(FILE, f"cuts-{name}", ids, description, steps.cuts(scene(name).events)) for name, ids, description in CUT_SCENES]
    nodes = b.state.surface.nodes
    ranges = b.legal_ranges()
    middle = next((s, e) for s, e in ranges if s != nodes[0] and e != nodes[-1])
    after = SessionBuilder(b.state)
    after.compaction(*middle)
    region = {"start": middle[0], "end": middle[1]}
    # A region that ends right after a message asking for calls, before their results.
    asking = next(n for n in nodes if pairing_delta(b.state.events[n]) > 0)
    split = (nodes[0], asking)
    careless = SessionBuilder(b.state)
    careless.compaction(*split)
    return [
        *out,
        case(FILE, "compact-legal-middle-range", "INV-COMPACT-3", f"a summary over the balanced range {middle[0]}..{middle[1]}",
             steps.seed(history), steps.append(SessionBuilder(b.state).compaction(*middle, commit=False))),
        case(FILE, "cuts-after-compaction", "INV-COMPACT-4 INV-COMPACT-2", "cuts of the surface after that summary",
             steps.cuts(after.events)),
        case(FILE, "region-legal-middle-range", "INV-COMPACT-3", f"the region {middle[0]}..{middle[1]} shadows its nodes",
             {**steps.cuts(history), "region": region}),
        case(FILE, "log-accepts-unbalanced-compaction", "INV-COMPACT-3 INV-COMPACT-1",
             f"the log takes a summary over {split[0]}..{split[1]}, which separates calls from their results",
             steps.seed(history), steps.append(SessionBuilder(b.state).compaction(*split, commit=False))),
        case(FILE, "cuts-after-unbalanced-compaction", "INV-COMPACT-1",
             "that surface has results without their calls: it has no balance", steps.cuts(careless.events)),
    ]
