"""A correct driver that writes 1 MiB to stderr before each ``state`` reply: stderr must never block it."""

from typing import Any

from _driverlib import reply, say, serve


def chatter(request: dict[str, Any]) -> None:
    """Log a lot, then answer properly."""
    for i in range(16 * 1024):
        say(f"chatty: line {i:05d} " + "." * 48)
    say("chatty: last line")
    reply(request["id"], {"length": 0, "nodes": [], "replace_generation": 0, "header": None})


serve(chatter)
