"""INV-REL: relationships between events (tool lifecycles, compactions, retries, PTC, commands,
titles, delivery markers).

Each postcondition restates one rule over the pre-state, the event, the log and surface before it,
and the state after it.  The state records raw payload members as strict-equality keys
(:func:`_key` spells them as the state does: a number by value, a string or a boolean by type and
value, ``null``, a missing member, and an object or array equal to nothing else); everything the
event itself says is read here from its raw payload.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Hashable, Mapping, Sequence
from typing import TypeGuard

import icontract

from sessionlog_spec.contracts import ENABLED
from sessionlog_spec.contracts._support import accepted
from sessionlog_spec.model import relationships as _relationships
from sessionlog_spec.model.event import Append, Event, Replace
from sessionlog_spec.model.json_value import MAX_SAFE_INTEGER
from sessionlog_spec.model.relationships import RelationState
from sessionlog_spec.model.repair import NOT_STARTED_TEXT
from sessionlog_spec.model.violation import Violation

ABSENT_KEY: Hashable = ("absent",)
NULL_KEY: Hashable = ("null",)
PTC_TYPES = ("tool/code-dispatch-start", "tool/code-dispatch")
COMMAND_TYPES = ("command/run", "command/done")
TITLE_TYPES = ("session/title", "session/title-llm-request")
DELIVERY = "session-log-deepseek/delivery-accepted"
FRAME_PREFIX = "Generate the session title from this JSON array of human messages:\n"
TITLE_PLUGIN = "dsh-session-title-llm"

# -- reading raw members ----------------------------------------------------------------------------


def _key_of(value: object) -> Hashable:
    """The strict-equality key of a present member."""
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, int | float):
        return ("number", value)
    if isinstance(value, str):
        return ("string", value)
    if value is None:
        return NULL_KEY
    return ("object", object())


def _key(obj: Mapping[str, object] | None, name: str) -> Hashable:
    """The key of ``obj[name]``; the missing-member key when ``obj`` has no such member."""
    return _key_of(obj[name]) if obj is not None and name in obj else ABSENT_KEY


def _obj(value: object) -> Mapping[str, object] | None:
    return value if isinstance(value, Mapping) else None


def _at(value: object, *names: str) -> Mapping[str, object] | None:
    """The object reached from ``value`` through the members ``names``, or ``None``."""
    found = _obj(value)
    for name in names:
        found = _obj(found.get(name)) if found is not None else None
    return found


def _items(value: object) -> tuple[object, ...]:
    return tuple(value) if isinstance(value, list | tuple) else ()


def _data(event: Event) -> Mapping[str, object]:
    return _obj(event.data) or {}


def _is_text(value: object, text: str) -> bool:
    return isinstance(value, str) and value == text


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _seq(value: object) -> int | None:
    """A non-negative safe integer (``3.0`` counts), else ``None``."""
    if not _is_number(value) or not math.isfinite(value) or value != int(value):
        return None
    seq = int(value)
    return seq if 0 <= seq <= MAX_SAFE_INTEGER else None


def _json_same(a: object, b: object) -> bool:
    """JSON equality as a JavaScript deep comparison sees it: ``1`` is ``1.0``, ``true`` is not ``1``."""
    if isinstance(a, bool) or isinstance(b, bool) or isinstance(a, str) or isinstance(b, str):
        return type(a) is type(b) and a == b
    if _is_number(a) and _is_number(b):
        return a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return set(a) == set(b) and all(_json_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_json_same(x, y) for x, y in zip(a, b, strict=True))
    return a is None and b is None


def _appended_result(event: Event) -> bool:
    return event.type == "tool/result" and isinstance(event.surface_op, Append)


def _answered_call(event: Event) -> object:
    source = _at(event.data, "message", "source")
    return source.get("callId") if source is not None else None


def calls_are_distinct(state: RelationState) -> bool:
    """The pre-state: no two lifecycles of the open step share a call id (INV-REL-2 kept so far)."""
    calls = [lc.call for lc in state.tools]
    return len(set(calls)) == len(calls)


# -- tool lifecycles --------------------------------------------------------------------------------


def call_starts_an_advertised_call(state: RelationState, event: Event) -> bool:
    """INV-REL-1: a ``tool/call`` had an unstarted lifecycle with its call id, name and arguments."""
    if event.type != "tool/call":
        return True
    data = _data(event)
    call, name, arguments = _key(data, "callId"), _key(data, "name"), _key(data, "arguments")
    return any(not lc.started and lc.call == call and lc.name == name and lc.arguments == arguments for lc in state.tools)


def advertised_ids_are_new(state: RelationState, event: Event) -> bool:
    """INV-REL-2: the tool-call block ids of an ``assistant/message`` differ from each other and from
    every call still pending in the step."""
    if event.type != "assistant/message":
        return True
    message = _at(event.data, "message")
    blocks = [b for b in map(_obj, _items(message.get("content") if message is not None else None)) if b is not None]
    ids = [_key(b, "id") for b in blocks if _is_text(b.get("type"), "tool-call")]
    pending = {lc.call for lc in state.tools}
    return len(set(ids)) == len(ids) and not pending.intersection(ids)


def result_answers_a_pending_call(state: RelationState, event: Event, result: RelationState) -> bool:
    """INV-REL-3: an appended ``tool/result`` answers a pending call, which it resolves (and only it)."""
    if not _appended_result(event):
        return True
    call = _key(_at(event.data, "message", "source"), "callId")
    return any(lc.call == call for lc in state.tools) and len(result.tools) == len(state.tools) - 1


def is_exact_not_started_repair(event: Event) -> bool:
    """The crash-repair result for a call that never started, exactly."""
    data = _data(event)
    error, message = _obj(data.get("error")), _obj(data.get("message"))
    call_id = _answered_call(event)
    blocks = _items(message.get("content")) if message is not None else ()
    block = _obj(blocks[0]) if blocks else None
    inner = _items(block.get("content")) if block is not None else ()
    text = _obj(inner[0]) if len(inner) == 1 else None
    return (
        isinstance(call_id, str)
        and error is not None
        and _is_text(error.get("name"), "ToolNotStartedError")
        and _is_text(error.get("code"), "TOOL_NOT_STARTED")
        and event.source_event_seqs is None
        and message is not None
        and _is_text(message.get("id"), f"interrupted-tool-result-{call_id}-{event.seq}")
        and block is not None
        and block.get("isError") is True
        and text is not None
        and _is_text(text.get("type"), "text")
        and _is_text(text.get("text"), NOT_STARTED_TEXT)
    )


def unstarted_call_gets_the_repair_result(state: RelationState, event: Event) -> bool:
    """INV-REL-4: an appended result answering a call that never started is the exact repair result."""
    if not _appended_result(event):
        return True
    call = _key(_at(event.data, "message", "source"), "callId")
    unstarted = any(lc.call == call and not lc.started for lc in state.tools)
    return not unstarted or is_exact_not_started_repair(event)


def step_ends_resolved(state: RelationState, event: Event) -> bool:
    """INV-REL-5: a ``step/end`` or ``turn/end`` leaves no advertised call unresolved."""
    return event.type not in ("step/end", "turn/end") or not state.tools


# -- compactions ------------------------------------------------------------------------------------


def one_compaction_at_a_time(state: RelationState, event: Event, result: RelationState) -> bool:
    """INV-REL-6: a ``compaction/start`` finds none open and leaves one open; its end closes it."""
    if event.type == "compaction/start":
        return state.compaction is None and result.compaction is not None
    if event.type == "compaction/end":
        return result.compaction is None
    return True


def compaction_acts_in_its_owner_turn(state: RelationState, event: Event) -> bool:
    """INV-REL-7: start, summary and end happen in the owner turn (``null``: between turns), and the
    end names the owner turn of its start."""
    data, compaction = _data(event), state.compaction
    if event.type == "compaction/start":
        return _key(data, "turn") == state.open_turn
    if event.type == "compaction/summary":
        return compaction is not None and compaction.turn == state.open_turn
    if event.type == "compaction/end":
        return compaction is not None and _key(data, "turn") == compaction.turn == state.open_turn
    return True


def _compaction_checkpoint(event: Event) -> Mapping[str, object] | None:
    """The source of a replacing ``user/message`` from the ``compact`` plugin, else ``None``."""
    if event.type != "user/message" or not isinstance(event.surface_op, Replace):
        return None
    source = _at(event.data, "source")
    if source is None or not _is_text(source.get("kind"), "plugin") or not _is_text(source.get("plugin"), "compact"):
        return None
    return source


def names_the_open_compaction(state: RelationState, event: Event) -> bool:
    """INV-REL-8: summary, end and checkpoint name the open compaction's id and source command id."""
    named = _data(event) if event.type in ("compaction/summary", "compaction/end") else _compaction_checkpoint(event)
    if named is None:
        return True
    compaction = state.compaction
    return (
        compaction is not None
        and _key(named, "compactionId") == compaction.compaction_id
        and _key(named, "sourceCommandId") == compaction.source_command_id
    )


def summarised_once(state: RelationState, event: Event, result: RelationState) -> bool:
    """INV-REL-9: a summary meets an unsummarised compaction and leaves it summarised."""
    if event.type != "compaction/summary":
        return True
    before, after = state.compaction, result.compaction
    return before is not None and not before.summarized and after is not None and after.summarized


def success_follows_its_summary(state: RelationState, event: Event) -> bool:
    """INV-REL-10: a ``compaction/end`` without ``error`` ends a summarised compaction."""
    if event.type != "compaction/end" or "error" in _data(event):
        return True
    return state.compaction is not None and state.compaction.summarized


def crossing_is_held_until_retired(state: RelationState, event: Event, result: RelationState) -> bool:
    """INV-REL-11: a turn boundary met while a compaction is open is remembered (the first one); a
    later ``compaction/start`` or ``compaction/end`` finds no remembered crossing; an end-seed
    retires the open compaction."""
    compaction = state.compaction
    if event.type in ("compaction/start", "compaction/end"):
        return compaction is None or compaction.crossed_at is None
    if event.type in ("turn/start", "turn/end") and compaction is not None:
        first = compaction.crossed_at if compaction.crossed_at is not None else event.seq
        return result.compaction is not None and result.compaction.crossed_at == first
    if event.type == "session/end-seed":
        return result.compaction is None
    return True


def finish_has_no_held_crossing(state: RelationState) -> bool:
    """INV-REL-11 at the end of a complete log: no remembered crossing is left undecided."""
    return state.compaction is None or state.compaction.crossed_at is None


def _surface_span(surface: Sequence[int], shadowed_range: Mapping[str, object] | None) -> tuple[int, ...]:
    """The surface nodes from ``start`` to ``end``; none when either is not on the surface or they
    are out of order."""
    start = _seq(shadowed_range.get("start")) if shadowed_range is not None else None
    end = _seq(shadowed_range.get("end")) if shadowed_range is not None else None
    nodes = list(surface)
    if start is None or end is None or start not in nodes or end not in nodes:
        return ()
    i, j = nodes.index(start), nodes.index(end)
    return tuple(nodes[i : j + 1]) if i <= j else ()


def shadowed_is_a_surface_span(event: Event, surface: Sequence[int]) -> bool:
    """INV-REL-12: a summary's or prune's ``shadowedSeqs`` are the surface from start to end, in order."""
    if event.type not in ("compaction/summary", "compaction/prune"):
        return True
    data = _data(event)
    span = _surface_span(surface, _obj(data.get("shadowedRange")))
    named = _items(data.get("shadowedSeqs"))
    return len(named) == len(span) and all(_is_number(n) and n == s for n, s in zip(named, span, strict=True))


# -- retries ----------------------------------------------------------------------------------------


def retry_names_the_current_step(state: RelationState, event: Event) -> bool:
    """INV-REL-13: an ``llm/retry`` names the open turn and its open step, or the step that ended last."""
    if event.type != "llm/retry":
        return True
    data = _data(event)
    step = state.open_step if state.open_step != NULL_KEY else ("number", state.ended_steps)
    return state.open_turn != NULL_KEY and _key(data, "turn") == state.open_turn and _key(data, "step") == step


def retry_uses_the_provider_in_force(state: RelationState, event: Event) -> bool:
    """INV-REL-14: an ``llm/retry`` names the provider of the latest ``request/header``."""
    return event.type != "llm/retry" or _key(_data(event), "provider") == state.provider


def _chain(data: Mapping[str, object]) -> tuple[Hashable, Hashable, Hashable, Hashable]:
    return (_key(data, "turn"), _key(data, "step"), _key(data, "provider"), _key(data, "policyKey"))


def retry_counts_up_its_chain(state: RelationState, event: Event) -> bool:
    """INV-REL-15: attempt 1 of a new chain, or the chain's previous attempt plus one."""
    if event.type != "llm/retry":
        return True
    data = _data(event)
    prior = state.chains.get(_chain(data))
    last = prior.retry if prior is not None else 0
    if not _is_number(last):
        return False
    expected = last + 1
    retry = data.get("retry")
    return "retry" in data and _is_number(retry) and retry == expected


def chain_keeps_one_retry_id(state: RelationState, event: Event) -> bool:
    """INV-REL-16: a chain's attempts share its ``retryId``; a new chain uses an id no chain used."""
    if event.type != "llm/retry":
        return True
    data = _data(event)
    prior = state.chains.get(_chain(data))
    retry_id = _key(data, "retryId")
    return retry_id not in state.retry_ids if prior is None else retry_id == prior.retry_id


def _attempt(event: Event) -> tuple[Hashable, Hashable]:
    data = _data(event)
    return (_key(data, "retryId"), _key(data, "retry"))


def start_answers_a_schedule(state: RelationState, event: Event) -> bool:
    """INV-REL-17: an ``llm/retry-started`` starts a scheduled attempt, at the turn and step it was scheduled for."""
    if event.type != "llm/retry-started":
        return True
    data = _data(event)
    return state.scheduled.get(_attempt(event)) == (_key(data, "turn"), _key(data, "step"))


def attempt_starts_once(state: RelationState, event: Event) -> bool:
    """INV-REL-18: a scheduled attempt had not started yet."""
    return event.type != "llm/retry-started" or _attempt(event) not in state.retries_started


# -- programmatic tool calls ------------------------------------------------------------------------


def dispatch_inside_a_turn(state: RelationState, event: Event) -> bool:
    """INV-REL-19: PTC dispatches happen inside an open turn."""
    return event.type not in PTC_TYPES or state.open_turn != NULL_KEY


def dispatch_keeps_its_tree(state: RelationState, event: Event) -> bool:
    """INV-REL-20: a sub-call keeps its first root; its parent is the root or a sub-call under it."""
    if event.type not in PTC_TYPES:
        return True
    data = _data(event)
    root, parent, child = _key(data, "rootCallId"), _key(data, "parentCallId"), _key(data, "subCallId")
    known = state.ptc_roots.get(child)
    return (known is None or known == root) and (parent == root or state.ptc_roots.get(parent) == root)


def sub_call_starts_once(state: RelationState, event: Event) -> bool:
    """INV-REL-21: a ``tool/code-dispatch-start`` starts a sub-call not started before."""
    return event.type != "tool/code-dispatch-start" or _key(_data(event), "subCallId") not in state.ptc_starts


def settlement_matches_its_start(state: RelationState, event: Event) -> bool:
    """INV-REL-22: a ``tool/code-dispatch`` settles a started, unsettled sub-call with the same root,
    parent, name and JSON-equal arguments (both absent counts as equal)."""
    if event.type != "tool/code-dispatch":
        return True
    data = _data(event)
    start = state.ptc_starts.get(_key(data, "subCallId"))
    return (
        start is not None
        and not start.settled
        and start.root == _key(data, "rootCallId")
        and start.parent == _key(data, "parentCallId")
        and start.name == _key(data, "name")
        and start.arguments[0] == ("arguments" in data)
        and _json_same(start.arguments[1], data.get("arguments"))
    )


# -- commands ---------------------------------------------------------------------------------------


def command_id_is_new(state: RelationState, event: Event) -> bool:
    """INV-REL-23: a ``command/run`` uses a ``commandId`` no earlier run used."""
    return event.type != "command/run" or _key(_data(event), "commandId") not in state.commands


def done_follows_its_run(state: RelationState, event: Event) -> bool:
    """INV-REL-24: a ``command/done`` names a ``commandId`` some earlier run used."""
    return event.type != "command/done" or _key(_data(event), "commandId") in state.commands


def _cited(log: Sequence[Event], raw: object) -> Event | None:
    seq = _seq(raw)
    return log[seq] if seq is not None and seq < len(log) else None


def done_cites_what_it_produced(event: Event, log: Sequence[Event]) -> bool:
    """INV-REL-25: only a successful ``command/done`` carries ``sourceEventSeq``, never citing a command event."""
    data = _data(event)
    if event.type != "command/done" or "sourceEventSeq" not in data:
        return True
    cited = _cited(log, data["sourceEventSeq"])
    return _is_text(data.get("kind"), "success") and (cited is None or cited.type not in COMMAND_TYPES)


# -- titles -----------------------------------------------------------------------------------------


def user_title_cites_nothing(event: Event) -> bool:
    """INV-REL-26: a ``session/title`` cites nothing exactly when the user typed it."""
    if event.type != "session/title":
        return True
    data = _data(event)
    source = _at(data, "source")
    typed = source is not None and _is_text(source.get("kind"), "user")
    return (len(_items(data.get("messageSeqs"))) == 0) == typed


def _is_human(event: Event | None) -> bool:
    source = _at(event.data, "source") if event is not None else None
    return event is not None and event.type == "user/message" and source is not None and _is_text(source.get("kind"), "user")


def titles_cite_humans(event: Event, log: Sequence[Event]) -> bool:
    """INV-REL-27: every seq a title or title request cites is a ``user/message`` a human wrote."""
    if event.type not in TITLE_TYPES:
        return True
    return all(_is_human(_cited(log, raw)) for raw in _items(_data(event).get("messageSeqs")))


_LONE_SURROGATE = re.compile("[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")


def js_stringify(value: object) -> str:
    """``JSON.stringify`` of plain JSON: compact, non-ASCII kept, lone surrogates escaped."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le")


def _human_text(event: Event) -> str:
    blocks = [b for b in map(_obj, _items(_data(event).get("content"))) if b is not None]
    return "\n".join(str(b["text"]) for b in blocks if _is_text(b.get("type"), "text") and isinstance(b.get("text"), str))


def expected_title_frame(event: Event, log: Sequence[Event]) -> str | None:
    """The text a title request must send for its cited messages; ``None`` when one is not in the log."""
    cited = [_cited(log, raw) for raw in _items(_data(event).get("messageSeqs"))]
    if any(c is None for c in cited):
        return None
    return FRAME_PREFIX + js_stringify([{"seq": c.seq, "text": _human_text(c)} for c in cited if c is not None])


def title_request_sends_its_frame(event: Event, log: Sequence[Event]) -> bool:
    """INV-REL-28: a title request sends one ``user`` message from the title plugin, with one text
    block equal to the frame recomputed from its cited messages."""
    if event.type != "session/title-llm-request":
        return True
    messages = _items(_data(event).get("messages"))
    message = _obj(messages[0]) if len(messages) == 1 else None
    source = _at(message, "source")
    content = _items(message.get("content")) if message is not None else ()
    block = _obj(content[0]) if len(content) == 1 else None
    frame = expected_title_frame(event, log)
    return (
        message is not None
        and _is_text(message.get("role"), "user")
        and source is not None
        and _is_text(source.get("kind"), "plugin")
        and _is_text(source.get("plugin"), TITLE_PLUGIN)
        and block is not None
        and _is_text(block.get("type"), "text")
        and frame is not None
        and _is_text(block.get("text"), frame)
    )


# -- delivery markers -------------------------------------------------------------------------------


def marker_names_this_session(state: RelationState, event: Event) -> bool:
    """INV-REL-29: a delivery marker of the log's own generation (absent or ``null`` = 0) names the
    log's session, unless the header names a parent and the marker lies in the inherited seed."""
    identity = state.identity
    if event.type != DELIVERY or identity is None:
        return True
    data = _data(event)
    generation = data.get("sessionFormatVersion")
    generation = 0 if generation is None else generation
    if not (_is_number(generation) and generation == identity.format_version):
        return True
    if identity.has_parent and event.seq < identity.inherited_event_count:
        return True
    return _is_text(data.get("sessionId"), identity.session_id)


# -- the contracted functions -----------------------------------------------------------------------


@icontract.require(lambda state: calls_are_distinct(state), "INV-REL-2", enabled=ENABLED)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or call_starts_an_advertised_call(state, event),
    "INV-REL-1",
    enabled=ENABLED,
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or advertised_ids_are_new(state, event), "INV-REL-2", enabled=ENABLED
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or result_answers_a_pending_call(state, event, result),
    "INV-REL-3",
    enabled=ENABLED,
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or unstarted_call_gets_the_repair_result(state, event),
    "INV-REL-4",
    enabled=ENABLED,
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or step_ends_resolved(state, event), "INV-REL-5", enabled=ENABLED
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or one_compaction_at_a_time(state, event, result),
    "INV-REL-6",
    enabled=ENABLED,
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or compaction_acts_in_its_owner_turn(state, event),
    "INV-REL-7",
    enabled=ENABLED,
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or names_the_open_compaction(state, event), "INV-REL-8", enabled=ENABLED
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or summarised_once(state, event, result), "INV-REL-9", enabled=ENABLED
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or success_follows_its_summary(state, event), "INV-REL-10", enabled=ENABLED
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or crossing_is_held_until_retired(state, event, result),
    "INV-REL-11",
    enabled=ENABLED,
)
@icontract.ensure(
    lambda event, surface, result: not accepted(result) or shadowed_is_a_surface_span(event, surface),
    "INV-REL-12",
    enabled=ENABLED,
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or retry_names_the_current_step(state, event), "INV-REL-13", enabled=ENABLED
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or retry_uses_the_provider_in_force(state, event),
    "INV-REL-14",
    enabled=ENABLED,
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or retry_counts_up_its_chain(state, event), "INV-REL-15", enabled=ENABLED
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or chain_keeps_one_retry_id(state, event), "INV-REL-16", enabled=ENABLED
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or start_answers_a_schedule(state, event), "INV-REL-17", enabled=ENABLED
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or attempt_starts_once(state, event), "INV-REL-18", enabled=ENABLED
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or dispatch_inside_a_turn(state, event), "INV-REL-19", enabled=ENABLED
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or dispatch_keeps_its_tree(state, event), "INV-REL-20", enabled=ENABLED
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or sub_call_starts_once(state, event), "INV-REL-21", enabled=ENABLED
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or settlement_matches_its_start(state, event), "INV-REL-22", enabled=ENABLED
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or command_id_is_new(state, event), "INV-REL-23", enabled=ENABLED
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or done_follows_its_run(state, event), "INV-REL-24", enabled=ENABLED
)
@icontract.ensure(
    lambda event, log, result: not accepted(result) or done_cites_what_it_produced(event, log), "INV-REL-25", enabled=ENABLED
)
@icontract.ensure(lambda event, result: not accepted(result) or user_title_cites_nothing(event), "INV-REL-26", enabled=ENABLED)
@icontract.ensure(
    lambda event, log, result: not accepted(result) or titles_cite_humans(event, log), "INV-REL-27", enabled=ENABLED
)
@icontract.ensure(
    lambda event, log, result: not accepted(result) or title_request_sends_its_frame(event, log), "INV-REL-28", enabled=ENABLED
)
@icontract.ensure(
    lambda state, event, result: not accepted(result) or marker_names_this_session(state, event), "INV-REL-29", enabled=ENABLED
)
def relationship_transition(
    state: RelationState, event: Event, *, log: Sequence[Event], surface: Sequence[int]
) -> RelationState | Violation:
    """The relationship state after ``event`` (``log`` and ``surface`` as before it)."""
    return _relationships.relationship_transition(state, event, log=log, surface=surface)


@icontract.ensure(lambda state, result: not accepted(result) or finish_has_no_held_crossing(state), "INV-REL-11", enabled=ENABLED)
def relationship_finish(state: RelationState) -> Violation | None:
    """The verdict on a complete log, from the state after its last event."""
    return _relationships.relationship_finish(state)
