"""INV-LEGACY: the v0-to-v1 edge checks each v0 event as a source, refuses what it cannot convert and
converts the rest by the enumerated normalisations only.

``V0_LOG`` is a v0 log that needs every normalisation (N1–N5, N7–N9), written the way a released v0
writer wrote it; ``V1_LOG`` is its v1 form, written out by hand from the normalisation list in
``model/legacy.py`` (and the released edge gives the same log).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from model_cases import PINNED, call_block, code_of, ev, refusal, replace, session

from sessionlog_spec.contracts.jsonl import load_session
from sessionlog_spec.contracts.jsonl import load_session as contracted_load_session
from sessionlog_spec.contracts.legacy import upgrade_v0
from sessionlog_spec.contracts.log import fold_session, seed_session
from sessionlog_spec.model.event import Event, decode_event
from sessionlog_spec.model.json_value import JsonObject, freeze, json_equal, thaw
from sessionlog_spec.model.legacy import StoredLog
from sessionlog_spec.model.load import LoadedSession, ReadLog, identity_of, read_log, save_session
from sessionlog_spec.model.load import load_session as model_load_session
from sessionlog_spec.model.session import EMPTY_SESSION, SessionState
from sessionlog_spec.model.trace import TraceState, restart_interrupted_turn
from sessionlog_spec.model.violation import Code, Violation
from sessionlog_spec.suite.agent.builder import basic_header

SID = "s-0"
V0_HEADER: dict[str, Any] = {"type": "session", "version": 0, "id": SID, "createdAt": 0, "cwd": "/work", "delegationDepth": 0}
V1_HEADER: dict[str, Any] = {**V0_HEADER, "version": 1}


def txt(text: str) -> dict[str, Any]:
    """A text block."""
    return {"type": "text", "text": text}


def minted(seq: int, kind: str = "message") -> str:
    """The id the edge gives a pre-identity message (or a retry chain, a compaction group) at ``seq``."""
    return f"legacy-{kind}:{SID}:{seq}"


def result_message(id_: str, text: str) -> dict[str, Any]:
    """A v1 tool-result message answering ``c1``."""
    block = {"type": "tool-result", "toolCallId": "c1", "content": [txt(text)], "isError": False}
    return {"id": id_, "role": "user", "source": {"kind": "tool", "callId": "c1"}, "content": [block]}


CALL = {"turn": 1, "step": 1, "callId": "c1", "name": "read_file", "arguments": '{"path": "a.py"}'}
FAILURE = {"message": "overloaded", "code": "E_OVERLOADED", "status": 429, "requestId": "req-1", "providerRetryAfterMs": 1000}
RETRY = {
    "turn": 1, "step": 1, "provider": "deepseek", "mode": "normal", "policyKey": "provider", "maxRetries": 2, "delayMs": 500,
    "failure": {"message": "overloaded", "code": "E_OVERLOADED"},
}
SHADOWED = [1, 6, 9, 11, 12]
SUMMARY = {
    "summary": [txt("Summary")], "shadowedRange": {"start": 1, "end": 12}, "shadowedSeqs": SHADOWED, "shadowedTokenCount": 120,
    **PINNED,
}
CHECKPOINT = {"id": "sum15", "role": "user", "content": [txt("Summary")], "source": {"kind": "plugin", "plugin": "compact"}}
GROUP = minted(13, "compaction")

V0_LOG: list[dict[str, Any]] = [
    ev("turn/start", 0, {"turn": 1, "trigger": {"kind": "user"}}),
    ev("user/message", 1, {"content": [txt("Fix it")], "source": {"kind": "user"}}, surfaceOp="append"),
    ev("step/start", 2, {"turn": 1, "step": 1}),
    ev("request/header", 3, {"header": {"config": PINNED, "messagePrefix": []}, "reason": "initial"}),
    ev("llm/retry", 4, {**RETRY, "retry": 1}),
    ev("llm/retry", 5, {**RETRY, "retry": 2}),
    ev("assistant/message", 6, {"turn": 1, "step": 1, "content": [txt("Reading."), call_block("c1")], "provenance": PINNED},
       surfaceOp="append"),
    ev("tool/call", 7, CALL),
    ev("tool/result", 8, {"turn": 1, "step": 1, "callId": "c1", "content": [txt("long output")], "isError": False},
       surfaceOp="append"),
    ev("tool/result", 9, {"turn": 1, "step": 1, "callId": "c1", "content": [txt("[elided]")], "isError": False},
       surfaceOp=replace(8, 8), sourceEventSeqs=[8]),
    ev("step/end", 10, {"turn": 1, "step": 1}),
    ev("steering/message", 11, {"turn": 1, "content": [txt("Also add a test")], "source": {"kind": "user"}}, surfaceOp="append"),
    ev("steering/message", 12, {"turn": 1, "message": {"id": "m12", "role": "user", "content": [txt("And docs")],
                                                      "source": {"kind": "user"}}}, surfaceOp="append"),
    ev("compact/start", 13, {"turn": 1}),
    ev("compact/summary", 14, SUMMARY),
    ev("user/message", 15, CHECKPOINT, surfaceOp=replace(1, 12), sourceEventSeqs=SHADOWED),
    ev("compact/end", 16, {"turn": 1}),
    ev("turn/end", 17, {"turn": 1, "reason": {"kind": "aborted"}}),
    ev("turn/start", 18, {"turn": 2}),
    ev("turn/end", 19, {"turn": 2, "reason": {"kind": "disposed"}}),
    ev("turn/start", 20, {"turn": 3}),
    ev("turn/end", 21, {"turn": 3, "reason": {"kind": "error", "step": 1, "failure": FAILURE}}),
    ev("turn/start", 22, {"turn": 4}),
    ev("turn/end", 23, {"turn": 4, "reason": {"kind": "error", "step": 0, "message": "boom"}}),
    ev("turn/start", 24, {"turn": 5}),
    ev("turn/end", 25, {"turn": 5, "reason": {"kind": "error", "step": 0, "message": "refused", "code": "E_POLICY"}}),
]

V1_LOG: list[dict[str, Any]] = [
    ev("turn/start", 0, {"turn": 1}),  # N1
    ev("user/message", 1, {"id": minted(1), "role": "user", "content": [txt("Fix it")], "source": {"kind": "user"}},
       surfaceOp="append"),  # N4
    V0_LOG[2],
    ev("request/header", 3, {"header": {"config": PINNED}, "reason": "initial"}),  # N5
    ev("llm/retry", 4, {**RETRY, "retry": 1, "retryId": minted(4, "retry")}),  # N8
    ev("llm/retry", 5, {**RETRY, "retry": 2, "retryId": minted(4, "retry")}),  # N8, the same chain
    ev("assistant/message", 6, {"turn": 1, "step": 1, "message": {
        "id": minted(6), "role": "assistant", "content": [txt("Reading."), call_block("c1")],
        "source": {"kind": "model", **PINNED},
    }}, surfaceOp="append"),  # N4
    V0_LOG[7],
    ev("tool/result", 8, {"turn": 1, "step": 1, "message": result_message(minted(8), "long output")}, surfaceOp="append"),  # N4
    ev("tool/result", 9, {"turn": 1, "step": 1, "message": result_message(minted(8), "[elided]")},
       surfaceOp=replace(8, 8), sourceEventSeqs=[8]),  # N4, id of the replaced message
    V0_LOG[10],
    ev("user/message", 11, {"id": minted(11), "role": "user", "content": [txt("Also add a test")], "source": {"kind": "user"}},
       surfaceOp="append"),  # N3, bare
    ev("user/message", 12, {"id": "m12", "role": "user", "content": [txt("And docs")], "source": {"kind": "user"}},
       surfaceOp="append"),  # N3, wrapped
    ev("compaction/start", 13, {"turn": 1, "compactionId": GROUP}),  # N7, N9
    ev("compaction/summary", 14, {**SUMMARY, "compactionId": GROUP}),  # N7, N9
    ev("user/message", 15, {**CHECKPOINT, "source": {"kind": "plugin", "plugin": "compact", "compactionId": GROUP}},
       surfaceOp=replace(1, 12), sourceEventSeqs=SHADOWED),  # N9
    ev("compaction/end", 16, {"turn": 1, "compactionId": GROUP}),  # N7, N9
    ev("turn/end", 17, {"turn": 1, "reason": {"kind": "aborted", "reason": {"kind": "legacy"}}}),  # N2
    V0_LOG[18],
    ev("turn/end", 19, {"turn": 2, "reason": {"kind": "aborted", "reason": {"kind": "disposed"}}}),  # N2
    V0_LOG[20],
    ev("turn/end", 21, {"turn": 3, "reason": {"kind": "error", "error": FAILURE}}),  # N2, the whole failure record
    V0_LOG[22],
    ev("turn/end", 23, {"turn": 4, "reason": {"kind": "error", "error": {"message": "boom", "code": "UNKNOWN"}}}),  # N2
    V0_LOG[24],
    ev("turn/end", 25, {"turn": 5, "reason": {"kind": "error", "error": {"message": "refused", "code": "E_POLICY"}}}),  # N2
]


def stored(events: list[Any], header: dict[str, Any] = V0_HEADER) -> StoredLog:
    """A stored log as the edge's type declares it: a frozen header and frozen events."""
    return StoredLog(frozen(header), tuple(freeze(e) for e in events))  # type: ignore[misc]


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


def upgraded_events(events: list[dict[str, Any]], header: dict[str, Any] = V0_HEADER) -> list[Any]:
    """The edge's output events, thawed."""
    return [thaw(e) for e in upgraded(events, header).events]


def with_event(event: dict[str, Any], at: int = 7) -> list[dict[str, Any]]:
    """``V0_LOG[:at]`` plus ``event`` at seq ``at`` (the rest of the log dropped)."""
    return [*V0_LOG[:at], {**event, "seq": at}]


def jsonl(header: dict[str, Any], events: list[dict[str, Any]]) -> str:
    """The stored JSONL text of a log."""
    return "".join(json.dumps(x) + "\n" for x in [header, *events])


def source_refusal(*events: Any, header: dict[str, Any] = V0_HEADER) -> Violation:
    """The edge's refusal of a log it must refuse as a malformed v0 source."""
    result = upgrade_v0(stored(list(events), header))
    assert isinstance(result, Violation) and result.code is Code.LEGACY_SOURCE_INVALID, result
    return result


TURN = ev("turn/start", 0, {"turn": 1})
HEADER_DELTA = ev("request/header-delta", 0, {"system": {"keepStart": 1, "keepEnd": 0, "insert": ["Be terse."]}})
FALLBACK = ev("request/header", 0, {"header": basic_header(), "reason": "fallback"})
MODE_SET = ev("mode/set", 0, {"mode": "plan"})


def turn_end(reason: object, seq: int = 1) -> dict[str, Any]:
    """A ``turn/end`` of turn 1 with ``reason``."""
    return ev("turn/end", seq, {"turn": 1, "reason": reason})


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


def test_inv_legacy_1_a_header_delta_is_refused_whatever_its_payload() -> None:
    """The retired type is refused before its payload is looked at."""
    assert code_of(upgrade_v0(stored([{**HEADER_DELTA, "data": None}]))) is Code.LEGACY_HEADER_DELTA


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


def test_inv_legacy_3_refusal_comes_before_any_v1_problem() -> None:
    """Every event is read as a v0 source before the log is validated as v1: a later mode/set wins
    over an earlier v1 problem (turn 5 started first)."""
    bad_turn = ev("turn/start", 0, {"turn": 5})
    assert code_of(upgrade_v0(stored([bad_turn, {**MODE_SET, "seq": 1}]))) is Code.LEGACY_MODE_SET


# -- INV-LEGACY-4: the frozen v0 inventory --------------------------------------------------------------------


@pytest.mark.parametrize("type_", ["assistant/attempt", "system/message", "goal/progress"])
def test_inv_legacy_4_edge_refuses_types_outside_the_inventory_even_ignorable(type_: str) -> None:
    """The edge cannot vouch for a type it does not know, marked ignorable or not."""
    for extra in ({}, {"ignorable": True}):
        assert code_of(upgrade_v0(stored(with_event({**ev(type_, 0, {}), **extra})))) is Code.LEGACY_UNKNOWN_TYPE


def test_inv_legacy_4_an_event_without_a_type_is_outside_the_inventory() -> None:
    """A missing or non-string type names no type of the inventory."""
    assert code_of(upgrade_v0(stored([{"seq": 0, "time": 0, "data": {}}]))) is Code.LEGACY_UNKNOWN_TYPE
    assert code_of(upgrade_v0(stored([ev(7, 0, {})]))) is Code.LEGACY_UNKNOWN_TYPE  # type: ignore[arg-type]


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


def test_inv_legacy_5_edge_keeps_every_envelope() -> None:
    """Seq, time, ignorable, surfaceOp and sources of each event are kept; none is added or dropped."""
    events = [{**e, "time": 1000 + 7 * i} for i, e in enumerate(V0_LOG)]
    result = upgraded(events)
    for before, after in zip(events, (thaw(e) for e in result.events), strict=True):
        assert isinstance(after, dict)
        assert {k: v for k, v in after.items() if k not in ("type", "data")} == {
            k: v for k, v in before.items() if k not in ("type", "data")
        }


def test_inv_legacy_5_edge_leaves_v1_shaped_events_alone() -> None:
    """Events already in v1 form are passed through as they are."""
    v1_shaped = V1_LOG[:6]
    assert upgraded_events(v1_shaped) == v1_shaped


def test_inv_legacy_5_n2_keeps_the_whole_failure_record() -> None:
    """Status, request id and the provider's retry-after survive the conversion of a legacy error."""
    out = upgraded_events([TURN, turn_end({"kind": "error", "step": 2, "failure": FAILURE})])
    assert out[1]["data"]["reason"] == {"kind": "error", "error": FAILURE}


def test_inv_legacy_5_n2_a_flat_error_keeps_its_code_or_reads_unknown() -> None:
    """``{kind, step, message, code?}``: the code is kept, and ``UNKNOWN`` only when there is none."""
    coded = upgraded_events([TURN, turn_end({"kind": "error", "step": 0, "message": "m", "code": "E1"})])
    assert coded[1]["data"]["reason"] == {"kind": "error", "error": {"message": "m", "code": "E1"}}
    bare = upgraded_events([TURN, turn_end({"kind": "error", "step": 0, "message": "m"})])
    assert bare[1]["data"]["reason"] == {"kind": "error", "error": {"message": "m", "code": "UNKNOWN"}}


def test_inv_legacy_5_n2_keeps_kinds_it_does_not_know() -> None:
    """A reason kind outside the legacy ones is not the edge's to judge: it reaches v1 validation as written."""
    result = upgrade_v0(stored([TURN, turn_end({"kind": "future-reason"})]))
    assert isinstance(result, Violation) or thaw(result.events[1]["data"]) == {"turn": 1, "reason": {"kind": "future-reason"}}
    if isinstance(result, Violation):
        assert result.code is Code.TURN_END_REASON_INVALID  # the model's own v1 rule, not the edge's


def test_inv_legacy_5_n3_does_not_invent_a_surface_op() -> None:
    """A steering message without ``surfaceOp`` stays without one, and v1 then refuses the message."""
    steering = ev("steering/message", 1, {"turn": 1, "content": [txt("hi")], "source": {"kind": "user"}})
    result = upgrade_v0(stored([TURN, steering]))
    assert isinstance(result, Violation) and result.code is Code.SURFACE_OP_MISSING
    assert result.message.startswith("v0 index 1:")


def test_inv_legacy_5_n3_a_wrapped_message_without_id_gets_one() -> None:
    """The carried message goes through N4 like any user message."""
    wrapped = {"turn": 1, "message": {"content": [txt("hi")], "source": {"kind": "user"}}}
    out = upgraded_events([TURN, ev("steering/message", 1, wrapped, surfaceOp="append")])
    assert out[1]["type"] == "user/message"
    assert out[1]["data"] == {"content": [txt("hi")], "source": {"kind": "user"}, "id": minted(1), "role": "user"}


def test_inv_legacy_5_n6_is_withdrawn_a_header_snapshot_keeps_its_spelling() -> None:
    """The edge does not canonicalise: an empty ``system`` reaches v1 validation as written."""
    header = {"config": PINNED, "system": "", "tools": []}
    events = [TURN, ev("request/header", 1, {"header": header, "reason": "initial"})]
    result = upgrade_v0(stored(events))
    if isinstance(result, Violation):
        assert result.code is Code.HEADER_NOT_CANONICAL  # the model's own v1 rule, not the edge's
    else:
        assert thaw(result.events[1]["data"]) == {"header": header, "reason": "initial"}


def _retry(seq: int, attempt: int, **data: Any) -> dict[str, Any]:
    return ev("llm/retry", seq, {**RETRY, "retry": attempt, **data})


def _retry_ids(out: list[Any]) -> list[object]:
    return [e["data"].get("retryId") for e in out if e["type"] == "llm/retry"]


IN_STEP = V0_LOG[:4]
"""Turn 1 and step 1 open, the request header in force (seq 3)."""


def test_inv_legacy_5_n8_a_retry_chain_shares_one_id() -> None:
    """Retries of one chain share the id minted for its first; another step or policy is another chain."""
    events = [*IN_STEP, _retry(4, 1), _retry(5, 2), _retry(6, 1, policyKey="other"), ev("step/end", 7, {"turn": 1, "step": 1}),
              ev("step/start", 8, {"turn": 1, "step": 2}), _retry(9, 1, step=2)]
    out = upgraded_events(events)
    assert _retry_ids(out) == [minted(4, "retry"), minted(4, "retry"), minted(6, "retry"), minted(9, "retry")]


def test_inv_legacy_5_n8_a_given_id_continues_its_chain() -> None:
    """A retry that names its id sets the chain's id for the retries that follow without one."""
    out = upgraded_events([*IN_STEP, _retry(4, 1, retryId="r-1"), _retry(5, 2)])
    assert _retry_ids(out) == ["r-1", "r-1"]


def test_inv_legacy_5_n8_a_malformed_id_is_not_replaced() -> None:
    """``retryId: null`` is the writer's, not a missing id: the edge leaves it, and the payload table refuses it."""
    assert "retryId" in source_refusal(*IN_STEP, _retry(4, 1, retryId=None)).message


def _compaction_ids(out: list[Any]) -> list[object]:
    return [e["data"].get("compactionId") for e in out if str(e["type"]).startswith("compaction/")]


def test_inv_legacy_5_n9_a_given_group_id_is_carried_to_summary_and_end() -> None:
    """An explicit compaction id is the group's id as much as a minted one."""
    events = [*V0_LOG[:13], ev("compact/start", 13, {"turn": 1, "compactionId": "k1"}), *V0_LOG[14:17]]
    out = upgraded_events(events)
    assert _compaction_ids(out) == ["k1", "k1", "k1"]
    assert out[15]["data"]["source"]["compactionId"] == "k1"


@pytest.mark.parametrize("closer", [ev("compaction/end", 1, {"turn": None}), ev("session/end-seed", 1, {})])
def test_inv_legacy_5_n9_end_and_end_seed_close_the_group(closer: dict[str, Any]) -> None:
    """After the group closes, a compaction event without an id gets none, and the payload table refuses it."""
    events = [ev("compaction/start", 0, {"turn": None}), closer, ev("compaction/end", 2, {"turn": None})]
    refused = source_refusal(*events)
    assert refused.message.startswith("v0 index 2:") and "compactionId" in refused.message


def test_inv_legacy_5_n9_a_malformed_group_id_is_not_replaced() -> None:
    """``compactionId: null`` is the writer's: the edge leaves it, and the payload table refuses it."""
    assert "compactionId" in source_refusal(ev("compact/start", 0, {"turn": None, "compactionId": None})).message


def test_inv_legacy_5_n9_only_compact_checkpoints_join_the_group() -> None:
    """A summary message whose source is not the compact plugin is left alone."""
    plain = {**CHECKPOINT, "source": {"kind": "user"}}
    events = [*V0_LOG[:15], ev("user/message", 15, plain, surfaceOp=replace(1, 12), sourceEventSeqs=SHADOWED)]
    assert upgraded_events(events)[15]["data"]["source"] == {"kind": "user"}


# -- INV-LEGACY-6: the output validates as v1 ------------------------------------------------------------------


def test_inv_legacy_6_output_is_a_valid_v1_log() -> None:
    """The upgraded events fold as a v1 session with the expected surface."""
    state = fold_session(list(upgraded(V0_LOG).events))
    assert isinstance(state, SessionState)
    assert state.surface.nodes == (15,)
    assert state.surface.replace_generation == 2


def test_inv_legacy_6_log_left_invalid_by_the_edge_is_refused_with_the_v1_code() -> None:
    """A v0 log whose every event is a valid source, but whose trace is wrong, is refused as v1 refuses it."""
    result = upgrade_v0(stored([TURN, ev("turn/end", 1, {"turn": 2, "reason": {"kind": "completed"}})]))
    assert isinstance(result, Violation) and result.code is Code.TURN_END_MISMATCH
    assert result.message.startswith("v0 index 1:")


def test_inv_legacy_6_loading_a_v0_log_gives_the_upgraded_session() -> None:
    """Load runs the edge, then validates: the session equals the fold of the hand-written v1 log."""
    result = load_session(jsonl(V0_HEADER, V0_LOG))
    expected = fold_session(V1_LOG, identity=identity_of({**V0_HEADER, "version": 1}))
    assert isinstance(result, LoadedSession) and isinstance(expected, SessionState)
    assert result.state == expected and result.closers == ()


QUEUED = {"id": "queued", "role": "user", "content": [txt("queued")], "source": {"kind": "user"}}
SPLICE = {"target": "next-turn", "start": 0, "inserted": [QUEUED]}
RESTART: list[dict[str, Any]] = [
    ev("turn/start", 0, {"turn": 1}),
    ev("step/start", 1, {"turn": 1, "step": 1}),
    ev("step/end", 2, {"turn": 1, "step": 1}),
    ev("agent/inbox/spliced", 3, SPLICE),
    ev("turn/start", 4, {"turn": 2}),
    ev("step/start", 5, {"turn": 2, "step": 1}),
    ev("step/end", 6, {"turn": 2, "step": 1}),
    ev("turn/end", 7, {"turn": 2, "reason": {"kind": "completed"}}),
]
"""A released v0 writer's resume: input queued for the next turn is spliced in and turn 2 starts
while turn 1, between steps, was never ended (upstream's own case, with a step in the new turn)."""


def decoded(raw: dict[str, Any]) -> Event:
    """A raw event the envelope rules admit, decoded."""
    event = decode_event(raw)
    assert isinstance(event, Event), event
    return event


def restart_with(at: int, event: dict[str, Any]) -> list[dict[str, Any]]:
    """``RESTART`` with the event at seq ``at`` replaced by ``event``."""
    return [{**event, "seq": at} if e["seq"] == at else e for e in RESTART]


def test_inv_legacy_6_a_turn_restarted_after_a_next_turn_splice_is_admitted_unchanged() -> None:
    """The released edge's ``legacyInterruptedTurnRestart``: turn 1 counts as abandoned, turn 2 opens
    with its steps numbered from 1, and nothing is written for turn 1 (no closer is inserted)."""
    result = upgraded(RESTART)
    assert thaw(result.header) == V1_HEADER
    assert [thaw(e) for e in result.events] == RESTART
    assert code_of(upgrade_v0(stored(RESTART[:5]))) is None  # the restarted turn may itself be the open tail


@pytest.mark.parametrize(
    "log",
    [
        restart_with(3, ev("agent/inbox/spliced", 3, {**SPLICE, "inserted": []})),
        restart_with(3, ev("agent/inbox/spliced", 3, {**SPLICE, "target": "next-step"})),
        [*RESTART[:2], ev("agent/inbox/spliced", 2, SPLICE), ev("turn/start", 3, {"turn": 2})],
        restart_with(4, ev("turn/start", 4, {"turn": 3})),
        restart_with(3, ev("approval/policy", 3, {"policy": "ask"})),
        [*RESTART[:4], ev("approval/policy", 4, {"policy": "ask"}), ev("turn/start", 5, {"turn": 2})],
    ],
    ids=["empty-inserted", "next-step-target", "step-open", "turn-not-next", "no-splice", "splice-not-just-before"],
)
def test_inv_legacy_6_the_restart_needs_every_condition(log: list[dict[str, Any]]) -> None:
    """Without any one of them the open turn refuses the ``turn/start`` as usual."""
    restart = [e["seq"] for e in log if e["type"] == "turn/start"][1]
    result = upgrade_v0(stored(log))
    assert isinstance(result, Violation) and result.code is Code.TURN_ALREADY_OPEN
    assert result.message.startswith(f"v0 index {restart}:")


def test_inv_legacy_6_only_an_inbox_splice_restarts_a_turn() -> None:
    """Another type carrying the splice's members does not: a v1 subagent descriptor of a later
    version is open to any member, so the edge reading a v1 log meets one."""
    lookalike = ev("subagent/descriptor", 3, {"version": 4, **SPLICE})
    assert code_of(upgrade_v0(stored(restart_with(3, lookalike), V1_HEADER))) is Code.TURN_ALREADY_OPEN
    open_turn = TraceState(open_turn=1, last_turn=1, last_step=1)
    start = decoded(RESTART[4])
    assert restart_interrupted_turn(open_turn, start, decoded(lookalike)) == open_turn
    assert restart_interrupted_turn(open_turn, start, decoded(RESTART[3])) == TraceState(last_turn=1)


def test_inv_legacy_6_a_restart_still_may_not_cross_an_open_compaction() -> None:
    """The abandoned turn is closed by the restart, so its open compaction is crossed: refused as any turn boundary."""
    compacting = [*RESTART[:3], ev("compact/start", 3, {"turn": 1}), *(dict(e, seq=e["seq"] + 1) for e in RESTART[3:])]
    assert code_of(upgrade_v0(stored(compacting))) is Code.COMPACTION_CROSSES_TURN


def test_inv_legacy_6_a_v1_log_is_refused_the_restart() -> None:
    """The extension is the edge's reading only: the same events as a v1 log are refused by read,
    load, fold, seed and append."""
    v1_text = jsonl(V1_HEADER, RESTART)
    assert code_of(read_log(v1_text)) is Code.TURN_ALREADY_OPEN
    assert code_of(load_session(v1_text)) is Code.TURN_ALREADY_OPEN
    assert code_of(fold_session(RESTART)) is Code.TURN_ALREADY_OPEN
    assert code_of(seed_session(RESTART)) is Code.TURN_ALREADY_OPEN
    assert refusal(session(RESTART[:4]), RESTART[4]) is Code.TURN_ALREADY_OPEN


def test_inv_legacy_6_reading_a_v0_log_admits_the_restart_and_later_appends_do_not() -> None:
    """Read of the v0 text goes through the edge; the session it gives then takes only v1 appends,
    so a second restart appended to it is refused."""
    read = read_log(jsonl(V0_HEADER, RESTART))
    assert isinstance(read, ReadLog) and read.state.trace.open_turn is None and read.state.trace.last_turn == 2
    live = session([ev("turn/start", 8, {"turn": 3}), ev("agent/inbox/spliced", 9, SPLICE)], read.state)
    assert refusal(live, ev("turn/start", 10, {"turn": 4})) is Code.TURN_ALREADY_OPEN


def test_inv_legacy_6_inv_repair_2_repair_closes_only_the_restarted_tail_turn() -> None:
    """As upstream's ``interruptedTurnClosers``: a ``turn/start`` forgets the abandoned turn, so loading
    a v0 log that stops inside turn 2 closes turn 2 and writes nothing for turn 1."""
    loaded = model_load_session(jsonl(V0_HEADER, RESTART[:6]))
    assert isinstance(loaded, LoadedSession)
    assert [(e.type, thaw(e.data)) for e in loaded.closers] == [
        ("step/end", {"turn": 2, "step": 1}),
        ("turn/end", {"turn": 2, "reason": {"kind": "interrupted"}}),
    ]


def test_inv_legacy_6_the_saved_form_of_a_restarted_log_is_not_a_v1_log() -> None:
    """The released consequence of writing nothing for the abandoned turn: the loaded session saved as
    v1 is refused when read back (so INV-JSONL-8's reload does not hold for such a log)."""
    loaded = model_load_session(jsonl(V0_HEADER, RESTART))
    assert isinstance(loaded, LoadedSession) and loaded.closers == ()
    assert code_of(read_log(save_session(loaded.header, loaded.state))) is Code.TURN_ALREADY_OPEN
    # INV-JSONL-8's contract states that exception: the contracted loader takes the log.
    assert isinstance(contracted_load_session(jsonl(V0_HEADER, RESTART)), LoadedSession)


# -- INV-LEGACY-7: the edge is a fixed point -----------------------------------------------------------------


def test_inv_legacy_7_upgrading_twice_is_upgrading_once() -> None:
    """The output is a v1 log, which the edge returns unchanged."""
    once = upgraded(V0_LOG)
    assert upgrade_v0(once) == once


def test_inv_legacy_7_a_restarted_turn_comes_back_unchanged() -> None:
    """The edge reads a v1 log as it reads its own output, so the interrupted-turn restart it admitted
    is admitted again (reading the same log as v1 is refused: see INV-LEGACY-6)."""
    once = upgraded(RESTART)
    assert upgrade_v0(once) == once


def test_inv_legacy_7_normalising_an_already_normalised_v0_log_changes_nothing() -> None:
    """The hand-written v1 events, labelled v0, come out exactly as they went in."""
    assert upgraded_events(V1_LOG) == V1_LOG


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
        legacy_error = isinstance(reason, dict) and reason["kind"] == "error" and "error" not in reason
        if isinstance(reason, dict) and (reason["kind"] == "disposed" or legacy_abort or legacy_error):
            found.append("legacy turn/end reason")
        if type_ in ("user/message", "tool/result", "assistant/message") and "id" not in data.get("message", data):
            found.append(f"{type_} without id")
        if (type_ == "llm/retry" and "retryId" not in data) or (str(type_).startswith("compact") and "compactionId" not in data):
            found.append(f"{type_} without its chain or group id")
    return found


def test_inv_legacy_8_output_holds_no_legacy_form() -> None:
    """No steering message, no compact/* type, no trigger, no messagePrefix, no legacy reason, no id-less message,
    retry or compaction event."""
    assert len(_legacy_forms(stored(V0_LOG).events)) >= 15
    assert _legacy_forms(upgraded(V0_LOG).events) == []


# -- INV-LEGACY-9: each v0 event is a valid released v0 source -------------------------------------------------


@pytest.mark.parametrize(
    "trigger",
    ["user", None, {}, {"kind": ""}, {"kind": 3}, {"source": "user"}],
    ids=["string", "null", "empty", "empty-kind", "number-kind", "no-kind"],
)
def test_inv_legacy_9_a_trigger_is_an_object_with_a_non_empty_kind(trigger: object) -> None:
    """N1 converts only the trigger a released v0 writer wrote."""
    result = source_refusal(ev("turn/start", 0, {"turn": 1, "trigger": trigger}))
    assert result.message.startswith("v0 index 0:")


def test_inv_legacy_9_a_turn_start_with_a_trigger_has_exactly_turn_and_trigger() -> None:
    """Turn 0, or another member beside the trigger, is a malformed legacy form."""
    source_refusal(ev("turn/start", 0, {"turn": 0, "trigger": {"kind": "user"}}))
    source_refusal(ev("turn/start", 0, {"turn": 1, "trigger": {"kind": "user"}, "note": "x"}))


@pytest.mark.parametrize(
    "data",
    [
        {"turn": 1, "step": 1, "reason": {"kind": "completed"}},
        {"turn": 0, "reason": {"kind": "completed"}},
        {"turn": 1, "reason": None},
        {"turn": 1, "reason": {"kind": 1}},
        {"turn": 1, "reason": {"kind": "completed", "message": "done"}},
        {"turn": 1, "reason": {"kind": "aborted", "note": "x"}},
        {"turn": 1, "reason": {"kind": "disposed", "note": "x"}},
    ],
    ids=["step-member", "turn-0", "null-reason", "number-kind", "completed-extra", "aborted-extra", "disposed-extra"],
)
def test_inv_legacy_9_a_turn_end_has_exactly_its_members(data: dict[str, Any]) -> None:
    """``{turn, reason}``, and each legacy reason kind exactly as it was written."""
    source_refusal(TURN, ev("turn/end", 1, data))


@pytest.mark.parametrize(
    "reason",
    [
        {"kind": "error", "message": "boom"},
        {"kind": "error", "step": -1, "message": "boom"},
        {"kind": "error", "step": 1},
        {"kind": "error", "step": 1, "message": 5},
        {"kind": "error", "step": 1, "message": "boom", "code": 1},
        {"kind": "error", "step": 1, "message": "boom", "status": 500},
        {"kind": "error", "step": 1, "failure": {"message": "boom"}},
        {"kind": "error", "step": 1, "failure": {"message": "boom", "code": "E", "retryable": True}},
        {"kind": "error", "step": 1, "failure": {"message": 1, "code": "E"}},
        {"kind": "error", "step": 1, "failure": "boom"},
        {"kind": "error", "step": 1, "failure": FAILURE, "message": "boom"},
    ],
    ids=["no-step", "negative-step", "no-message", "number-message", "number-code", "flat-extra", "no-code",
         "failure-extra", "number-failure-message", "string-failure", "failure-and-message"],
)
def test_inv_legacy_9_a_legacy_error_has_a_step_and_a_failure_record(reason: dict[str, Any]) -> None:
    """N2 converts ``{kind, step, failure}`` and ``{kind, step, message, code?}`` and nothing else."""
    source_refusal(TURN, turn_end(reason))


@pytest.mark.parametrize(
    "data",
    [
        {"turn": 1, "content": [], "source": {"kind": "user"}, "extra": True},
        {"content": [], "source": {"kind": "user"}},
        {"turn": -1, "content": [], "source": {"kind": "user"}},
        {"turn": 1, "message": {"id": "m", "role": "user", "content": [], "source": {"kind": "user"}}, "extra": True},
        {"turn": 1, "message": "hello"},
        None,
    ],
    ids=["bare-extra", "no-turn", "negative-turn", "wrapped-extra", "string-message", "null"],
)
def test_inv_legacy_9_a_steering_message_has_exactly_its_members(data: object) -> None:
    """``{turn, message}`` or ``{turn, content, source}``, with a non-negative turn."""
    source_refusal(TURN, ev("steering/message", 1, data, surfaceOp="append"))


def test_inv_legacy_9_a_header_snapshot_is_an_object_with_an_array_prefix() -> None:
    """N5 drops a ``messagePrefix`` array; a prefix of another kind, or no snapshot object, is refused."""
    source_refusal(TURN, ev("request/header", 1, {"header": {"config": PINNED, "messagePrefix": "x"}, "reason": "initial"}))
    source_refusal(TURN, ev("request/header", 1, {"header": None, "reason": "initial"}))


def test_inv_legacy_9_a_pre_identity_assistant_message_has_an_object_provenance() -> None:
    """The provenance becomes the message's model source, so it must be an object."""
    data = {"turn": 1, "step": 1, "content": [txt("ok")], "provenance": "deepseek"}
    source_refusal(TURN, ev("step/start", 1, {"turn": 1, "step": 1}), ev("assistant/message", 2, data, surfaceOp="append"))


def test_inv_legacy_9_a_rewriting_result_needs_a_message_to_take_its_id_from() -> None:
    """A pre-identity rewrite of an event that carries no message id (here a turn/start) is refused."""
    rewrite = ev("tool/result", 1, {"turn": 1, "step": 0, "callId": "c", "content": [], "isError": False},
                 surfaceOp=replace(0, 0), sourceEventSeqs=[0])
    assert "v0 index 1" in source_refusal(TURN, rewrite).message


@pytest.mark.parametrize("type_", ["turn/start", "user/message", "compact/start", "vendor/telemetry"])
def test_inv_legacy_9_data_is_an_object_whatever_the_type(type_: str) -> None:
    """A payload that is not an object is refused before the type is looked up."""
    source_refusal(ev(type_, 0, None))
    source_refusal(ev(type_, 0, [1], ignorable=True))


def test_inv_legacy_9_a_delivery_marker_of_this_generation_names_this_session() -> None:
    """A marker this session wrote names it; one inherited from the parent's seed may name the parent."""
    marker = "session-log-deepseek/delivery-accepted"
    source_refusal(TURN, ev(marker, 1, {"sessionId": "other", "throughSeq": 0}))
    assert upgraded_events([TURN, ev(marker, 1, {"sessionId": SID, "throughSeq": 0})])
    child = {**V0_HEADER, "parentSession": "parent", "seedLength": 2}
    inherited = [TURN, ev(marker, 1, {"sessionId": "parent", "throughSeq": 0}), ev("session/end-seed", 2, {})]
    assert upgraded_events(inherited, header=child)
    source_refusal(*inherited[:2], ev(marker, 2, {"sessionId": "parent", "throughSeq": 0}), header=child)


def test_inv_legacy_9_members_only_v1_has_are_refused_in_a_v0_log() -> None:
    """A v0 delivery marker has no ``sessionFormatVersion``; the same event is a valid v1 event."""
    marker = ev("session-log-deepseek/delivery-accepted", 1, {"sessionId": SID, "throughSeq": 0, "sessionFormatVersion": 1})
    assert "sessionFormatVersion" in source_refusal(TURN, marker).message


@pytest.mark.parametrize(
    "event",
    [
        ev("compact/start", 0, {"turn": 1, "note": "manual"}),
        ev("approval/asked", 0, {"id": "", "toolName": "bash"}),
        ev("user/message", 0, {"content": [{"type": "text"}], "source": {"kind": "user"}}, surfaceOp="append"),
    ],
    ids=["unexpected-member", "empty-id", "nested-block"],
)
def test_inv_legacy_9_each_converted_payload_is_checked_by_the_v0_payload_table(event: dict[str, Any]) -> None:
    """After its normalisations, each payload must be one the released v0 payload table admits."""
    assert "payload" in source_refusal(event).message


def test_inv_legacy_9_a_legacy_error_needs_a_non_empty_message() -> None:
    """The converted failure record is judged like any other: an empty message is refused."""
    source_refusal(TURN, turn_end({"kind": "error", "step": 0, "message": ""}))


def test_inv_legacy_9_problems_are_found_in_reading_order() -> None:
    """The first event with a problem decides, whatever comes after it."""
    late_mode_set = {**MODE_SET, "seq": 1}
    assert code_of(upgrade_v0(stored([42, late_mode_set]))) is Code.ENVELOPE_NOT_OBJECT
    assert code_of(upgrade_v0(stored([{**TURN, "seq": 3}, late_mode_set]))) is Code.SEQ_NOT_CONTIGUOUS
    malformed = ev("turn/start", 0, {"turn": 1, "trigger": "user"})
    assert code_of(upgrade_v0(stored([malformed, late_mode_set]))) is Code.LEGACY_SOURCE_INVALID
    assert code_of(upgrade_v0(stored([{**MODE_SET, "seq": 0}, malformed]))) is Code.LEGACY_MODE_SET
