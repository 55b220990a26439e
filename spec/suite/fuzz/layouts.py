"""Stored layouts a reader may meet: one log written every way the physical codec allows.

The released codec (:mod:`sessionlog_spec.model.rows`) reads an event's row as it stands, a run of
``assistant/chunk`` events as one *packed row* of any length (a writer packs runs of three or more;
a reader takes one of one), and ``sourceEventSeqs`` as plain seqs or ``[first, last]`` ranges (a range
of one included) once it is strictly increasing.  Times are any safe integers: a log whose clock goes
back is valid, so a packed row's gaps (``dt``) may be negative or zero.  The suite's writers use one
of these layouts (the model's ``pack_chunk_runs``, a clock that only goes forward); this module writes
the others, and breaks the rows a layout adds member by member, so a reader that is stricter or looser
than the codec on any of them is seen.  The model decides every verdict.
"""

from __future__ import annotations

import copy
import itertools
import random
from collections.abc import Iterator, Sequence
from typing import Any, Final

from sessionlog_spec.model.json_value import MAX_SAFE_INTEGER
from sessionlog_spec.model.rows import PACKED_ROW_CHUNKS, _continues, _packable_kind, _packed_row

RawEvent = dict[str, Any]
Row = dict[str, Any]

TIME_MOVES: Final = ("same", "back one", "back far", "forward far", "negative", "zero")
"""How a retimed event's time moves from the one before it."""
RETYPED: Final[tuple[object, ...]] = ("1", 7, 1.5, True, None, [], {})
"""One value of each JSON type (and a fraction), for a member given another."""


def retimed(events: Sequence[RawEvent], rng: random.Random, share: float = 0.3) -> list[RawEvent]:
    """``events`` with, at ``share`` of them, a time moved from the one before: the same, back, far
    either way, negative or zero (all within the safe integers, as INV-LOG-2 allows)."""
    out: list[RawEvent] = []
    previous = 0
    for original in events:
        event, time = original, original.get("time")
        if isinstance(time, int) and not isinstance(time, bool) and rng.random() < share:
            move = rng.choice(TIME_MOVES)
            time = {
                "same": previous,
                "back one": previous - 1,
                "back far": previous - 1_000_000_007,
                "forward far": previous + 2**40,
                "negative": -rng.randrange(1, 2**31),
                "zero": 0,
            }[move]
            time = max(-MAX_SAFE_INTEGER, min(MAX_SAFE_INTEGER, time))
            event = {**event, "time": time}
        out.append(event)
        if isinstance(event.get("time"), int):
            previous = event["time"]
    return out


def _runs(events: Sequence[RawEvent]) -> Iterator[tuple[str | None, list[RawEvent]]]:
    """``events`` cut into runs a packed row could hold (kind, run) and single other events (None, [event])."""
    kind: str | None = None
    run: list[RawEvent] = []
    for event in events:
        event_kind = _packable_kind(event)
        continues = event_kind is not None and event_kind == kind and bool(run) and _continues(run[-1], event, event_kind)
        if continues:
            run.append(event)
            continue
        if run:
            yield kind, run
        kind, run = event_kind, [event]
    if run:
        yield kind, run


def ranged(seqs: Sequence[object], rng: random.Random) -> list[object]:
    """``seqs`` (strictly increasing naturals) as a drawn mix of plain seqs and ranges, one-seq ranges
    included; any other list as it stands (ranges are read only in an increasing list)."""
    if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seqs):
        return list(seqs)
    ints = [s for s in seqs if isinstance(s, int)]
    if any(b <= a for a, b in itertools.pairwise(ints)):
        return list(seqs)
    out: list[object] = []
    at = 0
    while at < len(ints):
        end = at
        while end + 1 < len(ints) and ints[end + 1] == ints[end] + 1 and rng.random() < 0.7:
            end += 1
        out.append([ints[at], ints[end]] if end > at or rng.random() < 0.4 else ints[at])
        at = end + 1
    return out


def layout(events: Sequence[RawEvent], rng: random.Random) -> list[Row]:
    """The rows of ``events`` in a drawn layout: every run of chunks cut at drawn points into packed
    rows (of one chunk too) or left one per line, every ``sourceEventSeqs`` spelled by :func:`ranged`
    (or as it stands)."""
    rows: list[Row] = []
    for kind, run in _runs(events):
        if kind is None:
            event = run[0]
            if isinstance(event.get("sourceEventSeqs"), list) and rng.random() < 0.7:
                event = {**event, "sourceEventSeqs": ranged(event["sourceEventSeqs"], rng)}
            rows.append(event)
            continue
        at = 0
        while at < len(run):
            size = rng.randint(1, len(run) - at)
            piece = run[at : at + size]
            rows.extend([_packed_row(kind, piece)] if rng.random() < 0.8 else piece)
            at += size
    return rows


def _places(value: object, at: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], object]]:
    yield at, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _places(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:3]):
            yield from _places(item, (*at, index))


def _set(value: Any, at: tuple[str | int, ...], new: object, drop: bool = False) -> Any:
    out = copy.deepcopy(value)
    target = out
    for step in at[:-1]:
        target = target[step]
    if drop:
        del target[at[-1]]
    else:
        target[at[-1]] = new
    return out


def row_faults(row: Row) -> list[tuple[str, Row]]:
    """``row`` (a packed row, or an event row whose provenance is ranged) broken at every place: each
    member dropped, given every other JSON type and ``null``, a number moved to ``-1``, ``0``, the
    largest safe integer and past it, a list emptied or grown by a copy of its last item, a string
    emptied, an undeclared member added to each object."""
    found: list[tuple[str, Row]] = []
    for at, value in _places(row):
        if not at:
            continue
        name = ".".join(map(str, at))
        if isinstance(value, dict):
            found.append((f"{name} undeclared member", _set(row, (*at, "extra"), 1)))
        found.append((f"{name} dropped", _set(row, at, None, drop=True)))
        found += [(f"{name} as {other!r}", _set(row, at, other)) for other in RETYPED if type(other) is not type(value)]
        if isinstance(value, int) and not isinstance(value, bool):
            found += [(f"{name} {n}", _set(row, at, n)) for n in (-1, 0, MAX_SAFE_INTEGER, MAX_SAFE_INTEGER + 1)]
        if isinstance(value, list):
            found.append((f"{name} emptied", _set(row, at, [])))
            if value:
                found.append((f"{name} grown", _set(row, at, [*value, copy.deepcopy(value[-1])])))
        if isinstance(value, str):
            found.append((f"{name} empty", _set(row, at, "")))
    found.append(("undeclared member", {**row, "extra": 1}))
    return found


def laid_out_rows(rows: Sequence[Row]) -> list[int]:
    """The indices of the rows a layout wrote in a form the plain writer does not: packed rows and
    rows whose provenance holds a range."""
    return [
        i
        for i, row in enumerate(rows)
        if row.get("type") in PACKED_ROW_CHUNKS or any(isinstance(s, list) for s in row.get("sourceEventSeqs") or ())
    ]


CHUNK_KINDS: Final = ("text-delta", "reasoning-delta", "tool-call-delta", "tool-call-delta named")


def chunk_run(turn: object, step: object, seq: int, time: int, rng: random.Random) -> list[RawEvent]:
    """One to five ``assistant/chunk`` events from ``seq`` on, of one drawn kind (a tool call's delta
    with and without its name), one index: a run every layout can pack."""
    kind = rng.choice(CHUNK_KINDS)
    index = rng.choice((0, 1, 7))
    run: list[RawEvent] = []
    for k in range(rng.randint(1, 5)):
        if kind.startswith("tool-call-delta"):
            chunk: dict[str, object] = {
                "type": "tool-call-delta",
                "index": index,
                "id": "call-run",
                "argumentsDelta": "{}"[k % 2 :],
            }
            if kind.endswith("named"):
                chunk = {**chunk, "name": "read_file"}
        else:
            chunk = {"type": kind, "index": index, "text": rng.choice(("", "a", "é", " "))}
        run.append(
            {
                "type": "assistant/chunk",
                "seq": seq + k,
                "time": time + rng.choice((0, 1, -1, 5)) * k,
                "data": {"turn": turn, "step": step, "chunk": chunk},
            }
        )
    return run
