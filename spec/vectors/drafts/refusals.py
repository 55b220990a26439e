"""Refusal vectors: one per mutation of :mod:`sessionlog_spec.suite.agent.candidates`, on the smallest scene it applies to.

A mutation builds an invalid candidate from a session; the vector replays the scene and submits
the candidate in the mutation's context.  Mutations whose context has no protocol op (``cuts``
asks for the balance around one seq, which ``sessionlog-driver/1`` cannot express) are listed in
:data:`UNREACHABLE` and left out.
"""

from __future__ import annotations

import json
import random
from typing import Any

from sessionlog_spec.model.violation import Code
from sessionlog_spec.registry import INVARIANTS
from sessionlog_spec.suite.agent.candidates import MUTATIONS, Mutation
from sessionlog_spec.vectors.drafts import steps
from sessionlog_spec.vectors.drafts.scenes import Scene, scenes
from sessionlog_spec.vectors.format import GROUP_FILES, Draft, Step, dumps_value
from sessionlog_spec.vectors.oracle import answer

UNREACHABLE_CONTEXTS: frozenset[str] = frozenset()
"""Mutation contexts no request of ``sessionlog-driver/1`` can carry."""
UNREACHABLE_INVARIANTS: tuple[str, ...] = ("INV-JSONL-11",)
"""Invariants no vector can exercise: durability needs a store on disk that the suite damages and a
driver it kills, which a vector (requests and replies only) cannot express; the ``storage`` group checks it."""
EXTRA_INVARIANTS: dict[str, tuple[str, ...]] = {
    "replace_start_shadowed": ("INV-SURF-13",),
    "region_inverted": ("INV-COMPACT-3",),
    "region_start_off_surface": ("INV-COMPACT-3",),
    "region_end_off_surface": ("INV-COMPACT-3",),
}
"""Rules a mutation exercises beyond the owners of its code."""
SEED = 20_260_101
"""Every mutation draws from a fresh generator with this seed, so its candidate never depends on order."""


def owners(code: Code, context: str) -> tuple[str, ...]:
    """The invariants that own ``code``; a stored log's seq gap is INV-JSONL-5, a live one INV-LOG-5."""
    ids = tuple(inv.id for inv in INVARIANTS if code in inv.codes)
    if code is Code.SEQ_NOT_CONTIGUOUS:
        return ("INV-JSONL-5",) if context == "load" else ("INV-LOG-5",)
    return ids


def _submit(scene: Scene, mutation: Mutation, candidate: Any) -> list[Step]:
    if mutation.context == "append":
        return [*scene.replay(), steps.append(candidate)]
    if mutation.context == "seed":
        return [steps.seed([]), steps.seed(candidate)]
    if mutation.context == "load":
        return [steps.seed([]), steps.load(candidate)]
    if mutation.context == "cuts":
        return [{**steps.cuts(scene.builder.events), **candidate}]
    return [steps.upgrade(candidate["header"], candidate["events"])]


def draft_for(mutation: Mutation, pool: list[Scene]) -> Draft | None:
    """The vector for ``mutation`` on the first scene where the model refuses its candidate with its code."""
    for scene in pool:
        candidate = mutation.build(scene.builder, random.Random(SEED))
        if candidate is None:
            continue
        submitted = _submit(scene, mutation, candidate)
        # The label must be the truth: a candidate the model refuses otherwise is tried on the next scene.
        if answer(json.loads(dumps_value(submitted))).expected.get("code") != mutation.code.value:
            continue
        invariants = (*owners(mutation.code, mutation.context), *EXTRA_INVARIANTS.get(mutation.name, ()))
        # A compactor's questions are the compaction file's, whichever group owns the code.
        file = GROUP_FILES["COMPACT" if mutation.context == "cuts" else invariants[0].split("-")[1]]
        # Every stateful refusal also checks that the session is unchanged afterwards.
        extra = ("INV-LOG-11",) if mutation.context in ("append", "seed", "load") else ()
        return Draft(
            id=f"{file}/refuse-{_slug(mutation.name)}",
            file=file,
            invariants=(*invariants, *extra),
            description=f"{mutation.context} refused with {mutation.code.value} "
            f"({mutation.name.replace('_', ' ').replace('@', ' on ')}, scene {scene.name})",
            steps=tuple(submitted),
        )
    return None


def _slug(name: str) -> str:
    """A mutation's name as a vector id: ``seq_not_natural@seed`` is ``seq-not-natural-on-seed``."""
    return name.replace("_", "-").replace("@", "-on-")


def drafts() -> list[Draft]:
    """One refusal vector per protocol-reachable mutation."""
    pool = scenes()
    out = []
    for mutation in MUTATIONS:
        if mutation.context in UNREACHABLE_CONTEXTS:
            continue
        draft = draft_for(mutation, pool)
        if draft is None:
            raise AssertionError(f"mutation {mutation.name} gives a candidate refused with {mutation.code.value} on no scene")
        out.append(draft)
    return out


def unreachable_codes() -> frozenset[Code]:
    """Codes that only mutations without a protocol op produce."""
    reachable = {m.code for m in MUTATIONS if m.context not in UNREACHABLE_CONTEXTS}
    return frozenset(m.code for m in MUTATIONS if m.code not in reachable)
