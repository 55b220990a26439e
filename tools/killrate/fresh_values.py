"""The third half of the catalogue, values: the event envelope, lossless JSON and payload shapes (INV-LOG, INV-PAY).

Written from the invariant list (``invariants.md``), the reference model and seqlog's source alone,
before any suite change aimed at them.  Each mutant is one decision a port's author could get wrong
while reading the same rules: a bound taken as exclusive, two envelope checks in the other order, a
check applied on one path and skipped on another, a legal value refused, state touched by a refused
candidate, a stored form spelled another way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import seqlog.driver as sl_driver
import seqlog.event as sl_event
import seqlog.jsonvalue as sl_jsonvalue
import seqlog.payloads as sl_payloads
from killrate import probes as p
from killrate.mutants import Fn, fresh_mutant
from seqlog.driver import SeqlogDriver
from seqlog.errors import Code, SeqlogError
from seqlog.event import Event, decode_event, vocabulary_check
from seqlog.header import canonical_header, check_header_event
from seqlog.jsonvalue import MAX_NESTING, MAX_SAFE_INTEGER, DeepArray, FrozenObject, JsonValue, NotLossless
from seqlog.messages import pairing_delta
from seqlog.payloads import Problem
from seqlog.session import AppendPlan, Session, check_payload
from seqlog.trace import abandon_for_restart, advance

T = p.T


def _nested(levels: int) -> object:
    """A value nesting exactly ``levels`` levels (a scalar is depth 0)."""
    value: object = 0
    for _ in range(levels):
        value = [value]
    return value


def _note(seq: int, data: object) -> dict[str, Any]:
    """An ignorable event of a type outside the vocabulary: only the envelope and losslessness judge it."""
    return {"type": "x/note", "seq": seq, "time": T + seq, "data": data, "ignorable": True}


def _tool_turn(*more: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """A turn whose step advertised and started ``c1``, then ``more``."""
    return (p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]), p.tool_call(3, "c1"), *more)


# --- INV-LOG-1, -2: the envelope ----------------------------------------------------------------------


@fresh_mutant(
    "missing_key_reported_first", "INV-LOG-1", "session", sl_event, "decode_event",
    p.appends({"type": "turn/start", "seq": 0, "data": {"turn": 1}, "id": "evt-0"}),
)
def _missing_key_reported_first(original: Fn) -> Fn:
    """decode_event looks for missing envelope members before unknown ones: an event with both faults lacks a key."""

    def decode_event(raw: object) -> Event:
        if isinstance(raw, Mapping):
            missing = [key for key in sl_event.REQUIRED_KEYS if key not in raw]
            if missing:
                raise SeqlogError(Code.ENVELOPE_MISSING_KEY, f"event lacks envelope key(s) {missing}")
        return original(raw)  # type: ignore[no-any-return]

    return decode_event


@fresh_mutant(
    "max_safe_seq_refused", "INV-LOG-2", "session", sl_event, "decode_event",
    p.appends({"type": "turn/start", "seq": MAX_SAFE_INTEGER, "time": T, "data": {"turn": 1}}),
)
def _max_safe_seq_refused(original: Fn) -> Fn:
    """decode_event bounds seq with ``< 2^53 − 1``: the largest safe integer is a bad seq, not judged for contiguity."""

    def decode_event(raw: object) -> Event:
        event: Event = original(raw)
        if event.seq == MAX_SAFE_INTEGER:
            raise SeqlogError(Code.ENVELOPE_BAD_SEQ, f"event {event.type!r} seq {event.seq} is not a non-negative safe integer")
        return event

    return decode_event


@fresh_mutant(
    "negative_time_refused", "INV-LOG-2", "session", sl_event, "decode_event",
    p.appends({"type": "turn/start", "seq": 0, "time": -1, "data": {"turn": 1}}),
)
def _negative_time_refused(original: Fn) -> Fn:
    """decode_event reads ``time`` as a count like ``seq``: a time before the epoch, which the rule allows, is refused."""

    def decode_event(raw: object) -> Event:
        event: Event = original(raw)
        if event.time < 0:
            raise SeqlogError(Code.ENVELOPE_BAD_TIME, f"event seq {event.seq} time {event.time} is not a safe integer")
        return event

    return decode_event


# --- INV-LOG-4: lossless JSON ---------------------------------------------------------------------------


@fresh_mutant(
    "deep_value_limit_off_by_one", "INV-LOG-4", "session", sl_jsonvalue, "_freeze_deep",
    p.appends(_note(0, _nested(MAX_NESTING))),
)
def _deep_value_limit_off_by_one(original: Fn) -> Fn:
    """The explicit-stack walk counts the level it takes over at twice, so a value nesting exactly 256 levels is refused."""

    def _freeze_deep(value: object) -> JsonValue:
        levels = MAX_NESTING - sl_jsonvalue._RECURSION_BUDGET - 1
        return sl_jsonvalue._rebuild(value, FrozenObject, DeepArray, strict=True, levels=levels)  # type: ignore[return-value]

    return _freeze_deep


@fresh_mutant(
    "array_max_safe_integer_refused", "INV-LOG-4", "session", sl_jsonvalue, "_scalar",
    p.appends(_note(0, {"bounds": [MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER]})),
)
def _array_max_safe_integer_refused(original: Fn) -> Fn:
    """The scalar check bounds integers with ``<``: ±(2^53 − 1) as an array member (which takes that check) is refused."""

    def _scalar(value: object) -> object:
        if type(value) is int and abs(value) == MAX_SAFE_INTEGER:
            raise NotLossless("is an integer outside the safe range")
        return original(value)

    return _scalar


# --- INV-LOG-10, -11, -12: seeds, refusals, the stored form ---------------------------------------------


@fresh_mutant(
    "empty_seed_unmarked", "INV-LOG-10", "session", Session, "create",
    ({"op": "reset"}, {"op": "seed", "events": []}, {"op": "state"}),
)
def _empty_seed_unmarked(original: Fn) -> Fn:
    """Session.create takes an empty seed for no seed at all, so it gets no ``session/end-seed`` marker at seq 0."""

    def create(cls: type[Session], seed: Any = None, header: Any = None, *, clock: Any = None) -> Session:
        if seed is not None:
            seed = list(seed)
        return original(cls, seed or None, header, clock=clock)  # type: ignore[no-any-return]

    return create


@fresh_mutant(
    "refused_seed_clears_session", "INV-LOG-11", "session", SeqlogDriver, "op_seed",
    ({"op": "reset"}, {"op": "append", "event": p.turn_start(0)}, {"op": "seed", "events": [p.turn_start(0, turn=2)]},
     {"op": "state"}),
)
def _refused_seed_clears_session(original: Fn) -> Fn:
    """``seed`` discards the current session before it builds the new one, so a refused seed leaves an empty session behind."""

    def op_seed(self: SeqlogDriver, request: dict[str, Any]) -> Any:
        self.session = sl_driver._new_session()
        return original(self, request)

    return op_seed


def _header_snapshot(raw: object) -> FrozenObject | None:
    """The canonical snapshot of a candidate ``request/header`` whose own payload is valid, else ``None``."""
    if not isinstance(raw, Mapping) or raw.get("type") != "request/header" or not isinstance(raw.get("data"), Mapping):
        return None
    try:
        check_header_event(raw["data"])
    except SeqlogError:
        return None
    return canonical_header(raw["data"]["header"])


@fresh_mutant(
    "refused_header_append_tracked", "INV-LOG-11", "session", Session, "validate",
    p.appends(p.header_event(0, p.HEADER)),
)
def _refused_header_append_tracked(original: Fn) -> Fn:
    """The tracked request header takes a snapshot once its payload is valid, before the trace passed it: a refused one counts."""

    def validate(self: Session, raw: object) -> Any:
        try:
            return original(self, raw)
        except SeqlogError:
            snapshot = _header_snapshot(raw)
            if snapshot is not None:
                self._header = snapshot
            raise

    return validate


@fresh_mutant(
    "append_surface_op_left_implicit", "INV-LOG-12", "jsonl", sl_event, "encode_event",
    ({"op": "reset"}, {"op": "append", "event": p.user(0)}, {"op": "save"}),
)
def _append_surface_op_left_implicit(original: Fn) -> Fn:
    """encode_event leaves ``surfaceOp: "append"`` out of the stored form, taking append for the default it is not."""

    def encode_event(event: Event) -> dict[str, object]:
        out: dict[str, object] = original(event)
        if out.get("surfaceOp") == "append":
            del out["surfaceOp"]
        return out

    return encode_event


# --- INV-PAY: payload shapes --------------------------------------------------------------------------


@fresh_mutant(
    "ignorable_known_payload_skipped", "INV-PAY-1", "session", sl_payloads, "check_data",
    p.appends(p.event("plan/mode", 0, {}, ignorable=True)),
)
def _ignorable_known_payload_skipped(original: Fn) -> Fn:
    """check_data skips events marked ``ignorable``, as if the marker excused a known type from its payload table."""

    def check_data(event: Event) -> None:
        if not event.ignorable:
            original(event)

    return check_data


def _blank_named_error(seq: int) -> dict[str, Any]:
    result = p.tool_result(seq, "c1", is_error=True, error_code="E")
    result["data"]["error"]["name"] = ""
    return result


@fresh_mutant(
    "tool_error_names_may_be_empty", "INV-PAY-2", "session", sl_payloads, "payload_problem",
    p.appends(*_tool_turn(_blank_named_error(4))),
)
def _tool_error_names_may_be_empty(original: Fn) -> Fn:
    """The payload table types ``tool/result.error``'s name and code as plain strings, so an empty name or code passes."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        error = data.get("error") if event_type == "tool/result" and isinstance(data, Mapping) else None
        if isinstance(error, Mapping):
            filled = {key: (value or "x") if key in ("name", "code") else value for key, value in error.items()}
            data = {**data, "error": filled}  # type: ignore[dict-item]
        return original(event_type, data, seq, generation)  # type: ignore[no-any-return]

    return payload_problem


_FINISH_KINDS = frozenset({"stop", "tool-calls", "max-tokens", "aborted", "error"})


@fresh_mutant(
    "finish_reason_kind_closed", "INV-PAY-3", "session", sl_payloads, "payload_problem",
    p.appends(
        p.turn_start(0),
        p.step_start(1),
        p.event("assistant/chunk", 2, {"turn": 1, "step": 1, "chunk": {"type": "finish", "reason": {"kind": "content-filter"}}}),
    ),
)
def _finish_reason_kind_closed(original: Fn) -> Fn:
    """The finish-reason union is read as closed: a ``finish`` chunk of an unreleased reason kind is refused, not kept opaque."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        chunk = data.get("chunk") if event_type == "assistant/chunk" and isinstance(data, Mapping) else None
        reason = chunk.get("reason") if isinstance(chunk, Mapping) and chunk.get("type") == "finish" else None
        if isinstance(reason, Mapping) and reason.get("kind") not in _FINISH_KINDS:
            return Problem(("chunk", "reason", "kind"), "names no known variant")
        return original(event_type, data, seq, generation)  # type: ignore[no-any-return]

    return payload_problem


def _validate_trusting_payloads(session: Session, raw: object) -> AppendPlan:
    """Session.validate without the payload table: the other rules in their order."""
    event = decode_event(raw)
    if event.seq != len(session):
        raise SeqlogError(Code.SEQ_NOT_CONTIGUOUS, f"event seq {event.seq} is not contiguous; expected {len(session)}")
    vocabulary_check(event)
    check_payload(event)
    plan = session.surface.validate_next(event)
    delta = pairing_delta(event) if plan.touches_surface else 0
    brackets = session.brackets
    if session._legacy_restart and len(session):
        brackets = abandon_for_restart(brackets, event, session.events[event.seq - 1])
    brackets = advance(brackets, event)
    return AppendPlan(event, plan, brackets, delta, session._relations.plan(event, session.events, session.surface))


@fresh_mutant(
    "replayed_payloads_unchecked", "INV-PAY-1", "session", Session, "restore",
    ({"op": "reset"}, {"op": "seed", "events": [p.event("plan/mode", 0, {"active": "yes"})]}, {"op": "state"}),
)
def _replayed_payloads_unchecked(original: Fn) -> Fn:
    """A log replayed whole (a seed, the pure ops' logs) is trusted for payload shapes: only live appends are checked for them."""

    def restore(cls: type[Session], events: Any, **options: Any) -> Session:
        where, first = options.pop("where", "index"), options.pop("first", 0)
        complete, legacy_restart = options.pop("complete", True), options.pop("legacy_restart", False)
        session = cls(**options)
        session._legacy_restart = legacy_restart
        index = -1
        for index, raw in enumerate(events):
            try:
                session.commit(_validate_trusting_payloads(session, raw))
            except SeqlogError as error:
                raise error.at(f"{where} {index + first}") from None
        session._legacy_restart = False
        if legacy_restart:
            session._legacy_length = len(session)
        if complete:
            session._check_complete(f"{where} {index + first}")
        return session

    return restore
