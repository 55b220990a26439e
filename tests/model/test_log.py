"""INV-LOG: the event envelope, lossless JSON, contiguity, vocabulary, message shapes and seeding."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from model_cases import (
    T0,
    assistant_data,
    call_data,
    code_of,
    ev,
    opened,
    refusal,
    result_data,
    session,
    title_data,
    user,
)

from sessionlog_spec.contracts.jsonl import load_session
from sessionlog_spec.contracts.log import append_event, decode_event, seed_session
from sessionlog_spec.model.event import Append, Event, Replace, encode_event
from sessionlog_spec.model.json_value import MAX_SAFE_INTEGER, json_equal, thaw
from sessionlog_spec.model.session import EMPTY_SESSION, END_SEED, SessionState
from sessionlog_spec.model.violation import Code, Violation

TITLE = title_data("Fix the parser")


def title(seq: int = 0, **envelope: Any) -> dict[str, Any]:
    """A log-only event valid anywhere: a title the user typed (it cites no message)."""
    return ev("session/title", seq, dict(TITLE), **envelope)


# -- INV-LOG-1: a closed envelope --------------------------------------------------------------------


def test_inv_log_1_minimal_envelope_is_accepted() -> None:
    """``{type, seq, time, data}`` decodes into an event with no optional members."""
    event = decode_event(title(3, time=9))
    assert isinstance(event, Event)
    assert (event.type, event.seq, event.time, thaw(event.data)) == ("session/title", 3, 9, TITLE)
    assert (event.ignorable, event.surface_op, event.source_event_seqs) == (False, None, None)


def test_inv_log_1_optional_members_are_accepted() -> None:
    """``ignorable``, ``surfaceOp`` and ``sourceEventSeqs`` are the three optional members."""
    event = decode_event({**user(5), "ignorable": True, "sourceEventSeqs": [1, 2]})
    assert isinstance(event, Event)
    assert (event.ignorable, event.surface_op, event.source_event_seqs) == (True, Append(), (1, 2))


@pytest.mark.parametrize("raw", [[], "an event", None, 7, ["session/title", 0, 0, {}]], ids=repr)
def test_inv_log_1_non_object_is_refused(raw: object) -> None:
    """An event that is not a JSON object is refused before anything else is read."""
    assert code_of(decode_event(raw)) is Code.ENVELOPE_NOT_OBJECT


@pytest.mark.parametrize("key", ["id", "turn", "source_event_seqs", "surfaceop", "meta"])
def test_inv_log_1_unknown_envelope_key_is_refused(key: str) -> None:
    """A member outside the seven envelope keys is refused, whatever its spelling."""
    assert code_of(decode_event({**title(), key: 1})) is Code.ENVELOPE_UNKNOWN_KEY


@pytest.mark.parametrize("key", ["type", "seq", "time", "data"])
def test_inv_log_1_missing_required_key_is_refused(key: str) -> None:
    """Each of the four required members must be present (``data: null`` is present)."""
    raw = title()
    del raw[key]
    assert code_of(decode_event(raw)) is Code.ENVELOPE_MISSING_KEY
    assert isinstance(decode_event({**title(), "data": None}), Event)


def test_inv_log_1_unknown_key_is_reported_before_a_missing_key() -> None:
    """The envelope checks run in order: unknown keys first, then missing keys."""
    raw = {**title(), "extra": True}
    del raw["data"]
    assert code_of(decode_event(raw)) is Code.ENVELOPE_UNKNOWN_KEY


@pytest.mark.parametrize("type_", ["", None, 3, ["turn/start"]], ids=repr)
def test_inv_log_1_type_must_be_a_non_empty_string(type_: object) -> None:
    """``type`` is a non-empty string."""
    assert code_of(decode_event({**title(), "type": type_})) is Code.ENVELOPE_BAD_TYPE


# -- INV-LOG-2: seq and time are safe naturals ----------------------------------------------------------


@pytest.mark.parametrize("seq", [0, 1, MAX_SAFE_INTEGER])
def test_inv_log_2_safe_natural_seq_is_accepted(seq: int) -> None:
    """Any seq from 0 to 2^53 − 1 decodes (contiguity is a separate rule)."""
    event = decode_event(title(seq))
    assert isinstance(event, Event) and event.seq == seq


@pytest.mark.parametrize("seq", [-1, MAX_SAFE_INTEGER + 1, "3", True, 1.5, None], ids=repr)
def test_inv_log_2_seq_outside_safe_naturals_is_refused(seq: object) -> None:
    """A negative, unsafe, fractional, string, boolean or null seq is refused."""
    assert code_of(decode_event({**title(), "seq": seq})) is Code.ENVELOPE_BAD_SEQ


@pytest.mark.parametrize("time", [0, T0, MAX_SAFE_INTEGER, -1, -MAX_SAFE_INTEGER])
def test_inv_log_2_safe_integer_time_is_accepted(time: int) -> None:
    """Times are epoch milliseconds, anywhere in the safe range, before the epoch included."""
    event = decode_event(title(time=time))
    assert isinstance(event, Event) and event.time == time


@pytest.mark.parametrize(
    "time", [-0.0, MAX_SAFE_INTEGER + 1, -MAX_SAFE_INTEGER - 1, T0 + 0.5, "2026-07-13T10:00:00Z", False], ids=repr
)
def test_inv_log_2_time_outside_safe_integers_is_refused(time: object) -> None:
    """A negative zero, unsafe, fractional, string or boolean time is refused."""
    assert code_of(decode_event({**title(), "time": time})) is Code.ENVELOPE_BAD_TIME


def test_inv_log_2_bad_seq_is_reported_before_bad_time() -> None:
    """The seq is checked before the time."""
    assert code_of(decode_event({**title(), "seq": -1, "time": -1})) is Code.ENVELOPE_BAD_SEQ


def test_inv_log_2_time_need_not_increase() -> None:
    """Nothing orders times: an event may carry an earlier time than its predecessor."""
    state = session([title(0, time=T0), title(1, time=T0 - 1000)])
    assert [e.time for e in state.events] == [T0, T0 - 1000]


# -- INV-LOG-3: ignorable is absent or true ----------------------------------------------------------------


@pytest.mark.parametrize("value", [False, 1, "true", None, {}], ids=repr)
def test_inv_log_3_ignorable_other_than_true_is_refused(value: object) -> None:
    """``ignorable`` has one spelling: ``true``."""
    assert code_of(decode_event({**title(), "ignorable": value})) is Code.ENVELOPE_BAD_IGNORABLE


def test_inv_log_3_ignorable_true_is_kept() -> None:
    """``ignorable: true`` decodes as an ignorable event and encodes back."""
    event = decode_event(title(ignorable=True))
    assert isinstance(event, Event) and event.ignorable
    assert encode_event(event)["ignorable"] is True


# -- INV-LOG-4: lossless JSON --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        math.nan, math.inf, -math.inf, -0.0, MAX_SAFE_INTEGER + 1, -MAX_SAFE_INTEGER - 1,
        {1: "x"}, {"a": {2, 3}}, b"x", (1, math.nan),
    ],
    ids=repr,
)
def test_inv_log_4_lossy_data_is_refused(value: object) -> None:
    """NaN, ±infinity, -0, unsafe integers, non-string keys and non-JSON types are refused anywhere in data."""
    assert code_of(decode_event(title(0) | {"data": {"nested": [value]}})) is Code.JSON_NOT_LOSSLESS


@pytest.mark.parametrize("value", [0.0, 0.5, -1.25, MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER, "", None, [], {}], ids=repr)
def test_inv_log_4_lossless_values_are_accepted(value: object) -> None:
    """Finite floats other than -0, safe integers, strings, null and empty containers are lossless."""
    event = decode_event(title(0) | {"data": {"v": value}})
    assert isinstance(event, Event)
    assert json_equal(encode_event(event)["data"], {"v": value})


def test_inv_log_4_lossless_check_covers_surface_metadata() -> None:
    """``surfaceOp`` and ``sourceEventSeqs`` are checked for lossless JSON before their shapes."""
    assert code_of(decode_event({**user(2), "surfaceOp": {"op": "replace", "start": -0.0, "end": 0}})) is Code.JSON_NOT_LOSSLESS
    assert code_of(decode_event({**user(2), "sourceEventSeqs": [math.nan]})) is Code.JSON_NOT_LOSSLESS


def test_inv_log_4_lossless_check_runs_after_the_envelope_numbers() -> None:
    """A bad ignorable is reported before lossy data."""
    raw = {**title(), "ignorable": False, "data": math.nan}
    assert code_of(decode_event(raw)) is Code.ENVELOPE_BAD_IGNORABLE


# -- INV-LOG-5: contiguity -----------------------------------------------------------------------------------


def test_inv_log_5_append_adds_one_event_at_seq_length() -> None:
    """An accepted append puts the event at seq = length and keeps the earlier events."""
    before = session([title(0), title(1)])
    after = append_event(before, title(2))
    assert isinstance(after, SessionState)
    assert [e.seq for e in after.events] == [0, 1, 2]
    assert after.events[:2] == before.events


@pytest.mark.parametrize("seq", [0, 1, 3, 7])
def test_inv_log_5_append_at_another_seq_is_refused(seq: int) -> None:
    """After two events only seq 2 is accepted: a repeat or a gap is refused."""
    assert refusal(session([title(0), title(1)]), title(seq)) is Code.SEQ_NOT_CONTIGUOUS


def test_inv_log_5_seed_must_start_at_zero_and_have_no_gap() -> None:
    """A seed is contiguous from 0; the violation names the seed index."""
    gap = seed_session([title(0), title(2)])
    assert code_of(gap) is Code.SEQ_NOT_CONTIGUOUS
    assert isinstance(gap, Violation) and gap.message.startswith("seed index 1:")
    assert code_of(seed_session([title(1)])) is Code.SEQ_NOT_CONTIGUOUS


def test_inv_log_5_contiguity_is_checked_before_the_vocabulary() -> None:
    """A duplicated seq is reported even on an event of an unknown type."""
    assert refusal(session([title(0)]), ev("made/up", 0, {})) is Code.SEQ_NOT_CONTIGUOUS


# -- INV-LOG-6: vocabulary -------------------------------------------------------------------------------------


@pytest.mark.parametrize("type_", ["assistant/attempt", "system/message", "developer/message", "turn/begin"])
def test_inv_log_6_unknown_type_without_ignorable_is_refused(type_: str) -> None:
    """A type outside the v1 vocabulary (later formats, typos) needs ``ignorable: true``."""
    assert refusal(EMPTY_SESSION, ev(type_, 0, {})) is Code.UNKNOWN_EVENT_TYPE


def test_inv_log_6_unknown_ignorable_type_is_kept() -> None:
    """An unknown type marked ignorable is accepted and kept in the log, off the surface."""
    state = session([ev("assistant/attempt", 0, {"stream": []}, ignorable=True)])
    assert [e.type for e in state.events] == ["assistant/attempt"]
    assert state.surface.nodes == ()


@pytest.mark.parametrize(
    "type_, data",
    [
        ("model/selection", {"provider": "deepseek", "model": "deepseek-chat"}),
        ("session-log-deepseek/delivery-accepted", {"sessionId": "s", "throughSeq": 0}),
        ("subagent/model-selection-policy", {"allowedModels": [{"provider": "deepseek", "model": "deepseek-chat"}]}),
    ],
)
def test_inv_log_6_late_v0_inventory_types_are_known(type_: str, data: dict[str, Any]) -> None:
    """The three types of the frozen v0 inventory beyond the baseline are v1 vocabulary: with their
    released payload they are accepted without ``ignorable``, and without it they are refused for
    the payload, not as unknown types."""
    assert refusal(EMPTY_SESSION, ev(type_, 0, data)) is None
    assert refusal(EMPTY_SESSION, ev(type_, 0, {"unexpected": 1})) is Code.PAYLOAD_INVALID


def test_inv_log_6_vocabulary_is_checked_before_the_payload() -> None:
    """An unknown type is refused as unknown even when it also carries surface metadata."""
    assert refusal(EMPTY_SESSION, ev("system/message", 0, {}, surfaceOp="append")) is Code.UNKNOWN_EVENT_TYPE


# -- INV-LOG-7: user messages ---------------------------------------------------------------------------------


def test_inv_log_7_identified_user_message_is_accepted() -> None:
    """A user message with id, role, source kind and typed content blocks joins the surface."""
    state = session([user(0)])
    assert state.surface.nodes == (0,)


@pytest.mark.parametrize(
    "change",
    [
        {"id": ""},
        {"id": 7},
        {"role": "assistant"},
        {"source": {}},
        {"source": {"kind": ""}},
        {"source": "user"},
        {"content": "hi"},
        {"content": [{"text": "no type"}]},
        {"content": ["hi"]},
    ],
    ids=repr,
)
def test_inv_log_7_malformed_user_message_is_refused(change: dict[str, Any]) -> None:
    """Each broken part of the message is refused."""
    raw = user(0)
    raw["data"] = {**raw["data"], **change}
    assert refusal(EMPTY_SESSION, raw) is Code.USER_MESSAGE_INVALID


def test_inv_log_7_user_message_without_id_is_refused() -> None:
    """A pre-identity user message (no id) is refused; only the v0 edge may mint ids."""
    raw = user(0)
    del raw["data"]["id"]
    assert refusal(EMPTY_SESSION, raw) is Code.USER_MESSAGE_INVALID


def test_inv_log_7_shape_is_checked_before_the_surface() -> None:
    """A malformed user message is refused for its shape even without a surfaceOp."""
    raw = user(0, op=None)
    raw["data"]["role"] = "system"
    assert refusal(EMPTY_SESSION, raw) is Code.USER_MESSAGE_INVALID


# -- INV-LOG-8: assistant messages ---------------------------------------------------------------------------


def _assistant(**change: Any) -> tuple[SessionState, dict[str, Any]]:
    data = assistant_data(1, 1, ["c1", "c2"])
    data.update(change)
    return session(opened()), ev("assistant/message", 2, data, surfaceOp="append")


def test_inv_log_8_assistant_message_is_accepted_with_usage_and_interrupted() -> None:
    """``usage`` and ``interrupted: true`` are the optional members."""
    state, raw = _assistant(usage={"inputTokens": 10, "outputTokens": 3}, interrupted=True)
    after = append_event(state, raw)
    assert isinstance(after, SessionState) and after.surface.nodes == (2,) and after.pending_calls == 2


@pytest.mark.parametrize(
    "change",
    [
        {"extra": 1}, {"turn": -1}, {"step": "1"}, {"step": 1.5}, {"interrupted": False}, {"message": None},
        {"usage": {"inputTokens": 1}},
    ],
    ids=repr,
)
def test_inv_log_8_malformed_assistant_data_is_refused(change: dict[str, Any]) -> None:
    """Unknown members, turn and step that are not counts, ``interrupted: false``, a missing message
    and incomplete usage are refused."""
    state, raw = _assistant(**change)
    assert refusal(state, raw) is Code.ASSISTANT_MESSAGE_INVALID


@pytest.mark.parametrize("change", [{"turn": 0}, {"step": 0}], ids=repr)
def test_inv_log_8_zero_turn_or_step_is_refused_by_the_trace(change: dict[str, Any]) -> None:
    """Turn and step are counts in the payload (0 is well formed); a 0 names no open step, so the
    trace refuses it."""
    state, raw = _assistant(**change)
    assert refusal(state, raw) is Code.EVENT_OUTSIDE_STEP


@pytest.mark.parametrize(
    "path, value",
    [
        (("role",), "user"),
        (("source", "kind"), "user"),
        (("source", "provider"), ""),
        (("source", "model"), None),
        (("content", 1, "id"), ""),
        (("content", 1, "arguments"), {"path": "a.py"}),
        (("content", 1, "name"), 3),
    ],
    ids=lambda v: repr(v),
)
def test_inv_log_8_malformed_assistant_message_is_refused(path: tuple[Any, ...], value: object) -> None:
    """Role, model source with provider and model, and tool-call blocks with ids and raw arguments."""
    state, raw = _assistant()
    target = raw["data"]["message"]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    assert refusal(state, raw) is Code.ASSISTANT_MESSAGE_INVALID


def test_inv_log_8_a_repeated_call_id_is_a_relationship_not_a_payload_rule() -> None:
    """Two blocks with one id pass the payload rules; the relationship rules refuse the second advert."""
    state, raw = _assistant()
    raw["data"]["message"]["content"][2]["id"] = "c1"
    assert refusal(state, raw) is Code.TOOL_CALL_ID_REPEATED


# -- INV-LOG-9: tool results ---------------------------------------------------------------------------------


def _after_call() -> SessionState:
    asked = ev("assistant/message", 2, assistant_data(1, 1, ["c1"]), surfaceOp="append")
    return session([*opened(), asked, ev("tool/call", 3, call_data(1, 1, "c1"))])


def _result(**change: Any) -> dict[str, Any]:
    data = result_data(1, 1, "c1")
    data.update(change)
    return ev("tool/result", 4, data, surfaceOp="append")


def test_inv_log_9_tool_result_with_error_and_meta_is_accepted() -> None:
    """``error: {name, code}`` and any JSON ``meta`` are the optional members."""
    after = append_event(_after_call(), _result(error={"name": "E", "code": "E_X"}, meta={"exit": 1}))
    assert isinstance(after, SessionState) and after.surface.nodes == (2, 4) and after.pending_calls == 0


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d.update(extra=1),
        lambda d: d.update(step=-1),
        lambda d: d.update(error={"name": "E"}),
        lambda d: d.update(error={"name": "E", "code": 3}),
        lambda d: d["message"].update(role="tool"),
        lambda d: d["message"]["source"].update(kind="user"),
        lambda d: d["message"]["source"].update(callId=""),
        lambda d: d["message"]["content"][0].update(toolCallId="c2"),
        lambda d: d["message"]["content"][0].update(type="text"),
        lambda d: d["message"]["content"][0].update(isError="yes"),
        lambda d: d["message"]["content"][0].update(content="ok"),
        lambda d: d["message"]["content"].append(d["message"]["content"][0]),
        lambda d: d["message"].update(content=[]),
    ],
    ids=[
        "extra-member", "step-negative", "error-without-code", "error-code-number", "role-tool", "source-user",
        "empty-call-id", "mismatched-call-id", "text-block", "is-error-string", "content-string",
        "two-blocks", "no-block",
    ],
)
def test_inv_log_9_malformed_tool_result_is_refused(mutate: Any) -> None:
    """Exactly one tool-result block with array content, answering the call id its tool source names."""
    raw = _result()
    mutate(raw["data"])
    assert refusal(_after_call(), raw) is Code.TOOL_RESULT_INVALID


def test_inv_log_9_zero_step_is_refused_by_the_trace() -> None:
    """Step is a count in the payload (0 is well formed); a 0 names no open step, so the trace refuses it."""
    raw = _result()
    raw["data"]["step"] = 0
    assert refusal(_after_call(), raw) is Code.EVENT_OUTSIDE_STEP


# -- INV-LOG-10: the end-of-seed marker ---------------------------------------------------------------------


def test_inv_log_10_seed_is_closed_by_one_marker_timed_like_its_last_event() -> None:
    """The marker goes at seq = seed length, with data ``{}`` and the last seed event's time."""
    state = seed_session([title(0, time=5), title(1, time=9)])
    assert isinstance(state, SessionState)
    marker = state.events[-1]
    assert (len(state.events), marker.type, marker.seq, marker.time, dict(marker.data)) == (3, END_SEED, 2, 9, {})  # type: ignore[arg-type]


def test_inv_log_10_empty_seed_gets_a_marker_at_zero() -> None:
    """An empty seed becomes a one-event log: the marker at seq 0, time 0."""
    state = seed_session([])
    assert isinstance(state, SessionState)
    assert [(e.type, e.seq, e.time) for e in state.events] == [(END_SEED, 0, 0)]


def test_inv_log_10_seed_already_ending_with_a_marker_gets_no_second_one() -> None:
    """Seeding a log that ends with its marker keeps it as is."""
    raws = [title(0, time=5), ev(END_SEED, 1, {}, time=5)]
    state = seed_session(raws)
    assert isinstance(state, SessionState)
    assert [e.type for e in state.events] == ["session/title", END_SEED]


def test_inv_log_10_seeding_a_seeded_log_again_adds_nothing() -> None:
    """Re-seeding the events of a seeded session is idempotent."""
    first = seed_session([title(0)])
    assert isinstance(first, SessionState)
    second = seed_session([encode_event(e) for e in first.events])
    assert isinstance(second, SessionState) and second.events == first.events


@pytest.mark.parametrize(
    "data", [{"inherited": True}, {"inherited": False}, {"inherited": 1}, {"seedLength": 3}, [], None, "x"], ids=repr
)
def test_inv_log_10_malformed_marker_is_refused(data: object) -> None:
    """The marker carries ``{}`` and nothing else (the released reader refuses any member)."""
    assert refusal(EMPTY_SESSION, ev(END_SEED, 0, data)) is Code.END_SEED_INVALID
    assert code_of(seed_session([title(0), ev(END_SEED, 1, data)])) is Code.END_SEED_INVALID


# -- INV-LOG-11: a rejected candidate changes nothing ------------------------------------------------------


def _observable(state: SessionState) -> object:
    return ([encode_event(e) for e in state.events], state.surface, state.trace, state.pending_calls, state.header)


def test_inv_log_11_refused_append_leaves_the_session_as_it_was() -> None:
    """After a refusal the same seq is still free and the session still equals its copy."""
    state = session([*opened(), ev("assistant/message", 2, assistant_data(1, 1, ["c1"]), surfaceOp="append")])
    snapshot = _observable(state)
    bad = ev("tool/result", 3, result_data(1, 1, "c1"), surfaceOp="append")  # no tool/call recorded
    assert refusal(state, bad) is Code.TOOL_RESULT_UNPAIRED
    assert _observable(state) == snapshot
    after = append_event(state, ev("tool/call", 3, call_data(1, 1, "c1")))
    assert isinstance(after, SessionState) and len(after.events) == 4


def test_inv_log_11_refused_seed_and_load_build_nothing() -> None:
    """A refused seed or load returns the violation, not a partial session."""
    assert isinstance(seed_session([title(0), title(1), ev("mode/set", 2, {})]), Violation)
    header = '{"type":"session","version":1,"id":"s","createdAt":0,"delegationDepth":0}\n'
    titled = json.dumps({"type": "session/title", "seq": 0, "time": 0, "data": TITLE})
    text = header + titled + '\n{"type":"mode/set","seq":1,"time":0,"data":{}}\n'
    assert code_of(load_session(text)) is Code.LEGACY_MODE_SET


# -- INV-LOG-12: accepted events are frozen and stored as given -------------------------------------------


def test_inv_log_12_stored_event_encodes_back_to_its_candidate() -> None:
    """The stored JSON form of an accepted event equals the candidate, optional members included."""
    raw = {**user(0), "ignorable": True}
    state = session([raw])
    assert encode_event(state.events[0]) == raw


def test_inv_log_12_stored_event_is_frozen_and_detached_from_the_candidate() -> None:
    """Changing the candidate afterwards does not change the log, and the stored data cannot be changed."""
    raw = user(0)
    state = session([raw])
    raw["data"]["content"][0]["text"] = "changed"
    stored = state.events[0].data
    assert isinstance(stored, dict) is False
    assert stored["content"][0]["text"] == "message 0"  # type: ignore[index,call-overload]
    with pytest.raises(TypeError):
        stored["id"] = "other"  # type: ignore[index]
    assert isinstance(stored["content"], tuple)  # type: ignore[index,call-overload]


def test_inv_log_12_surface_metadata_is_stored_decoded() -> None:
    """A replace surfaceOp and its sources are stored as a ``Replace`` and a tuple."""
    state = session([user(0), user(1, op={"op": "replace", "start": 0, "end": 0}, sourceEventSeqs=[0])])
    event = state.events[1]
    assert (event.surface_op, event.source_event_seqs) == (Replace(0, 0), (0,))


def test_inv_log_12_tool_result_payload_round_trips() -> None:
    """A whole tool step stores exactly what was appended."""
    raws = [
        *opened(),
        ev("assistant/message", 2, assistant_data(1, 1, ["c1"]), surfaceOp="append"),
        ev("tool/call", 3, call_data(1, 1, "c1")),
        ev("tool/result", 4, result_data(1, 1, "c1", is_error=True), surfaceOp="append", sourceEventSeqs=[3]),
    ]
    state = session(raws)
    assert [encode_event(e) for e in state.events] == raws
