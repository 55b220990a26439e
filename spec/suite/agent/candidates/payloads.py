"""Invalid candidates of event payloads (``INV-PAY``; the contracts are
:mod:`sessionlog_spec.contracts.payloads`): a valid exemplar of every type the payload table
describes, and its payload broken at one site (INV-PAY-1, -2).  The message types and the request
header are broken the same way here, refused with their own codes (INV-LOG-7..9, INV-HDR-1).
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from sessionlog_spec.model.event import SURFACE_TYPES
from sessionlog_spec.model.legacy import DELIVERY_MARKER
from sessionlog_spec.model.payloads import CURRENT_GENERATION, EVENT_PAYLOADS, payload_shape
from sessionlog_spec.model.relationships import COMMAND_TYPES
from sessionlog_spec.model.session import TYPE_CODES
from sessionlog_spec.model.shapes import Context as ShapeContext
from sessionlog_spec.model.shapes import shape_problem
from sessionlog_spec.model.trace import TRACE_TYPES
from sessionlog_spec.model.violation import Code, Violation
from sessionlog_spec.suite.agent.actions import NOTE_VARIANTS, note_event
from sessionlog_spec.suite.agent.builder import PROVIDER, RawEvent, SessionBuilder, text_block
from sessionlog_spec.suite.agent.candidates.base import STORED_HEADER, Build, Registry, _data, _refused, _scratch
from sessionlog_spec.suite.agent.candidates.log import _hook_result
from sessionlog_spec.suite.agent.candidates.relationships import (
    _command_run_data,
    _commands_ran,
    _dispatch,
    _ptc_root,
    _span_members,
)
from sessionlog_spec.suite.agent.message_exemplars import MESSAGE_EXEMPLARS
from sessionlog_spec.suite.agent.payload_faults import Site, apply_site, fault_sites, payload_fault
from sessionlog_spec.suite.judged import appended

REGISTERED = Registry()
"""This module's mutations, in the order their builders are defined below."""
candidate = REGISTERED.candidate


# -- payload shapes of every other type (INV-PAY) ---------------------------------------------------


def _turn_now(b: SessionBuilder) -> int:
    trace = b.state.trace
    return trace.open_turn if trace.open_turn is not None else trace.last_turn


Exemplar = Callable[[SessionBuilder, int, int], Any]
"""Makes the data of a note for a builder's state: (builder, payload generation, variant)."""


def _note(type_: str) -> Exemplar:
    """The data of the realistic note ``type_`` (:func:`note_event`) in the variant asked for, when it
    can stand here as that type."""

    def make(b: SessionBuilder, generation: int, variant: int) -> Any:
        event = note_event(b, type_, variant)
        return event["data"] if event["type"] == type_ else None

    return make


def _compaction_step(type_: str) -> Exemplar:
    def make(b: SessionBuilder, generation: int, variant: int) -> Any:
        open_ = b.open_compaction()
        if type_ == "compaction/start":
            return None if open_ is not None else b.compaction_start(commit=False)["data"]
        if open_ is None:
            return None
        if type_ == "compaction/summary":
            ranges = b.legal_ranges()
            if not ranges or open_.summarized:
                return None
            return b.compaction_summary(*ranges[variant % len(ranges)], commit=False)["data"]
        return b.compaction_end(None if open_.summarized else "The summary request failed.", commit=False)["data"]

    return make


def _exemplar_prune(b: SessionBuilder, generation: int, variant: int) -> Any:
    ranges = b.legal_ranges()
    if not ranges:
        return None
    nodes = list(b.state.surface.nodes)
    start, end = ranges[variant % len(ranges)]
    return _span_members(nodes[nodes.index(start) : nodes.index(end) + 1])


def _exemplar_retry_started(b: SessionBuilder, generation: int, variant: int) -> Any:
    scheduled = [_data(e) for e in b.state.events if e.type == "llm/retry"]
    if not scheduled:
        return None
    latest = scheduled[-1]
    return {k: latest[k] for k in ("retryId", "turn", "step", "retry")}


def _exemplar_command_done(b: SessionBuilder, generation: int, variant: int) -> Any:
    """How the latest command finished: a success with or without a text, one citing the event it
    produced (the latest or the earliest that is not command bookkeeping), or an error."""
    ran = _commands_ran(b)
    if not ran:
        return None
    if variant == 2:
        return {"commandId": ran[-1], "kind": "error", "text": "Nothing to compact."}
    data: RawEvent = {"commandId": ran[-1], "kind": "success"}
    if variant != 3:
        data["text"] = "Compacted the conversation."
    produced = [e.seq for e in b.state.events if e.type not in COMMAND_TYPES]
    if produced and variant in (1, 4):
        data["sourceEventSeq"] = produced[-1] if variant == 1 else produced[0]
    return data


def _exemplar_marker(b: SessionBuilder, generation: int, variant: int) -> Any:
    if b.next_seq == 0:
        return None
    data: RawEvent = {"sessionId": STORED_HEADER["id"], "throughSeq": b.next_seq - 1}
    if generation >= 1:
        data["sessionFormatVersion"] = 1
    return data


def _exemplar_dispatch(settle: bool) -> Exemplar:
    def make(b: SessionBuilder, generation: int, variant: int) -> Any:
        if b.state.trace.open_turn is None:
            return None
        root = _ptc_root(b)
        if not settle:
            return _dispatch(b, root, root, f"sub-{b.next_seq}", False)["data"]
        for event in reversed(b.state.events):
            if event.type == "tool/code-dispatch-start":
                started = _data(event)
                return _dispatch(b, started["rootCallId"], started["parentCallId"], started["subCallId"], True)["data"]
        return None

    return make


def _fixed(data: Any) -> Exemplar:
    return lambda b, generation, variant: copy.deepcopy(data)


_TEAM = {"version": 1, "teamId": "team-parser"}
_EXEMPLARS: dict[str, Exemplar] = {
    "agent-preset/selected": _fixed({"agentPreset": "reviewer"}),
    "agent/inbox/spliced": lambda b, g, v: {
        "target": "next-turn",
        "start": len(b.state.surface.nodes),
        "inserted": [
            {
                "id": f"inbox-{b.next_seq}",
                "role": "user",
                "content": [text_block("The lexer tests pass on my side.")],
                "source": {
                    "kind": "team-message",
                    "teamId": "team-parser",
                    "messageId": "msg-7",
                    "senderId": "member-2",
                    "senderName": "Reviewer",
                },
            }
        ],
        "removedCount": 0,
    },
    "approval/asked": _note("approval/asked"),
    "approval/decided": _note("approval/decided"),
    "approval/policy": _fixed({"policy": "ask"}),
    "command/done": _exemplar_command_done,
    "command/run": lambda b, g, v: _command_run_data(f"cmd-{b.next_seq}"),
    "compaction/end": _compaction_step("compaction/end"),
    "compaction/prune": _exemplar_prune,
    "compaction/start": _compaction_step("compaction/start"),
    "compaction/summary": _compaction_step("compaction/summary"),
    "feedback/record": _note("feedback/record"),
    "goal/change": _note("goal/change"),
    "hook/invoked": _note("hook/invoked"),
    "hook/result": lambda b, g, v: {**_hook_result(b, (0, 1, 2, 0, 127)[v], (412, 0, 1.5, 30_000, 7)[v]), "stderrSummary": ""},
    "llm/retry": _note("llm/retry"),
    "llm/retry-started": _exemplar_retry_started,
    "model/selection": _note("model/selection"),
    "permission/preset": _fixed({"preset": "auto-edit"}),
    "plan/mode": _note("plan/mode"),
    "request/context": _note("request/context"),
    "sandbox/mode": _fixed({"mode": "workspace-write", "source": "delegation"}),
    "schedule/change": _fixed(
        {
            "version": 1,
            "operation": "create",
            "schedule": {
                "id": "nightly-tests",
                "prompt": "Run the whole test suite and report failures.",
                "scheduledAt": "2026-07-13T10:00:00.000Z",
                "kind": "every",
                "everySeconds": 86_400,
            },
        }
    ),
    DELIVERY_MARKER: _exemplar_marker,
    "session/title": _note("session/title"),
    "session/title-llm-request": _note("session/title-llm-request"),
    "subagent/descriptor": _fixed(
        {
            "version": 3,
            "mode": "continuable",
            "provider": "deepseek",
            "label": "reviewer",
            "agentProvider": "deepseek",
            "agentModel": "deepseek-reasoner",
            "persona": "A careful reviewer of parser changes.",
            "toolFilter": {"allow": ["read_file", "grep"]},
        }
    ),
    "subagent/model-selection-policy": _fixed(
        {"allowedModels": [dict(PROVIDER), {"provider": "deepseek", "model": "deepseek-reasoner"}]}
    ),
    "team/member": _fixed(
        {
            **_TEAM,
            "member": {
                "id": "member-2",
                "name": "Reviewer",
                "description": "Reviews every patch before it lands.",
                "provider": "deepseek",
                "context": "fresh",
                "phase": "active",
            },
        }
    ),
    "team/message/delivered": _fixed({**_TEAM, "messageId": "msg-7", "targetId": "member-2"}),
    "team/message/queued": _fixed(
        {
            **_TEAM,
            "message": {
                "id": "msg-7",
                "senderId": "lead",
                "senderName": "Lead",
                "targetId": "member-2",
                "delivery": "wakeup",
                "content": [text_block("Please review the parser patch.")],
            },
        }
    ),
    "team/task": _fixed(
        {
            **_TEAM,
            "task": {
                "id": "task-3",
                "revision": 2,
                "subject": "Fix the parser",
                "description": "The last token is dropped.",
                "status": "in_progress",
                "blockedBy": [],
                "writeScopes": ["src/parser.py"],
                "ownerId": "member-2",
            },
        }
    ),
    "todo/write": _note("todo/write"),
    "tool-workflow/agent-end": _fixed({"runId": "run-review", "seq": 1, "outcome": "completed"}),
    "tool-workflow/agent-start": _fixed(
        {"runId": "run-review", "seq": 1, "label": "review", "childId": "child-1", "phase": "review"}
    ),
    "tool-workflow/run-end": _fixed({"runId": "run-review", "stopReason": "completed"}),
    "tool-workflow/run-start": _fixed({"runId": "run-review", "name": "parallel-review"}),
    "tool/code-dispatch": _exemplar_dispatch(True),
    "tool/code-dispatch-start": _exemplar_dispatch(False),
    "web/deepseek-search-llm-request": _fixed(
        {
            "endpoint": "https://api.deepseek.com/anthropic/v1/messages",
            "apiVersion": "2023-06-01",
            "body": {
                "model": "deepseek-chat",
                "max_tokens": 1024,
                "messages": [{"role": "user", "content": [{"type": "text", "text": "latest CPython release"}]}],
                "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}],
            },
        }
    ),
}
"""A realistic payload of each type whose payload problems are ``PAYLOAD_INVALID``, made for the
builder's state (``None`` where the type cannot stand there), by payload generation, in one of
:data:`NOTE_VARIANTS` variants where the type has several (a title the user set, citing nothing, or
one the model made from the user's messages; a command that failed or one citing what it produced)."""
assert set(_EXEMPLARS) == set(EVENT_PAYLOADS) - set(TYPE_CODES) - TRACE_TYPES, sorted(set(_EXEMPLARS) ^ set(EVENT_PAYLOADS))


def standing_note(builder: SessionBuilder, type_: str, variant: int) -> RawEvent | None:
    """The uncommitted exemplar note of ``type_`` (any type a harness writes outside the turn and step
    protocol) in ``variant``, as the builder could write it now; ``None`` where it cannot stand."""
    return next(_standing_notes(builder, (type_,), CURRENT_GENERATION, variant), None)


HARNESS_NOTE_TYPES = tuple(sorted(_EXEMPLARS))
"""Every type :func:`standing_note` writes."""


def _faulty_payload(builder: SessionBuilder, rng: random.Random, generation: int = CURRENT_GENERATION) -> RawEvent | None:
    """A valid event the builder could write now, of a type whose payload problems are
    ``PAYLOAD_INVALID``, with one fault drawn along its shape in payload ``generation``
    (``None`` when the fault drawn is harmless)."""
    types = sorted(_EXEMPLARS)
    rng.shuffle(types)
    for event in _standing_notes(builder, types, generation, rng.randrange(NOTE_VARIANTS)):
        fault = payload_fault(payload_shape(event["type"], generation), event["data"], rng, ShapeContext(event["seq"]))
        return None if fault is None else {**event, "data": fault.value}
    return None


def _standing_notes(builder: SessionBuilder, types: Sequence[str], generation: int, variant: int) -> Iterator[RawEvent]:
    """The exemplar note of each of ``types`` (in that order), in ``variant``, that the builder could
    write now; a type with its own code (:data:`MESSAGE_EXEMPLARS`) has a current exemplar only."""
    for type_ in types:
        b = _scratch(builder)
        envelope: dict[str, Any] = {}
        if type_ in _EXEMPLARS:
            data = _EXEMPLARS[type_](b, generation, variant)
        elif generation == CURRENT_GENERATION:
            data = MESSAGE_EXEMPLARS[type_](b, variant)
            envelope = {"surfaceOp": "append"} if type_ in SURFACE_TYPES else {}
        else:
            data = None
        if data is None:
            continue
        event = b.event(type_, data, False, **envelope)
        if not isinstance(appended(builder.state, event), Violation):
            yield event


@candidate(Code.PAYLOAD_INVALID, "append")
def payload_fault_in_event(builder: SessionBuilder, rng: random.Random) -> object:
    """A note the harness could write now (a title, an approval, a retry, a compaction step, a team
    message, …) with one fault drawn along its payload shape: a member missing or unexpected, a leaf
    of another type, a number out of range, a literal spelt another way, an empty string, a bad variant."""
    fault = _faulty_payload(builder, rng)
    return None if fault is None else _refused(builder, "append", Code.PAYLOAD_INVALID, fault)


def _message_fault(type_: str) -> Build:
    """A payload of ``type_`` (a type with its own code) as the builder could write it now, with one
    fault drawn along its shape, refused with the type's code; ``None`` where the type cannot stand
    or the fault drawn is refused for another reason first (a header's unpinned model)."""

    def build(builder: SessionBuilder, rng: random.Random) -> object:
        for event in _standing_notes(builder, (type_,), CURRENT_GENERATION, rng.randrange(NOTE_VARIANTS)):
            # A few draws: a header fault may be refused with a finer code first (an unpinned model,
            # a snapshot no longer canonical), which another candidate owns.
            for _ in range(MESSAGE_FAULT_DRAWS):
                fault = payload_fault(payload_shape(type_, CURRENT_GENERATION), event["data"], rng, ShapeContext(event["seq"]))
                faulty = None if fault is None else _refused(builder, "append", TYPE_CODES[type_], {**event, "data": fault.value})
                if faulty is not None:
                    return faulty
        return None

    return build


MESSAGE_FAULT_DRAWS = 4
"""How many faults a typed payload candidate draws before it gives up on a build."""
MESSAGE_FAULTS: dict[str, str] = {}
"""The candidate of each type with its own code that breaks one member of its payload, by type."""
for _type in MESSAGE_EXEMPLARS:
    _name = _type.replace("request/", "").replace("/", "_") + "_payload_fault"
    _build = _message_fault(_type)
    _build.__name__ = _build.__qualname__ = _name
    _build.__doc__ = (
        f"A ``{_type}`` the builder could write now with one fault drawn along its payload shape (any member,"
        " nested ones included), refused with the type's own code."
    )
    candidate(TYPE_CODES[_type], "append")(_build)
    MESSAGE_FAULTS[_type] = _name


SWEPT_TYPE_NAMES = (*sorted(_EXEMPLARS), *sorted(MESSAGE_EXEMPLARS))
"""The types a payload sweep breaks: every note type, and every type with its own code (whose faults
are refused with that code, :data:`MESSAGE_FAULTS`)."""
SWEPT_SITES = 60
"""How many fault sites a payload sweep breaks (one variant of each)."""


def _site_key(event: RawEvent, site: Site, ordinal: int) -> tuple[str, str, str, int]:
    """What makes two faults the same: the type, the path with item indexes left out, the kind, and
    which of the sites of that kind at that path (a seq below zero, or the event's own)."""
    return event["type"], re.sub(r"\[\d+\]", "[]", site.path), site.kind, ordinal


def payload_fault_sweep(builder: SessionBuilder, rng: random.Random) -> list[RawEvent]:
    """One-fault variants of the events the builder could write now (every note type in every
    variant, and the types with their own codes): :data:`SWEPT_SITES` sites drawn from all of them,
    each broken in one variant that has it.

    A site is a type's member broken one way (left out, of another type, past a bound, ...).  The
    same site in each of a note's variants is one site, so one that every variant has is drawn no
    more often than one a single variant has (a generated title's model, the ``sourceEventSeq`` of
    a command's success).  Sweeps once drew all the sites of two types, or one kind of fault at
    forty of its instances; a given site of a given type came up in about one sweep in twenty, and
    a site every variant has in clusters of five, so a check a port forgot on one member of one type
    was missed in whole runs."""
    distinct = {
        json.dumps(event, sort_keys=True): event
        for variant in range(NOTE_VARIANTS)
        for event in _standing_notes(builder, SWEPT_TYPE_NAMES, CURRENT_GENERATION, variant)
    }
    faults: dict[tuple[str, str, str, int], list[RawEvent]] = {}
    for event in distinct.values():
        shape, context = payload_shape(event["type"], CURRENT_GENERATION), ShapeContext(event["seq"])
        seen: Counter[tuple[str, str]] = Counter()
        for site in fault_sites(shape, event["data"], context):
            ordinal = seen[(site.path, site.kind)]
            seen[(site.path, site.kind)] += 1
            value = apply_site(event["data"], site, rng)
            if shape_problem(shape, value, "$", context) is not None:
                faults.setdefault(_site_key(event, site, ordinal), []).append({**event, "data": value})
    keys = sorted(faults)
    return [rng.choice(faults[key]) for key in rng.sample(keys, min(SWEPT_SITES, len(keys)))]
