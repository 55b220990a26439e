"""``python -m acp_snapshots record|replay|refresh``: the keyless ACP snapshot harness.

* ``record [SCENARIO…]`` runs scenarios through a real ACP client and agent processes and writes
  ``fixtures/acp/<scenario>/`` (all scenarios when none is named);
* ``replay [SCENARIO…]`` rebuilds every recorded model request from each fixture's log (through
  seqlog and through the reference model) and compares it with the transcript; exit 1 on mismatch;
* ``refresh [SCENARIO…]`` re-records and prints a readable diff of the fixtures (old vs new), then
  writes them (``--check`` only reports, exiting 1 when anything changed).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from acp_snapshots import FIXTURES_DIR
from acp_snapshots.client import DEFAULT_PARALLEL, Recording, record_many
from acp_snapshots.fixtures import diff_fixture, fixture_files, read_fixture, write_fixture
from acp_snapshots.replay import replay_fixture, request_count
from acp_snapshots.scenarios import SCENARIOS, Scenario


def _select(names: Sequence[str]) -> list[Scenario]:
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        raise SystemExit(f"unknown scenario(s) {unknown}; known: {', '.join(SCENARIOS)}")
    return [SCENARIOS[n] for n in names] if names else list(SCENARIOS.values())


def record_files(scenarios: Sequence[Scenario], parallel: int = DEFAULT_PARALLEL) -> dict[str, dict[str, bytes]]:
    """Record ``scenarios`` (in a scratch directory) and return every fixture file by scenario."""
    with tempfile.TemporaryDirectory(prefix="acp-harness-") as scratch:
        recordings: dict[str, Recording] = asyncio.run(record_many(scenarios, Path(scratch), parallel))
    return {s.name: fixture_files(s, recordings[s.name]) for s in scenarios}


def _sizes(files: dict[str, bytes]) -> str:
    return ", ".join(f"{name} {len(content):,} B" for name, content in sorted(files.items()))


def cmd_record(args: argparse.Namespace) -> int:
    scenarios = _select(args.scenarios)
    started = time.monotonic()
    recorded = record_files(scenarios, args.parallel)
    for name, files in recorded.items():
        write_fixture(args.fixtures / name, files)
        print(f"recorded {name}: {_sizes(files)}")
    print(f"{len(recorded)} scenario(s) recorded into {args.fixtures} in {time.monotonic() - started:.1f} s")
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    failed = 0
    for scenario in _select(args.scenarios):
        directory = args.fixtures / scenario.name
        if not directory.is_dir():
            print(f"FAIL {scenario.name}: no fixture at {directory} (run `python -m acp_snapshots record {scenario.name}`)")
            failed += 1
            continue
        problems = replay_fixture(directory)
        if problems:
            failed += 1
            print(f"FAIL {scenario.name}:")
            for problem in problems:
                print("  " + problem.replace("\n", "\n  "))
        else:
            print(f"ok   {scenario.name}: {request_count(directory)} requests reconstructed through seqlog and the model")
    return 1 if failed else 0


def cmd_refresh(args: argparse.Namespace) -> int:
    scenarios = _select(args.scenarios)
    recorded = record_files(scenarios, args.parallel)
    changed = 0
    for name, files in recorded.items():
        diff = diff_fixture(name, read_fixture(args.fixtures / name), files)
        if diff:
            changed += 1
            sys.stdout.write(diff if diff.endswith("\n") else diff + "\n")
            if not args.check:
                write_fixture(args.fixtures / name, files)
    if not args.scenarios and args.fixtures.is_dir():
        stale = sorted(p.name for p in args.fixtures.iterdir() if p.is_dir() and p.name not in SCENARIOS)
        for name in stale:
            print(f"stale fixture directory {args.fixtures / name}: no scenario of that name (remove it by hand)")
    verb = "differ" if args.check else "refreshed"
    print(f"{changed} of {len(recorded)} fixture(s) {verb}" if changed else f"all {len(recorded)} fixture(s) unchanged")
    return 1 if args.check and changed else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m acp_snapshots", description="Keyless ACP snapshot harness for seqlog.")
    commands = parser.add_subparsers(dest="command", required=True)
    for name, run, text in (
        ("record", cmd_record, "record scenarios into fixtures"),
        ("replay", cmd_replay, "check that each fixture's log reconstructs every request it sent"),
        ("refresh", cmd_refresh, "re-record and print a diff of the fixtures"),
    ):
        sub = commands.add_parser(name, help=text, description=text)
        sub.add_argument("scenarios", nargs="*", metavar="SCENARIO", help=f"default: all ({', '.join(SCENARIOS)})")
        sub.add_argument("--fixtures", type=Path, default=FIXTURES_DIR, help="fixture root (default: fixtures/acp)")
        if name != "replay":
            sub.add_argument(
                "--parallel", type=int, default=DEFAULT_PARALLEL, help=f"scenarios recorded at once (default {DEFAULT_PARALLEL})"
            )
        if name == "refresh":
            sub.add_argument("--check", action="store_true", help="only report; exit 1 if any fixture would change")
        sub.set_defaults(run=run)
    args = parser.parse_args(argv)
    result: int = args.run(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
