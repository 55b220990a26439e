"""Valid payloads of the types whose payload problems have codes of their own.

A ``user/message``, ``assistant/message``, ``tool/result`` or ``request/header`` whose payload the
table refuses is refused with its type's code (``USER_MESSAGE_INVALID``, …, ``HEADER_INVALID``),
not ``PAYLOAD_INVALID``.  Their hand-written candidates break one member each (a missing id, a
parsed ``arguments``, a tool schema without ``parameters``); every other member of these shapes,
nested ones included, was broken nowhere.  Each exemplar here is the payload of one of these types
as the builder could write it now, in variants that between them carry the optional members a
harness writes (an image block with its original dimensions, a user source of every kind, a model
source with replay state, token usage with every optional count, an interrupted message, a tool
result's error and meta, a pinned config with every tuning member and an adapter default), so that a
one-fault walk along its shape (:mod:`payload_faults`) has a site at each of them.

An exemplar returns ``None`` where its type cannot stand (no open step, no call waiting for its
result, no open turn); the caller asks the model whether the event built from it is valid.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from sessionlog_spec.suite.agent.builder import PROVIDER, SessionBuilder, text_block

MessageExemplar = Callable[[SessionBuilder, int], "dict[str, Any] | None"]
"""Makes the payload of one type for a builder's state: (builder, variant)."""

IMAGE_BLOCK: Mapping[str, Any] = MappingProxyType({
    "type": "image",
    "attachment": {
        "attachmentId": "attachment-screenshot",
        "mediaType": "image/png",
        "bytes": 48_213,
        "width": 1280,
        "height": 800,
        "name": "failing-test.png",
        "originalDimensions": {"width": 2560, "height": 1600},
    },
})

USER_SOURCES: tuple[Mapping[str, Any], ...] = (
    {"kind": "user", "rpcId": "rpc-17", "clientTimeZone": "Europe/Berlin"},
    {"kind": "user"},
    {"kind": "plugin", "plugin": "memo"},
    {"kind": "team-message", "teamId": "team-1", "messageId": "m-1", "senderId": "agent-2", "senderName": "Reviewer"},
    {"kind": "skill-invocation", "name": "review", "form": "instructions"},
    {"kind": "plugin", "plugin": "memo", "form": "snapshot", "sections": [{"name": "open files", "text": "parser.py"}]},
    {"kind": "plugin", "plugin": "memo", "form": "notice", "summary": "Two notes were recalled."},
    {
        "kind": "agent-instructions",
        "form": "instructions",
        "changes": [{"action": "set", "scope": "project", "path": "AGENTS.md", "digest": "sha256:9f2c"}],
        "baseline": True,
        "baselineIdentity": "baseline-3",
    },
    {
        "kind": "skill-catalog",
        "form": "catalog",
        "entries": [{"name": "review", "description": "Review a diff."}, {"name": "release", "description": ""}],
        "update": True,
    },
    {"kind": "coordinator", "form": "relay", "senderSessionId": "session-parent"},
    {"kind": "subagent-report", "form": "relay", "senderSessionId": "session-child"},
    {"kind": "subagent-settled", "form": "notice", "summary": "The sub-agent finished.", "senderSessionId": "session-child"},
    {
        "kind": "webhook",
        "provider": "github",
        "source": "acme/parser",
        "deliveryId": "delivery-8",
        "ruleId": "rule-1",
        "form": "notice",
        "summary": "A pull request was opened.",
    },
    {"kind": "goal", "goalId": "goal-1", "revision": 2, "round": 1},
    {
        "kind": "session-reference",
        "form": "recall",
        "version": 1,
        "references": [
            {
                "sessionId": "session-yesterday",
                "label": "Yesterday's parser session",
                "capturedThroughSeq": 41,
                "compacted": True,
                "originalMessages": 12,
                "retainedMessages": 9,
                "omittedMessages": 3,
                "omittedBytes": 2048,
                "truncated": True,
                "inputIndex": 0,
                "capturedFormatVersion": 1,
            },
            {
                "sessionId": "session-older",
                "label": "",
                "capturedThroughSeq": None,
                "compacted": False,
                "originalMessages": 0,
                "retainedMessages": 0,
                "omittedMessages": 0,
                "omittedBytes": 0,
                "truncated": False,
                "inputIndex": 1,
            },
        ],
    },
)
"""A ``user/message`` source of every kind a user-role message takes: the user (with and without the
client's members), a plugin (without a form, a snapshot, a notice), a teammate, a skill, agent
instructions, a skill catalogue, a coordinator's and a sub-agent's relay, a settled sub-agent, a
webhook, a goal round, recalled sessions."""


def user_message(b: SessionBuilder, variant: int) -> dict[str, Any]:
    content: list[Any] = [text_block("The parser test fails on empty input; the screenshot shows the trace.")]
    if variant % 2 == 0:
        content.append(copy.deepcopy(dict(IMAGE_BLOCK)))
    # Five variants a state, more sources: the next seq turns the wheel, so a run breaks them all.
    source = copy.deepcopy(dict(USER_SOURCES[(variant + b.next_seq) % len(USER_SOURCES)]))
    return {"id": f"user-{b.next_seq}", "role": "user", "content": content, "source": source}


USAGES: tuple[Mapping[str, Any], ...] = (
    {
        "inputTokens": 18_204,
        "outputTokens": 412,
        "totalTokens": 18_616,
        "cacheReadTokens": 16_384,
        "cacheWriteTokens": 1_024,
        "reasoningTokens": 256,
    },
    {"inputTokens": 0, "outputTokens": 0},
)
"""An assistant message's token usage: every optional count, and only the two required ones."""


def assistant_message(b: SessionBuilder, variant: int) -> dict[str, Any] | None:
    trace = b.state.trace
    if trace.open_step is None:
        return None
    content: list[Any] = []
    if variant != 1:
        content.append({"type": "reasoning", "text": "The test feeds an empty string; the lexer returns None."})
    content.append(text_block("I will read the lexer first."))
    if variant != 2:
        call = {"type": "tool-call", "id": f"call-{b.next_seq}", "name": "read_file", "arguments": '{"path": "lexer.py"}'}
        content.append(call)
    source: dict[str, Any] = {"kind": "model", **PROVIDER}
    if variant % 2 == 0:
        source["replayState"] = {"responseId": "resp-7", "blocks": [{"signature": "c2ln"}]}
    message = {"id": f"assistant-{b.next_seq}", "role": "assistant", "content": content, "source": source}
    data: dict[str, Any] = {"turn": trace.open_turn, "step": trace.open_step, "message": message}
    if variant != 4:
        data["usage"] = dict(USAGES[variant % len(USAGES)])
    if variant == 2:
        data["interrupted"] = True  # cut off before it asked for anything
    return data


def tool_result(b: SessionBuilder, variant: int) -> dict[str, Any] | None:
    calls = sorted(b.state.trace.step_calls)
    if not calls or b.state.pending_calls == 0:
        return None
    failed = variant % 2 == 1
    text = "Traceback: lexer.py line 12" if failed else "def lex(text): ..."
    data = b.tool_result_data(calls[variant % len(calls)], text, failed)
    if variant % 3 == 0:
        data["message"]["content"][0]["content"].append(copy.deepcopy(dict(IMAGE_BLOCK)))
    if failed:
        data["error"] = {"name": "ToolExecutionError", "code": "EXIT_STATUS"}
    if variant >= 3:
        data["meta"] = {"durationMs": 412, "exitCode": 1 if failed else 0}
    return data


TOOLS: tuple[Mapping[str, Any], ...] = (
    {
        "name": "read_file",
        "description": "Read a file of the workspace.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    },
    {"name": "grep", "description": "", "parameters": {"type": "object"}},
)


def request_header(b: SessionBuilder, variant: int) -> dict[str, Any] | None:
    if b.state.trace.open_turn is None:
        return None
    config: dict[str, Any] = {**PROVIDER, "reasoningEffort": "high", "maxTokens": 8192}
    if variant != 1:
        config.update(temperature=0.2, stop=["</answer>"])
    header: dict[str, Any] = {"config": config, "tools": [dict(t) for t in TOOLS]}
    if variant != 2:
        header["system"] = "You are a careful coding agent."
    if variant != 3:
        header["adapterDefaults"] = {"maxTokens": True} if variant % 2 else {"reasoningEffort": True, "maxTokens": True}
    data: dict[str, Any] = {"header": header, "reason": ("change", "series", "change", "resume", "series")[variant % 5]}
    if data["reason"] == "series" and variant != 4:
        data["startsSeries"] = True
    return data


MESSAGE_EXEMPLARS: Mapping[str, MessageExemplar] = MappingProxyType({
    "user/message": user_message,
    "assistant/message": assistant_message,
    "tool/result": tool_result,
    "request/header": request_header,
})
"""The exemplar of each type whose payload problems have their own code (bar the end-of-seed marker,
whose payload is empty)."""
