"""Generation of rare values and orders: two faults in one value, stored layouts, v0 records given the
members the edge writes, surface metadata at its bounds, events drawn by form.  Each generator must
reach what it says it reaches, and the model must judge what it builds as its docstring says."""

from __future__ import annotations

import collections
import random
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from strategies import property_settings

from sessionlog_spec.model.json_value import as_object, freeze
from sessionlog_spec.model.jsonl import encode_line, header_line_problem, seed_length_problem
from sessionlog_spec.model.legacy import StoredLog, upgrade_v0
from sessionlog_spec.model.load import ReadLog, read_log
from sessionlog_spec.model.session import SessionState, append_event
from sessionlog_spec.model.violation import Code, Violation
from sessionlog_spec.suite.agent.builder import SessionBuilder, basic_header
from sessionlog_spec.suite.fuzz.double import ABSENT, applied, changes, disjoint, double_faults
from sessionlog_spec.suite.fuzz.layouts import chunk_run, laid_out_rows, layout, retimed, row_faults
from sessionlog_spec.suite.fuzz.legacy_v0 import member_additions, spellings, v0_log, v0_sessions
from sessionlog_spec.suite.fuzz.perturb import by_form, form_of, header_line_edits, provenance_perturbations
from sessionlog_spec.suite.machines.fuzz import HEADER_LINE

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3),
    max_leaves=10,
)


# -- two faults in one value ------------------------------------------------------------------------


@property_settings()
@given(JSON, JSON)
def test_the_changes_of_an_edit_applied_to_its_base_give_the_edit(base: object, edited: object) -> None:
    assert applied(base, changes(base, edited)) == edited
    assert changes(base, base) == {}


def test_changes_tell_one_from_true_and_a_dropped_member_from_null() -> None:
    assert changes({"a": 1}, {"a": True}) == {("a",): True}
    assert changes({"a": 1, "b": 2}, {"b": 2}) == {("a",): ABSENT}
    assert not disjoint({("a",): 1}, {("a", "b"): 2})
    assert disjoint({("a",): 1}, {("b",): 2})


def _header_code(header: object, events: int = 3) -> str | None:
    if not isinstance(header, dict):
        return "not an object"
    problem = header_line_problem(header) or seed_length_problem(header, events)
    return None if problem is None else problem.code.value


def test_double_faults_carry_both_faults_and_are_answered_with_one_of_their_codes() -> None:
    header = {**HEADER_LINE, "cwd": "/work", "agentPreset": "default"}
    edits = dict(header_line_edits(header, 3))
    seen = 0
    for seed in range(20):
        for name, both in double_faults(header, list(edits.items()), _header_code, random.Random(seed), 8):
            first, second = name.split(" | ")
            one, other = changes(header, edits[first]), changes(header, edits[second])
            assert changes(header, both) == {**one, **other}
            assert _header_code(edits[first]) != _header_code(edits[second])
            assert _header_code(both) in (_header_code(edits[first]), _header_code(edits[second]))
            seen += 1
    assert seen >= 100


def test_double_faults_tell_a_port_that_checks_two_members_in_another_order() -> None:
    """A reader that looks at the header line's type before its version (INV-JSONL-7) answers one of
    the doubles differently from the model within a few steps' worth of draws."""

    def type_first(header: object) -> str | None:
        if isinstance(header, dict) and header.get("type") != "session":
            return Code.JSONL_HEADER_INVALID.value
        return _header_code(header)

    header = {**HEADER_LINE, "cwd": "/work", "agentPreset": "default"}
    edits = header_line_edits(header, 3)
    told = [
        both
        for seed in range(10)
        for _, both in double_faults(header, edits, _header_code, random.Random(seed), 8)
        if type_first(both) != _header_code(both)
    ]
    assert told


# -- stored layouts ------------------------------------------------------------------------------


def _streamed_log() -> list[dict[str, Any]]:
    b = SessionBuilder()
    b.streamed_turn("hi", ["a", "b", "c", "d"], ["c1"], basic_header(), "initial")
    b.streamed_turn("ho", ["e", "f"], ["c2"])
    b.tool_turn("Start", ["call-0"], basic_header(), "resume")
    b.turn_start()
    b.user_message("Go on.")
    b.step_start()
    b.rewrite_tool_result(b.tool_result_seqs()[-1])
    b.step_end()
    b.turn_end()
    return b.events


def _compacted_log() -> list[dict[str, Any]]:
    """A session whose compaction checkpoint replaces the widest span it may: sources of several seqs."""
    b = SessionBuilder()
    b.tool_turn("Start", ["call-0", "call-1"], basic_header(), "initial")
    b.tool_turn("Again", ["call-2"], basic_header(), "resume")
    b.turn_start()
    for text in ("One.", "Two.", "Three."):  # consecutive surface seqs: a span a range can spell
        b.user_message(text)
    b.compaction_start()
    start, end = max(b.legal_ranges(), key=lambda r: b.state.surface.nodes.index(r[1]) - b.state.surface.nodes.index(r[0]))
    b.compaction_summary(start, end)
    open_ = b.open_compaction()
    assert open_ is not None
    nodes = b.state.surface.nodes
    shadowed = list(nodes[nodes.index(start) : nodes.index(end) + 1])
    assert len(shadowed) > 2
    checkpoint = {
        "id": "checkpoint-1",
        "role": "user",
        "content": [{"type": "text", "text": "Summary."}],
        "source": {"kind": "plugin", "plugin": "compact", "compactionId": open_.compaction_id},
    }
    b.event("user/message", checkpoint, surfaceOp={"op": "replace", "start": start, "end": end}, sourceEventSeqs=shadowed)
    b.compaction_end()
    b.turn_end()
    return b.events


HEADER = {"type": "session", "version": 1, "id": "x", "createdAt": 1, "delegationDepth": 0}


def _read(rows: list[dict[str, Any]]) -> ReadLog | Violation:
    return read_log("".join(encode_line(row) + "\n" for row in [HEADER, *rows]))


def test_inv_jsonl_9_10_every_drawn_layout_reads_back_to_the_same_events() -> None:
    """Packed rows of any length (one included), ranges of one seq, clocks that go back: each layout of
    a valid log is read as the log itself, and over a few draws each of these forms comes up."""
    rng = random.Random(7)
    forms: collections.Counter[str] = collections.Counter()
    for events in [_streamed_log(), _compacted_log()] * 30:
        log = retimed(events, rng) if rng.randrange(2) else events
        rows = layout(log, rng)
        read = _read(rows)
        assert isinstance(read, ReadLog), read
        expected = _read(log)
        assert isinstance(expected, ReadLog)
        assert read.state.events == expected.state.events
        for row in rows:
            data = row.get("data", {})
            if "dt" in data:
                forms["packed row of one"] += len(data["dt"]) == 0
                forms["negative gap"] += any(gap < 0 for gap in data["dt"])
            for entry in row.get("sourceEventSeqs") or ():
                forms["range of one"] += isinstance(entry, list) and entry[0] == entry[1]
                forms["range"] += isinstance(entry, list) and entry[0] < entry[1]
    assert all(forms[name] > 0 for name in ("packed row of one", "negative gap", "range of one", "range")), forms


def test_inv_jsonl_9_a_broken_layout_row_is_refused_or_dropped_by_the_model() -> None:
    events = _streamed_log()
    rng = random.Random(3)
    rows = layout(events, rng)
    laid = laid_out_rows(rows)
    assert laid
    verdicts: collections.Counter[str] = collections.Counter()
    for at in laid:
        for _, broken in row_faults(rows[at]):
            read = _read([*rows[:at], broken, *rows[at + 1 :]])
            verdicts["refused" if isinstance(read, Violation) else "read"] += 1
    assert verdicts["refused"] > verdicts["read"] > 0


def test_a_chunk_run_of_every_kind_is_one_the_model_accepts_after_an_open_step() -> None:
    b = SessionBuilder()
    b.turn_start()
    b.user_message("Go.")
    b.step_start()
    kinds = set()
    for seed in range(30):
        state: SessionState | Violation = b.state
        for event in chunk_run(1, 1, b.next_seq, 1_700_000_000_100, random.Random(seed)):
            assert isinstance(state, SessionState)
            state = append_event(state, event)
            assert not isinstance(state, Violation), state
            kinds.add((event["data"]["chunk"]["type"], "name" in event["data"]["chunk"]))
    assert len(kinds) == 4


# -- the v0 edge ------------------------------------------------------------------------------------


def _upgrade(events: list[dict[str, Any]]) -> str | None:
    header, raws = as_object(freeze(v0_log(events)["header"])), tuple(as_object(freeze(e)) for e in events)
    result = upgrade_v0(StoredLog(header, raws))  # type: ignore[arg-type]
    return result.code.value if isinstance(result, Violation) else None


def test_inv_legacy_5_9_members_the_edge_writes_given_by_the_writer_are_kept_or_refused_as_the_model_says() -> None:
    """Every spelling with a member the edge writes added: the model keeps some (an open record) and
    refuses others (a closed one), so both answers are asked of a port."""
    verdicts: collections.Counter[str] = collections.Counter()
    for events in v0_sessions():
        for index, event in enumerate(events):
            for name, spelled in spellings(event):
                for _, added in member_additions(name, spelled, event):
                    code = _upgrade([*events[:index], added, *events[index + 1 :]])
                    verdicts[code or "kept"] += 1
    assert verdicts["kept"] > 0 and verdicts[Code.LEGACY_SOURCE_INVALID.value] > 0, verdicts


# -- surface metadata and forms ---------------------------------------------------------------------


def test_inv_surf_3_5_6_the_metadata_of_a_replace_is_moved_to_each_bound_and_refused() -> None:
    b = SessionBuilder()
    b.tool_turn("Start", ["call-0"], basic_header(), "initial")
    b.turn_start()
    b.user_message("Go on.")
    b.step_start()
    rewrite = b.rewrite_tool_result(b.tool_result_seqs()[-1], commit=False)
    names = {p.name: p for p in provenance_perturbations(rewrite, b.next_seq)}
    assert {"surfaceOp.start -1", "sourceEventSeqs without [0]", "surfaceOp.op 'append'"} <= names.keys()
    answers = {name: append_event(b.state, p.edit(rewrite)) for name, p in names.items()}
    for name in ("surfaceOp.start -1", "sourceEventSeqs without [0]", "surfaceOp.op 'append'", "surfaceOp.end 0.5"):
        assert isinstance(answers[name], Violation), name
    codes = {a.code for a in answers.values() if isinstance(a, Violation)}
    assert len(codes) >= 4, codes


def test_events_are_drawn_by_form_so_a_rare_form_comes_up_as_often_as_a_common_one() -> None:
    events = _streamed_log()
    forms = collections.Counter(form_of(e) for e in events)
    rare = min(forms, key=lambda f: forms[f])
    rng = random.Random(1)
    drawn = collections.Counter(form_of(events[by_form(events, rng)]) for _ in range(4000))
    share = 4000 / len(forms)
    assert drawn[rare] > 0.7 * share
    assert max(drawn.values()) < 1.3 * share
