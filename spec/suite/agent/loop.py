"""The agent harness a state machine plays: a valid session plus the loop instance that writes it.

:class:`AgentLoop` wraps a :class:`~sessionlog_spec.suite.agent.builder.SessionBuilder` with what a real harness knows
beyond the log: the sandbox mode and model (which decide the tools, system prompt and config of
the next request), whether the next request is the first of this loop instance, whether a
replacement happened since the last request, and whether the open step already sent its request.
The actions it can take next come from :func:`sessionlog_spec.suite.agent.actions.applicable_actions` and are built
by :func:`sessionlog_spec.suite.agent.actions.build_action`, so every event it builds is valid by construction.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Any

from hypothesis.strategies import DrawFn

from sessionlog_spec.model.json_value import as_object, freeze
from sessionlog_spec.model.session import SessionState
from sessionlog_spec.protocol.model_driver import decision_result
from sessionlog_spec.suite.agent.actions import applicable_actions, build_action
from sessionlog_spec.suite.agent.builder import RawEvent, SessionBuilder

MODES: dict[str, tuple[str, tuple[str, ...]]] = {
    "workspace-write": ("You are a careful coding agent. Edit files in the workspace only.", ("read_file", "write_file", "bash")),
    "read-only": ("You are a careful coding agent. You may read files but not change them.", ("read_file", "grep")),
    "danger-full-access": ("", ()),
}
"""Sandbox modes, the three a released ``sandbox/mode`` names: each switches the system prompt and the
tool list of the next request (planning is no sandbox mode: ``plan/mode`` logs it)."""

MODELS: dict[str, dict[str, Any]] = {
    "deepseek-chat": {"provider": "deepseek", "model": "deepseek-chat"},
    "deepseek-reasoner": {"provider": "deepseek", "model": "deepseek-reasoner", "reasoningEffort": "high"},
    "gpt-5": {"provider": "openai", "model": "gpt-5", "maxTokens": 4096},
}
"""Model selections: each pins a provider and model, some with adapter-defaulted settings."""

DEFAULTED = {"deepseek-reasoner": {"reasoningEffort": True}}
"""Models whose config values come from the adapter's defaults (``adapterDefaults`` marks them)."""

MCP_TOOL = "mcp__docs__search"
"""The tool an MCP server contributes while it is attached: attaching or detaching it changes the tools alone."""


@dataclass(frozen=True, slots=True)
class Toolbox:
    """What the tool list holds besides the mode's own tools.

    Attaching an MCP server or refreshing the tools' descriptions changes the tool list and nothing
    else, so header equality must look at ``tools`` to notice that the next request differs.
    """

    mcp_attached: bool = False
    descriptions_revised: bool = False


def tool_parameters(name: str) -> dict[str, Any]:
    """A tool's parameters as real tools declare them: a JSON Schema with typed members, a bound, a
    flag and a default.  Opaque to the log, but a header's equality must compare them as JSON values,
    where ``false`` is not ``0`` and ``1`` is not ``true``."""
    return {
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "description": f"what {name} works on"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 2000, "default": 200},
            "recursive": {"type": "boolean", "default": False},
        },
        "required": ["path"],
        "additionalProperties": False,
    }


def tool_entry(name: str, toolbox: Toolbox) -> dict[str, Any]:
    """One tool as a request lists it."""
    description = f"the {name} tool" + (" (revised)" if toolbox.descriptions_revised else "")
    return {"name": name, "description": description, "parameters": tool_parameters(name)}


def assembled_header(mode: str, model: str, toolbox: Toolbox = Toolbox()) -> dict[str, Any]:
    """The canonical request header a loop instance in ``mode`` using ``model`` sends."""
    system, tools = MODES[mode]
    names = (*tools, MCP_TOOL) if toolbox.mcp_attached else tools
    header: dict[str, Any] = {"config": dict(MODELS[model])}
    if model in DEFAULTED:
        header["adapterDefaults"] = dict(DEFAULTED[model])
    if system:
        header["system"] = system
    if names:
        header["tools"] = [tool_entry(t, toolbox) for t in names]
    return header


class AgentLoop:
    """A valid session under construction and the loop instance writing it."""

    def __init__(self, builder: SessionBuilder | None = None, unknown_types: bool = True) -> None:
        self.builder = builder or SessionBuilder()
        self.unknown_types = unknown_types
        """Whether ignorable events of types outside the vocabulary may be written (a v0 writer never did)."""
        self.log: list[RawEvent] = self.builder.events
        self.mode = "workspace-write"
        self.model = "deepseek-chat"
        self.toolbox = Toolbox()
        self.drift: dict[str, Any] | None = None
        """A header the loop sends instead of its mode's and model's: settings changed without a logged switch."""
        self.first_request = True
        self.replaced_since_request = False
        trace = self.builder.state.trace
        # A session taken over mid-step (after a seed or a load) already sent that step's request.
        self.requested_step: tuple[int | None, int | None] | None = (
            (trace.open_turn, trace.open_step) if trace.open_step is not None else None
        )
        self._actions_length = -1
        self._actions: frozenset[str] = frozenset()

    @classmethod
    def from_state(cls, state: SessionState) -> AgentLoop:
        """A new loop instance over an existing session (after a seed or a load)."""
        time = state.events[-1].time if state.events else 1_700_000_000_000
        return cls(SessionBuilder(state, time=time))

    # -- what the log allows ------------------------------------------------------------------------

    @property
    def state(self) -> SessionState:
        """The session so far."""
        return self.builder.state

    def actions(self) -> frozenset[str]:
        """The actions the log allows next (computed once per log length)."""
        if self._actions_length != len(self.log):
            self._actions = frozenset(applicable_actions(self.builder, self.unknown_types))
            self._actions_length = len(self.log)
        return self._actions

    def can(self, action: str) -> bool:
        """Whether ``action`` is legal now; model output also waits for the step's request."""
        if action in ("assistant_message", "chunk") and not self.requested():
            return False
        return action in self.actions()

    def requested(self) -> bool:
        """Whether the open step has sent its request."""
        trace = self.state.trace
        return trace.open_step is not None and self.requested_step == (trace.open_turn, trace.open_step)

    def needs_request(self) -> bool:
        """Whether the open step is still to send its request to the model."""
        return self.state.trace.open_step is not None and not self.requested()

    # -- building and committing ----------------------------------------------------------------------

    def build(self, draw: DrawFn, action: str) -> RawEvent:
        """The next event for ``action``, not committed."""
        return build_action(draw, self.builder, action)

    def event(self, type_: str, data: Any, **envelope: Any) -> RawEvent:
        """A log-only event at the next seq, not committed."""
        return self.builder.event(type_, data, commit=False, **envelope)

    def commit(self, raw: RawEvent) -> None:
        """Append a valid event to the session."""
        self.builder.commit(raw)
        self.log.append(raw)
        if isinstance(raw.get("surfaceOp"), dict):
            self.replaced_since_request = True

    # -- requests -----------------------------------------------------------------------------------------

    def assembled(self) -> dict[str, Any]:
        """The header the next request carries."""
        if self.drift is not None:
            return copy.deepcopy(self.drift)
        return assembled_header(self.mode, self.model, self.toolbox)

    def facts(self, begins_series: bool) -> dict[str, bool]:
        """The loop-instance facts of the next request."""
        return {
            "first_request": self.first_request,
            "begins_series": begins_series,
            "replaced_since_last_request": self.replaced_since_request,
        }

    def model_decision(self, begins_series: bool) -> dict[str, Any] | None:
        """The writer decision the model takes for the next request (the oracle's answer)."""
        assembled = as_object(freeze(self.assembled()))
        assert assembled is not None
        decision: dict[str, Any] | None = decision_result(self.state.header, assembled, self.facts(begins_series))["decision"]
        return decision

    def header_event(self, decision: dict[str, Any]) -> RawEvent:
        """The ``request/header`` event a writer decision asks for, not committed."""
        return self.builder.request_header(self.assembled(), decision["reason"], bool(decision["startsSeries"]), commit=False)

    def request_sent(self) -> None:
        """Record that the open step sent its request."""
        trace = self.state.trace
        self.requested_step = (trace.open_turn, trace.open_step)
        self.first_request = False
        self.replaced_since_request = False

    def toggle_mcp(self) -> None:
        """Attach the MCP server's tool, or detach it: the next request's tools change, nothing else."""
        self.toolbox = replace(self.toolbox, mcp_attached=not self.toolbox.mcp_attached)

    def revise_tool_descriptions(self) -> None:
        """Refresh every tool's description (or undo it): the next request's tools change, nothing else."""
        self.toolbox = replace(self.toolbox, descriptions_revised=not self.toolbox.descriptions_revised)

    def restart_instance(self) -> None:
        """A new loop instance takes over the session (a resume): its first request anchors the header again."""
        self.first_request = True
