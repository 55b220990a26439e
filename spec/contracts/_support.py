"""Small helpers the contract modules share."""

from __future__ import annotations

from sessionlog_spec.model.violation import Violation


def accepted(result: object) -> bool:
    """Whether a model function accepted its input (did not return a :class:`Violation`)."""
    return not isinstance(result, Violation)


def rejected_with(result: object, *codes: object) -> bool:
    """Whether ``result`` is a violation with one of ``codes``."""
    return isinstance(result, Violation) and result.code in codes
