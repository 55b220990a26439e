"""Every variant of a candidate: its builder run along each path of the choices it makes.

A candidate builder takes a :class:`random.Random` and makes a handful of choices with it: which
event type, which member, which spelling of a bad value, which of the open calls. Drawn at random,
one variant of a builder with nine is sent a ninth of the times the builder is, and a port that
mishandles that variant alone passes most runs. :func:`variants` instead runs the builder with a
:class:`Scripted` generator that answers each choice as a script says, and walks the tree of scripts
by how many choices they change: the first option everywhere, then each other option at each choice
alone, then pairs of them. A choice among many (an id suffix drawn from a thousand) is tried at a
few of its options only, and a draw of ``random()`` (always compared against a probability) at 0 and
just below 1. The walk is deterministic: the same builder on the same session gives the same
variants, so an example replays.
"""

from __future__ import annotations

import json
import random
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

_Builder = TypeVar("_Builder")

UNIT_ENDS = (0.0, 1.0 - 2.0**-53)
"""The values a scripted ``random()`` takes: below and above every probability a builder compares with."""


class Scripted(random.Random):
    """A generator whose choices follow ``script`` (option indexes), then take option 0; it records
    how many options each choice had."""

    def __init__(self, script: list[int]) -> None:
        super().__init__(0)
        self.script = script
        self.arities: list[int] = []
        self.taken: list[int] = []

    def _next(self, arity: int) -> int:
        at = len(self.arities)
        option = min(self.script[at], arity - 1) if at < len(self.script) else 0
        self.arities.append(arity)
        self.taken.append(option)
        return option

    def _randbelow(self, n: int) -> int:  # choice, randrange, shuffle, sample
        return self._next(n)

    def random(self) -> float:
        return UNIT_ENDS[self._next(len(UNIT_ENDS))]


BRANCHING_CHOICES = 24
"""How many of a builder's first choices the walk changes; later ones keep their first option."""
FEW = 8
"""A choice among at most this many options is tried at every option; among more, at a few."""


def _others(arity: int) -> list[int]:
    """The options besides the first tried at a choice among ``arity``: all of a few; of many (an id
    suffix drawn from a thousand) the second, the third and the last."""
    return list(range(1, arity)) if arity <= FEW else sorted({1, 2, arity - 1})


def variants(
    build: Callable[[_Builder, random.Random], object], builder: _Builder, limit: int = 16, runs: int = 48
) -> Iterator[Any]:
    """The distinct candidates ``build`` makes on ``builder`` along the paths of its choices, at most
    ``limit`` of them from at most ``runs`` runs (``None`` results skipped).

    Paths are taken by how many choices they change from the first option: none, then each single
    change, then each pair, …  So every option of every choice is tried (on its own) before any two
    are combined, whichever choice decides what the fault is."""
    queue: deque[list[int]] = deque([[]])
    seen: set[str] = set()
    while queue and runs > 0 and len(seen) < limit:
        runs -= 1
        script = queue.popleft()
        rng = Scripted(script)
        value = build(builder, rng)
        # One more change, after the script's last one (so each set of changes is walked once), at
        # one of the first choices only: a builder may make thousands (one per level of a deeply
        # nested value), and the choices that pick the fault come first.
        for at in range(len(script), min(len(rng.arities), BRANCHING_CHOICES)):
            queue.extend([*rng.taken[:at], option] for option in _others(rng.arities[at]))
        if value is None:
            continue
        key = json.dumps(value, sort_keys=True, default=repr)
        if key not in seen:
            seen.add(key)
            yield value
