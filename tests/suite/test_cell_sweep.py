"""The cell sweep: a deep run puts the census's submission for every cell generation left unreached
to the port, through the group owning its path, and judges the answer as any step's."""

from __future__ import annotations

import functools
import random
from collections.abc import Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from sessionlog_spec.suite import cell_sweep
from sessionlog_spec.suite import run as run_module
from sessionlog_spec.suite.agent.builder import SessionBuilder, basic_header, realistic_session
from sessionlog_spec.suite.cell_sweep import PAIR_RULE, SWEEP_RULE, SWEEPING_GROUP, sweep_cells, sweep_pairs
from sessionlog_spec.suite.cells import cell_key
from sessionlog_spec.suite.coverage import GroupCoverage
from sessionlog_spec.suite.expectations import judge
from sessionlog_spec.suite.fuzz.pairs import PairCensus, PairWitness, pairs_on
from sessionlog_spec.suite.fuzz.witness import generic_census
from sessionlog_spec.suite.machines import Disagreement, MachineContext
from sessionlog_spec.suite.oracle import Oracle
from sessionlog_spec.suite.ports import port_for
from sessionlog_spec.suite.ports.inprocess import InProcessPort
from sessionlog_spec.suite.profiles import PROFILES
from sessionlog_spec.suite.reach import PATH_OPS, Witness, census
from sessionlog_spec.suite.rule_space import reachable_declared, unreachable_cells
from sessionlog_spec.suite.run import RunOptions
from sessionlog_spec.suite.verdict import decide


@functools.cache
def _witnesses() -> Mapping[str, Witness]:
    """A small census: one realistic session, one seed (the full one takes a minute)."""
    found: dict[str, Witness] = {}
    for witness, cells in census([realistic_session(1)], seeds=[0]):
        for cell in cells:
            found.setdefault(cell_key(cell), witness)
    return found


def _context(group: str, port: InProcessPort) -> MachineContext:
    return MachineContext(group, port, frozenset(port.hello.capabilities), coverage=GroupCoverage(group))


@pytest.mark.parametrize("group", sorted({SWEEPING_GROUP[op] for op in PATH_OPS.values()}))
def test_the_sweep_reaches_every_unreached_cell_its_group_owns(group: str) -> None:
    witnesses = _witnesses()
    owned = {cell for cell, w in witnesses.items() if SWEEPING_GROUP[w.op] == group}
    assert owned, f"the census gave {group} nothing to sweep"
    context = _context(group, InProcessPort(Oracle()))
    sent = sweep_cells(context, witnesses, set(witnesses))
    assert owned <= set(context.coverage.cells)
    assert 0 < sent <= len(owned)  # one submission may reach several cells
    assert context.coverage.rules[SWEEP_RULE] == sent


def test_the_sweep_leaves_reached_cells_and_other_groups_cells_alone() -> None:
    witnesses = _witnesses()
    context = _context("legacy", InProcessPort(Oracle()))
    others = {cell for cell, w in witnesses.items() if SWEEPING_GROUP[w.op] != "legacy"}
    assert sweep_cells(context, witnesses, others) == 0
    assert not context.coverage.cells


def test_a_port_that_accepts_a_swept_submission_fails_its_group() -> None:
    oracle = Oracle()

    def accepts_every_upgrade(message: dict[str, Any]) -> dict[str, Any]:
        if message["op"] == "upgrade_v0":
            return {"id": message["id"], "ok": True, "result": {"log": message["log"]}}
        return oracle(message)

    context = _context("legacy", InProcessPort(accepts_every_upgrade))
    with pytest.raises(Disagreement) as raised:
        sweep_cells(context, _witnesses(), set(_witnesses()))
    assert raised.value.transcript[-1].op == "upgrade_v0"
    assert raised.value.rule == SWEEP_RULE


def test_a_deep_run_sweeps_what_its_groups_left_unreached(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A run judged on the census (every group, full coverage required) reaches every reachable cell:
    the groups' few examples leave most of them, and the sweep sends them afterwards."""
    witnesses = _witnesses()
    done: Future[Mapping[str, Witness]] = Future()
    done.set_result(witnesses)
    monkeypatch.setattr(run_module, "census_in_background", lambda: (None, done))
    pairs = _pairs()
    monkeypatch.setattr(cell_sweep, "pair_census", lambda: PairCensus((), {(w.first, w.second): w for w in pairs}, {}))
    port = port_for("model")
    options = RunOptions(PROFILES["nightly"], database=None, cases_dir=tmp_path, max_examples=2, step_count=10, seed=0)
    result = run_module.run(port, options)
    assert result.reachable == frozenset(witnesses)
    reached = set().union(*(r.coverage.cells for r in result.groups))
    assert all(r.status == "passed" for r in result.groups), [(r.group, r.status, r.detail) for r in result.groups]
    assert set(witnesses) <= reached
    assert sum(r.coverage.rules[SWEEP_RULE] for r in result.groups) > 0
    # Every buildable check-order pair is sent once, by the session group.
    assert sum(r.coverage.rules.get(PAIR_RULE, 0) for r in result.groups) == len({(w.first, w.second) for w in pairs})
    verdict = decide(result, judge(result.groups, []))
    assert verdict.never_cells == []
    assert verdict.reachable_cells == len(witnesses)
    # The small census leaves declared cells unreached: the verdict fails naming each, and no cell the
    # rule space lists as unreachable.
    assert verdict.never_declared
    assert not verdict.passed
    assert set(verdict.never_declared) <= {" ".join(cell) for cell in reachable_declared()}
    assert not set(verdict.never_declared) & {" ".join(cell) for cell in unreachable_cells()}
    reason = next(r for r in verdict.reasons if "declared cells never reached" in r)
    assert all(cell in reason for cell in verdict.never_declared)


def _pairs() -> list[PairWitness]:
    """A few check-order pairs on one event (the full pair census takes minutes)."""
    builder = SessionBuilder()
    builder.turn_start()
    builder.step_start()
    builder.request_header(basic_header(), "initial")
    return list(pairs_on(builder.state, builder.retry(commit=False), random.Random(0)))[:5]


def test_the_pair_sweep_sends_each_pair_and_fails_a_port_that_answers_the_second_code() -> None:
    pairs = _pairs()
    context = _context("session", InProcessPort(Oracle()))
    assert sweep_pairs(context, pairs) == len(pairs)
    assert context.coverage.rules[PAIR_RULE] == len(pairs)
    oracle = Oracle()
    event = pairs[0].event

    def second_first(message: dict[str, Any]) -> dict[str, Any]:
        if message["op"] == "append" and message["event"] == event:
            return {"id": message["id"], "ok": False, "error": {"code": pairs[0].second, "message": "checked in another order"}}
        return oracle(message)

    with pytest.raises(Disagreement) as raised:
        sweep_pairs(_context("session", InProcessPort(second_first)), pairs)
    assert raised.value.rule == PAIR_RULE


def _generic_witnesses(op: str, count: int) -> dict[str, Witness]:
    """The first ``count`` cells the generic witness search reaches through ``op``, with their questions."""
    found: dict[str, Witness] = {}
    for submission, cells in generic_census():
        if submission.op != op:
            continue
        for cell in cells:
            found.setdefault(cell_key(cell), Witness(f"generic: {submission.what}", submission.live, op, submission.args))
        if len(found) >= count:
            return found
    return found


@pytest.mark.parametrize("op", ["read", "append"])
def test_a_generic_witness_is_swept_through_the_group_of_its_path(op: str) -> None:
    witnesses = _generic_witnesses(op, 3)
    assert witnesses
    context = _context(SWEEPING_GROUP[op], InProcessPort(Oracle()))
    assert sweep_cells(context, witnesses, set(witnesses)) >= 1
    assert set(witnesses) <= set(context.coverage.cells)
