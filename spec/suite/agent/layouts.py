"""Other stored layouts of the same log: what a released writer may put on disk for it.

A reader must read every layout to the same events (INV-JSONL-2, INV-JSONL-9, INV-JSONL-10):
chunk runs packed into rows (upstream's default), provenance written as ranges, CRLF line ends, a
repeated key whose last value is the real one.  Each function takes the model's plain stored text
(one compact event per line) and returns another spelling of it.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

from sessionlog_spec.model.jsonl import encode_line
from sessionlog_spec.model.rows import pack_chunk_runs


def _rows(text: str) -> tuple[str, list[dict[str, Any]]]:
    lines = text.split("\n")[:-1]
    return lines[0], [json.loads(line) for line in lines[1:]]


def _text(header_line: str, rows: list[Any]) -> str:
    return "".join(line + "\n" for line in [header_line, *(encode_line(row) for row in rows)])


def packed(text: str) -> str:
    """Runs of at least three chunks as packed rows."""
    header_line, rows = _rows(text)
    return _text(header_line, pack_chunk_runs(rows))


def as_ranges(seqs: list[int]) -> list[Any]:
    """A strictly increasing seq list with each run of two or more consecutive seqs as ``[start, end]``."""
    out: list[Any] = []
    for seq in seqs:
        last = out[-1] if out else None
        if isinstance(last, list) and last[1] + 1 == seq:
            last[1] = seq
        elif isinstance(last, int) and last + 1 == seq:
            out[-1] = [last, seq]
        else:
            out.append(seq)
    return out


def ranged(text: str) -> str:
    """Every strictly increasing ``sourceEventSeqs`` written with ranges."""
    header_line, rows = _rows(text)
    for row in rows:
        sources = row.get("sourceEventSeqs")
        if isinstance(sources, list) and all(b > a for a, b in itertools.pairwise(sources)):
            row["sourceEventSeqs"] = as_ranges(sources)
    return _text(header_line, rows)


def crlf(text: str) -> str:
    """Every line ending in CRLF (written on another platform)."""
    return text.replace("\n", "\r\n")


def repeated_keys(text: str) -> str:
    """Every event row starting with a stale ``"seq": -1`` that its real seq, later in the row, overrides."""
    lines = text.split("\n")[:-1]
    return "".join(line + "\n" for line in [lines[0], *('{"seq":-1,' + line[1:] for line in lines[1:])])


LAYOUTS: dict[str, Callable[[str], str]] = {
    "packed": packed,
    "ranged": ranged,
    "packed+ranged": lambda text: packed(ranged(text)),
    "crlf": crlf,
    "repeated-keys": repeated_keys,
}
"""Layouts by name, for the machines' draws."""
