"""Broken on purpose (repair): the closers of an open step lack its ``step/end``."""

from __future__ import annotations

from typing import Any

from sessionlog_spec.protocol.model_driver import ModelDriver, serve


class NoStepEndDriver(ModelDriver):
    """Closes a crashed turn without closing its open step first."""

    def op_repair(self, request: dict[str, Any]) -> Any:
        result = super().op_repair(request)
        if isinstance(result, dict):
            closers = [c for c in result["closers"] if c["type"] != "step/end"]
            for seq, closer in enumerate(closers, start=len(request["events"])):
                closer["seq"] = seq
            result["closers"] = closers
        return result


if __name__ == "__main__":
    serve(NoStepEndDriver())
