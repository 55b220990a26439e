"""Bad usage ends before any work, in one line and exit status 2: no traceback, no silent default."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sessionlog_spec.cli import build_parser
from sessionlog_spec.suite.arguments import output_directory_problem, output_file_problem

BAD_CHECK_ARGUMENTS = [
    ["--timeout", "0"],
    ["--timeout", "-1"],
    ["--timeout", "nan"],
    ["--timeout", "inf"],
    ["--timeout", "soon"],
    ["--max-examples", "0"],
    ["--max-examples", "-5"],
    ["--steps", "0"],
    ["--steps", "many"],
    ["--shrink-seconds", "0"],
]


@pytest.mark.parametrize("bad", BAD_CHECK_ARGUMENTS, ids=" ".join)
def test_a_bad_count_or_duration_is_refused_before_the_run(bad: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["check", "--port", "model", *bad])
    assert exited.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("python -m sessionlog_spec check: error: argument ") and bad[1] in error


@pytest.mark.parametrize("command", ["", "   ", "node 'unbalanced"], ids=repr)
@pytest.mark.parametrize("subcommand", [["check", "--driver"], ["check", "--port"], ["vectors", "run", "--driver"]])
def test_an_empty_or_unbalanced_driver_command_is_refused(command: str, subcommand: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sessionlog_spec", *subcommand, command], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].endswith(("the driver command is empty", "No closing quotation"))


def test_good_values_pass_through() -> None:
    args = build_parser().parse_args(["check", "--port", "model", "--timeout", "0.5", "--max-examples", "3", "--steps", "7"])
    assert (args.timeout, args.max_examples, args.steps) == (0.5, 3, 7)


def test_checking_output_paths_leaves_nothing_behind(tmp_path: Path) -> None:
    assert output_file_problem(tmp_path / "new" / "deeper" / "report.json", "report.json") is None
    assert output_directory_problem(tmp_path / "cases" / "port") is None
    assert output_directory_problem(tmp_path) is None
    assert list(tmp_path.iterdir()) == [], "missing directories are created when the outputs are written, not before"


def test_an_existing_report_may_be_overwritten_but_not_a_directory(tmp_path: Path) -> None:
    existing = tmp_path / "report.json"
    existing.write_text("{}", encoding="utf-8")
    assert output_file_problem(existing, "report.json") is None
    suggested = tmp_path / "junit.xml"
    assert output_file_problem(tmp_path, "junit.xml") == f"{tmp_path} is a directory: give a file path, such as {suggested}"
    assert output_directory_problem(existing) == f"{existing} is a file, not a directory"
