"""Broken on purpose (every group): refuses what the model refuses, but never names the violation code."""

from __future__ import annotations

from typing import Any

from sessionlog_spec.protocol.model_driver import ModelDriver, serve


class UnmappedCodesDriver(ModelDriver):
    """Answers every refusal with ``UNMAPPED``, as a port whose errors carry no code would."""

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        reply = super().__call__(request)
        if not reply["ok"] and reply["error"]["code"] not in {"UNSUPPORTED", "BAD_REQUEST"}:
            reply["error"] = {"code": "UNMAPPED", "message": reply["error"]["message"]}
        return reply


if __name__ == "__main__":
    serve(UnmappedCodesDriver())
