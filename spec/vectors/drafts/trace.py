"""Accepted traces: bracket numbering, every turn-end reason, step scoping and tool pairing (INV-TRACE)."""

from __future__ import annotations

from typing import Any

from sessionlog_spec.suite.agent.builder import SessionBuilder, realistic_session
from sessionlog_spec.vectors.drafts import steps
from sessionlog_spec.vectors.drafts.scenes import scene
from sessionlog_spec.vectors.drafts.steps import case
from sessionlog_spec.vectors.format import Draft

FILE = "trace"
REASONS: dict[str, dict[str, Any]] = {
    "completed": {"kind": "completed"},
    "aborted-by-user": {"kind": "aborted", "reason": {"kind": "user"}},
    "aborted-by-hook": {"kind": "aborted", "reason": {"kind": "hook", "reason": "The Stop hook blocked the turn."}},
    "blocked": {"kind": "blocked"},
    "error": {"kind": "error", "error": {"message": "rate limited", "code": "RATE_LIMIT"}},
    "max-tokens": {"kind": "max-tokens"},
    "interrupted": {"kind": "interrupted"},
}


def drafts() -> list[Draft]:
    """The TRACE vectors that the model accepts."""
    between = scene("between-steps")
    answered = scene("answered")
    after_answer = SessionBuilder(answered.builder.state)
    todo = SessionBuilder(between.builder.state).event("todo/write", {"todos": []}, commit=False)
    out = [
        case(FILE, f"turn-end-{name}", "INV-TRACE-3 INV-TRACE-2", f"a turn closed with reason {reason['kind']}",
             *between.replay(), steps.append(SessionBuilder(between.builder.state).turn_end(reason, commit=False)))
        for name, reason in REASONS.items()
    ]
    return [
        *out,
        case(FILE, "three-turns", "INV-TRACE-1 INV-TRACE-4 INV-TRACE-10 INV-TRACE-9",
             "three closed turns, steps numbered from 1 in each", steps.seed(realistic_session(3).events)),
        case(FILE, "next-step-after-step-end", "INV-TRACE-4 INV-TRACE-10", "step 2 opens after step 1 closed",
             *between.replay(), steps.append(SessionBuilder(between.builder.state).step_start(commit=False))),
        case(FILE, "chunk-in-open-step", "INV-TRACE-6", "a streaming chunk names the open turn and step",
             *answered.replay(), steps.append(after_answer.chunk(commit=False))),
        case(FILE, "result-for-started-call", "INV-TRACE-8", "a result answers a call recorded earlier in the step",
             *scene("pending-call").replay(),
             steps.append(SessionBuilder(scene("pending-call").builder.state).tool_result("call-1", commit=False))),
        case(FILE, "result-for-call-never-started", "INV-TRACE-8",
             "a TOOL_NOT_STARTED result needs no tool/call: the call was asked for but never started",
             *answered.replay(), steps.append(after_answer.not_started_result("call-2", commit=False))),
        case(FILE, "todo-inside-turn", "INV-TRACE-7", "todo/write inside an open turn, between steps",
             *between.replay(), steps.append(todo)),
        case(FILE, "turn-after-turn", "INV-TRACE-1", "turn 2 starts after turn 1 closed",
             *scene("closed").replay(), steps.append(SessionBuilder(scene("closed").builder.state).turn_start(commit=False))),
    ]
