"""The first-violation order read off the model (``spec/check_order.py``) is the order the model
refuses in: two faults in one event get the code the table puts first."""

from __future__ import annotations

import itertools
import random

from sessionlog_spec.check_order import check_order, stage_of
from sessionlog_spec.model.session import EMPTY_SESSION, append_event
from sessionlog_spec.model.violation import Code, Violation
from sessionlog_spec.registry import INVARIANTS
from sessionlog_spec.suite.agent.builder import realistic_session
from sessionlog_spec.suite.fuzz.perturb import perturbations

EVENT_RULE_GROUPS = {"LOG", "PAY", "SURF", "TRACE", "REL"}
"""The groups whose rules ``admit`` checks event by event (the others judge a log, a header decision,
a stored line or the edge)."""
NOT_PER_EVENT = {Code.END_SEED_INVALID.value, Code.TOOL_PAIRING_NEGATIVE.value, Code.REPLACE_SPLITS_TOOL_PAIR.value}


def _touched(before: dict[str, object], after: dict[str, object]) -> set[str]:
    """The envelope members an edit changed, added or removed (``-0.0`` is another value than ``0`` here)."""
    return {key for key in before.keys() | after.keys() if repr(before.get(key, KeyError)) != repr(after.get(key, KeyError))}


def _code(state: object, event: object) -> str | None:
    result = append_event(state, event)  # type: ignore[arg-type]
    return result.code.value if isinstance(result, Violation) else None


def test_every_code_of_an_event_rule_has_a_place_in_the_check_order() -> None:
    placed = {code for stage in check_order() for code in stage.codes}
    for invariant in INVARIANTS:
        if invariant.group in EVENT_RULE_GROUPS:
            missing = {c.value for c in invariant.codes} - placed - NOT_PER_EVENT
            assert not missing, f"{invariant.id}: {sorted(missing)} not in any stage"


def test_inv_log_1_the_envelope_stage_refuses_with_the_code_the_table_puts_first() -> None:
    # The envelope stage is one straight run of checks: its order holds whatever the event's type.
    (envelope,) = [stage for stage in check_order() if stage.name == "envelope"]
    rng = random.Random(7)
    events = realistic_session(2).events
    state = EMPTY_SESSION
    pairs = 0
    for index, event in enumerate(events):
        found = perturbations(event, index, rng)["envelope"]
        singles = [(p, _code(state, p.edit(event))) for p in found]
        refused = [(p, code) for p, code in singles if code in envelope.codes]
        for (first, code_a), (second, code_b) in itertools.combinations(refused, 2):
            touched = (_touched(event, first.edit(event)), _touched(event, second.edit(event)))
            if touched[0] & touched[1] or "type" in touched[0] | touched[1]:
                continue  # one member edited twice, or the type changed and with it which rules apply
            both = _code(state, second.edit(first.edit(event)))
            expected = min(code_a, code_b, key=envelope.codes.index)
            assert both == expected, f"{first.name} + {second.name}: {both}, expected {expected}"
            pairs += 1
        following = append_event(state, event)
        assert not isinstance(following, Violation)
        state = following
    assert pairs > 100


def test_two_faults_in_two_stages_get_the_earlier_stages_code() -> None:
    rng = random.Random(11)
    events = realistic_session(2, calls_per_step=2).events
    state = EMPTY_SESSION
    pairs = 0
    for index, event in enumerate(events):
        families = perturbations(event, index, rng)
        candidates = [p for family in ("envelope", "payload", "type") for p in families[family]]
        drawn = rng.sample(candidates, min(30, len(candidates)))
        singles = [(p, code) for p in drawn if (code := _code(state, p.edit(event))) is not None]
        for (first, code_a), (second, code_b) in itertools.combinations(singles, 2):
            stage_a, stage_b = stage_of(code_a), stage_of(code_b)
            if stage_a is None or stage_b is None or stage_a == stage_b:
                continue
            touched = (_touched(event, first.edit(event)), _touched(event, second.edit(event)))
            if touched[0] & touched[1] or "type" in touched[0] | touched[1]:
                continue  # one member edited twice, or the type changed and with it which rules apply
            both = _code(state, second.edit(first.edit(event)))
            assert both is not None, f"{first.name} + {second.name}: accepted"
            assert stage_of(both) == min(stage_a, stage_b), f"{first.name} ({code_a}) + {second.name} ({code_b}): {both}"
            pairs += 1
        following = append_event(state, event)
        assert not isinstance(following, Violation)
        state = following
    assert pairs > 100
