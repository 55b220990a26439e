"""A driver whose reply line is 2 MiB long (run it with a smaller ``max_reply_bytes``)."""

from typing import Any

from _driverlib import reply, say, serve


def bloat(request: dict[str, Any]) -> None:
    """Reply with a huge string in the result."""
    say("oversize: here comes a big one")
    reply(request["id"], {"pad": "x" * (2 << 20)})


serve(bloat)
