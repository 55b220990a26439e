"""A run spread over job processes (``check --jobs N``): groups, and batches of one group's examples.

Each job process starts its own port once (a driver is one process per job; ``--port python`` is
built in each) and its own example database, then runs *batches*: one group's machine with a share
of the group's examples and a seed of its own.  With more than one job every group is cut into
``jobs`` batches whose example budgets sum to the group's, so a long group, or one group alone under
``--only``, keeps every core busy; a process takes the next batch as soon as it is free.  Under
``--seed`` each batch's seed is derived from the run's seed, the group, the batch and the number of
batches: the same seed and the same number of jobs draw the same examples (one job is the serial run).

The batches of a group are merged into one :class:`~sessionlog_spec.suite.run.GroupResult`, in
report order, so the console, the reports and the verdict read it as a serial run's: every counter
summed (an invariant, a code or a cell any batch reached is reached), the seconds summed (the
examples per second stay per core), every failure kept once per ``group/op/kind`` in batch order,
and the worst status (an error, then a failure; void only when every batch was void).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import multiprocessing
import queue
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from multiprocessing import util
from typing import Any

from hypothesis.database import ExampleDatabase

from sessionlog_spec.protocol.messages import Hello, Port, PortFault
from sessionlog_spec.suite.coverage import GroupCoverage
from sessionlog_spec.suite.profiles import keep_hypothesis_files_in_the_cache
from sessionlog_spec.suite.run import (
    ERROR,
    FAILED,
    PASSED,
    UNSUPPORTED,
    VOID,
    GroupResult,
    GroupsRunner,
    RunOptions,
    run_group,
    unsupported_reason,
)

POLL_SECONDS = 0.25
"""How often the parent passes the job processes' progress on while it waits for batches."""


@dataclass(frozen=True, slots=True)
class Batch:
    """One share of a group's examples, run in one job process."""

    group: str
    index: int
    of: int
    """How many batches the group is cut into."""
    examples: int
    seed: int | None
    """The seed of this batch's examples (the run's own when the group is not cut; none when the run has none)."""


def batch_seed(seed: int | None, group: str, index: int, of: int) -> int | None:
    """The seed of batch ``index`` of ``of`` of ``group`` in a run seeded with ``seed`` (``seed`` itself when ``of`` is 1)."""
    if seed is None or of == 1:
        return seed
    digest = hashlib.sha256(f"sessionlog-jobs:{seed}:{group}:{index}:{of}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def plan_batches(groups: Sequence[str], jobs: int, examples: int, seed: int | None) -> list[Batch]:
    """Every group cut into ``jobs`` batches (at most one per example) whose budgets sum to ``examples``."""
    of = max(1, min(jobs, examples))
    shares = [examples // of + (1 if index < examples % of else 0) for index in range(of)]
    return [Batch(g, i, of, share, batch_seed(seed, g, i, of)) for g in groups for i, share in enumerate(shares)]


@dataclass
class _Job:
    """What one job process holds between batches: its port (or why it could not start) and its database."""

    port: Port | None = None
    problem: str = ""
    database: ExampleDatabase | None = None
    events: Any = None
    """The queue the job's progress goes to (one ``(group, batch, examples, steps)`` per example)."""


_JOB = _Job()


def _start_job(
    open_port: Callable[[], Port], database: Callable[[], ExampleDatabase] | None, events: Any
) -> None:
    """Start the job process's port once; it is closed when the process exits."""
    keep_hypothesis_files_in_the_cache()
    _JOB.events = events
    _JOB.database = None if database is None else database()
    try:
        port = open_port()
    except Exception as error:  # reported as every batch's error, as a port that cannot start in a serial run is
        _JOB.problem = str(error)
        return
    _JOB.port = port
    util.Finalize(None, _close, args=(port,), exitpriority=10)


def _close(port: Port) -> None:
    with contextlib.suppress(PortFault):
        port.close()


def _run_batch(batch: Batch, options: RunOptions) -> GroupResult:
    """Run ``batch`` against the job process's port."""
    port = _JOB.port
    if port is None:
        detail = f"a job process could not start the port: {_JOB.problem}"
        return GroupResult(batch.group, ERROR, GroupCoverage(batch.group), detail=detail)
    options = dataclasses.replace(options, database=_JOB.database, max_examples=batch.examples, examples_seed=batch.seed)

    def progress(coverage: GroupCoverage) -> None:
        _JOB.events.put((batch.group, batch.index, coverage.examples, coverage.steps))

    return run_group(batch.group, port, port.hello, options, progress)


def merge(group: str, results: Sequence[GroupResult]) -> GroupResult:
    """One group's result from the results of its batches (see the module's docstring)."""
    coverage = GroupCoverage(group)
    for part in results:
        _add(coverage, part.coverage)
    statuses = {r.status for r in results}
    status = next((s for s in (ERROR, FAILED, PASSED) if s in statuses), VOID)
    details = dict.fromkeys(r.detail for r in results if r.status == status and r.detail)
    merged = GroupResult(group, status, coverage, seconds=sum(r.seconds for r in results), detail="; ".join(details))
    found = [r.found_after for r in results if r.found_after is not None]
    merged.found_after = min(found) if found else None
    seen: set[str] = set()
    for failure in (f for r in results for f in r.failures):
        if failure.case_id not in seen:
            seen.add(failure.case_id)
            merged.failures.append(failure)
    return merged


def _add(total: GroupCoverage, part: GroupCoverage) -> None:
    total.examples += part.examples
    total.steps += part.steps
    total.requests += part.requests
    total.crash_trials += part.crash_trials
    total.durable_lost += part.durable_lost
    for counter, more in (
        (total.rules, part.rules),
        (total.invariants, part.invariants),
        (total.codes, part.codes),
        (total.cells, part.cells),
    ):
        counter.update(more)


def jobs_runner(
    jobs: int,
    open_port: Callable[[], Port],
    database: Callable[[], ExampleDatabase] | None,
    on_group: Callable[[str], None] | None = None,
    on_example: Callable[[GroupCoverage], None] | None = None,
) -> GroupsRunner:
    """The groups of a run spread over ``jobs`` processes, each starting its port with ``open_port`` and
    its example database with ``database`` (none under ``--seed``); both must pickle (module-level
    functions, or ``functools.partial`` of them)."""

    def run_groups(hello: Hello, options: RunOptions) -> list[GroupResult]:
        return run_in_jobs(
            hello, options, jobs, open_port=open_port, database=database, on_group=on_group, on_example=on_example
        )

    return run_groups


def run_in_jobs(
    hello: Hello,
    options: RunOptions,
    jobs: int,
    *,
    open_port: Callable[[], Port],
    database: Callable[[], ExampleDatabase] | None,
    on_group: Callable[[str], None] | None = None,
    on_example: Callable[[GroupCoverage], None] | None = None,
) -> list[GroupResult]:
    """Every selected group's result, in report order, its batches run in ``jobs`` processes."""
    unsupported = {g: reason for g in options.groups() if (reason := unsupported_reason(g, hello.capabilities)) is not None}
    runnable = [g for g in options.groups() if g not in unsupported]
    batches = plan_batches(runnable, jobs, options.max_examples or options.profile.max_examples, options.seed)
    results = _run_batches(
        batches,
        dataclasses.replace(options, database=None),
        jobs,
        open_port=open_port,
        database=database,
        on_group=on_group,
        on_example=on_example,
    )
    merged = []
    for group in options.groups():
        if group in unsupported:
            merged.append(GroupResult(group, UNSUPPORTED, GroupCoverage(group), detail=unsupported[group]))
        else:
            merged.append(merge(group, [results[b] for b in batches if b.group == group]))
    return merged


def _run_batches(
    batches: list[Batch],
    options: RunOptions,
    jobs: int,
    *,
    open_port: Callable[[], Port],
    database: Callable[[], ExampleDatabase] | None,
    on_group: Callable[[str], None] | None,
    on_example: Callable[[GroupCoverage], None] | None,
) -> dict[Batch, GroupResult]:
    if not batches:
        return {}
    # Spawned, not forked: the parent holds threads (progress, heartbeat, a driver's readers) and pipes.
    context = multiprocessing.get_context("spawn")
    events = context.Queue()
    progress: dict[str, dict[int, tuple[int, int]]] = {}
    for group in dict.fromkeys(b.group for b in batches):
        progress[group] = {}
        if on_group is not None:
            on_group(group)
    results: dict[Batch, GroupResult] = {}
    pool = ProcessPoolExecutor(
        max_workers=min(jobs, len(batches)), mp_context=context, initializer=_start_job, initargs=(open_port, database, events)
    )
    try:
        futures: dict[Future[GroupResult], Batch] = {pool.submit(_run_batch, b, options): b for b in batches}
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
            _pass_progress(events, progress, on_example)
            for future in done:
                results[futures[future]] = _result(futures[future], future)
        _pass_progress(events, progress, on_example)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        events.close()
    return results


def _result(batch: Batch, future: Future[GroupResult]) -> GroupResult:
    """A batch's result, or an error naming what stopped its job process (killed, or a result that did not pickle)."""
    try:
        return future.result()
    except Exception as error:
        detail = f"the job process running batch {batch.index + 1} of {batch.of} failed: {type(error).__name__}: {error}"
        return GroupResult(batch.group, ERROR, GroupCoverage(batch.group), detail=detail)


def _pass_progress(
    events: Any, progress: dict[str, dict[int, tuple[int, int]]], on_example: Callable[[GroupCoverage], None] | None
) -> None:
    """Hand every example the jobs reported to ``on_example`` as its group's running totals."""
    changed: set[str] = set()
    while True:
        try:
            group, index, examples, steps = events.get_nowait()
        except queue.Empty:
            break
        progress[group][index] = (examples, steps)
        changed.add(group)
    if on_example is None:
        return
    for group in changed:
        totals = GroupCoverage(group)
        totals.examples = sum(e for e, _ in progress[group].values())
        totals.steps = sum(s for _, s in progress[group].values())
        on_example(totals)
