"""Stored logs: the header line, round trips, torn tails at every byte, ignorable lines, versions (INV-JSONL)."""

from __future__ import annotations

from sessionlog_spec.suite.agent import layouts
from sessionlog_spec.suite.agent.builder import SessionBuilder
from sessionlog_spec.vectors.drafts import steps
from sessionlog_spec.vectors.drafts.repair import repaired
from sessionlog_spec.vectors.drafts.scenes import scene
from sessionlog_spec.vectors.drafts.steps import DEFAULT_LINE, V0_LINE, case, jsonl
from sessionlog_spec.vectors.format import Draft

FILE = "jsonl"
FULL_LINE = {**DEFAULT_LINE, "id": "s-42", "cwd": "/home/dev/project", "parentSession": "s-41", "seedLength": 0,
             "origin": "subagent", "delegationDepth": 1, "agentPreset": "reviewer"}


def short_log() -> str:
    """A five-event log with an open turn whose last line, a ``step/end``, is ASCII (so a byte offset is a character offset)."""
    b = SessionBuilder()
    b.turn_start()
    b.user_message("Fix it.")
    b.step_start()
    b.request_header({"config": {"provider": "p", "model": "m"}}, "initial")
    b.step_end()
    return jsonl(b.events)


def torn_tails() -> list[Draft]:
    """The short log cut at every byte of its last line: the torn line is dropped and the open turn repaired."""
    text = short_log()
    last = text[text.rstrip("\n").rfind("\n") + 1 :]
    assert last.isascii()
    keep = len(text) - len(last)
    return [
        case(FILE, f"torn-tail-at-byte-{cut:03d}", "INV-JSONL-3 INV-JSONL-8",
             f"the last line ({len(last)} bytes with its newline) cut after {cut} bytes"
             + (": a clean end, nothing torn" if cut in (0, len(last)) else ": a torn write, dropped"),
             steps.load(text[: keep + cut]))
        for cut in range(len(last) + 1)
    ]


def streamed_log() -> list[dict[str, object]]:
    """A closed turn whose answer streamed as a run of text chunks, then a compaction citing four seqs."""
    b = SessionBuilder()
    header = {"config": {"provider": "p", "model": "m"}}
    b.streamed_turn("Explain the bug.", ("The ", "loop ", "never ", "ends."), (), header, "initial")
    b.turn_start()
    nodes = b.state.surface.nodes
    b.compaction(nodes[0], nodes[-1])
    b.turn_end()
    return b.events


def on_disk() -> list[Draft]:
    """The released physical form: packed chunk rows, range provenance, CRLF, recovery of a damaged tail."""
    events = streamed_log()
    plain = jsonl(events)
    closed = scene("closed").events
    lines = jsonl(closed).split("\n")[:-1]
    damaged_row = "\n".join([*lines[:3], lines[3][: len(lines[3]) // 2], *lines[4:]]) + "\n"
    uncommitted = "\n".join([*lines, '{"type":"session/title","seq":', lines[-1]]) + "\n"
    no_depth = {k: v for k, v in DEFAULT_LINE.items() if k != "delegationDepth"}
    return [
        case(FILE, "packed-chunk-rows", "INV-JSONL-9 INV-JSONL-2", "a run of four text chunks stored as one text-chunks row",
             steps.load(layouts.packed(plain)), steps.save()),
        case(FILE, "range-provenance", "INV-JSONL-10", "a compaction whose sourceEventSeqs are stored as ranges",
             steps.load(layouts.ranged(plain))),
        case(FILE, "packed-and-ranged", "INV-JSONL-9 INV-JSONL-10", "both compact forms in one log",
             steps.load(layouts.packed(layouts.ranged(plain)))),
        case(FILE, "crlf-line-ends", "INV-JSONL-4", "CRLF line ends: CR is JSON whitespace", steps.load(layouts.crlf(plain))),
        case(FILE, "damaged-tail-dropped", "INV-JSONL-3", "an unparsable row after the last turn/end is dropped with its suffix",
             steps.load(uncommitted)),
        case(FILE, "damaged-committed-row-refused", "INV-JSONL-4",
             "a torn row followed by a turn/end is committed damage: the log is refused naming the row",
             steps.seed([]), steps.load(damaged_row)),
        case(FILE, "header-without-delegation-depth", "INV-JSONL-1", "the header line lacks the required delegationDepth",
             steps.seed([]), steps.load(jsonl(closed, no_depth))),
    ]


def drafts() -> list[Draft]:
    """The JSONL vectors."""
    crashed = scene("pending-call").events
    unknown = {"type": "future/telemetry", "seq": 1, "time": 1, "data": {"x": 1}, "ignorable": True}
    closed = scene("closed").events
    v0 = [{"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1, "trigger": {"kind": "user"}}},
          {"type": "turn/end", "seq": 1, "time": 0, "data": {"turn": 1, "reason": {"kind": "completed"}}}]
    gap = [closed[0], *closed[2:]]
    return [
        *torn_tails(),
        *on_disk(),
        case(FILE, "header-only", "INV-JSONL-1", "a log of just its header line is an empty session", steps.load(jsonl([]))),
        case(FILE, "header-every-member", "INV-JSONL-1", "a header line with every known member",
             steps.load(jsonl(closed, FULL_LINE)), ),
        case(FILE, "empty-text", "INV-JSONL-1", "an empty text has no header line", steps.load("")),
        case(FILE, "round-trip", "INV-JSONL-2", "load a closed session, then save it",
             steps.load(jsonl(closed, FULL_LINE)), steps.save()),
        case(FILE, "unknown-ignorable-kept", "INV-JSONL-6", "an unknown ignorable line is kept, and saved again",
             steps.load(jsonl([closed[0], unknown])), steps.save()),
        case(FILE, "v0-through-edge", "INV-JSONL-7 INV-LEGACY-6", "a version-0 log is read through the v0 edge",
             steps.load(jsonl(v0, V0_LINE)), steps.save()),
        case(FILE, "seq-gap", "INV-JSONL-5", "a missing line leaves a seq gap", steps.seed([]), steps.load(jsonl(gap))),
        case(FILE, "crash-repaired-on-load", "INV-JSONL-8 INV-REPAIR-2", "a crashed log is closed by the closers on load",
             steps.load(jsonl(crashed))),
        case(FILE, "crash-repaired-once", "INV-JSONL-8 INV-REPAIR-5", "the repaired log loads again with no closers",
             steps.load(jsonl(repaired(crashed)))),
        case(FILE, "saved-repair", "INV-JSONL-8 INV-JSONL-2", "the closers are part of what is saved",
             steps.load(jsonl(crashed)), steps.save()),
    ]
