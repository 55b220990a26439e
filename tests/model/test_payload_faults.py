"""A payload fault is the valid payload broken in exactly one place, the valid one left as it was
(``spec/suite/agent/payload_faults.py``)."""

from __future__ import annotations

import copy
import functools
import random
from typing import Any

import pytest
from model_cases import BUILDER_STATES

from sessionlog_spec.model.payloads import payload_shape
from sessionlog_spec.suite.agent.actions import NOTE_VARIANTS
from sessionlog_spec.suite.agent.candidates.payloads import SWEPT_TYPE_NAMES, standing_note
from sessionlog_spec.suite.agent.payload_faults import Site, apply_site, fault_sites


@functools.cache
def _payloads() -> list[tuple[str, Any]]:
    """Every exemplar payload that stands on some builder state, in every variant."""
    out = []
    for make in BUILDER_STATES.values():
        builder = make()
        for type_ in SWEPT_TYPE_NAMES:
            for variant in range(NOTE_VARIANTS):
                event = standing_note(builder, type_, variant)
                if event is not None:
                    out.append((type_, event["data"]))
    return out


def _copied(value: Any, site: Site, rng: random.Random) -> Any:
    """The fault put into a whole copy of ``value`` (what a fault is: the one edit, nothing shared)."""
    out = copy.deepcopy(value)
    if not site.location:
        return site.edit(rng, out)
    parent = out
    for step in site.location[:-1]:
        parent = parent[step]
    parent[site.location[-1]] = site.edit(rng, parent[site.location[-1]])
    return out


@pytest.mark.parametrize("seed", range(3))
def test_a_fault_is_the_payload_with_one_edit_and_leaves_the_payload_as_it_was(seed: int) -> None:
    payloads = _payloads()
    assert len({type_ for type_, _ in payloads}) > 20
    for type_, data in payloads:
        before = copy.deepcopy(data)
        for index, site in enumerate(fault_sites(payload_shape(type_, 1), data)):
            fault = apply_site(data, site, random.Random(seed * 1_000 + index))
            assert fault == _copied(before, site, random.Random(seed * 1_000 + index)), (type_, site.path, site.kind)
            assert data == before, (type_, site.path, site.kind)
