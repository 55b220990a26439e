"""Crashes the harness itself inflicts on a saved JSONL log, the way a real process dies.

Each function takes the stored text of a valid log and returns the text a crash or a bad disk
could leave behind.  The model decides what a reader must make of it (drop a torn tail and repair,
or refuse naming the line); the suite only checks that the port decides the same.
"""

from __future__ import annotations

from typing import Any

from sessionlog_spec.model.jsonl import encode_line

CORRUPTIONS = ("truncated", "garbage-byte", "crlf", "byte-order-mark", "not-an-object", "blank")
"""Ways a complete line in the middle of a log can be damaged."""
STRAY_LINES = ("blank", "torn-write", "garbage")
"""Complete lines that are no event, as a second writer or an editor leaves them between events."""
FAULTY_ROWS = ("gaps-short", "member-not-string", "seq0-negative", "unexpected-member", "turn-fraction", "time0-string")
"""Ways a packed chunk row can be JSON, an object, and still no row: one member of it wrong."""


def lines_of(text: str) -> list[str]:
    """The complete lines of a stored log, without their newlines."""
    return text.split("\n")[:-1]


def cut_at(text: str, position: int) -> str:
    """The log as written up to ``position`` characters: a crash in the middle of a write."""
    return text[: max(0, min(position, len(text)))]


def drop_final_newline(text: str) -> str:
    """The last line written without its newline."""
    return text[:-1] if text.endswith("\n") else text


def duplicate_line(text: str, index: int) -> str:
    """Line ``index`` (1 is the first event line) written twice in a row, the rest intact: a write
    retried after a lost acknowledgement.  At the last line nothing later proves the copy
    committed; anywhere else the lines after it do."""
    lines = lines_of(text)
    if len(lines) < 2:
        return text
    index = 1 + (index - 1) % (len(lines) - 1)
    return "".join(f"{entry}\n" for entry in [*lines[: index + 1], lines[index], *lines[index + 1 :]])


def duplicate_last_line(text: str) -> str:
    """The last line written twice (a retried write after a lost acknowledgement)."""
    return duplicate_line(text, len(lines_of(text)) - 1)


def damage_line(text: str, index: int, how: str) -> str:
    """Line ``index`` (0 is the header line) damaged as ``how``, the rest intact."""
    lines = lines_of(text)
    if not lines:
        return text
    index %= len(lines)
    line = lines[index]
    if how == "truncated":
        line = line[: max(1, len(line) // 2)]
    elif how == "garbage-byte":
        line = line[: len(line) // 2] + "\x00}" + line[len(line) // 2 :]
    elif how == "crlf":
        line += "\r"
    elif how == "byte-order-mark":
        line = "\ufeff" + line
    elif how == "not-an-object":
        line = "[" + line + "]"
    else:
        line = ""
    lines[index] = line
    return "".join(f"{entry}\n" for entry in lines)


def insert_stray_line(text: str, index: int, what: str) -> str:
    """A complete line that is no event inserted as line ``index`` (0 is the header line, so 1 is
    before the first event; at the end of the log when ``index`` is past it), every event line intact.

    ``torn-write`` is the first half of the event line it precedes (a write that died and was
    retried on a fresh line), or of the last line at the end of the log.
    """
    lines = lines_of(text)
    if not lines:
        return text
    index = min(max(index, 1), len(lines))
    if what == "blank":
        stray = ""
    elif what == "torn-write":
        line = lines[min(index, len(lines) - 1)]
        stray = line[: max(1, len(line) // 2)]
    else:
        stray = "\x00\x00\x00"
    return "".join(f"{entry}\n" for entry in [*lines[:index], stray, *lines[index:]])


def faulty_packed_row(seq0: int, time0: int, how: str, members: int = 3, row_type: str = "text-chunks") -> str:
    """A packed row of ``members`` text chunks from ``seq0`` with one member wrong as ``how``
    (:data:`FAULTY_ROWS`): a reader that expands what it can of it reads events that are not there."""
    texts: list[object] = [chr(ord("a") + i) for i in range(members)]
    data: dict[str, Any] = {"turn": 1, "step": 1, "index": 0, "dt": [1] * (members - 1), "texts": texts}
    row: dict[str, Any] = {"type": row_type, "seq0": seq0, "time0": time0, "data": data}
    if how == "gaps-short":
        data["dt"] = data["dt"][:-1]
    elif how == "member-not-string":
        texts[members // 2] = members
    elif how == "seq0-negative":
        row["seq0"] = -1
    elif how == "unexpected-member":
        data["chunk"] = "x"
    elif how == "turn-fraction":
        data["turn"] = 1.5
    else:
        row["time0"] = str(time0)
    return encode_line(row)


def insert_faulty_row(text: str, index: int, how: str) -> str:
    """A faulty packed row inserted as line ``index`` (1 is before the first event; at the end of
    the log when ``index`` is past it), its ``seq0`` the seq that line holds in a log of one event
    per line: a writer that packed a run wrong and went on writing (or died, at the end)."""
    lines = lines_of(text)
    if not lines:
        return text
    index = min(max(index, 1), len(lines))
    row = faulty_packed_row(index - 1, 0, how)
    return "".join(f"{entry}\n" for entry in [*lines[:index], row, *lines[index:]])


def append_faulty_row(text: str, how: str) -> str:
    """The log followed by a faulty packed row where the next events would be (a writer that packed
    a run wrong and died): nothing later proves it committed."""
    return insert_faulty_row(text, len(lines_of(text)), how)


def drop_line(text: str, index: int) -> str:
    """Line ``index`` lost (1 is the first event line), the rest intact."""
    lines = lines_of(text)
    if len(lines) < 2:
        return text
    index = 1 + index % (len(lines) - 1)
    return "".join(f"{entry}\n" for i, entry in enumerate(lines) if i != index)


def replace_header(text: str, header: dict[str, Any]) -> str:
    """The log with its header line replaced by ``header``."""
    lines = lines_of(text)
    return "".join(f"{entry}\n" for entry in [encode_line(header), *lines[1:]])
