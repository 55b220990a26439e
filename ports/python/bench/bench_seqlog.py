"""Benchmarks for seqlog: appends, folds, replacements, JSONL load, memory and log size.

Run from the repository root (about ten minutes for all four sizes on two cores)::

    .venv/bin/python ports/python/bench/bench_seqlog.py --sizes 1000,10000,100000,1000000 --json bench.json

Every ratio is measured side by side in the same run, on the same bytes.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import orjson

from seqlog import Event, HeaderWriter, Session, SessionStore, SurfaceManager, fold_surface, load_bytes
from seqlog.codec import encode_event_line, encode_line
from seqlog.zstdlog import FrameWriter, single_frame

HEADER_LINE = {"type": "session", "version": 1, "id": "bench", "createdAt": 1_700_000_000_000, "delegationDepth": 0}
WORDS = ("the", "test", "fails", "because", "patch", "diff", "module", "import", "error", "λ", "→", "ok", "file", "line")
TOOL_NAMES = ("read_file", "write_file", "edit_file", "bash", "grep", "glob", "list_dir", "web_search", "todo_write", "task")


def _schema(name: str) -> dict[str, Any]:
    props = {f"{name}_{i}": {"type": "string", "description": f"argument {i} of {name}, " + " ".join(WORDS)} for i in range(4)}
    return {"type": "object", "properties": props, "required": list(props)[:2]}


def _tools(count: int) -> list[dict[str, Any]]:
    about = " ".join(WORDS) * 3
    return [{"name": n, "description": f"The {n} tool. {about}", "parameters": _schema(n)} for n in TOOL_NAMES[:count]]


def _header(turn: int) -> dict[str, Any]:
    # The tool set and prompt change now and then, so the log carries several distinct snapshots.
    system = "You are a careful coding agent working in a repository. " * 20 + f"(revision {turn // 25})"
    return {"config": {"provider": "deepseek", "model": "deepseek-chat", "maxTokens": 8192}, "system": system,
            "tools": _tools(6 + (turn // 10) % 5)}


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _clock() -> Callable[[], int]:
    ticks: Iterator[int] = iter(range(1_700_000_000_000, 10**15, 13))
    return lambda: next(ticks)


def generate(events: int, seed: int = 1) -> Session:
    """A realistic closed session of at least ``events`` events, built through validated appends."""
    rng = random.Random(seed)
    session = Session.create(header=HEADER_LINE, clock=_clock())
    ids = iter(range(10**12))
    turn = 0
    writer = HeaderWriter(session)
    while len(session) < events:
        turn += 1
        if turn % 40 == 0:
            writer = HeaderWriter(session)  # a resumed loop instance
        session.append("turn/start", {"turn": turn})
        session.append("user/message", _user(f"u{next(ids)}", _text(rng, 30)), surface_op="append")
        for step in range(1, rng.randint(1, 5) + 1):
            session.append("step/start", {"turn": turn, "step": step})
            writer.before_request(_header(turn))
            # Each call is advertised by the assistant message and repeated verbatim by its tool/call (INV-REL-1).
            ids_of_calls = [f"call-{next(ids)}" for _ in range(rng.choice((0, 1, 1, 2, 3)))]
            content: list[dict[str, Any]] = [{"type": "text", "text": _text(rng, rng.randint(5, 80))}]
            arguments = json.dumps({"path": "src/a.py"})
            calls = [(c, rng.choice(TOOL_NAMES)) for c in ids_of_calls]
            content += [{"type": "tool-call", "id": c, "name": name, "arguments": arguments} for c, name in calls]
            message = {"id": f"a{next(ids)}", "role": "assistant", "content": content,
                       "source": {"kind": "model", "provider": "deepseek", "model": "deepseek-chat"}}
            usage = {"inputTokens": rng.randint(1000, 90000), "outputTokens": rng.randint(10, 2000)}
            reply = {"turn": turn, "step": step, "message": message, "usage": usage}
            session.append("assistant/message", reply, surface_op="append")
            for call, name in calls:
                session.append("tool/call", {"turn": turn, "step": step, "callId": call, "name": name, "arguments": arguments})
                body = _text(rng, int(rng.paretovariate(1.2) * 40))[:20000]
                block = {"type": "tool-result", "toolCallId": call, "content": [{"type": "text", "text": body}]}
                result = {"id": f"r{next(ids)}", "role": "user", "source": {"kind": "tool", "callId": call}, "content": [block]}
                session.append("tool/result", {"turn": turn, "step": step, "message": result}, surface_op="append")
            session.append("step/end", {"turn": turn, "step": step})
        if turn % 30 == 0:
            _compact(session, ids)
        session.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    return session


def _user(message_id: str, text: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "user"}}


def _compact(session: Session, ids: Iterator[int]) -> None:
    nodes, balanced = list(session.surface.nodes), session.cut_balances()
    ends = [j for j in range(len(nodes) - 4) if balanced[j + 1]]
    if not ends:
        return
    end = ends[-1]
    summary = _user(f"s{next(ids)}", "Summary of earlier work.")
    op = {"op": "replace", "start": nodes[0], "end": nodes[end]}
    session.append("user/message", summary, surface_op=op, source_event_seqs=nodes[: end + 1])


# Measurements -----------------------------------------------------------------------------------


def timed(action: Callable[[], Any], repeat: int = 1) -> tuple[float, Any]:
    """The best wall time of ``repeat`` runs, and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = action()
        best = min(best, time.perf_counter() - start)
    return best, result


def jsonl_of(session: Session) -> bytes:
    return b"".join([encode_line(HEADER_LINE) + b"\n", *(encode_event_line(e) for e in session.events)])


def zstd_size(events: list[Event]) -> int:
    """The size the store writes with zstd: the header frame, then one block flush per checkpoint."""
    frames = FrameWriter()
    size = len(single_frame(encode_line(HEADER_LINE) + b"\n"))
    pending: list[bytes] = []
    for event in events:
        pending.append(encode_event_line(event))
        if event.type in ("step/end", "turn/end"):
            size += len(frames.encode(b"".join(pending)))
            pending.clear()
    return size + len(frames.encode(b"".join(pending))) + len(frames.finish())


def side_by_side(actions: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    """The best time of each action over ``rounds`` interleaved rounds, so that load on the machine hits all alike."""
    best = dict.fromkeys(actions, float("inf"))
    for _ in range(rounds):
        for name, action in actions.items():
            seconds, _ = timed(action)
            best[name] = min(best[name], seconds)
    return best


def bench_size(n: int, repeat: int) -> dict[str, Any]:
    """Every per-size measurement for a generated log of about ``n`` events."""
    out: dict[str, Any] = {"target": n}
    seconds, session = timed(lambda: generate(n))
    events = list(session.events)
    out["events"] = len(events)
    out["loop_per_s"] = len(events) / seconds
    data = jsonl_of(session)
    lines = data.split(b"\n")[:-1]
    raws = [orjson.loads(line) for line in lines[1:]]
    del session
    out["bytes"] = len(data)
    out["header_snapshots"] = sum(1 for e in events if e.type == "request/header")
    out["header_share"] = sum(len(encode_event_line(e)) for e in events if e.type == "request/header") / len(data)
    out["zstd_bytes"] = zstd_size(events)
    rounds = repeat if n <= 100_000 else 1

    def fold() -> Session:
        session = Session.create(header=HEADER_LINE, clock=lambda: 0)
        for raw in raws:
            session.append_event(raw)
        return session

    best = side_by_side(
        {
            "json": lambda: [json.loads(line) for line in lines],
            "orjson": lambda: [orjson.loads(line) for line in lines],
            "load": lambda: load_bytes(data),
            "append": fold,
            "surface": lambda: fold_surface(events),
        },
        rounds,
    )
    megabytes = len(data) / 1e6
    out.update(
        append_per_s=len(events) / best["append"],
        surface_fold_per_s=len(events) / best["surface"],
        load_mb_s=megabytes / best["load"],
        json_mb_s=megabytes / best["json"],
        orjson_mb_s=megabytes / best["orjson"],
        load_vs_json=best["load"] / best["json"],
        load_vs_orjson=best["load"] / best["orjson"],
        load_events_per_s=len(events) / best["load"],
        incremental=incremental_fold(events),
    )
    return out


def incremental_fold(events: list[Event], tail: int = 1000) -> float:
    """Microseconds per event to fold the last ``tail`` events into a manager that already holds the rest."""
    tail = min(tail, len(events) // 2)
    log = events[: len(events) - tail]
    manager = SurfaceManager(log)
    _ = manager.nodes  # fold the head
    log.extend(events[len(events) - tail :])
    seconds, _ = timed(lambda: manager.nodes, 1)
    return seconds / tail * 1e6


def bench_replacements(sizes: tuple[int, ...] = (1000, 10_000, 100_000)) -> list[dict[str, Any]]:
    """Validate and commit one replace over a single node at the head, middle and tail of a surface."""
    rows = []
    for nodes in sizes:
        session = Session.create(header=HEADER_LINE, clock=lambda: 0)
        for i in range(nodes):
            session.append("user/message", {"id": f"u{i}", "role": "user", "content": [], "source": {"kind": "user"}}, "append")
        row: dict[str, Any] = {"nodes": nodes}
        for where, index in (("head", 0), ("middle", nodes // 2), ("tail", nodes - 1)):
            target = session.surface.nodes[index]
            raw = {"type": "user/message", "seq": len(session), "time": 0,
                   "data": {"id": f"s-{where}", "role": "user", "content": [], "source": {"kind": "user"}},
                   "surfaceOp": {"op": "replace", "start": target, "end": target}, "sourceEventSeqs": [target]}
            plans = [session.validate(raw) for _ in range(5)]
            samples = []
            for _ in range(20):
                start = time.perf_counter()
                session.validate(raw)
                samples.append(time.perf_counter() - start)
            row[f"validate_{where}_us"] = statistics.median(samples) * 1e6
            start = time.perf_counter()
            session.commit(plans[0])
            row[f"commit_{where}_us"] = (time.perf_counter() - start) * 1e6
        append = {"type": "user/message", "seq": len(session), "time": 0,
                  "data": {"id": "tail", "role": "user", "content": [], "source": {"kind": "user"}}, "surfaceOp": "append"}
        samples = []
        for _ in range(20):
            start = time.perf_counter()
            session.validate(append)
            samples.append(time.perf_counter() - start)
        row["validate_append_us"] = statistics.median(samples) * 1e6
        rows.append(row)
    return rows


def bench_memory(n: int = 100_000) -> dict[str, float]:
    """Peak and retained memory of loading ``n`` events, per 100k events."""
    data = jsonl_of(generate(n))
    gc.collect()
    tracemalloc.start()
    loaded = load_bytes(data)
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    scale = 100_000 / len(loaded.session)
    return {"events": len(loaded.session), "file_mb": len(data) / 1e6,
            "peak_mb_per_100k": peak / 1e6 * scale, "retained_mb_per_100k": current / 1e6 * scale}


def bench_store(n: int = 20_000) -> list[dict[str, Any]]:
    """Durable appends through the store: fsync at every step and turn end, and before model and tool calls."""
    source = generate(n)
    rows = []
    for compression in (None, "zstd"):
        with tempfile.TemporaryDirectory() as tmp:
            store = SessionStore.create(Path(tmp) / "s", header=HEADER_LINE, compression=compression, clock=lambda: 0)
            start = time.perf_counter()
            fsyncs = 0
            for event in source.events:
                if event.type in ("assistant/message", "tool/call"):
                    store.checkpoint()
                    fsyncs += 1
                store.session.append_event(event)
                fsyncs += event.type in ("step/end", "turn/end")
            store.close()
            seconds = time.perf_counter() - start
            size = store.path.stat().st_size
        rows.append({"compression": compression or "none", "events": len(source), "per_s": len(source) / seconds,
                     "checkpoints": fsyncs, "bytes": size})
    return rows


def machine() -> dict[str, str]:
    cpu = "unknown"
    with open("/proc/cpuinfo") as info:
        for line in info:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    return {"cpu": cpu, "cores": str(os.cpu_count()), "load_average_1_5_15": load, "python": platform.python_version(),
            "orjson": version("orjson"), "zstandard": version("zstandard"), "platform": platform.platform()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000,1000000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, help="write every number to this file")
    args = parser.parse_args()
    results: dict[str, Any] = {"machine": machine(), "sizes": []}
    for n in (int(s) for s in args.sizes.split(",")):
        print(f"size {n} ...", file=sys.stderr, flush=True)
        results["sizes"].append(bench_size(n, args.repeat))
        print(json.dumps(results["sizes"][-1]), file=sys.stderr, flush=True)
    print("replacements ...", file=sys.stderr, flush=True)
    results["replacements"] = bench_replacements()
    print("memory ...", file=sys.stderr, flush=True)
    results["memory"] = bench_memory()
    print("store ...", file=sys.stderr, flush=True)
    results["store"] = bench_store()
    results["machine_after"] = machine()
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    print(render(results))


def render(results: dict[str, Any]) -> str:
    """The results as Markdown tables."""
    lines = [
        "| events | JSONL MB | zstd MB | header snapshots (share of bytes) | loop /s | append /s | surface fold /s"
        " | incremental fold µs/event | load MB/s | json MB/s | orjson MB/s | load ÷ json | load ÷ orjson |",
        "|" + "---|" * 13,
    ]
    for r in results["sizes"]:
        cells = [
            f"{r['events']:,}", f"{r['bytes'] / 1e6:.1f}", f"{r['zstd_bytes'] / 1e6:.2f}",
            f"{r['header_snapshots']:,} ({r['header_share']:.0%})", f"{r['loop_per_s']:,.0f}", f"{r['append_per_s']:,.0f}",
            f"{r['surface_fold_per_s']:,.0f}", f"{r['incremental']:.2f}", f"{r['load_mb_s']:.1f}", f"{r['json_mb_s']:.1f}",
            f"{r['orjson_mb_s']:.1f}", f"{r['load_vs_json']:.2f}×", f"{r['load_vs_orjson']:.2f}×",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "| surface nodes | validate append µs | validate replace at head / middle / tail µs"
        " | commit replace at head / middle / tail µs |",
        "|---|---|---|---|",
    ]
    for r in results["replacements"]:
        validate = " / ".join(f"{r[f'validate_{w}_us']:.1f}" for w in ("head", "middle", "tail"))
        commit = " / ".join(f"{r[f'commit_{w}_us']:.1f}" for w in ("head", "middle", "tail"))
        lines.append(f"| {r['nodes']:,} | {r['validate_append_us']:.1f} | {validate} | {commit} |")
    m = results["memory"]
    lines += [
        "",
        f"Memory, loading {m['events']:,} events ({m['file_mb']:.1f} MB of JSONL): peak {m['peak_mb_per_100k']:.0f} MB, "
        f"retained {m['retained_mb_per_100k']:.0f} MB per 100k events.",
        "",
        "| store compression | events | durable appends /s | checkpoints (fsync) | file bytes |",
        "|---|---|---|---|---|",
    ]
    for r in results["store"]:
        lines.append(f"| {r['compression']} | {r['events']:,} | {r['per_s']:,.0f} | {r['checkpoints']:,} | {r['bytes']:,} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
