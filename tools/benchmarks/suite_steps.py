"""Steps per second of the conformance suite, per group: wall-clock and the suite process's CPU time.

Runs ``check`` the way the command does (same profile, seed and groups) in this process, and notes
the wall-clock time (``time.perf_counter``) and this process's CPU time (``time.process_time``) at
every group's start, so that background load on a shared machine, which stretches the wall-clock
figures, leaves the CPU figures alone.  Against a subprocess driver the CPU column is the suite's
side only (the oracle, the machines, the protocol); the driver's own CPU time is counted in the
``driver_cpu`` column from ``/proc`` where there is one.  Run from the repository root::

    .venv/bin/python tools/benchmarks/suite_steps.py --port python --profile ci --seed 1 --json OUT.json
    .venv/bin/python tools/benchmarks/suite_steps.py --port ".venv/bin/python -m seqlog.driver" --profile ci --seed 1

The report's own per-group ``seconds`` are the wall-clock column.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from sessionlog_spec.suite.commands import opened
from sessionlog_spec.suite.profiles import PROFILES, keep_hypothesis_files_in_the_cache
from sessionlog_spec.suite.run import RunOptions, run


@dataclass
class GroupTiming:
    """One group's run: what it did and how long it took."""

    group: str
    status: str
    examples: int
    steps: int
    requests: int
    wall: float
    cpu: float
    driver_cpu: float | None
    failures: int
    """Disagreements the group reported (the verdict: 0 for a port that passes)."""
    invariants: list[str]
    """The invariants the group's steps exercised."""
    codes: list[str]
    """The violation codes its steps exercised."""

    @property
    def steps_per_wall_second(self) -> float:
        """Steps over wall-clock seconds."""
        return self.steps / self.wall if self.wall else 0.0

    @property
    def steps_per_cpu_second(self) -> float:
        """Steps over the suite process's CPU seconds."""
        return self.steps / self.cpu if self.cpu else 0.0


def _child_cpu(port: Any) -> float | None:
    """The CPU seconds (user + system) of a subprocess driver so far, read from ``/proc``; else ``None``."""
    popen = getattr(getattr(port, "_process", None), "popen", None)
    pid = getattr(popen, "pid", None)
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(
    driver: str | None, port_name: str | None, profile: str, seed: int | None, *, only: tuple[str, ...], examples: int | None
) -> list[GroupTiming]:
    """Run the suite once and time every group."""
    keep_hypothesis_files_in_the_cache()
    options = RunOptions(profile=PROFILES[profile], only=only, seed=seed, max_examples=examples)
    marks: list[tuple[str, float, float, float | None]] = []
    with opened(driver, port_name, 5.0) as port:

        def on_group(group: str) -> None:
            marks.append((group, time.perf_counter(), time.process_time(), _child_cpu(port)))

        result = run(port, options, on_group)
        end = (time.perf_counter(), time.process_time(), _child_cpu(port))
    timings: list[GroupTiming] = []
    by_group = {r.group: r for r in result.groups}
    for index, (group, wall, cpu, child) in enumerate(marks):
        following = marks[index + 1][1:] if index + 1 < len(marks) else end
        done = by_group[group]
        driver_cpu = None if child is None or following[2] is None else following[2] - child
        timings.append(
            GroupTiming(
                group,
                done.status,
                done.coverage.examples,
                done.coverage.steps,
                done.coverage.requests,
                following[0] - wall,
                following[1] - cpu,
                driver_cpu,
                len(done.failures),
                sorted(done.coverage.invariants),
                sorted(done.coverage.codes),
            )
        )
    return timings


def table(timings: list[GroupTiming]) -> str:
    """The timings as a Markdown table, with a total row."""
    lines = [
        "| group | examples | steps | wall s | steps/s (wall) | suite CPU s | steps/s (CPU) | driver CPU s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for t in timings:
        driver = "" if t.driver_cpu is None else f"{t.driver_cpu:.1f}"
        lines.append(
            f"| {t.group} | {t.examples} | {t.steps:,} | {t.wall:.1f} | {t.steps_per_wall_second:,.0f} | {t.cpu:.1f} | "
            f"{t.steps_per_cpu_second:,.0f} | {driver} |"
        )
    steps, wall, cpu = sum(t.steps for t in timings), sum(t.wall for t in timings), sum(t.cpu for t in timings)
    examples = sum(t.examples for t in timings)
    lines.append(f"| all | {examples} | {steps:,} | {wall:.1f} | {steps / wall:,.0f} | {cpu:.1f} | {steps / cpu:,.0f} | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, run, print the table and write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--port", help="'python' or 'model' (in-process), or a driver command line")
    where.add_argument("--driver", help="a driver command line")
    parser.add_argument("--profile", default="ci", choices=sorted(PROFILES))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", default="", help="groups, comma-separated (default: every group the port declares)")
    parser.add_argument("--max-examples", type=int, help="override the profile's examples per group (for a profile)")
    parser.add_argument("--json", type=Path, help="write the timings here")
    args = parser.parse_args(argv)
    only = tuple(g for g in args.only.split(",") if g)
    timings = measure(args.driver, args.port, args.profile, args.seed, only=only, examples=args.max_examples)
    print(table(timings))
    if args.json is not None:
        rows = [
            {**asdict(t), "steps_per_wall_second": t.steps_per_wall_second, "steps_per_cpu_second": t.steps_per_cpu_second}
            for t in timings
        ]
        args.json.write_text(json.dumps({"argv": sys.argv[1:], "groups": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
