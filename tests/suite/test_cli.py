"""The command line: check's reports and verdicts, expected failures, replay, check-log, sessionlog-check."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conformance_helpers import ROOT, broken_driver, case_files, read_json, run_cli

from sessionlog_spec.model.load import save_session
from sessionlog_spec.model.session import EMPTY_SESSION
from sessionlog_spec.protocol.model_driver import DEFAULT_HEADER, ModelDriver
from sessionlog_spec.suite.agent.builder import realistic_session
from sessionlog_spec.suite.commands import NO_PORT
from sessionlog_spec.suite.groups import SUITE_GROUPS

QUICK = ("--profile", "dev", "--max-examples", "3", "--steps", "15", "--quiet")


def test_check_against_the_model_passes_and_writes_both_reports(tmp_path: Path) -> None:
    report, junit = tmp_path / "report.json", tmp_path / "junit.xml"
    checked = run_cli("check", "--port", "model", *QUICK, "--report", report, "--junit", junit)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "PASSED" in checked.stdout
    document = read_json(report)
    assert document["verdict"] == "passed"
    assert set(document["groups"]) == set(SUITE_GROUPS)
    for group in document["groups"].values():
        assert group["status"] == "passed" and group["steps"] > 0 and group["invariants"]
    suite = ET.parse(junit).getroot()
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == (str(len(SUITE_GROUPS)), "0", "0")


def test_only_restricts_the_groups(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    checked = run_cli("check", "--port", "model", *QUICK, "--only", "repair,compaction", "--report", report)
    assert checked.returncode == 0
    assert set(read_json(report)["groups"]) == {"repair", "compaction"}


def test_a_seed_makes_the_run_reproducible(tmp_path: Path) -> None:
    counts = []
    for run in ("a", "b"):
        report = tmp_path / f"{run}.json"
        assert run_cli("check", "--port", "model", *QUICK, "--only", "header", "--seed", "7", "--report", report).returncode == 0
        group = read_json(report)["groups"]["header"]
        counts.append((group["examples"], group["steps"], group["rules"], group["invariants"]))
    assert counts[0] == counts[1]


def _surface_failure(tmp_path: Path, *extra: str | Path) -> subprocess.CompletedProcess[str]:
    return run_cli(
        "check", "--driver", broken_driver("surface_drops_replacements"), "--profile", "dev", "--only", "surface",
        "--quiet", "--cases-dir", tmp_path / "cases", "--database", tmp_path / "db", *extra,
    )  # fmt: skip


@pytest.mark.parametrize(
    "entry",
    [
        {"group": "surface", "reason": "replacements are not reported yet"},
        {"invariant": "INV-SURF-12", "reason": "fold_surface is incomplete"},
        {"case": "surface/fold_surface/wrong-result", "reason": "known"},
    ],
    ids=["group", "invariant", "case"],
)
def test_an_expected_failure_is_reported_but_does_not_fail_the_run(tmp_path: Path, entry: dict[str, str]) -> None:
    expected, report = tmp_path / "expected.json", tmp_path / "report.json"
    expected.write_text(json.dumps({"expected_failures": [entry]}), encoding="utf-8")
    checked = _surface_failure(tmp_path, "--expect-fail", expected, "--report", report)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    group = read_json(report)["groups"]["surface"]
    assert group["status"] == "failed"
    assert group["expected_failure"]["reason"] == entry["reason"]
    assert case_files(tmp_path / "cases"), "an expected failure still writes its counterexample"


def test_an_expected_failure_that_now_passes_is_stale_and_fails_the_run(tmp_path: Path) -> None:
    expected = tmp_path / "expected.toml"
    expected.write_text('[[expected_failure]]\ngroup = "surface"\nreason = "was broken once"\n', encoding="utf-8")
    checked = run_cli("check", "--port", "model", *QUICK, "--only", "surface", "--expect-fail", expected)
    assert checked.returncode == 1
    assert "stale expected failure (group surface)" in checked.stdout


def test_an_optional_expected_failure_is_never_stale_but_still_excuses(tmp_path: Path) -> None:
    expected = tmp_path / "expected.json"
    expected.write_text(json.dumps([{"group": "surface", "reason": "rare", "optional": True}]), encoding="utf-8")
    passing = run_cli("check", "--port", "model", *QUICK, "--only", "surface", "--expect-fail", expected)
    assert passing.returncode == 0, passing.stdout
    assert "stale" not in passing.stdout
    assert _surface_failure(tmp_path, "--expect-fail", expected).returncode == 0
    expected.write_text(json.dumps([{"group": "surface", "reason": "rare", "optional": "yes"}]), encoding="utf-8")
    assert run_cli("check", "--port", "model", *QUICK, "--expect-fail", expected).returncode == 2


def test_an_expected_failure_for_a_group_that_did_not_run_is_not_stale(tmp_path: Path) -> None:
    expected = tmp_path / "expected.json"
    expected.write_text(json.dumps([{"group": "legacy", "reason": "not this run"}]), encoding="utf-8")
    checked = run_cli("check", "--port", "model", *QUICK, "--only", "surface", "--expect-fail", expected)
    assert checked.returncode == 0, checked.stdout


def test_a_malformed_expected_failures_file_is_a_usage_error(tmp_path: Path) -> None:
    expected = tmp_path / "expected.json"
    expected.write_text(json.dumps([{"group": "surface"}]), encoding="utf-8")
    checked = run_cli("check", "--port", "model", *QUICK, "--expect-fail", expected)
    assert checked.returncode == 2
    assert "reason" in checked.stderr


def test_replay_prints_a_diff_and_exits_1_while_the_port_still_fails(tmp_path: Path) -> None:
    assert _surface_failure(tmp_path).returncode == 1
    [case] = case_files(tmp_path / "cases")
    replayed = run_cli("replay", case, "--driver", broken_driver("surface_drops_replacements"))
    assert replayed.returncode == 1
    assert '+    "replacements": []' in replayed.stdout, replayed.stdout
    assert run_cli("replay", case, "--port", "model").returncode == 0


@pytest.mark.parametrize("command", [("check", *QUICK), ("replay", "reports/cases/any.json")], ids=["check", "replay"])
def test_naming_no_port_is_a_usage_error(command: tuple[str, ...]) -> None:
    done = run_cli(*command)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [NO_PORT]


def test_the_sessionlog_check_script_runs_check(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "sessionlog-check"
    if not script.exists():
        pytest.skip("the console script is not installed in this environment")
    report = tmp_path / "report.json"
    done = subprocess.run(
        [str(script), "--port", "model", *QUICK, "--only", "repair", "--report", str(report)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert read_json(report)["groups"]["repair"]["status"] == "passed"


# -- check-log ----------------------------------------------------------------------------------------


def _stored(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_text(text, encoding="utf-8")
    return path


def _saved_session() -> str:
    builder = realistic_session(turns=2)
    return save_session(ModelDriver().header, builder.state)


def test_check_log_accepts_a_valid_log(tmp_path: Path) -> None:
    text = _saved_session()
    checked = run_cli("check-log", _stored(tmp_path, text))
    assert checked.returncode == 0
    assert checked.stdout.splitlines()[-2].endswith(f": ok: {text.count(chr(10))} line(s) read, none dropped")
    counts = "1 clean, 0 with dropped lines, 0 with violations, 0 unreadable"
    assert checked.stdout.splitlines()[-1].endswith(f"1 log(s) checked: {counts}")


def test_check_log_notes_a_torn_tail_and_an_open_turn_without_failing(tmp_path: Path) -> None:
    text = _saved_session()
    lines = text.split("\n")
    crashed = "\n".join(lines[:9]) + "\n" + lines[9][:20]
    checked = run_cli("check-log", _stored(tmp_path, crashed))
    assert checked.returncode == 0, checked.stdout
    assert "torn final line" in checked.stdout
    assert "repair closer" in checked.stdout


def test_check_log_names_committed_damage_and_continues_after_the_first_violation(tmp_path: Path) -> None:
    lines = _saved_session().split("\n")
    lines[3] = lines[3][:15]  # line 4 cut short: malformed JSON, committed by the turn/ends after it
    later = json.loads(lines[8])
    later["seq"] = 99  # line 9 out of position
    lines[8] = json.dumps(later)
    lines[11] = lines[11] + "\r"  # line 12 written with CRLF: JSON whitespace, read as any other line
    checked = run_cli("check-log", _stored(tmp_path, "\n".join(lines)))
    assert checked.returncode == 1
    found = [line.split(": ")[0].rsplit(":", 1)[1] for line in checked.stdout.splitlines() if "JSONL_" in line or "SEQ_" in line]
    assert found == ["4", "9"], checked.stdout
    assert "proves it was committed" in checked.stdout
    assert "SEQ_NOT_CONTIGUOUS" in checked.stdout and "state-free check after the first violation" in checked.stdout


def test_check_log_names_the_line_of_a_contract_violation(tmp_path: Path) -> None:
    lines = _saved_session().split("\n")
    event = json.loads(lines[1])
    assert event["type"] == "turn/start"
    event["data"]["turn"] = 5
    lines[1] = json.dumps(event)
    checked = run_cli("check-log", _stored(tmp_path, "\n".join(lines)))
    assert checked.returncode == 1
    assert ":2: TURN_NUMBER:" in checked.stdout


def test_check_log_lists_every_refused_legacy_form_of_a_v0_log(tmp_path: Path) -> None:
    header = {**DEFAULT_HEADER, "version": 0}
    events = [
        {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1, "trigger": "user"}},
        {"type": "mode/set", "seq": 1, "time": 0, "data": {"mode": "plan"}},
        {"type": "session/title", "seq": 2, "time": 0, "data": {"title": "t"}},
        {"type": "request/header-delta", "seq": 3, "time": 0, "data": {"delta": {}}},
    ]
    text = "".join(json.dumps(line) + "\n" for line in [header, *events])
    checked = run_cli("check-log", _stored(tmp_path, text))
    assert checked.returncode == 1
    assert ":3: LEGACY_MODE_SET:" in checked.stdout
    assert ":5: LEGACY_HEADER_DELTA:" in checked.stdout


def test_check_log_converts_a_clean_v0_log(tmp_path: Path) -> None:
    header = {**DEFAULT_HEADER, "version": 0}
    events = [
        {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1, "trigger": {"kind": "user"}}},
        {"type": "turn/end", "seq": 1, "time": 0, "data": {"turn": 1, "reason": {"kind": "disposed"}}},
    ]
    checked = run_cli("check-log", _stored(tmp_path, "".join(json.dumps(x) + "\n" for x in [header, *events])))
    assert checked.returncode == 0, checked.stdout
    assert "v0-to-v1 edge converts it" in checked.stdout


def test_check_log_refuses_an_unknown_format_version(tmp_path: Path) -> None:
    text = save_session(ModelDriver().header, EMPTY_SESSION).replace('"version":1', '"version":4')
    checked = run_cli("check-log", _stored(tmp_path, text))
    assert checked.returncode == 1
    assert ":1: FORMAT_VERSION_UNSUPPORTED" in checked.stdout


# -- small things of the command line -----------------------------------------------------------------------


@pytest.mark.parametrize("only", ["", ",", " , "], ids=repr)
def test_only_naming_no_group_is_refused_like_an_empty_driver(only: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sessionlog_spec", "check", "--port", "model", "--only", only],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"python -m sessionlog_spec check: error: argument --only: {only!r} names no group; choose from {', '.join(SUITE_GROUPS)}"
    )


def test_usage_names_the_command_as_it_was_invoked() -> None:
    script = Path(sys.executable).parent / "sessionlog-check"
    if not script.exists():
        pytest.skip("the console script is not installed in this environment")
    invocations = (([str(script)], "sessionlog-check"), ([sys.executable, "-m", "sessionlog_spec"], "python -m sessionlog_spec"))
    for command, program in invocations:
        done = subprocess.run([*command, "check-log"], capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 2
        assert done.stderr.startswith(f"usage: {program} check-log "), done.stderr
        assert done.stderr.splitlines()[-1].startswith(f"{program} check-log: error: ")


def test_check_leaves_no_hypothesis_folder_in_the_working_directory(tmp_path: Path) -> None:
    work, cache = tmp_path / "work", tmp_path / "cache"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("HYPOTHESIS_STORAGE_DIRECTORY", "SESSIONLOG_DATABASE")}
    env["XDG_CACHE_HOME"] = str(cache)
    done = subprocess.run(
        [sys.executable, "-m", "sessionlog_spec", "check", "--port", "model", *QUICK, "--only", "header"],
        cwd=work, env=env, capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert list(work.iterdir()) == [], "nothing of Hypothesis's in the working directory"
    assert any((cache / "sessionlog-spec" / "examples").iterdir()), "the example database is in the user's cache"
    assert (cache / "sessionlog-spec" / "hypothesis").is_dir(), "and Hypothesis's own files beside it"
    asked = subprocess.run(
        [sys.executable, "-m", "sessionlog_spec", "check", "--port", "model", *QUICK, "--only", "header", "--database", "db"],
        cwd=work, env=env, capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    assert asked.returncode == 0, asked.stdout + asked.stderr
    assert [p.name for p in work.iterdir()] == ["db"], "a database asked for in the working directory is put there"


def test_every_python_driver_the_readmes_show_names_its_interpreter() -> None:
    """A bare ``python`` runs whichever interpreter comes first on PATH, which may lack the port."""
    shown = []
    for readme in (ROOT / "README.md", ROOT / "ports" / "python" / "README.md"):
        for quote, command in re.findall(r"""--driver\s+(["'])(.+?)\1""", readme.read_text(encoding="utf-8")):
            shown.append(command)
            assert shlex.split(command)[0] not in ("python", "python3"), f"{readme.name}: --driver {quote}{command}{quote}"
    assert any("seqlog.driver" in command for command in shown), shown
