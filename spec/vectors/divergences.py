"""Drafts whose model answer contradicts the rule they were written for: model bugs, withheld until fixed.

A vector's expectation is whatever the model answers, so a model bug would be written into the
vectors and every correct port would then fail.  A draft listed here is withheld while the model
still answers it the wrong way; once the model is fixed it is generated like any other, and the
test suite asks for its entry to be removed.
"""

from __future__ import annotations

from sessionlog_spec.vectors.format import Case

KNOWN_DIVERGENCES: dict[str, str] = {}
"""Draft id → why the model's answer is wrong.  Every listed draft is meant to be accepted."""


def still_diverges(case: Case) -> bool:
    """Whether ``case`` is listed and the model still refuses it."""
    return case["id"] in KNOWN_DIVERGENCES and not case["expected"]["ok"]
