"""The INV-REL contracts (``sessionlog_spec.contracts.relationships``) hold on valid logs and catch broken ones.

Each ``test_inv_rel_<N>_contract_catches_…`` makes the model accept an input it refuses (the model
function is monkeypatched to return the pre-state) and requires icontract to raise a
``ViolationError`` naming the rule.  The fault sweep does the same for every one-fault log of
``tests/model/relationship_logs.py`` whose fault is a relationship: the contracts' own restatement of
the broken rule fails.  Generated valid logs pass every contract.

The logs are replayed with only the relationship rules (each event decoded, the surface carried
along), so the verdicts do not depend on the other rules of ``admit``.
"""

from __future__ import annotations

import random
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import icontract
import pytest
from hypothesis import given
from hypothesis import strategies as st
from icontract._checkers import find_checker
from strategies import property_settings

from sessionlog_spec.contracts import ENABLED
from sessionlog_spec.contracts import relationships as contracted
from sessionlog_spec.model import relationships as model
from sessionlog_spec.model.event import Event, decode_event
from sessionlog_spec.model.relationships import (
    ABSENT,
    OpenCompaction,
    RelationState,
    SessionIdentity,
    ToolLifecycle,
    number,
    relations_for,
    string,
    title_frame,
)
from sessionlog_spec.model.surface import Surface, surface_transition
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.registry import INVARIANTS
from sessionlog_spec.suite.agent.payload_values import NON_EMPTY_TEXT

MODEL_TESTS = Path(__file__).resolve().parents[1] / "model"
if str(MODEL_TESTS) not in sys.path:
    sys.path.append(str(MODEL_TESTS))
from relationship_logs import (  # noqa: E402 - the model's artifact builders live beside the model's tests
    FAULTS,
    Artifact,
    LogBuilder,
    closed_turn_with_human,
    faulty_artifact,
    valid_artifact,
)

needs_contracts = pytest.mark.skipif(not ENABLED, reason="contracts are off (SESSIONLOG_CONTRACTS=0)")

RULE_OF_CODE = {code: inv.id for inv in INVARIANTS if inv.group == "REL" for code in inv.codes}
"""Each relationship code, and the invariant it enforces."""

REL_FAULTS = sorted(name for name in FAULTS if faulty_artifact(random.Random(0), name).expect in RULE_OF_CODE)
"""The one-fault logs whose fault is a relationship (the others are refused by earlier rules)."""


def ev(type_: str, seq: int, data: Any, **envelope: Any) -> Event:
    event = decode_event({"type": type_, "seq": seq, "time": 1_700_000_000_000 + seq, "data": data, **envelope})
    assert isinstance(event, Event), event
    return event


def accept_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the model accept every event (returning the state unchanged) and every complete log."""
    monkeypatch.setattr(model, "relationship_transition", lambda state, event, *, log, surface: state)
    monkeypatch.setattr(model, "relationship_finish", lambda state: None)


def rule(invariant_id: str) -> str:
    """A pattern matching the ID and not a longer one (``INV-REL-1`` is not ``INV-REL-10``)."""
    return rf"{invariant_id}(?!\d)"


# -- replaying a log ----------------------------------------------------------------------------------


def replay(artifact: Artifact, rules: Any) -> tuple[Violation | None, dict[str, Any]]:
    """The relationship verdict on a log, with ``rules`` (the model or the contracted module), and
    the arguments of the call that gave it (for a refused event, its pre-state and context)."""
    events: list[Event] = []
    surface = Surface()
    state = relations_for(artifact.identity())
    for raw in artifact.events:
        event = decode_event(raw)
        assert isinstance(event, Event), event
        context = {"state": state, "event": event, "log": tuple(events), "surface": surface.nodes}
        after = rules.relationship_transition(state, event, log=context["log"], surface=context["surface"])
        if isinstance(after, Violation):
            return after, context
        moved = surface_transition(surface, events, event)
        assert not isinstance(moved, Violation), moved
        state, surface = after, moved
        events.append(event)
    return rules.relationship_finish(state), {"state": state}


def failing_postconditions(func: Any, arguments: dict[str, Any]) -> list[str]:
    """The descriptions of ``func``'s postconditions that are false for ``arguments`` (``result`` included)."""
    checker = find_checker(func)
    assert checker is not None
    contracts = checker.__postconditions__
    return [c.description for c in contracts if not c.condition(**{name: arguments[name] for name in c.condition_args})]


# -- valid logs pass, faulty logs are refused as the model refuses them ---------------------------------


def test_relationship_contracts_hold_on_generated_valid_logs() -> None:
    for seed in range(25):
        artifact = valid_artifact(random.Random(seed))
        assert replay(artifact, contracted)[0] is None, seed


@pytest.mark.parametrize("fault", REL_FAULTS)
def test_relationship_contracts_pass_the_models_refusals(fault: str) -> None:
    for seed in range(3):
        artifact = faulty_artifact(random.Random(seed), fault)
        verdict = replay(artifact, contracted)[0]
        assert verdict == replay(artifact, model)[0]
        assert verdict is not None and verdict.code == artifact.expect


@needs_contracts
@pytest.mark.parametrize("fault", REL_FAULTS)
def test_every_relationship_fault_is_caught_by_its_contract(fault: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Were the model to accept the faulty event (or the faulty complete log), the contract of the
    broken rule would fail, and icontract would raise."""
    for seed in range(3):
        artifact = faulty_artifact(random.Random(seed), fault)
        verdict, context = replay(artifact, model)
        assert verdict is not None and verdict.code == artifact.expect
        expected = RULE_OF_CODE[verdict.code]
        if "event" in context:
            arguments = {**context, "result": context["state"]}
            assert expected in failing_postconditions(contracted.relationship_transition, arguments), seed
            with monkeypatch.context() as patched:
                accept_everything(patched)
                with pytest.raises(icontract.ViolationError, match=r"INV-REL-\d+"):
                    contracted.relationship_transition(
                        context["state"], context["event"], log=context["log"], surface=context["surface"]
                    )
        else:
            assert expected in failing_postconditions(contracted.relationship_finish, {**context, "result": None}), seed
            with monkeypatch.context() as patched:
                accept_everything(patched)
                with pytest.raises(icontract.ViolationError, match=rule(expected)):
                    contracted.relationship_finish(context["state"])


# -- tool lifecycles ----------------------------------------------------------------------------------

IN_STEP = RelationState(open_turn=number(1), open_step=number(1))
CALL = {"turn": 1, "step": 1, "callId": "c1", "name": "read", "arguments": '{"path": "a.py"}'}
ADVERTISED = ToolLifecycle(string("c1"), string("read"), string('{"path": "a.py"}'))


@needs_contracts
def test_inv_rel_1_contract_catches_an_unadvertised_call(monkeypatch: pytest.MonkeyPatch) -> None:
    accept_everything(monkeypatch)
    with pytest.raises(icontract.ViolationError, match=rule("INV-REL-1")):
        contracted.relationship_transition(IN_STEP, ev("tool/call", 5, CALL), log=(), surface=())


@needs_contracts
def test_inv_rel_1_contract_catches_a_call_with_other_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    accept_everything(monkeypatch)
    state = replace(IN_STEP, tools=(ADVERTISED,))
    with pytest.raises(icontract.ViolationError, match=rule("INV-REL-1")):
        contracted.relationship_transition(state, ev("tool/call", 5, {**CALL, "arguments": "{}"}), log=(), surface=())


def test_inv_rel_1_contract_passes_an_advertised_call() -> None:
    state = replace(IN_STEP, tools=(ADVERTISED,))
    after = contracted.relationship_transition(state, ev("tool/call", 5, CALL), log=(), surface=())
    assert isinstance(after, RelationState) and after.tools[0].started


@needs_contracts
def test_inv_rel_2_contract_refuses_a_state_with_a_repeated_call_id() -> None:
    state = replace(IN_STEP, tools=(ADVERTISED, ADVERTISED))
    with pytest.raises(icontract.ViolationError, match=rule("INV-REL-2")):
        contracted.relationship_transition(state, ev("step/end", 5, {"turn": 1, "step": 1}), log=(), surface=())


@needs_contracts
def test_inv_rel_5_contract_catches_a_step_ending_with_a_pending_call(monkeypatch: pytest.MonkeyPatch) -> None:
    accept_everything(monkeypatch)
    state = replace(IN_STEP, tools=(replace(ADVERTISED, started=True),))
    with pytest.raises(icontract.ViolationError, match=rule("INV-REL-5")):
        contracted.relationship_transition(state, ev("step/end", 5, {"turn": 1, "step": 1}), log=(), surface=())


# -- compactions --------------------------------------------------------------------------------------

OPEN = OpenCompaction(string("c"), ABSENT, number(1), 3)


@needs_contracts
def test_inv_rel_6_contract_catches_an_overlapping_compaction(monkeypatch: pytest.MonkeyPatch) -> None:
    opened = replace(IN_STEP, compaction=OPEN)
    second = OpenCompaction(string("d"), ABSENT, number(1), 5)
    monkeypatch.setattr(model, "relationship_transition", lambda state, event, *, log, surface: replace(state, compaction=second))
    with pytest.raises(icontract.ViolationError, match=rule("INV-REL-6")):
        contracted.relationship_transition(
            opened, ev("compaction/start", 5, {"compactionId": "d", "turn": 1}), log=(), surface=()
        )


@needs_contracts
def test_inv_rel_11_contract_catches_a_complete_log_with_a_held_crossing(monkeypatch: pytest.MonkeyPatch) -> None:
    accept_everything(monkeypatch)
    crossed = RelationState(compaction=replace(OPEN, crossed_at=7))
    with pytest.raises(icontract.ViolationError, match=rule("INV-REL-11")):
        contracted.relationship_finish(crossed)


def test_inv_rel_11_contract_passes_a_crossing_retired_by_an_end_seed() -> None:
    crossed = RelationState(compaction=replace(OPEN, crossed_at=7))
    after = contracted.relationship_transition(crossed, ev("session/end-seed", 8, {}), log=(), surface=())
    assert isinstance(after, RelationState)
    assert contracted.relationship_finish(after) is None


def summary(shadowed: list[int], start: int, end: int) -> dict[str, Any]:
    return {
        "compactionId": "c",
        "summary": [{"type": "text", "text": "Earlier work."}],
        "shadowedRange": {"start": start, "end": end},
        "shadowedSeqs": shadowed,
        "shadowedTokenCount": 10,
        "provider": "deepseek",
        "model": "chat-model",
    }


@needs_contracts
def test_inv_rel_12_contract_catches_a_summary_span_with_a_gap(monkeypatch: pytest.MonkeyPatch) -> None:
    opened = replace(IN_STEP, compaction=OPEN)
    monkeypatch.setattr(
        model,
        "relationship_transition",
        lambda state, event, *, log, surface: replace(state, compaction=replace(OPEN, summarized=True)),
    )
    with pytest.raises(icontract.ViolationError, match=rule("INV-REL-12")):
        contracted.relationship_transition(
            opened, ev("compaction/summary", 6, summary([1, 3], 1, 3)), log=(), surface=(0, 1, 2, 3)
        )


def test_inv_rel_12_contract_passes_an_exact_span() -> None:
    opened = replace(IN_STEP, compaction=OPEN)
    event = ev("compaction/summary", 6, summary([1, 2, 3], 1, 3))
    after = contracted.relationship_transition(opened, event, log=(), surface=(0, 1, 2, 3))
    assert isinstance(after, RelationState) and after.compaction is not None and after.compaction.summarized


# -- titles and markers -------------------------------------------------------------------------------


@needs_contracts
def test_inv_rel_28_contract_catches_a_misframed_title_request(monkeypatch: pytest.MonkeyPatch) -> None:
    b = LogBuilder()
    question, _, _ = closed_turn_with_human(b)
    b.title_request([question], frame=title_frame([(question, "not what the person wrote")]))
    verdict, context = replay(b.artifact(), model)
    assert verdict is not None and RULE_OF_CODE[verdict.code] == "INV-REL-28"
    accept_everything(monkeypatch)
    with pytest.raises(icontract.ViolationError, match=rule("INV-REL-28")):
        contracted.relationship_transition(context["state"], context["event"], log=context["log"], surface=context["surface"])


def test_inv_rel_28_contract_passes_the_exact_frame() -> None:
    b = LogBuilder()
    question, _, _ = closed_turn_with_human(b)
    b.title_request([question])
    assert replay(b.artifact(), contracted)[0] is None


@property_settings(0.5)
@given(st.lists(st.tuples(st.integers(0, 2**53 - 1), st.one_of(st.just(""), NON_EMPTY_TEXT)), min_size=1, max_size=3))
def test_inv_rel_28_the_contracts_frame_is_the_models_frame(cited: list[tuple[int, str]]) -> None:
    """The contract's frame (Python's JSON encoder, lone surrogates escaped) is the model's hand-written one."""
    items = [{"seq": seq, "text": text} for seq, text in cited]
    assert contracted.FRAME_PREFIX + contracted.js_stringify(items) == title_frame(cited)


@needs_contracts
def test_inv_rel_29_contract_catches_a_marker_of_another_session(monkeypatch: pytest.MonkeyPatch) -> None:
    accept_everything(monkeypatch)
    state = RelationState(identity=SessionIdentity("me"))
    marker = ev("session-log-deepseek/delivery-accepted", 3, {"sessionId": "other", "throughSeq": 2, "sessionFormatVersion": 1})
    with pytest.raises(icontract.ViolationError, match=rule("INV-REL-29")):
        contracted.relationship_transition(state, marker, log=(), surface=())


def test_inv_rel_29_contract_passes_a_marker_of_another_generation() -> None:
    state = RelationState(identity=SessionIdentity("me"))
    marker = ev("session-log-deepseek/delivery-accepted", 3, {"sessionId": "other", "throughSeq": 2})
    assert contracted.relationship_transition(state, marker, log=(), surface=()) == state
