"""The v0-to-v1 edge: the only code that knows legacy forms.

A v0 log is refused as a whole with an explicit code, or converted by an enumerated list of
normalisations into a log that validates as v1.  The edge reads the log one event at a time, in
order, the way the released edge reads it: the event must be an object at its own position; a
retired type or reason, a payload that is not an object and a type outside the v0 inventory are
refused; each legacy form must have exactly the members a v0 writer gave it; then the event is
normalised.  Only when every event has been read is the converted log replayed as v1, so no session
ever exists for a refused log.  A v1 log passes through unchanged, which makes the edge a fixed
point.

The replay admits one thing plain v1 refuses, as the released edge does: a v0 writer that resumed
with input queued for the next turn started that turn without ending the interrupted one, so a
``turn/start`` of the open turn + 1 (no step open) right after an ``agent/inbox/spliced`` with
target ``next-turn`` and a non-empty ``inserted`` leaves the open turn abandoned.  No ``turn/end``
is added for it; a v1 log read or appended to outside the edge is still refused for it.

Refusals: ``LEGACY_HEADER_DELTA``, ``LEGACY_MODE_SET``, ``LEGACY_FALLBACK_REASON``,
``LEGACY_UNKNOWN_TYPE`` (ignorable or not), ``ENVELOPE_NOT_OBJECT``, ``SEQ_NOT_CONTIGUOUS``, and
``LEGACY_SOURCE_INVALID`` for a malformed source: a payload that is not an object, a legacy form
with other members than its own, a rewriting pre-identity tool result whose replaced event has no
message id, a converted payload the released v0 payload table refuses (generation 0, see
:func:`seqlog.payloads.payload_problem`; chunks are left to v1), a delivery marker of this session's
generation that names another session.

The normalisations (nothing else changes; a ``steering/message`` keeps the envelope it had, and a
header snapshot its spelling):

* N1 ``turn/start`` with ``trigger`` (exactly ``{turn, trigger}``, turn at least 1, trigger an
  object with a non-empty string ``kind``) becomes ``{turn}``.
* N2 ``turn/end`` (exactly ``{turn, reason}``, turn at least 1, a reason object with a string
  kind): ``completed``/``blocked``/``max-tokens``/``interrupted`` and a cause-less ``aborted`` or
  a ``disposed`` must be exactly ``{kind}``; ``aborted`` gains cause ``legacy``; ``disposed``
  becomes ``aborted`` with cause ``disposed``; an ``error`` without ``error`` needs a
  non-negative integer ``step`` and is ``{kind, step, failure}`` (the failure record, message and
  code strings plus optional status, providerRetryAfterMs, requestId, becomes ``error`` whole) or
  ``{kind, step, message, code?}`` (``error: {message, code}``, code ``UNKNOWN`` when absent).
* N3 ``steering/message`` becomes ``user/message``: ``{turn, message}`` carries its message;
  ``{turn, content, source}`` gets a minted id and role ``user``.
* N4 pre-identity messages gain ids ``legacy-message:<sessionId>:<seq>``; a rewriting
  ``tool/result`` takes the id of the message it replaces.
* N5 ``request/header`` snapshots (objects) lose an array ``messagePrefix``.
* N6 withdrawn: snapshots are not canonicalised.
* N7 ``compact/*`` events are renamed ``compaction/*``.
* N8 an ``llm/retry`` without ``retryId`` takes its chain's id (turn, step, provider, policyKey),
  ``legacy-retry:<sessionId>:<seq>`` for a new chain.
* N9 a ``compaction/start`` without ``compactionId`` gets ``legacy-compaction:<sessionId>:<seq>``;
  the open group's id goes to its summary, end and compact checkpoint message when they have none;
  ``compaction/end`` and ``session/end-seed`` close the group.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from seqlog.errors import Code, SeqlogError
from seqlog.event import KNOWN_TYPES
from seqlog.header import LEGACY_REASON_FALLBACK
from seqlog.headerline import FORMAT_VERSION, LEGACY_VERSION, check_header_line
from seqlog.jsonvalue import FrozenObject, as_array, as_int, as_object, freeze, is_nonempty_string, is_safe_natural, thaw
from seqlog.payloads import payload_problem
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
BARE_REASONS = frozenset({"completed", "blocked", "max-tokens", "interrupted"})
FAILURE_KEYS = frozenset({"message", "code"})
FAILURE_EXTRAS = frozenset({"status", "providerRetryAfterMs", "requestId"})
DELIVERY_MARKER = "session-log-deepseek/delivery-accepted"
V0_PAYLOAD_GENERATION = 0
"""The payload generation a converted v0 payload is checked against (the released v0 table)."""
UNCHECKED_V0_PAYLOADS = frozenset({"assistant/chunk"})
"""Types whose converted payload the released edge leaves to v1 validation."""


@dataclass(frozen=True, slots=True)
class StoredLog:
    """A whole stored log: its header line and its events as JSON values."""

    header: Mapping[str, Any]
    events: tuple[object, ...]


def _malformed(seq: object, message: str) -> SeqlogError:
    return SeqlogError(Code.LEGACY_SOURCE_INVALID, f"v0 index {seq}: {message}")


def check_refusals(raw_events: Sequence[object]) -> None:
    """Refuse the first event the edge never converts, whatever its shape: a retired type or
    reason, a payload that is not an object, a type outside the v0 inventory (named by its seq)."""
    for raw in raw_events:
        if not isinstance(raw, Mapping):
            continue
        seq, type_ = raw.get("seq"), raw.get("type")
        if isinstance(type_, str) and type_ in REFUSED_TYPES:
            raise SeqlogError(REFUSED_TYPES[type_], f"v0 index {seq}: legacy {type_} is not convertible")
        data = as_object(raw.get("data"))
        if data is None:
            raise _malformed(seq, f"the {type_!r} payload is not an object")
        if type_ == "request/header" and data.get("reason") == LEGACY_REASON_FALLBACK:
            raise SeqlogError(Code.LEGACY_FALLBACK_REASON, f'v0 index {seq}: legacy request/header reason "fallback"')
        if not isinstance(type_, str) or type_ not in V0_INVENTORY:
            raise SeqlogError(Code.LEGACY_UNKNOWN_TYPE, f"v0 index {seq}: type {type_!r} is outside the v0 inventory")


def _legacy_id(session_id: str, seq: object) -> str:
    number = as_int(seq)  # 1.0 is seq 1: the minted id must not depend on the number's spelling
    return f"legacy-message:{session_id}:{seq if number is None else number}"


def _only(record: Mapping[str, Any], keys: set[str] | frozenset[str], what: str, seq: int) -> None:
    if set(record) != keys:
        raise _malformed(seq, f"{what} must have exactly {sorted(keys)}, not {sorted(record)}")


def _count(value: object, what: str, seq: int, least: int = 0) -> None:
    if not is_safe_natural(value) or value < least:  # type: ignore[operator]
        raise _malformed(seq, f"{what} must be an integer of at least {least}")


def _turn_start(data: Mapping[str, Any], seq: int) -> Mapping[str, Any]:
    if "trigger" not in data:
        return data
    _only(data, {"turn", "trigger"}, "a legacy turn/start", seq)
    _count(data["turn"], "turn/start turn", seq, least=1)
    trigger = as_object(data["trigger"])
    if trigger is None or not is_nonempty_string(trigger.get("kind")):
        raise _malformed(seq, "turn/start trigger must be an object with a non-empty kind")
    return {"turn": data["turn"]}


def _turn_end_reason(reason: Mapping[str, Any], seq: int) -> Mapping[str, Any]:
    kind = reason.get("kind")
    if not isinstance(kind, str):
        raise _malformed(seq, "turn/end reason kind must be a string")
    if kind in BARE_REASONS or kind == "disposed" or (kind == "aborted" and "reason" not in reason):
        _only(reason, {"kind"}, f"a {kind} turn/end reason", seq)
    if kind == "aborted" and "reason" not in reason:
        return {"kind": "aborted", "reason": {"kind": "legacy"}}
    if kind == "disposed":
        return {"kind": "aborted", "reason": {"kind": "disposed"}}
    if kind != "error" or "error" in reason:
        return reason
    _count(reason.get("step"), "turn/end error step", seq)
    if "failure" in reason:
        _only(reason, {"kind", "step", "failure"}, "a legacy error reason", seq)
        failure = as_object(reason["failure"])
        if failure is None or not FAILURE_KEYS <= set(failure) <= FAILURE_KEYS | FAILURE_EXTRAS:
            raise _malformed(seq, "a legacy failure holds message and code, optionally status, providerRetryAfterMs, requestId")
        if not (isinstance(failure["message"], str) and isinstance(failure["code"], str)):
            raise _malformed(seq, "a legacy failure's message and code must be strings")
        return {"kind": "error", "error": failure}
    if not {"kind", "step", "message"} <= set(reason) <= {"kind", "step", "message", "code"}:
        raise _malformed(seq, "a legacy error reason is {kind, step, message, code?}")
    code = reason.get("code", "UNKNOWN")
    if not (isinstance(reason["message"], str) and isinstance(code, str)):
        raise _malformed(seq, "a legacy error's message and code must be strings")
    return {"kind": "error", "error": {"message": reason["message"], "code": code}}


def _turn_end(data: Mapping[str, Any], seq: int) -> Mapping[str, Any]:
    _only(data, {"turn", "reason"}, "turn/end data", seq)
    _count(data["turn"], "turn/end turn", seq, least=1)
    reason = as_object(data["reason"])
    if reason is None:
        raise _malformed(seq, "turn/end reason must be an object")
    converted = _turn_end_reason(reason, seq)
    return data if converted is reason else {**data, "reason": converted}


def _request_header(data: Mapping[str, Any], seq: int) -> Mapping[str, Any]:
    header = as_object(data.get("header"))
    if header is None:
        raise _malformed(seq, "request/header header must be an object")
    if "messagePrefix" not in header:
        return data
    if as_array(header["messagePrefix"]) is None:
        raise _malformed(seq, "a legacy messagePrefix must be an array")
    return {**data, "header": {k: v for k, v in header.items() if k != "messagePrefix"}}


def _normalise_data(type_: str, data: Mapping[str, Any], session_id: str, seq: object) -> object:
    """N1, N2, N4 and N5 on one payload (``seq`` is the event's position); refuses a malformed legacy form."""
    index = as_int(seq)
    assert index is not None
    keys = data.keys()
    if type_ == "turn/start":
        return _turn_start(data, index)
    if type_ == "turn/end":
        return _turn_end(data, index)
    if type_ == "request/header":
        return _request_header(data, index)
    if type_ == "user/message" and not {"id", "role", "message"} & keys and {"content", "source"} <= keys:
        return {**data, "id": _legacy_id(session_id, seq), "role": "user"}
    if type_ == "assistant/message" and "message" not in data and {"content", "provenance"} <= keys:
        provenance = as_object(data["provenance"])
        if provenance is None:
            raise _malformed(index, "assistant/message provenance must be an object")
        message = {
            "id": _legacy_id(session_id, seq),
            "role": "assistant",
            "content": data["content"],
            "source": {**provenance, "kind": "model"},
        }
        rest = {k: v for k, v in data.items() if k not in ("content", "provenance")}
        return {**rest, "message": message}
    if type_ == "tool/result" and "message" not in data and {"callId", "content", "isError"} <= keys:
        call_id, is_error = data["callId"], data["isError"]
        if not isinstance(call_id, str) or not isinstance(is_error, bool):
            return data
        block = {"type": "tool-result", "toolCallId": call_id, "content": data["content"], "isError": is_error}
        source = {"kind": "tool", "callId": call_id}
        message = {"id": _legacy_id(session_id, seq), "role": "user", "source": source, "content": [block]}
        rest = {k: v for k, v in data.items() if k not in ("callId", "content", "isError")}
        return {**rest, "message": message}
    return data


def _steering_data(data: Mapping[str, Any], session_id: str, seq: int) -> Mapping[str, Any]:
    """N3: the ``user/message`` data a ``steering/message`` carried."""
    wrapped = "message" in data
    _only(data, {"turn", "message"} if wrapped else {"turn", "content", "source"}, "a steering/message", seq)
    _count(data["turn"], "steering/message turn", seq)
    if not wrapped:
        return {"content": data["content"], "source": data["source"], "id": _legacy_id(session_id, seq), "role": "user"}
    message = as_object(data["message"])
    if message is None:
        raise _malformed(seq, "a steering/message message must be an object")
    return message


def _chain_key(data: Mapping[str, Any]) -> str:
    """The name of an ``llm/retry`` chain, the same for JSON-equal members (``1`` and ``1.0``)."""
    parts = []
    for key in ("turn", "step", "provider", "policyKey"):
        value = data.get(key)
        number = as_int(value)
        parts.append("-" if key not in data else str(number) if number is not None else json.dumps(thaw(value)))
    return "\n".join(parts)


@dataclass(slots=True)
class _Edge:
    """What the edge remembers from one v0 event to the next."""

    header: Mapping[str, Any]
    session_id: str
    message_ids: dict[int, str] = field(default_factory=dict)
    retry_ids: dict[str, str] = field(default_factory=dict)
    group: str | None = None

    def convert(self, raw: object, index: int) -> object:
        if not isinstance(raw, Mapping):
            raise SeqlogError(Code.ENVELOPE_NOT_OBJECT, f"v0 index {index}: the event is not an object")
        seq = raw.get("seq")
        if isinstance(seq, bool) or not isinstance(seq, int | float) or seq != index:
            raise SeqlogError(Code.SEQ_NOT_CONTIGUOUS, f"v0 index {index}: seq {seq!r} is not the event's position")
        check_refusals((raw,))
        type_ = str(raw["type"])
        type_ = COMPACT_RENAMES.get(type_, type_)
        data: Mapping[str, Any] = raw["data"]
        if type_ == "steering/message":
            type_, data = "user/message", _steering_data(data, self.session_id, index)
        if type_ == "llm/retry":
            data = self._retry(data, index)
        data = self._compaction(type_, data, index)
        converted = _normalise_data(type_, data, self.session_id, index)
        if type_ == "tool/result" and "message" not in data:
            converted = self._rewritten_id(raw, converted, index)
        self._check_payload(type_, converted, index)
        self._remember(type_, converted, index)
        self._check_marker(type_, converted, index)
        return _freeze_loose({**raw, "type": type_, "data": converted})

    def _retry(self, data: Mapping[str, Any], seq: int) -> Mapping[str, Any]:
        chain = _chain_key(data)
        given = data.get("retryId")
        if is_nonempty_string(given):
            self.retry_ids[chain] = str(given)
        if "retryId" in data:
            return data
        retry_id = self.retry_ids.setdefault(chain, f"legacy-retry:{self.session_id}:{seq}")
        return {**data, "retryId": retry_id}

    def _compaction(self, type_: str, data: Mapping[str, Any], seq: int) -> Mapping[str, Any]:
        if type_ == "session/end-seed":
            self.group = None
        elif type_ == "compaction/start":
            if "compactionId" not in data:
                self.group = f"legacy-compaction:{self.session_id}:{seq}"
                return {**data, "compactionId": self.group}
            if is_nonempty_string(data["compactionId"]):
                self.group = data["compactionId"]
        elif self.group is not None and type_ in ("compaction/summary", "compaction/end"):
            group = self.group
            if type_ == "compaction/end":
                self.group = None
            if "compactionId" not in data:
                return {**data, "compactionId": group}
        elif self.group is not None and type_ == "user/message":
            source = as_object(data.get("source")) or {}
            if source.get("kind") == "plugin" and source.get("plugin") == "compact" and "compactionId" not in source:
                return {**data, "source": {**source, "compactionId": self.group}}
        return data

    def _rewritten_id(self, raw: Mapping[str, Any], data: object, seq: int) -> object:
        """N4: a rewriting pre-identity ``tool/result`` keeps the id of the message it replaces."""
        op = as_object(raw.get("surfaceOp"))
        obj = as_object(data)
        message = as_object(obj.get("message")) if obj is not None else None
        if obj is None or message is None or op is None or op.get("op") != "replace" or "start" not in op:
            return data
        start = op["start"]
        target = None
        if not isinstance(start, bool) and isinstance(start, int | float) and float(start).is_integer():
            target = self.message_ids.get(int(start))
        if target is None:
            raise _malformed(seq, f"the rewritten event {start!r} carries no message id")
        return {**obj, "message": {**message, "id": target}}

    def _check_payload(self, type_: str, data: object, seq: int) -> None:
        """The released v0 payload table's check of the converted payload (payload generation 0:
        a type's published v0 schema where it differs, else its current one); chunks are left to v1."""
        if type_ in UNCHECKED_V0_PAYLOADS or type_ not in KNOWN_TYPES:
            return
        problem = payload_problem(type_, data, seq, V0_PAYLOAD_GENERATION)
        if problem is not None:
            raise _malformed(seq, f"{type_} payload: {problem}")

    def _remember(self, type_: str, data: object, seq: int) -> None:
        obj = as_object(data)
        carrier = obj if type_ == "user/message" else as_object(obj.get("message")) if obj is not None else None
        if carrier is not None and isinstance(carrier.get("id"), str):
            self.message_ids[seq] = carrier["id"]

    def _check_marker(self, type_: str, data: object, seq: int) -> None:
        """A delivery marker this session wrote (not one inherited from its parent's seed) names it."""
        obj = as_object(data)
        if type_ != DELIVERY_MARKER or obj is None:
            return
        accepted = obj.get("sessionFormatVersion")
        own_format = accepted is None or (not isinstance(accepted, bool) and isinstance(accepted, int | float) and accepted == 0)
        inherited = "parentSession" in self.header and seq < (as_int(self.header.get("seedLength")) or 0)
        if own_format and not inherited and obj.get("sessionId") != self.session_id:
            raise _malformed(seq, f"the delivery marker names session {obj.get('sessionId')!r}, not this one")


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

    The result always validates as v1, with the one extension the released edge applies to its
    output: a turn restarted after a next-turn inbox splice without its ``turn/end`` is admitted as
    it stands (:func:`seqlog.trace.abandon_for_restart`).  Anything the normalisations leave
    invalid is refused with the v1 violation that finds it.
    """
    return upgrade_with_session(log)[0]


def upgrade_with_session(log: StoredLog) -> tuple[StoredLog, Session]:
    """:func:`upgrade_v0` plus the session the upgraded log validated as (no closers, no marker)."""
    version = check_header_and_version(log.header)
    if version == FORMAT_VERSION:
        try:
            # Read as the edge reads its own output, so that the edge stays a fixed point.
            return log, Session.restore(log.events, legacy_restart=True)
        except SeqlogError as error:
            raise error.at("v1 log") from None
    edge = _Edge(log.header, str(log.header["id"]))
    events = [edge.convert(raw, index) for index, raw in enumerate(log.events)]
    header = freeze({**log.header, "version": FORMAT_VERSION})
    assert isinstance(header, FrozenObject)
    session = Session.restore(events, where="v0 index", header=header, legacy_restart=True)
    return StoredLog(header, tuple(events)), session
