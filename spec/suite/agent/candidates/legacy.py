"""Invalid candidates of the v0-to-v1 edge (``INV-LEGACY``; the contracts are
:mod:`sessionlog_spec.contracts.legacy`).

Legacy forms on the v1 paths and at the edge (INV-LEGACY-1..4, with the edge's refusal of a newer
version, INV-JSONL-7), then the v0 source the edge reads (INV-LEGACY-9).  The two are registered
apart (:data:`REGISTERED`, :data:`V0_SOURCE`): the registry puts the v0 source's candidates after the
payload candidates whose faults they reuse, where seeded draws expect them.
"""

from __future__ import annotations

import json
import random
from typing import Any

from sessionlog_spec.model.jsonl import LEGACY_VERSION
from sessionlog_spec.model.legacy import V0_INVENTORY
from sessionlog_spec.model.violation import Code
from sessionlog_spec.suite.agent.builder import RawEvent, SessionBuilder, basic_header
from sessionlog_spec.suite.agent.candidates.base import (
    STORED_HEADER,
    Registry,
    _benign,
    _compaction_open,
    _header_event,
    _jsonl_lines,
    _open_turn,
    _put,
    _refused,
    _scratch,
    _text,
)
from sessionlog_spec.suite.agent.candidates.header import _in_turn
from sessionlog_spec.suite.agent.candidates.log import later_format_event
from sessionlog_spec.suite.agent.candidates.payloads import _faulty_payload
from sessionlog_spec.suite.agent.candidates.relationships import _marked, _marker
from sessionlog_spec.suite.agent.legacy_forms import FORMS, v0_events

REGISTERED = Registry()
"""This module's mutations, in the order their builders are defined below."""
candidate = REGISTERED.candidate


# -- legacy forms, on v1 paths and at the v0 edge (INV-LEGACY) -------------------------------------


def _delta_data() -> dict[str, Any]:
    return {"system": {"keepStart": 1, "keepEnd": 0, "insert": ["Be terse."]}}


def _v0_log(builder: SessionBuilder, rng: random.Random, extra: RawEvent, version: int = 0) -> dict[str, Any]:
    """The builder's log as a v0 log (with v0 ``turn/start`` triggers), plus ``extra`` at the end."""
    events = builder.events
    for event in events:
        if event["type"] == "turn/start" and rng.random() < 0.5:
            event["data"]["trigger"] = {"kind": "user"}
    return {"header": {**STORED_HEADER, "version": version}, "events": [*events, extra]}


@candidate(Code.LEGACY_HEADER_DELTA, "append")
def header_delta(builder: SessionBuilder, rng: random.Random) -> RawEvent:
    """A ``request/header-delta`` event from the retired delta codec."""
    return _scratch(builder).event("request/header-delta", _delta_data(), False)


@candidate(Code.LEGACY_HEADER_DELTA, "seed")
def seed_header_delta(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed taken from an old log that still holds a header delta."""
    return [*builder.events, header_delta(builder, rng)]


@candidate(Code.LEGACY_HEADER_DELTA, "upgrade")
def v0_header_delta(builder: SessionBuilder, rng: random.Random) -> object:
    """A v0 log holding a ``request/header-delta``."""
    return _v0_log(builder, rng, header_delta(builder, rng))


@candidate(Code.LEGACY_FALLBACK_REASON, "append")
def header_fallback_reason(builder: SessionBuilder, rng: random.Random) -> object:
    """A full snapshot with the delta codec's ``fallback`` reason."""
    b = _in_turn(builder)
    return None if b is None else _header_event(b, basic_header(), "fallback")


@candidate(Code.LEGACY_FALLBACK_REASON, "upgrade")
def v0_fallback(builder: SessionBuilder, rng: random.Random) -> object:
    """A v0 log holding a ``fallback`` full header."""
    return _v0_log(builder, rng, _header_event(_scratch(builder), basic_header(), "fallback"))


@candidate(Code.LEGACY_MODE_SET, "append")
def mode_set(builder: SessionBuilder, rng: random.Random) -> RawEvent:
    """A retired ``mode/set`` event."""
    return _scratch(builder).event("mode/set", {"mode": rng.choice(("plan", "default"))}, False)


@candidate(Code.LEGACY_MODE_SET, "upgrade")
def v0_mode_set(builder: SessionBuilder, rng: random.Random) -> object:
    """A v0 log holding a ``mode/set``."""
    return _v0_log(builder, rng, mode_set(builder, rng))


@candidate(Code.LEGACY_MODE_SET, "load")
def jsonl_v0_mode_set(builder: SessionBuilder, rng: random.Random) -> object:
    """A v0 log holding a ``mode/set``: the edge refuses it on load."""
    return _text([*_jsonl_lines(builder, {**STORED_HEADER, "version": 0}), json.dumps(mode_set(builder, rng))])


@candidate(Code.LEGACY_UNKNOWN_TYPE, "upgrade")
def v0_ignorable_unknown(builder: SessionBuilder, rng: random.Random) -> object:
    """A v0 log holding an ignorable event outside the frozen v0 inventory."""
    e = later_format_event(builder, rng)
    assert isinstance(e, dict)
    return _v0_log(builder, rng, {**e, "ignorable": True})


@candidate(Code.FORMAT_VERSION_UNSUPPORTED, "upgrade")
def v0_newer_version(builder: SessionBuilder, rng: random.Random) -> object:
    """A log of a later format version handed to the v0 edge."""
    return _v0_log(builder, rng, _benign(_scratch(builder), rng), version=rng.choice((2, 3)))


# -- the v0 source (INV-LEGACY-9) ------------------------------------------------------------------

V0_SOURCE = Registry()
"""The v0 source's mutations, in the order their builders are defined below (:data:`MUTATIONS
<sessionlog_spec.suite.agent.candidates.MUTATIONS>` puts them after the payload candidates)."""


def _v0_writable(builder: SessionBuilder) -> bool:
    """Whether a v0 writer could have written the builder's log (no type outside the v0 inventory,
    such as an ignorable extension event)."""
    return all(event.type in V0_INVENTORY for event in builder.state.events)


@V0_SOURCE.candidate(Code.LEGACY_SOURCE_INVALID, "upgrade")
def v0_payload_fault(builder: SessionBuilder, rng: random.Random) -> object:
    """A v0 log ending with a note whose payload the released v0 payload table refuses (one fault drawn
    along its v0 shape)."""
    fault = _faulty_payload(builder, rng, generation=LEGACY_VERSION) if _v0_writable(builder) else None
    return None if fault is None else _refused(builder, "upgrade", Code.LEGACY_SOURCE_INVALID, _v0_log(builder, rng, fault))


def _legacy_log(builder: SessionBuilder) -> list[RawEvent] | None:
    """The builder's log as a v0 writer using every legacy form wrote it, with a turn started and a
    request header written first when the log has none: each is a legacy form to get wrong, and a
    session's first moments hold neither."""
    b = _scratch(builder)
    if not _v0_writable(b):
        return None
    started = any(e.type == "turn/start" for e in b.state.events)
    if not started and (_open_turn(b) is not None or _compaction_open(b) or not _put(b, b.turn_start(commit=False))):
        return None
    if not any(e.type == "request/header" for e in b.state.events):
        _put(b, b.request_header(basic_header(), "initial", commit=False))
    return v0_events(b.events, frozenset(FORMS))


NOT_AN_ARRAY: tuple[object, ...] = ("earlier conversation", {"role": "user"}, None, 0, True)
"""Values of every JSON type but an array, as a writer that mixed up a list's type writes them."""


def _malformed_forms(event: RawEvent) -> list[RawEvent]:
    """Ways a v0 writer got the legacy form of ``event`` wrong (none when it has no legacy form)."""
    type_, data = event["type"], event["data"]
    out: list[Any] = []
    if type_ == "turn/start" and "trigger" in data:
        trigger = data["trigger"]
        out += [{**data, "trigger": trigger["kind"]}, {**data, "trigger": {k: v for k, v in trigger.items() if k != "kind"}}]
        out.append({**data, "trigger": {**trigger, "kind": ""}})
    elif type_ == "turn/end":
        reason = data["reason"]
        out.append({**data, "reason": {"kind": "error", "message": "The server is overloaded.", "code": "PROVIDER_OVERLOADED"}})
        if set(reason) == {"kind"}:
            out.append({**data, "reason": {**reason, "step": 1}})
        if isinstance(reason.get("failure"), dict):
            out.append({**data, "reason": {**reason, "failure": {**reason["failure"], "retryable": True}}})
    elif type_ == "steering/message":
        if "message" in data:
            out.append({**data, "content": data["message"]["content"]})
        else:
            out.append({"turn": data["turn"], "content": data["content"]})
        out.append({**data, "turn": str(data["turn"])})
    elif type_ == "assistant/message" and isinstance(data.get("provenance"), dict):
        provenance = data["provenance"]
        out.append({**data, "provenance": f"{provenance.get('provider')}/{provenance.get('model')}"})
    elif type_ == "request/header" and "messagePrefix" in data["header"]:
        out += [{**data, "header": {**data["header"], "messagePrefix": value}} for value in NOT_AN_ARRAY]
    return [{**event, "data": d} for d in out]


def _malformed_v0(builder: SessionBuilder, rng: random.Random) -> list[RawEvent] | None:
    """The builder's log in legacy spelling with one legacy form malformed: the type of event is
    drawn first, so a form the log holds once (a header's prefix) is not crowded out by one it holds
    at every turn."""
    events = _legacy_log(builder)
    if events is None:
        return None
    options: dict[str, list[tuple[int, RawEvent]]] = {}
    for i, event in enumerate(events):
        for bad in _malformed_forms(event):
            options.setdefault(str(event["type"]), []).append((i, bad))
    if not options:
        return None
    index, bad = rng.choice(options[rng.choice(sorted(options))])
    return [*events[:index], bad, *events[index + 1 :]]


@V0_SOURCE.candidate(Code.LEGACY_SOURCE_INVALID, "upgrade")
def v0_malformed_legacy_form(builder: SessionBuilder, rng: random.Random) -> object:
    """A v0 log written in legacy spelling with one legacy form malformed: a trigger that is a string or
    has no kind, a legacy error reason without its step, a plain reason with extra members, a steering
    message with both shapes (or a string turn), a provenance that is a string, a non-array ``messagePrefix``."""
    events = _malformed_v0(builder, rng)
    if events is None:
        return None
    header: dict[str, Any] = {**STORED_HEADER, "version": LEGACY_VERSION}
    return {"header": header, "events": events}


@V0_SOURCE.candidate(Code.LEGACY_SOURCE_INVALID, "load")
def jsonl_v0_malformed_legacy_form(builder: SessionBuilder, rng: random.Random) -> object:
    """A stored v0 log with one legacy form malformed: the edge refuses it on load."""
    events = _malformed_v0(builder, rng)
    if events is None:
        return None
    return _text([json.dumps({**STORED_HEADER, "version": LEGACY_VERSION}), *(json.dumps(e) for e in events)])


@V0_SOURCE.candidate(Code.LEGACY_SOURCE_INVALID, "upgrade")
def v0_marker_not_v0(builder: SessionBuilder, rng: random.Random) -> object:
    """A v0 log with a delivery marker that names another session, or that carries the v1-only
    ``sessionFormatVersion``."""
    if not _v0_writable(builder):
        return None
    b = _marked(builder)
    marker = _marker(b, "parent-session", None) if rng.random() < 0.5 else _marker(b, str(STORED_HEADER["id"]), 1)
    return _v0_log(b, rng, marker)
