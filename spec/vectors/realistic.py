"""The ``realistic`` generator: a long, valid session log rebuilt from ``{turns, seed}`` in any language.

A large vector stores ``{"generate": "realistic", "turns": N, "seed": S}`` instead of its events.
The generator below is specified step by step in ``vectors/README.md``; it uses no library random
number generator, only MINSTD (Park–Miller), whose intermediate products stay below 2^47 and so are
exact even in languages whose only number type is a double.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from sessionlog_spec.vectors.format import Step

MODULUS = 2_147_483_647
MULTIPLIER = 48_271
T0 = 1_700_000_000_000
TIME_STEP = 7
PROVIDER = {"provider": "deepseek", "model": "deepseek-chat"}
HEADER_LINE = {"type": "session", "version": 1, "id": "realistic", "createdAt": T0, "delegationDepth": 0}
COMPACT_EVERY = 10
"""A compaction after every tenth turn keeps the surface short, as a real long session does."""
CHANGE_EVERY = 100
"""Every hundredth turn changes the system prompt and writes a ``change`` snapshot."""


class Minstd:
    """The Park–Miller generator: ``x ← x · 48271 mod (2^31 − 1)``, started at ``seed mod (2^31 − 2) + 1``."""

    def __init__(self, seed: int) -> None:
        self.state = seed % (MODULUS - 1) + 1

    def pick(self, n: int) -> int:
        """Advance once and return the new state modulo ``n``."""
        self.state = self.state * MULTIPLIER % MODULUS
        return self.state % n


def header(revision: int) -> dict[str, Any]:
    """The request header of system-prompt ``revision`` (0 for the initial one)."""
    system = "You are a careful coding agent." if revision == 0 else f"You are a careful coding agent (revision {revision})."
    tool = {"name": "read_file", "description": "the read_file tool", "parameters": {"type": "object"}}
    return {"config": dict(PROVIDER), "system": system, "tools": [tool]}


def _text(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


class _Log:
    """The events so far and the surface they build, as the generator tracks it."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.nodes: list[int] = []

    def add(self, type_: str, data: Mapping[str, Any], **envelope: Any) -> int:
        seq = len(self.events)
        self.events.append({"type": type_, "seq": seq, "time": T0 + TIME_STEP * seq, "data": dict(data), **envelope})
        return seq

    def append_node(self, type_: str, data: Mapping[str, Any]) -> int:
        seq = self.add(type_, data, surfaceOp="append")
        self.nodes.append(seq)
        return seq


def _tool_step(log: _Log, rng: Minstd, turn: int, step: int) -> None:
    calls = [f"call-{turn}-{step}-{i}" for i in range(1, 2 + rng.pick(3))]
    content = _text("Reading files.") + [
        {"type": "tool-call", "id": c, "name": "read_file", "arguments": '{"path": "a.py"}'} for c in calls
    ]
    message = {"id": f"assistant-{turn}-{step}", "role": "assistant", "content": content, "source": {"kind": "model", **PROVIDER}}
    log.append_node("assistant/message", {"turn": turn, "step": step, "message": message})
    first_result = -1
    for call in calls:
        log.add("tool/call", {"turn": turn, "step": step, "callId": call, "name": "read_file", "arguments": '{"path": "a.py"}'})
        seq = log.append_node("tool/result", _result(turn, step, call, "def main(): ..."))
        first_result = seq if first_result < 0 else first_result
    if rng.pick(4) == 0:
        # A tool-result rewrite: the first result of the step, shrunk, in place on the surface.
        op = {"op": "replace", "start": first_result, "end": first_result}
        rewrite = _result(turn, step, calls[0], "[output elided]")
        seq = log.add("tool/result", rewrite, surfaceOp=op, sourceEventSeqs=[first_result])
        log.nodes[log.nodes.index(first_result)] = seq


def _result(turn: int, step: int, call: str, text: str) -> dict[str, Any]:
    block = {"type": "tool-result", "toolCallId": call, "content": _text(text), "isError": False}
    message = {"id": f"result-{call}", "role": "user", "source": {"kind": "tool", "callId": call}, "content": [block]}
    return {"turn": turn, "step": step, "message": message}


def _turn(log: _Log, rng: Minstd, turn: int) -> None:
    log.add("turn/start", {"turn": turn})
    user = {"id": f"user-{turn}", "role": "user", "content": _text(f"Request {turn}"), "source": {"kind": "user"}}
    log.append_node("user/message", user)
    tool_steps = rng.pick(3)
    for step in range(1, tool_steps + 2):
        log.add("step/start", {"turn": turn, "step": step})
        if step == 1 and turn == 1:
            log.add("request/header", {"header": header(0), "reason": "initial"})
        elif step == 1 and turn % CHANGE_EVERY == 0:
            log.add("request/header", {"header": header(turn // CHANGE_EVERY), "reason": "change"})
        if step <= tool_steps:
            _tool_step(log, rng, turn, step)
        else:
            source = {"kind": "model", **PROVIDER}
            message = {"id": f"assistant-{turn}-{step}", "role": "assistant", "content": _text("Done."), "source": source}
            log.append_node("assistant/message", {"turn": turn, "step": step, "message": message})
        log.add("step/end", {"turn": turn, "step": step})
    log.add("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    if turn % COMPACT_EVERY == 0:
        text = _text(f"Summary of turns 1 to {turn}.")
        summary = {"id": f"summary-{turn}", "role": "user", "content": text, "source": {"kind": "user"}}
        op = {"op": "replace", "start": log.nodes[0], "end": log.nodes[-1]}
        seq = log.add("user/message", summary, surfaceOp=op, sourceEventSeqs=list(log.nodes))
        log.nodes = [seq]


def realistic_events(turns: int, seed: int, drop_last: int = 0) -> list[dict[str, Any]]:
    """The events of a ``turns``-turn session from ``seed``, less the last ``drop_last`` (a crash)."""
    log, rng = _Log(), Minstd(seed)
    for turn in range(1, turns + 1):
        _turn(log, rng, turn)
    return log.events[: len(log.events) - drop_last]


def realistic_jsonl(turns: int, seed: int, drop_last: int = 0) -> str:
    """The same log stored: :data:`HEADER_LINE`, then one compact JSON line per event, each ending in a newline."""
    # orjson writes the same compact lines as the model's encoder, an order of magnitude faster.
    lines = [orjson.dumps(HEADER_LINE), *(orjson.dumps(e) for e in realistic_events(turns, seed, drop_last))]
    return (b"\n".join(lines) + b"\n").decode("utf-8")


def is_generator(value: object) -> bool:
    """Whether an argument value is a generator description rather than the value itself."""
    return isinstance(value, Mapping) and value.get("generate") == "realistic"


def _expand(value: Mapping[str, Any], as_text: bool) -> Any:
    args = (int(value["turns"]), int(value["seed"]), int(value.get("drop_last", 0)))
    return realistic_jsonl(*args) if as_text else realistic_events(*args)


def expand_step(step: Step) -> Step:
    """The request a step stands for: generator descriptions in ``events`` or ``jsonl`` replaced by their output."""
    out = dict(step)
    if is_generator(out.get("events")):
        out["events"] = _expand(out["events"], as_text=False)
    if is_generator(out.get("jsonl")):
        out["jsonl"] = _expand(out["jsonl"], as_text=True)
    return out
