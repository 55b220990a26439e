"""The suite's oracle: the model driver, remembering the logs it has already validated.

The state machines ask whole-log ops (``cuts``, ``repair``, ``header_decision``) about a log that
grows by one event per step, so validating it from seq 0 every time makes an example quadratic.
:class:`Oracle` answers exactly as :class:`~sessionlog_spec.protocol.model_driver.ModelDriver` does, but keeps the
session state after every prefix it validated, keyed by the identity of the raw event objects, and
only validates what is new.  (The subprocess model driver, which has no such memory, must agree
with it on every group: the suite's own tests check that.)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

from sessionlog_spec.model.event import Event, decode_event
from sessionlog_spec.model.relationships import relationship_finish
from sessionlog_spec.model.session import EMPTY_SESSION, SessionState
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.protocol.model_driver import BadRequest, ModelDriver
from sessionlog_spec.suite.judged import appended, decoded, folded, saved, upgraded

S = TypeVar("S")


class PrefixFold(Generic[S]):
    """A left fold over raw events that remembers its value after every prefix, by event identity."""

    def __init__(self, initial: S, step: Callable[[S, object], S | Violation]) -> None:
        self._step = step
        self._raws: list[object] = []
        self._values: list[S] = [initial]

    def __call__(self, raws: Any) -> S | Violation:
        """The fold of ``raws``, or the first violation naming its index."""
        if not isinstance(raws, list):
            raise BadRequest("events must be an array")
        known = 0
        limit = min(len(raws), len(self._raws))
        while known < limit and raws[known] is self._raws[known]:
            known += 1
        del self._raws[known:]
        del self._values[known + 1 :]
        value = self._values[known]
        for index in range(known, len(raws)):
            following = self._step(value, raws[index])
            if isinstance(following, Violation):
                return following.at(f"index {index}")
            self._raws.append(raws[index])
            self._values.append(following)
            value = following
        return value


def _decoded(events: tuple[Event, ...], raw: object) -> tuple[Event, ...] | Violation:
    event = decode_event(raw)
    return event if isinstance(event, Violation) else (*events, event)


class Oracle(ModelDriver):
    """:class:`ModelDriver` with incremental validation and decoding of whole-log requests.

    Only the hooks differ; every op is the model driver's own.  Events are appended, logs
    validated, stored texts read and written and v0 logs upgraded through
    :mod:`~sessionlog_spec.suite.judged`, which remembers the model's answers: the builder, the
    scenes and the earlier requests judged most of them already.
    """

    append = staticmethod(appended)
    fold = staticmethod(folded)
    decode = staticmethod(decoded)
    upgrade = staticmethod(upgraded)
    save = staticmethod(saved)

    def __init__(self) -> None:
        super().__init__()
        self.validated = PrefixFold(EMPTY_SESSION, appended)
        self.decoded: PrefixFold[tuple[Event, ...]] = PrefixFold((), _decoded)

    def events_of(self, raws: Any) -> tuple[Event, ...] | Violation:
        return self.decoded(raws)

    # The oracle only answers: the store on disk is the port's.  It reads the port's file on
    # ``store_open`` (before the port does) and never writes.

    def persist(self, directory: Path) -> None:
        """Nothing: the oracle writes no file."""

    def prepare(self, directory: Path) -> None:
        """Nothing: the port makes the directory."""

    def session_of(self, raws: Any) -> SessionState | Violation:
        # Appending never judges the log as a whole (a later end-of-seed marker may still retire a
        # compaction that crossed a turn); a whole log is judged at its end, as fold_session does.
        state = self.validated(raws)
        if isinstance(state, Violation):
            return state
        unfinished = relationship_finish(state.relations)
        return state if unfinished is None else unfinished.at(f"index {len(raws) - 1}")
