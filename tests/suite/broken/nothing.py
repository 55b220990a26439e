"""Broken on purpose: a driver that implements nothing (its ``hello`` declares no capability)."""

from __future__ import annotations

from typing import Any

from sessionlog_spec.protocol.model_driver import ModelDriver, serve


class NothingDriver(ModelDriver):
    """Says hello and bye; every other op is unsupported."""

    def __init__(self) -> None:
        super().__init__()
        self.ops = {"hello": self.op_hello, "bye": lambda _: None}

    def op_hello(self, request: dict[str, Any]) -> Any:
        return {**super().op_hello(request), "capabilities": []}


if __name__ == "__main__":
    serve(NothingDriver())
