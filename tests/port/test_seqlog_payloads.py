"""seqlog's payload validation (INV-PAY-1..3) against the model's, type by type.

seqlog validates each known event's ``data`` with the published JSON Schema of its type (its own
copy in ``seqlog/schemas/``, the ``jsonschema`` library, and its own implementation of the
``x-earlierThanEventSeq`` and ``x-relations`` keywords), behind a compiled acceptor that lets
valid payloads through without the library.  The tests here:

* the vendored schema files are exactly the published ones (``spec/vectors/schemas/``), which are
  current with the model's payload table;
* for every type, generated valid payloads and one-fault variants of them
  (:mod:`sessionlog_spec.suite.agent.payload_values`) get the model's verdict, and as events the
  model's code (the type's own rules first, then the table: ``USER_MESSAGE_INVALID``, …,
  ``TRACE_DATA_INVALID`` / ``TURN_END_REASON_INVALID`` for the trace types, ``PAYLOAD_INVALID``
  for the rest); the acceptor's verdict is always the library's;
* every arm of every union, the unknown variants of the merge-extensible ones included, drawn on
  purpose;
* the trace: turn and step numbers are counts in the payload (0 is the trace's to refuse, with its
  codes), an unknown turn-end kind is owner-opaque, an abort by a hook carries a string reason.
"""

from __future__ import annotations

import json
import tomllib
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from seqlog_compare import Pair
from strategies import property_settings

from seqlog.errors import SeqlogError
from seqlog.event import KNOWN_TYPES
from seqlog.event import decode_event as seqlog_decode
from seqlog.jsonvalue import NotLossless, freeze
from seqlog.payloads import (
    TRACE_TYPES,
    accepted,
    acceptor_for,
    check_data,
    library_problem,
    payload_problem,
    schema_names,
    schema_text,
)
from seqlog.session import check_payload
from sessionlog_spec.model.event import decode_event as model_decode
from sessionlog_spec.model.json_value import MAX_SAFE_INTEGER
from sessionlog_spec.model.payloads import EVENT_PAYLOADS
from sessionlog_spec.model.payloads import payload_problem as model_table_problem
from sessionlog_spec.model.session import payload_problem as model_event_problem
from sessionlog_spec.model.shapes import Context, Variants
from sessionlog_spec.model.trace import TRACE_TYPES as MODEL_TRACE_TYPES
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.schemas import SCHEMA_DIRECTORY, verify_schemas
from sessionlog_spec.suite.agent.payload_values import AnyArm, Focus, arms_taken, invalid_payload, union_routes, valid_payload

ROOT = Path(__file__).resolve().parents[2]
TYPES = sorted(EVENT_PAYLOADS)
SEQS = (1, 2, 9, MAX_SAFE_INTEGER)
"""Event seqs the payloads are drawn for (members naming earlier events need one below)."""
HEADER_LINE = {"type": "session", "version": 1, "id": "payloads", "createdAt": 7, "delegationDepth": 0}


# -- the vendored schemas ------------------------------------------------------------------------------


def test_the_vendored_schemas_are_the_published_ones() -> None:
    published = sorted(path.name for path in SCHEMA_DIRECTORY.glob("*.schema.json"))
    v0 = [name for name in published if name.endswith(".v0.schema.json")]
    assert len(published) - len(v0) == 52  # 51 event types and the stored header line
    # and generation 0 where it differs: the delivery marker, the descriptor, session-reference sources
    assert v0 == [
        "agent.inbox.spliced.v0.schema.json",
        "session-log-deepseek.delivery-accepted.v0.schema.json",
        "session.title-llm-request.v0.schema.json",
        "subagent.descriptor.v0.schema.json",
        "user.message.v0.schema.json",
    ]
    assert schema_names() == published
    for name in published:
        assert schema_text(name) == (SCHEMA_DIRECTORY / name).read_text(encoding="utf-8"), name
    assert verify_schemas() == [], "the published schemas are not current with the model's payload table"


def test_the_schemas_are_package_data_and_jsonschema_a_pinned_dependency() -> None:
    project = tomllib.loads((ROOT / "ports" / "python" / "pyproject.toml").read_text(encoding="utf-8"))
    assert "seqlog.schemas" in project["tool"]["setuptools"]["packages"]
    assert "*.schema.json" in project["tool"]["setuptools"]["package-data"]["seqlog.schemas"]
    assert f"jsonschema=={version('jsonschema')}" in project["project"]["dependencies"]


def test_every_known_type_has_a_schema_and_an_acceptor() -> None:
    assert set(TYPES) == KNOWN_TYPES
    assert TRACE_TYPES == MODEL_TRACE_TYPES
    for event_type in TYPES:
        assert acceptor_for(event_type) is not None, event_type


# -- the differential --------------------------------------------------------------------------------


def _seqlog_code(raw: dict[str, Any]) -> str | None:
    """What seqlog's payload checks (the type's own rules, then the schema) say of one raw event."""
    try:
        event = seqlog_decode(raw)
        check_payload(event)
        check_data(event)
    except SeqlogError as error:
        return str(error.code)
    return None


def _model_code(raw: dict[str, Any]) -> str | None:
    event = model_decode(raw)
    if isinstance(event, Violation):
        return str(event.code)
    problem = model_event_problem(event)
    return None if problem is None else str(problem.code)


def agree(event_type: str, seq: int, data: Any, *, expected: bool | None, label: str) -> None:
    """seqlog gives ``data`` the model's verdict (``expected``, unless ``None``) and, as an event, the
    model's code.

    Frozen data is what a session validates; plain data (also a value that is not lossless JSON,
    which no event can carry) is judged alike.
    """
    model = model_table_problem(event_type, data, seq)
    mine = payload_problem(event_type, data, seq)
    detail = f"{event_type} seq {seq} {label}: model {model!r}, seqlog {mine}, data {json.dumps(data)[:600]}"
    assert expected is None or (model is None) == expected, detail
    assert (mine is None) == (model is None), detail
    try:
        frozen = freeze(data)
    except NotLossless:
        frozen = None
    if frozen is not None:
        assert (payload_problem(event_type, frozen, seq) is None) == (model is None), "frozen and plain values differ: " + detail
        verdict = accepted(event_type, frozen, seq)
        assert verdict == (library_problem(event_type, frozen, seq) is None), "the acceptor is not the library: " + detail
    raw = {"type": event_type, "seq": seq, "time": 0, "data": data}
    assert _seqlog_code(raw) == _model_code(raw), detail


@pytest.mark.parametrize("event_type", TYPES)
def test_valid_payloads_and_one_fault_variants_agree_with_the_model(event_type: str) -> None:
    shape = EVENT_PAYLOADS[event_type]

    @property_settings()
    @given(st.data())
    def check(data: st.DataObject) -> None:
        seq = data.draw(st.sampled_from(SEQS), label="seq")
        value = data.draw(valid_payload(shape, Context(seq)), label="valid")
        agree(event_type, seq, value, expected=True, label="valid")
        fault = data.draw(invalid_payload(shape, Context(seq)), label="fault")
        agree(event_type, seq, fault.value, expected=False, label=f"{fault.kind} at {fault.path}")

    check()


def _arm_cases() -> list[Any]:
    """Every (union, arm) once, with the first type that reaches it."""
    cases: list[Any] = []
    seen: set[tuple[int, object]] = set()
    for event_type in TYPES:
        for union, key, route in union_routes(EVENT_PAYLOADS[event_type]):
            if (id(union), key) in seen:
                continue
            seen.add((id(union), key))
            label = f"{event_type}-{union.discriminant}={key if isinstance(key, str | int) else key.value}"
            cases.append(pytest.param(event_type, union, key, (*route, (union, key)), id=f"{label}-{len(cases)}"))
    return cases


@pytest.mark.parametrize(("event_type", "union", "key", "focus"), _arm_cases())
def test_every_union_arm_agrees_with_the_model(event_type: str, union: Variants, key: AnyArm, focus: Focus) -> None:
    shape = EVENT_PAYLOADS[event_type]
    reached = []

    @property_settings(0.2)
    @given(st.data())
    def check(data: st.DataObject) -> None:
        seq = data.draw(st.sampled_from(SEQS), label="seq")
        value = data.draw(valid_payload(shape, Context(seq), focus), label="valid")
        reached.append(any(u is union and k == key for u, k in arms_taken(shape, value)))
        agree(event_type, seq, value, expected=True, label=f"valid {union.discriminant}={key!r}")
        fault = data.draw(invalid_payload(shape, Context(seq), focus), label="fault")
        # A fault may move a value into another arm that takes it (an unexpected "sessionFormatVersion"
        # in an acceptance of no format is one of format 0): the model is the judge.
        agree(event_type, seq, fault.value, expected=None, label=f"{fault.kind} at {fault.path}")

    check()
    assert any(reached), f"no drawn {event_type} payload took the arm {union.discriminant}={key!r}"


_OPAQUE = {"nested": [1, 2.5, None, {"deep": [True, "é"]}], "": {}}

EXAMPLES: list[tuple[str, int, Any, bool]] = [
    ("turn/end", 3, {"turn": 1, "reason": {"kind": "x-future", "why": _OPAQUE}}, True),
    ("turn/end", 3, {"turn": 1, "reason": {"kind": ""}}, False),
    ("turn/end", 3, {"turn": 1, "reason": {"kind": "aborted", "reason": {"kind": "hook"}}}, False),
    ("turn/end", 3, {"turn": 1, "reason": {"kind": "aborted", "reason": {"kind": "hook", "reason": "policy"}}}, True),
    ("turn/end", 3, {"turn": 1, "reason": {"kind": "aborted", "reason": {"kind": "x-future"}}}, False),
    ("turn/end", 3, {"turn": 1, "reason": {"kind": "completed"}, "extra": 1}, False),
    ("turn/start", 3, {"turn": 0}, True),
    ("step/start", 3, {"turn": 0, "step": 0}, True),
    ("step/end", 3, {"turn": 1, "step": -1}, False),
    ("tool/call", 3, {"turn": 1, "step": 1, "callId": "c", "name": "", "arguments": "{}"}, False),
    ("assistant/chunk", 3, {"turn": 1, "step": 1, "chunk": {"type": "finish", "reason": {"kind": "x-future", "n": 1}}}, True),
    ("assistant/chunk", 3, {"turn": 1, "step": 1, "chunk": {"type": "x-future"}}, False),
    ("compaction/prune", 9, {"shadowedRange": {"start": 2, "end": 5}, "shadowedSeqs": [2, 4, 5], "shadowedTokenCount": 0}, True),
    ("compaction/prune", 9, {"shadowedRange": {"start": 2, "end": 4}, "shadowedSeqs": [2, 4, 5], "shadowedTokenCount": 0}, False),
    ("compaction/prune", 5, {"shadowedRange": {"start": 2, "end": 5}, "shadowedSeqs": [2, 4, 5], "shadowedTokenCount": 0}, False),
    ("compaction/prune", 9, {"shadowedRange": {"start": 2, "end": 2}, "shadowedSeqs": [2, 2.0], "shadowedTokenCount": 0}, False),
    ("subagent/descriptor", 3, {"version": 2, "anything": _OPAQUE}, True),
    ("subagent/descriptor", 3, {"version": -1}, False),
    ("session-log-deepseek/delivery-accepted", 3, {"sessionId": 7, "throughSeq": "x"}, True),
    ("session-log-deepseek/delivery-accepted", 3, {"sessionId": "s", "throughSeq": 3, "sessionFormatVersion": 1}, False),
    (
        "tool/code-dispatch-start",
        3,
        {"rootCallId": "r", "parentCallId": "p", "subCallId": "s", "name": "n", "arguments": None},
        True,
    ),
    ("schedule/change", 3, {"version": 1, "operation": "dispatch", "id": "a", "acceptedAt": "2024-02-29T23:59:59.999Z"}, True),
    ("schedule/change", 3, {"version": 1, "operation": "dispatch", "id": "a", "acceptedAt": "2023-02-29T23:59:59.999Z"}, False),
    ("schedule/change", 3, {"version": 1, "operation": "delete", "id": " a"}, False),
    ("session/end-seed", 3, {}, True),
    ("session/end-seed", 3, {"x": 1}, False),
    ("plan/mode", 3, {"active": 1}, False),
    (
        "llm/retry",
        3,
        {
            "retryId": "r",
            "turn": 1,
            "step": 1,
            "provider": "p",
            "policyKey": "k",
            "retry": 3,
            "delayMs": 10,
            "failure": {"message": "m", "code": "c"},
            "mode": "normal",
            "maxRetries": 2,
        },
        False,
    ),
]


@pytest.mark.parametrize(("event_type", "seq", "data", "valid"), EXAMPLES)
def test_examples_agree_with_the_model(event_type: str, seq: int, data: Any, *, valid: bool) -> None:
    agree(event_type, seq, data, expected=valid, label="example")


def test_a_problem_names_its_json_path() -> None:
    prune = {"shadowedRange": {"start": 2, "end": 4}, "shadowedSeqs": [2, 4, 5], "shadowedTokenCount": 0}
    assert str(payload_problem("compaction/prune", freeze(prune), 9)) == "$.shadowedRange.end must equal $.shadowedSeqs[2]"
    end = {"turn": 1, "reason": {"kind": "aborted", "reason": {"kind": "hook"}}}
    assert str(payload_problem("turn/end", freeze(end), 3)) == '$.reason.reason lacks required member "reason"'
    message = {"id": "m", "role": "user", "content": [{"type": "text", "text": "a", "x y": 1}], "source": {"kind": "user"}}
    assert str(payload_problem("user/message", freeze(message), 3)) == '$.content[0] has unexpected member "x y"'
    with pytest.raises(SeqlogError) as refused:
        check_data(seqlog_decode({"type": "plan/mode", "seq": 4, "time": 0, "data": {"active": "yes"}}))
    assert refused.value.code == "PAYLOAD_INVALID"
    assert refused.value.message == "plan/mode at seq 4 data: $.active must be a boolean"


def test_payloads_as_deep_as_the_format_allows_are_walked() -> None:
    block: dict[str, Any] = {"type": "text", "text": "x"}
    for _ in range(120):  # two levels each: the deepest nesting the format allows
        block = {"type": "tool-result", "toolCallId": "c", "content": [block]}
    message = freeze({"id": "m", "role": "user", "content": [block], "source": {"kind": "user"}})
    assert model_table_problem("user/message", message, 3) is None
    assert payload_problem("user/message", message, 3) is None


# -- the trace ---------------------------------------------------------------------------------------


def _appends(*raws: dict[str, Any]) -> dict[str, Any]:
    """Append ``raws`` to a fresh session in the model and in seqlog (the same replies required);
    the last reply."""
    pair = Pair()
    pair.call("reset", header=HEADER_LINE)
    reply: dict[str, Any] = {}
    for seq, raw in enumerate(raws):
        reply = pair.call("append", event={"seq": seq, "time": seq, **raw})
    return reply


def _code(reply: dict[str, Any]) -> str | None:
    return None if reply["ok"] else str(reply["error"]["code"])


TURN_1 = {"type": "turn/start", "data": {"turn": 1}}
STEP_1 = {"type": "step/start", "data": {"turn": 1, "step": 1}}


@pytest.mark.parametrize(
    ("events", "code"),
    [
        pytest.param([{"type": "turn/start", "data": {"turn": 0}}], "TURN_NUMBER", id="turn-0"),
        pytest.param([TURN_1, {"type": "step/start", "data": {"turn": 1, "step": 0}}], "STEP_NUMBER", id="step-0"),
        pytest.param([TURN_1, {"type": "step/start", "data": {"turn": 0, "step": 1}}], "STEP_OUTSIDE_TURN", id="step-turn-0"),
        pytest.param(
            [TURN_1, STEP_1, {"type": "step/end", "data": {"turn": 1, "step": 0}}], "STEP_END_MISMATCH", id="step-end-0"
        ),
        pytest.param(
            [TURN_1, {"type": "turn/end", "data": {"turn": 0, "reason": {"kind": "completed"}}}],
            "TURN_END_MISMATCH",
            id="turn-end-0",
        ),
        pytest.param(
            [TURN_1, STEP_1, {"type": "tool/call", "data": {"turn": 1, "step": 0, "callId": "c", "name": "n", "arguments": ""}}],
            "EVENT_OUTSIDE_STEP",
            id="call-step-0",
        ),
        pytest.param([{"type": "turn/start", "data": {"turn": -1}}], "TRACE_DATA_INVALID", id="turn-negative"),
        pytest.param([{"type": "turn/start", "data": {"turn": 1.5}}], "TRACE_DATA_INVALID", id="turn-fraction"),
        pytest.param(
            [TURN_1, {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "x-future", "why": [1]}}}],
            None,
            id="turn-end-unknown-kind",
        ),
        pytest.param(
            [TURN_1, {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "aborted", "reason": {"kind": "hook"}}}}],
            "TURN_END_REASON_INVALID",
            id="hook-without-reason",
        ),
        pytest.param(
            [
                TURN_1,
                {
                    "type": "turn/end",
                    "data": {"turn": 1, "reason": {"kind": "aborted", "reason": {"kind": "hook", "reason": "r"}}},
                },
            ],
            None,
            id="hook-with-reason",
        ),
        pytest.param(
            [TURN_1, {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": 7}}}],
            "TURN_END_REASON_INVALID",
            id="turn-end-kind-not-a-string",
        ),
        pytest.param(
            [TURN_1, {"type": "turn/end", "data": {"turn": "1", "reason": {"kind": 7}}}],
            "TRACE_DATA_INVALID",
            id="turn-end-turn-first",
        ),
    ],
)
def test_the_trace_numbers_turns_and_steps_and_reads_reasons_as_the_model_does(
    events: list[dict[str, Any]], code: str | None
) -> None:
    assert _code(_appends(*events)) == code
