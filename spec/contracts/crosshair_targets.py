"""CrossHair-friendly contracted entry points into the model.

CrossHair builds symbolic arguments from type annotations.  It cannot build the model's own
argument types everywhere: ``JsonObject`` is a recursive alias, and an ``Event``'s ``data`` is any
JSON value.  The functions here take plain arguments (strings, ints, bools, small tuples), build
the model's values from them *by branching* (so every structural choice is a path CrossHair
explores, and no symbolic value meets an identity test such as ``v is True``), call the model, and
state the invariants again in those plain terms.  Each contract description starts with the
invariant ID it checks.  They are ordinary icontract functions too, so a test may call them.
"""

from __future__ import annotations

from types import MappingProxyType

import icontract

from sessionlog_spec.contracts import ENABLED
from sessionlog_spec.contracts import trace as _trace_rules
from sessionlog_spec.contracts._support import accepted
from sessionlog_spec.model import header as _header
from sessionlog_spec.model import trace as _trace
from sessionlog_spec.model.event import APPEND, Append, Event, Replace
from sessionlog_spec.model.header import InstanceFacts
from sessionlog_spec.model.json_value import JsonObject, JsonValue, json_equal
from sessionlog_spec.model.trace import TraceState
from sessionlog_spec.model.violation import Violation

# -- request headers --------------------------------------------------------------------------

TOOLS_ABSENT, TOOLS_EMPTY, TOOLS_ONE, TOOLS_TWO = range(4)
DEFAULTS_ABSENT, DEFAULTS_MARKED, DEFAULTS_EMPTY, DEFAULTS_UNMARKED = range(4)


def build_header(model: str, system: str | None, tools: int, defaults: int) -> JsonObject:
    """A pinned header: ``system`` absent (``None``) or any string; ``tools`` absent, empty, or one or
    two named tools; ``adapterDefaults`` absent, marking ``reasoningEffort``, ``{}``, or marking nothing."""
    config: dict[str, JsonValue] = {"provider": "deepseek", "model": model}
    header: dict[str, JsonValue] = {}
    if defaults == DEFAULTS_MARKED:
        config["reasoningEffort"] = "high"
        header["adapterDefaults"] = MappingProxyType({"reasoningEffort": True})
    elif defaults == DEFAULTS_EMPTY:
        header["adapterDefaults"] = MappingProxyType({})
    elif defaults == DEFAULTS_UNMARKED:
        config["reasoningEffort"] = "high"
        header["adapterDefaults"] = MappingProxyType({"reasoningEffort": False})
    header["config"] = MappingProxyType(config)
    if system is not None:
        header["system"] = system
    if tools == TOOLS_EMPTY:
        header["tools"] = ()
    elif tools == TOOLS_ONE:
        header["tools"] = (_tool("read_file"),)
    elif tools == TOOLS_TWO:
        header["tools"] = (_tool("read_file"), _tool("bash"))
    return MappingProxyType(header)


def _tool(name: str) -> JsonObject:
    """A tool offered to the model, as a released header spells it: name, description, parameters."""
    parameters = MappingProxyType({"type": "object"})
    return MappingProxyType({"name": name, "description": f"the {name} tool", "parameters": parameters})


def _meaning(model: str, system: str | None, tools: int, defaults: int) -> tuple[object, ...]:
    """What a header says, independent of its spelling: empty system/tools and unmarked defaults are nothing."""
    return (
        model,
        system if system else None,
        tools if tools in (TOOLS_ONE, TOOLS_TWO) else None,
        defaults == DEFAULTS_MARKED,
        defaults in (DEFAULTS_MARKED, DEFAULTS_UNMARKED),  # reasoningEffort present in config
    )


def _valid_choice(tools: int, defaults: int) -> bool:
    return 0 <= tools <= 3 and 0 <= defaults <= 3


@icontract.require(lambda tools, defaults: _valid_choice(tools, defaults), "a header spelling", enabled=ENABLED)
@icontract.ensure(
    lambda result: json_equal(_header.canonical_header(result), result),
    "INV-HDR-6: canonicalisation is idempotent",
    enabled=ENABLED,
)
@icontract.ensure(
    lambda system, tools, defaults, result: (
        ("system" in result) == bool(system)
        and ("tools" in result) == (tools in (TOOLS_ONE, TOOLS_TWO))
        and ("adapterDefaults" in result) == (defaults == DEFAULTS_MARKED)
        and "config" in result
    ),
    "INV-HDR-6: exactly the empty system, the empty tools and unmarked adapterDefaults are dropped",
    enabled=ENABLED,
)
@icontract.ensure(
    lambda model, system, tools, defaults, result: all(
        json_equal(result[k], build_header(model, system, tools, defaults)[k]) for k in result
    ),
    "INV-HDR-6: kept members are unchanged",
    enabled=ENABLED,
)
def canonical_header_of(model: str, system: str | None, tools: int, defaults: int) -> JsonObject:
    """The canonical form of the header :func:`build_header` spells from these parts."""
    return _header.canonical_header(build_header(model, system, tools, defaults))


@icontract.require(lambda a_tools, a_defaults: _valid_choice(a_tools, a_defaults), "a header spelling", enabled=ENABLED)
@icontract.require(lambda b_tools, b_defaults: _valid_choice(b_tools, b_defaults), "a header spelling", enabled=ENABLED)
@icontract.ensure(
    lambda a_model, a_system, a_tools, a_defaults, b_model, b_system, b_tools, b_defaults, result: (
        result == (_meaning(a_model, a_system, a_tools, a_defaults) == _meaning(b_model, b_system, b_tools, b_defaults))
    ),
    "INV-HDR-7: headers are equal exactly when they say the same thing",
    enabled=ENABLED,
)
@icontract.ensure(
    lambda a_model, a_system, a_tools, a_defaults, b_model, b_system, b_tools, b_defaults, result: (
        result
        == _header.header_equals(
            build_header(b_model, b_system, b_tools, b_defaults), build_header(a_model, a_system, a_tools, a_defaults)
        )
    ),
    "INV-HDR-7: equality is symmetric",
    enabled=ENABLED,
)
@icontract.ensure(
    lambda a_model, a_system, a_tools, a_defaults: _header.header_equals(
        build_header(a_model, a_system, a_tools, a_defaults), build_header(a_model, a_system, a_tools, a_defaults)
    ),
    "INV-HDR-7: equality is reflexive",
    enabled=ENABLED,
)
def header_equals_of(  # noqa: PLR0917 (CrossHair wants flat, plain parameters)
    a_model: str,
    a_system: str | None,
    a_tools: int,
    a_defaults: int,
    b_model: str,
    b_system: str | None,
    b_tools: int,
    b_defaults: int,
) -> bool:
    """Whether two spelled headers are equal."""
    return _header.header_equals(
        build_header(a_model, a_system, a_tools, a_defaults), build_header(b_model, b_system, b_tools, b_defaults)
    )


def _eq(a: tuple[str, str | None, int], b: tuple[str, str | None, int]) -> bool:
    return _header.header_equals(build_header(a[0], a[1], a[2], DEFAULTS_ABSENT), build_header(b[0], b[1], b[2], DEFAULTS_ABSENT))


@icontract.require(
    lambda a_tools, b_tools, c_tools: all(0 <= t <= 3 for t in (a_tools, b_tools, c_tools)), "spellings", enabled=ENABLED
)
@icontract.ensure(
    lambda a_model, a_system, a_tools, b_model, b_system, b_tools, c_model, c_system, c_tools, result: (
        not result or _eq((a_model, a_system, a_tools), (c_model, c_system, c_tools))
    ),
    "INV-HDR-7: equality is transitive",
    enabled=ENABLED,
)
def header_equals_chain(  # noqa: PLR0917 (CrossHair wants flat, plain parameters)
    a_model: str,
    a_system: str | None,
    a_tools: int,
    b_model: str,
    b_system: str | None,
    b_tools: int,
    c_model: str,
    c_system: str | None,
    c_tools: int,
) -> bool:
    """Whether ``a`` equals ``b`` and ``b`` equals ``c``."""
    return _eq((a_model, a_system, a_tools), (b_model, b_system, b_tools)) and _eq(
        (b_model, b_system, b_tools), (c_model, c_system, c_tools)
    )


# -- the writer decision rule -------------------------------------------------------------------

Decision = tuple[str, bool] | None
"""``(reason, startsSeries)`` of the snapshot to write, or ``None``."""


def _in_force(latest: JsonObject | None, assembled: JsonObject, decision: Decision) -> JsonObject | None:
    """The header reconstructed from the log after the decision is applied."""
    if decision is None:
        return None if latest is None else _header.canonical_header(latest)
    return _header.canonical_header(assembled)


def _reconstructs(latest: JsonObject | None, assembled: JsonObject, decision: Decision) -> bool:
    in_force = _in_force(latest, assembled, decision)
    return in_force is not None and _header.header_equals(in_force, assembled)


def _latest(has_latest: bool, latest_model: str, latest_system: str | None) -> JsonObject | None:
    return build_header(latest_model, latest_system, TOOLS_ONE, DEFAULTS_ABSENT) if has_latest else None


def _assembled(model: str, system: str | None) -> JsonObject:
    return build_header(model, system, TOOLS_ONE, DEFAULTS_ABSENT)


@icontract.ensure(
    lambda has_latest, first_request, result: not first_request or result == ("resume" if has_latest else "initial", False),
    "INV-HDR-9: the first request of a loop instance anchors it (initial on an empty log, resume otherwise)",
    enabled=ENABLED,
)
@icontract.ensure(
    lambda has_latest, latest_model, latest_system, model, system, first_request, begins_series, replaced, result: (
        first_request
        or (has_latest and (latest_model, latest_system or None) == (model, system or None))
        or result == ("change", begins_series or replaced)
    ),
    "INV-HDR-10: a later changed header writes change, startsSeries exactly when a series begins",
    enabled=ENABLED,
)
@icontract.ensure(
    lambda has_latest, latest_model, latest_system, model, system, first_request, begins_series, replaced, result: (
        first_request
        or not (has_latest and (latest_model, latest_system or None) == (model, system or None))
        or result == (("series", False) if begins_series or replaced else None)
    ),
    "INV-HDR-11: a later unchanged header writes series when a series begins, else nothing",
    enabled=ENABLED,
)
@icontract.ensure(
    lambda has_latest, latest_model, latest_system, model, system, result: _reconstructs(
        _latest(has_latest, latest_model, latest_system), _assembled(model, system), result
    ),
    "INV-HDR-12: after the decision the reconstructed header is the assembled one",
    enabled=ENABLED,
)
def decide_request_header_of(  # noqa: PLR0917 (CrossHair wants flat, plain parameters)
    has_latest: bool,
    latest_model: str,
    latest_system: str | None,
    model: str,
    system: str | None,
    first_request: bool,
    begins_series: bool,
    replaced: bool,
) -> Decision:
    """The writer decision for a request assembled as ``(model, system)`` after a log whose latest
    snapshot (if ``has_latest``) is ``(latest_model, latest_system)``."""
    facts = InstanceFacts(first_request=first_request, begins_series=begins_series, replaced_since_last_request=replaced)
    decision = _header.decide_request_header(_latest(has_latest, latest_model, latest_system), _assembled(model, system), facts)
    return None if decision is None else (decision.reason.value, bool(decision.starts_series))


# -- the trace transition -----------------------------------------------------------------------
#
# One entry point per kind of event, each carrying only the rules about that kind: CrossHair
# spends its per-condition budget on the paths that matter instead of on the other ten types.

CALL_IDS = ("call-a", "call-b", "call-c")
STEP_SCOPED = ("assistant/chunk", "assistant/message", "tool/call", "tool/result")
TURN_SCOPED = ("request/header", "request/context", "tool/result")
"""``tool/result`` here is a rewrite (a replace), which is turn-scoped, not step-scoped.  (A
``todo/write`` is not turn-scoped: the released rules let a todo list change anywhere.)"""


def build_state(open_turn: int, last_turn: int, open_step: int, last_step: int, calls: int = 0) -> TraceState:
    """A trace state: ``open_turn``/``open_step`` 0 mean none; ``calls`` is a bit mask over :data:`CALL_IDS`."""
    step_calls = frozenset(c for bit, c in enumerate(CALL_IDS) if calls & (1 << bit))
    return TraceState(
        open_turn=open_turn if open_turn else None,
        last_turn=last_turn,
        open_step=open_step if open_step else None,
        last_step=last_step,
        step_calls=step_calls,
    )


def _event(type_: str, data: dict[str, JsonValue], surface_op: Append | Replace | None = None) -> Event:
    return Event(type_, seq=1, time=0, data=MappingProxyType(data), surface_op=surface_op)


def _tool_message(call_id: str) -> JsonObject:
    """A tool result's message answering ``call_id``: one tool-result block with one text block."""
    text: JsonObject = MappingProxyType({"type": "text", "text": "ok"})
    block: JsonObject = MappingProxyType({"type": "tool-result", "toolCallId": call_id, "content": (text,), "isError": False})
    source: JsonObject = MappingProxyType({"kind": "tool", "callId": call_id})
    return MappingProxyType({"id": f"result-{call_id}", "role": "user", "source": source, "content": (block,)})


def _consistent(open_turn: int, last_turn: int, open_step: int, last_step: int, calls: int = 0) -> bool:
    return (
        last_turn >= 0
        and last_step >= 0
        and 0 <= calls < 1 << len(CALL_IDS)
        and _trace_rules.brackets_are_consistent(build_state(open_turn, last_turn, open_step, last_step, calls))
    )


Transition = tuple[TraceState, Event, TraceState | Violation]
"""``(state, event, next state or violation)``: what the postconditions need to see."""


def _ok(result: Transition) -> bool:
    return accepted(result[2])


def _next_is_consistent(result: Transition) -> bool:
    return not _ok(result) or _trace_rules.brackets_are_consistent(result[2])  # type: ignore[arg-type]


def _step(state: TraceState, event: Event) -> Transition:
    return state, event, _trace.trace_transition(state, event)


def _state_is_consistent(open_turn: int, last_turn: int, open_step: int, last_step: int) -> bool:
    return _consistent(open_turn, last_turn, open_step, last_step)


STATE_IS_CONSISTENT = icontract.require(_state_is_consistent, "INV-TRACE-10: the state is consistent", enabled=ENABLED)
NEXT_IS_CONSISTENT = icontract.ensure(_next_is_consistent, "INV-TRACE-10: the next state is consistent", enabled=ENABLED)


@STATE_IS_CONSISTENT
@NEXT_IS_CONSISTENT
@icontract.ensure(
    lambda result: not _ok(result) or _trace_rules.turn_start_is_next(result[0], result[1]), "INV-TRACE-1", enabled=ENABLED
)
def turn_start_of(open_turn: int, last_turn: int, open_step: int, last_step: int, turn: int) -> Transition:
    """``turn/start`` naming ``turn``."""
    return _step(build_state(open_turn, last_turn, open_step, last_step), _event("turn/start", {"turn": turn}))


@STATE_IS_CONSISTENT
@NEXT_IS_CONSISTENT
@icontract.ensure(
    lambda result: not _ok(result) or _trace_rules.turn_end_closes_open_turn(result[0], result[1]), "INV-TRACE-2", enabled=ENABLED
)
def turn_end_of(open_turn: int, last_turn: int, open_step: int, last_step: int, turn: int) -> Transition:
    """``turn/end`` naming ``turn``."""
    reason = MappingProxyType({"kind": "completed"})
    return _step(build_state(open_turn, last_turn, open_step, last_step), _event("turn/end", {"turn": turn, "reason": reason}))


@STATE_IS_CONSISTENT
@NEXT_IS_CONSISTENT
@icontract.ensure(
    lambda result: not _ok(result) or _trace_rules.step_start_is_next(result[0], result[1]), "INV-TRACE-4", enabled=ENABLED
)
def step_start_of(open_turn: int, last_turn: int, open_step: int, last_step: int, turn: int, step: int) -> Transition:  # noqa: PLR0917
    """``step/start`` naming ``turn``/``step``."""
    return _step(build_state(open_turn, last_turn, open_step, last_step), _event("step/start", {"turn": turn, "step": step}))


@STATE_IS_CONSISTENT
@NEXT_IS_CONSISTENT
@icontract.ensure(
    lambda result: not _ok(result) or _trace_rules.step_end_closes_open_step(result[0], result[1]), "INV-TRACE-5", enabled=ENABLED
)
def step_end_of(open_turn: int, last_turn: int, open_step: int, last_step: int, turn: int, step: int) -> Transition:  # noqa: PLR0917
    """``step/end`` naming ``turn``/``step``."""
    return _step(build_state(open_turn, last_turn, open_step, last_step), _event("step/end", {"turn": turn, "step": step}))


@icontract.require(
    lambda open_turn, last_turn, open_step, last_step, calls: _consistent(open_turn, last_turn, open_step, last_step, calls),
    "INV-TRACE-10: the state is consistent",
    enabled=ENABLED,
)
@icontract.require(
    lambda kind, call: 0 <= kind < len(STEP_SCOPED) and 0 <= call < len(CALL_IDS), "a step-scoped event", enabled=ENABLED
)
@NEXT_IS_CONSISTENT
@icontract.ensure(
    lambda result: not _ok(result) or _trace_rules.step_scoped_names_open_step(result[0], result[1]),
    "INV-TRACE-6",
    enabled=ENABLED,
)
@icontract.ensure(
    lambda result: not _ok(result) or _trace_rules.result_answers_recorded_call(result[0], result[1]),
    "INV-TRACE-8",
    enabled=ENABLED,
)
def step_scoped_of(  # noqa: PLR0917 (CrossHair wants flat, plain parameters)
    open_turn: int,
    last_turn: int,
    open_step: int,
    last_step: int,
    calls: int,
    kind: int,
    turn: int,
    step: int,
    call: int,
    not_started: bool,
) -> Transition:
    """An appended step-scoped event (``STEP_SCOPED[kind]``) naming ``turn``/``step`` and call ``CALL_IDS[call]``."""
    type_, call_id = STEP_SCOPED[kind], CALL_IDS[call]
    data: dict[str, JsonValue] = {"turn": turn, "step": step}
    op: Append | None = None
    if type_ == "assistant/chunk":
        data["chunk"] = MappingProxyType({"type": "text-delta", "index": 0, "text": "Hi"})
    elif type_ == "assistant/message":
        source = MappingProxyType({"kind": "model", "provider": "deepseek", "model": "deepseek-chat"})
        data["message"] = MappingProxyType({"id": "a", "role": "assistant", "content": (), "source": source})
        op = APPEND
    elif type_ == "tool/call":
        data.update(callId=call_id, name="read_file", arguments="{}")
    else:
        data["message"] = _tool_message(call_id)
        if not_started:
            data["error"] = MappingProxyType({"name": "ToolNotStartedError", "code": _trace.TOOL_NOT_STARTED})
        op = APPEND
    return _step(build_state(open_turn, last_turn, open_step, last_step, calls), _event(type_, data, op))


@STATE_IS_CONSISTENT
@icontract.require(lambda kind: 0 <= kind < len(TURN_SCOPED), "a turn-scoped event", enabled=ENABLED)
@NEXT_IS_CONSISTENT
@icontract.ensure(
    lambda result: not _ok(result) or _trace_rules.turn_scoped_inside_turn(result[0], result[1]), "INV-TRACE-7", enabled=ENABLED
)
def turn_scoped_of(open_turn: int, last_turn: int, open_step: int, last_step: int, kind: int) -> Transition:
    """A turn-scoped event (``TURN_SCOPED[kind]``; the ``tool/result`` one is a rewrite)."""
    type_ = TURN_SCOPED[kind]
    route: dict[str, JsonValue] = {"provider": "deepseek", "model": "deepseek-chat"}
    if type_ == "tool/result":
        event = _event(type_, {"turn": 1, "step": 1, "message": _tool_message(CALL_IDS[0])}, Replace(0, 0))
    elif type_ == "request/header":
        header = MappingProxyType({"config": MappingProxyType(route)})
        event = _event(type_, {"header": header, "reason": "initial"})
    else:
        event = _event(type_, route)
    return _step(build_state(open_turn, last_turn, open_step, last_step), event)
