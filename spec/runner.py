"""Running the conformance machines against one port: a result per capability group.

One port serves the whole run (each example starts with ``reset``); groups run one after another.
A group the port did not declare is *unsupported*; a group whose machine ran no step is *void*; a
disagreement is *failed*, with the shrunk transcript written as a counterexample file; anything
else that stops a group (a bug in the suite, a flaky port) is an *error*.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis.database import ExampleDatabase
from hypothesis.errors import FlakyFailure, InvalidDefinition, Unsatisfiable
from hypothesis.stateful import run_state_machine_as_test

from spec.cases import write_case
from spec.coverage import GroupCoverage
from spec.machines import MACHINES, REQUIRES, Disagreement, MachineContext
from spec.port import GROUPS, Hello, Port
from spec.profiles import Profile, hypothesis_settings, shrink_budget

PASSED, FAILED, UNSUPPORTED, VOID, ERROR = "passed", "failed", "unsupported", "void", "error"


@dataclass(frozen=True)
class RunOptions:
    """How one run searches and judges."""

    profile: Profile
    strict_codes: bool = False
    only: tuple[str, ...] = ()
    seed: int | None = None
    database: ExampleDatabase | None = None
    cases_dir: Path = Path("reports/cases")
    max_examples: int | None = None
    """Overrides the profile's examples per group (the suite's own tests use small numbers)."""
    step_count: int | None = None

    def groups(self) -> tuple[str, ...]:
        """The groups this run covers, in report order."""
        return tuple(g for g in GROUPS if not self.only or g in self.only)


@dataclass
class GroupResult:
    """What happened to one group."""

    group: str
    status: str
    coverage: GroupCoverage
    seconds: float = 0.0
    detail: str = ""
    failure: Disagreement | None = None
    case_file: Path | None = None
    steps_shown: list[str] = field(default_factory=list)
    """Hypothesis's rendering of the minimal failing example."""

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

    @property
    def void(self) -> bool:
        """No group ran a step: the run checked nothing."""
        return not any(r.status in (PASSED, FAILED) for r in self.groups)


def unsupported_reason(group: str, capabilities: Iterable[str]) -> str | None:
    """Why ``group`` cannot run against a port declaring ``capabilities``, or ``None``."""
    declared = set(capabilities)
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
    try:
        # Hypothesis accepts any zero-argument factory here (see its docstring), not only a class.
        with shrink_budget(options.profile.shrink_seconds):
            run_state_machine_as_test(machine_factory(group, context, options.seed), settings=settings)  # type: ignore[arg-type]
    except Disagreement as failure:
        _failed(result, failure, hello, options)
    except FlakyFailure as flaky:
        found = [e for e in flaky.exceptions if isinstance(e, Disagreement)]
        if found:
            _failed(result, found[0], hello, options)
            result.detail = "flaky: the port did not fail the same way when the example was replayed"
        else:
            result.status, result.detail = ERROR, _describe(flaky)
    except (Unsatisfiable, InvalidDefinition) as error:
        if isinstance(error, InvalidDefinition) and "No progress can be made" not in str(error):
            result.status, result.detail = ERROR, _describe(error)
        else:
            result.status, result.detail = VOID, f"no rule could run: {error}"
    except Exception as error:  # a bug in the suite or the port's client must not hide the other groups
        result.status, result.detail = ERROR, _describe(error)
    result.seconds = time.monotonic() - started
    if result.status == PASSED and coverage.steps == 0:
        result.status, result.detail = VOID, "no rule passed its preconditions: nothing was checked"
    return result


def machine_factory(group: str, context: MachineContext, seed: int | None) -> Callable[[], Any]:
    """What Hypothesis calls to start each example, keyed in the example database by group."""

    def machine() -> Any:
        return MACHINES[group](context)

    # Hypothesis keys its database by this digest and derandomises from this seed (see @seed).
    machine._hypothesis_internal_add_digest = f"sessionlog-conformance:{group}".encode()  # type: ignore[attr-defined]
    if seed is not None:
        machine._hypothesis_internal_use_seed = seed  # type: ignore[attr-defined]
    return machine


def _failed(result: GroupResult, failure: Disagreement, hello: Hello, options: RunOptions) -> None:
    result.status, result.failure, result.detail = FAILED, failure, str(failure)
    result.steps_shown = [str(note) for note in getattr(failure, "__notes__", [])]
    result.case_file = write_case(
        options.cases_dir, failure, hello, strict_codes=options.strict_codes, steps_shown=result.steps_shown, seed=options.seed
    )


def _describe(error: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(error), error)).strip()


def run(
    port: Port,
    options: RunOptions,
    on_group: Callable[[str], None] | None = None,
    on_example: Callable[[GroupCoverage], None] | None = None,
) -> RunResult:
    """Run every selected group against ``port``."""
    started = time.monotonic()
    hello = port.hello
    results: list[GroupResult] = []
    for group in options.groups():
        if on_group is not None:
            on_group(group)
        results.append(run_group(group, port, hello, options, on_example))
    return RunResult(hello, options, results, time.monotonic() - started)
