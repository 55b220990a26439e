"""check-log against a bare ``orjson.loads`` of every line, at 10k, 100k and 1M events.

Generates realistic valid v1 logs once into a temporary directory, each in both layouts: one event
per line, and packed (chunk runs as packed rows, ``encode_jsonl(..., packed=True)``, as upstream's
writer stores them).  The sessions are the suite's ``realistic`` generator
(:mod:`sessionlog_spec.vectors.realistic`: turns of one to three tool steps, tool-result rewrites, a
compaction every ten turns) with streaming output added before every assistant message: a run of
reasoning deltas, a run of text deltas and one run of tool-call deltas per call.  Then, side by
side and interleaved round by round on the same file, each in a fresh child process:

* **check-log**: :func:`sessionlog_spec.suite.check_log.check_path`, the whole offline check
  (chunked reading, the fast checker of :mod:`sessionlog_spec.suite.fastcheck`, which certifies these
  valid logs without the model);
* with ``--model``, **check-log --model**: the same check with every event judged by the model (the
  released reader's row scan, the full v1 contract per event through frozen values);
* with ``--before CHECKOUT``, **check-log before**: the same check by another checkout of this
  repository (a ``git worktree`` of the commit before a change), its ``sessionlog_spec`` imported from
  that checkout's ``spec/`` and ``model/`` (linked under their import names, as the Makefile's
  ``source-links`` does), so a change is measured against the code it replaces in the same run;
* **orjson**: ``orjson.loads`` of every line of the same file, nothing else;
* **peak RSS** of the check-log child (its own ``VmHWM``), and the same for a child that only
  imports the checker, so the growth over that baseline can be set against the file size.

Every measurement covers about the same work, ``--work`` events (1M by default): the 10k log is
checked 100 times in its child, the 100k log 10 times, the 1M log once, so each per-event time is
an average over a minute or so and background load on a shared machine hits every size alike
(a single 10k check takes half a second, short enough to land entirely in a quiet or a busy
moment).  With ``--rounds N`` each measurement is repeated N times and the best is kept.
Run from the repository root::

    .venv/bin/python tools/benchmarks/check_log_bench.py [--sizes 10000,100000,1000000] [--work 1000000] [--model]
        [--before CHECKOUT] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import orjson

import sessionlog_spec
from sessionlog_spec.model.event import Event, decode_event
from sessionlog_spec.model.json_value import as_object, freeze
from sessionlog_spec.model.jsonl import encode_jsonl
from sessionlog_spec.model.load import read_log
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.suite.check_log import check_path
from sessionlog_spec.vectors import realistic

SIZES = (10_000, 100_000, 1_000_000)
BATCH_EVENTS = 20_000
"""Events encoded at a time while writing (always whole turns, so packing is unaffected)."""
REASONING = ("The", " user", " wants", " me", " to", " read", " it.")
TEXT = ("Let", " me", " read", " the", " files", " it", " names", ".")
ARGUMENTS = ('{"pa', 'th": ', '"a.', 'py"}')
MiB = 1 << 20


# -- generating ---------------------------------------------------------------------------------------------


class _StreamingLog(realistic._Log):
    """The ``realistic`` generator's log, with chunk runs before every assistant message, handed
    event by event to ``sink`` instead of being kept."""

    def __init__(self, sink: Callable[[dict[str, Any]], None]) -> None:
        super().__init__()
        self.count = 0
        self.sink = sink

    def _emit(self, type_: str, data: Any, **envelope: Any) -> int:
        seq = self.count
        self.sink({"type": type_, "seq": seq, "time": realistic.T0 + realistic.TIME_STEP * seq, "data": data, **envelope})
        self.count += 1
        return seq

    def add(self, type_: str, data: Any, **envelope: Any) -> int:
        if type_ == "assistant/message":
            self._chunks(data)
        return self._emit(type_, dict(data), **envelope)

    def _chunks(self, data: Any) -> None:
        where = {"turn": data["turn"], "step": data["step"]}
        for kind, pieces in (("reasoning-delta", REASONING), ("text-delta", TEXT)):
            for piece in pieces:
                self._emit("assistant/chunk", {**where, "chunk": {"type": kind, "index": 0, "text": piece}})
        calls = [block for block in data["message"]["content"] if block["type"] == "tool-call"]
        for index, call in enumerate(calls, start=1):
            for piece in ARGUMENTS:
                chunk = {
                    "type": "tool-call-delta",
                    "index": index,
                    "id": call["id"],
                    "name": call["name"],
                    "argumentsDelta": piece,
                }
                self._emit("assistant/chunk", {**where, "chunk": chunk})


@dataclass(frozen=True)
class Log:
    """One generated session, stored in both layouts."""

    events: int
    plain: Path
    packed: Path


def generate(target: int, directory: Path, seed: int = 1) -> Log:
    """Whole turns until at least ``target`` events, written plain and packed into ``directory``."""
    header = as_object(freeze(realistic.HEADER_LINE))
    assert header is not None
    batch: list[Event] = []

    def sink(raw: dict[str, Any]) -> None:
        event = decode_event(raw)
        assert not isinstance(event, Violation), event
        batch.append(event)

    log, rng = _StreamingLog(sink), realistic.Minstd(seed)
    plain_path, packed_path = directory / f"log-{target}.jsonl", directory / f"log-{target}-packed.jsonl"
    with plain_path.open("w", encoding="utf-8") as plain, packed_path.open("w", encoding="utf-8") as packed:
        first, turn = True, 0
        while log.count < target:
            turn += 1
            realistic._turn(log, rng, turn)
            if len(batch) >= BATCH_EVENTS or log.count >= target:
                for stream, is_packed in ((plain, False), (packed, True)):
                    text = encode_jsonl(header, batch, packed=is_packed)
                    stream.write(text if first else text[text.index("\n") + 1 :])
                first = False
                batch.clear()
    return Log(log.count, plain_path, packed_path)


def _assert_valid(path: Path) -> None:
    read = read_log(path.read_bytes().decode("utf-8"))
    assert not isinstance(read, Violation), f"{path}: the generator wrote an invalid log: {read}"


# -- measuring ------------------------------------------------------------------------------------------


def _child(mode: str, path: str, repeat: int) -> None:
    """Run one measurement (``repeat`` passes over the file) in this fresh process and print it as JSON."""
    out: dict[str, Any] = {"source": str(Path(sessionlog_spec.__file__).parent)}
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(repeat):
        if mode in ("check", "model", "before"):
            result = check_path(path, model=mode == "model")
            out.update(events=result.events, violations=len(result.violations), unreadable=result.unreadable)
        elif mode == "orjson":
            with open(path, "rb") as stream:
                for line in stream:
                    orjson.loads(line)
    out.update(seconds=time.perf_counter() - start, cpu=time.process_time() - cpu, peak_rss=_peak_rss())
    print(json.dumps(out))


def _peak_rss() -> int | None:
    """This process's own peak RSS in bytes (``VmHWM``), or ``None`` without ``/proc``.

    Not ``ru_maxrss``: on Linux that survives ``execve``, so a child started by a big parent would
    report the parent's size.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


@dataclass
class Run:
    """One child's result."""

    seconds: float
    cpu: float
    peak_rss: int
    """Bytes."""
    output: dict[str, Any]


def link_checkout(checkout: Path, into: Path) -> Path:
    """A directory holding ``sessionlog_spec`` as ``checkout`` has it (every entry of its ``spec/``
    linked, and its ``model/`` as ``sessionlog_spec/model``), to put first on a child's import path."""
    spec, model = checkout / "spec", checkout / "model"
    if not (spec / "__init__.py").is_file() or not (model / "__init__.py").is_file():
        raise SystemExit(f"--before {checkout}: not a checkout of this repository (no spec/__init__.py and model/__init__.py)")
    package = into / "sessionlog_spec"
    package.mkdir(parents=True)
    for entry in spec.iterdir():
        (package / entry.name).symlink_to(entry.resolve())
    (package / "model").symlink_to(model.resolve())
    return into


def _measure(mode: str, path: Path | None = None, repeat: int = 1, imports: Path | None = None) -> Run:
    """One child's measurement; with ``imports``, the child imports ``sessionlog_spec`` from there."""
    command = [sys.executable, __file__, "--child", mode, str(path or ""), str(repeat)]
    env = None
    if imports is not None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(imports), os.environ.get("PYTHONPATH")]))}
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    stdout = child.stdout.read() if child.stdout is not None else b""
    stderr = child.stderr.read() if child.stderr is not None else b""
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise RuntimeError(f"{mode} {path}: exit {child.returncode}: {stderr.decode(errors='replace')}")
    output = json.loads(stdout)
    if imports is not None and not Path(output["source"]).is_relative_to(imports):
        raise RuntimeError(f"{mode} {path}: the child imported sessionlog_spec from {output['source']}, not from {imports}")
    return Run(output["seconds"], output["cpu"], output["peak_rss"] or usage.ru_maxrss * 1024, output)


@dataclass
class Row:
    """One table row: one log in one layout."""

    events: int
    layout: str
    lines: int
    file_bytes: int
    repeat: int
    check_us_per_event: float
    orjson_us_per_event: float
    ratio: float
    check_cpu_us_per_event: float
    orjson_cpu_us_per_event: float
    cpu_ratio: float
    peak_rss: int
    rss_over_baseline: int
    model_cpu_us_per_event: float | None = None
    """The same check with ``--model`` (every event judged by the model), when measured."""
    model_peak_rss: int | None = None
    before_cpu_us_per_event: float | None = None
    """The same check by the ``--before`` checkout, when measured."""
    before_peak_rss: int | None = None

    @property
    def model_cpu_ratio(self) -> float | None:
        """The model path's CPU time over the bare parse's."""
        return None if self.model_cpu_us_per_event is None else self.model_cpu_us_per_event / self.orjson_cpu_us_per_event

    @property
    def before_cpu_ratio(self) -> float | None:
        """The ``--before`` checkout's CPU time over the bare parse's."""
        return None if self.before_cpu_us_per_event is None else self.before_cpu_us_per_event / self.orjson_cpu_us_per_event

    @property
    def memory_ratio(self) -> float:
        """Peak RSS growth over the import-only baseline, per byte of the file."""
        return self.rss_over_baseline / self.file_bytes


def measure(
    log: Log, layout: str, work: int, rounds: int, baseline: int, *, model: bool = False, before: Path | None = None
) -> Row:
    """Best of ``rounds`` interleaved rounds of check-log and orjson on one file, each about ``work``
    events; with ``model``, also check-log with ``--model`` (the model judging every event); with
    ``before`` (a directory from :func:`link_checkout`), also check-log as that checkout has it."""
    repeat = max(1, round(work / log.events))
    path = log.plain if layout == "plain" else log.packed
    checks: list[Run] = []
    parses: list[Run] = []
    models: list[Run] = []
    befores: list[Run] = []
    for _ in range(rounds):
        if before is not None:
            befores.append(_measure("before", path, repeat, imports=before))
        checks.append(_measure("check", path, repeat))
        parses.append(_measure("orjson", path, repeat))
        if model:
            models.append(_measure("model", path, repeat))
    for run in checks + models + befores:
        output = run.output
        if output["unreadable"] is not None or output["violations"] or output["events"] != log.events:
            raise AssertionError(f"{path}: check-log did not read a clean log of {log.events} events: {output}")
    check = min(run.seconds for run in checks)
    parse = min(run.seconds for run in parses)
    check_cpu = min(run.cpu for run in checks)
    parse_cpu = min(run.cpu for run in parses)
    peak = max(run.peak_rss for run in checks)
    with path.open("rb") as stream:
        lines = sum(1 for _ in stream)
    return Row(
        events=log.events,
        layout=layout,
        lines=lines,
        file_bytes=path.stat().st_size,
        repeat=repeat,
        check_us_per_event=check / (log.events * repeat) * 1e6,
        orjson_us_per_event=parse / (log.events * repeat) * 1e6,
        ratio=check / parse,
        check_cpu_us_per_event=check_cpu / (log.events * repeat) * 1e6,
        orjson_cpu_us_per_event=parse_cpu / (log.events * repeat) * 1e6,
        cpu_ratio=check_cpu / parse_cpu,
        peak_rss=peak,
        rss_over_baseline=peak - baseline,
        model_cpu_us_per_event=min(run.cpu for run in models) / (log.events * repeat) * 1e6 if models else None,
        model_peak_rss=max(run.peak_rss for run in models) if models else None,
        before_cpu_us_per_event=min(run.cpu for run in befores) / (log.events * repeat) * 1e6 if befores else None,
        before_peak_rss=max(run.peak_rss for run in befores) if befores else None,
    )


def table(rows: Sequence[Row], baseline: int) -> str:
    """The Markdown table and the scaling figures."""
    out = [
        "| events | layout | lines | file MB | passes | check-log µs/event (CPU) | orjson µs/event (CPU) "
        "| check-log ÷ orjson (CPU) | peak RSS MB | RSS growth MB | growth ÷ file size |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        out.append(
            f"| {row.events:,} | {row.layout} | {row.lines:,} | {row.file_bytes / MiB:.1f} | {row.repeat} "
            f"| {row.check_us_per_event:.1f} ({row.check_cpu_us_per_event:.1f}) "
            f"| {row.orjson_us_per_event:.2f} ({row.orjson_cpu_us_per_event:.2f}) "
            f"| {row.ratio:.0f}× ({row.cpu_ratio:.0f}×) | {row.peak_rss / MiB:.1f} | {row.rss_over_baseline / MiB:+.1f} "
            f"| {row.memory_ratio:.3f}× |"
        )
    if any(row.model_cpu_us_per_event is not None for row in rows):
        out += [
            "",
            "| events | layout | file MB | orjson µs/event (CPU) | fast µs/event (CPU) | fast ÷ orjson | --model µs/event (CPU) "
            "| --model ÷ orjson | --model ÷ fast | fast peak RSS MB (÷ file) | --model peak RSS MB (÷ file) |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for row in rows:
            if row.model_cpu_us_per_event is None or row.model_peak_rss is None or row.model_cpu_ratio is None:
                continue
            out.append(
                f"| {row.events:,} | {row.layout} | {row.file_bytes / MiB:.1f} | {row.orjson_cpu_us_per_event:.2f} "
                f"| {row.check_cpu_us_per_event:.2f} | **{row.cpu_ratio:.1f}×** | {row.model_cpu_us_per_event:.1f} "
                f"| {row.model_cpu_ratio:.0f}× | {row.model_cpu_us_per_event / row.check_cpu_us_per_event:.1f}× "
                f"| {row.peak_rss / MiB:.1f} ({row.peak_rss / row.file_bytes:.2f}×) "
                f"| {row.model_peak_rss / MiB:.1f} ({row.model_peak_rss / row.file_bytes:.2f}×) |"
            )
    if any(row.before_cpu_us_per_event is not None for row in rows):
        out += [
            "",
            "| events | layout | file MB | orjson µs/event (CPU) | before µs/event (CPU) | before ÷ orjson "
            "| after µs/event (CPU) | after ÷ orjson | after ÷ before | before peak RSS MB (÷ file) "
            "| after peak RSS MB (÷ file) | after growth ÷ file |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for row in rows:
            if row.before_cpu_us_per_event is None or row.before_peak_rss is None or row.before_cpu_ratio is None:
                continue
            out.append(
                f"| {row.events:,} | {row.layout} | {row.file_bytes / MiB:.1f} | {row.orjson_cpu_us_per_event:.2f} "
                f"| {row.before_cpu_us_per_event:.2f} | {row.before_cpu_ratio:.1f}× "
                f"| {row.check_cpu_us_per_event:.2f} | **{row.cpu_ratio:.1f}×** "
                f"| {row.check_cpu_us_per_event / row.before_cpu_us_per_event:.2f} "
                f"| {row.before_peak_rss / MiB:.1f} ({row.before_peak_rss / row.file_bytes:.2f}×) "
                f"| {row.peak_rss / MiB:.1f} ({row.peak_rss / row.file_bytes:.2f}×) | {row.memory_ratio:.2f}× |"
            )
    out.append("")
    out.append(f"Baseline (a child that only imports the checker, highest of three): peak RSS {baseline / MiB:.1f} MB.")
    for layout in ("plain", "packed"):
        mine = [row for row in rows if row.layout == layout]
        if len(mine) >= 2:
            small, large = mine[0], mine[-1]
            scale = large.check_us_per_event / small.check_us_per_event
            cpu_scale = large.check_cpu_us_per_event / small.check_cpu_us_per_event
            out.append(
                f"Per-event check-log time, {layout}: {large.events:,} ÷ {small.events:,} events = {scale:.2f} "
                f"wall, {cpu_scale:.2f} CPU ({'within' if max(scale, cpu_scale) <= 1.5 else 'OVER'} the 1.5 bound)."
            )
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    """Generate, measure, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES), help="event counts (default 10000,100000,1000000)")
    parser.add_argument("--work", type=int, default=1_000_000, help="events per measurement (default 1000000)")
    parser.add_argument("--rounds", type=int, default=1, help="measurements per log, the best kept (default 1)")
    parser.add_argument("--dir", type=Path, help="write the logs here and keep them (default: a temporary directory)")
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write the rows as JSON")
    parser.add_argument(
        "--no-compaction",
        action="store_true",
        help="never compact, so the surface (what the checker keeps) grows with the log: the memory worst case",
    )
    parser.add_argument(
        "--model", action="store_true", help="also measure check-log --model (every event judged by the model) side by side"
    )
    parser.add_argument(
        "--before",
        type=Path,
        metavar="CHECKOUT",
        help="also measure check-log as another checkout of this repository has it (a git worktree), side by side",
    )
    parser.add_argument("--child", nargs=3, metavar=("MODE", "PATH", "REPEAT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        mode, path, repeat = args.child
        _child(mode, path, int(repeat))
        return 0
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.no_compaction:
        realistic.COMPACT_EVERY = sys.maxsize  # read by the generator at every turn
    with tempfile.TemporaryDirectory(prefix="check-log-bench-") as scratch:
        directory = args.dir or Path(scratch)
        directory.mkdir(parents=True, exist_ok=True)
        logs = []
        for size in sizes:
            start = time.perf_counter()
            log = generate(size, directory)
            print(f"generated {log.events:,} events in {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
            if size == min(sizes):
                _assert_valid(log.plain)
                _assert_valid(log.packed)
            logs.append(log)
        baseline = max(_measure("baseline").peak_rss for _ in range(3))
        before = None if args.before is None else link_checkout(args.before, Path(scratch) / "before")
        rows = []
        for log in logs:
            for layout in ("plain", "packed"):
                rows.append(measure(log, layout, args.work, args.rounds, baseline, model=args.model, before=before))
                print(f"measured {log.events:,} {layout}", file=sys.stderr, flush=True)
    machine = f"{platform.python_implementation()} {platform.python_version()}, orjson {orjson.__version__}"
    print(f"{machine}, {os.cpu_count()} CPU(s); load average at the end {' / '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(table(rows, baseline))
    if args.json:
        args.json.write_text(json.dumps({"baseline": baseline, "rows": [asdict(r) for r in rows]}, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
