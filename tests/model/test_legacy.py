"""INV-LEGACY: the v0-to-v1 edge refuses what it cannot convert and converts the rest by N1–N7 only.

``V0_LOG`` is a v0 log that needs every normalisation; ``V1_LOG`` is its v1 form, written out by
hand from the normalisation list in ``model/legacy.py``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from model_cases import PINNED, call_block, call_data, code_of, ev, refusal, replace, session

from sessionlog_spec.contracts.jsonl import load_session
from sessionlog_spec.contracts.legacy import upgrade_v0
from sessionlog_spec.contracts.log import fold_session, seed_session
from sessionlog_spec.model.json_value import JsonObject, freeze, json_equal, thaw
from sessionlog_spec.model.legacy import StoredLog
from sessionlog_spec.model.load import LoadedSession
from sessionlog_spec.model.session import EMPTY_SESSION, SessionState
from sessionlog_spec.model.violation import Code, Violation
from sessionlog_spec.suite.agent.builder import basic_header

SID = "s-0"
V0_HEADER: dict[str, Any] = {"type": "session", "version": 0, "id": SID, "createdAt": 0, "cwd": "/work", "delegationDepth": 0}
V1_HEADER: dict[str, Any] = {**V0_HEADER, "version": 1}


def txt(text: str) -> dict[str, Any]:
    """A text block."""
    return {"type": "text", "text": text}


def minted(seq: int) -> str:
    """The id the edge gives a pre-identity message at ``seq``."""
    return f"legacy-message:{SID}:{seq}"


def result_message(id_: str, text: str) -> dict[str, Any]:
    """A v1 tool-result message answering ``c1``."""
    block = {"type": "tool-result", "toolCallId": "c1", "content": [txt(text)], "isError": False}
    return {"id": id_, "role": "user", "source": {"kind": "tool", "callId": "c1"}, "content": [block]}


SUMMARY_MESSAGE = {"id": "sum13", "role": "user", "content": [txt("Summary")], "source": {"kind": "user"}}
FAILURE = {"message": "overloaded", "code": "E_OVERLOADED"}

V0_LOG: list[dict[str, Any]] = [
    ev("turn/start", 0, {"turn": 1, "trigger": "user"}),
    ev("user/message", 1, {"content": [txt("Fix it")], "source": {"kind": "user"}}, surfaceOp="append"),
    ev("step/start", 2, {"turn": 1, "step": 1}),
    ev("request/header", 3, {"header": {"config": PINNED, "system": "", "messagePrefix": []}, "reason": "initial"}),
    ev("assistant/message", 4, {"turn": 1, "step": 1, "content": [txt("Reading."), call_block("c1")], "provenance": PINNED},
       surfaceOp="append"),
    ev("tool/call", 5, call_data(1, 1, "c1")),
    ev("tool/result", 6, {"turn": 1, "step": 1, "callId": "c1", "content": [txt("long output")], "isError": False},
       surfaceOp="append"),
    ev("step/end", 7, {"turn": 1, "step": 1}),
    ev("steering/message", 8, {"turn": 1, "content": [txt("Also add a test")], "source": {"kind": "user"}}),
    ev("steering/message", 9, {"turn": 1, "message": {"id": "m9", "role": "user", "content": [txt("And docs")],
                                                      "source": {"kind": "user"}}}),
    ev("tool/result", 10, {"turn": 1, "step": 1, "callId": "c1", "content": [txt("[elided]")], "isError": False},
       surfaceOp=replace(6, 6), sourceEventSeqs=[6]),
    ev("compact/start", 11, {"compactionId": "k1", "turn": 1}),
    ev("compact/summary", 12, {"compactionId": "k1", "summary": [txt("Summary")]}),
    ev("user/message", 13, SUMMARY_MESSAGE, surfaceOp=replace(1, 10), sourceEventSeqs=[1, 4, 10]),
    ev("compact/end", 14, {"compactionId": "k1", "turn": 1}),
    ev("turn/end", 15, {"turn": 1, "reason": {"kind": "aborted"}}),
    ev("turn/start", 16, {"turn": 2}),
    ev("turn/end", 17, {"turn": 2, "reason": {"kind": "disposed"}}),
    ev("turn/start", 18, {"turn": 3}),
    ev("turn/end", 19, {"turn": 3, "reason": {"kind": "error", "step": 1, "failure": FAILURE}}),
    ev("turn/start", 20, {"turn": 4}),
    ev("turn/end", 21, {"turn": 4, "reason": {"kind": "error", "step": 1, "message": "boom"}}),
]

V1_LOG: list[dict[str, Any]] = [
    ev("turn/start", 0, {"turn": 1}),  # N1
    ev("user/message", 1, {"id": minted(1), "role": "user", "content": [txt("Fix it")], "source": {"kind": "user"}},
       surfaceOp="append"),  # N4
    V0_LOG[2],
    ev("request/header", 3, {"header": {"config": PINNED}, "reason": "initial"}),  # N5, N6
    ev("assistant/message", 4, {"turn": 1, "step": 1, "message": {
        "id": minted(4), "role": "assistant", "content": [txt("Reading."), call_block("c1")],
        "source": {"kind": "model", **PINNED},
    }}, surfaceOp="append"),  # N4
    V0_LOG[5],
    ev("tool/result", 6, {"turn": 1, "step": 1, "message": result_message(minted(6), "long output")}, surfaceOp="append"),  # N4
    V0_LOG[7],
    ev("user/message", 8, {"id": minted(8), "role": "user", "content": [txt("Also add a test")], "source": {"kind": "user"}},
       surfaceOp="append"),  # N3, bare
    ev("user/message", 9, {"id": "m9", "role": "user", "content": [txt("And docs")], "source": {"kind": "user"}},
       surfaceOp="append"),  # N3, wrapped
    ev("tool/result", 10, {"turn": 1, "step": 1, "message": result_message(minted(6), "[elided]")},
       surfaceOp=replace(6, 6), sourceEventSeqs=[6]),  # N4, id of the replaced message
    ev("compaction/start", 11, {"compactionId": "k1", "turn": 1}),  # N7
    ev("compaction/summary", 12, {"compactionId": "k1", "summary": [txt("Summary")]}),  # N7
    V0_LOG[13],
    ev("compaction/end", 14, {"compactionId": "k1", "turn": 1}),  # N7
    ev("turn/end", 15, {"turn": 1, "reason": {"kind": "aborted", "reason": {"kind": "legacy"}}}),  # N2
    V0_LOG[16],
    ev("turn/end", 17, {"turn": 2, "reason": {"kind": "aborted", "reason": {"kind": "disposed"}}}),  # N2
    V0_LOG[18],
    ev("turn/end", 19, {"turn": 3, "reason": {"kind": "error", "error": FAILURE}}),  # N2
    V0_LOG[20],
    ev("turn/end", 21, {"turn": 4, "reason": {"kind": "error", "error": {"message": "boom", "code": "UNKNOWN"}}}),  # N2
]


def stored(events: list[dict[str, Any]], header: dict[str, Any] = V0_HEADER) -> StoredLog:
    """A stored log as the edge's type declares it: a frozen header and frozen events."""
    return StoredLog(frozen(header), tuple(frozen(e) for e in events))


def frozen(value: dict[str, Any]) -> JsonObject:
    """A frozen JSON object."""
    result = freeze(value)
    assert not isinstance(result, dict)
    return result  # type: ignore[return-value]


def upgraded(events: list[dict[str, Any]], header: dict[str, Any] = V0_HEADER) -> StoredLog:
    """The edge's output for a log it must accept."""
    result = upgrade_v0(stored(events, header))
    assert isinstance(result, StoredLog), result
    return result


def with_event(event: dict[str, Any], at: int = 7) -> list[dict[str, Any]]:
    """``V0_LOG[:at]`` plus ``event`` at seq ``at`` (the rest of the log dropped)."""
    return [*V0_LOG[:at], {**event, "seq": at}]


def jsonl(header: dict[str, Any], events: list[dict[str, Any]]) -> str:
    """The stored JSONL text of a log."""
    return "".join(json.dumps(x) + "\n" for x in [header, *events])


HEADER_DELTA = ev("request/header-delta", 0, {"system": {"keepStart": 1, "keepEnd": 0, "insert": ["Be terse."]}})
FALLBACK = ev("request/header", 0, {"header": basic_header(), "reason": "fallback"})
MODE_SET = ev("mode/set", 0, {"mode": "plan"})


# -- INV-LEGACY-1: header deltas -------------------------------------------------------------------------


def test_inv_legacy_1_edge_refuses_a_header_delta() -> None:
    """A v0 log with a header delta is refused as a whole, naming its index."""
    result = upgrade_v0(stored(with_event(HEADER_DELTA)))
    assert isinstance(result, Violation) and result.code is Code.LEGACY_HEADER_DELTA
    assert "v0 index 7" in result.message


def test_inv_legacy_1_v1_paths_refuse_a_header_delta() -> None:
    """Append (even ignorable), seed and load of a v1 log refuse it too."""
    assert refusal(EMPTY_SESSION, HEADER_DELTA) is Code.LEGACY_HEADER_DELTA
    assert refusal(EMPTY_SESSION, {**HEADER_DELTA, "ignorable": True}) is Code.LEGACY_HEADER_DELTA
    assert code_of(seed_session([HEADER_DELTA])) is Code.LEGACY_HEADER_DELTA
    assert code_of(load_session(jsonl(V1_HEADER, [HEADER_DELTA]))) is Code.LEGACY_HEADER_DELTA
    assert code_of(load_session(jsonl(V0_HEADER, with_event(HEADER_DELTA)))) is Code.LEGACY_HEADER_DELTA


# -- INV-LEGACY-2: the fallback reason --------------------------------------------------------------------


def test_inv_legacy_2_edge_refuses_a_fallback_header() -> None:
    """A full snapshot written by the delta codec's fallback is refused."""
    assert code_of(upgrade_v0(stored(with_event(FALLBACK, at=4)))) is Code.LEGACY_FALLBACK_REASON


def test_inv_legacy_2_v1_paths_refuse_a_fallback_header() -> None:
    """Append, seed and load refuse it, before the rest of the payload is judged."""
    in_turn = session([ev("turn/start", 0, {"turn": 1})])
    assert refusal(in_turn, {**FALLBACK, "seq": 1}) is Code.LEGACY_FALLBACK_REASON
    broken = {**FALLBACK, "data": {"reason": "fallback", "header": None, "extra": 1}}
    assert refusal(EMPTY_SESSION, broken) is Code.LEGACY_FALLBACK_REASON
    assert code_of(seed_session([FALLBACK])) is Code.LEGACY_FALLBACK_REASON


# -- INV-LEGACY-3: mode/set ----------------------------------------------------------------------------------


def test_inv_legacy_3_edge_refuses_mode_set() -> None:
    """A v0 log with a ``mode/set`` is refused, on its own and on load."""
    assert code_of(upgrade_v0(stored(with_event(MODE_SET)))) is Code.LEGACY_MODE_SET
    assert code_of(load_session(jsonl(V0_HEADER, with_event(MODE_SET)))) is Code.LEGACY_MODE_SET


def test_inv_legacy_3_v1_paths_refuse_mode_set() -> None:
    """Append (even ignorable) and seed refuse it."""
    assert refusal(EMPTY_SESSION, MODE_SET) is Code.LEGACY_MODE_SET
    assert refusal(EMPTY_SESSION, {**MODE_SET, "ignorable": True}) is Code.LEGACY_MODE_SET
    assert code_of(seed_session([MODE_SET])) is Code.LEGACY_MODE_SET


def test_inv_legacy_3_refusal_comes_before_any_other_problem() -> None:
    """The whole log is scanned for refusals first: a later mode/set wins over an earlier v1 problem."""
    bad_turn = ev("turn/start", 0, {"turn": 5})
    assert code_of(upgrade_v0(stored([bad_turn, {**MODE_SET, "seq": 1}]))) is Code.LEGACY_MODE_SET


# -- INV-LEGACY-4: the frozen v0 inventory --------------------------------------------------------------------


@pytest.mark.parametrize("type_", ["assistant/attempt", "system/message", "goal/progress"])
def test_inv_legacy_4_edge_refuses_types_outside_the_inventory_even_ignorable(type_: str) -> None:
    """The edge cannot vouch for a type it does not know, marked ignorable or not."""
    for extra in ({}, {"ignorable": True}):
        assert code_of(upgrade_v0(stored(with_event({**ev(type_, 0, {}), **extra})))) is Code.LEGACY_UNKNOWN_TYPE


def test_inv_legacy_4_v1_reader_keeps_what_the_edge_refuses() -> None:
    """The same ignorable event is fine in a v1 log: v1 passes through the edge unchanged."""
    events = [ev("assistant/attempt", 0, {"stream": []}, ignorable=True)]
    log = stored(events, V1_HEADER)
    assert upgrade_v0(log) is log


# -- INV-LEGACY-5: only the enumerated normalisations ----------------------------------------------------------


def test_inv_legacy_5_edge_applies_exactly_the_normalisations() -> None:
    """Every event of the v0 log comes out as written by hand in ``V1_LOG``; the header says version 1."""
    result = upgraded(V0_LOG)
    assert thaw(result.header) == V1_HEADER
    out = [thaw(e) for e in result.events]
    assert out == V1_LOG
    assert all(json_equal(a, b) for a, b in zip(out, V1_LOG, strict=True))


def test_inv_legacy_5_edge_keeps_seqs_times_and_order() -> None:
    """Seq, time, ignorable and sources of each event are kept."""
    events = [{**e, "time": 1000 + 7 * i} for i, e in enumerate(V0_LOG)]
    result = upgraded(events)
    keys = ("seq", "time", "ignorable", "sourceEventSeqs")
    assert [[thaw(e.get(k)) for k in keys] for e in result.events] == [[e.get(k) for k in keys] for e in events]


def test_inv_legacy_5_edge_leaves_v1_shaped_events_alone() -> None:
    """Events already in v1 form are passed through as they are."""
    v1_shaped = [V1_LOG[0], V1_LOG[1], V1_LOG[2], V1_LOG[3]]
    assert [thaw(e) for e in upgraded(v1_shaped).events] == v1_shaped


def test_inv_legacy_5_error_without_a_message_is_not_guessed() -> None:
    """A legacy error reason with no message matches no normalisation; v1 then refuses it."""
    events = [ev("turn/start", 0, {"turn": 1}), ev("turn/end", 1, {"turn": 1, "reason": {"kind": "error", "step": 1}})]
    assert code_of(upgrade_v0(stored(events))) is Code.TURN_END_REASON_INVALID


# -- INV-LEGACY-6: the output validates as v1 ------------------------------------------------------------------


def test_inv_legacy_6_output_is_a_valid_v1_log() -> None:
    """The upgraded events fold as a v1 session with the expected surface."""
    state = fold_session(list(upgraded(V0_LOG).events))
    assert isinstance(state, SessionState)
    assert state.surface.nodes == (13, 8, 9)
    assert state.surface.replace_generation == 2


def test_inv_legacy_6_log_left_invalid_by_the_edge_is_refused_with_the_v1_code() -> None:
    """A malformed v0 message that no normalisation matches is refused as v1 would refuse it."""
    bare = ev("user/message", 0, {"content": [txt("no source")]}, surfaceOp="append")
    result = upgrade_v0(stored([bare]))
    assert isinstance(result, Violation) and result.code is Code.USER_MESSAGE_INVALID
    assert result.message.startswith("v0 index 0:")


def test_inv_legacy_6_loading_a_v0_log_gives_the_upgraded_session() -> None:
    """Load runs the edge, then validates: the session equals the fold of the hand-written v1 log."""
    # The stored header here has no messagePrefix: load hands the edge unfrozen events, on which N5
    # does not recognise the (list) prefix, so a v0 messagePrefix is refused on load.
    header_event = ev("request/header", 3, {"header": {"config": PINNED, "system": ""}, "reason": "initial"})
    result = load_session(jsonl(V0_HEADER, [*V0_LOG[:3], header_event, *V0_LOG[4:]]))
    expected = fold_session(V1_LOG)
    assert isinstance(result, LoadedSession) and isinstance(expected, SessionState)
    assert result.state == expected and result.closers == ()


# -- INV-LEGACY-7: the edge is a fixed point -----------------------------------------------------------------


def test_inv_legacy_7_upgrading_twice_is_upgrading_once() -> None:
    """The output is a v1 log, which the edge returns unchanged."""
    once = upgraded(V0_LOG)
    assert upgrade_v0(once) == once


def test_inv_legacy_7_normalising_an_already_normalised_v0_log_changes_nothing() -> None:
    """The hand-written v1 events, labelled v0, come out exactly as they went in."""
    assert [thaw(e) for e in upgraded(V1_LOG).events] == V1_LOG


# -- INV-LEGACY-8: no legacy forms survive -----------------------------------------------------------------


def _legacy_forms(events: tuple[JsonObject, ...]) -> list[str]:
    found = []
    for event in events:
        type_, data = event["type"], thaw(event["data"])
        assert isinstance(data, dict)
        if type_ == "steering/message" or str(type_).startswith("compact/"):
            found.append(str(type_))
        if "trigger" in data or "messagePrefix" in data.get("header", {}):
            found.append(f"{type_} member")
        reason = data.get("reason") if type_ == "turn/end" else None
        legacy_abort = isinstance(reason, dict) and reason["kind"] == "aborted" and "reason" not in reason
        if isinstance(reason, dict) and (reason["kind"] == "disposed" or legacy_abort):
            found.append("legacy turn/end reason")
        if type_ in ("user/message", "tool/result", "assistant/message") and "id" not in data.get("message", data):
            found.append(f"{type_} without id")
    return found


def test_inv_legacy_8_output_holds_no_legacy_form() -> None:
    """No steering message, no compact/* type, no trigger, no messagePrefix, no legacy reason, no id-less message."""
    assert len(_legacy_forms(stored(V0_LOG).events)) >= 9
    assert _legacy_forms(upgraded(V0_LOG).events) == []
