"""Broken on purpose (session): ``state`` gets a wrong length on every seventh call, whatever came before.

The same requests since ``reset`` then get different answers from one example to the next, so a
replay of a failing example passes: the suite must say the driver is nondeterministic and name the
request, not report a flaky test or a void run.
"""

from __future__ import annotations

from typing import Any

from sessionlog_spec.protocol.model_driver import ModelDriver, serve, state_result


class AnswersVaryDriver(ModelDriver):
    """Counts ``state`` calls across examples: a counter that survives ``reset``."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0
        self.ops["state"] = self.op_state

    def op_state(self, request: dict[str, Any]) -> Any:
        result = state_result(self.state)
        self.calls += 1
        if self.calls % 7 == 0:
            result["length"] += 1
        return result


if __name__ == "__main__":
    serve(AnswersVaryDriver())
