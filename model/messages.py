"""Shapes of the three surface message events, and the tool calls and results they carry."""

from __future__ import annotations

from collections.abc import Mapping

from sessionlog_spec.model.event import Event
from sessionlog_spec.model.json_value import JsonObject, JsonValue, as_array, as_object, is_nonempty_string, is_safe_natural
from sessionlog_spec.model.violation import Code, Violation

ASSISTANT_DATA_KEYS = frozenset({"turn", "step", "message", "usage", "interrupted"})
TOOL_RESULT_DATA_KEYS = frozenset({"turn", "step", "message", "error", "meta"})


def _message_problem(message: JsonValue, role: str) -> str | None:
    """What is wrong with a message object of ``role``, or ``None``."""
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
        block_obj = as_object(block)
        if block_obj is None or not is_nonempty_string(block_obj.get("type")):
            return "message content blocks must be objects with a string type"
    return None


def _tool_call_block_problem(block: JsonObject) -> str | None:
    if not is_nonempty_string(block.get("id")):
        return "tool-call block lacks an id"
    if not isinstance(block.get("name"), str) or not isinstance(block.get("arguments"), str):
        return "tool-call block needs a string name and raw string arguments"
    return None


def _turn_step_problem(data: JsonObject) -> str | None:
    # Counts: whether they name the open turn and step is the trace's question (INV-TRACE-6).
    if not is_safe_natural(data.get("turn")) or not is_safe_natural(data.get("step")):
        return "turn and step must be non-negative integers"
    return None


def user_message_problem(data: JsonValue) -> Violation | None:
    """INV-LOG-7: ``user/message`` data is an identified user message."""
    problem = _message_problem(data, "user")
    return None if problem is None else Violation(Code.USER_MESSAGE_INVALID, f"user/message {problem}")


def assistant_message_problem(data: JsonValue) -> Violation | None:
    """INV-LOG-8: ``assistant/message`` data names its turn and step and holds a model-sourced message."""
    obj = as_object(data)
    if obj is None:
        return Violation(Code.ASSISTANT_MESSAGE_INVALID, "assistant/message data must be an object")
    extra = sorted(set(obj) - ASSISTANT_DATA_KEYS)
    problem = (
        (f"has unknown data member(s) {extra}" if extra else None)
        or _turn_step_problem(obj)
        or _message_problem(obj.get("message"), "assistant")
    )
    if problem is None:
        message = obj["message"]
        assert isinstance(message, Mapping)
        source = message["source"]
        assert isinstance(source, Mapping)
        if source.get("kind") != "model" or not (
            is_nonempty_string(source.get("provider")) and is_nonempty_string(source.get("model"))
        ):
            problem = "message must have a model source with provider and model"
        elif "interrupted" in obj and obj["interrupted"] is not True:
            problem = "interrupted must be absent or true"
        else:
            blocks = [as_object(b) for b in as_array(message["content"]) or ()]
            problem = next(
                (
                    p
                    for b in blocks
                    if b is not None and b.get("type") == "tool-call"
                    for p in [_tool_call_block_problem(b)]
                    if p is not None
                ),
                None,
            )
    return None if problem is None else Violation(Code.ASSISTANT_MESSAGE_INVALID, f"assistant/message {problem}")


def tool_result_problem(data: JsonValue) -> Violation | None:
    """INV-LOG-9: ``tool/result`` data holds one tool-result block answering its source call id."""
    obj = as_object(data)
    if obj is None:
        return Violation(Code.TOOL_RESULT_INVALID, "tool/result data must be an object")
    extra = sorted(set(obj) - TOOL_RESULT_DATA_KEYS)
    problem = (
        (f"has unknown data member(s) {extra}" if extra else None)
        or _turn_step_problem(obj)
        or _message_problem(obj.get("message"), "user")
    )
    if problem is None:
        message = obj["message"]
        assert isinstance(message, Mapping)
        source = message["source"]
        assert isinstance(source, Mapping)
        content = as_array(message["content"]) or ()
        block = as_object(content[0]) if len(content) == 1 else None
        if source.get("kind") != "tool" or not is_nonempty_string(source.get("callId")):
            problem = "message must have a tool source with a callId"
        elif block is None or block.get("type") != "tool-result" or as_array(block.get("content")) is None:
            problem = "message must contain exactly one tool-result block with array content"
        elif block.get("toolCallId") != source.get("callId"):
            problem = "message has mismatched tool call ids"
        elif "isError" in block and not isinstance(block["isError"], bool):
            problem = "tool-result isError must be a boolean"
        elif "error" in obj and not _is_error_descriptor(obj["error"]):
            problem = "error must be {name, code} strings"
    return None if problem is None else Violation(Code.TOOL_RESULT_INVALID, f"tool/result {problem}")


def _is_error_descriptor(value: JsonValue) -> bool:
    obj = as_object(value)
    return obj is not None and set(obj) == {"name", "code"} and all(isinstance(v, str) for v in obj.values())


def tool_call_ids_of_message(message: JsonValue) -> tuple[str, ...]:
    """The ids of the ``tool-call`` blocks in a message's content, in order."""
    msg = as_object(message)
    content = as_array(msg.get("content")) if msg is not None else None
    ids: list[str] = []
    for block in content or ():
        obj = as_object(block)
        if obj is not None and obj.get("type") == "tool-call" and isinstance(obj.get("id"), str):
            ids.append(str(obj["id"]))
    return tuple(ids)


def tool_call_ids(event: Event) -> tuple[str, ...]:
    """The tool calls an ``assistant/message`` event asks for; empty for every other event."""
    if event.type != "assistant/message":
        return ()
    data = as_object(event.data)
    return tool_call_ids_of_message(data.get("message") if data is not None else None)


def tool_result_call_id(event: Event) -> str | None:
    """The call id a ``tool/result`` event answers."""
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


def message_problem(event: Event) -> Violation | None:
    """The shape check for a surface message event; ``None`` for other types."""
    if event.type == "user/message":
        return user_message_problem(event.data)
    if event.type == "assistant/message":
        return assistant_message_problem(event.data)
    if event.type == "tool/result":
        return tool_result_problem(event.data)
    return None
