"""Traceability: which contracts carry each invariant, which tests check it, and ``invariants.md``.

The catalogue in :mod:`sessionlog_spec.registry` is the single source of the statements; this module finds
the carriers by reading the contracts icontract attached to the wrappers in :mod:`sessionlog_spec.contracts`,
finds the tests by scanning test function names under ``tests/``, and renders ``invariants.md``.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from icontract._checkers import find_checker

from sessionlog_spec.appendix import render_appendix
from sessionlog_spec.check_order import render_check_order, render_payload_codes
from sessionlog_spec.model.violation import Code
from sessionlog_spec.pure_ops import render_pure_ops, splice
from sessionlog_spec.registry import GROUP_NAMES, INVARIANTS, Invariant

CONTRACT_MODULES = ("log", "surface", "trace", "header", "repair", "compaction", "jsonl", "legacy", "relationships", "payloads")
ID_PATTERN = re.compile(r"INV-[A-Z]+-\d+")
SHIPPED = Path(__file__).resolve().parent / "invariants.md"
"""The rendered catalogue as installed with the package (in the repository, a link to ``invariants.md``)."""
TESTS = Path("tests")
"""Where the tests are, relative to a checkout's root: the catalogue names every test of each invariant."""
TRACE = Path("docs/trace.md")
"""The tests of each invariant, relative to a checkout's root (generated with ``invariants.md``)."""
PROTOCOL = Path("spec/PROTOCOL.md")
"""The driver protocol, relative to a checkout's root: its section on the pure ops has a generated part."""


def contract_carriers() -> dict[str, list[str]]:
    """Invariant ID → the contracted functions (``module.function``) whose contracts name it."""
    carriers: dict[str, list[str]] = defaultdict(list)
    for name in CONTRACT_MODULES:
        module = importlib.import_module(f"sessionlog_spec.contracts.{name}")
        for fname, func in inspect.getmembers(module, inspect.isfunction):
            if func.__module__ != module.__name__:
                continue
            checker = find_checker(func)
            if checker is None:
                continue
            contracts = [*getattr(checker, "__postconditions__", [])]
            for group in getattr(checker, "__preconditions__", []):
                contracts.extend(group)
            for contract in contracts:
                for found in ID_PATTERN.findall(contract.description or ""):
                    label = f"sessionlog_spec.contracts.{name}.{fname}"
                    if label not in carriers[found]:
                        carriers[found].append(label)
    return dict(carriers)


def _test_functions(tests: Path) -> Iterator[tuple[str, str]]:
    """Every test function under ``tests``, with its path relative to the checkout (the folder above)."""
    if not tests.is_dir():
        raise FileNotFoundError(f"no tests folder at {tests}: the catalogue is rendered in a sessionlog-spec checkout")
    for path in sorted(tests.rglob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test_"):
                yield path.relative_to(tests.parent).as_posix(), node.name


def test_checkers(tests_dir: Path = TESTS) -> dict[str, list[str]]:
    """Invariant ID → the tests (``path::name``) whose names carry its token (``inv_surf_3``)."""
    tests: dict[str, list[str]] = defaultdict(list)
    tokens = {inv.test_token: inv.id for inv in INVARIANTS}
    pattern = re.compile(r"inv_[a-z]+_\d+")
    for path, name in _test_functions(tests_dir):
        for token in pattern.findall(name):
            if token in tokens:
                tests[tokens[token]].append(f"{path}::{name}")
    return dict(tests)


def test_tokens_without_invariant(tests: Path = TESTS) -> list[str]:
    """Tests whose names carry an invariant token that the catalogue does not define."""
    known = {inv.test_token for inv in INVARIANTS}
    pattern = re.compile(r"inv_[a-z]+_\d+")
    return [
        f"{path}::{name}"
        for path, name in _test_functions(tests)
        if any(token not in known for token in pattern.findall(name))
    ]


def render(carriers: dict[str, list[str]], tests: dict[str, list[str]]) -> str:
    """The text of ``invariants.md``."""
    out = [
        "# Invariants of the v1 session log",
        "",
        "Every rule the model enforces, with a stable ID.  Each entry gives the rule, why it exists, the",
        "violation codes that enforce it, the model functions and the contracts that state it (in",
        "`spec/contracts/`), and how many tests check it; the tests themselves are listed by ID in",
        "`docs/trace.md`.  This file is generated from `spec/registry.py` by `python -m sessionlog_spec catalogue`;",
        "`tests/spec/test_traceability.py` fails when it is stale or when an ID lacks a contract or a test.",
        "",
        "## Who decides a rule",
        "",
        "1. **The design note's own text decides.**",
        "2. **Where it is silent, released upstream behaviour decides**: the published npm packages",
        "   (`@deepseek-ai/dsh-session-format-v0-to-v1`, `…-format`, `…-format-catalog`, `dsh-session`,",
        "   `dsh-session-persistence-jsonl`, `dsh-compaction`), their READMEs and their tests, asked through the",
        "   drivers in `ports/` rather than guessed.  The physical form of a stored log (header line, packed chunk",
        "   rows, range provenance, what a reader keeps of a damaged file: INV-JSONL-1, -3, -4, -5, -9, -10) is",
        "   such a rule; `docs/conformance/on-disk-format.md` states it.",
        "3. **Our own decisions come last.**  Every place where the model deliberately differs from released",
        "   upstream behaviour is one row of the deviations table, `docs/conformance/deviations.md`, quoting the",
        "   sentence of the design note that requires it.  A difference without such a sentence is a model bug.",
        "",
        f"{len(INVARIANTS)} invariants in {len(GROUP_NAMES)} groups; {len(Code)} violation codes.",
        "",
    ]
    for group, title in GROUP_NAMES.items():
        out += [f"## {title} (`INV-{group}`)", ""]
        for inv in (i for i in INVARIANTS if i.group == group):
            out += _entry(inv, carriers.get(inv.id, []), tests.get(inv.id, []))
    out += _code_table()
    out += ["", *render_appendix()]
    return "\n".join(out).rstrip("\n") + "\n"


MODEL_MODULES = (
    "event",
    "json_value",
    "messages",
    "header",
    "surface",
    "trace",
    "compaction",
    "session",
    "repair",
    "jsonl",
    "load",
    "durability",
    "legacy",
    "payloads",
    "relationships",
)


def model_function(carrier: str) -> str | None:
    """The model function a contracted wrapper stands for: the one with the same name."""
    name = carrier.rsplit(".", 1)[1]
    for module_name in MODEL_MODULES:
        module = importlib.import_module(f"sessionlog_spec.model.{module_name}")
        func = getattr(module, name, None)
        if inspect.isfunction(func) and func.__module__ == module.__name__:
            return f"sessionlog_spec.model.{module_name}.{name}"
    return None


def _entry(inv: Invariant, carriers: list[str], tests: list[str]) -> list[str]:
    lines = [f"### {inv.id}", "", inv.statement, "", f"*Why:* {inv.why}", ""]
    if inv.codes:
        lines += ["*Codes:* " + ", ".join(f"`{c.value}`" for c in inv.codes), ""]
    models = sorted({m for c in carriers if (m := model_function(c)) is not None})
    lines += ["*Model:* " + ", ".join(f"`{m}`" for m in models), ""]
    lines += ["*Contracts:* " + ", ".join(f"`{c}`" for c in sorted(carriers)), ""]
    lines += [f"*Tests:* {len(tests)}, listed under {inv.id} in `{TRACE.as_posix()}`.", ""]
    return lines


def render_trace(tests: dict[str, list[str]]) -> str:
    """The text of ``docs/trace.md``: every test of each invariant, by its ID."""
    out = [
        "# Trace: the tests of each invariant",
        "",
        "Which tests check each rule of `invariants.md`, found by their names (`test_inv_surf_4_…` checks",
        "INV-SURF-4).  Generated with `invariants.md` by `python -m sessionlog_spec catalogue`;",
        "`tests/spec/test_traceability.py` fails when it is stale or when an ID has no test.",
        "",
    ]
    for group, title in GROUP_NAMES.items():
        out += [f"## {title} (`INV-{group}`)", ""]
        for inv in (i for i in INVARIANTS if i.group == group):
            out += [f"### {inv.id}", "", *(f"- `{t}`" for t in sorted(tests.get(inv.id, []))), ""]
    return "\n".join(out).rstrip("\n") + "\n"


def _code_table() -> list[str]:
    owner = {code: inv.id for inv in INVARIANTS for code in inv.codes}
    lines = [
        "## Violation codes",
        "",
        "The closed set of codes a port reports when it refuses input (`model/violation.py`).",
        "When a candidate breaks several rules, the first in the check order wins (below, `## Check order`).",
        "",
        "| code | invariant |",
        "|---|---|",
    ]
    lines += [f"| `{code.value}` | {owner[code]} |" for code in Code]
    lines += ["", *render_check_order(), *render_payload_codes()]
    return lines


def render_current(tests: Path = TESTS) -> str:
    """``invariants.md`` as the code and the tests under ``tests`` stand now."""
    return render(contract_carriers(), test_checkers(tests))


def documents(output: Path, tests: Path = TESTS) -> dict[Path, str]:
    """Every file the catalogue writes, with its text as the code and tests stand now: ``invariants.md``
    at ``output``, and beside it (the checkout's root) ``docs/trace.md`` and ``spec/PROTOCOL.md``, whose
    generated part is replaced and the rest kept."""
    root = output.parent
    checkers = test_checkers(tests)
    protocol = root / PROTOCOL
    if not protocol.is_file():
        raise FileNotFoundError(f"no {PROTOCOL} beside {output}: the catalogue is rendered in a sessionlog-spec checkout")
    return {
        output: render(contract_carriers(), checkers),
        root / TRACE: render_trace(checkers),
        protocol: splice(protocol.read_text(encoding="utf-8"), render_pure_ops()),
    }


def run(output: Path, tests: Path, check_only: bool) -> int:
    """``catalogue``: write every generated document, or (``check_only``) exit 1 naming the stale ones."""
    try:
        texts = documents(output, tests)
    except FileNotFoundError as error:
        print(f"{error}; the installed copy is {SHIPPED}", file=sys.stderr)
        return 2
    if check_only:
        stale = [path for path, text in texts.items() if not path.is_file() or path.read_text(encoding="utf-8") != text]
        for path in stale:
            print(f"{path} is stale: run python -m sessionlog_spec catalogue", file=sys.stderr)
        return 1 if stale else 0
    for path, text in texts.items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    return 0
