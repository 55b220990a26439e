"""The documents name only what exists: every op, violation code, normalisation (N-number), module
path and ``sessionlog-check`` command line they show is one the model, the protocol and the CLI have."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import re
import shlex
from pathlib import Path

import pytest

from sessionlog_spec import cli
from sessionlog_spec.appendix import normalisations
from sessionlog_spec.model.violation import Code
from sessionlog_spec.protocol.model_driver import ModelDriver

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = sorted(
    {
        ROOT / "README.md",
        ROOT / "invariants.md",
        ROOT / "spec" / "PROTOCOL.md",
        ROOT / "spec" / "vectors" / "data" / "README.md",
        *(ROOT / "docs").rglob("*.md"),
        *((ROOT / "kits" / "js" / "README.md",) if (ROOT / "kits" / "js" / "README.md").is_file() else ()),
    }
)
PROTOCOL_CODES = {"UNSUPPORTED", "BAD_REQUEST", "UNMAPPED"}
NOT_VIOLATION_CODES = {"TOOL_OUTCOME_UNKNOWN", "TOOL_NOT_STARTED", "SESSION_FORMAT_VERSION"}
"""Upper-case names the documents show that are no violation code: the repair closers' tool error
codes, and upstream's own constant of its format version."""
CODE = re.compile(r"`([A-Z][A-Z0-9]*(?:_[A-Z0-9*]+)+)`")
ENVIRONMENT = re.compile(r"^(SESSIONLOG|HYPOTHESIS|XDG|PYTEST)_")
OP_MENTIONS = (
    re.compile(r'"op":\s*"([a-z0-9_]+)"(?!,\s*"start")'),  # a request's op, not a surfaceOp's replace
    re.compile(r"`([a-z0-9_]+)` op\b"),
    re.compile(r"\bops? `([a-z0-9_]+)`"),
)
NORMALISATION = re.compile(r"\bN(\d+)\b")
MODULE_PATH = re.compile(r"`((?:model|spec|tests|tools|ports|kits)/[A-Za-z0-9_./-]+\.(?:py|mjs))")
DOTTED = re.compile(r"`(sessionlog_spec(?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
SHELL_BLOCK = re.compile(r"```(?:sh|shell|bash|console)\n(.*?)```", re.DOTALL)
COMMAND = re.compile(r"^(?:\$ )?(sessionlog-check|(?:\.venv/bin/)?python -m sessionlog_spec)\s+(.*)$")


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _constants() -> frozenset[str]:
    """Upper-case names the sources define (``ERROR_TABLE = …``): a document may name them; they are no codes."""
    pattern = re.compile(r"^\s*([A-Z][A-Z0-9_]+)\s*[:=]", re.MULTILINE)
    sources = [p for folder in ("model", "spec", "tools", "ports") for p in (ROOT / folder).rglob("*.py")]
    return frozenset(name for path in sources for name in pattern.findall(path.read_text(encoding="utf-8")))


CONSTANTS = _constants()
CODE_WORDS = {code.value.split("_")[0] for code in Code} | {code.value.split("_")[-1] for code in Code}
"""The first and last words of the violation codes: an upper-case name with one of them claims to be a code."""


def codes_named(text: str) -> set[str]:
    """The names ``text`` gives in backticks as violation codes (not a constant of the sources, an
    environment variable or a wildcard such as `LEGACY_*`)."""
    return {
        name
        for name in CODE.findall(text)
        if not ENVIRONMENT.match(name)
        and not name.endswith("*")
        and name not in CONSTANTS
        and {name.split("_")[0], name.split("_")[-1]} & CODE_WORDS
    }


def unknown_codes(text: str) -> set[str]:
    known = {c.value for c in Code} | PROTOCOL_CODES | NOT_VIOLATION_CODES
    return codes_named(text) - known


def unknown_ops(text: str) -> set[str]:
    known = set(ModelDriver().ops)
    return {op for pattern in OP_MENTIONS for op in pattern.findall(text)} - known


def unknown_normalisations(text: str) -> set[str]:
    known = {number for number, _ in normalisations()}
    return {f"N{n}" for n in NORMALISATION.findall(text)} - known


def missing_paths(text: str) -> set[str]:
    return {path for path in MODULE_PATH.findall(text) if "*" not in path and not (ROOT / path).exists()}


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            if not hasattr(value, name):
                return False
            value = getattr(value, name)
        return True
    return False


def unresolved_names(text: str) -> set[str]:
    return {dotted for dotted in DOTTED.findall(text) if not _resolves(dotted)}


def shown_commands(text: str) -> list[list[str]]:
    """The arguments of every ``sessionlog-check`` / ``python -m sessionlog_spec`` line of a shell block."""
    found = []
    for block in SHELL_BLOCK.findall(text):
        for line in block.replace("\\\n", " ").splitlines():
            match = COMMAND.match(line.strip())
            if match is None:
                continue
            words = shlex.split(match.group(2), comments=True)
            if match.group(1) == "sessionlog-check" and (not words or words[0] not in (*cli.COMMANDS, "-h", "--help")):
                words = ["check", *words]
            found.append(words)
    return found


def refused_by_the_cli(words: list[str]) -> str | None:
    """Why the real argument parser refuses ``words``, or ``None`` when it accepts them (nothing is run)."""
    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors):
            cli.build_parser().parse_args(words)
    except SystemExit as exit_:
        return None if exit_.code == 0 else errors.getvalue().strip().splitlines()[-1]
    return None


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.relative_to(ROOT).as_posix())
class TestDocuments:
    """Each document names only what exists."""

    def test_every_violation_code_it_names_exists(self, document: Path) -> None:
        assert unknown_codes(_text(document)) == set()

    def test_every_op_it_names_exists(self, document: Path) -> None:
        assert unknown_ops(_text(document)) == set()

    def test_every_normalisation_it_names_exists(self, document: Path) -> None:
        assert unknown_normalisations(_text(document)) == set()

    def test_every_module_path_it_names_exists(self, document: Path) -> None:
        text = _text(document)
        assert missing_paths(text) == set()
        assert unresolved_names(text) == set()

    def test_every_command_it_shows_is_accepted_by_the_cli(self, document: Path) -> None:
        refused = {shlex.join(words): why for words in shown_commands(_text(document)) if (why := refused_by_the_cli(words))}
        assert refused == {}


def test_the_checks_find_what_does_not_exist() -> None:
    """Each check refuses a made-up name of its kind (so a passing document is no accident)."""
    assert unknown_codes("refused with `TURN_TOO_EARLY`, not `ERROR_TABLE`") == {"TURN_TOO_EARLY"}
    assert unknown_ops('{"op": "rewind"} and the `compact` op') == {"rewind", "compact"}
    assert unknown_normalisations("by N10") == {"N10"}
    assert missing_paths("see `model/frames.py`") == {"model/frames.py"}
    assert unresolved_names("`sessionlog_spec.model.session.fold_everything`") == {
        "sessionlog_spec.model.session.fold_everything"
    }
    (words,) = shown_commands("```sh\nsessionlog-check check --driver 'node d.mjs' --profle ci\n```")
    assert refused_by_the_cli(words) is not None
    (words,) = shown_commands("```sh\npython -m sessionlog_spec vectors run --port model --case log/x  # one\n```")
    assert refused_by_the_cli(words) is None


def test_a_documents_cli_parser_is_the_real_one() -> None:
    assert isinstance(cli.build_parser(), argparse.ArgumentParser)
