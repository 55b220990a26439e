"""Broken on purpose (legacy): ``upgrade_v0`` skips ``request/header-delta`` events instead of refusing the log."""

from __future__ import annotations

from typing import Any

from sessionlog_spec.protocol.model_driver import ModelDriver, serve


class AcceptsDeltaDriver(ModelDriver):
    """Drops header deltas from a v0 log and upgrades the rest."""

    def op_upgrade_v0(self, request: dict[str, Any]) -> Any:
        log = request["log"]
        if isinstance(log, dict) and isinstance(log.get("events"), list):
            events = [e for e in log["events"] if not (isinstance(e, dict) and e.get("type") == "request/header-delta")]
            request = {**request, "log": {**log, "events": events}}
        return super().op_upgrade_v0(request)


if __name__ == "__main__":
    serve(AcceptsDeltaDriver())
