"""The conformance machines against the model itself: every group passes, in-process and as a subprocess."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest
from conformance_helpers import MODEL_DRIVER
from hypothesis.stateful import precondition, rule

from sessionlog_spec.protocol.model_driver import ModelDriver
from sessionlog_spec.registry import BY_ID
from sessionlog_spec.suite.agent.builder import realistic_session
from sessionlog_spec.suite.agent.candidates import MUTATIONS
from sessionlog_spec.suite.coverage import never_exercised
from sessionlog_spec.suite.groups import SUITE_GROUPS
from sessionlog_spec.suite.machines import MACHINES, ConformanceMachine
from sessionlog_spec.suite.oracle import Oracle
from sessionlog_spec.suite.ports.inprocess import InProcessPort
from sessionlog_spec.suite.ports.subprocess import SubprocessPort
from sessionlog_spec.suite.profiles import PROFILES
from sessionlog_spec.suite.rule_table import CODE_OWNERS, OP_INVARIANTS, STEP_INVARIANTS
from sessionlog_spec.suite.run import FAILED, PASSED, UNSUPPORTED, VOID, RunOptions, run, run_group

QUICK = RunOptions(profile=PROFILES["dev"], strict_codes=True, max_examples=8, step_count=25)
"""A reduced profile: the suite's own tests must stay fast."""


def test_the_model_passes_every_group_in_process() -> None:
    result = run(InProcessPort(ModelDriver()), QUICK)
    assert [(r.group, r.status) for r in result.groups] == [(g, PASSED) for g in SUITE_GROUPS], [r.detail for r in result.groups]
    assert all(r.coverage.steps > 0 and r.coverage.examples > 0 for r in result.groups)
    counted = {rule for r in result.groups for rule in r.coverage.rules}
    assert counted <= set(STEP_INVARIANTS), f"steps without a row in the rule table: {counted - set(STEP_INVARIANTS)}"


def test_the_model_driver_passes_every_group_as_a_subprocess() -> None:
    with SubprocessPort(MODEL_DRIVER) as port:
        result = run(port, QUICK)
    failed = [(r.group, r.status, r.detail) for r in result.groups if r.status != PASSED]
    assert failed == []


def test_a_run_exercises_most_invariants_and_codes_even_when_quick() -> None:
    result = run(InProcessPort(ModelDriver()), RunOptions(profile=PROFILES["dev"], max_examples=10, step_count=25))
    never_ids, never_codes = never_exercised(r.coverage for r in result.groups)
    assert len(never_ids) <= 8, never_ids
    assert len(never_codes) <= 25, never_codes


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_example_asks_the_port_something(seed: int) -> None:
    # One example per group: Hypothesis's first example of a run draws the fewest choices, and in
    # a group whose loop builds on the model alone it drew none of the checking rules.
    one = dataclasses.replace(QUICK, max_examples=1, step_count=15, seed=seed)
    result = run(InProcessPort(ModelDriver()), one)
    asked_nothing = [r.group for r in result.groups if r.coverage.steps == 0 or r.status == VOID]
    assert asked_nothing == []


class OnlySurface(ModelDriver):
    """A port that declares only the surface group."""

    def op_hello(self, request: dict[str, Any]) -> Any:
        return {**super().op_hello(request), "capabilities": ["surface"]}


def test_undeclared_groups_are_unsupported_not_failed() -> None:
    result = run(InProcessPort(OnlySurface()), QUICK)
    statuses = {r.group: r.status for r in result.groups}
    assert statuses == {g: PASSED if g == "surface" else UNSUPPORTED for g in SUITE_GROUPS}
    surface = result.groups[SUITE_GROUPS.index("surface")]
    assert all(i.startswith(("INV-SURF", "INV-LOG")) for i in surface.coverage.invariants), surface.coverage.invariants


class OnlyJsonl(ModelDriver):
    """A port that declares jsonl without the session group it needs."""

    def op_hello(self, request: dict[str, Any]) -> Any:
        return {**super().op_hello(request), "capabilities": ["jsonl"]}


def test_jsonl_without_session_is_unsupported() -> None:
    port = InProcessPort(OnlyJsonl())
    result = run_group("jsonl", port, port.hello, QUICK)
    assert (result.status, result.detail) == (UNSUPPORTED, "needs session")


def test_a_seed_makes_a_group_run_reproducible() -> None:
    options = RunOptions(profile=PROFILES["dev"], seed=20260101, max_examples=5, step_count=20)
    first, second = (run_group("repair", p, p.hello, options) for p in (InProcessPort(ModelDriver()),) * 2)
    assert first.status == second.status == PASSED
    assert first.coverage.to_json() == second.coverage.to_json()


class RefusesEverything(ModelDriver):
    """A port whose session group refuses every append it cannot name a code for."""

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        if request.get("op") == "append":
            return {"id": request["id"], "ok": False, "error": {"code": "UNMAPPED", "message": "read-only port"}}
        return super().__call__(request)


def test_a_port_refusing_valid_events_fails_the_session_group() -> None:
    port = InProcessPort(RefusesEverything())
    result = run_group("session", port, port.hello, RunOptions(profile=PROFILES["dev"], max_examples=8))
    assert result.status == FAILED
    assert result.failure is not None and result.failure.mismatch.kind == "refused-valid"


class Idle(ConformanceMachine):
    """A machine whose only rule asks the port nothing."""

    group = "surface"

    @rule()
    def wait(self) -> None:
        pass


class Stuck(ConformanceMachine):
    """A machine whose only rule never passes its precondition."""

    group = "surface"

    @precondition(lambda self: False)
    @rule()
    def never(self) -> None:
        pass


@pytest.mark.parametrize("machine", [Idle, Stuck])
def test_a_group_that_asks_nothing_is_void(monkeypatch: pytest.MonkeyPatch, machine: type[ConformanceMachine]) -> None:
    monkeypatch.setitem(MACHINES, "surface", machine)
    port = InProcessPort(ModelDriver())
    result = run_group("surface", port, port.hello, QUICK)
    assert result.status == VOID, result.detail


@pytest.mark.parametrize("seed", range(6))
def test_the_oracle_answers_exactly_as_the_model_driver(seed: int) -> None:
    rng = random.Random(seed)
    builder = realistic_session(turns=2, calls_per_step=2)
    builder.turn_start()
    builder.user_message("continue")
    builder.step_start()
    oracle, driver = Oracle(), ModelDriver()
    log = builder.events
    requests: list[dict[str, Any]] = []
    for cut in range(0, len(log) + 1, 3):
        requests += [{"op": op, "events": log[:cut]} for op in ("fold_surface", "fold_header", "repair", "cuts")]
    for mutation in rng.sample([m for m in MUTATIONS if m.context == "append"], 12):
        candidate = mutation.build(builder, rng)
        if candidate is not None:
            requests += [{"op": op, "events": [*log, candidate]} for op in ("fold_surface", "repair", "cuts")]
    facts = {"first_request": False, "begins_series": True, "replaced_since_last_request": False}
    header = {"config": {"provider": "deepseek", "model": "deepseek-chat"}}
    requests.append({"op": "header_decision", "events": log, "header": header, "instance": facts})
    requests += [{"op": "cuts", "events": log, "seq": seq} for seq in (0, 1, len(log) - 1, len(log) + 3)]
    # A compaction left open across the turn's end: every append is accepted, the whole log is not (INV-REL-11).
    crossed = realistic_session(turns=1, calls_per_step=seed % 2)
    crossed.turn_start()
    crossed.user_message("compact while working")
    crossed.compaction_start()
    crossed.turn_end()
    requests += [{"op": op, "events": crossed.events} for op in ("fold_surface", "repair", "cuts")]
    for number, request in enumerate(requests):
        ours, theirs = oracle({"id": number, **request}), driver({"id": number, **request})
        assert ours == theirs, request["op"]


def test_the_rule_table_names_only_catalogued_invariants() -> None:
    named = {i for ids in (*STEP_INVARIANTS.values(), *OP_INVARIANTS.values()) for i in ids}
    assert named <= set(BY_ID), named - set(BY_ID)
    assert all(owners for owners in CODE_OWNERS.values()), "every violation code belongs to an invariant"


def test_a_shrink_that_runs_out_of_budget_is_said_in_the_suites_words(capsys: pytest.CaptureFixture[str]) -> None:
    port = InProcessPort(RefusesEverything())
    hurried = RunOptions(profile=dataclasses.replace(PROFILES["dev"], shrink_seconds=0), max_examples=8)
    result = run_group("session", port, port.hello, hurried)
    assert result.status == FAILED
    out = capsys.readouterr().out
    assert "PLEASE REPORT" not in out, out  # Hypothesis' words to its own developers, wrong for a budget we chose
    assert result.failures and all("budget of 0 s ran out" in f.shrink_note for f in result.failures)
    assert all(f.shrink_note in f.steps_shown for f in result.failures)

    patient = run_group("session", port, port.hello, RunOptions(profile=PROFILES["dev"], max_examples=8))
    assert patient.failures and not any(f.shrink_note for f in patient.failures)
