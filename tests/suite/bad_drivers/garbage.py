"""A driver that prints a line that is not JSON instead of a reply."""

from _driverlib import say, serve, write


def babble(_: object) -> None:
    """Print a log line to stdout, where only replies belong."""
    say("garbage: printing to the wrong stream")
    write(b"INFO computing state...\n")


serve(babble)
