"""Run CrossHair over the small, pure contracted functions of the spec.

``python -m sessionlog_spec.crosshair_check [--per-condition-timeout S] [--per-path-timeout S] [--jobs N]``

CrossHair executes each target symbolically and searches for an input that meets the
preconditions but breaks a postcondition (or makes the function raise).  The targets are the
surface transition pieces, header canonicalisation and equality, the writer decision rule and the
trace transition.  The surface pieces are analysed as they are in :mod:`sessionlog_spec.contracts.surface`;
the others through :mod:`sessionlog_spec.contracts.crosshair_targets`, whose plain-argument wrappers
CrossHair can build inputs for (it cannot build the recursive ``JsonObject`` alias or an event's
arbitrary JSON ``data``).

Each target runs as ``python -m crosshair check --analysis_kind=icontract --report_all`` in a
subprocess, ``--jobs`` at a time.  The budget is CrossHair's CPU time per postcondition; with the
default 4 s the whole run takes about 100 s of CPU, under a minute on two idle cores.

The exit status is non-zero when CrossHair reports a counterexample, an error (a postcondition or
the function raising), a precondition it could not satisfy (the analysis would be vacuous), or
fewer analysed postconditions than the target carries.  ``Not confirmed`` (no counterexample found
within the budget) passes: that is all a bounded search can say.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import import_module

from icontract._checkers import find_checker

CONTRACTS = "sessionlog_spec.contracts"


@dataclass(frozen=True, slots=True)
class Target:
    """One function for CrossHair: its qualified name and what its contracts check."""

    qualname: str
    checks: str


TARGETS: tuple[Target, ...] = (
    Target(CONTRACTS + ".surface.replacement_range", "INV-SURF-4: a replace range is on the surface, in order"),
    Target(
        CONTRACTS + ".surface.provenance_problem", "INV-SURF-5, INV-SURF-6: sources are distinct, earlier, cite the shadowed"
    ),
    Target(CONTRACTS + ".surface.decode_surface_op", "INV-SURF-3: surfaceOp has one spelling per operation"),
    Target(CONTRACTS + ".crosshair_targets.canonical_header_of", "INV-HDR-6: canonical form is idempotent, drops only empties"),
    Target(CONTRACTS + ".crosshair_targets.header_equals_of", "INV-HDR-7: equality is meaning, reflexive, symmetric"),
    Target(CONTRACTS + ".crosshair_targets.header_equals_chain", "INV-HDR-7: equality is transitive"),
    Target(CONTRACTS + ".crosshair_targets.decide_request_header_of", "INV-HDR-9..12: the writer decision rule"),
    Target(CONTRACTS + ".crosshair_targets.turn_start_of", "INV-TRACE-1, INV-TRACE-10: turn/start"),
    Target(CONTRACTS + ".crosshair_targets.turn_end_of", "INV-TRACE-2, INV-TRACE-10: turn/end"),
    Target(CONTRACTS + ".crosshair_targets.step_start_of", "INV-TRACE-4, INV-TRACE-10: step/start"),
    Target(CONTRACTS + ".crosshair_targets.step_end_of", "INV-TRACE-5, INV-TRACE-10: step/end"),
    Target(CONTRACTS + ".crosshair_targets.step_scoped_of", "INV-TRACE-6, INV-TRACE-8, INV-TRACE-10: step-scoped events"),
    Target(CONTRACTS + ".crosshair_targets.turn_scoped_of", "INV-TRACE-7, INV-TRACE-10: turn-scoped events"),
)

LINE = re.compile(r"^(?P<file>.*?):(?P<line>\d+): (?P<level>info|error): (?P<message>.*)$")


@dataclass
class Outcome:
    """What CrossHair said about one target."""

    target: Target
    postconditions: int
    returncode: int = 0
    seconds: float = 0.0
    confirmed: int = 0
    not_confirmed: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def analysed(self) -> int:
        return self.confirmed + self.not_confirmed

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.problems and self.analysed >= self.postconditions


def postcondition_count(qualname: str) -> int:
    """How many postconditions icontract attached to the target (each is one CrossHair condition)."""
    module_name, _, name = qualname.rpartition(".")
    checker = find_checker(getattr(import_module(module_name), name))
    return len(getattr(checker, "__postconditions__", [])) if checker is not None else 0


def crosshair_command(target: Target, per_condition: float, per_path: float | None) -> list[str]:
    """The CrossHair command line for one target."""
    command = [
        sys.executable,
        "-m",
        "crosshair",
        "check",
        "--analysis_kind=icontract",
        "--report_all",
        f"--per_condition_timeout={per_condition}",
    ]
    if per_path is not None:
        command.append(f"--per_path_timeout={per_path}")
    return [*command, target.qualname]


def run_target(target: Target, per_condition: float, per_path: float | None) -> Outcome:
    """Run CrossHair on one target and classify every line it prints."""
    outcome = Outcome(target, postcondition_count(target.qualname))
    if outcome.postconditions == 0:
        outcome.problems.append("the target carries no postconditions (are contracts disabled?)")
        return outcome
    env = {**os.environ, "SESSIONLOG_CONTRACTS": "1"}
    # A wall-clock guard far above the CPU budget, so a hung analysis cannot hang CI.
    guard = 120 + 10 * per_condition * outcome.postconditions
    started = time.monotonic()
    try:
        done = subprocess.run(
            crosshair_command(target, per_condition, per_path),
            capture_output=True,
            text=True,
            env=env,
            timeout=guard,
            check=False,
        )
    except subprocess.TimeoutExpired:
        outcome.seconds = time.monotonic() - started
        outcome.problems.append(f"CrossHair did not finish within {guard:.0f} s")
        outcome.returncode = -1
        return outcome
    outcome.seconds = time.monotonic() - started
    outcome.returncode = done.returncode
    for raw in done.stdout.splitlines():
        match = LINE.match(raw.strip())
        if match is None:
            continue
        message = match["message"]
        if match["level"] == "error":
            outcome.problems.append(f"line {match['line']}: {message}")
        elif message.startswith("Confirmed over all paths"):
            outcome.confirmed += 1
        elif message.startswith("Not confirmed"):
            outcome.not_confirmed += 1
        else:  # "Unable to meet precondition": nothing was checked
            outcome.problems.append(f"line {match['line']}: {message}")
    if done.returncode != 0 and not outcome.problems:
        tail = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        outcome.problems.append(f"CrossHair exited with status {done.returncode}: {tail}")
    if outcome.analysed < outcome.postconditions and not outcome.problems:
        outcome.problems.append(f"only {outcome.analysed} of {outcome.postconditions} postconditions were analysed")
    return outcome


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m sessionlog_spec.crosshair_check", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--per-condition-timeout", type=float, default=4.0, metavar="S", help="CPU seconds per postcondition (default 4)"
    )
    parser.add_argument(
        "--per-path-timeout", type=float, default=None, metavar="S", help="CPU seconds per path (default: CrossHair's, √S)"
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="targets analysed in parallel (default: CPUs)")
    parser.add_argument("--only", nargs="*", default=None, metavar="NAME", help="only targets whose name contains NAME")
    parser.add_argument("--list", action="store_true", help="list the targets and exit")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    targets = [t for t in TARGETS if args.only is None or any(o in t.qualname for o in args.only)]
    if args.list:
        for target in targets:
            print(f"{target.qualname}  [{postcondition_count(target.qualname)} postconditions]  {target.checks}")
        return 0
    if not targets:
        print("no target matches --only", file=sys.stderr)
        return 2
    conditions = sum(postcondition_count(t.qualname) for t in targets)
    per_path = "CrossHair's default (√ per-condition)" if args.per_path_timeout is None else f"{args.per_path_timeout} s"
    print(
        f"CrossHair {len(targets)} targets, {conditions} postconditions; budget {args.per_condition_timeout} s CPU per "
        f"postcondition (≤ {conditions * args.per_condition_timeout:.0f} s CPU), per path {per_path}, {args.jobs} job(s)",
        flush=True,
    )
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(run_target, t, args.per_condition_timeout, args.per_path_timeout) for t in targets]
        outcomes = []
        for future in futures:
            outcome = future.result()
            outcomes.append(outcome)
            status = "ok" if outcome.ok else "FAIL"
            print(
                f"  {status:4} {outcome.target.qualname}: {outcome.confirmed} confirmed, {outcome.not_confirmed} without "
                f"counterexample, of {outcome.postconditions} ({outcome.seconds:.1f} s)  — {outcome.target.checks}",
                flush=True,
            )
            for problem in outcome.problems:
                print(f"       {problem}", flush=True)
    wall = time.monotonic() - started
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    failed = [o for o in outcomes if not o.ok]
    print(
        f"CrossHair {'FAILED' if failed else 'passed'}: {len(outcomes) - len(failed)}/{len(outcomes)} targets clean in "
        f"{wall:.1f} s wall, {cpu.ru_utime + cpu.ru_stime:.1f} s CPU"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
