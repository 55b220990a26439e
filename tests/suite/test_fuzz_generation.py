"""Generation from the specification: the check-order pairs, the relationship walks and the v0 spellings
are read off the model's tables and rules, and each event they build is judged as the model says."""

from __future__ import annotations

import random

from sessionlog_spec.check_order import check_order, ordered_pairs, stage_of
from sessionlog_spec.model.json_value import as_object, freeze
from sessionlog_spec.model.legacy import FAILURE_OPTIONAL, PLAIN_END_KINDS, REFUSED_TYPES, StoredLog, upgrade_v0
from sessionlog_spec.model.session import append_event
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.suite.agent.builder import SessionBuilder, basic_header
from sessionlog_spec.suite.fuzz.legacy_v0 import member_faults, retired_forms, spellings, v0_log, v0_sessions
from sessionlog_spec.suite.fuzz.pairs import pairs_on, why_unbuilt
from sessionlog_spec.suite.fuzz.scenes import constructive_moves, rule_members, walk_from
from sessionlog_spec.suite.rule_space import (
    UNREACHABLE,
    declared_cells,
    declared_reach,
    reachable_declared,
    unreachable_cells,
)


def _upgrade(events: list[dict[str, object]]) -> str | None:
    header, raws = as_object(freeze(v0_log(events)["header"])), tuple(as_object(freeze(e)) for e in events)
    assert header is not None and all(raw is not None for raw in raws)
    result = upgrade_v0(StoredLog(header, raws))  # type: ignore[arg-type]
    return result.code.value if isinstance(result, Violation) else None


# -- the check-order pairs ---------------------------------------------------------------------------


def test_check_order_pairs_place_every_code_before_each_later_one_across_and_within_stages() -> None:
    pairs = ordered_pairs()
    codes = {code for stage in check_order() for code in stage.codes}
    assert len(pairs) == len(codes) * (len(codes) - 1) // 2
    for a, b in pairs:
        stage_a, stage_b = stage_of(a), stage_of(b)
        assert stage_a is not None and stage_b is not None and stage_a <= stage_b, (a, b)
        if stage_a == stage_b:
            stage = check_order()[stage_a].codes
            assert stage.index(a) < stage.index(b), (a, b)
    assert ("ENVELOPE_UNKNOWN_KEY", "ENVELOPE_MISSING_KEY") in pairs  # within the envelope stage
    assert ("PAYLOAD_INVALID", "COMPACTION_OVERLAP") in pairs  # across stages


def test_check_order_pair_events_carry_both_faults_and_are_answered_with_the_first() -> None:
    builder = SessionBuilder()
    builder.turn_start()
    builder.step_start()
    builder.request_header(basic_header(), "initial")
    event = builder.retry(commit=False)
    witnesses = list(pairs_on(builder.state, event, random.Random(0)))
    assert len(witnesses) > 20
    table = set(ordered_pairs())
    within = 0
    for witness in witnesses:
        assert (witness.first, witness.second) in table
        answer = append_event(builder.state, witness.event)
        assert isinstance(answer, Violation) and answer.code.value == witness.first, witness.what
        within += stage_of(witness.first) == stage_of(witness.second)
    assert within > 0  # two rules of one stage on one event


def test_a_pair_no_event_can_carry_is_reported_with_its_reason() -> None:
    # Each rule is written for one type: no event is subject to both.
    assert "disjoint event types" in why_unbuilt("USER_MESSAGE_INVALID", "TOOL_RESULT_INVALID", {})
    assert "alone" in why_unbuilt("ENVELOPE_BAD_SEQ", "ENVELOPE_BAD_TIME", {"ENVELOPE_BAD_TIME": {"turn/start"}})


# -- relationship scenes -------------------------------------------------------------------------------


def test_inv_rel_scene_members_are_read_off_each_relationship_rule() -> None:
    assert {"retryId", "retry", "turn", "step", "provider", "policyKey"} <= rule_members("llm/retry")
    assert {"compactionId", "sourceCommandId", "turn"} <= rule_members("compaction/end")
    assert {"rootCallId", "parentCallId", "subCallId"} <= rule_members("tool/code-dispatch-start")
    assert rule_members("agent/inbox/spliced") == frozenset()


def test_inv_rel_11_a_walk_across_a_turn_boundary_reaches_the_crossing_of_an_open_compaction() -> None:
    builder = SessionBuilder()
    builder.compaction_start()  # owned by no turn, then a turn starts while it is open
    builder.turn_start()
    codes = {(scene.code, scene.event["type"]) for seed in range(3) for scene in walk_from(builder.state, random.Random(seed), 2)}
    assert ("COMPACTION_CROSSES_TURN", "compaction/start") in codes
    assert ("COMPACTION_CROSSES_TURN", "compaction/end") in codes


def test_inv_rel_18_a_walk_starts_a_scheduled_retry_and_then_refuses_it_a_second_time() -> None:
    builder = SessionBuilder()
    builder.turn_start()
    builder.step_start()
    builder.request_header(basic_header(), "initial")
    builder.retry()
    started = [raws for name, raws in constructive_moves(builder.state) if name.startswith("retry started")]
    assert len(started) == 1
    builder.commit(started[0][0])
    codes = {scene.code for seed in range(2) for scene in walk_from(builder.state, random.Random(seed), 1, drawn=False)}
    assert "RETRY_START_REPEATED" in codes


def test_every_scene_is_refused_on_the_log_it_was_built_on() -> None:
    builder = SessionBuilder()
    builder.tool_turn("Go", ["call-1"], basic_header(), "initial")
    for scene in walk_from(builder.state, random.Random(1), 3, drawn=False):
        state = SessionBuilder().state
        for raw in scene.log:
            after = append_event(state, raw)
            assert not isinstance(after, Violation)
            state = after
        answer = append_event(state, scene.event)
        assert isinstance(answer, Violation) and answer.code.value == scene.code


# -- the v0 edge --------------------------------------------------------------------------------------


def test_inv_legacy_5_every_spelling_of_the_edges_tables_converts_alone() -> None:
    names: set[str] = set()
    for events in v0_sessions():
        assert _upgrade(events) is None
        for index, event in enumerate(events):
            for name, spelled in spellings(event):
                names.add(name)
                if name.startswith(("N8", "N9", "N7 N9", "N4 pre-identity tool/result")):
                    continue  # a chain's id or a rewrite's target: alone it may break its chain (the model says)
                assert _upgrade([*events[:index], spelled, *events[index + 1 :]]) is None, name
    assert {f"N2 {kind}" for kind in PLAIN_END_KINDS} <= names
    assert {f"N2 failure record with {key}" for key in FAILURE_OPTIONAL} <= names
    assert {"N1 trigger user", "N3 steering wrapping its message", "N5 messagePrefix", "N8 retry without its id"} <= names
    assert any(name.startswith("N7 compact/") for name in names)
    assert "N9 checkpoint without its group id" in names


def test_inv_legacy_9_a_legacy_member_dropped_or_retyped_is_a_malformed_source() -> None:
    events = v0_sessions()[0]
    index = next(i for i, e in enumerate(events) if e["type"] == "turn/end")
    name, spelled = next((n, s) for n, s in spellings(events[index]) if n == "N2 failure record")
    codes = {fault: _upgrade([*events[:index], broken, *events[index + 1 :]]) for fault, broken in member_faults(name, spelled)}
    assert codes[f"{name}: data.reason.failure.message dropped"] == "LEGACY_SOURCE_INVALID"
    assert codes[f"{name}: data.reason.failure undeclared member"] == "LEGACY_SOURCE_INVALID"
    assert codes[f"{name}: data.reason.step string"] == "LEGACY_SOURCE_INVALID"


def test_inv_legacy_1_2_3_every_retired_form_is_refused_with_its_own_code() -> None:
    events = v0_sessions()[0]
    codes = {name: _upgrade([*events, raw]) for name, raw in retired_forms(len(events), 1)}
    for type_, code in REFUSED_TYPES.items():
        assert codes[f"retired {type_}"] == code.value
        assert codes[f"retired {type_} ignorable"] == code.value
    assert codes["retired fallback reason"] == "LEGACY_FALLBACK_REASON"
    assert codes["outside the v0 inventory"] == "LEGACY_UNKNOWN_TYPE"


# -- the rule space's unreachable cells ----------------------------------------------------------------


def test_unreachable_cells_are_declared_have_reasons_and_leave_the_denominator() -> None:
    unreachable = unreachable_cells()
    assert len(unreachable) == sum(len(paths) for paths, _ in UNREACHABLE.values())
    assert set(unreachable) <= declared_cells()
    assert all(reason for reason in unreachable.values())
    assert reachable_declared() == declared_cells() - set(unreachable)
    reach = declared_reach([])
    assert reach.cells == len(declared_cells()) - len(unreachable)
    assert reach.unreachable == len(unreachable)
    assert len(reach.unreached) == reach.cells
    assert not any(key.startswith("INV-REL-5 turn/end") for key in reach.unreached)
