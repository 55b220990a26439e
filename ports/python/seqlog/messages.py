"""Shapes of the three surface message events, and the tool calls and results they carry."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seqlog.errors import Code, SeqlogError
from seqlog.event import Event
from seqlog.jsonvalue import as_array, as_object, is_nonempty_string, is_safe_natural

ASSISTANT_DATA_KEYS = frozenset({"turn", "step", "message", "usage", "interrupted"})
TOOL_RESULT_DATA_KEYS = frozenset({"turn", "step", "message", "error", "meta"})


def _message_problem(message: object, role: str) -> str | None:
    msg = as_object(message)
    if msg is None or not is_nonempty_string(msg.get("id")):
        return "lacks an identified message"
    if msg.get("role") != role:
        return f'message must have role "{role}"'
    source = as_object(msg.get("source"))
    if source is None or not is_nonempty_string(source.get("kind")):
        return "message has an invalid source"
    content = as_array(msg.get("content"))
    if content is None:
        return "message content must be an array"
    for block in content:
        if not isinstance(block, Mapping) or not is_nonempty_string(block.get("type")):
            return "message content blocks must be objects with a string type"
    return None


def _count(value: object) -> bool:
    # JSON has one number type: 3.0 names turn 3 here as it does in the bracket events.  Whether the
    # number names the open turn or step is the trace's question, so 0 passes here.
    return is_safe_natural(value)


def _turn_step_problem(data: Mapping[str, Any]) -> str | None:
    if not _count(data.get("turn")) or not _count(data.get("step")):
        return "turn and step must be non-negative integers"
    return None


def _check_user_message(data: object) -> None:
    problem = _message_problem(data, "user")
    if problem is not None:
        raise SeqlogError(Code.USER_MESSAGE_INVALID, f"user/message {problem}")


def _assistant_problem(data: object) -> str | None:
    obj = as_object(data)
    if obj is None:
        return "data must be an object"
    if not ASSISTANT_DATA_KEYS.issuperset(obj):
        return f"has unknown data member(s) {sorted(set(obj) - ASSISTANT_DATA_KEYS)}"
    problem = _turn_step_problem(obj) or _message_problem(obj.get("message"), "assistant")
    if problem is not None:
        return problem
    message = obj["message"]
    source = message["source"]
    if source.get("kind") != "model" or not (
        is_nonempty_string(source.get("provider")) and is_nonempty_string(source.get("model"))
    ):
        return "message must have a model source with provider and model"
    if "interrupted" in obj and obj["interrupted"] is not True:
        return "interrupted must be absent or true"
    for block in message["content"]:
        if block.get("type") != "tool-call":
            continue
        if not is_nonempty_string(block.get("id")):
            return "tool-call block lacks an id"
        if not isinstance(block.get("name"), str) or not isinstance(block.get("arguments"), str):
            return "tool-call block needs a string name and raw string arguments"
    return None


def _tool_result_problem(data: object) -> str | None:
    obj = as_object(data)
    if obj is None:
        return "data must be an object"
    if not TOOL_RESULT_DATA_KEYS.issuperset(obj):
        return f"has unknown data member(s) {sorted(set(obj) - TOOL_RESULT_DATA_KEYS)}"
    problem = _turn_step_problem(obj) or _message_problem(obj.get("message"), "user")
    if problem is not None:
        return problem
    message = obj["message"]
    source = message["source"]
    content = message["content"]
    block = content[0] if len(content) == 1 else None
    if source.get("kind") != "tool" or not is_nonempty_string(source.get("callId")):
        return "message must have a tool source with a callId"
    if block is None or block.get("type") != "tool-result" or as_array(block.get("content")) is None:
        return "message must contain exactly one tool-result block with array content"
    if block.get("toolCallId") != source.get("callId"):
        return "message has mismatched tool call ids"
    if "isError" in block and not isinstance(block["isError"], bool):
        return "tool-result isError must be a boolean"
    if "error" in obj and not _is_error_descriptor(obj["error"]):
        return "error must be {name, code} strings"
    return None


def _is_error_descriptor(value: object) -> bool:
    obj = as_object(value)
    return (
        obj is not None
        and len(obj) == 2
        and isinstance(obj.get("name"), str)
        and isinstance(obj.get("code"), str)
    )


def check_message(event: Event) -> None:
    """Refuse a surface message event whose payload has the wrong shape; other types pass."""
    if event.type == "user/message":
        _check_user_message(event.data)
    elif event.type == "assistant/message":
        problem = _assistant_problem(event.data)
        if problem is not None:
            raise SeqlogError(Code.ASSISTANT_MESSAGE_INVALID, f"assistant/message {problem}")
    elif event.type == "tool/result":
        problem = _tool_result_problem(event.data)
        if problem is not None:
            raise SeqlogError(Code.TOOL_RESULT_INVALID, f"tool/result {problem}")


def tool_call_ids(event: Event) -> tuple[str, ...]:
    """The call ids of the ``tool-call`` blocks an ``assistant/message`` asks for; empty otherwise."""
    if event.type != "assistant/message":
        return ()
    data = as_object(event.data)
    message = as_object(data.get("message")) if data is not None else None
    content = as_array(message.get("content")) if message is not None else None
    if not content:
        return ()
    return tuple(
        block["id"]
        for block in content
        if isinstance(block, Mapping) and block.get("type") == "tool-call" and isinstance(block.get("id"), str)
    )


def tool_result_call_id(event: Event) -> str | None:
    """The call id a ``tool/result`` event answers, if it names one."""
    data = as_object(event.data)
    message = as_object(data.get("message")) if data is not None else None
    source = as_object(message.get("source")) if message is not None else None
    call_id = source.get("callId") if source is not None else None
    return call_id if isinstance(call_id, str) else None


def tool_result_error_code(event: Event) -> str | None:
    """The ``error.code`` of a ``tool/result`` event, if any."""
    data = as_object(event.data)
    error = as_object(data.get("error")) if data is not None else None
    code = error.get("code") if error is not None else None
    return code if isinstance(code, str) else None


def pairing_delta(event: Event) -> int:
    """How a surface node moves the pending-call count: +calls for assistant messages, −1 for results."""
    if event.type == "tool/result":
        return -1
    return len(tool_call_ids(event))
