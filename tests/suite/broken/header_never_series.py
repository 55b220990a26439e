"""Broken on purpose (header): ``header_decision`` never writes a ``series`` snapshot."""

from __future__ import annotations

from typing import Any

from sessionlog_spec.protocol.model_driver import ModelDriver, serve


class NeverSeriesDriver(ModelDriver):
    """Treats an unchanged header at a series start like any other unchanged request."""

    def op_header_decision(self, request: dict[str, Any]) -> Any:
        result = super().op_header_decision(request)
        if isinstance(result, dict) and result["decision"] is not None and result["decision"]["reason"] == "series":
            return {"decision": None}
        return result


if __name__ == "__main__":
    serve(NeverSeriesDriver())
