"""Mutants of the second half (see :func:`killrate.mutants.blind_mutant`).

The relationships between events (INV-REL-1..29), written from ``invariants.md`` and seqlog's source
alone.  :class:`seqlog.relations.Relations` dispatches each event type through a table of its own
handlers, so most mutants wrap :meth:`Relations.plan` and change one decision for one event type
(the state a handler reads is bent for the one call and put back, or one refusal is turned into
the plan the event would have had); the others replace a helper the handlers look up by name.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

import seqlog.relations as sl_relations
from killrate import probes as p
from killrate.mutants import Fn, blind_mutant
from seqlog.errors import Code, SeqlogError
from seqlog.event import Event
from seqlog.jsonvalue import freeze, thaw
from seqlog.relations import LogIdentity, Relations
from seqlog.repair import NOT_STARTED_TEXT
from seqlog.session import Session

# --- helpers ------------------------------------------------------------------------------------------


def _data(event: Event) -> Mapping[str, Any]:
    return event.data if isinstance(event.data, Mapping) else {}


def _with_data(event: Event, data: object) -> Event:
    return dataclasses.replace(event, data=freeze(data))


def _with_member(event: Event, name: str, value: object) -> Event:
    return _with_data(event, {**thaw(_data(event)), name: value})


# Probe events ----------------------------------------------------------------------------------------


def _compaction_start(seq: int, cid: str = "k1", turn: int | None = 1, **more: Any) -> dict[str, Any]:
    return p.event("compaction/start", seq, {"compactionId": cid, "turn": turn, **more})


def _compaction_end(seq: int, cid: str = "k1", turn: int | None = 1, **more: Any) -> dict[str, Any]:
    return p.event("compaction/end", seq, {"compactionId": cid, "turn": turn, **more})


def _span(seqs: Sequence[int]) -> dict[str, Any]:
    return {"shadowedRange": {"start": seqs[0], "end": seqs[-1]}, "shadowedSeqs": list(seqs), "shadowedTokenCount": 1}


def _summary(seq: int, seqs: Sequence[int], cid: str = "k1") -> dict[str, Any]:
    data = {"compactionId": cid, "summary": [{"type": "text", "text": "s"}], **_span(seqs), "provider": "p", "model": "m"}
    return p.event("compaction/summary", seq, data)


def _prune(seq: int, seqs: Sequence[int]) -> dict[str, Any]:
    return p.event("compaction/prune", seq, _span(seqs))


def _checkpoint(seq: int, start: int, end: int, sources: Sequence[int], **source: Any) -> dict[str, Any]:
    """A compaction checkpoint: a ``user/message`` of the ``compact`` plugin replacing ``start..end``."""
    data = {
        "id": f"u{seq}",
        "role": "user",
        "content": [{"type": "text", "text": "summary"}],
        "source": {"kind": "plugin", "plugin": "compact", **source},
    }
    return p.event("user/message", seq, data, surfaceOp=p.replace(start, end), sourceEventSeqs=list(sources))


def _retry(  # noqa: PLR0917 - the members a probe varies
    seq: int, attempt: int = 1, rid: str = "r1", step: int = 1, provider: str = "p", policy: str = "k"
) -> dict[str, Any]:
    data = {
        "retryId": rid,
        "turn": 1,
        "step": step,
        "provider": provider,
        "policyKey": policy,
        "retry": attempt,
        "delayMs": 0,
        "failure": {"message": "overloaded", "code": "OVERLOADED"},
        "mode": "always",
    }
    return p.event("llm/retry", seq, data)


def _retry_started(seq: int, attempt: int = 1, rid: str = "r1", step: int = 1) -> dict[str, Any]:
    return p.event("llm/retry-started", seq, {"retryId": rid, "turn": 1, "step": step, "retry": attempt})


def _dispatch_start(seq: int, sub: str, root: str = "c1", parent: str | None = None, arguments: object = None) -> dict[str, Any]:
    data = {"rootCallId": root, "parentCallId": parent or root, "subCallId": sub, "name": "read_file", "arguments": arguments}
    return p.event("tool/code-dispatch-start", seq, data)


def _dispatch(seq: int, sub: str, root: str = "c1", parent: str | None = None, arguments: object = None) -> dict[str, Any]:
    data = {
        "rootCallId": root,
        "parentCallId": parent or root,
        "subCallId": sub,
        "name": "read_file",
        "arguments": arguments,
        "isError": False,
        "content": [{"type": "text", "text": "out"}],
    }
    return p.event("tool/code-dispatch", seq, data)


def _command_run(seq: int, cid: str) -> dict[str, Any]:
    return p.event("command/run", seq, {"commandId": cid, "name": "compact", "source": {"kind": "user"}})


def _command_done(seq: int, cid: str, kind: str = "success", **more: Any) -> dict[str, Any]:
    return p.event("command/done", seq, {"commandId": cid, "kind": kind, **more})


def _human(seq: int, text: str = "hi", **source: Any) -> dict[str, Any]:
    """A ``user/message`` holding ``text``, written by a person unless ``source`` says otherwise."""
    content = [{"type": "text", "text": text}]
    data = {"id": f"u{seq}", "role": "user", "content": content, "source": source or {"kind": "user"}}
    return p.event("user/message", seq, data, surfaceOp="append")


def _title(seq: int, seqs: Sequence[int], **source: Any) -> dict[str, Any]:
    return p.event("session/title", seq, {"title": "t", "messageSeqs": list(seqs), "source": source})


def _title_request(seq: int, cited: Sequence[tuple[int, str]]) -> dict[str, Any]:
    """A ``session/title-llm-request`` framing ``cited`` as JavaScript's ``JSON.stringify`` writes it."""
    items = ",".join(json.dumps({"seq": s, "text": t}, ensure_ascii=False, separators=(",", ":")) for s, t in cited)
    frame = sl_relations.TITLE_FRAME_PREFIX + "[" + items + "]"
    message = {
        "id": f"title-{seq}",
        "role": "user",
        "content": [{"type": "text", "text": frame}],
        "source": {"kind": "plugin", "plugin": sl_relations.TITLE_PLUGIN},
    }
    data = {
        "titleProvider": "p",
        "messageSeqs": [s for s, _ in cited],
        "route": {"provider": "p", "model": "m"},
        "system": "Write a title.",
        "messages": [message],
        "maxTokens": 32,
    }
    return p.event("session/title-llm-request", seq, data)


def _marker(seq: int, session_id: str, **more: Any) -> dict[str, Any]:
    return p.event(sl_relations.DELIVERY_MARKER, seq, {"sessionId": session_id, "throughSeq": 0, **more})


def _not_started_result(seq: int, call_id: str, message_id: str | None = None) -> dict[str, Any]:
    """The crash-repair ``tool/result`` for ``call_id`` that never started (its message id may be another)."""
    content = [{"type": "text", "text": NOT_STARTED_TEXT}]
    block = {"type": "tool-result", "toolCallId": call_id, "isError": True, "content": content}
    message = {
        "id": message_id or f"interrupted-tool-result-{call_id}-{seq}",
        "role": "user",
        "source": {"kind": "tool", "callId": call_id},
        "content": [block],
    }
    data = {"turn": 1, "step": 1, "message": message, "error": {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}}
    return p.event("tool/result", seq, data, surfaceOp="append")


def _header_line(**more: Any) -> str:
    return json.dumps({"type": "session", "version": 1, "id": "s", "createdAt": 0, "delegationDepth": 0, **more})


_OPEN_STEP = (p.turn_start(0), p.header_event(1, p.HEADER), p.step_start(2))
"""A turn with its request header and its first step open (seqs 0..2)."""


# --- INV-REL-1..5: tool lifecycles ----------------------------------------------------------------------


def _same_json(advertised: object, started: object) -> bool:
    if type(advertised) is not str or type(started) is not str:
        return False
    try:
        return bool(json.loads(advertised) == json.loads(started))
    except ValueError:
        return False


@blind_mutant(
    "tool_call_arguments_compared_as_json", "INV-REL-1", "session", Relations, "plan",
    p.appends(
        p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]),
        p.event("tool/call", 3, {"turn": 1, "step": 1, "callId": "c1", "name": "read_file", "arguments": "{ }"}),
    ),
)  # fmt: skip
def _tool_call_arguments_compared_as_json(original: Fn) -> Fn:
    """A ``tool/call`` matches its advertised call when the arguments parse to equal JSON, not when the raw strings are equal."""

    def plan(self: Relations, event: Event, log: Any, surface: Any) -> Any:
        if event.type == "tool/call":
            data = _data(event)
            advertised = self._tools.get(sl_relations._member(data, "callId"))
            if advertised is not None and _same_json(advertised[1], data.get("arguments")):
                event = _with_member(event, "arguments", advertised[1])
        return original(self, event, log, surface)

    return plan


@blind_mutant(
    "call_id_checked_within_message_only", "INV-REL-2", "session", Relations, "plan",
    p.appends(p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]), p.assistant(3, ["c1"])),
)  # fmt: skip
def _call_id_checked_within_message_only(original: Fn) -> Fn:
    """An ``assistant/message`` checks its call ids against each other only, not against calls still pending in the step."""

    def plan(self: Relations, event: Event, log: Any, surface: Any) -> Any:
        if event.type != "assistant/message" or not self._tools:
            return original(self, event, log, surface)
        pending = dict(self._tools)
        self._tools.clear()
        try:
            return original(self, event, log, surface)
        finally:
            self._tools.update(pending)

    return plan


@blind_mutant(
    "repair_result_answers_unadvertised_call", "INV-REL-3", "session", Relations, "plan",
    p.appends(p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]), _not_started_result(3, "c9")),
)  # fmt: skip
def _repair_result_answers_unadvertised_call(original: Fn) -> Fn:
    """An appended crash-repair ``tool/result`` (``TOOL_NOT_STARTED``) is trusted: it may answer a call no message advertised."""

    def plan(self: Relations, event: Event, log: Any, surface: Any) -> Any:
        try:
            return original(self, event, log, surface)
        except SeqlogError as error:
            exact = sl_relations.is_exact_not_started_result(event, _data(event))
            if error.code is not Code.TOOL_RESULT_UNADVERTISED or not exact:
                raise
        return None

    return plan


@blind_mutant(
    "not_started_result_id_unchecked", "INV-REL-4", "session", sl_relations, "is_exact_not_started_result",
    p.appends(p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]), _not_started_result(3, "c1", message_id="r-c1")),
)  # fmt: skip
def _not_started_result_id_unchecked(original: Fn) -> Fn:
    """The crash-repair result of a call that never started may carry any message id, not only ``interrupted-tool-result-...``."""

    def is_exact_not_started_result(event: Event, data: Mapping[str, Any]) -> bool:
        if original(event, data):
            return True
        message = data.get("message")
        source = message.get("source") if isinstance(message, Mapping) else None
        call_id = source.get("callId") if isinstance(source, Mapping) else None
        if not isinstance(message, Mapping) or type(call_id) is not str:
            return False
        renamed = {**thaw(data), "message": {**thaw(message), "id": f"interrupted-tool-result-{call_id}-{event.seq}"}}
        return bool(original(event, freeze(renamed)))

    return is_exact_not_started_result


@blind_mutant(
    "step_end_ignores_unstarted_calls", "INV-REL-5", "session", Relations, "_check_resolved",
    p.appends(p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]), p.step_end(3)),
)  # fmt: skip
def _step_end_ignores_unstarted_calls(original: Fn) -> Fn:
    """A ``step/end`` is refused only for a call a ``tool/call`` started; calls only advertised may stay unanswered."""

    def _check_resolved(self: Relations, event: Event) -> None:
        if all(not started for _, _, started in self._tools.values()):
            return
        original(self, event)

    return _check_resolved


# --- INV-REL-6..12: compactions ---------------------------------------------------------------------------


@blind_mutant(
    "compaction_lock_released_by_summary", "INV-REL-6", "session", Relations, "plan",
    p.appends(p.turn_start(0), _compaction_start(1), p.user(2), _summary(3, [2]), _compaction_start(4, cid="k2")),
)  # fmt: skip
def _compaction_lock_released_by_summary(original: Fn) -> Fn:
    """Once the open compaction has its summary, a new ``compaction/start`` is accepted (and takes over) before it ends."""

    def plan(self: Relations, event: Event, log: Any, surface: Any) -> Any:
        held = self._compaction
        if event.type != "compaction/start" or held is None or not held.summarized or held.crossed_at is not None:
            return original(self, event, log, surface)
        self._compaction = None
        try:
            return original(self, event, log, surface)
        finally:
            self._compaction = held

    return plan


@blind_mutant(
    "compaction_end_turn_unchecked", "INV-REL-7", "session", Relations, "plan",
    p.appends(p.turn_start(0), _compaction_start(1), _compaction_end(2, turn=None, error="aborted")),
)  # fmt: skip
def _compaction_end_turn_unchecked(original: Fn) -> Fn:
    """A ``compaction/end`` may name another turn than its ``compaction/start`` (only where it happens is checked)."""

    def plan(self: Relations, event: Event, log: Any, surface: Any) -> Any:
        held = self._compaction
        if event.type == "compaction/end" and held is not None and sl_relations._member(_data(event), "turn") != held.turn:
            event = _with_member(event, "turn", held.turn)
        return original(self, event, log, surface)

    return plan


@blind_mutant(
    "checkpoint_command_id_unchecked", "INV-REL-8", "session", Relations, "_check_owner",
    p.appends(
        p.turn_start(0), _compaction_start(1), p.user(2), _summary(3, [2]),
        _checkpoint(4, 2, 2, [2], compactionId="k1", sourceCommandId="cmd-9"),
    ),
)  # fmt: skip
def _checkpoint_command_id_unchecked(original: Fn) -> Fn:
    """A compaction checkpoint is matched to the open compaction by ``compactionId`` alone, not by ``sourceCommandId``."""

    def _check_owner(self: Relations, event: Event, named: Mapping[str, Any] | None) -> Any:
        held = self._compaction
        same_id = held is not None and sl_relations._member(named, "compactionId") == held.compaction_id
        if event.type == "user/message" and same_id:
            return held
        return original(self, event, named)

    return _check_owner


@blind_mutant(
    "second_summary_replaces_first", "INV-REL-9", "session", Relations, "plan",
    p.appends(p.turn_start(0), _compaction_start(1), p.user(2), _summary(3, [2]), _summary(4, [2])),
)  # fmt: skip
def _second_summary_replaces_first(original: Fn) -> Fn:
    """A compaction may be summarised again: a second ``compaction/summary`` is accepted as a redo of the first."""

    def plan(self: Relations, event: Event, log: Any, surface: Any) -> Any:
        held = self._compaction
        if event.type != "compaction/summary" or held is None or not held.summarized:
            return original(self, event, log, surface)
        held.summarized = False
        try:
            return original(self, event, log, surface)
        finally:
            held.summarized = True

    return plan


@blind_mutant(
    "summary_flag_outlives_its_compaction", "INV-REL-10", "session", Relations, "plan",
    p.appends(
        p.turn_start(0), _compaction_start(1), p.user(2), _summary(3, [2]), _compaction_end(4),
        _compaction_start(5, cid="k2"), _compaction_end(6, cid="k2"),
    ),
)  # fmt: skip
def _summary_flag_outlives_its_compaction(original: Fn) -> Fn:
    """A successful ``compaction/end`` is accepted without its own summary once any earlier compaction of the log had one."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: Any) -> Any:
        try:
            return original(self, event, log, surface)
        except SeqlogError as error:
            if error.code is not Code.COMPACTION_SUMMARY_MISSING or not any(e.type == "compaction/summary" for e in log):
                raise
        return self._close_compaction

    return plan


@blind_mutant(
    "loaded_log_may_end_in_a_crossing", "INV-REL-11", "jsonl", Session, "check_complete",
    p.load(_header_line(), p.line(p.turn_start(0)), p.line(_compaction_start(1)), p.line(p.turn_end(2))),
)  # fmt: skip
def _loaded_log_may_end_in_a_crossing(original: Fn) -> Fn:
    """The reader does not judge a stored log as complete: one ending in a turn boundary held across a compaction is accepted."""

    def check_complete(self: Session) -> None:
        return None

    return check_complete


@blind_mutant(
    "end_seed_keeps_an_uncrossed_compaction", "INV-REL-11", "session", Relations, "plan",
    (
        {"op": "reset"},
        {"op": "seed", "events": [_compaction_start(0, turn=None)]},
        {"op": "append", "event": _compaction_start(2, cid="k2", turn=None)},
    ),
)  # fmt: skip
def _end_seed_keeps_an_uncrossed_compaction(original: Fn) -> Fn:
    """The end-of-seed marker retires only a compaction a turn boundary crossed; one the seed left open otherwise stays open."""

    def plan(self: Relations, event: Event, log: Any, surface: Any) -> Any:
        held = self._compaction
        if event.type == "session/end-seed" and held is not None and held.crossed_at is None:
            return None
        return original(self, event, log, surface)

    return plan


class _SortedSurface:
    """A stand-in surface whose nodes are the real surface's seqs in ascending order."""

    def __init__(self, nodes: Sequence[int]) -> None:
        self.nodes = sorted(nodes)


@blind_mutant(
    "prune_span_taken_in_seq_order", "INV-REL-12", "session", Relations, "_check_span",
    p.appends(p.user(0), p.user(1), p.user(2), p.user(3, p.replace(1, 1), sources=[1]), _prune(4, [0, 3, 2])),
)  # fmt: skip
def _prune_span_taken_in_seq_order(original: Fn) -> Fn:
    """The span a prune (or summary) must name is read off the surface in seq order, not in surface order."""

    def _check_span(event: Event, data: Mapping[str, Any], surface: Any) -> None:
        original(event, data, _SortedSurface(surface.nodes))

    return _check_span


# --- INV-REL-13..18: retries -------------------------------------------------------------------------------


@blind_mutant(
    "retry_between_steps_names_next_step", "INV-REL-13", "session", Relations, "plan",
    p.appends(*_OPEN_STEP, p.step_end(3), _retry(4, step=1)),
)  # fmt: skip
def _retry_between_steps_names_next_step(original: Fn) -> Fn:
    """An ``llm/retry`` between steps must name the step about to start, not the step that ended last."""

    def plan(self: Relations, event: Event, log: Any, surface: Any) -> Any:
        if event.type != "llm/retry" or self._open_step is not None:
            return original(self, event, log, surface)
        self._ended_steps += 1
        try:
            return original(self, event, log, surface)
        finally:
            self._ended_steps -= 1

    return plan


@blind_mutant(
    "retry_provider_of_first_header", "INV-REL-14", "session", Relations, "plan",
    p.appends(
        p.turn_start(0), p.header_event(1, p.HEADER), p.header_event(2, {"config": {"provider": "q", "model": "m"}}, "change"),
        p.step_start(3), _retry(4, provider="q"),
    ),
)  # fmt: skip
def _retry_provider_of_first_header(original: Fn) -> Fn:
    """The provider a retry must name is the first ``request/header``'s: later headers do not change it."""

    def plan(self: Relations, event: Event, log: Any, surface: Any) -> Any:
        commit = original(self, event, log, surface)
        if event.type == "request/header" and self._provider is not sl_relations._ABSENT:
            return None
        return commit

    return plan


def _chain(data: Mapping[str, Any]) -> tuple[object, object, object, object]:
    member = sl_relations._member
    return (member(data, "turn"), member(data, "step"), member(data, "provider"), member(data, "policyKey"))


@blind_mutant(
    "retry_attempts_may_skip", "INV-REL-15", "session", Relations, "plan",
    p.appends(*_OPEN_STEP, _retry(3, attempt=1), _retry(4, attempt=3)),
)  # fmt: skip
def _retry_attempts_may_skip(original: Fn) -> Fn:
    """A retry must only count up within its chain: an attempt above the previous one is accepted even when it skips numbers."""

    def plan(self: Relations, event: Event, log: Any, surface: Any) -> Any:
        data = _data(event)
        chain = _chain(data)
        prior = self._chains.get(chain) if event.type == "llm/retry" else None
        attempt = data.get("retry")
        if prior is None or type(prior[1]) is not int or type(attempt) is not int or attempt <= prior[1] + 1:
            return original(self, event, log, surface)
        self._chains[chain] = (prior[0], attempt - 1)
        try:
            return original(self, event, log, surface)
        finally:
            self._chains[chain] = prior

    return plan


@blind_mutant(
    "retry_id_shared_across_chains", "INV-REL-16", "session", Relations, "plan",
    p.appends(*_OPEN_STEP, _retry(3, policy="k"), _retry(4, policy="k2")),
)  # fmt: skip
def _retry_id_shared_across_chains(original: Fn) -> Fn:
    """A new policy chain may take a ``retryId`` another chain already uses (only a chain changing its own id is refused)."""

    def plan(self: Relations, event: Event, log: Any, surface: Any) -> Any:
        retry_id = sl_relations._member(_data(event), "retryId")
        if event.type != "llm/retry" or retry_id not in self._retry_ids:
            return original(self, event, log, surface)
        self._retry_ids.discard(retry_id)
        try:
            return original(self, event, log, surface)
        finally:
            self._retry_ids.add(retry_id)

    return plan


@blind_mutant(
    "retry_start_step_unchecked", "INV-REL-17", "session", Relations, "plan",
    p.appends(*_OPEN_STEP, _retry(3, step=1), _retry_started(4, step=2)),
)  # fmt: skip
def _retry_start_step_unchecked(original: Fn) -> Fn:
    """An ``llm/retry-started`` is paired with its schedule by turn only: it may name another step than the ``llm/retry``."""

    def plan(self: Relations, event: Event, log: Any, surface: Any) -> Any:
        if event.type == "llm/retry-started":
            data = _data(event)
            where = self._scheduled.get((sl_relations._member(data, "retryId"), sl_relations._member(data, "retry")))
            if where is not None and where[0] == sl_relations._member(data, "turn"):
                event = _with_member(event, "step", where[1])
        return original(self, event, log, surface)

    return plan


@blind_mutant(
    "retry_start_not_remembered", "INV-REL-18", "session", Relations, "plan",
    p.appends(*_OPEN_STEP, _retry(3), _retry_started(4), _retry_started(5)),
)  # fmt: skip
def _retry_start_not_remembered(original: Fn) -> Fn:
    """An ``llm/retry-started`` is checked against its schedule but not recorded, so the same attempt may start again."""

    def plan(self: Relations, event: Event, log: Any, surface: Any) -> Any:
        commit = original(self, event, log, surface)
        return None if event.type == "llm/retry-started" else commit

    return plan


# --- INV-REL-19..22: programmatic tool calls -------------------------------------------------------------------


class _Somewhere:
    """An open turn that is not any turn's key."""


@blind_mutant(
    "dispatch_settles_after_its_turn", "INV-REL-19", "session", Relations, "plan",
    p.appends(p.turn_start(0), _dispatch_start(1, "s1"), p.turn_end(2), _dispatch(3, "s1")),
)  # fmt: skip
def _dispatch_settles_after_its_turn(original: Fn) -> Fn:
    """Only ``tool/code-dispatch-start`` must be inside a turn; the settling ``tool/code-dispatch`` may come after the turn."""

    def plan(self: Relations, event: Event, log: Any, surface: Any) -> Any:
        if event.type != "tool/code-dispatch" or self._open_turn is not None:
            return original(self, event, log, surface)
        self._open_turn = _Somewhere()
        try:
            return original(self, event, log, surface)
        finally:
            self._open_turn = None

    return plan


@blind_mutant(
    "dispatch_parent_under_any_root", "INV-REL-20", "session", Relations, "plan",
    p.appends(p.turn_start(0), _dispatch_start(1, "s1", root="c1"), _dispatch_start(2, "s2", root="c2", parent="s1")),
)  # fmt: skip
def _dispatch_parent_under_any_root(original: Fn) -> Fn:
    """A dispatch's ``parentCallId`` may be any sub-call already seen, even one under another root."""

    def plan(self: Relations, event: Event, log: Any, surface: Any) -> Any:
        data = _data(event)
        roots = self._dispatch_roots
        root, parent = sl_relations._member(data, "rootCallId"), sl_relations._member(data, "parentCallId")
        if event.type not in {"tool/code-dispatch-start", "tool/code-dispatch"} or parent == root or parent not in roots:
            return original(self, event, log, surface)
        seen_under = roots[parent]
        roots[parent] = root
        try:
            return original(self, event, log, surface)
        finally:
            roots[parent] = seen_under

    return plan


@blind_mutant(
    "settled_sub_call_starts_again", "INV-REL-21", "session", Relations, "plan",
    p.appends(p.turn_start(0), _dispatch_start(1, "s1"), _dispatch(2, "s1"), _dispatch_start(3, "s1")),
)  # fmt: skip
def _settled_sub_call_starts_again(original: Fn) -> Fn:
    """A sub-call that settled may be started again (only a start of a still unsettled sub-call counts as a repeat)."""

    def plan(self: Relations, event: Event, log: Any, surface: Any) -> Any:
        child = sl_relations._member(_data(event), "subCallId")
        started = self._dispatches.get(child)
        if event.type != "tool/code-dispatch-start" or started is None or not started.settled:
            return original(self, event, log, surface)
        del self._dispatches[child]
        try:
            return original(self, event, log, surface)
        finally:
            self._dispatches[child] = started

    return plan


@blind_mutant(
    "dispatch_arguments_compared_by_python", "INV-REL-22", "session", Relations, "plan",
    p.appends(p.turn_start(0), _dispatch_start(1, "s1", arguments={"all": 1}), _dispatch(2, "s1", arguments={"all": True})),
)  # fmt: skip
def _dispatch_arguments_compared_by_python(original: Fn) -> Fn:
    """A settlement's arguments are compared with Python's ``==``, so ``true`` matches ``1`` (JSON equality keeps them apart)."""

    def plan(self: Relations, event: Event, log: Any, surface: Any) -> Any:
        if event.type == "tool/code-dispatch":
            data = _data(event)
            started = self._dispatches.get(sl_relations._member(data, "subCallId"))
            has_both = started is not None and started.has_arguments and "arguments" in data
            if has_both and thaw(started.arguments) == thaw(data["arguments"]):  # type: ignore[union-attr]
                event = _with_member(event, "arguments", thaw(started.arguments))  # type: ignore[union-attr]
        return original(self, event, log, surface)

    return plan


_COMMAND_TYPES = frozenset({"command/run", "command/done"})


# --- INV-REL-23..25: commands ------------------------------------------------------------------------------------


@blind_mutant(
    "command_id_freed_by_done", "INV-REL-23", "session", Relations, "plan",
    p.appends(_command_run(0, "x1"), _command_done(1, "x1"), _command_run(2, "x1")),
)  # fmt: skip
def _command_id_freed_by_done(original: Fn) -> Fn:
    """A ``commandId`` may be run again once its command is done (the id is taken as naming the command in flight)."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: Any) -> Any:
        try:
            return original(self, event, log, surface)
        except SeqlogError as error:
            if error.code is not Code.COMMAND_RUN_REPEATED:
                raise
            command = _data(event).get("commandId")
            same = (e for e in reversed(log) if e.type in _COMMAND_TYPES and _data(e).get("commandId") == command)
            last = next(same, None)
            if last is None or last.type != "command/done":
                raise
        return None

    return plan


@blind_mutant(
    "failed_command_done_needs_no_run", "INV-REL-24", "session", Relations, "plan",
    p.appends(_command_done(0, "x1", kind="error", text="unknown command")),
)  # fmt: skip
def _failed_command_done_needs_no_run(original: Fn) -> Fn:
    """A ``command/done`` of kind ``error`` is accepted without an earlier ``command/run`` (a command that failed to start)."""

    def plan(self: Relations, event: Event, log: Any, surface: Any) -> Any:
        command = sl_relations._member(_data(event), "commandId")
        failed = sl_relations._is(_data(event), "kind", "error")
        if event.type != "command/done" or command in self._commands or not failed:
            return original(self, event, log, surface)
        self._commands.add(command)
        try:
            return original(self, event, log, surface)
        finally:
            self._commands.discard(command)

    return plan


@blind_mutant(
    "done_may_cite_a_command_done", "INV-REL-25", "session", Relations, "plan",
    p.appends(_command_run(0, "x1"), _command_done(1, "x1"), _command_run(2, "x2"), _command_done(3, "x2", sourceEventSeq=1)),
)  # fmt: skip
def _done_may_cite_a_command_done(original: Fn) -> Fn:
    """A successful ``command/done`` may cite another ``command/done`` (only citing a ``command/run`` is refused)."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: Any) -> Any:
        data = _data(event)
        cited = sl_relations._cited(log, data.get("sourceEventSeq")) if event.type == "command/done" else None
        if cited is not None and cited.type == "command/done" and sl_relations._is(data, "kind", "success"):
            event = _with_data(event, {k: v for k, v in thaw(data).items() if k != "sourceEventSeq"})
        return original(self, event, log, surface)

    return plan


# --- INV-REL-26..28: titles -------------------------------------------------------------------------------------


@blind_mutant(
    "fallback_title_cites_nothing", "INV-REL-26", "session", Relations, "plan",
    p.appends(_title(0, [], kind="fallback")),
)  # fmt: skip
def _fallback_title_cites_nothing(original: Fn) -> Fn:
    """A ``fallback`` title is taken as typed like a ``user`` one: it must cite no message instead of its source messages."""

    def plan(self: Relations, event: Event, log: Any, surface: Any) -> Any:
        if event.type == "session/title" and sl_relations._is(sl_relations._at(_data(event), "source"), "kind", "fallback"):
            event = _with_member(event, "source", {"kind": "user"})
        return original(self, event, log, surface)

    return plan


@blind_mutant(
    "title_cites_any_user_message", "INV-REL-27", "session", sl_relations, "_human_messages",
    p.appends(_human(0, "note", kind="plugin", plugin="memo"), _title(1, [0], kind="provider", provider="p")),
)  # fmt: skip
def _title_cites_any_user_message(original: Fn) -> Fn:
    """A ``session/title`` may cite any ``user/message``, whatever its source: the person-wrote-it check is skipped."""

    def _human_messages(event: Event, data: Mapping[str, Any], log: Sequence[Event]) -> Any:
        if event.type != "session/title":
            return original(event, data, log)
        cited: list[tuple[int, str]] = []
        for seq in sl_relations._arr(data.get("messageSeqs")):
            message = sl_relations._cited(log, seq)
            if message is None or message.type != "user/message":
                return original(event, data, log)
            cited.append((message.seq, sl_relations.message_text(_data(message))))
        return cited

    return _human_messages


@blind_mutant(
    "title_frame_escapes_non_ascii", "INV-REL-28", "session", sl_relations, "js_json_string",
    p.appends(_human(0, "Café über alles"), _title_request(1, [(0, "Café über alles")])),
)  # fmt: skip
def _title_frame_escapes_non_ascii(original: Fn) -> Fn:
    """The title frame serialises cited texts with Python's ``json.dumps``, escaping non-ASCII that ``JSON.stringify`` keeps."""

    def js_json_string(text: str) -> str:
        return json.dumps(text)

    return js_json_string


# --- INV-REL-29: delivery markers --------------------------------------------------------------------------------


@blind_mutant(
    "unversioned_marker_taken_as_current", "INV-REL-29", "jsonl", sl_relations, "_check_marker",
    p.load(_header_line(), p.line(_marker(0, "elsewhere"))),
)  # fmt: skip
def _unversioned_marker_taken_as_current(original: Fn) -> Fn:
    """A delivery marker without ``sessionFormatVersion`` is judged as one of the log's own generation instead of generation 0."""

    def _check_marker(identity: LogIdentity, event: Event, data: Mapping[str, Any]) -> None:
        if "sessionFormatVersion" not in data:
            data = {**data, "sessionFormatVersion": identity.version}
        original(identity, event, data)

    return _check_marker


@blind_mutant(
    "marker_at_seed_length_inherited", "INV-REL-29", "read", sl_relations, "_check_marker",
    (
        {
            "op": "read",
            "jsonl": "\n".join((
                _header_line(parentSession="parent", seedLength=1),
                p.note_line(0),
                p.line(_marker(1, "parent", sessionFormatVersion=1)),
                "",
            )),
        },
    ),
)  # fmt: skip
def _marker_at_seed_length_inherited(original: Fn) -> Fn:
    """A fork's marker at seq ``seedLength`` is taken as inherited from the parent (the seed is read as ``seq <= seedLength``)."""

    def _check_marker(identity: LogIdentity, event: Event, data: Mapping[str, Any]) -> None:
        if identity.has_parent and event.seq == identity.seed_length:
            return
        original(identity, event, data)

    return _check_marker
