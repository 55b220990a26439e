"""Machines for the pure groups: the harness builds the session, the port judges whole logs.

``surface``, ``repair`` and ``compaction`` ops take a whole log and leave the live session alone.
After every event the harness commits, the machine sends the log so far to the group's op and
compares the answer; invalid candidates are sent as the log plus the candidate (a seed candidate,
a whole log, as it is).  When the port
also runs sessions, each example ends by checking that none of this touched the live session.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from sessionlog_spec.model.compaction import cut_balances
from sessionlog_spec.model.session import seed_session
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.suite.agent.actions import TOOL_NAMES, assistant_with_call, open_calls
from sessionlog_spec.suite.agent.builder import RawEvent, SessionBuilder
from sessionlog_spec.suite.agent.candidates import Mutation
from sessionlog_spec.suite.agent.candidates.compaction import orphaning_spans
from sessionlog_spec.suite.judged import appended as model_append_event
from sessionlog_spec.suite.machines.agent import AgentMachine, mutations_in
from sessionlog_spec.suite.machines.base import step


class PureMachine(AgentMachine):
    """A harness machine that asks one pure op about the whole log after every event."""

    op = ""

    def start(self) -> None:
        if self.ctx.supports("session"):
            self.exchange("reset")

    def deliver(self, raw: RawEvent) -> None:
        self.loop.commit(raw)
        self.observe(self.loop.log)

    def observe(self, events: list[Any]) -> None:
        """Ask the port's op about ``events``."""
        self.exchange(self.op, self.exercised, events=list(events))

    def exercised(self, result: Any) -> tuple[str, ...]:
        """Invariants an accepted answer shows were in play (beyond the rule table's)."""
        return ()

    def submit(self, mutation: Mutation, candidate: Any) -> None:
        # A seed candidate is a whole log already (a scene built for its fault, then the fault).
        self.observe(list(candidate) if mutation.context == "seed" else [*self.loop.log, candidate])

    def teardown(self) -> None:
        if not self.failed and self.ctx.supports("session"):
            self.exchange("state")
        super().teardown()


class SurfaceMachine(PureMachine):
    """Checks ``fold_surface``: nodes, replace generation and every replacement."""

    group = "surface"
    op = "fold_surface"
    # Every event candidate, not only the surface rules': the fold reads a whole log, and a port
    # that folds without checking its envelope, its seqs or its trace is wrong on that log too.
    # Seed candidates are whole logs with the scene their fault needs (a tool result to rewrite).
    injections = mutations_in(("append", "seed"))


REGION_KINDS = ((False, True), (True, False), (False, False), (True, True))
"""The balance at a region's cut before its start and after its end, each kind a compactor asks
about; the legal kind last, as Hypothesis draws the first entries more often and the surface of
almost every other request is balanced at every cut."""


def _as_spelled(data: st.DataObject, seq: int, label: str) -> object:
    """``seq`` as it stands half the time, else as the same JSON number with a fraction (``3.0``, an
    integer by the protocol's schema): the node itself, however a port's language types it."""
    return data.draw(st.sampled_from((seq, float(seq))), label=label)


class CompactionMachine(PureMachine):
    """Checks ``cuts``: the tool-pairing balance at every cut, and around single surface nodes."""

    group = "compaction"
    op = "cuts"
    injections = mutations_in(("cuts",))

    def exercised(self, result: Any) -> tuple[str, ...]:
        # An unbalanced cut means calls were pending there: the count was walked up and back down.
        tags = ("INV-COMPACT-1",) if not all(result["balanced"]) else ()
        return (*tags, "INV-COMPACT-5") if "around" in result else tags

    def submit(self, mutation: Mutation, candidate: Any) -> None:
        if mutation.context == "cuts":
            self.exchange("cuts", **{"events": list(self.loop.log), **candidate})
        else:
            super().submit(mutation, candidate)

    @precondition(lambda self: bool(self.loop.state.surface.nodes))
    @rule(data=st.data())
    @step
    def balance_around(self, data: st.DataObject) -> None:
        seq = data.draw(st.sampled_from(self.loop.state.surface.nodes), label="surface node")
        self.exchange("cuts", self.exercised, events=list(self.loop.log), seq=_as_spelled(data, seq, "spelled"))

    @precondition(lambda self: bool(orphaning_spans(self.loop.builder)))
    @rule(data=st.data())
    @step
    def careless_compaction(self, data: st.DataObject) -> None:
        """A compactor that ignored the balance: the log takes its summary, and the surface has none after it."""
        start, end = data.draw(st.sampled_from(orphaning_spans(self.loop.builder)), label="orphaning range")
        summary = self.loop.builder.compaction(start, end, commit=False)
        if not isinstance(model_append_event(self.loop.state, summary), Violation):
            self.deliver(summary)

    @precondition(lambda self: bool(self.loop.state.surface.nodes))
    @rule(data=st.data())
    @step
    def compaction_region(self, data: st.DataObject) -> None:
        """A compactor asks whether it may take a region, of a kind drawn by the balance at its two
        bounding cuts: both balanced (a legal region), the start cut or the end cut unbalanced (the
        region would split a call from its result on that side), or both."""
        if data.draw(st.booleans(), label="answered call first"):
            self.answer_a_call(data)
        nodes = self.loop.state.surface.nodes
        balanced = cut_balances(nodes, self.loop.state.events)
        if isinstance(balanced, Violation):
            balanced = (True,) * (len(nodes) + 1)
        by_kind: dict[tuple[bool, bool], list[tuple[int, int]]] = {}
        for i in range(len(nodes)):
            for j in range(i, len(nodes)):
                by_kind.setdefault((balanced[i], balanced[j + 1]), []).append((i, j))
        # Only the kinds this surface has (the precondition leaves it a node, so at least one):
        # most surfaces are balanced at every cut, and a kind drawn that the surface lacks would
        # ask about one more legal region.  The span is drawn from that kind's, not as two drawn
        # integers: Hypothesis draws small integers far more often, and a region from the first
        # node starts at a balanced cut.
        kind = data.draw(st.sampled_from([k for k in REGION_KINDS if k in by_kind]), label="region")
        first, last = data.draw(st.sampled_from(by_kind[kind]), label="span")
        region = {"start": _as_spelled(data, nodes[first], "start spelled"), "end": _as_spelled(data, nodes[last], "end spelled")}
        self.exchange("cuts", lambda result: ("INV-COMPACT-3",), events=list(self.loop.log), region=region)

    def answer_a_call(self, data: st.DataObject) -> None:
        """Take the agent through one call and its result, where no call of the open step is pending.

        The start of a region may split a call from its result only where the surface holds an
        answered call, and this group's compactions take answered calls as soon as there are
        some: over one run its surfaces held none outside an unfinished step, so no region began
        between a call and its result."""
        self.request_now(data)
        unstarted, started = open_calls(self.loop.builder)
        if not self.loop.requested() or unstarted or started:
            return
        self.retitle("assistant_message")
        self.deliver(assistant_with_call(self.loop.builder, data.draw(st.sampled_from(TOOL_NAMES), label="tool")))
        self.perform(data, "tool_call")
        if open_calls(self.loop.builder)[1]:
            self.perform(data, "tool_result")


class RepairMachine(PureMachine):
    """Checks ``repair`` on every prefix the harness reaches, on crash cuts, and on repaired logs."""

    group = "repair"
    op = "repair"
    injections = mutations_in(("append", "seed"))

    def exercised(self, result: Any) -> tuple[str, ...]:
        closers = result["closers"]
        if not closers:
            return ("INV-REPAIR-1",)
        if any(c["type"] == "tool/result" for c in closers):
            return ("INV-REPAIR-2", "INV-REPAIR-3", "INV-REPAIR-4")
        return ("INV-REPAIR-2", "INV-REPAIR-4")

    @precondition(lambda self: len(self.loop.log) > 1)
    @rule(data=st.data())
    @step
    def repair_crash_prefix(self, data: st.DataObject) -> None:
        cut = data.draw(st.integers(1, len(self.loop.log) - 1), label="crash after event")
        self.observe(self.loop.log[:cut])

    @precondition(lambda self: len(self.loop.log) > 1)
    @rule(data=st.data())
    @step
    def repair_seeded_child(self, data: st.DataObject) -> None:
        # A child session seeded from a prefix of this one, which crashed before writing anything of
        # its own: its log ends with the end-of-seed marker, which the closers must count (INV-REPAIR-4).
        cut = data.draw(st.integers(1, len(self.loop.log)), label="seeded from")
        seeded = seed_session(self.loop.log[:cut])
        if not isinstance(seeded, Violation):
            self.observe(SessionBuilder(seeded).events)

    @precondition(lambda self: self.loop.state.trace.open_turn is not None)
    @rule(again=st.just(True))
    @step
    def repair_repaired(self, again: bool) -> None:
        closers = self.exchange_ok("repair", events=list(self.loop.log))["closers"]
        self.observe([*self.loop.log, *closers])
