"""The declared rule space: every cell (invariant × event type × path) the model enforces, read off
the model and the registry rather than off what the suite's generators happen to build.

A cell is what :mod:`sessionlog_spec.suite.cells` counts when the model refuses a submission: the
invariant owning the refusal's code, the type of the refused event, the op.  The space declares, for
each invariant of :data:`~sessionlog_spec.registry.INVARIANTS`:

* its **types**, per code, from the model's own tables: a payload code on every type of the payload
  table that answers with it (:data:`~sessionlog_spec.model.session.TYPE_CODES`, the rest
  ``PAYLOAD_INVALID`` but for :data:`~sessionlog_spec.model.trace.TRACE_TYPES`, which answer in the
  trace's codes); a relationship code on every type whose rule in
  :data:`~sessionlog_spec.model.relationships._HANDLERS` can raise it (found by reading the rule's
  source, :func:`sessionlog_spec.check_order.ordered_codes`: every ``Code`` its function, and the
  model functions it calls, name); every other code
  on the wildcard type ``*`` (any type counts), since its rule is not written per type;
* its **paths**, by the rule's group (:data:`GROUP_PATHS`): an event rule on every path that admits
  events (``append``, ``seed``, ``load``, ``read``, ``upgrade_v0``), a stored-form rule on the
  stored paths, an edge rule on the edge's paths, with the few rules a registry sentence ties to one
  path narrowed (:data:`PATH_OVERRIDES`).

A declared cell the model cannot reach (a rule's code raised in a branch its type never takes, a
check an earlier stage always answers first) is listed in :data:`UNREACHABLE` with the reason read off
the model's source; it leaves the denominator (:func:`reachable_declared`).  The space less those is
the denominator of the strength figures: the run's reached cells, the generic witness search's
(:mod:`sessionlog_spec.suite.fuzz.witness`), and, under the nightly profile, every one a run leaves
unreached fails it (:mod:`sessionlog_spec.suite.verdict`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from sessionlog_spec.check_order import ordered_codes
from sessionlog_spec.model import relationships, session
from sessionlog_spec.model.payloads import EVENT_PAYLOADS
from sessionlog_spec.model.trace import TRACE_TYPES
from sessionlog_spec.model.violation import Code
from sessionlog_spec.registry import INVARIANTS, Invariant
from sessionlog_spec.suite.cells import ANY_TYPE, Cell

EVENT_PATHS: Final = ("append", "seed", "load", "read", "upgrade_v0")
"""The ops that admit events: each runs every event rule on every event it admits."""
STORED_PATHS: Final = ("load", "read")
EDGE_PATHS: Final = ("upgrade_v0", "load", "read")
"""A v0 log reaches the edge through ``upgrade_v0``, and as stored text through ``load`` and ``read``."""

GROUP_PATHS: Final[Mapping[str, tuple[str, ...]]] = {
    "LOG": EVENT_PATHS,
    "PAY": EVENT_PATHS,
    "SURF": (*EVENT_PATHS, "fold_surface"),
    "TRACE": EVENT_PATHS,
    "HDR": (*EVENT_PATHS, "header_decision"),
    "REPAIR": ("load", "repair"),
    "COMPACT": ("cuts",),
    "JSONL": STORED_PATHS,
    "LEGACY": EDGE_PATHS,
    "REL": EVENT_PATHS,
}
"""The paths enforcing each group's rules.  ``fold_header`` refuses nothing of its own (it reconstructs);
the writer's decision (``header_decision``) judges an assembled header; the balance rules of
compaction are the compactor's (``cuts``): the log does not police them (INV-COMPACT-1)."""

PATH_OVERRIDES: Final[Mapping[str, tuple[str, ...]]] = {
    "INV-LOG-10": ("seed",),  # the end-of-seed marker is the seed's
    "INV-LOG-11": ("append", "seed", "load"),  # a rejected candidate leaves the session: only where one is held
    "INV-LOG-12": ("append",),
}
"""Rules whose sentence ties them to fewer paths than their group's."""


UNREACHABLE: Final[Mapping[tuple[str, str], tuple[tuple[str, ...], str]]] = {
    ("INV-REL-5", "turn/end"): (
        EVENT_PATHS,
        "the trace refuses a turn/end while a step is open (STEP_STILL_OPEN, an earlier stage), and the "
        "step/end that closes it and every turn/start empty the advertised calls, so a turn/end never meets one",
    ),
    ("INV-REL-21", "tool/code-dispatch"): (
        EVENT_PATHS,
        "the PTC rule is one function for both dispatch types; only its tool/code-dispatch-start branch "
        "raises PTC_START_REPEATED",
    ),
    ("INV-REL-22", "tool/code-dispatch-start"): (
        EVENT_PATHS,
        "the PTC rule is one function for both dispatch types; only its tool/code-dispatch branch raises "
        "PTC_SETTLE_UNPAIRED and PTC_SETTLE_MISMATCH",
    ),
    ("INV-REL-29", "session-log-deepseek/delivery-accepted"): (
        ("append", "seed", "upgrade_v0"),
        "a delivery marker is judged against the session identity of a stored header line, which only load "
        "and read have; the edge judges a v0 marker as a source (LEGACY_SOURCE_INVALID, INV-LEGACY-9) and "
        "folds the converted log without an identity",
    ),
}
"""Declared cells the model cannot reach, by (invariant, type): the paths and the reason, read off the
model's source.  They leave the denominator (:func:`reachable_declared`); the rest must be reached."""


def unreachable_cells() -> Mapping[Cell, str]:
    """Every declared cell :data:`UNREACHABLE` names, with its reason."""
    declared = declared_cells()
    return {
        (inv, type_, path): reason
        for (inv, type_), (paths, reason) in UNREACHABLE.items()
        for path in paths
        if (inv, type_, path) in declared
    }


def reachable_declared() -> frozenset[Cell]:
    """The declared cells less the unreachable ones: the denominator of every reach figure."""
    return declared_cells() - unreachable_cells().keys()


# -- which types a code is raised on ----------------------------------------------------------------


@functools.cache
def code_types() -> Mapping[str, frozenset[str]]:
    """The event types each code is raised on, where the model writes its rule per type."""
    types: dict[str, set[str]] = {}
    for type_ in EVENT_PAYLOADS:
        if type_ in TRACE_TYPES:
            continue  # the bracket and step types answer a payload fault in the trace's codes
        types.setdefault(session.TYPE_CODES.get(type_, Code.PAYLOAD_INVALID).value, set()).add(type_)
    for type_, handler in relationships._HANDLERS.items():
        for code in ordered_codes(handler):
            types.setdefault(code, set()).add(type_)
    return {code: frozenset(t) for code, t in types.items()}


def invariant_types(invariant: Invariant) -> frozenset[str]:
    """The types ``invariant`` is declared on: its codes' types, or ``*`` for a code written for any type."""
    table = code_types()
    types: set[str] = set()
    for code in invariant.codes:
        types |= table.get(code.value, {ANY_TYPE})
    return frozenset(types or {ANY_TYPE})


def invariant_paths(invariant: Invariant) -> tuple[str, ...]:
    """The paths enforcing ``invariant``."""
    return PATH_OVERRIDES.get(invariant.id, GROUP_PATHS[invariant.group])


@functools.cache
def declared_cells(invariants: Iterable[Invariant] = INVARIANTS) -> frozenset[Cell]:
    """The declared space: every (invariant, type, path) of every invariant that has violation codes."""
    return frozenset(
        (inv.id, type_, path)
        for inv in invariants
        if inv.codes
        for type_ in invariant_types(inv)
        for path in invariant_paths(inv)
    )


def covers(declared: Cell, reached: Cell) -> bool:
    """Whether a reached cell counts for a declared one: same invariant and path, and the same type or
    any type where the declared one is ``*``."""
    return declared[0] == reached[0] and declared[2] == reached[2] and declared[1] in (ANY_TYPE, reached[1])


def covered(declared: Iterable[Cell], reached: Iterable[Cell]) -> frozenset[Cell]:
    """The declared cells some reached cell counts for."""
    by_rule: dict[tuple[str, str], set[str]] = {}
    for inv, type_, path in reached:
        by_rule.setdefault((inv, path), set()).add(type_)
    return frozenset(
        cell for cell in declared if (types := by_rule.get((cell[0], cell[2]))) and (cell[1] == ANY_TYPE or cell[1] in types)
    )


def parse_cell(key: str) -> Cell:
    """A cell from its report key (``INV-PAY-1 turn/start append``)."""
    inv, type_, path = key.split(" ")
    return inv, type_, path


def by_group(cells: Iterable[Cell]) -> Iterator[tuple[str, int]]:
    """How many of ``cells`` each invariant group holds, in the registry's group order."""
    counts: dict[str, int] = {}
    for inv, _, _ in cells:
        group = inv.split("-")[1]
        counts[group] = counts.get(group, 0) + 1
    for group in dict.fromkeys(inv.group for inv in INVARIANTS):
        if group in counts:
            yield group, counts[group]


@dataclass(frozen=True, slots=True)
class DeclaredReach:
    """How much of the declared space a run reached (the cells the model cannot reach left out)."""

    cells: int
    reached: int
    by_group: Mapping[str, tuple[int, int]]
    """Invariant group -> (declared cells, reached cells)."""
    unreached: tuple[str, ...] = ()
    """The report keys of the reachable declared cells not reached."""
    unreachable: int = 0
    """Declared cells the model cannot reach (:data:`UNREACHABLE`), outside ``cells``."""

    @property
    def fraction(self) -> float:
        """The share of declared cells reached."""
        return self.reached / self.cells if self.cells else 0.0

    def to_json(self) -> dict[str, object]:
        return {
            "cells": self.cells,
            "reached": self.reached,
            "fraction": round(self.fraction, 4),
            "by_group": {group: {"cells": n, "reached": k} for group, (n, k) in self.by_group.items()},
            "unreachable": self.unreachable,
            "unreached": list(self.unreached),
        }


def declared_reach(reached_keys: Iterable[str]) -> DeclaredReach:
    """How much of the reachable declared space the reached cells (report keys) count for."""
    declared = reachable_declared()
    reached = covered(declared, (parse_cell(key) for key in reached_keys))
    got = dict(by_group(reached))
    unreached = tuple(sorted(" ".join(cell) for cell in declared - reached))
    by_group_ = {g: (n, got.get(g, 0)) for g, n in by_group(declared)}
    return DeclaredReach(len(declared), len(reached), by_group_, unreached, len(declared_cells()) - len(declared))
