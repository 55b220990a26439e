"""The one vocabulary of agent actions: which are legal now, the event each builds, what each exercises.

An *action* is one thing an agent harness does to its log: open a turn, write a user message, ask
for tool calls, start and answer them, compact a legal range, rewrite a tool result, write a
request header, log a note (a title, a retry, an approval, a step of a compaction, …), ….
:func:`applicable_actions` says which actions the log allows next (repeated by how often a harness
takes them), :func:`build_action` builds the uncommitted event of one (valid by construction), and
:data:`ACTION_INVARIANTS` names the invariants each exercises; the conformance machines count
coverage under the action's own name.

The log fixes most of an event (seqs, turns, steps, call ids, which compaction is open, which
provider a retry goes to); the rest comes from an :class:`ActionValues`, one maker per value.
Every event has the released v1 payload of its type and stands where the released relationship
rules allow it: a note that cannot stand where the log is (a retry between steps, a compaction
inside a turn) is logged as a hook invocation instead, and a compaction opened between turns keeps
the next turn waiting until it ends.  Two users draw differently:

* the conformance suite (:data:`SUITE_VALUES`) replays every example against a port, often a
  subprocess, and shrinks a failing one by replaying hundreds of variants; so it draws from small
  fixed pools (texts with non-ASCII, astral and control characters, a handful of payloads), each
  pick spread over the session (:func:`~sessionlog_spec.suite.spread.choose`), and in several places
  draws nothing at all;
* the property tests (``VALUES`` in ``tests/strategies.py``) draw open-ended strategies.

Both go through :func:`build_action`, so the choices are drawn in the same order: with the suite's
values a seeded run stays the same run.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias, TypeVar

from hypothesis import strategies as st
from hypothesis.strategies import DrawFn

from sessionlog_spec.model.event import KNOWN_EVENT_TYPES
from sessionlog_spec.model.json_value import thaw
from sessionlog_spec.model.legacy import DELIVERY_MARKER
from sessionlog_spec.model.payloads import CURRENT_GENERATION, payload_shape
from sessionlog_spec.model.relationships import TITLE_PLUGIN, human_text, title_frame
from sessionlog_spec.model.repair import scan_open_tail
from sessionlog_spec.model.shapes import Context as ShapeContext
from sessionlog_spec.model.shapes import Variants
from sessionlog_spec.model.trace import ABORT_CAUSES
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.suite.agent.builder import PROVIDER, OpenCompaction, RawEvent, SessionBuilder, basic_header, text_block
from sessionlog_spec.suite.agent.payload_values import AnyArm, union_arms, valid_payload
from sessionlog_spec.suite.judged import appended as model_append_event
from sessionlog_spec.suite.spread import choose, keyed_draw

T = TypeVar("T")

# Hypothesis takes about one choice in twenty from the literals of the local modules it finds
# loaded (integers from 100 up, short strings: hypothesis.internal.constants_ast), so the report of
# a seeded conformance run depends on them.  These literals left the suite's modules when the
# property tests' strategies moved to tests/strategies.py (token and duration bounds, "nan");
# keeping them here keeps every seeded run's report what it was.  Drop them when reports may change.
_SEEDED_RUN_LITERALS = (10_000, 4_000, 60_000, "nan")

# -- the vocabulary ---------------------------------------------------------------------------

_RESULT = ("INV-LOG-9", "INV-TRACE-6", "INV-TRACE-8", "INV-SURF-7", "INV-COMPACT-1", "INV-COMPACT-6")
"""A tool call's result, with output or not started."""
_NOTE = ("INV-LOG-3", "INV-LOG-6", "INV-TRACE-7", "INV-JSONL-6")
"""A note outside the turn / step protocol: log-only, turn-only or of an unknown type."""
ACTION_INVARIANTS: dict[str, tuple[str, ...]] = {
    "turn_start": ("INV-TRACE-1", "INV-TRACE-9", "INV-TRACE-10", "INV-LOG-5", "INV-LOG-12"),
    "user_message": ("INV-LOG-7", "INV-SURF-2", "INV-SURF-3", "INV-SURF-7", "INV-SURF-9", "INV-LOG-5", "INV-LOG-12"),
    "step_start": ("INV-TRACE-4", "INV-TRACE-9", "INV-TRACE-10"),
    "request_header": ("INV-HDR-1", "INV-HDR-2", "INV-HDR-4", "INV-HDR-5", "INV-HDR-8", "INV-TRACE-7"),
    "chunk": ("INV-TRACE-6", "INV-TRACE-9", "INV-LOG-4"),
    "assistant_message": ("INV-LOG-8", "INV-TRACE-6", "INV-SURF-7", "INV-COMPACT-1", "INV-COMPACT-6"),
    "tool_call": ("INV-TRACE-6", "INV-TRACE-9"),
    "tool_result": _RESULT,
    "not_started_result": _RESULT,
    "step_end": ("INV-TRACE-5", "INV-TRACE-10"),
    "turn_end": ("INV-TRACE-2", "INV-TRACE-3", "INV-TRACE-10"),
    "compaction": (
        "INV-SURF-4", "INV-SURF-5", "INV-SURF-6", "INV-SURF-8", "INV-SURF-9", "INV-SURF-10", "INV-SURF-13",
        "INV-COMPACT-2", "INV-COMPACT-3", "INV-COMPACT-6", "INV-LOG-7",
    ),
    "rewrite": ("INV-SURF-8", "INV-SURF-10", "INV-SURF-11", "INV-SURF-13", "INV-TRACE-7"),
    "log_only": _NOTE,
    "turn_only": _NOTE,
    "ignorable": _NOTE,
}
"""Every agent action, with the invariants its event exercises (as far as a group observes them;
see :func:`sessionlog_spec.suite.rule_table.step_invariants`)."""
ACTIONS = tuple(ACTION_INVARIANTS)
"""The agent actions :func:`applicable_actions` chooses from and :func:`build_action` builds."""

LOG_ONLY_TYPES = (
    "session/title",
    "session/title-llm-request",
    "llm/retry",
    "approval/asked",
    "approval/decided",
    "goal/change",
    "hook/invoked",
    "compaction/start",
    "compaction/end",
    "compaction/summary",
    "plan/mode",
    "model/selection",
    "feedback/record",
)
"""Known types outside the turn / step protocol (``log_only``), each written with its released payload
where its relationships allow it (see :func:`note_event`)."""
TURN_ONLY_TYPES = ("todo/write", "request/context")
"""Known types the harness writes inside an open turn (``turn_only``; a ``request/context`` must be)."""
UNKNOWN_TYPE_NAMES = ("x-future/thing", "vendor/telemetry", "agent/mood", "tool/progress")
"""Types outside the v1 vocabulary (``ignorable``: they must carry ``ignorable: true``)."""
assert not {*LOG_ONLY_TYPES, *TURN_ONLY_TYPES} - KNOWN_EVENT_TYPES
assert not set(UNKNOWN_TYPE_NAMES) & KNOWN_EVENT_TYPES

TOOL_NAMES = ("read_file", "write_file", "bash", "grep")
"""The tools an assistant message asks for."""
HEADER_REASONS = ("initial", "resume", "change", "series")
"""The reasons a ``request/header`` snapshot gives (``request_header``)."""

WORDS = st.text("abcdefghij klmnopé→", min_size=1, max_size=10)
"""Short words, some non-ASCII."""


def abort_cause(kind: str) -> dict[str, Any]:
    """The cause of an aborted turn: a hook names why it stopped the turn, every other cause is its kind alone."""
    return {"kind": "hook", "reason": "The Stop hook blocked the turn."} if kind == "hook" else {"kind": kind}


TURN_END_KINDS = ("completed", "blocked", "max-tokens", "interrupted", "aborted", "error")
"""Every v1 turn-end reason kind."""


def turn_end_reason(draw: DrawFn) -> dict[str, Any]:
    """A turn-end reason of any kind (spread over the session), with the facts its kind requires."""
    kind = choose(draw, TURN_END_KINDS, "turn end")
    if kind == "aborted":
        return {"kind": kind, "reason": abort_cause(choose(draw, sorted(ABORT_CAUSES), "abort cause"))}
    if kind == "error":
        code = choose(draw, ("PROVIDER_ERROR", "RATE_LIMITED", "UNKNOWN"), "error code")
        return {"kind": kind, "error": {"message": draw(WORDS, label="error message"), "code": code}}
    return {"kind": kind}


# -- what is legal now ------------------------------------------------------------------------


def open_calls(builder: SessionBuilder) -> tuple[list[str], list[str]]:
    """Calls the open step asked for: ``(not yet started, started and unanswered)``."""
    trace = builder.state.trace
    if trace.open_step is None:
        return [], []
    pending = scan_open_tail(builder.state.events).pending
    unstarted = [p.call_id for p in pending if p.call_seq is None]
    started = [p.call_id for p in pending if p.call_seq is not None and p.call_id in trace.step_calls]
    return unstarted, started


def applicable_actions(builder: SessionBuilder, unknown_types: bool = True) -> list[str]:
    """The actions the log allows next, repeated by how often a harness takes them.

    ``unknown_types`` allows ignorable events of types outside the vocabulary (a v0 log may not
    hold them).
    """
    trace = builder.state.trace
    # The protocol's own next steps come first: Hypothesis draws the first entries of a list far
    # more often than their share (its simplest value, and where a mutated example lands), and
    # with a message or a note first a session wrote notes and messages and seldom ended a step.
    ahead: list[str] = []
    around = ["user_message", "log_only"] + (["ignorable"] if unknown_types else [])
    if builder.legal_ranges():
        around += ["compaction"] * 2
    # A turn neither starts nor ends across an open compaction: the harness logs its next step instead.
    compacting = closable_compaction(builder) is not None
    if trace.open_turn is None:
        ahead += ["log_only" if compacting else "turn_start"] * 6
        return ahead + around
    around += ["request_header", "turn_only"]
    if builder.tool_result_seqs():
        around.append("rewrite")
    if trace.open_step is None:
        ahead += ["step_start"] * 6 + ["log_only" if compacting else "turn_end"] * 4
        return ahead + around
    unstarted, started = open_calls(builder)
    if started:
        ahead += ["tool_result"] * 6
    if unstarted:
        ahead += ["tool_call"] * 6 + ["not_started_result"]
    # A step ends only once every call it asked for has its result; a harness whose model output the
    # user cut off stops the step next, more often than not.
    closing = 0 if unstarted or started else 12 if _cut_off(builder) else 4
    ahead += ["step_end"] * closing + ["assistant_message"] * 5 + ["chunk"] * 2
    return ahead + around


def _cut_off(builder: SessionBuilder) -> bool:
    """Whether the open step's latest assistant message is marked ``interrupted``."""
    for event in reversed(builder.state.events):
        if event.type in ("step/start", "assistant/message"):
            data = event.data
            return event.type == "assistant/message" and isinstance(data, Mapping) and data.get("interrupted") is True
    return False


# -- the values an event holds ----------------------------------------------------------------

Maker: TypeAlias = Callable[[DrawFn], T]
"""Makes one value, drawing what it needs (or nothing, for a fixed value)."""


def drawn(strategy: st.SearchStrategy[T]) -> Maker[T]:
    """A maker that draws from ``strategy``."""
    return lambda draw: draw(strategy)


def pooled(options: Sequence[T], label: str) -> Maker[T]:
    """A maker that picks one of ``options``, spread over the session (:func:`~sessionlog_spec.suite.spread.choose`)."""
    return lambda draw: copy.deepcopy(choose(draw, options, label))


def fixed(value: T) -> Maker[T]:
    """A maker that draws nothing and gives (a fresh copy of) ``value``."""
    return lambda draw: copy.deepcopy(value)


NOTE_VARIANTS = 5
"""How many realistic payloads each note type has to choose from (:func:`note_event`)."""
ANY_NOTE: Maker[int] = pooled(range(NOTE_VARIANTS), "note variant")
"""The default :attr:`ActionValues.note`: any variant."""


@dataclass(frozen=True)
class ActionValues:
    """Where an event's values come from, beyond what the log fixes: one maker per value."""

    text: Maker[str]
    """User messages, streamed chunks, assistant text and tool output."""
    reasoning: Maker[str]
    """An assistant message's reasoning block."""
    tool_name: Maker[str]
    """The tool an assistant message asks for (one draw per call)."""
    tool_arguments: Maker[str]
    """The arguments of a requested call."""
    usage: Maker[dict[str, Any]]
    """An assistant message's token usage."""
    duration_ms: Maker[int]
    """A tool result's ``meta.durationMs``."""
    turn_end_reason: Maker[dict[str, Any]]
    """The reason a turn ends."""
    header: Maker[dict[str, Any]]
    """The (canonical, pinned) header of a ``request/header`` snapshot."""
    summary: Maker[str]
    """A compaction's summary text."""
    rewrite_text: Maker[str]
    """The content a tool-result rewrite puts in place of the output."""
    payload: Maker[Any]
    """The data of ignorable events of unknown types (nobody reads it)."""
    turn_payload: Maker[Any]
    """Not used by :func:`build_action`: turn-only notes take released payloads, chosen by ``note``
    (a value set may still give one)."""
    note: Maker[int] = ANY_NOTE
    """Which of the :data:`NOTE_VARIANTS` realistic payloads a log-only or turn-only note gets
    (:func:`note_event`): a title set by the user or by the model, an approval allowed or refused, …"""
    shaped_payloads: bool = False
    """Whether a note's or a message's payload is now and then drawn along its type's shape instead
    (:func:`shaped_note`, :func:`shaped_message`)."""


TEXTS = (
    "Please fix the failing test in parser.py.",
    "",
    "Résumé → naïve ünïcödé ✓",
    "日本語のテキスト",
    "emoji 🎉 outside the basic plane",
    "line one\nline two\ttabbed",
    'quotes " and backslash \\ and \u2028 separator',
    "\x00 nul and \x1f unit separator",
)
"""Message texts, including what JSON encoders of other languages get wrong."""
PAYLOADS: tuple[dict[str, Any], ...] = (
    {},
    {"title": "Fix the parser"},
    {"items": [{"id": 1, "text": "write test", "done": False}, {"id": 2, "text": "fix", "done": True}]},
    {"nested": {"depth": [1, [2, [3]]]}, "ratio": 0.25, "big": 9007199254740991, "none": None},
    {"text": "ünïcödé 🎉"},
)
"""Payloads of ignorable events of unknown types."""

SUITE_VALUES = ActionValues(
    text=pooled(TEXTS, "text"),
    reasoning=fixed("The test fails because the parser drops the last token."),
    tool_name=pooled(TOOL_NAMES, "tool name"),
    tool_arguments=fixed('{"path": "a.py"}'),
    usage=fixed({"inputTokens": 1200, "outputTokens": 85}),
    duration_ms=fixed(412),
    turn_end_reason=turn_end_reason,
    header=lambda draw: basic_header(),
    summary=fixed("Summary: the parser bug was found and fixed."),
    rewrite_text=fixed("[output elided]"),
    payload=pooled(PAYLOADS, "payload"),
    turn_payload=pooled(PAYLOADS, "payload"),
    shaped_payloads=True,
)
"""The conformance suite's values: small fixed pools, cheap to replay and shrink, each pick
spread over the session (:mod:`~sessionlog_spec.suite.spread`) so a run sends every value of a pool."""


# -- building the event -----------------------------------------------------------------------


def build_action(draw: DrawFn, builder: SessionBuilder, action: str, values: ActionValues = SUITE_VALUES) -> RawEvent:
    """The uncommitted event for ``action`` (one of :func:`applicable_actions`), its values from ``values``."""
    draw = keyed_draw(draw, builder.fingerprint)
    if action == "turn_start":
        return builder.turn_start(commit=False)
    if action == "turn_end":
        return builder.turn_end(values.turn_end_reason(draw), commit=False)
    if action == "step_start":
        return builder.step_start(commit=False)
    if action == "step_end":
        return builder.step_end(commit=False)
    if action == "user_message":
        event = builder.user_message(values.text(draw), commit=False)
        if values.shaped_payloads and draw(st.integers(0, 4), label="extension block") == 0:
            # A content block of a type this format does not know: kept as owner-opaque JSON (INV-PAY-3).
            kind = choose(draw, ("vendor-card", "x-image-ref", "citation"), "block type")
            event["data"]["content"].append({"type": kind, "payload": draw(OPAQUE_VALUES, label="block payload")})
        return _now_and_then_shaped(draw, builder, event, values)
    if action == "assistant_message":
        data = assistant_data(draw, builder, values)
        event = builder.event("assistant/message", data, commit=False, surfaceOp="append", **stream_provenance(draw, builder))
        return _now_and_then_shaped(draw, builder, event, values)
    if action == "chunk":
        return builder.chunk(values.text(draw), commit=False)
    if action == "tool_call":
        return builder.tool_call(choose(draw, open_calls(builder)[0], "call"), commit=False)
    if action == "tool_result":
        return tool_result(draw, builder, values)
    if action == "not_started_result":
        return builder.not_started_result(choose(draw, open_calls(builder)[0], "call"), commit=False)
    if action == "request_header":
        reason = choose(draw, HEADER_REASONS, "header reason")
        header = values.header(draw)
        return builder.request_header(header, reason, draw(st.booleans()), commit=False)
    if action == "compaction":
        start, end = draw(st.sampled_from(builder.legal_ranges()))
        if builder.state.trace.open_step is None and draw(st.integers(0, 3)) == 0:
            # Now and then a compactor that ignores the balance: the log takes its summary over any
            # span (the released session does), and its surface may have no balance after it.
            nodes = builder.state.surface.nodes
            first = draw(st.integers(0, len(nodes) - 1))
            start, end = nodes[first], nodes[draw(st.integers(first, len(nodes) - 1))]
        return builder.compaction(start, end, values.summary(draw), commit=False)
    if action == "rewrite":
        seq = choose(draw, builder.tool_result_seqs(), "rewritten result")
        return builder.rewrite_tool_result(seq, values.rewrite_text(draw), commit=False)
    if action == "log_only":
        envelope = {"ignorable": True} if draw(st.integers(0, 4)) == 0 else {}
        # A harness that started a compaction logs its summary (or its failure) next, more often than not.
        closable = closable_compaction(builder)
        # A summarised compaction ends next; an unsummarised one is summarised, or fails, next.
        summarised = closable is not None and closable.summarized
        compacting = closable is not None and (summarised or draw(st.booleans(), label="compaction goes on"))
        ends = ("compaction/end",) if summarised else ("compaction/summary", "compaction/summary", "compaction/end")
        type_ = choose(draw, ends if compacting else LOG_ONLY_TYPES, "log-only type")
        shaped = shaped_note(draw, builder, type_) if values.shaped_payloads and draw(st.integers(0, 2)) == 0 else None
        return {**(shaped or note_event(builder, type_, values.note(draw))), **envelope}
    if action == "turn_only":
        type_ = choose(draw, TURN_ONLY_TYPES, "turn-only type")
        shaped = shaped_note(draw, builder, type_) if values.shaped_payloads and draw(st.integers(0, 2)) == 0 else None
        return shaped or note_event(builder, type_, values.note(draw))
    if action == "ignorable":
        type_ = choose(draw, UNKNOWN_TYPE_NAMES, "unknown type")
        return builder.event(type_, values.payload(draw), commit=False, ignorable=True)
    raise ValueError(f"unknown action {action!r}")


def stream_provenance(draw: DrawFn, builder: SessionBuilder) -> dict[str, Any]:
    """An assistant message's optional ``sourceEventSeqs``: none, a known-empty stream (``[]``), the
    chunks the step streamed, or other earlier events, in the order the writer lists them."""
    how = choose(draw, ("none", "none", "empty", "chunks", "earlier"), "stream provenance")
    if how == "none":
        return {}
    if how == "empty":
        return {"sourceEventSeqs": []}
    trace = builder.state.trace
    step = (trace.open_turn, trace.open_step)
    chunks = [
        e.seq
        for e in builder.state.events
        if e.type == "assistant/chunk" and isinstance(e.data, Mapping) and (e.data.get("turn"), e.data.get("step")) == step
    ]
    if how == "chunks" and chunks:
        return {"sourceEventSeqs": list(draw(st.permutations(chunks), label="chunk order"))}
    earlier = st.lists(st.integers(0, builder.next_seq - 1), min_size=1, max_size=4, unique=True)
    return {"sourceEventSeqs": draw(earlier, label="sources")} if builder.next_seq else {}


def assistant_data(draw: DrawFn, builder: SessionBuilder, values: ActionValues = SUITE_VALUES) -> dict[str, Any]:
    """An assistant message for the open step: reasoning, text and tool calls as drawn."""
    draw = keyed_draw(draw, builder.fingerprint)
    trace = builder.state.trace
    content: list[dict[str, Any]] = []
    if draw(st.booleans()):
        content.append({"type": "reasoning", "text": values.reasoning(draw)})
    if draw(st.booleans()):
        content.append(text_block(values.text(draw)))
    calls = draw(st.integers(0, 3))
    content += [
        {
            "type": "tool-call",
            "id": f"call-{builder.next_seq}-{i}",
            "name": values.tool_name(draw),
            "arguments": values.tool_arguments(draw),
        }
        for i in range(calls)
    ]
    source = {"kind": "model", **PROVIDER}
    message = {"id": f"assistant-{builder.next_seq}", "role": "assistant", "content": content, "source": source}
    data: dict[str, Any] = {"turn": trace.open_turn, "step": trace.open_step, "message": message}
    if draw(st.booleans()):
        data["usage"] = values.usage(draw)
    # A message cut off by the user asks for nothing more; the flag must change nothing in the trace
    # (INV-TRACE-10), which only what follows it in the same step can show, so it is not rare here.
    if not calls and draw(st.integers(0, 2), label="interrupted") == 0:
        data["interrupted"] = True
    return data


_OPAQUE_TEXT = st.text(st.characters(codec="utf-8"), max_size=8)
_OPAQUE_LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**53) + 1, 2**53 - 1), _OPAQUE_TEXT,
    st.floats(-1e6, 1e6, allow_nan=False).filter(lambda x: x != 0 or str(x) == "0.0"),
)  # fmt: skip
OPAQUE_VALUES = st.recursive(
    _OPAQUE_LEAVES, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_OPAQUE_TEXT, inner, max_size=3), max_leaves=8
)
"""Owner-opaque JSON: any lossless value (no ``-0``, no integer beyond ``2^53 - 1``), nested a little."""


def tool_result(draw: DrawFn, builder: SessionBuilder, values: ActionValues = SUITE_VALUES) -> RawEvent:
    """The result of a started call: output or error, sometimes with meta."""
    draw = keyed_draw(draw, builder.fingerprint)
    call_id = choose(draw, open_calls(builder)[1], "answered call")
    failed = draw(st.booleans())
    data = builder.tool_result_data(call_id, values.text(draw), is_error=failed)
    if failed and draw(st.booleans()):
        data["error"] = {"name": "ToolError", "code": "TOOL_FAILED"}
    meta = draw(st.integers(0, 5), label="meta")
    if meta == 0:
        data["meta"] = {"durationMs": values.duration_ms(draw)}
    elif meta == 1 and values.shaped_payloads:
        # meta is the tool's own JSON (INV-PAY-3): any value, not only an object.
        data["meta"] = draw(OPAQUE_VALUES, label="meta value")
    return _now_and_then_shaped(draw, builder, builder.event("tool/result", data, commit=False, surfaceOp="append"), values)


def assistant_with_call(builder: SessionBuilder, tool: str) -> RawEvent:
    """An assistant message in the open step that asks for exactly one call of ``tool``, not committed."""
    trace = builder.state.trace
    call = {"type": "tool-call", "id": f"call-{builder.next_seq}-0", "name": tool, "arguments": '{"path": "a.py"}'}
    content = [text_block("Let me look at the file."), call]
    source = {"kind": "model", **PROVIDER}
    message = {"id": f"assistant-{builder.next_seq}", "role": "assistant", "content": content, "source": source}
    data = {"turn": trace.open_turn, "step": trace.open_step, "message": message}
    return builder.event("assistant/message", data, commit=False, surfaceOp="append")


# -- notes: log-only and turn-only events with their released payloads -----------------------------

TITLES = ("Fix the failing parser test", "Refactor the tokenizer", "Résumé → naïve ünïcödé ✓", "日本語のテキスト", "Release 🎉")
"""Session titles (``session/title``)."""
FEEDBACK = ("Thanks, that fixed it.", "The answer missed the second bug.", "ünïcödé feedback ✓", "👍", "Too verbose.")
"""User feedback texts (``feedback/record``)."""
SELECTIONS: tuple[dict[str, str], ...] = (
    {"provider": "deepseek", "model": "deepseek-chat"},
    {"provider": "deepseek", "model": "deepseek-reasoner", "reasoningEffort": "high"},
    {"provider": "openai", "model": "gpt-5"},
    {"provider": "openai", "model": "gpt-5", "reasoningEffort": "low"},
    {"provider": "deepseek", "model": "deepseek-chat"},
)
"""Model selections a user makes (``model/selection``)."""
HOOK_POINTS = ("UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionStart")
"""Where a hook runs (``hook/invoked``)."""
APPROVAL_OUTCOMES = ("allowed-once", "rejected", "cancelled", "unavailable", "allowed-once")
"""How an approval ends (``approval/decided``)."""
TODO_LISTS: tuple[tuple[tuple[str, str], ...], ...] = (
    (),
    (("Reproduce the failing test", "completed"), ("Fix the parser", "in_progress"), ("Run the whole suite", "pending")),
    (("Read parser.py", "pending"),),
    (("Réécrire le tokenizer", "in_progress"), ("", "pending")),
    (("Fix the parser", "completed"), ("Run the whole suite", "completed")),
)
"""Todo lists (``todo/write``): content and status of each item."""
CONTEXT_WINDOWS = (128_000, None, 64_000, 1_000_000, None)
"""Context windows a ``request/context`` reports (``None``: not reported)."""
NOTE_FALLBACK = "hook/invoked"
"""What a note that cannot stand where the log is (a retry outside a step, a compaction inside a
turn) is logged as instead: a hook runs anywhere."""


def _data(builder: SessionBuilder, seq: int) -> dict[str, Any]:
    data = thaw(builder.state.events[seq].data)
    return data if isinstance(data, dict) else {}


def _latest(builder: SessionBuilder, type_: str) -> dict[str, Any] | None:
    """The data of the latest event of ``type_``."""
    for event in reversed(builder.state.events):
        if event.type == type_:
            return _data(builder, event.seq)
    return None


def _title(builder: SessionBuilder, variant: int) -> dict[str, Any]:
    """A title the user set (citing nothing), or one the model or the fallback made from the user's messages."""
    humans = builder.human_message_seqs()
    title = TITLES[variant]
    if not humans or variant == 0:
        return {"title": title, "messageSeqs": [], "source": {"kind": "user"}}
    if variant == 4:
        return {"title": title, "messageSeqs": humans[:1], "source": {"kind": "fallback"}}
    source: dict[str, Any] = {"kind": "provider", "provider": PROVIDER["provider"]}
    if variant != 3:
        source["model"] = dict(PROVIDER)
    return {"title": title, "messageSeqs": humans[:3], "source": source}


def title_request_data(b: SessionBuilder, cited: Sequence[int], frame: str, plugin: str = TITLE_PLUGIN) -> dict[str, Any]:
    """A ``session/title-llm-request`` citing the human messages ``cited``, sending ``frame`` (their
    :func:`~sessionlog_spec.model.relationships.title_frame` when the request is right) as the one
    message of the title plugin ``plugin``."""
    source = {"kind": "plugin", "plugin": plugin}
    message = {"id": f"title-{b.next_seq}", "role": "user", "content": [text_block(frame)], "source": source}
    return {
        "titleProvider": "deepseek",
        "messageSeqs": list(cited),
        "route": dict(PROVIDER),
        "system": "Write a short title for this coding session.",
        "messages": [message],
        "maxTokens": 32,
    }


def _approval_asked(builder: SessionBuilder, variant: int) -> dict[str, Any]:
    """An approval asked for a call the open step asked for, or for a tool in general."""
    unstarted, _ = open_calls(builder)
    data: dict[str, Any] = {"id": f"approval-{builder.next_seq}"}
    advertised = builder.advertised_call(unstarted[0]) if unstarted else None
    if advertised is not None:
        data.update(toolName=advertised[0], callId=unstarted[0])
    else:
        data["toolName"] = TOOL_NAMES[variant % len(TOOL_NAMES)]
    if variant % 2:
        data["reason"] = "The command writes outside the workspace."
    return data


def _undecided_approval(builder: SessionBuilder) -> str | None:
    """The id of the latest approval asked for and not decided yet."""
    decided: set[str] = set()
    for event in reversed(builder.state.events):
        data = _data(builder, event.seq) if event.type in ("approval/asked", "approval/decided") else {}
        if event.type == "approval/decided":
            decided.add(str(data.get("id")))
        elif event.type == "approval/asked" and str(data.get("id")) not in decided:
            return str(data.get("id"))
    return None


def _goal_change(builder: SessionBuilder, variant: int) -> dict[str, Any]:
    """The next change of the session's goal: create one, or edit, pause, resume, block, complete or clear the current one."""
    now = builder.time
    latest = _latest(builder, "goal/change")
    goal = None if latest is None or latest["operation"] == "clear" else latest["goal"]
    if goal is None or goal["phase"] == "complete":
        goal = {"id": f"goal-{builder.next_seq}", "revision": 1, "objective": "Make the parser tests pass", "phase": "active"}
        goal["maxGoalRounds"] = 5
        return {"kind": "goal/change", "version": 1, "operation": "create", "goal": goal, "roundsStarted": 0,
                "createdAt": now, "updatedAt": now}
    assert latest is not None
    if variant == 4:
        cleared = {"id": goal["id"], "revision": goal["revision"]}
        return {"kind": "goal/change", "version": 1, "operation": "clear", "cleared": cleared, "clearedAt": now}
    operation = ("edit", "pause", "complete", "block")[variant] if goal["phase"] == "active" else "resume"
    phase = {"edit": "active", "pause": "paused", "complete": "complete", "block": "blocked", "resume": "active"}[operation]
    changed = {k: v for k, v in goal.items() if k != "blockedReason"}
    changed.update(revision=goal["revision"] + 1, phase=phase)
    if operation == "edit":
        changed["objective"] = f"{goal['objective']} and keep the tokenizer fast"
    if phase == "blocked":
        changed["blockedReason"] = {"code": "NEEDS_INPUT", "message": "Which parser version should be kept?"}
    rounds = latest["roundsStarted"] + (operation == "resume")
    return {"kind": "goal/change", "version": 1, "operation": operation, "goal": changed, "roundsStarted": rounds,
            "createdAt": latest["createdAt"], "updatedAt": now}


def _delivery_marker(builder: SessionBuilder, variant: int) -> dict[str, Any] | None:
    """A persistence layer's note that the events up to the latest were delivered: of this log's own
    generation naming this session (where the log's id is known), or of generation 0 (unversioned,
    or version 0) naming an ancestor, which a v1 log keeps unchecked (INV-REL-29)."""
    if builder.next_seq == 0 or builder.session_id is None:
        # Without the log's id a marker cannot be told right; nor can a v0 form of the log hold
        # one naming another session (generation 0 is the v0 log's own).
        return None
    data: dict[str, Any] = {"sessionId": "ancestor-session", "throughSeq": builder.next_seq - 1}
    if variant == 1:
        data["sessionFormatVersion"] = 0
    elif variant >= 3:
        data.update(sessionId=builder.session_id, sessionFormatVersion=1)
    return data


def _hook_invoked(builder: SessionBuilder, variant: int) -> dict[str, Any]:
    trace = builder.state.trace
    turn = trace.open_turn if trace.open_turn is not None else trace.last_turn
    data: dict[str, Any] = {"turn": turn, "point": HOOK_POINTS[variant], "dialect": ("claude-code", "codex")[variant % 2]}
    if HOOK_POINTS[variant] in ("PreToolUse", "PostToolUse"):
        data["matcher"] = "Bash|Write"
    data["handlerId"] = f"hook-{variant + 1}"
    return data


def _request_context(builder: SessionBuilder, variant: int) -> dict[str, Any]:
    """The provider and model the next request goes to, and its context window when known."""
    header = _latest(builder, "request/header")
    config = header["header"]["config"] if header is not None else PROVIDER
    data: dict[str, Any] = {"provider": config["provider"], "model": config["model"]}
    if CONTEXT_WINDOWS[variant] is not None:
        data["contextWindow"] = CONTEXT_WINDOWS[variant]
    return data


def closable_compaction(builder: SessionBuilder) -> OpenCompaction | None:
    """The open compaction, if it can still be summarised and ended: its owner turn is the open one
    (or it has none and no turn is open).  A valid log may end its owner turn first (a replayed or
    seeded log does), which leaves it open for good: nothing of it can be written any more."""
    open_ = builder.open_compaction()
    return open_ if open_ is not None and _closable(builder, open_) else None


def _closable(builder: SessionBuilder, open_: OpenCompaction) -> bool:
    return open_.turn == builder.state.trace.open_turn


def _compaction_note(builder: SessionBuilder, type_: str, variant: int) -> RawEvent | None:
    """The next step of a compaction, whichever of its types ``type_`` is: one is started between turns,
    then summarised over a legal range, then ended."""
    open_ = builder.open_compaction()
    if open_ is None:
        # A harness compacts between turns, when the surface holds a span it may summarise.
        between_turns = builder.state.trace.open_turn is None
        return builder.compaction_start(commit=False) if between_turns and builder.legal_ranges() else None
    if not _closable(builder, open_):
        return None
    ranges = builder.legal_ranges()
    if type_ != "compaction/end" and not open_.summarized and ranges:
        start, end = ranges[variant % len(ranges)]
        return builder.compaction_summary(start, end, "Summary: the parser bug was found and fixed.", commit=False)
    return builder.compaction_end(None if open_.summarized else "The summary request failed.", commit=False)


def shaped_note(draw: DrawFn, builder: SessionBuilder, type_: str) -> RawEvent | None:
    """A note of ``type_`` whose payload is drawn along the type's released shape, boundaries included
    (:func:`~sessionlog_spec.suite.agent.payload_values.valid_payload`); ``None`` where the log's
    relationships refuse what was drawn (a title citing no message of the log, an approval decided
    twice), or where it holds text no UTF-8 transport carries (a lone surrogate)."""
    seq = builder.next_seq
    if seq == 0:
        return None  # an "earlier seq" has no value at seq 0, and Hypothesis refuses an array of nothing
    if type_ == "compaction/start" and builder.state.trace.open_turn is not None:
        # A compaction starts between turns, as every other valid compaction here does: one a turn
        # owns, cut by a crash, leaves closers that cross it, which only a resume's end-seed decides
        # (INV-REL-11), and a store reopened in place would hold a log no reader takes back.
        return None
    data = draw(valid_payload(payload_shape(type_, CURRENT_GENERATION), ShapeContext(seq)), label="shaped payload")
    if type_ == DELIVERY_MARKER and isinstance(data, dict) and data.get("sessionFormatVersion") == CURRENT_GENERATION:
        # A marker of the log's own generation names the log's own session (INV-REL-29), which
        # the model's append cannot judge: the session id is the header line's.
        if builder.session_id is None:
            return None
        data["sessionId"] = builder.session_id
    return _admitted(builder, builder.event(type_, data, commit=False))


def _admitted(builder: SessionBuilder, event: RawEvent) -> RawEvent | None:
    """``event`` where a UTF-8 transport carries its payload (no lone surrogate) and the model admits
    it on the session as it stands, else ``None``."""
    try:
        json.dumps(event["data"], ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return None
    return None if isinstance(model_append_event(builder.state, event), Violation) else event


SHAPED_MESSAGE_ODDS = 4
"""One message in this many is drawn along its type's shape (:func:`shaped_message`) where the values allow it."""


def _now_and_then_shaped(draw: DrawFn, builder: SessionBuilder, plain: RawEvent, values: ActionValues) -> RawEvent:
    if not values.shaped_payloads or draw(st.integers(0, SHAPED_MESSAGE_ODDS - 1), label="shaped message") != 0:
        return plain
    return shaped_message(draw, builder, plain) or plain


@functools.cache
def _arms(type_: str) -> tuple[tuple[Variants, AnyArm], ...]:
    """Every (union, arm) of ``type_``'s current payload shape."""
    return tuple(union_arms(payload_shape(type_, CURRENT_GENERATION)))


def shaped_message(draw: DrawFn, builder: SessionBuilder, plain: RawEvent) -> RawEvent | None:
    """``plain`` (a message the loop built) with its payload drawn along its type's shape instead,
    boundaries included: every user source kind, token usage with its optional counts, replay state,
    the ``interrupted`` flag, content blocks of every type, tool calls the step must then run.  What the
    loop decides stays: the turn and step, and the call a tool result answers.  ``None`` where the
    model refuses what was drawn (a call id the log already used) or where it holds text no UTF-8
    transport carries (a lone surrogate)."""
    type_, built = plain["type"], plain["data"]
    shape = payload_shape(type_, CURRENT_GENERATION)
    # Left to itself a union takes its first arms far more often than its last; one arm pinned per
    # message (spread over the session) reaches each source kind, content block and form on purpose.
    arm = choose(draw, _arms(type_), "shaped arm")
    data = draw(valid_payload(shape, ShapeContext(builder.next_seq), (arm,)), label="shaped message")
    if not isinstance(data, dict):
        return None  # a draw function that answers every draw alike (a test's copied choice)
    for member in ("turn", "step"):
        if member in built:
            data[member] = built[member]
    if type_ == "tool/result":
        call_id = built["message"]["source"]["callId"]
        data["message"]["source"]["callId"] = call_id
        data["message"]["content"][0]["toolCallId"] = call_id
    return _admitted(builder, {**plain, "data": data})


def note_event(builder: SessionBuilder, type_: str, variant: int) -> RawEvent:
    """The uncommitted note of ``type_`` (one of :data:`LOG_ONLY_TYPES` or :data:`TURN_ONLY_TYPES`) in its
    ``variant`` (below :data:`NOTE_VARIANTS`), or a :data:`NOTE_FALLBACK` note where ``type_`` cannot stand."""
    variant %= NOTE_VARIANTS
    trace = builder.state.trace
    data: Any = None
    if type_.startswith("compaction/"):
        event = _compaction_note(builder, type_, variant)
        if event is not None:
            return event
    elif type_ == "llm/retry":
        # A retry belongs to the open step, or between steps to the step that ended last.
        current = trace.open_step is not None or (trace.open_turn is not None and builder.state.relations.ended_steps > 0)
        if current and builder.request_provider() is not None:
            return builder.retry(("transient", "transient", "transient", "rate-limit", "rate-limit")[variant], commit=False)
    elif type_ == "session/title":
        data = _title(builder, variant)
    elif type_ == "session/title-llm-request":
        # The earliest or the latest of the user's messages: a session's first prompt is often
        # plain ASCII, and what a frame must keep verbatim (non-ASCII, separators) comes later.
        count, humans = 1 + variant % 3, builder.human_message_seqs()
        humans = humans[-count:] if variant % 2 else humans[:count]
        cited = [(seq, human_text(builder.state.events[seq])) for seq in humans]
        data = title_request_data(builder, humans, title_frame(cited)) if humans else None
    elif type_ == "approval/asked":
        data = _approval_asked(builder, variant)
    elif type_ == "approval/decided":
        pending = _undecided_approval(builder)
        if pending is None:
            return builder.event("approval/asked", _approval_asked(builder, variant), commit=False)
        data = {"id": pending, "outcome": APPROVAL_OUTCOMES[variant]}
    elif type_ == "goal/change":
        data = _goal_change(builder, variant)
    elif type_ == "hook/invoked":
        data = _hook_invoked(builder, variant)
    elif type_ == "plan/mode":
        latest = _latest(builder, "plan/mode")
        data = {"active": not (latest is not None and latest["active"])}
    elif type_ == "model/selection":
        data = dict(SELECTIONS[variant])
    elif type_ == "feedback/record":
        data = {"text": FEEDBACK[variant]}
    elif type_ == "todo/write":
        data = {"todos": [{"content": content, "status": status} for content, status in TODO_LISTS[variant]]}
    elif type_ == "request/context":
        data = _request_context(builder, variant)
    elif type_ == DELIVERY_MARKER:
        data = _delivery_marker(builder, variant)
    else:
        raise ValueError(f"no note of type {type_!r}")
    event = None if data is None else builder.event(type_, data, commit=False)
    # A note that carries on from an earlier one (a goal's next revision, a plan mode's toggle) may
    # carry on from a shaped payload at a boundary (revision 2^53 - 1), where no next value is valid.
    if event is None or isinstance(model_append_event(builder.state, event), Violation):
        return builder.event(NOTE_FALLBACK, _hook_invoked(builder, variant), commit=False)
    return event
