"""Upstream's own assertions on the v0-to-v1 edge and the released v1 validators, against the model.

The cases (``spec/vectors/upstream/*.json``) are the calls upstream's spec files make to the
published ``@deepseek-ai/dsh-session-format-v0-to-v1`` build, each with upstream's outcome, which is
what the test asserted.  :mod:`sessionlog_spec.vectors.upstream_cases` puts each one to the model;
``known-disagreements.json`` lists every case the model answers differently, with its cause.  The
list must be exact: a new disagreement fails here, and so does a listed case the model now answers
like upstream (remove it, e.g. with ``python -m sessionlog_spec.vectors.upstream_cases --write-known``),
so the list only shrinks.  Needs no node: the cases are data.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from sessionlog_spec.vectors.upstream_cases import (
    CAUSES,
    FORMAT,
    HERE,
    KNOWN_FILE,
    QUESTIONS,
    Key,
    UpstreamCase,
    Verdict,
    capture_files,
    describe,
    draft_cause,
    judge_all,
    load_cases,
    load_known,
)

SPEC_FILES = ("codec", "legacy", "migration", "relationships", "validation")


@pytest.fixture(scope="module")
def cases() -> list[UpstreamCase]:
    return load_cases()


@pytest.fixture(scope="module")
def verdicts(cases: list[UpstreamCase]) -> list[Verdict]:
    return judge_all(cases)


def show(key: Key) -> str:
    return f"{key[0]} | {key[1]} | #{key[2]}"


def test_one_capture_file_per_upstream_spec_file() -> None:
    assert [p.stem for p in capture_files()] == sorted(SPEC_FILES)
    for path in capture_files():
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data["format"] == FORMAT
        assert data["source"] == f"tests/{path.stem}.spec.ts"
        assert data["cases"], path.name


def test_every_case_is_well_formed(cases: list[UpstreamCase]) -> None:
    keys = [case.key for case in cases]
    assert len(keys) == len(set(keys)), "case keys (source, test, index) must be unique"
    for case in cases:
        assert case.op in QUESTIONS, f"{show(case.key)}: no model question for op {case.op!r}"
        assert isinstance(case.expected["accepted"], bool)
        assert case.expected["asserted"], f"{show(case.key)}: every case records what the test asserted"
        if case.accepted:
            assert "output" in case.expected
        else:
            assert isinstance(case.expected["error"], str)


def test_known_disagreements_are_well_formed() -> None:
    data = json.loads(KNOWN_FILE.read_text(encoding="utf-8"))
    entries = data["disagreements"]
    assert all(entry["cause"] in CAUSES for entry in entries), "causes are one of CAUSES"
    assert all(entry["why"] for entry in entries)
    counts = Counter(entry["cause"] for entry in entries)
    assert data["causes"] == {cause: counts.get(cause, 0) for cause in CAUSES}, "the cause counts are current"
    assert len(load_known()) == len(entries), "each case is listed once"


def test_no_unlisted_disagreement(verdicts: list[Verdict]) -> None:
    known = load_known()
    unlisted = [v for v in verdicts if not v.agrees and v.case.key not in known]
    assert not unlisted, "the model disagrees with upstream on unlisted cases:\n" + "\n".join(
        f"  [{draft_cause(v)}] {show(v.case.key)} ({v.case.op}): {describe(v)}" for v in unlisted
    )


def test_no_listed_case_agrees(verdicts: list[Verdict]) -> None:
    known = load_known()
    judged = {v.case.key: v for v in verdicts}
    missing = [key for key in known if key not in judged]
    assert not missing, "listed cases that are not captured:\n" + "\n".join(f"  {show(k)}" for k in missing)
    now_agree = [key for key in known if judged[key].agrees]
    assert not now_agree, "listed disagreements the model now answers like upstream (remove them from " + str(
        KNOWN_FILE.relative_to(HERE.parents[2])
    ) + "):\n" + "\n".join(f"  [{known[k]['cause']}] {show(k)}" for k in now_agree)
