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
from typing import Any, Generic, TypeVar

from sessionlog_spec.model.compaction import balanced_around, cut_balances
from sessionlog_spec.model.event import Event, decode_event, encode_event
from sessionlog_spec.model.header import InstanceFacts, decide_request_header, fold_request_header, header_shape_problem
from sessionlog_spec.model.json_value import as_object, freeze, thaw
from sessionlog_spec.model.repair import interrupted_turn_closers
from sessionlog_spec.model.session import EMPTY_SESSION, append_event
from sessionlog_spec.model.surface import fold_surface
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.protocol.model_driver import BadRequest, ModelDriver

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
    """:class:`ModelDriver` with incremental validation and decoding of whole-log requests."""

    def __init__(self) -> None:
        super().__init__()
        self.validated = PrefixFold(EMPTY_SESSION, append_event)
        self.decoded: PrefixFold[tuple[Event, ...]] = PrefixFold((), _decoded)

    def op_fold_surface(self, request: dict[str, Any]) -> Any:
        events = self.decoded(request["events"])
        if isinstance(events, Violation):
            return events
        folded = fold_surface(events)
        if isinstance(folded, Violation):
            return folded
        return {
            "nodes": list(folded.surface.nodes),
            "replace_generation": folded.surface.replace_generation,
            "replacements": [
                {"seq": r.seq, "start": r.start, "end": r.end, "shadowed": list(r.shadowed)} for r in folded.replacements
            ],
        }

    def op_fold_header(self, request: dict[str, Any]) -> Any:
        events = self.decoded(request["events"])
        if isinstance(events, Violation):
            return events
        header = fold_request_header(events)
        return {"header": None if header is None else thaw(header)}

    def op_header_decision(self, request: dict[str, Any]) -> Any:
        state = self.validated(request["events"])
        if isinstance(state, Violation):
            return state
        header = freeze(request["header"])
        problem = header_shape_problem(header)
        if problem is not None:
            return problem
        assembled = as_object(header)
        if assembled is None:
            raise BadRequest("header must be an object")
        facts = request["instance"]
        decision = decide_request_header(
            state.header,
            assembled,
            InstanceFacts(bool(facts["first_request"]), bool(facts["begins_series"]), bool(facts["replaced_since_last_request"])),
        )
        if decision is None:
            return {"decision": None}
        return {"decision": {"reason": decision.reason.value, "startsSeries": decision.starts_series}}

    def op_repair(self, request: dict[str, Any]) -> Any:
        state = self.validated(request["events"])
        if isinstance(state, Violation):
            return state
        return {"closers": [encode_event(e) for e in interrupted_turn_closers(state.events)]}

    def op_cuts(self, request: dict[str, Any]) -> Any:
        state = self.validated(request["events"])
        if isinstance(state, Violation):
            return state
        balanced = cut_balances(state.surface.nodes, state.events)
        if isinstance(balanced, Violation):
            return balanced
        result: dict[str, Any] = {"nodes": list(state.surface.nodes), "balanced": list(balanced)}
        if "seq" in request:
            around = balanced_around(state.surface.nodes, state.events, request["seq"])
            if isinstance(around, Violation):
                return around
            result["around"] = list(around)
        return result
