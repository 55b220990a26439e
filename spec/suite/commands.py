"""The bodies of the ``check``, ``replay`` and ``html`` subcommands.

Bad usage (no port named, an output path that cannot be written, a malformed expected-failures or
case file) ends before the port starts, in one line on stderr and exit status 2.  A port that
cannot start ends in exit status 1 after the fault and the driver's stderr tail are printed, and,
for ``check``, after the JSON report, the JUnit XML and the HTML page asked for are written with one
error per group.  ``html`` renders a page from saved JSON reports; a report it cannot read is bad usage.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import os
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from rich.console import Console

from sessionlog_spec.protocol.messages import Port, PortFault
from sessionlog_spec.suite.arguments import output_directory_problem, output_file_problem
from sessionlog_spec.suite.coverage import GroupCoverage
from sessionlog_spec.suite.expectations import Expectation, ExpectationError, judge, load_expectations
from sessionlog_spec.suite.output.cases import CaseFileError, read_case
from sessionlog_spec.suite.output.console import Heartbeat, RunProgress, banner, show
from sessionlog_spec.suite.output.html import ReportFileError, read_report, render_page, write_html
from sessionlog_spec.suite.output.replay import port_arguments, render, replay, unquoted_stderr
from sessionlog_spec.suite.output.report import (
    junit_xml,
    report_json,
    start_failure_json,
    start_failure_junit,
    write_json,
    write_junit,
)
from sessionlog_spec.suite.parallel import jobs_runner
from sessionlog_spec.suite.ports import PortUnavailable, port_for
from sessionlog_spec.suite.ports.subprocess import SubprocessPort
from sessionlog_spec.suite.profiles import PROFILES, DatabaseError, database_for, keep_hypothesis_files_in_the_cache
from sessionlog_spec.suite.run import GroupsRunner, RunOptions, run
from sessionlog_spec.suite.verdict import decide

USAGE_ERROR = 2
FAILED = 1
"""Exit status of a run that did not pass, and of a port that could not start."""
REPORT_WIDTH = 140
"""Columns of the result matrix when stdout is not a terminal (a CI log is wider than 80)."""


class PortError(Exception):
    """The port could not be started: ``fault`` says how, with the driver's stderr tail when there is one."""

    def __init__(self, message: str, fault: PortFault | None = None) -> None:
        super().__init__(message)
        self.fault = fault if fault is not None else PortFault("start", message)


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
        raise PortError(str(error), error if isinstance(error, PortFault) else None) from error


@contextlib.contextmanager
def opened(driver: str | None, port: str | None, timeout: float) -> Iterator[Port]:
    """A started port, closed afterwards whatever happens."""
    started = open_port(driver, port, timeout)
    try:
        yield started
    finally:
        with contextlib.suppress(PortFault):
            started.close()


def output_problem(args: argparse.Namespace) -> str | None:
    """Why ``check`` could not write the outputs it is asked for, in one line, or ``None``.

    Checked before the port starts, so that a run is never lost to a path found bad at its end.
    Missing directories are fine (they are created when the outputs are written); nothing is left behind.
    """
    outputs = [
        (option, path, example)
        for option, path, example in (
            ("--report", args.report, "report.json"),
            ("--junit", args.junit, "junit.xml"),
            ("--html", args.html, "report.html"),
        )
        if path is not None
    ]
    for option, path, example in outputs:
        problem = output_file_problem(path, example)
        if problem is not None:
            return f"{option}: {problem}"
    for index, (option, path, _) in enumerate(outputs):
        for other, again, _ in outputs[index + 1 :]:
            if os.path.abspath(path) == os.path.abspath(again):
                return f"{option} and {other} name the same file {path}"
    problem = output_directory_problem(args.cases_dir)
    return None if problem is None else f"--cases-dir: {problem}"


def start_failed(error: PortError, stream: TextIO) -> None:
    """Print why the port could not start, with the driver's stderr tail (unless the fault quotes it)."""
    print(f"cannot start the port: {error}", file=stream)
    tail = unquoted_stderr(error.fault)
    if tail:
        print("driver stderr (tail):", file=stream)
        print(tail, file=stream)


def check(args: argparse.Namespace) -> int:
    """``python -m sessionlog_spec check``."""
    err = Console(stderr=True)
    if args.driver is None and args.port is None:
        print(NO_PORT, file=sys.stderr)
        return USAGE_ERROR
    problem = output_problem(args)
    if problem is not None:
        print(problem, file=sys.stderr)
        return USAGE_ERROR
    if args.fail_fast and args.jobs > 1:
        print("--fail-fast runs the groups one after another: it cannot be combined with --jobs", file=sys.stderr)
        return USAGE_ERROR
    entries: list[Expectation] = []
    if args.expect_fail is not None:
        try:
            entries = load_expectations(args.expect_fail)
        except (OSError, ExpectationError) as error:
            print(f"--expect-fail: {error}", file=sys.stderr)
            return USAGE_ERROR
    keep_hypothesis_files_in_the_cache()
    profile = PROFILES[args.profile]
    if args.shrink_seconds is not None:
        profile = dataclasses.replace(profile, shrink_seconds=args.shrink_seconds)
    try:
        database = None if args.seed is not None else database_for(args.database)
    except DatabaseError as error:
        print(f"--database: {error}", file=sys.stderr)
        return USAGE_ERROR
    options = RunOptions(
        profile=profile,
        strict_codes=args.strict_codes is not False,
        only=tuple(g for groups in args.only or [] for g in groups),
        seed=args.seed,
        database=database,
        cases_dir=args.cases_dir,
        max_examples=args.max_examples,
        step_count=args.steps,
        fail_fast=args.fail_fast,
    )
    port_options = port_arguments(args.driver, args.port, args.timeout)
    try:
        with opened(args.driver, args.port, args.timeout) as port:
            hello = port.hello
            err.print(banner(hello, options), markup=False)
            if args.jobs > 1:
                err.print(f"on {args.jobs} job processes, each with its own port", markup=False)
            if args.quiet:
                with Heartbeat(err) as heartbeat:
                    groups = jobs(args, heartbeat.group_started, heartbeat.example)
                    result = run(port, options, heartbeat.group_started, heartbeat.example, groups)
            else:
                with RunProgress(err, options.max_examples or profile.max_examples) as progress:
                    groups = jobs(args, progress.group_started, progress.example)
                    result = run(port, options, progress.group_started, progress.example, groups)
    except PortError as error:
        start_failed(error, sys.stderr)
        fault = error.fault
        written = write_outputs(
            args,
            lambda: start_failure_json(options, fault, port_options),
            lambda: start_failure_junit(options, fault, port_options),
        )
        return FAILED if written else USAGE_ERROR
    not_run = [g for g in options.groups() if g not in {r.group for r in result.groups}]
    if not_run:
        err.print(f"--fail-fast: stopped at the first failing group; not run: {', '.join(not_run)}", markup=False)
    judgement = judge(result.groups, entries)
    verdict = decide(result, judgement)
    show(Console(width=None if sys.stdout.isatty() else REPORT_WIDTH), result, judgement, verdict, port_options)
    written = write_outputs(
        args,
        lambda: report_json(result, judgement, verdict, port_options),
        lambda: junit_xml(result, judgement, verdict, port_options),
    )
    if not written:
        return USAGE_ERROR
    return 0 if verdict.passed else FAILED


def jobs(
    args: argparse.Namespace, on_group: Callable[[str], None], on_example: Callable[[GroupCoverage], None]
) -> GroupsRunner | None:
    """How ``check --jobs N`` runs its groups: over N processes, each starting the port and the example
    database the command line names (none under ``--seed``); ``None`` for one job (the serial run)."""
    if args.jobs <= 1:
        return None
    database = None if args.seed is not None else functools.partial(database_for, args.database)
    port = functools.partial(open_port, args.driver, args.port, args.timeout)
    return jobs_runner(args.jobs, port, database, on_group, on_example)


def write_outputs(
    args: argparse.Namespace, document: Callable[[], dict[str, Any]], tree: Callable[[], ET.ElementTree[ET.Element]]
) -> bool:
    """Write the JSON report, the JUnit XML and the HTML page asked for; false (after one line on stderr)
    when one cannot be written.  The page is rendered from the JSON report.

    The paths were checked before the run; this catches what changed since (a directory removed, a full disk).
    """
    option, path = "--report", args.report
    try:
        report = document() if args.report is not None or args.html is not None else None
        if args.report is not None and report is not None:
            write_json(args.report, report)
        option, path = "--junit", args.junit
        if args.junit is not None:
            write_junit(args.junit, tree())
        option, path = "--html", args.html
        if args.html is not None and report is not None:
            write_html(args.html, render_page([report]))
    except OSError as error:
        where = f" ({error.filename})" if error.filename else ""
        print(f"{option}: cannot write {path}: {error.strerror or error}{where}", file=sys.stderr)
        return False
    return True


def replay_case(args: argparse.Namespace) -> int:
    """``python -m sessionlog_spec replay FILE``: exit 1 while the port still disagrees (or cannot start), 2 on bad usage."""
    if args.driver is None and args.port is None:
        print(NO_PORT, file=sys.stderr)
        return USAGE_ERROR
    try:
        document = read_case(args.case)
    except CaseFileError as error:
        print(f"cannot replay {args.case}: {error}", file=sys.stderr)
        return USAGE_ERROR
    try:
        with opened(args.driver, args.port, args.timeout) as port:
            outcome = replay(document, port, strict_codes=args.strict_codes)
    except PortError as error:
        start_failed(error, sys.stderr)
        return FAILED
    print(f"{document['case']}: {document['message']}")
    print(render(outcome, short=args.short))
    return FAILED if outcome.failed else 0


def html_page(args: argparse.Namespace) -> int:
    """``python -m sessionlog_spec html OUT.html REPORT.json...``: one report's page, or several side by side.

    Exit 0 once the page is written, 2 on an output path that cannot be written or a report that cannot be read.
    """
    problem = output_file_problem(args.output, "report.html")
    if problem is not None:
        print(f"OUT.html: {problem}", file=sys.stderr)
        return USAGE_ERROR
    documents = []
    for path in args.reports:
        if os.path.abspath(path) == os.path.abspath(args.output):
            print(f"{args.output} is one of the reports: give the page another name", file=sys.stderr)
            return USAGE_ERROR
        try:
            documents.append(read_report(path))
        except ReportFileError as error:
            print(f"cannot read {path}: {error}", file=sys.stderr)
            return USAGE_ERROR
    try:
        write_html(args.output, render_page(documents))
    except OSError as error:
        print(f"cannot write {args.output}: {error.strerror or error}", file=sys.stderr)
        return USAGE_ERROR
    print(f"wrote {args.output}")
    return 0
