"""The ``python -m sessionlog_spec`` command line (also installed as ``sessionlog-check``).

* ``check``: run the conformance machines against a port and print the result matrix;
* ``replay FILE``: re-run a counterexample file against a port;
* ``check-log PATH...``: check stored logs (files, directories, ``-``) offline against the model;
* ``html OUT.html REPORT.json...``: a static page of one run, or of several runs side by side;
* ``ask [REQUEST]``: put protocol requests to the model (or a port) and print the replies;
* ``catalogue``: regenerate ``invariants.md``.

``sessionlog-check`` called with ``check``'s options (or none) runs ``check``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sessionlog_spec import catalogue
from sessionlog_spec.suite import ask as ask_command
from sessionlog_spec.suite import check_log as check_log_command
from sessionlog_spec.suite import commands
from sessionlog_spec.suite.arguments import command_line, jobs_count, positive_int, positive_seconds
from sessionlog_spec.suite.groups import SUITE_GROUPS
from sessionlog_spec.suite.output import html as html_output
from sessionlog_spec.suite.output.cases import MAX_CASE_BYTES
from sessionlog_spec.suite.output.replay import QUOTE_LIMIT
from sessionlog_spec.suite.profiles import PROFILES
from sessionlog_spec.vectors import cli as vectors_cli

COMMANDS = ("check", "replay", "check-log", "html", "ask", "catalogue", vectors_cli.COMMAND)
CHECK_SCRIPT = "sessionlog-check"


def _port_options(parser: argparse.ArgumentParser) -> None:
    target = parser.add_mutually_exclusive_group()
    target.add_argument(
        "--driver", type=command_line, metavar="CMD", help="a driver program speaking sessionlog-driver/1 ('node driver.mjs')"
    )
    target.add_argument(
        "--port", type=command_line, metavar="PORT", help="'python' or 'model' (in-process), or a driver command line"
    )
    parser.add_argument("--timeout", type=positive_seconds, default=5.0, help="seconds per request to a driver (default 5)")
    codes = parser.add_mutually_exclusive_group()
    codes.add_argument(
        "--any-code",
        dest="strict_codes",
        action="store_false",
        default=None,
        help="count a refusal with any code as agreeing (for a port that cannot map its errors to the model's codes; "
        "the report says so). By default a refusal must carry the model's code",
    )
    # The default since codes are compared unless --any-code; still accepted so older command lines run.
    codes.add_argument("--strict-codes", dest="strict_codes", action="store_true", help=argparse.SUPPRESS)
    parser.set_defaults(strict_codes=None)


def _groups(text: str) -> list[str]:
    groups = [g.strip() for g in text.split(",") if g.strip()]
    if not groups:
        raise argparse.ArgumentTypeError(f"{text!r} names no group; choose from {', '.join(SUITE_GROUPS)}")
    unknown = [g for g in groups if g not in SUITE_GROUPS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown group(s) {unknown}; choose from {', '.join(SUITE_GROUPS)}")
    return groups


CHECK_EPILOG = """\
outputs:
  --report, --junit, --html and --cases-dir are checked before the port starts: a directory given
  for a file, a file given for a directory, or a place where no file can be created is bad usage.
  Missing directories are created when the outputs are written; the check leaves nothing behind.
  In --report, --junit and --html each failure carries the failing request, the model's and the
  port's replies, and the replay command to paste (the same --driver/--port, and --timeout).  All
  name every invariant and code no step exercised.  When the port cannot start, all are still
  written: every selected group is an error carrying the fault and the driver's stderr tail.
  --html writes one static page (no script, nothing loaded) with the matrix of invariants by group.

exit status:
  0  the run passed
  1  it did not (a disagreement, a void or errored group, a stale expected failure, missing
     coverage under the nightly profile), or the port could not start
  2  bad usage: no port, a bad option value or output path, a malformed --expect-fail file;
     also a report that could not be written after all (one line on stderr names it)
"""

REPLAY_EPILOG = f"""\
Sends the file's requests to the port and to the model, stops at the first disagreement and
prints that request whole (--short cuts it at {QUOTE_LIMIT} characters), a diff of the model's and
the port's replies, and the driver's stderr tail after a fault.

exit status:
  0  the port agrees with the model
  1  it still disagrees, or the port could not start
  2  bad usage, or FILE is not a readable sessionlog-case/1 file (missing, a directory, over
     {MAX_CASE_BYTES >> 20} MiB, not JSON, or a request the protocol does not accept)
"""


HTML_EPILOG = f"""\
One REPORT.json gives the page of that run: its summary, the matrix of invariants by group (passed,
failed or not exercised, with the codes exercised), each failure with its request, the model's and
the port's replies and the replay command, the coverage and the reached cells.  Several give the
ports side by side: per group and per invariant, each report's outcome in a column named by its
port and driver.  The page is one file with its CSS inline, no script, and nothing it loads.

exit status:
  0  the page was written
  2  bad usage: OUT.html cannot be written or is one of the reports, or a REPORT.json is not a
     readable sessionlog-report/1 file (missing, a directory, over {html_output.MAX_REPORT_BYTES >> 20} MiB, not JSON,
     or without the members the page shows)
"""


def program_name() -> str:
    """The command as it was invoked, for the usage lines: ``sessionlog-check`` or ``python -m sessionlog_spec``."""
    return CHECK_SCRIPT if Path(sys.argv[0]).name == CHECK_SCRIPT else "python -m sessionlog_spec"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog=program_name(), description="sessionlog-spec: model, spec, conformance suite")
    sub = parser.add_subparsers(dest="command", required=True)

    check = sub.add_parser(
        "check",
        help="check a port against the model with the conformance state machines",
        epilog=CHECK_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _port_options(check)
    check.add_argument("--profile", choices=sorted(PROFILES), default="dev", help="how hard to search (default dev)")
    check.add_argument("--only", type=_groups, action="append", metavar="GROUP", help="run only these groups (a,b or repeated)")
    check.add_argument("--seed", type=int, help="derandomise with this seed (the example database is not used)")
    check.add_argument("--report", type=Path, metavar="OUT.json", help="write a JSON report (also when the port cannot start)")
    check.add_argument("--junit", type=Path, metavar="OUT.xml", help="write JUnit XML (also when the port cannot start)")
    check.add_argument(
        "--html", type=Path, metavar="OUT.html", help="write a static HTML page of the run (also when the port cannot start)"
    )
    check.add_argument("--expect-fail", type=Path, metavar="FILE", help="JSON or TOML list of expected failures")
    check.add_argument("--cases-dir", type=Path, default=Path("reports/cases"), help="counterexample directory (reports/cases)")
    check.add_argument(
        "--database",
        metavar="DIR|URL",
        help="Hypothesis example database: a directory (shared filesystems work) or redis://host:port/db "
        "(the [redis] extra) ($SESSIONLOG_DATABASE; default a directory in ~/.cache)",
    )
    check.add_argument(
        "--jobs",
        type=jobs_count,
        default=1,
        metavar="N",
        help="run on N processes, each with its own port; groups and batches of their examples are spread "
        "over them and merged into one report (0 or auto: one per core; default 1)",
    )
    check.add_argument(
        "--fail-fast", action="store_true", help="stop after the first group that fails (the groups after it are not run)"
    )
    check.add_argument("--max-examples", type=positive_int, metavar="N", help="override the profile's examples per group")
    check.add_argument("--steps", type=positive_int, metavar="N", help="override the profile's steps per example")
    check.add_argument("--shrink-seconds", type=positive_int, metavar="S", help="override how long one failure may be shrunk")
    check.add_argument(
        "--quiet", action="store_true", help="no progress bars: nothing while the run lasts but one line a minute (for CI logs)"
    )

    replay = sub.add_parser(
        "replay",
        help="re-run a counterexample file against a port and show the diff",
        epilog=REPLAY_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    replay.add_argument("case", type=Path, metavar="FILE", help="a counterexample file written by check (reports/cases/*.json)")
    _port_options(replay)
    replay.add_argument(
        "--short", action="store_true", help=f"cut the failing request at {QUOTE_LIMIT} characters (default: show it whole)"
    )

    check_log = sub.add_parser(
        "check-log",
        help="check stored logs (v1, or v0 through the edge) against the model",
        description=check_log_command.HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check_log.add_argument(
        "paths", nargs="+", metavar="PATH", help="a log file (plain, zstd or gzip), a directory of logs, or '-' for stdin"
    )
    check_log.add_argument("--strict", action="store_true", help="fail a log from which a reader drops any line (exit 1)")
    check_log.add_argument("--model", action="store_true", help="judge every event by the model (no fast checker)")

    page = sub.add_parser(
        "html",
        help="render a static HTML page from saved JSON reports (several: the ports side by side)",
        epilog=HTML_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    page.add_argument("output", type=Path, metavar="OUT.html", help="the page to write")
    page.add_argument("reports", type=Path, nargs="+", metavar="REPORT.json", help="JSON reports written by check --report")

    ask = sub.add_parser(
        "ask", help="put protocol requests to the model (or a port) and print the replies", description=ask_command.HELP
    )
    ask.add_argument(
        "request", nargs="?", metavar="REQUEST", help="one request as a JSON object; absent or '-': one per line from stdin"
    )
    _port_options(ask)

    cat = sub.add_parser(
        "catalogue",
        help="regenerate invariants.md, docs/trace.md and PROTOCOL.md's generated part from the model, registry and tests",
    )
    cat.add_argument("--output", type=Path, default=Path("invariants.md"), help="the file to write (./invariants.md)")
    cat.add_argument("--tests", type=Path, default=catalogue.TESTS, help="the checkout's tests folder (./tests)")
    cat.add_argument("--check", action="store_true", help="fail if a document is stale instead of writing it")
    vectors_cli.add_parser(sub)
    return parser


def _with_command(argv: list[str]) -> list[str]:
    """``sessionlog-check`` with check options (or none) means ``check``."""
    if Path(sys.argv[0]).name == CHECK_SCRIPT and (not argv or argv[0] not in (*COMMANDS, "-h", "--help")):
        return ["check", *argv]
    return argv


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand and return its exit status."""
    args = build_parser().parse_args(_with_command(list(sys.argv[1:] if argv is None else argv)))
    if args.command == "check":
        return commands.check(args)
    if args.command == "replay":
        return commands.replay_case(args)
    if args.command == "check-log":
        return check_log_command.run(args.paths, strict=args.strict, model=args.model)
    if args.command == "ask":
        return ask_command.run(args.request, args.driver, args.port, args.timeout)
    if args.command == "html":
        return commands.html_page(args)
    if args.command == vectors_cli.COMMAND:
        return vectors_cli.run(args)
    return _catalogue(args.output, args.tests, args.check)


def _catalogue(output: Path, tests: Path, check_only: bool) -> int:
    return catalogue.run(output, tests, check_only)
