"""The seventh half of the catalogue, values: the event envelope, lossless values, message shapes, seeds,
refusals and the stored form of an event (INV-LOG), and payload shapes (INV-PAY).

Written from the documents (``invariants.md``, the protocol, the on-disk format), the reference model
and seqlog's source alone, without reading the conformance suite or its tests, and never run against
the suite before the measurement that first judges them.  Each mutant is one decision a port's author
could get wrong while reading the same rules: a number read the way one language reads it, two
envelope checks in the other order, a check applied on the live path only, a bound taken one step too
tight or too loose, a member of one arm of a payload union judged by another arm's rule, a default
filled in where the format keeps what was written, state touched before a refusal.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import seqlog.codec as sl_codec
import seqlog.event as sl_event
import seqlog.messages as sl_messages
import seqlog.payloads as sl_payloads
from killrate import probes as p
from killrate.mutants import Fn, veiled_mutant
from seqlog.driver import SeqlogDriver, _new_session
from seqlog.errors import Code, SeqlogError
from seqlog.event import END_SEED, Event
from seqlog.jsonvalue import freeze, thaw
from seqlog.payloads import Problem
from seqlog.relations import Relations, _member
from seqlog.session import Session
from seqlog.surface import SurfaceManager

T = p.T


# --- probe pieces -------------------------------------------------------------------------------------


def _note(seq: int, data: object) -> dict[str, Any]:
    """An ignorable event of a type outside the vocabulary: only the envelope and losslessness judge it."""
    return {"type": "x/note", "seq": seq, "time": T + seq, "data": data, "ignorable": True}


def _deep_line(seq: int, levels: int) -> str:
    """The stored line of an ignorable note whose data nests ``levels`` arrays (written by hand: no encoder
    recursion is asked to write it)."""
    return f'{{"type":"x/note","seq":{seq},"time":{T + seq},"data":{"[" * levels}0{"]" * levels},"ignorable":true}}'


def _step(*more: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """Turn 1 with step 1 open, then ``more``."""
    return (p.turn_start(0), p.step_start(1), *more)


def _called(*more: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """Turn 1, step 1, in which ``c1`` was asked for and started (seq 3), then ``more``."""
    return _step(p.assistant(2, ["c1"]), p.tool_call(3, "c1"), *more)


def _with(event: dict[str, Any], path: Sequence[str | int], value: object) -> dict[str, Any]:
    """A deep copy of ``event`` with the member at ``path`` (below the envelope) set to ``value``."""
    out: dict[str, Any] = json.loads(json.dumps(event))
    target: Any = out
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return out


def _without(event: dict[str, Any], path: Sequence[str | int]) -> dict[str, Any]:
    """A deep copy of ``event`` without the member at ``path``."""
    out: dict[str, Any] = json.loads(json.dumps(event))
    target: Any = out
    for step in path[:-1]:
        target = target[step]
    del target[path[-1]]
    return out


_FAILURE = {"message": "overloaded", "code": "OVERLOADED"}


def _retry(seq: int, mode: str, attempt: int = 1, **more: Any) -> dict[str, Any]:
    data = {"retryId": "r1", "turn": 1, "step": 1, "provider": "p", "policyKey": "k", "retry": attempt, "delayMs": 0,
            "failure": _FAILURE, "mode": mode, **more}
    return p.event("llm/retry", seq, data)


# --- INV-LOG-2, -3, -4: numbers, the marker, lossless values ------------------------------------------


def _is_negative_zero(value: object) -> bool:
    return type(value) is float and value == 0 and math.copysign(1.0, value) < 0


@veiled_mutant(
    "negative_zero_time_accepted", "INV-LOG-2", "session", sl_event, "decode_event",
    p.appends({**p.turn_start(0), "time": -0.0}),
)
def _negative_zero_time_accepted(original: Fn) -> Fn:
    """decode_event judges ``time`` the way JavaScript's ``Number.isSafeInteger`` does, which takes ``-0``:
    a time of ``-0`` is read as 0 instead of refused as a bad time."""

    def decode_event(raw: object) -> Event:
        if isinstance(raw, Mapping) and _is_negative_zero(raw.get("time")):
            raw = {**raw, "time": 0}
        decoded: Event = original(raw)
        return decoded

    return decode_event


@veiled_mutant(
    "float_seq_refused_on_append", "INV-LOG-2", "session", Session, "append_event",
    p.appends({**p.turn_start(0), "seq": 0.0}),
)
def _float_seq_refused_on_append(original: Fn) -> Fn:
    """The live append path types ``seq`` as an integer (a writer numbers its own events), while the reader
    compares seqs as numbers: an append at seq ``0.0``, the same JSON number as 0, is refused as a bad seq."""

    def append_event(self: Session, raw: object) -> Event:
        if isinstance(raw, Mapping) and type(raw.get("seq")) is float:
            raise SeqlogError(Code.ENVELOPE_BAD_SEQ, f"event seq {raw.get('seq')!r} must be an integer")
        appended: Event = original(self, raw)
        return appended

    return append_event


@veiled_mutant(
    "ignorable_checked_before_numbers", "INV-LOG-3", "session", sl_event, "decode_event",
    p.appends({**p.turn_start(0), "seq": -1, "ignorable": False}),
)
def _ignorable_checked_before_numbers(original: Fn) -> Fn:
    """decode_event reads the ``ignorable`` flag right after ``type`` (both say what the event is), before
    ``seq`` and ``time``: an event with a bad seq and ``ignorable: false`` is refused for its marker."""

    def decode_event(raw: object) -> Event:
        if (
            isinstance(raw, Mapping)
            and sl_event.ENVELOPE_KEYS.issuperset(raw)
            and all(key in raw for key in sl_event.REQUIRED_KEYS)
            and isinstance(raw["type"], str)
            and raw["type"] != ""
            and "ignorable" in raw
            and raw["ignorable"] is not True
        ):
            raise SeqlogError(Code.ENVELOPE_BAD_IGNORABLE, "event ignorable must be absent or true")
        decoded: Event = original(raw)
        return decoded

    return decode_event


@veiled_mutant(
    "deep_line_read_as_malformed", "INV-LOG-4", "jsonl", sl_codec, "_parse_text",
    p.load(p.SESSION_LINE, _deep_line(0, 3000)),
)
def _deep_line_read_as_malformed(original: Fn) -> Fn:
    """The reader parses a line with the language's recursive JSON reader and takes running out of stack as
    a line that is not JSON: a stored value thousands of levels deep is a malformed row (dropped as damage
    without a later ``turn/end``) instead of JSON whose event is refused for its value."""

    def _parse_text(text: str) -> object:
        try:
            return json.loads(text, parse_constant=sl_codec._reject_constant, parse_int=sl_codec._js_int)
        except ValueError as error:
            raise sl_codec.LineError(f"is not valid JSON ({error})") from None
        except RecursionError:
            raise sl_codec.LineError("is nested too deeply to parse") from None

    return _parse_text


# --- INV-LOG-7, -8: message shapes --------------------------------------------------------------------


@veiled_mutant(
    "blank_message_id_refused", "INV-LOG-7", "session", sl_messages, "_message_problem",
    p.appends(_with(p.user(0), ("data", "id"), "  ")),
)
def _blank_message_id_refused(original: Fn) -> Fn:
    """A message id is read as "non-empty" after trimming: an id of spaces only, a non-empty string the
    format takes, is refused as an unidentified message."""

    def _message_problem(message: object, role: str) -> str | None:
        msg = message if isinstance(message, Mapping) else None
        ident = msg.get("id") if msg is not None else None
        if isinstance(ident, str) and ident != "" and ident.strip() == "":
            return "lacks an identified message"
        problem: str | None = original(message, role)
        return problem

    return _message_problem


@veiled_mutant(
    "empty_call_arguments_refused", "INV-LOG-8", "session", sl_messages, "_assistant_problem",
    p.appends(*_step(_with(p.assistant(2, ["c1"]), ("data", "message", "content", 1, "arguments"), ""))),
)
def _empty_call_arguments_refused(original: Fn) -> Fn:
    """A tool-call block's raw ``arguments`` must be a non-empty string (the least a model writes is ``{}``):
    a call whose arguments are the empty string, which the format keeps as written, is refused."""

    def _assistant_problem(data: object) -> str | None:
        problem: str | None = original(data)
        if problem is not None or not isinstance(data, Mapping):
            return problem
        for block in data["message"]["content"]:
            if block.get("type") == "tool-call" and block.get("arguments") == "":
                return "tool-call block needs non-empty raw string arguments"
        return None

    return _assistant_problem


# --- INV-LOG-10, -11, -12: seeds, refusals, the stored form ---------------------------------------------


@veiled_mutant(
    "end_seed_marked_ignorable", "INV-LOG-10", "jsonl", Session, "append_event",
    ({"op": "reset"}, {"op": "seed", "events": [p.turn_start(0), p.turn_end(1)]}, {"op": "save"}),
)
def _end_seed_marked_ignorable(original: Fn) -> Fn:
    """The writer marks its end-of-seed marker ``ignorable`` (bookkeeping an older reader may skip), so the
    marker it stores is not the bare ``{type, seq, time, data: {}}`` the rule writes."""

    def append_event(self: Session, raw: object) -> Event:
        if isinstance(raw, Event) and raw.type == END_SEED and not raw.ignorable:
            raw = dataclasses.replace(raw, ignorable=True)
        appended: Event = original(self, raw)
        return appended

    return append_event


@veiled_mutant(
    "refused_load_clears_session", "INV-LOG-11", "jsonl", SeqlogDriver, "op_load",
    ({"op": "reset"}, {"op": "append", "event": p.turn_start(0)}, {"op": "load", "jsonl": p.SESSION_LINE},
     {"op": "state"}),
)
def _refused_load_clears_session(original: Fn) -> Fn:
    """``load`` drops the current session before it reads the stored log, so a refused load (here a log
    without a complete header line) leaves an empty session behind instead of the one it had."""

    def op_load(self: SeqlogDriver, request: dict[str, Any]) -> Any:
        self.session = _new_session()
        return original(self, request)

    return op_load


@veiled_mutant(
    "mismatched_tool_call_marks_started", "INV-LOG-11", "session", Relations, "plan",
    p.appends(*_step(p.assistant(2, ["c1"]), _with(p.tool_call(3, "c1"), ("data", "name"), "write_file"),
                     p.tool_call(3, "c1"))),
)
def _mismatched_tool_call_marks_started(original: Fn) -> Fn:
    """A ``tool/call`` marks its advertised call started as soon as it finds it, before it compares name and
    arguments: one refused for another tool name leaves the call started, so the right one is then refused."""

    def plan(self: Relations, event: Event, log: Any, surface: SurfaceManager) -> Any:
        data = event.data if isinstance(event.data, Mapping) else None
        if event.type == "tool/call" and data is not None:
            call = _member(data, "callId")
            advertised = self._tools.get(call)
            if advertised is not None and not advertised[2]:
                name, arguments, _ = advertised
                if name != _member(data, "name") or arguments != _member(data, "arguments"):
                    self._tools[call] = (name, arguments, True)
        return original(self, event, log, surface)

    return plan


def _result_without_flag(seq: int) -> dict[str, Any]:
    return _without(p.tool_result(seq, "c1"), ("data", "message", "content", 0, "isError"))


@veiled_mutant(
    "result_is_error_defaulted_on_store", "INV-LOG-12", "jsonl", sl_event, "decode_event",
    ({"op": "reset"}, *({"op": "append", "event": e} for e in _called(_result_without_flag(4))), {"op": "save"}),
)
def _result_is_error_defaulted_on_store(original: Fn) -> Fn:
    """decode_event fills in a tool-result block's optional ``isError`` as ``false`` (its meaning when absent),
    so the stored event carries a member its candidate did not have."""

    def decode_event(raw: object) -> Event:
        event: Event = original(raw)
        if event.type != "tool/result" or not isinstance(event.data, Mapping):
            return event
        message = event.data.get("message")
        content = message.get("content") if isinstance(message, Mapping) else None
        if not isinstance(content, tuple) or not content or not isinstance(message, Mapping):
            return event
        block = content[0]
        if not isinstance(block, Mapping) or "isError" in block:
            return event
        filled = {**thaw(block), "isError": False}
        data = {**thaw(event.data), "message": {**thaw(message), "content": [filled, *thaw(content[1:])]}}
        return dataclasses.replace(event, data=freeze(data))

    return decode_event


# --- INV-PAY: payload shapes --------------------------------------------------------------------------


def _descriptor(**members: Any) -> dict[str, Any]:
    return p.event("subagent/descriptor", 0, {"mode": "continuable", "version": 3, "provider": "p", "label": "helper",
                                              **members})


@veiled_mutant(
    "agent_route_half_accepted", "INV-PAY-2", "session", sl_payloads, "payload_problem",
    p.appends(_descriptor(agentProvider="p")),
)
def _agent_route_half_accepted(original: Fn) -> Fn:
    """A continuable subagent's ``agentProvider`` and ``agentModel`` are read as two independent optional
    members: a descriptor naming the provider of its agent route without its model passes."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        if event_type == "subagent/descriptor" and isinstance(data, Mapping) and data.get("mode") == "continuable":
            has_provider, has_model = "agentProvider" in data, "agentModel" in data
            if has_provider != has_model:
                data = {**data, ("agentModel" if has_provider else "agentProvider"): "m"}
        problem: Problem | None = original(event_type, data, seq, generation)
        return problem

    return payload_problem


def _goal_change(goal: dict[str, Any]) -> dict[str, Any]:
    data = {"kind": "goal/change", "version": 1, "operation": "create", "goal": goal, "roundsStarted": 0, "createdAt": 0,
            "updatedAt": 0}
    return p.event("goal/change", 0, data)


_ACTIVE_GOAL = {"id": "g1", "revision": 1, "objective": "ship it", "phase": "active", "maxGoalRounds": 3}


@veiled_mutant(
    "blocked_reason_on_any_phase", "INV-PAY-1", "session", sl_payloads, "payload_problem",
    p.appends(_goal_change({**_ACTIVE_GOAL, "blockedReason": {"code": "WAIT", "message": "waiting"}})),
)
def _blocked_reason_on_any_phase(original: Fn) -> Fn:
    """A goal snapshot's ``blockedReason`` is read as an optional member of every phase (required when
    blocked), so an active goal carrying one passes, where only a blocked goal may carry it."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        goal = data.get("goal") if event_type == "goal/change" and isinstance(data, Mapping) else None
        if isinstance(goal, Mapping) and goal.get("phase") != "blocked" and "blockedReason" in goal:
            data = {**data, "goal": {k: v for k, v in goal.items() if k != "blockedReason"}}  # type: ignore[dict-item]
        problem: Problem | None = original(event_type, data, seq, generation)
        return problem

    return payload_problem


def _zero_retry_after(value: object) -> object:
    """``value`` with every ``providerRetryAfterMs`` of 0 read as a positive delay."""
    if isinstance(value, Mapping):
        return {k: 1 if k == "providerRetryAfterMs" and v == 0 else _zero_retry_after(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_zero_retry_after(v) for v in value]
    return value


@veiled_mutant(
    "retry_after_zero_accepted", "INV-PAY-2", "session", sl_payloads, "payload_problem",
    p.appends(p.turn_start(0), p.event("turn/end", 1, {"turn": 1, "reason": {"kind": "error", "error": {
        **_FAILURE, "providerRetryAfterMs": 0}}})),
)
def _retry_after_zero_accepted(original: Fn) -> Fn:
    """A failure's ``providerRetryAfterMs`` is bounded as ``>= 0`` like the other durations, where the
    provider's delay must be positive: a failure asking to be retried after 0 ms passes."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        problem: Problem | None = original(event_type, _zero_retry_after(data), seq, generation)
        return problem

    return payload_problem


def _recall_message(seq: int, captured: object) -> dict[str, Any]:
    reference = {"sessionId": "earlier", "label": "", "capturedThroughSeq": captured, "compacted": False,
                 "originalMessages": 0, "retainedMessages": 0, "omittedMessages": 0, "omittedBytes": 0,
                 "truncated": False, "inputIndex": 0}
    source = {"kind": "session-reference", "form": "recall", "version": 1, "references": [reference]}
    return _with(p.user(seq), ("data", "source"), source)


@veiled_mutant(
    "captured_through_seq_null_refused", "INV-PAY-2", "session", sl_payloads, "payload_problem",
    p.appends(_recall_message(0, None)),
)
def _captured_through_seq_null_refused(original: Fn) -> Fn:
    """A session reference's ``capturedThroughSeq`` is read as a count, not as ``null`` or a count: a
    reference to a session captured before it had any event is refused."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        source = data.get("source") if event_type == "user/message" and isinstance(data, Mapping) else None
        references = source.get("references") if isinstance(source, Mapping) else None
        for index, reference in enumerate(references if isinstance(references, list | tuple) else ()):
            if isinstance(reference, Mapping) and "capturedThroughSeq" in reference and reference["capturedThroughSeq"] is None:
                return Problem(("source", "references", index, "capturedThroughSeq"), "must be an integer")
        problem: Problem | None = original(event_type, data, seq, generation)
        return problem

    return payload_problem


@veiled_mutant(
    "always_retry_max_retries_kept", "INV-PAY-1", "session", sl_payloads, "payload_problem",
    p.appends(*_step(p.header_event(2, p.HEADER), _retry(3, "always", maxRetries=3))),
)
def _always_retry_max_retries_kept(original: Fn) -> Fn:
    """``maxRetries`` is read as a member of every ``llm/retry``, required only for ``normal`` mode: an
    ``always`` retry that names a limit passes, where that arm has no such member."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        if event_type == "llm/retry" and isinstance(data, Mapping) and data.get("mode") == "always" and "maxRetries" in data:
            data = {k: v for k, v in data.items() if k != "maxRetries"}
        problem: Problem | None = original(event_type, data, seq, generation)
        return problem

    return payload_problem


@veiled_mutant(
    "empty_finish_kind_opaque", "INV-PAY-3", "session", sl_payloads, "payload_problem",
    p.appends(*_step(p.event("assistant/chunk", 2, {"turn": 1, "step": 1, "chunk": {"type": "finish", "reason": {"kind": ""}}}))),
)
def _empty_finish_kind_opaque(original: Fn) -> Fn:
    """The finish-reason union keeps every kind it does not know as owner-opaque JSON, the empty kind too,
    where only a non-empty unknown discriminant is an extension."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        chunk = data.get("chunk") if event_type == "assistant/chunk" and isinstance(data, Mapping) else None
        reason = chunk.get("reason") if isinstance(chunk, Mapping) and chunk.get("type") == "finish" else None
        if isinstance(reason, Mapping) and reason.get("kind") == "":
            return None
        problem: Problem | None = original(event_type, data, seq, generation)
        return problem

    return payload_problem


@veiled_mutant(
    "schedule_id_untrimmed_accepted", "INV-PAY-2", "session", sl_payloads, "payload_problem",
    p.appends(p.event("schedule/change", 0, {"version": 1, "operation": "delete", "id": " nightly"})),
)
def _schedule_id_untrimmed_accepted(original: Fn) -> Fn:
    """A schedule id is checked to be a non-empty string, not a trimmed one: an id with a leading space,
    which names no schedule the released store keeps, passes."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        if event_type == "schedule/change" and isinstance(data, Mapping):
            if isinstance(data.get("id"), str) and data["id"].strip():
                data = {**data, "id": data["id"].strip()}
            schedule = data.get("schedule")
            if isinstance(schedule, Mapping) and isinstance(schedule.get("id"), str) and schedule["id"].strip():
                data = {**data, "schedule": {**schedule, "id": schedule["id"].strip()}}
        problem: Problem | None = original(event_type, data, seq, generation)
        return problem

    return payload_problem


@veiled_mutant(
    "negative_exit_code_refused", "INV-PAY-2", "session", sl_payloads, "payload_problem",
    p.appends(p.event("hook/result", 0, {"turn": 1, "point": "pre-tool", "handlerId": "h1", "decision": "deny",
                                         "durationMs": 12, "exitCode": -1})),
)
def _negative_exit_code_refused(original: Fn) -> Fn:
    """A hook's ``exitCode`` is read as a count, like the other numbers of the payload: a hook killed by a
    signal, whose exit code is negative, is refused where any safe integer passes."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        exit_code = data.get("exitCode") if event_type == "hook/result" and isinstance(data, Mapping) else None
        if isinstance(exit_code, int | float) and not isinstance(exit_code, bool) and exit_code < 0:
            return Problem(("exitCode",), "must be at least 0")
        problem: Problem | None = original(event_type, data, seq, generation)
        return problem

    return payload_problem
