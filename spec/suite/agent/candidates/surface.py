"""Invalid candidates of the surface (``INV-SURF``; the contracts are
:mod:`sessionlog_spec.contracts.surface`): which events carry a surface op, replaced ranges, the
seqs a replacement cites and tool-result rewrites (INV-SURF-1..11).  ``seed_late_rewrite``, a
rewrite after its turn ended, is refused by the trace first (``EVENT_OUTSIDE_TURN``, INV-TRACE-7).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence
from typing import Any

from sessionlog_spec.model.event import SURFACE_TYPES
from sessionlog_spec.model.violation import Code
from sessionlog_spec.suite.agent.builder import RawEvent, SessionBuilder
from sessionlog_spec.suite.agent.candidates.base import (
    Registry,
    _benign,
    _data,
    _elided,
    _leave_turn,
    _legal_range,
    _off_surface_seqs,
    _open_step,
    _open_turn,
    _put,
    _refused,
    _rewrite,
    _scratch,
    _seed_with,
    _shadowed_by,
    _shadowed_seqs,
    _started_call,
    _summary_event,
    _tool_results,
    _unstarted_calls,
)

REGISTERED = Registry()
"""This module's mutations, in the order their builders are defined below."""
candidate = REGISTERED.candidate


# -- surface (INV-SURF-1..11) ----------------------------------------------------------------------


@candidate(Code.SURFACE_OP_FORBIDDEN, "append")
def summary_with_surface_op(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``compaction/summary`` (the open compaction's, when one waits for it) carrying the surfaceOp that
    belongs on the replacement."""
    return _summary_event(_scratch(builder), rng, surfaceOp=lambda start, end: {"op": "replace", "start": start, "end": end})


@candidate(Code.SURFACE_OP_FORBIDDEN, "append")
def tool_call_with_surface_op(builder: SessionBuilder, rng: random.Random) -> object:
    """The ``tool/call`` of a call the open step asked for, written with ``surfaceOp: "append"`` as if it were a message."""
    b = _scratch(builder)
    unstarted = _unstarted_calls(b)
    if _open_step(b) is None or not unstarted:
        return None
    return {**b.tool_call(rng.choice(unstarted), commit=False), "surfaceOp": "append"}


def _off_surface_event(b: SessionBuilder, rng: random.Random) -> RawEvent:
    """An event of a type that never joins the surface: a note the log allows here, or an ignorable
    event of a type outside the vocabulary (which is no message either)."""
    if rng.random() < 0.5:
        return b.event(f"vendor/{rng.choice(('telemetry', 'trace', 'note'))}", {"n": 1}, False, ignorable=True)
    return _benign(b, rng)


@candidate(Code.SURFACE_OP_FORBIDDEN, "append")
def off_surface_event_with_surface_op(builder: SessionBuilder, rng: random.Random) -> object:
    """Any event that is no message (a note, an unknown ignorable event) written with a ``surfaceOp``."""
    b = _scratch(builder)
    op: object = rng.choice(("append", {"op": "replace", "start": 0, "end": 0}))
    return _refused(b, "append", Code.SURFACE_OP_FORBIDDEN, {**_off_surface_event(b, rng), "surfaceOp": op})


@candidate(Code.SOURCES_FORBIDDEN, "append")
def off_surface_event_with_sources(builder: SessionBuilder, rng: random.Random) -> object:
    """Any event that is no message (a note, an unknown ignorable event) carrying ``sourceEventSeqs``."""
    b = _scratch(builder)
    sources = [rng.randrange(b.next_seq)] if b.next_seq else []
    return _refused(b, "append", Code.SOURCES_FORBIDDEN, {**_off_surface_event(b, rng), "sourceEventSeqs": sources})


@candidate(Code.SOURCES_FORBIDDEN, "append")
def summary_with_sources(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``compaction/summary`` (the open compaction's, when one waits for it) carrying the provenance that
    belongs on the replacement."""
    b = _scratch(builder)
    return _summary_event(b, rng, sourceEventSeqs=lambda start, end: _shadowed_by(b, start, end))


@candidate(Code.SURFACE_OP_MISSING, "append")
def user_message_without_op(builder: SessionBuilder, rng: random.Random) -> object:
    """A user message with the surfaceOp left implicit, as v0 writers did."""
    e = _scratch(builder).user_message(rng.choice(("Go on.", "Thanks")), commit=False)
    del e["surfaceOp"]
    return e


@candidate(Code.SURFACE_OP_INVALID, "append")
def surface_op_misspelt(builder: SessionBuilder, rng: random.Random) -> object:
    """A surfaceOp in a spelling the format does not have."""
    b = _scratch(builder)
    nodes = b.state.surface.nodes
    s = nodes[0] if nodes else 0
    op = rng.choice(
        (
            "prepend",
            "replace",
            {"op": "append"},
            {"op": "replace", "start": s, "end": s, "reason": "compaction"},
            {"op": "replace", "start": s},
            {"op": "replace", "start": str(s), "end": s},
        )
    )
    return {**b.user_message("Go on.", commit=False), "surfaceOp": op}


def _replace_starting_at(b: SessionBuilder, rng: random.Random, starts: Sequence[int]) -> object:
    """A compaction whose start is one of ``starts`` (none on the surface) and whose end is a later surface node."""
    nodes = b.state.surface.nodes
    if not starts or not nodes:
        return None
    start = rng.choice(starts)
    end = rng.choice([n for n in nodes if n > start] or list(nodes))
    e = b.compaction(nodes[0], nodes[0], commit=False)
    return {**e, "surfaceOp": {"op": "replace", "start": start, "end": end}, "sourceEventSeqs": sorted({start, end})}


@candidate(Code.REPLACE_START_NOT_ON_SURFACE, "append")
def replace_start_shadowed(builder: SessionBuilder, rng: random.Random) -> object:
    """A compaction planned on a stale view: its start was already shadowed by an earlier replacement."""
    b = _scratch(builder)
    return _replace_starting_at(b, rng, _shadowed_seqs(b))


@candidate(Code.REPLACE_START_NOT_ON_SURFACE, "append")
def replace_start_off_surface(builder: SessionBuilder, rng: random.Random) -> object:
    """A replace whose start names a log-only event (a bracket, a tool call) instead of a surface node."""
    b = _scratch(builder)
    return _replace_starting_at(b, rng, [s for s in _off_surface_seqs(b) if b.state.events[s].type not in SURFACE_TYPES])


@candidate(Code.REPLACE_END_NOT_ON_SURFACE, "append")
def replace_end_off_surface(builder: SessionBuilder, rng: random.Random) -> object:
    """A replace whose end names the last log event (a ``step/end``, a ``turn/end``) or itself, not a surface node."""
    b = _scratch(builder)
    nodes = b.state.surface.nodes
    if not nodes:
        return None
    start = rng.choice(nodes)
    later = [s for s in _off_surface_seqs(b) if s > start] or [b.next_seq]
    end = rng.choice(later)
    shadowed = [n for n in nodes if start <= n <= end]
    e = b.compaction(nodes[0], nodes[0], commit=False)
    return {**e, "surfaceOp": {"op": "replace", "start": start, "end": end}, "sourceEventSeqs": shadowed}


@candidate(Code.REPLACE_RANGE_INVERTED, "append")
def replace_range_swapped(builder: SessionBuilder, rng: random.Random) -> object:
    """A compaction whose start and end were swapped."""
    b = _scratch(builder)
    ranges = [(s, e) for s, e in b.legal_ranges() if s != e]
    if not ranges:
        nodes = b.state.surface.nodes
        if len(nodes) < 2:
            return None
        ranges = [(nodes[0], nodes[-1])]
    start, end = rng.choice(ranges)
    e = b.compaction(start, end, commit=False)
    return {**e, "surfaceOp": {"op": "replace", "start": end, "end": start}}


@candidate(Code.SOURCES_INVALID, "append")
def sources_range_encoded(builder: SessionBuilder, rng: random.Random) -> object:
    """Sources in the physical rows' range encoding (``"0-5"``, ``[[0, 5]]``) leaked into an event."""
    b = _scratch(builder)
    last = max(b.next_seq - 1, 0)
    return {**b.user_message("Continue.", commit=False), "sourceEventSeqs": rng.choice((f"0-{last}", [[0, last]]))}


@candidate(Code.SOURCES_EMPTY, "append")
def sources_empty(builder: SessionBuilder, rng: random.Random) -> object:
    """A user message citing ``sourceEventSeqs: []`` (only assistant messages may)."""
    return {**_scratch(builder).user_message("Continue.", commit=False), "sourceEventSeqs": []}


@candidate(Code.SOURCES_DUPLICATE, "append")
def compaction_cites_twice(builder: SessionBuilder, rng: random.Random) -> object:
    """A compaction citing one shadowed node twice."""
    b = _scratch(builder)
    picked = _legal_range(b, rng)
    if picked is None:
        return None
    e = b.compaction(*picked, commit=False)
    sources = e["sourceEventSeqs"]
    return {**e, "sourceEventSeqs": [*sources, rng.choice(sources)]}


@candidate(Code.SOURCES_DUPLICATE, "append")
def append_cites_twice(builder: SessionBuilder, rng: random.Random) -> object:
    """A user message citing the same earlier event twice."""
    b = _scratch(builder)
    if b.next_seq == 0:
        return None
    cited = rng.randrange(b.next_seq)
    return {**b.user_message("Continue.", commit=False), "sourceEventSeqs": [cited, cited]}


@candidate(Code.SOURCES_NOT_EARLIER, "append")
def sources_cite_self(builder: SessionBuilder, rng: random.Random) -> object:
    """A message citing its own seq (or a later one) as its source."""
    b = _scratch(builder)
    e = b.user_message("Continue.", commit=False)
    return {**e, "sourceEventSeqs": [e["seq"] + rng.choice((0, 1))]}


@candidate(Code.SOURCES_MISSING_SHADOWED, "append")
def compaction_misses_shadowed(builder: SessionBuilder, rng: random.Random) -> object:
    """A compaction that forgets to cite one shadowed node (or cites the summary event instead)."""
    b = _scratch(builder)
    picked = _legal_range(b, rng)
    if picked is None:
        return None
    e = b.compaction(*picked, commit=False)
    shadowed: list[int] = e["sourceEventSeqs"]
    if len(shadowed) >= 2:
        dropped = rng.choice(shadowed)
        return {**e, "sourceEventSeqs": [s for s in shadowed if s != dropped]}
    others = [s for s in range(b.next_seq) if s not in shadowed]
    return {**e, "sourceEventSeqs": [rng.choice(others)]} if others else None


def _rewrite_context(builder: SessionBuilder) -> SessionBuilder | None:
    """A scratch builder when a tool-result rewrite is otherwise legal: an open turn and a tool result on the surface."""
    b = _scratch(builder)
    return b if _open_turn(b) is not None and _tool_results(b) else None


@candidate(Code.TOOL_REWRITE_SPAN, "append")
def rewrite_spans_two(builder: SessionBuilder, rng: random.Random) -> object:
    """A tool-result rewrite whose range also covers a neighbouring node."""
    b = _rewrite_context(builder)
    if b is None:
        return None
    nodes = b.state.surface.nodes
    seq = rng.choice(_tool_results(b))
    i = nodes.index(seq)
    spans = [(nodes[i - 1], seq)] if i > 0 else []
    spans += [(seq, nodes[i + 1])] if i + 1 < len(nodes) else []
    if not spans:
        return None
    start, end = rng.choice(spans)
    return _rewrite(b, start, end, _elided(_data(b.state.events[seq])))


@candidate(Code.TOOL_REWRITE_TARGET, "append")
def rewrite_targets_message(builder: SessionBuilder, rng: random.Random) -> object:
    """A tool-result rewrite used to elide a user or assistant message."""
    b = _rewrite_context(builder)
    if b is None:
        return None
    targets = [n for n in b.state.surface.nodes if b.state.events[n].type != "tool/result"]
    if not targets:
        return None
    target = rng.choice(targets)
    return _rewrite(b, target, target, _elided(_data(b.state.events[rng.choice(_tool_results(b))])))


@candidate(Code.TOOL_REWRITE_CHANGES, "append")
def rewrite_changes_beyond_content(builder: SessionBuilder, rng: random.Random) -> object:
    """A tool-result rewrite with more changed than its content: ``meta`` added, changed or dropped,
    ``isError`` flipped, the call or the message renamed, an error note added."""
    b = _rewrite_context(builder)
    if b is None:
        return None
    seq = rng.choice(_tool_results(b))
    return _rewrite(b, seq, seq, _changed_beyond_content(_elided(_data(b.state.events[seq])), rng))


RESULT_META: tuple[object, ...] = ({"truncated": True}, {"bytes": 18_204, "lines": 412}, {"exitCode": 0}, {})
"""What a tool runner notes beside a result (``meta`` is opaque JSON)."""


def _answered_call(b: SessionBuilder, rng: random.Random) -> int | None:
    """On the scratch builder ``b``: the seq of a tool result on the surface of the open turn, logging
    a call and its result (with a ``meta`` note half the time) when there is none."""
    results = _tool_results(b) if _open_turn(b) is not None else []
    if results and rng.random() < 0.5:
        return rng.choice(results)
    call = _started_call(b)
    if call is None:
        return None
    result = b.tool_result(call, commit=False)
    if rng.random() < 0.5:
        result["data"]["meta"] = copy.deepcopy(rng.choice(RESULT_META))
    return result["seq"] if _put(b, result) else None


def _changed_beyond_content(data: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """``data`` (a rewrite's payload) with one thing changed that a rewrite must keep: ``meta``
    added, changed or dropped, ``isError`` flipped, the call or the message renamed, the error note
    added."""
    message, block = data["message"], data["message"]["content"][0]
    ways = ["meta", "isError", "call", "message id", "error"]
    way = rng.choice(ways)
    if way == "meta":
        if "meta" in data and rng.random() < 0.5:
            del data["meta"]
        else:
            data["meta"] = next(m for m in RESULT_META if m != data.get("meta"))
    elif way == "isError":
        block["isError"] = not block.get("isError", False)
    elif way == "call":
        message["source"]["callId"] = block["toolCallId"] = f"{block['toolCallId']}-retry"
    elif way == "message id":
        message["id"] = f"{message['id']}-rewritten"
    else:
        data["error"] = {"name": "ToolTimeout", "code": "TIMEOUT"}
    return data


@candidate(Code.TOOL_REWRITE_CHANGES, "seed")
def seed_rewrite_changes_more_than_content(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a tool result is rewritten with more changed than its content: its ``meta``,
    its error flag or note, the call it answers, its message id."""
    b = _scratch(builder)
    seq = _answered_call(b, rng)
    if seq is None:
        return None
    return _seed_with(b, _rewrite(b, seq, seq, _changed_beyond_content(_elided(_data(b.state.events[seq])), rng)))


@candidate(Code.EVENT_OUTSIDE_TURN, "seed")
def seed_late_rewrite(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a tool result is rewritten after its turn ended (a pruning pass run between turns)."""
    b = _scratch(builder)
    seq = _answered_call(b, rng)
    if seq is None or not _leave_turn(b):
        return None
    return _seed_with(b, _rewrite(b, seq, seq, _elided(_data(b.state.events[seq]))))
