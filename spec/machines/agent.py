"""The rules every session-building machine shares: an agent harness at work.

Turns and steps open and close, the step sends its request (appending the ``request/header`` the
writer rule decides), the model streams chunks and answers with or without tool calls, tools start
and report, ranges are compacted, tool outputs rewritten, the sandbox mode and the model switch
(changing tools, system prompt and config), loop instances restart, and now and then an invalid
candidate from :data:`spec.mutations.MUTATIONS` is slipped in.  Each machine decides what a built
event means for its group by implementing :meth:`HarnessMachine.deliver` (and
:meth:`HarnessMachine.submit` for the invalid candidates).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule
from hypothesis.strategies import DrawFn

from spec.builders import RawEvent
from spec.machines.base import ConformanceMachine, MachineContext, step
from spec.machines.harness import MODELS, MODES, Harness
from spec.mutations import MUTATIONS, Context, Mutation
from spec.rule_table import CODE_OWNERS
from spec.strategies import applicable_actions

ACTION_RULES = {
    "turn_start": "start_turn",
    "user_message": "user_says",
    "step_start": "start_step",
    "chunk": "stream_chunk",
    "assistant_message": "assistant_replies",
    "tool_call": "start_tool",
    "tool_result": "finish_tool",
    "not_started_result": "finish_tool",
    "step_end": "end_step",
    "turn_end": "end_turn",
    "compaction": "compact",
    "rewrite": "rewrite_tool_output",
    "log_only": "log_note",
    "turn_only": "log_note",
    "ignorable": "log_note",
}
"""Agent actions (:func:`spec.strategies.applicable_actions`) by the rule name coverage counts them under."""


def mutations_in(contexts: Iterable[Context], owners: Iterable[str] | None = None) -> tuple[Mutation, ...]:
    """The catalogue's mutations for ``contexts`` whose code belongs to an invariant group in ``owners``."""
    wanted, groups = set(contexts), None if owners is None else set(owners)
    return tuple(
        m
        for m in MUTATIONS
        if m.context in wanted and (groups is None or any(i.split("-")[1] in groups for i in CODE_OWNERS[m.code.value]))
    )


class HarnessMachine(ConformanceMachine):
    """A machine that builds a realistic session step by step and shows each event to the port."""

    injections: tuple[Mutation, ...] = ()
    """The invalid candidates this machine slips in."""

    def __init__(self, context: MachineContext) -> None:
        super().__init__(context)
        self.h = Harness()
        self.start()

    # -- what a machine makes of the session ---------------------------------------------------------

    def start(self) -> None:
        """Prepare the port for a new example."""

    def deliver(self, raw: RawEvent) -> None:
        """Show one valid event to the port and commit it."""
        raise NotImplementedError

    def decide(self, data: st.DataObject, begins_series: bool) -> dict[str, Any] | None:
        """The writer decision for the next request (the header machine asks the port too)."""
        return self.h.model_decision(begins_series)

    def submit(self, mutation: Mutation, candidate: Any) -> None:
        """Show one invalid candidate to the port."""
        raise NotImplementedError

    # -- the agent at work --------------------------------------------------------------------------

    def next_actions(self) -> list[str]:
        """What the agent may do next, repeated by how often a harness does it."""
        if self.h.needs_request():
            return ["send_request"] * 6 + ["log_only"]
        actions = [a for a in applicable_actions(self.h.builder) if a != "request_header" and self.h.can(a)]
        return actions or ["log_only"]

    def perform(self, data: st.DataObject, action: str) -> None:
        """Take one agent action and count what it exercises under the action's name."""
        self.retitle(ACTION_RULES.get(action, action))
        if action == "send_request":
            begins_series = data.draw(st.booleans(), label="begins series")
            decision = self.decide(data, begins_series)
            if decision is not None:
                self.deliver(self.h.header_event(decision))
            self.h.request_sent()
        else:
            self.deliver(self.h.build(cast(DrawFn, data.draw), action))

    @rule(data=st.data(), actions=st.integers(1, 4))
    @step
    def agent_acts(self, data: st.DataObject, actions: int) -> None:
        # Several actions per step keep sessions realistic in length without starving other rules.
        for _ in range(actions):
            self.perform(data, data.draw(st.sampled_from(self.next_actions()), label="action"))

    @precondition(lambda self: self.h.can("compaction"))
    @rule(data=st.data())
    @step
    def compact(self, data: st.DataObject) -> None:
        self.perform(data, "compaction")

    @precondition(lambda self: self.h.can("rewrite"))
    @rule(data=st.data())
    @step
    def rewrite_tool_output(self, data: st.DataObject) -> None:
        self.perform(data, "rewrite")

    # -- the loop instance ------------------------------------------------------------------------------

    @rule(setting=st.sampled_from([*(f"mode:{m}" for m in sorted(MODES)), *(f"model:{m}" for m in sorted(MODELS))]))
    @step
    def switch_setting(self, setting: str) -> None:
        kind, name = setting.split(":")
        if kind == "mode":
            self.retitle("switch_mode")
            self.deliver(self.h.event("sandbox/mode", {"mode": name}))
            self.h.mode = name
        else:
            self.retitle("switch_model")
            self.deliver(self.h.event("model/selection", {"model": name, "provider": MODELS[name]["provider"]}))
            self.h.model = name

    @precondition(lambda self: self.h.state.trace.open_step is None and not self.h.first_request)
    @rule()
    def restart_instance(self) -> None:
        self.h.restart_instance()

    # -- invalid candidates ---------------------------------------------------------------------------

    @precondition(lambda self: bool(self.injections))
    @rule(data=st.data())
    @step
    def inject(self, data: st.DataObject) -> None:
        first = data.draw(st.integers(0, len(self.injections) - 1), label="mutation")
        rng = data.draw(st.randoms(use_true_random=False), label="rng")
        # Try the drawn mutation first, then the next ones, so a draw is rarely wasted on one the
        # session's state does not allow.
        for offset in range(len(self.injections)):
            mutation = self.injections[(first + offset) % len(self.injections)]
            candidate = mutation.build(self.h.builder, rng)
            if candidate is not None:
                self.submit(mutation, candidate)
                return
