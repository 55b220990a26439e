"""An inject step that begins with a machine's own codes submits every rule written for each code."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from sessionlog_spec.model.violation import Code
from sessionlog_spec.suite.agent.builder import realistic_session
from sessionlog_spec.suite.coverage import GroupCoverage
from sessionlog_spec.suite.machines import MachineContext
from sessionlog_spec.suite.machines.jsonl import JsonlMachine
from sessionlog_spec.suite.oracle import Oracle
from sessionlog_spec.suite.ports.inprocess import InProcessPort


class _Counting(JsonlMachine):
    """The jsonl machine, counting what it submits instead of loading it."""

    def __init__(self, context: MachineContext) -> None:
        super().__init__(context)
        self.sent: Counter[str] = Counter()

    def submit(self, mutation: Any, candidate: Any) -> None:
        self.sent[mutation.name] += 1


def _machine() -> _Counting:
    port = InProcessPort(Oracle())
    machine = _Counting(MachineContext("jsonl", port, frozenset(port.hello.capabilities), coverage=GroupCoverage("jsonl")))
    machine.take_over(realistic_session(2).state)
    return machine


def test_an_own_code_first_submits_every_candidate_written_for_it() -> None:
    # A malformed line is a byte-order mark, a torn header, a torn or unparsable row, range
    # provenance out of order: one code, several rules of the path, each its own candidate.
    machine = _machine()
    code = Code.JSONL_MALFORMED_LINE
    written = [m for m in machine.injections if m.code is code and m.lifted_from is None]
    assert len(written) >= 3
    machine.inject_some(random.Random(0), 1, first=frozenset({code}))
    assert set(machine.sent) <= {m.name for m in written}, machine.sent
    assert len(machine.sent) >= 3 and set(machine.sent.values()) == {1}, machine.sent


def test_a_code_not_first_submits_one_candidate() -> None:
    machine = _machine()
    machine.inject_some(random.Random(0), 3)
    assert sum(machine.sent.values()) == 3
