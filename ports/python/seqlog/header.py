"""Request headers: full canonical snapshots, their equality, reconstruction and the writer rule.

A ``request/header`` event carries ``{header, reason, startsSeries?}`` where ``header`` is the whole
request envelope in force from that request on.  There are no deltas: the header in force is the
latest snapshot, and :class:`HeaderWriter` decides, per loop instance, when a new one is due.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import orjson

from seqlog.errors import Code, SeqlogError
from seqlog.event import Event
from seqlog.jsonvalue import (
    FrozenObject,
    NotLossless,
    as_array,
    as_object,
    freeze,
    is_nonempty_string,
    is_positive,
    json_equal,
)
from seqlog.payloads import payload_problem

if TYPE_CHECKING:
    from seqlog.session import Session

HEADER_EVENT_KEYS = frozenset({"header", "reason", "startsSeries"})
HEADER_KEYS = frozenset({"config", "adapterDefaults", "system", "tools"})
ADAPTER_DEFAULT_KEYS = frozenset({"reasoningEffort", "maxTokens"})
LEGACY_REASON_FALLBACK = "fallback"


class Reason(StrEnum):
    """Why a snapshot was written."""

    INITIAL = "initial"
    RESUME = "resume"
    CHANGE = "change"
    SERIES = "series"


_REASONS = frozenset(Reason)


def check_header_shape(header: object) -> None:
    """Refuse a header that is not a pinned, well-formed request envelope."""
    obj = as_object(header)
    if obj is None:
        raise SeqlogError(Code.HEADER_INVALID, "request/header header must be an object")
    if not HEADER_KEYS.issuperset(obj):
        raise SeqlogError(Code.HEADER_INVALID, f"request/header header has unknown member(s) {sorted(set(obj) - HEADER_KEYS)}")
    config = as_object(obj.get("config"))
    if config is None or not (is_nonempty_string(config.get("provider")) and is_nonempty_string(config.get("model"))):
        raise SeqlogError(Code.HEADER_NOT_PINNED, "request/header lacks provider/model")
    if "reasoningEffort" in config and not is_nonempty_string(config["reasoningEffort"]):
        raise SeqlogError(Code.HEADER_INVALID, "request/header has an invalid reasoningEffort")
    if "maxTokens" in config and not is_positive(config["maxTokens"]):
        raise SeqlogError(Code.HEADER_INVALID, "request/header has an invalid maxTokens")
    if "adapterDefaults" in obj:
        defaults = as_object(obj["adapterDefaults"])
        if defaults is None or any(
            key not in ADAPTER_DEFAULT_KEYS or value is not True or key not in config for key, value in defaults.items()
        ):
            raise SeqlogError(
                Code.HEADER_ADAPTER_DEFAULTS_INVALID,
                "request/header adapterDefaults may only mark reasoningEffort/maxTokens as true, "
                "each for a config field that is present",
            )
    if "system" in obj and not isinstance(obj["system"], str):
        raise SeqlogError(Code.HEADER_INVALID, "request/header system must be a string")
    if "tools" in obj:
        tools = as_array(obj["tools"])
        if tools is None:
            raise SeqlogError(Code.HEADER_INVALID, "request/header tools must be an array")
        for tool in tools:
            name = tool.get("name") if isinstance(tool, Mapping) else None
            if not isinstance(name, str) or name == "":
                raise SeqlogError(Code.HEADER_INVALID, "request/header tools must be objects with a name")


def check_header_event(data: object) -> None:
    """Refuse a ``request/header`` payload that is not a current, canonical, full snapshot."""
    obj = as_object(data)
    if obj is None:
        raise SeqlogError(Code.HEADER_INVALID, "request/header data must be an object")
    reason = obj.get("reason")
    if reason == LEGACY_REASON_FALLBACK:
        raise SeqlogError(Code.LEGACY_FALLBACK_REASON, 'request/header uses the legacy reason "fallback"')
    if not HEADER_EVENT_KEYS.issuperset(obj) or "header" not in obj or "reason" not in obj:
        raise SeqlogError(Code.HEADER_INVALID, "request/header data must be {header, reason, startsSeries?}")
    if not (isinstance(reason, str) and reason in _REASONS):
        raise SeqlogError(Code.HEADER_REASON_INVALID, f"request/header has an invalid reason {reason!r}")
    if "startsSeries" in obj and obj["startsSeries"] is not True:
        raise SeqlogError(Code.HEADER_INVALID, "request/header startsSeries must be absent or true")
    check_header_shape(obj["header"])
    released = payload_problem("request/header", data, 0)  # the header payload names no seq
    if released is not None:  # the released table's verdict comes before canonical form, as in the model
        raise SeqlogError(Code.HEADER_INVALID, f"request/header data: {released}")
    if not is_canonical(obj["header"]):
        raise SeqlogError(
            Code.HEADER_NOT_CANONICAL,
            "request/header snapshot is not canonical (empty system, empty tools or unmarked adapterDefaults)",
        )


def dropped_in_canonical(key: str, value: object) -> bool:
    """Whether a header member carries nothing and so is absent from the canonical form."""
    if key == "system":
        return isinstance(value, str) and value == ""
    if key == "tools":
        return isinstance(value, tuple | list) and len(value) == 0
    if key == "adapterDefaults":
        defaults = as_object(value)
        return defaults is None or not any(v is True for v in defaults.values())
    return False


def is_canonical(header: Mapping[str, Any]) -> bool:
    """Whether a header already is its own canonical form."""
    return not any(dropped_in_canonical(k, v) for k, v in header.items())


def canonical_header(header: Mapping[str, Any]) -> FrozenObject:
    """The canonical form: empty ``system``, empty ``tools`` and marker-free ``adapterDefaults`` absent."""
    if isinstance(header, FrozenObject) and is_canonical(header):
        return header
    frozen = freeze(header)
    assert isinstance(frozen, FrozenObject)
    return FrozenObject({k: v for k, v in frozen.items() if not dropped_in_canonical(k, v)})


def header_equals(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Two headers are equal when their canonical forms are equal as JSON values."""
    pick_a = {k: v for k, v in a.items() if not dropped_in_canonical(k, v)}
    pick_b = {k: v for k, v in b.items() if not dropped_in_canonical(k, v)}
    # The writer asks this before every request and the answer is nearly always "equal": identical
    # key-sorted encodings prove it in C.  Different bytes may still be equal JSON (1 and 1.0), so
    # only a mismatch takes the member-by-member comparison.
    try:
        if orjson.dumps(pick_a, option=orjson.OPT_SORT_KEYS) == orjson.dumps(pick_b, option=orjson.OPT_SORT_KEYS):
            return True
    except orjson.JSONEncodeError:
        pass
    return json_equal(pick_a, pick_b)


def header_of(event: Event) -> Mapping[str, Any] | None:
    """The snapshot a ``request/header`` event carries, or ``None`` for any other event."""
    if event.type != "request/header":
        return None
    data = as_object(event.data)
    return as_object(data.get("header")) if data is not None else None


def fold_request_header(events: Iterable[Event]) -> FrozenObject | None:
    """The header in force after ``events``: the canonical form of the latest snapshot, or ``None``."""
    latest: Mapping[str, Any] | None = None
    for event in events:
        snapshot = header_of(event)
        if snapshot is not None:
            latest = snapshot
    return None if latest is None else canonical_header(latest)


@dataclass(frozen=True, slots=True)
class InstanceFacts:
    """What a loop instance knows about the request it is about to send."""

    first_request: bool
    begins_series: bool
    replaced_since_last_request: bool


@dataclass(frozen=True, slots=True)
class HeaderDecision:
    """A snapshot due before the request: its reason and whether it starts a series."""

    reason: Reason
    starts_series: bool = False


def decide_request_header(
    latest: Mapping[str, Any] | None, assembled: Mapping[str, Any], facts: InstanceFacts
) -> HeaderDecision | None:
    """The writer rule: which snapshot, if any, must precede the next request.

    The first request of an instance anchors it (``initial`` on an empty log, ``resume``
    otherwise); later ones write ``change`` when the header differs, ``series`` when it does not
    but a series begins (explicitly or after a surface replacement), and nothing otherwise.
    """
    if facts.first_request:
        return HeaderDecision(Reason.INITIAL if latest is None else Reason.RESUME)
    begins = facts.begins_series or facts.replaced_since_last_request
    if latest is None or not header_equals(latest, assembled):
        return HeaderDecision(Reason.CHANGE, starts_series=begins)
    if begins:
        return HeaderDecision(Reason.SERIES)
    return None


def header_event_data(decision: HeaderDecision, assembled: Mapping[str, Any]) -> FrozenObject:
    """The ``request/header`` payload for a decision: the full canonical snapshot and its reason."""
    data: dict[str, Any] = {"header": canonical_header(assembled), "reason": decision.reason.value}
    if decision.starts_series:
        data["startsSeries"] = True
    return FrozenObject(data)


class HeaderWriter:
    """The request-header writer of one loop instance.

    It remembers whether this instance has sent a request yet and the surface's replace generation
    at its previous request, which are the two facts the writer rule needs besides the log.
    """

    def __init__(self, session: Session) -> None:
        self._session = session
        self._sent_any = False
        self._generation_at_last_request = 0

    def before_request(self, assembled_header: Mapping[str, Any], begins_series: bool = False) -> Event | None:
        """Append the snapshot due before dispatching a request, inside the open step; ``None`` if none is due."""
        try:
            assembled = freeze(assembled_header)
        except NotLossless as error:
            raise SeqlogError(Code.HEADER_INVALID, f"assembled header is not lossless JSON: {error}") from None
        check_header_shape(assembled)
        assert isinstance(assembled, FrozenObject)
        session = self._session
        if session.open_step is None:
            raise SeqlogError(Code.EVENT_OUTSIDE_STEP, "a request header is written inside the open step, and none is open")
        generation = session.surface.replace_generation
        facts = InstanceFacts(
            first_request=not self._sent_any,
            begins_series=begins_series,
            replaced_since_last_request=self._sent_any and generation != self._generation_at_last_request,
        )
        decision = decide_request_header(session.request_header(), assembled, facts)
        event = None
        if decision is not None:
            event = session.append("request/header", header_event_data(decision, assembled))
        self._sent_any = True
        self._generation_at_last_request = generation
        return event


def check_assembled_header(header: object) -> None:
    """Refuse a request's header whose snapshot ``append`` would refuse.

    The writer rule's snapshot is this header made canonical, so everything a snapshot is held to
    applies to it except canonical form itself.
    """
    check_header_shape(header)
    obj = as_object(header)
    assert obj is not None
    check_header_event(header_event_data(HeaderDecision(Reason.INITIAL), obj))


def check_snapshots(events: Iterable[Event]) -> None:
    """Refuse a log holding a ``request/header`` payload that ``append`` would refuse, naming its seq."""
    for event in events:
        if event.type == "request/header":
            try:
                check_header_event(event.data)
            except SeqlogError as error:
                raise error.at(f"event seq {event.seq}") from None
