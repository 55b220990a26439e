"""Broken on purpose (compaction): ``cuts`` reports every cut as balanced."""

from __future__ import annotations

from typing import Any

from sessionlog_spec.protocol.model_driver import ModelDriver, serve


class AllBalancedDriver(ModelDriver):
    """Never notices a pending tool call at a cut."""

    def op_cuts(self, request: dict[str, Any]) -> Any:
        result = super().op_cuts(request)
        if isinstance(result, dict):
            result["balanced"] = [True] * len(result["balanced"])
        return result


if __name__ == "__main__":
    serve(AllBalancedDriver())
