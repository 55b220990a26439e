"""Expected failures: known disagreements a port's CI accepts for now, each with its reason.

An ``--expect-fail`` file (JSON or TOML) lists entries naming a group, an invariant ID or a case id
(``group/op/kind``, as in counterexample files and reports), and a reason.  An entry may narrow
what it names further: ``code`` (a violation code the model expected) and ``message`` (a regular
expression searched in the failure's message), so that a divergence in one spelling does not
excuse every failure of its invariant.  ``message`` is matched by RE2 (``google-re2``), in time
linear in the message whatever the pattern, so a pattern such as ``(a+)+$`` cannot hang a run; RE2
has no backreferences or lookaround, and a pattern over :data:`MAX_PATTERN_BYTES` or one RE2 cannot
compile is refused when the file is read, before the port starts.  A failure an entry
matches is reported but does not fail the run; an entry that matches nothing although what it
names was checked is *stale* and fails the run, so the list cannot outlive the bugs it excuses.
An entry with ``"optional": true`` is never stale: it is for a known divergence that only a rare
candidate reaches, so that a run that happens not to draw it is not failed for it.

JSON: ``{"expected_failures": [{"group": "surface", "reason": "…"}]}`` (or a bare list).
TOML: ``[[expected_failure]]`` tables with the same keys.
"""

from __future__ import annotations

import functools
import json
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import re2

from sessionlog_spec.files import FileProblem, read_regular
from sessionlog_spec.model.violation import Code
from sessionlog_spec.registry import BY_ID
from sessionlog_spec.suite.groups import SUITE_GROUPS
from sessionlog_spec.suite.run import FAILED, PASSED, Failure, GroupResult


class ExpectationError(ValueError):
    """The expected-failures file is malformed."""


MAX_EXPECTATIONS_BYTES = 16 << 20
"""The largest expected-failures file read (16 MiB: a list of reasons, never near it)."""
MAX_PATTERN_BYTES = 4096
"""The longest ``message`` pattern accepted, in UTF-8 bytes (4 KiB: a spelling to narrow by is a
line; RE2's compile memory grows with the pattern)."""


def _re2_options() -> Any:
    options = re2.Options()
    options.log_errors = False  # RE2 would print each refusal on stderr; the refusal is reported once, here
    return options


@functools.lru_cache(maxsize=256)
def message_pattern(message: str) -> Any:
    """``message`` compiled by RE2; raises :class:`ExpectationError` when it is too long or RE2 cannot compile it."""
    size = len(message.encode("utf-8", "surrogatepass"))
    if size > MAX_PATTERN_BYTES:
        raise ExpectationError(f"message is {size:,} bytes, over the {MAX_PATTERN_BYTES:,} byte limit of a pattern")
    if not _is_text(message):
        raise ExpectationError("message holds a lone surrogate, which is not text RE2 can read")
    try:
        return re2.compile(message, options=_re2_options())
    except re2.error as error:
        reason = error.args[0].decode("utf-8", "replace") if error.args and isinstance(error.args[0], bytes) else str(error)
        raise ExpectationError(f"message is not a regular expression RE2 accepts ({reason})") from None


def _read_bounded(path: Path) -> str:
    """The text of a regular file of at most :data:`MAX_EXPECTATIONS_BYTES` (see :func:`read_regular`)."""
    try:
        data = read_regular(path, MAX_EXPECTATIONS_BYTES, "an expected-failures file")
    except FileProblem as problem:
        raise ExpectationError(f"{path}: {problem}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ExpectationError(f"{path}: not UTF-8 ({error})") from None


@dataclass(frozen=True)
class Expectation:
    """One expected failure: what it names, and why it is expected."""

    reason: str
    group: str | None = None
    invariant: str | None = None
    case: str | None = None
    code: str | None = None
    """Only failures where the model expected this violation code."""
    message: str | None = None
    """Only failures whose message this regular expression is found in."""
    optional: bool = False
    """Never stale: the divergence is reached only by some runs."""

    def describe(self) -> str:
        """What the entry names, in one phrase."""
        named = [
            f"{k} {v}"
            for k, v in (
                ("group", self.group),
                ("invariant", self.invariant),
                ("case", self.case),
                ("code", self.code),
                ("message", self.message),
            )
            if v
        ]
        return ", ".join(named)

    @property
    def case_group(self) -> str | None:
        """The group a case id belongs to."""
        return self.case.split("/")[0] if self.case else None

    def matches(self, failure: Failure) -> bool:
        """Whether this entry excuses ``failure``."""
        disagreement = failure.disagreement
        return (
            (self.group is None or self.group == disagreement.group)
            and (self.case is None or self.case == disagreement.case_id)
            and (self.invariant is None or self.invariant in disagreement.invariants)
            and (self.code is None or self.code in disagreement.codes)
            and (
                self.message is None
                or message_pattern(self.message).search(_searchable(disagreement.mismatch.message)) is not None
            )
        )

    def checked_by(self, results: Sequence[GroupResult]) -> bool:
        """Whether this run checked what the entry names, so that not failing makes it stale."""
        if self.optional:
            return False
        group = self.group or self.case_group
        if group is not None:
            return any(r.group == group and r.status == PASSED for r in results)
        return any(r.status == PASSED and r.coverage.invariants[self.invariant or ""] > 0 for r in results)


def _is_text(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _searchable(text: str) -> str:
    """``text`` as RE2 can read it: a lone surrogate (a port may quote one) becomes U+FFFD."""
    return text if _is_text(text) else text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def _entry(raw: Any, where: str) -> Expectation:
    if not isinstance(raw, dict):
        raise ExpectationError(f"{where}: an entry must be an object")
    unknown = sorted(set(raw) - {"reason", "group", "invariant", "case", "code", "message", "optional"})
    if unknown:
        raise ExpectationError(f"{where}: unknown key(s) {unknown}")
    reason = raw.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise ExpectationError(f"{where}: every entry needs a reason")
    optional = raw.get("optional", False)
    if not isinstance(optional, bool):
        raise ExpectationError(f"{where}: optional must be true or false")
    for key in ("code", "message"):
        if key in raw and (not isinstance(raw[key], str) or not raw[key]):
            raise ExpectationError(f"{where}: {key} must be a non-empty string")
    if "message" in raw:
        try:
            message_pattern(raw["message"])
        except ExpectationError as error:
            raise ExpectationError(f"{where}: {error}") from None
    if "code" in raw and raw["code"] not in {c.value for c in Code}:
        raise ExpectationError(f"{where}: unknown violation code {raw['code']!r}")
    entry = Expectation(
        reason, raw.get("group"), raw.get("invariant"), raw.get("case"), raw.get("code"), raw.get("message"), optional
    )
    if not (entry.group or entry.invariant or entry.case):
        raise ExpectationError(f"{where}: name a group, an invariant or a case")
    if entry.group is not None and entry.group not in SUITE_GROUPS:
        raise ExpectationError(f"{where}: unknown group {entry.group!r}")
    if entry.invariant is not None and entry.invariant not in BY_ID:
        raise ExpectationError(f"{where}: unknown invariant {entry.invariant!r}")
    if entry.case is not None and entry.case_group not in SUITE_GROUPS:
        raise ExpectationError(f"{where}: a case id is group/op/kind, got {entry.case!r}")
    return entry


def load_expectations(path: Path) -> list[Expectation]:
    """The entries of an expected-failures file; raises :class:`OSError` or :class:`ExpectationError`."""
    text = _read_bounded(path)
    try:
        document: Any = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as error:
        raise ExpectationError(f"{path}: {error}") from error
    if isinstance(document, dict):
        document = document.get("expected_failures", document.get("expected_failure", []))
    if not isinstance(document, list):
        raise ExpectationError(f"{path}: expected a list of entries")
    return [_entry(raw, f"{path} entry {i + 1}") for i, raw in enumerate(document)]


@dataclass(frozen=True)
class Judgement:
    """Which failures the entries excuse, and which entries are stale."""

    excuses: dict[int, Expectation]
    """``id(failure)`` → the entry that excuses it."""
    stale: list[Expectation]

    def entry_for(self, failure: Failure) -> Expectation | None:
        """The entry that excuses ``failure``, if any."""
        return self.excuses.get(id(failure))

    def unexcused(self, result: GroupResult) -> list[Failure]:
        """The failures of ``result`` no entry excuses."""
        return [f for f in result.failures if id(f) not in self.excuses]

    def excused(self, result: GroupResult) -> bool:
        """Whether ``result`` failed and every one of its failures is expected."""
        return result.status == FAILED and not self.unexcused(result)


def judge(results: Sequence[GroupResult], entries: Iterable[Expectation]) -> Judgement:
    """Match failures against the expected-failures entries."""
    excuses: dict[int, Expectation] = {}
    stale: list[Expectation] = []
    for entry in entries:
        matched = [f for r in results for f in r.failures if entry.matches(f)]
        for failure in matched:
            excuses.setdefault(id(failure), entry)
        if not matched and entry.checked_by(results):
            stale.append(entry)
    return Judgement(excuses, stale)
