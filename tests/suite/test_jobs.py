"""``check --jobs N``: groups and batches of their examples run in N processes and merge into one report
that reads as a serial run's; the same seed and the same number of jobs draw the same examples."""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from conformance_helpers import broken_driver, case_files, read_json, run_cli
from rich.console import Console

from sessionlog_spec.cli import build_parser
from sessionlog_spec.protocol.messages import Ok, PortFault
from sessionlog_spec.suite.agreement import Mismatch
from sessionlog_spec.suite.arguments import usable_cores
from sessionlog_spec.suite.coverage import GroupCoverage
from sessionlog_spec.suite.exchange import Exchange
from sessionlog_spec.suite.groups import SUITE_GROUPS
from sessionlog_spec.suite.machines.base import Disagreement, disagreement_type
from sessionlog_spec.suite.output.console import RunProgress
from sessionlog_spec.suite.parallel import batch_seed, merge, plan_batches
from sessionlog_spec.suite.profiles import DatabaseError, database_for
from sessionlog_spec.suite.run import ERROR, FAILED, PASSED, VOID, Failure, GroupResult

SMALL = ("--profile", "dev", "--max-examples", "4", "--steps", "8", "--quiet", "--only", "session,surface")
TIMINGS = ("seconds", "examples_per_second", "steps_per_second", "found_after_seconds")


def _check(tmp_path: Path, name: str, *options: str) -> dict[str, Any]:
    report = tmp_path / f"{name}.json"
    done = run_cli("check", "--port", "model", *SMALL, "--report", report, "--cases-dir", tmp_path / "cases", *options)
    assert done.returncode == 0, done.stdout + done.stderr
    document: dict[str, Any] = read_json(report)
    return document


def _untimed(document: dict[str, Any]) -> dict[str, Any]:
    """A report without its wall-clock numbers (which no two runs share)."""
    groups = {name: {k: v for k, v in section.items() if k not in TIMINGS} for name, section in document["groups"].items()}
    return {**{k: v for k, v in document.items() if k != "seconds"}, "groups": groups}


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """One serial run and two runs on two jobs, all with the same seed."""
    tmp_path = tmp_path_factory.mktemp("jobs")
    return {
        "serial": _check(tmp_path, "serial", "--seed", "5", "--jobs", "1"),
        "jobs": _check(tmp_path, "jobs", "--seed", "5", "--jobs", "2"),
        "again": _check(tmp_path, "again", "--seed", "5", "--jobs", "2"),
    }


class TestMergedReport:
    def test_two_jobs_report_the_groups_and_members_of_a_serial_run_in_its_order(self, reports: dict[str, Any]) -> None:
        """The merged report has the serial report's schema: the same members, the same groups in report order."""
        serial, jobs = reports["serial"], reports["jobs"]
        assert list(jobs) == list(serial)
        assert list(jobs["groups"]) == list(serial["groups"]) == ["session", "surface"]
        for group in serial["groups"]:
            assert list(jobs["groups"][group]) == list(serial["groups"][group])
        assert list(jobs["coverage"]) == list(serial["coverage"])
        assert jobs["verdict"] == serial["verdict"] == "passed"

    def test_the_batches_of_a_group_share_out_its_example_budget(self, reports: dict[str, Any]) -> None:
        """The batches partition the work: a group's examples sum to the profile's budget, as in a serial run."""
        for group in ("session", "surface"):
            assert reports["jobs"]["groups"][group]["examples"] == reports["serial"]["groups"][group]["examples"] == 4

    def test_merged_coverage_is_the_union_of_the_groups(self, reports: dict[str, Any]) -> None:
        """The run's invariant counts are the sums over its groups, whatever ran them."""
        jobs = reports["jobs"]
        for invariant, count in jobs["coverage"]["invariants"].items():
            assert count == sum(g["invariants"].get(invariant, 0) for g in jobs["groups"].values())

    def test_the_same_seed_and_jobs_draw_the_same_examples(self, reports: dict[str, Any]) -> None:
        """Two runs with one seed on two jobs each exercise the same steps, rules, invariants and cells."""
        assert _untimed(reports["jobs"]) == _untimed(reports["again"])


def test_a_failure_in_a_job_reaches_the_merged_report_with_its_replay_command(tmp_path: Path) -> None:
    """A disagreement found in a job process is the run's, with its counterexample file and replay command."""
    report, driver = tmp_path / "report.json", broken_driver("surface_drops_replacements")
    checked = run_cli(
        "check", "--driver", driver, "--profile", "dev", "--only", "surface", "--max-examples", "6", "--steps", "20",
        "--shrink-seconds", "2", "--quiet", "--jobs", "2", "--seed", "1", "--cases-dir", tmp_path / "cases", "--report", report,
    )  # fmt: skip
    assert checked.returncode == 1, checked.stdout + checked.stderr
    section = read_json(report)["groups"]["surface"]
    assert section["status"] == FAILED
    [failure] = section["failures"]
    assert failure["case"] == "surface/fold_surface/wrong-result"
    assert Path(failure["case_file"]) in case_files(tmp_path / "cases")
    assert (
        failure["replay"].startswith("python -m sessionlog_spec replay ") and "surface_drops_replacements.py" in failure["replay"]
    )
    assert f"replay: {failure['replay']}" in checked.stdout


class TestJobsOption:
    @pytest.mark.parametrize("bad", ["-1", "two", "1.5", ""])
    def test_a_bad_number_of_jobs_is_refused_in_one_line(self, bad: str, capsys: pytest.CaptureFixture[str]) -> None:
        """``--jobs`` takes a whole number of at least 0, or ``auto``: anything else is bad usage (exit 2)."""
        with pytest.raises(SystemExit) as exited:
            build_parser().parse_args(["check", "--port", "model", "--jobs", bad])
        assert exited.value.code == 2
        assert (
            capsys.readouterr()
            .err.strip()
            .splitlines()[-1]
            .startswith("python -m sessionlog_spec check: error: argument --jobs: ")
        )

    @pytest.mark.parametrize("value", ["0", "auto", "AUTO"])
    def test_zero_or_auto_is_one_job_per_core(self, value: str) -> None:
        """``--jobs 0`` and ``--jobs auto`` run one process per core this process may use."""
        assert build_parser().parse_args(["check", "--port", "model", "--jobs", value]).jobs == usable_cores()

    def test_one_job_is_the_default(self) -> None:
        """Without ``--jobs`` a run is serial."""
        assert build_parser().parse_args(["check", "--port", "model"]).jobs == 1


class TestPlan:
    def test_one_job_keeps_each_group_whole_with_the_runs_seed(self) -> None:
        """One job is the serial run: a batch per group, the whole budget, the run's own seed."""
        assert [(b.group, b.examples, b.seed) for b in plan_batches(["session", "read"], 1, 70, 9)] == [
            ("session", 70, 9),
            ("read", 70, 9),
        ]

    @pytest.mark.parametrize(("jobs", "examples"), [(2, 70), (3, 70), (4, 3), (8, 1)])
    def test_a_groups_batches_share_out_its_budget(self, jobs: int, examples: int) -> None:
        """Each group is cut into at most ``jobs`` batches, each with an example, whose budgets sum to the group's."""
        batches = plan_batches(["read"], jobs, examples, None)
        assert sum(b.examples for b in batches) == examples
        assert len(batches) == min(jobs, examples) and all(b.examples >= 1 for b in batches)
        assert max(b.examples for b in batches) - min(b.examples for b in batches) <= 1

    def test_batch_seeds_are_derived_distinct_and_repeatable(self) -> None:
        """Under ``--seed`` every batch has a seed of its own, the same for the same seed, group, batch and jobs."""
        seeds = [b.seed for b in plan_batches(["session", "read"], 3, 70, 1)]
        assert len(set(seeds)) == 6 and None not in seeds and 1 not in seeds
        assert seeds == [b.seed for b in plan_batches(["session", "read"], 3, 70, 1)]
        assert batch_seed(2, "session", 0, 3) != batch_seed(1, "session", 0, 3)
        assert batch_seed(None, "session", 0, 3) is None


def _result(
    status: str, *, steps: int = 0, cells: tuple[str, ...] = (), failures: tuple[str, ...] = (), detail: str = ""
) -> GroupResult:
    coverage = GroupCoverage("surface", examples=2, steps=steps)
    coverage.cells.update(cells)
    coverage.invariants.update({"INV-SURF-1": steps})
    result = GroupResult("surface", status, coverage, seconds=1.5, detail=detail)
    for case_id in failures:
        _, op, kind = case_id.split("/")
        transcript = [Exchange(op, {}, Ok({}), Ok({"other": True}))]
        disagreement = disagreement_type(case_id)(
            "surface", Mismatch(kind, "differs"), transcript, rule=None, invariants=[], codes=[]
        )
        result.failures.append(Failure(disagreement, Path(f"{case_id.replace('/', '-')}.json"), []))
    return result


class TestMerge:
    def test_a_failure_in_one_batch_fails_the_group_and_keeps_the_others_counts(self) -> None:
        """A passed batch and a failed one merge into a failed group holding the failure and both batches' counts."""
        merged = merge(
            "surface",
            [
                _result(PASSED, steps=3, cells=("a",)),
                _result(FAILED, steps=4, cells=("a", "b"), failures=("surface/fold_surface/wrong-result",)),
            ],
        )
        assert merged.status == FAILED
        assert [f.case_id for f in merged.failures] == ["surface/fold_surface/wrong-result"]
        assert (merged.coverage.examples, merged.coverage.steps, merged.seconds) == (4, 7, 3.0)
        assert merged.coverage.cells == {"a": 2, "b": 1} and merged.coverage.invariants["INV-SURF-1"] == 7

    def test_the_same_failure_found_by_two_batches_is_reported_once(self) -> None:
        """Batches that find the same kind of disagreement give one failure, the first batch's."""
        case = "surface/fold_surface/wrong-result"
        merged = merge(
            "surface",
            [_result(FAILED, steps=1, failures=(case,)), _result(FAILED, steps=1, failures=(case, "surface/cuts/wrong-result"))],
        )
        assert [f.case_id for f in merged.failures] == [case, "surface/cuts/wrong-result"]

    def test_an_error_in_any_batch_is_the_groups_error(self) -> None:
        """A batch that errs makes the group an error, with its detail."""
        merged = merge("surface", [_result(PASSED, steps=3), _result(ERROR, detail="job died")])
        assert (merged.status, merged.detail) == (ERROR, "job died")

    def test_a_group_is_void_only_when_every_batch_is(self) -> None:
        """A void batch beside one that checked something leaves the group passed; all void is void."""
        assert merge("surface", [_result(VOID), _result(PASSED, steps=2)]).status == PASSED
        assert merge("surface", [_result(VOID), _result(VOID)]).status == VOID


class TestPickling:
    def test_a_disagreement_crosses_processes_with_its_kind_and_notes(self) -> None:
        """A job returns its disagreements pickled: the per-case type, the transcript and the notes come back."""
        original = disagreement_type("surface/fold_surface/wrong-result")(
            "surface", Mismatch("wrong-result", "differs"), [], rule="fold", invariants=["INV-SURF-1"], codes=["X"]
        )
        original.add_note("shrunk")
        copy = pickle.loads(pickle.dumps(original))
        assert type(copy) is type(original) and isinstance(copy, Disagreement)
        assert (copy.rule, copy.invariants, copy.codes, copy.__notes__, str(copy)) == (
            "fold",
            ["INV-SURF-1"],
            ["X"],
            ["shrunk"],
            str(original),
        )

    def test_a_port_fault_crosses_processes_with_its_stderr(self) -> None:
        """A port fault in a job keeps its kind, detail and the driver's stderr tail."""
        copy = pickle.loads(pickle.dumps(PortFault("exit", "gone", "Traceback ...")))
        assert (copy.kind, copy.detail, copy.stderr_tail) == ("exit", "gone", "Traceback ...")


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A Redis server of this test's own, on a free port (Debian's ``redis-server``)."""
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("no redis-server on PATH (apt install redis-server)")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(tmp_path)], stdout=subprocess.DEVNULL
    )
    try:
        for _ in range(100):
            with contextlib.suppress(DatabaseError):
                database_for(f"redis://127.0.0.1:{port}/0")
                break
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/3"
    finally:
        started.terminate()
        started.wait(timeout=10)


class TestDatabase:
    def test_two_runs_naming_one_redis_url_share_their_examples(self, redis_url: str) -> None:
        """What one run saves in ``--database redis://…`` another run naming the same URL reads back."""
        database_for(redis_url).save(b"sessionlog-conformance:surface", b"example")
        assert redis.Redis.from_url(redis_url).keys(), "the entry is kept by the server, not in a local folder"
        assert list(database_for(redis_url).fetch(b"sessionlog-conformance:surface")) == [b"example"]
        assert list(database_for(redis_url.replace("/3", "/4")).fetch(b"sessionlog-conformance:surface")) == []

    def test_a_directory_is_a_directory_database(self, tmp_path: Path) -> None:
        """``--database DIR`` is Hypothesis's directory database there (a shared filesystem works alike)."""
        assert database_for(tmp_path / "db").path == tmp_path / "db"  # type: ignore[attr-defined]

    def test_an_unreachable_redis_server_is_refused_in_one_line(self) -> None:
        """A Redis URL whose server does not answer is bad usage before the port starts, not an error mid-run."""
        with pytest.raises(DatabaseError, match=r"^cannot reach the Redis server at 127\.0\.0\.1:1: "):
            database_for("redis://127.0.0.1:1/0")

    def test_a_bad_database_ends_check_with_exit_2(self, tmp_path: Path) -> None:
        """``check --database`` naming an unreachable Redis server exits 2 with one line, before the port starts."""
        done = run_cli("check", "--port", "model", "--database", "redis://127.0.0.1:1/0", "--cases-dir", tmp_path)
        assert done.returncode == 2
        assert done.stderr.strip().splitlines() == [done.stderr.strip()]
        assert done.stderr.startswith("--database: cannot reach the Redis server at 127.0.0.1:1")


def test_progress_advances_the_bar_of_the_group_an_example_belongs_to() -> None:
    """Under ``--jobs`` groups run side by side: each example moves its own group's bar, not the newest one."""
    progress = RunProgress(Console(file=io.StringIO()), examples=10)
    progress.group_started("session")
    progress.group_started("surface")
    session = GroupCoverage("session", examples=3, steps=40)
    progress.example(session)
    completed = {task.description: task.completed for task in progress.progress.tasks}
    assert completed == {"session": 3, "surface": 0}


class TestFuzzTargets:
    @staticmethod
    def _pytest(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        variables = {**os.environ, "SESSIONLOG_DATABASE": str(tmp_path / "db"), "SESSIONLOG_PROFILE": "dev", **env}
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path)]
        command += ["--pyargs", "sessionlog_spec.suite.fuzz_targets", *args]
        return subprocess.run(command, cwd=tmp_path, env=variables, capture_output=True, text=True, timeout=600, check=False)

    def test_every_group_the_port_runs_is_a_hypothesis_test_case(self, tmp_path: Path) -> None:
        """With a port named, the module holds ``Test<Group>`` for each group the port can run, and nothing else."""
        done = self._pytest(tmp_path, "--collect-only", SESSIONLOG_DRIVER=broken_driver("nothing"))
        assert done.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, done.stdout + done.stderr
        done = self._pytest(tmp_path, "--collect-only", SESSIONLOG_PORT="model")
        collected = {line.split("::")[1] for line in done.stdout.splitlines() if "::" in line}
        assert collected == {f"Test{group.capitalize()}" for group in SUITE_GROUPS}, done.stdout

    def test_a_target_runs_its_groups_machine_against_the_port(self, tmp_path: Path) -> None:
        """``Test<Group>`` runs the group's machine on the port: a broken port fails it with the disagreement."""
        done = self._pytest(tmp_path, "-k", "TestSurface", SESSIONLOG_DRIVER=broken_driver("surface_drops_replacements"))
        assert done.returncode == 1, done.stdout + done.stderr
        assert "Disagreement[surface/fold_surface/wrong-result]" in done.stdout
        assert (tmp_path / "db").is_dir(), "the failure is kept in the suite's example database"
