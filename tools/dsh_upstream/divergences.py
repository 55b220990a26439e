"""Catalogue every divergence of a driver from the model, one minimal replayable case per divergence.

The conformance run stops each group at its first (shrunk) disagreement, so one divergence hides
the others of its group.  This tool asks the questions one at a time instead, of any driver, for
every group the driver declares:

* the invalid candidates the suite's machines inject (per group exactly the machine's
  ``injections``), from several realistic builder states, and a few valid probes;
* the stored texts of every state in every layout a released writer uses and after every crash
  (``jsonl`` through ``load``, ``read`` through ``read``), and every state's log written as v0 in
  each legacy style (``legacy``);
* every conformance vector the driver can run.

Each question is the smallest transcript that poses it, sent to the model and to the driver and
judged with the suite's own :func:`sessionlog_spec.suite.agreement.compare`; each divergence is
written as a ``sessionlog-case/1`` file that ``python -m sessionlog_spec replay FILE --driver ...``
re-runs, and classified against ``docs/conformance/deviations.md`` (a deviation row, a known model
gap, or a driver note); anything else is ``unexplained``.

Run from the repository root::

    .venv/bin/python -m dsh_upstream.divergences [--driver CMD] [--json OUT] [--check SAVED.json [--sample K/N]]

It prints one row per question: the group, the candidate, the model's code and what the driver did
(``agree``, ``agree*`` when both refuse but with different codes, or the mismatch kind) and its class.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import re
import shlex
import shutil
import sys
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sessionlog_spec.protocol.messages import Ok, Port, PortFault, Refused, Reply
from sessionlog_spec.protocol.model_driver import DEFAULT_HEADER
from sessionlog_spec.suite.agent import layouts
from sessionlog_spec.suite.agent.builder import SessionBuilder, basic_header, realistic_session
from sessionlog_spec.suite.agent.legacy_forms import FORMS, v0_events
from sessionlog_spec.suite.agreement import Mismatch, compare
from sessionlog_spec.suite.exchange import Exchange
from sessionlog_spec.suite.machines import Disagreement
from sessionlog_spec.suite.machines.agent import AgentMachine
from sessionlog_spec.suite.machines.jsonl import CRASHES, JsonlMachine, crashed_text
from sessionlog_spec.suite.machines.legacy import LegacyMachine, stored_text
from sessionlog_spec.suite.machines.pure import CompactionMachine, RepairMachine, SurfaceMachine
from sessionlog_spec.suite.machines.read import ReadMachine
from sessionlog_spec.suite.machines.session import SessionMachine
from sessionlog_spec.suite.oracle import Oracle
from sessionlog_spec.suite.output.cases import case_json
from sessionlog_spec.suite.ports.inprocess import InProcessPort
from sessionlog_spec.suite.ports.subprocess import SubprocessPort
from sessionlog_spec.suite.rule_table import CODE_OWNERS
from sessionlog_spec.vectors.format import LARGE, load_all
from sessionlog_spec.vectors.realistic import expand_step

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
    streamed = realistic_session(turns=1)
    streamed.streamed_turn("Explain the failure.", ("The ", "loop ", "never ", "ends."), ("call-s",), basic_header(), "resume")
    built = {
        "streamed": streamed,
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


Request = tuple[str, dict[str, Any]]


@dataclass
class Question:
    """One question to put to both ports, in one group, from one state."""

    group: str
    name: str
    context: str
    state: str
    events: list[RawEvent]
    candidate: Any
    requests: list[Request] | None = None
    """The transcript, when it is not the group's default one for ``events`` plus ``candidate``."""


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
    )
    yield Question(
        "session",
        "probe_ignorable_unknown_type",
        "append",
        "mid-step",
        log,
        mid.event("assistant/attempt", {"stream": []}, commit=False, ignorable=True),
    )
    seeded = [*log, mid.event("assistant/attempt", {"stream": []}, commit=False, ignorable=True)]
    yield Question("session", "probe_seed_with_ignorable_unknown_type", "seed", "mid-step", [], seeded)
    not_started = mid.tool_result_data("call-c", "never started", is_error=False)
    not_started["error"] = {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}
    yield Question(
        "session",
        "probe_not_started_result_without_is_error",
        "append",
        "mid-step",
        log,
        mid.event("tool/result", not_started, commit=False, surfaceOp="append"),
    )
    series = mid.request_header(basic_header(system="You are terse.", tools=("read_file", "bash")), "series", commit=False)
    yield Question("session", "probe_series_reason", "append", "mid-step", log, series)
    yield Question(
        "session",
        "probe_header_null",
        "append",
        "mid-step",
        log,
        mid.event("request/header", {"header": None, "reason": "change"}, commit=False),
    )
    negative = {**mid.event("todo/write", {"todos": []}, commit=False), "time": -1}
    yield Question("session", "probe_negative_time_in_seed", "seed", "mid-step", [], [*log, negative])


INJECTING: dict[str, type[AgentMachine]] = {
    "session": SessionMachine,
    "surface": SurfaceMachine,
    "repair": RepairMachine,
    "compaction": CompactionMachine,
    "jsonl": JsonlMachine,
    "read": ReadMachine,
    "legacy": LegacyMachine,
}
"""The machines whose injections are asked, per group."""
TEXT_VARIANTS = 4
"""How many drawn variants of each crash a state's stored text is asked in."""


Sample = tuple[int, int]
"""``(K, N)``: the slice of the catalogue whose questions hash to ``K`` modulo ``N``; ``(0, 1)`` is all of it."""
EVERY_QUESTION: Sample = (0, 1)


def in_sample(sample: Sample, group: str, name: str, state: str) -> bool:
    """Whether the question ``name`` (all its variants together) of ``group`` in ``state`` is in ``sample``.

    A stable hash, not a position: adding a candidate moves no other question out of its slice.
    """
    shard, shards = sample
    return shards == 1 or zlib.crc32(f"{group} {name.split('#', maxsplit=1)[0]} {state}".encode()) % shards == shard


def candidates(
    builders: dict[str, SessionBuilder], groups: Sequence[str], sample: Sample = EVERY_QUESTION
) -> Iterator[Question]:
    """Every injection of each group's machine, from every state it applies to."""
    for group in groups:
        machine = INJECTING.get(group)
        if machine is None:
            continue
        for mutation in machine.injections:
            for state, builder in builders.items():
                # Building a candidate asks the model; a question outside the sample is not built.
                if not in_sample(sample, group, mutation.name, state):
                    continue
                seen: list[Any] = []
                for variant in range(VARIANTS):
                    candidate = mutation.build(builder, random.Random(variant))
                    if candidate is None or candidate in seen:
                        continue
                    seen.append(candidate)
                    events = [] if mutation.context == "seed" else builder.events
                    name = mutation.name if len(seen) == 1 else f"{mutation.name}#{len(seen)}"
                    yield Question(group, name, mutation.context, state, events, candidate)


@dataclass(frozen=True)
class SeededChoices:
    """A crash's details from a seeded ``random.Random``, so a question is the same on every run."""

    rng: random.Random

    def integer(self, low: int, high: int, label: str) -> int:
        return self.rng.randint(low, high)

    def choice(self, options: Sequence[Any], label: str) -> Any:
        return self.rng.choice(list(options))


def stored_texts(builders: dict[str, SessionBuilder]) -> Iterator[tuple[str, str, str]]:
    """``(state, name, text)``: each state's stored log, in every layout and after every crash."""
    for state, builder in builders.items():
        header = {**DEFAULT_HEADER, "id": f"divergence-{state}"}
        text = stored_text({"header": header, "events": builder.events})
        yield state, "plain", text
        for name, layout in sorted(layouts.LAYOUTS.items()):
            yield state, f"layout-{name}", layout(text)
        for crash in CRASHES:
            for variant in range(TEXT_VARIANTS):
                drawn = crashed_text(text, header, SeededChoices(random.Random(variant)), crash)
                yield state, f"crash-{crash}#{variant}", drawn


def text_questions(builders: dict[str, SessionBuilder], groups: Sequence[str]) -> Iterator[Question]:
    """Stored texts through ``load`` (jsonl) and ``read``; v0 logs through ``upgrade_v0`` (legacy)."""
    for state, name, text in stored_texts(builders):
        if "jsonl" in groups and "session" in groups:
            requests: list[Request] = [("reset", {}), ("load", {"jsonl": text}), ("state", {})]
            yield Question("jsonl", f"stored-{name}", "load", state, [], text, requests)
        if "read" in groups:
            yield Question("read", f"stored-{name}", "read", state, [], text, [("read", {"jsonl": text})])
    if "legacy" not in groups:
        return
    for state, builder in builders.items():
        header = {**DEFAULT_HEADER, "id": f"legacy-{state}", "version": 0}
        for style in [frozenset(), *(frozenset({form}) for form in FORMS), frozenset(FORMS)]:
            log = {"header": header, "events": v0_events(builder.events, style)}
            name = "v0-" + ("+".join(sorted(style)) or "canonical")
            yield Question("legacy", name, "upgrade", state, [], log, [("upgrade_v0", {"log": log})])
            if "read" in groups:
                text = stored_text(log)
                yield Question("read", name, "read", state, [], text, [("read", {"jsonl": text})])


def vector_questions(groups: Sequence[str]) -> Iterator[Question]:
    """Every conformance vector whose groups the driver declares (a reader-only driver reads the
    stored texts of ``jsonl`` vectors)."""
    for stem, document in load_all().items():
        if stem == LARGE:
            continue
        for case in document["cases"]:
            requests = [_request(step) for step in case["input"]]
            if all(g in groups for g in case["requires"]):
                if "session" in groups:
                    requests = [("reset", {}), *requests]
                    if not case["expected"]["ok"] and requests[-1][0] in ("seed", "append", "load"):
                        requests.append(("state", {}))
                group = case["requires"][-1] if case["requires"] else stem
                yield Question(group, case["id"], "vector", stem, [], None, requests)
            elif "read" in groups and set(case["requires"]) <= {"session", "jsonl"}:
                for index, (op, args) in enumerate(requests):
                    if op == "load":
                        yield Question("read", f"{case['id']}#{index}", "vector", stem, [], args["jsonl"], [("read", args)])


def _request(step: Mapping[str, Any]) -> Request:
    request = dict(expand_step(dict(step)))
    op = request.pop("op")
    return op, request


def questions(
    builders: dict[str, SessionBuilder],
    groups: Sequence[str] = ("session", "surface", "repair"),
    sample: Sample = EVERY_QUESTION,
) -> Iterator[Question]:
    """Every question for a driver that declares ``groups`` (those in ``sample``)."""
    yield from candidates(builders, groups, sample)
    others = itertools.chain(
        probes(builders) if "session" in groups else (),
        text_questions(builders, groups),
        vector_questions(groups),
    )
    yield from (q for q in others if in_sample(sample, q.group, q.name, q.state))


def transcript(question: Question) -> list[Request]:
    """The requests that put ``question``."""
    if question.requests is not None:
        return question.requests
    events, candidate = question.events, question.candidate
    if question.group == "read":
        return [("read", {"jsonl": candidate if question.context == "load" else stored_text(candidate)})]
    if question.context == "upgrade":
        return [("upgrade_v0", {"log": candidate})]
    if question.group == "surface":
        return [("fold_surface", {"events": [*events, candidate]})]
    if question.group == "repair":
        return [("repair", {"events": [*events, candidate]})]
    if question.group == "compaction":
        if question.context == "cuts":
            return [("cuts", {"events": list(events), **candidate})]
        return [("cuts", {"events": [*events, candidate]})]
    requests: list[Request] = [("reset", {})]
    if question.context == "load":
        return [*requests, ("load", {"jsonl": candidate}), ("state", {})]
    if question.context == "seed":
        return [*requests, ("seed", {"events": candidate}), ("state", {})]
    requests += [("seed", {"events": events}), ("append", {"event": candidate}), ("state", {})]
    return requests


@dataclass
class Outcome:
    """How one question went."""

    question: Question
    verdict: str
    """``agree``, ``agree*`` (both refuse, different codes) or the mismatch kind."""
    upstream: str
    model: str
    """What the model answered to the question: ``accepts`` or its refusal code."""
    exchanges: list[Exchange]
    mismatch: Mismatch | None
    case_file: Path | None = None
    explained: str = ""
    """``agree``, ``agree*``, the deviation or gap that explains a divergence, or ``unexplained``."""


PORT_FAULT = "port-fault"


def ask(question: Question, upstream: Port) -> Outcome:
    """Send ``question`` to a fresh model and to ``upstream``; judge every exchange like the suite."""
    oracle = InProcessPort(Oracle())
    exchanges: list[Exchange] = []
    strict_differs = False
    asked: Reply | None = None
    model = ""
    for op, args in transcript(question):
        expected = oracle.call(op, **args)
        try:
            actual = upstream.call(op, **args)
        except PortFault as fault:  # the driver is gone (or its reply unreadable): the caller restarts it
            exchanges.append(Exchange(op, args, expected, fault))
            model = expected.code if isinstance(expected, Refused) else "accepts"
            return Outcome(question, PORT_FAULT, fault.kind, model, exchanges, Mismatch(PORT_FAULT, str(fault)))
        exchanges.append(Exchange(op, args, expected, actual))
        if op not in ("reset", "state"):  # the last other op is the question; earlier ones set it up
            asked, model = actual, expected.code if isinstance(expected, Refused) else "accepts"
        mismatch = compare(op, expected, actual, strict_codes=False, header_observed=True)
        if mismatch is not None:
            return Outcome(question, mismatch.kind, describe(actual), model, exchanges, mismatch)
        if isinstance(expected, Refused) and isinstance(actual, Refused) and expected.code != actual.code:
            strict_differs = True
    return Outcome(question, "agree*" if strict_differs else "agree", describe(asked), model, exchanges, None)


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
    stem = q.name.split("#")[0].replace("/", "_")
    path = directory / f"{q.group}-{stem}-{outcome.verdict}.json"
    path.write_text(json.dumps(document, ensure_ascii=False, allow_nan=False, indent=1) + "\n", encoding="utf-8")
    return path


@dataclass(frozen=True)
class Explanation:
    """A known reason for divergences: a row of ``docs/conformance/deviations.md`` (``D…``), a known
    model gap (``gap:…``) or a driver note (``driver:…``), recognised by what the driver said."""

    label: str
    pattern: str
    """A regular expression searched in the driver's reply (its code and message, or ``accepted``)
    and the question's name."""
    in_message: bool = False
    """Also search how the results differ (which names the value the model refused)."""


EXPLANATIONS = (
    Explanation("D1", r"^(session|read|jsonl) .*(header_delta|mode_set|fallback).*(UNKNOWN_EVENT_TYPE|UNMAPPED)"),
    Explanation("D3", r"\bHEADER_NOT_CANONICAL accepted-invalid"),
    Explanation("D4", r"nested.too.deep"),
    Explanation("D5", r"^(read|legacy) .*ENVELOPE_BAD_SEQ accepted-invalid .*seq -0\.0 ", in_message=True),
    Explanation("driver:json-numbers", r"unsafe integer|outside the safe range|negative zero|rounds"),
    Explanation(
        "driver:upgrade-events-are-rows", r"^(read|legacy) sources_range_encoded@upgrade\S* SOURCES_INVALID accepted-invalid"
    ),
)


def explain(outcome: Outcome, notes: Sequence[Explanation] = ()) -> str:
    """The class of one outcome: agreement, a known reason, or ``unexplained``."""
    if outcome.mismatch is None:
        return outcome.verdict
    q = outcome.question
    text = f"{q.group} {q.name} {outcome.model} {outcome.verdict} {outcome.upstream}"
    # A deliberate difference of the model explains a divergence before any driver note does.
    for explanation in EXPLANATIONS:
        searched = f"{text} | {outcome.mismatch.message}" if explanation.in_message else text
        if re.search(explanation.pattern, searched, re.IGNORECASE):
            return explanation.label
    for explanation in notes:
        # A driver's notes may also look at how the results differ.
        if re.search(explanation.pattern, f"{text} | {outcome.mismatch.message}", re.IGNORECASE):
            return explanation.label
    return "unexplained"


NODE22 = HERE / "node_modules" / ".bin" / "node"
"""Node 22 from the npm registry: the JSONL backend needs it."""
DEFAULT_DRIVER = f"{NODE22 if NODE22.exists() else 'node'} {HERE / 'driver.mjs'}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--driver", default=DEFAULT_DRIVER, help="the driver command (default: the dsh-session driver)")
    parser.add_argument("--cases-dir", type=Path, default=ROOT / "docs" / "conformance" / "cases" / "candidates")
    parser.add_argument("--json", type=Path, help="also write every outcome as JSON")
    parser.add_argument(
        "--check",
        type=Path,
        metavar="SAVED.json",
        help="fail when a verdict differs from a saved --json catalogue (no case files)",
    )
    parser.add_argument("--quiet", action="store_true", help="print only the counts")
    parser.add_argument(
        "--sample",
        type=sample_of,
        default=EVERY_QUESTION,
        metavar="K/N",
        help="ask only the questions that hash to K modulo N (with --check: a quick, fixed slice of the catalogue)",
    )
    parser.add_argument(
        "--notes",
        type=Path,
        help="the driver's own notes: a JSON list of {label, pattern, reason} for what it cannot express",
    )
    args = parser.parse_args(argv)
    command = shlex.split(args.driver)
    if not command or shutil.which(command[0]) is None:
        print(f"cannot run the driver {args.driver!r}", file=sys.stderr)
        return 2
    notes = [Explanation(n["label"], n["pattern"]) for n in json.loads(args.notes.read_text())] if args.notes else []
    upstream = SubprocessPort(command, timeout=60.0)
    outcomes: list[Outcome] = []
    try:
        groups = tuple(upstream.hello.capabilities)
        for question in questions(states(), groups, args.sample):
            outcome = ask(question, upstream)
            outcome.explained = explain(outcome, notes)
            outcomes.append(outcome)
            if outcome.verdict == PORT_FAULT:
                upstream.close()
                upstream = SubprocessPort(command, timeout=60.0)
        if args.check is not None:
            changed = changes(json.loads(args.check.read_text(encoding="utf-8")), outcomes)
            for line in changed:
                print(line)
            print(f"{len(outcomes)} questions, {len(changed)} verdict(s) changed since {args.check}")
            return 1 if changed else 0
        # One case file per divergent question name and kind of mismatch: the first variant and state that show it.
        written: set[tuple[str, str, str]] = set()
        for outcome in outcomes:
            key = (outcome.question.group, outcome.question.name.split("#")[0], outcome.verdict)
            if outcome.mismatch is not None and key not in written:
                outcome.case_file = write_case(outcome, upstream, args.cases_dir)
                written.add(key)
    finally:
        upstream.close()
    if not args.quiet:
        print_table(outcomes)
    print_counts(outcomes)
    if args.json:
        args.json.write_text(json.dumps([summary(o) for o in outcomes], indent=1) + "\n", encoding="utf-8")
    return 0


def sample_of(text: str) -> Sample:
    """``K/N`` as a :data:`Sample`."""
    match = re.fullmatch(r"(\d+)/(\d+)", text)
    if match is None or not 0 <= int(match[1]) < int(match[2]):
        raise argparse.ArgumentTypeError(f"expected K/N with 0 <= K < N, got {text!r}")
    return int(match[1]), int(match[2])


def print_counts(outcomes: list[Outcome], out: Callable[[str], None] = print) -> None:
    """Per group: questions, agree, same refusal with another code, diverge; and divergences per class."""
    groups = sorted({o.question.group for o in outcomes})
    out("| group | questions | agree | agree* (other code) | diverge |")
    out("|---|---|---|---|---|")
    for group in [*groups, "all"]:
        items = [o for o in outcomes if group in ("all", o.question.group)]
        agree = sum(o.verdict == "agree" for o in items)
        other = sum(o.verdict == "agree*" for o in items)
        out(f"| {group} | {len(items)} | {agree} | {other} | {len(items) - agree - other} |")
    classes: dict[str, int] = {}
    for o in outcomes:
        if o.mismatch is not None:
            classes[o.explained] = classes.get(o.explained, 0) + 1
    out("")
    out("divergences by class: " + ", ".join(f"{k} {v}" for k, v in sorted(classes.items())))


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
        "model": outcome.model,
        "verdict": outcome.verdict,
        "class": outcome.explained,
        "upstream": outcome.upstream,
        "case": None if outcome.case_file is None else outcome.case_file.name,
        "detail": "" if outcome.mismatch is None else outcome.mismatch.message[:300],
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
        out(f"| {group} | {name} | {shown.model} | {upstream} | {shown.verdict} | {verdicts} |")


if __name__ == "__main__":
    raise SystemExit(main())
