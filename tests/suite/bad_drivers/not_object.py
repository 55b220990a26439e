"""A driver that replies with valid JSON that is not an object."""

from _driverlib import say, serve, write


def listify(_: object) -> None:
    """Reply with an array."""
    say("not_object: replying with an array")
    write(b"[1, 2, 3]\n")


serve(listify)
