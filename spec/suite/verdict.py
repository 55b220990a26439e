"""The verdict on a whole run: does it pass, and if not, every reason why.

A run fails on any disagreement or port fault not excused by an expected-failures entry, on a
suite error, on a void group or a void run, on a stale expected-failures entry, and, under a
profile that requires it, on an observable invariant or code that no step exercised (judged only
when every group ran, since a partial run cannot exercise everything).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sessionlog_spec.suite.coverage import never_exercised
from sessionlog_spec.suite.expectations import Judgement
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
    return Verdict(not reasons, reasons, never_ids, never_codes, judged)
