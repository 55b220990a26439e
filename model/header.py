"""Request headers: full canonical snapshots, their equality, reconstruction and the writer rule.

A ``request/header`` event carries ``{header, reason, startsSeries?}``.  ``header`` is the complete
request envelope in force from that request on: ``config`` (provider and model pinned),
``adapterDefaults``, ``system`` and ``tools``.  There are no deltas: reconstruction is "the latest
snapshot", and the writer decides from the log and the loop instance whether a new snapshot is due.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from sessionlog_spec.model.event import Event
from sessionlog_spec.model.json_value import (
    JsonObject,
    JsonValue,
    as_array,
    as_object,
    is_nonempty_string,
    is_safe_natural,
    json_equal,
)
from sessionlog_spec.model.payloads import payload_problem
from sessionlog_spec.model.violation import Code, Violation

HEADER_EVENT_KEYS = frozenset({"header", "reason", "startsSeries"})
HEADER_KEYS = frozenset({"config", "adapterDefaults", "system", "tools"})
ADAPTER_DEFAULT_KEYS = ("reasoningEffort", "maxTokens")


class Reason(StrEnum):
    """Why a snapshot was written."""

    INITIAL = "initial"
    RESUME = "resume"
    CHANGE = "change"
    SERIES = "series"


LEGACY_REASON_FALLBACK = "fallback"


def header_shape_problem(header: JsonValue) -> Violation | None:
    """INV-HDR-1..3: a header is a pinned, well-formed request envelope."""
    obj = as_object(header)
    if obj is None:
        return Violation(Code.HEADER_INVALID, "request/header header must be an object")
    extra = sorted(set(obj) - HEADER_KEYS)
    if extra:
        return Violation(Code.HEADER_INVALID, f"request/header header has unknown member(s) {extra}")
    config = as_object(obj.get("config"))
    if config is None or not (is_nonempty_string(config.get("provider")) and is_nonempty_string(config.get("model"))):
        return Violation(Code.HEADER_NOT_PINNED, "request/header lacks provider/model")
    if "reasoningEffort" in config and not is_nonempty_string(config["reasoningEffort"]):
        return Violation(Code.HEADER_INVALID, "request/header has an invalid reasoningEffort")
    if "maxTokens" in config and not (is_safe_natural(config["maxTokens"]) and config["maxTokens"] != 0):
        return Violation(Code.HEADER_INVALID, "request/header has an invalid maxTokens")
    if "adapterDefaults" in obj:
        defaults = as_object(obj["adapterDefaults"])
        if defaults is None or any(
            key not in ADAPTER_DEFAULT_KEYS or value is not True or key not in config for key, value in defaults.items()
        ):
            return Violation(
                Code.HEADER_ADAPTER_DEFAULTS_INVALID,
                "request/header adapterDefaults may only mark reasoningEffort/maxTokens as true, "
                "each for a config field that is present",
            )
    if "system" in obj and not isinstance(obj["system"], str):
        return Violation(Code.HEADER_INVALID, "request/header system must be a string")
    if "tools" in obj:
        tools = as_array(obj["tools"])
        if tools is None:
            return Violation(Code.HEADER_INVALID, "request/header tools must be an array")
        for tool in tools:
            tool_obj = as_object(tool)
            if tool_obj is None or not is_nonempty_string(tool_obj.get("name")):
                return Violation(Code.HEADER_INVALID, "request/header tools must be objects with a name")
    return None


def header_event_problem(data: JsonValue) -> Violation | None:
    """INV-HDR-1..5 and INV-LEGACY-2: the payload of a ``request/header`` event."""
    obj = as_object(data)
    if obj is None:
        return Violation(Code.HEADER_INVALID, "request/header data must be an object")
    if obj.get("reason") == LEGACY_REASON_FALLBACK:
        return Violation(Code.LEGACY_FALLBACK_REASON, 'request/header uses the legacy reason "fallback"')
    extra = sorted(set(obj) - HEADER_EVENT_KEYS)
    if extra or "header" not in obj or "reason" not in obj:
        return Violation(Code.HEADER_INVALID, "request/header data must be {header, reason, startsSeries?}")
    if obj["reason"] not in tuple(Reason):
        return Violation(Code.HEADER_REASON_INVALID, f"request/header has an invalid reason {obj['reason']!r}")
    if "startsSeries" in obj and obj["startsSeries"] is not True:
        return Violation(Code.HEADER_INVALID, "request/header startsSeries must be absent or true")
    shape = header_shape_problem(obj["header"])
    if shape is not None:
        return shape
    released = payload_problem("request/header", data, 0)  # the header payload names no seq
    if released is not None:
        return Violation(Code.HEADER_INVALID, f"request/header data: {released}")
    header = as_object(obj["header"])
    assert header is not None
    if not json_equal(canonical_header(header), header):
        return Violation(
            Code.HEADER_NOT_CANONICAL,
            "request/header snapshot is not canonical (empty system, empty tools or unmarked adapterDefaults)",
        )
    return None


def canonical_header(header: JsonObject) -> JsonObject:
    """The canonical form: empty ``system``, empty ``tools`` and marker-free ``adapterDefaults`` absent."""
    out: dict[str, JsonValue] = {}
    for key, value in header.items():
        if key == "system" and value == "":
            continue
        if key == "tools" and as_array(value) == ():
            continue
        if key == "adapterDefaults":
            defaults = as_object(value)
            if defaults is None or not any(v is True for v in defaults.values()):
                continue
        out[key] = value
    return MappingProxyType(out)


def assembled_header_problem(assembled: JsonValue) -> Violation | None:
    """INV-HDR-1..3 for the header of a request about to be sent, judged as its snapshot is judged.

    Whatever the writer rule decides, the snapshot it writes is the canonical form of this header,
    and ``append`` must accept that snapshot (INV-HDR-12), so the header is held to everything
    ``append`` checks in a snapshot: its shape, then the released payload table.  Canonical form is
    not asked of it: the writer canonicalises before it writes.
    """
    shape = header_shape_problem(assembled)
    if shape is not None:
        return shape
    header = as_object(assembled)
    assert header is not None
    return header_event_problem(header_event_data(HeaderDecision(Reason.INITIAL), header))


def snapshot_problem(events: Iterable[Event]) -> Violation | None:
    """INV-HDR-1..5: the first ``request/header`` event among ``events`` whose payload ``append`` refuses.

    A reader folding a log judges each snapshot exactly as ``seed`` and ``append`` do, so a log whose
    header the fold reconstructs is one a session holds, and the fold and the writer rule never
    disagree about a snapshot.
    """
    for event in events:
        if event.type == "request/header":
            problem = header_event_problem(event.data)
            if problem is not None:
                return problem.at(f"event seq {event.seq}")
    return None


def header_equals(a: JsonObject, b: JsonObject) -> bool:
    """Two headers are equal when their canonical forms are equal as JSON values."""
    return json_equal(canonical_header(a), canonical_header(b))


def header_of(event: Event) -> JsonObject | None:
    """The header snapshot an event carries, or ``None`` for other events."""
    if event.type != "request/header":
        return None
    data = as_object(event.data)
    return as_object(data.get("header")) if data is not None else None


def fold_request_header(events: Iterable[Event], start: JsonObject | None = None) -> JsonObject | None:
    """INV-HDR-8: the request header in force after ``events``: the canonical form of the latest snapshot."""
    latest = start
    for event in events:
        header = header_of(event)
        if header is not None:
            latest = header
    return None if latest is None else canonical_header(latest)


@dataclass(frozen=True, slots=True)
class InstanceFacts:
    """What the loop instance knows about the request it is about to send."""

    first_request: bool
    """This is the first request this loop instance builds."""
    begins_series: bool
    """The request begins an explicitly declared message series."""
    replaced_since_last_request: bool
    """A surface replacement was committed since this instance's previous request."""


@dataclass(frozen=True, slots=True)
class HeaderDecision:
    """A snapshot to append before the request: its reason and whether it starts a series."""

    reason: Reason
    starts_series: bool = False


def decide_request_header(latest: JsonObject | None, assembled: JsonObject, facts: InstanceFacts) -> HeaderDecision | None:
    """INV-HDR-9..11: the writer decision rule.

    The first request of a loop instance always anchors the instance with a full snapshot
    (``initial`` on an empty log, ``resume`` otherwise).  Later requests write ``change`` when the
    header differs from the latest snapshot (flagged ``startsSeries`` when a series begins),
    ``series`` when it is unchanged but a series begins, and nothing otherwise, so ordinary turns,
    steps and retries inherit the latest snapshot.
    """
    if facts.first_request:
        return HeaderDecision(Reason.INITIAL if latest is None else Reason.RESUME)
    begins = facts.begins_series or facts.replaced_since_last_request
    if latest is None or not header_equals(latest, assembled):
        return HeaderDecision(Reason.CHANGE, starts_series=begins)
    if begins:
        return HeaderDecision(Reason.SERIES)
    return None


def header_event_data(decision: HeaderDecision, assembled: JsonObject) -> JsonObject:
    """The ``request/header`` payload for a decision: the full canonical snapshot and its reason."""
    data: dict[str, JsonValue] = {"header": canonical_header(assembled), "reason": decision.reason.value}
    if decision.starts_series:
        data["startsSeries"] = True
    return MappingProxyType(data)
