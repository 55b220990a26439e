"""Relationships between events: which earlier event each event answers (INV-REL-1..29).

The trace says where an event may sit; this module says what it pairs with.  :class:`Relations`
follows the log event by event and keeps only what later events can still pair with:

* the calls advertised by the open step's ``assistant/message`` tool-call blocks, until started
  (``tool/call``) and answered (an appended ``tool/result``; a call that never started only by the
  exact crash-repair result); a step or turn does not end with one unanswered;
* the open compaction: one at a time, owned by the turn it started in (``null`` between turns),
  summarised at most once and before a successful end, its summary and prunes naming an exact span
  of the current surface, never crossed by a turn boundary unless a ``session/end-seed`` retires it
  as a crash orphan;
* retry policy chains (turn, step, provider, ``policyKey``) with their one ``retryId``, and the
  scheduled attempts with whether they started;
* programmatic tool calls by ``subCallId``: their root, and their start until it settles;
* command ids that ran; titles and ``command/done`` cite earlier events by seq, looked up in the log;
* delivery markers of the log's own generation name the log's own session (when the session knows
  its identity, see :class:`LogIdentity`).

Every structure is a dict or set updated in place, so an event costs O(1) amortised; only a
compaction summary or prune reads the surface (O(surface), and those are rare).  Checking and
changing are split so that a refused event changes nothing: :meth:`Relations.plan` checks one
event against the current state and returns the change as a closure (``None`` when there is none),
which the session runs only when it commits the event.

Members are compared as a JavaScript reader compares them with ``===``: ``1`` is ``1.0``, ``true``
is not ``1``, a missing member equals only a missing member, and an object or array equals nothing.
:func:`_key` turns a member into a hashable stand-in with exactly that equality; only PTC arguments
are compared structurally (:func:`seqlog.jsonvalue.json_equal`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from seqlog.errors import Code, SeqlogError
from seqlog.event import Append, Event
from seqlog.jsonvalue import FrozenObject, as_int, json_equal
from seqlog.repair import NOT_STARTED_TEXT
from seqlog.surface import SurfaceManager

Commit = Callable[[], None]
"""The state change of an accepted event, run when the session commits it."""

COMPACT_PLUGIN = "compact"
TITLE_PLUGIN = "dsh-session-title-llm"
TITLE_FRAME_PREFIX = "Generate the session title from this JSON array of human messages:\n"
DELIVERY_MARKER = "session-log-deepseek/delivery-accepted"
_COMMAND_TYPES = frozenset({"command/run", "command/done"})
_NO_DATA: Mapping[str, Any] = FrozenObject()


# Strict equality of raw members ---------------------------------------------------------------------


class _Sentinel:
    """A key no JSON value has: the missing member, and ``true`` / ``false`` kept apart from 1 / 0."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name


class _Opaque:
    """The key of an object or array member: equal to nothing but itself."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<object>"


_ABSENT = _Sentinel("<absent>")
_TRUE = _Sentinel("true")
_FALSE = _Sentinel("false")
_UNSEEN = _Sentinel("<unseen>")
"""A dict default that no key equals."""


def _key(value: object) -> object:
    """A hashable stand-in for a member, equal to another exactly when the members are ``===``.

    Strings and numbers stand for themselves (Python already has ``1 == 1.0`` and ``"1" != 1``),
    ``null`` is ``None``; booleans get sentinels so that ``True`` stays apart from ``1``.
    """
    kind = type(value)
    if kind is str or kind is int or kind is float or value is None or value is _ABSENT:
        return value
    if kind is bool:
        return _TRUE if value else _FALSE
    return _Opaque()


def _obj(value: object) -> Mapping[str, Any] | None:
    """``value`` when it is a JSON object."""
    return value if type(value) is FrozenObject or isinstance(value, Mapping) else None


def _arr(value: object) -> Sequence[Any]:
    """``value`` when it is a JSON array, else empty (payload rules judge shapes, not this module)."""
    return value if isinstance(value, tuple | list) else ()


def _at(obj: Mapping[str, Any] | None, name: str) -> Mapping[str, Any] | None:
    """``obj[name]`` when both are objects."""
    return _obj(obj.get(name)) if obj is not None else None


def _member(obj: Mapping[str, Any] | None, name: str) -> object:
    """The key of ``obj[name]``; missing when ``obj`` is no object or lacks ``name``."""
    if obj is None:
        return _ABSENT
    return _key(obj.get(name, _ABSENT))


def _is(obj: Mapping[str, Any] | None, name: str, text: str) -> bool:
    """Whether ``obj[name]`` is the string ``text``."""
    if obj is None:
        return False
    value = obj.get(name)
    return type(value) is str and value == text


def _is_number(value: object) -> bool:
    kind = type(value)
    return kind is int or kind is float


def _shown(obj: Mapping[str, Any] | None, name: str) -> str:
    """A member for a message."""
    if obj is None or name not in obj:
        return "<absent>"
    value = obj[name]
    return "<object>" if isinstance(value, Mapping | tuple | list) else json.dumps(value, ensure_ascii=False)


def _refuse(code: Code, event: Event, problem: str) -> SeqlogError:
    return SeqlogError(code, f"{event.type} at seq {event.seq} {problem}")


# The identity the delivery-marker rule checks against -------------------------------------------------


@dataclass(frozen=True, slots=True)
class LogIdentity:
    """What a session header line says about the log it heads, for INV-REL-29."""

    session_id: str
    version: int = 1
    """The generation that wrote the log: markers accepted by it are the log's own."""
    has_parent: bool = False
    seed_length: int = 0
    """With a parent, the events before this seq were copied from it, markers included."""

    @classmethod
    def of_header(cls, header: Mapping[str, Any]) -> LogIdentity:
        """The identity a v1 session header line (a v0 log's after the edge) declares to the reader."""
        seed_length = header.get("seedLength", 0)
        return cls(
            session_id=str(header.get("id", "")),
            version=1,
            has_parent="parentSession" in header,
            seed_length=as_int(seed_length) or 0,  # 3.0 is the count 3, as the header line's check reads it
        )


# The mutable records ----------------------------------------------------------------------------------


class _Compaction:
    """The open compaction."""

    __slots__ = ("command", "compaction_id", "crossed_at", "start_seq", "summarized", "turn")

    def __init__(self, compaction_id: object, command: object, turn: object, start_seq: int) -> None:
        self.compaction_id = compaction_id
        self.command = command
        self.turn = turn
        """The owner turn's key; ``None`` (JSON null) for a compaction between turns."""
        self.start_seq = start_seq
        self.summarized = False
        self.crossed_at: int | None = None
        """The first turn boundary met while open: refused unless an end-seed retires the compaction."""


class _Dispatch:
    """A started programmatic tool call."""

    __slots__ = ("arguments", "has_arguments", "name", "parent", "root", "settled")

    def __init__(self, root: object, parent: object, name: object, has_arguments: bool, arguments: object) -> None:
        self.root = root
        self.parent = parent
        self.name = name
        self.has_arguments = has_arguments
        self.arguments = arguments
        self.settled = False


_Advertised = tuple[object, object, bool]
"""An advertised call: its name and raw arguments keys, and whether a ``tool/call`` started it."""


class Relations:
    """The relationship state of a log, grown one committed event at a time."""

    __slots__ = (
        "_chains",
        "_commands",
        "_compaction",
        "_dispatch_roots",
        "_dispatches",
        "_ended_steps",
        "_open_step",
        "_open_turn",
        "_provider",
        "_retry_ids",
        "_scheduled",
        "_started_attempts",
        "_tools",
        "identity",
    )

    def __init__(self, identity: LogIdentity | None = None) -> None:
        self.identity = identity
        """The session's identity; without one, delivery markers are not checked."""
        self._open_turn: object = None
        """The open turn's key; ``None`` between turns."""
        self._open_step: object = None
        self._ended_steps = 0
        """``step/end`` events in the open turn: a retry between steps names the last one."""
        self._tools: dict[object, _Advertised] = {}
        self._provider: object = _ABSENT
        self._compaction: _Compaction | None = None
        self._chains: dict[tuple[object, object, object, object], tuple[object, object]] = {}
        """Each retry policy chain's ``retryId`` key and latest raw ``retry``."""
        self._retry_ids: set[object] = set()
        self._scheduled: dict[tuple[object, object], tuple[object, object]] = {}
        """Each scheduled attempt (``retryId``, ``retry``) with the turn and step it was scheduled for."""
        self._started_attempts: set[tuple[object, object]] = set()
        self._dispatch_roots: dict[object, object] = {}
        self._dispatches: dict[object, _Dispatch] = {}
        self._commands: set[object] = set()

    # The two entry points -----------------------------------------------------------------------------

    def plan(self, event: Event, log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        """Check ``event`` as the next event of the log without changing anything.

        ``log`` is the log before the event and ``surface`` its surface (the event is not on it yet).
        Returns the change committing the event makes (``None``: none), or raises the refusal.  The
        event has passed every earlier rule, so its brackets are the trace's.
        """
        handler = _HANDLERS.get(event.type)
        if handler is None:
            return None
        raw = event.data
        data: Mapping[str, Any] = raw if type(raw) is FrozenObject else (_obj(raw) or _NO_DATA)
        return handler(self, event, data, log, surface)

    def adopt(self, identity: LogIdentity, log: Sequence[Event]) -> None:
        """Take ``identity`` for a log replayed without one: its delivery markers are checked now
        (the first wrong one is refused, naming its index, and nothing changes), later ones as they come."""
        for index, event in enumerate(log):
            if event.type == DELIVERY_MARKER:
                data = _obj(event.data)
                try:
                    _check_marker(identity, event, data or _NO_DATA)
                except SeqlogError as error:
                    raise error.at(f"index {index}") from None
        self.identity = identity

    def finish(self) -> None:
        """Judge a complete log (INV-REL-11): no turn boundary crossed a compaction no end-seed retired."""
        compaction = self._compaction
        if compaction is not None and compaction.crossed_at is not None:
            raise self._crossing(compaction)

    # Brackets (the trace judges them; here they only move the state) -----------------------------------

    def _note_crossing(self, seq: int) -> None:
        compaction = self._compaction
        if compaction is not None and compaction.crossed_at is None:
            compaction.crossed_at = seq

    def _turn_start(self, event: Event, data: Mapping[str, Any], log: Sequence[Event], surface: SurfaceManager) -> Commit:
        turn, seq = _member(data, "turn"), event.seq

        def commit() -> None:
            self._note_crossing(seq)
            self._open_turn, self._open_step, self._ended_steps = turn, None, 0
            self._tools.clear()

        return commit

    def _turn_end(self, event: Event, data: Mapping[str, Any], log: Sequence[Event], surface: SurfaceManager) -> Commit:
        self._check_resolved(event)
        seq = event.seq

        def commit() -> None:
            self._note_crossing(seq)
            self._open_turn = None

        return commit

    def _step_start(self, event: Event, data: Mapping[str, Any], log: Sequence[Event], surface: SurfaceManager) -> Commit:
        step = _member(data, "step")

        def commit() -> None:
            self._open_step = step

        return commit

    def _step_end(self, event: Event, data: Mapping[str, Any], log: Sequence[Event], surface: SurfaceManager) -> Commit:
        self._check_resolved(event)
        return self._close_step

    def _close_step(self) -> None:
        self._open_step = None
        self._ended_steps += 1
        self._tools.clear()

    # Tool lifecycles (INV-REL-1..5) -----------------------------------------------------------------------

    def _check_resolved(self, event: Event) -> None:
        """INV-REL-5: the step (or turn) ends only once every call advertised in it is answered."""
        if self._tools:
            first = next(iter(self._tools))
            raise _refuse(Code.TOOL_CALL_UNRESOLVED, event, f"leaves the advertised tool call {first!r} unanswered")

    def _assistant_message(
        self, event: Event, data: Mapping[str, Any], log: Sequence[Event], surface: SurfaceManager
    ) -> Commit | None:
        """INV-REL-2: each tool-call block advertises an id not pending in the step (this message included)."""
        tools = self._tools
        fresh: dict[object, _Advertised] = {}
        message = _at(data, "message")
        for block in _arr(message.get("content")) if message is not None else ():
            if type(block) is not FrozenObject and not isinstance(block, Mapping):
                continue
            if not _is(block, "type", "tool-call"):
                continue
            call = _member(block, "id")
            if call in tools or call in fresh:
                raise _refuse(
                    Code.TOOL_CALL_ID_REPEATED, event, f"advertises tool call {_shown(block, 'id')}, already pending in this step"
                )
            fresh[call] = (_member(block, "name"), _member(block, "arguments"), False)
        if not fresh:
            return None
        return lambda: self._tools.update(fresh)

    def _tool_call(self, event: Event, data: Mapping[str, Any], log: Sequence[Event], surface: SurfaceManager) -> Commit:
        """INV-REL-1: the call started is one advertised in the step, not started yet, same name and arguments."""
        call = _member(data, "callId")
        advertised = self._tools.get(call)
        if advertised is None or advertised[2]:
            raise _refuse(
                Code.TOOL_CALL_NOT_ADVERTISED,
                event,
                f"starts {_shown(data, 'callId')}, which is not an advertised, not yet started call of this step",
            )
        name, arguments, _ = advertised
        if name != _member(data, "name") or arguments != _member(data, "arguments"):
            raise _refuse(
                Code.TOOL_CALL_NOT_ADVERTISED,
                event,
                f"starts {_shown(data, 'callId')} with another name or arguments than the model asked for",
            )
        started: _Advertised = (name, arguments, True)

        def commit() -> None:
            self._tools[call] = started

        return commit

    def _tool_result(
        self, event: Event, data: Mapping[str, Any], log: Sequence[Event], surface: SurfaceManager
    ) -> Commit | None:
        """INV-REL-3, INV-REL-4: an appended result answers a pending advertised call (a call that never
        started: only the exact crash-repair result).  A rewrite answers nothing."""
        if not isinstance(event.surface_op, Append):
            return None
        source = _at(_at(data, "message"), "source")
        call = _member(source, "callId")
        advertised = self._tools.get(call)
        if advertised is None:
            raise _refuse(
                Code.TOOL_RESULT_UNADVERTISED,
                event,
                f"answers {_shown(source, 'callId')}, which no assistant message of this step left pending",
            )
        if not advertised[2] and not is_exact_not_started_result(event, data):
            raise _refuse(
                Code.TOOL_RESULT_NOT_EXACT_REPAIR,
                event,
                f"answers {_shown(source, 'callId')}, which never started, but is not the exact ToolNotStartedError repair",
            )

        def commit() -> None:
            del self._tools[call]

        return commit

    def _request_header(
        self, event: Event, data: Mapping[str, Any], log: Sequence[Event], surface: SurfaceManager
    ) -> Commit:
        provider = _member(_at(_at(data, "header"), "config"), "provider")

        def commit() -> None:
            self._provider = provider

        return commit

    # Compactions (INV-REL-6..12) --------------------------------------------------------------------------

    @staticmethod
    def _crossing(compaction: _Compaction) -> SeqlogError:
        return SeqlogError(
            Code.COMPACTION_CROSSES_TURN,
            f"the turn boundary at seq {compaction.crossed_at} crosses the compaction started at seq "
            f"{compaction.start_seq}, and no session/end-seed retired it",
        )

    def _check_owner(self, event: Event, named: Mapping[str, Any] | None) -> _Compaction:
        """INV-REL-8: ``named`` carries the open compaction's ``compactionId`` and ``sourceCommandId``."""
        compaction = self._compaction
        if (
            compaction is None
            or _member(named, "compactionId") != compaction.compaction_id
            or _member(named, "sourceCommandId") != compaction.command
        ):
            raise _refuse(
                Code.COMPACTION_NOT_OWNED, event, f"names compaction {_shown(named, 'compactionId')}, not the open one"
            )
        return compaction

    def _check_in_turn(self, event: Event, owner: object) -> None:
        """INV-REL-7: a compaction acts in its owner turn (between turns when the owner is null)."""
        if owner != self._open_turn:
            raise _refuse(
                Code.COMPACTION_TURN_MISMATCH, event, f"belongs to turn {owner!r}, but the open turn is {self._open_turn!r}"
            )

    @staticmethod
    def _check_span(event: Event, data: Mapping[str, Any], surface: SurfaceManager) -> None:
        """INV-REL-12: ``shadowedSeqs`` are the current surface from ``shadowedRange.start`` to ``.end``."""
        bounds = _at(data, "shadowedRange")
        nodes = tuple(surface.nodes)
        first = _position(nodes, bounds.get("start") if bounds is not None else None)
        last = _position(nodes, bounds.get("end") if bounds is not None else None)
        span = nodes[first : last + 1] if 0 <= first <= last else ()
        named = _arr(data.get("shadowedSeqs"))
        if len(named) != len(span) or not all(_is_number(n) and n == s for n, s in zip(named, span, strict=True)):
            raise _refuse(
                Code.COMPACTION_SPAN_NOT_ON_SURFACE, event, "shadowedSeqs are not an exact span of the current surface"
            )

    def _compaction_start(
        self, event: Event, data: Mapping[str, Any], log: Sequence[Event], surface: SurfaceManager
    ) -> Commit:
        """INV-REL-6, INV-REL-7 (and INV-REL-11 for a held crossing): one compaction at a time, in its turn."""
        compaction = self._compaction
        if compaction is not None:
            if compaction.crossed_at is not None:
                raise self._crossing(compaction)
            raise _refuse(
                Code.COMPACTION_OVERLAP, event, f"opens while the compaction started at seq {compaction.start_seq} is open"
            )
        owner = _member(data, "turn")
        self._check_in_turn(event, owner)
        opened = _Compaction(_member(data, "compactionId"), _member(data, "sourceCommandId"), owner, event.seq)

        def commit() -> None:
            self._compaction = opened

        return commit

    def _compaction_summary(
        self, event: Event, data: Mapping[str, Any], log: Sequence[Event], surface: SurfaceManager
    ) -> Commit:
        """INV-REL-8, INV-REL-7, INV-REL-9, INV-REL-12: the open compaction's one summary, in its turn, over a span."""
        compaction = self._check_owner(event, data)
        self._check_in_turn(event, compaction.turn)
        if compaction.summarized:
            raise _refuse(
                Code.COMPACTION_SUMMARY_REPEATED,
                event,
                f"is a second summary of the compaction started at seq {compaction.start_seq}",
            )
        self._check_span(event, data, surface)

        def commit() -> None:
            compaction.summarized = True

        return commit

    def _compaction_end(self, event: Event, data: Mapping[str, Any], log: Sequence[Event], surface: SurfaceManager) -> Commit:
        """INV-REL-11, INV-REL-8, INV-REL-7, INV-REL-10: the open compaction ends in its turn, summarised unless failed."""
        held = self._compaction
        if held is not None and held.crossed_at is not None:
            raise self._crossing(held)
        compaction = self._check_owner(event, data)
        if _member(data, "turn") != compaction.turn:
            raise _refuse(
                Code.COMPACTION_TURN_MISMATCH,
                event,
                f"names turn {_shown(data, 'turn')}, not its compaction's turn {compaction.turn!r}",
            )
        self._check_in_turn(event, compaction.turn)
        if "error" not in data and not compaction.summarized:
            raise _refuse(Code.COMPACTION_SUMMARY_MISSING, event, "reports success, but its compaction has no summary")
        return self._close_compaction

    def _close_compaction(self) -> None:
        self._compaction = None

    def _compaction_prune(
        self, event: Event, data: Mapping[str, Any], log: Sequence[Event], surface: SurfaceManager
    ) -> Commit | None:
        """INV-REL-12: a prune names an exact current span."""
        self._check_span(event, data, surface)
        return None

    def _user_message(
        self, event: Event, data: Mapping[str, Any], log: Sequence[Event], surface: SurfaceManager
    ) -> Commit | None:
        """INV-REL-8: a compaction checkpoint (a replacement by the ``compact`` plugin) names the open compaction."""
        if isinstance(event.surface_op, Append):
            return None
        source = _at(data, "source")
        if _is(source, "kind", "plugin") and _is(source, "plugin", COMPACT_PLUGIN):
            self._check_owner(event, source)
        return None

    def _end_seed(self, event: Event, data: Mapping[str, Any], log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        """INV-REL-11: a compaction still open when a seed ends is a crash orphan; the marker retires it."""
        return None if self._compaction is None else self._close_compaction

    # Retries (INV-REL-13..18) -----------------------------------------------------------------------------

    def _retry(self, event: Event, data: Mapping[str, Any], log: Sequence[Event], surface: SurfaceManager) -> Commit:
        """INV-REL-13..16: the next attempt of a policy chain, for the current step, by the provider in force."""
        turn, step = _member(data, "turn"), _member(data, "step")
        current_step = self._open_step if self._open_step is not None else self._ended_steps
        if self._open_turn is None or turn != self._open_turn or step != current_step:
            raise _refuse(
                Code.RETRY_OUTSIDE_STEP,
                event,
                f"names turn {_shown(data, 'turn')} step {_shown(data, 'step')}, "
                f"but the current turn and step are {self._open_turn!r} and {current_step!r}",
            )
        provider = _member(data, "provider")
        if provider != self._provider:
            raise _refuse(
                Code.RETRY_PROVIDER_MISMATCH,
                event,
                f"names provider {_shown(data, 'provider')}; the latest request/header uses {self._provider!r}",
            )
        chain = (turn, step, provider, _member(data, "policyKey"))
        prior = self._chains.get(chain)
        raw_attempt = data.get("retry")
        attempt = _member(data, "retry")
        if prior is None:
            expected: object = 1
        else:
            last = prior[1]
            expected = last + 1 if _is_number(last) else None  # type: ignore[operator]
        if expected is None or attempt != expected:
            raise _refuse(Code.RETRY_NUMBER_INVALID, event, f"must be attempt {expected!r} of its policy chain")
        retry_id = _member(data, "retryId")
        if prior is not None and prior[0] != retry_id:
            raise _refuse(Code.RETRY_ID_INVALID, event, "changes the retryId of its policy chain")
        if prior is None and retry_id in self._retry_ids:
            raise _refuse(Code.RETRY_ID_INVALID, event, f"reuses retryId {_shown(data, 'retryId')} of another policy chain")
        scheduled = (retry_id, attempt)

        def commit() -> None:
            self._chains[chain] = (retry_id, raw_attempt)
            self._retry_ids.add(retry_id)
            self._scheduled.setdefault(scheduled, (turn, step))

        return commit

    def _retry_started(self, event: Event, data: Mapping[str, Any], log: Sequence[Event], surface: SurfaceManager) -> Commit:
        """INV-REL-17, INV-REL-18: a scheduled attempt starts once, at the turn and step it was scheduled for."""
        attempt = (_member(data, "retryId"), _member(data, "retry"))
        where = self._scheduled.get(attempt)
        if where is None:
            raise _refuse(
                Code.RETRY_START_UNPAIRED,
                event,
                f"starts attempt {_shown(data, 'retry')} of {_shown(data, 'retryId')}, which no llm/retry scheduled",
            )
        if where != (_member(data, "turn"), _member(data, "step")):
            raise _refuse(Code.RETRY_START_MISMATCH, event, "names another turn or step than the llm/retry that scheduled it")
        if attempt in self._started_attempts:
            raise _refuse(Code.RETRY_START_REPEATED, event, "starts an attempt that already started")

        def commit() -> None:
            self._started_attempts.add(attempt)

        return commit

    # Programmatic tool calls (INV-REL-19..22) -------------------------------------------------------------

    def _dispatch(self, event: Event, data: Mapping[str, Any], log: Sequence[Event], surface: SurfaceManager) -> Commit:
        """INV-REL-19..22: inside a turn, one tree per root, each sub-call started once and settled once as started."""
        if self._open_turn is None:
            raise _refuse(Code.PTC_OUTSIDE_TURN, event, "is outside an open turn")
        root, parent, child = _member(data, "rootCallId"), _member(data, "parentCallId"), _member(data, "subCallId")
        roots = self._dispatch_roots
        known = roots.get(child, _UNSEEN)
        if known is not _UNSEEN and known != root:
            raise _refuse(Code.PTC_ANCESTRY_INVALID, event, f"moves subCallId {_shown(data, 'subCallId')} to another root")
        if parent != root and roots.get(parent, _UNSEEN) != root:
            raise _refuse(
                Code.PTC_ANCESTRY_INVALID, event, f"parentCallId {_shown(data, 'parentCallId')} is neither the root nor under it"
            )
        has_arguments = "arguments" in data
        arguments = data.get("arguments")
        name = _member(data, "name")
        if event.type == "tool/code-dispatch-start":
            if child in self._dispatches:
                raise _refuse(Code.PTC_START_REPEATED, event, f"starts subCallId {_shown(data, 'subCallId')} again")
            started = _Dispatch(root, parent, name, has_arguments, arguments)

            def commit_start() -> None:
                self._dispatches[child] = started
                roots[child] = root

            return commit_start
        dispatch = self._dispatches.get(child)
        if dispatch is None or dispatch.settled:
            raise _refuse(
                Code.PTC_SETTLE_UNPAIRED, event, f"settles subCallId {_shown(data, 'subCallId')}, which has no unsettled start"
            )
        if (
            dispatch.root != root
            or dispatch.parent != parent
            or dispatch.name != name
            or dispatch.has_arguments != has_arguments
            or not json_equal(dispatch.arguments, arguments)
        ):
            raise _refuse(Code.PTC_SETTLE_MISMATCH, event, "settles another call than the one that started")

        def commit_settle() -> None:
            dispatch.settled = True
            roots[child] = root

        return commit_settle

    # Commands (INV-REL-23..25) ----------------------------------------------------------------------------

    def _command_run(self, event: Event, data: Mapping[str, Any], log: Sequence[Event], surface: SurfaceManager) -> Commit:
        """INV-REL-23: one run per command id."""
        command = _member(data, "commandId")
        if command in self._commands:
            raise _refuse(Code.COMMAND_RUN_REPEATED, event, f"repeats commandId {_shown(data, 'commandId')}")
        return lambda: self._commands.add(command)

    def _command_done(
        self, event: Event, data: Mapping[str, Any], log: Sequence[Event], surface: SurfaceManager
    ) -> Commit | None:
        """INV-REL-24, INV-REL-25: after its run; only a success cites an event, never a command event."""
        if _member(data, "commandId") not in self._commands:
            raise _refuse(Code.COMMAND_DONE_UNPAIRED, event, f"({_shown(data, 'commandId')}) has no earlier command/run")
        if "sourceEventSeq" in data:
            cited = _cited(log, data["sourceEventSeq"])
            if not _is(data, "kind", "success") or (cited is not None and cited.type in _COMMAND_TYPES):
                raise _refuse(
                    Code.COMMAND_DONE_SOURCE_INVALID,
                    event,
                    "cites sourceEventSeq, which only a success may, and never a command event",
                )
        return None

    # Titles (INV-REL-26..28) ------------------------------------------------------------------------------

    def _title(self, event: Event, data: Mapping[str, Any], log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        """INV-REL-26, INV-REL-27: a typed title cites nothing; any other cites human messages."""
        typed = _is(_at(data, "source"), "kind", "user")
        if (len(_arr(data.get("messageSeqs"))) == 0) != typed:
            raise _refuse(Code.TITLE_SEQS_CARDINALITY, event, "messageSeqs must be empty exactly for a title the user typed")
        _human_messages(event, data, log)
        return None

    def _title_request(
        self, event: Event, data: Mapping[str, Any], log: Sequence[Event], surface: SurfaceManager
    ) -> Commit | None:
        """INV-REL-27, INV-REL-28: the request sends the one framed message of the messages it cites."""
        cited = _human_messages(event, data, log)
        messages = _arr(data.get("messages"))
        message = _obj(messages[0]) if len(messages) == 1 else None
        content = _arr(message.get("content")) if message is not None else ()
        block = _obj(content[0]) if len(content) == 1 else None
        source = _at(message, "source")
        if not (
            block is not None
            and _is(message, "role", "user")
            and _is(source, "kind", "plugin")
            and _is(source, "plugin", TITLE_PLUGIN)
            and _is(block, "type", "text")
            and _is(block, "text", title_frame(cited))
        ):
            raise _refuse(Code.TITLE_REQUEST_FRAMING, event, "messages are not the one framed message of its messageSeqs")
        return None

    # Delivery markers (INV-REL-29) ------------------------------------------------------------------------

    def _delivery(self, event: Event, data: Mapping[str, Any], log: Sequence[Event], surface: SurfaceManager) -> Commit | None:
        """INV-REL-29: a marker this generation accepted names this session, unless inherited with the seed."""
        if self.identity is not None:
            _check_marker(self.identity, event, data)
        return None


_Handler = Callable[[Relations, Event, Mapping[str, Any], Sequence[Event], SurfaceManager], Commit | None]

_HANDLERS: dict[str, _Handler] = {
    "turn/start": Relations._turn_start,
    "turn/end": Relations._turn_end,
    "step/start": Relations._step_start,
    "step/end": Relations._step_end,
    "assistant/message": Relations._assistant_message,
    "tool/call": Relations._tool_call,
    "tool/result": Relations._tool_result,
    "request/header": Relations._request_header,
    "compaction/start": Relations._compaction_start,
    "compaction/summary": Relations._compaction_summary,
    "compaction/end": Relations._compaction_end,
    "compaction/prune": Relations._compaction_prune,
    "user/message": Relations._user_message,
    "session/end-seed": Relations._end_seed,
    "llm/retry": Relations._retry,
    "llm/retry-started": Relations._retry_started,
    "tool/code-dispatch-start": Relations._dispatch,
    "tool/code-dispatch": Relations._dispatch,
    "command/run": Relations._command_run,
    "command/done": Relations._command_done,
    "session/title": Relations._title,
    "session/title-llm-request": Relations._title_request,
    DELIVERY_MARKER: Relations._delivery,
}
"""The rule of each event type that pairs with others; every other type (unknown ones included) pairs with nothing."""


# Helpers over the log and the surface ---------------------------------------------------------------------


def _check_marker(identity: LogIdentity, event: Event, data: Mapping[str, Any]) -> None:
    """INV-REL-29 for one delivery marker: one accepted by the log's own generation (no
    ``sessionFormatVersion`` is generation 0) names the log's session, unless the header names a
    parent and the marker lies in the inherited seed."""
    generation = _member(data, "sessionFormatVersion")
    if generation is _ABSENT or generation is None:
        generation = 0
    if generation != identity.version or (identity.has_parent and event.seq < identity.seed_length):
        return
    if not _is(data, "sessionId", identity.session_id):
        raise _refuse(
            Code.DELIVERY_MARKER_WRONG_SESSION, event, f"names session {_shown(data, 'sessionId')}, not {identity.session_id!r}"
        )


def _position(nodes: tuple[int, ...], value: object) -> int:
    """Where node ``value`` sits on the surface, or -1."""
    seq = as_int(value)
    if seq is None:
        return -1
    try:
        return nodes.index(seq)
    except ValueError:
        return -1


def _cited(log: Sequence[Event], value: object) -> Event | None:
    """The earlier event at seq ``value``, or ``None``."""
    seq = as_int(value)
    return log[seq] if seq is not None and 0 <= seq < len(log) else None


def is_exact_not_started_result(event: Event, data: Mapping[str, Any]) -> bool:
    """Whether a ``tool/result`` is exactly what crash repair writes for a call that never started.

    The ``ToolNotStartedError`` / ``TOOL_NOT_STARTED`` error, no ``sourceEventSeqs``, the message id
    ``interrupted-tool-result-<callId>-<seq>``, and a first block with ``isError: true`` holding one
    text part with the repair's text.
    """
    if event.source_event_seqs is not None:
        return False
    error = _at(data, "error")
    if not (_is(error, "name", "ToolNotStartedError") and _is(error, "code", "TOOL_NOT_STARTED")):
        return False
    message = _at(data, "message")
    call_id = (_at(message, "source") or _NO_DATA).get("callId")
    if type(call_id) is not str or not _is(message, "id", f"interrupted-tool-result-{call_id}-{event.seq}"):
        return False
    assert message is not None
    content = _arr(message.get("content"))
    block = _obj(content[0]) if content else None
    if block is None or block.get("isError") is not True:
        return False
    parts = _arr(block.get("content"))
    part = _obj(parts[0]) if len(parts) == 1 else None
    return _is(part, "type", "text") and _is(part, "text", NOT_STARTED_TEXT)


def _human_messages(event: Event, data: Mapping[str, Any], log: Sequence[Event]) -> list[tuple[int, str]]:
    """INV-REL-27: the cited seqs, each a ``user/message`` a person wrote, with its text."""
    cited: list[tuple[int, str]] = []
    for seq in _arr(data.get("messageSeqs")):
        message = _cited(log, seq)
        payload = _obj(message.data) if message is not None else None
        if message is None or message.type != "user/message" or not _is(_at(payload, "source"), "kind", "user"):
            raise _refuse(Code.TITLE_SOURCE_NOT_HUMAN, event, f"messageSeqs cites {seq!r}, which is not a human user/message")
        cited.append((message.seq, message_text(payload)))
    return cited


def message_text(payload: Mapping[str, Any] | None) -> str:
    """What a title sees of a message: its text blocks' texts, one per line."""
    texts: list[str] = []
    for block in _arr(payload.get("content")) if payload is not None else ():
        part = _obj(block)
        if part is not None and part.get("type") == "text" and type(part.get("text")) is str:
            texts.append(part["text"])
    return "\n".join(texts)


_SURROGATE = re.compile("[\ud800-\udfff]")


def js_json_string(text: str) -> str:
    """``text`` as JavaScript's ``JSON.stringify`` writes it.

    Python's encoder without ASCII escaping writes the same short escapes and lower-case ``\\u00xx``
    control escapes; it only differs on surrogates, which JavaScript pairs (a high one followed by
    a low one is one character) or escapes when lone.
    """
    if _SURROGATE.search(text) is None:
        return json.dumps(text, ensure_ascii=False)
    out: list[str] = []
    index, length = 0, len(text)
    while index < length:
        code = ord(text[index])
        if 0xD800 <= code <= 0xDBFF and index + 1 < length and 0xDC00 <= ord(text[index + 1]) <= 0xDFFF:
            out.append(chr(0x10000 + ((code - 0xD800) << 10) + (ord(text[index + 1]) - 0xDC00)))
            index += 2
            continue
        out.append(f"\\u{code:04x}" if 0xD800 <= code <= 0xDFFF else json.dumps(text[index], ensure_ascii=False)[1:-1])
        index += 1
    return '"' + "".join(out) + '"'


def title_frame(cited: Sequence[tuple[int, str]]) -> str:
    """The one message text a title request sends for the cited ``(seq, text)`` human messages."""
    items = ",".join('{"seq":' + str(seq) + ',"text":' + js_json_string(text) + "}" for seq, text in cited)
    return TITLE_FRAME_PREFIX + "[" + items + "]"
