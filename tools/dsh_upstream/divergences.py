"""Catalogue every divergence of the upstream driver, one minimal replayable case per divergence.

The conformance run stops each group at its first (shrunk) disagreement, so one divergence hides
the others of its group.  This tool asks the questions one at a time instead: for each invalid
candidate the suite's machines inject (:data:`sessionlog_spec.suite.agent.candidates.MUTATIONS`, per group exactly the
machine's ``injections``) and for a few valid probes, from several realistic builder states, it
sends the smallest transcript that poses the question (``reset``, ``seed`` with the state's log,
the candidate, ``state``) to the model and to ``node ports/dsh-session/driver.mjs``, judges each
exchange with the suite's own :func:`sessionlog_spec.suite.agreement.compare`, and writes every disagreement as a
``sessionlog-case/1`` file that ``python -m sessionlog_spec replay FILE --driver ...`` re-runs.

Run from the repository root::

    .venv/bin/python ports/dsh-session/divergences.py [--cases-dir docs/conformance/cases] [--json OUT]

It prints one row per question: the group, the candidate, the model's code and what upstream did
(``agree``, ``agree*`` when both refuse but with different codes, or the mismatch kind).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sessionlog_spec.protocol.messages import Ok, Port, Refused, Reply
from sessionlog_spec.suite.agent.builder import SessionBuilder, basic_header, realistic_session
from sessionlog_spec.suite.agent.candidates import Mutation
from sessionlog_spec.suite.agreement import Mismatch, compare
from sessionlog_spec.suite.exchange import Exchange
from sessionlog_spec.suite.machines import Disagreement
from sessionlog_spec.suite.machines.pure import RepairMachine, SurfaceMachine
from sessionlog_spec.suite.machines.session import SessionMachine
from sessionlog_spec.suite.oracle import Oracle
from sessionlog_spec.suite.output.cases import case_json
from sessionlog_spec.suite.ports.inprocess import InProcessPort
from sessionlog_spec.suite.ports.subprocess import SubprocessPort
from sessionlog_spec.suite.rule_table import CODE_OWNERS

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "ports" / "dsh-session"
"""The upstream package's driver, benchmark script and pinned node_modules."""

RawEvent = dict[str, Any]
VARIANTS = 6
"""How many rng seeds each mutation is built with: some pick among several realistic faults."""


def states() -> dict[str, SessionBuilder]:
    """Realistic sessions to mutate from, each in a different phase of an agent's work, ending in an end-seed marker."""
    mid = realistic_session(turns=2, calls_per_step=2)
    nodes = mid.state.surface.nodes
    mid.turn_start()
    mid.user_message("Now run the tests.")
    mid.step_start()
    mid.request_header(basic_header(system="You are terse.", tools=("read_file", "bash")), "change")
    mid.chunk("Run")
    mid.assistant_message("Running.", ["call-a", "call-b", "call-c"])
    mid.tool_call("call-a")
    mid.tool_result("call-a", "3 passed")
    mid.compaction(nodes[0], nodes[-1], "Summary of the first two turns.")
    mid.tool_call("call-b")
    between = realistic_session(turns=3, calls_per_step=1)
    open_turn = realistic_session(turns=1)
    open_turn.turn_start()
    open_turn.user_message("One more thing.")
    after_step = realistic_session(turns=1)
    after_step.turn_start()
    after_step.step_start()
    after_step.request_header(basic_header(), "resume")
    after_step.assistant_message("Reading.", ["call-z"])
    after_step.tool_call("call-z")
    after_step.tool_result("call-z")
    after_step.step_end()
    built = {
        "mid-step": mid,
        "between-turns": between,
        "open-turn": open_turn,
        "after-step": after_step,
        "empty": SessionBuilder(),
    }
    for builder in built.values():
        # Seeding adds this marker on both sides; building it in keeps the candidates' seqs right.
        builder.event("session/end-seed", {})
    return built


@dataclass(frozen=True)
class Question:
    """One candidate to put to both ports, in one group, from one state."""

    group: str
    name: str
    context: str
    state: str
    events: list[RawEvent]
    candidate: Any
    expected_code: str | None
    """The code the model refuses with, or ``None`` for a valid probe."""


def probes(builders: dict[str, SessionBuilder]) -> Iterator[Question]:
    """Valid candidates (and two invalid ones no mutation covers) that exercise known gaps."""
    mid = builders["mid-step"]
    log = mid.events
    yield Question(
        "session",
        "probe_ignorable_known_type",
        "append",
        "mid-step",
        log,
        mid.event("session/title", {"title": "Fix tests"}, commit=False, ignorable=True),
        None,
    )
    yield Question(
        "session",
        "probe_ignorable_unknown_type",
        "append",
        "mid-step",
        log,
        mid.event("assistant/attempt", {"stream": []}, commit=False, ignorable=True),
        None,
    )
    seeded = [*log, mid.event("assistant/attempt", {"stream": []}, commit=False, ignorable=True)]
    yield Question("session", "probe_seed_with_ignorable_unknown_type", "seed", "mid-step", [], seeded, None)
    not_started = mid.tool_result_data("call-c", "never started", is_error=False)
    not_started["error"] = {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}
    yield Question(
        "session",
        "probe_not_started_result_without_is_error",
        "append",
        "mid-step",
        log,
        mid.event("tool/result", not_started, commit=False, surfaceOp="append"),
        None,
    )
    series = mid.request_header(basic_header(system="You are terse.", tools=("read_file", "bash")), "series", commit=False)
    yield Question("session", "probe_series_reason", "append", "mid-step", log, series, None)
    yield Question(
        "session",
        "probe_header_null",
        "append",
        "mid-step",
        log,
        mid.event("request/header", {"header": None, "reason": "change"}, commit=False),
        "HEADER_INVALID",
    )
    negative = {**mid.event("todo/write", {"todos": []}, commit=False), "time": -1}
    yield Question("session", "probe_negative_time_in_seed", "seed", "mid-step", [], [*log, negative], "ENVELOPE_BAD_TIME")


def questions(builders: dict[str, SessionBuilder]) -> Iterator[Question]:
    """Every injection of the session, surface and repair machines, from every state it applies to."""
    machines: list[tuple[str, tuple[Mutation, ...]]] = [
        ("session", SessionMachine.injections),
        ("surface", SurfaceMachine.injections),
        ("repair", RepairMachine.injections),
    ]
    for group, injections in machines:
        for mutation in injections:
            for state, builder in builders.items():
                seen: list[Any] = []
                for variant in range(VARIANTS):
                    candidate = mutation.build(builder, random.Random(variant))
                    if candidate is None or candidate in seen:
                        continue
                    seen.append(candidate)
                    events = [] if mutation.context == "seed" else builder.events
                    name = mutation.name if len(seen) == 1 else f"{mutation.name}#{len(seen)}"
                    yield Question(group, name, mutation.context, state, events, candidate, mutation.code.value)
    yield from probes(builders)


def transcript(question: Question) -> list[tuple[str, dict[str, Any]]]:
    """The requests that put ``question``."""
    if question.group == "surface":
        return [("fold_surface", {"events": [*question.events, question.candidate]})]
    if question.group == "repair":
        return [("repair", {"events": [*question.events, question.candidate]})]
    requests: list[tuple[str, dict[str, Any]]] = [("reset", {})]
    if question.context == "seed":
        return [*requests, ("seed", {"events": question.candidate}), ("state", {})]
    requests += [("seed", {"events": question.events}), ("append", {"event": question.candidate}), ("state", {})]
    return requests


@dataclass
class Outcome:
    """How one question went."""

    question: Question
    verdict: str
    """``agree``, ``agree*`` (both refuse, different codes) or the mismatch kind."""
    upstream: str
    exchanges: list[Exchange]
    mismatch: Mismatch | None
    case_file: Path | None = None


def ask(question: Question, upstream: Port) -> Outcome:
    """Send ``question`` to a fresh model and to ``upstream``; judge every exchange like the suite."""
    oracle = InProcessPort(Oracle())
    exchanges: list[Exchange] = []
    strict_differs = False
    asked: Reply | None = None
    for op, args in transcript(question):
        expected, actual = oracle.call(op, **args), upstream.call(op, **args)
        exchanges.append(Exchange(op, args, expected, actual))
        if op in ("append", "fold_surface", "repair") or (op == "seed" and question.context == "seed"):
            asked = actual
        mismatch = compare(op, expected, actual, strict_codes=False, header_observed=True)
        if mismatch is not None:
            return Outcome(question, mismatch.kind, describe(actual), exchanges, mismatch)
        if isinstance(expected, Refused) and isinstance(actual, Refused) and expected.code != actual.code:
            strict_differs = True
    return Outcome(question, "agree*" if strict_differs else "agree", describe(asked), exchanges, None)


def describe(reply: Reply | None) -> str:
    """A short account of a reply."""
    if reply is None:
        return ""
    if isinstance(reply, Ok):
        return "accepted"
    return f"{reply.code}: {reply.message}"


def write_case(outcome: Outcome, upstream: Port, directory: Path) -> Path:
    """The outcome as a replayable counterexample file."""
    assert outcome.mismatch is not None
    q = outcome.question
    codes = sorted({e.expected.code for e in outcome.exchanges if isinstance(e.expected, Refused)})
    invariants = sorted({i for code in codes for i in CODE_OWNERS.get(code, ())})
    failure = Disagreement(q.group, outcome.mismatch, outcome.exchanges, rule="inject", invariants=invariants, codes=codes)
    document = case_json(failure, upstream.hello, strict_codes=False, steps_shown=[f"{q.name} from the {q.state} state"])
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{q.group}-{q.name.split('#')[0]}-{outcome.verdict}.json"
    path.write_text(json.dumps(document, ensure_ascii=False, allow_nan=False, indent=1) + "\n", encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases-dir", type=Path, default=ROOT / "docs" / "conformance" / "cases" / "candidates")
    parser.add_argument("--json", type=Path, help="also write every outcome as JSON")
    parser.add_argument(
        "--check",
        type=Path,
        metavar="SAVED.json",
        help="fail when a verdict differs from a saved --json catalogue (no case files)",
    )
    args = parser.parse_args(argv)
    node = shutil.which("node")
    if node is None or not (HERE / "node_modules" / "@deepseek-ai" / "dsh-session").is_dir():
        print("needs node and ports/dsh-session/node_modules (cd ports/dsh-session && npm ci)", file=sys.stderr)
        return 2
    upstream = SubprocessPort([node, str(HERE / "driver.mjs")], timeout=30.0)
    outcomes: list[Outcome] = []
    try:
        for question in questions(states()):
            outcomes.append(ask(question, upstream))
        if args.check is not None:
            changed = changes(json.loads(args.check.read_text(encoding="utf-8")), outcomes)
            for line in changed:
                print(line)
            print(f"{len(outcomes)} questions, {len(changed)} verdict(s) changed since {args.check}")
            return 1 if changed else 0
        # One case file per divergent mutation and kind of mismatch: the first variant and state that show it.
        written: set[tuple[str, str, str]] = set()
        for outcome in outcomes:
            key = (outcome.question.group, outcome.question.name.split("#")[0], outcome.verdict)
            if outcome.mismatch is not None and key not in written:
                outcome.case_file = write_case(outcome, upstream, args.cases_dir)
                written.add(key)
    finally:
        upstream.close()
    print_table(outcomes)
    if args.json:
        args.json.write_text(json.dumps([summary(o) for o in outcomes], indent=1) + "\n", encoding="utf-8")
    return 0


def changes(saved: list[dict[str, Any]], outcomes: list[Outcome]) -> list[str]:
    """Questions asked both times whose verdict changed (questions only one run asked are ignored)."""
    before = {(row["group"], row["candidate"], row["state"]): row for row in saved}
    lines = []
    for outcome in outcomes:
        now = summary(outcome)
        old = before.get((now["group"], now["candidate"], now["state"]))
        if old is not None and old["verdict"] != now["verdict"]:
            lines.append(
                f"{now['group']} {now['candidate']} ({now['state']}): was {old['verdict']} ({old['upstream'][:80]}), "
                f"now {now['verdict']} ({now['upstream'][:80]})"
            )
    return lines


def summary(outcome: Outcome) -> dict[str, Any]:
    """An outcome as plain JSON."""
    q = outcome.question
    return {
        "group": q.group,
        "candidate": q.name,
        "state": q.state,
        "model": q.expected_code or "accepts",
        "verdict": outcome.verdict,
        "upstream": outcome.upstream,
        "case": None if outcome.case_file is None else outcome.case_file.name,
    }


def print_table(outcomes: list[Outcome], out: Callable[[str], None] = print) -> None:
    """One Markdown row per (group, candidate): the states that diverge and how."""
    rows: dict[tuple[str, str], list[Outcome]] = {}
    for outcome in outcomes:
        rows.setdefault((outcome.question.group, outcome.question.name), []).append(outcome)
    out("| group | candidate | model | upstream (first divergent state, else first state) | verdict | states |")
    out("|---|---|---|---|---|---|")
    for (group, name), items in rows.items():
        shown = next((o for o in items if o.mismatch is not None), items[0])
        verdicts = ", ".join(f"{o.question.state}: {o.verdict}" for o in items)
        upstream = shown.upstream.replace("|", "\\|")[:140]
        out(f"| {group} | {name} | {shown.question.expected_code or 'accepts'} | {upstream} | {shown.verdict} | {verdicts} |")


if __name__ == "__main__":
    raise SystemExit(main())
