"""The pytest plugin: one test per group when asked for, nothing at all otherwise."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conformance_helpers import ROOT, broken_driver

from sessionlog_spec.suite.groups import SUITE_GROUPS


def _pytest(*args: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *(str(a) for a in args)]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)


def test_without_its_option_the_plugin_adds_no_tests(tmp_path: Path) -> None:
    done = _pytest(tmp_path)
    assert done.returncode == 5, done.stdout  # pytest's "no tests were collected"
    assert "sessionlog" not in done.stdout


def test_the_plugin_registers_its_options() -> None:
    done = _pytest("--help")
    assert "--sessionlog-driver=CMD" in done.stdout


def test_the_plugin_runs_one_test_per_group_against_the_model(tmp_path: Path) -> None:
    # Ten examples: with three, a group whose every drawn rule only builds the session (no exchange)
    # is rightly reported void, which happened about one run in twelve.
    done = _pytest(tmp_path, "--sessionlog-port", "model", "--sessionlog-profile", "dev", "--sessionlog-max-examples", "10")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{len(SUITE_GROUPS)} passed" in done.stdout


def test_the_plugin_fails_the_broken_group_with_its_counterexample(tmp_path: Path) -> None:
    cases, empty = tmp_path / "cases", tmp_path / "empty"
    empty.mkdir()
    done = _pytest(
        empty,
        "--sessionlog-driver", broken_driver("surface_drops_replacements"),
        "--sessionlog-profile", "dev", "--sessionlog-max-examples", "20", "--sessionlog-cases-dir", cases,
        "-k", "surface or header",
    )  # fmt: skip
    assert done.returncode == 1, done.stdout
    assert f"1 failed, 1 passed, {len(SUITE_GROUPS) - 2} deselected" in done.stdout
    assert "sessionlog[surface]" in done.stdout and "counterexample:" in done.stdout
    assert f"--driver '{broken_driver('surface_drops_replacements')}'" in done.stdout, "the replay command is the real one"
    assert list(cases.glob("surface-*.json"))


def test_a_port_that_cannot_start_fails_every_group_with_its_reason_and_no_traceback(tmp_path: Path) -> None:
    driver = tmp_path / "dies.py"
    driver.write_text("import sys\nsys.stderr.write('the driver cannot find its config\\n')\nsys.exit(1)\n", encoding="utf-8")
    empty = tmp_path / "empty"
    empty.mkdir()
    done = _pytest(empty, "--sessionlog-driver", f"{sys.executable} {driver}", "--sessionlog-profile", "dev")
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{len(SUITE_GROUPS)} failed" in done.stdout
    assert done.stdout.count("cannot start the port") >= len(SUITE_GROUPS)
    assert "the driver cannot find its config" in done.stdout
    assert "Traceback" not in done.stdout and "site-packages" not in done.stdout and "_pytest" not in done.stdout
