"""The keyless ACP snapshot harness: committed fixtures replay, conform, and re-record identically.

The fixture tests read ``fixtures/acp/`` only; the determinism test spawns real agent processes over
ACP for a few scenarios (twice) and so takes a few seconds per scenario, most of it the agent
importing the ACP SDK.  Every fixture log is valid by the model (payloads and relationships) and,
when ``node`` and ``ports/dsh-format/node_modules`` are present, by the released upstream validators
(``tools/released_oracle/oracle.mjs``).
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any, cast

import pytest
from acp import Client
from released_oracle.check_generated import ReleasedOracle, acp_logs, judge, unavailable_reason

import seqlog
from acp_snapshots import FIXTURES_DIR
from acp_snapshots.__main__ import main as harness_main
from acp_snapshots.agent import ScriptedAgent
from acp_snapshots.client import record_many
from acp_snapshots.fixtures import EVENTS, FILES, TRANSCRIPT, fixture_files, model_requests, read_fixture, read_transcript
from acp_snapshots.replay import replay_fixture
from acp_snapshots.scenarios import SCENARIOS, Prompt, Reply, Restart, Scenario, ScenarioError, check_scenario
from acp_snapshots.tools import INITIAL_MODE, MODE_OF_SANDBOX, MODES, assemble_header
from sessionlog_spec.model.load import load_session
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.protocol.model_driver import ModelDriver

NAMES = sorted(SCENARIOS)
DETERMINISM_SUBSET = ("crash-resume", "sandbox-mode-switch")
"""Recorded twice by the determinism test: two agent processes with a kill and a session load, and a mode switch."""


def events_of(name: str) -> list[dict[str, Any]]:
    lines = (FIXTURES_DIR / name / EVENTS).read_text().splitlines()
    return [json.loads(line) for line in lines[1:]]


@pytest.mark.parametrize("name", NAMES)
def test_replay_passes_on_committed_fixture(name: str) -> None:
    assert (FIXTURES_DIR / name).is_dir(), f"no fixture for {name}: run `python -m acp_snapshots record {name}`"
    problems = replay_fixture(FIXTURES_DIR / name)
    assert problems == [], "\n".join(problems)
    assert len(model_requests(read_transcript(FIXTURES_DIR / name))) > 0


def test_replay_cli_passes() -> None:
    assert harness_main(["replay"]) == 0


@pytest.mark.parametrize("name", NAMES)
def test_fixture_log_conforms(name: str) -> None:
    text = (FIXTURES_DIR / name / EVENTS).read_text()
    loaded = load_session(text)
    assert not isinstance(loaded, Violation), loaded
    assert loaded.closers == () and not loaded.dropped_torn_tail
    reply = ModelDriver()({"id": 1, "op": "load", "jsonl": text})
    assert reply["ok"] is True, reply
    assert reply["result"]["closers"] == 0
    assert len(seqlog.read_session(FIXTURES_DIR / name).session.events) == len(loaded.state.events)


def test_fixture_logs_are_valid_by_the_released_validators() -> None:
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(f"the released oracle cannot run: {reason}")
    logs = acp_logs()
    assert sorted(log.source for log in logs) == sorted(f"acp:{name}" for name in NAMES)
    with ReleasedOracle() as oracle:
        report = judge(oracle, logs, [])
    assert report.clean, "\n".join(report.problems())
    assert {"compaction/start", "compaction/summary", "compaction/end", "compaction/prune", "sandbox/mode"} <= set(report.events)


def test_each_mode_records_a_released_sandbox_policy() -> None:
    assert {mode.sandbox for mode in MODES.values()} <= {"read-only", "workspace-write", "danger-full-access"}
    assert {MODE_OF_SANDBOX[mode.sandbox] for mode in MODES.values()} == set(MODES)
    assert INITIAL_MODE in MODES


class _SilentClient:
    """Takes the notifications a session load sends, and nothing else."""

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    async def session_update(self, session_id: str, update: Any) -> None:
        return None


@pytest.mark.parametrize(("lines", "mode"), [(14, "sandbox"), (None, "default")])
def test_a_loaded_session_resumes_in_the_mode_of_its_latest_switch(tmp_path: Path, lines: int | None, mode: str) -> None:
    scenario = SCENARIOS["sandbox-mode-switch"]
    kept = (FIXTURES_DIR / scenario.name / EVENTS).read_text().splitlines(keepends=True)[:lines]
    assert json.loads(kept[-1])["type"] in ("sandbox/mode", "turn/end")
    (tmp_path / scenario.session_id).mkdir()
    (tmp_path / scenario.session_id / EVENTS).write_text("".join(kept))
    agent = ScriptedAgent(scenario, tmp_path)
    agent.on_connect(cast(Client, _SilentClient()))
    try:
        response = asyncio.run(agent.load_session(cwd="/workspace", session_id=scenario.session_id))
        assert response.modes is not None and response.modes.current_mode_id == mode
        assert agent.loops[scenario.session_id].mode == MODES[mode]
    finally:
        agent.close()


def test_mode_switch_writes_a_full_change_header() -> None:
    events = events_of("sandbox-mode-switch")
    switches = [e for e in events if e["type"] == "sandbox/mode"]
    assert [e["data"] for e in switches] == [{"mode": MODES["sandbox"].sandbox}, {"mode": MODES["default"].sandbox}]
    switch = switches[0]
    change = next(e for e in events if e["type"] == "request/header" and e["seq"] > switch["seq"])
    assert change["data"]["reason"] == "change"
    header = change["data"]["header"]
    sandbox = MODES["sandbox"]
    assert header == assemble_header(sandbox), "the snapshot is the whole envelope, not a delta"
    assert header["system"] == sandbox.system
    assert "SANDBOX MODE" in header["system"] and "\n" in header["system"]
    assert [t["name"] for t in header["tools"]] == list(sandbox.tools)
    assert header["config"]["provider"] and header["config"]["model"]
    assert all("parameters" in t and "description" in t for t in header["tools"])
    reasons = [e["data"]["reason"] for e in events if e["type"] == "request/header"]
    assert reasons == ["initial", "change", "change"]
    assert not any(e["type"] == "request/header-delta" for e in events)


def test_crash_fixture_repairs_then_resumes() -> None:
    events = events_of("crash-resume")
    kinds = [e["type"] for e in events]
    interrupted = next(
        i for i, e in enumerate(events) if e["type"] == "turn/end" and e["data"]["reason"]["kind"] == "interrupted"
    )
    result, step_end, turn_end = events[interrupted - 2 : interrupted + 1]
    call = events[interrupted - 3]
    assert call["type"] == "tool/call" and call["data"]["callId"] == "call-deploy"
    assert result["type"] == "tool/result" and result["data"]["error"]["code"] == "TOOL_OUTCOME_UNKNOWN"
    assert result["sourceEventSeqs"] == [call["seq"]]
    assert step_end["type"] == "step/end" and turn_end is events[interrupted]
    assert result["time"] == step_end["time"] == turn_end["time"] == call["time"], "closers reuse the last event's time"
    after = kinds.index("request/header", interrupted)
    assert events[after]["data"]["reason"] == "resume"
    assert kinds[interrupted + 1 : after] == ["turn/start", "user/message", "step/start"]
    transcript = read_transcript(FIXTURES_DIR / "crash-resume")
    assert any("SIGKILL" in entry.get("note", "") for entry in transcript)
    loads = [e for e in transcript if e.get("to") == "agent" and e["msg"].get("method") == "session/load"]
    assert len(loads) == 1 and loads[0]["conn"] == 2


def test_other_scenarios_cover_their_features() -> None:
    compaction = events_of("compaction")
    lifecycle = [e for e in compaction if e["type"].startswith("compaction/")]
    replace = next(e for e in compaction if e["type"] == "user/message" and e["surfaceOp"] != "append")
    start, summary, end = lifecycle
    assert [start["type"], summary["type"], end["type"]] == ["compaction/start", "compaction/summary", "compaction/end"]
    assert start["seq"] < summary["seq"] < replace["seq"] < end["seq"]
    compaction_id = start["data"]["compactionId"]
    assert summary["data"]["compactionId"] == end["data"]["compactionId"] == compaction_id
    assert replace["data"]["source"] == {"kind": "plugin", "plugin": "compact", "compactionId": compaction_id}
    owner = next(e for e in reversed(compaction[: start["seq"]]) if e["type"] == "turn/start")["data"]["turn"]
    assert start["data"]["turn"] == end["data"]["turn"] == owner
    assert replace["sourceEventSeqs"] == summary["data"]["shadowedSeqs"]
    assert summary["data"]["shadowedRange"] == {"start": replace["surfaceOp"]["start"], "end": replace["surfaceOp"]["end"]}
    rewritten = events_of("tool-result-rewrite")
    rewrite = next(e for e in rewritten if e["type"] == "tool/result" and e["surfaceOp"] != "append")
    assert rewrite["surfaceOp"]["start"] == rewrite["surfaceOp"]["end"] == rewrite["sourceEventSeqs"][0]
    prune = rewritten[rewrite["seq"] - 1]
    assert prune["type"] == "compaction/prune"
    assert prune["data"]["shadowedSeqs"] == rewrite["sourceEventSeqs"]
    series = [e["data"] for e in events_of("message-series") if e["type"] == "request/header"]
    assert [(d["reason"], d.get("startsSeries", False)) for d in series] == [
        ("initial", False),
        ("series", False),
        ("change", True),
    ]
    plain = events_of("plain-multi-turn")
    assert any(e["type"] == "assistant/message" and e["data"]["message"]["content"] == [] for e in plain)


def _tampered_copy(tmp_path: Path, name: str) -> Path:
    copy = tmp_path / name
    shutil.copytree(FIXTURES_DIR / name, copy)
    return copy


def test_replay_reports_a_log_that_does_not_reconstruct(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = _tampered_copy(tmp_path, "tool-calls")
    text = (copy / EVENTS).read_text()
    assert "The division test fails. Please fix it." in text
    (copy / EVENTS).write_text(text.replace("The division test fails. Please fix it.", "Please fix it."))
    problems = replay_fixture(copy)
    assert problems and all("does not reconstruct" in p for p in problems)
    assert "-          \"text\": \"The division test fails. Please fix it.\"" in problems[0]
    assert harness_main(["replay", "--fixtures", str(tmp_path), "tool-calls"]) == 1
    assert "FAIL tool-calls" in capsys.readouterr().out


def test_replay_reports_a_header_that_was_not_sent(tmp_path: Path) -> None:
    copy = _tampered_copy(tmp_path, "sandbox-mode-switch")
    lines = (copy / TRANSCRIPT).read_text().splitlines()
    entries = [json.loads(line) for line in lines]
    request = next(e for e in entries if e["msg"].get("params", {}).get("headerEvent", {}) and e["msg"]["params"]["turn"] == 2)
    request["msg"]["params"]["header"]["system"] = MODES["default"].system
    (copy / TRANSCRIPT).write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries))
    problems = replay_fixture(copy)
    assert any("request 3 (turn 2, step 1)" in p and "SANDBOX MODE" in p for p in problems), problems


def test_scenario_check_refuses_a_script_that_ends_early() -> None:
    for scenario in SCENARIOS.values():
        check_scenario(scenario)
    early = Scenario("early", "", (Prompt("hi", (Reply(text="done"), Reply(text="again"))),))
    with pytest.raises(ScenarioError, match="only the last reply"):
        check_scenario(early)
    unkilled = Scenario("k", "", (Prompt("hi", (Reply(text="done"),), kill_during="nope"), Restart()))
    with pytest.raises(ScenarioError, match="never calls"):
        check_scenario(unkilled)


def test_recording_is_deterministic_and_matches_the_fixtures(tmp_path: Path) -> None:
    scenarios = [SCENARIOS[name] for name in DETERMINISM_SUBSET]
    runs = [asyncio.run(record_many(scenarios, tmp_path / f"run-{i}", parallel=2)) for i in (1, 2)]
    for scenario in scenarios:
        first, second = (fixture_files(scenario, run[scenario.name]) for run in runs)
        assert set(first) == set(FILES)
        assert first == second, f"{scenario.name}: two recordings differ"
        committed = read_fixture(FIXTURES_DIR / scenario.name)
        assert first == committed, (
            f"{scenario.name}: a fresh recording differs from fixtures/acp/{scenario.name}; "
            "if the change is intended, run `python -m acp_snapshots refresh` and review its diff"
        )
