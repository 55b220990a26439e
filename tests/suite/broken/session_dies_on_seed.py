"""Broken on purpose (session): the driver process exits when asked to seed a non-empty session."""

from __future__ import annotations

import sys
from typing import Any

from sessionlog_spec.protocol.model_driver import ModelDriver, serve


class DiesOnSeedDriver(ModelDriver):
    """Crashes the way a port with an unhandled exception does."""

    def op_seed(self, request: dict[str, Any]) -> Any:
        if request["events"]:
            print("Traceback (most recent call last): seeding is not implemented", file=sys.stderr)
            sys.exit(3)
        return super().op_seed(request)


if __name__ == "__main__":
    serve(DiesOnSeedDriver())
