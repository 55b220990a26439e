"""What the suite itself does to a port's durable store: damage its file, kill its driver.

The ``storage`` machine records these actions in its transcript as exchanges of two ops that are
not requests: ``store_damage {dir, jsonl}`` (the file ``dir/events.jsonl`` now holds ``jsonl``) and
``store_crash {op, args, delay}`` (``op`` was sent and the driver killed ``delay`` seconds later,
then started again).  A replay performs them instead of sending them, so a counterexample that
needs a damaged file or a crash replays whole.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sessionlog_spec.contracts.jsonl import recovery
from sessionlog_spec.model.event import Event
from sessionlog_spec.model.jsonl import decode_text
from sessionlog_spec.model.load import read_log
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.protocol.messages import Ok, Port, PortFault, Reply
from sessionlog_spec.protocol.model_driver import STORE_FILE, ModelDriver

SUITE_ACTIONS = frozenset({"store_damage", "store_crash"})
"""Transcript ops the suite performs itself rather than sends."""
DONE = Ok(None)
"""The reply recorded for a suite action, on both sides."""


def damage_store(directory: str, text: str) -> None:
    """Replace the store's file with ``text`` (the damage a crash or a bad disk left); a replay cut
    short may have dropped the store's creation, so the directory is made when missing."""
    Path(directory).mkdir(parents=True, exist_ok=True)
    (Path(directory) / STORE_FILE).write_text(text, encoding="utf-8", errors="surrogatepass")


def crash_store(port: Port, op: str, args: Mapping[str, Any], delay: float) -> None:
    """Send ``op`` and kill the driver ``delay`` seconds later, then start a fresh one.

    Raises :class:`PortFault` when the port cannot be killed (an in-process port) or restarted.
    """
    crash = getattr(port, "crash", None)
    if not callable(crash):
        raise PortFault("exit", "this port cannot be killed and restarted: replay the case against its driver")
    crash(op, dict(args), delay)


def perform(port: Port, op: str, args: Mapping[str, Any], oracle: ModelDriver) -> None:
    """Carry out one recorded suite action against ``port`` (and tell ``oracle`` of a crash)."""
    if op == "store_damage":
        damage_store(str(args["dir"]), str(args["jsonl"]))
    elif op == "store_crash":
        oracle.store = None  # the driver that held the store is gone
        crash_store(port, str(args["op"]), args["args"], float(args["delay"]))
    else:
        raise ValueError(f"{op!r} is not a suite action")


def stored_text(directory: str) -> str:
    """The text of a store's file as a reader decodes its bytes."""
    return decode_text((Path(directory) / STORE_FILE).read_bytes())[0]


@dataclass
class DurabilityJudge:
    """Holds a port to its word about durability (INV-JSONL-11), from its replies and its files.

    Call :meth:`replied` with every accepted reply of a ``store_*`` op, :meth:`closed` after a
    ``store_close``, and :meth:`crashed` after the driver was killed; each returns what is wrong,
    or ``None``.  ``lost`` counts the acknowledged events crashes lost.
    """

    acknowledged: int = 0
    """The most events the port has said are durable since the store was (re)opened."""
    lost: int = 0
    """Acknowledged events that crashes lost."""
    directory: str = ""
    """The store's directory (the replay follows the ``dir`` of the ops)."""

    def replied(self, op: str, result: Mapping[str, Any], length: int) -> str | None:
        """``durable_length`` never goes down, never exceeds the length, and is the length after a
        create, checkpoint, close or reopen."""
        if op in ("store_create", "store_open"):
            self.acknowledged = 0
        durable = result.get("durable_length")
        if not isinstance(durable, int):
            return None
        exact = op != "store_append"
        if durable < self.acknowledged:
            return f"{op}: durable_length went down from {self.acknowledged} to {durable}"
        if durable > length:
            return f"{op}: durable_length {durable} exceeds the session's {length} events"
        if exact and durable != length:
            return f"{op}: durable_length is {durable} after it, with {length} events"
        self.acknowledged = durable
        return None

    def closed(self, directory: str, events: Sequence[Event]) -> str | None:
        """After a close the file reads, as written (no repair), as exactly ``events``."""
        read = read_log(stored_text(directory))
        if isinstance(read, Violation):
            return f"store_close: the closed file is refused: {read}"
        if read.decoded.dropped_anything:
            return f"store_close: a reader drops part of the closed file (from line {read.decoded.dropped_from_line})"
        if read.state.events != tuple(events):
            return f"store_close: the closed file reads as {len(read.state.events)} events, not the session's {len(events)}"
        return None

    def crashed(self, directory: str, events: Sequence[Event]) -> str | None:
        """After a kill, the bytes on disk keep every acknowledged event of ``events``."""
        lost = recovery(events[: self.acknowledged], stored_text(directory))
        self.acknowledged = 0
        if isinstance(lost, int):
            self.lost += lost
            return f"store_crash: {lost} event(s) acknowledged as durable are not in the file"
        return None


@contextlib.contextmanager
def fresh_directories(requests: Sequence[tuple[str, dict[str, Any]]]) -> Iterator[list[tuple[str, dict[str, Any]]]]:
    """``requests`` with every store directory moved to a new temporary one, removed afterwards:
    a replay must not find the files an earlier run left."""
    root = Path(tempfile.mkdtemp(prefix="sessionlog-replay-"))
    moved: dict[str, str] = {}

    def fresh(args: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(args.get("dir"), str):
            return args
        directory = moved.setdefault(args["dir"], str(root / f"store-{len(moved)}"))
        return {**args, "dir": directory}

    try:
        yield [(op, fresh(args)) for op, args in requests]
    finally:
        shutil.rmtree(root, ignore_errors=True)


def judge_replayed(
    judge: DurabilityJudge, op: str, args: Mapping[str, Any], actual: Reply, oracle: ModelDriver
) -> str | None:
    """What a replay's durability judge says after one exchange (a suite action or an accepted store op).

    A request list cut short (while a counterexample is shrunk) may lack the store it names: then
    there is nothing to judge.
    """
    try:
        if op == "store_crash":
            return judge.crashed(judge.directory, oracle.state.events)
        if not op.startswith("store_") or not isinstance(actual, Ok) or not isinstance(actual.result, dict):
            return None
        if isinstance(args.get("dir"), str):
            judge.directory = str(args["dir"])
        found = judge.replied(op, actual.result, len(oracle.state.events))
        if found is None and op == "store_close":
            found = judge.closed(judge.directory, oracle.state.events)
    except OSError:
        return None
    return found


def action_problem(op: str, args: Any) -> str | None:
    """Why a recorded suite action cannot be performed again, or ``None``."""
    if not isinstance(args, dict):
        return "its args are not an object"
    if op == "store_damage":
        ok = isinstance(args.get("dir"), str) and isinstance(args.get("jsonl"), str)
        return None if ok else "store_damage needs a string dir and jsonl"
    ok = isinstance(args.get("op"), str) and isinstance(args.get("args"), dict) and isinstance(args.get("delay"), int | float)
    return None if ok else "store_crash needs op, args and a numeric delay"
