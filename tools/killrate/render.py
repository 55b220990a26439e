"""The kill table of a run report as Markdown (pasted into ``docs/strength.md``)."""

from __future__ import annotations

from typing import Any

MARK = {"killed": "killed", "survived": "**SURVIVED**", "sometimes": "*sometimes*", "error": "**error**", "passed": "passed"}


def _row(outcome: dict[str, Any]) -> str:
    groups = ", ".join(outcome["failed_groups"]) or ", ".join(outcome["groups_run"])
    failure = f"`{outcome['failure']}`" if outcome["failure"] else ""
    # The case file lives under the run's work directory; its last two parts name it (mutant dir / case).
    case = f"`{'/'.join(outcome['counterexample'].split('/')[-2:])}`" if outcome["counterexample"] else ""
    runs = outcome.get("runs", 1)
    result = MARK.get(outcome["status"], outcome["status"])
    if runs > 1:
        result += f" ({runs} runs)" if outcome["invariant"] is None else f" ({outcome.get('kills', 0)}/{runs})"
    return (
        f"| `{outcome['name']}` | {outcome.get('half', '')} | {outcome['invariant'] or ''} | {result} "
        f"| {groups} | {failure} | {outcome['seconds']:.0f} s | {case} |"
    )


def _rate(counts: dict[str, Any]) -> str:
    return "n/a" if counts["kill_rate"] is None else f"{100 * counts['kill_rate']:.1f} %"


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f} s"


def _medians(counts: dict[str, Any]) -> str:
    """The median time to kill per run, and to the first disagreement (before shrinking)."""
    return (
        f"median time to kill {_seconds(counts['median_kill_seconds'])} per run "
        f"(to the first disagreement: {_seconds(counts.get('median_find_seconds'))})"
    )


def _halves(totals: dict[str, Any]) -> list[str]:
    """One line per half of the catalogue: its own kill rate and median time to kill."""
    lines = []
    for half, counts in totals.get("halves", {}).items():
        if counts["mutants"]:
            lines.append(
                f"- {half} half: {counts['killed']}/{counts['mutants']} killed ({_rate(counts)}), "
                f"{counts['survived']} survived, {counts['sometimes']} sometimes; {_medians(counts)}."
            )
    return ["", *lines] if lines else []


def markdown(document: dict[str, Any]) -> str:
    """The sanity checks, the kill table and the totals of a ``killrate-report/1`` document."""
    totals = document["totals"]
    rate = "n/a" if totals["kill_rate"] is None else f"{100 * totals['kill_rate']:.1f} %"
    lines = [
        f"Verdict: **{document['verdict']}** (profile `{document['profile']}`, seed {document['seed']}, "
        f"codes compared {document.get('strict_codes', False)}, "
        f"groups: {document['groups']}, {document['seconds'] / 60:.1f} min wall time).",
        "",
        *(f"- void: {reason}" for reason in document["void_reasons"]),
        "| driver | half | invariant | result | group | first disagreement | time | counterexample |",
        "|---|---|---|---|---|---|---|---|",
        _row(document["baseline"]),
        _row(document["canary"]),
        *(_row(m) for m in document["mutants"]),
        "",
        f"Totals: {totals['mutants']} mutants, {totals['killed']} killed, {totals.get('sometimes', 0)} sometimes killed, "
        f"{totals['survived']} survived, {totals['errors']} errors; kill rate {rate}"
        + (
            f" (per run: {100 * totals['kill_rate_per_run']:.1f} % over {totals['runs_per_mutant']} runs each)"
            if totals.get("runs_per_mutant", 1) > 1 and totals.get("kill_rate_per_run") is not None
            else ""
        )
        + f"; {_medians(totals)}; {totals['mutant_seconds'] / 60:.1f} min spent on mutants.",
        *_halves(totals),
    ]
    return "\n".join(lines) + "\n"
