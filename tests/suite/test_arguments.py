"""Bad usage ends before any work, in one line and exit status 2: no traceback, no silent default."""

from __future__ import annotations

import subprocess
import sys

import pytest

from sessionlog_spec.cli import build_parser

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
