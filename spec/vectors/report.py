"""The report of a vectors run: a pass/fail table per file, then the failures."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from sessionlog_spec.protocol.messages import Hello
from sessionlog_spec.vectors.format import TITLES
from sessionlog_spec.vectors.run import FAILED, PASSED, UNSUPPORTED, CaseResult, counts

FAILURES_SHOWN = 25


def render(console: Console, hello: Hello, results: Sequence[CaseResult], seconds: float, strict_codes: bool) -> None:
    """Print the table and the first failures."""
    mode = "strict codes" if strict_codes else "refusal only"
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
    if len(failures) > FAILURES_SHOWN:
        console.print(f"… and {len(failures) - FAILURES_SHOWN} more failures")
