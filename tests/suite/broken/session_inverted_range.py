"""Broken on purpose (session): ``append`` swaps an inverted replace range instead of refusing it."""

from __future__ import annotations

from typing import Any

from sessionlog_spec.protocol.model_driver import ModelDriver, serve


class InvertedRangeDriver(ModelDriver):
    """Accepts ``{op: replace, start, end}`` with ``start`` after ``end`` by reading it backwards."""

    def op_append(self, request: dict[str, Any]) -> Any:
        event = request["event"]
        op = event.get("surfaceOp") if isinstance(event, dict) else None
        nodes = self.state.surface.nodes
        if isinstance(op, dict) and op.get("start") in nodes and op.get("end") in nodes:
            start, end = op["start"], op["end"]
            if nodes.index(start) > nodes.index(end):
                request = {**request, "event": {**event, "surfaceOp": {**op, "start": end, "end": start}}}
        return super().op_append(request)


if __name__ == "__main__":
    serve(InvertedRangeDriver())
