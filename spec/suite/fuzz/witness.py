"""The generic witness search: which declared cells the model's own refusals reach, found by
perturbing valid sessions, with no hand-written candidate.

For each event type of the payload table, a valid event is drawn along the type's shape and placed
at the end of a realistic session (the drawing is derandomised, so the search is deterministic); the
events of the realistic sessions themselves are taken as they stand.  Each such event is put through
every perturbation of :mod:`sessionlog_spec.suite.fuzz.perturb` (every family, every site, every
value), and every order edit is applied to the sessions, on every path that admits events: appended
to the session before it, in place of it in a seed, in the stored text loaded and read, and in the
log given to the edge.  Each refusal names its cells (:func:`sessionlog_spec.suite.cells.refusal_cells`).

The relationship scenes of the walks over the rules' preconditions (:mod:`.scenes`) go on every path
the same way, and the v0 spellings of the edge's tables (:mod:`.legacy_v0`), alone, with their legacy
members broken and in chains, go to the edge and are stored as v0 text loaded and read.

The result is what generation from the specification *can* reach: :mod:`sessionlog_spec.suite.rule_space`
compares it with the declared space, and a declared cell neither reaches must be listed there as
unreachable, with the reason (:data:`sessionlog_spec.suite.rule_space.UNREACHABLE`).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessionlog_spec.model.payloads import EVENT_PAYLOADS
from sessionlog_spec.model.shapes import Context
from sessionlog_spec.protocol.messages import Refused
from sessionlog_spec.suite.agent.builder import realistic_session
from sessionlog_spec.suite.agent.payload_values import valid_payload
from sessionlog_spec.suite.cells import Cell, refusal_cells
from sessionlog_spec.suite.fuzz.legacy_v0 import member_faults, retired_forms, spelled_log, spellings, v0_log, v0_sessions
from sessionlog_spec.suite.fuzz.perturb import LINE_EDITS, ORDER_EDITS, moved_to, perturbations, renumbered
from sessionlog_spec.suite.fuzz.scenes import WALK_SEEDS, distinct_scenes
from sessionlog_spec.suite.machines.legacy import stored_text
from sessionlog_spec.suite.oracle import Oracle
from sessionlog_spec.suite.ports.inprocess import InProcessPort

HEADER_LINE = {"type": "session", "version": 1, "id": "witness", "createdAt": 1_700_000_000_000, "delegationDepth": 0}
DRAWN_PER_TYPE = 2
V0_CHAINS = 8
"""Whole v0 sessions spelled with drawn forms, per session."""
"""Valid events drawn for each type of the payload table."""


@dataclass(frozen=True, slots=True)
class Submission:
    """One question to the model: an op and its arguments, and what was perturbed."""

    op: str
    args: dict[str, Any]
    what: str
    live: tuple[Any, ...] = ()
    """The session an ``append`` stands on (other ops replace it or need none)."""


def _stored(events: list[Any]) -> str:
    return stored_text({"header": HEADER_LINE, "events": events})


def on_paths(prefix: list[Any], event: Any, what: str) -> Iterator[Submission]:
    """``event`` after ``prefix`` on every path."""
    yield Submission("append", {"event": event}, what, tuple(prefix))
    log = [*prefix, event]
    yield Submission("seed", {"events": log}, what)
    yield Submission("load", {"jsonl": _stored(log)}, what)
    yield Submission("read", {"jsonl": _stored(log)}, what)
    yield Submission("upgrade_v0", {"log": {"header": HEADER_LINE, "events": log}}, what)
    yield Submission("upgrade_v0", {"log": {"header": {**HEADER_LINE, "version": 0}, "events": log}}, what)
    yield Submission("fold_surface", {"events": log}, what)
    yield Submission("fold_header", {"events": log}, what)


def line_edits(events: list[Any], what: str) -> Iterator[Submission]:
    """The stored text of ``events`` with each line edit at each line, loaded and read."""
    lines = _stored(events).split("\n")[:-1]
    for name, edit in LINE_EDITS.items():
        for at in range(len(lines)):
            text = "\n".join(edit(list(lines), at)) + "\n"
            yield Submission("load", {"jsonl": text}, f"{what}: {name} line {at + 1}")
            yield Submission("read", {"jsonl": text}, f"{what}: {name} line {at + 1}")


def drawn_events(seed: int = 0) -> list[dict[str, Any]]:
    """``DRAWN_PER_TYPE`` valid payloads of every type, derandomised, as events of no fixed seq."""
    drawn: list[dict[str, Any]] = []

    @settings(
        max_examples=DRAWN_PER_TYPE, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck)
    )
    @given(st.data())
    def draw(data: st.DataObject) -> None:
        for type_ in sorted(EVENT_PAYLOADS):
            payload = data.draw(valid_payload(EVENT_PAYLOADS[type_], Context(event_seq=60)), label=type_)
            drawn.append({"type": type_, "seq": 0, "time": 1_700_000_000_000, "data": payload})

    draw()
    return drawn


def submissions(seed: int = 0) -> Iterator[Submission]:
    """Every generic question of the search."""
    rng = random.Random(seed)
    sessions = [realistic_session(1).events, realistic_session(3, calls_per_step=2).events]
    base = sessions[-1]
    for drawn in drawn_events(seed):
        event = moved_to(drawn, len(base), base[-1]["time"] + 1)
        yield from on_paths(base, event, f"drawn {event['type']}")
        for family, found in perturbations(event, len(base), rng).items():
            for perturbation in found:
                yield from on_paths(base, perturbation.edit(event), f"drawn {family} {perturbation.name}")
    for events in sessions:
        seen_types: set[str] = set()
        for index, event in enumerate(events):
            if event["type"] in seen_types:
                continue
            seen_types.add(event["type"])
            prefix = events[:index]
            for family, found in perturbations(event, index, rng).items():
                for perturbation in found:
                    yield from on_paths(prefix, perturbation.edit(event), f"{family} {perturbation.name}")
        for name, edit in ORDER_EDITS.items():
            for index in range(len(events)):
                edited = renumbered(edit(list(events), index))
                yield from on_paths(edited[:-1], edited[-1], f"order {name} {index}")
        yield from line_edits(list(events), "lines")
    yield from scene_submissions()
    yield from v0_submissions()


def v0_on_paths(events: list[Any], what: str) -> Iterator[Submission]:
    """A v0 log put to the edge, and stored as v0 text loaded and read."""
    log = v0_log(events)
    yield Submission("upgrade_v0", {"log": log}, what)
    text = stored_text(log)
    yield Submission("load", {"jsonl": text}, what)
    yield Submission("read", {"jsonl": text}, what)


def v0_submissions(seed: int = 0) -> Iterator[Submission]:
    """Every v0 spelling of every event of the v0 sessions, alone and with each of its legacy members
    broken; the retired forms after each session; each session spelled whole, in drawn chains
    (:mod:`sessionlog_spec.suite.fuzz.legacy_v0`)."""
    rng = random.Random(seed)
    for events in v0_sessions():
        for index, event in enumerate(events):
            for name, spelled in spellings(event):
                yield from v0_on_paths([*events[:index], spelled, *events[index + 1 :]], f"v0 {name}")
                for fault, broken in member_faults(name, spelled):
                    yield from v0_on_paths([*events[:index], broken, *events[index + 1 :]], f"v0 {fault}")
        for name, retired in retired_forms(len(events), int(events[-1]["time"]) + 1):
            yield from v0_on_paths([*events, retired], f"v0 {name}")
        for _ in range(V0_CHAINS):
            chain, names = spelled_log(events, rng, share=0.8)
            yield from v0_on_paths(chain, f"v0 chain {', '.join(names)}")


def scene_submissions(seeds: Sequence[int] = WALK_SEEDS) -> Iterator[Submission]:
    """Every kind of relationship scene the walks over the rules' preconditions refuse
    (:mod:`sessionlog_spec.suite.fuzz.scenes`), on every path."""
    for scene in distinct_scenes(seeds):
        yield from on_paths(list(scene.log), scene.event, f"scene {scene.what}")


def generic_census(seed: int = 0) -> Iterator[tuple[Submission, frozenset[Cell]]]:
    """Every question of the search the model refuses, with the cells its refusal reaches."""
    port = InProcessPort(Oracle())
    live: tuple[Any, ...] | None = None
    for submission in submissions(seed):
        if submission.op == "append" and submission.live != live:
            port.call("reset")
            for event in submission.live:
                port.call("append", event=event)
            live = submission.live
        reply = port.call(submission.op, **submission.args)
        if submission.op in ("seed", "load") or (submission.op == "append" and not isinstance(reply, Refused)):
            live = None
        if isinstance(reply, Refused):
            yield submission, frozenset(refusal_cells(submission.op, submission.args, reply.code, reply.message))


def witness_cells(seed: int = 0) -> dict[Cell, str]:
    """Every cell the generic search reaches, with the first question that reached it."""
    reached: dict[Cell, str] = {}
    for submission, cells in generic_census(seed):
        for cell in cells:
            reached.setdefault(cell, f"{submission.op}: {submission.what}")
    return reached
