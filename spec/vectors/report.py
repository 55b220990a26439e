"""The report of a vectors run: a pass/fail table per file, then the failures.

Each failure shown carries the case's input (every request, as stored), the model's and the port's
verdicts on the request the port got wrong, and the command that re-runs just that case.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from sessionlog_spec.protocol.messages import Hello
from sessionlog_spec.vectors.format import TITLES, Case, dumps_value
from sessionlog_spec.vectors.run import FAILED, PASSED, UNSUPPORTED, CaseResult, counts

FAILURES_SHOWN = 25


def render(
    console: Console,
    hello: Hello,
    results: Sequence[CaseResult],
    seconds: float,
    strict_codes: bool,
    *,
    cases: dict[str, Case] | None = None,
    rerun: Callable[[str], str] | None = None,
) -> None:
    """Print the table and the first failures; ``cases`` (by id) gives their input, ``rerun`` the command for one id."""
    mode = "codes compared" if strict_codes else "any refusal code accepted: --any-code"
    console.print(f"[bold]vectors[/bold] against {hello.name} {hello.version} ({mode}), {len(results)} cases in {seconds:.1f} s")
    table = Table("file", "title", "passed", "failed", "unsupported", "seconds")
    time_by_file: dict[str, float] = {}
    for r in results:
        time_by_file[r.file] = time_by_file.get(r.file, 0.0) + r.seconds
    for stem, row in counts(results).items():
        status = "red" if row[FAILED] else ("yellow" if row[UNSUPPORTED] and not row[PASSED] else "green")
        table.add_row(
            f"[{status}]{stem}[/{status}]", TITLES.get(stem, ""), str(row[PASSED]), str(row[FAILED]),
            str(row[UNSUPPORTED]), f"{time_by_file[stem]:.2f}",
        )
    console.print(table)
    failures = [r for r in results if r.status == FAILED]
    for r in failures[:FAILURES_SHOWN]:
        console.print(f"[red]FAIL[/red] {escape(r.id)}: {escape(r.detail)}", highlight=False)
        case = None if cases is None else cases.get(r.id)
        console.print("\n".join(failure_lines(r, case, rerun)), markup=False, highlight=False, soft_wrap=True)
    if len(failures) > FAILURES_SHOWN:
        console.print(f"… and {len(failures) - FAILURES_SHOWN} more failures")


def failure_lines(result: CaseResult, case: Case | None, rerun: Callable[[str], str] | None) -> list[str]:
    """A failed case below its FAIL line: its input, both verdicts, and how to re-run it alone."""
    lines: list[str] = []
    if case is not None:
        steps = case["input"]
        lines.append(f"  input ({len(steps)} request{'s' if len(steps) != 1 else ''}):")
        for index, step in enumerate(steps):
            marker = ">" if index == result.step else " "
            lines.append(f"  {marker} {index}: {dumps_value(step)}")
    where = "the reset before the input" if result.step is None else f"request {result.step}"
    if result.expected:
        lines.append(f"  expected at {where}: {_indented(result.expected)}")
    if result.actual:
        lines.append(f"  actual at {where}: {_indented(result.actual)}")
    if rerun is not None:
        lines.append(f"  re-run: {rerun(result.id)}")
    return lines


def _indented(text: str) -> str:
    return text.replace("\n", "\n    ")
