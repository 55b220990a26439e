"""``python -m sessionlog_spec vectors generate|verify|run|add``: the vectors subcommand group."""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console

from sessionlog_spec.protocol.messages import PortFault
from sessionlog_spec.suite.arguments import command_line, positive_seconds
from sessionlog_spec.suite.output.replay import PROGRAM, port_arguments
from sessionlog_spec.suite.ports import PortUnavailable, port_for
from sessionlog_spec.vectors import generate as gen
from sessionlog_spec.vectors import regressions
from sessionlog_spec.vectors.format import FILE_ORDER, VECTORS_DIR, VectorFileError, load_all
from sessionlog_spec.vectors.report import FAILURES_SHOWN, render
from sessionlog_spec.vectors.run import FAILED, Options, run_files

COMMAND = "vectors"
DEFAULT_LARGE_TIMEOUT = 300.0
RUN_EPILOG = f"""\
Each failure (the first {FAILURES_SHOWN}) is printed with the case's input (every request as stored,
the failing one marked >), the model's and the port's verdicts on the failing request, and the
command that re-runs that case alone (--case ID, with the same port options).

exit status: 0 every case passed or is unsupported, 1 a case failed, 2 bad usage (no port, an
unknown file or case id, nothing to run) or a port that cannot start.
"""


def add_parser(subparsers: Any) -> None:
    """Register ``vectors`` and its subcommands on the main parser's subparsers."""
    parser = subparsers.add_parser(COMMAND, help="language-neutral conformance vectors: generate, verify, run, add")
    sub = parser.add_subparsers(dest="vectors_command", required=True)
    for name, help_ in (("generate", "write vectors/ from the model"), ("verify", "fail if vectors/ differs from the model")):
        p = sub.add_parser(name, help=help_)
        p.add_argument("--dir", type=Path, default=VECTORS_DIR, help="the vectors directory")
    run = sub.add_parser(
        "run",
        help="run every vector against a port",
        epilog=RUN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    target = run.add_mutually_exclusive_group()
    target.add_argument("--port", type=command_line, default=None, help="'model', 'python' or a driver command line")
    target.add_argument(
        "--driver", type=command_line, default=None, metavar="CMD", help="a driver command line (same as --port CMD)"
    )
    codes = run.add_mutually_exclusive_group()
    codes.add_argument(
        "--any-code",
        dest="strict_codes",
        action="store_false",
        help="count a refusal with any code as agreeing (by default the model's violation code is required)",
    )
    codes.add_argument("--strict-codes", dest="strict_codes", action="store_true", help=argparse.SUPPRESS)
    run.set_defaults(strict_codes=True)
    run.add_argument("--timeout", type=positive_seconds, default=5.0, help="per-request timeout of a driver, in seconds")
    run.add_argument(
        "--large-timeout",
        type=positive_seconds,
        default=DEFAULT_LARGE_TIMEOUT,
        help="per-request timeout for the large vectors",
    )
    run.add_argument("--only", default="", help="comma-separated files to run (e.g. log,surface)")
    run.add_argument("--skip", default="", help="comma-separated files to leave out (e.g. large)")
    run.add_argument(
        "--case",
        action="append",
        default=[],
        metavar="ID",
        help="run only the case with this id (repeatable; each failure prints the command with its own --case)",
    )
    run.add_argument("--dir", type=Path, default=VECTORS_DIR, help="the vectors directory")
    add = sub.add_parser("add", help="import a counterexample file as a regression vector")
    add.add_argument("file", type=Path)
    add.add_argument("--dir", type=Path, default=VECTORS_DIR, help="the vectors directory")


def run(args: argparse.Namespace) -> int:
    """Run the chosen ``vectors`` subcommand; returns the exit status."""
    command: str = args.vectors_command
    try:
        if command == "generate":
            return _generate(args.dir)
        if command == "verify":
            return _verify(args.dir)
        if command == "run":
            return _run(args)
        return _add(args.file, args.dir)
    except VectorFileError as error:
        print(error, file=sys.stderr)
        return 2


def _generate(root: Path) -> int:
    generated = gen.generate(root)
    for path in gen.write(generated, root):
        print(f"wrote {path}")
    for draft_id in generated.withheld:
        print(f"withheld {draft_id}: a known model divergence (spec/vectors/divergences.py)", file=sys.stderr)
    return 0


def _verify(root: Path) -> int:
    lines = gen.differences(gen.generate(root), root)
    if not lines:
        print(f"{root} matches the model")
        return 0
    print(f"{root} differs from what the model produces now (run python -m sessionlog_spec vectors generate):", file=sys.stderr)
    for line in lines:
        print(f"  {line}", file=sys.stderr)
    return 1


def _files(option: str) -> list[str]:
    names = [n.strip().removesuffix(".json") for n in option.split(",") if n.strip()]
    unknown = [n for n in names if n not in FILE_ORDER]
    if unknown:
        raise SystemExit(f"unknown vector file(s) {unknown}; known: {', '.join(FILE_ORDER)}")
    return names


def _run(args: argparse.Namespace) -> int:
    only, skip = _files(args.only), _files(args.skip)
    documents = {s: d for s, d in load_all(args.dir).items() if (not only or s in only) and s not in skip}
    if args.case:
        known = {case["id"] for d in documents.values() for case in d["cases"]}
        unknown = [case_id for case_id in args.case if case_id not in known]
        if unknown:
            print(f"no vector with id {', '.join(unknown)} in {args.dir} (after --only/--skip)", file=sys.stderr)
            return 2
        documents = {s: {**d, "cases": [c for c in d["cases"] if c["id"] in args.case]} for s, d in documents.items()}
        documents = {s: d for s, d in documents.items() if d["cases"]}
    cases = sum(len(d["cases"]) for d in documents.values())
    if cases == 0:
        print(f"no vectors to run in {args.dir} (after --only/--skip): nothing would be checked", file=sys.stderr)
        return 2
    target = args.driver if args.driver is not None else args.port
    if target is None:
        print("no port to check: give --driver 'CMD' (a sessionlog-driver/1 program) or --port python|model|'CMD'",
              file=sys.stderr)
        return 2
    try:
        port = port_for(target, timeout=args.timeout)
        hello = port.hello
    except (PortUnavailable, PortFault) as error:
        print(f"cannot start the port: {error}", file=sys.stderr)
        return 2
    started = time.monotonic()
    try:
        results = run_files(port, documents, Options(strict_codes=args.strict_codes, large_timeout=args.large_timeout))
    finally:
        port.close()
    by_id = {case["id"]: case for d in documents.values() for case in d["cases"]}
    rerun = rerun_command(args)
    render(Console(), hello, results, time.monotonic() - started, args.strict_codes, cases=by_id, rerun=rerun)
    return 1 if any(r.status == FAILED for r in results) else 0


def rerun_command(args: argparse.Namespace) -> Callable[[str], str]:
    """The command that runs one case again with this run's port and options, quoted for a shell."""
    options = ["vectors", "run"]
    if args.dir != VECTORS_DIR:
        options += ["--dir", str(args.dir)]
    if not args.strict_codes:
        options.append("--any-code")
    if args.large_timeout != DEFAULT_LARGE_TIMEOUT:
        options += ["--large-timeout", f"{args.large_timeout:g}"]
    port = port_arguments(args.driver, args.port, args.timeout)

    def command(case_id: str) -> str:
        return f"{PROGRAM} {shlex.join([*options, '--case', case_id])} {port}"

    return command


def _add(path: Path, root: Path) -> int:
    try:
        case, new = regressions.add(path, root)
    except (OSError, ValueError, KeyError) as error:
        print(f"cannot import {path}: {error}", file=sys.stderr)
        return 2
    print(f"{'added' if new else 'already present:'} {case['id']} ({case['description']})")
    return 0
