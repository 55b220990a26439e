"""The v0-to-v1 edge: the only place that knows legacy forms.

A v0 log is either refused as a whole, with an explicit code, or converted by an enumerated list
of normalisations into a log that validates as v1.  The edge reads a v0 log the way the released
edge does, one event at a time and in order: the event is checked as a v0 *source* (an object at
its own position, a type the edge converts, and each legacy form with exactly the members it had),
normalised, and checked against the released v0 payload table; only then is the whole converted
log validated as v1.  So no v1 session ever exists for a refused log, and the first refusal is the
first problem in reading order (a source problem of an event before the retired form of a later
one; every source problem before any v1 problem).  A v1 log passes through unchanged, which makes
the edge a fixed point: ``upgrade_v0(upgrade_v0(x)) == upgrade_v0(x)``.

The converted log is validated by the v1 rules with one extension, the released edge's
``legacyInterruptedTurnRestart`` (INV-LEGACY-6): a released v0 writer that resumed with input
queued for the next turn opened that turn without closing the interrupted one, so a ``turn/start``
of the open turn + 1, with no step open, right after an ``agent/inbox/spliced`` with ``target:
"next-turn"`` and a non-empty ``inserted``, abandons the open turn.  Nothing is written for it (no
closer is inserted), so the converted log holds a turn that never ends; a v1 log read or appended
to outside the edge is refused for the same events.

What the edge refuses, and with which code:

* ``request/header-delta``, ``mode/set``, a ``request/header`` with reason ``fallback``: their own
  ``LEGACY_*`` codes; a type outside the frozen v0 inventory, ignorable or not:
  ``LEGACY_UNKNOWN_TYPE``.
* An event that is not an object: ``ENVELOPE_NOT_OBJECT``; an event whose ``seq`` is not its
  position: ``SEQ_NOT_CONTIGUOUS``.
* A malformed v0 source, ``LEGACY_SOURCE_INVALID``: ``data`` that is not an object; a legacy form
  whose members are not exactly the ones that form had (the rules of N1–N5 below); a payload
  outside the released v0 payload table, members only v1 has included; a rewriting pre-identity
  ``tool/result`` whose replaced event has no message id; a delivery marker of this session's own
  generation that names another session.
* A form that matches a normalisation only in part: N1, N2, N3 and N5 name the exact members of
  each form they convert, so a form with a member more or less is ``LEGACY_SOURCE_INVALID``; an N4
  form that lacks one of its members, or has one of the v1 members beside them, is not converted,
  is left as it is and is judged by the released v0 payload table, which has no place for a legacy
  member: ``LEGACY_SOURCE_INVALID`` too (and an ``assistant/message`` ``provenance`` that is not an
  object is refused at once).
* The payload of a type in ``LEFT_TO_V1`` (``assistant/chunk``) is not checked against the v0
  table: as in the released edge, the v1 validation of the converted log judges it, with v1 codes.

The normalisations (each also listed in ``invariants.md`` under INV-LEGACY-5).  Nothing else
changes: not the envelope (a ``steering/message`` keeps the ``surfaceOp`` it had, or has none and
v1 refuses it), not a header snapshot's spelling, not any other member.

* N1 ``turn/start`` with ``trigger``: the data must be exactly ``{turn, trigger}``, ``turn`` at
  least 1 and ``trigger`` an object with a non-empty string ``kind``; it becomes ``{turn}``.
* N2 ``turn/end``: the data must be exactly ``{turn, reason}`` with ``turn`` at least 1 and a
  ``reason`` object whose ``kind`` is a string.  ``completed``, ``blocked``, ``max-tokens`` and
  ``interrupted`` must be exactly ``{kind}``.  ``aborted`` without a cause (exactly ``{kind}``)
  gains ``reason: {kind: "legacy"}``; ``disposed`` (exactly ``{kind}``) becomes ``aborted`` with
  cause ``{kind: "disposed"}``.  ``error`` without ``error`` needs a non-negative integer ``step``
  and is either ``{kind, step, failure}``, whose failure record (``message`` and ``code`` strings,
  optionally ``status``, ``providerRetryAfterMs``, ``requestId``, nothing else) becomes ``error``
  whole, or ``{kind, step, message, code?}``, which becomes ``error: {message, code}`` (code
  ``UNKNOWN`` when absent); ``step`` is dropped.  Other kinds, and reasons already in v1 form,
  are kept.
* N3 ``steering/message`` becomes ``user/message``: ``{turn, message}`` (exactly) carries its
  message as the data; ``{turn, content, source}`` (exactly) becomes ``{content, source}`` with a
  minted id and role ``user``; ``turn`` is a non-negative integer and is dropped.
* N4 pre-identity messages gain ids ``legacy-message:<sessionId>:<seq>``: a ``user/message`` with
  ``content`` and ``source`` and none of ``id``, ``role``, ``message`` gains ``id`` and ``role``;
  an ``assistant/message`` with ``content`` and ``provenance`` (an object) and no ``message``
  gets ``message: {id, role, content, source: {...provenance, kind: "model"}}``; a
  ``tool/result`` with a string ``callId``, ``content``, a boolean ``isError`` and no
  ``message`` gets the one-block tool message, whose id a rewriting result (``surfaceOp`` a
  ``replace``) takes from the message of the event at its replace start.
* N5 ``request/header``: the snapshot must be an object; a ``messagePrefix`` in it must be an
  array and is dropped.
* N6 (withdrawn: header snapshots are not canonicalised; the released edge keeps them as written.)
* N7 ``compact/*`` events are renamed ``compaction/*``.
* N8 an ``llm/retry`` without ``retryId`` gets the id of its chain (same ``turn``, ``step``,
  ``provider`` and ``policyKey``): the last id that chain was given, else
  ``legacy-retry:<sessionId>:<seq>``.
* N9 a ``compaction/start`` without ``compactionId`` gets ``legacy-compaction:<sessionId>:<seq>``;
  while a group is open, its id (given or minted) goes to each ``compaction/summary`` and
  ``compaction/end`` without one and to the checkpoint ``user/message`` whose source is
  ``{kind: "plugin", plugin: "compact"}`` without one; ``compaction/end`` and
  ``session/end-seed`` close the group.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sessionlog_spec.model.event import KNOWN_EVENT_TYPES
from sessionlog_spec.model.header import LEGACY_REASON_FALLBACK
from sessionlog_spec.model.json_value import (
    JsonObject,
    JsonValue,
    as_array,
    as_int,
    as_object,
    freeze,
    is_nonempty_string,
    is_safe_natural,
    thaw,
)
from sessionlog_spec.model.jsonl import FORMAT_VERSION, LEGACY_VERSION, header_line_problem, version_of
from sessionlog_spec.model.payloads import payload_problem
from sessionlog_spec.model.session import Fold, fold_session
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
PLAIN_END_KINDS = frozenset({"completed", "blocked", "max-tokens", "interrupted"})
"""``turn/end`` reason kinds that carry nothing but their kind, in v0 as in v1."""
FAILURE_REQUIRED = ("message", "code")
FAILURE_OPTIONAL = ("status", "providerRetryAfterMs", "requestId")
"""The members of a legacy failure record, which N2 keeps whole."""
RETRY_CHAIN = ("turn", "step", "provider", "policyKey")
"""The ``llm/retry`` members that name its chain (N8)."""
DELIVERY_MARKER = "session-log-deepseek/delivery-accepted"
LEFT_TO_V1 = frozenset({"assistant/chunk"})
"""Types whose converted payload the edge does not check against the v0 payload table: as the
released edge, it leaves them to the v1 validation of the converted log."""


@dataclass(frozen=True, slots=True)
class StoredLog:
    """A whole stored log: its header line and its events, as JSON objects."""

    header: JsonObject
    events: tuple[JsonObject, ...]


def _retired_form(event: JsonObject, index: int) -> Violation | None:
    """INV-LEGACY-1..3: the refusal of a retired type (whatever its payload) or of the ``fallback`` reason."""
    type_ = event.get("type")
    if isinstance(type_, str) and type_ in REFUSED_TYPES:
        return Violation(REFUSED_TYPES[type_], f"v0 index {index}: legacy {type_} is not convertible")
    data = as_object(event.get("data"))
    if type_ == "request/header" and data is not None and data.get("reason") == LEGACY_REASON_FALLBACK:
        return Violation(Code.LEGACY_FALLBACK_REASON, f'v0 index {index}: legacy request/header reason "fallback"')
    return None


def _unknown_type(type_: object, index: int) -> Violation:
    return Violation(Code.LEGACY_UNKNOWN_TYPE, f"v0 index {index}: type {type_!r} is outside the v0 inventory")


def refusal(raw_events: Sequence[object]) -> Violation | None:
    """INV-LEGACY-1..4: the first retired or unknown form among ``raw_events``, naming its index.

    This looks at types (and the ``fallback`` reason) only; :func:`upgrade_v0` also checks each
    event's source shape, in reading order.  ``check-log`` asks it of each event on its own.
    """
    for index, raw in enumerate(raw_events):
        event = as_object(freeze(raw)) if isinstance(raw, Mapping) else None
        if event is None:
            continue
        refused = _retired_form(event, index)
        if refused is not None:
            return refused
        type_ = event.get("type")
        if isinstance(type_, str) and type_ not in V0_INVENTORY:
            return _unknown_type(type_, index)
    return None


def _exact(record: JsonObject, required: Sequence[str], optional: Sequence[str] = ()) -> str | None:
    """Why ``record`` does not have exactly the ``required`` members and some of the ``optional``."""
    unexpected = [key for key in record if key not in required and key not in optional]
    if unexpected:
        return f"has unexpected member {unexpected[0]!r}"
    missing = [key for key in required if key not in record]
    if missing:
        return f"lacks member {missing[0]!r}"
    return None


def _chain_part(value: JsonValue) -> str:
    """One member of a retry chain's name, spelled so that JSON-equal values name the same chain."""
    number = as_int(value)
    return str(number) if number is not None else json.dumps(value, default=thaw, ensure_ascii=False, separators=(",", ":"))


class _Malformed(Exception):
    """A malformed v0 source, raised inside one event's conversion and turned into its refusal."""


@dataclass(slots=True)
class _Conversion:
    """One run of the edge over one v0 log: what it remembers from event to event."""

    header: JsonObject
    session_id: str
    message_ids: dict[int, str] = field(default_factory=dict)
    """The message id of each event that carries a message, by seq (N4 rewrites look them up)."""
    retry_ids: dict[tuple[str, ...], str] = field(default_factory=dict)
    """The id each retry chain was last given (N8)."""
    compaction_id: str | None = None
    """The id of the open compaction group (N9)."""

    def minted(self, prefix: str, seq: int) -> str:
        return f"{prefix}:{self.session_id}:{seq}"

    def event(self, raw: object, index: int) -> JsonObject | Violation:
        """INV-LEGACY-1..5, INV-LEGACY-9: the v0 event at ``index`` checked as a source and normalised, or its refusal.

        The checks run in the released edge's order: the envelope (an object at its own seq), the
        retired forms, the payload an object, the inventory, each legacy form's members while it is
        normalised, the v0 payload table, the delivery marker.  (The released edge looks the type up
        after normalising; no normalisation applies to a type outside the inventory, so the answer
        is the same.)
        """
        event = as_object(freeze(raw)) if isinstance(raw, Mapping) else None
        if event is None:
            return Violation(Code.ENVELOPE_NOT_OBJECT, f"v0 index {index}: event is not an object")
        seq = event.get("seq")
        if type(seq) not in (int, float) or seq != index:
            return Violation(Code.SEQ_NOT_CONTIGUOUS, f"v0 index {index}: seq {thaw(seq)!r} is not the event's position")
        type_ = event.get("type")
        if isinstance(type_, str):
            type_ = COMPACT_RENAMES.get(type_, type_)  # N7: the rename does not depend on the payload
        refused = _retired_form(event, index)
        if refused is not None:
            return refused
        data = as_object(event.get("data"))
        if data is None:
            return Violation(Code.LEGACY_SOURCE_INVALID, f"v0 index {index}: {type_} data is not an object")
        if not isinstance(type_, str) or type_ not in V0_INVENTORY:
            return _unknown_type(type_, index)
        try:
            type_, converted = self.normalise(type_, data, event, index)
        except _Malformed as malformed:
            return Violation(Code.LEGACY_SOURCE_INVALID, f"v0 index {index}: {malformed}")
        if type_ not in LEFT_TO_V1:
            problem = payload_problem(type_, converted, index, LEGACY_VERSION)
            if problem is not None:
                return Violation(Code.LEGACY_SOURCE_INVALID, f"v0 index {index}: {type_} payload: {problem}")
        self.remember_message(type_, converted, index)
        marker = self.delivery_marker_problem(type_, converted, index)
        if marker is not None:
            return Violation(Code.LEGACY_SOURCE_INVALID, f"v0 index {index}: {marker}")
        out = as_object(freeze({**event, "type": type_, "data": converted}))
        assert out is not None
        return out

    def normalise(self, type_: str, data: JsonObject, event: JsonObject, seq: int) -> tuple[str, JsonObject]:
        """INV-LEGACY-5: N1–N5, N8 and N9 on one payload, in the released edge's order."""
        if type_ == "turn/start":
            data = _turn_start(data)
        elif type_ == "turn/end":
            data = _turn_end(data)
        elif type_ == "request/header":
            data = _request_header(data)
        elif type_ == "steering/message":
            type_, data = "user/message", self.steering(data, seq)
        elif type_ == "llm/retry":
            data = self.retry(data, seq)
        data = self.compaction(type_, data, seq)
        return type_, self.message(type_, data, event, seq)

    def steering(self, data: JsonObject, seq: int) -> JsonObject:
        """N3: the ``user/message`` data a ``steering/message`` carried."""
        if "message" in data:
            _require(_exact(data, ("turn", "message")), "steering/message data")
            _require_count(data["turn"], "steering/message turn")
            wrapped = as_object(data["message"])
            if wrapped is None:
                raise _Malformed("steering/message message is not an object")
            return wrapped
        _require(_exact(data, ("turn", "content", "source")), "steering/message data")
        _require_count(data["turn"], "steering/message turn")
        return {"content": data["content"], "source": data["source"], "id": self.minted("legacy-message", seq), "role": "user"}

    def retry(self, data: JsonObject, seq: int) -> JsonObject:
        """N8: a retry without an id joins its chain."""
        chain = tuple(_chain_part(data[key]) if key in data else "" for key in RETRY_CHAIN)
        given = data.get("retryId")
        if is_nonempty_string(given):
            self.retry_ids[chain] = str(given)
            return data
        if "retryId" in data:
            return data  # a malformed id is refused by the payload table, not replaced
        retry_id = self.retry_ids.get(chain) or self.minted("legacy-retry", seq)
        self.retry_ids[chain] = retry_id
        return {**data, "retryId": retry_id}

    def compaction(self, type_: str, data: JsonObject, seq: int) -> JsonObject:
        """N9: compaction groups get ids, carried to their summary, end and checkpoint."""
        if type_ == "session/end-seed":
            self.compaction_id = None
            return data
        if type_ == "compaction/start":
            given = data.get("compactionId")
            if is_nonempty_string(given):
                self.compaction_id = str(given)
                return data
            if "compactionId" in data:
                return data  # a malformed id is refused by the payload table, not replaced
            self.compaction_id = self.minted("legacy-compaction", seq)
            return {**data, "compactionId": self.compaction_id}
        group = self.compaction_id
        if group is None:
            return data
        if type_ in ("compaction/summary", "compaction/end"):
            if type_ == "compaction/end":
                self.compaction_id = None
            return data if "compactionId" in data else {**data, "compactionId": group}
        if type_ == "user/message":
            source = as_object(data.get("source"))
            checkpoint = source is not None and source.get("kind") == "plugin" and source.get("plugin") == "compact"
            if checkpoint and source is not None and "compactionId" not in source:
                return {**data, "source": {**source, "compactionId": group}}
        return data

    def message(self, type_: str, data: JsonObject, event: JsonObject, seq: int) -> JsonObject:
        """N4: pre-identity messages in their v1 wrappers, with minted or inherited ids."""
        if type_ == "user/message":
            if any(key in data for key in ("id", "role", "message")) or not {"content", "source"} <= data.keys():
                return data
            return {**data, "id": self.minted("legacy-message", seq), "role": "user"}
        if type_ == "assistant/message":
            if "message" in data or not {"content", "provenance"} <= data.keys():
                return data
            provenance = as_object(data["provenance"])
            if provenance is None:
                raise _Malformed("assistant/message provenance is not an object")
            rest = {k: v for k, v in data.items() if k not in ("content", "provenance")}
            message: JsonObject = {
                "id": self.minted("legacy-message", seq),
                "role": "assistant",
                "content": data["content"],
                "source": {**provenance, "kind": "model"},
            }
            return {**rest, "message": message}
        if type_ == "tool/result":
            if "message" in data or not {"callId", "content", "isError"} <= data.keys():
                return data
            call_id, is_error = data["callId"], data["isError"]
            if not isinstance(call_id, str) or not isinstance(is_error, bool):
                return data
            message_id = self.result_id(event, seq)
            block: JsonObject = {"type": "tool-result", "toolCallId": call_id, "content": data["content"], "isError": is_error}
            message = {"id": message_id, "role": "user", "content": (block,), "source": {"kind": "tool", "callId": call_id}}
            rest = {k: v for k, v in data.items() if k not in ("callId", "content", "isError")}
            return {**rest, "message": message}
        return data

    def result_id(self, event: JsonObject, seq: int) -> str:
        """N4: a fresh result's minted id, or the id of the message a rewriting result replaces."""
        op = as_object(event.get("surfaceOp"))
        if op is None or op.get("op") != "replace" or "start" not in op:
            return self.minted("legacy-message", seq)
        start = op["start"]
        target = None
        if isinstance(start, int | float) and not isinstance(start, bool) and float(start).is_integer():
            target = self.message_ids.get(int(start))
        if target is None:
            raise _Malformed(f"tool/result replaces event {thaw(start)!r}, which has no message id")
        return target

    def remember_message(self, type_: str, data: JsonObject, seq: int) -> None:
        carrier = data if type_ == "user/message" else as_object(data.get("message"))
        message_id = carrier.get("id") if carrier is not None else None
        if isinstance(message_id, str):
            self.message_ids[seq] = message_id

    def delivery_marker_problem(self, type_: str, data: JsonObject, seq: int) -> str | None:
        """A delivery marker of this session's own generation must name this session."""
        if type_ != DELIVERY_MARKER:
            return None
        version = data.get("sessionFormatVersion")
        accepted = 0 if version is None else version
        seed_length = as_int(self.header.get("seedLength"))
        inherited = "parentSession" in self.header and seq < (seed_length or 0)
        own_generation = type(accepted) in (int, float) and accepted == 0
        if own_generation and not inherited and data.get("sessionId") != self.session_id:
            return f"{DELIVERY_MARKER} names session {thaw(data.get('sessionId'))!r}, not this session"
        return None


def _require(problem: str | None, what: str) -> None:
    if problem is not None:
        raise _Malformed(f"{what} {problem}")


def _require_count(value: JsonValue, what: str) -> int:
    if not is_safe_natural(value):
        raise _Malformed(f"{what} must be a non-negative integer")
    number = as_int(value)
    assert number is not None
    return number


def _turn_start(data: JsonObject) -> JsonObject:
    """N1: a ``turn/start`` loses its retired ``trigger``."""
    if "trigger" not in data:
        return data
    _require(_exact(data, ("turn", "trigger")), "turn/start data")
    turn = _require_count(data["turn"], "turn/start turn")
    trigger = as_object(data["trigger"])
    if trigger is None:
        raise _Malformed("turn/start trigger is not an object")
    if turn < 1 or not is_nonempty_string(trigger.get("kind")):
        raise _Malformed("malformed legacy turn/start: turn must be at least 1 and trigger needs a non-empty kind")
    return {"turn": data["turn"]}


def _turn_end(data: JsonObject) -> JsonObject:
    """N2: a ``turn/end`` reason in its v1 form."""
    _require(_exact(data, ("turn", "reason")), "turn/end data")
    if _require_count(data["turn"], "turn/end turn") < 1:
        raise _Malformed("malformed legacy turn/end: turn must be at least 1")
    reason = as_object(data["reason"])
    if reason is None:
        raise _Malformed("turn/end reason is not an object")
    kind = reason.get("kind")
    if not isinstance(kind, str):
        raise _Malformed("malformed legacy turn/end: reason kind must be a string")
    current: JsonObject
    if kind in PLAIN_END_KINDS:
        _require(_exact(reason, ("kind",)), "turn/end reason")
        return data
    if kind == "aborted":
        if "reason" in reason:
            return data
        _require(_exact(reason, ("kind",)), "turn/end reason")
        current = {"kind": "aborted", "reason": {"kind": "legacy"}}
    elif kind == "disposed":
        _require(_exact(reason, ("kind",)), "turn/end reason")
        current = {"kind": "aborted", "reason": {"kind": "disposed"}}
    elif kind == "error":
        if "error" in reason:
            return data
        current = _error_reason(reason)
    else:
        return data
    return {**data, "reason": current}


def _error_reason(reason: JsonObject) -> JsonObject:
    """N2: a legacy ``error`` reason with its whole failure record, or its message and code."""
    _require_count(reason.get("step"), "turn/end error step")
    if "failure" in reason:
        _require(_exact(reason, ("kind", "step", "failure")), "turn/end reason")
        failure = as_object(reason["failure"])
        if failure is None:
            raise _Malformed("turn/end failure is not an object")
        _require(_exact(failure, FAILURE_REQUIRED, FAILURE_OPTIONAL), "turn/end failure")
        if not (isinstance(failure["message"], str) and isinstance(failure["code"], str)):
            raise _Malformed("malformed legacy turn/end: failure message and code must be strings")
        return {"kind": "error", "error": failure}
    _require(_exact(reason, ("kind", "step", "message"), ("code",)), "turn/end reason")
    message, code = reason["message"], reason.get("code", "UNKNOWN")
    if not (isinstance(message, str) and isinstance(code, str)):
        raise _Malformed("malformed legacy turn/end: message and code must be strings")
    return {"kind": "error", "error": {"message": message, "code": code}}


def _request_header(data: JsonObject) -> JsonObject:
    """N5: a header snapshot loses its ``messagePrefix`` duplicate (and nothing else)."""
    header = as_object(data.get("header"))
    if header is None:
        raise _Malformed("request/header header is not an object")
    if "messagePrefix" not in header:
        return data
    if as_array(header["messagePrefix"]) is None:
        raise _Malformed("malformed legacy request/header: messagePrefix must be an array")
    return {**data, "header": {k: v for k, v in header.items() if k != "messagePrefix"}}


def upgrade_v0(log: StoredLog, fold: Fold = fold_session) -> StoredLog | Violation:
    """INV-LEGACY-1..8: a v0 log converted to v1, a v1 log unchanged, or the refusal.

    The result always validates as v1 (INV-LEGACY-6), read as the released edge reads a migration
    source: one released v0 pattern, a turn restarted after an inbox splice for the next turn
    without its ``turn/end`` (:func:`~sessionlog_spec.model.trace.restart_interrupted_turn`), is
    admitted as it stands, with nothing written for the abandoned turn.  Anything the
    normalisations leave invalid is refused with the v1 violation that finds it.  ``fold`` validates
    the converted log (:func:`~sessionlog_spec.model.session.fold_session`, or an equivalent).
    """
    problem = header_line_problem(log.header)
    if problem is not None:
        return problem
    version = version_of(log.header)
    if version not in (LEGACY_VERSION, FORMAT_VERSION):
        return Violation(Code.FORMAT_VERSION_UNSUPPORTED, f"format version {version} is not supported")
    if version == FORMAT_VERSION:
        # The edge's own output must come back unchanged (INV-LEGACY-7), so a v1 log is read as
        # the edge reads its output; reading or appending to a v1 log does not go through here.
        state = fold(log.events, legacy_restart=True)
        return state.at("v1 log") if isinstance(state, Violation) else log
    conversion = _Conversion(log.header, str(log.header["id"]))
    events: list[JsonObject] = []
    for index, raw in enumerate(log.events):
        converted = conversion.event(raw, index)
        if isinstance(converted, Violation):
            return converted
        events.append(converted)
    state = fold(events, where="v0 index", legacy_restart=True)
    if isinstance(state, Violation):
        return state
    header = as_object(freeze({**log.header, "version": FORMAT_VERSION}))
    assert header is not None
    return StoredLog(header, tuple(events))
