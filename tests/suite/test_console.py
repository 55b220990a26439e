"""What a person sees of a run: the banner, a heartbeat under ``--quiet``, the replay command to paste, every unexercised name."""

from __future__ import annotations

import io
import shlex
import time
from pathlib import Path

from conformance_helpers import MODEL_DRIVER, broken_driver, case_files, read_json, run_cli
from rich.console import Console

from sessionlog_spec.protocol.messages import Hello
from sessionlog_spec.suite.coverage import GroupCoverage
from sessionlog_spec.suite.output.console import Heartbeat, banner
from sessionlog_spec.suite.profiles import PROFILES
from sessionlog_spec.suite.run import RunOptions


def test_the_heartbeat_beats_naming_the_group_while_a_group_runs() -> None:
    out = io.StringIO()
    coverage = GroupCoverage("session")
    with Heartbeat(Console(file=out, width=200), interval=0.05) as heartbeat:
        heartbeat.group_started("session")
        assert out.getvalue() == "", "a group's start prints nothing"
        coverage.examples, coverage.steps = 3, 41
        heartbeat.example(coverage)
        time.sleep(0.3)  # no example ends meanwhile: the beat must come from the timer, not from progress
    lines = out.getvalue().splitlines()
    beats = [line for line in lines if line.endswith("session: 3 examples, 41 steps")]
    assert len(beats) >= 2 and len(beats) == len(lines), lines


def test_quiet_prints_only_the_banner_while_a_short_run_lasts(tmp_path: Path) -> None:
    checked = run_cli(
        "check", "--driver", MODEL_DRIVER, "--profile", "dev", "--only", "surface,header", "--quiet",
        "--database", tmp_path / "db",
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stderr.splitlines() == ["checking sessionlog-model 1: --only surface, header"], checked.stderr


def test_the_banner_names_what_the_run_checks() -> None:
    hello = Hello("sessionlog-driver/1", "port", "2.0", ("session", "surface", "header", "jsonl"), 1)
    every = RunOptions(PROFILES["dev"])
    assert banner(hello, every) == "checking port 2.0 (session, surface, header, jsonl)"
    only = RunOptions(PROFILES["dev"], only=("storage", "header"))
    assert banner(hello, only) == "checking port 2.0: --only header, storage: not declared in hello"


def test_the_printed_replay_command_is_the_real_one_and_replays(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    driver = broken_driver("surface_drops_replacements")
    checked = run_cli(
        "check", "--driver", driver, "--profile", "dev", "--only", "surface", "--quiet",
        "--cases-dir", cases, "--database", tmp_path / "db", "--max-examples", "30",
    )  # fmt: skip
    assert checked.returncode == 1, checked.stdout + checked.stderr
    [case] = case_files(cases)[:1]
    hints = [line.strip() for line in checked.stdout.splitlines() if line.strip().startswith("replay: ")]
    assert hints, checked.stdout
    command = shlex.split(hints[0].removeprefix("replay: "))
    assert command[:4] == ["python", "-m", "sessionlog_spec", "replay"]
    assert command[command.index("--driver") + 1] == driver
    again = run_cli(*command[3:])
    assert again.returncode == 1 and "+++ port" in again.stdout, again.stdout + again.stderr
    assert Path(command[4]).name == case.name or Path(command[4]) in case_files(cases)


def test_a_partial_run_names_what_it_did_not_exercise(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    checked = run_cli(
        "check", "--driver", MODEL_DRIVER, "--profile", "dev", "--only", "header",
        "--database", tmp_path / "db", "--report", report,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    [line] = [line for line in checked.stdout.splitlines() if line.startswith("not exercised by the groups that ran: ")]
    never = read_json(report)["coverage"]["never_exercised"]
    assert never["invariants"] and never["codes"]
    assert line.split(": ", 1)[1].split(", ") == [*never["invariants"], *never["codes"]]
