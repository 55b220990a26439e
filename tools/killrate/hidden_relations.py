"""The sixth half of the catalogue, relations: the relationships between events (INV-REL).

Written from the documents (``invariants.md``, the protocol, the on-disk format), the reference model
and seqlog's source alone, without reading the conformance suite or its tests, and never run against
the suite before the measurement that first judges them.  Each mutant is one decision a port's author
could get wrong while reading the same rules: calls of an unfinished message taken as never asked
for, the exact repair result recognised by part of its error, a whole-log rule skipped on the pure
ops, a retry placed more strictly or chained more loosely than the rules say, only the latest
attempt startable, a settlement matched without its parent, a success required to cite, a title
request's citations left unjudged or framed in another order, a refusal from a later stage given
first, a repeat remembered across compactions.

The relationship rules are dispatched through a table of :class:`seqlog.relations.Relations`
methods, so most of these mutants wrap :meth:`Relations.plan` and change the one decision for the
event type concerned; module helpers the rules call are replaced directly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import seqlog.relations as sl_relations
from killrate import probes as p
from killrate.mutants import Fn, _data, _with_data, hidden_mutant
from seqlog.errors import Code, SeqlogError
from seqlog.event import Event
from seqlog.relations import TITLE_PLUGIN, Commit, Relations, _member, _refuse, message_text, title_frame
from seqlog.repair import NOT_STARTED_TEXT
from seqlog.session import Session
from seqlog.surface import SurfaceManager

# --- probe events -------------------------------------------------------------------------------------


def _step_open(*more: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """Turn 1 with step 1 open and a request header of provider ``p`` in force, then ``more``."""
    return (p.turn_start(0), p.step_start(1), p.header_event(2, p.HEADER), *more)


def _interrupted(seq: int, calls: Sequence[str]) -> dict[str, Any]:
    event = p.assistant(seq, calls)
    event["data"]["interrupted"] = True
    return event


def _not_started(seq: int, call_id: str, error_name: str = "ToolNotStartedError") -> dict[str, Any]:
    """The crash-repair result for ``call_id`` at ``seq`` (its error named ``error_name``)."""
    block = {"type": "tool-result", "toolCallId": call_id, "isError": True,
             "content": [{"type": "text", "text": NOT_STARTED_TEXT}]}
    message = {"id": f"interrupted-tool-result-{call_id}-{seq}", "role": "user",
               "source": {"kind": "tool", "callId": call_id}, "content": [block]}
    data = {"turn": 1, "step": 1, "message": message, "error": {"name": error_name, "code": "TOOL_NOT_STARTED"}}
    return p.event("tool/result", seq, data, surfaceOp="append")


def _retry(seq: int, retry_id: str, attempt: int, *, step: int = 1) -> dict[str, Any]:
    data = {"retryId": retry_id, "turn": 1, "step": step, "provider": "p", "policyKey": "default", "retry": attempt,
            "delayMs": 0, "failure": {"message": "overloaded", "code": "OVERLOADED"}, "mode": "always"}
    return p.event("llm/retry", seq, data)


def _retry_started(seq: int, retry_id: str, attempt: int) -> dict[str, Any]:
    return p.event("llm/retry-started", seq, {"retryId": retry_id, "turn": 1, "step": 1, "retry": attempt})


def _dispatch(type_: str, seq: int, sub: str, parent: str = "root") -> dict[str, Any]:
    data: dict[str, Any] = {"rootCallId": "root", "parentCallId": parent, "subCallId": sub, "name": "run", "arguments": {}}
    if type_ == "tool/code-dispatch":
        data |= {"isError": False, "content": [{"type": "text", "text": "ok"}]}
    return p.event(type_, seq, data)


def _command_run(seq: int, command_id: str) -> dict[str, Any]:
    return p.event("command/run", seq, {"commandId": command_id, "name": "compact", "source": {"kind": "user"}})


def _plugin_note(seq: int) -> dict[str, Any]:
    """A user-role message a plugin wrote (not a person)."""
    event = p.user(seq)
    event["data"]["source"] = {"kind": "plugin", "plugin": "notes"}
    return event


def _title_request(seq: int, cited: Sequence[tuple[int, str]]) -> dict[str, Any]:
    """A title request citing ``cited`` (seq, text) in that order, framed in that order."""
    message = {"id": "title-0", "role": "user", "content": [{"type": "text", "text": title_frame(cited)}],
               "source": {"kind": "plugin", "plugin": TITLE_PLUGIN}}
    data = {"titleProvider": "p", "messageSeqs": [seq for seq, _ in cited], "route": {"provider": "p", "model": "m"},
            "system": "", "messages": [message], "maxTokens": 16}
    return p.event("session/title-llm-request", seq, data)


def _compaction(type_: str, seq: int, **more: Any) -> dict[str, Any]:
    return p.event(type_, seq, {"compactionId": "k1", "turn": 1, **more})


def _summary(seq: int, node: int) -> dict[str, Any]:
    data = {"compactionId": "k1", "summary": [{"type": "text", "text": "so far"}],
            "shadowedRange": {"start": node, "end": node}, "shadowedSeqs": [node], "shadowedTokenCount": 1,
            "provider": "p", "model": "m"}
    return p.event("compaction/summary", seq, data)


# --- INV-REL-1, -4, -5: tool calls and their results --------------------------------------------------


@hidden_mutant(
    "interrupted_message_advertises_nothing", "INV-REL-1", "session", Relations, "plan",
    p.appends(p.turn_start(0), p.step_start(1), _interrupted(2, ["c1"]), p.tool_call(3, "c1")),
)
def _interrupted_message_advertises_nothing(original: Fn) -> Fn:
    """An ``assistant/message`` marked ``interrupted`` advertises none of its calls (an unfinished message
    taken as asking for nothing), so a ``tool/call`` starting one of them is refused."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        if event.type == "assistant/message" and _data(event).get("interrupted") is True:
            return None
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return plan


@hidden_mutant(
    "not_started_error_name_unchecked", "INV-REL-4", "session", sl_relations, "is_exact_not_started_result",
    p.appends(p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]), _not_started(3, "c1", "ToolError")),
)
def _not_started_error_name_unchecked(original: Fn) -> Fn:
    """The exact repair result for a call that never started is recognised by its error ``code``; the
    error's ``name`` is not compared, so ``{name: "ToolError", code: "TOOL_NOT_STARTED"}`` answers it."""

    def is_exact_not_started_result(event: Event, data: Mapping[str, Any]) -> bool:
        error = data.get("error")
        if isinstance(error, Mapping) and error.get("code") == "TOOL_NOT_STARTED":
            data = {**data, "error": {**error, "name": "ToolNotStartedError"}}
        return original(event, data)  # type: ignore[no-any-return]

    return is_exact_not_started_result


@hidden_mutant(
    "unresolved_call_reported_before_step_mismatch", "INV-REL-5", "session", Session, "validate",
    p.appends(p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]), p.step_end(3, step=2)),
)
def _unresolved_call_reported_before_step_mismatch(original: Fn) -> Fn:
    """A ``step/end`` is first asked whether the step's calls are answered, then whether it names the open
    step: a mismatched end of a step with a call pending is TOOL_CALL_UNRESOLVED."""

    def validate(self: Session, raw: object) -> Any:
        try:
            return original(self, raw)
        except SeqlogError as error:
            if error.code is Code.STEP_END_MISMATCH and self._relations._tools:
                unanswered = f"step/end leaves an advertised tool call unanswered ({error.message})"
                raise SeqlogError(Code.TOOL_CALL_UNRESOLVED, unanswered) from None
            raise

    return validate


# --- INV-REL-9, -11: compactions ------------------------------------------------------------------------


@hidden_mutant(
    "summary_repeat_remembered_by_id", "INV-REL-9", "session", Relations, "plan",
    p.appends(p.turn_start(0), p.user(1), _compaction("compaction/start", 2), _summary(3, 1), _compaction("compaction/end", 4),
              _compaction("compaction/start", 5), _summary(6, 1)),
)
def _summary_repeat_remembered_by_id(original: Fn) -> Fn:
    """A compaction's summary is remembered by its ``compactionId`` for the whole log: a later compaction
    that reuses the id is refused its summary as a repeat."""
    summarized: dict[int, set[object]] = {}

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        commit: Commit | None = original(self, event, log, surface)
        if event.type != "compaction/summary":
            return commit
        named = _member(_data(event), "compactionId")
        seen = summarized.setdefault(id(self), set())
        if named in seen:
            raise _refuse(Code.COMPACTION_SUMMARY_REPEATED, event, "is a second summary of its compaction id")

        def remember() -> None:
            if commit is not None:
                commit()
            seen.add(named)

        return remember

    return plan


@hidden_mutant(
    "pure_ops_skip_complete_check", "INV-REL-11", "repair", Session, "restore",
    ({"op": "repair", "events": [p.event("compaction/start", 0, {"compactionId": "k1", "turn": None}), p.turn_start(1)]},),
)
def _pure_ops_skip_complete_check(original: Fn) -> Fn:
    """A log replayed whole is not judged complete: the pure ops (and the edge's replay) take a log ending
    in a turn boundary held across an open compaction, which only the reader is taken to refuse."""

    def restore(cls: type[Session], events: Any, **options: Any) -> Session:
        return original(cls, events, **{**options, "complete": False})  # type: ignore[no-any-return]

    return restore


# --- INV-REL-13, -15, -17: retries ----------------------------------------------------------------------


@hidden_mutant(
    "retry_needs_open_step", "INV-REL-13", "session", Relations, "plan",
    p.appends(*_step_open(p.step_end(3), _retry(4, "r1", 1))),
)
def _retry_needs_open_step(original: Fn) -> Fn:
    """An ``llm/retry`` is placed in the open step only: one written between two steps, for the step that
    ended last, is refused as outside a step."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        if event.type == "llm/retry" and self._open_step is None:
            raise _refuse(Code.RETRY_OUTSIDE_STEP, event, "is outside an open step")
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return plan


@hidden_mutant(
    "retry_chain_spans_steps", "INV-REL-15", "session", Relations, "plan",
    p.appends(*_step_open(_retry(3, "r1", 1), p.step_end(4), p.step_start(5, step=2), _retry(6, "r2", 1, step=2))),
)
def _retry_chain_spans_steps(original: Fn) -> Fn:
    """Retry chains are keyed by turn, provider and policy, not by step: a later step's first attempt
    continues the earlier step's chain and is refused as a repeated number."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        commit: Commit | None = original(self, event, log, surface)
        if event.type == "llm/retry":
            data = _data(event)
            turn, step = _member(data, "turn"), _member(data, "step")
            provider, policy = _member(data, "provider"), _member(data, "policyKey")
            if (turn, step, provider, policy) not in self._chains:
                earlier = [last for (t, s, pr, po), (_, last) in self._chains.items()
                           if (t, pr, po) == (turn, provider, policy) and s != step]
                if earlier:
                    raise _refuse(Code.RETRY_NUMBER_INVALID, event, f"must follow attempt {earlier[-1]!r} of its policy chain")
        return commit

    return plan


@hidden_mutant(
    "only_latest_attempt_startable", "INV-REL-17", "session", Relations, "plan",
    p.appends(*_step_open(_retry(3, "r1", 1), _retry(4, "r1", 2), _retry_started(5, "r1", 1))),
)
def _only_latest_attempt_startable(original: Fn) -> Fn:
    """Only the latest scheduled attempt of a ``retryId`` may start (a later schedule taken to supersede
    the earlier): starting attempt 1 after attempt 2 was scheduled is refused as unpaired."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        if event.type == "llm/retry-started":
            data = _data(event)
            retry_id, attempt = _member(data, "retryId"), data.get("retry")
            later = [number for (scheduled_id, number) in self._scheduled
                     if scheduled_id == retry_id and isinstance(number, int | float) and isinstance(attempt, int | float)
                     and number > attempt]
            if later:
                raise _refuse(Code.RETRY_START_UNPAIRED, event, f"starts attempt {attempt}, superseded by attempt {max(later)}")
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return plan


# --- INV-REL-22, -25: settlements and commands ----------------------------------------------------------


@hidden_mutant(
    "settle_parent_unchecked", "INV-REL-22", "session", Relations, "plan",
    p.appends(p.turn_start(0), _dispatch("tool/code-dispatch-start", 1, "a"), _dispatch("tool/code-dispatch-start", 2, "b"),
              _dispatch("tool/code-dispatch", 3, "b", parent="a")),
)
def _settle_parent_unchecked(original: Fn) -> Fn:
    """A PTC settlement is matched to its start by root, name and arguments: it may name another parent
    (one still under the same root) than the start did."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        if event.type == "tool/code-dispatch":
            data = _data(event)
            started = self._dispatches.get(_member(data, "subCallId"))
            root, parent = _member(data, "rootCallId"), _member(data, "parentCallId")
            under_root = parent == root or self._dispatch_roots.get(parent) == root
            if started is not None and not started.settled and isinstance(started.parent, str) and under_root:
                event = _with_data(event, {**data, "parentCallId": started.parent})
        return original(self, event, log, surface)  # type: ignore[no-any-return]

    return plan


@hidden_mutant(
    "success_done_must_cite", "INV-REL-25", "session", Relations, "plan",
    p.appends(_command_run(0, "cmd-1"), p.event("command/done", 1, {"commandId": "cmd-1", "kind": "success"})),
)
def _success_done_must_cite(original: Fn) -> Fn:
    """``sourceEventSeq`` is read as carried exactly when the command succeeded: a successful
    ``command/done`` that cites nothing is refused."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        commit: Commit | None = original(self, event, log, surface)
        data = _data(event)
        if event.type == "command/done" and data.get("kind") == "success" and "sourceEventSeq" not in data:
            raise _refuse(Code.COMMAND_DONE_SOURCE_INVALID, event, "reports success without the sourceEventSeq it produced")
        return commit

    return plan


# --- INV-REL-27, -28: titles ----------------------------------------------------------------------------


@hidden_mutant(
    "title_request_sources_unchecked", "INV-REL-27", "session", Relations, "plan",
    p.appends(_plugin_note(0), _title_request(1, [(0, "hi")])),
)
def _title_request_sources_unchecked(original: Fn) -> Fn:
    """Only a ``session/title`` must cite human messages: a ``session/title-llm-request`` may frame any
    cited ``user/message`` (a plugin's too), as long as its frame matches."""

    def plan(self: Relations, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        try:
            return original(self, event, log, surface)  # type: ignore[no-any-return]
        except SeqlogError as error:
            if error.code is not Code.TITLE_SOURCE_NOT_HUMAN or event.type != "session/title-llm-request":
                raise
            refusal = error
        data = _data(event)
        cited: list[tuple[int, str]] = []
        for seq in data.get("messageSeqs", ()):
            message = sl_relations._cited(log, seq)
            if message is None or message.type != "user/message":
                raise refusal
            cited.append((message.seq, message_text(_data(message))))
        messages: Sequence[Any] = data.get("messages", ())
        content: Sequence[Any] = messages[0].get("content", ()) if len(messages) == 1 and isinstance(messages[0], Mapping) else ()
        block: Mapping[str, Any] = content[0] if len(content) == 1 and isinstance(content[0], Mapping) else {}
        if block.get("text") != title_frame(cited):
            raise _refuse(Code.TITLE_REQUEST_FRAMING, event, "messages are not the one framed message of its messageSeqs")
        return None

    return plan


@hidden_mutant(
    "title_frame_sorted_by_seq", "INV-REL-28", "session", sl_relations, "title_frame",
    p.appends(p.user(0), p.user(1), _title_request(2, [(1, "hi"), (0, "hi")])),
)
def _title_frame_sorted_by_seq(original: Fn) -> Fn:
    """The title frame lists the cited messages in log order (by seq), not in the order ``messageSeqs``
    cites them."""

    def title_frame(cited: Sequence[tuple[int, str]]) -> str:
        return original(sorted(cited))  # type: ignore[no-any-return]

    return title_frame
