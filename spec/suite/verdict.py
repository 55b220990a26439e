"""The verdict on a whole run: does it pass, and if not, every reason why.

A run fails on any disagreement or port fault not excused by an expected-failures entry, on a
suite error, on a void group or a void run, on a stale expected-failures entry, and, under a
profile that requires it, on an observable invariant or code that no step exercised and on a
reachable cell (:mod:`sessionlog_spec.suite.reach`) or declared cell (:mod:`sessionlog_spec.suite.rule_space`,
less the cells it lists as unreachable, with their reasons) that no refusal reached (judged only when
every group ran, since a partial run cannot exercise everything).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sessionlog_spec.suite.coverage import never_exercised, reached_cells
from sessionlog_spec.suite.expectations import Judgement
from sessionlog_spec.suite.reach import reachable_cells
from sessionlog_spec.suite.rule_space import declared_reach
from sessionlog_spec.suite.run import ERROR, FAILED, PASSED, VOID, RunResult


@dataclass
class Verdict:
    """Whether the run passed, why not, and which invariants and codes it never exercised."""

    passed: bool
    reasons: list[str] = field(default_factory=list)
    never_invariants: list[str] = field(default_factory=list)
    never_codes: list[str] = field(default_factory=list)
    coverage_judged: bool = False
    """Whether the never-exercised lists counted against the run."""
    never_cells: list[str] = field(default_factory=list)
    """Reachable cells no refusal of the run reached (computed only when coverage is judged)."""
    reachable_cells: int = 0
    """How many cells the census found reachable (0 when coverage is not judged)."""
    never_declared: list[str] = field(default_factory=list)
    """Declared cells (:mod:`sessionlog_spec.suite.rule_space`) no refusal of the run reached and the
    rule space does not list as unreachable (computed only when coverage is judged)."""

    @property
    def never_exercised(self) -> list[str]:
        """Every observable invariant ID, then every violation code, that no step of the run exercised, by name."""
        return [*self.never_invariants, *self.never_codes]


def decide(run: RunResult, judgement: Judgement) -> Verdict:
    """Judge ``run`` with the expected failures already matched."""
    reasons: list[str] = []
    if run.void:
        reasons.append("void run: no group ran a single step (did the port declare any capability?)")
    for result in run.groups:
        reasons += [str(f.disagreement) for f in judgement.unexcused(result)]
        if result.status == FAILED and not result.failures:
            reasons.append(f"{result.group}: {result.detail}")
        elif result.status in (ERROR, VOID):
            reasons.append(f"{result.group} is {result.status}: {result.detail}")
    reasons += [f"stale expected failure ({e.describe()}): it no longer fails; remove the entry" for e in judgement.stale]
    never_ids, never_codes = never_exercised(r.coverage for r in run.groups)
    complete = all(r.status in (PASSED, FAILED) for r in run.groups) and not run.options.only
    judged = run.options.profile.require_full_coverage and complete
    if judged and never_ids:
        reasons.append(f"never exercised: {', '.join(never_ids)}")
    if judged and never_codes:
        reasons.append(f"violation codes never exercised: {', '.join(never_codes)}")
    never_cells: list[str] = []
    reachable = 0
    if judged:
        census = run.reachable if run.reachable is not None else reachable_cells()
        reachable = len(census)
        never_cells = sorted(census - reached_cells(r.coverage for r in run.groups))
        if never_cells:
            shown = "; ".join(never_cells[:12]) + (f"; and {len(never_cells) - 12} more" if len(never_cells) > 12 else "")
            reasons.append(f"{len(never_cells)} of {reachable} reachable cells never reached: {shown}")
    never_declared: list[str] = []
    if judged:
        declared = declared_reach(reached_cells(r.coverage for r in run.groups))
        never_declared = list(declared.unreached)
        if never_declared:
            # Every one is named: each is a rule the run never put to the port on that type and path,
            # and the way out is to reach it or to state in the rule space why the model cannot.
            reasons.append(
                f"{len(never_declared)} of {declared.cells} declared cells never reached "
                f"(none listed unreachable in rule_space.UNREACHABLE): {'; '.join(never_declared)}"
            )
    return Verdict(not reasons, reasons, never_ids, never_codes, judged, never_cells, reachable, never_declared)
