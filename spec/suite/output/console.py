"""What a person sees of a run: live progress while it runs, then the result matrix."""

from __future__ import annotations

import threading
import time
from types import TracebackType

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from sessionlog_spec.protocol.messages import Hello
from sessionlog_spec.suite.coverage import GroupCoverage, merged, reached_cells
from sessionlog_spec.suite.expectations import Judgement
from sessionlog_spec.suite.output.replay import replay_command
from sessionlog_spec.suite.rule_space import declared_reach
from sessionlog_spec.suite.run import FAILED, PASSED, UNSUPPORTED, VOID, RunOptions, RunResult, unsupported_reason
from sessionlog_spec.suite.verdict import Verdict

HEARTBEAT_SECONDS = 60.0
"""How often ``--quiet`` says the run is alive."""

STYLES = {PASSED: "green", FAILED: "red", UNSUPPORTED: "dim", VOID: "yellow", "expected": "magenta"}


def banner(hello: Hello, options: RunOptions) -> str:
    """The line that opens a run: the port, and what the run checks of it (under ``--only``, those groups alone,
    each with the reason it cannot run when the port cannot run it)."""
    port = f"checking {hello.name} {hello.version}"
    if not options.only:
        return f"{port} ({', '.join(hello.capabilities) or 'no capabilities'})"
    groups = []
    for group in options.groups():
        reason = unsupported_reason(group, hello.capabilities)
        groups.append(group if reason is None else f"{group}: {reason}")
    return f"{port}: --only {', '.join(groups)}"


class RunProgress:
    """One progress bar per group, advanced after every example (of any group: under ``--jobs`` groups run side by side)."""

    def __init__(self, console: Console, examples: int) -> None:
        self.examples = examples
        self.progress = Progress(
            TextColumn("{task.description:<11}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[steps]} steps"),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self.tasks: dict[str, TaskID] = {}

    def __enter__(self) -> RunProgress:
        self.progress.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.progress.stop()

    def group_started(self, group: str) -> None:
        """A new bar for ``group``."""
        self.tasks[group] = self.progress.add_task(group, total=self.examples, steps=0)

    def example(self, coverage: GroupCoverage) -> None:
        """One more example of ``coverage``'s group (shrinking may run past the profile's count)."""
        task = self.tasks.get(coverage.group)
        if task is not None:
            self.progress.update(task, completed=min(coverage.examples, self.examples), steps=coverage.steps)


class Heartbeat:
    """What ``--quiet`` prints instead of progress bars: nothing while a run is short, then one line a
    minute naming the group that runs, its examples and steps.

    CI systems stop jobs that print nothing for a while; a long run stays quiet but alive.  The line
    comes from a timer thread, so a group that spends minutes in one example (shrinking) still shows.
    """

    def __init__(self, console: Console, interval: float = HEARTBEAT_SECONDS) -> None:
        self.console = console
        self.interval = interval
        self.started = time.monotonic()
        self.group = ""
        self.examples = self.steps = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._beat, name="sessionlog-heartbeat", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()

    def group_started(self, group: str) -> None:
        """Note which group runs now (the next beat names it)."""
        with self._lock:
            self.group, self.examples, self.steps = group, 0, 0

    def example(self, coverage: GroupCoverage) -> None:
        """Count one more example of ``coverage``'s group (the group that runs now, unless groups run side by side)."""
        with self._lock:
            self.group, self.examples, self.steps = coverage.group, coverage.examples, coverage.steps

    def _beat(self) -> None:
        while not self._stop.wait(self.interval):
            with self._lock:
                line = f"[{self._elapsed()}] {self.group or 'starting'}: {self.examples} examples, {self.steps} steps"
            self.console.print(line, markup=False, highlight=False)

    def _elapsed(self) -> str:
        seconds = int(time.monotonic() - self.started)
        return f"{seconds // 60:d}:{seconds % 60:02d}"


def matrix(run: RunResult, judgement: Judgement) -> Table:
    """The group × outcome matrix."""
    table = Table(title=f"sessionlog conformance: {run.hello.name} {run.hello.version} ({run.options.profile.name} profile)")
    for column in ("group", "result", "examples", "steps", "ex/s", "steps/s", "time", "invariants", "codes", "cells", "detail"):
        table.add_column(column, justify="right" if column not in ("group", "result", "detail") else "left")
    for r in run.groups:
        status = "expected" if judgement.excused(r) else r.status
        label = "failed (expected)" if status == "expected" else r.status
        detail = str(r.case_file) if r.case_file else r.detail
        table.add_row(
            r.group,
            f"[{STYLES.get(status, 'white')}]{label}[/]",
            str(r.coverage.examples),
            str(r.coverage.steps),
            f"{r.examples_per_second:.1f}",
            f"{r.steps_per_second:.0f}",
            f"{r.seconds:.1f}s",
            str(len(r.coverage.invariants)),
            str(len(r.coverage.codes)),
            str(len(r.coverage.cells)),
            detail,
        )
    invariants, codes = merged(r.coverage for r in run.groups)
    table.add_row(
        "all",
        "",
        str(sum(r.coverage.examples for r in run.groups)),
        str(sum(r.coverage.steps for r in run.groups)),
        "",
        "",
        f"{run.seconds:.1f}s",
        str(len(invariants)),
        str(len(codes)),
        str(len(reached_cells(r.coverage for r in run.groups))),
        "",
        style="bold",
    )
    return table


ANY_CODE_NOTE = "refusal codes were not compared (--any-code): a refusal for another reason than the model's counted as agreeing"


def show(console: Console, run: RunResult, judgement: Judgement, verdict: Verdict, port_options: str) -> None:
    """Print the matrix, the failures (each with the replay command to paste) and the verdict.

    ``port_options`` are the options that name the checked port again (:func:`port_arguments`).
    """
    console.print(matrix(run, judgement))
    for r in run.groups:
        for failure in r.failures:
            entry = judgement.entry_for(failure)
            heading = f"[bold]{r.group}[/]: {escape(failure.disagreement.mismatch.message)}"
            console.print(heading + (f" [magenta](expected: {escape(entry.reason)})[/]" if entry else ""))
            invariants = ", ".join(failure.disagreement.invariants) or "-"
            console.print(f"  invariants: {invariants}; case file: {failure.case_file}", markup=False)
            console.print(f"  replay: {replay_command(failure.case_file, port_options)}", markup=False, soft_wrap=True)
            if failure.shrink_note:
                console.print(f"  {failure.shrink_note}", markup=False, soft_wrap=True)
    never = [*verdict.never_invariants, *verdict.never_codes]
    complete = not run.options.only and all(r.status in (PASSED, FAILED) for r in run.groups)
    if never and complete:
        note = "" if verdict.coverage_judged else " (not judged by this profile)"
        console.print(f"never exercised{note}: {', '.join(never)}", markup=False, soft_wrap=True)
    elif never:
        console.print(f"not exercised by the groups that ran: {', '.join(never)}", markup=False, soft_wrap=True)
    if verdict.coverage_judged:
        reached = verdict.reachable_cells - len(verdict.never_cells)
        console.print(f"reachable cells reached: {reached} of {verdict.reachable_cells}", markup=False)
    declared = declared_reach(reached_cells(r.coverage for r in run.groups))
    console.print(
        f"declared rule space reached: {declared.reached} of {declared.cells} cells ({declared.fraction:.1%})",
        markup=False,
    )
    if not run.options.strict_codes:
        console.print(ANY_CODE_NOTE, markup=False)
    if verdict.passed:
        console.print("[bold green]PASSED[/]")
    else:
        console.print("[bold red]" + ("VOID" if run.void else "FAILED") + "[/]")
        for reason in verdict.reasons:
            console.print(f"  - {reason}", markup=False)
