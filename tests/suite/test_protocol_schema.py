"""protocol.schema.json against PROTOCOL.md, the model driver, the model's vocabularies and jsonschema.

The examples on the page are run through the model driver in order; every request and reply, the
page's and the model's, must fit the schema, and the model must say what the page says.  The fast
compiled check must agree with jsonschema on valid replies and on mutated ones.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from strategies import property_settings, raw_json

from sessionlog_spec.model.header import Reason
from sessionlog_spec.model.violation import Code
from sessionlog_spec.protocol import jsonlines
from sessionlog_spec.protocol.fastschema import Compiler
from sessionlog_spec.protocol.messages import GROUPS, PROTOCOL_CODES, PortFault
from sessionlog_spec.protocol.model_driver import ModelDriver
from sessionlog_spec.protocol.schema import OPS, InvalidRequest, fits, schema, validate_reply, validate_request, validator
from sessionlog_spec.suite.judged import raw_key

PROTOCOL_MD = Path(__file__).parents[2] / "spec" / "PROTOCOL.md"
ILLUSTRATIVE = {
    "hello": "the page's implementation is a port's, not the model's",
    "save": "the page shows the header line of a fresh session, not the session the earlier examples built",
}
"""Ops whose example reply the model is not expected to reproduce, and why."""


def json_values(block: str) -> Iterator[Any]:
    """The JSON values written one after another in a code block (a value may span lines)."""
    decoder = json.JSONDecoder()
    position = 0
    while True:
        while position < len(block) and block[position].isspace():
            position += 1
        if position == len(block):
            return
        value, position = decoder.raw_decode(block, position)
        yield value


def examples(text: str) -> list[Any]:
    """Every JSON value in the ```json blocks of a Markdown text, in page order."""
    blocks = re.findall(r"^[ \t]*```json\n(.*?)^[ \t]*```", text, re.S | re.M)
    return [value for block in blocks for value in json_values(block)]


def page_sections() -> tuple[list[Any], list[Any]]:
    """The examples before ``## Ops`` (fragments) and from it on (one run, in order)."""
    text = PROTOCOL_MD.read_text(encoding="utf-8")
    head, ops = text.split("\n## Ops\n", 1)
    return examples(head), examples(ops)


def test_the_page_has_an_example_request_and_reply_for_every_op() -> None:
    _, run = page_sections()
    requests = [v["op"] for v in run if "op" in v]
    assert set(requests) == set(OPS)
    assert sum(1 for v in run if "ok" in v) == len(requests)


def test_every_example_on_the_page_fits_the_schema() -> None:
    fragments, run = page_sections()
    op_of: dict[int, str] = {}
    for value in fragments + run:
        if "op" in value:
            validate_request(value)
            op_of[value["id"]] = value["op"]
        elif "ok" in value:
            validate_reply(op_of[value["id"]], value)
        else:
            assert fits("state.result", value), value


EXAMPLE_STORE = "/tmp/sessionlog-example"
"""Where the page's ``storage`` examples keep their store; the test runs them in a directory of its
own instead, so that no two runs (or workers) share it."""


def test_the_model_driver_answers_the_page_as_the_page_says(tmp_path: Path) -> None:
    _, run = page_sections()
    _answers_as_the_page_says(run, str(tmp_path / "example"))


def _answers_as_the_page_says(run: list[Any], store: str) -> None:
    driver = ModelDriver()
    reply: dict[str, Any] = {}
    op = ""
    for value in run:
        if "op" in value:
            request = json.loads(json.dumps(value).replace(EXAMPLE_STORE, store))
            op, reply = value["op"], json.loads(json.dumps(driver(request)).replace(store, EXAMPLE_STORE))
            validate_reply(op, reply)
        elif op not in ILLUSTRATIVE:
            assert value == reply, f"PROTOCOL.md example for {op} disagrees with the model"


def test_the_schema_is_valid_draft_2020_12_and_complete() -> None:
    document = schema()
    Draft202012Validator.check_schema(document)
    for op in OPS:
        for part in ("request", "reply", "result"):
            assert f"{op}.{part}" in document["$defs"]
    assert document["$defs"]["request"]["properties"]["op"]["enum"] == list(OPS)


def test_the_schema_vocabularies_are_the_model_s() -> None:
    defs = schema()["$defs"]
    assert defs["capability"]["enum"] == list(GROUPS)
    decision = defs["header_decision.result"]["properties"]["decision"]["oneOf"][1]
    assert set(decision["properties"]["reason"]["enum"]) == {r.value for r in Reason}
    pattern = re.compile(defs["error"]["properties"]["code"]["pattern"])
    assert all(pattern.search(code) for code in [*(c.value for c in Code), *PROTOCOL_CODES])


def test_a_reply_out_of_shape_names_the_field() -> None:
    reply = {"id": 1, "ok": True, "result": {"nodes": [0], "replace_generation": "1", "replacements": []}}
    with pytest.raises(PortFault, match=r"at \$\.result\.replace_generation") as info:
        validate_reply("fold_surface", reply)
    assert info.value.kind == "schema"
    with pytest.raises(PortFault, match=r"at \$\.result: must be absent"):
        validate_reply("state", {"id": 1, "ok": False, "error": {"code": "X", "message": ""}, "result": None})
    with pytest.raises(PortFault, match=r"at \$\.result\.balanced: 1 entries for 1 nodes"):
        validate_reply("cuts", {"id": 1, "ok": True, "result": {"nodes": [4], "balanced": [True]}})


def test_requests_may_carry_invalid_events_but_not_malformed_arguments() -> None:
    validate_request({"id": 1, "op": "append", "event": 42})
    validate_request({"id": 1, "op": "seed", "events": [None, "x", {"seq": -1}]})
    for malformed in (
        {"id": 1, "op": "seed", "events": {}},
        {"id": 1, "op": "seed"},
        {"id": "1", "op": "state"},
        {"id": 1, "op": "state", "extra": 1},
        {"id": 1, "op": "teleport"},
        {"id": 1, "op": "header_decision", "events": [], "header": {}, "instance": {"first_request": True}},
    ):
        with pytest.raises(InvalidRequest):
            validate_request(malformed)


# The fast compiled check against jsonschema.


def test_the_fast_check_compiles_every_definition() -> None:
    compiler = Compiler(schema())
    for name in schema()["$defs"]:
        compiler.definition(name)


def model_replies() -> list[tuple[str, Any]]:
    """Valid replies of every op (the page's run through the model, plus refusals).  The page's store
    goes to a directory of this process's own: both test workers collect this module at once."""
    _, run = page_sections()
    driver = ModelDriver()
    store = tempfile.mkdtemp(prefix="sessionlog-example-")
    requests = [json.loads(json.dumps(v).replace(EXAMPLE_STORE, store)) for v in run if "op" in v]
    out = [(v["op"], driver(v)) for v in requests]
    out.append(("append", driver({"id": 99, "op": "append", "event": 1})))
    return out


SAMPLES = model_replies()
JSON_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**64), max_value=2**64)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["", "x", "append", "initial", "SEQ_NOT_CONTIGUOUS", "bad code", "session", "sessionlog-driver/1"])
)
JSON = st.recursive(
    JSON_LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["id", "ok", "result", "x"]), inner, max_size=3),
    max_leaves=8,
)

SAME_KIND: dict[type, st.SearchStrategy[Any]] = {
    bool: st.booleans(),
    int: st.integers(min_value=-3, max_value=3) | st.floats(min_value=-3, max_value=3, allow_nan=False),
    str: JSON_LEAVES.filter(lambda v: isinstance(v, str)),
}
"""Values of the same JSON kind, to probe bounds, patterns and enums rather than types."""


def mutate(value: Any, data: st.DataObject) -> Any:
    """A copy of ``value`` with one member somewhere replaced, removed or added."""
    if isinstance(value, dict) and value and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(value)))
        action = data.draw(st.sampled_from(["replace", "remove", "descend", "add"]))
        copy = dict(value)
        if action == "remove":
            del copy[key]
        elif action == "descend":
            copy[key] = mutate(value[key], data)
        elif action == "add":
            copy[data.draw(st.sampled_from(["extra", "error", "result", "id"]))] = data.draw(JSON)
        else:
            copy[key] = data.draw(JSON)
        return copy
    if isinstance(value, list) and value and data.draw(st.booleans()):
        index = data.draw(st.integers(0, len(value) - 1))
        copy_list = list(value)
        copy_list[index] = mutate(value[index], data) if data.draw(st.booleans()) else data.draw(JSON)
        return copy_list
    choice = data.draw(st.sampled_from(["keep", "tweak", "any"]))
    if choice == "tweak":
        return data.draw(SAME_KIND.get(type(value), st.just(value)))
    return data.draw(JSON) if choice == "any" else value


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(SAMPLES), st.data())
def test_the_fast_check_agrees_with_jsonschema(sample: tuple[str, Any], data: st.DataObject) -> None:
    op, reply = sample
    instance = mutate(reply, data)
    for name in (f"{op}.reply", "reply", f"{op}.result"):
        target = instance.get("result") if name.endswith(".result") and isinstance(instance, dict) else instance
        assert fits(name, target) == validator(name).is_valid(target), (name, target)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(OPS), st.dictionaries(st.sampled_from(["events", "event", "header", "jsonl", "log", "instance"]), JSON))
def test_the_fast_check_agrees_with_jsonschema_on_requests(op: str, args: dict[str, Any]) -> None:
    request = {"id": 1, "op": op, **args}
    for name in (f"{op}.request", "request"):
        assert fits(name, request) == validator(name).is_valid(request), (name, request)


# Exact JSON Lines.


@pytest.mark.parametrize("number", [2**53, 2**63, 2**64, -(2**63) - 1, 10**30])
def test_json_lines_keep_every_integer_exact(number: int) -> None:
    line = jsonlines.dumps({"n": number, "s": "12345678901234567890"})
    assert jsonlines.loads(line) == {"n": number, "s": "12345678901234567890"}
    assert type(jsonlines.loads(line)["n"]) is int


@pytest.mark.parametrize("line", [b"NaN", b"[Infinity, 10000000000000000000]", b"[1e400, 10000000000000000000]", b"\xff", b"{"])
def test_json_lines_refuse_what_is_not_json(line: bytes) -> None:
    with pytest.raises(ValueError):
        jsonlines.loads(line)


def test_json_lines_refuse_to_write_nan() -> None:
    with pytest.raises(ValueError):
        jsonlines.dumps({"x": float("nan")})
    assert jsonlines.dumps({"x": -0.0}) == b'{"x":-0.0}\n'


DIGIT_RUNS = st.integers(0, 24).flatmap(lambda n: st.text("0123456789", min_size=n, max_size=n)).map(str.encode)
"""Runs of ASCII digits around the length that makes a number long."""
NOT_DIGITS = st.sampled_from([b"a", b".", b"-", b" ", b"\xd9\xa0", b"\xb2", b"\xff"])
"""Bytes that are no ASCII digit (an Arabic-Indic digit and a superscript two among them)."""


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=60) | st.lists(DIGIT_RUNS | NOT_DIGITS, max_size=8).map(b"".join))
def test_json_lines_find_long_digit_runs_as_the_pattern_does(line: bytes) -> None:
    assert jsonlines.has_long_digits(line) == (re.search(rb"\d{19,}", line) is not None)


@property_settings()
@given(raw_json())
def test_json_lines_write_what_the_standard_writer_writes(value: object) -> None:
    # orjson writes most lines; whatever writes a line, it reads back as the standard writer's line
    # reads, to the last type, and what the standard writer refuses is refused.
    try:
        standard = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
    except (TypeError, ValueError):
        with pytest.raises((TypeError, ValueError)):
            jsonlines.dumps(value)
        return
    line = jsonlines.dumps(value)
    assert line.endswith(b"\n")
    assert raw_key(jsonlines.loads(line)) == raw_key(jsonlines.loads(standard))
