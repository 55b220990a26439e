"""Pairs of faults drawn from the check-order table: one event carrying two faults, answered with the
model's first.

:func:`sessionlog_spec.check_order.ordered_pairs` lists every pair of codes ``(a, b)`` the model's
order places ``a`` before ``b``, across stages and within one.  A port that checks in another order
answers ``b`` for an event that carries both faults; this module builds such events.

A *carrier* is a fault the model refuses with ``b`` on its own: a perturbation
(:mod:`.perturb`) of a valid event where it stands, or a relationship scene (:mod:`.scenes`).  A second
fault is put on the carrier: another perturbation of the same event or, for a scene, another
rebinding of its members.  The pair ``(a, b)`` is *built* when the model answers ``a`` for the event
carrying both, the second fault alone is refused with ``a`` too, and the two edits are independent
(applied in either order they give the same event), so the event really carries both.

:func:`pair_census` builds every pair it can from fixed sessions (the nightly sweep sends each, the
rule-space tool counts them) and says why each other pair of the table cannot be built;
:func:`pairs_on` draws the pairs one event of a live session can carry (the ``fuzz`` group's rule).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from sessionlog_spec.check_order import ordered_pairs, stage_of
from sessionlog_spec.model.event import encode_event
from sessionlog_spec.model.session import SessionState, append_event
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.suite.agent.builder import RawEvent, SessionBuilder, realistic_session
from sessionlog_spec.suite.fuzz.double import double_faults, same_stage
from sessionlog_spec.suite.fuzz.perturb import Edit, moved_to, perturbations
from sessionlog_spec.suite.fuzz.scenes import Edits, Scene, _apply, distinct_scenes, member_pool, rebindings, rule_members
from sessionlog_spec.suite.rule_space import code_types

SCENE_FAULTS: Final = 24
"""Faults of a scene's template :func:`scene_doubles` asks the model about."""
CARRIERS_PER_KIND: Final = 2
"""Carriers kept for each (code, type): the second faults are tried on each."""


@dataclass(frozen=True, slots=True)
class PairWitness:
    """An event carrying two faults, appended to a valid log: the model answers ``first``."""

    first: str
    second: str
    log: tuple[RawEvent, ...]
    event: RawEvent
    what: str


def _code(state: SessionState, raw: object) -> str | None:
    after = append_event(state, raw)
    return after.code.value if isinstance(after, Violation) else None


@dataclass(frozen=True, slots=True)
class _Fault:
    name: str
    apply: Edit


def _faults(state: SessionState, event: RawEvent, rng: random.Random) -> list[_Fault]:
    """The perturbations of ``event`` (standing at the end of ``state``'s log), and the rebindings of
    the members its relationship rule reads."""
    seq = len(state.events)
    found = [_Fault(f"{p.family} {p.name}", p.edit) for found in perturbations(event, seq, rng).values() for p in found]
    if rule_members(str(event.get("type"))):
        log = [encode_event(e) for e in state.events]
        pool = [*reversed(range(max(0, seq - 3), seq)), *member_pool(log, rule_members(str(event["type"])))]
        for name, edits in rebindings(event, pool, rng):
            found.append(_Fault(f"rebound {name}", functools.partial(_rebind, edits=edits)))
    return found


def _rebind(event: RawEvent, edits: Edits) -> RawEvent:
    return {**event, "data": _apply(event["data"], edits)}


def _independent(first: _Fault, second: _Fault, event: RawEvent) -> RawEvent | None:
    """``event`` with both faults, when they commute (touch independent sites); else ``None``."""
    try:
        one, other = first.apply(second.apply(event)), second.apply(first.apply(event))
    except (KeyError, IndexError, TypeError):
        return None  # one fault removed what the other edits
    return one if one == other else None


def spread(faults: Sequence[_Fault], rng: random.Random, cap: int) -> list[_Fault]:
    """``cap`` of ``faults``, one of each place first (the family and the member a name starts with),
    in a drawn order: a draw by fault would mostly take the places with many values."""
    by_place: dict[str, list[_Fault]] = {}
    for fault in faults:
        by_place.setdefault(" ".join(fault.name.split(" ")[:2]), []).append(fault)
    places = sorted(by_place)
    rng.shuffle(places)
    chosen = [rng.choice(by_place[place]) for place in places[:cap]]
    rest = [f for f in faults if f not in chosen]
    return chosen + rng.sample(rest, max(0, min(len(rest), cap - len(chosen))))


@functools.cache
def _pair_table() -> frozenset[tuple[str, str]]:
    return frozenset(ordered_pairs())


def pairs_on(state: SessionState, event: RawEvent, rng: random.Random, cap: int | None = None) -> Iterator[PairWitness]:
    """Every pair of the table that ``event``, valid at the end of ``state``'s log, carries with two of
    its faults (one witness per pair, in a drawn order; ``cap`` faults drawn when given)."""
    if _code(state, event) is not None:
        return
    log = tuple(encode_event(e) for e in state.events)
    singles: dict[str, list[_Fault]] = {}
    faults = _faults(state, event, rng)
    if cap is not None and len(faults) > cap:
        faults = spread(faults, rng, cap)
    for fault in faults:
        try:
            code = _code(state, fault.apply(event))
        except (KeyError, IndexError, TypeError):
            continue
        if code is not None:
            singles.setdefault(code, []).append(fault)
    table = _pair_table()
    candidates = [(a, b) for a in singles for b in singles if (a, b) in table]
    rng.shuffle(candidates)
    for a, b in candidates:
        for fault_a in rng.sample(singles[a], min(3, len(singles[a]))):
            fault_b = next((f for f in singles[b] if (both := _independent(fault_a, f, event)) is not None), None)
            if fault_b is None:
                continue
            both = _independent(fault_a, fault_b, event)
            if both is not None and _code(state, both) == a:
                yield PairWitness(a, b, log, both, f"{fault_a.name} + {fault_b.name}")
                break


def scene_doubles(scene: Scene, rng: random.Random, cap: int) -> list[RawEvent]:
    """``scene``'s event with a second fault whose code alone differs from the scene's, and pairs of
    the template's other faults (:func:`~sessionlog_spec.suite.fuzz.double.double_faults`): the order
    of two relationship conditions on one event (a repeated start that also names another step) is
    asked as the order of any two checks is."""
    state, base = scene.state, scene.base
    if state is None or base is None or _code(state, base) is not None:
        return []
    singles = [("scene", scene.event)] + [(f.name, f.apply(base)) for f in spread(_faults(state, base, rng), rng, SCENE_FAULTS)]
    doubled = double_faults(base, singles, lambda event: _code(state, event), rng, cap, near=same_stage)
    return [event for _, event in doubled if isinstance(event, dict)]


def _scene_pairs(rng: random.Random) -> Iterator[PairWitness]:
    """Pairs on relationship scenes: the scene's fault is ``b``; a second fault of the same event
    (applied to the scene's valid template too, where it has one) answers ``a``."""
    table = _pair_table()
    for scene in distinct_scenes():
        state = _state_of(scene.log)
        if state is None or scene.base is None:
            continue
        base = scene.base
        if _code(state, base) is not None:
            continue  # the template is not valid here: the scene's fault is not alone
        for fault in _faults(state, base, rng):
            try:
                alone = _code(state, fault.apply(base))
                both = fault.apply(scene.event)
            except (KeyError, IndexError, TypeError):
                continue
            if alone is None or (alone, scene.code) not in table:
                continue
            if _code(state, both) == alone and both != scene.event:
                yield PairWitness(alone, scene.code, scene.log, both, f"{fault.name} on scene {scene.what}")


@functools.cache
def _state_cache() -> dict[tuple[str, ...], SessionState | None]:
    return {}


def _state_of(log: Sequence[RawEvent]) -> SessionState | None:
    key = tuple(repr(e) for e in log)
    cache = _state_cache()
    if key not in cache:
        state: SessionState | Violation = SessionBuilder().state
        for raw in log:
            if isinstance(state, Violation):
                break
            state = append_event(state, raw)
        cache[key] = None if isinstance(state, Violation) else state
    return cache[key]


def carrier_states() -> Iterator[tuple[SessionState, RawEvent]]:
    """Valid events where they stand: the first of each type of realistic sessions, and drawn events
    of every type at the end of one."""
    for builder in (realistic_session(1), realistic_session(3, calls_per_step=2)):
        events = builder.events
        seen: set[str] = set()
        for index, event in enumerate(events):
            if event["type"] in seen:
                continue
            seen.add(event["type"])
            state = _state_of(events[:index])
            if state is not None:
                yield state, event
    # The witness search draws the events (it imports the machines, which import this module).
    from sessionlog_spec.suite.fuzz.witness import drawn_events  # noqa: PLC0415

    base = realistic_session(3, calls_per_step=2)
    for drawn in drawn_events():
        yield base.state, moved_to(drawn, base.next_seq, int(base.events[-1]["time"]) + 1)


@dataclass(frozen=True, slots=True)
class PairCensus:
    """Which pairs of the table the generators build, with a witness each, and why the rest cannot be."""

    table: tuple[tuple[str, str], ...]
    built: Mapping[tuple[str, str], PairWitness]
    unbuilt: Mapping[tuple[str, str], str]

    def to_json(self) -> dict[str, Any]:
        reasons: dict[str, int] = {}
        for reason in self.unbuilt.values():
            reasons[reason] = reasons.get(reason, 0) + 1
        return {
            "pairs": len(self.table),
            "built": len(self.built),
            "across_stages": sum(1 for a, b in self.built if stage_of(a) != stage_of(b)),
            "within_a_stage": sum(1 for a, b in self.built if stage_of(a) == stage_of(b)),
            "unbuilt_by_reason": dict(sorted(reasons.items(), key=lambda item: -item[1])),
            "unbuilt": {f"{a} < {b}": reason for (a, b), reason in sorted(self.unbuilt.items())},
        }


def why_unbuilt(a: str, b: str, alone: Mapping[str, set[str]]) -> str:
    """Why no event of the generators carries the pair ``(a, b)``."""
    # The types each code is raised on, where the model writes its rule per type (the rule space's table).
    types_a, types_b = code_types().get(a), code_types().get(b)
    if types_a is not None and types_b is not None and not types_a & types_b:
        return "the two rules are written for disjoint event types: no event is subject to both"
    if "ENVELOPE_NOT_OBJECT" in (a, b):
        return "an event that is not an object carries no other fault"
    if a not in alone:
        return f"no generated event is refused with {a} alone"
    if b not in alone:
        return f"no generated event is refused with {b} alone"
    if not alone[a] & alone[b]:
        return "the generated faults of the two codes fall on disjoint event types"
    return "no two independent faults of one generated event give these codes"


def pair_census(seed: int = 0) -> PairCensus:
    """Every pair of the table the generators build on the carrier events and the relationship scenes."""
    rng = random.Random(seed)
    table = tuple(ordered_pairs())
    built: dict[tuple[str, str], PairWitness] = {}
    alone: dict[str, set[str]] = {}
    for state, event in carrier_states():
        for fault in _faults(state, event, rng):
            try:
                code = _code(state, fault.apply(event))
            except (KeyError, IndexError, TypeError):
                continue
            if code is not None:
                alone.setdefault(code, set()).add(str(event.get("type")))
        for witness in pairs_on(state, event, rng):
            built.setdefault((witness.first, witness.second), witness)
    for scene in distinct_scenes():
        alone.setdefault(scene.code, set()).add(str(scene.event.get("type")))
    for witness in _scene_pairs(rng):
        built.setdefault((witness.first, witness.second), witness)
    unbuilt = {pair: why_unbuilt(*pair, alone) for pair in table if pair not in built}
    return PairCensus(table, built, unbuilt)
