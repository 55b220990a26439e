"""The cell sweep: every reachable cell a deep run's generation left unreached, put to the port once.

The reach census (:mod:`sessionlog_spec.suite.reach`) finds every (invariant × event type × path)
cell the suite's candidates can make the model refuse, building each candidate on fixed sessions.
The machines reach most of them by generation; the rest sit in a situation a run's examples
happened not to build (a payload fault on one rare note type, seeded; a legacy form on one type,
through the edge).  The nightly profile owes every implementer a run that puts every rule the
candidates can break on every type and path to their port, so after the groups have run it sends
the census's own submission for each cell still unreached, through the group that owns the path,
and compares the port's answer with the model's as any step does.

The sweep never replaces generation: it runs after it, only for what generation missed, and the
report says how many cells it swept (the rule ``cell_sweep``).  The same run then sends every pair of
faults of the check-order table the generators can build (:mod:`sessionlog_spec.suite.fuzz.pairs`,
the rule ``pair_sweep``), so a port that checks two rules in another order fails every night.  The census is computed in a
process of its own while the groups run, so a run on two cores pays nothing for it.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterable, Mapping
from concurrent.futures import Future, ProcessPoolExecutor

from sessionlog_spec.suite.fuzz.pairs import PairWitness, pair_census
from sessionlog_spec.suite.machines import MACHINES, MachineContext
from sessionlog_spec.suite.reach import Witness, census_witnesses

SWEEPING_GROUP: Mapping[str, str] = {
    "append": "session",
    "seed": "session",
    "load": "jsonl",
    "read": "read",
    "upgrade_v0": "legacy",
}
"""The group whose machine sends a swept submission, by the path it goes through."""
SWEEP_RULE = "cell_sweep"
PAIR_RULE = "pair_sweep"
PAIR_SWEEPING_GROUP = "session"
"""The group that sends every buildable check-order pair (each is an ``append`` after a valid log)."""


def census_in_background() -> tuple[ProcessPoolExecutor, Future[Mapping[str, Witness]]]:
    """Start the census in a process of its own (spawned: the parent may hold a driver's threads)."""
    executor = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
    return executor, executor.submit(census_witnesses)


def sweep_cells(context: MachineContext, witnesses: Mapping[str, Witness], unreached: set[str]) -> int:
    """Send the census's submission for every cell of ``unreached`` that ``context``'s group owns;
    how many were sent.  A disagreement is raised as the machines raise one, with a transcript that
    holds only its own submission (and the live session it stands on), so it replays alone."""
    machine = MACHINES[context.group](context)
    sent = 0
    for cell in sorted(unreached):
        witness = witnesses[cell]
        if SWEEPING_GROUP[witness.op] != context.group or cell in context.coverage.cells:
            continue  # another group's, or reached by an earlier submission of this sweep
        machine.transcript = []
        machine._begin_step(SWEEP_RULE)
        if context.supports("session"):
            machine.exchange("reset")
        if witness.op == "append":
            for event in witness.events:
                machine.exchange("append", event=event)
        machine.exchange(witness.op, **witness.args)
        machine._end_step()
        sent += 1
    return sent


def sweep_pairs(context: MachineContext, witnesses: Iterable[PairWitness] | None = None) -> int:
    """Send every pair of the check-order table the generators can build (:func:`~sessionlog_spec.suite.fuzz.pairs.pair_census`,
    or ``witnesses``): the valid log appended, then the event carrying both faults, whose answer must be
    the model's first code.  How many were sent.  A disagreement is raised as a machine raises one."""
    if context.group != PAIR_SWEEPING_GROUP or not context.supports("session"):
        return 0
    machine = MACHINES[context.group](context)
    sent = 0
    for witness in pair_census().built.values() if witnesses is None else witnesses:
        machine.transcript = []
        machine._begin_step(PAIR_RULE)
        machine.exchange("reset")
        for event in witness.log:
            machine.exchange("append", event=event)
        machine.exchange("append", event=witness.event)
        machine._end_step()
        sent += 1
    return sent
