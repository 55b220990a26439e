"""The registry of invalid candidates: every mutation is refused with its own code, and every code has one.

Each mutation is applied to a handful of builder states (fresh, realistic and closed, an open step
with pending calls, between two steps, after a compaction, a seeded fork child) with a few seeds,
and submitted through the contracted model in its context.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Iterator

import pytest
from model_cases import BUILDER_STATES

from sessionlog_spec.model.rows import seq_spans
from sessionlog_spec.model.session import SessionState, fold_session, seed_session
from sessionlog_spec.model.violation import Code, Violation
from sessionlog_spec.suite.agent.builder import SessionBuilder
from sessionlog_spec.suite.agent.candidates import CONTEXTS, MUTATIONS, Candidate, Mutation, applicable, mutations_for, submit
from sessionlog_spec.suite.agent.candidates.jsonl import _malformed_ranges
from sessionlog_spec.suite.agent.candidates.relationships import OPENINGS, opened_scene
from sessionlog_spec.suite.agent.variants import variants

SEEDS = (0, 1, 2)


@functools.cache
def _builders() -> dict[str, SessionBuilder]:
    """One builder per state, shared: building candidates never changes a builder (tested below)."""
    return {name: make() for name, make in BUILDER_STATES.items()}


def _candidates(mutation: Mutation) -> Iterator[tuple[str, SessionBuilder, Candidate]]:
    for state_name, builder in _builders().items():
        for seed in SEEDS:
            value = mutation.build(builder, random.Random(seed))
            if value is not None:
                yield state_name, builder, Candidate(mutation, value)


def _produced() -> dict[str, set[Code]]:
    """Mutation name → the codes its candidates were refused with, over every state and seed."""
    produced: dict[str, set[Code]] = {m.name: set() for m in MUTATIONS}
    for state_name, builder in _builders().items():
        for seed in SEEDS:
            for candidate in applicable(builder, random.Random(seed)):
                result = submit(builder, candidate)
                assert isinstance(result, Violation), (state_name, candidate.mutation.name)
                produced[candidate.mutation.name].add(result.code)
    return produced


@pytest.mark.parametrize("mutation", MUTATIONS, ids=[m.name for m in MUTATIONS])
def test_mutation_is_refused_with_its_code(mutation: Mutation) -> None:
    """Every candidate the mutation builds, from every state that allows it, is refused with its code
    (a lifted candidate is refused, possibly for another reason the path checks first)."""
    applied = 0
    for state_name, builder, candidate in _candidates(mutation):
        result = submit(builder, candidate)
        assert isinstance(result, Violation), f"{mutation.name} on {state_name}: accepted {candidate.value!r}"
        assert result.code is mutation.code or mutation.lifted_from, f"{mutation.name} on {state_name}: {result}"
        applied += 1
    assert applied > 0, f"{mutation.name} applies to none of the builder states"


@pytest.mark.parametrize("mutation", MUTATIONS, ids=[m.name for m in MUTATIONS])
def test_mutation_candidates_survive_a_json_round_trip(mutation: Mutation) -> None:
    """A candidate sent through a JSON encoder and decoder is refused with the same code."""
    for _, builder, candidate in _candidates(mutation):
        again = Candidate(mutation, json.loads(json.dumps(candidate.value)))
        result = submit(builder, again)
        assert isinstance(result, Violation), (mutation.name, result)
        assert result.code is mutation.code or mutation.lifted_from, (mutation.name, result)


@pytest.mark.parametrize("state_name", list(BUILDER_STATES))
def test_building_candidates_leaves_the_builder_unchanged(state_name: str) -> None:
    """``build`` never moves the builder's session, clock or id counter."""
    builder = BUILDER_STATES[state_name]()
    before = (builder.state, builder.time, builder.ids, builder.turn, builder.step)
    applicable(builder, random.Random(7))
    assert (builder.state, builder.time, builder.ids, builder.turn, builder.step) == before


def test_building_candidates_is_deterministic_per_seed() -> None:
    """The same builder state and seed give the same candidates."""
    builder = BUILDER_STATES["after_compaction"]()
    first = [(c.mutation.name, c.value) for c in applicable(builder, random.Random(3))]
    second = [(c.mutation.name, c.value) for c in applicable(builder, random.Random(3))]
    assert first == second


def test_every_violation_code_is_produced() -> None:
    """The union of the codes the registered candidates are refused with is the whole ``Code`` enum."""
    produced = _produced()
    own = {m.name: {m.code} for m in MUTATIONS if m.lifted_from is None}
    wrong = {name: codes for name, codes in produced.items() if name in own and codes - own[name]}
    assert wrong == {}
    assert set().union(*produced.values()) == set(Code)


def test_every_code_has_a_mutation() -> None:
    """``mutations_for`` names at least one mutation for every code, and only mutations of that code."""
    for code in Code:
        found = mutations_for(code)
        assert found, code
        assert all(m.code is code for m in found)
    assert sum(len(mutations_for(code)) for code in Code) == len(MUTATIONS)


def test_mutation_names_are_unique_and_contexts_known() -> None:
    """Names identify mutations in reports and are their builders' names; contexts are the five documented ones."""
    assert len({m.name for m in MUTATIONS}) == len(MUTATIONS)
    assert [m.name for m in MUTATIONS] == [m.build.__name__ for m in MUTATIONS]
    assert {m.context for m in MUTATIONS} == set(CONTEXTS)


def _left_open(state: SessionState, what: str) -> bool:
    """Whether ``state`` (before any end-of-seed marker) holds ``what`` open at its end."""
    relations, trace = state.relations, state.trace
    compaction = relations.compaction
    return {
        "compaction": compaction is not None and compaction.crossed_at is None,
        "crossed-compaction": compaction is not None and compaction.crossed_at is not None,
        "turn": trace.open_turn is not None,
        "step": trace.open_step is not None,
        "asked-call": any(not t.started for t in relations.tools),
        "started-call": any(t.started for t in relations.tools),
        "sub-call": bool(relations.ptc_starts),
        "command": bool(relations.commands),
    }[what]


@pytest.mark.parametrize("what", OPENINGS)
def test_an_opened_scene_is_a_valid_seed_that_leaves_its_kind_open(what: str) -> None:
    """Every kind of open thing a reseed may leave for the end-of-seed marker is built somewhere,
    is a log the model seeds, and really is open where the seed ends."""
    built = 0
    for state_name, builder in _builders().items():
        for seed in SEEDS:
            events = opened_scene(builder, what, random.Random(seed))
            if events is None:
                continue
            built += 1
            assert events[: len(builder.events)] == builder.events, "a scene extends the session, it does not change it"
            folded = fold_session(events, where="seed index", complete=False)
            assert not isinstance(folded, Violation), (state_name, seed, folded)
            assert _left_open(folded, what), (state_name, seed)
            assert not isinstance(seed_session(events), Violation), (state_name, seed)
    assert built, f"no state holds an opened {what}"


def test_inv_jsonl_10_malformed_ranges_include_a_step_back_with_no_repeat() -> None:
    """INV-JSONL-10: ranges must be strictly increasing.  A candidate list whose order is its only
    fault (no seq repeated, every bound in range) is among the spellings, so a reader that checks
    repeats but not order is sent one, in a tenth of the draws at least."""
    order_only = [value for seed in range(700) if _order_only(value := _malformed_ranges(12, random.Random(seed)))]
    assert len(order_only) >= 70


def _order_only(value: object, seq: int = 12) -> bool:
    """Whether the range list ``value`` (of a row at ``seq``) is refused for its order alone."""
    if seq_spans(value, seq) != "sourceEventSeqs ranges must be strictly increasing":
        return False
    assert isinstance(value, list)
    expanded = [n for entry in value for n in (range(entry[0], entry[1] + 1) if isinstance(entry, list) else [entry])]
    return len(set(expanded)) == len(expanded)


def test_inv_jsonl_10_a_sweep_of_the_range_candidate_sends_a_step_back_with_no_repeat() -> None:
    """A sweep walks a candidate's choices (``variants``), changing its first ones first, a few runs
    each: the fault is the candidate's first choice, so eight runs reach the order-only fault."""
    mutation = next(m for m in MUTATIONS if m.name == "malformed_range_provenance_in_committed_history")
    builder = _builders()["realistic"]
    walked = list(variants(mutation.build, builder, limit=8, runs=8))
    rows = [json.loads(line) for text in walked for line in str(text).splitlines()[1:]]
    assert any(_order_only(row["sourceEventSeqs"], row["seq"]) for row in rows if "sourceEventSeqs" in row)


def test_inv_legacy_9_a_non_array_message_prefix_is_built_on_a_log_with_no_header_yet() -> None:
    """INV-LEGACY-9: a v0 snapshot's ``messagePrefix`` that is not an array is refused.  A session's
    first moments hold no ``request/header``, yet the malformed-legacy-form candidate writes one to
    get wrong there too, as often as any other form of its log."""
    mutation = next(m for m in MUTATIONS if m.name == "v0_malformed_legacy_form")
    spoiled = 0
    for builder in (SessionBuilder(), _builders()["fresh"]):
        assert not any(e.type == "request/header" for e in builder.state.events)
        for seed in range(40):
            value = mutation.build(builder, random.Random(seed))
            assert isinstance(value, dict)
            headers = [e for e in value["events"] if e["type"] == "request/header"]
            spoiled += any(not isinstance(e["data"]["header"].get("messagePrefix"), list) for e in headers)
    assert spoiled >= 10


def test_inv_rel_29_a_fork_marker_past_the_seed_stands_at_seq_seed_length_in_a_share_of_builds() -> None:
    """INV-REL-29: a fork's seed is the seqs below ``seedLength``; a marker at seq ``seedLength`` is
    the child's own.  The past-the-seed candidate puts its marker right at that bound one build in
    four or more, not once in the log's length (a reader that takes ``seq <= seedLength`` as the
    seed keeps such a marker)."""
    mutation = next(m for m in MUTATIONS if m.name == "jsonl_fork_marker_past_seed")
    builder = _builders()["realistic"]
    assert builder.next_seq >= 8
    at_bound = 0
    for seed in range(200):
        lines = str(mutation.build(builder, random.Random(seed))).splitlines()
        header, marker = json.loads(lines[0]), json.loads(lines[-1])
        at_bound += marker["seq"] == header["seedLength"]
    assert at_bound >= 50
