"""Argument types of the command lines: every count, duration, driver command and output path is
checked before any work starts, so bad usage ends in one line and exit status 2, never in a
traceback or a silent fallback to a default."""

from __future__ import annotations

import argparse
import math
import os
import shlex
import tempfile
from pathlib import Path


def positive_int(text: str) -> int:
    """A count of at least 1 (``--max-examples``, ``--steps``, ``--shrink-seconds``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def usable_cores() -> int:
    """How many cores this process may run on (its CPU affinity, as ``nproc`` counts them)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # no affinity on this platform: every core
        return os.cpu_count() or 1


def jobs_count(text: str) -> int:
    """How many processes ``check --jobs`` runs on: a whole number of at least 1, or ``0``/``auto`` for one per core."""
    if text.strip().lower() == "auto":
        return usable_cores()
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number of jobs: give a whole number, or 0 or auto for one per core"
        ) from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1 (or 0 or auto for one per core)")
    return value or usable_cores()


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


def output_file_problem(path: Path, example: str) -> str | None:
    """Why a report cannot be written at ``path`` (``--report``, ``--junit``), or ``None``.

    Missing directories on the way are fine (they are created when the report is written); the
    nearest existing one must be a directory files can be created in.  Nothing is left behind.
    """
    try:
        if path.is_dir():
            return f"{path} is a directory: give a file path, such as {path / example}"
        if path.exists():
            return None if os.access(path, os.W_OK) else f"cannot write {path}: permission denied"
        return directory_problem(path.parent)
    except OSError as error:  # a path the user may not even look at
        return f"cannot check {path}: {error.strerror or error}"


def output_directory_problem(path: Path) -> str | None:
    """Why files cannot be written into the directory ``path`` (``--cases-dir``), or ``None``."""
    try:
        if path.exists() and not path.is_dir():
            return f"{path} is a file, not a directory"
        return directory_problem(path)
    except OSError as error:
        return f"cannot check {path}: {error.strerror or error}"


def directory_problem(directory: Path) -> str | None:
    """Why files cannot be created in ``directory`` (created with its parents when missing), or ``None``.

    The nearest existing ancestor is probed by creating and removing a temporary file in it, so a
    read-only file system or a directory the user may not write is found whatever the permission
    bits say (``os.access`` answers yes for root everywhere).
    """
    existing = directory
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"cannot create {directory}: {existing} is not a directory"
    try:
        handle, probe = tempfile.mkstemp(prefix=".sessionlog-probe-", dir=existing)
    except OSError as error:
        reason = error.strerror or str(error)
        if existing == directory:
            return f"cannot create files in {directory}: {reason}"
        return f"cannot create {directory}: cannot create anything in {existing}: {reason}"
    os.close(handle)
    os.unlink(probe)
    return None
