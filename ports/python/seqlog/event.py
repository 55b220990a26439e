"""The event envelope, the v1 vocabulary, and the one decoder from raw JSON to :class:`Event`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from seqlog.errors import Code, SeqlogError
from seqlog.jsonvalue import MAX_SAFE_INTEGER, JsonValue, NotLossless, freeze, is_safe_integer, is_safe_natural

ENVELOPE_KEYS = frozenset({"type", "seq", "time", "data", "ignorable", "surfaceOp", "sourceEventSeqs"})
REQUIRED_KEYS = ("type", "seq", "time", "data")

SURFACE_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})
"""The only types whose events may join the surface."""

END_SEED = "session/end-seed"

KNOWN_TYPES = frozenset(
    {
        # Core loop.
        "turn/start", "turn/end", "step/start", "step/end", "user/message", "assistant/chunk",
        "assistant/message", "tool/call", "tool/result", "todo/write", "request/header",
        "request/context", END_SEED,
        # Plugin merges.
        "agent-preset/selected", "agent/inbox/spliced", "approval/asked", "approval/decided",
        "approval/policy", "command/done", "command/run", "compaction/end", "compaction/prune",
        "compaction/start", "compaction/summary", "feedback/record", "goal/change", "hook/invoked",
        "hook/result", "llm/retry", "llm/retry-started", "permission/preset", "plan/mode",
        "sandbox/mode", "schedule/change", "session/title", "session/title-llm-request",
        "subagent/descriptor", "team/member", "team/message/delivered", "team/message/queued",
        "team/task", "tool-workflow/agent-end", "tool-workflow/agent-start", "tool-workflow/run-end",
        "tool-workflow/run-start", "tool/code-dispatch", "tool/code-dispatch-start",
        "web/deepseek-search-llm-request",
        # Released after the baseline, still part of the frozen v0 inventory that v1 kept.
        "model/selection", "session-log-deepseek/delivery-accepted", "subagent/model-selection-policy",
    }
)
"""The 51 event types of the v1 vocabulary."""

LEGACY_TYPES: dict[str, Code] = {
    "request/header-delta": Code.LEGACY_HEADER_DELTA,
    "mode/set": Code.LEGACY_MODE_SET,
}
"""Retired types that v1 refuses by name rather than as unknown."""


@dataclass(frozen=True, slots=True)
class Append:
    """``surfaceOp: "append"``: the event joins the tail of the surface."""


@dataclass(frozen=True, slots=True)
class Replace:
    """``surfaceOp: {op: "replace", start, end}``: the event takes the place of surface range start..end."""

    start: int
    end: int


SurfaceOp = Append | Replace
APPEND = Append()


@dataclass(frozen=True, slots=True)
class Event:
    """One decoded event; everything reachable from it is immutable."""

    type: str
    seq: int
    time: int
    data: JsonValue
    ignorable: bool = False
    surface_op: SurfaceOp | None = None
    source_event_seqs: tuple[int, ...] | None = None


def decode_surface_op(raw: object) -> SurfaceOp:
    """The surface op a raw ``surfaceOp`` member denotes."""
    if isinstance(raw, str) and raw == "append":
        return APPEND
    if isinstance(raw, Append | Replace):
        return raw
    if not isinstance(raw, Mapping) or raw.get("op") != "replace":
        raise SeqlogError(Code.SURFACE_OP_INVALID, f"invalid surfaceOp {raw!r}")
    start, end = raw.get("start"), raw.get("end")
    if len(raw) != 3 or "op" not in raw or not is_safe_natural(start) or not is_safe_natural(end):
        raise SeqlogError(Code.SURFACE_OP_INVALID, f"invalid replace surfaceOp {dict(raw)!r}")
    return Replace(int(start), int(end))  # type: ignore[arg-type]


def decode_sources(raw: object) -> tuple[int, ...]:
    """The seqs a raw ``sourceEventSeqs`` member lists: non-negative safe integers."""
    if not isinstance(raw, list | tuple) or not all(is_safe_natural(s) for s in raw):
        raise SeqlogError(Code.SOURCES_INVALID, "sourceEventSeqs must be an array of non-negative safe integers")
    return tuple(s if type(s) is int else int(s) for s in raw)  # integral floats are integers


def _frozen_member(raw: Mapping[str, Any], key: str, seq: int) -> JsonValue:
    try:
        return freeze(raw[key])
    except NotLossless as error:
        raise SeqlogError(Code.JSON_NOT_LOSSLESS, f"event seq {seq} {key} is not lossless JSON: {error}") from None


def decode_event(raw: object) -> Event:
    """Check a raw event's envelope and snapshot it.

    The checks run in the contract's fixed order so that the first refusal is the same everywhere:
    object, unknown keys, missing keys, ``type``, ``seq``, ``time``, ``ignorable``, lossless
    ``data`` and metadata, then the shapes of ``surfaceOp`` and ``sourceEventSeqs``.
    """
    if type(raw) is not dict:
        if isinstance(raw, Event):
            # Re-checked like any other input: an Event can be built by hand around unfrozen data.
            raw = encode_event(raw)
        elif not isinstance(raw, Mapping):
            raise SeqlogError(Code.ENVELOPE_NOT_OBJECT, "event is not a JSON object")
    if not ENVELOPE_KEYS.issuperset(raw):
        extra = sorted(str(k) for k in raw if k not in ENVELOPE_KEYS)
        raise SeqlogError(Code.ENVELOPE_UNKNOWN_KEY, f"event has unknown envelope key(s) {extra}")
    if "type" not in raw or "seq" not in raw or "time" not in raw or "data" not in raw:
        missing = [k for k in REQUIRED_KEYS if k not in raw]
        raise SeqlogError(Code.ENVELOPE_MISSING_KEY, f"event lacks envelope key(s) {missing}")
    type_, seq, time = raw["type"], raw["seq"], raw["time"]
    if not isinstance(type_, str) or type_ == "":
        raise SeqlogError(Code.ENVELOPE_BAD_TYPE, "event type must be a non-empty string")
    if not (type(seq) is int and 0 <= seq <= MAX_SAFE_INTEGER):
        if not is_safe_natural(seq):
            raise SeqlogError(Code.ENVELOPE_BAD_SEQ, f"event {type_!r} seq {seq!r} is not a non-negative safe integer")
        seq = int(seq)  # type: ignore[arg-type]
    if not (type(time) is int and -MAX_SAFE_INTEGER <= time <= MAX_SAFE_INTEGER):
        if not is_safe_integer(time):
            raise SeqlogError(Code.ENVELOPE_BAD_TIME, f"event seq {seq} time {time!r} is not a safe integer")
        time = int(time)  # type: ignore[arg-type]
    ignorable = "ignorable" in raw
    if ignorable and raw["ignorable"] is not True:
        raise SeqlogError(Code.ENVELOPE_BAD_IGNORABLE, f"event seq {seq} ignorable must be absent or true")
    data = _frozen_member(raw, "data", seq)
    has_op, has_sources = "surfaceOp" in raw, "sourceEventSeqs" in raw
    # Metadata is checked for losslessness before its shape, as a whole, like data.
    raw_op = raw["surfaceOp"] if has_op and isinstance(raw["surfaceOp"], Append | Replace) else None
    if has_op and raw_op is None:
        _frozen_member(raw, "surfaceOp", seq)
    if has_sources:
        _frozen_member(raw, "sourceEventSeqs", seq)
    surface_op: SurfaceOp | None = None
    sources: tuple[int, ...] | None = None
    try:
        if has_op:
            surface_op = raw_op or decode_surface_op(raw["surfaceOp"])
        if has_sources:
            sources = decode_sources(raw["sourceEventSeqs"])
    except SeqlogError as error:
        raise error.at(f"event seq {seq}") from None
    return Event(type_, seq, time, data, ignorable, surface_op, sources)


def encode_surface_op(op: SurfaceOp) -> object:
    """The JSON form of a surface op."""
    if isinstance(op, Replace):
        return {"op": "replace", "start": op.start, "end": op.end}
    return "append"


def encode_event(event: Event) -> dict[str, object]:
    """The JSON form of an event, members in envelope order (``data`` stays frozen)."""
    out: dict[str, object] = {"type": event.type, "seq": event.seq, "time": event.time, "data": event.data}
    if event.ignorable:
        out["ignorable"] = True
    if event.surface_op is not None:
        out["surfaceOp"] = encode_surface_op(event.surface_op)
    if event.source_event_seqs is not None:
        out["sourceEventSeqs"] = event.source_event_seqs
    return out


def vocabulary_check(event: Event) -> None:
    """Legacy types are refused by name; unknown types need ``ignorable: true``."""
    legacy = LEGACY_TYPES.get(event.type)
    if legacy is not None:
        raise SeqlogError(legacy, f"event seq {event.seq} uses the legacy type {event.type!r}")
    if event.type not in KNOWN_TYPES and not event.ignorable:
        raise SeqlogError(
            Code.UNKNOWN_EVENT_TYPE, f"event seq {event.seq} has unknown type {event.type!r} and is not ignorable"
        )
