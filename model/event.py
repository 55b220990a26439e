"""The event envelope.

An event is ``{type, seq, time, data}`` plus three optional members: ``ignorable: true``, and on the
surface types ``surfaceOp`` and ``sourceEventSeqs``.  :func:`decode_event` is the one place raw JSON
becomes an :class:`Event`; everything downstream works on decoded, frozen events.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sessionlog_spec.model.json_value import JsonValue, freeze, is_safe_integer, is_safe_natural, lossless_problem, thaw
from sessionlog_spec.model.violation import Code, Violation

ENVELOPE_KEYS = frozenset({"type", "seq", "time", "data", "ignorable", "surfaceOp", "sourceEventSeqs"})
REQUIRED_ENVELOPE_KEYS = ("type", "seq", "time", "data")

SURFACE_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})
"""The only types whose events may join the surface (INV-SURF-1)."""

KNOWN_EVENT_TYPES = frozenset(
    {
        "agent-preset/selected",
        "agent/inbox/spliced",
        "approval/asked",
        "approval/decided",
        "approval/policy",
        "assistant/chunk",
        "assistant/message",
        "command/done",
        "command/run",
        "compaction/end",
        "compaction/prune",
        "compaction/start",
        "compaction/summary",
        "feedback/record",
        "goal/change",
        "hook/invoked",
        "hook/result",
        "llm/retry",
        "llm/retry-started",
        "permission/preset",
        "plan/mode",
        "request/context",
        "request/header",
        "sandbox/mode",
        "schedule/change",
        "session/end-seed",
        "session/title",
        "session/title-llm-request",
        "step/end",
        "step/start",
        "subagent/descriptor",
        "team/member",
        "team/message/delivered",
        "team/message/queued",
        "team/task",
        "todo/write",
        "tool-workflow/agent-end",
        "tool-workflow/agent-start",
        "tool-workflow/run-end",
        "tool-workflow/run-start",
        "tool/call",
        "tool/code-dispatch",
        "tool/code-dispatch-start",
        "tool/result",
        "turn/end",
        "turn/start",
        "user/message",
        "web/deepseek-search-llm-request",
        "model/selection",
        "session-log-deepseek/delivery-accepted",
        "subagent/model-selection-policy",
    }
)
"""The v1 event vocabulary: the 51 types of the frozen released-v0 inventory (v1 kept it unchanged)."""


@dataclass(frozen=True, slots=True)
class Append:
    """``surfaceOp: "append"``: the event joins the tail of the surface."""


@dataclass(frozen=True, slots=True)
class Replace:
    """``surfaceOp: {op: "replace", start, end}``: the event replaces the surface range start..end."""

    start: int
    end: int


SurfaceOp = Append | Replace

APPEND = Append()


@dataclass(frozen=True, slots=True)
class Event:
    """One decoded, frozen log event."""

    type: str
    seq: int
    time: int
    data: JsonValue
    ignorable: bool = False
    surface_op: SurfaceOp | None = None
    source_event_seqs: tuple[int, ...] | None = None


def decode_surface_op(raw: object) -> SurfaceOp | Violation:
    """Decode a raw ``surfaceOp`` member (INV-SURF-4)."""
    if raw == "append" and isinstance(raw, str):
        return APPEND
    if not isinstance(raw, Mapping) or raw.get("op") != "replace":
        return Violation(Code.SURFACE_OP_INVALID, f"invalid surfaceOp {raw!r}")
    start, end = raw.get("start"), raw.get("end")
    if set(raw) != {"op", "start", "end"} or not is_safe_natural(start) or not is_safe_natural(end):
        return Violation(Code.SURFACE_OP_INVALID, f"invalid replace surfaceOp {dict(raw)!r}")
    return Replace(int(start), int(end))  # type: ignore[arg-type]


def decode_sources(raw: object) -> tuple[int, ...] | Violation:
    """Decode a raw ``sourceEventSeqs`` member: an array of non-negative safe integers (INV-SURF-5)."""
    if not isinstance(raw, list | tuple) or not all(is_safe_natural(s) for s in raw):
        return Violation(Code.SOURCES_INVALID, "sourceEventSeqs must be an array of non-negative safe integers")
    return tuple(int(s) for s in raw)  # integral floats included: JSON has one number type


def decode_event(raw: object) -> Event | Violation:
    """Decode one raw event, checking the envelope (INV-LOG-1..4).

    The checks run in a fixed order so that every port reports the same first violation:
    object, unknown keys, missing keys, ``type``, ``seq``, ``time``, ``ignorable``, lossless
    ``data`` and metadata, then the shapes of ``surfaceOp`` and ``sourceEventSeqs``.
    """
    if not isinstance(raw, Mapping):
        return Violation(Code.ENVELOPE_NOT_OBJECT, "event is not a JSON object")
    extra = sorted(str(k) for k in raw if k not in ENVELOPE_KEYS)
    if extra:
        return Violation(Code.ENVELOPE_UNKNOWN_KEY, f"event has unknown envelope key(s) {extra}")
    missing = [k for k in REQUIRED_ENVELOPE_KEYS if k not in raw]
    if missing:
        return Violation(Code.ENVELOPE_MISSING_KEY, f"event lacks envelope key(s) {missing}")
    type_, seq, time = raw["type"], raw["seq"], raw["time"]
    if not isinstance(type_, str) or type_ == "":
        return Violation(Code.ENVELOPE_BAD_TYPE, "event type must be a non-empty string")
    if not is_safe_natural(seq):
        return Violation(Code.ENVELOPE_BAD_SEQ, f"event {type_!r} seq {seq!r} is not a non-negative safe integer")
    seq = int(seq)
    if not is_safe_integer(time):
        return Violation(Code.ENVELOPE_BAD_TIME, f"event seq {seq} time {time!r} is not a safe integer")
    time = int(time)
    if "ignorable" in raw and raw["ignorable"] is not True:
        return Violation(Code.ENVELOPE_BAD_IGNORABLE, f"event seq {seq} ignorable must be absent or true")
    for key in ("data", "surfaceOp", "sourceEventSeqs"):
        if key in raw and (problem := lossless_problem(raw[key])) is not None:
            return Violation(Code.JSON_NOT_LOSSLESS, f"event seq {seq} {key} is not lossless JSON: {problem}")
    surface_op: SurfaceOp | None = None
    if "surfaceOp" in raw:
        decoded = decode_surface_op(raw["surfaceOp"])
        if isinstance(decoded, Violation):
            return decoded.at(f"event seq {seq}")
        surface_op = decoded
    sources: tuple[int, ...] | None = None
    if "sourceEventSeqs" in raw:
        decoded_sources = decode_sources(raw["sourceEventSeqs"])
        if isinstance(decoded_sources, Violation):
            return decoded_sources.at(f"event seq {seq}")
        sources = decoded_sources
    return Event(
        type=type_,
        seq=seq,
        time=time,
        data=freeze(raw["data"]),
        ignorable="ignorable" in raw,
        surface_op=surface_op,
        source_event_seqs=sources,
    )


def encode_surface_op(op: SurfaceOp) -> object:
    """The JSON form of a surface op."""
    if isinstance(op, Replace):
        return {"op": "replace", "start": op.start, "end": op.end}
    return "append"


def encode_event(event: Event) -> dict[str, object]:
    """The JSON form of an event, members in envelope order."""
    out: dict[str, object] = {"type": event.type, "seq": event.seq, "time": event.time, "data": thaw(event.data)}
    if event.ignorable:
        out["ignorable"] = True
    if event.surface_op is not None:
        out["surfaceOp"] = encode_surface_op(event.surface_op)
    if event.source_event_seqs is not None:
        out["sourceEventSeqs"] = list(event.source_event_seqs)
    return out


def is_known_type(event_type: str) -> bool:
    """Whether ``event_type`` belongs to the v1 vocabulary."""
    return event_type in KNOWN_EVENT_TYPES
