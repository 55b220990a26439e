"""Broken on purpose (jsonl): ``load`` treats a malformed middle line as a torn tail instead of refusing."""

from __future__ import annotations

from typing import Any

from sessionlog_spec.model.jsonl import parse_line
from sessionlog_spec.protocol.model_driver import ModelDriver, serve


class DropsBadLineDriver(ModelDriver):
    """Stops reading at the first line that does not parse and loads what came before it."""

    def op_load(self, request: dict[str, Any]) -> Any:
        text = request["jsonl"]
        if isinstance(text, str):
            lines = text.split("\n")
            for number, line in enumerate(lines[1:-1], start=1):
                if isinstance(parse_line(line), str):
                    request = {**request, "jsonl": "\n".join(lines[:number]) + "\n"}
                    break
        return super().op_load(request)


if __name__ == "__main__":
    serve(DropsBadLineDriver())
