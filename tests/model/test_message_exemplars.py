"""The payloads of the types with codes of their own (messages, tool results, header snapshots) that
the payload faults break, and the payload sweep over every type."""

from __future__ import annotations

import functools
import random
import re
from collections import Counter

import pytest
from model_cases import BUILDER_STATES

from sessionlog_spec.model.payloads import payload_shape
from sessionlog_spec.model.session import TYPE_CODES, append_event
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.suite.agent.actions import NOTE_VARIANTS
from sessionlog_spec.suite.agent.builder import SessionBuilder
from sessionlog_spec.suite.agent.candidates import MUTATIONS
from sessionlog_spec.suite.agent.candidates.payloads import MESSAGE_FAULTS, SWEPT_SITES, payload_fault_sweep, standing_note
from sessionlog_spec.suite.agent.message_exemplars import MESSAGE_EXEMPLARS
from sessionlog_spec.suite.agent.payload_faults import fault_sites

BUILDS = {m.name: m.build for m in MUTATIONS}


@functools.cache
def _builders() -> dict[str, SessionBuilder]:
    return {name: make() for name, make in BUILDER_STATES.items()}


@pytest.mark.parametrize("type_", sorted(MESSAGE_EXEMPLARS))
def test_every_message_exemplar_is_valid_where_it_stands_and_stands_somewhere(type_: str) -> None:
    standing = []
    for name, builder in _builders().items():
        for variant in range(NOTE_VARIANTS):
            event = standing_note(builder, type_, variant)
            if event is not None:
                assert not isinstance(append_event(builder.state, event), Violation), (name, variant)
                standing.append(event)
    assert standing, f"{type_} stands on none of the builder states"


def _member_paths(type_: str) -> set[str]:
    """Every member path (item indexes left out) a site of some variant of the exemplar has."""
    paths = set()
    for builder in _builders().values():
        for variant in range(NOTE_VARIANTS):
            event = standing_note(builder, type_, variant)
            if event is not None:
                for site in fault_sites(payload_shape(type_, 1), event["data"]):
                    paths.add(re.sub(r"\[\d+\]", "[]", site.path))
    return paths


@pytest.mark.parametrize("type_", sorted(MESSAGE_EXEMPLARS))
def test_inv_pay_1_the_faults_of_a_type_with_its_own_code_reach_its_optional_members(type_: str) -> None:
    # The hand-written candidates of these types break one member each; the exemplar carries every
    # optional member in some variant, so that a fault can be put there.
    wanted = {
        "request/header": {"$.header.config.temperature", "$.header.config.stop[]", "$.header.adapterDefaults", "$.startsSeries"},
        "user/message": {
            "$.content[].attachment.originalDimensions.width", "$.source.rpcId", "$.source.senderName",
            "$.source.sections[].text", "$.source.changes[].digest", "$.source.baselineIdentity",
            "$.source.entries[].description",
            "$.source.update", "$.source.deliveryId", "$.source.goalId", "$.source.round",
            "$.source.references[].omittedBytes", "$.source.references[].capturedFormatVersion",
        },
        "assistant/message": {
            "$.message.source.model", "$.message.content[].arguments", "$.message.content[].text",
            "$.usage.reasoningTokens", "$.usage.cacheWriteTokens", "$.interrupted",
        },
        "tool/result": {"$.error.code", "$.message.content[].content[].attachment.mediaType", "$.message.content[].isError"},
    }[type_]
    paths = _member_paths(type_)
    assert wanted <= paths, sorted(wanted - paths)


@pytest.mark.parametrize("type_", sorted(MESSAGE_EXEMPLARS))
def test_inv_pay_1_a_payload_fault_of_a_type_with_its_own_code_is_refused_with_that_code(type_: str) -> None:
    build = BUILDS[MESSAGE_FAULTS[type_]]
    built = 0
    for builder in _builders().values():
        for seed in range(8):
            event = build(builder, random.Random(seed))
            if event is None:
                continue
            built += 1
            assert event["type"] == type_
            answer = append_event(builder.state, event)
            assert isinstance(answer, Violation) and answer.code is TYPE_CODES[type_], answer
    assert built


def test_inv_hdr_1_a_tool_schema_with_a_member_it_does_not_have_is_put_on_any_tool() -> None:
    builder = _builders()["between_steps"]
    members: Counter[str] = Counter()
    for seed in range(200):
        event = BUILDS["header_tool_extra_member"](builder, random.Random(seed))
        assert event is not None
        for tool in event["data"]["header"]["tools"]:
            members.update(set(tool) - {"name", "description", "parameters"})
    assert len(members) >= 5, members


def test_inv_pay_1_a_payload_sweep_breaks_each_site_once_and_reaches_the_types_with_their_own_codes() -> None:
    builder = _builders()["open_step_with_pending"]
    types: Counter[str] = Counter()
    for seed in range(30):
        swept = payload_fault_sweep(builder, random.Random(seed))
        assert len(swept) == SWEPT_SITES
        types.update(event["type"] for event in swept)
    assert set(MESSAGE_EXEMPLARS) <= set(types), sorted(set(MESSAGE_EXEMPLARS) - set(types))


def test_inv_pay_1_a_site_one_variant_has_is_swept_as_often_as_one_every_variant_has() -> None:
    # A title's model member (a generated title's provider and model) is in two of its five variants,
    # its title member in all five.  Drawn by site they come up alike; drawn by fault instance, the
    # title 5 to 2.
    builder = _builders()["realistic"]
    counts: Counter[str] = Counter()
    for seed in range(150):
        for event in payload_fault_sweep(builder, random.Random(seed)):
            data = event["data"]
            if event["type"] != "session/title" or not isinstance(data, dict):
                continue
            source = data.get("source")
            if isinstance(source, dict) and isinstance(source.get("model"), dict) and "model" not in source["model"]:
                counts["model's model left out"] += 1
            if "title" not in data:
                counts["title left out"] += 1
    assert counts["model's model left out"] > 0
    assert counts["title left out"] < 1.75 * counts["model's model left out"], counts
