"""The ``header`` group: the writer decision rule and request-header reconstruction.

Each step's request asks the port's ``header_decision`` (with the assembled header in a drawn,
possibly non-canonical presentation, which must not change the answer) and appends the snapshot
the model decides.  Reconstruction is checked through ``fold_header`` and, when the port also runs
sessions, through ``state.header`` after every append.  Invalid header events and malformed
assembled headers must be refused.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, cast

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule
from hypothesis.strategies import DrawFn

from sessionlog_spec.model.header import header_event_problem
from sessionlog_spec.model.json_value import MAX_SAFE_INTEGER, freeze, thaw
from sessionlog_spec.model.violation import Code
from sessionlog_spec.suite.agent.builder import RawEvent
from sessionlog_spec.suite.agent.candidates import MUTATIONS, Mutation
from sessionlog_spec.suite.agent.header_drift import DRIFTS, drifted
from sessionlog_spec.suite.agent.loop import MCP_TOOL, Toolbox, tool_entry
from sessionlog_spec.suite.fuzz.alternatives import alternative_sites
from sessionlog_spec.suite.machines.agent import LOOP_CHANGES, AgentMachine, mutations_in
from sessionlog_spec.suite.machines.base import step

PRESENTATIONS = ("canonical", "reordered", "empty-system", "empty-tools", "unmarked-defaults")
"""Spellings of the same assembled header: equality must see through all of them."""
PROBES = ("fold", "fold_non_canonical", "fold_foreign", "bad_header")
EMPTY_MEMBERS = {"empty-system": "system", "empty-tools": "tools", "unmarked-defaults": "adapterDefaults"}
"""Non-canonical presentations by the member each one spells out empty."""
BAD_HEADERS = (
    "unpinned", "unknown-member", "tool-without-parameters", "tool-misnamed", "max-tokens", "reasoning-effort", "defaults",
    "system-not-text",
)  # fmt: skip
TOOLS_ONLY = ("tool-added", "tool-removed", "description-revised")
"""Ways the next request's header can differ from the latest snapshot in its tool list alone."""


def presented(header: dict[str, Any], how: str) -> dict[str, Any]:
    """``header`` spelled as ``how``: the same header by the equality rule."""
    out = dict(header)
    if how == "reordered":
        out = {k: header[k] for k in reversed(list(header))}
        out["config"] = {k: header["config"][k] for k in reversed(list(header["config"]))}
    elif how == "empty-system" and "system" not in out:
        out["system"] = ""
    elif how == "empty-tools" and "tools" not in out:
        out["tools"] = []
    elif how == "unmarked-defaults" and "adapterDefaults" not in out:
        out["adapterDefaults"] = {}
    return out


_NOT_TEXT = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 2), st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.text(max_size=3), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=1),
)  # fmt: skip
"""JSON values that are no string: what a writer that stringifies nothing puts where text belongs."""
_NOT_POSITIVE = st.sampled_from((0, -1, 1.5, "100", True, None, MAX_SAFE_INTEGER + 1, -0.0))
"""Wrong ``maxTokens`` values: zero, negative, fractional, another type, past ``2^53 - 1``."""


def broken(draw: DrawFn, header: dict[str, Any], how: str) -> dict[str, Any]:
    """``header`` made invalid as ``how``, the bad value drawn (a marker drawn ``true`` for a member
    present is valid after all: the model says so, and the port must agree)."""
    out = copy.deepcopy(header)
    config: dict[str, Any] = out["config"]
    if how == "unpinned":
        pin = draw(st.sampled_from(("provider", "model")), label="pin")
        if draw(st.booleans(), label="removed"):
            del config[pin]
        else:
            config[pin] = draw(st.one_of(st.just(""), _NOT_TEXT), label="pinned as")
    elif how == "unknown-member":
        name = draw(st.sampled_from(("messagePrefix", "messages", "tool_choice", "Config", "")), label="member")
        out[name] = draw(_NOT_TEXT | st.text(max_size=3), label="value")
    elif how == "tool-without-parameters":
        tool = {"name": "read_file", "description": "the read_file tool", "parameters": {"type": "object"}}
        del tool[draw(st.sampled_from(("parameters", "description", "name")), label="left out")]
        out["tools"] = [*out.get("tools", []), tool]
    elif how == "tool-misnamed":
        out["tools"] = [*out.get("tools", []), {"name": draw(st.one_of(st.just(""), _NOT_TEXT), label="name"),
                                                 "description": "", "parameters": {"type": "object"}}]
    elif how == "max-tokens":
        config["maxTokens"] = draw(_NOT_POSITIVE, label="maxTokens")
    elif how == "reasoning-effort":
        config["reasoningEffort"] = draw(st.one_of(st.just(""), _NOT_TEXT), label="reasoningEffort")
    elif how == "defaults":
        marker = draw(st.sampled_from(("reasoningEffort", "maxTokens", "temperature")), label="marked")
        if draw(st.booleans(), label="for an absent member"):
            config.pop(marker, None)
        out["adapterDefaults"] = {marker: draw(st.sampled_from((True, False, 1, "true")), label="marked as")}
    else:
        out["system"] = draw(_NOT_TEXT, label="system")
    return out


def tools_changed(header: dict[str, Any], how: str) -> dict[str, Any]:
    """``header`` with only its tool list changed as ``how`` (a tool is added when there is none)."""
    out = dict(header)
    tools = [dict(tool) for tool in header.get("tools", [])]
    if how == "tool-removed" and tools:
        tools.pop()
    elif how == "description-revised" and tools:
        tools[0]["description"] = f"{tools[0].get('description', '')} (revised)"
    else:
        names = {tool["name"] for tool in tools}
        tools.append(tool_entry(next(n for n in (MCP_TOOL, f"{MCP_TOOL}_2") if n not in names), Toolbox()))
    if tools:
        out["tools"] = tools
    else:
        del out["tools"]
    return out


def decision_exercised(facts: dict[str, bool]) -> Callable[[Any], tuple[str, ...]]:
    """The writer-rule invariant the model's answer about a request with ``facts`` puts in play."""

    def exercised(result: Any) -> tuple[str, ...]:
        if facts["first_request"]:
            return ("INV-HDR-9",)
        changed = result["decision"] is not None and result["decision"]["reason"] == "change"
        return ("INV-HDR-10",) if changed else ("INV-HDR-11",)

    return exercised


class HeaderMachine(AgentMachine):
    """Checks ``header_decision``, ``fold_header`` and ``state.header``."""

    group = "header"
    injections = mutations_in(("append",), owners=("HDR",)) + tuple(
        m for m in MUTATIONS if m.context == "append" and m.code is Code.LEGACY_FALLBACK_REASON
    )

    @property
    def live(self) -> bool:
        """Whether the port also runs sessions, so its ``state.header`` can be watched."""
        return self.ctx.supports("session")

    def start(self) -> None:
        if self.live:
            self.exchange("reset")

    def deliver(self, raw: RawEvent) -> None:
        if self.live:
            self.exchange_ok("append", event=raw)
            self.loop.commit(raw)
        else:
            self.loop.commit(raw)
            self.exchange("fold_header", events=list(self.loop.log))

    def decide(self, data: st.DataObject, begins_series: bool) -> dict[str, Any] | None:
        how = self.pick(data, PRESENTATIONS, "presentation")
        facts = self.loop.facts(begins_series)
        self.tag("INV-HDR-7" if how != "canonical" else "INV-HDR-8")

        header = presented(self.loop.assembled(), how)
        exercised = decision_exercised(facts)
        result = self.exchange_ok("header_decision", exercised, events=list(self.loop.log), header=header, instance=facts)
        decision: dict[str, Any] | None = result["decision"]
        return decision

    def submit(self, mutation: Mutation, candidate: Any) -> None:
        facts = self.loop.facts(begins_series=False)
        self.exchange("header_decision", events=[*self.loop.log, candidate], header=self.loop.assembled(), instance=facts)

    @rule(data=st.data())
    @step
    def probe_headers(self, data: st.DataObject) -> None:
        probe = self.pick(data, PROBES, "probe")
        if probe == "bad_header":
            # Every way a header can be broken, each with its bad value drawn.  One kind per probe
            # put each kind before the port a few times a run, and each bad value of a kind with
            # several (a system prompt that is null, false, 0, a list) fewer times still.
            self.retitle("request_with_bad_header")
            facts = self.loop.facts(data.draw(st.booleans(), label="begins series"))
            assembled = self.loop.assembled()  # broken() spoils a copy of it
            for how in BAD_HEADERS:
                header = broken(cast(DrawFn, data.draw), assembled, how)
                self.exchange("header_decision", events=list(self.loop.log), header=header, instance=facts)
            return
        self.retitle("fold_headers")
        events: list[Any] = list(self.loop.log)
        if probe == "fold_non_canonical":
            # Another writer's non-canonical spelling: the fold judges a snapshot as seed and append
            # do (INV-HDR-5), so it refuses the log rather than reading the canonical form out of it.
            how = self.pick(data, sorted(EMPTY_MEMBERS), "presentation")
            # Drop the member first, so the stored snapshot spells it out empty whatever the mode
            # (most modes have a system prompt and tools, which would leave the snapshot canonical).
            bare = {k: v for k, v in self.loop.assembled().items() if k != EMPTY_MEMBERS[how]}
            snapshot = presented(bare, how)
            payload = {"header": snapshot, "reason": "change"}
            events.append({"type": "request/header", "seq": len(events), "time": 0, "data": payload})
        elif probe == "fold_foreign":
            # Another writer's snapshot: the reader takes the latest whatever its reason, and the
            # writer's rule (which reason goes with which header) is not the reader's to check.
            base = self.loop.assembled()
            how = self.pick(data, DRIFTS, "drift")
            snapshot = drifted(cast(DrawFn, data.draw), base, how) or base
            reason = data.draw(st.sampled_from(("initial", "resume", "change", "series")))
            foreign: dict[str, object] = {"header": snapshot, "reason": reason}
            if data.draw(st.booleans(), label="starts series"):
                foreign["startsSeries"] = True
            time = events[-1]["time"] if events else 0
            events.append({"type": "request/header", "seq": len(events), "time": time, "data": foreign})
        self.exchange("fold_header", events=events)

    @precondition(lambda self: self.loop.state.header is not None)
    @rule(data=st.data())
    @step
    def request_with_other_tools(self, data: st.DataObject) -> None:
        # Loop changes mostly alter the system prompt or config along with the tools, and a request
        # follows a change only now and then; asking about a header that differs from the latest
        # snapshot in its tools alone shows whether equality looks at the tool list (INV-HDR-7).
        how = self.pick(data, TOOLS_ONLY, "tools changed")
        header = tools_changed(cast(dict[str, Any], thaw(self.loop.state.header)), how)
        facts = self.loop.facts(data.draw(st.booleans(), label="begins series"))
        self.exchange("header_decision", events=list(self.loop.log), header=header, instance=facts)

    @precondition(lambda self: self.loop.state.header is not None)
    @rule(data=st.data())
    @step
    def request_with_alternative_header(self, data: st.DataObject) -> None:
        # The latest snapshot with one value replaced by an alternative of its schema
        # (sessionlog_spec.suite.fuzz.alternatives): a member left out or written, a value's sibling,
        # a boolean flipped, or a twin the host language takes for equal (`true` for `1`, `1.0` for
        # `1`) anywhere in it, an opaque tool schema included.  Equality compares JSON values
        # (INV-HDR-7): each is a change the writer must record, or a spelling it must see through.
        latest = cast(dict[str, Any], thaw(self.loop.state.header))
        sites = [(site, edited) for site, edited in alternative_sites("request/header", {"header": latest, "reason": "change"})
                 if site.startswith("header") and isinstance(edited, dict)]  # fmt: skip
        if not sites:
            return
        site = self.pick(data, sorted(s for s, _ in sites), "alternative")
        header = dict(sites)[site]["header"]
        facts = self.loop.facts(data.draw(st.booleans(), label="begins series"))
        self.exchange("header_decision", decision_exercised(facts), events=list(self.loop.log), header=header, instance=facts)

    @precondition(lambda self: self.loop.state.header is not None)
    @rule(data=st.data(), instance=st.sampled_from(("this", "new")))
    @step
    def request_with_same_header(self, data: st.DataObject, instance: str) -> None:
        # An example sends a request every twenty-odd steps, and most of them change the header or
        # begin no series, so the anchoring and series rules were put to the port a few times per
        # run.  This asks, without committing, what the next request would write if its header
        # equalled the latest snapshot (in any spelling): `resume` from a new loop instance; from
        # this one, `series` when a series begins and nothing otherwise.
        how = self.pick(data, PRESENTATIONS, "presentation")
        latest = cast(dict[str, Any], thaw(self.loop.state.header))
        facts = self.loop.facts(data.draw(st.booleans(), label="begins series"))
        facts["first_request"] = facts["first_request"] or instance == "new"
        self.tag("INV-HDR-7" if how != "canonical" else "INV-HDR-8")
        header = presented(latest, how)
        self.exchange("header_decision", decision_exercised(facts), events=list(self.loop.log), header=header, instance=facts)

    @precondition(lambda self: self.loop.state.header is not None and self.loop.state.trace.open_turn is not None)
    @rule(
        data=st.data(),
        instance=st.sampled_from(("this", "new")),
    )
    @step
    def request_after_drift_undone(self, data: st.DataObject, instance: str) -> None:
        # A drift is one difference from the latest snapshot; the snapshot the drifted request
        # writes and the settings put back then differ the other way round: a member the snapshot
        # lacks and the header has (a system prompt, tools, a config value, a marker), a tool it does
        # not list.  Snapshots mostly hold every member, so that side of equality was rarely asked.
        how, presentation = self.pick(data, DRIFTS, "drift"), self.pick(data, PRESENTATIONS, "presentation")
        before = cast(dict[str, Any], thaw(self.loop.state.header))
        header = drifted(cast(DrawFn, data.draw), before, how)
        if header is None or header_event_problem(freeze({"header": header, "reason": "change"})) is not None:
            return
        if instance == "new" and self.loop.state.trace.open_step is None:
            # A new loop instance anchors with `resume` whatever it sends: the drifted snapshot is
            # then a resume that changes the header, which the session must track as it tracks a change.
            self.loop.restart_instance()
        settings, self.loop.drift = self.loop.drift, header
        try:
            decision = self.decide(data, begins_series=False)
            if decision is not None:
                self.deliver(self.loop.header_event(decision))
        finally:
            self.loop.drift = settings
        # Asked of a loop instance that has sent requests: the first request anchors whatever it sends.
        facts = {**self.loop.facts(data.draw(st.booleans(), label="begins series")), "first_request": False}
        self.tag("INV-HDR-7" if presentation != "canonical" else "INV-HDR-8")
        question = presented(before, presentation)
        self.exchange("header_decision", decision_exercised(facts), events=list(self.loop.log), header=question, instance=facts)

    @precondition(lambda self: self.loop.state.trace.open_step is None and self.loop.state.header is not None)
    @rule(data=st.data(), change=st.sampled_from(LOOP_CHANGES))
    @step
    def change_then_request(self, data: st.DataObject, change: str) -> None:
        # The request right after a change is where the writer's rule shows: a restart over a log
        # that holds a snapshot anchors with `resume`, and a tools-only change must write `change`.
        # Changes and requests are each common, but one straight after the other is rare, and a
        # second change in between hides which of them the snapshot records.
        self.change_loop(change)
        self.request_now(data)
