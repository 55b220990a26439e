"""Exact JSON Lines encoding for protocol messages, on both ends of a driver's pipes.

Ports are judged on lossless JSON, so the wire must not change a value on the way: orjson reads an
integer beyond 64 bits as a float and writes NaN as ``null``.  :func:`loads` keeps orjson's speed
for ordinary lines and hands lines with long digit runs to the exact stdlib parser; :func:`dumps`
writes every integer exactly and refuses NaN and infinities instead of rewriting them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import orjson

# 19 digits reach past the signed 64-bit range, where orjson starts reading integers as floats.
LONG_DIGITS = 19
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
"""Every ASCII digit as ``0``, every other byte as it is: a run of digits becomes a run of zeros."""
_LONG_RUN = b"0" * LONG_DIGITS


def has_long_digits(line: bytes) -> bool:
    """Whether ``line`` holds a run of :data:`LONG_DIGITS` ASCII digits or more (found by a substring
    search over the line with its digits made alike, in time linear in its length: a regular
    expression tries each start inside every shorter run of digits)."""
    return _LONG_RUN in line.translate(_DIGITS_AS_ZERO)


def loads(line: bytes) -> Any:
    """One JSON value from UTF-8 bytes, integers exact; raises :class:`ValueError` when it is not JSON."""
    if not has_long_digits(line):
        return orjson.loads(line)
    return json.loads(line.decode("utf-8"), parse_constant=_refuse_constant, parse_float=_finite_float)


def _refuse_constant(name: str) -> Any:
    """Refuse ``NaN`` and ``Infinity``, which the stdlib parser accepts but JSON does not have."""
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    """A float literal that fits a double (``1e400`` does not: orjson refuses it too)."""
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is out of range for a double")
    return value


_WRITTEN_BY_ORJSON = (
    orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_APPEND_NEWLINE
)
"""orjson writes the JSON types themselves and hands their subclasses, dataclasses and dates to
:func:`_plain`, as the standard writer does with what it does not know."""


def dumps(value: Any) -> bytes:
    """One JSON line (newline included); raises :class:`ValueError` or :class:`TypeError` on a non-JSON value.

    orjson writes the line when it can; a line it writes with a ``null`` in it (which may stand for a
    ``NaN`` or an infinity) and a value it does not write (an integer beyond 64 bits, a lone
    surrogate, a ``str`` subclass, nesting past 255 levels) are written by the standard writer,
    which refuses ``NaN`` and the infinities.
    """
    try:
        line = orjson.dumps(value, default=_plain, option=_WRITTEN_BY_ORJSON)
    except TypeError:  # orjson.JSONEncodeError
        line = None
    if line is not None and b"null" not in line:
        return line
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=_plain)
    return text.encode("utf-8") + b"\n"


def _plain(value: object) -> object:
    """Read-only mappings (the model's frozen objects) as plain objects."""
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not a JSON value")
