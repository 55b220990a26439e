"""INV-REL: relationships between events, and their agreement with the released rules.

Each ``test_inv_rel_<N>`` builds the smallest log that breaks one rule and that every other rule of
the model accepts, so it fails if that rule is removed; most also show the nearest valid log.  The
logs go through the model with the relationship rules wired last into ``admit``
(:func:`relationship_logs.model_verdict`).

The differential tests put generated agent loops, their prefixes and one-fault mutations to the
published ``assertReleasedArtifactRelationships`` (``tests/upstream/relationship_oracle.mjs``, one
Node process per test) and require the same verdict on every artifact.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from relationship_logs import (
    FAULTS,
    PARENT_ID,
    PROVIDERS,
    SESSION_ID,
    Artifact,
    Call,
    LogBuilder,
    closed_turn_with_human,
    faulty_artifact,
    header_line,
    in_step,
    model_verdict,
    text,
    valid_artifact,
)

from sessionlog_spec.model.event import APPEND, Event, Replace
from sessionlog_spec.model.json_value import freeze
from sessionlog_spec.model.load import read_log
from sessionlog_spec.model.relationships import (
    _HANDLERS,
    OpenCompaction,
    RelationState,
    SessionIdentity,
    ToolLifecycle,
    js_string,
    relations_for,
    relationship_finish,
    relationship_transition,
    string,
    title_frame,
)
from sessionlog_spec.model.violation import Code, Violation

ROOT = Path(__file__).resolve().parents[2]
ORACLE = ROOT / "tests" / "upstream" / "relationship_oracle.mjs"
PACKAGE = ROOT / "ports" / "dsh-format" / "node_modules" / "@deepseek-ai" / "dsh-session-format-v0-to-v1"
NODE = shutil.which("node")


def code_of(b: LogBuilder, header: dict[str, Any] | None = None) -> Code | None:
    """The code the model refuses the builder's log with, or ``None``."""
    verdict = model_verdict(b.artifact(header))
    return verdict.code if verdict is not None else None


def started(b: LogBuilder, call: Call) -> None:
    """Start ``call`` and answer it."""
    b.tool_call(call)
    b.tool_result(call.id)


# -- tool lifecycles --------------------------------------------------------------------------------


@pytest.mark.parametrize("fault", ["call_name", "call_arguments", "call_unadvertised", "call_twice", "call_from_earlier_step"])
def test_inv_rel_1_a_tool_call_starts_one_advertised_call(fault: str) -> None:
    b = LogBuilder()
    assert FAULTS[fault](b, random.Random(0)) is Code.TOOL_CALL_NOT_ADVERTISED
    assert code_of(b) is Code.TOOL_CALL_NOT_ADVERTISED


def test_inv_rel_1_the_advertised_call_itself_starts() -> None:
    b = LogBuilder()
    in_step(b)
    call = Call("c1", "read", '{"path": "a.py"}')
    b.assistant([call])
    started(b, call)
    b.step_end()
    b.turn_end()
    assert code_of(b) is None


def test_inv_rel_2_an_advertised_id_is_pending_once_in_its_step() -> None:
    b = LogBuilder()
    in_step(b)
    call = Call("c1", "read", "{}")
    b.assistant([call])
    b.assistant([call])
    assert code_of(b) is Code.TOOL_CALL_ID_REPEATED


def test_inv_rel_2_an_answered_id_may_be_asked_again() -> None:
    b = LogBuilder()
    in_step(b)
    call = Call("c1", "read", "{}")
    for _ in range(2):
        b.assistant([call])
        started(b, call)
    b.step_end()
    b.step_start()
    b.assistant([call])
    started(b, call)
    b.step_end()
    assert code_of(b) is None


def test_inv_rel_3_an_appended_result_answers_a_pending_advertised_call() -> None:
    """INV-REL-3: A result in the exact repair form (which the trace lets through) for a call nobody asked for."""
    b = LogBuilder()
    assert FAULTS["repair_unadvertised"](b, random.Random(0)) is Code.TOOL_RESULT_UNADVERTISED
    assert code_of(b) is Code.TOOL_RESULT_UNADVERTISED


@pytest.mark.parametrize(
    "change",
    [
        {"name": "ToolFailedError"},
        {"message_id": "interrupted-tool-result-c1"},
        {"text": "Interrupted."},
        {"is_error": False},
        {"sources": [2]},
    ],
)
def test_inv_rel_4_a_call_that_never_started_is_answered_only_by_the_exact_repair(change: dict[str, Any]) -> None:
    """INV-REL-4: A call that was advertised but never started (no `tool/call`) is answered only by
    the exact crash-repair result: error `{name: "ToolNotStartedError", code: "TOOL_NOT_STARTED"}`,
    no `sourceEventSeqs`, message id `interrupted-tool-result-<callId>-<seq>`, one `isError: true`
    tool-result block holding exactly the repair's text."""
    b = LogBuilder()
    in_step(b)
    b.assistant([Call("c1", "read", "{}")])
    b.repair_result("c1", **change)
    assert code_of(b) is Code.TOOL_RESULT_NOT_EXACT_REPAIR


def test_inv_rel_4_the_exact_repair_answers_a_call_that_never_started() -> None:
    b = LogBuilder()
    in_step(b)
    b.assistant([Call("c1", "read", "{}"), Call("c2", "read", "{}")])
    b.repair_result("c1")
    b.tool_call(Call("c2", "read", "{}"))
    b.repair_result("c2")
    b.step_end()
    assert code_of(b) is None


@pytest.mark.parametrize("start", [False, True])
def test_inv_rel_5_a_step_does_not_end_with_an_advertised_call_unresolved(start: bool) -> None:
    b = LogBuilder()
    in_step(b)
    call = Call("c1", "read", "{}")
    b.assistant([call])
    if start:
        b.tool_call(call)
    b.step_end()
    assert code_of(b) is Code.TOOL_CALL_UNRESOLVED


def test_inv_rel_5_nor_does_a_turn() -> None:
    """The trace refuses such a ``turn/end`` first (its step is open); the rule itself holds too."""
    state = RelationState(open_turn=("number", 1), tools=(ToolLifecycle(string("c1"), string("read"), string("{}")),))
    end = Event("turn/end", 9, 0, freeze({"turn": 1, "reason": {"kind": "completed"}}))
    result = relationship_transition(state, end, log=(), surface=())
    assert isinstance(result, Violation) and result.code is Code.TOOL_CALL_UNRESOLVED


# -- compactions ------------------------------------------------------------------------------------


def test_inv_rel_6_compactions_do_not_overlap() -> None:
    b = LogBuilder()
    FAULTS["compaction_overlap"](b, random.Random(0))
    assert code_of(b) is Code.COMPACTION_OVERLAP


@pytest.mark.parametrize("fault", ["compaction_null_in_turn", "compaction_turn_between_turns", "compaction_end_turn"])
def test_inv_rel_7_a_compaction_acts_in_its_owner_turn(fault: str) -> None:
    """INV-REL-7: A compaction starts, summarises and ends inside its owner turn (`turn: null`:
    between turns), and its `compaction/end` names the same owner turn as its start."""
    b = LogBuilder()
    FAULTS[fault](b, random.Random(0))
    assert code_of(b) is Code.COMPACTION_TURN_MISMATCH


def test_inv_rel_7_a_standalone_compaction_runs_between_turns() -> None:
    b = LogBuilder()
    closed_turn_with_human(b)
    b.compaction(random.Random(1), None)
    b.turn_start()
    assert code_of(b) is None


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("fault", ["summary_unowned", "summary_command", "end_unowned", "checkpoint_unowned"])
def test_inv_rel_8_summary_end_and_checkpoint_name_the_open_compaction(fault: str, seed: int) -> None:
    """INV-REL-8: `compaction/summary`, `compaction/end` and a compaction checkpoint (a replacing
    `user/message` whose source is plugin `compact`) name the open compaction by `compactionId` and
    the same `sourceCommandId` (both absent or equal)."""
    b = LogBuilder()
    FAULTS[fault](b, random.Random(seed))
    assert code_of(b) is Code.COMPACTION_NOT_OWNED


def test_inv_rel_9_a_compaction_has_at_most_one_summary() -> None:
    """INV-REL-9: A compaction has at most one `compaction/summary`."""
    b = LogBuilder()
    FAULTS["summary_twice"](b, random.Random(0))
    assert code_of(b) is Code.COMPACTION_SUMMARY_REPEATED


def test_inv_rel_10_a_successful_compaction_end_needs_its_summary() -> None:
    b = LogBuilder()
    FAULTS["end_unsummarised"](b, random.Random(0))
    assert code_of(b) is Code.COMPACTION_SUMMARY_MISSING


def test_inv_rel_10_a_failed_compaction_ends_without_one() -> None:
    b = LogBuilder()
    in_step(b)
    b.compaction_start("c", b.open_turn, "cmd")
    b.compaction_end("c", b.open_turn, "cmd", error="provider unavailable")
    assert code_of(b) is None


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("fault", ["crossing_turn_end", "crossing_turn_start"])
def test_inv_rel_11_a_turn_boundary_does_not_cross_an_open_compaction(fault: str, seed: int) -> None:
    b = LogBuilder()
    FAULTS[fault](b, random.Random(seed))
    assert code_of(b) is Code.COMPACTION_CROSSES_TURN


def test_inv_rel_11_a_crossing_is_judged_when_the_log_shows_it_was_no_orphan() -> None:
    """Accepted while an end-seed may still retire the compaction; refused at its next start."""
    b = LogBuilder()
    in_step(b)
    b.compaction_start("c", b.open_turn)
    b.step_end()
    b.turn_end()
    state = relations_for(None)
    for raw in b.artifact().events:
        event = Event(raw["type"], raw["seq"], raw["time"], freeze(raw["data"]))
        result = relationship_transition(state, event, log=(), surface=())
        assert isinstance(result, RelationState), result
        state = result
    finished = relationship_finish(state)
    assert finished is not None and finished.code is Code.COMPACTION_CROSSES_TURN
    b.compaction_start("d", None)
    assert code_of(b) is Code.COMPACTION_CROSSES_TURN


@pytest.mark.parametrize("fork", [False, True])
def test_inv_rel_11_an_end_seed_retires_a_crash_orphan(fork: bool) -> None:
    """The repair closers end the crashed turn inside the compaction; the resume's end-seed retires it."""
    b = LogBuilder(PARENT_ID if fork else SESSION_ID)
    in_step(b)
    call = Call("c1", "run", "{}")
    b.assistant([call])
    b.compaction_start("orphan", b.open_turn)
    b.close_crash()
    seed_length = b.seq - 1
    assert [e["type"] for e in b.events[-4:]] == ["tool/result", "step/end", "turn/end", "session/end-seed"]
    b.turn_start()
    b.user("Continue.")
    b.turn_end()
    header = header_line(SESSION_ID, PARENT_ID, seed_length) if fork else None
    assert code_of(b, header) is None


def test_inv_rel_12_summaries_and_prunes_name_an_exact_current_span() -> None:
    for fault in ("summary_span_gap", "summary_span_stale", "prune_span"):
        b = LogBuilder()
        FAULTS[fault](b, random.Random(0))
        assert code_of(b) is Code.COMPACTION_SPAN_NOT_ON_SURFACE, fault


def test_inv_rel_12_a_span_follows_surface_order_not_seq_order() -> None:
    """After a checkpoint, the surface runs 4, 3: that span is exact although its seqs descend."""
    b = LogBuilder()
    b.turn_start()
    one, two, _ = b.user("zero"), b.user("one"), b.user("two")
    b.user("prior checkpoint", op={"op": "replace", "start": one, "end": two}, sources=[one, two])
    assert b.surface == [4, 3]
    b.compaction_start("c", 1)
    span = b.span((0, 1))
    summary = b.summary("c", span)
    b.checkpoint("c", span, [5, summary])
    b.compaction_end("c", 1)
    b.turn_end()
    assert code_of(b) is None


# -- retries ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("fault", ["retry_step", "retry_outside_turn", "retry_after_step"])
def test_inv_rel_13_a_retry_names_the_current_turn_and_step(fault: str) -> None:
    """INV-REL-13: An `llm/retry` names the open turn and its open step or, when no step is open,
    the step that ended last in that turn."""
    b = LogBuilder()
    FAULTS[fault](b, random.Random(0))
    assert code_of(b) is Code.RETRY_OUTSIDE_STEP


def test_inv_rel_13_a_retry_may_follow_the_end_of_its_step() -> None:
    b = LogBuilder()
    in_step(b)
    b.step_end()
    b.retry("r", 1, step=1)
    b.retry_started("r", 1, 1, 1)
    b.turn_end()
    assert code_of(b) is None


def test_inv_rel_14_a_retry_uses_the_provider_of_the_latest_request_header() -> None:
    """INV-REL-14: An `llm/retry` names the provider of the latest `request/header` (in any earlier
    step or turn)."""
    b = LogBuilder()
    FAULTS["retry_provider"](b, random.Random(0))
    assert code_of(b) is Code.RETRY_PROVIDER_MISMATCH
    before_any_header = LogBuilder()
    before_any_header.turn_start()
    before_any_header.step_start()
    before_any_header.retry("r", 1, provider=PROVIDERS[0])
    assert code_of(before_any_header) is Code.RETRY_PROVIDER_MISMATCH


def test_inv_rel_14_the_provider_stays_in_force_across_steps_and_turns() -> None:
    b = LogBuilder()
    in_step(b)
    b.header(PROVIDERS[1], "change")
    b.step_end()
    b.turn_end()
    b.turn_start()
    b.step_start()
    b.retry("r", 1, provider=PROVIDERS[1])
    assert code_of(b) is None


@pytest.mark.parametrize("seed", range(4))
def test_inv_rel_15_a_retry_is_the_next_attempt_of_its_policy_chain(seed: int) -> None:
    """INV-REL-15: An `llm/retry` is attempt 1 of a new policy chain (same turn, step, provider and
    `policyKey`) or the previous attempt of its chain plus one."""
    b = LogBuilder()
    FAULTS["retry_number"](b, random.Random(seed))
    assert code_of(b) is Code.RETRY_NUMBER_INVALID


@pytest.mark.parametrize("seed", range(4))
def test_inv_rel_16_one_retry_id_per_policy_chain(seed: int) -> None:
    """INV-REL-16: All attempts of a policy chain share one `retryId`, and no other chain uses it."""
    b = LogBuilder()
    FAULTS["retry_id"](b, random.Random(seed))
    assert code_of(b) is Code.RETRY_ID_INVALID


def test_inv_rel_16_chains_of_other_policies_run_side_by_side() -> None:
    b = LogBuilder()
    in_step(b)
    b.retry("r", 1)
    b.retry("s", 1, policy="rate-limit")
    b.retry("r", 2)
    b.retry("s", 2, policy="rate-limit")
    assert code_of(b) is None


@pytest.mark.parametrize(
    ("fault", "code"), [("retry_started_unpaired", Code.RETRY_START_UNPAIRED), ("retry_started_step", Code.RETRY_START_MISMATCH)]
)
def test_inv_rel_17_a_started_attempt_was_scheduled_for_its_turn_and_step(fault: str, code: Code) -> None:
    """INV-REL-17: An `llm/retry-started` starts an attempt (`retryId`, `retry`) that an earlier
    `llm/retry` scheduled, naming the same turn and step."""
    b = LogBuilder()
    FAULTS[fault](b, random.Random(1))
    assert code_of(b) is code


def test_inv_rel_18_an_attempt_starts_once() -> None:
    """INV-REL-18: A scheduled attempt starts at most once."""
    b = LogBuilder()
    FAULTS["retry_started_twice"](b, random.Random(0))
    assert code_of(b) is Code.RETRY_START_REPEATED


# -- programmatic tool calls ------------------------------------------------------------------------


def test_inv_rel_19_dispatches_run_inside_a_turn() -> None:
    """INV-REL-19: `tool/code-dispatch-start` and `tool/code-dispatch` occur inside an open turn."""
    b = LogBuilder()
    FAULTS["ptc_outside_turn"](b, random.Random(0))
    assert code_of(b) is Code.PTC_OUTSIDE_TURN


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("fault", ["ptc_parent", "ptc_root"])
def test_inv_rel_20_a_dispatch_hangs_under_its_one_root(fault: str, seed: int) -> None:
    """INV-REL-20: A PTC `subCallId` keeps the `rootCallId` it was first seen with, and its
    `parentCallId` is the root or a sub-call already seen under that root."""
    b = LogBuilder()
    FAULTS[fault](b, random.Random(seed))
    assert code_of(b) is Code.PTC_ANCESTRY_INVALID


def test_inv_rel_21_a_sub_call_starts_once() -> None:
    """INV-REL-21: A PTC `subCallId` is started once."""
    b = LogBuilder()
    FAULTS["ptc_start_twice"](b, random.Random(0))
    assert code_of(b) is Code.PTC_START_REPEATED


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(
    ("fault", "code"), [("ptc_settle_unpaired", Code.PTC_SETTLE_UNPAIRED), ("ptc_settle_mismatch", Code.PTC_SETTLE_MISMATCH)]
)
def test_inv_rel_22_a_dispatch_settles_once_as_started(fault: str, code: Code, seed: int) -> None:
    b = LogBuilder()
    FAULTS[fault](b, random.Random(seed))
    assert code_of(b) is code


def test_inv_rel_22_arguments_compare_as_json() -> None:
    """INV-REL-22: Key order and ``1`` / ``1.0`` do not matter; a nested call settles under its parent."""
    b = LogBuilder()
    in_step(b)
    b.ptc(False, "root", "root", "child", arguments={"a": 1, "b": [True, None]})
    b.ptc(False, "root", "child", "grandchild")
    b.ptc(True, "root", "child", "grandchild")
    b.ptc(True, "root", "root", "child", arguments={"b": [True, None], "a": 1.0})
    assert code_of(b) is None


# -- commands ---------------------------------------------------------------------------------------


def test_inv_rel_23_a_command_id_names_one_run() -> None:
    """INV-REL-23: A `command/run` uses a `commandId` no earlier run used."""
    b = LogBuilder()
    FAULTS["command_run_twice"](b, random.Random(0))
    assert code_of(b) is Code.COMMAND_RUN_REPEATED


def test_inv_rel_24_a_command_finishes_after_its_run() -> None:
    """INV-REL-24: A `command/done` follows the `command/run` of its `commandId`."""
    b = LogBuilder()
    FAULTS["command_done_unpaired"](b, random.Random(0))
    assert code_of(b) is Code.COMMAND_DONE_UNPAIRED


@pytest.mark.parametrize("seed", range(4))
def test_inv_rel_25_only_a_success_cites_its_event_and_never_a_command_event(seed: int) -> None:
    """INV-REL-25: A `command/done` carries `sourceEventSeq` only when its `kind` is `success`, and
    never citing a `command/run` or `command/done`."""
    b = LogBuilder()
    FAULTS["command_done_source"](b, random.Random(seed))
    assert code_of(b) is Code.COMMAND_DONE_SOURCE_INVALID


def test_inv_rel_25_a_success_cites_what_it_produced() -> None:
    b = LogBuilder()
    b.command_run("cmd")
    b.compaction(random.Random(0), None, "cmd")
    b.command_done("cmd", "success", b.seq - 1)
    assert code_of(b) is None


# -- titles -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_inv_rel_26_a_user_title_cites_nothing_and_any_other_cites_messages(seed: int) -> None:
    """INV-REL-26: A `session/title` has empty `messageSeqs` exactly when its source kind is `user`."""
    b = LogBuilder()
    FAULTS["title_cardinality"](b, random.Random(seed))
    assert code_of(b) is Code.TITLE_SEQS_CARDINALITY


@pytest.mark.parametrize("seed", range(6))
def test_inv_rel_27_titles_cite_human_user_messages(seed: int) -> None:
    """INV-REL-27: Every seq in the `messageSeqs` of a `session/title` or `session/title-llm-request`
    is a `user/message` whose source kind is `user`."""
    b = LogBuilder()
    FAULTS["title_not_human"](b, random.Random(seed))
    assert code_of(b) is Code.TITLE_SOURCE_NOT_HUMAN


@pytest.mark.parametrize("seed", range(6))
def test_inv_rel_28_a_title_request_sends_the_one_framed_message(seed: int) -> None:
    b = LogBuilder()
    FAULTS["title_framing"](b, random.Random(seed))
    assert code_of(b) is Code.TITLE_REQUEST_FRAMING


def test_inv_rel_28_the_frame_is_the_cited_text_as_json() -> None:
    b = LogBuilder()
    b.turn_start()
    first = b.user('quote " backslash \\ tab \t newline \n nul-ish \u0001 line-sep \u2028 😀')
    source = {"kind": "user"}
    second = b.add(
        "user/message",
        {
            "id": "mixed",
            "role": "user",
            "content": [{"type": "reasoning", "text": "hidden"}, text("a"), text("b")],
            "source": source,
        },
        surfaceOp="append",
    )
    b.title_request([second, first])
    b.turn_end()
    assert code_of(b) is None
    frame = b.events[-2]["data"]["messages"][0]["content"][0]["text"]
    cited = '[{"seq":2,"text":"a\\nb"},{"seq":1,"text":"quote \\" backslash \\\\ tab \\t newline \\n '
    assert frame.endswith(cited + 'nul-ish \\u0001 line-sep \u2028 😀"}]')


def test_inv_rel_28_strings_are_framed_as_json_stringify_writes_them() -> None:
    assert js_string("\ud800x") == '"\\ud800x"'
    assert js_string("\ud83d\ude00") == '"😀"'
    assert js_string("\x7f\u2029") == '"\x7f\u2029"'
    assert title_frame([]) == "Generate the session title from this JSON array of human messages:\n[]"


# -- delivery markers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(2))
def test_inv_rel_29_a_marker_of_this_generation_names_this_session(seed: int) -> None:
    b = LogBuilder()
    FAULTS["delivery_session"](b, random.Random(seed))
    assert code_of(b) is Code.DELIVERY_MARKER_WRONG_SESSION


def test_inv_rel_29_inherited_and_earlier_generation_markers_are_kept_as_they_are() -> None:
    b = LogBuilder(PARENT_ID)
    closed_turn_with_human(b)
    b.delivery(PARENT_ID)
    b.delivery("an-ancestor", version=None)
    b.add("session/end-seed", {})
    b.session_id = SESSION_ID
    b.delivery(SESSION_ID)
    child = header_line(SESSION_ID, PARENT_ID, seed_length=b.seq - 2)
    assert code_of(b, child) is None
    assert code_of(b, header_line(SESSION_ID)) is Code.DELIVERY_MARKER_WRONG_SESSION


def test_inv_rel_29_a_seed_length_written_as_an_integral_float_counts_as_the_integer() -> None:
    # The header line's check reads 3.0 as the count 3; the marker rule must read it the same way.
    b = LogBuilder(PARENT_ID)
    closed_turn_with_human(b)
    b.delivery(PARENT_ID)
    b.add("session/end-seed", {})
    b.session_id = SESSION_ID
    seed_length = b.seq - 1
    events = list(b.artifact(None).events)
    for written in (seed_length, float(seed_length)):
        header = header_line(SESSION_ID, PARENT_ID, seed_length=written)
        read = read_log("".join(json.dumps(line) + "\n" for line in [header, *events]))
        assert not isinstance(read, Violation), (written, read)


def test_inv_rel_29_the_v0_source_checks_markers_without_a_version() -> None:
    marker = Event("session-log-deepseek/delivery-accepted", 3, 0, freeze({"sessionId": "other", "throughSeq": 0}))
    v0 = relations_for(SessionIdentity("mine", format_version=0))
    result = relationship_transition(v0, marker, log=(), surface=())
    assert isinstance(result, Violation) and result.code is Code.DELIVERY_MARKER_WRONG_SESSION
    assert isinstance(relationship_transition(relations_for(SessionIdentity("mine")), marker, log=(), surface=()), RelationState)
    assert isinstance(relationship_transition(relations_for(None), marker, log=(), surface=()), RelationState)


# -- robustness -------------------------------------------------------------------------------------

GARBAGE: list[Any] = [
    None,
    1,
    "x",
    [],
    {},
    {"message": 5, "content": "no"},
    {"turn": "1", "step": [1], "callId": {"a": 1}},
    {
        "message": {"content": [None, 3, {"type": "tool-call"}], "source": []},
        "shadowedRange": 7,
        "shadowedSeqs": {"0": 1},
        "messageSeqs": [1.5, -1, True, 99],
        "messages": "m",
        "arguments": [1],
        "sourceEventSeq": "0",
        "header": {"config": 3},
        "retry": "1",
        "source": {"kind": "plugin", "plugin": "compact"},
    },
]


def busy_state() -> RelationState:
    """A state with something open in every family."""
    return RelationState(
        identity=SessionIdentity("s", 1, True, 3),
        open_turn=("number", 1),
        open_step=("number", 1),
        tools=(ToolLifecycle(("absent",), ("absent",), ("absent",)),),
        compaction=OpenCompaction(("absent",), ("absent",), ("number", 1), 0),
        ptc_roots=MappingProxyType({("absent",): ("absent",)}),
    )


@pytest.mark.parametrize("data", GARBAGE, ids=range(len(GARBAGE)))
def test_inv_rel_malformed_payloads_never_raise(data: Any) -> None:
    """Payload rules run first; if one is missed, the relationship rules still answer."""
    log = [Event("turn/start", 0, 0, freeze({"turn": 1})), Event("step/start", 1, 0, freeze({"turn": 1, "step": 1}))]
    for type_ in sorted(_HANDLERS):
        for op in (APPEND, Replace(0, 0), None):
            event = Event(type_, 2, 0, freeze(data), surface_op=op)
            for state in (RelationState(), busy_state()):
                result = relationship_transition(state, event, log=log, surface=(0, 1))
                assert isinstance(result, RelationState | Violation)
                finished = relationship_finish(result) if isinstance(result, RelationState) else None
                assert finished is None or finished.code is Code.COMPACTION_CROSSES_TURN


# -- the released rules -----------------------------------------------------------------------------

needs_oracle = pytest.mark.skipif(
    NODE is None or not PACKAGE.is_dir(),
    reason="needs node and ports/dsh-format/node_modules (run `cd ports/dsh-format && npm ci`)",
)

UPSTREAM_CODES: list[tuple[str, Code]] = [
    (r"crosses an open compaction$", Code.COMPACTION_CROSSES_TURN),
    (r"^turn/end .* crosses an open step$", Code.STEP_STILL_OPEN),
    (r"leaves unresolved tool call", Code.TOOL_CALL_UNRESOLVED),
    (r"^assistant/message repeats advertised tool call", Code.TOOL_CALL_ID_REPEATED),
    (r"^tool/call .* does not match one advertised tool call$", Code.TOOL_CALL_NOT_ADVERTISED),
    (r"^tool/result .* has no advertised tool lifecycle$", Code.TOOL_RESULT_UNADVERTISED),
    (r"^tool/result .* is not the exact TOOL_NOT_STARTED repair$", Code.TOOL_RESULT_NOT_EXACT_REPAIR),
    (r"^compaction/start overlaps", Code.COMPACTION_OVERLAP),
    (r"^compaction/\w+ does not match the open turn$|^compaction/end changes its owner turn$", Code.COMPACTION_TURN_MISMATCH),
    (r"has no matching compaction/start$", Code.COMPACTION_NOT_OWNED),
    (r"^compaction/summary repeats$", Code.COMPACTION_SUMMARY_REPEATED),
    (r"^successful compaction/end requires one summary$", Code.COMPACTION_SUMMARY_MISSING),
    (r"shadowedSeqs do not name an exact current surface span$", Code.COMPACTION_SPAN_NOT_ON_SURFACE),
    (r"^llm/retry does not match the current turn and step$", Code.RETRY_OUTSIDE_STEP),
    (r"^llm/retry provider does not match", Code.RETRY_PROVIDER_MISMATCH),
    (r"^llm/retry must use retry \d+$", Code.RETRY_NUMBER_INVALID),
    (r"^llm/retry (must preserve|reuses) retryId", Code.RETRY_ID_INVALID),
    (r"^llm/retry-started pairs no prior", Code.RETRY_START_UNPAIRED),
    (r"^llm/retry-started does not match its scheduled", Code.RETRY_START_MISMATCH),
    (r"^llm/retry-started repeats", Code.RETRY_START_REPEATED),
    (r"^tool/code-dispatch(-start)? is outside an open turn$", Code.PTC_OUTSIDE_TURN),
    (r"changes its rootCallId$|parentCallId does not belong to rootCallId$", Code.PTC_ANCESTRY_INVALID),
    (r"^tool/code-dispatch-start repeats subCallId$", Code.PTC_START_REPEATED),
    (r"^tool/code-dispatch has no unique start$", Code.PTC_SETTLE_UNPAIRED),
    (r"^tool/code-dispatch does not match its start$", Code.PTC_SETTLE_MISMATCH),
    (r"^command/run repeats commandId", Code.COMMAND_RUN_REPEATED),
    (r"^command/done .* has no prior command/run$", Code.COMMAND_DONE_UNPAIRED),
    (r"^command/done .* has invalid sourceEventSeq$", Code.COMMAND_DONE_SOURCE_INVALID),
    (r"messageSeqs must be empty exactly for a user title$", Code.TITLE_SEQS_CARDINALITY),
    (r"messageSeqs must cite earlier human user/message events$", Code.TITLE_SOURCE_NOT_HUMAN),
    (r"^session/title-llm-request messages do not represent messageSeqs$", Code.TITLE_REQUEST_FRAMING),
    (r"delivery marker names the wrong Session$", Code.DELIVERY_MARKER_WRONG_SESSION),
]
"""The model's code for each message of the released relationship rules."""

KNOWN_CODE_DIFFERENCES: dict[str, tuple[Code, Code]] = {
    "turn_end_unresolved": (Code.STEP_STILL_OPEN, Code.TOOL_CALL_UNRESOLVED),
    "result_never_started": (Code.TOOL_RESULT_UNPAIRED, Code.TOOL_RESULT_NOT_EXACT_REPAIR),
    "result_twice": (Code.TOOL_RESULT_UNPAIRED, Code.TOOL_RESULT_UNADVERTISED),
}
"""Faults both refuse, where the trace's older rule answers before the relationship rule upstream
reports: ``(model's code, upstream's rule)``."""


def upstream_code(message: str) -> Code | None:
    """The model's code for an upstream relationship message."""
    return next((code for pattern, code in UPSTREAM_CODES if re.search(pattern, message)), None)


def ask_oracle(artifacts: list[Artifact]) -> list[dict[str, Any]]:
    """The oracle's replies, one Node process for the whole batch."""
    assert NODE is not None
    lines = "".join(json.dumps(a.request(), ensure_ascii=False) + "\n" for a in artifacts)
    run = subprocess.run([NODE, str(ORACLE)], input=lines, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr[-4000:]
    replies = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(replies) == len(artifacts)
    return replies


def disagreements(artifacts: list[Artifact], replies: list[dict[str, Any]]) -> list[str]:
    """Every artifact on which the model and the released rules part: verdict, or the stage upstream
    refused at (an artifact that fails upstream's payload rules tests the builder, not a relationship)."""
    found = []
    for artifact, reply in zip(artifacts, replies, strict=True):
        if reply.get("stage", "relationships") != "relationships":
            found.append(f"{artifact.name}: upstream refuses its {reply['stage']}: {reply['error']}")
            continue
        verdict = model_verdict(artifact)
        if (verdict is None) != reply["ok"]:
            found.append(f"{artifact.name}: model {verdict}, upstream {reply}")
    return found


@needs_oracle
def test_differential_agent_loops_and_their_prefixes_agree_with_the_released_rules() -> None:
    """Valid loops (forks, crashes inside compactions, resumes) are accepted by both; every prefix
    gets the same verdict (a prefix may end inside a crossed compaction)."""
    artifacts: list[Artifact] = []
    for seed in range(250):
        rng = random.Random(seed)
        artifact = valid_artifact(rng)
        artifacts.append(artifact)
        for _ in range(2):
            cut = rng.randint(1, len(artifact.events))
            artifacts.append(Artifact(artifact.header, artifact.events[:cut], f"{artifact.name}[:{cut}] seed {seed}"))
    replies = ask_oracle(artifacts)
    assert disagreements(artifacts, replies) == []
    assert all(reply["ok"] for artifact, reply in zip(artifacts, replies, strict=True) if "[:" not in artifact.name)


@needs_oracle
def test_differential_one_fault_mutations_agree_with_the_released_rules() -> None:
    """Every fault is refused by both, and by the rule the model names, except the known cases
    where the trace answers first."""
    artifacts = [faulty_artifact(random.Random(1000 * i + k), name) for i, name in enumerate(sorted(FAULTS)) for k in range(6)]
    replies = ask_oracle(artifacts)
    assert disagreements(artifacts, replies) == []
    wrong = []
    for artifact, reply in zip(artifacts, replies, strict=True):
        verdict = model_verdict(artifact)
        assert verdict is not None and verdict.code is artifact.expect, (artifact.name, verdict)
        expected = KNOWN_CODE_DIFFERENCES.get(artifact.name, (verdict.code, verdict.code))
        if (verdict.code, upstream_code(reply["error"])) != expected:
            wrong.append((artifact.name, verdict.code, reply["error"]))
    assert wrong == []


@needs_oracle
def test_differential_upstream_own_relationship_fixtures() -> None:
    """The accepting fixtures of upstream's relationship tests, through the model."""
    header = header_line("relationships")
    user = {"kind": "user"}

    def message(id_: str, source: dict[str, Any] = user) -> dict[str, Any]:
        return {"id": id_, "role": "user", "content": [text(id_)], "source": source}

    retry: dict[str, Any] = {
        "retryId": "retry",
        "turn": 1,
        "step": 1,
        "provider": "mock",
        "mode": "normal",
        "policyKey": "default",
        "retry": 1,
        "maxRetries": 2,
        "delayMs": 1,
        "failure": {"message": "retry", "code": "SERVER"},
    }
    request: dict[str, Any] = {"header": {"config": {"provider": "mock", "model": "mock"}}, "reason": "initial"}
    dispatch: dict[str, Any] = {"rootCallId": "root", "parentCallId": "root", "subCallId": "sub", "name": "read", "arguments": {}}
    Row = tuple[str, dict[str, Any], dict[str, Any]]
    complete: list[Row] = [
        ("turn/start", {"turn": 1}, {}),
        ("user/message", message("one"), {"surfaceOp": "append"}),
        ("step/start", {"turn": 1, "step": 1}, {}),
        ("request/header", request, {}),
        ("llm/retry", retry, {}),
        ("llm/retry-started", {"retryId": "retry", "turn": 1, "step": 1, "retry": 1}, {}),
        ("tool/code-dispatch-start", dispatch, {}),
        ("tool/code-dispatch", dispatch | {"isError": False, "content": []}, {}),
        ("step/end", {"turn": 1, "step": 1}, {}),
        ("session/title", {"title": "Title", "messageSeqs": [1], "source": {"kind": "fallback"}}, {}),
        ("compaction/start", {"compactionId": "c", "turn": 1}, {}),
        ("compaction/end", {"compactionId": "c", "turn": 1, "error": "skipped"}, {}),
        ("user/message", message("replacement"), {"sourceEventSeqs": [1], "surfaceOp": {"op": "replace", "start": 1, "end": 1}}),
        ("turn/end", {"turn": 1, "reason": {"kind": "completed"}}, {}),
    ]
    orphan: list[Row] = [
        ("compaction/start", {"compactionId": "c", "turn": None}, {}),
        ("session/end-seed", {}, {}),
        ("turn/start", {"turn": 1}, {}),
    ]
    artifacts = [
        Artifact(header, [{"type": t, "seq": i, "time": i + 1, "data": d, **env} for i, (t, d, env) in enumerate(rows)], name)
        for name, rows in (("complete", complete), ("orphan", orphan))
    ]
    replies = ask_oracle(artifacts)
    assert [r["ok"] for r in replies] == [True, True]
    assert [model_verdict(a) for a in artifacts] == [None, None]
