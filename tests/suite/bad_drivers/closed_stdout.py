"""A driver that closes its stdout instead of answering its trigger op, and keeps running."""

import os
import time

from _driverlib import say, serve


def hang_up(_: object) -> None:
    """Close the reply stream and stay."""
    say("closed_stdout: hanging up")
    os.close(1)
    time.sleep(3600)


serve(hang_up)
