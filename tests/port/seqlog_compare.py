"""Helpers for comparing seqlog's driver with the model's, reply by reply."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from seqlog.driver import SeqlogDriver
from sessionlog_spec.protocol.model_driver import ModelDriver


def same_json(a: object, b: object) -> bool:
    """JSON equality: ``true`` is not ``1``, ``1`` is ``1.0``, arrays and tuples alike."""
    if isinstance(a, bool | str) or isinstance(b, bool | str):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return a is None and b is None


def decoded_lines(text: str) -> list[Any]:
    """A saved JSONL text as JSON values, one per line (key order and spacing do not matter)."""
    return [json.loads(line) for line in text.split("\n") if line]


class Pair:
    """The model and seqlog, sent the same requests; :meth:`call` asserts they answer alike."""

    def __init__(self) -> None:
        self.model = ModelDriver()
        self.seqlog = SeqlogDriver()
        self.next_id = 0
        self.calls: list[str] = []
        self.last: dict[str, Any] = {}

    def call(self, op: str, **args: Any) -> dict[str, Any]:
        """Send one request to both and return the model's reply."""
        self.next_id += 1
        self.calls.append(op)
        expected = self.model({"id": self.next_id, "op": op, **args})
        actual = self.seqlog({"id": self.next_id, "op": op, **args})
        assert actual["id"] == self.next_id
        self.last = actual
        context = f"op {op} args {str(args)[:400]}\nmodel:  {str(expected)[:600]}\nseqlog: {str(actual)[:600]}"
        assert expected["ok"] == actual["ok"], context
        if not expected["ok"]:
            assert expected["error"]["code"] == actual["error"]["code"], context
        elif op == "save":
            assert same_json(decoded_lines(expected["result"]["jsonl"]), decoded_lines(actual["result"]["jsonl"])), context
        elif op != "hello":
            assert same_json(expected["result"], actual["result"]), context
        return expected
