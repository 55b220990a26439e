"""Reading a file named on the command line, without surprises.

Every file the suite reads by path (a counterexample, an expected-failures list, a vector file)
goes through :func:`read_regular`: only a regular file is read, a FIFO or a device is refused
before it is opened (opening a FIFO with no writer blocks; a device can feed bytes forever), the
open itself never blocks should the path be swapped in between, and no more than a stated number
of bytes is read.  A problem is one :class:`FileProblem` whose message completes "cannot read X: …".
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class FileProblem(ValueError):
    """The file cannot be read as asked: missing, not a regular file, or over its size limit."""


def read_regular(path: Path, limit: int, what: str = "a file") -> bytes:
    """At most ``limit`` bytes of the regular file at ``path``; anything else is a :class:`FileProblem`.

    ``what`` names the kind of file in the size message, with its article ("a vector file").
    """
    try:
        if stat.S_ISDIR(os.stat(path).st_mode):
            raise FileProblem("it is a directory")
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
        with os.fdopen(descriptor, "rb") as file:
            status = os.fstat(descriptor)
            if not stat.S_ISREG(status.st_mode):
                raise FileProblem("not a regular file")
            if status.st_size > limit:
                raise FileProblem(f"the file is {status.st_size:,} bytes, over the {limit:,} byte limit of {what}")
            data = file.read(limit + 1)
    except OSError as error:
        raise FileProblem(error.strerror or str(error)) from None
    if len(data) > limit:  # it grew after the size was read
        raise FileProblem(f"the file is over the {limit:,} byte limit of {what}")
    return data
