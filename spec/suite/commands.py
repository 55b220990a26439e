"""The bodies of the ``check``, ``replay`` and ``check-log`` subcommands."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
from collections.abc import Iterator

from rich.console import Console

from sessionlog_spec.protocol.messages import Port, PortFault
from sessionlog_spec.suite.expectations import Expectation, ExpectationError, judge, load_expectations
from sessionlog_spec.suite.output.cases import read_case
from sessionlog_spec.suite.output.console import RunProgress, show
from sessionlog_spec.suite.output.replay import render, replay
from sessionlog_spec.suite.output.report import junit_xml, report_json, write_json, write_junit
from sessionlog_spec.suite.ports import PortUnavailable, port_for
from sessionlog_spec.suite.ports.subprocess import SubprocessPort
from sessionlog_spec.suite.profiles import PROFILES, database_for
from sessionlog_spec.suite.run import RunOptions, run
from sessionlog_spec.suite.verdict import decide

USAGE_ERROR = 2
REPORT_WIDTH = 140
"""Columns of the result matrix when stdout is not a terminal (a CI log is wider than 80)."""


class PortError(Exception):
    """The port could not be started."""


NO_PORT = "no port to check: give --driver 'CMD' (a sessionlog-driver/1 program) or --port python|model|'CMD'"


def open_port(driver: str | None, port: str | None, timeout: float) -> Port:
    """The port the command line names (``--driver`` always means a subprocess).

    There is no default: checking the model against itself would pass whatever a user meant to check.
    """
    if driver is None and port is None:
        raise PortError(NO_PORT)
    if driver is not None and not driver.strip():
        raise PortError("--driver is empty: give the command that starts your driver")
    try:
        if driver is not None:
            return SubprocessPort(driver, timeout=timeout)
        return port_for(str(port), timeout=timeout)
    except (PortUnavailable, PortFault, ValueError) as error:
        raise PortError(str(error)) from error


@contextlib.contextmanager
def opened(driver: str | None, port: str | None, timeout: float) -> Iterator[Port]:
    """A started port, closed afterwards whatever happens."""
    started = open_port(driver, port, timeout)
    try:
        yield started
    finally:
        with contextlib.suppress(PortFault):
            started.close()


def check(args: argparse.Namespace) -> int:
    """``python -m sessionlog_spec check``."""
    err = Console(stderr=True)
    entries: list[Expectation] = []
    if args.expect_fail is not None:
        try:
            entries = load_expectations(args.expect_fail)
        except (OSError, ExpectationError) as error:
            err.print(f"--expect-fail: {error}", markup=False)
            return USAGE_ERROR
    profile = PROFILES[args.profile]
    if args.shrink_seconds is not None:
        profile = dataclasses.replace(profile, shrink_seconds=args.shrink_seconds)
    options = RunOptions(
        profile=profile,
        strict_codes=args.strict_codes,
        only=tuple(g for groups in args.only or [] for g in groups),
        seed=args.seed,
        database=None if args.seed is not None else database_for(args.database),
        cases_dir=args.cases_dir,
        max_examples=args.max_examples,
        step_count=args.steps,
    )
    try:
        with opened(args.driver, args.port, args.timeout) as port:
            hello = port.hello
            declared = ", ".join(hello.capabilities) or "no capabilities"
            err.print(f"checking {hello.name} {hello.version} ({declared})", markup=False)
            if args.quiet:
                result = run(port, options)
            else:
                with RunProgress(err, options.max_examples or profile.max_examples) as progress:
                    result = run(port, options, progress.group_started, progress.example)
    except PortError as error:
        err.print(f"cannot start the port: {error}", markup=False)
        return 1
    judgement = judge(result.groups, entries)
    verdict = decide(result, judgement)
    show(Console(width=None if sys.stdout.isatty() else REPORT_WIDTH), result, judgement, verdict)
    if args.report is not None:
        write_json(args.report, report_json(result, judgement, verdict))
    if args.junit is not None:
        write_junit(args.junit, junit_xml(result, judgement, verdict))
    return 0 if verdict.passed else 1


def replay_case(args: argparse.Namespace) -> int:
    """``python -m sessionlog_spec replay FILE``: exit 1 while the port still disagrees."""
    try:
        document = read_case(args.case)
    except (OSError, ValueError) as error:
        print(f"cannot read {args.case}: {error}", file=sys.stderr)
        return USAGE_ERROR
    try:
        with opened(args.driver, args.port, args.timeout) as port:
            outcome = replay(document, port, strict_codes=True if args.strict_codes else None)
    except PortError as error:
        print(f"cannot start the port: {error}", file=sys.stderr)
        return 1
    print(f"{document['case']}: {document['message']}")
    print(render(outcome))
    return 1 if outcome.failed else 0
