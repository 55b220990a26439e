"""The ``legacy`` group: v0 logs through the v0-to-v1 edge.

Each rule draws a realistic session written in legacy forms (``turn/start.trigger``, legacy
turn-end reasons, ``steering/message``, pre-identity messages, ``messagePrefix``, non-canonical
headers, ``compact/*``; see :func:`spec.strategies.v0_logs`) and asks the port's ``upgrade_v0``:
converted logs must equal the model's, refused forms (``request/header-delta``, reason
``fallback``, ``mode/set``, types outside the v0 inventory) must be refused, v1 logs and upgraded
output must come back unchanged.  Ports that also load logs are asked to load the v0 text.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from model.json_value import thaw
from model.jsonl import encode_line
from model.legacy import StoredLog
from model.session import fold_session
from model.violation import Violation
from spec.builders import SessionBuilder
from spec.machines.agent import mutations_in
from spec.machines.base import ConformanceMachine, MachineContext, step
from spec.port import Ok
from spec.strategies import V0Case, v0_logs

V0_CASES = v0_logs(max_actions=16)
REFUSED_FORMS = ("header-delta", "fallback", "mode-set", "unknown-type")


def stored_json(log: StoredLog) -> dict[str, Any]:
    """A stored log as the protocol's ``log`` argument."""
    return {"header": thaw(log.header), "events": [thaw(e) for e in log.events]}


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


class LegacyMachine(ConformanceMachine):
    """Checks ``upgrade_v0`` (and ``load`` of v0 text when the port loads logs)."""

    group = "legacy"
    injections = mutations_in(("upgrade",))

    def __init__(self, context: MachineContext) -> None:
        super().__init__(context)
        self.builder = SessionBuilder()
        self.upgraded: dict[str, Any] | None = None
        self.case: V0Case | None = None
        if self.loads:
            self.exchange("reset")

    @property
    def loads(self) -> bool:
        """Whether the port loads stored logs, so v0 text can go through ``load`` too."""
        return self.ctx.supports("session") and self.ctx.supports("jsonl")

    def upgrade(self, log: dict[str, Any]) -> None:
        """Ask for the upgrade of ``log``; keep an accepted result for the fixed-point check."""
        reply = self.exchange("upgrade_v0", log=log)
        if isinstance(reply, Ok):
            self.upgraded = reply.result["log"]

    def adopt(self, case: V0Case) -> None:
        """Keep the case's v1 session for the mutations to build on."""
        state = fold_session(case.expected.events)
        if not isinstance(state, Violation):
            self.builder = SessionBuilder(state)

    @rule(case=V0_CASES)
    @step
    def upgrade_legacy(self, case: V0Case) -> None:
        self.case = case
        self.upgrade(stored_json(case.v0))
        self.adopt(case)

    @precondition(lambda self: self.case is not None)
    @rule(form=st.sampled_from(REFUSED_FORMS), ignorable=st.booleans())
    @step
    def upgrade_refused_form(self, form: str, ignorable: bool) -> None:
        assert self.case is not None
        log = stored_json(self.case.v0)
        log["events"].append(refused_event(form, len(log["events"]), ignorable))
        self.upgrade(log)

    @precondition(lambda self: self.case is not None)
    @rule()
    @step
    def upgrade_v1_unchanged(self) -> None:
        assert self.case is not None
        self.upgrade(stored_json(self.case.expected))

    @precondition(lambda self: self.upgraded is not None)
    @rule()
    @step
    def upgrade_twice(self) -> None:
        assert self.upgraded is not None
        self.upgrade(self.upgraded)

    @precondition(lambda self: self.loads and self.case is not None)
    @rule(refused=st.one_of(st.none(), st.sampled_from(REFUSED_FORMS)))
    @step
    def load_legacy(self, refused: str | None) -> None:
        assert self.case is not None
        log = stored_json(self.case.v0)
        if refused is not None:
            log["events"].append(refused_event(refused, len(log["events"]), ignorable=False))
        reply = self.exchange("load", jsonl=stored_text(log))
        if not isinstance(reply, Ok):
            self.exchange("state")

    @rule(rng=st.randoms(use_true_random=True))
    @step
    def inject(self, rng: random.Random) -> None:
        mutation = rng.choice(self.injections)
        candidate = mutation.build(self.builder, rng)
        if candidate is not None:
            self.upgrade(candidate)

    def teardown(self) -> None:
        if not self.failed and self.loads:
            self.exchange("state")
        super().teardown()
