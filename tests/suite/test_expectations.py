"""Expected-failure entries: what each key narrows, and how a malformed entry is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sessionlog_spec.suite.agreement import Mismatch
from sessionlog_spec.suite.expectations import ExpectationError, load_expectations
from sessionlog_spec.suite.machines.base import Disagreement
from sessionlog_spec.suite.run import Failure


def _failure(group: str, code: str, message: str) -> Failure:
    mismatch = Mismatch("accepted-invalid", message)
    disagreement = Disagreement(group, mismatch, [], rule="inject", invariants=["INV-LOG-2"], codes=[code])
    return Failure(disagreement, Path("case.json"), [])


NEGATIVE_ZERO = "upgrade_v0: the model refuses (ENVELOPE_BAD_SEQ: v0 index 0: event 'session/title' seq -0.0 is not …)"
NOT_DENSE = "upgrade_v0: the model refuses (ENVELOPE_BAD_SEQ: v0 index 3: event 'turn/start' seq 7 is not …)"


def test_code_and_message_narrow_an_entry_to_one_spelling(tmp_path: Path) -> None:
    [entry] = load_expectations(
        _write(tmp_path, {"group": "legacy", "code": "ENVELOPE_BAD_SEQ", "message": r"seq -0\.0 ", "reason": "r"})
    )
    assert entry.matches(_failure("legacy", "ENVELOPE_BAD_SEQ", NEGATIVE_ZERO))
    assert not entry.matches(_failure("legacy", "ENVELOPE_BAD_SEQ", NOT_DENSE)), "the message narrows"
    assert not entry.matches(_failure("legacy", "JSON_NOT_LOSSLESS", NEGATIVE_ZERO)), "the code narrows"
    assert not entry.matches(_failure("read", "ENVELOPE_BAD_SEQ", NEGATIVE_ZERO)), "the group still narrows"
    assert "code ENVELOPE_BAD_SEQ" in entry.describe()


def _write(tmp_path: Path, entry: dict[str, object]) -> Path:
    path = tmp_path / "expected.json"
    path.write_text(json.dumps([entry]), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("entry", "complaint"),
    [
        ({"group": "legacy", "code": "NOT_A_CODE", "reason": "r"}, "unknown violation code"),
        ({"group": "legacy", "code": "", "reason": "r"}, "non-empty string"),
        ({"group": "legacy", "message": "(unclosed", "reason": "r"}, "not a regular expression"),
        ({"group": "legacy", "message": 3, "reason": "r"}, "non-empty string"),
    ],
)
def test_a_malformed_narrowing_key_is_refused(tmp_path: Path, entry: dict[str, object], complaint: str) -> None:
    with pytest.raises(ExpectationError, match=complaint):
        load_expectations(_write(tmp_path, entry))
