"""Coverage that cannot lie: what each group's steps actually asked a port about.

Counters are filled by the state machines as they exchange requests with the port, never from
the generators' intentions: a rule whose preconditions never held, or whose candidate the
mutation could not build, adds nothing.  A group with no steps is *void*; the nightly profile also
fails when an observable invariant or violation code was never exercised.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sessionlog_spec.model.violation import Code
from sessionlog_spec.registry import INVARIANTS

UNOBSERVABLE: dict[str, str] = {}
"""Invariants and codes no ``sessionlog-driver/1`` op can observe, with the reason (none since ``cuts`` takes a ``seq``)."""

ALL_INVARIANTS = tuple(inv.id for inv in INVARIANTS)
ALL_CODES = tuple(code.value for code in Code)


@dataclass
class GroupCoverage:
    """What one group's run exercised."""

    group: str
    examples: int = 0
    steps: int = 0
    requests: int = 0
    rules: Counter[str] = field(default_factory=Counter)
    invariants: Counter[str] = field(default_factory=Counter)
    codes: Counter[str] = field(default_factory=Counter)
    cells: Counter[str] = field(default_factory=Counter)
    """Refusals by (invariant × event type × op), keyed by :func:`sessionlog_spec.suite.cells.cell_key`."""
    crash_trials: int = 0
    """Storage: how often the driver was killed mid-write and its store reopened."""
    durable_lost: int = 0
    """Storage: acknowledged-durable events that a reopen did not recover (must stay 0)."""

    def record_step(self, rule: str, invariants: Iterable[str], codes: Iterable[str]) -> None:
        """Count one step of ``rule`` and everything it exercised."""
        self.steps += 1
        self.rules[rule] += 1
        self.invariants.update(invariants)
        self.codes.update(codes)

    def to_json(self) -> dict[str, Any]:
        """The counters as a report section."""
        return {
            "examples": self.examples,
            "steps": self.steps,
            "requests": self.requests,
            "rules": dict(sorted(self.rules.items())),
            "invariants": dict(sorted(self.invariants.items())),
            "codes": dict(sorted(self.codes.items())),
            "cells": dict(sorted(self.cells.items())),
            **({"crash_trials": self.crash_trials, "durable_lost": self.durable_lost} if self.group == "storage" else {}),
        }


def merged(groups: Iterable[GroupCoverage]) -> tuple[Counter[str], Counter[str]]:
    """Invariant and code counts summed over groups."""
    invariants: Counter[str] = Counter()
    codes: Counter[str] = Counter()
    for group in groups:
        invariants.update(group.invariants)
        codes.update(group.codes)
    return invariants, codes


def reached_cells(groups: Iterable[GroupCoverage]) -> frozenset[str]:
    """Every cell a refusal of any of ``groups`` reached."""
    return frozenset(key for g in groups for key in g.cells)


def never_exercised(groups: Iterable[GroupCoverage]) -> tuple[list[str], list[str]]:
    """Observable invariant IDs and codes that no step of any group exercised."""
    invariants, codes = merged(groups)
    missing_ids = [i for i in ALL_INVARIANTS if i not in UNOBSERVABLE and invariants[i] == 0]
    missing_codes = [c for c in ALL_CODES if c not in UNOBSERVABLE and codes[c] == 0]
    return missing_ids, missing_codes
