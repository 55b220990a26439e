"""The registry of invalid candidates: at least one named mutation per violation code.

A *mutation* turns a :class:`~sessionlog_spec.suite.agent.builder.SessionBuilder` holding a valid session into one
invalid candidate that the model refuses with exactly the mutation's ``code``, as the **first**
violation in the model's check order (``model/session.py``): envelope, contiguity, vocabulary,
payload shape, surface, tool-pairing balance, trace.  As far as the state allows, a candidate
breaks exactly one rule; a mutation whose rule cannot be broken cleanly from the given state
returns ``None`` (for example a tool-result rewrite needs a tool result on the surface and an open
turn).  The candidates copy realistic faults: a ``turn/start`` while a turn is open, a replace
whose start was shadowed, a compaction that separates a tool call from its result, a rewrite that
flips ``isError``, a header with ``system: ""``, a CRLF line in the middle of a stored log, a v0 log
with ``mode/set``.

API (stable; the conformance state machines draw from it):

* :class:`Mutation` ``(name, code, context, build)``: ``build(builder, rng)`` returns the
  candidate or ``None``.  ``build`` never changes ``builder``; ``rng`` only picks among equally
  realistic variants, so a fixed seed gives a fixed candidate.
* :data:`MUTATIONS`: every mutation, in a fixed order (the group modules' in the order of the
  table below, each in the order its builders are defined, the v0 source's last, then the lifted
  twins); names are unique.
* ``candidate`` ``(code, context)``: in each group module, the decorator that registers a builder
  as a mutation named after the function (:class:`~sessionlog_spec.suite.agent.candidates.base.Registry`).
* :func:`mutations_for` ``(code)``: the mutations that produce ``code``.
* :func:`applicable` ``(builder, rng)``: every mutation that applies to the builder's state,
  each with its candidate, as :class:`Candidate` values.
* :func:`submit` ``(builder, candidate)``: the reference answer, through the contracted model.

A candidate's *context* says where it goes, and what kind of value it is:

=========== ======================================================= =====================================
context     candidate                                               submitted to
=========== ======================================================= =====================================
``append``  one raw event (usually a ``dict``) for the builder's    ``append_event(builder.state, c)``
            session
``seed``    a whole raw event list                                  ``seed_session(c)``
``load``    the text of a stored JSONL log                          ``load_session(c)``
``upgrade`` a v0 log ``{"header": {...}, "events": [...]}``         ``upgrade_v0(StoredLog(...))``
``cuts``    a seq that is not on the builder's surface              ``balanced_around(nodes, log, c)``
=========== ======================================================= =====================================

Every candidate is plain JSON (``dict``, ``list``, ``str``, ``int``, ``float``, ``bool``, ``None``)
and keeps its meaning through a JSON encoder and decoder, so a driver-based machine can send it to
a port unchanged (the ``append``/``seed`` candidates as the protocol's ``event``/``events``, the
``upgrade`` candidate as ``log``, the ``load`` candidate as ``jsonl``).

One module per rule group, named as the contracts (:mod:`sessionlog_spec.contracts`) and the tests
(``tests/model/test_<group>.py``) name it, holds the candidates refused under that group's rules:

===================== ================ =========================================================
module                invariants       candidates
===================== ================ =========================================================
:mod:`.log`           ``INV-LOG``      the envelope, lossless values, contiguity, the vocabulary,
                                       message shapes
:mod:`.header`        ``INV-HDR``      request header snapshots
:mod:`.surface`       ``INV-SURF``     surface ops, replaced ranges, cited seqs, rewrites
:mod:`.trace`         ``INV-TRACE``    turns, steps, events outside them, unpaired results
:mod:`.compaction`    ``INV-COMPACT``  the tool-pairing balance a compactor reads (``cuts``)
:mod:`.jsonl`         ``INV-JSONL``    the stored form
:mod:`.legacy`        ``INV-LEGACY``   legacy forms on v1 paths and at the edge; the v0 source
:mod:`.relationships` ``INV-REL``      tool lifecycles, compactions, retries, programmatic calls,
                                       commands, titles, delivery markers
:mod:`.payloads`      ``INV-PAY``      every type's payload broken at one site
===================== ================ =========================================================

No candidate is refused under ``INV-REPAIR``: what a crash does to a stored log is
:mod:`~sessionlog_spec.suite.agent.crashes`.  What several groups build with (the registry's types,
readers of the builder's state, the scenes a fault needs) is :mod:`.base`; :mod:`.lifted` adds the
twins of every candidate on the other paths.

Each builder is registered where it is defined, by ``@candidate(code, context)``, in its module's
registry; :data:`MUTATIONS` joins the modules' registries in the table's order, each in definition
order, with legacy's v0 source (:data:`.legacy.V0_SOURCE`) after the payloads.  The state machines
draw from that order with a seeded generator, so moving a builder (like adding one) changes what a
seeded run does.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping

from sessionlog_spec.contracts import compaction as contracted_compaction
from sessionlog_spec.contracts.jsonl import load_session
from sessionlog_spec.contracts.legacy import upgrade_v0
from sessionlog_spec.contracts.log import append_event, seed_session
from sessionlog_spec.model.json_value import freeze
from sessionlog_spec.model.legacy import StoredLog
from sessionlog_spec.model.violation import Code
from sessionlog_spec.suite.agent.builder import SessionBuilder
from sessionlog_spec.suite.agent.candidates import (
    compaction,
    header,
    jsonl,
    legacy,
    log,
    payloads,
    relationships,
    surface,
    trace,
)
from sessionlog_spec.suite.agent.candidates.base import CONTEXTS, Candidate, Context, Mutation, cuts_answer
from sessionlog_spec.suite.agent.candidates.lifted import add_twins

__all__ = ["CONTEXTS", "MUTATIONS", "Candidate", "Context", "Mutation", "applicable", "mutations_for", "submit"]

MUTATIONS: list[Mutation] = [
    *log.REGISTERED.mutations,
    *header.REGISTERED.mutations,
    *surface.REGISTERED.mutations,
    *trace.REGISTERED.mutations,
    *compaction.REGISTERED.mutations,
    *jsonl.REGISTERED.mutations,
    *legacy.REGISTERED.mutations,
    *relationships.REGISTERED.mutations,
    *payloads.REGISTERED.mutations,
    *legacy.V0_SOURCE.mutations,
]
"""Every mutation: the groups' in the order above (seeded draws depend on it), then their lifted twins."""

_REPEATED = sorted(name for name, n in Counter(m.name for m in MUTATIONS).items() if n > 1)
assert not _REPEATED, f"duplicate mutation names {_REPEATED}"
add_twins(MUTATIONS)

_BY_CODE: dict[Code, tuple[Mutation, ...]] = {code: tuple(m for m in MUTATIONS if m.code is code) for code in Code}


def mutations_for(code: Code) -> tuple[Mutation, ...]:
    """The mutations that produce ``code``, in registry order."""
    return _BY_CODE[code]


def applicable(builder: SessionBuilder, rng: random.Random) -> tuple[Candidate, ...]:
    """Every mutation that applies to ``builder``'s state, with the candidate it built."""
    built = (Candidate(m, m.build(builder, rng)) for m in MUTATIONS)
    return tuple(c for c in built if c.value is not None)


def submit(builder: SessionBuilder, candidate: Candidate) -> object:
    """The contracted model's answer to ``candidate`` in its context: a :class:`Violation` or the accepted result."""
    value, state = candidate.value, builder.state
    if candidate.context == "append":
        return append_event(state, value)
    if candidate.context == "seed":
        return seed_session(value)
    if candidate.context == "load":
        return load_session(value)
    if candidate.context == "upgrade":
        stored, events = freeze(value["header"]), tuple(freeze(e) for e in value["events"])
        assert isinstance(stored, Mapping)
        return upgrade_v0(StoredLog(stored, events))  # type: ignore[arg-type]
    return cuts_answer(state, value, contracted_compaction)
