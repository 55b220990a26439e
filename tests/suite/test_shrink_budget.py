"""The shrinking budget: Hypothesis's own words about its deadline are withheld and recorded."""

from __future__ import annotations

from hypothesis import reporting

from sessionlog_spec.suite.profiles import ShrinkBudget, shrink_budget


def test_the_deadline_messages_are_recorded_not_printed() -> None:
    printed: list[object] = []
    budget = ShrinkBudget(10)
    with reporting.with_reporter(printed.append), shrink_budget(budget):
        reporting.report("Falsifying example: state = Machine()")
        assert not budget.exhausted
        reporting.report("\nThis test function exited early because it took too long to shrink. Add @seed(1).")
        reporting.report("WARNING: Hypothesis has spent more than five minutes working to shrink a failing example")
    assert budget.exhausted
    assert printed == ["Falsifying example: state = Machine()"]
