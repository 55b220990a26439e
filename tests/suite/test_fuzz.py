"""The ``fuzz`` group and what it generates from: the published schemas' keywords, perturbations of
valid events and stored lines, on every declared path."""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import property_settings

from sessionlog_spec.model.payloads import EVENT_PAYLOADS, payload_problem
from sessionlog_spec.model.shapes import Context
from sessionlog_spec.protocol.model_driver import ModelDriver
from sessionlog_spec.suite.agent.builder import realistic_session
from sessionlog_spec.suite.agent.payload_values import valid_payload
from sessionlog_spec.suite.fuzz.paths import PATHS, rule_rows
from sessionlog_spec.suite.fuzz.perturb import FAMILIES, header_line_edits, perturb_lines, perturbations, renumbered, reordered
from sessionlog_spec.suite.fuzz.schema_faults import KEYWORDS, keyword_sites, schema_accepts, schema_document
from sessionlog_spec.suite.ports.inprocess import InProcessPort
from sessionlog_spec.suite.profiles import PROFILES
from sessionlog_spec.suite.rule_table import STEP_INVARIANTS
from sessionlog_spec.suite.run import FAILED, PASSED, RunOptions, run

FUZZ_ONLY = RunOptions(
    profile=dataclasses.replace(PROFILES["dev"], shrink_seconds=2), only=("fuzz",), max_examples=30, step_count=30, seed=3
)
"""The fuzz group alone, seeded; a failure is shrunk briefly (only the verdict is asserted)."""
EVENT_SEQ = 50


def _annotated(event_type: str) -> bool:
    """Whether the type's document states a rule JSON Schema cannot (an earlier seq, a relation)."""
    text = json.dumps(schema_document(event_type))
    return "x-earlierThanEventSeq" in text or "x-relations" in text


@property_settings(scale=0.5)
@given(data=st.data())
def test_inv_pay_1_the_model_refuses_every_keyword_fault_the_published_schema_refuses(data: st.DataObject) -> None:
    event_type = data.draw(st.sampled_from(sorted(EVENT_PAYLOADS)), label="type")
    payload = data.draw(valid_payload(EVENT_PAYLOADS[event_type], Context(event_seq=EVENT_SEQ)), label="payload")
    assert schema_accepts(event_type, payload)
    for site in keyword_sites(event_type, payload):
        model_refuses = payload_problem(event_type, site.payload, EVENT_SEQ) is not None
        if site.schema_refuses:
            assert model_refuses, f"{event_type} {site.key} ({site.detail}): the schema refuses, the model accepts"
        elif model_refuses:
            # Only what the document states as an annotation (x-...) may make the model stricter.
            assert _annotated(event_type), f"{event_type} {site.key} ({site.detail}): the model refuses, the schema accepts"


def test_inv_pay_1_keyword_sites_break_each_keyword_where_it_applies() -> None:
    reached: set[str] = set()
    for event in realistic_session(3, calls_per_step=2).events:
        sites = keyword_sites(event["type"], event["data"])
        reached.update(site.keyword for site in sites)
        required = schema_document(event["type"]).get("required", ())
        dropped = {site.detail for site in sites if site.keyword == "required" and site.location == ()}
        assert {f"member {name!r}" for name in required if name in event["data"]} <= dropped
    assert {"type", "required", "additionalProperties", "minimum", "maximum", "const", "minLength"} <= reached
    assert reached <= set(KEYWORDS)


def test_inv_log_2_perturbations_cover_every_family_and_both_sides_of_the_seq_bounds() -> None:
    rng = random.Random(0)
    events = realistic_session(1).events
    for index, event in enumerate(events):
        families = perturbations(event, index, rng)
        assert set(families) == set(FAMILIES)
        assert all(families[f] for f in ("envelope", "lossless", "type"))
        assert families["payload"], event["type"]
    names = {p.name for p in perturbations(events[0], 0, rng)["envelope"]}
    assert {"seq 0", "seq -1", f"seq {2**53 - 1}", f"seq {2**53}", "time -9007199254740991", "time -9007199254740992"} <= names


def test_order_edits_renumber_the_log_and_line_edits_change_the_text() -> None:
    events = realistic_session(2).events
    changed = 0
    for seed in range(20):
        edited, name = reordered(list(events), random.Random(seed))
        assert [e["seq"] for e in edited] == list(range(len(edited))), name
        changed += edited != events
    assert changed >= 15  # a swap or a move of the last event changes nothing
    text = "".join(json.dumps(e) + "\n" for e in events)
    assert sum(perturb_lines(text, random.Random(seed), 1)[0] != text for seed in range(20)) >= 15
    assert renumbered([{"seq": 5}, {"seq": 9}]) == [{"seq": 0}, {"seq": 1}]


def test_every_fuzz_step_name_has_a_row_in_the_rule_table() -> None:
    assert set(rule_rows()) <= set(STEP_INVARIANTS)
    assert {f"fuzz_{path}" for path in PATHS} <= set(rule_rows())


# -- the group finds a rule skipped on one path only --------------------------------------------------


class ReadDropsFalseIgnorable(ModelDriver):
    """``read`` takes ``ignorable: false`` for an absent marker (INV-LOG-3 on the read path only)."""

    def op_read(self, request: dict[str, Any]) -> Any:
        lines = []
        for line in str(request["jsonl"]).split("\n"):
            try:
                row = json.loads(line)
            except ValueError:
                lines.append(line)
                continue
            if isinstance(row, dict) and row.get("ignorable") is False:
                del row["ignorable"]
                lines.append(json.dumps(row))
            else:
                lines.append(line)
        return super().op_read({**request, "jsonl": "\n".join(lines)})


class SeedDropsUndeclaredMembers(ModelDriver):
    """``seed`` drops payload members a closed payload does not declare instead of refusing (INV-PAY-1, seed only)."""

    def op_seed(self, request: dict[str, Any]) -> Any:
        events = request.get("events")
        if isinstance(events, list):
            events = [_declared_only(e) for e in events]
        return super().op_seed({**request, "events": events})


def _declared_only(event: Any) -> Any:
    if not (isinstance(event, dict) and isinstance(event.get("data"), dict) and event.get("type") in EVENT_PAYLOADS):
        return event
    document = schema_document(event["type"])
    declared = document.get("properties", {})
    if document.get("additionalProperties") is not False:
        return event
    return {**event, "data": {k: v for k, v in event["data"].items() if k in declared}}


class EdgeRoundsTimes(ModelDriver):
    """``upgrade_v0`` rounds a fractional ``time`` instead of refusing it (INV-LOG-2 on the edge only)."""

    def op_upgrade_v0(self, request: dict[str, Any]) -> Any:
        log = request.get("log")
        if isinstance(log, dict) and isinstance(log.get("events"), list):
            events = [
                {**e, "time": round(e["time"])} if isinstance(e, dict) and isinstance(e.get("time"), float) else e
                for e in log["events"]
            ]
            request = {**request, "log": {**log, "events": events}}
        return super().op_upgrade_v0(request)


def test_the_fuzz_group_passes_the_model() -> None:
    result = run(InProcessPort(ModelDriver()), FUZZ_ONLY)
    (fuzz,) = result.groups
    assert fuzz.status == PASSED, fuzz.detail
    assert fuzz.coverage.steps > 0


@pytest.mark.parametrize("broken", [ReadDropsFalseIgnorable, SeedDropsUndeclaredMembers, EdgeRoundsTimes])
def test_the_fuzz_group_finds_a_rule_skipped_on_one_path(broken: type[ModelDriver]) -> None:
    options = dataclasses.replace(FUZZ_ONLY, max_examples=60)
    result = run(InProcessPort(broken()), options)
    (fuzz,) = result.groups
    assert fuzz.status == FAILED, f"{broken.__name__}: {fuzz.status} {fuzz.detail}"


def test_inv_jsonl_1_header_line_edits_break_every_keyword_and_each_seed_length_bound() -> None:
    header = {"type": "session", "version": 1, "id": "s", "createdAt": 0, "delegationDepth": 1, "cwd": "/w", "seedLength": 4}
    edits = dict(header_line_edits(header, 4))
    keywords = {name.split(" ")[2] for name in edits if name.startswith("header ") and not name.startswith("header seedLength ")}
    assert {"type", "minimum", "maximum", "pattern", "const", "enum", "required", "additionalProperties"} <= keywords
    bounds = {edits[f"header seedLength {name}"]["seedLength"] for name in ("0", "count - 1", "count", "count + 1")}  # type: ignore[index]
    assert bounds == {0, 3, 4, 5}
    assert isinstance(edits["header seedLength count as a float"]["seedLength"], float)  # type: ignore[index]
