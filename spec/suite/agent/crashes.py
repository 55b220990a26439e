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


def lines_of(text: str) -> list[str]:
    """The complete lines of a stored log, without their newlines."""
    return text.split("\n")[:-1]


def cut_at(text: str, position: int) -> str:
    """The log as written up to ``position`` characters: a crash in the middle of a write."""
    return text[: max(0, min(position, len(text)))]


def drop_final_newline(text: str) -> str:
    """The last line written without its newline."""
    return text[:-1] if text.endswith("\n") else text


def duplicate_last_line(text: str) -> str:
    """The last line written twice (a retried write after a lost acknowledgement)."""
    lines = lines_of(text)
    return text + lines[-1] + "\n" if lines else text


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
