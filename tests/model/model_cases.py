"""Small raw events and builder states shared by the model tests.

Raw events are plain ``dict``s in the stored JSON form.  Sessions are built through the contracted
:func:`sessionlog_spec.contracts.log.append_event`, so every accepted step also checks the postconditions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sessionlog_spec.contracts.log import append_event, seed_session
from sessionlog_spec.model.repair import NOT_STARTED_TEXT
from sessionlog_spec.model.session import EMPTY_SESSION, SessionState
from sessionlog_spec.model.violation import Code, Violation
from sessionlog_spec.suite.agent.builder import SessionBuilder, basic_header, realistic_session, text_block

T0 = 1_700_000_000_000
PINNED = {"provider": "deepseek", "model": "deepseek-chat"}
RawEvent = dict[str, Any]


def ev(type_: str, seq: int, data: Any, time: int = T0, **envelope: Any) -> RawEvent:
    """A raw event."""
    return {"type": type_, "seq": seq, "time": time, "data": data, **envelope}


def user_data(id_: str, text: str = "hi") -> RawEvent:
    """A user message payload."""
    return {"id": id_, "role": "user", "content": [text_block(text)], "source": {"kind": "user"}}


def user(seq: int, op: Any = "append", **envelope: Any) -> RawEvent:
    """A user/message at ``seq`` with surfaceOp ``op`` (omitted when ``None``)."""
    if op is not None:
        envelope["surfaceOp"] = op
    return ev("user/message", seq, user_data(f"u{seq}", f"message {seq}"), **envelope)


def replace(start: int, end: int) -> RawEvent:
    """A replace surfaceOp."""
    return {"op": "replace", "start": start, "end": end}


def replacing(seq: int, start: int, end: int, *sources: int) -> RawEvent:
    """A user/message at ``seq`` replacing ``start..end`` and citing ``sources``."""
    return user(seq, op=replace(start, end), sourceEventSeqs=list(sources))


CALL_NAME = "read_file"
CALL_ARGUMENTS = '{"path": "a.py"}'
"""The name and raw arguments of every call the fixtures advertise (a ``tool/call`` repeats both)."""


def call_block(call_id: str) -> RawEvent:
    """A tool-call content block."""
    return {"type": "tool-call", "id": call_id, "name": CALL_NAME, "arguments": CALL_ARGUMENTS}


def assistant_data(turn: int, step: int, calls: Sequence[str] = (), id_: str = "a1", text: str = "ok") -> RawEvent:
    """An assistant message payload asking for ``calls``."""
    message = {
        "id": id_,
        "role": "assistant",
        "content": [text_block(text), *(call_block(c) for c in calls)],
        "source": {"kind": "model", **PINNED},
    }
    return {"turn": turn, "step": step, "message": message}


def result_data(
    turn: int, step: int, call_id: str, text: str = "ok", *, is_error: bool = False, id_: str | None = None
) -> RawEvent:
    """A tool result payload answering ``call_id``."""
    block = {"type": "tool-result", "toolCallId": call_id, "content": [text_block(text)], "isError": is_error}
    message = {"id": id_ or f"r-{call_id}", "role": "user", "source": {"kind": "tool", "callId": call_id}, "content": [block]}
    return {"turn": turn, "step": step, "message": message}


def not_started_data(turn: int, step: int, call_id: str, seq: int) -> RawEvent:
    """The exact crash-repair result for ``call_id``, asked for but never started, written at ``seq``."""
    data = result_data(turn, step, call_id, NOT_STARTED_TEXT, is_error=True, id_=f"interrupted-tool-result-{call_id}-{seq}")
    return {**data, "error": {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}}


def call_data(turn: int, step: int, call_id: str) -> RawEvent:
    """A tool/call payload starting the call ``call_id`` as advertised by :func:`call_block`."""
    return {"turn": turn, "step": step, "callId": call_id, "name": CALL_NAME, "arguments": CALL_ARGUMENTS}


def compaction_start_data(compaction_id: str = "k1", turn: int | None = None) -> RawEvent:
    """A ``compaction/start`` payload owned by ``turn`` (``None``: between turns)."""
    return {"compactionId": compaction_id, "turn": turn}


def summary_data(shadowed: Sequence[int], compaction_id: str = "k1") -> RawEvent:
    """A ``compaction/summary`` payload of the open compaction ``compaction_id`` over the surface
    span ``shadowed`` (its seqs, in surface order)."""
    return {
        "compactionId": compaction_id,
        "summary": [text_block("Summary of earlier work.")],
        "shadowedRange": {"start": shadowed[0], "end": shadowed[-1]},
        "shadowedSeqs": list(shadowed),
        "shadowedTokenCount": 40 * len(shadowed),
        **PINNED,
    }


def title_data(title: str = "Fix the parser") -> RawEvent:
    """A title the user typed: it cites no message, so it is valid anywhere in a log."""
    return {"title": title, "messageSeqs": [], "source": {"kind": "user"}}


def header_data(reason: str = "initial", **header: Any) -> RawEvent:
    """A request/header payload: a pinned header with ``header`` members merged in."""
    return {"header": {"config": dict(PINNED), **header}, "reason": reason}


def code_of(result: object) -> Code | None:
    """The violation code of ``result``, or ``None`` when it was accepted."""
    return result.code if isinstance(result, Violation) else None


def session(raws: Iterable[RawEvent], state: SessionState = EMPTY_SESSION) -> SessionState:
    """The session after appending every raw event; each must be accepted."""
    for raw in raws:
        result = append_event(state, raw)
        assert isinstance(result, SessionState), (raw, result)
        state = result
    return state


def refusal(state: SessionState, raw: object) -> Code | None:
    """The code the session refuses ``raw`` with (``None`` when it is accepted)."""
    return code_of(append_event(state, raw))


def opened(step: bool = True) -> list[RawEvent]:
    """The start of a log: ``turn/start`` 1 at seq 0 and, with ``step``, ``step/start`` 1/1 at seq 1."""
    head = [ev("turn/start", 0, {"turn": 1})]
    return [*head, ev("step/start", 1, {"turn": 1, "step": 1})] if step else head


# -- builder states ------------------------------------------------------------------------------


def fresh() -> SessionBuilder:
    """An empty session."""
    return SessionBuilder()


def realistic() -> SessionBuilder:
    """Three closed turns with tool steps."""
    return realistic_session()


def open_step_with_pending() -> SessionBuilder:
    """Turn 1, step 2 open: call ``c`` answered, ``d`` recorded but unanswered, ``e`` never started."""
    b = SessionBuilder()
    b.turn_start()
    b.user_message()
    b.step_start()
    b.request_header(basic_header(), "initial")
    b.assistant_message("Reading.", ["a", "b"])
    for call in ("a", "b"):
        b.tool_call(call)
        b.tool_result(call)
    b.step_end()
    b.step_start()
    b.assistant_message("More.", ["c", "d", "e"])
    b.tool_call("c")
    b.tool_result("c")
    b.tool_call("d")
    return b


def between_steps() -> SessionBuilder:
    """Turn 2 open after its first step ended."""
    b = realistic_session(turns=1)
    b.turn_start()
    b.user_message("Next request")
    b.step_start()
    b.assistant_message("Thinking.")
    b.step_end()
    return b


def after_compaction() -> SessionBuilder:
    """Turn 3 open with a step open: turn 1 compacted, a tool result rewritten, nothing pending."""
    b = realistic_session(turns=2)
    b.turn_start()
    b.user_message("Go on")
    b.compaction(1, 11)
    b.step_start()
    b.assistant_message("Once more.", ["f"])
    b.tool_call("f")
    b.tool_result("f")
    b.rewrite_tool_result(b.tool_result_seqs()[-1])
    return b


def seeded_child() -> SessionBuilder:
    """A fork child seeded with a realistic log, closed by its end-of-seed marker."""
    state = seed_session(realistic_session(turns=1).events)
    assert isinstance(state, SessionState)
    return SessionBuilder(state)


def compaction_running() -> SessionBuilder:
    """Between turns, a compaction a ``/compact`` command started, not yet summarised."""
    b = realistic_session(turns=1)
    b.event("command/run", {"commandId": "cmd-compact", "name": "compact", "source": {"kind": "user"}})
    b.compaction_start("cmd-compact")
    return b


def compaction_summarised() -> SessionBuilder:
    """Turn 2 open and a compaction it owns summarised, not yet ended."""
    b = realistic_session(turns=1)
    b.turn_start()
    b.user_message("Next request")
    b.compaction_start()
    b.compaction_summary(*b.legal_ranges()[-1])
    return b


BUILDER_STATES = {
    "fresh": fresh,
    "realistic": realistic,
    "open_step_with_pending": open_step_with_pending,
    "between_steps": between_steps,
    "after_compaction": after_compaction,
    "seeded_child": seeded_child,
    "compaction_running": compaction_running,
    "compaction_summarised": compaction_summarised,
}
