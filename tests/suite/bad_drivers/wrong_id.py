"""A driver that answers its trigger op with another request's id."""

from typing import Any

from _driverlib import reply, say, serve


def misnumber(request: dict[str, Any]) -> None:
    """Reply with an id off by one hundred."""
    say("wrong_id: replying to the wrong request")
    reply(request["id"] + 100, {"length": 0, "nodes": [], "replace_generation": 0, "header": None})


serve(misnumber)
