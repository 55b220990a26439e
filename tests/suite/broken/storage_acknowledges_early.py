"""Broken on purpose (storage): says every appended event is durable before anything is written."""

from __future__ import annotations

from typing import Any

from sessionlog_spec.protocol.model_driver import ModelDriver, serve


class AcknowledgesEarlyDriver(ModelDriver):
    """A store that writes at checkpoints only, but acknowledges each append as durable at once."""

    def op_store_append(self, request: dict[str, Any]) -> Any:
        result = super().op_store_append(request)
        if isinstance(result, dict):
            result["durable_length"] = result["length"]
            self.durable = result["length"]
        return result


if __name__ == "__main__":
    serve(AcknowledgesEarlyDriver())
