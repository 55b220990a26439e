"""The v0-to-v1 edge: the only code that knows legacy forms.

A v0 log is refused as a whole with an explicit code, or converted by an enumerated list of
lossless normalisations into a log that validates as v1.  Refusal comes first and covers the whole
log, so no session ever exists for a refused log.  A v1 log passes through unchanged, which makes
the edge a fixed point.

The normalisations:

* N1 ``turn/start`` drops the retired ``trigger`` member.
* N2 legacy ``turn/end`` reasons: ``aborted`` without a cause gains ``{kind: "legacy"}``;
  ``disposed`` becomes ``aborted`` with cause ``{kind: "disposed"}``; ``error`` carrying
  ``failure`` or ``message``/``code`` becomes ``error`` with ``error: {message, code}`` (code
  ``UNKNOWN`` when missing).
* N3 ``steering/message`` becomes an appended ``user/message``.
* N4 pre-identity messages gain ids ``legacy-message:<sessionId>:<seq>``; a rewriting
  ``tool/result`` takes the id of the message it replaces.
* N5 ``request/header`` snapshots lose an array ``messagePrefix``.
* N6 ``request/header`` snapshots are canonicalised.
* N7 ``compact/*`` events are renamed ``compaction/*``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from seqlog.errors import Code, SeqlogError
from seqlog.event import KNOWN_TYPES
from seqlog.header import LEGACY_REASON_FALLBACK, dropped_in_canonical
from seqlog.headerline import FORMAT_VERSION, LEGACY_VERSION, check_header_line
from seqlog.jsonvalue import FrozenObject, as_array, as_int, as_object, freeze, is_nonempty_string
from seqlog.session import Session

COMPACT_RENAMES = {
    "compact/start": "compaction/start",
    "compact/end": "compaction/end",
    "compact/summary": "compaction/summary",
    "compact/prune": "compaction/prune",
}
V0_INVENTORY = KNOWN_TYPES | {"steering/message", *COMPACT_RENAMES}
"""Every type a released v0 writer wrote, less the refused ones."""
REFUSED_TYPES: dict[str, Code] = {
    "request/header-delta": Code.LEGACY_HEADER_DELTA,
    "mode/set": Code.LEGACY_MODE_SET,
}


@dataclass(frozen=True, slots=True)
class StoredLog:
    """A whole stored log: its header line and its events as JSON values."""

    header: Mapping[str, Any]
    events: tuple[object, ...]


def check_refusals(raw_events: Sequence[object]) -> None:
    """Refuse the first legacy form the edge cannot convert, naming its index."""
    for index, raw in enumerate(raw_events):
        if not isinstance(raw, Mapping):
            continue
        type_ = raw.get("type")
        if not isinstance(type_, str):
            continue
        if type_ in REFUSED_TYPES:
            raise SeqlogError(REFUSED_TYPES[type_], f"v0 index {index}: legacy {type_} is not convertible")
        data = as_object(raw.get("data"))
        if type_ == "request/header" and data is not None and data.get("reason") == LEGACY_REASON_FALLBACK:
            raise SeqlogError(Code.LEGACY_FALLBACK_REASON, f'v0 index {index}: legacy request/header reason "fallback"')
        if type_ not in V0_INVENTORY:
            raise SeqlogError(Code.LEGACY_UNKNOWN_TYPE, f"v0 index {index}: type {type_!r} is outside the v0 inventory")


def _legacy_id(session_id: str, seq: object) -> str:
    number = as_int(seq)  # 1.0 is seq 1: the minted id must not depend on the number's spelling
    return f"legacy-message:{session_id}:{seq if number is None else number}"


def _turn_end_reason(reason: Mapping[str, Any]) -> object:
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


def _normalise_data(type_: str, data: Mapping[str, Any], session_id: str, seq: object) -> object:
    """N1, N2, N4, N5, N6 on one payload; shapes matching no legacy form are left for v1 to judge."""
    keys = data.keys()
    if type_ == "turn/start" and "trigger" in data:
        return {k: v for k, v in data.items() if k != "trigger"}
    if type_ == "turn/end":
        reason = as_object(data.get("reason"))
        if reason is not None:
            return {**data, "reason": _turn_end_reason(reason)}
    if type_ == "user/message" and "id" not in data and "role" not in data and {"content", "source"} <= keys:
        return {"id": _legacy_id(session_id, seq), "role": "user", **data}
    if type_ == "assistant/message" and "message" not in data and {"content", "provenance"} <= keys:
        provenance = as_object(data["provenance"]) or {}
        message = {
            "id": _legacy_id(session_id, seq),
            "role": "assistant",
            "content": data["content"],
            "source": {**provenance, "kind": "model"},
        }
        rest = {k: v for k, v in data.items() if k not in ("content", "provenance")}
        return {**rest, "message": message}
    if type_ == "tool/result" and "message" not in data and {"callId", "content", "isError"} <= keys:
        block = {"type": "tool-result", "toolCallId": data["callId"], "content": data["content"], "isError": data["isError"]}
        message = {
            "id": _legacy_id(session_id, seq),
            "role": "user",
            "source": {"kind": "tool", "callId": data["callId"]},
            "content": [block],
        }
        rest = {k: v for k, v in data.items() if k not in ("callId", "content", "isError")}
        return {**rest, "message": message}
    if type_ == "request/header":
        header = as_object(data.get("header"))
        if header is not None:
            if as_array(header.get("messagePrefix")) is not None:
                header = {k: v for k, v in header.items() if k != "messagePrefix"}
            canonical = {k: v for k, v in header.items() if not dropped_in_canonical(k, v)}
            return {**data, "header": canonical}
    return data


def _steering_data(data: Mapping[str, Any], session_id: str, seq: object) -> object:
    """N3: the message a ``steering/message`` carried, as ``user/message`` data."""
    wrapped = as_object(data.get("message"))
    if wrapped is not None:
        return wrapped
    if {"content", "source"} <= data.keys():
        return {"id": _legacy_id(session_id, seq), "role": "user", "content": data["content"], "source": data["source"]}
    return data


def _inherit_rewritten_id(raw: Mapping[str, Any], data: object, normalised: Sequence[object]) -> object:
    """N4: a rewriting ``tool/result`` keeps the id of the message at its replace start."""
    op = as_object(raw.get("surfaceOp"))
    start = op.get("start") if op is not None else None
    obj = as_object(data)
    if obj is None or not isinstance(start, int) or not 0 <= start < len(normalised):
        return data
    target_event = as_object(normalised[start])
    target = as_object(target_event.get("data")) if target_event is not None else None
    target_message = as_object(target.get("message")) if target is not None else None
    message = as_object(obj.get("message"))
    if target_message is None or message is None or not is_nonempty_string(target_message.get("id")):
        return data
    return {**obj, "message": {**message, "id": target_message["id"]}}


def normalise_event(raw: Mapping[str, Any], session_id: str, normalised: Sequence[object]) -> object:
    """One v0 event with every applicable normalisation applied."""
    type_ = raw.get("type")
    if not isinstance(type_, str):
        return raw
    data = as_object(raw.get("data"))
    seq = raw.get("seq")
    out: dict[str, Any] = dict(raw)
    # Renames do not depend on the payload: a legacy type never reaches v1, and a payload the
    # normalisations cannot read is left for v1 validation to refuse under its new type.
    if type_ in COMPACT_RENAMES:
        out["type"] = COMPACT_RENAMES[type_]
    elif type_ == "steering/message":
        out["type"] = "user/message"
        if data is not None:
            out["data"] = _steering_data(data, session_id, seq)
        out.setdefault("surfaceOp", "append")
    elif data is not None:
        out["data"] = _normalise_data(type_, data, session_id, seq)
        if type_ == "tool/result" and "message" not in data:
            out["data"] = _inherit_rewritten_id(raw, out["data"], normalised)
    return _freeze_loose(out)


def _freeze_loose(value: Mapping[str, Any]) -> object:
    """A frozen copy when the value is lossless; otherwise the value itself, for v1 to refuse by name."""
    try:
        return freeze(value)
    except ValueError:
        return value


def check_header_and_version(header: Mapping[str, Any]) -> int:
    """The format version of a valid header line; refuses a header line that is not valid."""
    check_header_line(header)
    version = header["version"]
    if version not in (LEGACY_VERSION, FORMAT_VERSION):
        raise SeqlogError(Code.FORMAT_VERSION_UNSUPPORTED, f"format version {version} is not supported")
    return int(version)


def upgrade_v0(log: StoredLog) -> StoredLog:
    """A v0 log converted to v1, a v1 log unchanged, or a :class:`SeqlogError` refusing it.

    The result always validates as v1; anything the normalisations leave invalid is refused with
    the v1 violation that finds it.
    """
    return upgrade_with_session(log)[0]


def upgrade_with_session(log: StoredLog) -> tuple[StoredLog, Session]:
    """:func:`upgrade_v0` plus the session the upgraded log validated as (no closers, no marker)."""
    version = check_header_and_version(log.header)
    if version == FORMAT_VERSION:
        try:
            return log, Session.restore(log.events)
        except SeqlogError as error:
            raise error.at("v1 log") from None
    check_refusals(log.events)
    session_id = str(log.header["id"])
    events: list[object] = []
    for raw in log.events:
        events.append(normalise_event(raw, session_id, events) if isinstance(raw, Mapping) else raw)
    header = freeze({**log.header, "version": FORMAT_VERSION})
    assert isinstance(header, FrozenObject)
    session = Session.restore(events, where="v0 index", header=header)
    return StoredLog(header, tuple(events)), session
