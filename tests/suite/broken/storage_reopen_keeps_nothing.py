"""Broken on purpose (storage): reopening a damaged store says nothing was dropped."""

from __future__ import annotations

from typing import Any

from sessionlog_spec.protocol.model_driver import ModelDriver, serve


class ReopenKeepsNothingDriver(ModelDriver):
    """Recovers the right session from a damaged file but reports that it dropped nothing."""

    def op_store_open(self, request: dict[str, Any]) -> Any:
        result = super().op_store_open(request)
        if isinstance(result, dict):
            result["dropped_torn_tail"] = False
        return result


if __name__ == "__main__":
    serve(ReopenKeepsNothingDriver())
