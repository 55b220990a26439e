"""Exact JSON Lines encoding for protocol messages, on both ends of a driver's pipes.

Ports are judged on lossless JSON, so the wire must not change a value on the way: orjson reads an
integer beyond 64 bits as a float and writes NaN as ``null``.  :func:`loads` keeps orjson's speed
for ordinary lines and hands lines with long digit runs to the exact stdlib parser; :func:`dumps`
writes every integer exactly and refuses NaN and infinities instead of rewriting them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import orjson

# 19 digits reach past the signed 64-bit range, where orjson starts reading integers as floats.
_LONG_DIGITS = re.compile(rb"\d{19,}")


def loads(line: bytes) -> Any:
    """One JSON value from UTF-8 bytes, integers exact; raises :class:`ValueError` when it is not JSON."""
    if _LONG_DIGITS.search(line) is None:
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


def dumps(value: Any) -> bytes:
    """One JSON line (newline included); raises :class:`ValueError` or :class:`TypeError` on a non-JSON value."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=_plain)
    return text.encode("utf-8") + b"\n"


def _plain(value: object) -> object:
    """Read-only mappings (the model's frozen objects) as plain objects."""
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not a JSON value")
