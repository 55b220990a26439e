"""The ``legacy`` group: v0 logs through the v0-to-v1 edge.

Each example picks the legacy forms its v0 writer used (``turn/start.trigger``, legacy turn-end
reasons, ``steering/message``, pre-identity messages, ``messagePrefix``, non-canonical headers,
``compact/*``; see :mod:`sessionlog_spec.suite.agent.legacy_forms`).  As the harness builds the session, the port's
``upgrade_v0`` is asked now and then about the whole log written in those forms; refused forms
(``request/header-delta``, reason ``fallback``, ``mode/set``, types outside the v0 inventory) must
be refused, v1 logs and upgraded output must come back unchanged, and ports that load logs are
asked to load the v0 text too.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule

from sessionlog_spec.model.jsonl import encode_line
from sessionlog_spec.protocol.messages import Ok
from sessionlog_spec.suite.agent.builder import RawEvent
from sessionlog_spec.suite.agent.candidates import Mutation
from sessionlog_spec.suite.agent.legacy_forms import FORMS, restarted_turn, v0_events
from sessionlog_spec.suite.machines.agent import AgentMachine, mutations_in
from sessionlog_spec.suite.machines.base import MachineContext, step

REFUSED_FORMS = ("header-delta", "fallback", "mode-set", "unknown-type")
SESSION_IDS = ("s-1", "sess-2026", "séance")


def refused_event(form: str, seq: int, ignorable: bool) -> dict[str, Any]:
    """A v0 event the edge must refuse, at ``seq``."""
    event: dict[str, Any] = {"seq": seq, "time": 1_700_000_000_000 + seq}
    if form == "header-delta":
        event.update(type="request/header-delta", data={"delta": {"system": "Be brief."}, "reason": "change"})
    elif form == "fallback":
        header = {"config": {"provider": "deepseek", "model": "deepseek-chat"}}
        event.update(type="request/header", data={"header": header, "reason": "fallback"})
    elif form == "mode-set":
        event.update(type="mode/set", data={"mode": "plan"})
    else:
        event.update(type="vendor/telemetry", data={"tokens": 12})
    if ignorable:
        event["ignorable"] = True
    return event


def stored_text(log: dict[str, Any]) -> str:
    """A stored log as JSONL text."""
    return "".join(encode_line(line) + "\n" for line in [log["header"], *log["events"]])


class LegacyMachine(AgentMachine):
    """Checks ``upgrade_v0`` (and ``load`` of v0 text when the port loads logs)."""

    group = "legacy"
    injections = mutations_in(("upgrade",))
    unknown_types = False

    style: frozenset[str] = frozenset()
    session_id = SESSION_IDS[0]
    upgraded: dict[str, Any] | None = None

    def __init__(self, context: MachineContext) -> None:
        super().__init__(context)
        self.v0_log: list[dict[str, Any]] = []

    @property
    def loads(self) -> bool:
        """Whether the port loads stored logs, so v0 text can go through ``load`` too."""
        return self.ctx.supports("session") and self.ctx.supports("jsonl")

    def start(self) -> None:
        if self.loads:
            self.exchange("reset")

    def stored(self, version: int = 0, extra: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """The session as a stored log ``{header, events}``: v0 in this example's style, or v1."""
        header = {
            "type": "session",
            "version": version,
            "id": self.session_id,
            "createdAt": 1_700_000_000_000,
            "delegationDepth": 0,
        }
        if version == 0:
            # The log only grows, so each event is written in legacy form once.
            self.v0_log += v0_events(self.loop.log[len(self.v0_log) :], self.style)
            events = list(self.v0_log)
        else:
            events = list(self.loop.log)
        return {"header": header, "events": [*events, *(extra or [])]}

    def upgrade(self, log: dict[str, Any]) -> None:
        """Ask for the upgrade of ``log``; keep an accepted result for the fixed-point check."""
        reply = self.exchange("upgrade_v0", log=log)
        if isinstance(reply, Ok):
            self.upgraded = reply.result["log"]

    def deliver(self, raw: RawEvent) -> None:
        # Upgrading the whole log after every event would make an example quadratic in the model's
        # slowest function; the session grows silently and ``upgrade_legacy`` asks about it.
        self.loop.commit(raw)

    def submit(self, mutation: Mutation, candidate: Any) -> None:
        self.upgrade(candidate)

    @initialize(style=st.frozensets(st.sampled_from(FORMS)), session_id=st.sampled_from(SESSION_IDS))
    def choose_writer(self, style: frozenset[str], session_id: str) -> None:
        self.style, self.session_id = style, session_id

    @rule(check=st.just("v0"))
    @step
    def upgrade_legacy(self, check: str) -> None:
        self.upgrade_session()

    def upgrade_session(self) -> None:
        """Ask for the upgrade of the session as this example's v0 writer stores it."""
        log = self.stored()
        if log["events"] != self.loop.log:
            self.tag("INV-LEGACY-5", "INV-LEGACY-8")
        self.upgrade(log)

    @rule(data=st.data(), ignorable=st.booleans())
    @step
    def upgrade_refused_form(self, data: st.DataObject, ignorable: bool) -> None:
        form = self.pick(data, REFUSED_FORMS, "form")
        self.upgrade(self.stored(extra=[refused_event(form, len(self.loop.log), ignorable)]))

    @rule(v1=st.just(1))
    @step
    def upgrade_v1_unchanged(self, v1: int) -> None:
        self.upgrade(self.stored(version=v1))

    @precondition(lambda self: self.loop.state.trace.open_turn is not None and self.loop.state.trace.open_step is None)
    @rule(inserted=st.integers(1, 2), stored_as=st.sampled_from(("v0", "v1")))
    @step
    def restart_interrupted_turn(self, inserted: int, stored_as: str) -> None:
        # The one v0 pattern the edge admits (INV-LEGACY-6): a resumed writer spliced the user's
        # message into the next turn and opened it without ending the interrupted one.  The edge
        # converts it and its output upgrades again unchanged (INV-LEGACY-7); the same log stored as
        # v1 is refused, whether read, loaded or put to the edge as v1.
        restart = restarted_turn(self.loop.builder, inserted)
        log = self.stored(version=0 if stored_as == "v0" else 1, extra=restart)
        self.upgrade(log)
        if self.ctx.supports("read"):
            self.exchange("read", jsonl=stored_text(log))
        if self.loads and not isinstance(self.exchange("load", jsonl=stored_text(log)), Ok):
            self.exchange("state")

    @precondition(lambda self: self.upgraded is not None)
    @rule(again=st.just(True))
    @step
    def upgrade_twice(self, again: bool) -> None:
        assert self.upgraded is not None
        self.upgrade(self.upgraded)

    @precondition(lambda self: self.loads or self.ctx.supports("read"))
    @rule(data=st.data())
    @step
    def load_legacy(self, data: st.DataObject) -> None:
        refused = self.pick(data, (None, *REFUSED_FORMS), "refused form")
        extra = [] if refused is None else [refused_event(refused, len(self.loop.log), ignorable=False)]
        text = stored_text(self.stored(extra=extra))
        if self.ctx.supports("read"):
            self.exchange("read", jsonl=text)
        if self.loads:
            reply = self.exchange("load", jsonl=text)
            if not isinstance(reply, Ok):
                self.exchange("state")

    def closing_check(self) -> None:
        self.retitle("upgrade_legacy")
        self.upgrade_session()

    def teardown(self) -> None:
        if not self.failed and self.loads:
            self.exchange("state")
        super().teardown()
