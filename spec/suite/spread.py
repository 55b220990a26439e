"""Choices of a kind spread over a run: which fault, which probe, which note, which damage.

A rule that draws the kind of thing it sends with ``st.sampled_from`` gets what Hypothesis gives
it, and within one run that is lumpy.  Most examples are mutations of earlier ones, so a choice
sequence that picked one kind is copied again and again: one ``ci`` run of the header group sent
114 malformed headers and not one with a malformed system prompt, although that was one kind in
eight.  A port that mishandles a kind alone then passes whole runs.

:func:`spread` still draws (so an example replays, and Hypothesis may shrink the draw), but it
mixes the drawn number with the session built so far: two examples that copied the same number
rarely share their whole log, so they pick independently.  The choice is a function of the
example's own choices, never of earlier examples, which Hypothesis would refuse as flaky.

The values an event holds are picked the same way (:func:`choose`): the text of a prompt, the tool
an assistant asks for, why a turn ended, which note (:class:`KeyedDraw` says how the session
reaches them).  Two examples that copied a whole prefix of choices still build the same events:
spreading decorrelates copied draws, not copied sessions, which is why a run has Hypothesis
generate every example afresh (:func:`~sessionlog_spec.suite.profiles.fresh_examples`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import TypeVar, cast

from hypothesis import strategies as st
from hypothesis.strategies import DrawFn

T = TypeVar("T")

_SALTS = st.integers(0, 2**32 - 1)


def spread(draw: DrawFn, options: Sequence[T], key: object, label: str) -> T:
    """One of ``options``, chosen by a drawn number mixed with ``key`` (the session so far)."""
    if not options:
        raise ValueError(f"nothing to choose for {label}")
    salt: int = draw(_SALTS, label=label)
    digest = hashlib.blake2b(json.dumps(key, sort_keys=True, default=repr).encode(), digest_size=8)
    digest.update(salt.to_bytes(4, "little"))
    return options[int.from_bytes(digest.digest(), "little") % len(options)]


class KeyedDraw:
    """A draw function that knows the session it draws for, so :func:`choose` can spread over it.

    Values an event holds (its text, its tool, its note, its reason) are drawn deep inside the
    makers of :mod:`~sessionlog_spec.suite.agent.actions`, which see only a draw function.  Wrapping
    the draw carries the key there without threading the session through every maker.
    """

    def __init__(self, draw: DrawFn, key: object) -> None:
        self.draw: DrawFn = draw.draw if isinstance(draw, KeyedDraw) else draw
        self.key = key

    def __call__(self, strategy: st.SearchStrategy[T], label: object = None) -> T:
        return self.draw(strategy, label=label)


def keyed_draw(draw: DrawFn, key: object) -> DrawFn:
    """``draw``, knowing that it draws for the session ``key``."""
    return cast(DrawFn, KeyedDraw(draw, key))


def choose(draw: DrawFn, options: Sequence[T], label: str) -> T:
    """One of ``options``: spread over the session when ``draw`` knows it (:class:`KeyedDraw`),
    drawn plainly otherwise."""
    if isinstance(draw, KeyedDraw):
        return spread(draw.draw, options, draw.key, label)
    return draw(st.sampled_from(options))
