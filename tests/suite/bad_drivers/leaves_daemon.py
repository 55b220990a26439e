"""A well-behaved driver that leaves a detached process behind when it leaves on ``bye``."""

from _driverlib import serve, spawn


def nothing(_: object) -> None:
    """Never triggered: the trigger op is one the suite does not send."""


spawn(escape=True)
serve(nothing)
