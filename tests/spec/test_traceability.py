"""Every invariant is stated once, carried by a contract, checked by a test, and listed in invariants.md."""

from __future__ import annotations

import re
from pathlib import Path

from sessionlog_spec import catalogue
from sessionlog_spec.registry import BY_ID, INVARIANTS

CHECKOUT = Path(__file__).resolve().parents[2]
INVARIANTS_MD = CHECKOUT / "invariants.md"
TESTS = CHECKOUT / "tests"


def test_catalogue_has_at_least_forty_invariants_across_all_groups() -> None:
    groups = {inv.group for inv in INVARIANTS}
    assert len(INVARIANTS) >= 40
    assert groups == {"LOG", "PAY", "SURF", "TRACE", "HDR", "REPAIR", "COMPACT", "JSONL", "LEGACY", "REL"}


def test_every_invariant_is_carried_by_a_contract() -> None:
    carriers = catalogue.contract_carriers()
    missing = [inv.id for inv in INVARIANTS if not carriers.get(inv.id)]
    assert missing == [], f"invariants without a contract: {missing}"


def test_every_contract_names_a_catalogued_invariant() -> None:
    unknown = sorted(set(catalogue.contract_carriers()) - set(BY_ID))
    assert unknown == [], f"contracts name unknown invariants: {unknown}"


def test_every_invariant_is_checked_by_a_test() -> None:
    tests = catalogue.test_checkers(TESTS)
    missing = [inv.id for inv in INVARIANTS if not tests.get(inv.id)]
    assert missing == [], f"invariants without a test named after them: {missing}"


def test_no_test_names_an_unknown_invariant() -> None:
    assert catalogue.test_tokens_without_invariant(TESTS) == []


def test_invariants_md_lists_exactly_the_catalogue() -> None:
    text = INVARIANTS_MD.read_text(encoding="utf-8")
    listed = set(re.findall(r"^### (INV-[A-Z]+-\d+)$", text, flags=re.MULTILINE))
    assert listed == set(BY_ID)


def test_invariants_md_is_current() -> None:
    assert INVARIANTS_MD.read_text(encoding="utf-8") == catalogue.render_current(TESTS), (
        "invariants.md is stale: run `make invariants`"
    )
