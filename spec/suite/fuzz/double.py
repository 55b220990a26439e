"""Two faults in one value, whichever rules they break: the order of any two checks is asked.

The check-order table (:mod:`sessionlog_spec.check_order`) orders codes; a port can also order two
checks that give *different* codes inside one value the table treats as one stage (two keywords of
a header line, a request header's reason and its members, a relationship rule's two conditions).
Such an order is observable exactly when one value carries both faults: the model answers with the
check it makes first, and a port that makes the other first answers with the other code.

The edits here are generic: each single fault is an edited copy of a valid value, the places it
changed are read off by comparing the two, and two faults are put together when they changed
disjoint places (neither contains the other).  The codes each single fault gets alone choose which
pairs are worth sending: two faults with the same code ask nothing about order.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from typing import Final

from sessionlog_spec.check_order import stage_of

Path = tuple[str | int, ...]
ABSENT: Final = object()
"""The value of a place a fault removed (a member dropped)."""


def _same(left: object, right: object) -> bool:
    """JSON equality that tells ``1``, ``1.0`` and ``true`` apart (Python's ``==`` does not)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_same(left[k], right[k]) for k in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(_same(a, b) for a, b in zip(left, right, strict=True))
    return bool(left == right)


def changes(base: object, edited: object, at: Path = ()) -> dict[Path, object]:
    """The places where ``edited`` differs from ``base``, each with its new value (:data:`ABSENT`
    where a member was removed); a changed list length or a changed type is one change of the whole."""
    if isinstance(base, dict) and isinstance(edited, dict):
        found: dict[Path, object] = {}
        for key in base.keys() | edited.keys():
            if key not in edited:
                found[(*at, key)] = ABSENT
            elif key not in base:
                found[(*at, key)] = edited[key]
            else:
                found |= changes(base[key], edited[key], (*at, key))
        return found
    if isinstance(base, list) and isinstance(edited, list) and len(base) == len(edited):
        found = {}
        for index, (old, new) in enumerate(zip(base, edited, strict=True)):
            found |= changes(old, new, (*at, index))
        return found
    return {} if _same(base, edited) else {at: edited}


def _overlap(left: Path, right: Path) -> bool:
    shorter = min(len(left), len(right))
    return left[:shorter] == right[:shorter]


def disjoint(first: Mapping[Path, object], second: Mapping[Path, object]) -> bool:
    """Whether two sets of changes touch places neither of which contains the other."""
    return bool(first) and bool(second) and not any(_overlap(a, b) for a in first for b in second)


def _put(value: object, at: Path, new: object) -> object:
    if not at:
        return new
    head, rest = at[0], at[1:]
    if isinstance(value, dict):
        copied = dict(value)
        if rest or new is not ABSENT:
            copied[head] = _put(copied[head], rest, new) if rest else new
        else:
            copied.pop(head, None)
        return copied
    if isinstance(value, list) and isinstance(head, int):
        listed = list(value)
        listed[head] = _put(listed[head], rest, new)
        return listed
    raise TypeError(f"no place {at!r} in a {type(value).__name__}")


def applied(value: object, edits: Mapping[Path, object]) -> object:
    """``value`` with ``edits`` made (shares what they do not touch)."""
    for at, new in edits.items():
        value = _put(value, at, new)
    return value


def same_stage(first: str, second: str) -> Hashable | None:
    """The check-order stage both codes are in (codes outside the table, a header line's, count as one
    stage of their own), or ``None`` when they are in two."""
    stage = stage_of(first)
    return ("stage", stage) if stage == stage_of(second) else None


def double_faults(
    base: object,
    singles: Sequence[tuple[str, object]],
    code_of: Callable[[object], str | None],
    rng: random.Random,
    cap: int,
    *,
    near: Callable[[str, str], Hashable | None] | None = None,
) -> Iterator[tuple[str, object]]:
    """Up to ``cap`` copies of ``base`` carrying two of ``singles`` (named edited copies of it) whose
    codes alone differ and whose changes are disjoint, the pairs of codes taken in a drawn order (by
    :func:`_schedule`), each time with faults at other places, so a port's order between any two of
    the checks ``base`` is subject to is asked."""
    by_code: dict[str, list[tuple[str, dict[Path, object]]]] = {}
    for name, edited in singles:
        try:
            code = code_of(edited)
        except (KeyError, IndexError, TypeError):
            continue
        if code is not None:
            by_code.setdefault(code, []).append((name, changes(base, edited)))
    codes = sorted(by_code)
    pairs = [(a, b) for i, a in enumerate(codes) for b in codes[i + 1 :]]
    rng.shuffle(pairs)
    used: set[tuple[str, str]] = set()
    visits: dict[tuple[str, str], int] = {}
    sent = tried = 0
    for a, b in _schedule(pairs, near):
        if sent >= cap or tried >= 4 * cap:
            return
        tried += 1
        # Each visit of a pair starts from the other code, and the first fault is drawn again until one
        # has a partner at a disjoint place; the partner's places not yet paired come first: a port may
        # misorder only one member's check (a header line's type, not its id), so places are spread.
        visits[(a, b)] = visits.get((a, b), 0) + 1
        first, second = (a, b) if visits[(a, b)] % 2 else (b, a)
        for _attempt in range(3):
            name_a, edits_a = _by_parent(by_code[first], rng)
            partners = [(n, e) for n, e in by_code[second] if disjoint(edits_a, e)]
            if partners:
                break
        else:
            continue
        fresh = [(n, e) for n, e in partners if (first, _place(e)) not in used]
        name_b, edits_b = _by_parent(fresh or partners, rng)
        used.add((first, _place(edits_b)))
        try:
            both = applied(applied(base, edits_a), edits_b)
        except (KeyError, IndexError, TypeError):
            continue
        sent += 1
        yield f"{name_a} | {name_b}", both


def _schedule(pairs: list[tuple[str, str]], near: Callable[[str, str], Hashable | None] | None) -> Iterator[tuple[str, str]]:
    """The pairs of codes in the order they are tried, without end: all of them in turn; or, with
    ``near``, the groups it makes taken in turn (each group's pairs over and over, so a stage with three
    codes is asked as often as one with thirty), and one other pair after each round of the groups.
    The order within a stage is the one a port is free to get wrong; across stages the check-order
    table's pairs ask it already."""
    if not pairs:
        return
    groups: dict[Hashable, list[tuple[str, str]]] = {}
    others: list[tuple[str, str]] = []
    for pair in pairs:
        group = None if near is None else near(*pair)
        (others if group is None else groups.setdefault(group, [])).append(pair)
    if not groups:
        yield from itertools.cycle(others)
        return
    cycles = [itertools.cycle(members) for members in groups.values()]
    rest = itertools.cycle(others) if others else None
    while True:
        for cycle in cycles:
            yield next(cycle)
        if rest is not None:
            yield next(rest)


def _by_parent(faults: Sequence[tuple[str, dict[Path, object]]], rng: random.Random) -> tuple[str, dict[Path, object]]:
    """One of ``faults``, the object they change drawn evenly first: a port may check one object's
    members out of order (a payload's own members before its reason) while the faults deeper down
    (the header's tools) outnumber them."""
    by_parent: dict[Path, list[tuple[str, dict[Path, object]]]] = {}
    for fault in faults:
        by_parent.setdefault(min(fault[1])[:-1] if fault[1] else (), []).append(fault)
    return rng.choice(by_parent[rng.choice(sorted(by_parent, key=repr))])


def _place(edits: Mapping[Path, object]) -> str:
    """The places a fault changed, as one name."""
    return " ".join(sorted(".".join(map(str, at)) for at in edits))
