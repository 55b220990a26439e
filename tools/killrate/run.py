"""Running the conformance suite against every mutant and recording which ones it kills.

A run first checks the unmutated port (every group must pass) and the canary (it must die).  If
either check fails the run is *void*: nothing it says about the mutants can be trusted, so it exits
non-zero whatever the mutants did.  Each mutant is then checked by ``python -m sessionlog_spec check`` in its
own process, against its own fresh Hypothesis example database (so no kill is inherited from an
earlier mutant's counterexample), with ``--only`` its target group unless ``all_groups`` is set.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from killrate.driver import UNMUTATED
from killrate.mutants import CANARY, CATALOGUE, HALVES, Mutant
from sessionlog_spec.registry import BY_ID
from sessionlog_spec.suite.groups import SUITE_GROUPS

ROOT = Path(__file__).resolve().parents[2]
REPORT_FORMAT = "killrate-report/1"
SNAPSHOT = {
    "spec": ("spec", "sessionlog_spec"),
    "model": ("model", "sessionlog_spec/model"),
    "killrate": ("tools/killrate", "killrate"),
    "seqlog": ("ports/python/seqlog", "ports/python/seqlog"),
}
"""What a run depends on: its folder in the checkout, and where the snapshot holds it under its import name
(``spec/`` is the package ``sessionlog_spec`` and ``model/`` its sub-package, so ``spec`` is copied first)."""
"""What a run freezes at its start (name → path under the repository): the oracle, the suite, the mutants, the port."""
KILLED, SURVIVED, SOMETIMES, ERROR, PASSED = "killed", "survived", "sometimes", "error", "passed"


@dataclass(frozen=True)
class RunConfig:
    """How one kill-rate run checks its mutants."""

    profile: str = "ci"
    seed: int | None = None
    all_groups: bool = False
    """Run every group against each mutant instead of only its target group."""
    groups: tuple[str, ...] = ()
    """Run these groups against each mutant instead of its target group (e.g. the generic ``fuzz``
    group against the survivors of a target-group run)."""
    jobs: int = 1
    work: Path = ROOT / "reports" / "killrate"
    """Where the suite's own reports, counterexample files and example databases go."""
    python: str = sys.executable
    timeout: float | None = None
    """Per-request driver timeout passed to the suite (its default when ``None``)."""
    strict_codes: bool = True
    """A refusal must carry the model's violation code (the suite's default); ``False`` passes ``--any-code``."""
    repeat: int = 1
    """Suite runs per mutant, each with a fresh example database (the kill rate of one run is a sample)."""
    snapshot: bool = True
    """Copy the model, the suite, seqlog and the catalogue into ``work`` first and run every check
    from that copy, so that edits made to the working tree during a long run cannot make its
    mutants face different suites."""

    @property
    def source_root(self) -> Path:
        """Where the suite and the drivers are imported from."""
        return self.work / "snapshot" if self.snapshot else ROOT


@dataclass
class Outcome:
    """What the suite did to one driver (a mutant, the canary or the unmutated port)."""

    name: str
    invariant: str | None
    description: str
    target: str | None
    groups_run: list[str]
    status: str
    """``killed`` or ``survived`` for a mutant; ``passed`` or ``killed`` for the unmutated port; ``error``."""
    failed_groups: list[str] = field(default_factory=list)
    failure: str | None = None
    """The suite's case id of the first disagreement (``session/append/refusal``)."""
    counterexample: str | None = None
    seconds: float = 0.0
    found_seconds: float | None = None
    """For a kill: the seconds of ``seconds`` until the suite saw its first disagreement (what follows
    is shrinking and minimising the counterexample); summed over runs like ``seconds``."""
    exit_code: int | None = None
    detail: str = ""
    exercised: dict[str, int] = field(default_factory=dict)
    """For a survivor: how often the target group exercised the invariant and each of its codes."""
    runs: int = 1
    kills: int = 0
    """In how many of ``runs`` suite runs the mutant died (``sometimes`` when neither none nor all)."""
    half: str = ""
    """The mutant's half of the catalogue (``tuned`` or ``blind``); empty for the port and the canary."""


def driver_command(config: RunConfig, name: str) -> str:
    """The ``--driver`` command line serving seqlog with mutant ``name`` (or ``none``)."""
    return f"{shlex.quote(config.python)} -m killrate.driver {shlex.quote(name)}"


def run_dirs(config: RunConfig, name: str, run_id: str = "") -> tuple[Path, Path]:
    """The example database and the counterexample directory of one suite run against ``name``."""
    return config.work / "db" / (name + run_id), config.work / "cases" / (name + run_id)


def check_command(config: RunConfig, name: str, groups: Sequence[str], report: Path, run_id: str = "") -> list[str]:
    """The ``python -m sessionlog_spec check`` argv for one driver (``run_id`` keeps repeated runs apart)."""
    database, cases = run_dirs(config, name, run_id)
    argv = [
        config.python, "-m", "sessionlog_spec", "check",
        "--driver", driver_command(config, name),
        "--profile", config.profile,
        "--quiet",
        "--report", str(report),
        "--cases-dir", str(cases),
    ]  # fmt: skip
    if config.seed is not None:
        argv += ["--seed", str(config.seed)]
    else:
        argv += ["--database", str(database)]
    if config.timeout is not None:
        argv += ["--timeout", str(config.timeout)]
    if not config.strict_codes:
        argv.append("--any-code")
    if set(groups) != set(SUITE_GROUPS):
        argv += ["--only", ",".join(groups)]
    if len(groups) > 1:
        argv.append("--fail-fast")  # a kill is a kill: the groups after the first that fails add nothing
    return argv


def _environment(config: RunConfig) -> dict[str, str]:
    env = dict(os.environ)
    root = config.source_root
    paths = (str(root), str(root / "ports" / "python"), env.get("PYTHONPATH", ""))
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    return env


def _digest(root: Path) -> str:
    """A content hash of the Python sources under ``root``."""
    h = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix in (".py", ".json", ".md"):
            h.update(str(path.relative_to(root)).encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


def freeze_sources(config: RunConfig) -> dict[str, str]:
    """Copy what the run depends on into the snapshot (when enabled); the content hash of each part."""
    digests = {}
    for name, (relative, imported) in SNAPSHOT.items():
        source = ROOT / relative
        if config.snapshot:
            target = config.source_root / imported
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            source = target
        digests[name] = _digest(source)
    return digests


def git_revision() -> str:
    """``HEAD``'s commit, with ``+dirty`` when the snapshotted paths have uncommitted changes."""
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
        return done.stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--", *(relative for relative, _ in SNAPSHOT.values()))
    return head + ("+dirty" if dirty else "")


def check(config: RunConfig, name: str, groups: Sequence[str], mutant: Mutant | None, run_id: str = "") -> Outcome:
    """Run the suite against one driver and judge what happened."""
    report = config.work / "reports" / f"{name}{run_id}.json"
    report.parent.mkdir(parents=True, exist_ok=True)
    report.unlink(missing_ok=True)
    for stale in run_dirs(config, name, run_id):
        # The work directory outlives a run: an example database left there by an earlier run
        # would replay its failing examples first, and the kill would be inherited, not found.
        shutil.rmtree(stale, ignore_errors=True)
    started = time.monotonic()
    proc = subprocess.run(
        check_command(config, name, groups, report, run_id),
        cwd=config.source_root,
        env=_environment(config),
        capture_output=True,
        text=True,
        check=False,
    )
    outcome = Outcome(
        name,
        None if mutant is None else mutant.invariant,
        "seqlog unmutated" if mutant is None else mutant.description,
        None if mutant is None else mutant.target,
        list(groups),
        ERROR,
        seconds=round(time.monotonic() - started, 1),
        exit_code=proc.returncode,
        half="" if mutant is None or mutant is CANARY else mutant.half,
    )
    try:
        document = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        outcome.detail = f"no report (exit {proc.returncode}): {proc.stderr.strip()[-600:]}"
        return outcome
    _judge(outcome, document, mutant)
    return outcome


def check_all_groups(config: RunConfig, name: str, mutant: Mutant, run_id: str = "") -> Outcome:
    """One run of every group against ``mutant``, its target group first: the target alone, then, if
    the mutant survived it, every other group under ``--fail-fast``.  Each group draws from the run's
    seed alone, so this is the all-groups run in another order, which finds most kills in the target
    group without first running the groups before it."""
    first = check(config, name, [mutant.group], mutant, run_id)
    if first.status != SURVIVED:
        return first
    second = check(config, name, [g for g in SUITE_GROUPS if g != mutant.group], mutant, run_id + "-rest")
    second.groups_run = [mutant.group, *second.groups_run]
    second.seconds = round(first.seconds + second.seconds, 1)
    if second.found_seconds is not None:
        second.found_seconds = round(first.seconds + second.found_seconds, 1)
    second.exercised = {**first.exercised, **second.exercised}
    return second


def check_repeated(config: RunConfig, name: str, groups: Sequence[str], mutant: Mutant | None) -> Outcome:
    """:func:`check` ``config.repeat`` times; the first kill's details, the total kills and wall time."""

    def once(run_id: str = "") -> Outcome:
        if config.all_groups and mutant is not None and mutant is not CANARY:
            return check_all_groups(config, name, mutant, run_id)
        return check(config, name, groups, mutant, run_id)

    if config.repeat <= 1:
        return once()
    return merged_runs([once(f"-run{i + 1}") for i in range(config.repeat)], mutant)


def merged_runs(outcomes: list[Outcome], mutant: Mutant | None) -> Outcome:
    """The repeated runs of one driver as one outcome: the first kill's details, the kills, the time."""
    if any(o.status == ERROR for o in outcomes):
        return next(o for o in outcomes if o.status == ERROR)
    kills = sum(o.kills for o in outcomes)
    merged = next((o for o in outcomes if o.status == KILLED), outcomes[0])
    merged.runs, merged.kills = len(outcomes), kills
    merged.seconds = round(sum(o.seconds for o in outcomes), 1)
    found = [o.found_seconds for o in outcomes if o.status == KILLED]
    merged.found_seconds = round(sum(f for f in found if f is not None), 1) if found and None not in found else None
    if mutant is None:
        merged.status = PASSED if kills == 0 else KILLED
    else:
        merged.status = KILLED if kills == len(outcomes) else SURVIVED if kills == 0 else SOMETIMES
        merged.exercised = next((o.exercised for o in outcomes if o.exercised), {})
    return merged


def _judge(outcome: Outcome, document: dict[str, Any], mutant: Mutant | None) -> None:
    sections: dict[str, dict[str, Any]] = document["groups"]
    failed = [g for g, s in sections.items() if s["status"] == "failed"]
    broken = {g: s for g, s in sections.items() if s["status"] not in ("passed", "failed")}
    outcome.failed_groups = failed
    if failed:
        first = sections[failed[0]]["failure"]
        outcome.status, outcome.failure, outcome.counterexample = KILLED, first["case"], first["case_file"]
        outcome.kills = 1
        outcome.detail = first["message"][:300]
        outcome.found_seconds = _found_seconds(outcome.seconds, sections, failed[0])
    elif broken:
        outcome.status = ERROR
        outcome.detail = "; ".join(f"{g}: {s['status']} {s['detail']}"[:300] for g, s in broken.items())
    else:
        outcome.status = PASSED if mutant is None else SURVIVED
        if mutant is not None:
            outcome.exercised = _exercised(sections, mutant)


def _found_seconds(wall: float, sections: dict[str, dict[str, Any]], failed: str) -> float | None:
    """The wall seconds until ``failed``'s first disagreement: the whole run less what its group spent
    after it and every later group (groups run one after another, in report order)."""
    found_after = sections[failed].get("found_after_seconds")
    if found_after is None:
        return None
    names = list(sections)
    after = sum(float(sections[g]["seconds"]) for g in names[names.index(failed) :])
    return round(max(0.0, wall - after + float(found_after)), 1)


def _exercised(sections: dict[str, dict[str, Any]], mutant: Mutant) -> dict[str, int]:
    """How often the run exercised the mutant's invariant and its violation codes."""
    counts = {mutant.invariant: 0, **{code.value: 0 for code in BY_ID[mutant.invariant].codes}}
    for section in sections.values():
        for key in counts:
            counts[key] += int(section.get("invariants", {}).get(key, 0)) + int(section.get("codes", {}).get(key, 0))
    return counts


@dataclass
class KillRun:
    """A whole run: the two sanity checks, every mutant, and the verdict."""

    config: RunConfig
    baseline: Outcome
    canary: Outcome
    mutants: list[Outcome]
    seconds: float
    sources: dict[str, str] = field(default_factory=dict)
    """The git revision and the content hash of each frozen part."""

    @property
    def void_reasons(self) -> list[str]:
        """Why the run measures nothing (empty when it is valid)."""
        reasons = []
        if self.baseline.status != PASSED:
            reasons.append(f"the unmutated port did not pass ({self.baseline.status}: {self.baseline.detail})")
        if self.canary.status != KILLED:  # with repeats: killed in every run
            reasons.append(f"the canary was not killed ({self.canary.status}: {self.canary.detail})")
        return reasons

    @property
    def verdict(self) -> str:
        """``void``, ``all-killed`` or ``survivors``."""
        if self.void_reasons:
            return "void"
        return "all-killed" if all(m.status == KILLED for m in self.mutants) else "survivors"

    def totals(self) -> dict[str, Any]:
        """Counts and the kill rate over the catalogue mutants that ran, in all and for each half."""
        return {
            **_counts(self.mutants),
            "runs_per_mutant": self.config.repeat,
            "mutant_seconds": round(sum(m.seconds for m in self.mutants), 1),
            "halves": {half: _counts([m for m in self.mutants if m.half == half]) for half in HALVES},
        }

    def to_json(self) -> dict[str, Any]:
        """The run as a JSON document."""
        return {
            "format": REPORT_FORMAT,
            "verdict": self.verdict,
            "void_reasons": self.void_reasons,
            "profile": self.config.profile,
            "seed": self.config.seed,
            "strict_codes": self.config.strict_codes,
            "repeat": self.config.repeat,
            "groups": "all" if self.config.all_groups else ",".join(self.config.groups) or "target",
            "seconds": round(self.seconds, 1),
            "sources": self.sources,
            "totals": self.totals(),
            "baseline": asdict(self.baseline),
            "canary": asdict(self.canary),
            "mutants": [asdict(m) for m in self.mutants],
        }


def _counts(mutants: Sequence[Outcome]) -> dict[str, Any]:
    killed = [m for m in mutants if m.status == KILLED]
    judged = [m for m in mutants if m.status != ERROR]
    # A kill's time is the whole suite run that found it (shrinking included), per run when repeated.
    kill_seconds = [m.seconds / m.runs for m in killed]
    find_seconds = [m.found_seconds / m.kills for m in killed if m.found_seconds is not None and m.kills]
    return {
        "mutants": len(mutants),
        "killed": len(killed),
        "sometimes": sum(m.status == SOMETIMES for m in mutants),
        "survived": sum(m.status == SURVIVED for m in mutants),
        "errors": len(mutants) - len(judged),
        "kill_rate": round(len(killed) / len(judged), 4) if judged else None,
        "kill_rate_per_run": round(sum(m.kills / m.runs for m in judged) / len(judged), 4) if judged else None,
        "median_kill_seconds": round(statistics.median(kill_seconds), 1) if kill_seconds else None,
        # Until the first disagreement only: the kill time less shrinking and minimising.
        "median_find_seconds": round(statistics.median(find_seconds), 1) if find_seconds else None,
    }


def select(names: Sequence[str], half: str | None = None) -> list[Mutant]:
    """The catalogue mutants named (all of them when ``names`` is empty) of ``half`` (both when None), in catalogue order."""
    known = {m.name for m in CATALOGUE}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown mutant(s): {', '.join(unknown)}")
    return [m for m in CATALOGUE if (not names or m.name in names) and (half is None or m.half == half)]


def run(
    config: RunConfig,
    mutants: Sequence[Mutant],
    progress: Callable[[Outcome], None] | None = None,
    *,
    keep_going: bool = False,
) -> KillRun:
    """Check the unmutated port and the canary, then (unless the run is already void) every mutant."""
    started = time.monotonic()
    note = progress or (lambda _: None)
    config = dataclasses.replace(config, work=config.work.resolve())
    sources = {"git": git_revision(), **freeze_sources(config)}

    def groups_for(mutant: Mutant) -> list[str]:
        if config.all_groups:
            return list(SUITE_GROUPS)
        return list(config.groups) or [mutant.group]

    with ThreadPoolExecutor(max_workers=max(1, config.jobs)) as pool:
        # The unmutated port's runs are the longest (every group): they go to the pool one by one.
        baseline_jobs = [
            pool.submit(check, config, UNMUTATED, list(SUITE_GROUPS), None, f"-run{i + 1}" if config.repeat > 1 else "")
            for i in range(max(1, config.repeat))
        ]
        canary_job = pool.submit(check_repeated, config, CANARY.name, [CANARY.group], CANARY)
        baseline = merged_runs([job.result() for job in baseline_jobs], None)
        note(baseline)
        canary = canary_job.result()
        note(canary)
        outcomes: list[Outcome] = []
        if not KillRun(config, baseline, canary, [], 0.0).void_reasons or keep_going:
            jobs = [pool.submit(check_repeated, config, m.name, groups_for(m), m) for m in mutants]
            for job in jobs:
                outcome = job.result()
                note(outcome)
                outcomes.append(outcome)
    return KillRun(config, baseline, canary, outcomes, time.monotonic() - started, sources)
