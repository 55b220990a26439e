"""The payload vocabulary (INV-PAY-1..3) against the released package, and its JSON Schema export.

INV-PAY-1: each type's payload has exactly its members.  INV-PAY-2: nested values have their
shapes and leaf types.  INV-PAY-3: merge-extensible unions keep unknown variants, opaque members
keep any JSON.

The differential tests ask ``@deepseek-ai/dsh-session-format-v0-to-v1`` (``assertReleasedEventPayload``,
through ``tests/upstream/payload_oracle.mjs``, one Node process for the module) about generated
valid payloads and one-fault variants of them, for every type, both payload generations, and
every arm of every union; the model's verdict must be upstream's.  They are skipped when ``node``
or ``ports/dsh-format/node_modules`` is missing.  The tally (payloads compared, disagreements) is
printed at the end of the module.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from strategies import property_settings

from sessionlog_spec.model.event import KNOWN_EVENT_TYPES
from sessionlog_spec.model.json_value import MAX_SAFE_INTEGER, freeze, thaw
from sessionlog_spec.model.jsonl import HEADER_LINE_OPTIONAL, HEADER_LINE_REQUIRED, READABLE_VERSIONS, header_line_problem
from sessionlog_spec.model.payloads import (
    EVENT_PAYLOADS,
    GENERATIONS,
    HEADER_LINE,
    MERGE_EXTENSIBLE,
    OPAQUE_MEMBERS,
    OPAQUE_VARIANTS,
    OPTIONAL_MEMBERS,
    PAYLOAD_MEMBERS,
    REQUIRED_MEMBERS,
    payload_members,
    payload_problem,
    payload_reaches_opaque,
    payload_shape,
)
from sessionlog_spec.model.shapes import (
    STRUCTURE_ONLY,
    Array,
    Context,
    EarlierSeq,
    Named,
    Nullable,
    Record,
    Related,
    Shape,
    Variants,
    members_of,
    shape_problem,
)
from sessionlog_spec.schemas import HEADER_LINE_FILE, schema_documents, schema_file, verify_schemas
from sessionlog_spec.suite.agent.payload_values import (
    AnyArm,
    Focus,
    arms_taken,
    invalid_payload,
    union_routes,
    valid_payload,
)

ROOT = Path(__file__).resolve().parents[2]
ORACLE = ROOT / "tests" / "upstream" / "payload_oracle.mjs"
PACKAGE = ROOT / "ports" / "dsh-format" / "node_modules" / "@deepseek-ai" / "dsh-session-format-v0-to-v1"
NODE = shutil.which("node")
TYPES = sorted(EVENT_PAYLOADS)
SEQS = (1, 2, 9, MAX_SAFE_INTEGER)
"""Event seqs the payloads are drawn for (members naming earlier events need one below)."""

needs_upstream = [
    pytest.mark.skipif(NODE is None, reason="node is not installed"),
    pytest.mark.skipif(
        not PACKAGE.is_dir(), reason="ports/dsh-format/node_modules is missing: run `cd ports/dsh-format && npm ci`"
    ),
]

TALLY: Counter[str] = Counter()


class Oracle:
    """``payload_oracle.mjs``: one Node process answering one JSON line per request."""

    def __init__(self) -> None:
        assert NODE is not None
        self.process = subprocess.Popen(
            [NODE, str(ORACLE)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8"
        )

    def _ask(self, request: Mapping[str, object]) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request, allow_nan=False) + "\n")
        self.process.stdin.flush()
        reply = self.process.stdout.readline()
        assert reply, "the payload oracle exited"
        answer: dict[str, Any] = json.loads(reply)
        return answer

    def verdict(self, event_type: str, seq: int, data: object, version: int) -> dict[str, Any]:
        return self._ask({"type": event_type, "seq": seq, "data": _plain(data), "version": version})

    def inventory(self) -> dict[str, Any]:
        return self._ask({"inventory": True})

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=20)


@pytest.fixture(scope="module")
def oracle(request: pytest.FixtureRequest) -> Iterator[Oracle]:
    if NODE is None or not PACKAGE.is_dir():
        pytest.skip("node or ports/dsh-format/node_modules is missing")
    running = Oracle()
    yield running
    running.close()
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None and TALLY:
        summary = ", ".join(f"{key} {TALLY[key]}" for key in sorted({*TALLY, "disagreements"}))
        with capture.global_and_fixture_disabled():
            reporter.write_line(f"\npayload oracle: {summary}")


def _plain(value: object) -> object:
    """A plain ``dict``/``list`` copy (frozen and tuple values included)."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def agree(oracle: Oracle, event_type: str, version: int, seq: int, data: object, *, expected: bool, label: str) -> None:
    """The model's verdict on ``data`` is upstream's, and is ``expected`` (accept or refuse)."""
    mine = payload_problem(event_type, data, seq, version)
    theirs = oracle.verdict(event_type, seq, data, version)
    TALLY["compared"] += 1
    TALLY["accepted" if mine is None else "refused"] += 1
    if (mine is None) != theirs["ok"]:
        TALLY["disagreements"] += 1
    detail = (
        f"{event_type} v{version} seq {seq} {label}: model {mine!r}, upstream {theirs!r}, data {json.dumps(_plain(data))[:600]}"
    )
    assert (mine is None) == theirs["ok"], detail
    assert (mine is None) == expected, detail
    assert payload_problem(event_type, freeze(data), seq, version) == mine, "frozen and plain values differ"


# -- INV-PAY-1: the inventory and the members of each type ------------------------------------------


def test_inv_pay_1_the_table_covers_exactly_the_vocabulary() -> None:
    assert set(EVENT_PAYLOADS) == KNOWN_EVENT_TYPES
    assert len(KNOWN_EVENT_TYPES) == 51
    for generation in GENERATIONS:
        for event_type in KNOWN_EVENT_TYPES:
            payload_shape(event_type, generation)
    with pytest.raises(KeyError):
        payload_shape("mode/set", 1)
    with pytest.raises(ValueError):
        payload_shape("turn/start", 2)


def test_inv_pay_1_the_inventory_is_upstreams_released_inventory(oracle: Oracle) -> None:
    types = oracle.inventory()["types"]
    assert len(types) == len(set(types)) == 51
    assert sorted(types) == sorted(KNOWN_EVENT_TYPES) == TYPES


def test_inv_pay_1_members_are_upstreams_dispositions(oracle: Oracle) -> None:
    dispositions = oracle.inventory()["dispositions"]
    assert set(dispositions) == set(KNOWN_EVENT_TYPES)
    for event_type, disposition in dispositions.items():
        for generation in GENERATIONS:
            members = payload_members(event_type, generation)
            extra = (
                {"sessionFormatVersion"} if generation == 1 and event_type == "session-log-deepseek/delivery-accepted" else set()
            )
            assert set(members.required) == set(disposition["required"]), (event_type, generation)
            assert set(members.optional) == set(disposition["optional"]) | extra, (event_type, generation)
            assert set(members.opaque) == set(disposition["opaque"]), (event_type, generation)
        assert REQUIRED_MEMBERS[event_type] == PAYLOAD_MEMBERS[event_type].required
        assert OPTIONAL_MEMBERS[event_type] == PAYLOAD_MEMBERS[event_type].optional
    assert {t: set(m) for t, m in OPAQUE_MEMBERS.items()} == {t: set(d["opaque"]) for t, d in dispositions.items() if d["opaque"]}


@pytest.mark.parametrize("event_type", TYPES)
def test_inv_pay_1_a_payload_has_exactly_its_members(event_type: str) -> None:
    """Model-only: an unexpected member is refused, and so is a missing required one."""
    members = PAYLOAD_MEMBERS[event_type]
    shape = payload_shape(event_type, 1)

    @property_settings(0.2)
    @given(valid_payload(shape, Context(9)))
    def check(value: object) -> None:
        assert payload_problem(event_type, value, 9) is None
        assert isinstance(value, dict)
        if event_type != "subagent/descriptor" or value.get("version") == 3:
            assert "has unexpected member" in (payload_problem(event_type, {**value, "zz-unknown": 1}, 9) or "")
        for name in members.required:
            if name in value and not (event_type == "subagent/descriptor" and value.get("version") != 3):
                trimmed = {k: v for k, v in value.items() if k != name}
                assert payload_problem(event_type, trimmed, 9) is not None, name

    check()


# -- INV-PAY-2: generated payloads against upstream -------------------------------------------------


@pytest.mark.parametrize("event_type", TYPES)
def test_inv_pay_2_generated_payloads_and_one_fault_variants_agree_with_upstream(oracle: Oracle, event_type: str) -> None:
    @property_settings()
    @given(st.data())
    def check(data: st.DataObject) -> None:
        version = data.draw(st.sampled_from(GENERATIONS), label="version")
        seq = data.draw(st.sampled_from(SEQS), label="seq")
        shape = payload_shape(event_type, version)
        value = data.draw(valid_payload(shape, Context(seq)), label="valid")
        agree(oracle, event_type, version, seq, value, expected=True, label="valid")
        fault = data.draw(invalid_payload(shape, Context(seq)), label="fault")
        TALLY[f"fault {fault.kind}"] += 1
        agree(oracle, event_type, version, seq, fault.value, expected=False, label=f"{fault.kind} at {fault.path}")

    check()


def _arm_cases() -> list[Any]:
    """Every (union, arm) of both generations once, with the first type that reaches it."""
    cases = []
    seen: set[tuple[int, object]] = set()
    labels: Counter[str] = Counter()
    for generation in GENERATIONS:
        for event_type in TYPES:
            for union, key, route in union_routes(payload_shape(event_type, generation)):
                if (id(union), key) in seen:
                    continue
                seen.add((id(union), key))
                label = f"v{generation}-{event_type}-{union.discriminant}={_key_text(key)}"
                labels[label] += 1
                if labels[label] > 1:
                    label += f"-{labels[label]}"
                cases.append(pytest.param(generation, event_type, union, key, (*route, (union, key)), id=label))
    return cases


def _key_text(key: AnyArm) -> str:
    return key.value if not isinstance(key, str | int) else json.dumps(key)


@pytest.mark.parametrize(("version", "event_type", "union", "key", "focus"), _arm_cases())
def test_inv_pay_3_every_union_arm_agrees_with_upstream(
    oracle: Oracle, *, version: int, event_type: str, union: Variants, key: AnyArm, focus: Focus
) -> None:
    """Each arm, the unknown variants of the merge-extensible unions included, drawn on purpose."""
    shape = payload_shape(event_type, version)
    reached = []

    @property_settings(0.2)
    @given(st.data())
    def check(data: st.DataObject) -> None:
        seq = data.draw(st.sampled_from(SEQS), label="seq")
        value = data.draw(valid_payload(shape, Context(seq), focus), label="valid")
        reached.append(any(u is union and k == key for u, k in arms_taken(shape, value)))
        agree(oracle, event_type, version, seq, value, expected=True, label=f"valid {union.discriminant}={key!r}")
        fault = data.draw(invalid_payload(shape, Context(seq), focus), label="fault")
        agree(oracle, event_type, version, seq, fault.value, expected=False, label=f"{fault.kind} at {fault.path}")

    check()
    assert any(reached), f"no drawn {event_type} payload took the arm {union.discriminant}={key!r}"


# -- INV-PAY-3: unknown variants and opaque members, by example ---------------------------------------

_OPAQUE = {"nested": [1, 2.5, None, {"deep": [True, "é"]}], "": {}}


def _user_message(source: object, content: tuple[object, ...] | list[object] = ()) -> dict[str, object]:
    return {"id": "m1", "role": "user", "content": list(content), "source": source}


EXAMPLES: list[tuple[str, int, int, object, bool]] = [
    # merge-extensible unions: an unknown discriminant is owner-opaque, an empty one is not
    ("user/message", 1, 3, _user_message({"kind": "x-future", "anything": _OPAQUE}), True),
    ("user/message", 1, 3, _user_message({"kind": ""}), False),
    ("user/message", 1, 3, _user_message({"kind": "user"}, [{"type": "x-future", "payload": _OPAQUE}]), True),
    ("user/message", 1, 3, _user_message({"kind": "user"}, [{"type": "text", "text": "a", "extra": 1}]), False),
    ("turn/end", 1, 3, {"turn": 1, "reason": {"kind": "x-future", "why": _OPAQUE}}, True),
    ("turn/end", 1, 3, {"turn": 1, "reason": {"kind": "aborted", "reason": {"kind": "x-future"}}}, False),
    ("assistant/chunk", 1, 3, {"turn": 1, "step": 1, "chunk": {"type": "finish", "reason": {"kind": "x-future", "n": 1}}}, True),
    ("assistant/chunk", 1, 3, {"turn": 1, "step": 1, "chunk": {"type": "x-future"}}, False),
    # opaque members keep any JSON
    (
        "tool/code-dispatch-start",
        1,
        3,
        {"rootCallId": "r", "parentCallId": "p", "subCallId": "s", "name": "n", "arguments": _OPAQUE},
        True,
    ),
    (
        "tool/code-dispatch-start",
        1,
        3,
        {"rootCallId": "r", "parentCallId": "p", "subCallId": "s", "name": "n", "arguments": None},
        True,
    ),
    # unknown versions: kept in v1, refused in v0
    ("subagent/descriptor", 1, 3, {"version": 2, "anything": _OPAQUE}, True),
    ("subagent/descriptor", 0, 3, {"version": 2, "anything": _OPAQUE}, False),
    ("subagent/descriptor", 1, 3, {"version": -1}, False),
    ("session-log-deepseek/delivery-accepted", 1, 3, {"sessionId": 7, "throughSeq": "x"}, True),
    ("session-log-deepseek/delivery-accepted", 1, 3, {"sessionId": 7, "throughSeq": "x", "sessionFormatVersion": 0}, True),
    ("session-log-deepseek/delivery-accepted", 1, 3, {"sessionId": "s", "throughSeq": 3, "sessionFormatVersion": 1}, False),
    ("session-log-deepseek/delivery-accepted", 1, 3, {"sessionId": "s", "throughSeq": 2, "sessionFormatVersion": 1}, True),
    ("session-log-deepseek/delivery-accepted", 0, 3, {"sessionId": 7, "throughSeq": "x"}, False),
    ("session-log-deepseek/delivery-accepted", 0, 3, {"sessionId": "s", "throughSeq": 2, "sessionFormatVersion": 0}, False),
    # relations
    (
        "compaction/prune",
        1,
        9,
        {"shadowedRange": {"start": 2, "end": 5}, "shadowedSeqs": [2, 4, 5], "shadowedTokenCount": 0},
        True,
    ),
    (
        "compaction/prune",
        1,
        9,
        {"shadowedRange": {"start": 2, "end": 4}, "shadowedSeqs": [2, 4, 5], "shadowedTokenCount": 0},
        False,
    ),
    (
        "compaction/prune",
        1,
        5,
        {"shadowedRange": {"start": 2, "end": 5}, "shadowedSeqs": [2, 4, 5], "shadowedTokenCount": 0},
        False,
    ),
    (
        "user/message",
        1,
        3,
        _user_message(
            {
                "kind": "goal",
                "goalId": "g",
                "revision": 1,
                "round": 0,
                "change": {
                    "kind": "goal/change",
                    "version": 1,
                    "operation": "clear",
                    "cleared": {"id": "g", "revision": 1},
                    "clearedAt": 5,
                },
            },
            [{"type": "text", "text": '<goal_state>{"cleared":{"id":"g","revision":1},"clearedAt":5}</goal_state>'}],
        ),
        True,
    ),
    (
        "user/message",
        1,
        3,
        _user_message(
            {
                "kind": "goal",
                "goalId": "g",
                "revision": 1,
                "round": 0,
                "change": {
                    "kind": "goal/change",
                    "version": 1,
                    "operation": "clear",
                    "cleared": {"id": "g", "revision": 1},
                    "clearedAt": 5,
                },
            },
            [{"type": "text", "text": '<goal_state>{"clearedAt":5,"cleared":{"id":"g","revision":1}}</goal_state>'}],
        ),
        False,
    ),
    ("schedule/change", 1, 3, {"version": 1, "operation": "dispatch", "id": "a", "acceptedAt": "2024-02-29T23:59:59.999Z"}, True),
    (
        "schedule/change",
        1,
        3,
        {"version": 1, "operation": "dispatch", "id": "a", "acceptedAt": "2023-02-29T23:59:59.999Z"},
        False,
    ),
    ("schedule/change", 1, 3, {"version": 1, "operation": "delete", "id": "a\ufeff"}, False),
    ("schedule/change", 1, 3, {"version": 1, "operation": "delete", "id": "a\u0085"}, True),
]


@pytest.mark.parametrize(("event_type", "version", "seq", "data", "valid"), EXAMPLES)
def test_inv_pay_3_unknown_variants_opaque_members_and_versions_by_example(
    *, event_type: str, version: int, seq: int, data: object, valid: bool
) -> None:
    assert (payload_problem(event_type, data, seq, version) is None) == valid, payload_problem(event_type, data, seq, version)


@pytest.mark.parametrize(("event_type", "version", "seq", "data", "valid"), EXAMPLES)
def test_inv_pay_3_the_examples_are_upstreams_verdicts(
    oracle: Oracle, *, event_type: str, version: int, seq: int, data: object, valid: bool
) -> None:
    agree(oracle, event_type, version, seq, data, expected=valid, label="example")


KEPT_UNINSPECTED: list[tuple[str, object, bool]] = [
    ("user/message", _user_message({"kind": "x-future", "anything": _OPAQUE}), True),
    ("user/message", _user_message({"kind": "user"}, [{"type": "x-future", "payload": _OPAQUE}]), True),
    ("user/message", _user_message({"kind": "user"}, [{"type": "text", "text": "a"}]), False),
    ("turn/end", {"turn": 1, "reason": {"kind": "x-future"}}, True),
    ("turn/end", {"turn": 1, "reason": {"kind": "completed"}}, False),
    ("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "finish", "reason": {"kind": "x-future"}}}, True),
    (
        "tool/code-dispatch-start",
        {"rootCallId": "r", "parentCallId": "p", "subCallId": "s", "name": "n", "arguments": None},
        True,
    ),
    ("session-log-deepseek/delivery-accepted", {"sessionId": "s", "throughSeq": 2, "sessionFormatVersion": 1}, False),
    ("no/such-type", {"anything": _OPAQUE}, False),
]


@pytest.mark.parametrize(("event_type", "data", "kept"), KEPT_UNINSPECTED)
def test_inv_pay_3_the_suite_sees_which_payloads_hold_uninspected_parts(event_type: str, data: object, kept: bool) -> None:
    """The conformance machines tag INV-PAY-3 on exactly the accepted payloads that hold an opaque
    value or an unknown variant (``payload_reaches_opaque``)."""
    if event_type in EVENT_PAYLOADS:
        assert payload_problem(event_type, data, 3) is None
    assert payload_reaches_opaque(event_type, data) is kept


def test_inv_pay_3_the_reader_constants_name_what_the_table_holds() -> None:
    names: dict[str, Named] = {}

    def collect(shape: Shape) -> None:
        stack = [shape]
        seen: set[int] = set()
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, Named):
                names[node.name] = node
            stack.extend(_children(node))

    for shape in EVENT_PAYLOADS.values():
        collect(shape)
    for name, discriminant in MERGE_EXTENSIBLE.items():
        union = names[name].shape
        assert isinstance(union, Variants) and union.extensible and union.discriminant == discriminant
    for event_type, member in OPAQUE_VARIANTS.items():
        union = EVENT_PAYLOADS[event_type]
        assert isinstance(union, Variants) and union.extensible and union.discriminant == member


# -- the JSON Schema export ------------------------------------------------------------------------


@cache
def _validator(name: str) -> Draft202012Validator:
    document = schema_documents()[name]
    Draft202012Validator.check_schema(document)
    return Draft202012Validator(document)


def test_inv_pay_1_the_committed_schemas_are_current() -> None:
    assert verify_schemas() == []


@pytest.mark.parametrize("event_type", TYPES)
def test_inv_pay_2_the_json_schema_and_the_model_agree(event_type: str) -> None:
    """Structure-only verdicts are the schema's; context-only faults pass the schema and fail the model."""
    shape = EVENT_PAYLOADS[event_type]
    validator = _validator(schema_file(event_type))

    @property_settings(0.5)
    @given(st.data())
    def check(data: st.DataObject) -> None:
        seq = data.draw(st.sampled_from(SEQS), label="seq")
        value = data.draw(valid_payload(shape, Context(seq)), label="valid")
        assert validator.is_valid(_plain(value))
        fault = data.draw(invalid_payload(shape, Context(seq)), label="fault")
        structural = shape_problem(shape, fault.value, "$", STRUCTURE_ONLY)
        assert validator.is_valid(_plain(fault.value)) == (structural is None), (fault, structural)
        assert (structural is None) == fault.context_only, (fault, structural)
        if fault.context_only:
            assert payload_problem(event_type, fault.value, seq) is not None, fault

    check()


def test_inv_pay_2_context_rules_are_annotated_where_the_shapes_hold_them() -> None:
    def has(shape: Shape, kind: type) -> bool:
        stack, seen = [shape], set()
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, kind):
                return True
            stack.extend(_children(node))
        return False

    documents = schema_documents()
    for event_type, shape in EVENT_PAYLOADS.items():
        text = json.dumps(documents[schema_file(event_type)])
        assert has(shape, EarlierSeq) == ('"x-earlierThanEventSeq": true' in text), event_type
        assert has(shape, Related) == ('"x-relations"' in text), event_type
    assert "x-earlierThanEventSeq" in json.dumps(documents["compaction.prune.schema.json"])


def _children(node: Shape) -> list[Shape]:
    if isinstance(node, Named | Related | Nullable):
        return [node.shape]
    if isinstance(node, Array):
        return [node.items]
    if isinstance(node, Record):
        return [*node.required.values(), *node.optional.values(), *([node.additional] if node.additional else [])]
    if isinstance(node, Variants):
        return [arm for _, arm in node.arms] + ([node.otherwise] if node.otherwise else [])
    return []


def test_inv_pay_2_the_header_line_shape_is_the_readers_header_rule() -> None:
    members = members_of(HEADER_LINE)
    assert members.required == HEADER_LINE_REQUIRED and members.optional == HEADER_LINE_OPTIONAL
    assert set(GENERATIONS) == READABLE_VERSIONS
    validator = _validator(HEADER_LINE_FILE)

    @property_settings()
    @given(st.data())
    def check(data: st.DataObject) -> None:
        value = data.draw(valid_payload(HEADER_LINE), label="valid")
        assert isinstance(value, dict)
        assert header_line_problem(value) is None and validator.is_valid(value)
        fault = data.draw(invalid_payload(HEADER_LINE), label="fault")
        assert isinstance(fault.value, dict) or fault.path == "$"
        if isinstance(fault.value, dict):
            assert header_line_problem(fault.value) is not None, fault
        assert not validator.is_valid(_plain(fault.value)), fault

    check()


def test_inv_pay_2_payloads_may_be_frozen_or_plain() -> None:
    data = {"turn": 1, "reason": {"kind": "error", "error": {"message": "m", "code": "c", "status": 503.0}}}
    assert payload_problem("turn/end", data, 4) is None
    assert payload_problem("turn/end", freeze(data), 4) is None
    assert thaw(freeze(data)) == data
    assert payload_problem("turn/end", {**data, "turn": True}, 4) == "$.turn must be a non-negative safe integer"
    assert payload_problem("turn/end", {"turn": 1, "reason": {"kind": "error", "error": {"message": "m", "code": ""}}}, 4) == (
        "$.reason.error.code must be a non-empty string"
    )
