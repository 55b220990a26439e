"""The ``storage`` group: a durable store on disk, closed, damaged and killed mid-write (INV-JSONL-11)."""

from __future__ import annotations

import sys
from pathlib import Path

from conformance_helpers import broken_driver, read_json, run_cli

from sessionlog_spec.model.durability import lost_durable_events
from sessionlog_spec.model.event import decode_event
from sessionlog_spec.suite.ports import port_for
from sessionlog_spec.suite.profiles import PROFILES
from sessionlog_spec.suite.run import FAILED, PASSED, RunOptions, run_group

SEQLOG_DRIVER = f"{sys.executable} -m seqlog.driver"


def _storage(driver: str, tmp_path: Path, examples: int) -> tuple[str, dict[str, object], str]:
    port = port_for(driver, 10.0)
    try:
        options = RunOptions(profile=PROFILES["ci"], max_examples=examples, cases_dir=tmp_path / "cases")
        result = run_group("storage", port, port.hello, options)
    finally:
        port.close()
    return result.status, result.coverage.to_json(), result.detail


def test_inv_jsonl_11_seqlog_keeps_every_acknowledged_event_through_crashes_and_damage(tmp_path: Path) -> None:
    status, coverage, detail = _storage(SEQLOG_DRIVER, tmp_path, 40)
    assert status == PASSED, detail
    assert isinstance(coverage["crash_trials"], int) and coverage["crash_trials"] > 0
    assert coverage["durable_lost"] == 0
    rules = coverage["rules"]
    assert isinstance(rules, dict) and rules.get("damage_and_reopen") and rules.get("close_and_reopen")


def test_inv_jsonl_11_a_store_that_acknowledges_before_writing_loses_events_in_a_crash(tmp_path: Path) -> None:
    status, coverage, detail = _storage(broken_driver("storage_acknowledges_early"), tmp_path, 60)
    assert status == FAILED, detail
    assert "acknowledged as durable are not in the file" in detail
    assert isinstance(coverage["durable_lost"], int) and coverage["durable_lost"] > 0


def test_inv_jsonl_11_reopening_a_damaged_store_must_say_what_it_dropped(tmp_path: Path) -> None:
    status, _, detail = _storage(broken_driver("storage_reopen_keeps_nothing"), tmp_path, 60)
    assert status == FAILED and "store_open" in detail and "dropped_torn_tail" in detail, detail


def test_the_in_process_port_runs_storage_without_crash_trials(tmp_path: Path) -> None:
    status, coverage, detail = _storage("python", tmp_path, 15)
    assert status == PASSED, detail
    assert coverage["crash_trials"] == 0  # an in-process port cannot be killed


def test_inv_jsonl_11_lost_events_are_counted_from_the_first_one_lost_or_changed() -> None:
    events = [decode_event({"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}}),
              decode_event({"type": "step/start", "seq": 1, "time": 2, "data": {"turn": 1, "step": 1}})]  # fmt: skip
    assert lost_durable_events(events, events) == 0  # type: ignore[arg-type]
    assert lost_durable_events(events, events[:1]) == 1  # type: ignore[arg-type]
    assert lost_durable_events(events, []) == 2  # type: ignore[arg-type]
    assert lost_durable_events(events[:1], events) == 0  # type: ignore[arg-type]


def test_the_report_carries_the_crash_trials_and_the_lost_count(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    checked = run_cli(
        "check", "--driver", SEQLOG_DRIVER, "--profile", "dev", "--only", "storage", "--max-examples", "20", "--quiet",
        "--report", report, "--cases-dir", tmp_path / "cases", "--database", tmp_path / "db",
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    storage = read_json(report)["groups"]["storage"]
    assert storage["crash_trials"] > 0 and storage["durable_lost"] == 0
