"""Invalid candidates of the relationships between events (``INV-REL``; the contracts are
:mod:`sessionlog_spec.contracts.relationships`): tool lifecycles (INV-REL-1..5), compactions (-6..12),
retries (-13..18), programmatic tool calls (-19..22), commands (-23..25), titles (-26..28) and delivery
markers (-29).  The relationship rules run last in the model's check order, so each of these
candidates is otherwise valid where it stands; :func:`opened_scene` builds the sessions a seed may
leave open at its end.
"""

from __future__ import annotations

import json
import random
from typing import Any

from sessionlog_spec.model.event import Event
from sessionlog_spec.model.legacy import DELIVERY_MARKER
from sessionlog_spec.model.messages import tool_call_ids
from sessionlog_spec.model.relationships import COMMAND_TYPES, TITLE_FRAME_PREFIX, TITLE_PLUGIN, human_text, title_frame
from sessionlog_spec.model.violation import Code
from sessionlog_spec.suite.agent.actions import title_request_data
from sessionlog_spec.suite.agent.builder import PROVIDER, RawEvent, SessionBuilder, basic_header, text_block
from sessionlog_spec.suite.agent.candidates.base import (
    STORED_HEADER,
    Registry,
    _advertised,
    _asked_call,
    _benign,
    _close_turn,
    _compaction_open,
    _data,
    _enter_step,
    _enter_turn,
    _leave_turn,
    _legal_range,
    _open_step,
    _open_turn,
    _put,
    _scratch,
    _seed_with,
    _shadowed_seqs,
    _started_call,
    _stored_with,
    edge_int,
)
from sessionlog_spec.suite.agent.candidates.trace import _answered_in_step

REGISTERED = Registry()
"""This module's mutations, in the order their builders are defined below."""
candidate = REGISTERED.candidate


# -- tool lifecycles (INV-REL-1..5) ----------------------------------------------------------------


def _misrecorded(call: RawEvent, rng: random.Random) -> RawEvent:
    """A ``tool/call`` that names its call but not as the model asked for it: another tool, or the
    arguments re-serialised (or dropped) by the harness."""
    data = call["data"]
    name, arguments = data["name"], data["arguments"]
    variants: list[tuple[str, str]] = [(other, arguments) for other in ("write_file", "bash", "read_file") if other != name]
    try:
        parsed = json.loads(arguments)
    except ValueError:
        parsed = None
    if parsed is not None:
        for text in (json.dumps(parsed, separators=(",", ":")), json.dumps(parsed, indent=2), "{}"):
            if text != arguments:
                variants.append((name, text))
    data["name"], data["arguments"] = rng.choice(variants)
    return call


@candidate(Code.TOOL_CALL_NOT_ADVERTISED, "append")
def tool_call_not_as_advertised(builder: SessionBuilder, rng: random.Random) -> object:
    """The ``tool/call`` of a call the open step asked for, naming another tool or carrying the
    arguments re-serialised: the log would record running something the model did not ask for."""
    b = _scratch(builder)
    unstarted = _advertised(b, started=False)
    if _open_step(b) is None or not unstarted:
        return None
    return _misrecorded(b.tool_call(rng.choice(unstarted), commit=False), rng)


@candidate(Code.TOOL_CALL_NOT_ADVERTISED, "append")
def tool_call_recorded_again(builder: SessionBuilder, rng: random.Random) -> object:
    """A second ``tool/call`` for a call that already started (a retried write), or for one this step
    already answered."""
    b = _scratch(builder)
    if _open_step(b) is None:
        return None
    calls = sorted(set(_advertised(b, started=True)) | set(_answered_in_step(b)))
    return b.tool_call(rng.choice(calls), commit=False) if calls else None


@candidate(Code.TOOL_CALL_NOT_ADVERTISED, "seed")
def seed_tool_call_not_as_advertised(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed whose last step asks for a call and records starting it under another name or arguments."""
    b = _scratch(builder)
    call = _asked_call(b)
    return None if call is None else _seed_with(b, _misrecorded(b.tool_call(call, commit=False), rng))


@candidate(Code.TOOL_CALL_ID_REPEATED, "append")
def assistant_repeats_pending_call(builder: SessionBuilder, rng: random.Random) -> object:
    """An assistant message (the answer to a re-sent request) asking again for a call id still pending
    in the step, alone or beside a new call."""
    b = _scratch(builder)
    pending = _advertised(b)
    if _open_step(b) is None or not pending:
        return None
    repeated = rng.choice(pending)
    calls = rng.choice(((repeated,), (f"call-{b.next_seq}", repeated)))
    return b.assistant_message("Reading the file again.", calls, commit=False)


@candidate(Code.TOOL_CALL_ID_REPEATED, "seed")
def seed_assistant_repeats_pending_call(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed whose last step asks for a call (maybe starts it) and then asks for the same id again."""
    b = _scratch(builder)
    call = _asked_call(b)
    if call is None or (rng.random() < 0.5 and not _put(b, b.tool_call(call, commit=False))):
        return None
    return _seed_with(b, b.assistant_message("Reading the file again.", [call], commit=False))


def _unadvertised_repair(b: SessionBuilder, rng: random.Random) -> RawEvent | None:
    """A crash-repair result in the open step for a call it does not leave pending: one it answered,
    one an earlier step asked for, or one nobody asked for (``None`` without a pending call, where
    the tool-pairing balance refuses first)."""
    if _open_step(b) is None or b.state.pending_calls == 0:
        return None
    pending = set(_advertised(b))
    earlier = [c for e in b.state.events for c in tool_call_ids(e) if c not in pending]
    return b.not_started_result(rng.choice([*earlier[-3:], "call-never-asked"]), commit=False)


@candidate(Code.TOOL_RESULT_UNADVERTISED, "append")
def repair_result_for_unadvertised_call(builder: SessionBuilder, rng: random.Random) -> object:
    """The "never started" repair result written for a call the open step does not leave pending."""
    return _unadvertised_repair(_scratch(builder), rng)


@candidate(Code.TOOL_RESULT_UNADVERTISED, "seed")
def seed_repair_result_for_unadvertised_call(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed whose last step asks for a call, then holds a repair result for another call."""
    b = _scratch(builder)
    if _asked_call(b) is None:
        return None
    fault = _unadvertised_repair(b, rng)
    return None if fault is None else _seed_with(b, fault)


def _inexact_repair(b: SessionBuilder, call: str, rng: random.Random) -> RawEvent:
    """A result for ``call`` (asked for, never started) that looks like crash repair's but is not it."""
    event = b.not_started_result(call, commit=False)
    data = event["data"]
    block = data["message"]["content"][0]
    how = rng.choice(("id", "text", "is-error", "error-name", "sources"))
    if how == "id":
        data["message"]["id"] = f"interrupted-tool-result-{call}"
    elif how == "text":
        block["content"] = [text_block("Tool execution was interrupted.")]
    elif how == "is-error":
        block["isError"] = False
    elif how == "error-name":
        data["error"]["name"] = "ToolInterruptedError"
    else:
        asked = [e.seq for e in b.state.events if call in tool_call_ids(e)]
        event["sourceEventSeqs"] = asked[-1:] or [b.next_seq - 1]
    return event


@candidate(Code.TOOL_RESULT_NOT_EXACT_REPAIR, "append")
def inexact_repair_result(builder: SessionBuilder, rng: random.Random) -> object:
    """A result for a call asked for but never started that is not the exact repair record (another
    message id, text, flag or error name, or citing the request)."""
    b = _scratch(builder)
    unstarted = _advertised(b, started=False)
    if _open_step(b) is None or not unstarted:
        return None
    return _inexact_repair(b, rng.choice(unstarted), rng)


@candidate(Code.TOOL_RESULT_NOT_EXACT_REPAIR, "seed")
def seed_inexact_repair_result(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed whose last step asks for a call and answers it, unstarted, with an inexact repair record."""
    b = _scratch(builder)
    call = _asked_call(b)
    return None if call is None else _seed_with(b, _inexact_repair(b, call, rng))


@candidate(Code.TOOL_CALL_UNRESOLVED, "append")
def step_end_with_call_unanswered(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``step/end`` while a call the step asked for is unanswered (the harness moved on after a tool hung)."""
    b = _scratch(builder)
    return b.step_end(commit=False) if _open_step(b) is not None and _advertised(b) else None


@candidate(Code.TOOL_CALL_UNRESOLVED, "seed")
def seed_step_end_with_call_unanswered(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed whose last step asks for a call (maybe starts it) and ends without its result."""
    b = _scratch(builder)
    call = _asked_call(b)
    if call is None or (rng.random() < 0.5 and not _put(b, b.tool_call(call, commit=False))):
        return None
    return _seed_with(b, b.step_end(commit=False))


# -- compactions (INV-REL-6..12) -------------------------------------------------------------------


def _compaction_opened(b: SessionBuilder, rng: random.Random, command: bool = False) -> bool:
    """On the scratch builder ``b``: open a compaction (started by a ``/compact`` command when
    ``command``) unless one is open; ``False`` when one is open with a turn boundary held against it."""
    open_ = b.state.relations.compaction
    if open_ is not None:
        return open_.crossed_at is None
    return _earlier_compaction(b, rng.choice(EARLIER_COMPACTIONS), rng.random() < 0.5) and _compaction_started(b, command)


def _compaction_started(b: SessionBuilder, command: bool) -> bool:
    """On the scratch builder ``b``: start a compaction, by a ``/compact`` command when ``command``."""
    command_id = None
    if command:
        command_id = f"cmd-{b.next_seq}"
        if not _put(b, b.event("command/run", {"commandId": command_id, "name": "compact", "source": {"kind": "user"}}, False)):
            return False
    return _put(b, b.compaction_start(command_id, commit=False))


EARLIER_COMPACTIONS = ("none", "none", "summarised", "failed", "summary-failed")
"""What the scene holds before the compaction a candidate faults: nothing, or a whole earlier
compaction (a success, a failure, a failure after its summary), so that no rule's state may leak
from one compaction into the next."""


def _earlier_compaction(b: SessionBuilder, kind: str, command: bool) -> bool:
    """On the scratch builder ``b``: a whole compaction of ``kind`` (``none`` adds nothing); ``False``
    when the scene cannot hold it."""
    if kind == "none":
        return True
    if not _compaction_started(b, command):
        return False
    if kind != "failed" and not (_summarisable(b) and _put(b, b.compaction_summary(*b.legal_ranges()[-1], commit=False))):
        return False
    return _put(b, b.compaction_end(None if kind == "summarised" else "the summary request failed", commit=False))


def _summarisable(b: SessionBuilder) -> bool:
    """Give the scratch builder ``b`` a surface a summary can cover (a user message when it has none)."""
    return bool(b.legal_ranges()) or (_put(b, b.user_message("Keep going.", commit=False)) and bool(b.legal_ranges()))


COMPACTION_STAGES = ("started", "summarised", "checkpointed")
"""How far the open compaction has got when a rule about it is put to the test: a lock or an owner
check a port drops after the summary or the checkpoint holds at every stage until the end."""


def _compaction_at(b: SessionBuilder, stage: str) -> bool:
    """On the scratch builder ``b``, whose compaction is open: take it on to ``stage``
    (:data:`COMPACTION_STAGES`); ``False`` when it is past it or the scene cannot hold it."""
    open_ = b.open_compaction()
    if open_ is None or (open_.summarized and stage == "started"):
        return False
    summarised = stage == "started" or open_.summarized
    if not (summarised or (_summarisable(b) and _put(b, b.compaction_summary(*b.legal_ranges()[-1], commit=False)))):
        return False
    if stage == "checkpointed":
        ranges = b.legal_ranges()
        return bool(ranges) and _put(b, _checkpoint(b, *ranges[-1]))
    return True


@candidate(Code.COMPACTION_OVERLAP, "append")
def second_compaction_start(builder: SessionBuilder, rng: random.Random) -> object:
    """A second compaction started (a repeated ``/compact``) while the session's compaction runs,
    whether or not it has its summary yet."""
    b = _scratch(builder)
    open_ = b.state.relations.compaction
    return b.compaction_start(commit=False) if open_ is not None and open_.crossed_at is None else None


@candidate(Code.COMPACTION_OVERLAP, "seed")
def seed_second_compaction_start(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a second compaction starts (a repeated ``/compact``) while the first still
    runs: just started, summarised, or checkpointed."""
    stage = rng.choice(COMPACTION_STAGES)
    b = _scratch(builder)
    if not _compaction_opened(b, rng, command=rng.random() < 0.5) or not _compaction_at(b, stage):
        return None
    return _seed_with(b, b.compaction_start(commit=False))


@candidate(Code.COMPACTION_OVERLAP, "load")
def jsonl_second_compaction_start(builder: SessionBuilder, rng: random.Random) -> object:
    """A stored log in which a second compaction starts while the first still runs (at any stage)."""
    stage = rng.choice(COMPACTION_STAGES)
    b = _scratch(builder)
    if not _compaction_opened(b, rng) or not _compaction_at(b, stage):
        return None
    return _stored_with(b, b.compaction_start(commit=False))


@candidate(Code.COMPACTION_TURN_MISMATCH, "append")
def compaction_start_wrong_owner(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``compaction/start`` owned by the wrong turn: ``null`` (or the next turn) inside a turn, the
    turn that just ended (or the next one) between turns."""
    b = _scratch(builder)
    if _compaction_open(b):
        return None
    trace = b.state.trace
    owners: list[int | None]
    if trace.open_turn is not None:
        owners = [None, trace.open_turn + 1, *([trace.open_turn - 1] if trace.open_turn > 1 else [])]
    else:
        owners = [trace.last_turn + 1, *([trace.last_turn] if trace.last_turn >= 1 else [])]
    return b.event("compaction/start", {"compactionId": f"compaction-{b.next_seq}", "turn": rng.choice(owners)}, False)


@candidate(Code.COMPACTION_TURN_MISMATCH, "seed")
def seed_compaction_end_other_turn(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a compaction ends naming another turn than the one that owns it."""
    b = _scratch(builder)
    if b.state.relations.compaction is not None or not _compaction_opened(b, rng):
        return None
    end = b.compaction_end("The summary request failed." if rng.random() < 0.5 else None, commit=False)
    owner, trace = end["data"]["turn"], b.state.trace
    end["data"]["turn"] = trace.last_turn + 1 if owner is None else rng.choice((None, owner + 1))
    return _seed_with(b, end)


@candidate(Code.COMPACTION_NOT_OWNED, "append")
def compaction_end_without_start(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``compaction/end`` when no compaction is open: written twice, or for a compaction never started."""
    b = _scratch(builder)
    if _compaction_open(b):
        return None
    started = [str(_data(e)["compactionId"]) for e in b.state.events if e.type == "compaction/start"]
    compaction = rng.choice([*started[-1:], f"compaction-{max(b.next_seq - 3, 0)}"])
    return b.event("compaction/end", {"compactionId": compaction, "turn": b.state.trace.open_turn}, False)


@candidate(Code.COMPACTION_NOT_OWNED, "append")
def checkpoint_without_compaction(builder: SessionBuilder, rng: random.Random) -> object:
    """A compaction checkpoint (a replacement from the ``compact`` plugin) over a legal range while no
    compaction is open."""
    b = _scratch(builder)
    picked = _legal_range(b, rng)
    if picked is None or _compaction_open(b):
        return None
    event = b.compaction(*picked, commit=False)
    event["data"]["source"] = {"kind": "plugin", "plugin": "compact", "compactionId": f"compaction-{b.next_seq}"}
    return event


def _checkpoint(b: SessionBuilder, start: int, end: int) -> RawEvent:
    """The open compaction's checkpoint: its summary replacing ``start..end``, from the ``compact``
    plugin, naming the compaction (and the command that started it)."""
    open_ = b.open_compaction()
    assert open_ is not None, "a checkpoint belongs to an open compaction"
    event = b.compaction(start, end, commit=False)
    source: RawEvent = {"kind": "plugin", "plugin": "compact", "compactionId": open_.compaction_id}
    if open_.source_command_id is not None:
        source["sourceCommandId"] = open_.source_command_id
    event["data"]["source"] = source
    return event


MISOWNINGS = ("another compaction", "the command left out", "another command")
"""How a compaction step names another compaction than the open one (without a command, the
command's two become one: a command the compaction was not started by)."""


def _misowned(names: RawEvent, b: SessionBuilder, how: str) -> None:
    """Make ``names`` (the members naming a compaction) name another one than the open one as ``how``
    (:data:`MISOWNINGS`): another ``compactionId``, or the ``sourceCommandId`` dropped, added or changed."""
    if how == "another compaction":
        names["compactionId"] = f"compaction-{b.next_seq}"
    elif how == "the command left out" and "sourceCommandId" in names:
        del names["sourceCommandId"]
    else:
        names["sourceCommandId"] = f"cmd-{b.next_seq}"


def _step_of_another(b: SessionBuilder, step: str, how: str) -> RawEvent | None:
    """On the scratch builder ``b``, whose compaction is open: its ``step`` (``summary``,
    ``checkpoint`` or ``end``; summarised first when the step needs it) naming another compaction
    as ``how`` (:data:`MISOWNINGS`); ``None`` when the surface leaves nothing to summarise."""
    open_ = b.state.relations.compaction
    assert open_ is not None, "a compaction step belongs to an open compaction"
    if step != "summary" and not open_.summarized:
        ranges = b.legal_ranges()
        if not ranges or not _put(b, b.compaction_summary(*ranges[-1], commit=False)):
            return None
    if step == "end":
        fault = b.compaction_end(commit=False)
        names = fault["data"]
    else:
        ranges = b.legal_ranges()
        if not ranges:
            return None
        if step == "summary":
            fault = b.compaction_summary(*ranges[-1], commit=False)
            names = fault["data"]
        else:
            fault = _checkpoint(b, *ranges[-1])
            names = fault["data"]["source"]
    _misowned(names, b, how)
    return fault


@candidate(Code.COMPACTION_NOT_OWNED, "seed")
def seed_compaction_step_of_another(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which the open compaction's summary, checkpoint or end names another compaction
    (another id, or not the command that started it, or a command that did not).

    What the fault is (which step, which way, started by a command or not) is drawn before the
    scene, so that the variant walk (:mod:`~sessionlog_spec.suite.agent.variants`) combines those
    choices first."""
    step = rng.choice(("summary", "checkpoint", "end"))
    how = rng.choice(MISOWNINGS)
    command = rng.random() < 0.5
    b = _scratch(builder)
    if _compaction_open(b) or not _summarisable(b) or not _compaction_opened(b, rng, command):
        return None
    fault = _step_of_another(b, step, how)
    return None if fault is None else _seed_with(b, fault)


@candidate(Code.COMPACTION_NOT_OWNED, "append")
def compaction_step_of_another(builder: SessionBuilder, rng: random.Random) -> object:
    """The session's open compaction's next step (its summary, else a checkpoint or its end) naming
    another compaction: another id, or not the command that started it, or a command that did not."""
    how = rng.choice(MISOWNINGS)
    b = _scratch(builder)
    open_ = b.state.relations.compaction
    if open_ is None or open_.crossed_at is not None:
        return None
    step = "summary"
    if open_.summarized:
        step = "checkpoint" if b.legal_ranges() and rng.random() < 0.5 else "end"
    return _step_of_another(b, step, how)


@candidate(Code.COMPACTION_SUMMARY_REPEATED, "append")
def second_summary(builder: SessionBuilder, rng: random.Random) -> object:
    """The open compaction, summarised already, summarised again (a retried summary request logged twice)."""
    b = _scratch(builder)
    open_ = b.open_compaction()
    ranges = b.legal_ranges() if open_ is not None and open_.summarized else ()
    return b.compaction_summary(*rng.choice(ranges), commit=False) if ranges else None


@candidate(Code.COMPACTION_SUMMARY_REPEATED, "seed")
def seed_second_summary(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which the open compaction is summarised twice (a retried summary request logged again)."""
    b = _scratch(builder)
    if _compaction_open(b) or not _summarisable(b) or not _compaction_opened(b, rng):
        return None
    if not _put(b, b.compaction_summary(*rng.choice(b.legal_ranges()), commit=False)):
        return None
    return _seed_with(b, b.compaction_summary(*rng.choice(b.legal_ranges()), commit=False))


@candidate(Code.COMPACTION_SUMMARY_MISSING, "seed")
def seed_compaction_end_without_summary(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a compaction ends as a success without having been summarised."""
    b = _scratch(builder)
    open_ = b.open_compaction()
    if (open_ is not None and open_.summarized) or not _compaction_opened(b, rng, command=rng.random() < 0.5):
        return None
    return _seed_with(b, b.compaction_end(commit=False))


@candidate(Code.COMPACTION_SUMMARY_MISSING, "load")
def jsonl_compaction_end_without_summary(builder: SessionBuilder, rng: random.Random) -> object:
    """A stored log in which a compaction ends as a success without having been summarised."""
    b = _scratch(builder)
    if _compaction_open(b) or not _compaction_opened(b, rng):
        return None
    return _stored_with(b, b.compaction_end(commit=False))


def _crossed(b: SessionBuilder, rng: random.Random) -> bool:
    """On the scratch builder ``b``: open a compaction and cross it with a turn boundary (between
    turns: a ``turn/start``; in a turn: the turn's end)."""
    if _compaction_open(b) or not _compaction_opened(b, rng):
        return False
    if b.state.trace.open_turn is None:
        return _put(b, b.turn_start(commit=False))
    return _close_turn(b)


@candidate(Code.COMPACTION_CROSSES_TURN, "seed")
def seed_compaction_across_turn(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a compaction runs across a turn boundary and then ends."""
    b = _scratch(builder)
    if not _crossed(b, rng):
        return None
    return _seed_with(b, b.compaction_end(rng.choice((None, "Cancelled when the turn changed.")), commit=False))


@candidate(Code.COMPACTION_CROSSES_TURN, "load")
def jsonl_compaction_across_turn(builder: SessionBuilder, rng: random.Random) -> object:
    """A stored log that ends with a compaction still open across a turn boundary (no end-seed retired it)."""
    b = _scratch(builder)
    return _stored_with(b) if _crossed(b, rng) else None


def _span(b: SessionBuilder, rng: random.Random) -> list[int] | None:
    """Seqs that are no exact span of the current surface: a span with a node left out, a node a
    replacement already shadowed, or a log-only event counted in."""
    nodes = list(b.state.surface.nodes)
    spans: list[list[int]] = []
    if len(nodes) >= 3:
        i = rng.randrange(len(nodes) - 2)
        spans.append([nodes[i], nodes[rng.randrange(i + 2, len(nodes))]])
    shadowed = _shadowed_seqs(b)
    if shadowed:
        spans.append([rng.choice(shadowed)])
    log_only = [(i, s) for i in range(len(nodes) - 1) for s in range(nodes[i] + 1, nodes[i + 1]) if s not in nodes]
    if log_only:
        i, s = rng.choice(log_only)
        spans.append([nodes[i], s, nodes[i + 1]])
    return rng.choice(spans) if spans else None


def _span_members(seqs: list[int]) -> dict[str, Any]:
    return {"shadowedRange": {"start": seqs[0], "end": seqs[-1]}, "shadowedSeqs": seqs, "shadowedTokenCount": 40 * len(seqs)}


@candidate(Code.COMPACTION_SPAN_NOT_ON_SURFACE, "append")
def prune_span_off_surface(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``compaction/prune`` planned on a stale or miscounted view: its seqs leave out a node, name one
    already shadowed, or count a log-only event in."""
    b = _scratch(builder)
    seqs = _span(b, rng)
    return None if seqs is None else b.event("compaction/prune", _span_members(seqs), False)


@candidate(Code.COMPACTION_SPAN_NOT_ON_SURFACE, "seed")
def seed_summary_span_off_surface(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which the open compaction's summary prices seqs that are no exact span of the surface."""
    b = _scratch(builder)
    if _compaction_open(b) or not _compaction_opened(b, rng):
        return None
    seqs = _span(b, rng)
    nodes = b.state.surface.nodes
    if seqs is None or not nodes:
        return None
    summary = b.compaction_summary(nodes[0], nodes[0], commit=False)
    summary["data"].update(_span_members(seqs))
    return _seed_with(b, summary)


# -- retries (INV-REL-13..18) ----------------------------------------------------------------------


def _retry_data(
    turn: int, step: int, provider: str, *, attempt: int = 1, retry_id: str = "retry-1", policy: str = "transient"
) -> RawEvent:
    """An ``llm/retry`` payload: the ``attempt`` of the ``policy`` chain ``retry_id`` after an overloaded provider."""
    mode = "normal" if attempt <= 5 else "always"
    data: RawEvent = {"retryId": retry_id, "turn": turn, "step": step, "provider": provider, "mode": mode, "policyKey": policy}
    data["retry"] = attempt
    if mode == "normal":
        data["maxRetries"] = 5
    data.update(
        delayMs=min(500 * 2 ** (attempt - 1), 60_000),
        failure={"message": "The server is overloaded.", "code": "PROVIDER_OVERLOADED", "status": 503},
    )
    return data


def _retry_step(b: SessionBuilder) -> int:
    """The step a retry names now: the open one, else the one that ended last in the open turn."""
    trace = b.state.trace
    return trace.open_step if trace.open_step is not None else b.state.relations.ended_steps


@candidate(Code.RETRY_OUTSIDE_STEP, "append")
def retry_outside_step(builder: SessionBuilder, rng: random.Random) -> object:
    """An ``llm/retry`` logged after its turn ended, or naming a step (or turn) that is not the current one."""
    b = _scratch(builder)
    trace = b.state.trace
    provider = b.request_provider() or PROVIDER["provider"]
    if trace.open_turn is None:
        turn, step = max(trace.last_turn, 1), max(trace.last_step, 1)
    elif rng.random() < 0.5:
        turn, step = trace.open_turn, _retry_step(b) + 1
    else:
        turn, step = trace.open_turn + 1, 1
    return b.event("llm/retry", _retry_data(turn, step, provider, retry_id=f"retry-{b.next_seq}"), False)


@candidate(Code.RETRY_PROVIDER_MISMATCH, "append")
def retry_other_provider(builder: SessionBuilder, rng: random.Random) -> object:
    """An ``llm/retry`` of the current step naming a provider the latest request header does not use
    (the harness fell back to another provider without logging its header)."""
    b = _scratch(builder)
    turn = _open_turn(b)
    if turn is None:
        return None
    current = b.request_provider()
    provider = rng.choice([p for p in ("openai", "deepseek", "anthropic") if p != current])
    return b.event("llm/retry", _retry_data(turn, _retry_step(b), provider, retry_id=f"retry-{b.next_seq}"), False)


def _chain_head(b: SessionBuilder, turn: int, step: int, provider: str, policy: str) -> tuple[str, int] | None:
    """The retry id and latest attempt of a policy chain, when the log has one."""
    for event in reversed(b.state.events):
        if event.type == "llm/retry":
            data = _data(event)
            chain = (data.get("turn"), data.get("step"), data.get("provider"), data.get("policyKey"))
            if chain == (turn, step, provider, policy):
                return str(data["retryId"]), int(data["retry"])
    return None


@candidate(Code.RETRY_PROVIDER_MISMATCH, "seed")
def seed_retry_names_previous_provider(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed whose step switches provider with a new request header, then retries naming the provider
    of the header before it."""
    b = _scratch(builder)
    if not _enter_step(b):
        return None
    before = b.request_provider()
    after = "openai" if before != "openai" else "deepseek"
    header = {**basic_header(), "config": {"provider": after, "model": "gpt-5" if after == "openai" else "deepseek-chat"}}
    if before is None or not _put(b, b.request_header(header, "change", commit=False)):
        return None
    turn = b.state.trace.open_turn
    assert turn is not None
    return _seed_with(b, b.event("llm/retry", _retry_data(turn, _retry_step(b), before, retry_id=f"retry-{b.next_seq}"), False))


@candidate(Code.RETRY_NUMBER_INVALID, "append")
def retry_skips_attempt(builder: SessionBuilder, rng: random.Random) -> object:
    """An ``llm/retry`` that skips an attempt of its policy chain (the first one logged as attempt 2),
    or repeats the latest one."""
    b = _scratch(builder)
    turn, provider = _open_turn(b), b.request_provider()
    if turn is None or provider is None:
        return None
    step, policy = _retry_step(b), rng.choice(("transient", "rate-limit"))
    head = _chain_head(b, turn, step, provider, policy)
    retry_id, last = head or (f"retry-{b.next_seq}", 0)
    attempt = rng.choice([last + 2] + ([last] if last else []))
    return b.event("llm/retry", _retry_data(turn, step, provider, attempt=attempt, retry_id=retry_id, policy=policy), False)


@candidate(Code.RETRY_NUMBER_INVALID, "seed")
def seed_retry_skips_attempt(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed whose step retries its request, then logs attempt 3 (the second attempt's record was lost)
    or attempt 1 again."""
    b = _scratch(builder)
    if not _enter_step(b) or not _put(b, b.retry("transient", commit=False)):
        return None
    turn, step, provider = b.state.trace.open_turn, _retry_step(b), b.request_provider()
    assert turn is not None and provider is not None
    retry_id, last = _chain_head(b, turn, step, provider, "transient") or ("", 0)
    attempt = rng.choice((last + 2, last))
    return _seed_with(b, b.event("llm/retry", _retry_data(turn, step, provider, attempt=attempt, retry_id=retry_id), False))


@candidate(Code.RETRY_ID_INVALID, "seed")
def seed_retry_chain_changes_id(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed whose step retries its request, then logs the next attempt under a new retry id, or opens
    another policy chain under the first chain's id."""
    b = _scratch(builder)
    if not _enter_step(b) or not _put(b, b.retry("transient", commit=False)):
        return None
    turn, step, provider = b.state.trace.open_turn, _retry_step(b), b.request_provider()
    assert turn is not None and provider is not None
    retry_id, last = _chain_head(b, turn, step, provider, "transient") or ("", 0)
    fresh = [p for p in ("rate-limit", "overloaded") if _chain_head(b, turn, step, provider, p) is None]
    if not fresh or rng.random() < 0.5:
        data = _retry_data(turn, step, provider, attempt=last + 1, retry_id=f"retry-{b.next_seq}")
    else:
        data = _retry_data(turn, step, provider, retry_id=retry_id, policy=rng.choice(fresh))
    return _seed_with(b, b.event("llm/retry", data, False))


@candidate(Code.RETRY_START_UNPAIRED, "append")
def retry_started_unscheduled(builder: SessionBuilder, rng: random.Random) -> object:
    """An ``llm/retry-started`` for an attempt no ``llm/retry`` scheduled (its schedule was never logged)."""
    b = _scratch(builder)
    trace = b.state.trace
    turn, step = (trace.last_turn, trace.last_step) if trace.open_turn is None else (trace.open_turn, _retry_step(b))
    data = {"retryId": f"retry-{b.next_seq}", "turn": turn, "step": step, "retry": rng.choice((1, 2))}
    return b.event("llm/retry-started", data, False)


def _start_of(retry: RawEvent) -> dict[str, Any]:
    """The ``llm/retry-started`` payload that starts the attempt ``retry`` scheduled."""
    return {k: retry["data"][k] for k in ("retryId", "turn", "step", "retry")}


def _scheduled_retry(b: SessionBuilder) -> RawEvent | None:
    """On the scratch builder ``b``: open a step and schedule a retry of its request; the retry."""
    if not _enter_step(b):
        return None
    retry = b.retry(commit=False)
    return retry if _put(b, retry) else None


@candidate(Code.RETRY_START_UNPAIRED, "seed")
def seed_retry_started_before_scheduled(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed whose step schedules a retry, then starts the attempt after it (not scheduled yet), or the
    scheduled attempt under another retry id."""
    b = _scratch(builder)
    retry = _scheduled_retry(b)
    if retry is None:
        return None
    data = _start_of(retry)
    if rng.random() < 0.5:
        data["retry"] += 1
    else:
        data["retryId"] = f"retry-{b.next_seq}"
    return _seed_with(b, b.event("llm/retry-started", data, False))


@candidate(Code.RETRY_START_MISMATCH, "seed")
def seed_retry_started_other_step(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a scheduled retry's start names the next step (the one that re-sent the request)
    or another turn."""
    b = _scratch(builder)
    retry = _scheduled_retry(b)
    if retry is None:
        return None
    data = _start_of(retry)
    where = rng.choice(("step", "turn"))
    data[where] += 1
    return _seed_with(b, b.event("llm/retry-started", data, False))


@candidate(Code.RETRY_START_REPEATED, "seed")
def seed_retry_started_twice(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which one scheduled retry attempt is logged as started twice."""
    b = _scratch(builder)
    retry = _scheduled_retry(b)
    if retry is None:
        return None
    data = _start_of(retry)
    if not _put(b, b.event("llm/retry-started", data, False)):
        return None
    return _seed_with(b, b.event("llm/retry-started", dict(data), False))


# -- programmatic tool calls (INV-REL-19..22) ------------------------------------------------------


def _dispatch(b: SessionBuilder, root: str, parent: str, sub: str, settle: bool, **changes: Any) -> RawEvent:
    """A PTC dispatch start (or settlement, with its output) of ``sub`` under ``parent`` in the tree of ``root``."""
    data: RawEvent = {"rootCallId": root, "parentCallId": parent, "subCallId": sub, "name": "read_file"}
    data["arguments"] = {"path": "src/parser.py", "lines": [1, 40]}
    data.update(changes)
    if settle:
        data.update(isError=False, content=[text_block("def parse(tokens): ...")])
    return b.event("tool/code-dispatch" if settle else "tool/code-dispatch-start", data, False)


def _ptc_root(b: SessionBuilder) -> str:
    """The tool call a dispatch runs under: one started in the open step, else the latest recorded one."""
    started = sorted(b.state.trace.step_calls)
    if started:
        return started[0]
    recorded = [str(_data(e)["callId"]) for e in b.state.events if e.type == "tool/call"]
    return recorded[-1] if recorded else "call-1"


@candidate(Code.PTC_OUTSIDE_TURN, "append")
def dispatch_outside_turn(builder: SessionBuilder, rng: random.Random) -> object:
    """A PTC dispatch (or its settlement) logged after its turn ended."""
    b = _scratch(builder)
    if _open_turn(b) is not None:
        return None
    root = _ptc_root(b)
    return _dispatch(b, root, root, f"sub-{b.next_seq}", rng.random() < 0.5)


@candidate(Code.PTC_OUTSIDE_TURN, "seed")
def seed_dispatch_after_turn(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed whose turn ends and is followed by a late PTC dispatch of its tool call."""
    b = _scratch(builder)
    if not _leave_turn(b):
        return None
    root = _ptc_root(b)
    return _seed_with(b, _dispatch(b, root, root, f"sub-{b.next_seq}", rng.random() < 0.5))


@candidate(Code.PTC_ANCESTRY_INVALID, "append")
def dispatch_unknown_parent(builder: SessionBuilder, rng: random.Random) -> object:
    """A PTC dispatch in an open turn whose parent is neither its root nor a sub-call seen under it."""
    b = _scratch(builder)
    if _open_turn(b) is None:
        return None
    root = _ptc_root(b)
    return _dispatch(b, root, f"sub-{rng.randrange(1, 9)}-of-{root}", f"sub-{b.next_seq}", rng.random() < 0.3)


@candidate(Code.PTC_ANCESTRY_INVALID, "seed")
def seed_dispatch_parent_under_other_root(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a sub-call is dispatched under one root call and a later dispatch under a
    sibling root names it as parent (a code runner that shares its sub-call ids across calls)."""
    b = _scratch(builder)
    started = _ptc_started(b)
    if started is None:
        return None
    call, sub = started
    if rng.random() < 0.5 and not _put(b, _dispatch(b, call, call, sub, True)):
        return None
    sibling = rng.choice((f"{call}-b", "call-1" if call != "call-1" else "call-2"))
    if rng.random() < 0.5 and not _put(b, _dispatch(b, sibling, sibling, f"sub-{b.next_seq}", False)):
        return None
    return _seed_with(b, _dispatch(b, sibling, sub, f"sub-{b.next_seq}", False))


@candidate(Code.PTC_ANCESTRY_INVALID, "seed")
def seed_dispatch_moves_root(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a started sub-call is dispatched again under another root call."""
    b = _scratch(builder)
    started = _ptc_started(b)
    if started is None:
        return None
    call, sub = started
    other = f"{call}-retry"
    return _seed_with(b, _dispatch(b, other, other, sub, rng.random() < 0.5))


def _ptc_started(b: SessionBuilder) -> tuple[str, str] | None:
    """On the scratch builder ``b``: a started tool call with one dispatched sub-call; (root, sub)."""
    call = _started_call(b)
    if call is None:
        return None
    sub = f"sub-{b.next_seq}"
    return (call, sub) if _put(b, _dispatch(b, call, call, sub, False)) else None


@candidate(Code.PTC_START_REPEATED, "seed")
def seed_dispatch_started_twice(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a PTC sub-call is started a second time (before or after it settled)."""
    b = _scratch(builder)
    started = _ptc_started(b)
    if started is None:
        return None
    root, sub = started
    if rng.random() < 0.5 and not _put(b, _dispatch(b, root, root, sub, True)):
        return None
    return _seed_with(b, _dispatch(b, root, root, sub, False))


@candidate(Code.PTC_SETTLE_UNPAIRED, "append")
def dispatch_settled_unstarted(builder: SessionBuilder, rng: random.Random) -> object:
    """A PTC settlement in an open turn for a sub-call whose start was never logged."""
    b = _scratch(builder)
    if _open_turn(b) is None:
        return None
    root = _ptc_root(b)
    return _dispatch(b, root, root, f"sub-{b.next_seq}", True)


@candidate(Code.PTC_SETTLE_UNPAIRED, "seed")
def seed_dispatch_settled_twice(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a PTC sub-call settles twice (a retried write of its settlement)."""
    b = _scratch(builder)
    started = _ptc_started(b)
    if started is None:
        return None
    root, sub = started
    if not _put(b, _dispatch(b, root, root, sub, True)):
        return None
    return _seed_with(b, _dispatch(b, root, root, sub, True))


@candidate(Code.PTC_SETTLE_MISMATCH, "seed")
def seed_dispatch_settles_other_call(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a PTC sub-call settles as another call than it started: another tool, or other
    arguments (another file; ``1.5``, ``true`` or ``"1"`` for ``1``; one more item)."""
    b = _scratch(builder)
    started = _ptc_started(b)
    if started is None:
        return None
    root, sub = started
    change = rng.choice(
        (
            {"name": "grep"},
            {"arguments": {"path": "src/parser.py", "lines": [1.5, 40]}},
            {"arguments": {"path": "src/parser.py", "lines": [True, 40]}},
            {"arguments": {"path": "src/parser.py", "lines": ["1", 40]}},
            {"arguments": {"path": "src/parser.py", "lines": [1, 40, None]}},
            {"arguments": {"path": "src/lexer.py", "lines": [1, 40]}},
        )
    )
    return _seed_with(b, _dispatch(b, root, root, sub, True, **change))


# -- commands (INV-REL-23..25) ---------------------------------------------------------------------


def _command_run_data(command: str) -> RawEvent:
    """A ``/compact`` command the user ran."""
    return {"commandId": command, "name": "compact", "source": {"kind": "user"}, "args": "--keep 2"}


def _commands_ran(b: SessionBuilder) -> list[str]:
    """The ids of the commands the session ran, in order."""
    return [str(_data(e)["commandId"]) for e in b.state.events if e.type == "command/run"]


def _command_run(b: SessionBuilder, command: str) -> RawEvent:
    return b.event("command/run", _command_run_data(command), False)


@candidate(Code.COMMAND_RUN_REPEATED, "seed")
def seed_command_run_twice(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a command id is used by a second run (a client that reuses its counter after a restart)."""
    b = _scratch(builder)
    command = f"cmd-{b.next_seq}"
    if not _put(b, _command_run(b, command)):
        return None
    if rng.random() < 0.5 and not _put(b, b.event("command/done", {"commandId": command, "kind": "success"}, False)):
        return None
    return _seed_with(b, _command_run(b, command))


@candidate(Code.COMMAND_DONE_UNPAIRED, "append")
def command_done_without_run(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``command/done`` whose ``command/run`` was never logged."""
    b = _scratch(builder)
    ran = set(_commands_ran(b))
    command = next(c for c in (f"cmd-{b.next_seq + i}" for i in range(len(ran) + 1)) if c not in ran)
    data = rng.choice(
        ({"kind": "success", "text": "Compacted the conversation."}, {"kind": "error", "text": "Nothing to compact."})
    )
    return b.event("command/done", {"commandId": command, **data}, False)


@candidate(Code.COMMAND_DONE_UNPAIRED, "seed")
def seed_command_done_other_id(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a command runs and finishes under another command id (the client's next id)."""
    b = _scratch(builder)
    command = f"cmd-{b.next_seq}"
    if not _put(b, _command_run(b, command)):
        return None
    return _seed_with(b, b.event("command/done", {"commandId": f"{command}-next", "kind": "success"}, False))


@candidate(Code.COMMAND_DONE_SOURCE_INVALID, "seed")
def seed_command_done_cites_wrongly(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed whose command finishes citing command bookkeeping (its own run, an earlier command's
    run or done), or failing yet citing an event."""
    b = _scratch(builder)
    cited = rng.choice(CITED_BY_A_WRONG_DONE)
    finished = any(e.type == "command/done" for e in b.state.events)
    if (cited == "command/done" and not finished) or rng.random() < 0.5:
        earlier = f"cmd-{b.next_seq}"
        done = {"commandId": earlier, "kind": "success"}
        if not (_put(b, _command_run(b, earlier)) and _put(b, b.event("command/done", done, False))):
            return None
    command = f"cmd-{b.next_seq}"
    if not _put(b, _command_run(b, command)):
        return None
    return _seed_with(b, b.event("command/done", _done_citing_wrongly(command, b, rng, cited), False))


CITED_BY_A_WRONG_DONE = (*sorted(COMMAND_TYPES), "error")
"""What a wrong ``command/done`` cites: command bookkeeping (for a success), anything (for an error)."""


def _done_citing_wrongly(command: str, b: SessionBuilder, rng: random.Random, cited: str | None = None) -> RawEvent:
    """How ``command`` finishes next in ``b``, citing wrongly: a success citing command bookkeeping
    (a run or a done, the type drawn first, so a log with one done among many runs cites it as often
    as a run), or an error citing any earlier event.  A seed draws ``cited`` before it builds its
    scene, so the scene holds what it cites."""
    by_type = {t: [e.seq for e in b.state.events if e.type == t] for t in COMMAND_TYPES}
    if cited is None or (cited != "error" and not by_type[cited]):
        cited = rng.choice([t for t in sorted(by_type) if by_type[t]] + ["error"])
    if cited != "error":
        return {"commandId": command, "kind": "success", "sourceEventSeq": rng.choice(by_type[cited])}
    cited_seq = edge_int(rng, 0, b.next_seq - 1)
    return {"commandId": command, "kind": "error", "text": "Nothing to compact.", "sourceEventSeq": cited_seq}


@candidate(Code.COMMAND_RUN_REPEATED, "append")
def command_run_reused(builder: SessionBuilder, rng: random.Random) -> object:
    """A ``command/run`` under the id of a command the session already ran, finished or not."""
    ran = _commands_ran(builder)
    return _command_run(_scratch(builder), rng.choice(ran)) if ran else None


@candidate(Code.COMMAND_DONE_SOURCE_INVALID, "append")
def command_done_cites_wrongly(builder: SessionBuilder, rng: random.Random) -> object:
    """How a command the session ran finishes, citing wrongly: a success citing command bookkeeping
    (any run or done of the log), or an error citing any earlier event."""
    b = _scratch(builder)
    ran = _commands_ran(b)
    if not ran:
        return None
    return b.event("command/done", _done_citing_wrongly(rng.choice(ran), b, rng), False)


# -- titles (INV-REL-26..28) -----------------------------------------------------------------------


@candidate(Code.TITLE_SEQS_CARDINALITY, "append")
def title_cardinality_wrong(builder: SessionBuilder, rng: random.Random) -> object:
    """A generated title (by the provider or the fallback) citing no message, or a title the user
    typed citing the messages it was typed after."""
    b = _scratch(builder)
    humans = b.human_message_seqs()
    variants: list[RawEvent] = [
        {"title": "Fix the failing parser test", "messageSeqs": [], "source": {"kind": "fallback"}},
        {"title": "Fix the failing parser test", "messageSeqs": [], "source": {"kind": "provider", "provider": "deepseek"}},
    ]
    if humans:
        variants.append({"title": "My parser fix", "messageSeqs": humans[:2], "source": {"kind": "user"}})
    return b.event("session/title", rng.choice(variants), False)


def _from_human(event: Event) -> bool:
    """Whether a title may cite ``event``: a ``user/message`` whose source is the user."""
    source = _data(event).get("source") if event.type == "user/message" else None
    return isinstance(source, dict) and source.get("kind") == "user"


NON_HUMAN_SOURCES: tuple[RawEvent, ...] = (
    {"kind": "plugin", "plugin": "memo"},
    {"kind": "team-message", "teamId": "team-1", "messageId": "m-1", "senderId": "agent-2", "senderName": "Reviewer"},
    {"kind": "skill-invocation", "name": "review", "form": "instructions"},
    {"kind": "subagent-settled", "form": "notice", "summary": "Tests pass.", "senderSessionId": "child-1"},
)
"""Sources of ``user/message`` events no person wrote: a plugin's note, a team member's message, a
skill's instructions, a sub-agent's notice."""


def _title_citing(b: SessionBuilder, rng: random.Random, cited: list[int]) -> RawEvent:
    """A generated title, or a title request, citing ``cited``."""
    if rng.random() < 0.5:
        source = rng.choice(({"kind": "fallback"}, {"kind": "provider", "provider": "deepseek"}))
        return b.event("session/title", {"title": "Fix the failing parser test", "messageSeqs": cited, "source": source}, False)
    return b.event("session/title-llm-request", title_request_data(b, cited, TITLE_FRAME_PREFIX + "[]"), False)


@candidate(Code.TITLE_SOURCE_NOT_HUMAN, "append")
def title_cites_non_human(builder: SessionBuilder, rng: random.Random) -> object:
    """A generated title (or title request) citing an assistant answer, a tool result, a summary or a
    bracket event beside or instead of the user's own messages."""
    b = _scratch(builder)
    humans = b.human_message_seqs()
    others = [e.seq for e in b.state.events if not _from_human(e)]
    if not others:
        return None
    # A user message from no human (a compaction checkpoint, a team member's, a tool's) is the
    # subtle case: half the time it is the one cited, when the log has one.
    unsent = [e.seq for e in b.state.events if e.type == "user/message" and not _from_human(e)]
    return _title_citing(b, rng, sorted({*humans[:1], rng.choice(unsent if unsent and rng.random() < 0.5 else others)}))


@candidate(Code.TITLE_SOURCE_NOT_HUMAN, "seed")
def seed_title_cites_unsent_message(builder: SessionBuilder, rng: random.Random) -> object:
    """A seed in which a ``user/message`` that no person wrote (a plugin's, a team member's, a
    skill's, a sub-agent's) is cited by a generated title or title request, alone or beside the
    user's own."""
    b = _scratch(builder)
    if not _enter_turn(b):
        return None
    data = {"id": f"note-{b.next_seq}", "role": "user", "content": [text_block("Remember: run the tests.")]}
    unsent = b.next_seq
    if not _put(b, b.event("user/message", {**data, "source": rng.choice(NON_HUMAN_SOURCES)}, False, surfaceOp="append")):
        return None
    humans = b.human_message_seqs()
    return _seed_with(b, _title_citing(b, rng, sorted({*humans[: rng.randint(0, 1)], unsent})))


@candidate(Code.TITLE_REQUEST_FRAMING, "append")
def title_request_misframed(builder: SessionBuilder, rng: random.Random) -> object:
    """A title request whose one message is not the frame of its cited messages: serialised with
    Python's separators, without the instruction, from another plugin, or sent twice."""
    b = _scratch(builder)
    humans = b.human_message_seqs()
    if not humans:
        return None
    cited = humans[-2:]
    texts = [(s, human_text(b.state.events[s])) for s in cited]
    how = rng.choice(("python-json", "no-prefix", "other-plugin", "twice"))
    frame = title_frame(texts)
    if how == "python-json":
        frame = TITLE_FRAME_PREFIX + json.dumps([{"seq": s, "text": t} for s, t in texts])
    elif how == "no-prefix":
        frame = frame.removeprefix(TITLE_FRAME_PREFIX)
    data = title_request_data(b, cited, frame, "dsh-session-title" if how == "other-plugin" else TITLE_PLUGIN)
    if how == "twice":
        data["messages"].append({**data["messages"][0], "id": f"title-{b.next_seq}-retry"})
    return b.event("session/title-llm-request", data, False)


# -- delivery markers (INV-REL-29) -----------------------------------------------------------------


def _marker(b: SessionBuilder, session_id: str, version: int | None = 1) -> RawEvent:
    data: RawEvent = {"sessionId": session_id, "throughSeq": b.next_seq - 1}
    if version is not None:
        data["sessionFormatVersion"] = version
    return b.event(DELIVERY_MARKER, data, False)


def _marked(builder: SessionBuilder) -> SessionBuilder:
    """A scratch builder with at least one event (a delivery marker confirms events up to an earlier seq)."""
    b = _scratch(builder)
    if b.next_seq == 0:
        b.commit(_benign(b, random.Random(0)))
    return b


@candidate(Code.DELIVERY_MARKER_WRONG_SESSION, "load")
def jsonl_marker_other_session(builder: SessionBuilder, rng: random.Random) -> object:
    """A stored log holding a delivery marker of its own format that names another session (its
    parent's, a sibling fork's, one copied from another log)."""
    b = _marked(builder)
    other = rng.choice(("parent-session", "mutant-session-fork-2", "3f0c2a9e-7b1d-4e5f-a6c8-9d2e1b4f7a30"))
    return _stored_with(b, _marker(b, other))


@candidate(Code.DELIVERY_MARKER_WRONG_SESSION, "load")
def jsonl_fork_marker_past_seed(builder: SessionBuilder, rng: random.Random) -> object:
    """A fork child's stored log (its header names the parent and the seed length) holding, after the
    inherited seed, a marker that names the parent: only markers inside the seed keep their ancestor's id."""
    b = _marked(builder)
    seed_length = edge_int(rng, 1, b.next_seq)
    header = {**STORED_HEADER, "parentSession": "parent-session", "seedLength": seed_length, "delegationDepth": 1}
    return _stored_with(b, _marker(b, "parent-session"), header=header)


# -- what a seed may leave open at its end ---------------------------------------------------------


OPENINGS = ("compaction", "crossed-compaction", "turn", "step", "asked-call", "started-call", "sub-call", "command")
"""What a valid seed may leave open at its end (:func:`opened_scene`)."""


def opened_scene(builder: SessionBuilder, what: str, rng: random.Random) -> list[RawEvent] | None:
    """The session so far with ``what`` left open at its end (a compaction, one a turn boundary
    crossed, a turn, a step, a call asked for or started, a PTC sub-call, a command), built on a
    copy and valid; ``None`` when the session cannot hold it.  A seed of it puts the end-of-seed
    marker in the middle of what was under way: the rules for what the marker retires, and for
    what may follow it, are then decided on every kind of open thing."""
    b = _scratch(builder)
    opened = {
        "compaction": lambda: _compaction_opened(b, rng, command=rng.random() < 0.5),
        "crossed-compaction": lambda: _crossed(b, rng),
        "turn": lambda: _enter_turn(b),
        "step": lambda: _enter_step(b),
        "asked-call": lambda: _asked_call(b) is not None,
        "started-call": lambda: _started_call(b) is not None,
        "sub-call": lambda: _ptc_started(b) is not None,
        "command": lambda: _put(b, _command_run(b, f"cmd-{b.next_seq}")),
    }[what]()
    return list(b.events) if opened else None
