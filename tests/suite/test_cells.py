"""Reach cells: a refusal is counted on the type of the event it names, through the op that asked."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sessionlog_spec.protocol.messages import Refused
from sessionlog_spec.suite.agent.builder import realistic_session
from sessionlog_spec.suite.cells import ANY_TYPE, HEADER_LINE, LOG_LEVEL, NOT_AN_EVENT, UNKNOWN_TYPE, refusal_cells, refused_type
from sessionlog_spec.suite.oracle import Oracle
from sessionlog_spec.suite.ports.inprocess import InProcessPort
from sessionlog_spec.suite.reach import cells_of

SESSION_LINE = '{"type":"session","version":1,"id":"s","createdAt":0,"delegationDepth":0}'
V0_HEADER = {"type": "session", "version": 0, "id": "s", "createdAt": 0, "delegationDepth": 0}


def _event(type_: str, seq: int, data: dict[str, Any], **envelope: Any) -> dict[str, Any]:
    return {"type": type_, "seq": seq, "time": 1_700_000_000_000 + seq, "data": data, **envelope}


def _turn_start(seq: int) -> dict[str, Any]:
    return _event("turn/start", seq, {"turn": 1})


def _title(seq: int, **data: Any) -> dict[str, Any]:
    return _event("session/title", seq, {"title": "t", "messageSeqs": [], "source": {"kind": "user"}, **data})


def _cells(op: str, **args: Any) -> set[tuple[str, str, str]]:
    reply = InProcessPort(Oracle()).call(op, **args)
    assert isinstance(reply, Refused), reply
    return set(refusal_cells(op, args, reply.code, reply.message))


BAD_TITLE = _title(1, bogus=1)  # a payload member the type does not have (INV-PAY-1, INV-PAY-2)


@pytest.mark.parametrize(
    ("op", "args"),
    [
        ("seed", {"events": [_turn_start(0), BAD_TITLE]}),
        ("repair", {"events": [_turn_start(0), BAD_TITLE]}),
        ("load", {"jsonl": "\n".join([SESSION_LINE, json.dumps(_turn_start(0)), json.dumps(BAD_TITLE)]) + "\n"}),
        ("upgrade_v0", {"log": {"header": V0_HEADER, "events": [_turn_start(0), BAD_TITLE]}}),
        ("upgrade_v0", {"log": {"header": {**V0_HEADER, "version": 1}, "events": [_turn_start(0), BAD_TITLE]}}),
    ],
)
def test_a_refusal_counts_on_the_type_it_names_not_the_first_event(op: str, args: dict[str, Any]) -> None:
    cells = _cells(op, **args)
    assert cells and all(type_ == "session/title" and path == op for _, type_, path in cells)


def test_an_append_counts_on_its_candidate() -> None:
    args = {"event": BAD_TITLE}
    reply = Refused("PAYLOAD_INVALID", "session/title at seq 1 data: has unexpected member 'bogus'")
    assert set(refusal_cells("append", args, reply.code, reply.message)) == {
        ("INV-PAY-1", "session/title", "append"),
        ("INV-PAY-2", "session/title", "append"),
    }


def test_an_envelope_or_line_rule_counts_on_any_type() -> None:
    stray = {**_turn_start(1), "bogus": 1}
    assert _cells("seed", events=[_turn_start(0), stray]) == {("INV-LOG-1", ANY_TYPE, "seed")}


def test_what_is_no_known_event_gets_a_cell_of_its_own() -> None:
    assert refused_type("seed", {"events": [_turn_start(0), "x"]}, "seed index 1: not an object") == NOT_AN_EVENT
    # A line nested deeper than Python's recursive decoder goes is read by the model's own parser.
    deep = {"jsonl": "\n".join([SESSION_LINE, '{"type":"turn/start","data":' + "[" * 3000 + "]" * 3000 + "}"]) + "\n"}
    assert refused_type("load", deep, "line 2: too deep") == "turn/start"
    assert {t for _, t, _ in _cells("load", jsonl='{"type":"session","version":"x"}\n')} == {HEADER_LINE}
    assert {t for _, t, _ in _cells("load", jsonl="")} == {LOG_LEVEL}
    odd = _event("vendor/odd-" + "x" * 9, 0, {})
    assert {t for _, t, _ in _cells("seed", events=[odd])} == {UNKNOWN_TYPE}


def test_the_census_puts_a_rule_to_every_path_that_admits_events() -> None:
    """An ``append`` candidate is lifted to the seed and stored-log paths, so a payload rule has a cell on each
    (the edge refuses a payload fault as a v0 source problem, INV-LEGACY-9, which has its cell there)."""
    cells = cells_of([realistic_session(1)], seeds=[0])
    assert {op for invariant, _, op in cells if invariant == "INV-PAY-1"} >= {"append", "seed", "load"}
    assert ("INV-LEGACY-9", "upgrade_v0") in {(invariant, op) for invariant, _, op in cells}
    assert cells == cells_of([realistic_session(1)], seeds=[0])  # the census is deterministic

