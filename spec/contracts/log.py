"""INV-LOG: the envelope, the vocabulary, message shapes, seeding and atomicity."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import icontract

from sessionlog_spec.contracts import ENABLED
from sessionlog_spec.contracts._support import accepted
from sessionlog_spec.contracts.compaction import pending_is_tail_balance
from sessionlog_spec.contracts.header import tracked_header_is_latest
from sessionlog_spec.model import event as _event
from sessionlog_spec.model import session as _session
from sessionlog_spec.model.event import ENVELOPE_KEYS, KNOWN_EVENT_TYPES, Event, encode_event
from sessionlog_spec.model.json_value import MAX_SAFE_INTEGER, json_equal
from sessionlog_spec.model.relationships import SessionIdentity
from sessionlog_spec.model.session import SessionState
from sessionlog_spec.model.violation import Violation


def _natural(value: object) -> bool:
    integral = type(value) is int or (type(value) is float and value.is_integer() and math.copysign(1.0, value) > 0)
    return integral and 0 <= value <= MAX_SAFE_INTEGER  # type: ignore[operator]


def _lossless(value: object) -> bool:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return True
    if type(value) is int:
        return abs(value) <= MAX_SAFE_INTEGER
    if type(value) is float:
        return math.isfinite(value) and not (value == 0 and math.copysign(1, value) < 0)
    if isinstance(value, list | tuple):
        return all(_lossless(v) for v in value)
    if isinstance(value, Mapping):
        return all(type(k) is str and _lossless(v) for k, v in value.items())
    return False


def envelope_is_closed(raw: object) -> bool:
    """INV-LOG-1."""
    return (
        isinstance(raw, Mapping)
        and {"type", "seq", "time", "data"} <= set(raw) <= ENVELOPE_KEYS
        and isinstance(raw["type"], str)
        and raw["type"] != ""
    )


def _safe_integer(value: object) -> bool:
    integral = type(value) is int or (type(value) is float and value.is_integer() and str(value) != "-0.0")
    return integral and abs(value) <= MAX_SAFE_INTEGER  # type: ignore[arg-type]


def envelope_numbers_are_safe(raw: Mapping[str, object]) -> bool:
    """INV-LOG-2."""
    return _natural(raw["seq"]) and _safe_integer(raw["time"])


def ignorable_is_true_or_absent(raw: Mapping[str, object]) -> bool:
    """INV-LOG-3."""
    return raw.get("ignorable", True) is True


def payload_is_lossless(raw: Mapping[str, object]) -> bool:
    """INV-LOG-4."""
    return all(_lossless(raw[k]) for k in ("data", "surfaceOp", "sourceEventSeqs") if k in raw)


@icontract.ensure(lambda raw, result: not accepted(result) or envelope_is_closed(raw), "INV-LOG-1", enabled=ENABLED)
@icontract.ensure(lambda raw, result: not accepted(result) or envelope_numbers_are_safe(raw), "INV-LOG-2", enabled=ENABLED)
@icontract.ensure(lambda raw, result: not accepted(result) or ignorable_is_true_or_absent(raw), "INV-LOG-3", enabled=ENABLED)
@icontract.ensure(lambda raw, result: not accepted(result) or payload_is_lossless(raw), "INV-LOG-4", enabled=ENABLED)
@icontract.ensure(
    lambda raw, result: not isinstance(result, Event) or json_equal(encode_event(result), raw), "INV-LOG-12", enabled=ENABLED
)
def decode_event(raw: object) -> Event | Violation:
    """Decode one raw event, checking the envelope."""
    return _event.decode_event(raw)


def _type_of(raw: object) -> object:
    return raw.get("type") if isinstance(raw, Mapping) else raw.type if isinstance(raw, Event) else None


def appended_one_at_tail(state: SessionState, result: SessionState) -> bool:
    """INV-LOG-5."""
    n = len(state.events)
    return len(result.events) == n + 1 and result.events[:n] == state.events and result.events[n].seq == n


def type_is_known_or_ignorable(result: SessionState) -> bool:
    """INV-LOG-6."""
    last = result.events[-1]
    return last.type in KNOWN_EVENT_TYPES or last.ignorable


def message_is_identified(result: SessionState) -> bool:
    """INV-LOG-7..9: every accepted surface message carries a non-empty id and the role its type requires."""
    last = result.events[-1]
    if last.type not in ("user/message", "assistant/message", "tool/result"):
        return True
    data = last.data
    message = data if last.type == "user/message" else data.get("message") if isinstance(data, Mapping) else None
    role = "assistant" if last.type == "assistant/message" else "user"
    return (
        isinstance(message, Mapping)
        and isinstance(message.get("id"), str)
        and message["id"] != ""
        and message.get("role") == role
        and isinstance(message.get("content"), tuple)
    )


def assistant_source_is_model(result: SessionState) -> bool:
    """INV-LOG-8."""
    last = result.events[-1]
    if last.type != "assistant/message" or not isinstance(last.data, Mapping):
        return True
    message = last.data["message"]
    source = message.get("source") if isinstance(message, Mapping) else None
    return (
        isinstance(source, Mapping)
        and source.get("kind") == "model"
        and bool(source.get("provider"))
        and bool(source.get("model"))
    )


def tool_result_answers_its_call(result: SessionState) -> bool:
    """INV-LOG-9."""
    last = result.events[-1]
    if last.type != "tool/result" or not isinstance(last.data, Mapping):
        return True
    message = last.data["message"]
    assert isinstance(message, Mapping)
    source, content = message.get("source"), message.get("content")
    return (
        isinstance(source, Mapping)
        and source.get("kind") == "tool"
        and isinstance(content, tuple)
        and len(content) == 1
        and isinstance(content[0], Mapping)
        and content[0].get("type") == "tool-result"
        and content[0].get("toolCallId") == source.get("callId")
    )


@icontract.snapshot(lambda state: state, name="before", enabled=ENABLED)
@icontract.ensure(lambda state, result: not accepted(result) or appended_one_at_tail(state, result), "INV-LOG-5", enabled=ENABLED)
@icontract.ensure(lambda result: not accepted(result) or type_is_known_or_ignorable(result), "INV-LOG-6", enabled=ENABLED)
@icontract.ensure(lambda result: not accepted(result) or message_is_identified(result), "INV-LOG-7", enabled=ENABLED)
@icontract.ensure(lambda result: not accepted(result) or assistant_source_is_model(result), "INV-LOG-8", enabled=ENABLED)
@icontract.ensure(lambda result: not accepted(result) or tool_result_answers_its_call(result), "INV-LOG-9", enabled=ENABLED)
@icontract.ensure(lambda OLD, state: OLD.before == state, "INV-LOG-11", enabled=ENABLED)
@icontract.ensure(lambda result: not accepted(result) or tracked_header_is_latest(result), "INV-HDR-8", enabled=ENABLED)
@icontract.ensure(
    lambda result: not accepted(result) or pending_is_tail_balance(result.surface.nodes, result.events, result.pending_calls),
    "INV-COMPACT-6",
    enabled=ENABLED,
)
def append_event(state: SessionState, raw: object) -> SessionState | Violation:
    """Append one raw event to a session."""
    return _session.append_event(state, raw)


def seed_is_marked_once(raws: Sequence[object], result: SessionState) -> bool:
    """INV-LOG-10."""
    ends_marked = bool(raws) and _type_of(raws[-1]) == _session.END_SEED
    expected = len(raws) + (0 if ends_marked else 1)
    last_time = result.events[len(raws) - 1].time if raws else 0
    return (
        len(result.events) == expected
        and result.events[-1].type == _session.END_SEED
        and (ends_marked or result.events[-1].time == last_time)
    )


@icontract.ensure(lambda raws, result: not accepted(result) or seed_is_marked_once(raws, result), "INV-LOG-10", enabled=ENABLED)
def seed_session(raws: Sequence[object]) -> SessionState | Violation:
    """A session from a seed, closed by its end-of-seed marker."""
    return _session.seed_session(raws)


def fold_session(
    raws: Sequence[object], *, identity: SessionIdentity | None = None, complete: bool = True
) -> SessionState | Violation:
    """Validate a whole log (uncontracted: it is :func:`append_event` folded, which carries the contracts)."""
    return _session.fold_session(raws, identity=identity, complete=complete)
