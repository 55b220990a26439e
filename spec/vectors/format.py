"""The on-disk form of the vectors: where the files live, what a case holds, and how it is written.

Every file is a JSON object ``{format, group, title, cases}``; a case is
``{id, invariants, description, requires, input, expected}`` (see ``spec/vectors/data/schema.json``).  Files
are written deterministically: keys sorted, one case per line, ASCII only, so that ``verify`` can
compare text and a diff shows whole cases.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from sessionlog_spec.files import FileProblem, read_regular
from sessionlog_spec.registry import GROUP_NAMES

FORMAT = "sessionlog-vectors/1"
VECTORS_DIR = Path(__file__).resolve().parent / "data"
"""The committed vectors: installed with the package, so a port can be checked outside this repository."""
SCHEMA_FILE = "schema.json"
REGRESSIONS = "regressions"
LARGE = "large"

GROUP_FILES: dict[str, str] = {
    "LOG": "log",
    "PAY": "payloads",
    "SURF": "surface",
    "TRACE": "trace",
    "HDR": "header",
    "REPAIR": "repair",
    "COMPACT": "compaction",
    "JSONL": "jsonl",
    "LEGACY": "legacy",
    "REL": "relationships",
}
"""Invariant group key → file stem: the generated files, one per invariant group."""

TITLES: dict[str, str] = {
    **{stem: GROUP_NAMES[key] for key, stem in GROUP_FILES.items()},
    LARGE: "Large logs, described by a generator",
    REGRESSIONS: "Regressions imported from counterexamples",
}
FILE_ORDER: tuple[str, ...] = (*GROUP_FILES.values(), LARGE, REGRESSIONS)
"""Every file stem, in report order."""

GENERATED: tuple[str, ...] = (*GROUP_FILES.values(), LARGE)
"""The stems ``generate`` writes from scratch; ``regressions`` only has its expectations refreshed."""

Step = dict[str, Any]
"""One request without its ``id``: ``{"op": ..., **args}``."""
Case = dict[str, Any]
"""One vector as stored."""


@dataclass(frozen=True, slots=True)
class Draft:
    """A vector before the model has answered it."""

    id: str
    file: str
    """The stem of the file it belongs to."""
    invariants: tuple[str, ...]
    description: str
    steps: tuple[Step, ...]


def path_of(stem: str, root: Path = VECTORS_DIR) -> Path:
    """The file that holds the cases of ``stem``."""
    return root / f"{stem}.json"


def document(stem: str, cases: Sequence[Case]) -> dict[str, Any]:
    """The whole file for ``stem``."""
    return {"format": FORMAT, "group": stem, "title": TITLES[stem], "cases": list(cases)}


def dumps_value(value: Any) -> str:
    """One JSON value on one line: sorted keys, ASCII, no spaces."""
    return json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"), allow_nan=False)


def dumps_document(doc: Mapping[str, Any]) -> str:
    """A file's text: the envelope on its own lines, then one case per line."""
    head = {k: v for k, v in doc.items() if k != "cases"}
    lines = ["{"]
    lines += [f"{dumps_value(key)}:{dumps_value(head[key])}," for key in sorted(head)]
    cases = [dumps_value(case) for case in doc["cases"]]
    lines.append('"cases":[')
    lines += [case + ("," if i < len(cases) - 1 else "") for i, case in enumerate(cases)]
    lines += ["]", "}"]
    return "\n".join(lines) + "\n"


MAX_VECTOR_FILE_BYTES = 256 << 20
"""The largest vector file read (256 MiB; the committed ones are well under 1 MiB)."""


class VectorFileError(ValueError):
    """A vector file cannot be read: not a regular file, too large, not UTF-8 JSON, or not a vector document."""


def load_document(path: Path) -> dict[str, Any]:
    """A vector file, read with exact integers (``-0.0`` stays a float); bounded, regular files only."""
    try:
        value: object = json.loads(read_regular(path, MAX_VECTOR_FILE_BYTES, "a vector file").decode("utf-8"))
    except FileProblem as unreadable:
        raise VectorFileError(f"cannot read {path}: {unreadable}") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise VectorFileError(f"cannot read {path}: not UTF-8 JSON ({error})") from None
    problem = best_match(_document_validator().iter_errors(value))
    if problem is not None:
        where = "".join(f"[{p!r}]" for p in problem.absolute_path) or "the document"
        raise VectorFileError(f"cannot read {path}: not a {FORMAT} file: at {where}: {problem.message[:300]}")
    assert isinstance(value, dict)
    return value


@functools.cache
def _document_validator() -> Draft202012Validator:
    """The validator of ``schema.json``, the vector file format."""
    schema = json.loads(resources.files("sessionlog_spec.vectors").joinpath("data", SCHEMA_FILE).read_text(encoding="utf-8"))
    return Draft202012Validator(schema)


def load_all(root: Path = VECTORS_DIR) -> dict[str, dict[str, Any]]:
    """Every vector file present under ``root``, by stem, in report order."""
    return {stem: load_document(path_of(stem, root)) for stem in FILE_ORDER if path_of(stem, root).exists()}
