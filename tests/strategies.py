"""Hypothesis strategies of the property tests: realistic valid sessions, v0 logs, headers, hostile candidates.

The session strategies play the harness through :class:`~sessionlog_spec.suite.agent.builder.SessionBuilder`: at every
point they look at what the log allows next (open a turn, ask for tool calls, start and answer
them, compact a legal range, rewrite a tool result, write a header snapshot, log an ignorable
event, …), draw one of those actions, and commit it through the model.  So every generated session
is valid by construction, a prefix of it is a session *cut* at an arbitrary point (open turn, open
step, pending calls), and shrinking removes actions rather than breaking the log.  The actions are
the conformance suite's own (:mod:`sessionlog_spec.suite.agent.actions`), built with open-ended
values (:data:`VALUES`) where the suite draws from small fixed pools.

The candidate strategies go the other way: arbitrary JSON-ish values, envelopes with drawn members,
and valid next events with one member mutated, for checking that whatever is refused changes
nothing.

:func:`property_settings` is the Hypothesis settings the property tests use: the example budget of
the profile ``HYPOTHESIS_PROFILE`` names (``ci``, ``dev`` or ``nightly``, see
:data:`sessionlog_spec.suite.profiles.PROFILES`; default ``ci``).

The tests import this module as ``strategies`` (``tests/`` is on pytest's ``pythonpath`` and on
mypy's ``mypy_path``); nothing of the installed package depends on it.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from sessionlog_spec.model.event import KNOWN_EVENT_TYPES
from sessionlog_spec.model.json_value import MAX_SAFE_INTEGER, JsonObject, as_object, freeze
from sessionlog_spec.model.legacy import StoredLog
from sessionlog_spec.suite.agent.actions import (
    LOG_ONLY_TYPES,
    TOOL_NAMES,
    UNKNOWN_TYPE_NAMES,
    WORDS,
    ActionValues,
    applicable_actions,
    build_action,
    drawn,
    fixed,
    open_calls,
    turn_end_reason,
)
from sessionlog_spec.suite.agent.builder import RawEvent, SessionBuilder, text_block
from sessionlog_spec.suite.profiles import PROFILES

# -- settings ---------------------------------------------------------------------------------

PROFILE_ENV = "HYPOTHESIS_PROFILE"
"""Environment variable naming the profile (``ci``, ``dev`` or ``nightly``) whose ``property_examples`` the tests run."""


def property_settings(scale: float = 1.0) -> settings:
    """The settings for a property test: ``property_examples`` of the profile ``HYPOTHESIS_PROFILE`` names (default ``ci``).

    ``scale`` shrinks or grows the example count for a test that is much cheaper or dearer than
    the others, so every profile keeps its overall budget.
    """
    name = os.environ.get(PROFILE_ENV) or "ci"
    if name not in PROFILES:
        raise ValueError(f"{PROFILE_ENV}={name!r}: expected one of {', '.join(sorted(PROFILES))}")
    return settings(
        max_examples=max(1, round(PROFILES[name].property_examples * scale)),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )


# -- JSON values ------------------------------------------------------------------------------

SAFE_INTEGERS = st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
"""Short text, including non-ASCII and control characters, never lone surrogates."""


def _lossless_float(x: float) -> bool:
    return not (x == 0.0 and str(x).startswith("-"))


JSON_SCALARS: st.SearchStrategy[object] = st.one_of(
    st.none(),
    st.booleans(),
    SAFE_INTEGERS,
    st.floats(allow_nan=False, allow_infinity=False).filter(_lossless_float),
    TEXT,
)


def json_values(max_leaves: int = 8) -> st.SearchStrategy[object]:
    """Lossless JSON values as a JSON parser returns them (``dict``/``list``)."""
    return st.recursive(
        JSON_SCALARS,
        lambda children: st.lists(children, max_size=3) | st.dictionaries(TEXT, children, max_size=3),
        max_leaves=max_leaves,
    )


def json_objects(max_leaves: int = 6) -> st.SearchStrategy[dict[str, object]]:
    """Lossless JSON objects."""
    return st.dictionaries(TEXT, json_values(max_leaves), max_size=3)


class _Opaque:
    """A Python object that is not JSON at all."""

    def __repr__(self) -> str:
        return "<opaque>"


NON_JSON_SCALARS: st.SearchStrategy[object] = st.one_of(
    st.sampled_from([float("nan"), float("inf"), float("-inf"), -0.0, 2**53, -(2**53), 10**30]),
    st.binary(max_size=3),
    st.builds(_Opaque),
    st.sets(st.integers(0, 3), max_size=2),
    st.complex_numbers(allow_nan=False, allow_infinity=False, max_magnitude=10),
)


def raw_json(max_leaves: int = 8) -> st.SearchStrategy[object]:
    """JSON-ish values: mostly lossless JSON, sometimes not JSON at all (NaN, -0, huge ints, bytes, int keys)."""
    scalars = st.one_of(JSON_SCALARS, JSON_SCALARS, NON_JSON_SCALARS)
    keys = st.one_of(TEXT, TEXT, TEXT, st.integers(-2, 2), st.none())
    return st.recursive(
        scalars,
        lambda children: st.lists(children, max_size=3) | st.tuples(children) | st.dictionaries(keys, children, max_size=3),
        max_leaves=max_leaves,
    )


# -- request headers --------------------------------------------------------------------------

MODELS = st.sampled_from([("deepseek", "deepseek-chat"), ("deepseek", "deepseek-reasoner"), ("openai", "gpt-5")])
TOOL_PARAMETERS = st.sampled_from(
    [
        {"type": "object"},
        {},
        {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"], "additionalProperties": False},
    ]
)
"""A tool's parameters: any JSON object (a JSON Schema the header does not inspect)."""


@st.composite
def headers(draw: st.DrawFn, canonical: bool | None = None) -> dict[str, Any]:
    """A well-formed, pinned request header; canonical when ``canonical`` is true, not when false,
    either when ``None``.  Members come in a drawn order (equality must ignore it)."""
    provider, model = draw(MODELS)
    config: dict[str, Any] = {"provider": provider, "model": model}
    if draw(st.booleans()):
        config["reasoningEffort"] = draw(st.sampled_from(["low", "medium", "high"]))
    if draw(st.booleans()):
        config["maxTokens"] = draw(st.sampled_from([1024, 4096, MAX_SAFE_INTEGER]))
    members: dict[str, Any] = {"config": config}
    markable = [k for k in ("reasoningEffort", "maxTokens") if k in config]
    marks = draw(st.lists(st.sampled_from(markable), unique=True)) if markable else []
    if marks:
        members["adapterDefaults"] = dict.fromkeys(marks, True)
    system = draw(st.sampled_from([None, "You are a careful coding agent.", "Be brief."]))
    if system is not None:
        members["system"] = system
    tools = draw(st.lists(st.sampled_from(TOOL_NAMES), unique=True, max_size=3))
    if tools:
        members["tools"] = [
            {"name": t, "description": f"the {t} tool", "parameters": copy.deepcopy(draw(TOOL_PARAMETERS))} for t in tools
        ]
    non_canonical = draw(st.booleans()) if canonical is None else not canonical
    if non_canonical:
        # At least one of the three non-canonical spellings of "nothing".
        options = [k for k in ("system", "tools", "adapterDefaults") if k not in members]
        if not options:
            # Drop one member so that its empty spelling can take its place.
            options = [draw(st.sampled_from(["system", "tools"]))]
            del members[options[0]]
        for key in draw(st.lists(st.sampled_from(options), min_size=1, unique=True)):
            members[key] = {"system": "", "tools": [], "adapterDefaults": {}}[key]
    order = draw(st.permutations(sorted(members)))
    return {key: copy.deepcopy(members[key]) for key in order}


def frozen_headers(canonical: bool | None = None) -> st.SearchStrategy[JsonObject]:
    """:func:`headers`, frozen the way the model stores them."""
    return headers(canonical).map(_freeze_object)


def _freeze_object(value: Mapping[str, Any]) -> JsonObject:
    frozen = as_object(freeze(value))
    assert frozen is not None
    return frozen


# -- sessions ---------------------------------------------------------------------------------

UNKNOWN_TYPES = st.sampled_from(UNKNOWN_TYPE_NAMES)

VALUES = ActionValues(
    text=drawn(TEXT),
    reasoning=drawn(WORDS),
    tool_name=drawn(st.sampled_from(TOOL_NAMES)),
    tool_arguments=fixed("{}"),
    usage=lambda draw: {"inputTokens": draw(st.integers(0, 10_000)), "outputTokens": draw(st.integers(0, 4_000))},
    duration_ms=drawn(st.integers(0, 60_000)),
    turn_end_reason=turn_end_reason,
    header=drawn(headers(canonical=True)),
    summary=drawn(WORDS),
    rewrite_text=drawn(TEXT),
    payload=drawn(json_values(6)),
    turn_payload=drawn(json_objects()),
)
"""The property tests' values for :func:`~sessionlog_spec.suite.agent.actions.build_action`: open-ended strategies."""


class DrawnSession(SessionBuilder):
    """A builder whose repr is its log, so a failing example can be read (and replayed) from the report."""

    def __repr__(self) -> str:
        return f"DrawnSession(events={self.events!r})"


def perform(draw: st.DrawFn, builder: SessionBuilder, action: str, commit: bool = True) -> RawEvent:
    """Build the event for ``action`` (see :func:`applicable_actions`) with :data:`VALUES`, committing it unless told not to."""
    raw = build_action(draw, builder, action, VALUES)
    if commit:
        builder.commit(raw)
    return raw


def drive(draw: st.DrawFn, builder: SessionBuilder, steps: int, unknown_types: bool = True) -> SessionBuilder:
    """Take ``steps`` drawn actions on ``builder``."""
    for _ in range(steps):
        perform(draw, builder, draw(st.sampled_from(applicable_actions(builder, unknown_types))))
    return builder


def close(builder: SessionBuilder) -> SessionBuilder:
    """Finish cleanly the way a harness does: start and answer pending calls, end the step and the turn."""
    unstarted, _ = open_calls(builder)
    for call_id in unstarted:
        builder.tool_call(call_id)
    for call_id in open_calls(builder)[1]:
        builder.tool_result(call_id)
    if builder.state.trace.open_step is not None:
        builder.step_end()
    if builder.state.trace.open_turn is not None:
        builder.turn_end()
    return builder


@st.composite
def sessions(
    draw: st.DrawFn, min_actions: int = 0, max_actions: int = 30, closed: bool = False, unknown_types: bool = True
) -> SessionBuilder:
    """A builder holding a valid session of drawn actions.

    Unless ``closed``, the log stops wherever the actions stop: a turn or a step may be open and
    tool calls pending, as after a crash.  ``unknown_types`` allows ignorable events of unknown types.
    """
    # Hypothesis favours small integers; half the time insist on a long session.
    longer = st.integers(max(min_actions, max_actions // 2), max_actions)
    steps = draw(st.one_of(st.integers(min_actions, max_actions), longer))
    builder = drive(draw, DrawnSession(), steps, unknown_types)
    return close(builder) if closed else builder


@st.composite
def next_events(draw: st.DrawFn, builder: SessionBuilder) -> RawEvent:
    """A valid next event for ``builder``'s log, not committed."""
    probe = copy.copy(builder)  # the state is immutable; only the counters move
    return build_action(draw, probe, draw(st.sampled_from(applicable_actions(probe))), VALUES)


# -- hostile candidates -----------------------------------------------------------------------

ENVELOPE_KEY_POOL = ("type", "seq", "time", "data", "ignorable", "surfaceOp", "sourceEventSeqs", "Type", "meta", "")
SPOILABLE = ("type", "seq", "time", "data", "ignorable", "surfaceOp", "sourceEventSeqs", "missing", "extra")
CANDIDATE_TYPES = st.one_of(
    st.sampled_from(sorted(KNOWN_EVENT_TYPES)),
    st.sampled_from(["request/header-delta", "mode/set", "steering/message", "compact/start", ""]),
    UNKNOWN_TYPES,
    TEXT,
    raw_json(2),
)


def surface_op_candidates(next_seq: int) -> st.SearchStrategy[object]:
    """Well-formed and malformed ``surfaceOp`` members."""
    endpoint = st.one_of(st.integers(-1, next_seq + 1), raw_json(1))
    return st.one_of(
        st.just("append"),
        st.sampled_from(["Append", "replace", ""]),
        st.fixed_dictionaries({"op": st.just("replace"), "start": endpoint, "end": endpoint}),
        st.fixed_dictionaries(
            {"op": st.just("replace"), "start": st.integers(0, next_seq), "end": st.integers(0, next_seq), "extra": JSON_SCALARS}
        ),
        raw_json(3),
    )


@st.composite
def envelope_candidates(draw: st.DrawFn, next_seq: int) -> dict[object, object]:
    """An event-shaped object: a plausible log-only event with zero, one or two members spoilt.

    Spoiling one member at a time lets every check of the envelope order be reached, not only the
    first few; with nothing spoilt the candidate is usually accepted.
    """
    members: dict[object, object] = {
        "type": draw(st.sampled_from([*LOG_ONLY_TYPES, *UNKNOWN_TYPE_NAMES, "user/message", "turn/start"])),
        "seq": next_seq,
        "time": draw(st.integers(0, MAX_SAFE_INTEGER)),
        "data": draw(json_values()),
    }
    if draw(st.booleans()):
        members["ignorable"] = True
    spoilt = draw(st.lists(st.sampled_from(SPOILABLE), max_size=2, unique=True))
    for key in spoilt:
        if key == "type":
            members["type"] = draw(CANDIDATE_TYPES)
        elif key == "seq":
            members["seq"] = draw(st.one_of(st.integers(-1, next_seq + 2), raw_json(1)))
        elif key == "time":
            members["time"] = draw(st.one_of(st.integers(), raw_json(1)))
        elif key == "data":
            members["data"] = draw(raw_json())
        elif key == "ignorable":
            members["ignorable"] = draw(st.sampled_from([False, 1, None, "true", [True]]))
        elif key == "surfaceOp":
            members["surfaceOp"] = draw(surface_op_candidates(next_seq))
        elif key == "sourceEventSeqs":
            members["sourceEventSeqs"] = draw(st.one_of(st.lists(st.integers(-1, next_seq + 1), max_size=4), raw_json(2)))
        elif key == "missing":
            del members[draw(st.sampled_from(["type", "seq", "time", "data"]))]
        else:
            members[draw(st.sampled_from(ENVELOPE_KEY_POOL[7:]))] = draw(raw_json(2))
    return members


def candidates(next_seq: int) -> st.SearchStrategy[object]:
    """Arbitrary candidates for the next append: any JSON-ish value, or an event-shaped object."""
    return st.one_of(envelope_candidates(next_seq), raw_json(), envelope_candidates(next_seq))


Path = tuple[object, ...]


def _paths(value: object, prefix: Path = ()) -> list[Path]:
    out: list[Path] = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            out += _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            out += _paths(child, (*prefix, index))
    return out


def _parent(root: Any, path: Path) -> Any:
    node = root
    for key in path[:-1]:
        node = node[key]
    return node


@st.composite
def mutated(draw: st.DrawFn, raw: RawEvent) -> dict[object, object]:
    """``raw`` with one drawn change somewhere in it: a member replaced, removed or added, a number nudged."""
    out: Any = copy.deepcopy(raw)
    paths = _paths(out)[1:]
    in_data = [p for p in paths if len(p) > 1 and p[0] == "data"]
    path = draw(st.sampled_from([*in_data, *in_data, *in_data, *paths]))  # mostly inside the payload
    parent = _parent(out, path)
    key: Any = path[-1]
    old = parent[key]
    kind = draw(st.sampled_from(["replace", "remove", "add", "nudge", "retype"]))
    if kind == "remove" and isinstance(parent, dict):
        del parent[key]
    elif kind == "add" and isinstance(old, dict):
        old[draw(st.one_of(st.sampled_from(["id", "role", "turn", "step", "kind", "op", "type"]), TEXT))] = draw(raw_json(2))
    elif kind == "add" and isinstance(old, list):
        old.insert(draw(st.integers(0, len(old))), draw(raw_json(2)))
    elif kind == "nudge" and type(old) is int:
        parent[key] = old + draw(st.sampled_from([-1, 1, -(10**6), 2**53]))
    elif kind == "retype":
        parent[key] = draw(st.sampled_from([None, True, 0, 1.5, "", "x", [], {}]))
    else:
        parent[key] = draw(raw_json(3))
    return dict(out)


# -- v0 logs ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class V0Case:
    """A v0 log and the v1 log the edge must turn it into."""

    v0: StoredLog
    expected: StoredLog
    forms: frozenset[str]
    """The legacy forms the v0 log uses (for coverage statistics)."""


def _legacy_id(session_id: str, seq: int) -> str:
    return f"legacy-message:{session_id}:{seq}"


@st.composite
def v0_logs(draw: st.DrawFn, max_actions: int = 30) -> V0Case:
    """A v0 log written in the legacy forms N1–N5 and N7 (mixed with v1 forms), with the expected upgrade.

    The log is a valid v1 session rewritten backwards: each event is, by a draw, kept as is or put
    in one of the spellings a released v0 writer used (a trigger is an object with a kind, a
    steering message keeps its ``surfaceOp``, a legacy error reason carries its ``step`` and its
    message and code or its whole failure record).  Where a legacy form has no message id the edge
    mints ``legacy-message:<id>:<seq>`` (and a rewriting tool result inherits its target's), so the
    expected log is the v1 session with those ids.  A crash-repair result for a call that never
    started keeps its v1 form: its id names the call and its seq, which a minted id would not.
    Header snapshots are written as they are (the edge does not canonicalise them).
    """
    builder = draw(sessions(max_actions=max_actions, closed=draw(st.booleans()), unknown_types=False))
    session_id = draw(st.sampled_from(["s-1", "sess-2026", "x"]))
    v1 = builder.events
    v0: list[RawEvent] = []
    expected: list[RawEvent] = []
    legacy_result_ids: dict[int, str] = {}
    forms: set[str] = set()
    legacy = st.booleans()
    for raw in v1:
        old, new = copy.deepcopy(raw), copy.deepcopy(raw)
        type_, seq, data = raw["type"], raw["seq"], raw["data"]
        op = raw.get("surfaceOp")
        if type_ == "turn/start" and draw(legacy):
            old["data"]["trigger"] = copy.deepcopy(draw(TRIGGERS))
            forms.add("N1 trigger")
        elif type_ == "turn/end" and draw(legacy):
            # Give the turn a reason that has a legacy spelling, then spell it the legacy way.
            new["data"]["reason"] = draw(LEGACY_SPELLED_REASONS)
            old["data"]["reason"] = _legacy_reason(draw, new["data"]["reason"], forms)
        elif type_ == "user/message" and op == "append" and "sourceEventSeqs" not in raw and draw(legacy):
            form = draw(st.sampled_from(["wrapped", "bare", "pre-identity"]))
            forms.add(f"N3/N4 user {form}")
            turn = draw(st.integers(0, 5))
            if form == "wrapped":
                old["type"], old["data"] = "steering/message", {"turn": turn, "message": data}
            elif form == "bare":
                bare = {"turn": turn, "content": data["content"], "source": data["source"]}
                old["type"], old["data"] = "steering/message", bare
                new["data"]["id"] = _legacy_id(session_id, seq)
            else:
                old["data"] = {"content": data["content"], "source": data["source"]}
                new["data"]["id"] = _legacy_id(session_id, seq)
        elif type_ == "user/message" and draw(legacy):
            old["data"] = {"content": data["content"], "source": data["source"]}
            new["data"]["id"] = _legacy_id(session_id, seq)
            forms.add("N4 user pre-identity replace")
        elif type_ == "assistant/message" and draw(legacy):
            message = data["message"]
            provenance = {k: v for k, v in message["source"].items() if k != "kind"}
            if draw(st.booleans()):
                provenance["kind"] = "model"
            old["data"] = {
                **{k: v for k, v in data.items() if k != "message"},
                "content": message["content"],
                "provenance": provenance,
            }
            new["data"]["message"]["id"] = _legacy_id(session_id, seq)
            forms.add("N4 assistant")
        elif type_ == "tool/result":
            target = op["start"] if isinstance(op, dict) else None
            repaired = data.get("error", {}).get("code") == "TOOL_NOT_STARTED"
            use_legacy = (target in legacy_result_ids) if target is not None else not repaired and draw(legacy)
            if use_legacy:
                message = data["message"]
                block = message["content"][0]
                old["data"] = {
                    **{k: v for k, v in data.items() if k != "message"},
                    "callId": message["source"]["callId"],
                    "content": block["content"],
                    "isError": block["isError"],
                }
                minted = legacy_result_ids[target] if target is not None else _legacy_id(session_id, seq)
                legacy_result_ids[seq] = minted
                new["data"]["message"]["id"] = minted
                forms.add("N4 tool result" + (" rewrite" if target is not None else ""))
        elif type_ == "request/header" and draw(legacy):
            old["data"]["header"]["messagePrefix"] = [{"role": "user", "content": [text_block("earlier")]}]
            forms.add("N5 messagePrefix")
        elif type_ in ("compaction/start", "compaction/end", "compaction/summary") and draw(legacy):
            old["type"] = "compact/" + type_.split("/")[1]
            forms.add("N7 compact/*")
        v0.append(old)
        expected.append(new)
    created = 1_700_000_000_000
    header = {"type": "session", "version": 0, "id": session_id, "createdAt": created, "delegationDepth": 0}
    return V0Case(
        v0=StoredLog(_freeze_object(header), tuple(_freeze_object(e) for e in v0)),
        expected=StoredLog(_freeze_object({**header, "version": 1}), tuple(_freeze_object(e) for e in expected)),
        forms=frozenset(forms),
    )


TRIGGERS = st.sampled_from([{"kind": "user"}, {"kind": "schedule", "id": 3}, {"kind": "webhook", "deliveryId": "d-1"}])
"""The retired ``turn/start`` triggers (N1): objects with a non-empty ``kind``."""

LEGACY_SPELLED_REASONS: st.SearchStrategy[dict[str, Any]] = st.one_of(
    st.sampled_from(["legacy", "disposed"]).map(lambda cause: {"kind": "aborted", "reason": {"kind": cause}}),
    st.builds(
        lambda message, code: {"kind": "error", "error": {"message": message, "code": code}},
        WORDS,
        st.sampled_from(["PROVIDER_ERROR", "UNKNOWN"]),
    ),
    st.builds(
        lambda message, extra: {"kind": "error", "error": {"message": message, "code": "PROVIDER_OVERLOADED", **extra}},
        WORDS,
        st.sampled_from([{"status": 503}, {"requestId": "req-1"}, {"status": 429, "providerRetryAfterMs": 2000}]),
    ),
)
"""The v1 turn-end reasons that v0 wrote differently (N2)."""


def _legacy_reason(draw: st.DrawFn, reason: Mapping[str, Any], forms: set[str]) -> dict[str, Any]:
    """A legacy spelling of a v1 turn-end reason that N2 maps back to it (or the reason itself)."""
    kind = reason["kind"]
    cause = reason.get("reason", {}).get("kind") if kind == "aborted" else None
    if cause == "legacy":
        forms.add("N2 aborted without cause")
        return {"kind": "aborted"}
    if cause == "disposed":
        forms.add("N2 disposed")
        return {"kind": "disposed"}
    if kind == "error":
        error = dict(reason["error"])
        step = draw(st.integers(0, 3))
        # A failure record beyond message and code was always written whole, as ``failure``.
        if set(error) != {"message", "code"} or draw(st.booleans()):
            forms.add("N2 error failure")
            return {"kind": "error", "step": step, "failure": error}
        forms.add("N2 error message/code")
        flat = {"kind": "error", "step": step, "message": error["message"]}
        # A missing code reads as UNKNOWN.
        return flat if error["code"] == "UNKNOWN" and draw(st.booleans()) else {**flat, "code": error["code"]}
    return dict(reason)
