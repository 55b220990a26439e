"""INV-SURF: which events carry surface metadata, the replace range, provenance, rewrites and the fold."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from model_cases import (
    assistant_data,
    call_data,
    code_of,
    compaction_start_data,
    ev,
    opened,
    refusal,
    replace,
    replacing,
    result_data,
    session,
    summary_data,
    title_data,
    user,
)

from sessionlog_spec.contracts.jsonl import load_session
from sessionlog_spec.contracts.legacy import upgrade_v0
from sessionlog_spec.contracts.log import append_event, decode_event
from sessionlog_spec.contracts.surface import (
    decode_surface_op,
    fold_surface,
    provenance_problem,
    replacement_range,
    surface_transition,
)
from sessionlog_spec.model.event import APPEND, SURFACE_TYPES, Event, Replace
from sessionlog_spec.model.json_value import JsonObject, freeze
from sessionlog_spec.model.jsonl import encode_line
from sessionlog_spec.model.legacy import StoredLog
from sessionlog_spec.model.load import LoadedSession, ReadLog, read_log
from sessionlog_spec.model.session import EMPTY_SESSION, SessionState
from sessionlog_spec.model.surface import FoldedSurface, Replacement, Surface
from sessionlog_spec.model.violation import Code


def users(n: int) -> SessionState:
    """A session of ``n`` appended user messages: surface ``(0, …, n-1)``."""
    return session([user(i) for i in range(n)])


def decoded(raws: list[dict[str, Any]]) -> tuple[Event, ...]:
    """Raw events decoded (each must decode)."""
    events = tuple(decode_event(r) for r in raws)
    assert all(isinstance(e, Event) for e in events)
    return events  # type: ignore[return-value]


def tool_step() -> list[dict[str, Any]]:
    """Turn 1, step 1 open: an assistant message asking ``c1`` (seq 2), its call (3) and result (4)."""
    return [
        *opened(),
        ev("assistant/message", 2, assistant_data(1, 1, ["c1"]), surfaceOp="append"),
        ev("tool/call", 3, call_data(1, 1, "c1")),
        ev("tool/result", 4, result_data(1, 1, "c1", text="a long output"), surfaceOp="append"),
    ]


def compacting() -> SessionState:
    """A user message (seq 0) and a compaction opened between turns (seq 1)."""
    return session([user(0), ev("compaction/start", 1, compaction_start_data())])


def rewrite(seq: int, start: int, end: int, data: dict[str, Any], sources: list[int]) -> dict[str, Any]:
    """A tool-result replace."""
    return ev("tool/result", seq, data, surfaceOp=replace(start, end), sourceEventSeqs=sources)


# -- INV-SURF-1: only surface types carry surface metadata ----------------------------------------------------


@pytest.mark.parametrize(
    "type_, data",
    [("turn/start", {"turn": 1}), ("compaction/summary", summary_data([0])), ("todo/write", {"todos": []})],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_inv_surf_1_surface_op_on_log_only_event_is_refused(type_: str, data: Any) -> None:
    """A log-only event may not carry ``surfaceOp`` (each is accepted without it)."""
    state = compacting()
    assert refusal(state, ev(type_, 2, data)) is None
    assert refusal(state, ev(type_, 2, data, surfaceOp="append")) is Code.SURFACE_OP_FORBIDDEN


def test_inv_surf_1_sources_on_log_only_event_are_refused() -> None:
    """A log-only event may not carry ``sourceEventSeqs``."""
    state = compacting()
    assert refusal(state, ev("compaction/summary", 2, summary_data([0]))) is None
    assert refusal(state, ev("compaction/summary", 2, summary_data([0]), sourceEventSeqs=[0])) is Code.SOURCES_FORBIDDEN


def test_inv_surf_1_surface_op_is_reported_before_sources() -> None:
    """With both members on a log-only event, the surfaceOp is reported."""
    raw = ev("session/title", 1, title_data(), surfaceOp="append", sourceEventSeqs=[0])
    assert refusal(users(1), raw) is Code.SURFACE_OP_FORBIDDEN


def test_inv_surf_1_surface_types_are_exactly_the_three_messages() -> None:
    """The eligible types are user, assistant and tool-result messages."""
    assert frozenset({"user/message", "assistant/message", "tool/result"}) == SURFACE_TYPES


# -- INV-SURF-2: surface types always carry surfaceOp ----------------------------------------------------------


def test_inv_surf_2_user_message_without_surface_op_is_refused() -> None:
    """A user message must say whether it appends or replaces."""
    assert refusal(EMPTY_SESSION, user(0, op=None)) is Code.SURFACE_OP_MISSING
    assert refusal(users(1), user(1, op=None, sourceEventSeqs=[0])) is Code.SURFACE_OP_MISSING


def test_inv_surf_2_assistant_and_tool_result_without_surface_op_are_refused() -> None:
    """The rule holds for every surface type, inside a proper step."""
    raws = tool_step()
    assistant = {k: v for k, v in raws[2].items() if k != "surfaceOp"}
    assert refusal(session(raws[:2]), assistant) is Code.SURFACE_OP_MISSING
    result = {k: v for k, v in raws[4].items() if k != "surfaceOp"}
    assert refusal(session(raws[:4]), result) is Code.SURFACE_OP_MISSING


# -- INV-SURF-3: one spelling per op ---------------------------------------------------------------------------


def test_inv_surf_3_append_and_replace_spellings_decode() -> None:
    """``"append"`` and ``{op: "replace", start, end}`` are the two spellings."""
    assert decode_surface_op("append") == APPEND
    assert decode_surface_op({"op": "replace", "start": 4, "end": 9}) == Replace(4, 9)


@pytest.mark.parametrize(
    "raw",
    [
        "Append",
        "replace",
        None,
        {"op": "append"},
        {"op": "replace", "start": 1},
        {"op": "replace", "start": 1, "end": 2, "reason": "compaction"},
        {"op": "replace", "start": -1, "end": 2},
        {"op": "replace", "start": "1", "end": 2},
        {"op": "replace", "start": True, "end": 2},
        {"op": "Replace", "start": 1, "end": 2},
        ["replace", 1, 2],
    ],
    ids=repr,
)
def test_inv_surf_3_other_spellings_are_refused(raw: object) -> None:
    """Anything else is refused, both decoded alone and on an event."""
    assert code_of(decode_surface_op(raw)) is Code.SURFACE_OP_INVALID
    assert refusal(users(3), {**user(3, sourceEventSeqs=[1]), "surfaceOp": raw}) is Code.SURFACE_OP_INVALID


# -- INV-SURF-4: a replace names a range of the current surface ------------------------------------------------


def test_inv_surf_4_replace_start_must_be_on_surface() -> None:
    """A start that is not a surface node (a log-only event, or a seq past the log) is refused."""
    state = session([user(0), ev("session/title", 1, title_data()), user(2)])
    assert refusal(state, replacing(3, 1, 2, 1, 2)) is Code.REPLACE_START_NOT_ON_SURFACE
    assert refusal(state, replacing(3, 9, 2, 2)) is Code.REPLACE_START_NOT_ON_SURFACE


def test_inv_surf_4_replace_end_must_be_on_surface() -> None:
    """An end that is not a surface node (here the replacement's own seq) is refused."""
    assert refusal(users(2), replacing(2, 0, 2, 0, 1)) is Code.REPLACE_END_NOT_ON_SURFACE


def test_inv_surf_4_replace_range_must_not_be_inverted() -> None:
    """``start`` may not come after ``end`` on the surface."""
    assert refusal(users(3), replacing(3, 2, 0, 0, 1, 2)) is Code.REPLACE_RANGE_INVERTED


def test_inv_surf_4_start_is_checked_before_end() -> None:
    """With both ends off the surface, the start is reported."""
    assert refusal(users(2), replacing(2, 7, 8, 0)) is Code.REPLACE_START_NOT_ON_SURFACE


def test_inv_surf_4_replacement_range_gives_surface_positions() -> None:
    """The range is resolved to positions on the surface, not to seqs."""
    nodes = (3, 8, 12, 20)
    assert replacement_range(nodes, 8, 20) == (1, 3)
    assert replacement_range(nodes, 12, 12) == (2, 2)
    assert code_of(replacement_range(nodes, 20, 8)) is Code.REPLACE_RANGE_INVERTED
    assert code_of(replacement_range(nodes, 9, 12)) is Code.REPLACE_START_NOT_ON_SURFACE
    assert code_of(replacement_range(nodes, 8, 13)) is Code.REPLACE_END_NOT_ON_SURFACE


def test_inv_surf_4_single_node_range_is_accepted() -> None:
    """``start == end`` replaces one node."""
    after = append_event(users(2), replacing(2, 1, 1, 1))
    assert isinstance(after, SessionState) and after.surface.nodes == (0, 2)


# -- INV-SURF-5: sources point back at distinct earlier events -------------------------------------------------


@pytest.mark.parametrize("sources", ["0-1", [[0, 1]], [-1], [0.5], [True], {"0": 1}], ids=repr)
def test_inv_surf_5_sources_must_be_an_array_of_safe_naturals(sources: object) -> None:
    """Range encodings, negative, fractional and boolean seqs are refused."""
    assert refusal(users(2), user(2, sourceEventSeqs=sources)) is Code.SOURCES_INVALID


def test_inv_surf_5_empty_sources_are_refused_except_on_assistant_messages() -> None:
    """``[]`` means a known-empty stream, which only an assistant message has."""
    assert refusal(users(1), user(1, sourceEventSeqs=[])) is Code.SOURCES_EMPTY
    raw = ev("assistant/message", 2, assistant_data(1, 1), surfaceOp="append", sourceEventSeqs=[])
    after = append_event(session(opened()), raw)
    assert isinstance(after, SessionState) and after.events[-1].source_event_seqs == ()


def test_inv_surf_5_duplicate_sources_are_refused() -> None:
    """Each source is cited once."""
    assert refusal(users(2), user(2, sourceEventSeqs=[0, 1, 0])) is Code.SOURCES_DUPLICATE


@pytest.mark.parametrize("sources", [[2], [0, 3], [1, 99]])
def test_inv_surf_5_sources_must_be_earlier(sources: list[int]) -> None:
    """A source at or after the event's own seq (2) is refused."""
    assert refusal(users(2), user(2, sourceEventSeqs=sources)) is Code.SOURCES_NOT_EARLIER


def test_inv_surf_5_source_checks_run_in_order() -> None:
    """Emptiness, then duplicates, then lateness."""
    assert code_of(provenance_problem("user/message", 2, (5, 5), ())) is Code.SOURCES_DUPLICATE
    assert code_of(provenance_problem("tool/result", 2, (), ())) is Code.SOURCES_EMPTY
    assert provenance_problem("assistant/message", 2, (), ()) is None
    assert provenance_problem("user/message", 2, (0, 1), (0,)) is None


def test_inv_surf_5_sources_may_cite_log_only_events() -> None:
    """A source is any earlier event, not only a surface node (repair cites a ``tool/call``)."""
    state = session([ev("session/title", 0, title_data()), user(1, sourceEventSeqs=[0])])
    assert state.events[1].source_event_seqs == (0,)


# -- INV-SURF-6: a replace cites every node it shadows ---------------------------------------------------------


def test_inv_surf_6_replace_missing_a_shadowed_node_is_refused() -> None:
    """Replacing ``0..2`` must cite 0, 1 and 2."""
    assert refusal(users(3), replacing(3, 0, 2, 0, 2)) is Code.SOURCES_MISSING_SHADOWED


def test_inv_surf_6_replace_without_sources_is_refused() -> None:
    """A replace with no ``sourceEventSeqs`` at all cites nothing."""
    assert refusal(users(1), user(1, op=replace(0, 0))) is Code.SOURCES_MISSING_SHADOWED


def test_inv_surf_6_replace_may_cite_more_than_it_shadows() -> None:
    """Extra earlier sources (the compaction summary event) are allowed."""
    opening = ev("compaction/start", 2, compaction_start_data())
    state = session([user(0), user(1), opening, ev("compaction/summary", 3, summary_data([0, 1]))])
    after = append_event(state, replacing(4, 0, 1, 0, 1, 3))
    assert isinstance(after, SessionState) and after.surface.nodes == (4,)


# -- INV-SURF-7: append goes to the tail --------------------------------------------------------------------


def test_inv_surf_7_append_puts_its_seq_at_the_tail() -> None:
    """An append adds exactly its own seq at the end; generation is unchanged."""
    before = session([user(0), replacing(1, 0, 0, 0), user(2)])
    after = append_event(before, user(3))
    assert isinstance(after, SessionState)
    assert (before.surface, after.surface) == (Surface((1, 2), 1), Surface((1, 2, 3), 1))


def test_inv_surf_7_log_only_event_leaves_the_surface_alone() -> None:
    """An event without surfaceOp does not touch the surface."""
    before = users(2)
    after = append_event(before, ev("session/title", 2, title_data()))
    assert isinstance(after, SessionState) and after.surface is before.surface


def test_inv_surf_7_surface_transition_appends() -> None:
    """The bare transition agrees: ``(0, 1)`` plus an append at 2 is ``(0, 1, 2)``."""
    log = decoded([user(0), user(1)])
    (event,) = decoded([user(2)])
    assert surface_transition(Surface((0, 1), 0), log, event) == Surface((0, 1, 2), 0)


# -- INV-SURF-8: replace takes the range's place ---------------------------------------------------------------


def test_inv_surf_8_replace_removes_exactly_the_range() -> None:
    """Replacing ``1..2`` of ``(0, 1, 2, 3)`` gives ``(0, 4, 3)``."""
    after = append_event(users(4), replacing(4, 1, 2, 1, 2))
    assert isinstance(after, SessionState) and after.surface == Surface((0, 4, 3), 1)


def test_inv_surf_8_replace_of_the_whole_surface_leaves_one_node() -> None:
    """Replacing head to tail leaves only the replacement."""
    after = append_event(users(3), replacing(3, 0, 2, 0, 1, 2))
    assert isinstance(after, SessionState) and after.surface.nodes == (3,)


def test_inv_surf_8_range_is_by_surface_position_not_by_seq_value() -> None:
    """After an earlier replacement, ``start..end`` spans the nodes between them on the surface."""
    # surface after seq 3: (3, 2) — seq 3 replaced 0..1 and sits before 2
    state = session([user(0), user(1), user(2), replacing(3, 0, 1, 0, 1)])
    assert state.surface.nodes == (3, 2)
    after = append_event(state, replacing(4, 3, 2, 2, 3))
    assert isinstance(after, SessionState) and after.surface.nodes == (4,)


# -- INV-SURF-9: nodes are distinct surface events -------------------------------------------------------------


def test_inv_surf_9_nodes_are_the_message_seqs_in_order() -> None:
    """In a tool step the surface holds the assistant message and the result, not the brackets or the call."""
    state = session(tool_step())
    assert state.surface.nodes == (2, 4)
    assert all(state.events[n].type in SURFACE_TYPES for n in state.surface.nodes)


def test_inv_surf_9_nodes_stay_distinct_after_replacements() -> None:
    """Replacements never duplicate a seq on the surface."""
    state = session(
        [user(0), user(1), user(2), replacing(3, 1, 1, 1), replacing(4, 3, 2, 3, 2)]
    )
    assert state.surface.nodes == (0, 4)


# -- INV-SURF-10: the replace generation --------------------------------------------------------------------


def test_inv_surf_10_generation_counts_committed_replacements() -> None:
    """0 at the start, unchanged by appends, +1 per replace; a refused replace commits nothing."""
    generations = []
    state = EMPTY_SESSION
    raws = [
        user(0), user(1), replacing(2, 0, 0, 0), user(3), replacing(4, 1, 3, 1, 2, 3),
    ]
    for raw in raws:
        state = session([raw], state)
        generations.append(state.surface.replace_generation)
    assert generations == [0, 0, 1, 1, 2]
    unsourced = user(5, op=replace(4, 4))
    assert refusal(state, unsourced) is Code.SOURCES_MISSING_SHADOWED
    assert state.surface.replace_generation == 2


def test_inv_surf_10_tool_result_rewrite_counts_as_a_replacement() -> None:
    """A rewrite is a replace too."""
    raws = tool_step()
    state = session([*raws, rewrite(5, 4, 4, result_data(1, 1, "c1", text="[elided]"), [4])])
    assert state.surface == Surface((2, 5), 1)


# -- INV-SURF-11: tool-result rewrites --------------------------------------------------------------------


def test_inv_surf_11_rewrite_of_content_only_is_accepted() -> None:
    """Replacing one tool result with the same result but shorter content puts the rewrite in its place."""
    state = session([*tool_step(), rewrite(5, 4, 4, result_data(1, 1, "c1", text="[elided]"), [4])])
    assert state.surface.nodes == (2, 5)
    assert state.pending_calls == 0


def test_inv_surf_11_rewrite_spanning_two_nodes_is_refused() -> None:
    """A rewrite replaces exactly one node."""
    raw = rewrite(5, 2, 4, result_data(1, 1, "c1", text="[elided]"), [2, 4])
    assert refusal(session(tool_step()), raw) is Code.TOOL_REWRITE_SPAN


def test_inv_surf_11_rewrite_of_a_message_is_refused() -> None:
    """A rewrite targets a tool result, not the assistant message."""
    raw = rewrite(5, 2, 2, result_data(1, 1, "c1", text="[elided]"), [2])
    assert refusal(session(tool_step()), raw) is Code.TOOL_REWRITE_TARGET


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d["message"]["content"][0].update(isError=True),
        lambda d: d["message"].update(id="r-other"),
        lambda d: d.update(error={"name": "E", "code": "E"}),
        lambda d: d.update(meta={"truncated": True}),
        lambda d: d.update(step=2),
        lambda d: (d["message"]["source"].update(callId="c9"), d["message"]["content"][0].update(toolCallId="c9")),
    ],
    ids=["flip-is-error", "new-message-id", "add-error", "add-meta", "other-step", "other-call"],
)
def test_inv_surf_11_rewrite_changing_more_than_content_is_refused(change: Any) -> None:
    """Only the content of the tool-result block may change."""
    data = result_data(1, 1, "c1", text="[elided]")
    change(data)
    assert refusal(session(tool_step()), rewrite(5, 4, 4, data, [4])) is Code.TOOL_REWRITE_CHANGES


def test_inv_surf_11_rewrite_checks_provenance_first() -> None:
    """A rewrite that does not cite its target is refused for provenance."""
    raw = rewrite(5, 4, 4, result_data(1, 1, "c1", text="[elided]"), [3])
    assert refusal(session(tool_step()), raw) is Code.SOURCES_MISSING_SHADOWED


BAD_REWRITES = {
    "spans-two": (rewrite(5, 2, 4, result_data(1, 1, "c1", text="[elided]"), [2, 4]), Code.TOOL_REWRITE_SPAN),
    "targets-a-message": (rewrite(5, 2, 2, result_data(1, 1, "c1", text="[elided]"), [2]), Code.TOOL_REWRITE_TARGET),
    "flips-is-error": (
        rewrite(5, 4, 4, result_data(1, 1, "c1", text="[elided]", is_error=True), [4]),
        Code.TOOL_REWRITE_CHANGES,
    ),
}
"""The three ways a rewrite breaks INV-SURF-11, each as the event after :func:`tool_step`, with its code."""


def stored_text(events: list[dict[str, Any]], version: int = 1) -> str:
    """``events`` as a stored log of format ``version``: the header line and one line per event."""
    header = {"type": "session", "version": version, "id": "s-1", "createdAt": 0, "delegationDepth": 0}
    return "".join(encode_line(value) + "\n" for value in [header, *events])


def frozen_object(value: dict[str, Any]) -> JsonObject:
    """``value`` frozen, as the edge's input holds a JSON object."""
    result = freeze(value)
    assert isinstance(result, Mapping)
    return result


def stored_log(events: list[dict[str, Any]], version: int) -> StoredLog:
    """``events`` as the edge's input: a frozen header of format ``version`` and frozen events."""
    header = {"type": "session", "version": version, "id": "s-1", "createdAt": 0, "delegationDepth": 0}
    return StoredLog(frozen_object(header), tuple(frozen_object(e) for e in events))


def test_inv_surf_11_a_stored_log_with_a_content_only_rewrite_reads_loads_and_converts() -> None:
    """The rule's valid case on every stored-log path: the rewrite takes its target's place."""
    events = [*tool_step(), rewrite(5, 4, 4, result_data(1, 1, "c1", text="[elided]"), [4])]
    for version in (1, 0):
        read = read_log(stored_text(events, version))
        assert isinstance(read, ReadLog), read
        assert read.state.surface.nodes == (2, 5)
        loaded = load_session(stored_text(events, version))
        assert isinstance(loaded, LoadedSession), loaded
        assert loaded.state.surface.nodes[:2] == (2, 5)
        assert isinstance(upgrade_v0(stored_log(events, version)), StoredLog)


@pytest.mark.parametrize("bad", sorted(BAD_REWRITES))
@pytest.mark.parametrize("version", [1, 0], ids=["v1", "v0"])
def test_inv_surf_11_a_stored_log_with_a_bad_rewrite_is_refused_on_read_and_load(bad: str, version: int) -> None:
    """A stored log is held to the rule as the released Session's restore holds it: ``read`` and ``load`` refuse."""
    raw, code = BAD_REWRITES[bad]
    text = stored_text([*tool_step(), raw], version)
    assert code_of(read_log(text)) is code
    assert code_of(load_session(text)) is code


@pytest.mark.parametrize("bad", sorted(BAD_REWRITES))
@pytest.mark.parametrize("version", [0, 1], ids=["v0", "v1"])
def test_inv_surf_11_a_log_with_a_bad_rewrite_is_refused_at_the_edge(bad: str, version: int) -> None:
    """``upgrade_v0`` refuses the rewrite in a v0 log it converts and in a v1 log it is handed."""
    raw, code = BAD_REWRITES[bad]
    assert code_of(upgrade_v0(stored_log([*tool_step(), raw], version))) is code


# -- INV-SURF-12: the fold -----------------------------------------------------------------------------------


def test_inv_surf_12_fold_reports_each_replacement() -> None:
    """The fold gives the surface and every replacement with its seq, declared range and removed nodes."""
    raws = [user(0), user(1), user(2), replacing(3, 1, 2, 1, 2), user(4), replacing(5, 0, 3, 0, 3)]
    folded = fold_surface(decoded(raws))
    assert folded == FoldedSurface(
        Surface((5, 4), 2),
        (Replacement(3, 1, 2, (1, 2)), Replacement(5, 0, 3, (0, 3))),
    )


def test_inv_surf_12_fold_equals_the_session_surface() -> None:
    """Folding the events of a session gives the session's surface."""
    raws = [*tool_step(), rewrite(5, 4, 4, result_data(1, 1, "c1", text="[elided]"), [4])]
    state = session(raws)
    folded = fold_surface(state.events)
    assert isinstance(folded, FoldedSurface) and folded.surface == state.surface
    assert folded.replacements == (Replacement(5, 4, 4, (4,)),)


def test_inv_surf_12_fold_refuses_what_the_transition_refuses() -> None:
    """A log the transition refuses is refused by the fold with the same code."""
    raws = [user(0), user(1, op=replace(0, 0))]
    assert code_of(fold_surface(decoded(raws))) is Code.SOURCES_MISSING_SHADOWED


def test_inv_surf_12_fold_of_an_empty_log_is_empty() -> None:
    """No events, no surface, no replacements."""
    assert fold_surface(()) == FoldedSurface(Surface((), 0), ())


# -- INV-SURF-13: shadowed nodes never return ------------------------------------------------------------------


def test_inv_surf_13_shadowed_node_cannot_be_replaced_again() -> None:
    """Once seq 0 is shadowed, a replace naming it is refused."""
    state = session([user(0), replacing(1, 0, 0, 0)])
    assert refusal(state, replacing(2, 0, 0, 0)) is Code.REPLACE_START_NOT_ON_SURFACE
    assert refusal(state, replacing(2, 1, 0, 0, 1)) is Code.REPLACE_END_NOT_ON_SURFACE


def test_inv_surf_13_shadowed_nodes_stay_off_the_folded_surface() -> None:
    """No node a replacement removed is on the final surface."""
    raws = [user(0), user(1), replacing(2, 0, 1, 0, 1), user(3), replacing(4, 2, 3, 2, 3)]
    folded = fold_surface(decoded(raws))
    assert isinstance(folded, FoldedSurface)
    assert folded.surface.nodes == (4,)
    assert {n for r in folded.replacements for n in r.shadowed} == {0, 1, 2, 3}
