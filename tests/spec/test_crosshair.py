"""CrossHair can fail: on deliberately broken copies of contracted functions it finds a counterexample.

``make crosshair`` (``python -m sessionlog_spec.crosshair_check``) passes when CrossHair finds nothing; these
tests show that "nothing" means something.  Each broken copy carries the same contract as the
function it copies, with one rule left out of the body, and CrossHair (run in-process, icontract
contracts only, a few seconds per condition) must report the postcondition it breaks, with the
counterexample.  The intact functions pass the same analysis.
"""

from __future__ import annotations

import importlib
import importlib.util
import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import icontract
import pytest

from sessionlog_spec.contracts import crosshair_targets, surface
from sessionlog_spec.contracts._support import accepted
from sessionlog_spec.model import surface as _surface
from sessionlog_spec.model.header import HeaderDecision, InstanceFacts, Reason, header_equals
from sessionlog_spec.model.json_value import JsonObject
from sessionlog_spec.model.violation import Code, Violation

ALLOW_MISSING = "SESSIONLOG_ALLOW_MISSING_CROSSHAIR"
if importlib.util.find_spec("crosshair") is None:  # pragma: no cover - CrossHair is a dev dependency
    if os.environ.get(ALLOW_MISSING) == "1":
        pytest.skip(f"CrossHair is not installed ({ALLOW_MISSING}=1)", allow_module_level=True)
    raise ImportError("CrossHair is not installed")

# CrossHair is imported only in the analysing child process: importing it switches icontract's
# precondition checks off in the importing process, which would blind every other test of the worker.
SEARCH = 8.0
"""Per-condition budget for the broken copies: CrossHair stops at the first counterexample (well under a second)."""
CONTROL = 2.0
"""Per-condition budget for the intact functions: a short search that must come back clean."""


class MessageType:
    """CrossHair's verdict names (``crosshair.statespace.MessageType`` member names)."""

    CONFIRMED = "CONFIRMED"
    CANNOT_CONFIRM = "CANNOT_CONFIRM"
    POST_FAIL = "POST_FAIL"
    EXEC_ERR = "EXEC_ERR"
    POST_ERR = "POST_ERR"


@dataclass(frozen=True)
class Message:
    """What CrossHair said about one condition: its verdict and its text."""

    state: Any
    message: str


def _analyse_here(module: str, name: str, budget: float) -> list[Message]:
    import crosshair.core_and_libs as crosshair  # noqa: PLC0415 - see the note on SEARCH
    from crosshair.options import AnalysisKind, AnalysisOptionSet  # noqa: PLC0415

    options = AnalysisOptionSet(analysis_kind=[AnalysisKind.icontract], per_condition_timeout=budget)
    function = getattr(importlib.import_module(module), name)
    checkables = crosshair.run_checkables(crosshair.analyze_function(function, options))
    return [Message(m.state.name, m.message) for m in checkables]


def analyse(function: Callable[..., Any], options: float = CONTROL) -> list[Message]:
    """CrossHair's messages about ``function`` (one verdict per postcondition, or a counterexample).

    The analysis runs in a fresh process: CrossHair patches builtins and icontract's checkers while
    it searches, and those patches must not leak into the other tests of this worker.
    """
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(_analyse_here, function.__module__, function.__name__, options).result()


def counterexamples(function: Callable[..., Any], options: float = SEARCH) -> list[str]:
    failures = (MessageType.POST_FAIL, MessageType.EXEC_ERR, MessageType.POST_ERR)
    return [m.message for m in analyse(function, options) if m.state in failures]


# -- INV-SURF-4: a copy of replacement_range that forgets the start ≤ end check -------------------


@icontract.require(lambda start, end: start >= 0 and end >= 0, "range endpoints are seqs")
@icontract.ensure(
    lambda nodes, start, end, result: (
        not accepted(result) or (nodes[result[0]] == start and nodes[result[1]] == end and result[0] <= result[1])
    ),
    "INV-SURF-4",
)
def broken_replacement_range(nodes: tuple[int, ...], start: int, end: int) -> tuple[int, int] | Violation:
    """:func:`sessionlog_spec.model.surface.replacement_range` without the inverted-range refusal."""
    if start not in nodes:
        return Violation(Code.REPLACE_START_NOT_ON_SURFACE, "start not on the surface")
    if end not in nodes:
        return Violation(Code.REPLACE_END_NOT_ON_SURFACE, "end not on the surface")
    return nodes.index(start), nodes.index(end)


def test_inv_surf_4_crosshair_finds_broken_range_check() -> None:
    found = counterexamples(broken_replacement_range)
    assert found, "CrossHair found no counterexample in a replacement_range that accepts inverted ranges"
    assert any("broken_replacement_range(" in message for message in found), found


def test_inv_surf_4_crosshair_passes_the_real_range_check() -> None:
    messages = analyse(surface.replacement_range)
    assert [m.state for m in messages] in ([MessageType.CONFIRMED], [MessageType.CANNOT_CONFIRM])
    # And the model function behind it does refuse what the broken copy accepts.
    assert isinstance(_surface.replacement_range((5, 7), 7, 5), Violation)


# -- INV-HDR-11: a decision rule that forgets `series` ------------------------------------------


def _header(model: str) -> JsonObject:
    return MappingProxyType({"config": MappingProxyType({"provider": "deepseek", "model": model})})


def broken_decide(latest: JsonObject | None, assembled: JsonObject, facts: InstanceFacts) -> HeaderDecision | None:
    """:func:`sessionlog_spec.model.header.decide_request_header` without the ``series`` snapshot for an unchanged header."""
    if facts.first_request:
        return HeaderDecision(Reason.INITIAL if latest is None else Reason.RESUME)
    begins = facts.begins_series or facts.replaced_since_last_request
    if latest is None or not header_equals(latest, assembled):
        return HeaderDecision(Reason.CHANGE, starts_series=begins)
    return None


@icontract.ensure(
    lambda has_latest, latest_model, model, first_request, begins_series, replaced, result: (
        first_request
        or not (has_latest and latest_model == model)
        or result == (("series", False) if begins_series or replaced else None)
    ),
    "INV-HDR-11: a later unchanged header writes series when a series begins, else nothing",
)
def broken_decide_of(  # noqa: PLR0917
    has_latest: bool, latest_model: str, model: str, first_request: bool, begins_series: bool, replaced: bool
) -> tuple[str, bool] | None:
    """The plain-argument wrapper of ``crosshair_targets.decide_request_header_of``, over the broken rule."""
    facts = InstanceFacts(first_request, begins_series, replaced)
    decision = broken_decide(_header(latest_model) if has_latest else None, _header(model), facts)
    return None if decision is None else (decision.reason.value, bool(decision.starts_series))


def test_inv_hdr_11_crosshair_finds_decision_rule_that_forgets_series() -> None:
    found = counterexamples(broken_decide_of)
    assert found, "CrossHair found no counterexample in a decision rule that never writes series"
    assert any("broken_decide_of(" in message for message in found), found


def test_inv_hdr_11_crosshair_passes_the_real_decision_rule() -> None:
    messages = analyse(crosshair_targets.decide_request_header_of)
    # One clean verdict per postcondition (INV-HDR-9, 10, 11, 12), no counterexample.
    assert len(messages) == 4
    assert all(m.state in (MessageType.CONFIRMED, MessageType.CANNOT_CONFIRM) for m in messages), messages
