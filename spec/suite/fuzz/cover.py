"""Covering payloads: for every event type, a few valid payloads that between them hold every part of
its shape, and the sweep of every keyword and alternative over them.

A drawn payload holds a part of its type's shape by chance: an optional member, the rarer arm of a
union, a nullable's value, an array's items.  The keyword sweep (:mod:`.schema_faults`) and the
alternatives (:mod:`.alternatives`) edit what a payload holds, so a bound on a member few payloads
carry (a failure's HTTP status inside an error reason inside a finish chunk) is asked seldom, and a
port that gets it wrong passes most runs.

The cover is built, not drawn.  For each arm of each union of the shape (every route
:func:`~sessionlog_spec.suite.agent.payload_values.union_routes` finds), one value takes that arm and
is *full* everywhere else: every optional member present, every nullable a value, every array one
item, an open record one member of its own.  One more value is *bare*: optional members left out
(as far as the record's own rules allow), nullables null, arrays at their least.  Leaves take one
plain valid value each (the sweep moves them to their bounds); relations are made to hold by the
generic repair.  A built value the model's shape check refuses is left out, so the cover is valid by
the model's own judgement, not by this module's.

:func:`cover_units` lists, per event type, each covering payload with the edits the sweep sends for
it (every keyword site of its published schema, every alternative, every lossless fault); the fuzz
group sends them in order, a budget per step, so one run asks every member of every arm.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from sessionlog_spec.model.payloads import EVENT_PAYLOADS
from sessionlog_spec.model.shapes import (
    ABSENT,
    Array,
    Bool,
    Context,
    EarlierSeq,
    Finite,
    Integer,
    Literal,
    Named,
    Nullable,
    Opaque,
    Record,
    Related,
    Shape,
    Str,
    StrForm,
    Variants,
    shape_problem,
)
from sessionlog_spec.suite.agent.payload_values import OTHERWISE, AnyArm, repair, same_key, union_routes

DEPTH: Final = 12
"""Below this many nested records and arrays a value is built bare, so a recursive shape ends."""
FORM_SAMPLES: Final[Mapping[StrForm, str]] = {
    StrForm.TRIMMED: "id-1",
    StrForm.INSTANT: "2024-02-29T23:59:59.999Z",
    StrForm.ABSOLUTE_PATH: "/work/file.txt",
}
"""One plain string of each textual form."""
UNKNOWN_KIND: Final = "x-writer-kind"
"""The discriminant an unknown variant of an extensible union is built with."""


class _Builder:
    """Builds one covering value: ``focus`` pins arms by union, ``full`` says how the rest is filled."""

    def __init__(self, focus: Mapping[int, AnyArm], *, full: bool, context: Context) -> None:
        self.focus = focus
        self.full = full
        self.context = context

    def value(self, shape: Shape, depth: int = 0, salt: int = 0) -> object:
        full = self.full and depth < DEPTH
        if isinstance(shape, Named | Related):
            inner = self.value(shape.shape, depth, salt)
            return repair(shape.relations, inner) if isinstance(shape, Related) else inner
        if isinstance(shape, Opaque):
            return {"note": [salt, "opaque"]} if full else salt
        if isinstance(shape, Bool):
            return full
        if isinstance(shape, Str):
            if shape.form is not None:
                return FORM_SAMPLES[shape.form] if salt == 0 else f"{FORM_SAMPLES[shape.form]}{salt}".strip()
            return f"text-{salt}" if full or shape.non_empty else ""
        if isinstance(shape, Literal):
            return shape.values[min(salt, len(shape.values) - 1)]
        if isinstance(shape, Integer):
            return max(shape.minimum, min(shape.maximum, 1 + salt))
        if isinstance(shape, Finite):
            return _finite(shape, salt)
        if isinstance(shape, EarlierSeq):
            seq = self.context.event_seq
            return max(0, (seq or 1) - 1 - salt)
        if isinstance(shape, Nullable):
            return self.value(shape.shape, depth, salt) if full else None
        if isinstance(shape, Array):
            count = shape.min_items if not full else max(shape.min_items, 1)
            if shape.max_items is not None:
                count = min(count, shape.max_items)
            return [self.value(shape.items, depth + 1, salt + i) for i in range(count)]
        if isinstance(shape, Record):
            return self._record(shape, depth, full, salt)
        return self._variants(shape, depth, salt)

    def _record(self, shape: Record, depth: int, full: bool, salt: int) -> dict[str, object]:
        names = [*shape.required]
        if full:
            names += list(shape.optional)
        else:
            for trigger, needed in shape.dependent_required.items():
                if trigger in names:
                    names += [n for n in needed if n not in names]
            names += [n for n in shape.optional if n not in names][: max(0, shape.min_members - len(names))]
        out = {name: self.value(shape.member(name) or Opaque(), depth + 1, salt) for name in names}
        if full and shape.additional is not None:
            out.setdefault(f"x-member-{salt}", self.value(shape.additional, depth + 1, salt))
        return out

    def _variants(self, shape: Variants, depth: int, salt: int) -> object:
        key = self.focus.get(id(shape), shape.arms[0][0] if shape.arms else OTHERWISE)
        if key is OTHERWISE:
            assert shape.otherwise is not None
            inner = self.value(shape.otherwise, depth, salt)
            if isinstance(inner, dict) and shape.arm(inner) is not shape.otherwise:
                inner[shape.discriminant] = _unknown_key(shape)
            return inner
        arm = next(a for k, a in shape.arms if same_key(k, key))
        inner = self.value(arm, depth, salt)
        if not isinstance(inner, dict):
            return inner
        out = {k: v for k, v in inner.items() if k != shape.discriminant}
        if key is not ABSENT:
            out[shape.discriminant] = key
        return out


def _unknown_key(shape: Variants) -> object:
    """A discriminant value no arm of ``shape`` names: a number past the numbered arms, else a string."""
    numbers = [k for k in shape.keys if isinstance(k, int) and not isinstance(k, bool)]
    return max(numbers) + 1 if numbers else UNKNOWN_KIND


def _finite(shape: Finite, salt: int) -> float:
    low = shape.minimum if shape.minimum is not None else None
    high = shape.maximum if shape.maximum is not None else None
    value = 0.5 + salt
    if low is not None and (value < low or (shape.exclusive_minimum and value <= low)):
        value = low + 0.5 if high is None or low + 0.5 <= high else low
    if high is not None and value > high:
        value = high
    return value


@dataclass(frozen=True, slots=True)
class Cover:
    """One covering payload of ``event_type``: what it was built for, and the value."""

    event_type: str
    what: str
    payload: object


def covering_payloads(event_type: str, context: Context) -> tuple[Cover, ...]:
    """The cover of ``event_type`` in ``context``: one bare value and, per union arm, a full value that
    takes it (one full value when the shape has no union); each one the model's shape check accepts,
    each distinct."""
    shape = EVENT_PAYLOADS[event_type]
    plans: list[tuple[str, Mapping[int, AnyArm], bool]] = [("bare", {}, False), ("full", {}, True)]
    for union, key, route in union_routes(shape):
        pinned: dict[int, AnyArm] = {id(u): k for u, k in route}
        pinned[id(union)] = key
        plans.append((f"{union.discriminant}={'otherwise' if key is OTHERWISE else key!r}", pinned, True))
    built: list[Cover] = []
    seen: set[str] = set()
    for what, focus, full in plans:
        try:
            value = _Builder(focus, full=full, context=context).value(shape)
        except (StopIteration, AssertionError, TypeError, KeyError):
            continue
        text = repr(value)
        if text in seen or shape_problem(shape, value, "$", context) is not None:
            continue
        seen.add(text)
        built.append(Cover(event_type, what, value))
    return tuple(built)


@functools.cache
def covers(event_seq: int) -> tuple[Cover, ...]:
    """The covering payloads of every type of the payload table, for an event at ``event_seq``."""
    return tuple(
        cover for event_type in sorted(EVENT_PAYLOADS) for cover in covering_payloads(event_type, Context(event_seq=event_seq))
    )


def fitted(payload: object, move: object) -> object:
    """A covering ``payload`` standing where a log is: the values of ``move`` (a valid next event's
    payload of its type) in every scalar member both hold, object members fitted alike, and the
    members only the cover holds kept.  So its turn, step, ids and names are the log's, and the
    edits of its rare members are asked where every other rule of the event holds (a rule of the
    event's place in the log, not only of its payload).  Whether the fit is valid is the model's to
    say."""
    if not (isinstance(payload, dict) and isinstance(move, dict)):
        return payload
    out = dict(payload)
    for name, value in move.items():
        if name in out and not isinstance(value, list):
            out[name] = fitted(out[name], value) if isinstance(value, dict) else value
    return out


def as_event(cover: Cover, seq: int, time: int, payload: object | None = None) -> dict[str, Any]:
    """``cover`` (or ``payload`` in its place) as an event at ``seq``."""
    return {"type": cover.event_type, "seq": seq, "time": time, "data": cover.payload if payload is None else payload}


# -- the sweep over the cover ------------------------------------------------------------------------------

COVER_SEQ: Final = 4
"""The seq the cover is built for: earlier seqs it cites are below it, so it stands after any log as long."""
SWEPT_FAMILIES: Final = ("payload", "alternative", "lossless", "legacy")
"""The perturbation families the sweep sends: those of a payload's values, and its v0 spellings."""


@dataclass(frozen=True, slots=True)
class CoverEdit:
    """One edit the sweep sends: a covering payload changed at one place."""

    cover: Cover
    name: str
    payload: object


def _change(old: object, new: object, at: tuple[str, ...] = ()) -> tuple[tuple[str, ...], str]:
    """Where ``new`` first parts from ``old`` (array items as ``*``) and what it holds there: two edits
    of two covers that change the same place to the same value are one question."""
    if type(old) is not type(new):
        return at, repr(new)
    if isinstance(old, dict) and isinstance(new, dict):
        if old.keys() != new.keys():
            return at, repr(sorted(old.keys() ^ new.keys()))
        name = next((k for k in old if old[k] != new[k] or type(old[k]) is not type(new[k])), None)
        return (at, "=") if name is None else _change(old[name], new[name], (*at, name))
    if isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            return at, f"{len(new)} items"
        index = next((i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b or type(a) is not type(b)), None)
        return (at, "=") if index is None else _change(old[index], new[index], (*at, "*"))
    return at, repr(new)


BOUND_KEYWORDS: Final = frozenset(
    {"minimum", "maximum", "exclusiveMinimum", "minLength", "minItems", "maxItems", "const", "enum", "pattern", "uniqueItems"}
)
"""The keywords that bound a value where it stands: each place's own rule, swept first."""


def _tier(family: str, name: str) -> int:
    """Which pass of a round sends an edit: a value moved to a bound of its place or past it first;
    then members left out or added and the alternatives a writer could write; then a wrong JSON type
    and the non-lossless values (which ask, at each place, rules a port checks alike everywhere)."""
    if family == "payload" and name.rsplit(" ", 1)[-1] in BOUND_KEYWORDS:
        return 0
    return 2 if family == "lossless" or (family == "payload" and name.endswith(" type")) else 1


class CoverSweep:
    """The distinct edits of every covering payload, handed out a budget at a time, round after round.

    A round holds three passes over the covers (:func:`_tier`): the first moves each value to its
    bounds, so a run too short for a whole round still asks every bound of every member.  Within a
    pass the covers come in an order that spreads a partial pass over every type (the first cover of
    each type, then the second, …); an edit two covers of a type share is sent once per round."""

    TIERS: Final = 3

    def __init__(self) -> None:
        by_type: dict[str, list[Cover]] = {}
        for cover in covers(COVER_SEQ):
            by_type.setdefault(cover.event_type, []).append(cover)
        rounds = max(len(found) for found in by_type.values())
        self.order = [found[i] for i in range(rounds) for found in by_type.values() if i < len(found)]
        self.slots = [(tier, index) for tier in range(self.TIERS) for index in range(len(self.order))]
        self.edits: dict[int, tuple[list[CoverEdit], ...]] = {}
        self.seen: dict[str, set[tuple[object, ...]]] = {}
        self.slot_at, self.edit_at = 0, 0

    def _edits_of(self, index: int) -> tuple[list[CoverEdit], ...]:
        """The edits of the ``index``-th cover, by pass."""
        known = self.edits.get(index)
        if known is None:
            # Imported here: perturb imports the alternatives, which import this module's neighbours.
            from sessionlog_spec.suite.fuzz.perturb import perturbations  # noqa: PLC0415

            cover = self.order[index]
            event = as_event(cover, COVER_SEQ, 0)
            seen = self.seen.setdefault(cover.event_type, set())
            known = tuple([] for _ in range(self.TIERS))
            found = perturbations(event, COVER_SEQ, random.Random(index))
            for family in SWEPT_FAMILIES:
                for perturbation in found[family]:
                    payload = perturbation.edit(event)["data"]
                    key = (family, perturbation.name, _change(cover.payload, payload))
                    if key not in seen:
                        seen.add(key)
                        known[_tier(family, perturbation.name)].append(CoverEdit(cover, f"{family} {perturbation.name}", payload))
            self.edits[index] = known
        return known

    def round_size(self) -> int:
        """How many edits one round sends."""
        return sum(len(edits) for index in range(len(self.order)) for edits in self._edits_of(index))

    def take(self, budget: int) -> list[CoverEdit]:
        """The next ``budget`` edits (fewer only when one round holds fewer)."""
        taken: list[CoverEdit] = []
        for _ in range(len(self.slots) + 1):
            tier, index = self.slots[self.slot_at]
            edits = self._edits_of(index)[tier]
            chunk = edits[self.edit_at : self.edit_at + budget - len(taken)]
            taken += chunk
            self.edit_at += len(chunk)
            if self.edit_at < len(edits):
                break  # the budget ran out inside this cover
            self.slot_at, self.edit_at = (self.slot_at + 1) % len(self.slots), 0
            if len(taken) >= budget:
                break
        return taken
