"""Accepted surface transitions: appends, replacements, provenance and rewrites (INV-SURF)."""

from __future__ import annotations

from typing import Any

from sessionlog_spec.suite.agent.builder import SessionBuilder, text_block
from sessionlog_spec.vectors.drafts import steps
from sessionlog_spec.vectors.drafts.scenes import closed_turn, scene, seeded
from sessionlog_spec.vectors.drafts.steps import case
from sessionlog_spec.vectors.format import Draft

FILE = "surface"


def _message(seq: int, id_: str, op: Any = "append", sources: list[int] | None = None) -> dict[str, Any]:
    """A bare user message at ``seq``: the surface rules need nothing else."""
    data = {"id": id_, "role": "user", "content": [text_block(id_)], "source": {"kind": "user"}}
    event: dict[str, Any] = {"type": "user/message", "seq": seq, "time": seq, "data": data, "surfaceOp": op}
    if sources is not None:
        event["sourceEventSeqs"] = sources
    return event


def _replace(start: int, end: int) -> dict[str, Any]:
    return {"op": "replace", "start": start, "end": end}


def _surface_only_log() -> list[dict[str, Any]]:
    """Five messages, a replace of the middle three, then a replace of the replacement and the head."""
    events = [_message(i, f"m{i}") for i in range(5)]
    events.append(_message(5, "s5", _replace(1, 3), [1, 2, 3]))
    events.append(_message(6, "s6", _replace(0, 5), [0, 5, 2]))
    events.append(_message(7, "m7"))
    return events


def two_turns() -> list[dict[str, Any]]:
    """Two closed turns with tool steps, as a seed."""
    b = SessionBuilder()
    closed_turn(b)
    closed_turn(b, ("call-2", "call-3"), header_reason="resume")
    return b.events


def drafts() -> list[Draft]:
    """The SURF vectors that the model accepts."""
    log = _surface_only_log()
    answered = scene("all-answered")
    rewrite = SessionBuilder(answered.builder.state).rewrite_tool_result(answered.builder.tool_result_seqs()[0], commit=False)
    history = two_turns()
    b = seeded(history)
    nodes = b.state.surface.nodes
    whole = b.compaction(nodes[0], nodes[-1], commit=False)
    first_turn = b.compaction(nodes[0], nodes[3], commit=False)
    single = SessionBuilder(b.state).compaction(nodes[0], nodes[0], commit=False)
    assistant = SessionBuilder(scene("open-step").builder.state).assistant_message("Thinking.", commit=False)
    empty_sources = {**assistant, "sourceEventSeqs": []}
    cited = {**assistant, "sourceEventSeqs": [1, 2]}
    return [
        case(FILE, "fold-appends", "INV-SURF-7 INV-SURF-12", "five appends give the five seqs in order, generation 0",
             steps.fold_surface(log[:5])),
        case(FILE, "fold-replacements", "INV-SURF-8 INV-SURF-10 INV-SURF-12 INV-SURF-9",
             "a replace of 1..3, then of 0..5 citing a source off the surface, then an append",
             steps.fold_surface(log)),
        case(FILE, "fold-surface-rules-only", "INV-SURF-12", "fold_surface ignores trace rules: messages outside any turn fold",
             steps.fold_surface(log[:6])),
        case(FILE, "fold-empty", "INV-SURF-12", "an empty log has an empty surface", steps.fold_surface([])),
        case(FILE, "fold-realistic", "INV-SURF-12 INV-SURF-9", "the surface of a compacted, rewritten session",
             steps.fold_surface(scene("compacted").events)),
        case(FILE, "compact-whole-surface", "INV-SURF-8 INV-SURF-6 INV-SURF-10",
             "a summary replacing every node of two closed turns", steps.seed(history), steps.append(whole)),
        case(FILE, "compact-first-turn", "INV-SURF-8 INV-SURF-6", "a summary replacing the first turn keeps the second",
             steps.seed(history), steps.append(first_turn)),
        case(FILE, "compact-single-node", "INV-SURF-8", "a replace with start = end shadows one node",
             steps.seed(history), steps.append(single)),
        case(FILE, "tool-result-rewrite", "INV-SURF-11 INV-SURF-8",
             "a rewrite changing only the result content replaces its target", *answered.replay(), steps.append(rewrite)),
        case(FILE, "assistant-empty-sources", "INV-SURF-5", "an assistant message may cite an empty stream",
             *scene("open-step").replay(), steps.append(empty_sources)),
        case(FILE, "append-cites-earlier", "INV-SURF-5 INV-SURF-7", "an append may cite distinct earlier events",
             *scene("open-step").replay(), steps.append(cited)),
    ]
