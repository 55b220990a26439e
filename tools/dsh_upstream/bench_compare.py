"""Side by side: fold + validate by upstream @deepseek-ai/dsh-session (Node) and by the Python port.

Generates realistic valid v1 logs once (1k, 10k and 100k events by default) with
:class:`sessionlog_spec.suite.agent.builder.SessionBuilder`, writes each to a temporary JSON file, runs ``bench.mjs``
on them under Node, measures the Python port on the same files in this process, and prints a table
with the ratios.  Run from the repository root::

    .venv/bin/python ports/dsh-session/bench_compare.py [--sizes 1000 10000 100000] [--repeat 5]

What is measured, per log (medians over ``--repeat`` runs after one warm-up, with a full garbage
collection before each run on both sides: ``gc.collect()``, and ``gc()`` under ``node --expose-gc``):

* Node: ``foldSurface(events)`` (surface rules only, on the parsed array) and seeding a live
  ``Session`` through ``ctx.sessions.create`` with the invariant companion loaded (envelope,
  header and message shapes, contiguity, surface, turn/step/tool trace); a detached
  ``Session.create`` (no trace replay) is reported too.
* Python: the port ``seqlog`` (``ports/python``) when it is importable: ``fold_surface`` over the
  decoded events (the Python API folds decoded events while Node folds the parsed objects, so the
  decoding is reported in its own column) and ``Session.create(seed)`` on the parsed objects, the
  full v1 validation.  Without ``seqlog`` the reference
  model stands in (``sessionlog_spec.model.surface.fold_surface`` and ``sessionlog_spec.model.session.seed_session``) and the
  table says so.
* Separately: process start-up with the libraries imported (``node bench.mjs --startup`` and
  ``python -c "import seqlog"``) and JSON parsing of each file (``JSON.parse``, ``orjson.loads``).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from sessionlog_spec.model.event import decode_event as model_decode
from sessionlog_spec.model.header import canonical_header, header_of
from sessionlog_spec.model.session import EMPTY_SESSION, SessionState, admit, pending_after, seed_session
from sessionlog_spec.model.surface import apply_plan
from sessionlog_spec.model.surface import fold_surface as model_fold
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.suite.agent.builder import SessionBuilder, basic_header

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "ports" / "dsh-session"
"""The upstream package's driver, benchmark script and pinned node_modules."""

RawEvent = dict[str, Any]


class FastBuilder(SessionBuilder):
    """A :class:`SessionBuilder` whose commit is O(1): the log is one growing list.

    Every event is still admitted by the model (``sessionlog_spec.model.session.admit``); only the copying of the
    whole log per event, which makes the stock builder quadratic, is avoided.
    """

    def __init__(self) -> None:
        super().__init__(EMPTY_SESSION)
        self._log: list[Any] = []

    def commit(self, raw: Mapping[str, Any]) -> None:
        state = self.state
        admission = admit(state.surface.nodes, self._log, state.trace, raw, relations=state.relations)
        if isinstance(admission, Violation):
            raise AssertionError(f"builder produced an invalid event {raw}: {admission}")
        self._log.append(admission.event)
        plan = admission.plan
        snapshot = header_of(admission.event)
        header = state.header if snapshot is None else canonical_header(snapshot)
        self.state = SessionState(
            events=self._log,  # type: ignore[arg-type]
            surface=state.surface if plan is None else apply_plan(state.surface, plan),
            trace=admission.trace,
            header=header,
            pending_calls=pending_after(state.pending_calls, admission, self._log),
            relations=admission.relations,
        )
        self.turn, self.step = admission.trace.last_turn, admission.trace.last_step


def realistic_log(size: int) -> list[RawEvent]:
    """A closed, valid session of at least ``size`` events, cut back to a turn boundary near it.

    Each turn: a user message, a tool step (streamed chunks, an assistant message asking for two
    tools, their calls and results) and a final answer step.  Every 25th turn changes the request
    header; every 5th rewrites an old tool result; every 10th compacts the whole surface.
    """
    b = FastBuilder()
    turn = 0
    while b.next_seq < size:
        turn += 1
        b.turn_start()
        if turn % 10 == 0:
            nodes = b.state.surface.nodes
            b.compaction(nodes[0], nodes[-1], f"Summary of turns 1..{turn - 1}.")
        if turn % 5 == 0:
            results = b.tool_result_seqs()
            if results:
                b.rewrite_tool_result(results[0])
        b.user_message(f"Request {turn}: please fix the failing test in module {turn % 7}.")
        b.step_start()
        if turn == 1 or turn % 25 == 0:
            system = f"You are a careful coding agent (rev {turn // 25})."
            b.request_header(basic_header(system=system), "initial" if turn == 1 else "change")
        for token in ("Let me ", "read the ", "files."):
            b.chunk(token)
        calls = [f"call-{turn}-{i}" for i in range(2)]
        b.assistant_message("Let me read the files.", calls, reasoning="The test imports a.py and b.py.")
        for call in calls:
            b.tool_call(call)
            b.tool_result(call, f"def f_{turn}():\n    return {turn}\n" * 3)
        b.step_end()
        b.step_start()
        b.assistant_message(f"Fixed in turn {turn}.")
        b.step_end()
        b.turn_end()
    return b.events


@dataclass(frozen=True)
class Results:
    """Everything one run measured."""

    label: str
    node_version: str
    repeat: int
    files: list[Path]
    generated: Mapping[Path, int]
    sizes: Mapping[Path, int]
    node_rows: Mapping[Path, Mapping[str, Any]]
    python_rows: Mapping[Path, PythonTimes]
    node_start: float
    py_start: float
    load: float


@dataclass(frozen=True)
class PythonTimes:
    parse_ms: float
    decode_ms: float
    fold_ms: float
    validate_ms: float


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    """Median wall time of ``fn`` in milliseconds, after one untimed warm-up; a full collection before each run."""
    fn()
    samples = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


Decode = Callable[[list[Any]], list[Any]]
Run = Callable[[list[Any]], object]


def python_port() -> tuple[str, Decode, Run, Run]:
    """The Python implementation to measure: its label, its event decoder, its fold and its full validation."""
    try:
        seqlog: Any = importlib.import_module("seqlog")
        decode_event = importlib.import_module("seqlog.event").decode_event
    except ImportError:

        def model_decode_all(raws: list[Any]) -> list[Any]:
            return [model_decode(r) for r in raws]

        return "model (seqlog not importable)", model_decode_all, model_fold, seed_session

    header = {"type": "session", "version": 1, "id": "bench", "createdAt": 0, "delegationDepth": 0}

    def decode_all(raws: list[Any]) -> list[Any]:
        return [decode_event(r) for r in raws]

    def validate(raws: list[Any]) -> object:
        return seqlog.Session.create(seed=raws, header=header)

    return f"seqlog {seqlog.__version__}", decode_all, seqlog.fold_surface, validate


def startup_ms(argv: Sequence[str], repeat: int) -> float:
    """Median wall time of a process that starts, imports the library and exits."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "ports" / "python")])}
        subprocess.run(argv, check=True, cwd=ROOT, capture_output=True, env=env)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    node = shutil.which("node")
    if node is None or not (HERE / "node_modules" / "@deepseek-ai" / "dsh-session").is_dir():
        print("needs node and ports/dsh-session/node_modules (cd ports/dsh-session && npm ci)", file=sys.stderr)
        return 2
    label, decode, fold, validate = python_port()
    with tempfile.TemporaryDirectory(prefix="dsh-bench-") as tmp:
        files: list[Path] = []
        generated: dict[Path, int] = {}
        sizes: dict[Path, int] = {}
        for size in args.sizes:
            start = time.perf_counter()
            events = realistic_log(size)
            path = Path(tmp) / f"log-{size}.json"
            path.write_bytes(orjson.dumps(events))
            files.append(path)
            generated[path] = len(events)
            sizes[path] = path.stat().st_size
            print(f"generated {len(events)} events in {time.perf_counter() - start:.1f} s -> {path.name}", file=sys.stderr)
        run = subprocess.run(
            [node, "--expose-gc", str(HERE / "bench.mjs"), "--repeat", str(args.repeat), *map(str, files)],
            check=True,
            capture_output=True,
            text=True,
        )
        node_rows = {Path(row["file"]): row for row in map(json.loads, run.stdout.splitlines())}
        python_rows: dict[Path, PythonTimes] = {}
        for path in files:
            data = path.read_bytes()
            parse = median_ms(lambda data=data: orjson.loads(data), args.repeat)  # type: ignore[misc]
            raws = orjson.loads(data)
            decoded = decode(raws)
            python_rows[path] = PythonTimes(
                parse_ms=parse,
                decode_ms=median_ms(lambda raws=raws: decode(raws), args.repeat),  # type: ignore[misc]
                fold_ms=median_ms(lambda decoded=decoded: fold(decoded), args.repeat),  # type: ignore[misc]
                validate_ms=median_ms(lambda raws=raws: validate(raws), args.repeat),  # type: ignore[misc]
            )
    node_start = startup_ms([node, str(HERE / "bench.mjs"), "--startup"], args.repeat)
    py_import = "import seqlog" if not label.startswith("model") else "import sessionlog_spec.model.session"
    py_start = startup_ms([sys.executable, "-c", py_import], args.repeat)
    node_version = subprocess.run([node, "--version"], check=True, capture_output=True, text=True).stdout.strip()
    print(
        render(
            Results(
                label,
                node_version,
                args.repeat,
                files,
                generated,
                sizes,
                node_rows,
                python_rows,
                node_start,
                py_start,
                os.getloadavg()[0],
            )
        )
    )
    return 0


def render(r: Results) -> str:
    """The results as Markdown: one row per log, then start-up and parse costs."""
    py = sys.version.split()[0]
    lines = [
        f"Upstream: @deepseek-ai/dsh-session 0.1.0-rc.8 on Node {r.node_version}. Python: {r.label} on CPython {py}.",
        f"Medians of {r.repeat} runs after one warm-up; milliseconds; ratio = Python / Node (above 1: Node is faster).",
        f"Machine: {os.cpu_count()} CPUs, load average {r.load:.1f} when the run ended.",
        "",
        "| events | Node foldSurface | Python fold_surface | ratio | Node seed, live + invariants "
        "| Node seed, detached | Python Session.create(seed) | ratio (vs live) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for path in r.files:
        n, p = r.node_rows[path], r.python_rows[path]
        lines.append(
            f"| {r.generated[path]:,} | {n['fold_surface_ms']:.1f} | {p.fold_ms:.1f} | {p.fold_ms / n['fold_surface_ms']:.1f}x "
            f"| {n['seed_live_ms']:.1f} | {n['seed_detached_ms']:.1f} | {p.validate_ms:.1f} "
            f"| {p.validate_ms / n['seed_live_ms']:.1f}x |"
        )
    lines += [
        "",
        "| events | file size | Node JSON.parse | Python orjson.loads | Python decode_event (all events) |",
        "|---:|---:|---:|---:|---:|",
    ]
    for path in r.files:
        lines.append(
            f"| {r.generated[path]:,} | {r.sizes[path] / 1e6:.1f} MB | {r.node_rows[path]['parse_ms']:.1f} "
            f"| {r.python_rows[path].parse_ms:.1f} | {r.python_rows[path].decode_ms:.1f} |"
        )
    lines += [
        "",
        f"Start-up with the libraries imported (not included above): Node {r.node_start:.0f} ms, Python {r.py_start:.0f} ms.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
