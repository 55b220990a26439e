"""The declared rule space: read off the model's tables and the registry, not off the generators."""

from __future__ import annotations

from sessionlog_spec.check_order import ordered_codes
from sessionlog_spec.model import relationships
from sessionlog_spec.model.payloads import EVENT_PAYLOADS
from sessionlog_spec.model.session import TYPE_CODES
from sessionlog_spec.model.trace import TRACE_TYPES
from sessionlog_spec.registry import BY_ID, INVARIANTS
from sessionlog_spec.suite.cells import ANY_TYPE
from sessionlog_spec.suite.rule_space import (
    EVENT_PATHS,
    code_types,
    covered,
    declared_cells,
    declared_reach,
    invariant_paths,
    reachable_declared,
)


def test_every_invariant_with_codes_declares_cells_on_every_path_it_names() -> None:
    declared = declared_cells()
    for invariant in INVARIANTS:
        if not invariant.codes:
            continue
        paths = {path for inv, _, path in declared if inv == invariant.id}
        assert paths == set(invariant_paths(invariant)), invariant.id


def test_inv_pay_1_a_payload_code_is_declared_on_every_type_that_answers_with_it() -> None:
    types = code_types()
    assert types["USER_MESSAGE_INVALID"] == {"user/message"}
    # The bracket and step types answer a payload fault in the trace's codes (TRACE_DATA_INVALID).
    assert types["PAYLOAD_INVALID"] == {t for t in EVENT_PAYLOADS if t not in TYPE_CODES and t not in TRACE_TYPES}
    pay_1 = {type_ for inv, type_, path in declared_cells() if inv == "INV-PAY-1" and path == "seed"}
    assert pay_1 >= set(EVENT_PAYLOADS) - set(TYPE_CODES) - TRACE_TYPES


def test_inv_rel_a_relationship_code_is_declared_on_the_types_whose_rule_raises_it() -> None:
    # Read from the rule's source: the retry rule names its codes through helpers it calls.
    assert "RETRY_OUTSIDE_STEP" in ordered_codes(relationships._HANDLERS["llm/retry"])
    types = code_types()
    assert types["RETRY_START_UNPAIRED"] == {"llm/retry-started"}
    assert types["TOOL_CALL_UNRESOLVED"] >= {"turn/end"}
    assert "user/message" not in types["RETRY_OUTSIDE_STEP"]


def test_envelope_rules_are_declared_on_any_type_and_every_event_path() -> None:
    cells = {(t, p) for inv, t, p in declared_cells() if inv == "INV-LOG-2"}
    assert cells == {(ANY_TYPE, path) for path in EVENT_PATHS}
    assert BY_ID["INV-LOG-2"].codes


def test_a_reached_cell_counts_for_its_own_type_or_a_wildcard_only() -> None:
    declared = {("INV-LOG-2", ANY_TYPE, "load"), ("INV-PAY-1", "turn/start", "seed"), ("INV-PAY-1", "step/end", "seed")}
    reached = {("INV-LOG-2", "turn/end", "load"), ("INV-PAY-1", "turn/start", "seed"), ("INV-PAY-1", "step/end", "append")}
    assert covered(declared, reached) == {("INV-LOG-2", ANY_TYPE, "load"), ("INV-PAY-1", "turn/start", "seed")}


def test_declared_reach_counts_report_keys_by_group() -> None:
    reach = declared_reach(["INV-LOG-2 * load", "INV-LOG-2 * read", "INV-PAY-1 session/title seed", "INV-PAY-1 nope seed"])
    assert reach.reached == 3
    assert reach.by_group["LOG"][1] == 2
    assert reach.by_group["PAY"][1] == 1
    assert 0 < reach.fraction < 1
    # The denominator is the declared space less the cells the model cannot reach.
    assert reach.to_json()["cells"] == len(reachable_declared()) < len(declared_cells())
