"""INV-LEGACY strength tests: cases that mutation testing of ``model/legacy.py`` showed were missing.

Each test pins one decision of the v0-to-v1 edge that the earlier tests left open: every event is
read as a v0 source, in order, before the converted log is validated as v1; each normalisation fires
only on the legacy form it names, and nothing else is touched (see docs/strength.md).
"""

from __future__ import annotations

from typing import Any

from model_cases import PINNED, call_block, call_data, code_of, ev

from sessionlog_spec.contracts.legacy import upgrade_v0
from sessionlog_spec.model.json_value import freeze, json_equal, thaw
from sessionlog_spec.model.legacy import StoredLog
from sessionlog_spec.model.violation import Code, Violation

SID = "s-strength"
V0_HEADER: dict[str, Any] = {"type": "session", "version": 0, "id": SID, "createdAt": 0, "delegationDepth": 0}


def txt(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def upgrade(*events: object, header: dict[str, Any] | None = None) -> StoredLog | Violation:
    """The edge's answer for a log of ``events`` (v0 unless ``header`` says otherwise)."""
    line = freeze(header or V0_HEADER)
    assert isinstance(line, dict) or hasattr(line, "keys")
    return upgrade_v0(StoredLog(line, tuple(freeze(e) for e in events)))  # type: ignore[arg-type,misc]


def upgraded_events(*events: object) -> list[Any]:
    result = upgrade(*events)
    assert isinstance(result, StoredLog), result
    return [thaw(e) for e in result.events]


def assert_unchanged(*events: dict[str, Any]) -> None:
    """The edge passes ``events`` through as they are."""
    out = upgraded_events(*events)
    assert json_equal(freeze(out), freeze(list(events))), out


TURN = ev("turn/start", 0, {"turn": 1})
UNMATCHED_TURN_END = ev("turn/end", 0, {"turn": 1, "reason": {"kind": "completed"}})
"""Valid as a v0 source, refused by the v1 trace (no turn is open): a v1 refusal at index 0."""


# -- the source pass comes first, in reading order ------------------------------------------------------


def test_inv_legacy_2_fallback_is_refused_before_v1_validation_of_earlier_events() -> None:
    fallback = ev("request/header", 1, {"header": {"config": dict(PINNED)}, "reason": "fallback"})
    result = upgrade(UNMATCHED_TURN_END, fallback)
    assert code_of(result) is Code.LEGACY_FALLBACK_REASON
    assert isinstance(result, Violation) and "v0 index 1" in result.message


def test_inv_legacy_2_fallback_reason_on_another_type_is_not_a_header_refusal() -> None:
    asked = ev("approval/asked", 0, {"id": "ask-1", "toolName": "bash", "reason": "fallback"})
    assert_unchanged(asked)


def test_inv_legacy_9_an_event_that_is_not_an_object_is_refused_at_its_index() -> None:
    assert code_of(upgrade(42, ev("mode/set", 1, {"mode": "plan"}))) is Code.ENVELOPE_NOT_OBJECT
    result = upgrade(TURN, "text")
    assert code_of(result) is Code.ENVELOPE_NOT_OBJECT
    assert isinstance(result, Violation) and result.message.startswith("v0 index 1:")


def test_inv_legacy_9_a_seq_is_its_event_s_position() -> None:
    result = upgrade(TURN, ev("turn/end", 2, {"turn": 1, "reason": {"kind": "completed"}}))
    assert code_of(result) is Code.SEQ_NOT_CONTIGUOUS
    assert isinstance(result, Violation) and result.message.startswith("v0 index 1:")
    # JSON has one number type: seq 1.0 is seq 1.
    assert upgraded_events(TURN, {**ev("turn/end", 1, {"turn": 1, "reason": {"kind": "completed"}}), "seq": 1.0})


def test_inv_legacy_6_the_header_line_is_checked_first() -> None:
    header = {"type": "session", "version": 0, "createdAt": 0, "delegationDepth": 0}
    result = upgrade(ev("turn/start", 0, {"turn": 1}), header=header)
    assert code_of(result) is Code.JSONL_HEADER_INVALID


def test_inv_legacy_6_a_v1_log_is_validated_not_passed_through() -> None:
    v1 = {**V0_HEADER, "version": 1}
    result = upgrade(UNMATCHED_TURN_END, header=v1)
    assert code_of(result) is Code.TURN_END_MISMATCH
    assert isinstance(result, Violation) and result.message.startswith("v1 log: ")


def test_inv_legacy_6_a_v1_log_keeps_what_a_v0_source_may_not_have() -> None:
    """Only a v0 log is read as a source: the same trigger-less, v1-only marker is fine in v1."""
    marker = ev("session-log-deepseek/delivery-accepted", 1, {"sessionId": SID, "throughSeq": 0, "sessionFormatVersion": 1})
    assert code_of(upgrade(TURN, marker)) is Code.LEGACY_SOURCE_INVALID
    log = upgrade(TURN, marker, header={**V0_HEADER, "version": 1})
    assert isinstance(log, StoredLog)


# -- each normalisation fires on its own legacy form only --------------------------------------------


def test_inv_legacy_5_n1_drops_trigger_from_turn_start_only() -> None:
    dispatch = {"rootCallId": "r1", "parentCallId": "r1", "subCallId": "s1", "name": "read", "arguments": {"trigger": "user"}}
    assert_unchanged(TURN, ev("tool/code-dispatch-start", 1, dispatch))


def test_inv_legacy_5_n1_a_turn_start_without_trigger_is_not_reshaped() -> None:
    assert_unchanged(TURN)


def test_inv_legacy_9_n2_a_non_error_reason_with_a_message_is_refused_not_stripped() -> None:
    events = [TURN, ev("turn/end", 1, {"turn": 1, "reason": {"kind": "completed", "message": "done"}})]
    assert code_of(upgrade(*events)) is Code.LEGACY_SOURCE_INVALID


def test_inv_legacy_5_n2_leaves_an_error_reason_that_already_has_its_error_alone() -> None:
    reason = {"kind": "error", "error": {"message": "overloaded", "code": "E1", "status": 503}}
    assert_unchanged(TURN, ev("turn/end", 1, {"turn": 1, "reason": reason}))


def test_inv_legacy_5_n2_an_aborted_reason_with_its_cause_is_left_alone() -> None:
    assert_unchanged(TURN, ev("turn/end", 1, {"turn": 1, "reason": {"kind": "aborted", "reason": {"kind": "user"}}}))


def test_inv_legacy_5_n3_mints_an_id_for_steering_with_exactly_turn_content_and_source() -> None:
    data = {"turn": 0, "content": [txt("Also test it")], "source": {"kind": "user"}}
    steering = ev("steering/message", 0, data, surfaceOp="append")
    out = upgraded_events(steering)
    assert out[0]["type"] == "user/message"
    assert out[0]["data"] == {"id": f"legacy-message:{SID}:0", "role": "user", "content": [txt("Also test it")],
                              "source": {"kind": "user"}}
    assert out[0]["surfaceOp"] == "append"


def test_inv_legacy_5_n4_content_and_source_on_other_types_are_not_user_messages() -> None:
    """Another type with a user message's members is not given an id: it stays as written, and the
    payload table refuses the members it does not admit."""
    result = upgrade(ev("feedback/record", 0, {"text": "hi", "content": "hi", "source": "lead"}))
    assert isinstance(result, Violation) and result.code is Code.LEGACY_SOURCE_INVALID
    assert "legacy-message" not in result.message and "content" in result.message


def test_inv_legacy_5_n4_content_and_provenance_on_other_types_are_not_assistant_messages() -> None:
    result = upgrade(ev("feedback/record", 0, {"text": "x", "content": "x", "provenance": {"provider": "p"}}))
    assert isinstance(result, Violation) and result.code is Code.LEGACY_SOURCE_INVALID
    assert "content" in result.message


def test_inv_legacy_5_n4_call_id_content_and_is_error_on_other_types_are_not_tool_results() -> None:
    dispatch = {"rootCallId": "r1", "parentCallId": "r1", "subCallId": "s1", "name": "read", "arguments": {},
                "isError": False, "content": [txt("ok")], "callId": "c1"}
    result = upgrade(TURN, ev("tool/code-dispatch", 1, dispatch))
    assert isinstance(result, Violation) and result.code is Code.LEGACY_SOURCE_INVALID
    assert "callId" in result.message


def test_inv_legacy_5_n4_a_user_message_with_an_id_but_no_role_is_not_pre_identity() -> None:
    data = {"id": "m1", "content": [txt("hi")], "source": {"kind": "user"}}
    assert code_of(upgrade(ev("user/message", 0, data, surfaceOp="append"))) is Code.LEGACY_SOURCE_INVALID


def test_inv_legacy_5_n4_a_user_message_with_a_role_but_no_id_is_not_pre_identity() -> None:
    data = {"role": "user", "content": [txt("hi")], "source": {"kind": "user"}}
    assert code_of(upgrade(ev("user/message", 0, data, surfaceOp="append"))) is Code.LEGACY_SOURCE_INVALID


def test_inv_legacy_5_n4_a_user_message_with_a_message_member_is_not_pre_identity() -> None:
    data = {"content": [txt("hi")], "source": {"kind": "user"}, "message": {}}
    assert code_of(upgrade(ev("user/message", 0, data, surfaceOp="append"))) is Code.LEGACY_SOURCE_INVALID


def _in_step(*rest: dict[str, Any]) -> list[dict[str, Any]]:
    return [TURN, ev("step/start", 1, {"turn": 1, "step": 1}), *rest]


def test_inv_legacy_5_n4_an_assistant_message_that_has_a_message_is_not_converted() -> None:
    message = {"id": "a2", "role": "assistant", "content": [txt("ok")], "source": {"kind": "model", **PINNED}}
    data = {"turn": 1, "step": 1, "message": message, "content": [txt("ok")], "provenance": dict(PINNED)}
    assert code_of(upgrade(*_in_step(ev("assistant/message", 2, data, surfaceOp="append")))) is Code.LEGACY_SOURCE_INVALID


def test_inv_legacy_5_n4_a_tool_result_that_has_a_message_is_not_converted() -> None:
    block = {"type": "tool-result", "toolCallId": "c1", "content": [txt("out")], "isError": False}
    message = {"id": "r4", "role": "user", "source": {"kind": "tool", "callId": "c1"}, "content": [block]}
    flat = {"callId": "c1", "content": [txt("out")], "isError": False}
    events = _in_step(
        ev("assistant/message", 2, {"turn": 1, "step": 1, "content": [call_block("c1")], "provenance": PINNED},
           surfaceOp="append"),
        ev("tool/call", 3, {**call_data(1, 1, "c1"), "arguments": call_block("c1")["arguments"]}),
        ev("tool/result", 4, {"turn": 1, "step": 1, "message": message, **flat}, surfaceOp="append"),
    )
    assert code_of(upgrade(*events)) is Code.LEGACY_SOURCE_INVALID


def test_inv_legacy_5_n4_a_tool_result_with_a_non_string_call_id_is_not_converted() -> None:
    """Only a result a v0 writer could have written is wrapped; this one stays flat and is refused."""
    data = {"turn": 1, "step": 1, "callId": 7, "content": [], "isError": False}
    result = upgrade(*_in_step(ev("tool/result", 2, data, surfaceOp="append")))
    assert isinstance(result, Violation) and result.code is Code.LEGACY_SOURCE_INVALID
    assert "legacy-message" not in result.message


def _answered_call() -> list[dict[str, Any]]:
    """Turn 1, step 1 open; call ``c1`` asked (seq 2), started (3) and answered in v1 form by ``r4`` (4)."""
    block = {"type": "tool-result", "toolCallId": "c1", "content": [txt("long output")], "isError": False}
    message = {"id": "r4", "role": "user", "source": {"kind": "tool", "callId": "c1"}, "content": [block]}
    return _in_step(
        ev("assistant/message", 2, {"turn": 1, "step": 1, "content": [call_block("c1")], "provenance": PINNED},
           surfaceOp="append"),
        ev("tool/call", 3, {**call_data(1, 1, "c1"), "arguments": call_block("c1")["arguments"]}),
        ev("tool/result", 4, {"turn": 1, "step": 1, "message": message}, surfaceOp="append"),
    )


def test_inv_legacy_5_n4_a_v1_shaped_rewrite_is_not_given_its_targets_id() -> None:
    """Only pre-identity rewrites inherit an id; a v1-shaped one with a different id stays refused."""
    block = {"type": "tool-result", "toolCallId": "c1", "content": [txt("[trimmed]")], "isError": False}
    message = {"id": "r5", "role": "user", "source": {"kind": "tool", "callId": "c1"}, "content": [block]}
    rewrite = ev("tool/result", 5, {"turn": 1, "step": 1, "message": message},
                 surfaceOp={"op": "replace", "start": 4, "end": 4}, sourceEventSeqs=[4])
    assert code_of(upgrade(*_answered_call(), rewrite)) is Code.TOOL_REWRITE_CHANGES


def test_inv_legacy_5_n4_a_pre_identity_rewrite_takes_its_targets_id() -> None:
    rewrite = ev("tool/result", 5, {"turn": 1, "step": 1, "callId": "c1", "content": [txt("[trimmed]")], "isError": False},
                 surfaceOp={"op": "replace", "start": 4, "end": 4}, sourceEventSeqs=[4])
    out = upgraded_events(*_answered_call(), rewrite)
    assert out[5]["data"]["message"]["id"] == "r4"


def test_inv_legacy_5_n4_only_a_rewriting_tool_result_inherits_an_id() -> None:
    summary = {"turn": 1, "step": 2, "content": [txt("Summary of the call")], "provenance": PINNED}
    events = [
        *_answered_call(),
        ev("step/end", 5, {"turn": 1, "step": 1}),
        ev("step/start", 6, {"turn": 1, "step": 2}),
        ev("assistant/message", 7, summary, surfaceOp={"op": "replace", "start": 2, "end": 4}, sourceEventSeqs=[2, 4]),
    ]
    out = upgraded_events(*events)
    assert out[7]["data"]["message"]["id"] == f"legacy-message:{SID}:7"


def test_inv_legacy_9_a_rewrite_that_targets_itself_is_refused_not_crashed() -> None:
    rewrite = ev("tool/result", 5, {"turn": 1, "step": 1, "callId": "c1", "content": [txt("x")], "isError": False},
                 surfaceOp={"op": "replace", "start": 5, "end": 5}, sourceEventSeqs=[4])
    assert code_of(upgrade(*_answered_call(), rewrite)) is Code.LEGACY_SOURCE_INVALID


def test_inv_legacy_9_a_rewrite_whose_start_is_not_a_seq_is_refused_not_crashed() -> None:
    for start in ("4", True, None, {"seq": 4}, 4.5):
        rewrite = ev("tool/result", 5, {"turn": 1, "step": 1, "callId": "c1", "content": [txt("x")], "isError": False},
                     surfaceOp={"op": "replace", "start": start, "end": 4}, sourceEventSeqs=[4])
        assert code_of(upgrade(*_answered_call(), rewrite)) is Code.LEGACY_SOURCE_INVALID, start


def test_inv_legacy_5_n8_a_chain_is_named_by_json_values() -> None:
    """Step 1 and step 1.0 are the same chain: one JSON number."""
    retry = {"turn": 1, "step": 1, "provider": "deepseek", "mode": "always", "policyKey": "k", "delayMs": 0,
             "failure": {"message": "m", "code": "C"}}
    header = ev("request/header", 2, {"header": {"config": PINNED}, "reason": "initial"})
    first, again = {**retry, "retry": 1}, {**retry, "retry": 2, "step": 1.0}
    events = [*_in_step(header), ev("llm/retry", 3, first), ev("llm/retry", 4, again)]
    out = upgraded_events(*events)
    assert out[3]["data"]["retryId"] == out[4]["data"]["retryId"] == f"legacy-retry:{SID}:3"
