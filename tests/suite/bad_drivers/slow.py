"""A driver that answers its trigger op correctly, but only after three seconds."""

import time
from typing import Any

from _driverlib import reply, say, serve


def dawdle(request: dict[str, Any]) -> None:
    """Take longer than the timeout, then reply."""
    say("slow: thinking it over")
    time.sleep(3)
    reply(request["id"], {"length": 0, "nodes": [], "replace_generation": 0, "header": None})


serve(dawdle)
