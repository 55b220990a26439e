"""Perturbations of valid events and of stored lines, derived from the model's own tables.

Nothing here is a hand-written candidate: each perturbation is a generic edit of a valid value, and
its verdict is the model's.  The edits of an event fall into six *families*, drawn evenly so that a
family with many sites (a payload's keywords) does not crowd out one with few (the envelope):

``envelope``
    a key of the closed envelope (:data:`~sessionlog_spec.model.event.ENVELOPE_KEYS`) dropped, an
    undeclared key added, ``seq`` and ``time`` moved to every boundary of INV-LOG-2/4 and one past
    it on both sides, ``ignorable``, ``surfaceOp`` and ``sourceEventSeqs`` given each JSON type;
``payload``
    one keyword of the type's published schema broken where it applies
    (:func:`~sessionlog_spec.suite.fuzz.schema_faults.keyword_sites`), bounds included;
``lossless``
    a value of the payload, and one of the surface metadata or the envelope's numbers, replaced by
    one that is not lossless JSON: an unsafe integer, ``-0``, a float beyond the largest double's
    integers, a nesting one level past the limit and at it;
``type``
    the type swapped for a sibling of the vocabulary (same prefix), for any other type of the v1
    vocabulary, for a v0 form, or for an unknown type with and without ``ignorable``;
``alternative``
    a value of the payload replaced by another a writer could plausibly write there
    (:mod:`~sessionlog_spec.suite.fuzz.alternatives`): the other values the schema or the model
    names for that member, a boolean flipped, a host-language twin (``true``/``1``, ``1``/``1.0``),
    an optional member left out or a declared one written.  Valid-but-rare events, and the rules no
    keyword states (one error code of two, a member a rewrite must keep);
``legacy``
    the event as a v0 writer spelled it, in each spelling of the edge's tables
    (:func:`~sessionlog_spec.suite.fuzz.legacy_v0.spellings`): only the edge converts these, and a
    v1 path must judge them by the v1 rules.

Lines of a stored text are perturbed as a disk or a crash does: dropped, repeated, swapped with the
next, cut short, followed by a stray line, blanked, their line end made CRLF, the last one left
unterminated; and as another writer spells them: a row with a space of some kind around it, an
integer spelled another way, a letter written as an escape.
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from sessionlog_spec.model.json_value import MAX_NESTING, MAX_SAFE_INTEGER
from sessionlog_spec.model.legacy import REFUSED_TYPES, V0_INVENTORY
from sessionlog_spec.model.payloads import EVENT_PAYLOADS
from sessionlog_spec.suite.fuzz.alternatives import alternative_sites
from sessionlog_spec.suite.fuzz.legacy_v0 import spellings
from sessionlog_spec.suite.fuzz.schema_faults import header_line_sites, keyword_sites

RawEvent = dict[str, Any]
Edit = Callable[[RawEvent], RawEvent]

ENVELOPE_MEMBERS: Final = ("type", "seq", "time", "data", "ignorable", "surfaceOp", "sourceEventSeqs")
"""The closed envelope of INV-LOG-1: four required keys, three optional ones."""
REQUIRED_MEMBERS: Final = ("type", "seq", "time", "data")
FAMILIES: Final = ("envelope", "payload", "lossless", "type", "alternative", "legacy")


def integer_boundaries(low: int, high: int) -> tuple[object, ...]:
    """Every boundary of a safe-integer range ``[low, high]`` on both sides, and the spellings of a
    number a reader must not take for an integer (a fraction, ``-0``, a string, a flag)."""
    return (low, low - 1, high, high + 1, low + 1, high - 1, 1.5, -0.0, float(high) * 2, "1", True, None)


@dataclass(frozen=True, slots=True)
class Perturbation:
    """One named edit of one event."""

    family: str
    name: str
    """Names the site, not the value: ``seq 2^53``, ``data.reason.kind const``."""
    edit: Edit


def _set(member: str, value: object) -> Edit:
    def edit(event: RawEvent) -> RawEvent:
        return {**event, member: copy.deepcopy(value)}

    return edit


def _drop(member: str) -> Edit:
    def edit(event: RawEvent) -> RawEvent:
        return {k: v for k, v in event.items() if k != member}

    return edit


def envelope_perturbations(event: RawEvent, length: int) -> list[Perturbation]:
    """The envelope's edits of ``event``, standing at position ``length`` of its log."""
    found = [Perturbation("envelope", f"drop {member}", _drop(member)) for member in ENVELOPE_MEMBERS if member in event]
    found.append(Perturbation("envelope", "undeclared key", _set("seqs", [event.get("seq")])))
    for value in integer_boundaries(0, MAX_SAFE_INTEGER):
        found.append(Perturbation("envelope", f"seq {value!r}", _set("seq", value)))
    for value in (length - 1, length + 1):
        found.append(Perturbation("envelope", f"seq at length {value - length:+d}", _set("seq", value)))
    for value in integer_boundaries(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER):
        found.append(Perturbation("envelope", f"time {value!r}", _set("time", value)))
    for value in (True, False, 1, "true", None):
        found.append(Perturbation("envelope", f"ignorable {value!r}", _set("ignorable", value)))
    for value in ("append", "replace", {"replace": {"start": 0, "end": 0}}, None, 1, []):
        found.append(Perturbation("envelope", f"surfaceOp {value!r}", _set("surfaceOp", value)))
    for value in ([], [0], [length], 0, None, [0, 0], [-1], ["0"]):
        found.append(Perturbation("envelope", f"sourceEventSeqs {value!r}", _set("sourceEventSeqs", value)))
    found += provenance_perturbations(event, length)
    for value in ([], "x", 0, None):
        found.append(Perturbation("envelope", f"data {value!r}", _set("data", value)))
    for value in ("", 1, None):
        found.append(Perturbation("envelope", f"type {value!r}", _set("type", value)))
    return found


def provenance_perturbations(event: RawEvent, length: int) -> list[Perturbation]:
    """The surface metadata ``event`` carries, moved member by member: a replace's ``start`` and
    ``end`` to every boundary of the log (``-1``, ``0``, each other, the last seq, ``length`` and past
    it, a fraction, a string) and its ``op`` to the other ops; ``sourceEventSeqs`` with each cited seq
    dropped, doubled, moved to ``-1``, to the event's own seq and past it, the list reversed, emptied
    or left out; an append given a replace over its own neighbourhood.  The values come from the event
    and the log it stands in, so a rule is tried at the bounds of *this* event, not of a fixed one."""
    found: list[Perturbation] = []
    op = event.get("surfaceOp")
    last = length - 1
    if isinstance(op, dict):
        for member in ("start", "end"):
            for value in (-1, 0, op.get("end" if member == "start" else "start"), last, length, length + 1, 0.5, "0", None):
                if value == op.get(member) and type(value) is type(op.get(member)):
                    continue  # no change
                found.append(Perturbation("envelope", f"surfaceOp.{member} {value!r}", _set("surfaceOp", {**op, member: value})))
            found.append(
                Perturbation(
                    "envelope", f"surfaceOp.{member} dropped", _set("surfaceOp", {k: v for k, v in op.items() if k != member})
                )
            )
        for value in ("append", "rewrite", "", None):
            found.append(Perturbation("envelope", f"surfaceOp.op {value!r}", _set("surfaceOp", {**op, "op": value})))
        found.append(Perturbation("envelope", "surfaceOp undeclared member", _set("surfaceOp", {**op, "seqs": []})))
    elif op == "append" and length > 0:
        for start, end in ((last, last), (0, last), (last, 0), (length, length)):
            replace = {"op": "replace", "start": start, "end": end}
            found.append(Perturbation("envelope", f"surfaceOp replace {start}..{end}", _set("surfaceOp", replace)))
    sources = event.get("sourceEventSeqs")
    if isinstance(sources, list) and sources:
        found.append(Perturbation("envelope", "sourceEventSeqs reversed", _set("sourceEventSeqs", sources[::-1])))
        for index in range(min(len(sources), 3)):
            rest = sources[:index] + sources[index + 1 :]
            found.append(Perturbation("envelope", f"sourceEventSeqs without [{index}]", _set("sourceEventSeqs", rest)))
            found.append(
                Perturbation(
                    "envelope", f"sourceEventSeqs [{index}] doubled", _set("sourceEventSeqs", [*sources, sources[index]])
                )
            )
            for value in (-1, length, length + 1):
                moved = [*sources[:index], value, *sources[index + 1 :]]
                found.append(Perturbation("envelope", f"sourceEventSeqs [{index}] {value!r}", _set("sourceEventSeqs", moved)))
    elif "surfaceOp" in event and "sourceEventSeqs" not in event and length > 0:
        found.append(Perturbation("envelope", "sourceEventSeqs citing the last seq", _set("sourceEventSeqs", [last])))
    return found


def _nested(depth: int) -> object:
    value: object = 0
    for _ in range(depth):
        value = [value]
    return value


NOT_LOSSLESS: Final[Mapping[str, object]] = {
    "2^53": 2**53,
    "-(2^53)": -(2**53),
    "-0": -0.0,
    "1e300": 1e300,
    "nested past the limit": _nested(MAX_NESTING + 1),
    "nested at the limit": _nested(MAX_NESTING - 1),
    "2^53 - 1": MAX_SAFE_INTEGER,
    "2.0": 2.0,
}
"""Values around INV-LOG-4's line: not lossless (refused), and just inside it (kept: a large finite
double, ``2.0``, ``2^53 - 1``, a nesting at the limit).  Infinity has no JSON spelling on the wire;
the stored-line edits reach it as text."""


def _leaves(value: object, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    if isinstance(value, dict):
        return [path] + [p for key, member in value.items() for p in _leaves(member, (*path, key))]
    if isinstance(value, list):
        return [path] + [p for index, item in enumerate(value) for p in _leaves(item, (*path, index))]
    return [path]


def _replace_at(location: tuple[str | int, ...], new: object) -> Edit:
    def edit(event: RawEvent) -> RawEvent:
        changed = copy.deepcopy(event)
        if not location:
            changed["data"] = copy.deepcopy(new)
            return changed
        container: Any = changed["data"]
        for step in location[:-1]:
            container = container[step]
        container[location[-1]] = copy.deepcopy(new)
        return changed

    return edit


METADATA_MEMBERS: Final = ("seq", "time", "surfaceOp", "sourceEventSeqs")
"""The envelope members a reader freezes beside ``data``: INV-LOG-4 holds for them as for the payload."""


def _replace_in_envelope(location: tuple[str | int, ...], new: object) -> Edit:
    def edit(event: RawEvent) -> RawEvent:
        changed = copy.deepcopy(event)
        container: Any = changed
        for step in location[:-1]:
            container = container[step]
        container[location[-1]] = copy.deepcopy(new)
        return changed

    return edit


def lossless_perturbations(event: RawEvent, rng: random.Random) -> list[Perturbation]:
    """A value somewhere in the payload (one drawn location, the whole payload included), and one in
    the surface metadata or the envelope's numbers (a cited seq, a replace's bound, ``seq``,
    ``time``), replaced by each value of :data:`NOT_LOSSLESS`."""
    leaves = _leaves(event.get("data"))
    location = rng.choice(leaves) if leaves else ()
    found = [Perturbation("lossless", f"data {name}", _replace_at(location, value)) for name, value in NOT_LOSSLESS.items()]
    metadata = [(key, *path) for key in METADATA_MEMBERS if key in event for path in _leaves(event[key]) if path]
    metadata += [(key,) for key in METADATA_MEMBERS if key in event and not isinstance(event[key], dict | list)]
    if metadata:
        where = rng.choice(metadata)
        named = ".".join(str(step) for step in where)
        found += [
            Perturbation("lossless", f"{named} {name}", _replace_in_envelope(where, value))
            for name, value in NOT_LOSSLESS.items()
        ]
    return found


def _payloads_replaced(
    family: str, event: RawEvent, sites: Callable[[str, object], Sequence[tuple[str, object]]]
) -> list[Perturbation]:
    """One perturbation of ``family`` per ``(name, payload)`` that ``sites`` gives for the event's payload
    (none for a type without a published schema), the payload replaced by a copy of it."""
    type_ = event.get("type")
    if not isinstance(type_, str) or type_ not in EVENT_PAYLOADS:
        return []

    def replaced(payload: object) -> Edit:
        return lambda e: {**e, "data": copy.deepcopy(payload)}

    return [Perturbation(family, f"data.{name}", replaced(payload)) for name, payload in sites(type_, event.get("data"))]


def payload_perturbations(event: RawEvent) -> list[Perturbation]:
    """One perturbation per keyword site of the event's published schema."""
    return _payloads_replaced("payload", event, lambda t, data: [(site.key, site.payload) for site in keyword_sites(t, data)])


def alternative_perturbations(event: RawEvent) -> list[Perturbation]:
    """One perturbation per alternative of the event's payload."""
    return _payloads_replaced("alternative", event, alternative_sites)


def type_perturbations(event: RawEvent) -> list[Perturbation]:
    """The type swapped for a sibling, another v1 type, a v0 form or an unknown type."""
    type_ = event.get("type")
    prefix = type_.split("/")[0] if isinstance(type_, str) else ""
    siblings = sorted(t for t in EVENT_PAYLOADS if t.split("/")[0] == prefix and t != type_)
    others = sorted(t for t in EVENT_PAYLOADS if t != type_ and t not in siblings)
    legacy = sorted(t for t in (V0_INVENTORY | REFUSED_TYPES.keys()) if t not in EVENT_PAYLOADS)
    found = [Perturbation("type", f"sibling {t}", _set("type", t)) for t in siblings]
    found += [Perturbation("type", f"other {t}", _set("type", t)) for t in others]
    found += [Perturbation("type", f"legacy {t}", _set("type", t)) for t in legacy]
    unknown = f"{prefix or 'vendor'}/unknown-kind"
    found.append(Perturbation("type", "unknown", _set("type", unknown)))
    found.append(Perturbation("type", "unknown, ignorable", lambda e: {**e, "type": unknown, "ignorable": True}))
    return found


def legacy_perturbations(event: RawEvent) -> list[Perturbation]:
    """The event as a v0 writer spelled it, in every spelling of the edge's tables (N1–N9: a v0 end
    reason, a steering message, a pre-identity message, …).  Only the edge converts them: on every
    other path a v1 reader judges the spelled event as the v1 rules judge it."""

    def spelled_as(spelled: RawEvent) -> Edit:
        return lambda e: {**copy.deepcopy(spelled), "seq": e.get("seq"), "time": e.get("time")}

    return [Perturbation("legacy", f"v0 {name}", spelled_as(spelled)) for name, spelled in spellings(event)]


def perturbations(event: RawEvent, length: int, rng: random.Random, only: str | None = None) -> dict[str, list[Perturbation]]:
    """Every perturbation of ``event`` (standing at position ``length``), by family (``only``: of that one)."""
    makers: dict[str, Callable[[], list[Perturbation]]] = {
        "envelope": lambda: envelope_perturbations(event, length),
        "payload": lambda: payload_perturbations(event),
        "lossless": lambda: lossless_perturbations(event, rng),
        "type": lambda: type_perturbations(event),
        "alternative": lambda: alternative_perturbations(event),
        "legacy": lambda: legacy_perturbations(event),
    }
    return {family: make() for family, make in makers.items() if only is None or family == only}


def form_of(event: RawEvent) -> tuple[str, str, bool]:
    """What a rule can tell apart in an event before its values: its type, its surface op and
    whether it cites sources (a tool result appended and one rewritten are different forms)."""
    op = event.get("surfaceOp")
    kind = op.get("op", "?") if isinstance(op, dict) else str(op)
    return str(event.get("type")), str(kind), "sourceEventSeqs" in event


def by_form(events: Sequence[RawEvent], rng: random.Random) -> int:
    """The index of an event of ``events``, a form (:func:`form_of`) drawn evenly first: a log holds
    many messages and few rewrites, retries or compaction events, and a draw by event would
    perturb the rare forms rarely."""
    forms: dict[tuple[str, str, bool], list[int]] = {}
    for index, event in enumerate(events):
        forms.setdefault(form_of(event), []).append(index)
    return rng.choice(forms[rng.choice(sorted(forms))])


def family_sweep(event: RawEvent, length: int, rng: random.Random, family: str, cap: int) -> list[Perturbation]:
    """The perturbations of one family a sweep sends: every one, or, past ``cap``, one drawn for each
    site (the part of a name before its value, in a drawn order) and the rest of ``cap`` drawn from the
    other values.  A family's values are what tell a port that checks a rule apart from one that only
    mostly does (a fraction rounded, ``-0`` let through), so a sweep sends as many as it can."""
    found = perturbations(event, length, rng, only=family)[family]
    if len(found) <= cap:
        return found
    by_site: dict[str, list[Perturbation]] = {}
    for perturbation in found:
        by_site.setdefault(site_of(perturbation), []).append(perturbation)
    sites = sorted(by_site)
    rng.shuffle(sites)
    chosen = [rng.choice(by_site[site]) for site in sites[:cap]]
    rest = [p for p in found if p not in chosen]
    return chosen + rng.sample(rest, min(len(rest), cap - len(chosen)))


def site_of(perturbation: Perturbation) -> str:
    """The site a perturbation breaks, without the value it writes there: ``seq``, ``data.turn maximum``."""
    if perturbation.family == "payload":
        return perturbation.name
    if perturbation.family == "alternative":
        return " ".join(perturbation.name.split(" ")[:2])  # the place and the edit, not the value
    return perturbation.name.split(" ")[0]


def draw_perturbation(
    event: RawEvent, length: int, rng: random.Random, exclude: str | None = None, only: str | None = None
) -> Perturbation | None:
    """One perturbation: a family drawn evenly among those with sites (``exclude`` left out, or ``only``
    that one), then a site of it."""
    by_family = {
        f: sites
        for f, sites in perturbations(event, length, rng).items()
        if sites and f != exclude and (only is None or f == only)
    }
    if not by_family:
        return None
    family = rng.choice(sorted(by_family))
    return rng.choice(by_family[family])


# --- edits of a sequence: the lines of a stored text, the events of a log ---------------------------

T = TypeVar("T")


def _without(items: list[T], at: int) -> list[T]:
    return items[:at] + items[at + 1 :]


def _repeat(items: list[T], at: int) -> list[T]:
    return items[: at + 1] + items[at:]


def _swap_next(items: list[T], at: int) -> list[T]:
    if at + 1 >= len(items):
        return items
    return [*items[:at], items[at + 1], items[at], *items[at + 2 :]]


def _to_end(items: list[T], at: int) -> list[T]:
    return [*items[:at], *items[at + 1 :], items[at]]


# --- stored lines ---------------------------------------------------------------------------------


def _cut_short(lines: list[str], at: int) -> list[str]:
    return [*lines[:at], lines[at][: max(1, len(lines[at]) // 2)], *lines[at + 1 :]]


def _stray_after(lines: list[str], at: int) -> list[str]:
    return [*lines[: at + 1], '{"type":', *lines[at + 1 :]]


def _blank(lines: list[str], at: int) -> list[str]:
    return [*lines[:at], "   ", *lines[at + 1 :]]


def _crlf(lines: list[str], at: int) -> list[str]:
    return [*lines[:at], lines[at] + "\r", *lines[at + 1 :]]


_RESPELLED: Final = (
    (re.compile(r'(?<=":)(\d+)(?=[,}\]])'), r"\1.0"),
    (re.compile(r'(?<=":)(\d+)(?=[,}\]])'), r"\1e0"),
    (re.compile(r'(?<=":)0(?=[,}\]])'), "-0"),
    (re.compile(r'(?<=":)(\d)(?=[,}\]])'), r"0\1"),
)
"""Other spellings of an integer member a writer may not use or a reader may mistake: ``1.0``,
``1e0`` (one number, JSON says), ``-0`` (not lossless) and a leading zero (not JSON)."""
_SPACES: Final = ("\f", "\v", "\u00a0", "\u2028", "\ufeff", " ", "\t")
"""Characters around a row: JSON's own whitespace (space, tab), and what a language's trim takes
for whitespace and JSON does not (form feed, vertical tab, no-break space, a line separator, a BOM)."""


def _spaced(lines: list[str], at: int) -> list[str]:
    space = _SPACES[(len(lines[at]) + at) % len(_SPACES)]
    edited = space + lines[at] if at % 2 else lines[at] + space
    return [*lines[:at], edited, *lines[at + 1 :]]


def _respelled(lines: list[str], at: int) -> list[str]:
    for offset in range(len(_RESPELLED)):
        pattern, spelling = _RESPELLED[(at + offset) % len(_RESPELLED)]
        edited = pattern.sub(spelling, lines[at], count=1)
        if edited != lines[at]:
            return [*lines[:at], edited, *lines[at + 1 :]]
    return lines


def _escaped(lines: list[str], at: int) -> list[str]:
    """A letter inside a string written as a ``\\u`` escape: the same text, another spelling."""
    match = re.search(r'"[a-z]', lines[at])
    if match is None:
        return lines
    letter = lines[at][match.start() + 1]
    edited = lines[at][: match.start() + 1] + f"\\u{ord(letter):04x}" + lines[at][match.start() + 2 :]
    return [*lines[:at], edited, *lines[at + 1 :]]


_INTEGER_LITERAL: Final = re.compile(r"(?<=[:\[,])(-?\d+)(?=[,}\]])")
"""An integer literal standing as a member's value or an array's item (a stored line is compact JSON)."""


def literal_respellings(line: str) -> list[tuple[str, str]]:
    """``line`` with one integer literal spelled another way, for every literal of it and every way:
    ``N.0`` and ``Ne0`` (the same JSON number), a leading zero (not JSON), and ``-0`` in its place
    (negative zero: not lossless, and not the ``0`` a careless reader makes of it).  Named by the
    literal's place in the line and the spelling."""
    found: list[tuple[str, str]] = []
    for number, match in enumerate(_INTEGER_LITERAL.finditer(line)):
        literal = match[1]
        digits = literal.lstrip("-")
        spellings = {
            "fraction": f"{literal}.0",
            "exponent": f"{literal}e0",
            "leading zero": literal.replace(digits, "0" + digits),
        }
        spellings["negative zero"] = "-0"
        for name, spelled in spellings.items():
            if spelled != literal:
                found.append((f"literal {number} {name}", line[: match.start()] + spelled + line[match.end() :]))
    return found


LINE_EDITS: Final[Mapping[str, Callable[[list[str], int], list[str]]]] = {
    "drop": _without,
    "repeat": _repeat,
    "swap with next": _swap_next,
    "cut short": _cut_short,
    "stray line after": _stray_after,
    "blank": _blank,
    "crlf": _crlf,
    "spaced": _spaced,
    "number respelled": _respelled,
    "letter escaped": _escaped,
}


def perturb_lines(text: str, rng: random.Random, edits: int) -> tuple[str, list[str]]:
    """``text`` with ``edits`` line edits at drawn lines (the header line included), and their names."""
    final_newline = text.endswith("\n")
    lines = text.split("\n")[:-1] if final_newline else text.split("\n")
    names = []
    for _ in range(edits):
        if not lines:
            break
        name = rng.choice(sorted(LINE_EDITS))
        at = rng.randrange(len(lines))
        lines = LINE_EDITS[name](lines, at)
        names.append(f"{name} line {at + 1}")
    if final_newline and rng.randrange(len(LINE_EDITS) + 1) == 0:
        final_newline = False  # the last line left unterminated: a torn tail, or a whole one
        names.append("no final newline")
    joined = "\n".join(lines)
    return (joined + "\n" if final_newline and lines else joined), names


def moved_to(event: RawEvent, seq: int, time: int) -> RawEvent:
    """A copy of ``event`` standing at ``seq`` (and ``time``): an event of the log written again later."""
    return {**copy.deepcopy(event), "seq": seq, "time": time}


def carried(value: object) -> bool:
    """Whether a UTF-8 transport carries ``value`` (a drawn string may hold a lone surrogate, which
    no JSON line encodes)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def picked(rng: random.Random, options: Sequence[Any]) -> Any:
    """One of ``options`` (a shorthand that keeps the draws of one step on one generator)."""
    return options[rng.randrange(len(options))]


# --- orders of events -------------------------------------------------------------------------------


def renumbered(events: Sequence[RawEvent]) -> list[RawEvent]:
    """``events`` with seqs made contiguous from 0 again (everything else, citations included, kept)."""
    return [{**event, "seq": seq} for seq, event in enumerate(events)]


ORDER_EDITS: Final[Mapping[str, Callable[[list[RawEvent], int], list[RawEvent]]]] = {
    "drop": _without,
    "double": _repeat,
    "swap with next": _swap_next,
    "move to the end": _to_end,
}
"""Edits of a log's order, each followed by :func:`renumbered`: every event stays valid on its own,
so only the relationship, trace, surface and header rules can refuse the result (or none)."""


def reordered(events: list[RawEvent], rng: random.Random) -> tuple[list[RawEvent], str]:
    """``events`` with one order edit at a drawn event, renumbered, and the edit's name."""
    name = rng.choice(sorted(ORDER_EDITS))
    at = rng.randrange(len(events))
    return renumbered(ORDER_EDITS[name](list(events), at)), f"{name} event {at}"


# --- the header line ------------------------------------------------------------------------------------


def header_line_edits(header: Mapping[str, Any], events: int) -> list[tuple[str, object]]:
    """The header line broken at every keyword of its published document, and ``seedLength`` at every
    bound the document cannot state (INV-JSONL-1: at most the number of events the log holds): 0, one
    short, the count itself, one past it, and the count written as an integral float."""
    edits = [(f"header {site.key} {site.detail}", site.payload) for site in header_line_sites(header)]
    bounds: tuple[tuple[str, float], ...] = (
        ("0", 0),
        ("count - 1", events - 1),
        ("count", events),
        ("count + 1", events + 1),
        ("count as a float", float(events)),
    )
    edits += [(f"header seedLength {name}", {**header, "seedLength": value}) for name, value in bounds if value >= 0]
    return edits
