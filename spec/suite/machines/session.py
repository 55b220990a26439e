"""The ``session`` group: a live session built by ``append`` and ``seed``, observed through ``state``.

Every valid event the harness builds is appended to the port and its state compared with the
model's; invalid candidates (``append`` and ``seed`` mutations) must be refused and must leave the
state, and the saved form when the port saves, unchanged; now and then the session is replaced by
a seed (a child session inheriting its parent's history, a prefix of it cut anywhere, the session
with something left open at its end, or a fresh realistic one), which is saved and loaded back.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import rule

from sessionlog_spec.model.relationships import relationship_finish
from sessionlog_spec.model.session import EMPTY_SESSION
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.protocol.messages import Ok
from sessionlog_spec.suite.agent.builder import RawEvent, realistic_session
from sessionlog_spec.suite.agent.candidates import Mutation
from sessionlog_spec.suite.agent.candidates.relationships import OPENINGS, opened_scene
from sessionlog_spec.suite.judged import appended
from sessionlog_spec.suite.machines.agent import AgentMachine, mutations_in
from sessionlog_spec.suite.machines.base import step


def _replayed_live(candidate: Any) -> bool:
    """Whether a seed candidate goes in live instead: half of them, decided by the candidate itself so
    that a replayed example does the same, and only where what the appends accept is a whole log.
    A scene that only its end-of-seed marker makes whole (a compaction left open across a turn's
    end, which the marker retires) is no session a harness goes on appending to."""
    if not (isinstance(candidate, list) and len(candidate) % 2 == 0):
        return False
    state = EMPTY_SESSION
    for event in candidate:
        following = appended(state, event)
        if isinstance(following, Violation):
            break
        state = following
    return relationship_finish(state.relations) is None


class LiveSessionMachine(AgentMachine):
    """A harness machine whose events go to the port's live session."""

    def start(self) -> None:
        self.exchange("reset")

    def deliver(self, raw: RawEvent) -> None:
        self.exchange_ok("append", event=raw)
        self.loop.commit(raw)

    def check_state(self) -> None:
        """The port's observable state equals the model's, and so does its saved form when it saves."""
        self.exchange("state")
        if self.ctx.supports("jsonl"):
            self.exchange("save")


class SessionMachine(LiveSessionMachine):
    """Checks ``reset``, ``seed``, ``append`` and ``state``."""

    group = "session"
    injections = mutations_in(("append", "seed"))

    def submit(self, mutation: Mutation, candidate: Any) -> None:
        if mutation.context == "seed" and _replayed_live(candidate):
            self.replay_live(candidate)
        elif mutation.context == "seed":
            self.exchange("seed", events=candidate)
        else:
            self.exchange("append", event=candidate)
        self.after_refusal()

    def replay_live(self, events: list[Any]) -> None:
        """A seed candidate's scene built live, event by event, then its fault appended: the rule on the
        append path, in the scene the candidate needs (most seed candidates have no append twin)."""
        self.settle_state_check()
        self.exchange("reset")
        for event in events:
            if not isinstance(self.exchange("append", event=event), Ok):
                break
        self.take_over(self.oracle.state)

    @rule(
        source=st.sampled_from(
            ["inherit", "inherit", "inherit", "prefix", "opened", "opened", "fresh:1", "fresh:2", "fresh:3", "empty"]
        ),
        cut=st.floats(0, 1),
        what=st.sampled_from(OPENINGS),
        rng=st.randoms(use_true_random=True),
    )
    @step
    def reseed(self, source: str, cut: float, what: str, rng: random.Random) -> None:
        """``prefix`` seeds the log cut anywhere, ``opened`` the log with ``what`` left open at its end
        (:func:`~sessionlog_spec.suite.agent.candidates.relationships.opened_scene`): the end-of-seed marker then
        lands in the middle of whatever was under way, and the session goes on from there."""
        events: list[RawEvent]
        if source == "inherit":
            events = list(self.loop.log)
        elif source == "prefix":
            events = list(self.loop.log[: round(cut * len(self.loop.log))])
        elif source == "opened":
            events = opened_scene(self.loop.builder, what, rng) or list(self.loop.log)
        elif source.startswith("fresh"):
            turns = int(source.split(":")[1])
            events = realistic_session(turns, calls_per_step=turns - 1).events
        else:
            events = []
        if not isinstance(self.exchange("seed", events=events), Ok):
            return  # a prefix the model refuses as a seed (the port must refuse it too) leaves the session
        self.take_over(self.oracle.state)
        if self.ctx.supports("jsonl"):
            # A seeded session is saved and loaded back: the child's stored form keeps its parent's
            # history and the end-of-seed marker, and reading it gives the same session.
            saved = self.exchange_ok("save")
            self.exchange_ok("load", jsonl=saved["jsonl"])
            self.take_over(self.oracle.state)  # loading closes a turn the seed left open
            self.check_state()
