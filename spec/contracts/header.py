"""INV-HDR: snapshot shape, canonical form, equality, reconstruction and the writer rule."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import icontract

from sessionlog_spec.contracts import ENABLED
from sessionlog_spec.model import header as _header
from sessionlog_spec.model.event import Event
from sessionlog_spec.model.header import HeaderDecision, InstanceFacts, Reason
from sessionlog_spec.model.json_value import JsonObject, JsonValue, as_object, json_equal
from sessionlog_spec.model.session import SessionState
from sessionlog_spec.model.violation import Violation


def _obj(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def snapshot_has_only_header_members(data: JsonValue) -> bool:
    """INV-HDR-1."""
    d = _obj(data)
    header = _obj(d.get("header"))
    tools = header.get("tools", ())
    names = [_obj(t).get("name") for t in tools] if isinstance(tools, tuple) else None
    return (
        set(d) <= {"header", "reason", "startsSeries"}
        and d.get("startsSeries", True) is True
        and set(header) <= {"config", "adapterDefaults", "system", "tools"}
        and isinstance(header.get("system", ""), str)
        and names is not None
        and all(isinstance(n, str) and n for n in names)
        and len(set(names)) == len(names)
    )


def snapshot_is_pinned(data: JsonValue) -> bool:
    """INV-HDR-2."""
    config = _obj(_obj(_obj(data).get("header")).get("config"))
    return all(isinstance(config.get(k), str) and config.get(k) != "" for k in ("provider", "model"))


def adapter_defaults_mark_present_fields(data: JsonValue) -> bool:
    """INV-HDR-3."""
    header = _obj(_obj(data).get("header"))
    if "adapterDefaults" not in header:
        return True
    defaults = header["adapterDefaults"]
    config = _obj(header.get("config"))
    return isinstance(defaults, Mapping) and all(
        k in ("reasoningEffort", "maxTokens") and v is True and k in config for k, v in defaults.items()
    )


def reason_is_current(data: JsonValue) -> bool:
    """INV-HDR-4."""
    return _obj(data).get("reason") in ("initial", "resume", "change", "series")


def snapshot_is_canonical(data: JsonValue) -> bool:
    """INV-HDR-5."""
    header = _obj(_obj(data).get("header"))
    return header.get("system") != "" and header.get("tools") != () and header.get("adapterDefaults") != {}


@icontract.ensure(lambda data, result: result is not None or snapshot_has_only_header_members(data), "INV-HDR-1", enabled=ENABLED)
@icontract.ensure(lambda data, result: result is not None or snapshot_is_pinned(data), "INV-HDR-2", enabled=ENABLED)
@icontract.ensure(
    lambda data, result: result is not None or adapter_defaults_mark_present_fields(data), "INV-HDR-3", enabled=ENABLED
)
@icontract.ensure(lambda data, result: result is not None or reason_is_current(data), "INV-HDR-4", enabled=ENABLED)
@icontract.ensure(lambda data, result: result is not None or snapshot_is_canonical(data), "INV-HDR-5", enabled=ENABLED)
def header_event_problem(data: JsonValue) -> Violation | None:
    """What is wrong with a ``request/header`` payload."""
    return _header.header_event_problem(data)


def drops_only_empty_members(header: JsonObject, result: JsonObject) -> bool:
    """INV-HDR-6: canonical form drops exactly the empty system, empty tools and marker-free adapterDefaults."""
    dropped = set(header) - set(result)
    expected = {
        k
        for k, v in header.items()
        if (k == "system" and v == "")
        or (k == "tools" and v == ())
        or (k == "adapterDefaults" and not any(x is True for x in _obj(v).values()))
    }
    return dropped == expected and all(json_equal(result[k], header[k]) for k in result)


@icontract.ensure(lambda header, result: drops_only_empty_members(header, result), "INV-HDR-6", enabled=ENABLED)
@icontract.ensure(lambda result: json_equal(_header.canonical_header(result), result), "INV-HDR-6", enabled=ENABLED)
def canonical_header(header: JsonObject) -> JsonObject:
    """The canonical form of a header."""
    return _header.canonical_header(header)


@icontract.ensure(lambda a, b, result: result == _header.header_equals(b, a), "INV-HDR-7", enabled=ENABLED)
@icontract.ensure(lambda a, result: _header.header_equals(a, a), "INV-HDR-7", enabled=ENABLED)
@icontract.ensure(
    lambda a, b, result: result == _header.header_equals(_header.canonical_header(a), b), "INV-HDR-7", enabled=ENABLED
)
def header_equals(a: JsonObject, b: JsonObject) -> bool:
    """Whether two headers are equal."""
    return _header.header_equals(a, b)


def latest_snapshot(events: Iterable[Event]) -> JsonObject | None:
    """The header member of the last ``request/header`` event, found by scanning backwards."""
    for event in reversed(list(events)):
        if event.type == "request/header" and isinstance(event.data, Mapping):
            header = event.data.get("header")
            assert isinstance(header, Mapping)
            return header
    return None


@icontract.ensure(
    lambda events, start, result: (
        (result is None and latest_snapshot(events) is None and start is None)
        or (result is not None and json_equal(result, _header.canonical_header(latest_snapshot(events) or start or {})))
    ),
    "INV-HDR-8",
    enabled=ENABLED,
)
def fold_request_header(events: Sequence[Event], start: JsonObject | None = None) -> JsonObject | None:
    """The request header in force after ``events``."""
    return _header.fold_request_header(events, start)


def tracked_header_is_latest(result: SessionState) -> bool:
    """INV-HDR-8 on a session: the incrementally tracked header equals the reconstruction."""
    latest = latest_snapshot(result.events)
    if latest is None:
        return result.header is None
    return result.header is not None and json_equal(result.header, _header.canonical_header(latest))


def first_request_anchors(latest: JsonObject | None, facts: InstanceFacts, result: HeaderDecision | None) -> bool:
    """INV-HDR-9."""
    if not facts.first_request:
        return True
    expected = Reason.INITIAL if latest is None else Reason.RESUME
    return result is not None and result.reason == expected and not result.starts_series


def _begins(facts: InstanceFacts) -> bool:
    return facts.begins_series or facts.replaced_since_last_request


def change_is_written(
    latest: JsonObject | None, assembled: JsonObject, facts: InstanceFacts, result: HeaderDecision | None
) -> bool:
    """INV-HDR-10."""
    if facts.first_request or (latest is not None and _header.header_equals(latest, assembled)):
        return True
    return result is not None and result.reason == Reason.CHANGE and result.starts_series == _begins(facts)


def unchanged_writes_series_or_nothing(
    latest: JsonObject | None, assembled: JsonObject, facts: InstanceFacts, result: HeaderDecision | None
) -> bool:
    """INV-HDR-11."""
    if facts.first_request or latest is None or not _header.header_equals(latest, assembled):
        return True
    if _begins(facts):
        return result is not None and result.reason == Reason.SERIES
    return result is None


def decision_reconstructs_assembled(latest: JsonObject | None, assembled: JsonObject, result: HeaderDecision | None) -> bool:
    """INV-HDR-12."""
    in_force = latest if result is None else as_object(_header.header_event_data(result, assembled)["header"])
    return in_force is not None and _header.header_equals(in_force, assembled)


@icontract.ensure(lambda latest, facts, result: first_request_anchors(latest, facts, result), "INV-HDR-9", enabled=ENABLED)
@icontract.ensure(
    lambda latest, assembled, facts, result: change_is_written(latest, assembled, facts, result), "INV-HDR-10", enabled=ENABLED
)
@icontract.ensure(
    lambda latest, assembled, facts, result: unchanged_writes_series_or_nothing(latest, assembled, facts, result),
    "INV-HDR-11",
    enabled=ENABLED,
)
@icontract.ensure(
    lambda latest, assembled, result: decision_reconstructs_assembled(latest, assembled, result), "INV-HDR-12", enabled=ENABLED
)
def decide_request_header(latest: JsonObject | None, assembled: JsonObject, facts: InstanceFacts) -> HeaderDecision | None:
    """The writer decision rule."""
    return _header.decide_request_header(latest, assembled, facts)


def snapshot_of_assembled_is_appendable(assembled: JsonValue, result: Violation | None) -> bool:
    """INV-HDR-12: a header the writer rule answers for writes a snapshot ``append`` accepts."""
    header = as_object(assembled)
    if result is not None or header is None:
        return True
    snapshot = _header.header_event_data(HeaderDecision(Reason.INITIAL), header)
    return _header.header_event_problem(snapshot) is None


@icontract.ensure(
    lambda assembled, result: snapshot_of_assembled_is_appendable(assembled, result), "INV-HDR-12", enabled=ENABLED
)
def assembled_header_problem(assembled: JsonValue) -> Violation | None:
    """What is wrong with the header of a request the writer rule is asked about."""
    return _header.assembled_header_problem(assembled)


def every_snapshot_appendable(events: Sequence[Event]) -> bool:
    """INV-HDR-1..5 across a log: each ``request/header`` payload is one ``append`` accepts."""
    return all(_header.header_event_problem(e.data) is None for e in events if e.type == "request/header")


@icontract.ensure(lambda events, result: (result is None) == every_snapshot_appendable(events), "INV-HDR-1", enabled=ENABLED)
def snapshot_problem(events: Sequence[Event]) -> Violation | None:
    """The first snapshot in ``events`` that ``append`` would refuse."""
    return _header.snapshot_problem(events)
