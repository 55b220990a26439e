"""Everything the suite generates on a valid path is valid by the released upstream rules.

Samples the suite's generators of valid sessions (the agent loop with the suite's values, the
conformance machines run against the model, the vector drafts, crash repair, the valid parts of
the invalid candidates; see :mod:`released_oracle.check_generated`) and asks the published
``@deepseek-ai/dsh-session-format-v0-to-v1`` package (``tools/released_oracle/oracle.mjs``) about
every event's payload and every log's relationships; v0 logs go through upstream's own edge.
Skipped when ``node`` or ``ports/dsh-format/node_modules`` is missing (run
``cd ports/dsh-format && npm ci``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from released_oracle.check_generated import (
    Budget,
    GeneratedLog,
    ReleasedOracle,
    Report,
    collect,
    judge,
    unavailable_reason,
)

from sessionlog_spec.model.event import KNOWN_EVENT_TYPES
from sessionlog_spec.suite.agent.actions import LOG_ONLY_TYPES, TURN_ONLY_TYPES

UNAVAILABLE = unavailable_reason()
pytestmark = pytest.mark.skipif(UNAVAILABLE is not None, reason=f"the released oracle cannot run: {UNAVAILABLE}")

BUDGET = Budget(loop_examples=60, loop_steps=60, repair_cuts=3, machine_examples=4, machine_steps=25, acp=False)
"""Enough to reach every note type through the loop alone, small enough for a few seconds."""


@dataclass
class Checked:
    """What was sampled and what upstream said about it."""

    logs: list[GeneratedLog]
    report: Report
    oracle: ReleasedOracle


@pytest.fixture(scope="module")
def checked() -> Iterator[Checked]:
    logs, probes = collect(BUDGET)
    with ReleasedOracle() as oracle:
        yield Checked(logs, judge(oracle, logs, probes), oracle)


def test_upstream_accepts_every_generated_payload(checked: Checked) -> None:
    report = checked.report
    assert not report.refused, "\n".join(report.problems())


def test_upstream_accepts_every_generated_log(checked: Checked) -> None:
    report = checked.report
    assert not report.log_refusals, "\n".join(report.problems())


def test_invalid_candidates_are_built_from_valid_parts(checked: Checked) -> None:
    report = checked.report
    assert sum(report.probes.values()) > 1000
    assert not report.probe_refusals, "\n".join(report.problems())


def test_the_samples_reach_every_released_type(checked: Checked) -> None:
    assert set(checked.report.events) == KNOWN_EVENT_TYPES
    assert checked.oracle.types == KNOWN_EVENT_TYPES


def test_the_agent_loop_alone_writes_every_note_type(checked: Checked) -> None:
    written = {str(e["type"]) for log in checked.logs if log.source == "loop" for e in log.events}
    assert {*LOG_ONLY_TYPES, *TURN_ONLY_TYPES} <= written


def test_every_kind_of_generator_was_sampled(checked: Checked) -> None:
    sources = {log.source.split(":")[0].split("/")[0] for log in checked.logs}
    assert {"loop", "repair", "machine", "draft"} <= sources
    assert any(log.source.endswith("/v0") for log in checked.logs), "no v0 log went to upstream's edge"


def test_the_oracle_is_not_vacuous(checked: Checked) -> None:
    free_form = {"type": "session/title", "seq": 0, "time": 0, "data": {"title": "Untitled"}}
    assert checked.oracle.payloads([free_form]) == [
        {"ok": False, "stage": "payload", "message": 'session/title 0 data lacks required member "messageSeqs"', "seq": 0}
    ]
    crossing = GeneratedLog(
        "probe",
        (
            {"type": "compaction/start", "seq": 0, "time": 0, "data": {"compactionId": "c-1", "turn": None}},
            {"type": "turn/start", "seq": 1, "time": 0, "data": {"turn": 1}},
        ),
    )
    [reply] = checked.oracle.artifacts([crossing])
    assert reply["stage"] == "relationships" and "crosses an open compaction" in reply["message"]
