"""Property tests over the stored form: JSONL round trip, torn tails, reload, repair, and the v0 edge.

Sessions come from ``tests/strategies.py``: complete ones, ones that stop mid-turn (open step,
pending calls), and complete ones cut at a drawn point.  Every model call goes through the
contracted wrappers in :mod:`sessionlog_spec.contracts`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
import strategies as S
from hypothesis import assume, event, given
from hypothesis import strategies as st

from sessionlog_spec.contracts import jsonl as jsonl_c
from sessionlog_spec.contracts import legacy as legacy_c
from sessionlog_spec.contracts import log as log_c
from sessionlog_spec.contracts import repair as repair_c
from sessionlog_spec.contracts import trace as trace_c
from sessionlog_spec.model.event import Event, encode_event
from sessionlog_spec.model.json_value import JsonObject, as_object, freeze, json_equal
from sessionlog_spec.model.jsonl import DecodedLog, encode_line
from sessionlog_spec.model.legacy import COMPACT_RENAMES, StoredLog
from sessionlog_spec.model.load import LoadedSession
from sessionlog_spec.model.session import EMPTY_SESSION, SessionState
from sessionlog_spec.model.trace import TraceState
from sessionlog_spec.model.violation import Code, Violation
from sessionlog_spec.suite.agent.builder import SessionBuilder

PROPERTIES = S.property_settings()
CHEAP = S.property_settings(scale=0.5)


@st.composite
def header_lines(draw: st.DrawFn) -> JsonObject:
    """A valid v1 session header line, with a drawn selection of its optional members."""
    header: dict[str, Any] = {
        "type": "session",
        "version": 1,
        "id": draw(st.sampled_from(["s-1", "sess-ü-2026", "x"])),
        "createdAt": draw(st.integers(0, 2**53 - 1)),
        "delegationDepth": draw(st.integers(0, 2**53 - 1)),
    }
    optional = {
        "cwd": st.sampled_from(["/", "/home/ada/project", "/tmp/ü ß"]),
        "parentSession": st.just("parent-1"),
        "seedLength": st.just(0),
        "origin": st.just("subagent"),
        "agentPreset": st.just("reviewer"),
    }
    for key in draw(st.lists(st.sampled_from(sorted(optional)), unique=True)):
        header[key] = draw(optional[key])
    frozen = as_object(freeze(header))
    assert frozen is not None
    return frozen


@st.composite
def cut_logs(draw: st.DrawFn, max_actions: int = 30) -> tuple[Event, ...]:
    """A valid log that may stop anywhere: mid-turn by construction, or a complete session cut at a drawn point."""
    if draw(st.booleans()):
        return draw(S.sessions(max_actions=max_actions)).state.events
    events = draw(S.sessions(max_actions=max_actions, closed=True)).state.events
    return events[: draw(st.integers(0, len(events)))]


def assert_same_json_events(got: Sequence[Mapping[str, Any]], want: Sequence[Mapping[str, Any]]) -> None:
    """Event-by-event JSON equality, naming the first event that differs."""
    for index, (a, b) in enumerate(zip(got, want, strict=False)):
        assert json_equal(a, b), f"event {index} differs:\n got  {json_thaw(a)}\n want {json_thaw(b)}"
    assert len(got) == len(want)


def _same_events(raws: Sequence[Mapping[str, object]], events: Sequence[Event]) -> bool:
    return len(raws) == len(events) and all(json_equal(raw, encode_event(e)) for raw, e in zip(raws, events, strict=True))


@PROPERTIES
@given(header_lines(), S.sessions())
def test_inv_jsonl_2_decode_of_encode_gives_back_header_and_events(header: JsonObject, builder: SessionBuilder) -> None:
    events = builder.state.events
    text = jsonl_c.encode_jsonl(header, events)
    assert text.endswith("\n") and text.count("\n") == len(events) + 1
    decoded = jsonl_c.decode_jsonl(text)
    assert not isinstance(decoded, Violation), decoded
    assert not decoded.dropped_torn_tail
    assert json_equal(decoded.header, header)
    assert _same_events(decoded.events, events)
    # Loading reads back the very same events (then closes an open turn, which appends only).
    loaded = jsonl_c.load_session(text)
    assert isinstance(loaded, LoadedSession), loaded
    assert loaded.state.events[: len(events)] == events
    assert loaded.state.events[len(events) :] == loaded.closers


@CHEAP
@given(header_lines(), S.sessions(max_actions=12), st.data())
def test_inv_jsonl_3_torn_tail_is_dropped_at_every_cut_of_the_last_line(
    header: JsonObject, builder: SessionBuilder, data: st.DataObject
) -> None:
    events = builder.state.events
    text = jsonl_c.encode_jsonl(header, events)
    lines = text.split("\n")[:-1]
    complete = "".join(line + "\n" for line in lines[:-1])
    last = lines[-1]
    for cut in range(len(last) + 1):
        decoded = jsonl_c.decode_jsonl(complete + last[:cut])
        if not events:
            # Only the header line exists, and it is the one torn: nothing complete is left.
            assert isinstance(decoded, Violation) and decoded.code == Code.JSONL_HEADER_MISSING
            continue
        assert not isinstance(decoded, Violation), (cut, decoded)
        assert decoded.dropped_torn_tail == (cut > 0)
        assert json_equal(decoded.header, header)
        assert _same_events(decoded.events, events[:-1])
    if events:
        # Loading a torn log gives the session of the complete lines, repaired.
        cut = data.draw(st.integers(0, len(last)), label="cut")
        loaded = jsonl_c.load_session(complete + last[:cut])
        assert isinstance(loaded, LoadedSession), loaded
        assert loaded.dropped_torn_tail == (cut > 0)
        assert loaded.state.events == (*events[:-1], *repair_c.interrupted_turn_closers(events[:-1]))


KNOWN_CORRUPT = ("", " ", "[]", "null", "1", '"x"', "{", '{"a":NaN}', '{"a":-Infinity}', "\ufeff{}", "{'a': 1}")
"""Complete lines that are not one JSON object as ``JSON.parse`` reads them: not JSON, not an object, BOM, NaN."""


def is_json_object(line: str) -> bool:
    """An independent reading of INV-JSONL-4 for drawn text: one JSON object (CR is whitespace, no constants)."""

    def no_constant(name: str) -> object:
        raise ValueError(name)

    try:
        return isinstance(json.loads(line, parse_constant=no_constant), dict)
    except (ValueError, RecursionError):
        return False


DRAWN_CORRUPT_LINES = st.text(max_size=20).filter(lambda t: not is_json_object(t))


@PROPERTIES
@given(header_lines(), S.sessions(min_actions=1, max_actions=15), DRAWN_CORRUPT_LINES, st.data())
def test_inv_jsonl_4_a_corrupt_committed_line_refuses_the_log_and_an_uncommitted_one_is_dropped(
    header: JsonObject, builder: SessionBuilder, drawn: str, data: st.DataObject
) -> None:
    """Refused naming the line when the header is corrupt or a later turn/end proves it committed;
    otherwise the reader keeps exactly the rows before it."""
    assume("\n" not in drawn)
    lines = jsonl_c.encode_jsonl(header, builder.state.events).split("\n")[:-1]
    index = data.draw(st.integers(0, len(lines) - 1), label="line index")
    committed = index == 0 or any('"type":"turn/end"' in line for line in lines[index + 1 :])
    for corrupt in (*KNOWN_CORRUPT, drawn):
        text = "".join((corrupt if i == index else line) + "\n" for i, line in enumerate(lines))
        decoded = jsonl_c.decode_jsonl(text)
        if committed:
            for result in (decoded, jsonl_c.load_session(text)):
                assert isinstance(result, Violation), (corrupt, result)
                assert result.code == Code.JSONL_MALFORMED_LINE, (corrupt, result)
                assert result.message.startswith(f"line {index + 1} "), (corrupt, result)
        else:
            assert isinstance(decoded, DecodedLog), (corrupt, decoded)
            assert decoded.dropped_from_line == index + 1 and len(decoded.events) == index - 1


@PROPERTIES
@given(header_lines(), cut_logs())
def test_inv_jsonl_8_reload_after_repair_is_stable(header: JsonObject, events: tuple[Event, ...]) -> None:
    loaded = jsonl_c.load_session(jsonl_c.encode_jsonl(header, events))
    assert isinstance(loaded, LoadedSession), loaded
    assert loaded.closers == repair_c.interrupted_turn_closers(events)
    assert loaded.state.trace.open_turn is None and loaded.state.trace.open_step is None
    again = jsonl_c.load_session(jsonl_c.encode_jsonl(loaded.header, loaded.state.events))
    assert isinstance(again, LoadedSession), again
    assert again.closers == ()
    assert again.state == loaded.state
    assert json_equal(again.header, loaded.header)
    event("repaired" if loaded.closers else "already closed")


def _trace_after(events: Sequence[Event]) -> TraceState:
    trace = TraceState()
    for e in events:
        step = trace_c.trace_transition(trace, e)
        assert not isinstance(step, Violation), step
        trace = step
    return trace


@PROPERTIES
@given(cut_logs())
def test_inv_repair_5_repair_is_idempotent_and_its_output_passes_the_trace_rules(events: tuple[Event, ...]) -> None:
    closers = repair_c.interrupted_turn_closers(events)
    # Deterministic: the same log always gets the same closers.
    assert repair_c.interrupted_turn_closers(events) == closers
    repaired = (*events, *closers)
    # The closers are ordinary appends to the session: every rule of INV-LOG/SURF/TRACE/COMPACT holds.
    state: SessionState | Violation = log_c.fold_session([encode_event(e) for e in events])
    assert isinstance(state, SessionState), state
    for closer in closers:
        state = log_c.append_event(state, closer)
        assert isinstance(state, SessionState), state
    assert state.events == repaired
    # The trace rules alone accept the repaired log, and leave nothing open.
    trace = _trace_after(repaired)
    assert trace.open_turn is None and trace.open_step is None and not trace.step_calls
    # Idempotent: repairing the repaired log adds nothing.
    assert repair_c.interrupted_turn_closers(repaired) == ()
    event(f"{len(closers)} closer(s)")


# -- the v0 edge ----------------------------------------------------------------------------------


def legacy_forms_in(events: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every legacy form of N1–N5 and N7 found in ``events`` (empty for a clean v1 log).  A
    non-canonical header snapshot is no legacy form: the edge keeps snapshots as written."""
    found: list[str] = []
    for e in events:
        type_, data = e.get("type"), e.get("data")
        if type_ == "steering/message" or type_ in COMPACT_RENAMES:
            found.append(f"type {type_}")
        if not isinstance(data, Mapping):
            continue
        if type_ == "turn/start" and "trigger" in data:
            found.append("turn/start trigger")
        reason = data.get("reason")
        if type_ == "turn/end" and isinstance(reason, Mapping):
            kind = reason.get("kind")
            if kind == "disposed" or (kind == "aborted" and "reason" not in reason):
                found.append(f"turn/end reason {kind}")
            if kind == "error" and ("failure" in reason or "step" in reason or "error" not in reason):
                found.append("turn/end legacy error")
        if type_ == "user/message" and "id" not in data:
            found.append("pre-identity user/message")
        if type_ in ("assistant/message", "tool/result") and "message" not in data:
            found.append(f"pre-identity {type_}")
        header = data.get("header")
        if type_ == "request/header" and isinstance(header, Mapping) and "messagePrefix" in header:
            found.append("messagePrefix")
    return found


@PROPERTIES
@given(S.v0_logs())
def test_inv_legacy_5_inv_legacy_6_inv_legacy_8_v0_edge_converts_to_the_expected_clean_v1_log(case: S.V0Case) -> None:
    for form in sorted(case.forms):
        event(form)
    assert legacy_forms_in(case.v0.events) or not case.forms
    upgraded = legacy_c.upgrade_v0(case.v0)
    assert isinstance(upgraded, StoredLog), upgraded
    # INV-LEGACY-5: exactly the enumerated normalisations (the expected log is the v1 session the
    # v0 log was written from, with the ids the edge mints for pre-identity messages).
    assert json_equal(upgraded.header, case.expected.header)
    assert_same_json_events(upgraded.events, case.expected.events)
    # INV-LEGACY-6: it validates as v1.
    assert isinstance(log_c.fold_session(upgraded.events), SessionState)
    # INV-LEGACY-8: no legacy form survives.
    assert legacy_forms_in(upgraded.events) == []


@PROPERTIES
@given(S.v0_logs())
def test_inv_legacy_7_v0_edge_is_idempotent(case: S.V0Case) -> None:
    once = legacy_c.upgrade_v0(case.v0)
    assert isinstance(once, StoredLog), once
    assert legacy_c.upgrade_v0(once) == once
    # Stronger: the normalisations themselves are idempotent, even on a log still labelled v0.
    relabelled = StoredLog(case.v0.header, once.events)
    again = legacy_c.upgrade_v0(relabelled)
    assert isinstance(again, StoredLog), again
    assert_same_json_events(again.events, once.events)
    # And deterministic.
    assert legacy_c.upgrade_v0(case.v0) == once


@PROPERTIES
@given(S.v0_logs())
def test_inv_jsonl_7_inv_legacy_6_loading_a_v0_file_gives_the_upgraded_repaired_session(case: S.V0Case) -> None:
    text = "".join(encode_line(json_thaw(x)) + "\n" for x in (case.v0.header, *case.v0.events))
    loaded = jsonl_c.load_session(text)
    assert isinstance(loaded, LoadedSession), loaded
    assert loaded.header.get("version") == 1
    n = len(case.expected.events)
    assert_same_json_events([encode_event(e) for e in loaded.state.events[:n]], case.expected.events)
    assert loaded.state.events[n:] == loaded.closers


def json_thaw(value: object) -> object:
    """A frozen JSON value as plain ``dict``/``list``."""
    if isinstance(value, Mapping):
        return {k: json_thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [json_thaw(v) for v in value]
    return value


def _v0(*events: dict[str, Any]) -> StoredLog:
    header = as_object(freeze({"type": "session", "version": 0, "id": "s", "createdAt": 0, "delegationDepth": 0}))
    assert header is not None
    return StoredLog(header, tuple(e for e in (as_object(freeze(x)) for x in events) if e is not None))


COMPACT_START = {"compactionId": "k1", "turn": None}
"""A ``compaction/start`` payload valid in v0 and v1 alike."""


@pytest.mark.parametrize("ignorable", [False, True])
def test_inv_legacy_8_compact_rename_does_not_depend_on_the_payload(ignorable: bool) -> None:
    """N7 renames every ``compact/*`` event before its payload is read: a well-formed one becomes
    ``compaction/start``; one whose data is not an object is refused as a malformed source of the
    renamed type (not as an unknown type, and never passed through as ``compact/start``, even
    ignorable)."""
    envelope: dict[str, Any] = {"ignorable": True} if ignorable else {}
    upgraded = legacy_c.upgrade_v0(_v0({"type": "compact/start", "seq": 0, "time": 0, "data": COMPACT_START, **envelope}))
    assert isinstance(upgraded, StoredLog), upgraded
    assert upgraded.events[0].get("type") == "compaction/start"
    refused = legacy_c.upgrade_v0(_v0({"type": "compact/start", "seq": 0, "time": 0, "data": None, **envelope}))
    assert isinstance(refused, Violation) and refused.code is Code.LEGACY_SOURCE_INVALID, refused
    assert "compaction/start" in refused.message


def test_inv_legacy_8_v1_equivalent_of_the_compact_case_is_valid() -> None:
    """The renamed event is judged as the v1 event it became: valid with its released payload,
    refused for the payload with ``data: null``."""
    raw = {"type": "compaction/start", "seq": 0, "time": 0, "data": COMPACT_START}
    assert isinstance(log_c.append_event(EMPTY_SESSION, raw), SessionState)
    refused = log_c.append_event(EMPTY_SESSION, {**raw, "data": None})
    assert isinstance(refused, Violation) and refused.code is Code.PAYLOAD_INVALID


def test_inv_legacy_8_unconvertible_ignorable_steering_message_is_refused_not_passed_through() -> None:
    """``normalise_event`` leaves a non-object-data ``steering/message`` untouched; with ``ignorable: true``
    v1 validation accepts it as an unknown ignorable type, so a legacy form reaches the v1 output."""
    raw: dict[str, Any] = {"type": "steering/message", "seq": 0, "time": 0, "data": [1], "ignorable": True}
    upgraded = legacy_c.upgrade_v0(_v0(raw))
    assert isinstance(upgraded, Violation) or legacy_forms_in(upgraded.events) == []
