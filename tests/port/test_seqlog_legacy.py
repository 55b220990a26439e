"""The v0-to-v1 edge: each normalisation, each refusal, the source checks, the fixed point, and the
released interrupted-turn restart the edge admits."""

from __future__ import annotations

import json
from typing import Any

import pytest
from seqlog_compare import Pair

from seqlog import Code, SeqlogError, Session, StoredLog, load_text, read_text, thaw, upgrade_v0
from seqlog.event import decode_event
from seqlog.payloads import generation_schema_file, payload_problem, schema_names
from seqlog.trace import Brackets, abandon_for_restart
from sessionlog_spec.model.json_value import freeze
from sessionlog_spec.model.legacy import StoredLog as ModelLog
from sessionlog_spec.model.legacy import upgrade_v0 as model_upgrade
from sessionlog_spec.model.violation import Violation

V0 = {"type": "session", "version": 0, "id": "s", "createdAt": 0, "delegationDepth": 0}
TEXT = [{"type": "text", "text": "hi"}]
TURN = {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}}


def _upgrade(*events: object, header: dict[str, Any] = V0) -> list[Any]:
    return [thaw(e) for e in upgrade_v0(StoredLog(header, tuple(events))).events]


def _refused(*events: object, header: dict[str, Any] = V0) -> SeqlogError:
    with pytest.raises(SeqlogError) as refused:
        upgrade_v0(StoredLog(header, tuple(events)))
    return refused.value


def _end(seq: int, turn: int, reason: object) -> dict[str, Any]:
    return {"type": "turn/end", "seq": seq, "time": 0, "data": {"turn": turn, "reason": reason}}


def _start(seq: int, turn: int) -> dict[str, Any]:
    return {"type": "turn/start", "seq": seq, "time": 0, "data": {"turn": turn}}


def test_n1_n2_turn_brackets() -> None:
    failure = {"message": "x", "code": "E", "status": 503, "requestId": "r-1", "providerRetryAfterMs": 10}
    out = _upgrade(
        {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1, "trigger": {"kind": "user"}}},
        _end(1, 1, {"kind": "disposed"}),
        _start(2, 2),
        _end(3, 2, {"kind": "error", "step": 1, "failure": failure}),
        _start(4, 3),
        _end(5, 3, {"kind": "error", "step": 0, "message": "y"}),
        _start(6, 4),
        _end(7, 4, {"kind": "aborted"}),
    )
    assert out[0]["data"] == {"turn": 1}
    assert out[1]["data"]["reason"] == {"kind": "aborted", "reason": {"kind": "disposed"}}
    assert out[3]["data"]["reason"] == {"kind": "error", "error": failure}
    assert out[5]["data"]["reason"] == {"kind": "error", "error": {"message": "y", "code": "UNKNOWN"}}
    assert out[7]["data"]["reason"] == {"kind": "aborted", "reason": {"kind": "legacy"}}


def test_n3_n4_messages_gain_ids() -> None:
    bare = {"content": TEXT, "source": {"kind": "user"}}
    out = _upgrade(
        {"type": "steering/message", "seq": 0, "time": 0, "data": {"turn": 1, **bare}, "surfaceOp": "append"},
        {"type": "user/message", "seq": 1, "time": 0, "data": bare, "surfaceOp": "append"},
        {"type": "steering/message", "seq": 2, "time": 0, "data": {"turn": 1, "message": bare}, "surfaceOp": "append"},
    )
    assert out[0]["type"] == "user/message" and out[0]["surfaceOp"] == "append"
    assert [e["data"]["id"] for e in out] == ["legacy-message:s:0", "legacy-message:s:1", "legacy-message:s:2"]


def test_n3_steering_without_surface_op_stays_without_one() -> None:
    steering = {"type": "steering/message", "seq": 0, "time": 0, "data": {"turn": 1, "content": TEXT, "source": {"kind": "user"}}}
    assert _refused(steering).code == Code.SURFACE_OP_MISSING


def test_n5_n7_headers_and_renames() -> None:
    header = {"config": {"provider": "p", "model": "m"}, "messagePrefix": []}
    out = _upgrade(
        TURN,
        {"type": "request/header", "seq": 1, "time": 0, "data": {"header": header, "reason": "initial"}},
        {"type": "compact/start", "seq": 2, "time": 0, "data": {"compactionId": "c", "turn": 1}},
    )
    assert out[1]["data"]["header"] == {"config": {"provider": "p", "model": "m"}}
    assert out[2]["type"] == "compaction/start"


def test_no_n6_a_header_snapshot_keeps_its_spelling() -> None:
    header = {"config": {"provider": "p", "model": "m"}, "system": ""}
    events = (TURN, {"type": "request/header", "seq": 1, "time": 0, "data": {"header": header, "reason": "initial"}})
    try:
        out = _upgrade(*events)
    except SeqlogError as refused:
        assert refused.code == Code.HEADER_NOT_CANONICAL  # v1's own rule, not the edge's
    else:
        assert out[1]["data"]["header"] == header


def test_n8_retry_chains_and_n9_compaction_groups_get_ids() -> None:
    failure = {"message": "m", "code": "C"}
    retry = {"turn": 1, "step": 1, "provider": "p", "mode": "always", "policyKey": "k", "delayMs": 0, "failure": failure}
    header = {"header": {"config": {"provider": "p", "model": "m"}}, "reason": "initial"}  # the retried request
    out = _upgrade(
        TURN,
        {"type": "step/start", "seq": 1, "time": 0, "data": {"turn": 1, "step": 1}},
        {"type": "request/header", "seq": 2, "time": 0, "data": header},
        {"type": "llm/retry", "seq": 3, "time": 0, "data": {**retry, "retry": 1}},
        {"type": "llm/retry", "seq": 4, "time": 0, "data": {**retry, "retry": 2}},
        {"type": "step/end", "seq": 5, "time": 0, "data": {"turn": 1, "step": 1}},
        {"type": "compact/start", "seq": 6, "time": 0, "data": {"turn": 1}},
        {"type": "compact/end", "seq": 7, "time": 0, "data": {"turn": 1, "error": "cancelled"}},  # no summary
    )
    assert out[3]["data"]["retryId"] == out[4]["data"]["retryId"] == "legacy-retry:s:3"
    assert out[6]["data"]["compactionId"] == out[7]["data"]["compactionId"] == "legacy-compaction:s:6"


@pytest.mark.parametrize(
    ("event", "code"),
    [
        ({"type": "mode/set", "seq": 0, "time": 0, "data": {}}, Code.LEGACY_MODE_SET),
        ({"type": "request/header-delta", "seq": 0, "time": 0, "data": None}, Code.LEGACY_HEADER_DELTA),
        ({"type": "request/header", "seq": 0, "time": 0, "data": {"reason": "fallback"}}, Code.LEGACY_FALLBACK_REASON),
        ({"type": "x/new", "seq": 0, "time": 0, "data": {}, "ignorable": True}, Code.LEGACY_UNKNOWN_TYPE),
        ({"type": "turn/end", "seq": 0, "time": 0, "data": {"turn": 1, "reason": {"kind": "completed"}}}, Code.TURN_END_MISMATCH),
        ({"type": "turn/start", "seq": 1, "time": 0, "data": {"turn": 1}}, Code.SEQ_NOT_CONTIGUOUS),
        ({"type": "x/new", "seq": 0, "time": 0, "data": None}, Code.LEGACY_SOURCE_INVALID),
    ],
)
def test_refusals(event: dict[str, Any], code: Code) -> None:
    assert _refused(event).code == code


@pytest.mark.parametrize(
    "event",
    [
        {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1, "trigger": "user"}},
        {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1, "trigger": {"kind": ""}}},
        {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 0, "trigger": {"kind": "user"}}},
        _end(0, 1, {"kind": "completed", "note": "x"}),
        _end(0, 1, {"kind": "disposed", "reason": {"kind": "user"}}),
        _end(0, 1, {"kind": "error", "message": "no step"}),
        _end(0, 1, {"kind": "error", "step": 1, "failure": {"message": "m", "code": "C", "retryable": True}}),
        {"type": "turn/end", "seq": 0, "time": 0, "data": {"turn": 1, "step": 1, "reason": {"kind": "completed"}}},
        {"type": "steering/message", "seq": 0, "time": 0, "data": {"content": TEXT, "source": {}}, "surfaceOp": "append"},
        {"type": "request/header", "seq": 0, "time": 0, "data": {"header": {"messagePrefix": "x"}, "reason": "initial"}},
        {"type": "session-log-deepseek/delivery-accepted", "seq": 0, "time": 0, "data": {"sessionId": "other", "throughSeq": 0}},
    ],
    ids=["string-trigger", "empty-kind", "turn-0", "completed-extra", "disposed-extra", "error-no-step", "failure-extra",
         "turn-end-step", "steering-no-turn", "prefix-string", "marker-other-session"],
)
def test_malformed_sources_are_refused(event: dict[str, Any]) -> None:
    assert _refused(event).code == Code.LEGACY_SOURCE_INVALID


def test_problems_are_found_in_reading_order() -> None:
    mode_set = {"type": "mode/set", "seq": 1, "time": 0, "data": {}}
    assert _refused(42, mode_set).code == Code.ENVELOPE_NOT_OBJECT
    trigger = {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1, "trigger": "user"}}
    assert _refused(trigger, mode_set).code == Code.LEGACY_SOURCE_INVALID


def test_v1_passes_through_and_the_edge_is_a_fixed_point() -> None:
    events = ({"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1, "trigger": {"kind": "x"}}},)
    once = upgrade_v0(StoredLog(V0, events))
    assert upgrade_v0(once) is once
    with pytest.raises(SeqlogError) as unsupported:
        upgrade_v0(StoredLog({**V0, "version": 3}, ()))
    assert unsupported.value.code == Code.FORMAT_VERSION_UNSUPPORTED


def test_a_rewrite_that_targets_a_non_object_is_refused_not_crashed() -> None:
    rewrite = {"type": "tool/result", "seq": 1, "time": 0, "data": {"callId": "c", "content": [], "isError": False},
               "surfaceOp": {"op": "replace", "start": 0, "end": 0}}
    assert _refused(5, rewrite).code == Code.ENVELOPE_NOT_OBJECT


def test_a_rewrite_of_an_event_without_a_message_id_is_refused() -> None:
    data = {"turn": 1, "step": 0, "callId": "c", "content": [], "isError": False}
    rewrite = {"type": "tool/result", "seq": 1, "time": 0, "data": data, "surfaceOp": {"op": "replace", "start": 0, "end": 0},
               "sourceEventSeqs": [0]}
    assert _refused(TURN, rewrite).code == Code.LEGACY_SOURCE_INVALID


# -- the v0 payload table (generation 0) -------------------------------------------------------------


def _model_code(*events: object) -> str | None:
    """The model edge's verdict on the same v0 log: its refusal code, or ``None`` when it converts."""
    result = model_upgrade(ModelLog(freeze(V0), tuple(freeze(e) for e in events)))  # type: ignore[arg-type, misc]
    return result.code.value if isinstance(result, Violation) else None


def _marker(seq: int, data: dict[str, Any]) -> dict[str, Any]:
    return {"type": "session-log-deepseek/delivery-accepted", "seq": seq, "time": 0, "data": data}


V0_ONLY_FAULTS = [
    # v1 keeps a marker of no format as owner-opaque members; v0 always checks throughSeq.
    pytest.param(_marker(1, {"sessionId": "s", "throughSeq": 5}), id="marker-through-seq-not-earlier"),
    pytest.param(_marker(1, {"sessionId": "", "throughSeq": 0}), id="marker-empty-session-id"),
    # v0 admits no sessionFormatVersion.
    pytest.param(_marker(1, {"sessionId": "s", "throughSeq": 0, "sessionFormatVersion": 1}), id="marker-format-version"),
    # v1 keeps a descriptor of another version as owner-opaque JSON; v0 refuses it.
    pytest.param({"type": "subagent/descriptor", "seq": 1, "time": 0, "data": {"version": 4, "x": 1}}, id="descriptor-v4"),
]


@pytest.mark.parametrize("event", V0_ONLY_FAULTS)
def test_v0_payloads_are_checked_against_the_generation_0_table(event: dict[str, Any]) -> None:
    """A payload generation 1 accepts but the released v0 table refuses is a malformed source."""
    assert payload_problem(event["type"], event["data"], event["seq"]) is None  # fine as v1
    assert payload_problem(event["type"], event["data"], event["seq"], 0) is not None
    assert _refused(TURN, event).code == Code.LEGACY_SOURCE_INVALID
    assert _model_code(TURN, event) == "LEGACY_SOURCE_INVALID"


@pytest.mark.parametrize(
    "event",
    [
        pytest.param({"type": "todo/write", "seq": 1, "time": 0, "data": {"todos": [], "extra": 1}}, id="extra-member"),
        pytest.param({"type": "step/start", "seq": 1, "time": 0, "data": {"turn": 1, "step": "1"}}, id="trace-type"),
        pytest.param({"type": "session/title", "seq": 1, "time": 0, "data": {"title": 1}}, id="wrong-leaf"),
    ],
)
def test_a_payload_invalid_in_both_generations_is_a_malformed_source(event: dict[str, Any]) -> None:
    """The edge names a bad v0 payload itself, before v1 would name it with its own code."""
    refused = _refused(TURN, event)
    assert refused.code == Code.LEGACY_SOURCE_INVALID and "v0 index 1" in str(refused)
    assert _model_code(TURN, event) == "LEGACY_SOURCE_INVALID"


def test_a_valid_v0_payload_of_a_type_that_differs_between_generations_converts() -> None:
    out = _upgrade(TURN, _marker(1, {"sessionId": "s", "throughSeq": 0}), _end(2, 1, {"kind": "completed"}))
    assert out[1]["data"] == {"sessionId": "s", "throughSeq": 0}
    assert _model_code(TURN, _marker(1, {"sessionId": "s", "throughSeq": 0}), _end(2, 1, {"kind": "completed"})) is None


def test_chunks_are_left_to_v1() -> None:
    """The released edge does not check chunk payloads: v1's own rule names a bad chunk."""
    chunk = {"type": "assistant/chunk", "seq": 1, "time": 0, "data": {"turn": 1}}
    refused = _refused(TURN, chunk)
    assert refused.code != Code.LEGACY_SOURCE_INVALID
    assert _model_code(TURN, chunk) == refused.code.value


def test_the_v0_schema_is_used_only_where_one_is_published() -> None:
    v0_files = [name for name in schema_names() if ".v0." in name]
    assert "subagent.descriptor.v0.schema.json" in v0_files
    assert "session-log-deepseek.delivery-accepted.v0.schema.json" in v0_files
    assert generation_schema_file("subagent/descriptor", 0) == "subagent.descriptor.v0.schema.json"
    assert generation_schema_file("todo/write", 0) == "todo.write.schema.json"
    assert generation_schema_file("subagent/descriptor", 1) == "subagent.descriptor.schema.json"


# -- the released interrupted-turn restart (legacyInterruptedTurnRestart) ------------------------------------

QUEUED = {"id": "queued", "role": "user", "content": TEXT, "source": {"kind": "user"}}
SPLICE = {"target": "next-turn", "start": 0, "inserted": [QUEUED]}
V1 = {**V0, "version": 1}


def _event(type_: str, seq: int, data: object) -> dict[str, Any]:
    return {"type": type_, "seq": seq, "time": 0, "data": data}


RESTART = [
    _start(0, 1),
    _event("step/start", 1, {"turn": 1, "step": 1}),
    _event("step/end", 2, {"turn": 1, "step": 1}),
    _event("agent/inbox/spliced", 3, SPLICE),
    _start(4, 2),
    _event("step/start", 5, {"turn": 2, "step": 1}),
    _event("step/end", 6, {"turn": 2, "step": 1}),
    _end(7, 2, {"kind": "completed"}),
]
"""A v0 writer's resume: turn 2 starts after a next-turn splice while turn 1, between steps, never ended."""


def _restart_with(at: int, event: dict[str, Any]) -> list[dict[str, Any]]:
    return [{**event, "seq": at} if e["seq"] == at else e for e in RESTART]


NOT_A_RESTART = {
    "empty-inserted": _restart_with(3, _event("agent/inbox/spliced", 3, {**SPLICE, "inserted": []})),
    "next-step-target": _restart_with(3, _event("agent/inbox/spliced", 3, {**SPLICE, "target": "next-step"})),
    "step-open": [*RESTART[:2], _event("agent/inbox/spliced", 2, SPLICE), _start(3, 2)],
    "turn-not-next": _restart_with(4, _start(4, 3)),
    "no-splice": _restart_with(3, _event("approval/policy", 3, {"policy": "ask"})),
    "splice-not-just-before": [*RESTART[:4], _event("approval/policy", 4, {"policy": "ask"}), _start(5, 2)],
}


def _text(header: dict[str, Any], events: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(x) + "\n" for x in [header, *events])


def test_an_interrupted_turn_restart_is_admitted_unchanged_and_stays_a_fixed_point() -> None:
    once = upgrade_v0(StoredLog(V0, tuple(RESTART)))
    assert [thaw(e) for e in once.events] == RESTART
    assert upgrade_v0(once) is once
    assert _model_code(*RESTART) is None


@pytest.mark.parametrize("events", list(NOT_A_RESTART.values()), ids=list(NOT_A_RESTART))
def test_without_any_one_condition_the_open_turn_refuses_the_restart(events: list[dict[str, Any]]) -> None:
    refused = _refused(*events)
    assert refused.code == Code.TURN_ALREADY_OPEN
    assert _model_code(*events) == refused.code.value


def test_only_an_inbox_splice_restarts_a_turn() -> None:
    """A later-version subagent descriptor (open to any member) carrying the splice's members does not."""
    lookalike = _restart_with(3, _event("subagent/descriptor", 3, {"version": 4, **SPLICE}))
    assert _refused(*lookalike, header=V1).code == Code.TURN_ALREADY_OPEN
    open_turn = Brackets(open_turn=1, last_turn=1, last_step=1)
    start = decode_event(RESTART[4])
    assert abandon_for_restart(open_turn, start, decode_event(lookalike[3])) == open_turn
    assert abandon_for_restart(open_turn, start, decode_event(RESTART[3])) == Brackets(last_turn=1)


def test_a_restart_still_may_not_cross_an_open_compaction() -> None:
    compacting = [*RESTART[:3], _event("compact/start", 3, {"turn": 1}), *({**e, "seq": e["seq"] + 1} for e in RESTART[3:])]
    assert _refused(*compacting).code == Code.COMPACTION_CROSSES_TURN
    assert _model_code(*compacting) == Code.COMPACTION_CROSSES_TURN.value


def test_a_v1_log_is_refused_the_restart() -> None:
    """Outside the edge the same events are plain v1: read, load, restore, seed and append refuse them."""
    for read in (read_text, load_text):
        with pytest.raises(SeqlogError) as refused:
            read(_text(V1, RESTART))
        assert refused.value.code == Code.TURN_ALREADY_OPEN
    with pytest.raises(SeqlogError) as restored:
        Session.restore(RESTART)
    assert restored.value.code == Code.TURN_ALREADY_OPEN
    with pytest.raises(SeqlogError) as seeded:
        Session.create(RESTART, header=V1)
    assert seeded.value.code == Code.TURN_ALREADY_OPEN
    live = Session.restore(RESTART[:4])
    with pytest.raises(SeqlogError) as appended:
        live.append_event(RESTART[4])
    assert appended.value.code == Code.TURN_ALREADY_OPEN


def test_a_read_v0_log_admits_the_restart_but_later_appends_do_not() -> None:
    session = read_text(_text(V0, RESTART)).session
    assert session.open_turn is None and session.brackets.last_turn == 2
    session.append_event(_start(8, 3))
    session.append_event(_event("agent/inbox/spliced", 9, SPLICE))
    with pytest.raises(SeqlogError) as refused:
        session.append_event(_start(10, 4))
    assert refused.value.code == Code.TURN_ALREADY_OPEN


def test_repair_closes_only_the_restarted_tail_turn() -> None:
    """As upstream's ``interruptedTurnClosers``: the abandoned turn 1 gets nothing, the open turn 2 its closers."""
    loaded = load_text(_text(V0, RESTART[:6]))
    assert [(e.type, thaw(e.data)) for e in loaded.closers] == [
        ("step/end", {"turn": 2, "step": 1}),
        ("turn/end", {"turn": 2, "reason": {"kind": "interrupted"}}),
    ]


@pytest.mark.parametrize(
    "events", [RESTART, RESTART[:6], *NOT_A_RESTART.values()], ids=["restart", "restart-open-tail", *NOT_A_RESTART]
)
@pytest.mark.parametrize("version", [0, 1])
def test_restarts_agree_with_the_model(events: list[dict[str, Any]], version: int) -> None:
    """upgrade_v0, read and load of the same log, as v0 and as v1, answer as the model answers."""
    pair = Pair()
    header = {**V0, "version": version}
    pair.call("upgrade_v0", log={"header": header, "events": events})
    text = _text(header, events)
    pair.call("read", jsonl=text)
    pair.call("load", jsonl=text)
    pair.call("state")
