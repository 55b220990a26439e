"""A driver that exits with status 3 instead of answering its trigger op."""

import sys

from _driverlib import say, serve


def crash(_: object) -> None:
    """Leave without a reply."""
    say("exit_midrun: giving up")
    sys.exit(3)


serve(crash)
