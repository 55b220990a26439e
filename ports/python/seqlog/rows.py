"""Storage rows: packed ``assistant/chunk`` runs and range-encoded provenance.

A stored log may hold, beside one event per line, a **packed chunk row** standing for a run of
``assistant/chunk`` delta events::

    {"type": "text-chunks", "seq0": 7, "time0": 1000, "data": {"turn": 1, "step": 1, "index": 0,
     "dt": [3, 0], "texts": ["Hel", "lo", "!"]}}

(``reasoning-chunks`` the same with reasoning deltas; ``tool-call-chunks`` with ``id``, an optional
``name`` and ``args``).  A row is validated as a whole before it is expanded: one bad member makes
the whole row faulty, never a partial run.  An event row's ``sourceEventSeqs`` may mix plain seqs
and ``[start, end]`` ranges (``[[1, 3], 7]`` is ``[1, 2, 3, 7]``).

The writer packs every run of at least :data:`MIN_RUN` consecutive chunk events whose whole shape
it recognises; anything else is stored verbatim, so packing loses compression, never data.  These
are the released format's rules, read the way a JSON reader of its own language reads numbers:
``1.0`` is the integer 1 and ``-0`` is not a non-negative integer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from seqlog.jsonvalue import is_safe_integer, is_safe_natural

PACKED_TAGS: dict[str, str] = {
    "text-chunks": "text-delta",
    "reasoning-chunks": "reasoning-delta",
    "tool-call-chunks": "tool-call-delta",
}
"""Packed row tag → the delta kind of the chunks it stands for."""
ROW_OF_KIND = {kind: tag for tag, kind in PACKED_TAGS.items()}

MIN_RUN = 3
"""Fewest chunk events packed into one row: below it a row's envelope rivals the lines it replaces."""

_ROW_KEYS = frozenset({"type", "seq0", "time0", "data"})
_TEXT_DATA_KEYS = frozenset({"turn", "step", "index", "dt", "texts"})
_TOOL_DATA_KEYS = frozenset({"turn", "step", "index", "id", "dt", "args"})
_TOOL_DATA_KEYS_NAMED = _TOOL_DATA_KEYS | {"name"}


class RowError(ValueError):
    """What makes one stored row faulty (without its line number)."""


def _is_number(value: object) -> bool:
    kind = type(value)
    return kind is int or kind is float


def _count(value: object, what: str) -> int:
    """``value`` as an ``int`` when it is a non-negative safe integer (not ``-0``), else :class:`RowError`."""
    if isinstance(value, int | float) and is_safe_natural(value):
        return int(value)
    raise RowError(f"{what} must be a non-negative safe integer")


def _safe(value: object, what: str) -> int:
    """``value`` as an ``int`` when it is a safe integer (not ``-0``), else :class:`RowError`."""
    if isinstance(value, int | float) and is_safe_integer(value):
        return int(value)
    raise RowError(f"{what} must be a safe integer")


# Reading ----------------------------------------------------------------------------------------


def decode_packed_row(row: Mapping[str, Any], tag: str) -> list[dict[str, Any]]:
    """The ``assistant/chunk`` events a packed row stands for; raises :class:`RowError` for a faulty row."""
    label = f"{tag} row"
    if row.keys() != _ROW_KEYS:
        raise RowError(f"{label} must have exactly the members type, seq0, time0, data")
    seq0 = _count(row["seq0"], f"{label} seq0")
    time0 = _safe(row["time0"], f"{label} time0")
    data = row["data"]
    if not isinstance(data, Mapping):
        raise RowError(f"{label} data must be a JSON object")
    tool = tag == "tool-call-chunks"
    keys = data.keys()
    if tool:
        if keys not in (_TOOL_DATA_KEYS, _TOOL_DATA_KEYS_NAMED):
            raise RowError(f"{label} data must have exactly turn, step, index, id, name?, dt, args")
    elif keys != _TEXT_DATA_KEYS:
        raise RowError(f"{label} data must have exactly turn, step, index, dt, texts")
    payload = data["args" if tool else "texts"]
    if not isinstance(payload, list | tuple) or not payload or not all(type(member) is str for member in payload):
        raise RowError(f"{label} payload must be a non-empty array of strings")
    gaps = data["dt"]
    if not isinstance(gaps, list | tuple) or len(gaps) != len(payload) - 1:
        raise RowError(f"{label} dt must be one shorter than its payload")
    times = [time0]
    for gap in gaps:
        times.append(_safe(times[-1] + _safe(gap, f"{label} dt member"), f"{label} member time"))
    turn = _count(data["turn"], f"{label} turn")
    step = _count(data["step"], f"{label} step")
    index = _count(data["index"], f"{label} index")
    if tool:
        call_id, name = data["id"], data.get("name")
        if not (type(call_id) is str and call_id != "" and ("name" not in data or type(name) is str)):
            raise RowError(f"{label} id must be a non-empty string and name, when present, a string")
    _count(seq0 + len(payload) - 1, f"{label} final seq")
    kind = PACKED_TAGS[tag]
    events = []
    for k, member in enumerate(payload):
        chunk: dict[str, Any]
        if tool:
            chunk = {"type": kind, "index": index, "id": data["id"]}
            if "name" in data:
                chunk["name"] = data["name"]
            chunk["argumentsDelta"] = member
        else:
            chunk = {"type": kind, "index": index, "text": member}
        events.append(
            {"type": "assistant/chunk", "seq": seq0 + k, "time": times[k], "data": {"turn": turn, "step": step, "chunk": chunk}}
        )
    return events


SeqSpans = list[tuple[int, int]]
"""Decoded provenance as inclusive ``(start, end)`` spans; a plain seq is ``(seq, seq)``."""


def decode_seq_ranges(value: object, max_entries: int) -> SeqSpans:
    """Validate a stored ``sourceEventSeqs`` list of seqs and ``[start, end]`` ranges; raises :class:`RowError`.

    At most ``max_entries`` seqs in all (the event's own seq); every member and bound a
    non-negative safe integer; ``start <= end``; and, when any range is present, the whole list
    strictly increasing.  The spans are checked without being expanded (a forged range may be huge);
    :func:`expand_spans` lists them once the row is known to be kept.
    """
    if not isinstance(value, list | tuple):
        raise RowError("sourceEventSeqs must be an array")
    spans: SeqSpans = []
    total = 0
    has_range = False
    for entry in value:
        if _is_number(entry):
            if total >= max_entries:
                raise RowError("sourceEventSeqs exceeds its event seq")
            seq = _count(entry, "sourceEventSeqs member")
            spans.append((seq, seq))
            total += 1
            continue
        if not isinstance(entry, list | tuple) or len(entry) != 2:
            raise RowError("sourceEventSeqs range must be a [start, end] pair")
        start = _count(entry[0], "sourceEventSeqs range start")
        end = _count(entry[1], "sourceEventSeqs range end")
        if end < start or end - start + 1 > max_entries - total:
            raise RowError("sourceEventSeqs range exceeds its event seq")
        spans.append((start, end))
        total += end - start + 1
        has_range = True
    # Inside a span the seqs increase; only the boundaries between spans can break the order.
    if has_range and any(spans[i][0] <= spans[i - 1][1] for i in range(1, len(spans))):
        raise RowError("sourceEventSeqs ranges must be strictly increasing")
    return spans


def expand_spans(spans: SeqSpans) -> list[int]:
    """The seqs decoded spans stand for, in order."""
    out: list[int] = []
    for start, end in spans:
        if start == end:
            out.append(start)
        else:
            out.extend(range(start, end + 1))
    return out


# Writing ----------------------------------------------------------------------------------------


def _exact(value: Mapping[str, Any], keys: frozenset[str]) -> bool:
    return value.keys() == keys


_EVENT_KEYS = frozenset({"type", "seq", "time", "data"})
_CHUNK_DATA_KEYS = frozenset({"turn", "step", "chunk"})
_TEXT_CHUNK_KEYS = frozenset({"type", "index", "text"})
_TOOL_CHUNK_KEYS = frozenset({"type", "index", "id", "argumentsDelta"})
_TOOL_CHUNK_KEYS_NAMED = _TOOL_CHUNK_KEYS | {"name"}


def classify(record: Mapping[str, Any]) -> str | None:
    """The delta kind of a stored event record whose whole shape a packed row can carry, else ``None``.

    Exactly the released writer's whitelist (envelope, data and chunk with exactly the known
    members, integer seq and time, numeric turn, step and index, string text or id/name/arguments),
    narrowed to what the released reader accepts back: turn, step and index non-negative safe
    integers and a non-empty tool-call id, so that every row written reads back to its events.
    """
    if record.get("type") != "assistant/chunk" or not _exact(record, _EVENT_KEYS):
        return None
    if not is_safe_natural(record["seq"]) or not is_safe_integer(record["time"]):
        return None
    data = record["data"]
    if not isinstance(data, Mapping) or not _exact(data, _CHUNK_DATA_KEYS):
        return None
    chunk = data["chunk"]
    if not (is_safe_natural(data["turn"]) and is_safe_natural(data["step"])):
        return None
    if not isinstance(chunk, Mapping) or not is_safe_natural(chunk.get("index")):
        return None
    kind = chunk.get("type")
    if kind == "text-delta" or kind == "reasoning-delta":  # noqa: PLR1714 - narrows kind to str
        return kind if _exact(chunk, _TEXT_CHUNK_KEYS) and type(chunk["text"]) is str else None
    if kind == "tool-call-delta":
        shaped = _exact(chunk, _TOOL_CHUNK_KEYS) or (_exact(chunk, _TOOL_CHUNK_KEYS_NAMED) and type(chunk["name"]) is str)
        if shaped and type(chunk["id"]) is str and chunk["id"] != "" and type(chunk["argumentsDelta"]) is str:
            return "tool-call-delta"
    return None


def _continues(prev: Mapping[str, Any], nxt: Mapping[str, Any], kind: str) -> bool:
    """Whether ``nxt`` extends a run ending in ``prev`` (both of delta kind ``kind``)."""
    if nxt["seq"] != prev["seq"] + 1 or not is_safe_integer(nxt["time"] - prev["time"]):
        return False
    a, b = prev["data"], nxt["data"]
    if a["turn"] != b["turn"] or a["step"] != b["step"] or a["chunk"]["index"] != b["chunk"]["index"]:
        return False
    if kind != "tool-call-delta":
        return True
    x, y = a["chunk"], b["chunk"]
    return x["id"] == y["id"] and ("name" in x) == ("name" in y) and x.get("name") == y.get("name")


def _row(kind: str, run: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    first = run[0]
    chunk = first["data"]["chunk"]
    data: dict[str, Any] = {
        "turn": first["data"]["turn"],
        "step": first["data"]["step"],
        "index": chunk["index"],
        "dt": [run[i]["time"] - run[i - 1]["time"] for i in range(1, len(run))],
    }
    if kind == "tool-call-delta":
        data["id"] = chunk["id"]
        if "name" in chunk:
            data["name"] = chunk["name"]
        data["args"] = [event["data"]["chunk"]["argumentsDelta"] for event in run]
    else:
        data["texts"] = [event["data"]["chunk"]["text"] for event in run]
    return {"type": ROW_OF_KIND[kind], "seq0": first["seq"], "time0": first["time"], "data": data}


def pack_chunk_runs(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The stored rows of a batch of event records: runs of at least :data:`MIN_RUN` packed, the rest verbatim.

    A run is consecutive chunk events of the same delta kind (see :func:`classify`) with
    consecutive seqs, time gaps that are safe integers, the same turn, step and index and, for tool
    calls, the same id and the same name (or none).  Pure; order is kept.
    """
    out: list[Mapping[str, Any]] = []
    kind: str | None = None
    run: list[Mapping[str, Any]] = []

    def flush() -> None:
        nonlocal kind, run
        if kind is not None and len(run) >= MIN_RUN:
            out.append(_row(kind, run))
        else:
            out.extend(run)
        kind, run = None, []

    for record in records:
        current = classify(record)
        if current is None:
            flush()
            out.append(record)
            continue
        if current == kind and run and _continues(run[-1], record, current):
            run.append(record)
            continue
        flush()
        kind, run = current, [record]
    flush()
    return out
