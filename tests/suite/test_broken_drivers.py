"""Deliberately broken drivers are caught: the ci profile fails them with a counterexample that replays.

Each driver under ``tests/suite/broken/`` breaks one invariant of one group and runs as a
subprocess, exactly as a real port would.  A representative subset runs the ci profile unchanged;
the slower ones run it with a shorter shrinking budget so the project's own test run stays short
(their counterexamples are then less minimal, but still replay).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conformance_helpers import MODEL_DRIVER, broken_driver, case_files, read_json, run_cli

BROKEN_DRIVERS = [
    # (driver, group it breaks, invariant it breaks, extra check options)
    pytest.param("surface_drops_replacements", "surface", "INV-SURF-12", (), id="surface"),
    pytest.param("legacy_accepts_delta", "legacy", "INV-LEGACY-1", (), id="legacy"),
    pytest.param("repair_no_step_end", "repair", "INV-REPAIR-2", (), id="repair"),
    pytest.param("jsonl_drops_bad_line", "jsonl", "INV-JSONL-4", ("--shrink-seconds", "15"), id="jsonl"),
    pytest.param("session_inverted_range", "session", "INV-SURF-4", ("--shrink-seconds", "15"), id="session"),
    pytest.param("header_never_series", "header", "INV-HDR-11", ("--shrink-seconds", "15"), id="header"),
    pytest.param("compaction_all_balanced", "compaction", "INV-COMPACT-2", ("--shrink-seconds", "15"), id="compaction"),
]


@pytest.mark.parametrize(("driver", "group", "invariant", "extra"), BROKEN_DRIVERS)
def test_the_ci_profile_catches_a_broken_driver_and_the_counterexample_replays(
    tmp_path: Path, driver: str, group: str, invariant: str, extra: tuple[str, ...]
) -> None:
    cases, report = tmp_path / "cases", tmp_path / "report.json"
    command = broken_driver(driver)
    checked = run_cli(
        "check", "--driver", command, "--profile", "ci", "--only", group, "--quiet",
        "--cases-dir", cases, "--database", tmp_path / "db", "--report", report, *extra,
    )  # fmt: skip
    assert checked.returncode == 1, checked.stdout + checked.stderr
    document = read_json(report)
    assert document["verdict"] == "failed"
    assert document["groups"][group]["status"] == "failed"
    found = [(path, read_json(path)) for path in case_files(cases)]
    assert found and all(stored["group"] == group for _, stored in found)
    case, stored = next(((p, s) for p, s in found if invariant in s["invariants"]), found[0])
    assert invariant in stored["invariants"], stored["invariants"]
    assert stored["exchanges"], "a counterexample holds the requests that reproduce it"

    again = run_cli("replay", case, "--driver", command)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "--- model" in again.stdout and "+++ port" in again.stdout

    fixed = run_cli("replay", case, "--driver", MODEL_DRIVER)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "agrees with the model" in fixed.stdout


def test_a_driver_that_crashes_is_a_port_fault_with_a_replayable_case(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    command = broken_driver("session_dies_on_seed")
    checked = run_cli(
        "check", "--driver", command, "--profile", "ci", "--only", "session", "--quiet",
        "--cases-dir", cases, "--database", tmp_path / "db", "--shrink-seconds", "10",
    )  # fmt: skip
    assert checked.returncode == 1
    [case] = [path for path in case_files(cases) if read_json(path)["kind"] == "port-fault"]
    stored = read_json(case)
    assert "seeding is not implemented" in stored["failing"]["actual"]["fault"]["stderr_tail"]
    again = run_cli("replay", case, "--driver", command)
    assert again.returncode == 1
    assert "driver stderr" in again.stdout


def test_a_driver_that_implements_nothing_gives_a_void_run(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    checked = run_cli("check", "--driver", broken_driver("nothing"), "--profile", "ci", "--quiet", "--report", report)
    assert checked.returncode == 1
    assert "VOID" in checked.stdout
    document = read_json(report)
    assert document["verdict"] == "void"
    assert {g["status"] for g in document["groups"].values()} == {"unsupported"}


def test_a_driver_that_answers_the_same_requests_two_ways_is_named_nondeterministic(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    checked = run_cli(
        "check", "--driver", broken_driver("session_answers_vary"), "--profile", "dev", "--only", "session", "--quiet",
        "--cases-dir", tmp_path / "cases", "--database", tmp_path / "db", "--report", report, "--shrink-seconds", "10",
    )  # fmt: skip
    assert checked.returncode == 1, checked.stdout + checked.stderr
    document = read_json(report)
    assert document["verdict"] == "failed", document["reasons"]
    session = document["groups"]["session"]
    assert session["status"] == "error"
    assert "answered the same request differently" in session["detail"]
    assert '"op":"state"' in session["detail"] and "reset" in session["detail"]
    assert "VOID" not in checked.stdout and "Flaky" not in checked.stdout + checked.stderr


def test_a_deterministic_driver_is_never_called_nondeterministic(tmp_path: Path) -> None:
    """The same check against the model driver: nothing in the run is taken for a conflicting answer."""
    report = tmp_path / "report.json"
    checked = run_cli(
        "check", "--driver", MODEL_DRIVER, "--profile", "dev", "--only", "session,jsonl", "--quiet",
        "--database", tmp_path / "db", "--report", report,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert {g["status"] for g in read_json(report)["groups"].values() if g["status"] != "unsupported"} == {"passed"}
