"""Running the conformance machines against one port: a result per capability group.

One port serves the whole run (each example starts with ``reset``); groups run one after another.
A group the port did not declare is *unsupported*; a group whose machine ran no step is *void*; a
disagreement is *failed*, with the shrunk transcript written as a counterexample file; anything
else that stops a group (a bug in the suite, a flaky port) is an *error*.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis.database import ExampleDatabase
from hypothesis.errors import Flaky, FlakyFailure, InvalidDefinition, Unsatisfiable
from hypothesis.stateful import run_state_machine_as_test

from sessionlog_spec.protocol.messages import Hello, Port
from sessionlog_spec.suite.cell_sweep import SWEEPING_GROUP, census_in_background, sweep_cells, sweep_pairs
from sessionlog_spec.suite.coverage import GroupCoverage
from sessionlog_spec.suite.machines import ACROSS, MACHINES, REQUIRES, SUITE_GROUPS, Disagreement, MachineContext
from sessionlog_spec.suite.minimise import minimise
from sessionlog_spec.suite.output.cases import write_case
from sessionlog_spec.suite.profiles import Profile, ShrinkBudget, fresh_examples, hypothesis_settings, shrink_budget
from sessionlog_spec.suite.reach import Witness, census_witnesses

PASSED, FAILED, UNSUPPORTED, VOID, ERROR = "passed", "failed", "unsupported", "void", "error"


@dataclass(frozen=True)
class RunOptions:
    """How one run searches and judges."""

    profile: Profile
    strict_codes: bool = True
    """A refusal must carry the model's code (``--any-code`` turns this off for a port that cannot map codes)."""
    only: tuple[str, ...] = ()
    seed: int | None = None
    database: ExampleDatabase | None = None
    cases_dir: Path = Path("reports/cases")
    max_examples: int | None = None
    """Overrides the profile's examples per group (the suite's own tests use small numbers)."""
    step_count: int | None = None
    examples_seed: int | None = None
    """The seed of this run's examples when it differs from ``seed``: one batch of a group split over
    job processes (``--jobs``, :mod:`sessionlog_spec.suite.parallel`) draws from a seed derived from it."""
    fail_fast: bool = False
    """Stop after the first group that fails (``--fail-fast``): the groups after it are not run."""

    def groups(self) -> tuple[str, ...]:
        """The groups this run covers, in report order."""
        return tuple(g for g in SUITE_GROUPS if not self.only or g in self.only)


@dataclass
class Failure:
    """One shrunk disagreement and where its counterexample file went."""

    disagreement: Disagreement
    case_file: Path
    steps_shown: list[str]
    """Hypothesis's rendering of the minimal failing example."""
    flaky: bool = False
    """The port did not fail the same way when the example was replayed."""
    shrink_note: str = ""
    """Said when shrinking stopped at the profile's budget (the case may be larger than it needs)."""

    @property
    def case_id(self) -> str:
        """``group/op/kind``."""
        return self.disagreement.case_id


@dataclass
class GroupResult:
    """What happened to one group."""

    group: str
    status: str
    coverage: GroupCoverage
    seconds: float = 0.0
    found_after: float | None = None
    """Seconds from the group's start to its first disagreement; the rest of ``seconds`` after it
    went to shrinking and minimising the counterexample."""
    detail: str = ""
    failures: list[Failure] = field(default_factory=list)
    """Every distinct disagreement found (Hypothesis shrinks each kind separately)."""

    @property
    def failure(self) -> Disagreement | None:
        """The first disagreement, if any."""
        return self.failures[0].disagreement if self.failures else None

    @property
    def case_file(self) -> Path | None:
        """The first counterexample file, if any."""
        return self.failures[0].case_file if self.failures else None

    @property
    def steps_shown(self) -> list[str]:
        """Hypothesis's rendering of the first minimal failing example."""
        return self.failures[0].steps_shown if self.failures else []

    @property
    def examples_per_second(self) -> float:
        """Examples run per second of wall time."""
        return self.coverage.examples / self.seconds if self.seconds else 0.0

    @property
    def steps_per_second(self) -> float:
        """Steps run per second of wall time."""
        return self.coverage.steps / self.seconds if self.seconds else 0.0


@dataclass
class RunResult:
    """A whole run: the port, the options and every group's result."""

    hello: Hello
    options: RunOptions
    groups: list[GroupResult]
    seconds: float
    reachable: frozenset[str] | None = None
    """The reach census's cells, when the run computed it (a deep run sweeps what generation missed)."""

    @property
    def void(self) -> bool:
        """No group could run: every one is unsupported or void, so the run checked nothing.

        A group that errored is not void: its error is the reason the run fails.
        """
        return all(r.status in (UNSUPPORTED, VOID) for r in self.groups)


def unsupported_reason(group: str, capabilities: Iterable[str]) -> str | None:
    """Why ``group`` cannot run against a port declaring ``capabilities``, or ``None``."""
    declared = set(capabilities)
    if group in ACROSS:
        return None if declared & set(ACROSS[group]) else f"needs one of {', '.join(ACROSS[group])}"
    if group not in declared:
        return "not declared in hello"
    missing = [g for g in REQUIRES.get(group, ()) if g not in declared]
    return f"needs {', '.join(missing)}" if missing else None


def run_group(
    group: str, port: Port, hello: Hello, options: RunOptions, on_example: Callable[[GroupCoverage], None] | None = None
) -> GroupResult:
    """Run one group's machine against ``port`` and judge it."""
    coverage = GroupCoverage(group)
    reason = unsupported_reason(group, hello.capabilities)
    if reason is not None:
        return GroupResult(group, UNSUPPORTED, coverage, detail=reason)
    context = MachineContext(
        group,
        port,
        frozenset(hello.capabilities),
        strict_codes=options.strict_codes,
        coverage=coverage,
        on_example=None if on_example is None else (lambda: on_example(coverage)),
    )
    settings = hypothesis_settings(options.profile, options.database, options.max_examples, options.step_count)
    started = time.monotonic()
    result = GroupResult(group, PASSED, coverage)
    replayed_differently = False
    budget = ShrinkBudget(options.profile.shrink_seconds)
    try:
        # Hypothesis accepts any zero-argument factory here (see its docstring), not only a class.
        with shrink_budget(budget), fresh_examples():
            run_state_machine_as_test(machine_factory(group, context, _examples_seed(options)), settings=settings)  # type: ignore[arg-type]
    except Disagreement as failure:
        _failed(result, [failure], hello, options, port=port, budget=budget)
    except FlakyFailure as flaky:
        replayed_differently = True
        if not _failed(result, _disagreements(flaky), hello, options, flaky=True, budget=budget):
            result.status, result.detail = ERROR, _describe(flaky)
    except BaseExceptionGroup as several:  # report_multiple_bugs: one exception per kind of failure
        others = [e for e in several.exceptions if not isinstance(e, Disagreement)]
        if others:
            result.status, result.detail = ERROR, _describe(others[0])
        else:
            _failed(result, _disagreements(several), hello, options, port=port, budget=budget)
    except (Unsatisfiable, InvalidDefinition) as error:
        if isinstance(error, InvalidDefinition) and "No progress can be made" not in str(error):
            result.status, result.detail = ERROR, _describe(error)
        else:
            result.status, result.detail = VOID, f"no rule could run: {error}"
    except Flaky as error:  # a replay took another path (FlakyFailure, a failure that vanished, is handled above)
        replayed_differently = True
        seen = context.first_disagreement
        # A port whose answers depend on timing (a driver killed mid-write) fails in one run and takes
        # another path on replay: the disagreement it showed is still a failure, reported unreplayed.
        if seen is None or not _failed(result, [seen], hello, options, flaky=True, budget=budget):
            result.status, result.detail = ERROR, f"an example took another path when Hypothesis replayed it: {_describe(error)}"
    except Exception as error:  # a bug in the suite or the port's client must not hide the other groups
        result.status, result.detail = ERROR, _describe(error)
    result.seconds = time.monotonic() - started
    if context.first_disagreement_at is not None:
        result.found_after = context.first_disagreement_at - started
    if result.status == PASSED and coverage.steps == 0:
        result.status, result.detail = VOID, "no rule passed its preconditions: nothing was checked"
    conflict = context.answers.conflict
    if conflict is not None:
        # A replay that takes another path explains any flaky, inconsistent or void outcome: say so first.
        also = "" if replayed_differently or not result.detail else f"; besides: {result.detail}"
        result.status, result.detail = ERROR, conflict.describe() + also
    return result


def _examples_seed(options: RunOptions) -> int | None:
    return options.seed if options.examples_seed is None else options.examples_seed


def machine_factory(group: str, context: MachineContext, seed: int | None) -> Callable[[], Any]:
    """What Hypothesis calls to start each example, keyed in the example database by group."""

    def machine() -> Any:
        return MACHINES[group](context)

    # What a machine draws once, outside the test (Hypothesis cannot run a test inside another).
    getattr(MACHINES[group], "prepare", lambda: None)()

    # Hypothesis keys its database by this digest and derandomises from this seed (see @seed).
    machine._hypothesis_internal_add_digest = f"sessionlog-conformance:{group}".encode()  # type: ignore[attr-defined]
    if seed is not None:
        machine._hypothesis_internal_use_seed = seed  # type: ignore[attr-defined]
    return machine


def _disagreements(group: BaseExceptionGroup[Any]) -> list[Disagreement]:
    found: list[Disagreement] = []
    for error in group.exceptions:
        if isinstance(error, Disagreement):
            found.append(error)
        elif isinstance(error, BaseExceptionGroup):
            found += _disagreements(error)
    return found


def _failed(
    result: GroupResult,
    found: list[Disagreement],
    hello: Hello,
    options: RunOptions,
    *,
    flaky: bool = False,
    port: Port | None = None,
    budget: ShrinkBudget | None = None,
) -> bool:
    """Record the disagreements as failures with their counterexample files; false when there are none.

    With ``port``, each transcript first goes through :func:`minimise` (a flaky one cannot be replayed).
    A ``budget`` that ran out is said on every counterexample.
    """
    if port is not None:
        found = [_minimised(d, port, hello, options) for d in found]
    for disagreement in found:
        steps = [str(note) for note in getattr(disagreement, "__notes__", [])]
        shrink_note = budget.note() if budget is not None and budget.exhausted else ""
        if shrink_note:
            steps.append(shrink_note)
        path = write_case(
            options.cases_dir, disagreement, hello, strict_codes=options.strict_codes, steps_shown=steps, seed=options.seed
        )
        result.failures.append(Failure(disagreement, path, steps, flaky, shrink_note))
    if not result.failures:
        return False
    result.status = FAILED
    result.detail = "; ".join(str(f.disagreement) for f in result.failures)
    if flaky:
        result.detail = f"flaky (the port did not fail the same way when the example was replayed): {result.detail}"
    return True


def _minimised(disagreement: Disagreement, port: Port, hello: Hello, options: RunOptions) -> Disagreement:
    """``disagreement`` with its transcript cut to what the failure needs (the same kind, on the same op)."""
    transcript, mismatch = minimise(
        disagreement.transcript,
        disagreement.mismatch,
        port,
        strict_codes=options.strict_codes,
        header_observed="header" in hello.capabilities,
        seconds=options.profile.shrink_seconds / 2,
    )
    if transcript is disagreement.transcript:
        return disagreement
    shorter = type(disagreement)(
        disagreement.group,
        mismatch,
        transcript,
        rule=disagreement.rule,
        invariants=disagreement.invariants,
        codes=disagreement.codes,
    )
    shorter.__notes__ = [
        *getattr(disagreement, "__notes__", []),
        f"(the replayed transcript was cut from {len(disagreement.transcript)} to {len(transcript)} requests)",
    ]
    return shorter


def _describe(error: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(error), error)).strip()


GroupsRunner = Callable[[Hello, RunOptions], list[GroupResult]]
"""Runs every selected group and returns their results in report order (:func:`run`'s own runs them
one after another against its port; :mod:`sessionlog_spec.suite.parallel` spreads them over processes)."""


def run(
    port: Port,
    options: RunOptions,
    on_group: Callable[[str], None] | None = None,
    on_example: Callable[[GroupCoverage], None] | None = None,
    groups_runner: GroupsRunner | None = None,
) -> RunResult:
    """Run every selected group against ``port`` (through ``groups_runner`` when one is given)."""
    started = time.monotonic()
    hello = port.hello
    results: list[GroupResult] = []
    # A deep run of every group is judged on the reach census: it is computed on another core
    # while the groups run, and what generation left unreached is then swept (cell_sweep).
    sweeping = options.profile.require_full_coverage and not options.only
    executor, census = census_in_background() if sweeping else (None, None)
    try:
        if groups_runner is not None:
            results = groups_runner(hello, options)
        for group in options.groups() if groups_runner is None else ():
            if on_group is not None:
                on_group(group)
            results.append(run_group(group, port, hello, options, on_example))
            if options.fail_fast and results[-1].status == FAILED:
                break
        reachable = None
        if census is not None:
            try:
                witnesses = census.result()
            except Exception:  # no second process here (a sandbox without semaphores): take it in this one
                witnesses = census_witnesses()
            reachable = frozenset(witnesses)
            _sweep(results, witnesses, port, hello, options)
    finally:
        if executor is not None:
            # Not waiting: a run stopped early must not sit out the census.
            executor.shutdown(wait=False, cancel_futures=True)
    return RunResult(hello, options, results, time.monotonic() - started, reachable)


def _sweep(results: list[GroupResult], witnesses: Mapping[str, Witness], port: Port, hello: Hello, options: RunOptions) -> None:
    """Send the census's submission for every reachable cell no group reached, through the group
    that owns its path (when that group ran and passed), counted and judged as that group's."""
    unreached = set(witnesses).difference(*(r.coverage.cells for r in results))
    for result in results:
        if result.status != PASSED or result.group not in SWEEPING_GROUP.values():
            continue
        context = MachineContext(
            result.group, port, frozenset(hello.capabilities), strict_codes=options.strict_codes, coverage=result.coverage
        )
        started = time.monotonic()
        try:
            sweep_cells(context, witnesses, unreached)
            sweep_pairs(context)  # every buildable check-order pair (the session group's alone)
        except Disagreement as failure:
            _failed(result, [failure], hello, options, port=port)
        except Exception as error:  # a bug in the suite or the port's client: the group errs, as in run_group
            result.status, result.detail = ERROR, _describe(error)
        result.seconds += time.monotonic() - started
