"""Invalid candidates of request headers (``INV-HDR``; the contracts are
:mod:`sessionlog_spec.contracts.header`): the snapshot's shape, pinning, adapter defaults, the
canonical form and the reason (INV-HDR-1..5).
"""

from __future__ import annotations

import copy
import random

from sessionlog_spec.model.violation import Code
from sessionlog_spec.suite.agent.builder import SessionBuilder, basic_header
from sessionlog_spec.suite.agent.candidates.base import Registry, _header_event, _open_turn, _scratch

REGISTERED = Registry()
"""This module's mutations, in the order their builders are defined below."""
candidate = REGISTERED.candidate


# -- request headers (INV-HDR-1..5) ----------------------------------------------------------------


def _in_turn(builder: SessionBuilder) -> SessionBuilder | None:
    b = _scratch(builder)
    return b if _open_turn(b) is not None else None


@candidate(Code.HEADER_INVALID, "append")
def header_message_prefix(builder: SessionBuilder, rng: random.Random) -> object:
    """A header snapshot that still carries the retired ``messagePrefix``."""
    b = _in_turn(builder)
    return None if b is None else _header_event(b, {**basic_header(), "messagePrefix": []})


@candidate(Code.HEADER_INVALID, "append")
def header_starts_series_false(builder: SessionBuilder, rng: random.Random) -> object:
    """A header event with ``startsSeries: false`` (the flag is absent or true)."""
    b = _in_turn(builder)
    return None if b is None else _header_event(b, basic_header(), rng.choice(("change", "series")), startsSeries=False)


@candidate(Code.HEADER_INVALID, "append")
def header_tool_without_parameters(builder: SessionBuilder, rng: random.Random) -> object:
    """A header one of whose tool schemas lacks ``parameters``."""
    b = _in_turn(builder)
    if b is None:
        return None
    header = basic_header(tools=("read_file", "grep"))
    del header["tools"][rng.randrange(2)]["parameters"]
    return _header_event(b, header)


TOOL_EXTRA_MEMBERS = ("strict", "type", "input_schema", "inputSchema", "cache_control", "function")
"""Members of tool definitions in other vocabularies (provider APIs, older formats) that a header's
tool schema does not admit."""


@candidate(Code.HEADER_INVALID, "append")
def header_tool_extra_member(builder: SessionBuilder, rng: random.Random) -> object:
    """A header whose tool schema carries a member a tool schema does not have (a provider API's
    ``strict``, ``input_schema``, ``cache_control``, …), on any of its tools."""
    b = _in_turn(builder)
    if b is None:
        return None
    header = basic_header(tools=("read_file", "grep", "bash")[: rng.randint(1, 3)])
    tool = rng.choice(header["tools"])
    name = rng.choice(TOOL_EXTRA_MEMBERS)
    tool[name] = rng.choice((True, {"type": "ephemeral"}, copy.deepcopy(tool["parameters"]), "function"))
    return _header_event(b, header)


@candidate(Code.HEADER_NOT_PINNED, "append")
def header_unpinned(builder: SessionBuilder, rng: random.Random) -> object:
    """A header whose config names no model (or an empty one)."""
    b = _in_turn(builder)
    if b is None:
        return None
    config = rng.choice(({"provider": "deepseek"}, {"provider": "deepseek", "model": ""}, {"model": "deepseek-chat"}))
    return _header_event(b, {**basic_header(), "config": config})


@candidate(Code.HEADER_ADAPTER_DEFAULTS_INVALID, "append")
def adapter_default_without_value(builder: SessionBuilder, rng: random.Random) -> object:
    """An ``adapterDefaults`` marker for a config field that is not there."""
    b = _in_turn(builder)
    if b is None:
        return None
    return _header_event(b, {**basic_header(), "adapterDefaults": {rng.choice(("maxTokens", "reasoningEffort")): True}})


@candidate(Code.HEADER_NOT_CANONICAL, "append")
def header_empty_system(builder: SessionBuilder, rng: random.Random) -> object:
    """A header snapshot with ``system: ""``, which canonical form drops."""
    b = _in_turn(builder)
    return None if b is None else _header_event(b, {**basic_header(), "system": ""})


@candidate(Code.HEADER_NOT_CANONICAL, "append")
def header_empty_tools(builder: SessionBuilder, rng: random.Random) -> object:
    """A header snapshot with ``tools: []`` or a marker-free ``adapterDefaults: {}``."""
    b = _in_turn(builder)
    if b is None:
        return None
    return _header_event(b, {**basic_header(), **rng.choice(({"tools": []}, {"adapterDefaults": {}}))})


@candidate(Code.HEADER_REASON_INVALID, "append")
def header_unknown_reason(builder: SessionBuilder, rng: random.Random) -> object:
    """A header reason from another vocabulary (a session-start source, a retry)."""
    b = _in_turn(builder)
    return None if b is None else _header_event(b, basic_header(), rng.choice(("startup", "compact", "retry")))
