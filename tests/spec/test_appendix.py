"""``invariants.md`` alone is enough to write a port: everything the vectors use is in its appendix."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from sessionlog_spec.model.event import KNOWN_EVENT_TYPES
from sessionlog_spec.model.jsonl import parse_line
from sessionlog_spec.model.legacy import V0_INVENTORY
from sessionlog_spec.model.payloads import payload_shape
from sessionlog_spec.model.repair import NOT_STARTED_TEXT, OUTCOME_UNKNOWN_TEXT
from sessionlog_spec.model.shapes import Array, Named, Nullable, Opaque, Record, Related, Shape, Variants

ROOT = Path(__file__).resolve().parents[2]
INVARIANTS_MD = (ROOT / "invariants.md").read_text(encoding="utf-8")
VECTORS = sorted((ROOT / "spec" / "vectors" / "data").glob("*.json"))


def _events(value: Any) -> Iterator[Mapping[str, Any]]:
    """Every event-like object (``{type, seq, …, data}``) anywhere in a vector, stored texts included."""
    if isinstance(value, Mapping):
        if isinstance(value.get("type"), str) and "data" in value and "seq" in value:
            yield value
        for key, member in value.items():
            if key == "jsonl" and isinstance(member, str):
                for line in member.splitlines():
                    parsed = parse_line(line)
                    if not isinstance(parsed, str):
                        yield from _events(parsed)
            else:
                yield from _events(member)
    elif isinstance(value, list):
        for item in value:
            yield from _events(item)


def _declared_members(shape: Shape, value: object) -> Iterator[str]:
    """The member names of ``value`` that ``shape`` declares (opaque subtrees are not walked)."""
    while isinstance(shape, Named | Related):
        shape = shape.shape
    if isinstance(shape, Nullable):
        yield from _declared_members(shape.shape, value)
    elif isinstance(shape, Array) and isinstance(value, list):
        for item in value:
            yield from _declared_members(shape.items, item)
    elif isinstance(shape, Variants) and isinstance(value, Mapping):
        arm = shape.arm(value)
        if arm is not None:
            yield from _declared_members(arm, value)
    elif isinstance(shape, Record) and isinstance(value, Mapping):
        for name, member in value.items():
            declared = name in shape.required or name in shape.optional
            if declared:
                yield name
            inner = shape.member(name)
            if inner is not None and not isinstance(inner, Opaque):
                yield from _declared_members(inner, member)


def _vector_events() -> list[Mapping[str, Any]]:
    return [event for path in VECTORS for event in _events(json.loads(path.read_text(encoding="utf-8")))]


def test_every_event_type_a_vector_uses_has_its_section() -> None:
    used = {event["type"] for event in _vector_events()}
    missing = sorted(t for t in used & KNOWN_EVENT_TYPES if f"#### `{t}`" not in INVARIANTS_MD)
    assert missing == []
    assert all(f"#### `{t}`" in INVARIANTS_MD for t in KNOWN_EVENT_TYPES)


def test_every_member_name_a_vector_uses_is_documented() -> None:
    """Each payload member a vector writes (where the table declares it) is named in the appendix."""
    missing: set[str] = set()
    for event in _vector_events():
        if event["type"] not in KNOWN_EVENT_TYPES:
            continue
        for name in _declared_members(payload_shape(event["type"], 1), event["data"]):
            if f"`{name}`" not in INVARIANTS_MD:
                missing.add(f"{event['type']}: {name}")
    assert sorted(missing) == []


def test_every_legacy_type_and_form_member_a_vector_uses_is_documented() -> None:
    legacy_members = {"trigger", "messagePrefix", "failure", "provenance", "callId", "isError", "content", "source"}
    used = {event["type"] for event in _vector_events()} & V0_INVENTORY
    assert sorted(t for t in used if f"`{t}`" not in INVARIANTS_MD) == []
    for name in legacy_members:
        assert f"`{name}`" in INVARIANTS_MD, name


@pytest.mark.parametrize("text", [OUTCOME_UNKNOWN_TEXT, NOT_STARTED_TEXT])
def test_closer_texts_are_in_the_appendix(text: str) -> None:
    assert f"> {text}" in INVARIANTS_MD


def test_header_line_members_are_in_the_appendix() -> None:
    for name in ("type", "version", "id", "createdAt", "delegationDepth", "cwd", "parentSession", "seedLength", "origin"):
        assert f"`{name}`" in INVARIANTS_MD, name
    assert "### The stored header line" in INVARIANTS_MD
