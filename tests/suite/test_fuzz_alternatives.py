"""Alternatives of valid values, values that are not lossless in the surface metadata, moves inserted
inside a log, and the v0 values a writer gives: each generator must reach what it says it reaches,
and the model must judge what it builds."""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from strategies import property_settings

from sessionlog_spec.model.event import encode_event
from sessionlog_spec.model.header import assembled_header_problem, header_equals
from sessionlog_spec.model.json_value import freeze
from sessionlog_spec.model.legacy import StoredLog, upgrade_v0
from sessionlog_spec.model.load import read_log, save_session
from sessionlog_spec.model.payloads import EVENT_PAYLOADS
from sessionlog_spec.model.relationships import title_frame
from sessionlog_spec.model.session import SessionState, append_event, fold_session
from sessionlog_spec.model.shapes import Context
from sessionlog_spec.model.violation import Code, Violation
from sessionlog_spec.suite.agent.actions import title_request_data
from sessionlog_spec.suite.agent.builder import RawEvent, SessionBuilder, realistic_session
from sessionlog_spec.suite.agent.legacy_forms import restarted_turn
from sessionlog_spec.suite.agent.loop import MODELS, MODES, assembled_header
from sessionlog_spec.suite.agent.payload_values import valid_payload
from sessionlog_spec.suite.fuzz.alternatives import alternative_sites
from sessionlog_spec.suite.fuzz.legacy_v0 import V0_HEADER, member_additions, spellings, v0_alternatives, v0_sessions
from sessionlog_spec.suite.fuzz.perturb import LINE_EDITS, alternative_perturbations, lossless_perturbations
from sessionlog_spec.suite.fuzz.scenes import constructive_moves, walk_from, with_move_inserted
from sessionlog_spec.suite.fuzz.schema_faults import schema_document
from sessionlog_spec.suite.machines.fuzz import HEADER_LINE


def _code(state: SessionState, raw: object) -> Code | None:
    after = append_event(state, raw)
    return after.code if isinstance(after, Violation) else None


def _strings_in(value: object) -> set[str]:
    if isinstance(value, dict):
        return set().union(*(_strings_in(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_strings_in(v) for v in value)) if value else set()
    return {value} if isinstance(value, str) else set()


def test_alternatives_name_every_abort_cause_the_schema_admits() -> None:
    # The expected causes are asked of the published document itself: every string it spells that,
    # put at the cause's kind, it accepts.
    document = schema_document("turn/end")
    validator = Draft202012Validator(dict(document))

    def aborted(kind: str) -> dict[str, Any]:
        return {"turn": 1, "reason": {"kind": "aborted", "reason": {"kind": kind}}}

    admitted = {kind for kind in _strings_in(document) if validator.is_valid(aborted(kind))}
    assert len(admitted) >= 3
    alternatives = alternative_sites("turn/end", aborted("user"))
    reached = {json.dumps(payload) for site, payload in alternatives if site.startswith("reason.reason.kind")}
    assert {json.dumps(aborted(kind)) for kind in admitted - {"user"}} <= reached


@property_settings()
@given(st.sampled_from(sorted(EVENT_PAYLOADS)), st.data())
def test_every_alternative_is_spelled_apart_from_the_value_it_replaces(event_type: str, data: st.DataObject) -> None:
    payload = data.draw(valid_payload(EVENT_PAYLOADS[event_type], Context(event_seq=5)))
    original = json.dumps(payload, sort_keys=True)
    sites = alternative_sites(event_type, payload)
    assert len({site for site, _ in sites}) == len(sites)
    for _, edited in sites:
        assert json.dumps(edited, sort_keys=True) != original


def test_twins_are_equal_in_the_host_language_and_different_in_json() -> None:
    payload = {"turn": 1, "step": 0}
    twins = [edited for site, edited in alternative_sites("step/start", payload) if " twin " in site]
    assert twins
    for edited in twins:
        assert edited == payload
        assert json.dumps(edited) != json.dumps(payload)


def _advertised_never_started() -> tuple[SessionBuilder, RawEvent]:
    b = SessionBuilder()
    b.turn_start()
    b.step_start()
    b.assistant_message("Reading.", ["call-1"])
    return b, b.not_started_result("call-1", commit=False)


def test_inv_trace_8_inv_rel_4_alternatives_of_a_crash_repair_result_reach_its_rules() -> None:
    b, result = _advertised_never_started()
    assert _code(b.state, result) is None
    codes = {p.name: _code(b.state, p.edit(result)) for p in alternative_perturbations(result)}
    refused = {code for code in codes.values() if code is not None}
    # The other repair code answers no started call; a block without its flag is not the exact record.
    assert Code.TOOL_RESULT_UNPAIRED in refused or Code.TOOL_RESULT_NOT_EXACT_REPAIR in refused
    assert any(code is Code.TOOL_RESULT_NOT_EXACT_REPAIR for name, code in codes.items() if "isError" in name)
    assert any(code is not None for name, code in codes.items() if "error.code sibling" in name)


def test_inv_surf_11_an_alternative_of_a_rewrite_outside_its_content_is_refused() -> None:
    b = SessionBuilder()
    b.turn_start()
    b.step_start()
    b.assistant_message("Reading.", ["call-1"])
    b.tool_call("call-1")
    b.tool_result("call-1")
    rewrite = b.rewrite_tool_result(b.tool_result_seqs()[-1], commit=False)
    assert _code(b.state, rewrite) is None
    codes = {p.name: _code(b.state, p.edit(rewrite)) for p in alternative_perturbations(rewrite)}
    # The flag left out or flipped is a change outside the content (a twin is refused before, as no flag).
    flag = [code for name, code in codes.items() if "isError" in name and " twin " not in name]
    assert len(flag) == 2
    assert all(code is Code.TOOL_REWRITE_CHANGES for code in flag)


def test_inv_rel_7_a_move_inserted_inside_a_compaction_between_turns_is_refused() -> None:
    b = SessionBuilder()
    b.user_message("One.")
    b.user_message("Two.")
    b.compaction_start()
    start, end = b.legal_ranges()[0]
    b.compaction_summary(start, end)
    b.compaction_end()
    log = list(b.events)
    codes = set()
    for seed in range(40):
        inserted = with_move_inserted(log, 3, random.Random(seed))
        assert inserted is not None
        assert [e["seq"] for e in inserted] == list(range(len(log) + 1))
        answer = fold_session(inserted)
        codes.add(answer.code if isinstance(answer, Violation) else None)
    assert Code.COMPACTION_TURN_MISMATCH in codes
    assert None in codes


def test_a_move_inserted_is_one_the_prefix_could_have_written() -> None:
    log = realistic_session(2, calls_per_step=1).events
    rng = random.Random(3)
    for at in range(1, len(log)):
        inserted = with_move_inserted(log, at, rng)
        assert inserted is not None
        prefix = fold_session(log[:at], complete=False)
        assert isinstance(prefix, SessionState)
        moves = [{**raws[0], "time": 0} for _, raws in constructive_moves(prefix) if len(raws) == 1]
        assert {**inserted[at], "time": 0} in moves
        assert inserted[:at] == log[:at]


def _upgraded(events: list[RawEvent]) -> object:
    return upgrade_v0(StoredLog(freeze(dict(V0_HEADER)), tuple(freeze(e) for e in events)))  # type: ignore[arg-type, misc]


def test_inv_legacy_6_the_other_splice_target_before_a_restart_is_refused_by_the_edge() -> None:
    b = SessionBuilder()
    b.turn_start()
    b.user_message("Start.")
    log = [*b.events, *restarted_turn(b)]
    assert not isinstance(_upgraded(log), Violation)
    splice = next(i for i, e in enumerate(log) if e["type"] == "agent/inbox/spliced")
    others = [edited for name, edited in v0_alternatives(log[splice]) if "target sibling" in name]
    assert others
    for edited in others:
        assert isinstance(_upgraded([*log[:splice], edited, *log[splice + 1 :]]), Violation)


def test_inv_legacy_5_a_retry_id_the_writer_gives_is_a_value_the_edge_would_not_mint() -> None:
    chain = v0_sessions()[1]
    retry = next(e for e in chain if e["type"] == "llm/retry")
    name, spelled = next((n, s) for n, s in spellings(retry) if n.startswith("N8"))
    given_ = [edited for n, edited in member_additions(name, spelled, retry) if n.endswith("retryId given")]
    assert given_
    assert all(edited["data"]["retryId"] != retry["data"]["retryId"] for edited in given_)


def test_inv_log_4_values_that_are_not_lossless_go_to_the_surface_metadata_too() -> None:
    b = SessionBuilder()
    b.user_message("One.")
    b.user_message("Two.")
    start, end = b.legal_ranges()[0]
    summary = b.compaction(start, end, commit=False)
    assert _code(b.state, summary) is None
    reached: dict[str, Code | None] = {}
    for seed in range(30):
        for p in lossless_perturbations(summary, random.Random(seed)):
            if not p.name.startswith("data "):
                reached[p.name] = _code(b.state, p.edit(summary))
    places = {name.split(" ")[0].split(".")[0] for name in reached}
    assert {"surfaceOp", "sourceEventSeqs", "seq", "time"} <= places
    unsafe = {name.split(" ")[0]: code for name, code in reached.items() if name.endswith(" 2^53")}
    assert all(code is not None for code in unsafe.values())
    metadata = [code for name, code in unsafe.items() if name.startswith(("surfaceOp", "sourceEventSeqs"))]
    assert metadata
    assert all(code is Code.JSON_NOT_LOSSLESS for code in metadata)


def test_inv_hdr_7_a_twin_in_the_loop_header_is_a_header_that_differs() -> None:
    # The loop's tools declare parameters with numbers and flags, so a twin of the latest snapshot
    # (`true` for `1`, `0` for `false`) exists; JSON equality tells it apart.
    with_tools = [assembled_header(mode, model) for mode in sorted(MODES) for model in sorted(MODELS)]
    header = next(h for h in with_tools if h.get("tools"))
    sites = alternative_sites("request/header", {"header": header, "reason": "change"})
    # A flag for a number, or a number for a flag: another JSON value (`1` and `1.0` are one number).
    twins = [
        (site, edited["header"])
        for site, edited in sites
        if " twin " in site and isinstance(edited, dict) and ("True" in site or "False" in site)
    ]
    assert any(" twin True " in site or " twin 0 " in site for site, _ in twins)
    for _, twin in twins:
        assert assembled_header_problem(freeze(twin)) is None
        assert not header_equals(freeze(twin), freeze(header))  # type: ignore[arg-type]


def test_inv_rel_4_a_walk_meets_alternatives_of_the_crash_repair_result() -> None:
    b, _ = _advertised_never_started()
    found = {
        scene.code
        for seed in range(12)
        for scene in walk_from(b.state, random.Random(seed), 1, drawn=False)
        if scene.what.startswith("not started") and ", " in scene.what
    }
    assert found & {Code.TOOL_RESULT_NOT_EXACT_REPAIR.value, Code.TOOL_RESULT_UNPAIRED.value}


def _read_events(text: str) -> object:
    answer = read_log(text)
    return answer.code if isinstance(answer, Violation) else [encode_event(e) for e in answer.state.events]


def test_inv_jsonl_4_a_row_spelled_by_another_writer_is_read_as_json_reads_it() -> None:
    b = SessionBuilder()
    b.turn_start()
    b.user_message("One.")
    b.user_message("Two.")
    text = save_session(freeze(dict(HEADER_LINE)), b.state, False)  # type: ignore[arg-type]
    lines = text.split("\n")[:-1]
    original = _read_events(text)
    assert isinstance(original, list)
    outcomes: dict[str, set[bool]] = {}
    for name in ("spaced", "number respelled", "letter escaped"):
        for at in range(1, len(lines)):
            edited = LINE_EDITS[name](lines, at)
            assert edited != lines
            outcomes.setdefault(name, set()).add(_read_events("\n".join(edited) + "\n") == original)
    # An escape is the same text; a space of JSON's own is nothing; a form feed or a BOM is a damaged
    # row, and `-0` is not lossless: each edit is asked both ways over the rows.
    assert outcomes["letter escaped"] == {True}
    assert outcomes["spaced"] == {True, False}
    assert False in outcomes["number respelled"]


def test_inv_trace_9_an_emptied_call_id_and_a_grown_result_are_asked() -> None:
    b = SessionBuilder()
    b.turn_start()
    b.step_start()
    b.assistant_message("Reading.", ["call-1"])
    call = b.tool_call("call-1", commit=False)
    emptied = {p.name: _code(b.state, p.edit(call)) for p in alternative_perturbations(call) if " emptied " in p.name}
    assert emptied["data.callId emptied for 'call-1'"] is Code.TRACE_DATA_INVALID
    b.tool_call("call-1")
    result = b.tool_result("call-1", commit=False)
    perturbations = alternative_perturbations(result)
    grown = [_code(b.state, p.edit(result)) for p in perturbations if p.name.startswith("data.message.content grown")]
    assert grown == [Code.TOOL_RESULT_INVALID]


def test_inv_rel_28_cited_seqs_in_the_other_order_are_asked() -> None:
    b = SessionBuilder()
    b.turn_start()
    b.user_message("First question.")
    b.user_message("Second question.")
    humans = [(1, "First question."), (2, "Second question.")]
    title = b.event("session/title-llm-request", title_request_data(b, [1, 2], title_frame(humans)), commit=False)
    assert _code(b.state, title) is None
    reversed_ = [p.edit(title) for p in alternative_perturbations(title) if p.name == "data.messageSeqs reversed 2 items"]
    assert [e["data"]["messageSeqs"] for e in reversed_] == [[2, 1]]
    assert _code(b.state, reversed_[0]) is Code.TITLE_REQUEST_FRAMING  # the frame names them in the order cited
