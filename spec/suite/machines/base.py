"""What every conformance state machine shares: the oracle, the port, exchanges and step counting.

A machine sends each request to two places, the model (a fresh in-process
:class:`~sessionlog_spec.suite.oracle.Oracle`, the model driver with a memory) and the port under test, and raises
:class:`Disagreement` as soon as the port's answer differs.  Every request is kept in the
machine's transcript, so the minimal failing example Hypothesis shrinks to becomes a replayable
counterexample file.
"""

from __future__ import annotations

import functools
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Concatenate, ParamSpec, TypeVar

from hypothesis import event, target
from hypothesis.control import currently_in_test_context
from hypothesis.stateful import RuleBasedStateMachine

from sessionlog_spec.model.event import Event
from sessionlog_spec.model.payloads import payload_reaches_opaque
from sessionlog_spec.model.session import SessionState
from sessionlog_spec.protocol.messages import Ok, Port, PortFault, Refused, Reply
from sessionlog_spec.suite.agreement import Mismatch, compare
from sessionlog_spec.suite.cells import cell_key, refusal_cells
from sessionlog_spec.suite.coverage import GroupCoverage
from sessionlog_spec.suite.determinism import AnswerMemory, RequestChain
from sessionlog_spec.suite.exchange import Exchange
from sessionlog_spec.suite.oracle import Oracle
from sessionlog_spec.suite.ports.inprocess import InProcessPort
from sessionlog_spec.suite.rule_table import GROUP_OBSERVES, step_invariants


@dataclass
class MachineContext:
    """One group's run: the port, how strictly to judge it, and where to count."""

    group: str
    port: Port
    capabilities: frozenset[str]
    strict_codes: bool = True
    coverage: GroupCoverage = field(default_factory=lambda: GroupCoverage(""))
    on_example: Callable[[], None] | None = None
    needs_restart: bool = False
    """Set after a port fault: the next example restarts the driver before using it."""
    answers: AnswerMemory = field(default_factory=AnswerMemory)
    """The port's answers so far, to tell a nondeterministic port from a failing one."""
    first_disagreement: Disagreement | None = None
    """The first disagreement seen, kept for a run whose replay then takes another path."""
    first_disagreement_at: float | None = None
    """When (``time.monotonic()``) it was seen: what follows is shrinking and minimising."""

    def supports(self, group: str) -> bool:
        """Whether the port declared ``group`` in ``hello``."""
        return group in self.capabilities


class Disagreement(AssertionError):
    """The port disagreed with the model: the transcript up to and including the failing exchange."""

    def __init__(
        self,
        group: str,
        mismatch: Mismatch,
        transcript: list[Exchange],
        *,
        rule: str | None,
        invariants: list[str],
        codes: list[str],
    ) -> None:
        super().__init__(f"[{group}] {mismatch.kind}: {mismatch.message}")
        self.group = group
        self.mismatch = mismatch
        self.transcript = transcript
        self.rule = rule
        self.invariants = invariants
        self.codes = codes

    def __reduce__(self) -> tuple[Callable[..., Disagreement], tuple[Any, ...], dict[str, Any]]:
        """Pickled with its own arguments (and its notes), so a job process (``--jobs``) can return it."""
        kind = None if type(self) is Disagreement else type(self).__name__.removeprefix("Disagreement[").removesuffix("]")
        return _disagreement, (kind, self.group, self.mismatch, self.transcript, self.rule), self.__dict__

    @property
    def op(self) -> str:
        """The op of the failing exchange."""
        return self.transcript[-1].op if self.transcript else "hello"

    @property
    def case_id(self) -> str:
        """A stable name for this kind of failure: group, op and mismatch kind."""
        return f"{self.group}/{self.op}/{self.mismatch.kind}"


def _disagreement(kind: str | None, group: str, mismatch: Mismatch, transcript: list[Exchange], rule: str | None) -> Disagreement:
    """A :class:`Disagreement` (of :func:`disagreement_type` ``kind``) rebuilt from a pickle; its lists and notes
    come back with its state."""
    cls = Disagreement if kind is None else disagreement_type(kind)
    return cls(group, mismatch, transcript, rule=rule, invariants=[], codes=[])


Exercised = Callable[[Any], Iterable[str]]


_OPAQUE: OrderedDict[int, tuple[Event, bool]] = OrderedDict()
"""Whether an event keeps an opaque part, by the (frozen) event, which the entry holds so that its
identity is not reused: the session memory (:mod:`~sessionlog_spec.suite.judged`) gives an event
judged again the same object."""
OPAQUE_KEPT = 65_536


def _reaches_opaque(event: Event) -> bool:
    known = _OPAQUE.get(id(event))
    if known is None or known[0] is not event:
        known = _OPAQUE[id(event)] = (event, payload_reaches_opaque(event.type, event.data))
        if len(_OPAQUE) > OPAQUE_KEPT:
            _OPAQUE.popitem(last=False)
    return known[1]


def _keeps_opaque_parts(op: str, accepted: SessionState) -> bool:
    """Whether an accepted ``append``/``seed`` carried a value the log keeps without inspecting it
    (INV-PAY-3): a port that looks inside one refuses what the model accepts, or stores it changed.
    ``accepted`` is the session the model made of it: the events appended are its last one, the
    events seeded all of them (the end-of-seed marker it adds keeps nothing)."""
    events = accepted.events[-1:] if op == "append" else accepted.events
    return any(_reaches_opaque(event) for event in events)
"""What an accepted result shows was exercised (for example, closers mean an open turn was repaired)."""
_KINDS: dict[str, type[Disagreement]] = {}


def disagreement_type(case_id: str) -> type[Disagreement]:
    """A subclass of :class:`Disagreement` per case id.

    Hypothesis tells failures apart by exception type and place; one type per case id makes it
    find, shrink and report each kind of disagreement separately, so an expected failure does not
    hide a different one in the same group.
    """
    if case_id not in _KINDS:
        _KINDS[case_id] = type(f"Disagreement[{case_id}]", (Disagreement,), {"__module__": __name__})
    return _KINDS[case_id]


M = TypeVar("M", bound="ConformanceMachine")
P = ParamSpec("P")


def step(function: Callable[Concatenate[M, P], None]) -> Callable[Concatenate[M, P], None]:
    """Mark a rule as a step: its exchanges are tagged with the rule's invariants and counted."""

    @functools.wraps(function)
    def run(self: M, /, *args: P.args, **kwargs: P.kwargs) -> None:
        self._begin_step(function.__name__)
        try:
            function(self, *args, **kwargs)
        finally:
            self._end_step()

    return run


class ConformanceMachine(RuleBasedStateMachine):
    """A state machine that checks one capability group of a port against the model."""

    group = ""

    def __init__(self, context: MachineContext) -> None:
        super().__init__()
        self.ctx = context
        self.oracle = Oracle()
        self.oracle_port = InProcessPort(self.oracle)
        self.transcript: list[Exchange] = []
        self.requests = RequestChain()
        self.failed = False
        self._rule: str | None = None
        self._step_ops: list[str] = []
        self._step_codes: list[str] = []
        self._step_tags: set[str] = set()
        self._reported: set[str] = set()
        self.steps_taken = 0
        context.coverage.examples += 1
        if context.on_example is not None:
            context.on_example()
        if context.needs_restart:
            self._restart_port()

    # -- the port and the oracle ------------------------------------------------------------------

    def _restart_port(self) -> None:
        restart = getattr(self.ctx.port, "restart", None)
        if restart is None:
            self.ctx.needs_restart = False
            return
        try:
            restart()
        except PortFault as fault:
            self.failed = True
            raise Disagreement(self.group, Mismatch("port-fault", str(fault)), [], rule=None, invariants=[], codes=[]) from fault
        self.ctx.needs_restart = False

    def exchange(self, op: str, /, exercised: Exercised | None = None, **args: Any) -> Reply:
        """Send one request to the oracle and the port; return the oracle's reply if they agree.

        ``exercised`` names the invariants the model's accepted result shows were in play; they are
        tagged before the port's answer is judged, so a failure names them too.
        """
        expected = self.oracle_port.call(op, **args)
        self._step_ops.append(op)
        if isinstance(expected, Refused):
            self._step_codes.append(expected.code)
        else:
            if exercised is not None:
                self.tag(*exercised(expected.result))
            if op in ("append", "seed") and "PAY" in GROUP_OBSERVES[self.group] and _keeps_opaque_parts(op, self.oracle.state):
                self.tag("INV-PAY-3")
        try:
            actual = self.ctx.port.call(op, **args)
        except PortFault as fault:
            self.ctx.needs_restart = True
            self.transcript.append(Exchange(op, args, expected, fault))
            raise self._disagreement(Mismatch("port-fault", str(fault))) from None
        self.ctx.coverage.requests += 1
        self.transcript.append(Exchange(op, args, expected, actual))
        self.ctx.answers.observe(self.requests, op, args, actual)
        mismatch = compare(op, expected, actual, self.ctx.strict_codes, header_observed=self.ctx.supports("header"))
        if mismatch is not None:
            raise self._disagreement(mismatch)
        if isinstance(expected, Refused):
            self.ctx.coverage.cells.update(cell_key(c) for c in refusal_cells(op, args, expected.code, expected.message))
        return expected

    def exchange_ok(self, op: str, /, exercised: Exercised | None = None, **args: Any) -> Any:
        """:meth:`exchange` for a request the model accepts; returns its result."""
        reply = self.exchange(op, exercised, **args)
        assert isinstance(reply, Ok), f"the model refused a request the machine built as valid: {op} {reply}"
        return reply.result

    def _disagreement(self, mismatch: Mismatch) -> Disagreement:
        self.failed = True
        tags = step_invariants(self.group, self._rule, self._step_ops, self._step_codes) | self._step_tags
        codes = sorted(set(self._step_codes))
        op = self.transcript[-1].op if self.transcript else "hello"
        kind = disagreement_type(f"{self.group}/{op}/{mismatch.kind}")
        found = kind(self.group, mismatch, list(self.transcript), rule=self._rule, invariants=sorted(tags), codes=codes)
        if self.ctx.first_disagreement is None:
            self.ctx.first_disagreement, self.ctx.first_disagreement_at = found, time.monotonic()
        return found

    # -- steps and coverage -------------------------------------------------------------------------

    def _begin_step(self, rule: str) -> None:
        """Start counting the exchanges of one rule."""
        self._rule, self._step_ops, self._step_codes, self._step_tags = rule, [], [], set()

    def retitle(self, rule: str) -> None:
        """Close the current step and go on under another name (one rule may take several steps)."""
        self._end_step()
        self._begin_step(rule)

    def tag(self, *invariants: str) -> None:
        """Record invariants the current step exercised beyond its rule's (seen only in the oracle's answer)."""
        self._step_tags.update(invariants)

    def _end_step(self) -> None:
        """Count the rule as a step if it asked the port anything, and tag what it exercised."""
        rule, ops, codes, extra = self._rule, self._step_ops, self._step_codes, self._step_tags
        self._rule, self._step_ops, self._step_codes, self._step_tags = None, [], [], set()
        if rule is None or not ops:
            return
        tags = step_invariants(self.group, rule, ops, codes) | extra
        self.steps_taken += 1
        self.ctx.coverage.record_step(rule, tags, codes)
        if currently_in_test_context():
            for label in (f"rule {rule}", *(f"code {c}" for c in codes), *(f"invariant {t}" for t in tags)):
                if label not in self._reported:
                    self._reported.add(label)
                    event(label)

    def closing_check(self) -> None:
        """Ask the port once about what the example built; run when no step asked it anything.

        A group whose loop builds the session on the model alone (``read``, ``legacy``) asks the
        port only in its checking rules, and an example may draw none of them: Hypothesis's first
        example of every run is one.  Such an example would check nothing, and a run of a few of
        them would be void by chance.  The default asks nothing: a group whose every step asks the
        port has no such example.
        """

    def teardown(self) -> None:
        """Close an example that asked the port nothing with its closing check; steer the search
        towards examples that exercise more invariants."""
        if not self.failed and self.steps_taken == 0:
            self._begin_step("closing_check")
            try:
                self.closing_check()
            finally:
                self._end_step()
        if currently_in_test_context():
            exercised = sum(1 for label in self._reported if label.startswith("invariant"))
            target(float(exercised), label="invariants exercised")
