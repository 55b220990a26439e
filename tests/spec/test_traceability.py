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


def test_trace_lists_every_invariant_with_its_tests() -> None:
    """docs/trace.md has a heading for each ID, and under it the tests named after that ID."""
    text = (CHECKOUT / catalogue.TRACE).read_text(encoding="utf-8")
    sections = re.split(r"^### (INV-[A-Z]+-\d+)$", text, flags=re.MULTILINE)
    listed = dict(zip(sections[1::2], sections[2::2], strict=True))
    assert set(listed) == set(BY_ID)
    for inv_id, body in listed.items():
        assert f"::test_{BY_ID[inv_id].test_token}_" in body, inv_id


def test_invariants_md_trace_and_protocol_are_current() -> None:
    for path, text in catalogue.documents(INVARIANTS_MD, TESTS).items():
        assert path.read_text(encoding="utf-8") == text, f"{path} is stale: run `make invariants`"
