"""Does upstream accept what the suite generates on a valid path?

Every generator of *valid* sessions is sampled and the result judged by the published
``@deepseek-ai/dsh-session-format-v0-to-v1`` package (``oracle.mjs``): each distinct event by
``assertReleasedEventPayload`` and each whole log by the header, envelope and relationship checks
upstream's restore runs (``assertReleasedArtifactRelationships``).  The generators:

* ``loop``: the agent loop (:class:`~sessionlog_spec.suite.agent.loop.AgentLoop`) driven the way
  the conformance machines drive it (requests by the writer rule, loop changes, reseeds, crashes
  continued after repair), with the suite's values, under seeded Hypothesis draws;
* ``machine:<group>``: the conformance machines themselves, run in process against the model with
  a recording driver: every session the model accepted (appends, seeds, loads) and every log a
  pure op accepted (``repair`` with its closers, ``cuts``, ``header_decision``, ``upgrade_v0`` and
  ``read`` outputs);
* ``draft:<file>``: the vector drafts replayed the same way (the setup steps of refusal vectors
  included);
* ``repair``: prefixes of loop logs cut at every kind of point, with the model's closers;
* ``candidate``: the invalid candidates of :mod:`sessionlog_spec.suite.agent.candidates` on sampled
  states: a candidate refused for where it stands or how it cites (trace, surface, pairing, seq)
  must carry a valid payload, an envelope candidate's benign base must be valid, and a lossless
  candidate must be valid once its non-lossless number is made safe;
* ``acp``: the recorded ACP harness fixtures (``fixtures/acp/*/events.jsonl``), for information.

Every v0 log the model converts (``upgrade_v0``, or a version-0 text ``load`` reads) is also given
to upstream's own edge, ``ports/dsh-format/driver.mjs`` (``upgrade_v0``), which normalises it and
checks the result by the same released rules.

``python -m released_oracle.check_generated`` prints the report (``--json`` writes it) and exits 1
when upstream refused anything outside the ``--ignore`` sources (by default the ACP fixtures, which
are recordings of another harness: reported, not failed).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import re
import shutil
import subprocess
import sys
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import NonInteractiveExampleWarning

from released_oracle import FORMAT_DRIVER, ORACLE_SCRIPT, PACKAGE_DIR, REPO_ROOT
from sessionlog_spec.model.event import encode_event
from sessionlog_spec.model.json_value import MAX_SAFE_INTEGER
from sessionlog_spec.model.repair import interrupted_turn_closers
from sessionlog_spec.model.session import fold_session, seed_session
from sessionlog_spec.model.violation import Code, Violation
from sessionlog_spec.protocol.model_driver import DEFAULT_HEADER, ModelDriver
from sessionlog_spec.suite.agent import candidates
from sessionlog_spec.suite.agent.actions import applicable_actions
from sessionlog_spec.suite.agent.builder import RawEvent, SessionBuilder
from sessionlog_spec.suite.agent.candidates import base as candidate_base
from sessionlog_spec.suite.agent.loop import MODELS, AgentLoop

NODE = shutil.which("node")

# -- the Node oracle --------------------------------------------------------------------------------


def unavailable_reason() -> str | None:
    """Why the oracle cannot run here, or ``None``."""
    if NODE is None:
        return "node is not installed"
    if not (PACKAGE_DIR / "lib" / "index.js").is_file():
        return f"{PACKAGE_DIR.relative_to(REPO_ROOT)} is missing: run `cd ports/dsh-format && npm ci`"
    return None


class ReleasedOracle:
    """One ``node oracle.mjs`` process; requests go in batches (one line each way per batch)."""

    BATCH = 400

    def __init__(self) -> None:
        reason = unavailable_reason()
        if reason is not None:
            raise RuntimeError(reason)
        assert NODE is not None
        self.process = subprocess.Popen(
            [NODE, str(ORACLE_SCRIPT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
        )
        hello = self._ask({"op": "hello"})
        self.version: str | None = hello.get("version")
        self.types: frozenset[str] = frozenset(hello.get("types", ()))

    def _ask(self, request: Mapping[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request, ensure_ascii=False, allow_nan=True) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the oracle process died")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def ask_all(self, requests: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """One reply per request, in order."""
        replies: list[dict[str, Any]] = []
        for start in range(0, len(requests), self.BATCH):
            batch = self._ask({"op": "batch", "requests": list(requests[start : start + self.BATCH])})
            replies += batch["replies"]
        return replies

    def payloads(self, events: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """``assertReleasedEventPayload(event, 1)`` for each event."""
        return self.ask_all([{"op": "payload", "event": e, "version": 1} for e in events])

    def artifacts(self, logs: Sequence[GeneratedLog], payload: bool = True) -> list[dict[str, Any]]:
        """The whole-artifact check for each log (without the payload stage unless ``payload``)."""
        return self.ask_all([{"op": "artifact", **log.artifact(), "payload": payload} for log in logs])

    def close(self) -> None:
        """Say bye and wait for the process."""
        if self.process.poll() is None:
            with contextlib.suppress(OSError, RuntimeError):
                self._ask({"op": "bye"})
            self.process.wait(timeout=10)

    def __enter__(self) -> ReleasedOracle:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


# -- generated logs ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class GeneratedLog:
    """One valid-path log: where it came from, its stored header line and its events."""

    source: str
    events: tuple[RawEvent, ...]
    header: Mapping[str, Any] = field(default_factory=lambda: dict(DEFAULT_HEADER))

    @property
    def version(self) -> Any:
        """The format version its header line declares (0: a legacy log for the v0 edge)."""
        return self.header.get("version", 1)

    def artifact(self) -> dict[str, Any]:
        """The logical v1 artifact upstream's restore checks: header, events, inherited count."""
        line = self.header
        header: dict[str, Any] = {
            "version": 1,
            "id": line.get("id", "conformance"),
            "createdAt": line.get("createdAt", 0),
            "isSeeded": "seedLength" in line,
            "delegationDepth": line.get("delegationDepth", 0),
        }
        for key in ("cwd", "parentSession", "origin", "agentPreset"):
            if key in line:
                header[key] = line[key]
        return {"header": header, "events": list(self.events), "inheritedEventCount": line.get("seedLength", 0)}

    def key(self) -> str:
        """Identity for de-duplication."""
        return json.dumps([self.header, self.events], sort_keys=True, ensure_ascii=False, allow_nan=True)


Sink = Callable[[GeneratedLog], None]


class RecordingDriver(ModelDriver):
    """The model driver, recording every session and log it accepted (see the module docstring)."""

    def __init__(self, source: str, sink: Sink) -> None:
        super().__init__()
        self.source = source
        self.sink = sink
        self.dirty = False

    def flush(self) -> None:
        """Record the live session if anything was accepted into it since the last flush."""
        if self.dirty and self.state.events:
            self.record_v1(GeneratedLog(self.source, tuple(encode_event(e) for e in self.state.events), dict(self.header)))
        self.dirty = False

    def record_v1(self, log: GeneratedLog) -> None:
        """Record ``log`` as a v1 log, unless it keeps the interrupted-turn restart of released v0
        writers (INV-LEGACY-6: a session loaded, read or upgraded from a v0 log), which no v1 reader
        admits: upstream's own edge judges that one, through the v0 log it came from."""
        as_v1 = fold_session(log.events)
        if not (isinstance(as_v1, Violation) and as_v1.code is Code.TURN_ALREADY_OPEN):
            self.sink(log)

    def record_v0_text(self, text: str) -> None:
        """Record a stored version-0 log the model read (its complete, parsable lines)."""
        rows = []
        for line in text.split("\n")[:-1]:
            try:
                rows.append(json.loads(line))
            except ValueError:
                break
        if rows and isinstance(rows[0], dict) and rows[0].get("version") == 0:
            self.sink(GeneratedLog(f"{self.source}/v0", tuple(rows[1:]), rows[0]))

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request.get("op")
        if op in ("reset", "seed", "load", "bye"):
            self.flush()
        reply = super().__call__(request)
        if not reply.get("ok"):
            return reply
        result: Any = reply.get("result")
        if op in ("seed", "append", "load"):
            self.dirty = True
            if op == "load" and isinstance(request.get("jsonl"), str):
                self.record_v0_text(request["jsonl"])
        elif op == "repair" and isinstance(request.get("events"), list):
            self.sink(GeneratedLog(f"{self.source}/repair", (*request["events"], *result["closers"])))
        elif op in ("cuts", "header_decision") and isinstance(request.get("events"), list):
            self.sink(GeneratedLog(f"{self.source}/{op}", tuple(request["events"])))
        elif op == "upgrade_v0":
            log = result["log"]
            self.record_v1(GeneratedLog(f"{self.source}/upgrade_v0", tuple(log["events"]), log["header"]))
            given = request.get("log") or {}
            if isinstance(given.get("header"), Mapping) and given["header"].get("version") == 0:
                self.sink(GeneratedLog(f"{self.source}/v0", tuple(given["events"]), given["header"]))
        elif op == "read":
            self.record_v1(GeneratedLog(f"{self.source}/read", tuple(result["events"]), result["header"]))
        return reply


# -- the agent loop, driven as the machines drive it ------------------------------------------------


def _apply_change(loop: AgentLoop, change: str) -> RawEvent | None:
    """A loop change as the agent machine applies it (``machines/agent.py`` ``change_loop``)."""
    kind, _, name = change.partition(":")
    if kind == "mode":
        loop.mode = name
        return loop.event("sandbox/mode", {"mode": name})
    if kind == "model":
        loop.model = name
        return loop.event("model/selection", {"model": name, "provider": MODELS[name]["provider"]})
    if kind == "tools":
        if name == "mcp":
            loop.toggle_mcp()
        else:
            loop.revise_tool_descriptions()
    elif loop.state.trace.open_step is None:
        loop.restart_instance()
    return None


def _take_over(old: AgentLoop, state: Any) -> AgentLoop:
    loop = AgentLoop.from_state(state)
    loop.mode, loop.model, loop.toolbox = old.mode, old.model, old.toolbox
    return loop


def _act(draw: st.DrawFn, loop: AgentLoop) -> None:
    """One step of the machine's ``agent_acts``: the next action as the machine chooses it."""
    from sessionlog_spec.suite.machines.agent import COMPACT_AFTER_TURN, compaction_between_turns  # noqa: PLC0415

    if loop.needs_request():
        actions = ["send_request"] * 6 + ["log_only"]
    else:
        actions = [a for a in applicable_actions(loop.builder) if loop.can(a)] or ["log_only"]
    action = draw(st.sampled_from(actions))
    if action == "send_request":
        decision = loop.model_decision(draw(st.booleans()))
        if decision is not None:
            loop.commit(loop.header_event(decision))
        loop.request_sent()
    else:
        loop.commit(loop.build(draw, action))
    if action == "turn_end" and draw(st.integers(0, COMPACT_AFTER_TURN - 1)) == 0:
        for event in compaction_between_turns(loop.builder, draw(st.booleans())):
            loop.commit(event)


def _note(draw: st.DrawFn, loop: AgentLoop) -> None:
    """One step of the machine's ``note_in_place``: a valid note where the log relates it."""
    from sessionlog_spec.suite.machines.agent import placed_note  # noqa: PLC0415

    event = placed_note(draw, loop.builder)
    if event is not None:
        loop.builder.time = event["time"]
        loop.commit(event)


def drive_loop(draw: st.DrawFn, steps: int, sink: Sink) -> AgentLoop:
    """An agent loop run for ``steps`` rules; every log it leaves behind goes to ``sink``."""
    from sessionlog_spec.suite.machines.agent import LOOP_CHANGES  # noqa: PLC0415  (the machines import the whole suite)

    loop = AgentLoop()
    for _ in range(steps):
        rule = draw(st.sampled_from(("act", "act", "act", "act", "act", "note", "note", "reshape", "change", "reseed", "crash")))
        if rule == "act":
            for _ in range(draw(st.integers(1, 3))):
                _act(draw, loop)
        elif rule == "note":
            _note(draw, loop)
        elif rule == "reshape":
            legal = [a for a in ("compaction", "rewrite") if loop.can(a)]
            if legal:
                loop.commit(loop.build(draw, draw(st.sampled_from(legal))))
        elif rule == "change":
            raw = _apply_change(loop, draw(st.sampled_from(LOOP_CHANGES)))
            if raw is not None:
                loop.commit(raw)
        elif rule == "reseed" and loop.log:
            sink(GeneratedLog("loop", tuple(loop.log)))
            state = seed_session(loop.log)
            assert not isinstance(state, Violation), state
            loop = _take_over(loop, state)
        elif rule == "crash" and loop.log:
            sink(GeneratedLog("loop", tuple(loop.log)))
            cut = draw(st.integers(1, len(loop.log)))
            state = fold_session(loop.log[:cut])
            assert not isinstance(state, Violation), state
            repaired = fold_session([*loop.log[:cut], *(encode_event(e) for e in interrupted_turn_closers(state.events))])
            assert not isinstance(repaired, Violation), repaired
            sink(GeneratedLog("repair", tuple(encode_event(e) for e in repaired.events)))
            loop = _take_over(loop, repaired)
    sink(GeneratedLog("loop", tuple(loop.log)))
    return loop


def _quiet_settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        database=None,
        derandomize=True,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )


def loop_logs(examples: int, steps: int, states: list[SessionBuilder] | None = None) -> list[GeneratedLog]:
    """Logs of ``examples`` derandomized loop runs of ``steps`` rules; ``states`` collects builders to mutate."""
    logs: list[GeneratedLog] = []

    @_quiet_settings(examples)
    @given(st.data())
    def run(data: st.DataObject) -> None:
        loop = drive_loop(cast(st.DrawFn, data.draw), steps, logs.append)
        if states is not None:
            rng = random.Random(len(logs))
            # A handful of intermediate states: replay prefixes of the final log.
            for cut in sorted(rng.sample(range(1, len(loop.log) + 1), min(4, len(loop.log)))):
                state = fold_session(loop.log[:cut])
                assert not isinstance(state, Violation)
                states.append(SessionBuilder(state, time=loop.log[cut - 1]["time"]))

    run()
    return logs


def repair_logs(logs: Iterable[GeneratedLog], per_log: int = 6) -> list[GeneratedLog]:
    """Prefixes of ``logs`` cut at seeded points, with the model's closers (what crash repair writes)."""
    out: list[GeneratedLog] = []
    rng = random.Random(2026)
    for log in logs:
        events = list(log.events)
        if not events:
            continue
        for cut in sorted({rng.randint(1, len(events)) for _ in range(per_log)}):
            state = fold_session(events[:cut])
            if isinstance(state, Violation):
                continue
            closers = [encode_event(e) for e in interrupted_turn_closers(state.events)]
            if closers:
                out.append(GeneratedLog("repair", (*events[:cut], *closers), log.header))
    return out


# -- the conformance machines and the drafts --------------------------------------------------------


def machine_logs(examples: int, steps: int, seed: int = 2026, groups: Sequence[str] | None = None) -> list[GeneratedLog]:
    """What the conformance machines hand the model as valid, group by group."""
    from sessionlog_spec.protocol.messages import GROUPS  # noqa: PLC0415
    from sessionlog_spec.suite.ports.inprocess import InProcessPort  # noqa: PLC0415
    from sessionlog_spec.suite.profiles import PROFILES  # noqa: PLC0415
    from sessionlog_spec.suite.run import PASSED, VOID, RunOptions, run  # noqa: PLC0415

    logs: list[GeneratedLog] = []
    for group in groups or GROUPS:
        driver = RecordingDriver(f"machine:{group}", logs.append)
        options = RunOptions(profile=PROFILES["dev"], only=(group,), seed=seed, max_examples=examples, step_count=steps)
        result = run(InProcessPort(driver), options)
        driver.flush()
        failed = [(r.group, r.status, r.detail) for r in result.groups if r.status not in (PASSED, VOID)]
        if failed:
            raise RuntimeError(f"the machines failed against the model itself: {failed}")
    return logs


def draft_logs(large: bool = False) -> list[GeneratedLog]:
    """What the vector drafts hand the model as valid: every accepted step's session or log."""
    from sessionlog_spec.suite.ports.inprocess import InProcessPort  # noqa: PLC0415
    from sessionlog_spec.vectors.format import LARGE  # noqa: PLC0415
    from sessionlog_spec.vectors.generate import all_drafts  # noqa: PLC0415
    from sessionlog_spec.vectors.realistic import expand_step  # noqa: PLC0415

    logs: list[GeneratedLog] = []
    for draft in all_drafts():
        if draft.file == LARGE and not large:
            continue
        driver = RecordingDriver(f"draft:{draft.file}", logs.append)
        port = InProcessPort(driver)
        for step in draft.steps:
            request = expand_step(json.loads(json.dumps(step)))
            op = request.pop("op")
            port.call(op, **request)
        driver.flush()
    return logs


def acp_logs() -> list[GeneratedLog]:
    """The recorded ACP fixtures' stored logs."""
    out: list[GeneratedLog] = []
    for path in sorted((REPO_ROOT / "fixtures" / "acp").glob("*/events.jsonl")):
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        if lines:
            out.append(GeneratedLog(f"acp:{path.parent.name}", tuple(lines[1:]), lines[0]))
    return out


# -- invalid candidates: their valid parts ----------------------------------------------------------

PAYLOAD_CODES = frozenset(
    {
        Code.UNKNOWN_EVENT_TYPE,
        Code.END_SEED_INVALID,
        Code.PAYLOAD_INVALID,
        Code.USER_MESSAGE_INVALID,
        Code.ASSISTANT_MESSAGE_INVALID,
        Code.TOOL_RESULT_INVALID,
        Code.HEADER_INVALID,
        Code.HEADER_NOT_PINNED,
        Code.HEADER_ADAPTER_DEFAULTS_INVALID,
        Code.HEADER_NOT_CANONICAL,
        Code.HEADER_REASON_INVALID,
        Code.TRACE_DATA_INVALID,
        Code.TURN_END_REASON_INVALID,
        Code.LEGACY_HEADER_DELTA,
        Code.LEGACY_FALLBACK_REASON,
        Code.LEGACY_MODE_SET,
    }
)
"""Codes whose candidate is refused for its payload or type: its payload is the intended fault."""
ENVELOPE_CODES = frozenset(
    {
        Code.ENVELOPE_NOT_OBJECT,
        Code.ENVELOPE_UNKNOWN_KEY,
        Code.ENVELOPE_MISSING_KEY,
        Code.ENVELOPE_BAD_TYPE,
        Code.ENVELOPE_BAD_SEQ,
        Code.ENVELOPE_BAD_TIME,
        Code.ENVELOPE_BAD_IGNORABLE,
    }
)
"""Codes whose candidate is a benign event with a broken envelope: the benign base must be valid."""


def made_lossless(value: Any) -> Any:
    """``value`` with every ``-0`` made ``0`` and every integer beyond 2^53 − 1 made 2^53 − 1 (its sign kept)."""
    if isinstance(value, dict):
        return {k: made_lossless(v) for k, v in value.items()}
    if isinstance(value, list):
        return [made_lossless(v) for v in value]
    if isinstance(value, float) and value == 0.0:
        return 0
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_SAFE_INTEGER:
        return MAX_SAFE_INTEGER if value > 0 else -MAX_SAFE_INTEGER
    return value


@dataclass(frozen=True)
class CandidateProbe:
    """One event a candidate must have valid: which mutation, why, and the event."""

    mutation: str
    role: str
    event: RawEvent


def candidate_probes(states: Iterable[SessionBuilder]) -> list[CandidateProbe]:
    """The events of the append candidates that must carry a valid released payload (see the module docstring)."""
    probes: list[CandidateProbe] = []
    for index, builder in enumerate(states):
        seed = 1000 + index
        base = candidate_base._benign(candidate_base._scratch(builder), random.Random(seed))
        probes.append(CandidateProbe("_benign", "envelope base", base))
        for mutation in candidates.MUTATIONS:
            if mutation.context != "append" or mutation.code in ENVELOPE_CODES or mutation.code in PAYLOAD_CODES:
                continue
            value = mutation.build(builder, random.Random(seed))
            if not isinstance(value, dict) or not isinstance(value.get("type"), str):
                continue
            if mutation.code is Code.JSON_NOT_LOSSLESS:
                probes.append(CandidateProbe(mutation.name, "made lossless", made_lossless(value)))
            else:
                probes.append(CandidateProbe(mutation.name, f"refused with {mutation.code.value}", value))
    return probes


def upstream_edge(logs: Sequence[GeneratedLog]) -> list[str | None]:
    """Upstream's own v0 edge (``ports/dsh-format/driver.mjs``, ``upgrade_v0``) on each v0 log: its
    refusal (``CODE: message``), or ``None`` when it converts the log."""
    from sessionlog_spec.protocol.messages import Ok  # noqa: PLC0415
    from sessionlog_spec.suite.ports.subprocess import SubprocessPort  # noqa: PLC0415

    assert NODE is not None
    port = SubprocessPort([NODE, str(FORMAT_DRIVER)], timeout=60.0)
    try:
        out: list[str | None] = []
        for log in logs:
            reply = port.call("upgrade_v0", log={"header": dict(log.header), "events": list(log.events)})
            out.append(None if isinstance(reply, Ok) else f"{reply.code}: {reply.message}")
        return out
    finally:
        port.close()


# -- the report -------------------------------------------------------------------------------------


def pattern(message: str) -> str:
    """A refusal message with its numbers and quoted ids generalised, to group alike refusals."""
    return re.sub(r"\d+", "N", message)


@dataclass
class Report:
    """Per-type payload refusals, per-source log refusals and candidate refusals."""

    package: str | None = None
    events: Counter[str] = field(default_factory=Counter)
    """Distinct events sampled, by type."""
    refused: Counter[str] = field(default_factory=Counter)
    """Distinct events whose payload upstream refuses, by type."""
    reasons: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    """Per type: refusal pattern → distinct events."""
    examples: dict[str, RawEvent] = field(default_factory=dict)
    """One refused event per (type, pattern) key ``type | pattern``."""
    sources: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    """Per type: where the refused events came from."""
    logs: Counter[str] = field(default_factory=Counter)
    """Logs checked, by source."""
    log_refusals: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    """Per source: ``stage: pattern`` → logs (the first refusal of each log)."""
    log_examples: dict[str, str] = field(default_factory=dict)
    """One log (its stored text) per ``source | stage: pattern``."""
    probes: Counter[str] = field(default_factory=Counter)
    """Candidate probes checked, by mutation."""
    probe_refusals: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    """Per mutation: ``role: pattern`` → probes refused."""

    @property
    def clean(self) -> bool:
        """Whether upstream accepted everything."""
        return not self.refused and not self.log_refusals and not self.probe_refusals

    def problems(self, ignore_sources: Iterable[str] = ()) -> list[str]:
        """One line per kind of refusal (sources starting with one of ``ignore_sources`` left out)."""
        skip = tuple(ignore_sources)
        lines = []
        for type_, reasons in sorted(self.reasons.items()):
            sources = [s for s in self.sources[type_] if not s.startswith(skip)] if skip else list(self.sources[type_])
            if not sources:
                continue
            for reason, count in reasons.most_common():
                example = json.dumps(self.examples.get(f"{type_} | {reason}"), ensure_ascii=False)
                lines.append(f"payload {type_}: {count}x {reason} (from {sorted(sources)}) e.g. {example[:400]}")
        for source, reasons in sorted(self.log_refusals.items()):
            if skip and source.startswith(skip):
                continue
            for reason, count in reasons.most_common():
                lines.append(f"log {source}: {count}x {reason}")
        for mutation, reasons in sorted(self.probe_refusals.items()):
            for reason, count in reasons.most_common():
                lines.append(f"candidate {mutation}: {count}x {reason}")
        return lines

    def as_json(self) -> dict[str, Any]:
        """The report as plain JSON."""
        return {
            "package": self.package,
            "types": {
                t: {
                    "events": self.events[t],
                    "refused": self.refused[t],
                    "reasons": dict(self.reasons.get(t, {})),
                    "sources": dict(self.sources.get(t, {})),
                }
                for t in sorted(self.events)
            },
            "logs": dict(self.logs),
            "log_refusals": {s: dict(r) for s, r in self.log_refusals.items()},
            "probes": dict(self.probes),
            "probe_refusals": {m: dict(r) for m, r in self.probe_refusals.items()},
        }

    def table(self) -> str:
        """A readable per-type table, then the log and candidate refusals."""
        out = [f"released package: {self.package}", "", f"{'type':45} {'events':>7} {'refused':>7}  reasons"]
        for type_ in sorted(self.events):
            why = "; ".join(f"{n}x {r}" for r, n in self.reasons.get(type_, Counter()).most_common(3))
            where = ", ".join(f"{s} {n}" for s, n in self.sources.get(type_, Counter()).most_common())
            row = f"{type_:45} {self.events[type_]:>7} {self.refused[type_]:>7}  {why}"
            out.append(row + (f" [{where}]" if where else ""))
        out += ["", "logs checked: " + ", ".join(f"{s} {n}" for s, n in sorted(self.logs.items()))]
        for source, reasons in sorted(self.log_refusals.items()):
            for reason, count in reasons.most_common():
                out.append(f"  log refused {source}: {count}x {reason}")
        out += ["", f"candidate probes: {sum(self.probes.values())} over {len(self.probes)} mutations"]
        for mutation, reasons in sorted(self.probe_refusals.items()):
            for reason, count in reasons.most_common():
                out.append(f"  candidate {mutation}: {count}x {reason}")
        return "\n".join(out)


def _event_key(event: Mapping[str, Any]) -> str:
    return json.dumps(event, sort_keys=True, ensure_ascii=False, allow_nan=True)


def judge(
    oracle: ReleasedOracle, logs: Iterable[GeneratedLog], probes: Iterable[CandidateProbe] = (), report: Report | None = None
) -> Report:
    """Ask ``oracle`` about every distinct event and log (and candidate probe); the report of what it refused."""
    report = report or Report(package=oracle.version)
    distinct: dict[str, GeneratedLog] = {}
    for log in logs:
        distinct.setdefault(log.key(), log)
    events: dict[str, tuple[RawEvent, str]] = {}
    for log in distinct.values():
        if log.version == 0:
            continue  # legacy forms: upstream's edge judges the whole log below
        for event in log.events:
            if isinstance(event, Mapping) and event.get("type") in oracle.types:
                events.setdefault(_event_key(event), (dict(event), log.source))
    replies = oracle.payloads([e for e, _ in events.values()])
    for (event, source), reply in zip(events.values(), replies, strict=True):
        type_ = str(event["type"])
        report.events[type_] += 1
        if not reply["ok"]:
            reason = pattern(reply["message"])
            report.refused[type_] += 1
            report.reasons[type_][reason] += 1
            report.sources[type_][source.split("/")[0]] += 1
            report.examples.setdefault(f"{type_} | {reason}", event)
    checked = [log for log in distinct.values() if log.version != 0]
    for log, reply in zip(checked, oracle.artifacts(checked, payload=False), strict=True):
        report.logs[log.source] += 1
        if not reply["ok"]:
            reason = f"{reply['stage']}: {pattern(reply['message'])}"
            report.log_refusals[log.source][reason] += 1
            report.log_examples.setdefault(f"{log.source} | {reason}", json.dumps(log.artifact(), ensure_ascii=False))
    legacy = [log for log in distinct.values() if log.version == 0]
    if legacy:
        for log, refusal in zip(legacy, upstream_edge(legacy), strict=True):
            report.logs[log.source] += 1
            if refusal is not None:
                reason = f"v0 edge: {pattern(refusal)}"
                report.log_refusals[log.source][reason] += 1
                report.log_examples.setdefault(f"{log.source} | {reason}", json.dumps(
                    {"header": dict(log.header), "events": list(log.events)}, ensure_ascii=False))
    probe_list = list(probes)
    for probe, reply in zip(probe_list, oracle.payloads([p.event for p in probe_list]), strict=True):
        report.probes[probe.mutation] += 1
        if not reply["ok"]:
            report.probe_refusals[probe.mutation][f"{probe.role}: {pattern(reply['message'])}"] += 1
    return report


# -- everything together ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Budget:
    """How much of each generator to sample."""

    loop_examples: int = 60
    loop_steps: int = 60
    repair_cuts: int = 6
    """Crash points per loop log whose repair is checked."""
    machine_examples: int = 6
    machine_steps: int = 30
    machine_groups: tuple[str, ...] | None = None
    drafts: bool = True
    large: bool = False
    candidates: bool = True
    acp: bool = True


def collect(budget: Budget) -> tuple[list[GeneratedLog], list[CandidateProbe]]:
    """Every valid-path log and candidate probe the budget samples."""
    warnings.simplefilter("ignore", NonInteractiveExampleWarning)
    states: list[SessionBuilder] = []
    logs = loop_logs(budget.loop_examples, budget.loop_steps, states if budget.candidates else None)
    logs += repair_logs([log for log in logs if log.source == "loop"], budget.repair_cuts)
    if budget.machine_examples:
        logs += machine_logs(budget.machine_examples, budget.machine_steps, groups=budget.machine_groups)
    if budget.drafts:
        logs += draft_logs(budget.large)
    if budget.acp:
        logs += acp_logs()
    probes = candidate_probes(states) if budget.candidates else []
    return logs, probes


def check(budget: Budget = Budget()) -> Report:
    """Sample the generators as ``budget`` says and judge everything upstream."""
    logs, probes = collect(budget)
    with ReleasedOracle() as oracle:
        return judge(oracle, logs, probes)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: print the report; exit 1 when upstream refused anything outside ``--ignore`` sources."""
    parser = argparse.ArgumentParser(prog="python -m released_oracle.check_generated", description=__doc__.split("\n\n")[0])
    parser.add_argument("--loop-examples", type=int, default=Budget.loop_examples)
    parser.add_argument("--loop-steps", type=int, default=Budget.loop_steps)
    parser.add_argument("--machine-examples", type=int, default=Budget.machine_examples)
    parser.add_argument("--machine-steps", type=int, default=Budget.machine_steps)
    parser.add_argument("--large", action="store_true", help="also replay the large drafts (a 100k-event log)")
    parser.add_argument("--no-drafts", action="store_true")
    parser.add_argument("--no-candidates", action="store_true")
    parser.add_argument(
        "--ignore",
        action="append",
        default=["acp"],
        help="a source prefix whose refusals are reported but do not fail the run (default: acp, the recorded fixtures)",
    )
    parser.add_argument("--json", type=Path, help="also write the report as JSON here")
    parser.add_argument("--examples", type=Path, help="write one refused log per kind of log refusal here (JSON lines)")
    args = parser.parse_args(argv)
    reason = unavailable_reason()
    if reason is not None:
        print(f"cannot check: {reason}", file=sys.stderr)
        return 2
    budget = Budget(
        loop_examples=args.loop_examples,
        loop_steps=args.loop_steps,
        machine_examples=args.machine_examples,
        machine_steps=args.machine_steps,
        drafts=not args.no_drafts,
        large=args.large,
        candidates=not args.no_candidates,
    )
    report = check(budget)
    print(report.table())
    if args.json is not None:
        args.json.write_text(json.dumps(report.as_json(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    if args.examples is not None:
        with args.examples.open("w", encoding="utf-8") as out:
            for key, text in sorted(report.log_examples.items()):
                out.write(json.dumps({"refusal": key, "artifact": json.loads(text)}, ensure_ascii=False) + "\n")
    return 1 if report.problems(args.ignore) else 0


if __name__ == "__main__":
    sys.exit(main())
