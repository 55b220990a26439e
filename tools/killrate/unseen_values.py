"""The fourth half of the catalogue, values: the event envelope, lossless JSON, seeds, refusals and
payload shapes (INV-LOG, INV-PAY).

Written from the invariant list (``invariants.md``), the protocol, the on-disk format, the reference
model and seqlog's source alone, without reading the conformance suite or its tests.  Each mutant is
one decision a port's author could get wrong while reading the same rules: a marker tested by
truthiness, two envelope checks in the other order, a member filled in or dropped on the way in, a
seed boundary read loosely, a discriminant read as closed, an optional ``null`` read as absent.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from functools import cache
from typing import Any

import seqlog.codec as sl_codec
import seqlog.event as sl_event
import seqlog.payloads as sl_payloads
from killrate import probes as p
from killrate.mutants import Fn, unseen_mutant
from seqlog.driver import SeqlogDriver
from seqlog.errors import Code, SeqlogError
from seqlog.event import END_SEED, Event, decode_event, vocabulary_check
from seqlog.jsonvalue import freeze, is_nonempty_string, is_safe_integer, is_safe_natural, lossless_problem
from seqlog.payloads import Problem
from seqlog.session import Session

T = p.T


def _raw(type_: str, seq: int, time: object, data: object, **envelope: Any) -> dict[str, Any]:
    return {"type": type_, "seq": seq, "time": time, "data": data, **envelope}


# --- INV-LOG-1..5: the envelope, lossless values, contiguity ------------------------------------------


@unseen_mutant(
    "empty_type_accepted", "INV-LOG-1", "session", sl_event, "decode_event",
    p.appends(_raw("", 0, T, {}, ignorable=True)),
)
def _empty_type_accepted(original: Fn) -> Fn:
    """decode_event checks that ``type`` is a string but not that it is non-empty: an ignorable ``""`` event is kept."""

    def decode_event(raw: object) -> Event:
        if isinstance(raw, Mapping) and raw.get("type") == "":
            event: Event = original({**raw, "type": "?"})
            return dataclasses.replace(event, type="")
        return original(raw)  # type: ignore[no-any-return]

    return decode_event


@unseen_mutant(
    "bad_time_reported_before_bad_seq", "INV-LOG-2", "session", sl_event, "decode_event",
    p.appends(_raw("turn/start", -1, "later", {"turn": 1})),
)
def _bad_time_reported_before_bad_seq(original: Fn) -> Fn:
    """decode_event checks ``time`` before ``seq``: an event with both numbers wrong is refused for its time."""

    def decode_event(raw: object) -> Event:
        if isinstance(raw, Mapping) and all(key in raw for key in sl_event.REQUIRED_KEYS):
            bad_time = not is_safe_integer(raw["time"])
            if bad_time and sl_event.ENVELOPE_KEYS.issuperset(raw) and isinstance(raw["type"], str) and raw["type"]:
                raise SeqlogError(Code.ENVELOPE_BAD_TIME, f"event time {raw['time']!r} is not a safe integer")
        return original(raw)  # type: ignore[no-any-return]

    return decode_event


@unseen_mutant(
    "ignorable_truthy_accepted", "INV-LOG-3", "session", sl_event, "decode_event",
    p.appends({**p.turn_start(0), "ignorable": 1}),
)
def _ignorable_truthy_accepted(original: Fn) -> Fn:
    """decode_event tests ``ignorable`` by truthiness: ``1`` or ``"yes"`` is read as ``true``."""

    def decode_event(raw: object) -> Event:
        if isinstance(raw, Mapping) and "ignorable" in raw and raw["ignorable"] is not True and raw["ignorable"]:
            raw = {**raw, "ignorable": True}
        return original(raw)  # type: ignore[no-any-return]

    return decode_event


def _checked_before_ignorable(raw: Mapping[str, Any]) -> bool:
    """Whether ``raw`` passes the envelope checks that come before ``ignorable``: its keys, type, seq and time."""
    keys = sl_event.ENVELOPE_KEYS.issuperset(raw) and all(key in raw for key in sl_event.REQUIRED_KEYS)
    return keys and is_nonempty_string(raw["type"]) and is_safe_natural(raw["seq"]) and is_safe_integer(raw["time"])


@unseen_mutant(
    "lossless_checked_before_ignorable", "INV-LOG-4", "session", sl_event, "decode_event",
    p.appends({**p.event("turn/start", 0, {"turn": 1, "weight": 2**60}), "ignorable": "yes"}),
)
def _lossless_checked_before_ignorable(original: Fn) -> Fn:
    """decode_event freezes ``data`` before it reads the ``ignorable`` marker: with both wrong, the value is reported."""

    def decode_event(raw: object) -> Event:
        if isinstance(raw, Mapping) and raw.get("ignorable", True) is not True and _checked_before_ignorable(raw):
            problem = lossless_problem(raw["data"])
            if problem is not None:
                raise SeqlogError(Code.JSON_NOT_LOSSLESS, f"event data is not lossless JSON: {problem}")
        return original(raw)  # type: ignore[no-any-return]

    return decode_event


@unseen_mutant(
    "vocabulary_checked_before_seq", "INV-LOG-5", "session", Session, "validate",
    p.appends(p.turn_start(0), p.event("x/unknown", 5, {})),
)
def _vocabulary_checked_before_seq(original: Fn) -> Fn:
    """Session.validate looks the type up before it checks contiguity: an unknown type at the wrong seq is UNKNOWN_EVENT_TYPE."""

    def validate(self: Session, raw: object) -> Any:
        vocabulary_check(decode_event(raw))
        return original(self, raw)

    return validate


# --- INV-LOG-7, -8: message shapes --------------------------------------------------------------------


def _roleless_user(seq: int) -> dict[str, Any]:
    event = p.user(seq)
    del event["data"]["role"]
    return event


@unseen_mutant(
    "user_role_defaulted", "INV-LOG-7", "session", sl_event, "decode_event",
    p.appends(_roleless_user(0)),
)
def _user_role_defaulted(original: Fn) -> Fn:
    """A ``user/message`` without ``role`` is read as role ``user`` (its only possible value), instead of refused."""

    def decode_event(raw: object) -> Event:
        data = raw.get("data") if isinstance(raw, Mapping) and raw.get("type") == "user/message" else None
        if isinstance(raw, Mapping) and isinstance(data, Mapping) and "role" not in data:
            raw = {**raw, "data": {**data, "role": "user"}}
        return original(raw)  # type: ignore[no-any-return]

    return decode_event


def _interrupted_false(seq: int) -> dict[str, Any]:
    event = p.assistant(seq)
    event["data"]["interrupted"] = False
    return event


@unseen_mutant(
    "interrupted_false_dropped", "INV-LOG-8", "session", sl_event, "decode_event",
    p.appends(p.turn_start(0), p.step_start(1), _interrupted_false(2)),
)
def _interrupted_false_dropped(original: Fn) -> Fn:
    """An ``assistant/message`` with ``interrupted: false`` is taken as not interrupted and stored without the member."""

    def decode_event(raw: object) -> Event:
        data = raw.get("data") if isinstance(raw, Mapping) and raw.get("type") == "assistant/message" else None
        if isinstance(raw, Mapping) and isinstance(data, Mapping) and data.get("interrupted", None) is False:
            raw = {**raw, "data": {k: v for k, v in data.items() if k != "interrupted"}}
        return original(raw)  # type: ignore[no-any-return]

    return decode_event


# --- INV-LOG-10, -11: seeds and refusals --------------------------------------------------------------


@unseen_mutant(
    "end_seed_timed_at_epoch", "INV-LOG-10", "session", Session, "append_event",
    ({"op": "reset"}, {"op": "seed", "events": [p.turn_start(0), p.turn_end(1)]}, {"op": "save"}),
)
def _end_seed_timed_at_epoch(original: Fn) -> Fn:
    """The end-of-seed marker is written with time 0, as carrying no time of its own, not the last seed event's time."""

    def append_event(self: Session, raw: object) -> Event:
        if isinstance(raw, Event) and raw.type == END_SEED:
            raw = dataclasses.replace(raw, time=0)
        return original(self, raw)  # type: ignore[no-any-return]

    return append_event


@unseen_mutant(
    "earlier_end_seed_taken_as_closing", "INV-LOG-10", "session", Session, "append_event",
    ({"op": "reset"}, {"op": "seed", "events": [p.event(END_SEED, 0, {}), p.turn_start(1), p.turn_end(2)]}, {"op": "state"}),
)
def _earlier_end_seed_taken_as_closing(original: Fn) -> Fn:
    """A seed that holds a ``session/end-seed`` anywhere gets no marker of its own, not only one that ends with it."""

    def append_event(self: Session, raw: object) -> Event:
        if isinstance(raw, Event) and raw.type == END_SEED and any(e.type == END_SEED for e in self.events):
            return raw
        return original(self, raw)  # type: ignore[no-any-return]

    return append_event


_OTHER_SESSION_LINE = p.line({"type": "session", "version": 1, "id": "other", "createdAt": 0, "delegationDepth": 0})


@unseen_mutant(
    "refused_load_adopts_header_line", "INV-LOG-11", "jsonl", SeqlogDriver, "op_load",
    ({"op": "reset"}, {"op": "append", "event": p.turn_start(0)},
     {"op": "load", "jsonl": "\n".join((_OTHER_SESSION_LINE, p.line(p.turn_start(5)), p.line(p.turn_end(6)))) + "\n"},
     {"op": "save"}),
)  # fmt: skip
def _refused_load_adopts_header_line(original: Fn) -> Fn:
    """``load`` takes the stored header line as soon as it is valid, so a log refused for its rows still renames the session."""

    def op_load(self: SeqlogDriver, request: dict[str, Any]) -> Any:
        text = request.get("jsonl")
        first = text.split("\n", 1)[0] if isinstance(text, str) else ""
        try:
            header = json.loads(first)
            if not isinstance(header, dict):
                return original(self, request)
            sl_codec.check_header_line(header)
        except (ValueError, SeqlogError):
            return original(self, request)
        try:
            return original(self, request)
        except SeqlogError:
            self.header = freeze(header)  # type: ignore[assignment]
            raise

    return op_load


# --- INV-PAY: payload shapes --------------------------------------------------------------------------


@cache
def _required(event_type: str) -> frozenset[str] | None:
    """The top-level required members of a type's published payload schema (``None``: no flat record)."""
    schema = json.loads(sl_payloads.schema_text(sl_payloads.schema_file(event_type)))
    return frozenset(schema.get("required", ())) if "properties" in schema else None


@unseen_mutant(
    "null_optional_member_as_absent", "INV-PAY-2", "session", sl_payloads, "payload_problem",
    p.appends(p.event("approval/asked", 0, {"id": "a1", "toolName": "read_file", "reason": None})),
)
def _null_optional_member_as_absent(original: Fn) -> Fn:
    """An optional payload member given as ``null`` is read as absent (``value ?? default``) instead of refused for its type."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        required = _required(event_type)
        if required is not None and isinstance(data, Mapping):
            data = {k: v for k, v in data.items() if v is not None or k in required}
        return original(event_type, data, seq, generation)  # type: ignore[no-any-return]

    return payload_problem


@unseen_mutant(
    "shadowed_range_extra_member_ignored", "INV-PAY-2", "session", sl_payloads, "payload_problem",
    p.appends(
        p.user(0),
        p.event("compaction/prune", 1, {"shadowedRange": {"start": 0, "end": 0, "inclusive": True}, "shadowedSeqs": [0],
                                        "shadowedTokenCount": 1}),
    ),
)
def _shadowed_range_extra_member_ignored(original: Fn) -> Fn:
    """A summary's or prune's ``shadowedRange`` is read for its start and end only: another member in it is not refused."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        bounds = data.get("shadowedRange") if isinstance(data, Mapping) else None
        if event_type in ("compaction/prune", "compaction/summary") and isinstance(data, Mapping) and isinstance(bounds, Mapping):
            data = {**data, "shadowedRange": {k: v for k, v in bounds.items() if k in ("start", "end")}}
        return original(event_type, data, seq, generation)  # type: ignore[no-any-return]

    return payload_problem


_USER_SOURCE_KINDS = frozenset({
    "user", "plugin", "model", "tool", "agent-instructions", "team-message", "skill-invocation", "skill-catalog",
    "coordinator", "subagent-report", "subagent-settled", "webhook", "goal", "session-reference",
})


def _emailed_user(seq: int) -> dict[str, Any]:
    event = p.user(seq)
    event["data"]["source"] = {"kind": "email", "from": "someone@example.com"}
    return event


@unseen_mutant(
    "user_source_kind_closed", "INV-PAY-3", "session", sl_payloads, "payload_problem",
    p.appends(_emailed_user(0)),
)
def _user_source_kind_closed(original: Fn) -> Fn:
    """A user message's source ``kind`` is read as a closed union: a source of an unreleased kind is refused, not kept opaque."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        source = data.get("source") if event_type == "user/message" and isinstance(data, Mapping) else None
        if isinstance(source, Mapping) and is_nonempty_string(source.get("kind")) and source["kind"] not in _USER_SOURCE_KINDS:
            return Problem(("source", "kind"), "names no known variant")
        return original(event_type, data, seq, generation)  # type: ignore[no-any-return]

    return payload_problem


def _dispatch_start(seq: int, arguments: object) -> dict[str, Any]:
    data = {"rootCallId": "root", "parentCallId": "root", "subCallId": "s1", "name": "run", "arguments": arguments}
    return p.event("tool/code-dispatch-start", seq, data)


@unseen_mutant(
    "ptc_arguments_must_be_object", "INV-PAY-3", "session", sl_payloads, "payload_problem",
    p.appends(p.turn_start(0), _dispatch_start(1, "ls -la")),
)
def _ptc_arguments_must_be_object(original: Fn) -> Fn:
    """PTC ``arguments`` are inspected as a call's keyword arguments: anything but a JSON object is refused."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        ptc = event_type in ("tool/code-dispatch-start", "tool/code-dispatch")
        if ptc and isinstance(data, Mapping) and "arguments" in data and not isinstance(data["arguments"], Mapping):
            return Problem(("arguments",), "must be an object")
        return original(event_type, data, seq, generation)  # type: ignore[no-any-return]

    return payload_problem


# --- INV-LEGACY-3 on the v1 path: the vocabulary ------------------------------------------------------


@unseen_mutant(
    "ignorable_mode_set_accepted", "INV-LEGACY-3", "session", sl_event, "vocabulary_check",
    p.appends(p.event("mode/set", 0, {"mode": "plan"}, ignorable=True)),
)
def _ignorable_mode_set_accepted(original: Fn) -> Fn:
    """The vocabulary lets ``ignorable`` excuse any type it does not take, retired ones too: an ignorable ``mode/set`` passes."""

    def vocabulary_check(event: Event) -> None:
        if event.ignorable and event.type in sl_event.LEGACY_TYPES:
            return
        original(event)

    return vocabulary_check

