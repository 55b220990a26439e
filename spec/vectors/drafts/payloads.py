"""Accepted payloads at the edges of the released vocabulary (INV-PAY): every optional member, and
what stays owner-opaque: unknown variants of the merge-extensible unions and opaque members."""

from __future__ import annotations

from typing import Any

from sessionlog_spec.suite.agent.builder import SessionBuilder, text_block
from sessionlog_spec.vectors.drafts import steps
from sessionlog_spec.vectors.drafts.scenes import scene
from sessionlog_spec.vectors.drafts.steps import case
from sessionlog_spec.vectors.format import Draft

FILE = "payloads"


def drafts() -> list[Draft]:
    """The PAY vectors that the model accepts."""
    open_turn = scene("open-turn")
    later = SessionBuilder(open_turn.builder.state)
    opaque_kind = later.turn_end({"kind": "plugin-handoff", "detail": {"to": "reviewer", "attempts": [1, 2]}}, commit=False)
    block = {"type": "x-diagram", "format": "mermaid", "source": "graph TD; A-->B"}
    user = later.user_message(commit=False)
    unknown_block = {**user, "data": {**user["data"], "content": [text_block("See the diagram."), block]}}
    answered = scene("answered")
    result = next(e for e in reversed(answered.events) if e["type"] == "tool/result")
    meta: dict[str, Any] = {"exitCode": 0, "timings": {"wallMs": 12.5}, "tags": ["fast", None, True]}
    with_meta = {**result, "data": {**result["data"], "meta": meta}}
    return [
        case(FILE, "turn-end-owner-opaque-kind", "INV-PAY-3 INV-TRACE-3",
             "a turn/end reason of a kind the release does not name is kept as owner-opaque JSON",
             *open_turn.replay(), steps.append(opaque_kind)),
        case(FILE, "unknown-content-block", "INV-PAY-3 INV-PAY-2",
             "a content block of an unknown type is kept as owner-opaque JSON",
             *open_turn.replay(), steps.append(unknown_block)),
        case(FILE, "tool-result-opaque-meta", "INV-PAY-3 INV-PAY-1",
             "tool/result meta is opaque: any lossless JSON is kept uninspected",
             steps.seed([*[e for e in answered.events if e["seq"] < result["seq"]], with_meta])),
    ]
