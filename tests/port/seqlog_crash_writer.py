"""A realistic agent loop writing a session through :class:`seqlog.SessionStore`, for crash tests.

``python seqlog_crash_writer.py DIR SEED COMPRESSION`` writes the session :func:`drive` plans for
``SEED`` and prints ``ready`` once the session exists, then ``D <events> <bytes>`` each time more
events become durable (the test kills it with SIGKILL at a random moment).  :func:`planned_events`
replays the same loop in memory, so the test knows every event the writer would have written.
"""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Callable, Iterator
from typing import Any

from seqlog import Event, HeaderWriter, Session, SessionStore

HEADER_LINE = {"type": "session", "version": 1, "id": "crash", "createdAt": 1_700_000_000_000}
TOOLS = ("read_file", "write_file", "bash", "grep")
ARGUMENTS = '{"path":"a.py"}'


def _clock() -> Callable[[], int]:
    ticks: Iterator[int] = iter(range(1_700_000_000_000, 1_800_000_000_000, 7))
    return lambda: next(ticks)


def _text(rng: random.Random, longest: int) -> str:
    words = ("alpha", "beta", "gamma", "δelta", "ε", "→", "patch", "diff", "test", "fail", "ok")
    return " ".join(rng.choice(words) for _ in range(rng.randint(1, longest)))


def _user(message_id: str, text: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "user"}}


def _request_header(rng: random.Random, turn: int) -> dict[str, Any]:
    tools = [{"name": t, "description": f"the {t} tool", "parameters": {"type": "object"}} for t in TOOLS[: 2 + turn % 3]]
    header: dict[str, Any] = {"config": {"provider": "deepseek", "model": "deepseek-chat"}, "tools": tools}
    if rng.random() < 0.8:
        header["system"] = "You are a careful coding agent."
    return header


def drive(session: Session, checkpoint: Callable[[], None], seed: int, turns: int = 20) -> None:
    """The loop: turns of steps, each a header check, a model call and its tool calls; compaction now and then."""
    rng = random.Random(seed)
    headers = HeaderWriter(session)
    ids = iter(range(10**9))
    for turn in range(1, turns + 1):
        session.append("turn/start", {"turn": turn})
        session.append("user/message", _user(f"u{next(ids)}", _text(rng, 40)), surface_op="append")
        for step in range(1, rng.randint(1, 4) + 1):
            session.append("step/start", {"turn": turn, "step": step})
            headers.before_request(_request_header(rng, turn), begins_series=rng.random() < 0.1)
            checkpoint()  # before the model call
            advertised = TOOLS[: 2 + turn % 3]
            calls = [(f"call-{next(ids)}", rng.choice(advertised)) for _ in range(rng.randint(0, 3))]
            content: list[dict[str, Any]] = [{"type": "text", "text": _text(rng, 60)}]
            content += [{"type": "tool-call", "id": c, "name": name, "arguments": ARGUMENTS} for c, name in calls]
            message = {"id": f"a{next(ids)}", "role": "assistant", "content": content,
                       "source": {"kind": "model", "provider": "deepseek", "model": "deepseek-chat"}}
            session.append("assistant/message", {"turn": turn, "step": step, "message": message}, surface_op="append")
            for call, name in calls:
                checkpoint()  # before the tool call
                session.append("tool/call", {"turn": turn, "step": step, "callId": call, "name": name, "arguments": ARGUMENTS})
                block = {"type": "tool-result", "toolCallId": call, "content": [{"type": "text", "text": _text(rng, 900)}]}
                result = {"id": f"r{next(ids)}", "role": "user", "source": {"kind": "tool", "callId": call}, "content": [block]}
                session.append("tool/result", {"turn": turn, "step": step, "message": result}, surface_op="append")
            session.append("step/end", {"turn": turn, "step": step})
        nodes, balanced = list(session.surface.nodes), session.cut_balances()
        ends = [j for j in range(1, len(nodes) - 1) if balanced[j + 1]]
        if turn % 7 == 0 and ends:
            # Compact the oldest part of the surface up to a cut where no tool call is pending.
            end = ends[-1]
            summary = _user(f"s{next(ids)}", "Summary.")
            op = {"op": "replace", "start": nodes[0], "end": nodes[end]}
            session.append("user/message", summary, surface_op=op, source_event_seqs=nodes[: end + 1])
        session.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})


def planned_events(seed: int) -> list[Event]:
    """Every event the writer for ``seed`` writes, in order, when nothing interrupts it."""
    session = Session.create(header=HEADER_LINE, clock=_clock())
    drive(session, lambda: None, seed)
    return list(session.events)


def main(directory: str, seed: int, compression: str) -> None:
    """Write the planned session to ``directory``, reporting durability on stdout."""
    store = SessionStore.create(
        directory, header=HEADER_LINE, clock=_clock(), compression="zstd" if compression == "zstd" else None, buffer_bytes=512
    )
    last = (-1, -1)

    def report() -> None:
        nonlocal last
        now = (store.durable_length, store.durable_bytes)
        if now != last:
            os.write(1, f"D {now[0]} {now[1]}\n".encode())
            last = now

    def checkpoint() -> None:
        store.checkpoint()
        report()

    os.write(1, b"ready\n")
    report()
    original_append = store.session.append

    def append(*args: Any, **kwargs: Any) -> Event:
        event = original_append(*args, **kwargs)
        report()  # step/end and turn/end checkpoint on their own
        return event

    store.session.append = append  # type: ignore[method-assign]
    drive(store.session, checkpoint, seed)
    store.close()
    report()
    os.write(1, b"done\n")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3])
