"""The INV-PAY contracts (``sessionlog_spec.contracts.payloads``) hold on generated payloads and catch a faulty checker.

Each ``test_inv_pay_<N>_contract_catches_…`` replaces the model's checker by a faulty one (accepting
what it should refuse, or looking at what it must not) and requires icontract to raise a
``ViolationError`` naming the rule.  Generated valid payloads and one-fault variants of every type,
both generations, and payloads taking each unknown variant of each merge-extensible union pass
every contract with the model's own verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import icontract
import pytest
from hypothesis import given
from hypothesis import strategies as st
from icontract._checkers import find_checker
from strategies import property_settings

from sessionlog_spec.contracts import ENABLED
from sessionlog_spec.contracts import payloads as contracted
from sessionlog_spec.model import payloads as model
from sessionlog_spec.model.json_value import freeze
from sessionlog_spec.model.payloads import EVENT_PAYLOADS, GENERATIONS, MERGE_EXTENSIBLE, payload_shape
from sessionlog_spec.model.shapes import Context, Variants
from sessionlog_spec.suite.agent.payload_values import OTHERWISE, invalid_payload, union_routes, valid_payload

needs_contracts = pytest.mark.skipif(not ENABLED, reason="contracts are off (SESSIONLOG_CONTRACTS=0)")

TYPES = sorted(EVENT_PAYLOADS)
REAL = model.payload_problem


def rule(invariant_id: str) -> str:
    """A pattern matching the ID and not a longer one."""
    return rf"{invariant_id}(?!\d)"


def failing_postconditions(arguments: dict[str, Any]) -> list[str]:
    """The descriptions of the contracted checker's postconditions that are false for ``arguments``."""
    checker = find_checker(contracted.payload_problem)
    assert checker is not None
    contracts = checker.__postconditions__  # type: ignore[attr-defined]
    return [c.description for c in contracts if not c.condition(**{name: arguments[name] for name in c.condition_args})]


def accept_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model, "payload_problem", lambda event_type, data, seq, version=1: None)


def tool_result(meta: object) -> dict[str, Any]:
    block = {"type": "tool-result", "toolCallId": "c1", "content": [{"type": "text", "text": "ok"}]}
    message = {"id": "r1", "role": "user", "content": [block], "source": {"kind": "tool", "callId": "c1"}}
    return {"turn": 1, "step": 1, "message": message, "meta": meta}


def user_message(content: list[object], source: object | None = None) -> dict[str, Any]:
    return {"id": "m1", "role": "user", "content": content, "source": source or {"kind": "user"}}


# -- INV-PAY-1 ----------------------------------------------------------------------------------------


@needs_contracts
def test_inv_pay_1_contract_catches_an_unexpected_member(monkeypatch: pytest.MonkeyPatch) -> None:
    data = {"turn": 1, "extra": 2}
    assert "INV-PAY-1" in failing_postconditions(
        {"event_type": "turn/start", "data": data, "seq": 5, "version": 1, "result": None}
    )
    accept_everything(monkeypatch)
    with pytest.raises(icontract.ViolationError, match=r"INV-PAY-\d"):
        contracted.payload_problem("turn/start", data, 5)


@needs_contracts
def test_inv_pay_1_contract_catches_a_missing_required_member(monkeypatch: pytest.MonkeyPatch) -> None:
    data = {"turn": 1}
    assert "INV-PAY-1" in failing_postconditions(
        {"event_type": "step/start", "data": data, "seq": 5, "version": 1, "result": None}
    )
    accept_everything(monkeypatch)
    with pytest.raises(icontract.ViolationError, match=r"INV-PAY-\d"):
        contracted.payload_problem("step/start", data, 5)


@needs_contracts
def test_inv_pay_1_contract_catches_a_member_of_the_other_generation(monkeypatch: pytest.MonkeyPatch) -> None:
    """v0 admits no ``sessionFormatVersion`` on a delivery marker (and v0 has no schema to catch it)."""
    data = {"sessionId": "s", "throughSeq": 0, "sessionFormatVersion": 1}
    assert REAL("session-log-deepseek/delivery-accepted", data, 3, 0) is not None
    assert REAL("session-log-deepseek/delivery-accepted", data, 3, 1) is None
    accept_everything(monkeypatch)
    with pytest.raises(icontract.ViolationError, match=rule("INV-PAY-1")):
        contracted.payload_problem("session-log-deepseek/delivery-accepted", data, 3, 0)


def test_inv_pay_1_a_v1_descriptor_of_another_version_is_owner_opaque() -> None:
    data = {"version": 4, "anything": {"at": ["all"]}}
    assert contracted.payload_problem("subagent/descriptor", data, 3) is None
    assert contracted.payload_problem("subagent/descriptor", data, 3, 0) is not None


# -- INV-PAY-2 ----------------------------------------------------------------------------------------


@needs_contracts
def test_inv_pay_2_contract_catches_a_negative_count(monkeypatch: pytest.MonkeyPatch) -> None:
    accept_everything(monkeypatch)
    with pytest.raises(icontract.ViolationError, match=rule("INV-PAY-2")):
        contracted.payload_problem("turn/start", {"turn": -1}, 5)


@needs_contracts
def test_inv_pay_2_contract_catches_an_inexact_nested_record(monkeypatch: pytest.MonkeyPatch) -> None:
    data = user_message([{"type": "text", "text": "a", "extra": 1}])
    assert REAL("user/message", data, 3) is not None
    accept_everything(monkeypatch)
    with pytest.raises(icontract.ViolationError, match=rule("INV-PAY-2")):
        contracted.payload_problem("user/message", data, 3)


def test_inv_pay_2_context_only_rules_are_outside_the_schema_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """A seq that is not earlier than the event's own is refused by the model; the schema only annotates it."""
    data = {"commandId": "c", "kind": "success", "sourceEventSeq": 9}
    assert REAL("command/done", data, 4) is not None
    accept_everything(monkeypatch)
    assert contracted.payload_problem("command/done", data, 4) is None


# -- INV-PAY-3 ----------------------------------------------------------------------------------------


@needs_contracts
def test_inv_pay_3_contract_catches_a_checker_that_inspects_an_opaque_member(monkeypatch: pytest.MonkeyPatch) -> None:
    def inspects_meta(event_type: str, data: Any, seq: int, version: int = 1) -> str | None:
        if isinstance(data, Mapping) and not isinstance(data.get("meta"), str):
            return "$.meta must be a string"
        return REAL(event_type, data, seq, version)

    monkeypatch.setattr(model, "payload_problem", inspects_meta)
    with pytest.raises(icontract.ViolationError, match=rule("INV-PAY-3")):
        contracted.payload_problem("tool/result", tool_result("a string"), 5)


@needs_contracts
def test_inv_pay_3_contract_catches_a_checker_that_inspects_an_unknown_variant(monkeypatch: pytest.MonkeyPatch) -> None:
    data = user_message([{"type": "x-widget", "size": 3}])
    assert REAL("user/message", data, 3) is None

    def inspects_widgets(event_type: str, data: Any, seq: int, version: int = 1) -> str | None:
        block = data["content"][0]
        return None if block.get("size") == 3 else "$.content[0].size must be 3"

    monkeypatch.setattr(model, "payload_problem", inspects_widgets)
    with pytest.raises(icontract.ViolationError, match=rule("INV-PAY-3")):
        contracted.payload_problem("user/message", data, 3)


def test_inv_pay_3_opaque_members_and_unknown_variants_pass_with_the_model() -> None:
    assert contracted.payload_problem("tool/result", tool_result({"any": [1, None, {"x": True}]}), 5) is None
    assert contracted.payload_problem("tool/result", tool_result([]), 5, 0) is None
    source = {"kind": "x-future", "anything": [1.5]}
    assert contracted.payload_problem("user/message", user_message([{"type": "x-widget", "size": 3}], source), 3) is None
    assert contracted.payload_problem("turn/end", {"turn": 1, "reason": {"kind": "x-future", "why": {}}}, 3) is None
    assert contracted.payload_problem("user/message", user_message([{"type": ""}]), 3) is not None


def test_inv_pay_3_unknown_variants_are_found_where_the_table_marks_them() -> None:
    found = list(
        contracted.unknown_variants(
            payload_shape("user/message", 1),
            user_message([{"type": "text", "text": "a"}, {"type": "x-widget"}], {"kind": "x-future"}),
        )
    )
    assert found == [(("content", 1), "type"), (("source",), "kind")]
    chunk = {"turn": 1, "step": 1, "chunk": {"type": "finish", "reason": {"kind": "x-future"}}}
    assert list(contracted.unknown_variants(payload_shape("assistant/chunk", 1), chunk)) == [(("chunk", "reason"), "kind")]
    nested = tool_result(None)
    nested["message"]["content"][0]["content"] = [{"type": "x-widget"}]
    assert list(contracted.unknown_variants(payload_shape("tool/result", 1), nested)) == [
        (("message", "content", 0, "content", 0), "type")
    ]
    known = {"turn": 1, "reason": {"kind": "completed"}}
    assert list(contracted.unknown_variants(payload_shape("turn/end", 1), known)) == []


# -- generated payloads -------------------------------------------------------------------------------


@pytest.mark.parametrize("event_type", TYPES)
def test_payload_contracts_hold_on_generated_payloads(event_type: str) -> None:
    """Valid payloads and one-fault variants, both generations, plain and frozen: the contracted
    checker answers as the model does and no contract fails."""

    @property_settings(0.1)
    @given(st.data())
    def check(data: st.DataObject) -> None:
        version = data.draw(st.sampled_from(GENERATIONS), label="version")
        seq = data.draw(st.sampled_from((1, 9)), label="seq")
        shape = payload_shape(event_type, version)
        value = data.draw(valid_payload(shape, Context(seq)), label="valid")
        assert contracted.payload_problem(event_type, value, seq, version) is None
        assert contracted.payload_problem(event_type, freeze(value), seq, version) is None
        fault = data.draw(invalid_payload(shape, Context(seq)), label="fault")
        assert contracted.payload_problem(event_type, fault.value, seq, version) == REAL(event_type, fault.value, seq, version)

    check()


def _unknown_variant_cases() -> list[Any]:
    """Each unknown variant of each merge-extensible union, with the first type (generation 1) that reaches it."""
    cases, seen = [], set()
    for event_type in TYPES:
        for union, key, route in union_routes(payload_shape(event_type, 1)):
            if key is not OTHERWISE or id(union) in seen or union.discriminant not in MERGE_EXTENSIBLE.values():
                continue
            seen.add(id(union))
            cases.append(pytest.param(event_type, union, (*route, (union, key)), id=f"{event_type}-{union.discriminant}"))
    return cases


def test_inv_pay_3_every_merge_extensible_union_is_drawn_with_an_unknown_variant() -> None:
    assert len(_unknown_variant_cases()) == len(MERGE_EXTENSIBLE)


@pytest.mark.parametrize(("event_type", "union", "focus"), _unknown_variant_cases())
def test_inv_pay_3_payloads_with_unknown_variants_pass_the_contracts(event_type: str, union: Variants, focus: Any) -> None:
    shape = payload_shape(event_type, 1)

    @property_settings(0.1)
    @given(valid_payload(shape, Context(9), focus))
    def check(value: object) -> None:
        assert contracted.payload_problem(event_type, value, 9) is None

    check()
