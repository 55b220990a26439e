"""Accepted logs for the envelope, the vocabulary, contiguity and the end-of-seed marker (INV-LOG)."""

from __future__ import annotations

import json
import random
from typing import Any

from sessionlog_spec.model.json_value import MAX_NESTING, MAX_SAFE_INTEGER, thaw
from sessionlog_spec.suite.agent.builder import PROVIDER, SessionBuilder, basic_header, text_block
from sessionlog_spec.suite.agent.candidates.log import nested_value
from sessionlog_spec.vectors.drafts import steps
from sessionlog_spec.vectors.drafts.scenes import history_one_turn, scene
from sessionlog_spec.vectors.drafts.steps import case
from sessionlog_spec.vectors.format import Draft

FILE = "log"
TITLE_PROMPT = "Generate the session title from this JSON array of human messages:\n"
"""How upstream frames the messages a title request cites (``session/title-llm-request``)."""


def _title_request(b: SessionBuilder, seqs: list[int]) -> dict[str, Any]:
    """The request for a title from the user's messages at ``seqs``, framed as upstream frames it."""
    cited = []
    for seq in seqs:
        data = thaw(b.state.events[seq].data)
        assert isinstance(data, dict)
        cited.append({"seq": seq, "text": data["content"][0]["text"]})
    text = TITLE_PROMPT + json.dumps(cited, ensure_ascii=False, separators=(",", ":"))
    message = {"id": "title-request-1", "role": "user", "content": [text_block(text)],
               "source": {"kind": "plugin", "plugin": "dsh-session-title-llm"}}
    return {"titleProvider": "deepseek", "messageSeqs": seqs, "route": dict(PROVIDER), "system": "Answer with a short title.",
            "messages": [message], "maxTokens": 32}


def _every_type_log() -> list[dict[str, Any]]:
    """One turn holding an event of every known type, each with its released payload and in its place:
    a titled request, settings, a goal and a schedule, a hook, a /compact command run to its end, a
    step whose request was retried, whose tool call dispatched a sub-call and ran a workflow, and a team."""
    b = SessionBuilder()
    b.turn_start()
    asked = b.user_message("Please fix the failing parser test.")["seq"]
    b.event("session/title-llm-request", _title_request(b, [asked]))
    b.event("session/title", {"title": "Fix the parser test", "messageSeqs": [asked],
                              "source": {"kind": "provider", "provider": "deepseek", "model": dict(PROVIDER)}})
    b.event("agent-preset/selected", {"agentPreset": "reviewer"})
    b.event("approval/policy", {"policy": "ask"})
    b.event("permission/preset", {"preset": "default"})
    b.event("sandbox/mode", {"mode": "workspace-write"})
    b.event("plan/mode", {"active": False})
    b.event("model/selection", {**PROVIDER, "reasoningEffort": "high"})
    b.event("subagent/model-selection-policy", {"allowedModels": [dict(PROVIDER), {"provider": "openai", "model": "gpt-5"}]})
    b.event("subagent/descriptor", {"mode": "continuable", "version": 3, "provider": "deepseek", "label": "reviewer",
                                    "agentProvider": "deepseek", "agentModel": "deepseek-chat"})
    goal = {"id": "goal-1", "revision": 1, "objective": "Make the parser tests pass", "phase": "active", "maxGoalRounds": 5}
    b.event("goal/change", {"kind": "goal/change", "version": 1, "operation": "create", "goal": goal, "roundsStarted": 0,
                            "createdAt": b.time, "updatedAt": b.time})
    schedule = {"id": "check-ci", "kind": "after", "prompt": "Check the CI run.", "afterSeconds": 600,
                "scheduledAt": "2023-11-14T22:13:20.000Z"}
    b.event("schedule/change", {"version": 1, "operation": "create", "schedule": schedule})
    b.event("hook/invoked", {"turn": 1, "point": "UserPromptSubmit", "dialect": "claude-code", "handlerId": "hook-1"})
    b.event("hook/result", {"turn": 1, "point": "UserPromptSubmit", "handlerId": "hook-1", "decision": "allow", "durationMs": 12})
    b.event("command/run", {"commandId": "command-1", "name": "compact", "source": {"kind": "user"}})
    b.compaction_start(source_command_id="command-1")
    b.compaction_summary(asked, asked)
    b.compaction_end()
    b.event("command/done", {"commandId": "command-1", "kind": "success"})
    pruned = {"shadowedRange": {"start": asked, "end": asked}, "shadowedSeqs": [asked], "shadowedTokenCount": 40}
    b.event("compaction/prune", pruned)
    b.event("todo/write", {"todos": [{"content": "fix the test", "status": "pending"}]})
    b.step_start()
    b.request_header(basic_header(), "initial")
    b.event("request/context", {**PROVIDER, "contextWindow": 128_000})
    retry = b.retry()
    b.event("llm/retry-started", {"retryId": retry["data"]["retryId"], "turn": 1, "step": 1, "retry": 1})
    query = {"model": "deepseek-chat", "max_tokens": 1024, "messages": [{"role": "user", "content": [text_block("parser bug")]}],
             "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}]}
    b.event("web/deepseek-search-llm-request", {"endpoint": "https://api.deepseek.com/anthropic", "apiVersion": "2023-06-01",
                                                "body": query})
    b.chunk("Let me look.")
    b.assistant_message("Let me look.", ["call-1"])
    b.event("approval/asked", {"id": "approval-1", "toolName": "read_file", "callId": "call-1"})
    b.event("approval/decided", {"id": "approval-1", "outcome": "allowed-once"})
    b.tool_call("call-1")
    dispatch: dict[str, Any] = {"rootCallId": "call-1", "parentCallId": "call-1", "subCallId": "sub-1", "name": "grep"}
    dispatch["arguments"] = {"pattern": "def"}
    b.event("tool/code-dispatch-start", dispatch)
    b.event("tool/code-dispatch", {**dispatch, "isError": False, "content": [text_block("parser.py:1: def main(): ...")]})
    b.event("tool-workflow/run-start", {"runId": "run-1", "name": "review"})
    b.event("tool-workflow/agent-start", {"runId": "run-1", "seq": 1, "label": "reviewer", "childId": "child-1"})
    b.event("tool-workflow/agent-end", {"runId": "run-1", "seq": 1, "outcome": "completed"})
    b.event("tool-workflow/run-end", {"runId": "run-1", "stopReason": "completed"})
    b.tool_result("call-1")
    member = {"id": "member-1", "name": "reviewer", "description": "reviews diffs", "provider": "deepseek", "context": "fresh",
              "phase": "active"}
    b.event("team/member", {"version": 1, "teamId": "team-1", "member": member})
    task = {"id": "task-1", "revision": 1, "subject": "Review the fix", "description": "", "status": "pending", "blockedBy": [],
            "writeScopes": ["src/"]}
    b.event("team/task", {"version": 1, "teamId": "team-1", "task": task})
    message = {"id": "team-message-1", "senderId": "lead", "senderName": "lead", "targetId": "member-1", "delivery": "wakeup",
               "content": [text_block("Please review the fix.")]}
    b.event("team/message/queued", {"version": 1, "teamId": "team-1", "message": message})
    b.event("team/message/delivered", {"version": 1, "teamId": "team-1", "messageId": "team-message-1", "targetId": "member-1"})
    steer = {"id": "steer-1", "role": "user", "content": [text_block("Also check b.py.")], "source": {"kind": "user"}}
    b.event("agent/inbox/spliced", {"target": "next-step", "start": 0, "inserted": [steer]})
    b.event("feedback/record", {"text": "That was quick."})
    b.step_end()
    b.event("session-log-deepseek/delivery-accepted", {"sessionId": "conformance", "throughSeq": b.next_seq - 1})
    b.turn_end()
    return b.events


def _lossless_data() -> dict[str, object]:
    return {
        "max": MAX_SAFE_INTEGER,
        "min": -MAX_SAFE_INTEGER,
        "fraction": 1.5,
        "zero": 0.0,
        "tiny": 5e-324,
        "text": "caf\u00e9 \u2014 \U0001f600 \"quoted\" \\ back",
        "nested": [[], {}, [None, True, False]],
    }


def drafts() -> list[Draft]:
    """The LOG vectors that the model accepts."""
    open_turn = scene("open-turn")
    history = history_one_turn()
    marker = {"type": "session/end-seed", "seq": len(history), "time": history[-1]["time"], "data": {}}
    later = SessionBuilder(open_turn.builder.state)
    step = later.step_start(commit=False)
    ignorable = {"type": "future/telemetry", "seq": later.next_seq, "time": 1, "data": {"x": 1}, "ignorable": True}
    known_ignorable = {**step, "ignorable": True}
    # Opaque members (a dispatched sub-call's arguments) hold any lossless JSON value.
    dispatch: dict[str, Any] = {"rootCallId": "call-1", "parentCallId": "call-1", "subCallId": "sub-1", "name": "grep"}
    dispatch["arguments"] = _lossless_data()
    lossless = {"type": "tool/code-dispatch-start", "seq": later.next_seq, "time": 1, "data": dispatch}
    # The deepest data the format allows: the arguments nest 255 levels, so ``data`` nests 256.
    deepest = {**lossless, "data": {**dispatch, "arguments": nested_value(MAX_NESTING - 1, random.Random(256))}}
    title = {"title": "Untitled", "messageSeqs": [], "source": {"kind": "user"}}
    limits = {"type": "session/title", "seq": later.next_seq, "time": MAX_SAFE_INTEGER, "data": title}
    text = later.event("user/message", None, commit=False)  # only for its seq and time
    odd_order = {
        "surfaceOp": "append",
        "data": {"source": {"kind": "user"}, "content": [text_block("\u00e9t\u00e9")], "role": "user", "id": "u-odd"},
        "time": text["time"],
        "seq": text["seq"],
        "type": "user/message",
    }
    return [
        case(FILE, "seed-empty-gets-marker", "INV-LOG-10", "an empty seed becomes one end-of-seed marker at seq 0, time 0",
             steps.seed([])),
        case(FILE, "seed-gets-marker", "INV-LOG-10 INV-LOG-5",
             "a closed one-turn seed is closed by a marker at seq = seed length", steps.seed(history)),
        case(FILE, "seed-ending-with-marker-kept", "INV-LOG-10",
             "a seed that already ends with its marker gets no second marker", steps.seed([*history, marker])),
        case(FILE, "append-at-length", "INV-LOG-5 INV-LOG-12", "a live append at seq = length is committed after the seed",
             *open_turn.replay(), steps.append(step)),
        case(FILE, "every-known-type", "INV-LOG-6 INV-LOG-1",
             "every known type with its released payload, inside one turn, is accepted", steps.seed(_every_type_log())),
        case(FILE, "ignorable-unknown-type", "INV-LOG-6 INV-LOG-3", "an unknown type marked ignorable: true is accepted and kept",
             *open_turn.replay(), steps.append(ignorable)),
        case(FILE, "ignorable-known-type", "INV-LOG-3", "ignorable: true on a known type changes nothing about its rules",
             *open_turn.replay(), steps.append(known_ignorable)),
        case(FILE, "lossless-values", "INV-LOG-4", "safe-integer bounds, finite fractions, 0.0 and non-ASCII text are lossless",
             *open_turn.replay(), steps.append(lossless)),
        case(FILE, "nesting-at-limit", "INV-LOG-4", "a payload nesting exactly 256 levels deep is lossless",
             *open_turn.replay(), steps.append(deepest), steps.save()),
        case(FILE, "time-at-safe-maximum", "INV-LOG-2", "time may be 2^53 - 1", *open_turn.replay(), steps.append(limits)),
        case(FILE, "stored-form-equals-candidate", "INV-LOG-12 INV-JSONL-2",
             "a candidate with envelope and data members out of order is saved as the same JSON value",
             *open_turn.replay(), steps.append(odd_order), steps.save()),
        case(FILE, "refused-seed-keeps-session", "INV-LOG-11 INV-LOG-5",
             "a seed refused at index 1 leaves the earlier seeded session",
             steps.seed(history), steps.seed([history[0], {**history[1], "seq": 7}])),
    ]
