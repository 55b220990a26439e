"""The points the generated documents decide hold in the model: the payload codes table, the order
within the surface stage, the edge's half-matching forms and the retry step before any step ended."""

from __future__ import annotations

import random
from typing import Any

from sessionlog_spec.check_order import check_order, payload_codes
from sessionlog_spec.model.json_value import JsonObject, as_object, freeze
from sessionlog_spec.model.legacy import StoredLog, upgrade_v0
from sessionlog_spec.model.session import EMPTY_SESSION, append_event, fold_session
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.suite.fuzz.schema_faults import keyword_sites
from sessionlog_spec.suite.fuzz.witness import drawn_events

V0 = {"type": "session", "version": 0, "id": "s", "createdAt": 0, "delegationDepth": 0}


def _object(value: object) -> JsonObject:
    frozen = as_object(freeze(value))
    assert frozen is not None
    return frozen


def _code(answer: object) -> str | None:
    return answer.code.value if isinstance(answer, Violation) else None


def test_a_payload_fault_gets_a_code_the_table_lists_for_its_type_and_path() -> None:
    """Each payload-stage code a broken payload gets, on append and in a v0 log, is in its row."""
    rows = {row.event_type: row for row in payload_codes()}
    (payload,) = [stage for stage in check_order() if stage.name == "payload"]
    rng = random.Random(3)
    checked = 0
    for event in drawn_events()[::2]:
        sites = keyword_sites(event["type"], event["data"])
        for site in rng.sample(sites, min(4, len(sites))):
            broken: dict[str, Any] = {**event, "data": site.payload}
            v1 = _code(append_event(EMPTY_SESSION, broken))
            if v1 in payload.codes:
                assert v1 in rows[event["type"]].v1, (event["type"], v1)
                checked += 1
            v0 = _code(upgrade_v0(StoredLog(_object(V0), (_object(broken),))))
            if v0 in (*payload.codes, "LEGACY_SOURCE_INVALID"):
                assert v0 in rows[event["type"]].v0, (event["type"], v0)
    assert checked > 50


def test_a_replace_checks_its_range_before_its_sources() -> None:
    """Within the surface stage a replace meets the range checks before provenance (*Within a stage*)."""
    user = {"id": "u", "role": "user", "content": [], "source": {"kind": "user"}}
    log = [{"type": "user/message", "seq": 0, "time": 0, "data": user, "surfaceOp": "append"}]
    state = fold_session(log)
    assert not isinstance(state, Violation)
    replace = {"op": "replace", "start": 5, "end": 0}
    event = {"type": "user/message", "seq": 1, "time": 0, "data": user, "surfaceOp": replace, "sourceEventSeqs": [0, 0]}
    assert _code(append_event(state, event)) == "REPLACE_START_NOT_ON_SURFACE"
    appended = {**event, "surfaceOp": "append"}
    assert _code(append_event(state, appended)) == "SOURCES_DUPLICATE"


def test_a_half_matching_legacy_form_is_a_malformed_source() -> None:
    """N3 forms are exact; an N4 form left unconverted meets the v0 table: both LEGACY_SOURCE_INVALID."""
    turn = {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}}
    step = {"type": "step/start", "seq": 1, "time": 0, "data": {"turn": 1, "step": 1}}
    steering = {"type": "steering/message", "seq": 1, "time": 0, "data": {"turn": 1, "content": []}, "surfaceOp": "append"}
    result = {
        "type": "tool/result", "seq": 2, "time": 0, "surfaceOp": "append",
        "data": {"turn": 1, "step": 1, "callId": 5, "content": [], "isError": False},
    }  # fmt: skip
    for log in ((turn, steering), (turn, step, result)):
        assert _code(upgrade_v0(StoredLog(_object(V0), tuple(_object(e) for e in log)))) == "LEGACY_SOURCE_INVALID"


def test_a_retry_before_any_step_ended_names_step_0_and_starts_at_attempt_1() -> None:
    header = {"header": {"config": {"provider": "p", "model": "m"}}, "reason": "initial"}
    retry = {"turn": 1, "step": 0, "provider": "p", "policyKey": "k", "retryId": "r", "retry": 1, "delayMs": 0,
             "failure": {"message": "busy", "code": "RATE"}, "maxRetries": 3, "mode": "normal"}  # fmt: skip
    log: list[dict[str, Any]] = [
        {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}},
        {"type": "request/header", "seq": 1, "time": 0, "data": header},
    ]
    state = fold_session(log)
    assert not isinstance(state, Violation)
    event = {"type": "llm/retry", "seq": 2, "time": 0, "data": retry}
    first = append_event(state, event)
    assert _code(first) is None, first
    assert _code(append_event(state, {**event, "data": {**retry, "step": 1}})) == "RETRY_OUTSIDE_STEP"
    assert _code(append_event(state, {**event, "data": {**retry, "retry": 2}})) == "RETRY_NUMBER_INVALID"
