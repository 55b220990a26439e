"""Expected-failure entries: what each key narrows, how a malformed entry is refused, and message patterns matched by RE2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conformance_helpers import run_cli

from sessionlog_spec.suite.agreement import Mismatch
from sessionlog_spec.suite.expectations import MAX_PATTERN_BYTES, ExpectationError, load_expectations
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


class TestMessagePatterns:
    """``message`` is matched by RE2: linear time whatever the pattern, and refused when too long or not RE2."""

    def test_a_catastrophic_pattern_is_accepted_and_matching_returns(self, tmp_path: Path) -> None:
        """``(a+)+$`` backtracks exponentially in Python's ``re``; RE2 answers at once, either way."""
        [entry] = load_expectations(_write(tmp_path, {"group": "legacy", "message": "(a+)+$", "reason": "r"}))
        assert not entry.matches(_failure("legacy", "ENVELOPE_BAD_SEQ", "a" * 100_000 + "b"))
        assert entry.matches(_failure("legacy", "ENVELOPE_BAD_SEQ", "b" + "a" * 100_000))

    def test_a_message_with_a_lone_surrogate_is_still_searched(self, tmp_path: Path) -> None:
        [entry] = load_expectations(_write(tmp_path, {"group": "legacy", "message": r"seq -0\.0 ", "reason": "r"}))
        assert entry.matches(_failure("legacy", "ENVELOPE_BAD_SEQ", "id '\ud800' " + NEGATIVE_ZERO))

    @pytest.mark.parametrize(
        ("pattern", "complaint"),
        [
            ("a" * (MAX_PATTERN_BYTES + 1), "message is 4,097 bytes, over the 4,096 byte limit of a pattern"),
            ("x" * (8 << 20), "message is 8,388,608 bytes, over the 4,096 byte limit of a pattern"),
            ("é" * 2049, "message is 4,098 bytes, over the 4,096 byte limit"),
            ("(?=lookahead)", "message is not a regular expression RE2 accepts (invalid perl operator: (?=)"),
            (r"(a)\1", "message is not a regular expression RE2 accepts (invalid escape sequence: \\1)"),
            ("\ud800", "message holds a lone surrogate"),
        ],
        ids=["over-the-cap", "8-mib", "over-the-cap-in-utf-8", "lookahead", "backreference", "lone-surrogate"],
    )
    def test_a_pattern_over_the_cap_or_outside_re2_is_refused(self, tmp_path: Path, pattern: str, complaint: str) -> None:
        path = tmp_path / "expected.json"
        path.write_text(json.dumps([{"group": "legacy", "message": pattern, "reason": "r"}]), encoding="utf-8")
        with pytest.raises(ExpectationError) as refused:
            load_expectations(path)
        assert str(refused.value).startswith(f"{path} entry 1: {complaint}")

    def test_a_refused_pattern_ends_check_in_one_line_and_exit_2_before_the_port_starts(self, tmp_path: Path) -> None:
        for pattern in ("a" * (MAX_PATTERN_BYTES + 1), "(?!x)"):
            path = _write(tmp_path, {"group": "surface", "message": pattern, "reason": "r"})
            done = run_cli("check", "--driver", "no-such-program-sessionlog", "--expect-fail", path, timeout=60)
            assert done.returncode == 2, done.stdout + done.stderr
            [line] = done.stderr.splitlines()
            assert line.startswith(f"--expect-fail: {path} entry 1: message ")
            assert "cannot start the port" not in done.stdout + done.stderr
