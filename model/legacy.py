"""The v0-to-v1 edge: the only place that knows legacy forms.

A v0 log is either refused as a whole, with an explicit code, or converted by an enumerated list of
lossless normalisations into a log that validates as v1.  Refusal comes first, over the whole log,
so no v1 session ever exists for a refused log.  A v1 log passes through unchanged, which makes
the edge a fixed point: ``upgrade_v0(upgrade_v0(x)) == upgrade_v0(x)``.

The normalisations (each also listed in ``invariants.md`` under INV-LEGACY-5):

* N1 ``turn/start`` drops the retired ``trigger`` member.
* N2 legacy ``turn/end`` reasons: ``aborted`` without a cause gains ``{kind: "legacy"}``;
  ``disposed`` becomes ``aborted`` with cause ``{kind: "disposed"}``; ``error`` with ``failure`` or
  with ``message``/``code`` becomes ``error`` with ``error: {message, code}`` (code ``UNKNOWN`` when
  missing), dropping the retired ``step``.
* N3 ``steering/message`` becomes an appended ``user/message`` (wrapped ``{turn, message}`` or
  bare ``{turn, content, source}``, which gets a minted id).
* N4 pre-identity messages gain ids ``legacy-message:<sessionId>:<seq>``: bare user messages,
  assistant messages with ``content``/``provenance``, tool results with ``callId``/``content``/
  ``isError``; a rewriting ``tool/result`` takes the id of the message it replaces.
* N5 ``request/header`` snapshots lose ``messagePrefix`` (when it is an array).
* N6 ``request/header`` snapshots are canonicalised (empty ``system``/``tools`` and marker-free
  ``adapterDefaults`` dropped).
* N7 ``compact/*`` events are renamed ``compaction/*``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sessionlog_spec.model.event import KNOWN_EVENT_TYPES
from sessionlog_spec.model.header import LEGACY_REASON_FALLBACK, canonical_header
from sessionlog_spec.model.json_value import JsonObject, as_array, as_int, as_object, freeze, is_nonempty_string
from sessionlog_spec.model.jsonl import FORMAT_VERSION, LEGACY_VERSION, header_line_problem, version_of
from sessionlog_spec.model.session import fold_session
from sessionlog_spec.model.violation import Code, Violation

COMPACT_RENAMES = {
    "compact/start": "compaction/start",
    "compact/end": "compaction/end",
    "compact/summary": "compaction/summary",
    "compact/prune": "compaction/prune",
}
V0_INVENTORY = KNOWN_EVENT_TYPES | {"steering/message", *COMPACT_RENAMES}
"""Every type a released v0 writer wrote, less the refused ones."""
REFUSED_TYPES: dict[str, Code] = {
    "request/header-delta": Code.LEGACY_HEADER_DELTA,
    "mode/set": Code.LEGACY_MODE_SET,
}


@dataclass(frozen=True, slots=True)
class StoredLog:
    """A whole stored log: its header line and its events, as JSON objects."""

    header: JsonObject
    events: tuple[JsonObject, ...]


def refusal(raw_events: Sequence[object]) -> Violation | None:
    """INV-LEGACY-1..4: the first legacy form the edge refuses, naming its index."""
    for index, raw in enumerate(raw_events):
        event = as_object(freeze(raw)) if isinstance(raw, Mapping) else None
        if event is None:
            continue
        type_ = event.get("type")
        data = as_object(event.get("data"))
        if isinstance(type_, str) and type_ in REFUSED_TYPES:
            return Violation(REFUSED_TYPES[type_], f"v0 index {index}: legacy {type_} is not convertible")
        if type_ == "request/header" and data is not None and data.get("reason") == LEGACY_REASON_FALLBACK:
            return Violation(Code.LEGACY_FALLBACK_REASON, f'v0 index {index}: legacy request/header reason "fallback"')
        if isinstance(type_, str) and type_ not in V0_INVENTORY:
            return Violation(Code.LEGACY_UNKNOWN_TYPE, f"v0 index {index}: type {type_!r} is outside the v0 inventory")
    return None


def _legacy_id(session_id: str, seq: object) -> str:
    number = as_int(seq)  # 1.0 is seq 1: the id must not depend on how a writer spelled the number
    return f"legacy-message:{session_id}:{seq if number is None else number}"


def _normalise_turn_end_reason(reason: JsonObject) -> object:
    kind = reason.get("kind")
    if kind == "aborted" and "reason" not in reason:
        return {**reason, "reason": {"kind": "legacy"}}
    if kind == "disposed":
        return {"kind": "aborted", "reason": {"kind": "disposed"}}
    if kind == "error" and "error" not in reason:
        failure = as_object(reason.get("failure")) or reason
        message, code = failure.get("message"), failure.get("code", "UNKNOWN")
        if isinstance(message, str) and isinstance(code, str):
            return {"kind": "error", "error": {"message": message, "code": code}}
    return reason


def _normalise_data(type_: str, data: JsonObject, session_id: str, seq: object) -> object:
    """N1, N2, N4, N5, N6 on one payload; shapes that match no legacy form are left for v1 to judge."""
    if type_ == "turn/start" and "trigger" in data:
        return {k: v for k, v in data.items() if k != "trigger"}
    if type_ == "turn/end":
        reason = as_object(data.get("reason"))
        if reason is not None:
            return {**data, "reason": _normalise_turn_end_reason(reason)}
    if type_ == "user/message" and "id" not in data and "role" not in data and {"content", "source"} <= set(data):
        return {"id": _legacy_id(session_id, seq), "role": "user", **data}
    if type_ == "assistant/message" and "message" not in data and {"content", "provenance"} <= set(data):
        provenance = as_object(data["provenance"]) or {}
        message: dict[str, object] = {
            "id": _legacy_id(session_id, seq),
            "role": "assistant",
            "content": data["content"],
            "source": {**provenance, "kind": "model"},
        }
        rest = {k: v for k, v in data.items() if k not in ("content", "provenance")}
        return {**rest, "message": message}
    if type_ == "tool/result" and "message" not in data and {"callId", "content", "isError"} <= set(data):
        result_message = {
            "id": _legacy_id(session_id, seq),
            "role": "user",
            "source": {"kind": "tool", "callId": data["callId"]},
            "content": [
                {"type": "tool-result", "toolCallId": data["callId"], "content": data["content"], "isError": data["isError"]}
            ],
        }
        rest = {k: v for k, v in data.items() if k not in ("callId", "content", "isError")}
        return {**rest, "message": result_message}
    if type_ == "request/header":
        header = as_object(data.get("header"))
        if header is not None:
            if as_array(header.get("messagePrefix")) is not None:
                header = {k: v for k, v in header.items() if k != "messagePrefix"}
            frozen = as_object(freeze(header))
            assert frozen is not None
            return {**data, "header": canonical_header(frozen)}
    return data


def _normalise_steering(data: JsonObject, session_id: str, seq: object) -> object:
    """N3: the message a ``steering/message`` carried, as user/message data."""
    wrapped = as_object(data.get("message"))
    if wrapped is not None:
        return wrapped
    if {"content", "source"} <= set(data):
        return {"id": _legacy_id(session_id, seq), "role": "user", "content": data["content"], "source": data["source"]}
    return data


def normalise_event(raw: JsonObject, session_id: str, normalised: Sequence[JsonObject]) -> JsonObject:
    """INV-LEGACY-5: one v0 event with every applicable normalisation applied."""
    type_ = raw.get("type")
    data = as_object(raw.get("data"))
    if not isinstance(type_, str):
        return raw
    seq = raw.get("seq")
    out: dict[str, object] = dict(raw)
    # Renames do not depend on the payload: a legacy type never reaches v1, and a payload the
    # normalisations cannot read is left for v1 validation to refuse under its new type.
    if type_ in COMPACT_RENAMES:
        out["type"] = COMPACT_RENAMES[type_]
    elif type_ == "steering/message":
        out["type"] = "user/message"
        if data is not None:
            out["data"] = _normalise_steering(data, session_id, seq)
        out.setdefault("surfaceOp", "append")
    elif data is not None:
        out["data"] = _normalise_data(type_, data, session_id, seq)
        if type_ == "tool/result" and "message" not in data:
            out["data"] = _inherit_rewritten_id(raw, out["data"], normalised)
    frozen = as_object(freeze(out))
    assert frozen is not None
    return frozen


def _inherit_rewritten_id(raw: JsonObject, data: object, normalised: Sequence[JsonObject]) -> object:
    """N4: a rewriting tool/result keeps the id of the message at its replace start."""
    op = as_object(raw.get("surfaceOp"))
    start = op.get("start") if op is not None else None
    obj = data if isinstance(data, Mapping) else None
    if obj is None or not isinstance(start, int) or not 0 <= start < len(normalised):
        return data
    previous = as_object(normalised[start])
    target = as_object(previous.get("data")) if previous is not None else None
    target_message = as_object(target.get("message")) if target is not None else None
    message = as_object(obj.get("message"))
    if target_message is None or message is None or not is_nonempty_string(target_message.get("id")):
        return data
    return {**obj, "message": {**message, "id": target_message["id"]}}


def upgrade_v0(log: StoredLog) -> StoredLog | Violation:
    """INV-LEGACY-1..8: a v0 log converted to v1, a v1 log unchanged, or the refusal.

    The result always validates as v1 (INV-LEGACY-6); anything the normalisations leave invalid is
    refused with the v1 violation that finds it.
    """
    problem = header_line_problem(log.header)
    if problem is not None:
        return problem
    version = version_of(log.header)
    if version not in (LEGACY_VERSION, FORMAT_VERSION):
        return Violation(Code.FORMAT_VERSION_UNSUPPORTED, f"format version {version} is not supported")
    if version == FORMAT_VERSION:
        state = fold_session(log.events)
        return state.at("v1 log") if isinstance(state, Violation) else log
    refused = refusal(log.events)
    if refused is not None:
        return refused
    session_id = str(log.header["id"])
    events: list[JsonObject] = []
    for raw in (freeze(e) for e in log.events):
        events.append(normalise_event(raw, session_id, events) if isinstance(raw, Mapping) else raw)  # type: ignore[arg-type]
    state = fold_session(events, where="v0 index")
    if isinstance(state, Violation):
        return state
    header = as_object(freeze({**log.header, "version": FORMAT_VERSION}))
    assert header is not None
    return StoredLog(header, tuple(events))
