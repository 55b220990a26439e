"""A driver that stops answering: it never replies to its trigger op."""

import time

from _driverlib import say, serve


def hang(_: object) -> None:
    """Go quiet for longer than any timeout."""
    say("hang: going quiet now")
    time.sleep(3600)


serve(hang)
