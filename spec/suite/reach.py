"""The reach census: every cell the suite's candidates can make the model refuse on the four paths.

A cell (:mod:`sessionlog_spec.suite.cells`) is an invariant enforced on an event type through an op.
The paths that admit events are ``append``, ``seed``, ``load`` and ``upgrade_v0``; every candidate
of :data:`~sessionlog_spec.suite.agent.candidates.MUTATIONS` (the ``append`` ones lifted to the
other three) is built on a fixed set of sessions with a few seeds and put to the model through its
path, and each refusal names its cells.  The set is what generation *can* reach: the nightly
profile fails when its run left any of them unreached, so a rule the candidates can break on a
type and path is actually sent there, every night.

The census asks the model only, in-process, and is deterministic: the same suite gives the same
cells.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from sessionlog_spec.model.session import seed_session
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.protocol.messages import Refused
from sessionlog_spec.suite.agent.builder import SessionBuilder, realistic_session
from sessionlog_spec.suite.agent.candidates import MUTATIONS, Context
from sessionlog_spec.suite.cells import Cell, cell_key, refusal_cells
from sessionlog_spec.suite.fuzz.witness import generic_census
from sessionlog_spec.suite.oracle import Oracle
from sessionlog_spec.suite.ports.inprocess import InProcessPort

PATH_OPS: Mapping[Context, str] = {"append": "append", "seed": "seed", "load": "load", "upgrade": "upgrade_v0"}
"""The op each candidate context is submitted through."""
CENSUS_SEEDS = range(3)


def _prefix(events: list[Any], length: int) -> SessionBuilder:
    """A builder holding the first ``length`` events."""
    state = seed_session(events[:length])
    assert not isinstance(state, Violation)
    return SessionBuilder(state, time=events[length - 1]["time"] if length else 1_700_000_000_000)


def census_sessions() -> Iterator[SessionBuilder]:
    """The sessions the census builds candidates on: empty, whole realistic ones, and every cut of one
    (between turns, inside a step, with calls pending, after a compaction)."""
    yield SessionBuilder()
    yield realistic_session(1)
    yield realistic_session(3, calls_per_step=2)
    events = realistic_session(2, calls_per_step=2).events
    for length in range(1, len(events)):
        yield _prefix(events, length)


_ARGUMENT = {"append": "event", "seed": "events", "load": "jsonl", "upgrade": "log"}


def _live(port: InProcessPort, builder: SessionBuilder) -> None:
    """Make the port's live session the builder's, event by event (a seed would add its end marker)."""
    port.call("reset")
    for event in builder.events:
        port.call("append", event=event)


@dataclass(frozen=True)
class Witness:
    """One census submission that reaches a cell: the live session it was built on and what is sent."""

    mutation: str
    events: tuple[Any, ...]
    """The live session the candidate was built on (an ``append`` stands on it; other paths replace it)."""
    op: str
    args: Mapping[str, Any]


def census(builders: Iterable[SessionBuilder], seeds: Iterable[int] = CENSUS_SEEDS) -> Iterator[tuple[Witness, frozenset[Cell]]]:
    """Every candidate built on ``builders`` with ``seeds`` that the model refuses, with the cells it reaches."""
    port = InProcessPort(Oracle())
    seeds = tuple(seeds)
    for builder in builders:
        _live(port, builder)
        events = tuple(builder.events)
        for mutation in MUTATIONS:
            if mutation.context not in PATH_OPS:
                continue
            for seed in seeds:
                value = mutation.build(builder, random.Random(seed))
                if value is None:
                    continue
                op, args = PATH_OPS[mutation.context], {_ARGUMENT[mutation.context]: value}
                reply = port.call(op, **args)
                if isinstance(reply, Refused):
                    yield Witness(mutation.name, events, op, args), frozenset(refusal_cells(op, args, reply.code, reply.message))
                elif op in ("append", "seed", "load"):
                    _live(port, builder)  # not refused after all: the live session moved


def cells_of(builders: Iterable[SessionBuilder], seeds: Iterable[int] = CENSUS_SEEDS) -> frozenset[Cell]:
    """Every cell the candidates built on ``builders`` with ``seeds`` reach."""
    return frozenset().union(*(cells for _, cells in census(builders, seeds)))


@functools.cache
def census_witnesses(generic: bool = True) -> Mapping[str, Witness]:
    """The census, as report keys (:func:`~sessionlog_spec.suite.cells.cell_key`), each with the first
    submission that reached it (what the nightly cell sweep puts to the port): the candidates' census,
    then, when ``generic``, the cells only the generic witness search
    (:func:`~sessionlog_spec.suite.fuzz.witness.generic_census`) reaches."""
    found: dict[str, Witness] = {}
    for witness, cells in census(census_sessions()):
        for cell in cells:
            found.setdefault(cell_key(cell), witness)
    if generic:
        for submission, cells in generic_census():
            for cell in cells:
                witness = Witness(f"generic: {submission.what}", submission.live, submission.op, submission.args)
                found.setdefault(cell_key(cell), witness)
    return found


def reachable_cells() -> frozenset[str]:
    """The census, as report keys (:func:`~sessionlog_spec.suite.cells.cell_key`)."""
    return frozenset(census_witnesses())
