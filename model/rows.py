"""Physical rows: what one stored line stands for.

A row is one event, or a *packed chunk row* that stores a run of ``assistant/chunk`` deltas
compactly.  An event row may also spell its ``sourceEventSeqs`` with ranges.  Both forms belong to
the released physical codec of format versions 0 and 1 (``releasedV0SessionFormatCodec`` and
``releasedV1SessionFormatCodec`` of ``@deepseek-ai/dsh-session-format-v0-to-v1``), which decides
every rule here: the design note says nothing about the physical layout.

Decoding is atomic: a row either becomes all of its events or is *faulty* as a whole (a string
saying why), never a partial run.  What a reader does with a faulty row is :mod:`.jsonl`'s business.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Final

from sessionlog_spec.model.json_value import as_int, is_safe_integer, is_safe_natural

PACKED_ROW_CHUNKS: Final = {
    "text-chunks": "text-delta",
    "reasoning-chunks": "reasoning-delta",
    "tool-call-chunks": "tool-call-delta",
}
"""The packed row types and the chunk type of their members."""
ROW_KINDS: Final = {chunk: row for row, chunk in PACKED_ROW_CHUNKS.items()}
MIN_PACKED_RUN: Final = 3
"""A writer packs runs of at least this many chunks (shorter runs stay one event per line)."""

_ROW_ENVELOPE = frozenset({"type", "seq0", "time0", "data"})
_TEXT_DATA = frozenset({"turn", "step", "index", "dt", "texts"})
_TOOL_DATA = frozenset({"turn", "step", "index", "id", "dt", "args"})

Record = Mapping[str, object]


def is_number(value: object) -> bool:
    """A JSON number (``true`` is not one, although Python counts ``bool`` as ``int``)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _members_problem(record: Mapping[str, object], required: frozenset[str], optional: frozenset[str]) -> str | None:
    """Exact members: the released codec's ``assertReleasedV0Keys`` (unexpected first, then missing)."""
    unexpected = [key for key in record if key not in required | optional]
    if unexpected:
        return f"has unexpected member {unexpected[0]!r}"
    missing = sorted(required - set(record))
    if missing:
        return f"lacks required member {missing[0]!r}"
    return None


def packed_row_events(row: Record, row_type: str) -> tuple[Record, ...] | str:
    """The ``assistant/chunk`` events of one packed row, or why the row is faulty."""
    label = f"{row_type} row"
    if (problem := _members_problem(row, _ROW_ENVELOPE, frozenset())) is not None:
        return f"{label} {problem}"
    seq0, time0, data = row["seq0"], row["time0"], row["data"]
    if not is_safe_natural(seq0):
        return f"{label} seq0 must be a non-negative safe integer"
    if not is_safe_integer(time0):
        return f"{label} time0 must be a safe integer"
    if not isinstance(data, Mapping):
        return f"{label} data must be a JSON object"
    is_tool = row_type == "tool-call-chunks"
    shape = (_TOOL_DATA, frozenset({"name"})) if is_tool else (_TEXT_DATA, frozenset())
    if (problem := _members_problem(data, *shape)) is not None:
        return f"{label} data {problem}"
    payload = data["args" if is_tool else "texts"]
    if not isinstance(payload, list | tuple) or not payload or not all(isinstance(m, str) for m in payload):
        return f"{label} payload must be a non-empty string array"
    gaps = data["dt"]
    if not isinstance(gaps, list | tuple) or len(gaps) != len(payload) - 1:
        return f"{label} dt length must match its payload"
    times = [int(time0)]  # type: ignore[call-overload]
    for gap in gaps:
        if not is_safe_integer(gap):
            return f"{label} dt member must be a safe integer"
        if not is_safe_integer(times[-1] + gap):
            return f"{label} member time must be a safe integer"
        times.append(times[-1] + int(gap))
    for key in ("turn", "step", "index"):
        if not is_safe_natural(data[key]):
            return f"{label} {key} must be a non-negative safe integer"
    if is_tool and (
        not isinstance(data["id"], str) or data["id"] == "" or ("name" in data and not isinstance(data["name"], str))
    ):
        return f"{label} id and optional name must be strings"
    if not is_safe_natural(int(seq0) + len(payload) - 1):  # type: ignore[call-overload]
        return f"{label} final seq must be a non-negative safe integer"
    return tuple(
        {
            "type": "assistant/chunk",
            "seq": int(seq0) + k,  # type: ignore[call-overload]
            "time": time,
            "data": {"turn": data["turn"], "step": data["step"], "chunk": _chunk(row_type, data, member)},
        }
        for k, (member, time) in enumerate(zip(payload, times, strict=True))
    )


def _chunk(row_type: str, data: Mapping[str, object], member: str) -> dict[str, object]:
    if row_type == "tool-call-chunks":
        named = {"name": data["name"]} if "name" in data else {}
        return {"type": "tool-call-delta", "index": data["index"], "id": data["id"], **named, "argumentsDelta": member}
    return {"type": PACKED_ROW_CHUNKS[row_type], "index": data["index"], "text": member}


def seq_spans(value: object, max_entries: int) -> tuple[tuple[int, int], ...] | str:
    """``sourceEventSeqs`` as spans ``(first, last)`` (a plain seq is a span of one), or why the list
    is faulty.

    The released ``decodeSeqRanges``: the expanded list is at most ``max_entries`` (the event's own
    seq) long, and once any range is used it must be strictly increasing.  Checked arithmetically,
    so a forged range costs nothing until the row is kept.
    """
    if not isinstance(value, list | tuple):
        return "sourceEventSeqs must be an array"
    spans: list[tuple[int, int]] = []
    count = 0
    ranged = False
    increasing = True
    for entry in value:
        if is_number(entry):
            if count >= max_entries:
                return "sourceEventSeqs exceeds its event seq"
            if not is_safe_natural(entry):
                return "sourceEventSeqs member must be a non-negative safe integer"
            first = last = int(entry)
        else:
            if not isinstance(entry, list | tuple) or len(entry) != 2:
                return "sourceEventSeqs range must be a [start, end] pair"
            start, end = entry
            if not is_safe_natural(start) or not is_safe_natural(end):
                return "sourceEventSeqs range bounds must be non-negative safe integers"
            first, last = int(start), int(end)
            if last < first or last - first + 1 > max_entries - count:
                return "sourceEventSeqs range exceeds its event seq"
            ranged = True
        increasing = increasing and (not spans or first > spans[-1][1])
        count += last - first + 1
        spans.append((first, last))
    if ranged and not increasing:
        return "sourceEventSeqs ranges must be strictly increasing"
    return tuple(spans)


def expanded(spans: tuple[tuple[int, int], ...]) -> list[int]:
    """The seqs that spans stand for, in order."""
    return [seq for first, last in spans for seq in range(first, last + 1)]


def row_events(value: object, next_seq: int | None = None) -> tuple[Record, ...] | str:
    """The events one parsed row stands for, or why the row is faulty.

    A plain event row is passed through unjudged (the format's own validation judges it later),
    except that range-encoded provenance is expanded, once the row's seq is ``next_seq`` (when
    given): a row off the sequence is dropped or refused anyway, and expanding its ranges first
    would let a forged seq claim any amount of memory.
    """
    if not isinstance(value, Mapping):
        return "is not a JSON object"
    row_type = value.get("type")
    if isinstance(row_type, str) and row_type in PACKED_ROW_CHUNKS:
        return packed_row_events(value, row_type)
    if "sourceEventSeqs" not in value:
        return (value,)
    seq = value.get("seq")
    if not is_safe_natural(seq):
        return "seq must be a non-negative safe integer"
    spans = seq_spans(value["sourceEventSeqs"], as_int(seq) or 0)
    if isinstance(spans, str):
        return spans
    if next_seq is not None and seq != next_seq:
        return (value,)
    return ({**value, "sourceEventSeqs": expanded(spans)},)


# --- writing ---------------------------------------------------------------------------------


def _packable_kind(record: Record) -> str | None:
    """The delta kind of a chunk event whose whole shape a packed row can hold (``classify``)."""
    if record.get("type") != "assistant/chunk" or set(record) != {"type", "seq", "time", "data"}:
        return None
    if not is_safe_natural(record["seq"]) or not is_safe_integer(record["time"]):
        return None
    data = record["data"]
    if not isinstance(data, Mapping) or set(data) != {"turn", "step", "chunk"}:
        return None
    chunk = data["chunk"]
    # Upstream's writer packs any number here and any call id, which its own codec then refuses;
    # this writer packs only what the codec reads back.
    if not is_safe_natural(data["turn"]) or not is_safe_natural(data["step"]) or not isinstance(chunk, Mapping):
        return None
    if not is_safe_natural(chunk.get("index")):
        return None
    kind = chunk.get("type")
    if kind in ("text-delta", "reasoning-delta"):
        return str(kind) if set(chunk) == {"type", "index", "text"} and isinstance(chunk["text"], str) else None
    if kind == "tool-call-delta":
        keys = set(chunk)
        plain = keys == {"type", "index", "id", "argumentsDelta"}
        named = keys == {"type", "index", "id", "name", "argumentsDelta"} and isinstance(chunk["name"], str)
        strings = isinstance(chunk["id"], str) and chunk["id"] != "" and isinstance(chunk["argumentsDelta"], str)
        return "tool-call-delta" if (plain or named) and strings else None
    return None


def _continues(previous: Record, following: Record, kind: str) -> bool:
    """Whether ``following`` extends a run that ends in ``previous`` (the released ``continues``)."""
    a_data, b_data = previous["data"], following["data"]
    assert isinstance(a_data, Mapping) and isinstance(b_data, Mapping)
    a_chunk, b_chunk = a_data["chunk"], b_data["chunk"]
    assert isinstance(a_chunk, Mapping) and isinstance(b_chunk, Mapping)
    if following["seq"] != previous["seq"] + 1:  # type: ignore[operator]
        return False
    if not is_safe_integer(following["time"] - previous["time"]):  # type: ignore[operator]
        return False
    if a_data["turn"] != b_data["turn"] or a_data["step"] != b_data["step"] or a_chunk["index"] != b_chunk["index"]:
        return False
    if kind != "tool-call-delta":
        return True
    return (
        a_chunk["id"] == b_chunk["id"]
        and ("name" in a_chunk) == ("name" in b_chunk)
        and (a_chunk.get("name") == b_chunk.get("name"))
    )


def _packed_row(kind: str, run: Sequence[Record]) -> dict[str, object]:
    first_data = run[0]["data"]
    assert isinstance(first_data, Mapping)
    chunks = [r["data"]["chunk"] for r in run]  # type: ignore[index]
    first = chunks[0]
    data: dict[str, object] = {
        "turn": first_data["turn"],
        "step": first_data["step"],
        "index": first["index"],
        "dt": [b["time"] - a["time"] for a, b in itertools.pairwise(run)],  # type: ignore[operator]
    }
    if kind == "tool-call-delta":
        data["id"] = first["id"]
        if "name" in first:
            data["name"] = first["name"]
        data["args"] = [c["argumentsDelta"] for c in chunks]
    else:
        data["texts"] = [c["text"] for c in chunks]
    return {"type": ROW_KINDS[kind], "seq0": run[0]["seq"], "time0": run[0]["time"], "data": data}


def pack_chunk_runs(records: Sequence[Record]) -> list[Record]:
    """Encoded events as rows, each run of at least three packable chunks as one packed row.

    Upstream's JSONL writer does this by default (``packChunkRuns``); a reader must accept both
    layouts, and reading either gives the same events.
    """
    out: list[Record] = []
    kind: str | None = None
    run: list[Record] = []

    def flush() -> None:
        if kind is not None and len(run) >= MIN_PACKED_RUN:
            out.append(_packed_row(kind, run))
        else:
            out.extend(run)

    for record in records:
        record_kind = _packable_kind(record)
        if record_kind is None:
            flush()
            kind, run = None, []
            out.append(record)
            continue
        if record_kind == kind and run and _continues(run[-1], record, record_kind):
            run.append(record)
            continue
        flush()
        kind, run = record_kind, [record]
    flush()
    return out
