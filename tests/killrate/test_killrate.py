"""The mutant catalogue: well-formed, every patch changes seqlog, and the suite kills a representative mutant."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

import killrate.run as runner
from killrate.inprocess import probe_both, run_probe
from killrate.mutants import BLIND, BY_NAME, CANARY, CATALOGUE, TUNED, Mutant
from killrate.run import (
    ERROR,
    KILLED,
    PASSED,
    SURVIVED,
    KillRun,
    Outcome,
    RunConfig,
    _found_seconds,
    check,
    check_command,
    run_dirs,
)
from sessionlog_spec.protocol.messages import GROUPS
from sessionlog_spec.registry import BY_ID
from sessionlog_spec.suite.groups import SUITE_GROUPS


def _seqlog_bindings() -> dict[tuple[str, str], int]:
    """Every attribute of every seqlog module and class, by identity, to detect a patch left behind."""
    seen: dict[tuple[str, str], int] = {}
    for name, module in list(sys.modules.items()):
        if name != "seqlog" and not name.startswith("seqlog."):
            continue
        for attr, value in vars(module).items():
            seen[(name, attr)] = id(value)
            if isinstance(value, type) and value.__module__ == name:
                for member, inner in vars(value).items():
                    seen[(f"{name}.{attr}", member)] = id(inner)
    return seen


def test_catalogue_has_at_least_thirty_mutants() -> None:
    assert len(CATALOGUE) >= 30
    assert len({m.name for m in CATALOGUE}) == len(CATALOGUE)
    assert CANARY not in CATALOGUE


@pytest.mark.parametrize("mutant", [*CATALOGUE, CANARY], ids=lambda m: m.name)
def test_mutant_names_an_existing_invariant_and_a_suite_group(mutant: Mutant) -> None:
    assert mutant.invariant in BY_ID, f"{mutant.name} names unknown invariant {mutant.invariant}"
    assert mutant.group in GROUPS
    assert mutant.description and mutant.description != mutant.name
    assert mutant.target.startswith("seqlog.")


@pytest.mark.parametrize("mutant", [*CATALOGUE, CANARY], ids=lambda m: m.name)
def test_mutant_patch_changes_seqlog_behaviour_and_is_undone(mutant: Mutant) -> None:
    before = _seqlog_bindings()
    original, mutated = probe_both(mutant)
    assert original != mutated, f"{mutant.name}: the probe cannot tell the mutant from seqlog"
    assert run_probe(mutant.probe) == original, f"{mutant.name}: seqlog behaves differently after the patch was undone"
    assert _seqlog_bindings() == before


def _outcome(name: str, status: str) -> Outcome:
    return Outcome(name, None, "", None, ["session"], status)


@pytest.mark.parametrize(
    ("baseline", "canary", "verdict"),
    [
        (PASSED, KILLED, "all-killed"),
        (KILLED, KILLED, "void"),  # the unmutated port failed
        (ERROR, KILLED, "void"),
        (PASSED, SURVIVED, "void"),  # the canary survived
        (PASSED, ERROR, "void"),
    ],
)
def test_run_is_void_unless_the_port_passes_and_the_canary_dies(baseline: str, canary: str, verdict: str) -> None:
    run = KillRun(RunConfig(), _outcome("none", baseline), _outcome(CANARY.name, canary), [_outcome("m", KILLED)], 1.0)
    assert run.verdict == verdict
    assert bool(run.void_reasons) == (verdict == "void")


def test_each_half_of_the_catalogue_has_its_own_rate_and_median_time_to_kill() -> None:
    tuned = [dataclasses.replace(_outcome(f"t{i}", KILLED), half=TUNED, seconds=s) for i, s in enumerate((4.0, 10.0, 30.0))]
    blind = [
        dataclasses.replace(_outcome("b1", KILLED), half=BLIND, seconds=8.0),
        dataclasses.replace(_outcome("b2", SURVIVED), half=BLIND),
    ]
    run = KillRun(RunConfig(), _outcome("none", PASSED), _outcome(CANARY.name, KILLED), [*tuned, *blind], 1.0)
    halves = run.totals()["halves"]
    assert (halves[TUNED]["killed"], halves[TUNED]["kill_rate"], halves[TUNED]["median_kill_seconds"]) == (3, 1.0, 10.0)
    assert (halves[BLIND]["killed"], halves[BLIND]["kill_rate"], halves[BLIND]["median_kill_seconds"]) == (1, 0.5, 8.0)
    assert run.totals()["kill_rate"] == 0.8


def test_survivor_makes_the_run_not_green() -> None:
    run = KillRun(RunConfig(), _outcome("none", PASSED), _outcome(CANARY.name, KILLED), [_outcome("m", SURVIVED)], 1.0)
    assert run.verdict == "survivors"
    assert run.totals()["kill_rate"] == 0.0


def test_suite_passes_seqlog_and_kills_a_representative_mutant(tmp_path: Path) -> None:
    """End to end with the dev profile: the control passes the surface group, the mutant dies in it."""
    config = RunConfig(profile="dev", seed=1, work=tmp_path, snapshot=False)
    control = check(config, "none", ["surface"], None)
    assert control.status == PASSED, control.detail
    mutant = BY_NAME["append_placed_at_head"]
    outcome = check(config, mutant.name, [mutant.group], mutant)
    assert outcome.status == KILLED, outcome.detail
    assert outcome.failed_groups == ["surface"]
    assert outcome.counterexample is not None and Path(outcome.counterexample).exists()
    assert outcome.found_seconds is not None and 0 < outcome.found_seconds <= outcome.seconds


def test_time_to_the_first_disagreement_leaves_out_later_groups_and_shrinking() -> None:
    sections = {
        "surface": {"status": "passed", "seconds": 5.0, "found_after_seconds": None},
        "header": {"status": "failed", "seconds": 40.0, "found_after_seconds": 3.0},
        "legacy": {"status": "passed", "seconds": 10.0, "found_after_seconds": None},
    }
    # 57 s of wall time: 2 s of start-up, the 5 s surface group, then 3 s into header.
    assert _found_seconds(57.0, sections, "header") == 10.0
    killed = [dataclasses.replace(_outcome(f"k{i}", KILLED), found_seconds=f, kills=1) for i, f in enumerate((2.0, 9.0, 4.0))]
    run = KillRun(RunConfig(), _outcome("none", PASSED), _outcome(CANARY.name, KILLED), killed, 1.0)
    assert run.totals()["median_find_seconds"] == 4.0


def test_every_suite_run_starts_from_an_empty_example_database(tmp_path: Path) -> None:
    """A database left by an earlier run would replay its failing examples: kills must be found anew."""
    # `true` stands in for the interpreter: the suite never runs, only the preparation is checked.
    config = RunConfig(work=tmp_path, snapshot=False, python="true")
    database, cases = run_dirs(config, "append_placed_at_head", "-run1")
    argv = check_command(config, "append_placed_at_head", ["surface"], tmp_path / "report.json", "-run1")
    assert argv[argv.index("--database") + 1] == str(database)
    assert argv[argv.index("--cases-dir") + 1] == str(cases)
    for left in (database, cases):
        left.mkdir(parents=True)
        (left / "left-by-an-earlier-run").write_text("x", encoding="utf-8")
    outcome = check(config, "append_placed_at_head", ["surface"], BY_NAME["append_placed_at_head"], "-run1")
    assert outcome.status == ERROR
    assert not database.exists() and not cases.exists()


def test_the_unmutated_port_s_repeated_runs_are_spread_over_the_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each of its runs is its own job (with its own run id), and they merge into one outcome."""
    calls: list[tuple[str, str]] = []

    def fake_check(config: RunConfig, name: str, groups: Sequence[str], mutant: Mutant | None, run_id: str = "") -> Outcome:
        calls.append((name, run_id))
        status = PASSED if mutant is None else KILLED
        return dataclasses.replace(_outcome(name, status), seconds=2.0, kills=0 if mutant is None else 1)

    monkeypatch.setattr(runner, "check", fake_check)
    monkeypatch.setattr(runner, "freeze_sources", lambda config: {})
    result = runner.run(RunConfig(repeat=3, jobs=2, snapshot=False), [])
    assert sorted(r for n, r in calls if n == "none") == ["-run1", "-run2", "-run3"]
    assert (result.baseline.status, result.baseline.runs, result.baseline.seconds) == (PASSED, 3, 6.0)
    assert result.verdict == "all-killed"


@pytest.mark.parametrize("dies_in_target", [True, False])
def test_an_all_groups_run_takes_the_target_group_first_then_the_rest_failing_fast(
    monkeypatch: pytest.MonkeyPatch, dies_in_target: bool
) -> None:
    """A kill in the target group ends the mutant's run; a survivor then meets every other group in one
    suite run that stops at its first failing group, and the two runs count as one."""
    calls: list[list[str]] = []
    mutant = BY_NAME["append_placed_at_head"]

    def fake_check(config: RunConfig, name: str, groups: Sequence[str], m: Mutant | None, run_id: str = "") -> Outcome:
        calls.append(list(groups))
        killed = dies_in_target or groups != [mutant.group]
        outcome = dataclasses.replace(_outcome(name, KILLED if killed else SURVIVED), seconds=3.0, kills=int(killed))
        outcome.groups_run, outcome.found_seconds = list(groups), (1.0 if killed else None)
        return outcome

    monkeypatch.setattr(runner, "check", fake_check)
    outcome = runner.check_repeated(RunConfig(all_groups=True, snapshot=False), mutant.name, [], mutant)
    rest = [g for g in SUITE_GROUPS if g != mutant.group]
    assert calls == ([[mutant.group]] if dies_in_target else [[mutant.group], rest])
    assert outcome.status == KILLED
    assert outcome.groups_run == ([mutant.group] if dies_in_target else [mutant.group, *rest])
    assert (outcome.seconds, outcome.found_seconds) == ((3.0, 1.0) if dies_in_target else (6.0, 4.0))
    argv = check_command(RunConfig(snapshot=False, python="true"), mutant.name, rest, Path("r.json"))
    assert "--fail-fast" in argv and "--fail-fast" not in check_command(
        RunConfig(snapshot=False, python="true"), mutant.name, [mutant.group], Path("r.json")
    )
