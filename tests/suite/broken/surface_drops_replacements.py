"""Broken on purpose (surface): ``fold_surface`` reports no replacements."""

from __future__ import annotations

from typing import Any

from sessionlog_spec.protocol.model_driver import ModelDriver, serve


class DropsReplacementsDriver(ModelDriver):
    """Folds the surface right but forgets which replacements produced it."""

    def op_fold_surface(self, request: dict[str, Any]) -> Any:
        result = super().op_fold_surface(request)
        if isinstance(result, dict):
            result["replacements"] = []
        return result


if __name__ == "__main__":
    serve(DropsReplacementsDriver())
