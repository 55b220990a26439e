"""Invalid candidates of the event envelope, its JSON values, contiguity, the vocabulary and the
message shapes (``INV-LOG``; the contracts are :mod:`sessionlog_spec.contracts.log`).

The envelope and lossless values (INV-LOG-1..4), contiguity (INV-LOG-5, and INV-JSONL-5 on the load
path), the vocabulary and the message payloads (INV-LOG-6..10).  ``assistant_duplicate_call_ids`` is
a message shape fault that the model refuses with ``TOOL_CALL_ID_REPEATED`` (INV-REL-2).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from sessionlog_spec.model.json_value import MAX_NESTING, MAX_SAFE_INTEGER
from sessionlog_spec.model.violation import Code
from sessionlog_spec.suite.agent.builder import PROVIDER, RawEvent, SessionBuilder, text_block
from sessionlog_spec.suite.agent.candidates.base import (
    STORED_HEADER,
    Registry,
    _assistant,
    _benign,
    _enter_turn,
    _jsonl_lines,
    _leave_turn,
    _open_step,
    _refused,
    _scratch,
    _text,
    edge_int,
)

REGISTERED = Registry()
"""This module's mutations, in the order their builders are defined below."""
candidate = REGISTERED.candidate


_USER_TITLE = {"title": "Untitled", "messageSeqs": [], "source": {"kind": "user"}}
"""The payload of a title the user set: valid anywhere."""


# -- envelope, JSON values and contiguity (INV-LOG-1..5, INV-JSONL-5) ------------------------------


@candidate(Code.ENVELOPE_NOT_OBJECT, "append")
def event_as_array(builder: SessionBuilder, rng: random.Random) -> object:
    """An event written positionally, as ``[type, seq, time, data]``."""
    e = _benign(_scratch(builder), rng)
    return [e["type"], e["seq"], e["time"], e["data"]]


@candidate(Code.ENVELOPE_NOT_OBJECT, "append")
def event_double_encoded(builder: SessionBuilder, rng: random.Random) -> object:
    """An event serialised twice: the log holds a JSON string instead of an object."""
    return json.dumps(_benign(_scratch(builder), rng))


@candidate(Code.ENVELOPE_UNKNOWN_KEY, "append")
def envelope_stray_key(builder: SessionBuilder, rng: random.Random) -> object:
    """An envelope with a member the format does not have (an event id, a snake_case spelling, a turn)."""
    e = _benign(_scratch(builder), rng)
    key, value = rng.choice((("id", "evt-1"), ("source_event_seqs", [0]), ("turn", 1), ("sessionId", "s-1")))
    return {**e, key: value}


@candidate(Code.ENVELOPE_MISSING_KEY, "append")
def envelope_missing_key(builder: SessionBuilder, rng: random.Random) -> object:
    """An envelope that lost one required member."""
    e = _benign(_scratch(builder), rng)
    del e[rng.choice(("type", "seq", "time", "data"))]
    return e


@candidate(Code.ENVELOPE_BAD_TYPE, "append")
def empty_type(builder: SessionBuilder, rng: random.Random) -> object:
    """An event whose type is empty or null."""
    return {**_benign(_scratch(builder), rng), "type": rng.choice(("", None))}


@candidate(Code.ENVELOPE_BAD_SEQ, "append")
def seq_not_natural(builder: SessionBuilder, rng: random.Random) -> object:
    """A seq that is no non-negative safe integer, in any of the ways a writer spells one wrong."""
    b = _scratch(builder)
    e = _benign(b, rng)
    return _refused(b, "append", Code.ENVELOPE_BAD_SEQ, {**e, "seq": _not_natural(e["seq"], rng)})


def _not_natural(value: int, rng: random.Random) -> object:
    """A wrong spelling of the natural ``value``, its kind drawn first: another JSON type, out of
    range (a sign, past ``2^53 - 1``), a fraction, or ``-0``.  Each kind is what some reader's check
    lets through (a type test passes ``-0`` and ``1.5``, a range test passes ``"7"``), so each gets
    its share however many spellings it has."""
    kinds: tuple[tuple[object, ...], ...] = (
        (str(value), True, None, [value], {"value": value}),
        (-1 - value, MAX_SAFE_INTEGER + 1, float(MAX_SAFE_INTEGER + 2), -MAX_SAFE_INTEGER),
        (value + 0.5, value + 1e-9 if value < 2**40 else value + 0.5),
        (-0.0,),
    )
    return rng.choice(rng.choice(kinds))


@candidate(Code.ENVELOPE_BAD_TIME, "append")
def time_not_integer(builder: SessionBuilder, rng: random.Random) -> object:
    """A time from a sub-millisecond clock, as an ISO string, or any other wrong spelling of a natural."""
    b = _scratch(builder)
    e = _benign(b, rng)
    spelling = rng.choice((e["time"] + 0.25, "2026-07-13T10:00:00Z", _not_natural(e["time"], rng)))
    return _refused(b, "append", Code.ENVELOPE_BAD_TIME, {**e, "time": spelling})


@candidate(Code.ENVELOPE_BAD_IGNORABLE, "append")
def ignorable_false(builder: SessionBuilder, rng: random.Random) -> object:
    """``ignorable: false``, a second spelling of absent."""
    return {**_benign(_scratch(builder), rng), "ignorable": False}


def _hook_result(b: SessionBuilder, exit_code: int, duration_ms: float) -> dict[str, Any]:
    """What a hook that ran in the latest turn reports: valid but for a non-lossless number put in."""
    trace = b.state.trace
    turn = trace.open_turn if trace.open_turn is not None else trace.last_turn
    data: dict[str, Any] = {"turn": turn, "point": "Stop", "handlerId": "hook-1", "decision": "allow"}
    return {**data, "durationMs": duration_ms, "exitCode": exit_code}


@candidate(Code.JSON_NOT_LOSSLESS, "append")
def unsafe_integer(builder: SessionBuilder, rng: random.Random) -> object:
    """A payload number beyond 2^53 − 1 (a hook's exit code), which a JavaScript reader would round."""
    b = _scratch(builder)
    return b.event("hook/result", _hook_result(b, MAX_SAFE_INTEGER + rng.choice((1, 2, 1000)), 12), False)


@candidate(Code.JSON_NOT_LOSSLESS, "append")
def negative_zero(builder: SessionBuilder, rng: random.Random) -> object:
    """A payload holding ``-0`` (a hook's duration), which JSON readers disagree about."""
    b = _scratch(builder)
    return b.event("hook/result", _hook_result(b, rng.choice((0, 1)), -0.0), False)


def nested_value(depth: int, rng: random.Random) -> object:
    """A JSON value nesting exactly ``depth`` levels, each an array or an object (built without recursion)."""
    value: object = rng.choice((0, "leaf", None))
    for _ in range(depth):
        value = [value] if rng.random() < 0.5 else {"next": value}
    return value


def _deep_telemetry(b: SessionBuilder, depth: int, rng: random.Random) -> RawEvent:
    """An ignorable vendor event (valid anywhere) whose ``data`` nests ``depth`` levels."""
    data = {"spans": nested_value(depth - 1, rng)}
    return {"type": "vendor/trace", "seq": b.next_seq, "time": b.time, "ignorable": True, "data": data}


@candidate(Code.JSON_NOT_LOSSLESS, "append")
def value_nested_too_deep(builder: SessionBuilder, rng: random.Random) -> object:
    """A payload nesting deeper than the format's 256 levels (a runaway serialiser of a span tree)."""
    return _deep_telemetry(_scratch(builder), MAX_NESTING + rng.choice((1, 2, 40)), rng)


@candidate(Code.JSON_NOT_LOSSLESS, "load")
def stored_value_nested_too_deep(builder: SessionBuilder, rng: random.Random) -> object:
    """A stored row nesting deeper than 256 levels, some far deeper than a recursive JSON parser reaches;
    still JSON as ``JSON.parse`` reads it, so it is refused for its value, not dropped as malformed."""
    b = _scratch(builder)
    # 2,000 is past Python's recursion limit, 20,000 past Go's decoder limit of 10,000 levels; deeper
    # tells no reader more and costs every read of the row in proportion (a ci jsonl run spent a
    # third of its time reading 50,000-level rows).
    depth = MAX_NESTING + rng.choice((1, 2_000, 20_000))
    # Written as text: an encoder would recurse once per level.
    opens = [rng.choice(("[", '{"next":')) for _ in range(depth - 1)]
    spans = "".join(opens) + "0" + "".join("]" if o == "[" else "}" for o in reversed(opens))
    row = f'{{"type":"vendor/trace","seq":{b.next_seq},"time":{b.time},"ignorable":true,"data":{{"spans":{spans}}}}}'
    return _text([*_jsonl_lines(b), row])


@candidate(Code.SEQ_NOT_CONTIGUOUS, "append")
def duplicate_last_event(builder: SessionBuilder, rng: random.Random) -> object:
    """The last event written again (a retried write), so its seq repeats."""
    events = builder.events
    return events[-1] if events else None


@candidate(Code.SEQ_NOT_CONTIGUOUS, "append")
def skipped_seq(builder: SessionBuilder, rng: random.Random) -> object:
    """An event that skips a seq (a lost write before it)."""
    e = _benign(_scratch(builder), rng)
    return {**e, "seq": e["seq"] + rng.choice((1, 2))}


@candidate(Code.SEQ_NOT_CONTIGUOUS, "seed")
def seed_window(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed copied from the middle of a parent's log, keeping the parent's seqs."""
    events = builder.events
    return events[edge_int(rng, 1, len(events) - 1) :] if len(events) >= 2 else None


def _committed_damage(
    builder: SessionBuilder, rng: random.Random, damage: Callable[[list[str], int], None], first: int = 0
) -> object:
    """The builder's stored log with ``damage(lines, index)`` done to an event row that a later
    ``turn/end`` proves committed, at seq ``first`` or later where the log has one.  A log with no
    ``turn/end`` yet is taken on until it has one (its open turn ended, or a turn started and
    ended): a session's first turn is long, and damage in committed history is a rule of every log,
    not only of one past its first turn."""

    def turn_ends(lines: list[str]) -> list[int]:
        return [i for i, line in enumerate(lines) if i > 1 and '"type":"turn/end"' in line]

    lines = _jsonl_lines(builder)
    ends = turn_ends(lines)
    if not ends:
        b = _scratch(builder)
        if not (_enter_turn(b) and _leave_turn(b) and b.state.trace.last_turn > 0):
            return None
        lines = _jsonl_lines(b)
        ends = turn_ends(lines)
        if not ends:
            return None
    damage(lines, rng.randrange(1 + first if 1 + first < ends[-1] else 1, ends[-1]))
    return _text(lines)


@candidate(Code.SEQ_NOT_CONTIGUOUS, "load")
def duplicated_committed_row(builder: SessionBuilder, rng: random.Random) -> object:
    """A row written twice before a later ``turn/end``: the repeated seq lies in committed history."""
    return _committed_damage(builder, rng, lambda lines, i: lines.insert(i, lines[i]))


@candidate(Code.SEQ_NOT_CONTIGUOUS, "load")
def lost_committed_row(builder: SessionBuilder, rng: random.Random) -> object:
    """A row lost before a later ``turn/end`` (a gap in committed history)."""
    return _committed_damage(builder, rng, lambda lines, i: lines.__delitem__(i))


@candidate(Code.SEQ_NOT_CONTIGUOUS, "load")
def stray_object_in_committed_history(builder: SessionBuilder, rng: random.Random) -> object:
    """A JSON object that is no next event (``{}``, an old header line, a far seq) before a ``turn/end``."""
    stray = rng.choice(
        ("{}", json.dumps(STORED_HEADER), json.dumps({"type": "session/title", "seq": 10**6, "time": 0, "data": _USER_TITLE}))
    )
    return _committed_damage(builder, rng, lambda lines, i: lines.insert(i, stray))


# -- vocabulary and payload shapes (INV-LOG-6..10) -------------------------------------------------


@candidate(Code.UNKNOWN_EVENT_TYPE, "append")
def later_format_event(builder: SessionBuilder, rng: random.Random) -> object:
    """An event type from a later format version (v2 attempts, v3 system or v4 developer messages)."""
    b = _scratch(builder)
    turn, step = _open_step(b) or (max(b.state.trace.last_turn, 1), 1)
    type_ = rng.choice(("assistant/attempt", "system/message", "developer/message"))
    data: dict[str, Any] = {"turn": turn, "step": step}
    if type_ == "assistant/attempt":
        data["stream"] = []
    else:
        role = "system" if type_ == "system/message" else "developer"
        data["message"] = {"id": "m-1", "role": role, "content": [text_block("Be terse.")], "source": {"kind": role}}
    return b.event(type_, data, False)


@candidate(Code.UNKNOWN_EVENT_TYPE, "load")
def jsonl_unknown_line(builder: SessionBuilder, rng: random.Random) -> object:
    """A v1 log holding a line of a later format's event type."""
    return _text([*_jsonl_lines(builder), json.dumps(later_format_event(builder, rng))])


@candidate(Code.END_SEED_INVALID, "append")
def end_seed_not_inherited(builder: SessionBuilder, rng: random.Random) -> object:
    """An end-of-seed marker with ``inherited: false`` or a v0-style seed length."""
    b = _scratch(builder)
    return b.event("session/end-seed", rng.choice(({"inherited": False}, {"seedLength": b.next_seq})), False)


@candidate(Code.END_SEED_INVALID, "seed")
def seed_bad_marker(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed closed by a malformed end-of-seed marker."""
    return [*builder.events, end_seed_not_inherited(builder, rng)]


@candidate(Code.USER_MESSAGE_INVALID, "append")
def user_message_without_id(builder: SessionBuilder, rng: random.Random) -> object:
    """A pre-identity user message: role, content and source, but no id."""
    b = _scratch(builder)
    data = {"role": "user", "content": [text_block("Please continue.")], "source": {"kind": "user"}}
    return b.event("user/message", data, False, surfaceOp="append")


@candidate(Code.USER_MESSAGE_INVALID, "append")
def user_message_assistant_role(builder: SessionBuilder, rng: random.Random) -> object:
    """A user/message carrying an assistant-role message."""
    b = _scratch(builder)
    data = {"id": "u-1", "role": "assistant", "content": [text_block("Sure.")], "source": {"kind": "user"}}
    return b.event("user/message", data, False, surfaceOp="append")


@candidate(Code.ASSISTANT_MESSAGE_INVALID, "append")
def assistant_arguments_object(builder: SessionBuilder, rng: random.Random) -> object:
    """A tool-call block whose arguments were parsed into an object instead of kept as the raw string."""
    b = _scratch(builder)
    if _open_step(b) is None:
        return None
    e = _assistant(b, (f"call-{rng.randrange(1000)}",))
    e["data"]["message"]["content"][-1]["arguments"] = {"path": "a.py"}
    return e


@candidate(Code.TOOL_CALL_ID_REPEATED, "append")
def assistant_duplicate_call_ids(builder: SessionBuilder, rng: random.Random) -> object:
    """An assistant message asking for two tool calls with the same id (the second advert repeats a pending id)."""
    b = _scratch(builder)
    if _open_step(b) is None:
        return None
    call = f"call-{rng.randrange(1000)}"
    return _assistant(b, (call, call))


@candidate(Code.ASSISTANT_MESSAGE_INVALID, "append")
def assistant_v0_provenance(builder: SessionBuilder, rng: random.Random) -> object:
    """A v0 assistant message: ``content`` and ``provenance`` instead of a message (the edge would convert it)."""
    b = _scratch(builder)
    step = _open_step(b)
    if step is None:
        return None
    data = {"turn": step[0], "step": step[1], "content": [text_block("Done.")], "provenance": dict(PROVIDER)}
    return b.event("assistant/message", data, False, surfaceOp="append")


def _recorded_call(b: SessionBuilder, rng: random.Random) -> str | None:
    """A call recorded by ``tool/call`` in the open step and not yet answered."""
    calls = sorted(b.state.trace.step_calls)
    return rng.choice(calls) if calls and b.state.pending_calls > 0 else None


@candidate(Code.TOOL_RESULT_INVALID, "append")
def tool_result_mismatched_ids(builder: SessionBuilder, rng: random.Random) -> object:
    """A tool result whose block answers a different call than its source names."""
    b = _scratch(builder)
    call = _recorded_call(b, rng)
    if call is None:
        return None
    e = b.tool_result(call, commit=False)
    e["data"]["message"]["content"][0]["toolCallId"] = call + "-other"
    return e


@candidate(Code.TOOL_RESULT_INVALID, "append")
def tool_result_is_error_string(builder: SessionBuilder, rng: random.Random) -> object:
    """A tool result whose ``isError`` is the string ``"true"``."""
    b = _scratch(builder)
    call = _recorded_call(b, rng)
    if call is None:
        return None
    e = b.tool_result(call, commit=False)
    e["data"]["message"]["content"][0]["isError"] = rng.choice(("true", 1))
    return e


@candidate(Code.TOOL_RESULT_INVALID, "append")
def tool_result_v0_flat(builder: SessionBuilder, rng: random.Random) -> object:
    """A v0 tool result: ``callId``, ``content`` and ``isError`` without a message."""
    b = _scratch(builder)
    call = _recorded_call(b, rng)
    step = _open_step(b)
    if call is None or step is None:
        return None
    data = {"turn": step[0], "step": step[1], "callId": call, "content": [text_block("ok")], "isError": False}
    return b.event("tool/result", data, False, surfaceOp="append")
