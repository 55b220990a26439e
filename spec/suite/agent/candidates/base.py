"""What the invalid candidates of every rule group are built with.

The registry's types (:class:`Mutation`, :class:`Candidate`, the :class:`Registry` each group module
registers its builders in), the header line of every ``load`` candidate, readers of a
:class:`~sessionlog_spec.suite.agent.builder.SessionBuilder`'s state, and the *scenes*: the valid events
a rule needs before its fault can be shown, built on a scratch copy of the builder, and the model's
answer to a candidate on its path.  It holds no candidate of its own.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from sessionlog_spec.model import compaction as model_compaction
from sessionlog_spec.model.event import SURFACE_TYPES, Event
from sessionlog_spec.model.json_value import freeze, thaw
from sessionlog_spec.model.jsonl import encode_jsonl
from sessionlog_spec.model.legacy import StoredLog
from sessionlog_spec.model.load import load_session as model_load_session
from sessionlog_spec.model.messages import tool_call_ids, tool_result_call_id
from sessionlog_spec.model.session import SessionState
from sessionlog_spec.model.session import append_event as model_append_event
from sessionlog_spec.model.session import seed_session as model_seed_session
from sessionlog_spec.model.violation import Code, Violation
from sessionlog_spec.suite.agent.actions import open_calls
from sessionlog_spec.suite.agent.builder import PROVIDER, RawEvent, SessionBuilder, basic_header, text_block
from sessionlog_spec.suite.judged import appended, decoded, folded, upgraded

Context = Literal["append", "seed", "load", "upgrade", "cuts"]
CONTEXTS: tuple[Context, ...] = ("append", "seed", "load", "upgrade", "cuts")
Build = Callable[[SessionBuilder, random.Random], Any]

STORED_HEADER: dict[str, Any] = {
    "type": "session",
    "version": 1,
    "id": "mutant-session",
    "createdAt": 1_700_000_000_000,
    "delegationDepth": 0,
}
"""The header line of every ``load`` candidate (before the mutation changes it)."""


@dataclass(frozen=True, slots=True)
class Mutation:
    """A named way to make one invalid candidate refused with ``code`` in ``context``."""

    name: str
    code: Code
    context: Context
    build: Build
    """``build(builder, rng)``: the candidate, or ``None`` when the builder's state does not allow it."""
    lifted_from: str | None = None
    """For an ``append`` candidate lifted to another path: the mutation it was lifted from.  The path
    may refuse it for another reason first (the edge checks the v0 source before the v1 rules), so its
    candidates are refused, but not always with ``code``."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """One built candidate and the mutation that built it."""

    mutation: Mutation
    value: Any

    @property
    def code(self) -> Code:
        """The code the model refuses ``value`` with."""
        return self.mutation.code

    @property
    def context(self) -> Context:
        """Where ``value`` is submitted."""
        return self.mutation.context


_B = TypeVar("_B", bound=Build)


class Registry:
    """The mutations one module registers with :meth:`candidate`, in the order its builders are defined."""

    __slots__ = ("mutations",)

    def __init__(self) -> None:
        self.mutations: list[Mutation] = []

    def candidate(self, code: Code, context: Context) -> Callable[[_B], _B]:
        """Register the decorated builder as a mutation named after it, refused with ``code`` in ``context``."""

        def register(build: _B) -> _B:
            self.mutations.append(Mutation(build.__name__, code, context, build))
            return build

        return register


# -- reading the builder's state -------------------------------------------------------------------


def edge_int(rng: random.Random, lo: int, hi: int) -> int:
    """An integer from ``lo`` to ``hi`` (both included), each end one time in four.

    Where a rule compares a seq with a bound (a seed's length, the latest event), the value at the
    bound is the one a port gets wrong by one; drawn uniformly it came up once in the log's length.
    """
    pick = rng.randrange(4)
    return lo if pick == 0 else hi if pick == 1 else rng.randint(lo, hi)


def _scratch(builder: SessionBuilder) -> SessionBuilder:
    """A copy to build uncommitted events with, so the caller's clock and id counter do not move."""
    return copy.copy(builder)


def _open_turn(b: SessionBuilder) -> int | None:
    return b.state.trace.open_turn


def _open_step(b: SessionBuilder) -> tuple[int, int] | None:
    trace = b.state.trace
    if trace.open_turn is None or trace.open_step is None:
        return None
    return trace.open_turn, trace.open_step


def _step_events(b: SessionBuilder) -> list[Event]:
    """The events of the open step, after its ``step/start``."""
    out: list[Event] = []
    for event in reversed(b.state.events):
        if event.type == "step/start":
            break
        out.append(event)
    return out[::-1]


def _data(event: Event) -> dict[str, Any]:
    data = thaw(event.data)
    assert isinstance(data, dict)
    return data


def _shadowed_seqs(b: SessionBuilder) -> list[int]:
    """Message events a replacement took off the surface."""
    nodes = set(b.state.surface.nodes)
    return [e.seq for e in b.state.events if e.type in SURFACE_TYPES and e.seq not in nodes]


def _off_surface_seqs(b: SessionBuilder) -> list[int]:
    """Seqs in the log that are not surface nodes."""
    nodes = set(b.state.surface.nodes)
    return [e.seq for e in b.state.events if e.seq not in nodes]


def _tool_results(b: SessionBuilder) -> list[int]:
    return b.tool_result_seqs()


def _shadowed_by(b: SessionBuilder, start: int, end: int) -> list[int]:
    nodes = b.state.surface.nodes
    return list(nodes[nodes.index(start) : nodes.index(end) + 1])


def _benign(b: SessionBuilder, rng: random.Random) -> RawEvent:
    """A plugin event that is valid in every state: a session title the user set (it cites no message)."""
    title = rng.choice(("Fix the failing test", "Refactor the parser", "Untitled"))
    return b.event("session/title", {"title": title, "messageSeqs": [], "source": {"kind": "user"}}, False)


def _elided(data: dict[str, Any], text: str = "[output elided]") -> dict[str, Any]:
    """A tool-result payload with its block's content replaced, as a rewrite writes it."""
    out = copy.deepcopy(data)
    out["message"]["content"][0]["content"] = [text_block(text)]
    return out


def _rewrite(b: SessionBuilder, start: int, end: int, data: dict[str, Any]) -> RawEvent:
    op = {"op": "replace", "start": start, "end": end}
    return b.event("tool/result", data, False, surfaceOp=op, sourceEventSeqs=_shadowed_by(b, start, end))


def _header_event(b: SessionBuilder, header: dict[str, Any], reason: str = "change", **extra: Any) -> RawEvent:
    return b.event("request/header", {"header": header, "reason": reason, **extra}, False)


def _legal_range(b: SessionBuilder, rng: random.Random) -> tuple[int, int] | None:
    ranges = b.legal_ranges()
    return rng.choice(ranges) if ranges else None


def _summary_event(b: SessionBuilder, rng: random.Random, **envelope: Any) -> RawEvent | None:
    """A ``compaction/summary`` over a legal range with ``envelope`` added (``None`` when the surface
    has no legal range).

    It is the summary the open compaction waits for when there is one, so that the envelope member
    is its only fault.  Elsewhere it names a compaction of its own that no ``compaction/start``
    opened: a second fault, but one no reader reaches, since the envelope is checked first (by the
    model and by the released reader alike).
    """
    picked = _legal_range(b, rng)
    if picked is None:
        return None
    start, end = picked
    compaction = b.open_compaction()
    if compaction is not None and not compaction.summarized:
        event = b.compaction_summary(start, end, commit=False)
    else:
        shadowed = _shadowed_by(b, start, end)
        data = {
            "compactionId": f"compaction-{b.next_seq}",
            "summary": [text_block("Summary of earlier work.")],
            "shadowedRange": {"start": start, "end": end},
            "shadowedSeqs": shadowed,
            "shadowedTokenCount": 40 * len(shadowed),
            **PROVIDER,
        }
        event = b.event("compaction/summary", data, False)
    return {**event, **{k: v(start, end) for k, v in envelope.items()}}


def _jsonl_lines(builder: SessionBuilder, header: dict[str, Any] | None = None) -> list[str]:
    """The stored form of the builder's log, one string per line (without newlines)."""
    return encode_jsonl(header or STORED_HEADER, builder.state.events).split("\n")[:-1]


def _text(lines: Sequence[str]) -> str:
    return "".join(line + "\n" for line in lines)


def _assistant(b: SessionBuilder, calls: Sequence[str] = ("call-x",)) -> RawEvent:
    return b.assistant_message("Reading.", calls, commit=False)


def _unstarted_calls(b: SessionBuilder) -> list[str]:
    """Calls the open step asked for whose start is not recorded yet (in the order they were asked for)."""
    events = _step_events(b)
    asked = [c for e in events for c in tool_call_ids(e)]
    done = {str(_data(e)["callId"]) for e in events if e.type == "tool/call"}
    done |= {c for e in events if e.type == "tool/result" and (c := tool_result_call_id(e))}
    return [c for c in asked if c not in done]


# -- scenes: the valid events a rule needs before its fault can be shown ---------------------------
#
# Where a rule bites only in a state the builder may not be in (an open turn or step, a call asked
# for, an open compaction), a candidate writes the valid events that lead there on a scratch
# builder, then the fault: appended, or as a ``seed`` or ``load`` candidate.  The candidates of the
# payload table (INV-PAY), the relationships between events (INV-REL) and the v0 source
# (INV-LEGACY-9) are built this way most, and the groups' scenes of their own live with them.


def _put(b: SessionBuilder, raw: RawEvent) -> bool:
    """Commit ``raw`` on the scratch builder ``b`` when the model accepts it there."""
    if isinstance(model_append_event(b.state, raw), Violation):
        return False
    b.commit(raw)
    return True


def _compaction_open(b: SessionBuilder) -> bool:
    return b.state.relations.compaction is not None


def _enter_turn(b: SessionBuilder) -> bool:
    """Open a turn on the scratch builder ``b`` with the user's message, when none is open; ``False``
    when that would cross an open compaction."""
    if b.state.trace.open_turn is not None:
        return True
    if _compaction_open(b) or not _put(b, b.turn_start(commit=False)):
        return False
    return _put(b, b.user_message("Please fix the failing test in parser.py.", commit=False))


def _enter_step(b: SessionBuilder) -> bool:
    """Open a step on the scratch builder ``b`` (a turn with a user message first, when none is open)
    with a request header in force; ``False`` when that would cross an open compaction."""
    if b.state.trace.open_step is None and not (_enter_turn(b) and _put(b, b.step_start(commit=False))):
        return False
    if b.request_provider() is None:
        return _put(b, b.request_header(basic_header(), "initial" if b.state.header is None else "resume", commit=False))
    return True


def _leave_turn(b: SessionBuilder) -> bool:
    """Close the open turn on the scratch builder ``b`` (answering what its step asked for);
    ``False`` when that would cross an open compaction."""
    return b.state.trace.open_turn is None or (not _compaction_open(b) and _close_turn(b))


def _close_turn(b: SessionBuilder) -> bool:
    """End the open turn on the scratch builder ``b``: answer what its open step asked for (a result
    for each started call, the repair record for each call never started), end the step, end the turn."""
    return _leave_step(b) and _put(b, b.turn_end(commit=False))


def _leave_step(b: SessionBuilder) -> bool:
    """End the open step on the scratch builder ``b``, if one is open, answering what it asked for."""
    if b.state.trace.open_step is None:
        return True
    unstarted, started = open_calls(b)
    for call in unstarted:
        if not _put(b, b.not_started_result(call, commit=False)):
            return False
    for call in started:
        if not _put(b, b.tool_result(call, commit=False)):
            return False
    return _put(b, b.step_end(commit=False))


def _advertised(b: SessionBuilder, started: bool | None = None) -> list[str]:
    """The calls advertised in the open step and not yet answered (only the started ones, or only the
    unstarted ones, when ``started`` says so), as the relationship rules track them."""
    out = []
    for lifecycle in b.state.relations.tools:
        call = lifecycle.call
        if not (isinstance(call, tuple) and len(call) == 2 and call[0] == "string"):
            continue
        if isinstance(call[1], str) and (started is None or lifecycle.started == started):
            out.append(call[1])
    return out


def _asked_call(b: SessionBuilder) -> str | None:
    """On the scratch builder ``b``: open a step and commit an assistant message asking for one new
    call; its id, or ``None`` when the state does not allow it."""
    if not _enter_step(b):
        return None
    call = f"call-{b.next_seq}"
    return call if _put(b, b.assistant_message("Let me read the parser.", [call], commit=False)) else None


def _started_call(b: SessionBuilder) -> str | None:
    """On the scratch builder ``b``: a call asked for (see :func:`_asked_call`) and started; its id."""
    call = _asked_call(b)
    return call if call is not None and _put(b, b.tool_call(call, commit=False)) else None


def _seed_with(b: SessionBuilder, *faults: RawEvent) -> list[RawEvent]:
    """The scratch builder's log followed by ``faults``: a seed candidate."""
    return [*b.events, *faults]


def _stored_with(b: SessionBuilder, *faults: RawEvent, header: dict[str, Any] | None = None) -> str:
    """The scratch builder's log as a stored v1 log, followed by ``faults``: a load candidate."""
    return _text([*_jsonl_lines(b, header), *(json.dumps(f) for f in faults)])


def _as_stored(seed: object) -> str | None:
    """A seed candidate (an event list ending with its fault) as a stored v1 log: the same scene and
    fault on the load path (``None`` stays ``None``)."""
    if not isinstance(seed, list):
        return None
    return _text([json.dumps(STORED_HEADER), *(json.dumps(event) for event in seed)])


def cuts_answer(state: SessionState, ask: Mapping[str, Any], balance: Any) -> object:
    """What ``cuts`` answers for ``ask`` (its members beyond the log) after ``state``, in the op's
    order: the log (a whole session), the balance at every cut, then ``seq``, then ``region``.
    ``balance`` is the compaction module, contracted or plain."""
    if "events" in ask:
        whole = folded(ask["events"])
        if isinstance(whole, Violation):
            return whole
        state = whole
    nodes, events = state.surface.nodes, state.events
    answer: object = balance.cut_balances(nodes, events)
    if not isinstance(answer, Violation) and "seq" in ask:
        answer = balance.balanced_around(nodes, events, ask["seq"])
    if not isinstance(answer, Violation) and "region" in ask:
        answer = balance.region_shadowed(nodes, events, ask["region"]["start"], ask["region"]["end"])
    return answer


def _model_answer(builder: SessionBuilder, context: Context, value: Any) -> object:
    """The model's answer to ``value`` in ``context`` (what :func:`submit` answers, without the contracts)."""
    if context == "append":
        return appended(builder.state, value)
    if context == "seed":
        return model_seed_session(value, folded)
    if context == "load":
        return model_load_session(value, folded, decoded)
    if context == "upgrade":
        header, events = freeze(value["header"]), tuple(freeze(e) for e in value["events"])
        assert isinstance(header, Mapping)
        return upgraded(StoredLog(header, events))  # type: ignore[arg-type]
    return cuts_answer(builder.state, value, model_compaction)


def _refused(builder: SessionBuilder, context: Context, code: Code, value: Any) -> Any:
    """``value`` when the model refuses it with ``code`` in ``context``, else ``None``."""
    answer = _model_answer(builder, context, value)
    return value if isinstance(answer, Violation) and answer.code is code else None
