"""Writing a v1 session back in the legacy forms a v0 harness used.

Each form is the inverse of one normalisation of the v0-to-v1 edge (see
:mod:`sessionlog_spec.model.legacy`): ``turn/start.trigger`` (N1), legacy turn-end reasons (N2),
``steering/message`` (N3), pre-identity messages (N4), ``messagePrefix`` (N5) and ``compact/*``
names (N7).  Every form is written the way a released v0 writer wrote it, so each is a valid v0
source the released edge converts: a trigger is an object with a non-empty ``kind``, a steering
message keeps its ``surfaceOp``, a legacy error reason carries its ``step`` and either its message
and code or, as ``failure``, the whole failure record.  Header snapshots are written as they are:
the edge does not canonicalise them, so a non-canonical spelling is no legacy form.  Retry-chain
and compaction-group ids (N8, N9) have no form here: a writer may only leave out an id the edge
gives back, which takes the whole chain or group, and the suite's sessions hold neither.

A *style* is the set of forms a given v0 writer used; :func:`v0_events` applies every form of the
style to every event it fits, varying the spelling by seq so one log holds several spellings of the
same form, and flagging some renamed events ``ignorable``. :func:`restarted_turn` writes the one v0
pattern the edge admits though v1 refuses it: a turn restarted without its ``turn/end``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from sessionlog_spec.suite.agent.builder import SessionBuilder

FORMS = ("trigger", "legacy-reasons", "steering", "pre-identity", "message-prefix", "compact-names")
FAILURE_MEMBERS = frozenset({"message", "code", "status", "providerRetryAfterMs", "requestId"})
"""The members a legacy failure record may hold; a v1 error with any other stays in its v1 form."""


def v0_events(events: Iterable[Mapping[str, Any]], style: frozenset[str]) -> list[dict[str, Any]]:
    """``events`` (a valid v1 log) as a v0 writer with ``style`` would have written them."""
    return [v0_event(copy.deepcopy(dict(event)), style) for event in events]


def v0_event(event: dict[str, Any], style: frozenset[str]) -> dict[str, Any]:
    """One event in the legacy spelling ``style`` gives it (itself when no form fits)."""
    type_, seq, data = event["type"], event["seq"], event["data"]
    if type_ == "turn/start" and "trigger" in style:
        data["trigger"] = {"kind": "user"} if seq % 2 else {"kind": "schedule", "id": seq}
    elif type_ == "turn/end" and "legacy-reasons" in style:
        data["reason"] = legacy_reason(data["reason"], seq)
    elif type_ == "user/message" and "steering" in style and _plain_append(event) and seq % 3 != 2:
        event["type"] = "steering/message"
        bare = {"turn": 1, "content": data["content"], "source": data["source"]}
        event["data"] = {"turn": 1, "message": data} if seq % 3 == 0 else bare
    elif type_ in ("user/message", "assistant/message", "tool/result") and "pre-identity" in style:
        event["data"] = pre_identity(type_, data)
    elif type_ == "request/header" and "message-prefix" in style:
        data["header"]["messagePrefix"] = [{"role": "user", "content": [{"type": "text", "text": "earlier"}]}]
    elif type_.startswith("compaction/") and "compact-names" in style:
        event["type"] = "compact/" + type_.split("/", 1)[1]
    if event["type"] != type_ and seq % 4 == 1:
        # A writer that flagged its own extension types as skippable: the edge converts them all
        # the same, and a reader that skipped them would keep a legacy form.
        event["ignorable"] = True
    return event


def _plain_append(event: Mapping[str, Any]) -> bool:
    return event.get("surfaceOp") == "append" and "sourceEventSeqs" not in event


def legacy_reason(reason: dict[str, Any], seq: int) -> dict[str, Any]:
    """A legacy spelling of a v1 turn-end reason that the edge maps back to it."""
    kind = reason["kind"]
    cause = reason.get("reason", {}).get("kind") if kind == "aborted" else None
    if cause == "legacy":
        return {"kind": "aborted"}
    if cause == "disposed":
        return {"kind": "disposed"}
    if kind == "error" and set(reason["error"]) <= FAILURE_MEMBERS:
        error = dict(reason["error"])
        # The flat spelling holds a message and a code only (a missing code reads as UNKNOWN); a
        # richer failure record was always written whole, as ``failure``.
        if seq % 2 == 0 and set(error) == {"message", "code"}:
            flat = {"kind": "error", "step": 0, "message": error["message"]}
            return flat if error["code"] == "UNKNOWN" and seq % 4 == 0 else {**flat, "code": error["code"]}
        return {"kind": "error", "step": 1, "failure": error}
    return reason


def pre_identity(type_: str, data: dict[str, Any]) -> dict[str, Any]:
    """A message payload as written before messages had ids."""
    if type_ == "user/message":
        return {"content": data["content"], "source": data["source"]}
    rest = {k: v for k, v in data.items() if k != "message"}
    message = data["message"]
    if type_ == "assistant/message":
        provenance = {k: v for k, v in message["source"].items() if k != "kind"}
        return {**rest, "content": message["content"], "provenance": provenance}
    block = message["content"][0]
    # A writer before ids always wrote the error flag; a current block may leave it out (not an error).
    is_error = block.get("isError", False)
    return {**rest, "callId": message["source"]["callId"], "content": block["content"], "isError": is_error}


def restarted_turn(builder: SessionBuilder, inserted: int = 1) -> list[dict[str, Any]]:
    """The interrupted-turn restart of released v0 writers, after the builder's log (a turn open, no
    step): an ``agent/inbox/spliced`` into the next turn with ``inserted`` messages, then the
    ``turn/start`` of the next turn, the open one never ended."""
    trace = builder.state.trace
    assert trace.open_turn is not None and trace.open_step is None
    seq, time = builder.next_seq, builder.time
    messages = [
        {
            "id": f"inbox-{seq}-{i}",
            "role": "user",
            "content": [{"type": "text", "text": "Also check the lexer."}],
            "source": {"kind": "user"},
        }
        for i in range(inserted)
    ]
    splice = {"target": "next-turn", "start": len(builder.state.surface.nodes), "inserted": messages, "removedCount": 0}
    return [
        {"type": "agent/inbox/spliced", "seq": seq, "time": time + 1, "data": splice},
        {"type": "turn/start", "seq": seq + 1, "time": time + 2, "data": {"turn": trace.open_turn + 1}},
    ]
