"""Strength tests for the trace, surface, balance, header, session fold and repair decisions.

Mutation testing of ``model/`` showed each of these was reachable but not pinned by the earlier
tests (see docs/strength.md): a refusal's message naming the expected number, a step-scoped event
naming the wrong turn, the log-prefix view, multi-block rewrite comparison, the negative-balance
refusal of ``cut_balances``, canonicalisation of headers whose empty members come first, the
pending count and the header of a folded log, and repair of a call that was started unasked.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest
from model_cases import (
    PINNED,
    assistant_data,
    call_data,
    code_of,
    ev,
    opened,
    replacing,
    result_data,
    session,
)

from sessionlog_spec.model.compaction import cut_balances
from sessionlog_spec.model.event import APPEND, Event, Replace, decode_event
from sessionlog_spec.model.header import canonical_header
from sessionlog_spec.model.repair import interrupted_turn_closers
from sessionlog_spec.model.session import EMPTY_SESSION, append_event, fold_session
from sessionlog_spec.model.surface import LogPrefix, fold_surface
from sessionlog_spec.model.violation import Code, Violation


def violation(result: object) -> Violation:
    assert isinstance(result, Violation), result
    return result


# -- INV-TRACE -------------------------------------------------------------------------------------


def test_inv_trace_1_turn_number_refusal_names_the_event_and_the_expected_turn() -> None:
    refused = violation(append_event(EMPTY_SESSION, ev("turn/start", 0, {"turn": 2})))
    assert refused.code is Code.TURN_NUMBER
    assert refused.message == "turn/start at seq 0 must start turn 1, got 2"


def test_inv_trace_4_step_number_refusal_names_the_expected_step() -> None:
    state = session(opened(step=False))
    refused = violation(append_event(state, ev("step/start", 1, {"turn": 1, "step": 3})))
    assert refused.code is Code.STEP_NUMBER
    assert refused.message == "step/start at seq 1 must start step 1, got 3"


def test_inv_trace_6_a_chunk_naming_an_earlier_turn_with_the_open_step_number_is_outside_its_step() -> None:
    state = session(
        [
            *opened(),
            ev("step/end", 2, {"turn": 1, "step": 1}),
            ev("turn/end", 3, {"turn": 1, "reason": {"kind": "completed"}}),
            ev("turn/start", 4, {"turn": 2}),
            ev("step/start", 5, {"turn": 2, "step": 1}),
        ]
    )
    chunk = ev("assistant/chunk", 6, {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "h"}})
    assert code_of(append_event(state, chunk)) is Code.EVENT_OUTSIDE_STEP


# -- INV-SURF --------------------------------------------------------------------------------------


def _events(n: int) -> list[Event]:
    return [Event("session/title", i, 0, MappingProxyType({"title": str(i)})) for i in range(n)]


def test_inv_surf_12_a_log_prefix_shows_exactly_its_first_events() -> None:
    events = _events(3)
    prefix = LogPrefix(events, 2)
    assert prefix[0] is events[0] and prefix[1] is events[1]
    assert list(prefix) == events[:2]
    with pytest.raises(IndexError, match="2"):
        prefix[2]


def _tool_result(seq: int, blocks: list[dict[str, Any]], **envelope: Any) -> Event:
    message = {"id": "r-c1", "role": "user", "source": {"kind": "tool", "callId": "c1"}, "content": blocks}
    data = MappingProxyType({"turn": 1, "step": 1, "message": MappingProxyType(message)})
    return Event("tool/result", seq, 0, data, **envelope)  # type: ignore[arg-type]


def test_inv_surf_11_a_rewrite_compares_every_block_after_the_result() -> None:
    def blocks(text: str, note: str) -> list[dict[str, Any]]:
        first = {"type": "tool-result", "toolCallId": "c1", "isError": False, "content": (text,)}
        return [first, {"type": "text", "text": note}, {"type": "text", "text": "tail"}]

    log = [
        _tool_result(0, blocks("long output", "note"), surface_op=APPEND),
        _tool_result(1, blocks("[trimmed]", "another note"), surface_op=Replace(0, 0), source_event_seqs=(0,)),
    ]
    assert code_of(fold_surface(log)) is Code.TOOL_REWRITE_CHANGES


# -- INV-COMPACT -----------------------------------------------------------------------------------


def test_inv_compact_1_cut_balances_refuses_a_surface_that_goes_negative() -> None:
    log = [Event("tool/result", 0, 0, MappingProxyType({}))]
    assert code_of(cut_balances((0,), log)) is Code.TOOL_PAIRING_NEGATIVE


def test_inv_compact_6_a_folded_log_tracks_its_pending_calls() -> None:
    state = fold_session([*opened(), ev("assistant/message", 2, assistant_data(1, 1, ["c1", "c2"]), surfaceOp="append")])
    assert not isinstance(state, Violation)
    assert state.pending_calls == 2



def test_inv_compact_6_a_replacement_takes_back_what_it_shadows() -> None:
    """A summary over the asking message alone takes its call back, leaving its answer at −1."""
    answered = [
        *opened(),
        ev("assistant/message", 2, assistant_data(1, 1, ["c1"]), surfaceOp="append"),
        ev("tool/call", 3, call_data(1, 1, "c1")),
        ev("tool/result", 4, result_data(1, 1, "c1"), surfaceOp="append"),
        ev("step/end", 5, {"turn": 1, "step": 1}),
    ]
    compacted = fold_session([*answered, replacing(6, 2, 2, 2)])
    assert not isinstance(compacted, Violation)
    assert compacted.pending_calls == -1
    assert code_of(cut_balances(compacted.surface.nodes, compacted.events)) is Code.TOOL_PAIRING_NEGATIVE
    whole = fold_session([*answered, replacing(6, 2, 4, 2, 4)])
    assert not isinstance(whole, Violation)
    assert whole.pending_calls == 0


# -- INV-HDR ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("empty", "kept"),
    [
        ({"system": ""}, {"tools": ({"name": "read"},)}),
        ({"tools": ()}, {"system": "Be terse."}),
        ({"adapterDefaults": MappingProxyType({})}, {"system": "Be terse."}),
    ],
)
def test_inv_hdr_6_canonical_form_keeps_the_members_after_an_empty_one(empty: dict[str, Any], kept: dict[str, Any]) -> None:
    config = MappingProxyType(dict(PINNED))
    header = MappingProxyType({**empty, "config": config, **kept})  # the empty member comes first
    assert dict(canonical_header(header)) == {"config": config, **kept}


def test_inv_hdr_8_a_folded_log_without_snapshots_has_no_header() -> None:
    state = fold_session(opened())
    assert not isinstance(state, Violation)
    assert state.header is None


# -- INV-LOG-5 and the index a whole-log refusal names ---------------------------------------------------


def test_inv_log_5_a_whole_log_refusal_names_the_index() -> None:
    refused = violation(fold_session([ev("turn/start", 0, {"turn": 1}), ev("turn/end", 2, {"turn": 1, "reason": {}})]))
    assert refused.code is Code.SEQ_NOT_CONTIGUOUS
    assert refused.message.startswith("index 1: ")


# -- INV-REPAIR ------------------------------------------------------------------------------------


def test_inv_repair_2_a_started_call_nobody_asked_for_gets_no_closer() -> None:
    # A v1 log never holds such a call (the session refuses it); the repair scan, which reads any
    # decoded events, still answers only calls the model asked for.
    unasked = ev("tool/call", 2, call_data(1, 1, "c1"))
    assert code_of(append_event(session(opened()), unasked)) is Code.TOOL_CALL_NOT_ADVERTISED
    events = [decode_event(raw) for raw in [*opened(), unasked]]
    assert all(isinstance(e, Event) for e in events)
    closers = interrupted_turn_closers(events)  # type: ignore[arg-type]
    assert [c.type for c in closers] == ["step/end", "turn/end"]
