"""The sixth half of the catalogue, values: the event envelope, lossless JSON, message shapes, seeds,
refusals and payload shapes (INV-LOG, INV-PAY).

Written from the documents (``invariants.md``, the protocol, the on-disk format), the reference model
and seqlog's source alone, without reading the conformance suite or its tests, and never run against
the suite before the measurement that first judges them.  Each mutant is one decision a port's author
could get wrong while reading the same rules: a bound written one past the rule's, two envelope
checks met in the other order, a bound meant for integers applied to doubles, a member typed more
loosely than its table, a malformed message tidied instead of refused, a seed renumbered, state
changed by a refused candidate, a bound of the payload appendix taken one off, an opaque member read
as typed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import seqlog.event as sl_event
import seqlog.jsonvalue as sl_jsonvalue
import seqlog.payloads as sl_payloads
from killrate import probes as p
from killrate.mutants import Fn, hidden_mutant
from seqlog.errors import Code, SeqlogError
from seqlog.event import END_SEED, ENVELOPE_KEYS, Event
from seqlog.jsonvalue import MAX_SAFE_INTEGER, NotLossless
from seqlog.payloads import Broken, Problem
from seqlog.relations import Relations, _Compaction, _member
from seqlog.session import Session

T = p.T
MARKER = "session-log-deepseek/delivery-accepted"


# --- probe pieces -------------------------------------------------------------------------------------


def _note(seq: int, data: object) -> dict[str, Any]:
    """An ignorable event of a type outside the vocabulary: only the envelope and losslessness judge it."""
    return {"type": "x/note", "seq": seq, "time": T + seq, "data": data, "ignorable": True}


def _asked(seq: int, call_id: str, name: str) -> dict[str, Any]:
    """An ``assistant/message`` asking for ``call_id`` by the tool ``name``."""
    event = p.assistant(seq, [call_id])
    event["data"]["message"]["content"][1]["name"] = name
    return event


def _padded_result(seq: int) -> dict[str, Any]:
    """A ``c1`` result whose message has a text block after its tool-result block."""
    event = p.tool_result(seq, "c1")
    event["data"]["message"]["content"].append({"type": "text", "text": "see above"})
    return event


def _referencing(seq: int, input_index: int) -> dict[str, Any]:
    """A user message recalling one other session, listed at ``input_index``."""
    reference = {"sessionId": "s2", "label": "", "capturedThroughSeq": None, "compacted": False, "originalMessages": 2,
                 "retainedMessages": 2, "omittedMessages": 0, "omittedBytes": 0, "truncated": False,
                 "inputIndex": input_index}
    event = p.user(seq)
    event["data"]["source"] = {"kind": "session-reference", "form": "recall", "version": 1, "references": [reference]}
    return event


def _failed_finish(seq: int, status: int) -> dict[str, Any]:
    """A ``finish`` chunk of a stream that failed with HTTP ``status``."""
    failure = {"message": "upstream failed", "code": "UPSTREAM", "status": status}
    return p.event("assistant/chunk", seq, {"turn": 1, "step": 1, "chunk": {"type": "finish",
                                                                          "reason": {"kind": "error", "failure": failure}}})


def _compaction_start(seq: int, turn: int | None) -> dict[str, Any]:
    return p.event("compaction/start", seq, {"compactionId": "k1", "turn": turn})


# --- INV-LOG-1, -2, -4: the envelope and lossless values ----------------------------------------------


@hidden_mutant(
    "bad_type_reported_before_missing_key", "INV-LOG-1", "session", sl_event, "decode_event",
    p.appends({"type": 7, "seq": 0, "data": {"turn": 1}}),
)
def _bad_type_reported_before_missing_key(original: Fn) -> Fn:
    """decode_event judges ``type`` as soon as it is there, before it looks for the missing members: an
    event with a numeric type and no ``time`` is ENVELOPE_BAD_TYPE."""

    def decode_event(raw: object) -> Event:
        if isinstance(raw, Mapping) and ENVELOPE_KEYS.issuperset(raw) and "type" in raw:
            type_ = raw["type"]
            if not isinstance(type_, str) or type_ == "":
                raise SeqlogError(Code.ENVELOPE_BAD_TYPE, "event type must be a non-empty string")
        return original(raw)  # type: ignore[no-any-return]

    return decode_event


@hidden_mutant(
    "time_bound_includes_2_53", "INV-LOG-2", "session", sl_event, "decode_event",
    p.appends({**p.turn_start(0), "time": 2**53}),
)
def _time_bound_includes_2_53(original: Fn) -> Fn:
    """decode_event bounds ``time`` by a magnitude of 2^53 inclusive (the power, not the largest safe
    integer below it), so a time of exactly 2^53 is stored."""

    def decode_event(raw: object) -> Event:
        time = raw.get("time") if isinstance(raw, Mapping) else None
        if type(time) is int and abs(time) == 2**53:
            event: Event = original({**raw, "time": MAX_SAFE_INTEGER if time > 0 else -MAX_SAFE_INTEGER})  # type: ignore[dict-item]
            return Event(event.type, event.seq, time, event.data, event.ignorable, event.surface_op, event.source_event_seqs)
        return original(raw)  # type: ignore[no-any-return]

    return decode_event


@hidden_mutant(
    "surface_op_read_before_lossless_data", "INV-LOG-4", "session", sl_event, "decode_event",
    p.appends({**p.user(0), "data": {**p.user(0)["data"], "source": {"kind": "user", "rpcId": "r", "weight": -0.0}},
               "surfaceOp": "prepend"}),
)
def _surface_op_read_before_lossless_data(original: Fn) -> Fn:
    """decode_event reads ``surfaceOp`` before it freezes ``data``: an event with a malformed op and a
    lossy value in its data is SURFACE_OP_INVALID, where the value is judged first."""

    def decode_event(raw: object) -> Event:
        try:
            return original(raw)  # type: ignore[no-any-return]
        except SeqlogError as error:
            op = raw.get("surfaceOp") if isinstance(raw, Mapping) and error.code is Code.JSON_NOT_LOSSLESS else None
            data_lossy = isinstance(raw, Mapping) and sl_jsonvalue.lossless_problem(raw.get("data")) is not None
            if op is not None and data_lossy and sl_jsonvalue.lossless_problem(op) is None:
                sl_event.decode_surface_op(op)
            raise

    return decode_event


@hidden_mutant(
    "large_integral_float_refused", "INV-LOG-4", "session", sl_jsonvalue, "_scalar",
    p.appends(_note(0, {"bytesPerSecond": 1e16})),
)
def _large_integral_float_refused(original: Fn) -> Fn:
    """The safe-integer bound is applied to integral doubles too: ``1e16``, a finite double that reads
    back exactly, is refused as an integer outside the safe range."""

    def _scalar(value: object) -> object:
        if type(value) is float and value.is_integer() and abs(value) > MAX_SAFE_INTEGER:
            raise NotLossless("is an integer outside the safe range")
        return original(value)

    return _scalar


# --- INV-LOG-5, -8, -9, -10, -11: contiguity, messages, seeds, refusals ----------------------------------


@hidden_mutant(
    "seed_renumbered_by_position", "INV-LOG-5", "session", Session, "create",
    ({"op": "reset"}, {"op": "seed", "events": [p.turn_start(0), {**p.user(1), "seq": 4}]}, {"op": "state"}),
)
def _seed_renumbered_by_position(original: Fn) -> Fn:
    """A seed is copied from its parent and renumbered by position, so a seed with a gap in its seqs is
    taken instead of refused as not contiguous."""

    def create(cls: type[Session], seed: Any = None, header: Any = None, *, clock: Any = None) -> Session:
        if seed is not None:
            seed = [{**raw, "seq": index} if isinstance(raw, Mapping) and "seq" in raw else raw for index, raw in enumerate(seed)]
        return original(cls, seed, header, clock=clock)  # type: ignore[no-any-return]

    return create


@hidden_mutant(
    "tool_call_block_name_may_be_empty", "INV-LOG-8", "session", sl_payloads, "payload_problem",
    p.appends(p.turn_start(0), p.step_start(1), _asked(2, "c1", "")),
)
def _tool_call_block_name_may_be_empty(original: Fn) -> Fn:
    """A tool-call block's ``name`` is typed as a string, as its ``arguments`` are: an assistant message
    asking for a tool with an empty name is stored."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        message = data.get("message") if event_type == "assistant/message" and isinstance(data, Mapping) else None
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(data, Mapping) and isinstance(message, Mapping) and isinstance(content, tuple | list):
            named = [{**block, "name": "x"} if isinstance(block, Mapping) and block.get("type") == "tool-call"
                     and block.get("name") == "" else block for block in content]
            data = {**data, "message": {**message, "content": named}}
        return original(event_type, data, seq, generation)  # type: ignore[no-any-return]

    return payload_problem


@hidden_mutant(
    "tool_result_extra_blocks_dropped", "INV-LOG-9", "session", sl_event, "decode_event",
    p.appends(p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]), p.tool_call(3, "c1"), _padded_result(4)),
)
def _tool_result_extra_blocks_dropped(original: Fn) -> Fn:
    """A ``tool/result`` whose message holds blocks after its tool-result block is stored with that block
    alone (the rest taken as padding), instead of refused for not holding exactly one block."""

    def decode_event(raw: object) -> Event:
        if isinstance(raw, Mapping) and raw.get("type") == "tool/result":
            data = raw.get("data")
            message = data.get("message") if isinstance(data, Mapping) else None
            content = message.get("content") if isinstance(message, Mapping) else None
            first = content[0] if isinstance(content, list) and len(content) > 1 else None
            if isinstance(first, Mapping) and first.get("type") == "tool-result":
                raw = {**raw, "data": {**data, "message": {**message, "content": [first]}}}  # type: ignore[dict-item]
        return original(raw)  # type: ignore[no-any-return]

    return decode_event


@hidden_mutant(
    "end_seed_timed_by_latest_time", "INV-LOG-10", "session", Session, "create",
    ({"op": "reset"},
     {"op": "seed", "events": [{**p.turn_start(0), "time": T + 50}, p.user(1)]},
     {"op": "save"}),
)
def _end_seed_timed_by_latest_time(original: Fn) -> Fn:
    """The end-of-seed marker takes the latest time of the seed (times taken as never going back), not
    the time of the seed's last event."""

    def create(cls: type[Session], seed: Any = None, header: Any = None, *, clock: Any = None) -> Session:
        if seed is not None:
            seed = list(seed)
            times = [raw["time"] for raw in seed if isinstance(raw, Mapping) and type(raw.get("time")) is int]
            last = seed[-1] if seed else None
            if isinstance(last, Mapping) and last.get("type") != END_SEED and times and max(times) != last.get("time"):
                seed.append({"type": END_SEED, "seq": len(seed), "time": max(times), "data": {}})
        return original(cls, seed, header, clock=clock)  # type: ignore[no-any-return]

    return create


@hidden_mutant(
    "refused_compaction_start_holds_lock", "INV-LOG-11", "session", Relations, "plan",
    p.appends(p.turn_start(0), _compaction_start(1, None), _compaction_start(1, 1)),
)
def _refused_compaction_start_holds_lock(original: Fn) -> Fn:
    """A ``compaction/start`` takes the compaction lock before it checks its owner turn, so one refused
    for naming the wrong turn still holds the lock, and the corrected start is an overlap."""

    def plan(self: Relations, event: Event, log: Any, surface: Any) -> Any:
        try:
            return original(self, event, log, surface)
        except SeqlogError as error:
            if error.code is Code.COMPACTION_TURN_MISMATCH and event.type == "compaction/start" and self._compaction is None:
                data = event.data if isinstance(event.data, Mapping) else {}
                self._compaction = _Compaction(_member(data, "compactionId"), _member(data, "sourceCommandId"),
                                               _member(data, "turn"), event.seq)
            raise

    return plan


# --- INV-PAY: payload shapes --------------------------------------------------------------------------


def _failures(value: object) -> list[Mapping[str, Any]]:
    """Every object below ``value`` shaped like a model-call failure (a ``message`` and a ``code``)."""
    found: list[Mapping[str, Any]] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            if "message" in item and "code" in item and "status" in item:
                found.append(item)
            stack.extend(item.values())
        elif isinstance(item, tuple | list):
            stack.extend(item)
    return found


@hidden_mutant(
    "failure_status_upper_bound_exclusive", "INV-PAY-2", "session", sl_payloads, "payload_problem",
    p.appends(p.turn_start(0), p.step_start(1), _failed_finish(2, 599)),
)
def _failure_status_upper_bound_exclusive(original: Fn) -> Fn:
    """A failure's HTTP ``status`` is bounded as ``100 <= status < 599``: the last status of the range,
    599, is refused."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        if any(failure.get("status") == 599 for failure in _failures(data)):
            return Problem(("status",), "must be at most 598")
        return original(event_type, data, seq, generation)  # type: ignore[no-any-return]

    return payload_problem


@hidden_mutant(
    "context_window_zero_accepted", "INV-PAY-2", "session", sl_payloads, "payload_problem",
    p.appends(p.turn_start(0), p.event("request/context", 1, {"provider": "p", "model": "m", "contextWindow": 0})),
)
def _context_window_zero_accepted(original: Fn) -> Fn:
    """``request/context.contextWindow`` is read as a count, like the token counts beside it: a window of
    0 tokens, which the positive bound refuses, is stored."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        if event_type == "request/context" and isinstance(data, Mapping) and data.get("contextWindow") == 0:
            data = {**data, "contextWindow": 1}
        return original(event_type, data, seq, generation)  # type: ignore[no-any-return]

    return payload_problem


@hidden_mutant(
    "item_index_counted_from_one", "INV-PAY-2", "session", sl_payloads, "relation_problem",
    p.appends(_referencing(0, 0)),
)
def _item_index_counted_from_one(original: Fn) -> Fn:
    """``itemIndex`` is read as the item's ordinal (1, 2, …), not its index: a recalled session listed
    first with ``inputIndex`` 0 is refused."""

    def relation_problem(rule: Mapping[str, Any], value: object) -> Broken | None:
        if rule.get("relation") == "itemIndex" and isinstance(value, tuple | list):
            member = rule["member"]
            for index, item in enumerate(value):
                if isinstance(item, Mapping) and member in item and item[member] != index + 1:
                    return Broken((index, member), f"must be {index + 1}, the item's ordinal")
            return None
        return original(rule, value)  # type: ignore[no-any-return]

    return relation_problem


@hidden_mutant(
    "future_descriptor_version_refused", "INV-PAY-3", "session", sl_payloads, "payload_problem",
    p.appends(p.event("subagent/descriptor", 0, {"version": 4, "mode": "one-shot", "provider": "p"})),
)
def _future_descriptor_version_refused(original: Fn) -> Fn:
    """``subagent/descriptor`` is read as a closed union of its released version: a descriptor of a later
    ``version``, which the owner may add without a format change, is refused."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        if event_type == "subagent/descriptor" and isinstance(data, Mapping) and data.get("version") != 3:
            return Problem(("version",), "must be 3")
        return original(event_type, data, seq, generation)  # type: ignore[no-any-return]

    return payload_problem


@hidden_mutant(
    "unversioned_marker_members_typed", "INV-PAY-3", "session", sl_payloads, "payload_problem",
    p.appends(p.event(MARKER, 0, {"sessionId": 7, "throughSeq": "all"})),
)
def _unversioned_marker_members_typed(original: Fn) -> Fn:
    """A delivery marker without ``sessionFormatVersion`` is held to the members of the current
    generation's marker (a non-empty string id, an earlier seq), though generation 0's are opaque."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        if event_type == MARKER and isinstance(data, Mapping) and "sessionFormatVersion" not in data:
            session_id, through = data.get("sessionId"), data.get("throughSeq")
            if not isinstance(session_id, str) or session_id == "":
                return Problem(("sessionId",), "must be a non-empty string")
            if type(through) is not int or not 0 <= through < seq:
                return Problem(("throughSeq",), f"must identify an earlier event (below seq {seq})")
        return original(event_type, data, seq, generation)  # type: ignore[no-any-return]

    return payload_problem
