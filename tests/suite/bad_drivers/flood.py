"""A driver that writes to stderr without end instead of answering its trigger op.

With ``then-exit`` as its second argument it writes 4 MiB, then its last words, and exits with
status 7: the pipe still holds the end of it when the driver is gone.
"""

import sys

from _driverlib import say, serve


def flood(_: object) -> None:
    """Log forever (or a lot, then leave) and never reply."""
    say("flood: here it comes")
    line = b"flood: " + b"~" * 1000 + b"\n"
    for _ in range(4096) if sys.argv[2:] == ["then-exit"] else iter(int, 1):
        sys.stderr.buffer.write(line)
    sys.stderr.buffer.flush()
    say("flood: my last words")
    sys.exit(7)


serve(flood)
