"""The fifth half of the catalogue, values: the event envelope, lossless JSON and payload shapes (INV-LOG, INV-PAY).

Written from the documents (``invariants.md``, the protocol, the on-disk format), the reference model
and seqlog's source alone, without reading the conformance suite or its tests, and never run against
the suite before the measurement that first judges them.  Each mutant is one decision a port's author
could get wrong while reading the same rules: a member judged by its shape but not for losslessness, a
bound taken one past its limit, a spelling of a number refused, a vocabulary taken from the wrong
table, a friendlier input form accepted, a required member made optional, a refusal that leaves state
behind, a stored form shortened, a relation between members read too narrowly, an open union closed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import seqlog.event as sl_event
import seqlog.jsonvalue as sl_jsonvalue
import seqlog.payloads as sl_payloads
from killrate import probes as p
from killrate.mutants import Fn, sealed_mutant
from seqlog.errors import Code, SeqlogError
from seqlog.event import END_SEED, Event
from seqlog.jsonvalue import MAX_NESTING, DeepArray, FrozenObject, JsonValue
from seqlog.legacy import V0_INVENTORY
from seqlog.payloads import Broken, Problem
from seqlog.relations import Relations, _member
from seqlog.session import Session
from seqlog.surface import SurfaceManager

T = p.T
RETRY_DELAY_LIMIT = 2**31 - 1
"""The largest ``llm/retry`` delay the payload table admits (a JavaScript timer's bound)."""
SCHEDULE_MINIMUM_SECONDS = 300
"""The shortest period of an ``every`` schedule."""


def _nested(levels: int) -> object:
    """A value nesting exactly ``levels`` levels (a scalar is depth 0)."""
    value: object = 0
    for _ in range(levels):
        value = [value]
    return value


def _note(seq: int, data: object) -> dict[str, Any]:
    """An ignorable event of a type outside the vocabulary: only the envelope and losslessness judge it."""
    return {"type": "x/note", "seq": seq, "time": T + seq, "data": data, "ignorable": True}


def _step_open(*more: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """Turn 1 with step 1 open and a request header of provider ``p`` in force, then ``more``."""
    return (p.turn_start(0), p.step_start(1), p.header_event(2, p.HEADER), *more)


def _retry(seq: int, attempt: int, **more: Any) -> dict[str, Any]:
    """Attempt ``attempt`` of the ``always`` policy chain ``r1`` of turn 1, step 1, with ``more`` members over it."""
    data = {"retryId": "r1", "turn": 1, "step": 1, "provider": "p", "policyKey": "default", "retry": attempt,
            "delayMs": 0, "failure": {"message": "overloaded", "code": "OVERLOADED"}, "mode": "always", **more}
    return p.event("llm/retry", seq, data)


def _user_from(seq: int, source: dict[str, Any]) -> dict[str, Any]:
    """An appended ``user/message`` from ``source``."""
    event = p.user(seq)
    event["data"]["source"] = source
    return event


def _summary(seq: int, start: int, end: int, shadowed: Sequence[int], **more: Any) -> dict[str, Any]:
    """The ``compaction/summary`` of compaction ``k1`` over the surface nodes ``shadowed``."""
    data = {"compactionId": "k1", "summary": [{"type": "text", "text": "so far"}],
            "shadowedRange": {"start": start, "end": end}, "shadowedSeqs": list(shadowed), "shadowedTokenCount": 1,
            "provider": "p", "model": "m", **more}
    return p.event("compaction/summary", seq, data)


# --- INV-LOG-2, -4: envelope numbers and lossless values ------------------------------------------------


@sealed_mutant(
    "metadata_judged_by_shape_only", "INV-LOG-4", "session", sl_event, "_frozen_member",
    p.appends(p.user(0, sources=[2**60])),
)
def _metadata_judged_by_shape_only(original: Fn) -> Fn:
    """Only ``data`` is checked for lossless JSON, surface metadata by its shape: a huge seq in provenance is SOURCES_INVALID."""

    def _frozen_member(raw: Mapping[str, Any], key: str, seq: int) -> JsonValue:
        if key != "data":
            return None
        return original(raw, key, seq)  # type: ignore[no-any-return]

    return _frozen_member


@sealed_mutant(
    "nesting_bound_one_level_late", "INV-LOG-4", "session", sl_jsonvalue, "_freeze_deep",
    p.appends(_note(0, _nested(MAX_NESTING + 1))),
)
def _nesting_bound_one_level_late(original: Fn) -> Fn:
    """The nesting bound counts the scalar as a level of its own, so a value nesting 257 levels, one past the limit, is kept."""

    def _freeze_deep(value: object) -> JsonValue:
        levels = MAX_NESTING - sl_jsonvalue._RECURSION_BUDGET + 1
        return sl_jsonvalue._rebuild(value, FrozenObject, DeepArray, strict=True, levels=levels)  # type: ignore[return-value]

    return _freeze_deep


@sealed_mutant(
    "integral_float_time_refused", "INV-LOG-2", "session", sl_event, "decode_event",
    p.appends({**p.turn_start(0), "time": float(T)}),
)
def _integral_float_time_refused(original: Fn) -> Fn:
    """decode_event wants an integer-typed ``time``: ``1700000000000.0``, the same JSON number as the integer, is a bad time."""

    def decode_event(raw: object) -> Event:
        if isinstance(raw, Mapping) and type(raw.get("time")) is float:
            raise SeqlogError(Code.ENVELOPE_BAD_TIME, f"event time {raw['time']!r} is not a safe integer")
        return original(raw)  # type: ignore[no-any-return]

    return decode_event


# --- INV-LOG-6..8: the vocabulary and the message shapes ------------------------------------------------


@sealed_mutant(
    "v0_names_in_v1_vocabulary", "INV-LOG-6", "session", sl_event, "vocabulary_check",
    p.appends(p.event("compact/start", 0, {"compactionId": "k1", "turn": None})),
)
def _v0_names_in_v1_vocabulary(original: Fn) -> Fn:
    """The v1 vocabulary is taken from the v0 inventory, so a v0-only name (``compact/start``, …) passes in a v1 log."""

    def vocabulary_check(event: Event) -> None:
        if event.type in V0_INVENTORY:
            return
        original(event)

    return vocabulary_check


def _text_content(seq: int) -> dict[str, Any]:
    event = p.user(seq)
    event["data"]["content"] = "hi"
    return event


@sealed_mutant(
    "string_user_content_wrapped", "INV-LOG-7", "session", sl_event, "decode_event",
    p.appends(_text_content(0)),
)
def _string_user_content_wrapped(original: Fn) -> Fn:
    """A ``user/message`` whose ``content`` is a plain string (the chat API's form) is read as one text block, not refused."""

    def decode_event(raw: object) -> Event:
        data = raw.get("data") if isinstance(raw, Mapping) and raw.get("type") == "user/message" else None
        if isinstance(raw, Mapping) and isinstance(data, Mapping) and isinstance(data.get("content"), str):
            raw = {**raw, "data": {**data, "content": [{"type": "text", "text": data["content"]}]}}
        return original(raw)  # type: ignore[no-any-return]

    return decode_event


def _reported_usage(seq: int) -> dict[str, Any]:
    event = p.assistant(seq)
    event["data"]["usage"] = {"outputTokens": 5}
    return event


@sealed_mutant(
    "usage_token_counts_optional", "INV-LOG-8", "session", sl_payloads, "payload_problem",
    p.appends(p.turn_start(0), p.step_start(1), _reported_usage(2)),
)
def _usage_token_counts_optional(original: Fn) -> Fn:
    """An assistant message's ``usage`` is read with missing counts as 0: a usage without ``inputTokens`` passes."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        usage = data.get("usage") if event_type == "assistant/message" and isinstance(data, Mapping) else None
        if isinstance(data, Mapping) and isinstance(usage, Mapping):
            data = {**data, "usage": {"inputTokens": 0, "outputTokens": 0, **usage}}
        return original(event_type, data, seq, generation)  # type: ignore[no-any-return]

    return payload_problem


# --- INV-LOG-10..12: seeds, refusals, the stored form ---------------------------------------------------


@sealed_mutant(
    "trailing_ignorable_hides_marker", "INV-LOG-10", "session", Session, "append_event",
    ({"op": "reset"}, {"op": "seed", "events": [p.event(END_SEED, 0, {}), _note(1, {})]}, {"op": "state"}),
)
def _trailing_ignorable_hides_marker(original: Fn) -> Fn:
    """A seed counts as ending with its marker when only ignorable events follow the marker, so it gets no marker of its own."""

    def append_event(self: Session, raw: object) -> Event:
        if isinstance(raw, Event) and raw.type == END_SEED:
            kept = [event for event in self.events if not event.ignorable]
            if kept and kept[-1].type == END_SEED:
                return kept[-1]
        return original(self, raw)  # type: ignore[no-any-return]

    return append_event


@sealed_mutant(
    "refused_message_advertises_calls", "INV-LOG-11", "session", Relations, "plan",
    p.appends(p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]), p.assistant(3, ["c2", "c1"]), p.tool_call(3, "c2")),
)
def _refused_message_advertises_calls(original: Fn) -> Fn:
    """A message advertises its calls block by block: one refused for a repeated id leaves the calls before it advertised."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Any:
        try:
            return original(self, event, log, surface)
        except SeqlogError as error:
            if error.code is Code.TOOL_CALL_ID_REPEATED:
                data = event.data if isinstance(event.data, Mapping) else {}
                message = data.get("message")
                content = message.get("content", ()) if isinstance(message, Mapping) else ()
                for block in content:
                    if not isinstance(block, Mapping) or block.get("type") != "tool-call":
                        continue
                    call = _member(block, "id")
                    if call in self._tools:
                        break
                    self._tools[call] = (_member(block, "name"), _member(block, "arguments"), False)
            raise

    return plan


def _known_empty_stream(seq: int) -> dict[str, Any]:
    return {**p.assistant(seq), "sourceEventSeqs": []}


@sealed_mutant(
    "empty_stream_sources_left_out", "INV-LOG-12", "jsonl", sl_event, "encode_event",
    ({"op": "reset"}, *({"op": "append", "event": e} for e in (p.turn_start(0), p.step_start(1), _known_empty_stream(2))),
     {"op": "save"}),
)
def _empty_stream_sources_left_out(original: Fn) -> Fn:
    """encode_event leaves an empty ``sourceEventSeqs`` out, taking the known-empty stream for no provenance."""

    def encode_event(event: Event) -> dict[str, object]:
        out: dict[str, object] = original(event)
        if out.get("sourceEventSeqs") == ():
            del out["sourceEventSeqs"]
        return out

    return encode_event


# --- INV-PAY: payload shapes ----------------------------------------------------------------------------


@sealed_mutant(
    "retry_delay_unbounded", "INV-PAY-2", "session", sl_payloads, "payload_problem",
    p.appends(*_step_open(_retry(3, 1, delayMs=2**31))),
)
def _retry_delay_unbounded(original: Fn) -> Fn:
    """``llm/retry.delayMs`` is read as any non-negative number: the timer's bound of 2^31 − 1 ms is not applied."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        delay = data.get("delayMs") if event_type == "llm/retry" and isinstance(data, Mapping) else None
        if isinstance(data, Mapping) and isinstance(delay, int | float) and delay > RETRY_DELAY_LIMIT:
            data = {**data, "delayMs": RETRY_DELAY_LIMIT}
        return original(event_type, data, seq, generation)  # type: ignore[no-any-return]

    return payload_problem


def _every_schedule(seconds: int) -> dict[str, Any]:
    schedule = {"id": "daily", "prompt": "Check the build.", "scheduledAt": "2026-01-01T00:00:00.000Z", "kind": "every",
                "everySeconds": seconds}
    return p.event("schedule/change", 0, {"version": 1, "operation": "create", "schedule": schedule})


@sealed_mutant(
    "every_seconds_minimum_exclusive", "INV-PAY-2", "session", sl_payloads, "payload_problem",
    p.appends(_every_schedule(SCHEDULE_MINIMUM_SECONDS)),
)
def _every_seconds_minimum_exclusive(original: Fn) -> Fn:
    """An ``every`` schedule must run less often than every 300 s: a period of exactly 300 s, the least allowed, is refused."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        schedule = data.get("schedule") if event_type == "schedule/change" and isinstance(data, Mapping) else None
        if isinstance(schedule, Mapping) and schedule.get("everySeconds") == SCHEDULE_MINIMUM_SECONDS:
            return Problem(("schedule", "everySeconds"), "must be greater than 300")
        return original(event_type, data, seq, generation)  # type: ignore[no-any-return]

    return payload_problem


_BYTES_ONLY_REFERENCE = {
    "sessionId": "s-earlier", "label": "earlier work", "capturedThroughSeq": None, "compacted": False,
    "originalMessages": 3, "retainedMessages": 3, "omittedMessages": 0, "omittedBytes": 4096, "truncated": True,
    "inputIndex": 0,
}
_RECALL = {"kind": "session-reference", "form": "recall", "version": 1, "references": [_BYTES_ONLY_REFERENCE]}


@sealed_mutant(
    "truncated_flag_ignores_bytes", "INV-PAY-2", "session", sl_payloads, "relation_problem",
    p.appends(_user_from(0, _RECALL)),
)
def _truncated_flag_ignores_bytes(original: Fn) -> Fn:
    """A session reference's ``truncated`` is checked against ``omittedMessages`` alone: one cut by bytes only is refused."""

    def relation_problem(rule: Mapping[str, Any], value: object) -> Broken | None:
        if rule.get("relation") == "flagIfAnyPositive":
            rule = {**rule, "counts": list(rule["counts"])[:1]}
        return original(rule, value)  # type: ignore[no-any-return]

    return relation_problem


@sealed_mutant(
    "retry_attempts_above_max_accepted", "INV-PAY-2", "session", sl_payloads, "relation_problem",
    p.appends(*_step_open(_retry(3, 1, mode="normal", maxRetries=1), _retry(4, 2, mode="normal", maxRetries=1))),
)
def _retry_attempts_above_max_accepted(original: Fn) -> Fn:
    """A ``normal`` retry's attempt is not compared with its ``maxRetries``: an attempt beyond the policy's limit is stored."""

    def relation_problem(rule: Mapping[str, Any], value: object) -> Broken | None:
        if rule.get("relation") == "notAbove":
            return None
        return original(rule, value)  # type: ignore[no-any-return]

    return relation_problem


@sealed_mutant(
    "unknown_plugin_source_refused", "INV-PAY-3", "session", sl_payloads, "payload_problem",
    p.appends(_user_from(0, {"kind": "plugin", "plugin": "memory"})),
)
def _unknown_plugin_source_refused(original: Fn) -> Fn:
    """A plugin source's ``plugin`` is read as a closed union: a message from a plugin other than ``compact`` is refused."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        source = data.get("source") if event_type == "user/message" and isinstance(data, Mapping) else None
        if isinstance(source, Mapping) and source.get("kind") == "plugin" and source.get("plugin") != "compact":
            return Problem(("source", "plugin"), "names no known plugin")
        return original(event_type, data, seq, generation)  # type: ignore[no-any-return]

    return payload_problem


@sealed_mutant(
    "future_marker_generation_refused", "INV-PAY-3", "session", sl_payloads, "payload_problem",
    p.appends(p.turn_start(0), p.event("session-log-deepseek/delivery-accepted", 1,
                                       {"sessionId": "s-other", "throughSeq": 0, "sessionFormatVersion": 2})),
)
def _future_marker_generation_refused(original: Fn) -> Fn:
    """A delivery marker's ``sessionFormatVersion`` is read as closed: a marker of a later generation is refused."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        marker = data if event_type == "session-log-deepseek/delivery-accepted" and isinstance(data, Mapping) else {}
        if "sessionFormatVersion" in marker and marker["sessionFormatVersion"] != 1:
            return Problem(("sessionFormatVersion",), "must be 1")
        return original(event_type, data, seq, generation)  # type: ignore[no-any-return]

    return payload_problem


@sealed_mutant(
    "stream_call_needs_no_raw_output", "INV-PAY-1", "session", sl_payloads, "payload_problem",
    p.appends(p.user(0), p.user(1), p.event("compaction/start", 2, {"compactionId": "k1", "turn": None}),
              _summary(3, 0, 1, [0, 1], llmStreamCall=True)),
)
def _stream_call_needs_no_raw_output(original: Fn) -> Fn:
    """A summary's ``rawOutput`` is optional whatever else is present: ``llmStreamCall`` without its raw output passes."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        streamed = isinstance(data, Mapping) and "llmStreamCall" in data and "rawOutput" not in data
        if event_type == "compaction/summary" and isinstance(data, Mapping) and streamed:
            data = {**data, "rawOutput": []}
        return original(event_type, data, seq, generation)  # type: ignore[no-any-return]

    return payload_problem
