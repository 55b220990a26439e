"""The events an agent harness writes, built with few and cheap draws.

The state machines replay every example against a port, often a subprocess, and a failing example
is shrunk by replaying hundreds of variants; so each action here draws from small fixed pools
(texts with non-ASCII, astral and control characters, a handful of payloads) rather than from
open-ended strategies.  Which actions are legal comes from
:func:`sessionlog_spec.suite.agent.strategies.applicable_actions`; every event built is valid by construction.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import DrawFn

from sessionlog_spec.model.repair import scan_open_tail
from sessionlog_spec.model.trace import TOOL_NOT_STARTED
from sessionlog_spec.suite.agent.builder import PROVIDER, RawEvent, SessionBuilder, text_block
from sessionlog_spec.suite.agent.strategies import LOG_ONLY_TYPES, TURN_END_REASONS, TURN_ONLY_TYPES, UNKNOWN_TYPE_NAMES

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
"""Payloads of log-only events (the model puts no rules on them)."""
TOOL_NAMES = st.sampled_from(["read_file", "write_file", "bash", "grep"])


def open_calls(builder: SessionBuilder) -> tuple[list[str], list[str]]:
    """Calls the open step asked for: ``(not yet started, started and unanswered)``."""
    trace = builder.state.trace
    if trace.open_step is None:
        return [], []
    pending = scan_open_tail(builder.state.events).pending
    unstarted = [p.call_id for p in pending if p.call_seq is None]
    started = [p.call_id for p in pending if p.call_seq is not None and p.call_id in trace.step_calls]
    return unstarted, started


def assistant_data(draw: DrawFn, builder: SessionBuilder) -> dict[str, Any]:
    """An assistant message for the open step: reasoning, text and tool calls as drawn."""
    trace = builder.state.trace
    content: list[dict[str, Any]] = []
    if draw(st.booleans()):
        content.append({"type": "reasoning", "text": "The test fails because the parser drops the last token."})
    if draw(st.booleans()):
        content.append(text_block(draw(TEXTS)))
    calls = draw(st.integers(0, 3))
    content += [
        {"type": "tool-call", "id": f"call-{builder.next_seq}-{i}", "name": draw(TOOL_NAMES), "arguments": '{"path": "a.py"}'}
        for i in range(calls)
    ]
    source = {"kind": "model", **PROVIDER}
    message = {"id": f"assistant-{builder.next_seq}", "role": "assistant", "content": content, "source": source}
    data: dict[str, Any] = {"turn": trace.open_turn, "step": trace.open_step, "message": message}
    if draw(st.booleans()):
        data["usage"] = {"inputTokens": 1200, "outputTokens": 85}
    if not calls and draw(st.integers(0, 5)) == 0:
        data["interrupted"] = True
    return data


def assistant_with_call(builder: SessionBuilder, tool: str) -> RawEvent:
    """An assistant message in the open step that asks for exactly one call of ``tool``, not committed."""
    trace = builder.state.trace
    call = {"type": "tool-call", "id": f"call-{builder.next_seq}-0", "name": tool, "arguments": '{"path": "a.py"}'}
    content = [text_block("Let me look at the file."), call]
    source = {"kind": "model", **PROVIDER}
    message = {"id": f"assistant-{builder.next_seq}", "role": "assistant", "content": content, "source": source}
    data = {"turn": trace.open_turn, "step": trace.open_step, "message": message}
    return builder.event("assistant/message", data, commit=False, surfaceOp="append")


def build_action(draw: DrawFn, builder: SessionBuilder, action: str) -> RawEvent:
    """The uncommitted event for ``action`` (an action of :func:`sessionlog_spec.suite.agent.strategies.applicable_actions`)."""
    if action == "turn_start":
        return builder.turn_start(commit=False)
    if action == "turn_end":
        return builder.turn_end(draw(TURN_END_REASONS), commit=False)
    if action == "step_start":
        return builder.step_start(commit=False)
    if action == "step_end":
        return builder.step_end(commit=False)
    if action == "user_message":
        return builder.user_message(draw(TEXTS), commit=False)
    if action == "assistant_message":
        return builder.event("assistant/message", assistant_data(draw, builder), commit=False, surfaceOp="append")
    if action == "chunk":
        return builder.chunk(draw(TEXTS), commit=False)
    if action == "tool_call":
        return builder.tool_call(draw(st.sampled_from(open_calls(builder)[0])), commit=False)
    if action == "tool_result":
        return tool_result(draw, builder)
    if action == "not_started_result":
        call_id = draw(st.sampled_from(open_calls(builder)[0]))
        data = builder.tool_result_data(call_id, "The tool call never started.", is_error=True)
        data["error"] = {"name": "ToolNotStartedError", "code": TOOL_NOT_STARTED}
        return builder.event("tool/result", data, commit=False, surfaceOp="append")
    if action == "compaction":
        start, end = draw(st.sampled_from(builder.legal_ranges()))
        return builder.compaction(start, end, "Summary: the parser bug was found and fixed.", commit=False)
    if action == "rewrite":
        return builder.rewrite_tool_result(draw(st.sampled_from(builder.tool_result_seqs())), "[output elided]", commit=False)
    if action == "log_only":
        envelope = {"ignorable": True} if draw(st.integers(0, 4)) == 0 else {}
        return builder.event(draw(st.sampled_from(LOG_ONLY_TYPES)), draw(PAYLOADS), commit=False, **envelope)
    if action == "turn_only":
        return builder.event(draw(st.sampled_from(TURN_ONLY_TYPES)), draw(PAYLOADS), commit=False)
    if action == "ignorable":
        return builder.event(draw(st.sampled_from(UNKNOWN_TYPE_NAMES)), draw(PAYLOADS), commit=False, ignorable=True)
    raise ValueError(f"unknown action {action!r}")


def tool_result(draw: DrawFn, builder: SessionBuilder) -> RawEvent:
    """The result of a started call: output or error, sometimes with meta."""
    call_id = draw(st.sampled_from(open_calls(builder)[1]))
    failed = draw(st.booleans())
    data = builder.tool_result_data(call_id, draw(TEXTS), is_error=failed)
    if failed and draw(st.booleans()):
        data["error"] = {"name": "ToolError", "code": "TOOL_FAILED"}
    if draw(st.integers(0, 3)) == 0:
        data["meta"] = {"durationMs": 412}
    return builder.event("tool/result", data, commit=False, surfaceOp="append")
