"""Every way the next request's header can differ from the latest snapshot.

A loop instance changes its header through a handful of switches (mode, model, an MCP server, tool
descriptions), and each switch changes several members at once.  A port whose header equality
skips one member, compares one side only, or ignores order, passes every one of those requests.
A *drift* changes one thing of one member and nothing else, drawn from strategies over every
member the released ``requestHeader`` has:

``config``
    a pinned value (``provider``, ``model``) changed; an optional member (``reasoningEffort``,
    ``temperature``, ``maxTokens``, ``stop``) added, changed or removed;
``adapterDefaults``
    a marker added for a config value present, or removed;
``system``
    added, changed (by one character too), or removed;
``tools``
    a tool added, removed, renamed, moved; one tool's ``description`` or ``parameters`` changed.

A drift is *kept* when the header it makes is a valid snapshot; the machine then sends it as the
loop's next header (a harness whose settings changed without a logged switch).
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import DrawFn

from sessionlog_spec.model.json_value import MAX_SAFE_INTEGER

DRIFTS = (
    "provider",
    "model",
    "config-added",
    "config-changed",
    "config-removed",
    "defaults-marked",
    "defaults-unmarked",
    "system-added",
    "system-changed",
    "system-removed",
    "tool-added",
    "tool-removed",
    "tool-renamed",
    "tools-reordered",
    "tool-description",
    "tool-parameters",
)
"""The kinds of drift, one member each."""

OPTIONAL_CONFIG = ("reasoningEffort", "temperature", "maxTokens", "stop")
MARKABLE = ("reasoningEffort", "maxTokens")

_TEXT = st.text(st.characters(codec="utf-8"), min_size=1, max_size=16)
_SCALARS = st.none() | st.booleans() | st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER) | _TEXT
_JSON = st.recursive(
    _SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3), max_leaves=6
)


def _config_value(draw: DrawFn, key: str) -> Any:
    if key == "maxTokens":
        return draw(st.sampled_from((1, MAX_SAFE_INTEGER)) | st.integers(1, 1_000_000), label="maxTokens")
    if key == "temperature":
        return draw(st.sampled_from((0, 1, 2)) | st.floats(0, 2, allow_nan=False, allow_subnormal=False), label="temperature")
    if key == "stop":
        return draw(st.lists(_TEXT, max_size=3), label="stop")
    return draw(_TEXT, label=key)


def _other(old: Any, value: Any) -> Any:
    """``value``, or a small edit of ``old`` when they are equal as JSON (``1`` equals ``1.0``, not ``true``)."""
    if value != old or isinstance(value, bool) != isinstance(old, bool):
        return value
    if isinstance(old, bool) or old is None:
        return not old
    if isinstance(old, str):
        return f"{old}."
    if isinstance(old, list):
        return [*old, "."]
    if isinstance(old, dict):
        return {**old, ".": 0}
    return old - 1 if old > 0 else old + 1


def drifted(draw: DrawFn, header: dict[str, Any], how: str) -> dict[str, Any] | None:
    """``header`` changed by one drift of kind ``how``; ``None`` when ``header`` has nothing to drift that way."""
    out = copy.deepcopy(header)
    config: dict[str, Any] = out["config"]
    tools: list[dict[str, Any]] = out.get("tools", [])
    defaults: dict[str, Any] = out.get("adapterDefaults", {})
    if how in ("provider", "model"):
        config[how] = _other(config.get(how), draw(_TEXT, label=how))
    elif how == "config-added":
        absent = [k for k in OPTIONAL_CONFIG if k not in config]
        if not absent:
            return None
        key = draw(st.sampled_from(absent), label="member")
        config[key] = _config_value(draw, key)
    elif how == "config-changed":
        present = [k for k in OPTIONAL_CONFIG if k in config]
        if not present:
            return None
        key = draw(st.sampled_from(present), label="member")
        config[key] = _other(config[key], _config_value(draw, key))
    elif how == "config-removed":
        present = [k for k in OPTIONAL_CONFIG if k in config]
        if not present:
            return None
        key = draw(st.sampled_from(present), label="member")
        del config[key]
        defaults.pop(key, None)
    elif how == "defaults-marked":
        markable = [k for k in MARKABLE if k in config and k not in defaults]
        if not markable:
            return None
        defaults[draw(st.sampled_from(markable), label="member")] = True
    elif how == "defaults-unmarked":
        if not defaults:
            return None
        del defaults[draw(st.sampled_from(sorted(defaults)), label="member")]
    elif how.startswith("system"):
        if (how == "system-added") == ("system" in out):
            return None
        if how == "system-removed":
            del out["system"]
        else:
            out["system"] = _other(out.get("system"), draw(_TEXT, label="system"))
    elif not _drift_tools(draw, tools, how):
        return None
    _set(out, "tools", tools)
    _set(out, "adapterDefaults", defaults)
    return out


def _set(out: dict[str, Any], member: str, value: Any) -> None:
    """A canonical snapshot leaves an empty member out."""
    if value:
        out[member] = value
    else:
        out.pop(member, None)


def _drift_tools(draw: DrawFn, tools: list[dict[str, Any]], how: str) -> bool:
    """Change ``tools`` in place as ``how``; whether there was anything to change."""
    names = {tool["name"] for tool in tools}
    if how == "tool-added":
        name = draw(_TEXT.filter(lambda n: n not in names), label="tool name")
        tool = {"name": name, "description": draw(st.text(max_size=12), label="description"), "parameters": {"type": "object"}}
        tools.insert(draw(st.integers(0, len(tools)), label="at"), tool)
        return True
    if not tools:
        return False
    at = draw(st.integers(0, len(tools) - 1), label="tool")
    if how == "tool-removed":
        del tools[at]
    elif how == "tool-renamed":
        tools[at]["name"] = draw(_TEXT.filter(lambda n: n not in names), label="tool name")
    elif how == "tools-reordered":
        if len(tools) < 2:
            return False
        other = draw(st.integers(0, len(tools) - 2), label="swap with")
        other += other >= at
        tools[at], tools[other] = tools[other], tools[at]
    elif how == "tool-description":
        tools[at]["description"] = _other(tools[at]["description"], draw(st.text(max_size=12), label="description"))
    else:
        parameters = dict(tools[at]["parameters"])
        key = draw(_TEXT, label="schema member")
        parameters[key] = _other(parameters.get(key), draw(_JSON, label="schema value"))
        tools[at]["parameters"] = parameters
    return True
