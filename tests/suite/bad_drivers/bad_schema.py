"""A driver whose ``state`` reply has a node that is not a seq."""

from typing import Any

from _driverlib import reply, say, serve


def misshape(request: dict[str, Any]) -> None:
    """Reply with a string among the nodes."""
    say("bad_schema: nodes are strings today")
    reply(request["id"], {"length": 2, "nodes": [0, "one"], "replace_generation": 0, "header": None})


serve(misshape)
