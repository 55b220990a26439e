"""A driver that starts a child holding its pipes, then exits with status 4 instead of answering its trigger op."""

import sys

from _driverlib import say, serve, spawn


def abandon(_: object) -> None:
    """Leave the child behind with the pipes open."""
    spawn(escape=False)
    say("orphan_child: leaving my child behind")
    sys.exit(4)


serve(abandon)
