"""Every figure the conformance documents quote is the figure the saved catalogues and the driver give.

The documents keep their figures in tables of two fixed shapes, so a test reads them instead of
scraping prose:

* a **catalogue table**, header ``| catalogue | group | questions | agree | same refusal, other code |
  diverge | divergences by class |``: one row per catalogue (``dsh-format-divergences.json`` …, in
  ``docs/conformance/``) and group (``all`` for the whole catalogue), the counts written with
  thousands separators and the classes as ```label` count`` pairs (``none`` when nothing diverges);
* a **vectors table**, header ``| vectors run | passed | failed | unsupported |``: one row per vector
  file and an ``all`` row, as ``vectors run --any-code`` gives them for the driver the document names
  in the line above the table (``--driver "…"``).

A figure that no longer matches what its catalogue holds, or what the driver answers today, fails
here; so does a document that lost its table.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sessionlog_spec.suite.ports.subprocess import SubprocessPort
from sessionlog_spec.vectors.format import LARGE, load_all
from sessionlog_spec.vectors.run import Options, counts, run_files

ROOT = Path(__file__).resolve().parents[2]
CONFORMANCE = ROOT / "docs" / "conformance"
DOCUMENTS = ("dsh-format.md", "dsh-session.md", "deviations.md")
"""The documents whose figures are checked, in ``docs/conformance/``."""
CATALOGUE_HEADER = (
    "catalogue",
    "group",
    "questions",
    "agree",
    "same refusal, other code",
    "diverge",
    "divergences by class",
)
VECTORS_HEADER = ("vectors run", "passed", "failed", "unsupported")
AGREEING = ("agree", "agree*")
CATALOGUES = {
    "dsh-format.md": {"dsh-format-divergences.json"},
    "dsh-session.md": {"dsh-session-divergences.json"},
    "deviations.md": {"dsh-format-divergences.json", "dsh-session-divergences.json"},
}
"""Which catalogues each document must give the whole-catalogue (``all``) row of."""
SLOW = os.environ.get("SESSIONLOG_SLOW") == "1"


@dataclass(frozen=True)
class Table:
    """A Markdown table of a document: its header, the line before it, and its rows (cells stripped)."""

    document: str
    before: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


def cells(line: str) -> tuple[str, ...]:
    """The cells of one Markdown table row."""
    return tuple(cell.strip() for cell in line.strip().strip("|").split("|"))


def tables(document: str) -> Iterator[Table]:
    """Every Markdown table of ``docs/conformance/<document>``."""
    lines = (CONFORMANCE / document).read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        if lines[index].startswith("|") and index + 1 < len(lines) and re.fullmatch(r"\|[-:| ]+\|", lines[index + 1].strip()):
            header = cells(lines[index])
            end = index + 2
            while end < len(lines) and lines[end].startswith("|"):
                end += 1
            before = next((line for line in reversed(lines[:index]) if line.strip()), "")
            yield Table(document, before, header, tuple(cells(line) for line in lines[index + 2 : end]))
            index = end
        else:
            index += 1


def shaped(header: tuple[str, ...]) -> list[Table]:
    """The tables of every checked document that have ``header``."""
    return [table for document in DOCUMENTS for table in tables(document) if table.header == header]


def count(text: str) -> int:
    """A figure as written: digits with thousands separators."""
    assert re.fullmatch(r"\d{1,3}(,\d{3})*", text), f"not a count: {text!r}"
    return int(text.replace(",", ""))


def unquoted(text: str) -> str:
    """A cell's text without the backticks around a name."""
    return text.strip("`")


def classes_written(text: str) -> dict[str, int]:
    """```label` count`` pairs, comma-separated, or ``none``."""
    if text == "none":
        return {}
    pairs = [part.strip() for part in text.split(", ")]
    found: dict[str, int] = {}
    for pair in pairs:
        match = re.fullmatch(r"`([^`]+)` (\S+)", pair)
        assert match is not None, f"not a `label` count pair: {pair!r} in {text!r}"
        assert match[1] not in found, f"{match[1]} is written twice in {text!r}"
        found[match[1]] = count(match[2])
    return found


def catalogue(name: str) -> list[dict[str, Any]]:
    """A saved catalogue's rows."""
    rows: list[dict[str, Any]] = json.loads((CONFORMANCE / name).read_text(encoding="utf-8"))
    return rows


def figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """What a catalogue table row states about ``rows``."""
    diverging = [row for row in rows if row["verdict"] not in AGREEING]
    return {
        "questions": len(rows),
        "agree": sum(row["verdict"] == "agree" for row in rows),
        "same refusal, other code": sum(row["verdict"] == "agree*" for row in rows),
        "diverge": len(diverging),
        "divergences by class": dict(Counter(row["class"] for row in diverging)),
    }


def written(row: tuple[str, ...]) -> dict[str, Any]:
    """What one catalogue table row says, in the shape of :func:`figures`."""
    named = dict(zip(CATALOGUE_HEADER, row, strict=True))
    return {
        "questions": count(named["questions"]),
        "agree": count(named["agree"]),
        "same refusal, other code": count(named["same refusal, other code"]),
        "diverge": count(named["diverge"]),
        "divergences by class": classes_written(named["divergences by class"]),
    }


CATALOGUE_ROWS = [
    pytest.param(table.document, row, id=f"{table.document}:{unquoted(row[0])}:{unquoted(row[1])}")
    for table in shaped(CATALOGUE_HEADER)
    for row in table.rows
]


@pytest.mark.parametrize(("document", "row"), CATALOGUE_ROWS)
def test_every_catalogue_figure_is_the_saved_catalogues(document: str, row: tuple[str, ...]) -> None:
    """A catalogue table row gives exactly the counts of its catalogue (or of one group of it)."""
    name, group = unquoted(row[0]), unquoted(row[1])
    rows = catalogue(name)
    if group != "all":
        rows = [r for r in rows if r["group"] == group]
        assert rows, f"{document}: the catalogue {name} has no group {group!r}"
    assert written(row) == figures(rows), f"{document}: the row for {name} / {group} is stale"


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_document_gives_its_catalogues_whole(document: str) -> None:
    """Each document keeps the ``all`` row of every catalogue it reports on, so no figure goes unchecked."""
    mine = [table for table in shaped(CATALOGUE_HEADER) if table.document == document]
    whole = {unquoted(row[0]) for table in mine for row in table.rows if row[1] == "all"}
    assert whole == CATALOGUES[document]


def test_the_saved_catalogues_hold_no_gap_and_nothing_unexplained() -> None:
    """Every divergence of both catalogues is a deviation row or a driver note: none is a known model gap."""
    for name in sorted({n for names in CATALOGUES.values() for n in names}):
        classes = Counter(row["class"] for row in catalogue(name) if row["verdict"] not in AGREEING)
        assert not [label for label in classes if label.startswith("gap:") or label == "unexplained"], (name, classes)


# -- the vectors-run figure ----------------------------------------------------------------------------------


def vectors_tables() -> list[Table]:
    """Every vectors table, each with its driver named in the line before it."""
    return shaped(VECTORS_HEADER)


def driver_of(table: Table) -> list[str]:
    """The driver command named in the line before a vectors table (``--driver "CMD"``)."""
    match = re.search(r'--driver "([^"]+)"', table.before)
    assert match is not None, f"{table.document}: the line before the vectors table names no --driver: {table.before!r}"
    return [str(ROOT / part) if (ROOT / part).exists() else part for part in shlex.split(match[1])]


def written_runs(table: Table) -> dict[str, tuple[int, int, int]]:
    """Per file (and ``all``): passed, failed, unsupported, as the table writes them."""
    return {unquoted(row[0]): (count(row[1]), count(row[2]), count(row[3])) for row in table.rows}


def test_the_format_edge_page_quotes_a_vectors_run() -> None:
    """``dsh-format.md`` keeps its ``vectors run`` figure in a table this module checks."""
    assert [table.document for table in vectors_tables()].count("dsh-format.md") == 1


@pytest.mark.parametrize("table", vectors_tables(), ids=lambda table: table.document)
def test_a_vectors_table_adds_up(table: Table) -> None:
    """The ``all`` row is the sum of the file rows, and every vector file has its row."""
    runs = written_runs(table)
    total = runs.pop("all")
    assert set(runs) == set(load_all())
    assert total == tuple(sum(column) for column in zip(*runs.values(), strict=True))


@pytest.mark.parametrize("table", vectors_tables(), ids=lambda table: table.document)
def test_every_vectors_figure_is_what_the_driver_gives_today(table: Table) -> None:
    """``vectors run --any-code`` against the named driver gives each file's row (the large file only when slow runs)."""
    command = driver_of(table)
    if shutil.which(command[0]) is None:
        pytest.skip(f"{command[0]} is not installed")
    script = Path(command[-1])
    if not (script.parent / "node_modules").is_dir():
        pytest.skip(f"{script.parent / 'node_modules'} is missing: run `npm ci` there")
    documents = load_all()
    if not SLOW:
        documents.pop(LARGE)
    port = SubprocessPort(command, timeout=20.0)
    try:
        results = run_files(port, documents, Options(strict_codes=False, large_timeout=300.0))
    finally:
        port.close()
    measured = {stem: (row["passed"], row["failed"], row["unsupported"]) for stem, row in counts(results).items()}
    runs = written_runs(table)
    assert {stem: runs[stem] for stem in measured} == measured, f"{table.document}: the vectors table is stale"
