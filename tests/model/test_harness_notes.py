"""The valid notes the agent machines write where the log gives them something to relate to
(``note_in_place``), and the exemplar notes the payload faults start from, in every variant."""

from __future__ import annotations

import copy
import functools
import random

import pytest
from model_cases import BUILDER_STATES

from sessionlog_spec.model.json_value import thaw
from sessionlog_spec.model.session import append_event
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.suite.agent.actions import NOTE_VARIANTS
from sessionlog_spec.suite.agent.builder import SessionBuilder
from sessionlog_spec.suite.agent.candidates.payloads import HARNESS_NOTE_TYPES, payload_fault_sweep, standing_note
from sessionlog_spec.suite.machines.agent import NOTE_PLACES, NotePlace


def _noted() -> dict[str, SessionBuilder]:
    """Turn 2 open between steps, after each note of a round of every harness note that stands:
    what a note follows up (an approval asked, a hook invoked, a retry scheduled, a dispatch
    started) is logged in some of them and not yet followed up."""
    b, out = BUILDER_STATES["between_steps"](), {}
    for type_ in HARNESS_NOTE_TYPES:
        event = standing_note(b, type_, 1)
        if event is not None:
            b.time = event["time"]
            b.commit(event)
            out[f"after {type_}"] = copy.copy(b)
    return out


@functools.cache
def _builders() -> dict[str, SessionBuilder]:
    return {**{name: make() for name, make in BUILDER_STATES.items()}, **_noted()}


def _standing(type_: str) -> list[tuple[str, int, dict[str, object]]]:
    """Every (state, variant, data) where the note of ``type_`` stands."""
    out = []
    for name, builder in _builders().items():
        for variant in range(NOTE_VARIANTS):
            event = standing_note(builder, type_, variant)
            if event is not None:
                assert event["type"] == type_ and event["seq"] == builder.next_seq
                assert not isinstance(append_event(builder.state, event), Violation), (name, variant, event)
                out.append((name, variant, event["data"]))
    return out


@pytest.mark.parametrize("type_", HARNESS_NOTE_TYPES)
def test_every_harness_note_type_is_written_valid_somewhere(type_: str) -> None:
    # A type no state lets stand is a type the machines never write valid.
    assert _standing(type_), f"{type_} stands on none of the builder states"


@pytest.mark.parametrize("place", NOTE_PLACES, ids=[p.name for p in NOTE_PLACES])
def test_every_note_place_writes_a_note_where_it_is_reached(place: NotePlace) -> None:
    reached = [n for n, b in _builders().items() if place.reached(b)]
    assert reached, "no builder state reaches the place"
    written = {
        name
        for name in reached
        for type_ in place.types
        for variant in range(NOTE_VARIANTS)
        if standing_note(_builders()[name], type_, variant) is not None
    }
    assert written, f"none of {place.types} stands where {place.name!r} is reached"


def test_inv_rel_13_a_retry_between_steps_is_written_naming_the_step_that_ended_last() -> None:
    builder = _builders()["between_steps"]
    assert builder.state.trace.open_step is None and builder.state.relations.ended_steps == 1
    retries = [data for name, _, data in _standing("llm/retry") if name == "between_steps"]
    assert retries and all(r["step"] == 1 for r in retries)


def test_inv_rel_25_a_command_is_written_finishing_every_way_it_may() -> None:
    done = [data for _, _, data in _standing("command/done")]
    kinds = {(d["kind"], "sourceEventSeq" in d) for d in done}
    assert kinds == {("success", True), ("success", False), ("error", False)}


def test_inv_pay_1_a_title_that_cites_nothing_is_faulted_without_its_message_seqs() -> None:
    # A title the user set cites no message: left without its (empty) messageSeqs it must be
    # refused, which only a sweep that starts from that variant of the title can ask.
    builder = _builders()["realistic"]
    faulted = [
        thaw(event["data"])
        for seed in range(20)
        for event in payload_fault_sweep(builder, random.Random(seed))
        if event["type"] == "session/title"
    ]
    user_set = [d for d in faulted if isinstance(d, dict) and d.get("source") == {"kind": "user"}]
    assert any("messageSeqs" not in d for d in user_set)
