"""Argument types of the command lines: every count, duration and driver command is checked
before any work starts, so bad usage ends in one line and exit status 2, never in a traceback
or a silent fallback to a default."""

from __future__ import annotations

import argparse
import math
import shlex


def positive_int(text: str) -> int:
    """A count of at least 1 (``--max-examples``, ``--steps``, ``--shrink-seconds``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def positive_seconds(text: str) -> float:
    """A finite duration above zero (``--timeout``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number of seconds above 0")
    return value


def command_line(text: str) -> str:
    """A driver command line: non-empty, with balanced quotes."""
    try:
        words = shlex.split(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{text!r} is not a command line: {error}") from None
    if not words:
        raise argparse.ArgumentTypeError("the driver command is empty")
    return text
