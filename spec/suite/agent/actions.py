"""The one vocabulary of agent actions: which are legal now, the event each builds, what each exercises.

An *action* is one thing an agent harness does to its log: open a turn, write a user message, ask
for tool calls, start and answer them, compact a legal range, rewrite a tool result, write a
request header, log a note, ….  :func:`applicable_actions` says which actions the log allows next
(repeated by how often a harness takes them), :func:`build_action` builds the uncommitted event of
one (valid by construction), and :data:`ACTION_INVARIANTS` names the invariants each exercises;
the conformance machines count coverage under the action's own name.

The log fixes most of an event (seqs, turns, steps, call ids); the rest comes from an
:class:`ActionValues`, one maker per value.  Two users draw differently:

* the conformance suite (:data:`SUITE_VALUES`) replays every example against a port, often a
  subprocess, and shrinks a failing one by replaying hundreds of variants; so it draws from small
  fixed pools (texts with non-ASCII, astral and control characters, a handful of payloads) and in
  several places draws nothing at all;
* the property tests (``VALUES`` in ``tests/strategies.py``) draw open-ended strategies.

Both go through :func:`build_action`, so the choices are drawn in the same order: with the suite's
values a seeded run stays the same run.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias, TypeVar

from hypothesis import strategies as st
from hypothesis.strategies import DrawFn

from sessionlog_spec.model.event import KNOWN_EVENT_TYPES
from sessionlog_spec.model.repair import scan_open_tail
from sessionlog_spec.model.trace import ABORT_CAUSES, TOOL_NOT_STARTED
from sessionlog_spec.suite.agent.builder import PROVIDER, RawEvent, SessionBuilder, basic_header, text_block

T = TypeVar("T")

# Hypothesis takes about one choice in twenty from the literals of the local modules it finds
# loaded (integers from 100 up, short strings: hypothesis.internal.constants_ast), so the report of
# a seeded conformance run depends on them.  These literals left the suite's modules when the
# property tests' strategies moved to tests/strategies.py (token and duration bounds, "nan");
# keeping them here keeps every seeded run's report what it was.  Drop them when reports may change.
_SEEDED_RUN_LITERALS = (10_000, 4_000, 60_000, "nan")

# -- the vocabulary ---------------------------------------------------------------------------

_RESULT = ("INV-LOG-9", "INV-TRACE-6", "INV-TRACE-8", "INV-SURF-7", "INV-COMPACT-1", "INV-COMPACT-6")
"""A tool call's result, with output or not started."""
_NOTE = ("INV-LOG-3", "INV-LOG-6", "INV-TRACE-7", "INV-JSONL-6")
"""An event the model puts no payload rules on: log-only, turn-only or of an unknown type."""
ACTION_INVARIANTS: dict[str, tuple[str, ...]] = {
    "turn_start": ("INV-TRACE-1", "INV-TRACE-9", "INV-TRACE-10", "INV-LOG-5", "INV-LOG-12"),
    "user_message": ("INV-LOG-7", "INV-SURF-2", "INV-SURF-3", "INV-SURF-7", "INV-SURF-9", "INV-LOG-5", "INV-LOG-12"),
    "step_start": ("INV-TRACE-4", "INV-TRACE-9", "INV-TRACE-10"),
    "request_header": ("INV-HDR-1", "INV-HDR-2", "INV-HDR-4", "INV-HDR-5", "INV-HDR-8", "INV-TRACE-7"),
    "chunk": ("INV-TRACE-6", "INV-TRACE-9", "INV-LOG-4"),
    "assistant_message": ("INV-LOG-8", "INV-TRACE-6", "INV-SURF-7", "INV-COMPACT-1", "INV-COMPACT-6"),
    "tool_call": ("INV-TRACE-6", "INV-TRACE-9"),
    "tool_result": _RESULT,
    "not_started_result": _RESULT,
    "step_end": ("INV-TRACE-5", "INV-TRACE-10"),
    "turn_end": ("INV-TRACE-2", "INV-TRACE-3", "INV-TRACE-10"),
    "compaction": (
        "INV-SURF-4", "INV-SURF-5", "INV-SURF-6", "INV-SURF-8", "INV-SURF-9", "INV-SURF-10", "INV-SURF-13",
        "INV-COMPACT-2", "INV-COMPACT-3", "INV-COMPACT-6", "INV-LOG-7",
    ),
    "rewrite": ("INV-SURF-8", "INV-SURF-10", "INV-SURF-11", "INV-SURF-13", "INV-TRACE-7"),
    "log_only": _NOTE,
    "turn_only": _NOTE,
    "ignorable": _NOTE,
}
"""Every agent action, with the invariants its event exercises (as far as a group observes them;
see :func:`sessionlog_spec.suite.rule_table.step_invariants`)."""
ACTIONS = tuple(ACTION_INVARIANTS)
"""The agent actions :func:`applicable_actions` chooses from and :func:`build_action` builds."""

LOG_ONLY_TYPES = (
    "session/title",
    "llm/retry",
    "approval/asked",
    "approval/decided",
    "goal/change",
    "hook/invoked",
    "compaction/start",
    "compaction/end",
    "compaction/summary",
    "plan/mode",
    "model/selection",
    "feedback/record",
)
"""Known types without payload rules that may appear anywhere (``log_only``)."""
TURN_ONLY_TYPES = ("todo/write", "request/context")
"""Known types without payload rules that sit inside an open turn (``turn_only``)."""
UNKNOWN_TYPE_NAMES = ("x-future/thing", "vendor/telemetry", "agent/mood", "tool/progress")
"""Types outside the v1 vocabulary (``ignorable``: they must carry ``ignorable: true``)."""
assert not {*LOG_ONLY_TYPES, *TURN_ONLY_TYPES} - KNOWN_EVENT_TYPES
assert not set(UNKNOWN_TYPE_NAMES) & KNOWN_EVENT_TYPES

TOOL_NAMES = ("read_file", "write_file", "bash", "grep")
"""The tools an assistant message asks for."""
HEADER_REASONS = ("initial", "resume", "change", "series")
"""The reasons a ``request/header`` snapshot gives (``request_header``)."""

WORDS = st.text("abcdefghij klmnopé→", min_size=1, max_size=10)
"""Short words, some non-ASCII."""
TURN_END_REASONS: st.SearchStrategy[dict[str, Any]] = st.one_of(
    st.sampled_from([{"kind": k} for k in ("completed", "blocked", "max-tokens", "interrupted")]),
    st.sampled_from(sorted(ABORT_CAUSES)).map(lambda cause: {"kind": "aborted", "reason": {"kind": cause}}),
    st.builds(
        lambda message, code: {"kind": "error", "error": {"message": message, "code": code}},
        WORDS,
        st.sampled_from(["PROVIDER_ERROR", "RATE_LIMITED", "UNKNOWN"]),
    ),
)
"""Every v1 turn-end reason kind, with its required facts (``turn_end``)."""


# -- what is legal now ------------------------------------------------------------------------


def open_calls(builder: SessionBuilder) -> tuple[list[str], list[str]]:
    """Calls the open step asked for: ``(not yet started, started and unanswered)``."""
    trace = builder.state.trace
    if trace.open_step is None:
        return [], []
    pending = scan_open_tail(builder.state.events).pending
    unstarted = [p.call_id for p in pending if p.call_seq is None]
    started = [p.call_id for p in pending if p.call_seq is not None and p.call_id in trace.step_calls]
    return unstarted, started


def applicable_actions(builder: SessionBuilder, unknown_types: bool = True) -> list[str]:
    """The actions the log allows next, repeated by how often a harness takes them.

    ``unknown_types`` allows ignorable events of types outside the vocabulary (a v0 log may not
    hold them).
    """
    trace = builder.state.trace
    actions = ["user_message", "log_only"] + (["ignorable"] if unknown_types else [])
    if builder.legal_ranges():
        actions += ["compaction"] * 2
    if trace.open_turn is None:
        actions += ["turn_start"] * 6
        return actions
    actions += ["request_header", "turn_only"]
    if builder.tool_result_seqs():
        actions.append("rewrite")
    if trace.open_step is None:
        actions += ["step_start"] * 6 + ["turn_end"] * 4
        return actions
    unstarted, started = open_calls(builder)
    actions += ["assistant_message"] * 5 + ["chunk"] + ["step_end"] * (1 if unstarted or started else 4)
    if unstarted:
        actions += ["tool_call"] * 6 + ["not_started_result"]
    if started:
        actions += ["tool_result"] * 6
    return actions


# -- the values an event holds ----------------------------------------------------------------

Maker: TypeAlias = Callable[[DrawFn], T]
"""Makes one value, drawing what it needs (or nothing, for a fixed value)."""


def drawn(strategy: st.SearchStrategy[T]) -> Maker[T]:
    """A maker that draws from ``strategy``."""
    return lambda draw: draw(strategy)


def fixed(value: T) -> Maker[T]:
    """A maker that draws nothing and gives (a fresh copy of) ``value``."""
    return lambda draw: copy.deepcopy(value)


@dataclass(frozen=True)
class ActionValues:
    """Where an event's values come from, beyond what the log fixes: one maker per value."""

    text: Maker[str]
    """User messages, streamed chunks, assistant text and tool output."""
    reasoning: Maker[str]
    """An assistant message's reasoning block."""
    tool_name: Maker[str]
    """The tool an assistant message asks for (one draw per call)."""
    tool_arguments: Maker[str]
    """The arguments of a requested call."""
    usage: Maker[dict[str, Any]]
    """An assistant message's token usage."""
    duration_ms: Maker[int]
    """A tool result's ``meta.durationMs``."""
    turn_end_reason: Maker[dict[str, Any]]
    """The reason a turn ends."""
    header: Maker[dict[str, Any]]
    """The (canonical, pinned) header of a ``request/header`` snapshot."""
    summary: Maker[str]
    """A compaction's summary text."""
    rewrite_text: Maker[str]
    """The content a tool-result rewrite puts in place of the output."""
    payload: Maker[Any]
    """The data of log-only and ignorable events (the model puts no rules on them)."""
    turn_payload: Maker[Any]
    """The data of turn-only events."""


TEXTS = st.sampled_from(
    [
        "Please fix the failing test in parser.py.",
        "",
        "Résumé → naïve ünïcödé ✓",
        "日本語のテキスト",
        "emoji 🎉 outside the basic plane",
        "line one\nline two\ttabbed",
        'quotes " and backslash \\ and \u2028 separator',
        "\x00 nul and \x1f unit separator",
    ]
)
"""Message texts, including what JSON encoders of other languages get wrong."""
PAYLOADS = st.sampled_from(
    [
        {},
        {"title": "Fix the parser"},
        {"items": [{"id": 1, "text": "write test", "done": False}, {"id": 2, "text": "fix", "done": True}]},
        {"nested": {"depth": [1, [2, [3]]]}, "ratio": 0.25, "big": 9007199254740991, "none": None},
        {"text": "ünïcödé 🎉"},
    ]
)
"""Payloads of log-only, turn-only and ignorable events."""

SUITE_VALUES = ActionValues(
    text=drawn(TEXTS),
    reasoning=fixed("The test fails because the parser drops the last token."),
    tool_name=drawn(st.sampled_from(TOOL_NAMES)),
    tool_arguments=fixed('{"path": "a.py"}'),
    usage=fixed({"inputTokens": 1200, "outputTokens": 85}),
    duration_ms=fixed(412),
    turn_end_reason=drawn(TURN_END_REASONS),
    header=lambda draw: basic_header(),
    summary=fixed("Summary: the parser bug was found and fixed."),
    rewrite_text=fixed("[output elided]"),
    payload=drawn(PAYLOADS),
    turn_payload=drawn(PAYLOADS),
)
"""The conformance suite's values: small fixed pools, cheap to replay and shrink."""


# -- building the event -----------------------------------------------------------------------


def build_action(draw: DrawFn, builder: SessionBuilder, action: str, values: ActionValues = SUITE_VALUES) -> RawEvent:
    """The uncommitted event for ``action`` (one of :func:`applicable_actions`), its values from ``values``."""
    if action == "turn_start":
        return builder.turn_start(commit=False)
    if action == "turn_end":
        return builder.turn_end(values.turn_end_reason(draw), commit=False)
    if action == "step_start":
        return builder.step_start(commit=False)
    if action == "step_end":
        return builder.step_end(commit=False)
    if action == "user_message":
        return builder.user_message(values.text(draw), commit=False)
    if action == "assistant_message":
        return builder.event("assistant/message", assistant_data(draw, builder, values), commit=False, surfaceOp="append")
    if action == "chunk":
        return builder.chunk(values.text(draw), commit=False)
    if action == "tool_call":
        return builder.tool_call(draw(st.sampled_from(open_calls(builder)[0])), commit=False)
    if action == "tool_result":
        return tool_result(draw, builder, values)
    if action == "not_started_result":
        call_id = draw(st.sampled_from(open_calls(builder)[0]))
        data = builder.tool_result_data(call_id, "The tool call never started.", is_error=True)
        data["error"] = {"name": "ToolNotStartedError", "code": TOOL_NOT_STARTED}
        return builder.event("tool/result", data, commit=False, surfaceOp="append")
    if action == "request_header":
        reason = draw(st.sampled_from(HEADER_REASONS))
        header = values.header(draw)
        return builder.request_header(header, reason, draw(st.booleans()), commit=False)
    if action == "compaction":
        start, end = draw(st.sampled_from(builder.legal_ranges()))
        return builder.compaction(start, end, values.summary(draw), commit=False)
    if action == "rewrite":
        seq = draw(st.sampled_from(builder.tool_result_seqs()))
        return builder.rewrite_tool_result(seq, values.rewrite_text(draw), commit=False)
    if action == "log_only":
        envelope = {"ignorable": True} if draw(st.integers(0, 4)) == 0 else {}
        type_ = draw(st.sampled_from(LOG_ONLY_TYPES))
        return builder.event(type_, values.payload(draw), commit=False, **envelope)
    if action == "turn_only":
        type_ = draw(st.sampled_from(TURN_ONLY_TYPES))
        return builder.event(type_, values.turn_payload(draw), commit=False)
    if action == "ignorable":
        type_ = draw(st.sampled_from(UNKNOWN_TYPE_NAMES))
        return builder.event(type_, values.payload(draw), commit=False, ignorable=True)
    raise ValueError(f"unknown action {action!r}")


def assistant_data(draw: DrawFn, builder: SessionBuilder, values: ActionValues = SUITE_VALUES) -> dict[str, Any]:
    """An assistant message for the open step: reasoning, text and tool calls as drawn."""
    trace = builder.state.trace
    content: list[dict[str, Any]] = []
    if draw(st.booleans()):
        content.append({"type": "reasoning", "text": values.reasoning(draw)})
    if draw(st.booleans()):
        content.append(text_block(values.text(draw)))
    calls = draw(st.integers(0, 3))
    content += [
        {
            "type": "tool-call",
            "id": f"call-{builder.next_seq}-{i}",
            "name": values.tool_name(draw),
            "arguments": values.tool_arguments(draw),
        }
        for i in range(calls)
    ]
    source = {"kind": "model", **PROVIDER}
    message = {"id": f"assistant-{builder.next_seq}", "role": "assistant", "content": content, "source": source}
    data: dict[str, Any] = {"turn": trace.open_turn, "step": trace.open_step, "message": message}
    if draw(st.booleans()):
        data["usage"] = values.usage(draw)
    if not calls and draw(st.integers(0, 5)) == 0:
        data["interrupted"] = True
    return data


def tool_result(draw: DrawFn, builder: SessionBuilder, values: ActionValues = SUITE_VALUES) -> RawEvent:
    """The result of a started call: output or error, sometimes with meta."""
    call_id = draw(st.sampled_from(open_calls(builder)[1]))
    failed = draw(st.booleans())
    data = builder.tool_result_data(call_id, values.text(draw), is_error=failed)
    if failed and draw(st.booleans()):
        data["error"] = {"name": "ToolError", "code": "TOOL_FAILED"}
    if draw(st.integers(0, 3)) == 0:
        data["meta"] = {"durationMs": values.duration_ms(draw)}
    return builder.event("tool/result", data, commit=False, surfaceOp="append")


def assistant_with_call(builder: SessionBuilder, tool: str) -> RawEvent:
    """An assistant message in the open step that asks for exactly one call of ``tool``, not committed."""
    trace = builder.state.trace
    call = {"type": "tool-call", "id": f"call-{builder.next_seq}-0", "name": tool, "arguments": '{"path": "a.py"}'}
    content = [text_block("Let me look at the file."), call]
    source = {"kind": "model", **PROVIDER}
    message = {"id": f"assistant-{builder.next_seq}", "role": "assistant", "content": content, "source": source}
    data = {"turn": trace.open_turn, "step": trace.open_step, "message": message}
    return builder.event("assistant/message", data, commit=False, surfaceOp="append")
