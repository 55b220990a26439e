"""The v0-to-v1 edge: each normalisation, each refusal, and the fixed point."""

from __future__ import annotations

from typing import Any

import pytest

from seqlog import Code, SeqlogError, StoredLog, thaw, upgrade_v0

V0 = {"type": "session", "version": 0, "id": "s", "createdAt": 0, "delegationDepth": 0}


def _upgrade(*events: dict[str, Any]) -> list[Any]:
    return [thaw(e) for e in upgrade_v0(StoredLog(V0, tuple(events))).events]


def test_n1_n2_turn_brackets() -> None:
    out = _upgrade(
        {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1, "trigger": "user"}},
        {"type": "turn/end", "seq": 1, "time": 0, "data": {"turn": 1, "reason": {"kind": "disposed"}}},
        {"type": "turn/start", "seq": 2, "time": 0, "data": {"turn": 2}},
        {"type": "turn/end", "seq": 3, "time": 0, "data": {"turn": 2, "reason": {"kind": "error", "failure": {"message": "x"}}}},
    )
    assert out[0]["data"] == {"turn": 1}
    assert out[1]["data"]["reason"] == {"kind": "aborted", "reason": {"kind": "disposed"}}
    assert out[3]["data"]["reason"] == {"kind": "error", "error": {"message": "x", "code": "UNKNOWN"}}


def test_n3_n4_messages_gain_ids() -> None:
    bare = {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}}
    out = _upgrade(
        {"type": "steering/message", "seq": 0, "time": 0, "data": {"turn": 1, **bare}},
        {"type": "user/message", "seq": 1, "time": 0, "data": bare, "surfaceOp": "append"},
    )
    assert out[0]["type"] == "user/message" and out[0]["surfaceOp"] == "append"
    assert out[0]["data"]["id"] == "legacy-message:s:0" and out[1]["data"]["id"] == "legacy-message:s:1"


def test_n5_n6_n7_headers_and_renames() -> None:
    header = {"config": {"provider": "p", "model": "m"}, "messagePrefix": [], "system": "", "tools": []}
    out = _upgrade(
        {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}},
        {"type": "request/header", "seq": 1, "time": 0, "data": {"header": header, "reason": "initial"}},
        {"type": "compact/start", "seq": 2, "time": 0, "data": {"compactionId": "c", "turn": 1}},
    )
    assert out[1]["data"]["header"] == {"config": {"provider": "p", "model": "m"}}
    assert out[2]["type"] == "compaction/start"


@pytest.mark.parametrize(
    ("event", "code"),
    [
        ({"type": "mode/set", "seq": 0, "time": 0, "data": {}}, Code.LEGACY_MODE_SET),
        ({"type": "request/header-delta", "seq": 0, "time": 0, "data": {}}, Code.LEGACY_HEADER_DELTA),
        ({"type": "request/header", "seq": 0, "time": 0, "data": {"reason": "fallback"}}, Code.LEGACY_FALLBACK_REASON),
        ({"type": "x/new", "seq": 0, "time": 0, "data": {}, "ignorable": True}, Code.LEGACY_UNKNOWN_TYPE),
        ({"type": "turn/end", "seq": 0, "time": 0, "data": {"turn": 1, "reason": {"kind": "completed"}}}, Code.TURN_END_MISMATCH),
    ],
)
def test_refusals(event: dict[str, Any], code: Code) -> None:
    with pytest.raises(SeqlogError) as refused:
        upgrade_v0(StoredLog(V0, (event,)))
    assert refused.value.code == code


def test_v1_passes_through_and_the_edge_is_a_fixed_point() -> None:
    events = ({"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1, "trigger": "x"}},)
    once = upgrade_v0(StoredLog(V0, events))
    assert upgrade_v0(once) is once
    with pytest.raises(SeqlogError) as unsupported:
        upgrade_v0(StoredLog({**V0, "version": 3}, ()))
    assert unsupported.value.code == Code.FORMAT_VERSION_UNSUPPORTED


def test_a_rewrite_that_targets_a_non_object_is_refused_not_crashed() -> None:
    rewrite = {"type": "tool/result", "seq": 1, "time": 0, "data": {"callId": "c", "content": [], "isError": False},
               "surfaceOp": {"op": "replace", "start": 0, "end": 0}}
    with pytest.raises(SeqlogError) as refused:
        upgrade_v0(StoredLog(V0, (5, rewrite)))
    assert refused.value.code == Code.ENVELOPE_NOT_OBJECT
