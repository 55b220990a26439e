"""``python -m killrate``: list the mutant catalogue, run the kill-rate measurement, render its table.

Exit status of ``run``: 0 when the run is valid and every mutant was killed, 1 when a mutant
survived or could not be judged, 3 when the run is void (the unmutated port failed or the canary
survived), 2 for a usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from killrate.mutants import CANARY, CATALOGUE, HALVES
from killrate.render import markdown
from killrate.run import KILLED, Outcome, RunConfig, run, select
from sessionlog_spec.suite.profiles import PROFILES

VOID_EXIT = 3


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m killrate", description="a measured kill rate for the conformance suite")
    sub = parser.add_subparsers(dest="command", required=True)
    go = sub.add_parser("run", help="run the suite against the unmutated port, the canary and every mutant")
    go.add_argument("--profile", choices=sorted(PROFILES), default="ci")
    go.add_argument("--only", nargs="+", default=[], metavar="NAME", help="run only these catalogue mutants")
    go.add_argument(
        "--half", choices=HALVES,
        help="run only one half of the catalogue (tuned, blind, fresh, unseen, sealed, hidden or veiled)",
    )
    go.add_argument("--report", type=Path, metavar="OUT.json", help="write the run as JSON (e.g. docs/strength.json)")
    go.add_argument("--markdown", type=Path, metavar="OUT.md", help="write the kill table as Markdown")
    go.add_argument("--seed", type=int, help="derandomise every suite run with this seed")
    go.add_argument("--all-groups", action="store_true", help="run every group against each mutant, not only its target")
    go.add_argument(
        "--groups", type=lambda text: tuple(g for g in text.split(",") if g), default=(), metavar="G1,G2",
        help="run these groups against each mutant instead of its target",
    )
    go.add_argument("--jobs", type=int, default=1, help="suite runs at a time (default 1)")
    go.add_argument("--repeat", type=int, default=1, help="suite runs per mutant, each with a fresh database (default 1)")
    go.add_argument("--work", type=Path, help="directory for suite reports, counterexamples, databases (reports/killrate)")
    go.add_argument("--timeout", type=float, help="per-request driver timeout passed to the suite")
    go.add_argument("--keep-going", action="store_true", help="run the mutants even when the run is already void")
    go.add_argument("--any-code", action="store_true", help="pass --any-code: a refusal with any code counts as agreeing")
    go.add_argument("--no-snapshot", action="store_true", help="import suite and seqlog from the working tree, not a copy")
    listing = sub.add_parser("list", help="list the catalogue")
    listing.add_argument("--half", choices=HALVES, help="list only one half of the catalogue")
    table = sub.add_parser("table", help="render a run report's kill table as Markdown")
    table.add_argument("report", type=Path)
    return parser


def _progress(outcome: Outcome) -> None:
    where = f" in {','.join(outcome.failed_groups)}" if outcome.failed_groups else ""
    runs = f"{outcome.kills}/{outcome.runs}" if outcome.runs > 1 else ""
    line = f"{outcome.name:<40} {outcome.status:<9} {runs:<5}{where:<16} {outcome.seconds:7.1f} s  {outcome.detail[:80]}"
    print(line, flush=True)


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand and return its exit status."""
    args = _parser().parse_args(argv)
    if args.command == "list":
        for m in (*CATALOGUE, CANARY):
            if args.half is not None and m.half != args.half:
                continue
            print(f"{m.name:<40} {m.invariant:<14} {m.group:<11} {m.half:<6} {m.target}\n    {m.description}")
        halves = ", ".join(f"{sum(m.half == h for m in CATALOGUE)} {h}" for h in HALVES)
        print(f"{len(CATALOGUE)} mutants ({halves}; + the canary)")
        return 0
    if args.command == "table":
        print(markdown(json.loads(args.report.read_text(encoding="utf-8"))), end="")
        return 0
    try:
        mutants = select(args.only, args.half)
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    config = RunConfig(
        profile=args.profile,
        seed=args.seed,
        all_groups=args.all_groups,
        groups=args.groups,
        jobs=args.jobs,
        timeout=args.timeout,
        strict_codes=not args.any_code,
        repeat=args.repeat,
        snapshot=not args.no_snapshot,
    )
    if args.work is not None:
        config = RunConfig(**{**config.__dict__, "work": args.work})
    result = run(config, mutants, _progress, keep_going=args.keep_going)
    document = result.to_json()
    if args.report is not None:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if args.markdown is not None:
        args.markdown.write_text(markdown(document), encoding="utf-8")
    totals = document["totals"]
    print(f"verdict: {result.verdict}; {totals['killed']}/{totals['mutants']} killed; {result.seconds / 60:.1f} min")
    for reason in result.void_reasons:
        print(f"void: {reason}", file=sys.stderr)
    if result.verdict == "void":
        return VOID_EXIT
    return 0 if all(m.status == KILLED for m in result.mutants) else 1


if __name__ == "__main__":
    sys.exit(main())
