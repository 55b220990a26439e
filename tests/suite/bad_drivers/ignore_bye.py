"""A driver that ignores ``bye`` and keeps running: ``close`` must still end it."""

import time

from _driverlib import say, serve


def linger(_: object) -> None:
    """Stay alive without replying."""
    say("ignore_bye: not leaving")
    time.sleep(3600)


serve(linger)
