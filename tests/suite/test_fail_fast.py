"""``check --fail-fast``: the groups after the first that fails are not run."""

from __future__ import annotations

from pathlib import Path

import pytest
from conformance_helpers import broken_driver, read_json, run_cli

from sessionlog_spec.suite.run import FAILED, PASSED

ARGS = ("--profile", "dev", "--max-examples", "4", "--steps", "15", "--shrink-seconds", "2", "--quiet", "--seed", "1")


@pytest.mark.parametrize("fail_fast", [True, False])
def test_a_failing_group_ends_the_run_only_under_fail_fast(tmp_path: Path, fail_fast: bool) -> None:
    """The surface group fails on a port that drops replacements; the header group comes after it."""
    report = tmp_path / "report.json"
    flags = ["--fail-fast"] if fail_fast else []
    checked = run_cli(
        "check", "--driver", broken_driver("surface_drops_replacements"), "--only", "surface,header", *ARGS,
        "--cases-dir", tmp_path / "cases", "--report", report, *flags,
    )  # fmt: skip
    assert checked.returncode == 1, checked.stdout + checked.stderr
    groups = read_json(report)["groups"]
    assert groups["surface"]["status"] == FAILED
    if fail_fast:
        assert "header" not in groups
        assert "not run: header" in checked.stderr
    else:
        assert groups["header"]["status"] == PASSED


def test_a_passing_run_under_fail_fast_runs_every_group(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    checked = run_cli(
        "check", "--port", "python", "--only", "surface,header", *ARGS, "--fail-fast",
        "--cases-dir", tmp_path / "cases", "--report", report,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert {g: s["status"] for g, s in read_json(report)["groups"].items()} == {"surface": PASSED, "header": PASSED}


def test_fail_fast_with_jobs_is_refused_in_one_line() -> None:
    checked = run_cli("check", "--port", "python", "--fail-fast", "--jobs", "2")
    assert checked.returncode == 2
    assert checked.stderr.strip().splitlines() == [
        "--fail-fast runs the groups one after another: it cannot be combined with --jobs"
    ]
