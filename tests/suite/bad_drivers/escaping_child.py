"""A driver that starts a process escaping its tree, then goes quiet (or with ``exit``, exits with status 5).

The process double-forks and calls ``setsid``, so it is in no group or session of the driver and its
parent is gone; it holds the driver's stdin, stdout and stderr and sleeps.  Run it as
``escaping_child.py OP [hang|exit]``; ``escaping_child.py --spawn-only`` only starts such a process
and exits (it is no driver then).
"""

import sys
import time

from _driverlib import say, serve, spawn


def escape(_: object) -> None:
    """Leave a detached process behind, then hang or exit."""
    spawn(escape=True)
    say("escaping_child: a process of mine got away")
    if sys.argv[2:] == ["exit"]:
        sys.exit(5)
    time.sleep(3600)


if sys.argv[1:] == ["--spawn-only"]:
    spawn(escape=True)
else:
    serve(escape)
