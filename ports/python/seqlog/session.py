"""A session: the log plus the surface, trace, request header and tool-pairing counts derived from it.

Every append is checked against the whole v1 contract in the contract's fixed order, so the first
refusal is the same as any other conforming implementation's:

1. the envelope and lossless JSON;
2. contiguity: ``seq`` equals the log length;
3. the vocabulary: legacy forms by name, unknown types only when ignorable;
4. the payload shape of messages, request headers, brackets and the end-of-seed marker;
5. the surface transition;
6. the turn / step / tool trace;
7. the relationships between events (:mod:`seqlog.relations`).

The tool-pairing balance is not among them: like the released session, an append, a seed or a
loaded log is never refused for it, and a replacement may cover any contiguous range.  The session
keeps the pending-call count at every cut of its surface (negative where a surface result closes a
call no earlier surface node opened) for the compactor, which reads it through
:meth:`Session.cut_balances`, :meth:`Session.balanced_around` and :meth:`Session.compaction_region`;
those refuse a surface whose count goes negative (``TOOL_PAIRING_NEGATIVE``).

Validation builds an :class:`AppendPlan` and touches nothing; :meth:`Session.commit` applies it
with operations that cannot fail, so a refused append leaves the session exactly as it was.  A log
replayed whole (:meth:`Session.restore`, a stored log read back) is also judged complete: it may
not end with a turn boundary held across an open compaction (INV-REL-11).
"""

from __future__ import annotations

import time as _time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, overload

from seqlog import trace as _trace
from seqlog.errors import Code, LibCode, SeqlogError
from seqlog.event import END_SEED, Event, Replace, SurfaceOp, decode_event, encode_surface_op, vocabulary_check
from seqlog.header import check_header_event, header_of
from seqlog.headerline import FORMAT_VERSION, check_header_line, check_seed_length, with_delegation_depth
from seqlog.jsonvalue import EMPTY_OBJECT, FrozenObject, as_object
from seqlog.messages import check_message, pairing_delta
from seqlog.payloads import check_data
from seqlog.relations import Commit, LogIdentity, Relations
from seqlog.repair import OpenTail
from seqlog.surface import SurfaceManager, SurfacePlan
from seqlog.trace import CLOSED, Brackets, abandon_for_restart, advance

Clock = Callable[[], int]
"""Milliseconds since the Unix epoch."""


def wall_clock_ms() -> int:
    """The wall clock in whole milliseconds."""
    return _time.time_ns() // 1_000_000


class EventSink(Protocol):
    """Where committed events go next (a store).

    It refuses in ``prepare``, before the session changes.  ``accept`` raises only when the event
    could not be kept (a store whose write failed), and only after :meth:`Session.rewind` has taken
    back every event it lost, so that the session never holds an event its sink does not.
    """

    def prepare(self, event: Event) -> bytes:
        """Encode ``event`` for writing, or raise :class:`SeqlogError` to refuse the append."""
        ...

    def accept(self, event: Event, encoded: bytes) -> None:
        """Take an event the session has committed (rewinding the session before any raise)."""
        ...


def _check_end_seed(event: Event) -> None:
    if event.type != END_SEED:
        return
    data = as_object(event.data)
    if data is None or len(data) != 0:
        raise SeqlogError(Code.END_SEED_INVALID, f"session/end-seed at seq {event.seq} data must be {{}}")


_PAYLOAD_RULES: dict[str, Callable[[Event], None]] = {
    "request/header": lambda event: check_header_event(event.data),
    "user/message": check_message,
    "assistant/message": check_message,
    "tool/result": check_message,
    END_SEED: _check_end_seed,
    # Looked up at call time, like the message rules, so a replaced rule (the kill-rate mutants) takes effect.
    **dict.fromkeys(
        ("turn/start", "turn/end", "step/start", "step/end", "tool/call", "assistant/chunk"),
        lambda event: _trace.check_trace_data(event),
    ),
}


def check_payload(event: Event) -> None:
    """The payload shape rules for the event's type (most types have none)."""
    rule = _PAYLOAD_RULES.get(event.type)
    if rule is not None:
        rule(event)


@dataclass(frozen=True, slots=True)
class AppendPlan:
    """A validated candidate: the event and everything committing it changes."""

    event: Event
    surface: SurfacePlan
    brackets: Brackets
    pairing_delta: int
    relations: Commit | None = None
    """What committing the event changes in the relationship state (``None``: nothing)."""


class EventsView(Sequence[Event]):
    """A read-only live view of a session's events."""

    __slots__ = ("_events",)

    def __init__(self, events: list[Event]) -> None:
        self._events = events

    def __len__(self) -> int:
        return len(self._events)

    @overload
    def __getitem__(self, index: int) -> Event: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Event]: ...
    def __getitem__(self, index: int | slice) -> Event | Sequence[Event]:
        if isinstance(index, slice):
            return tuple(self._events[index])
        return self._events[index]

    def __iter__(self) -> Iterator[Event]:
        return iter(self._events)


def _raw_event(type_: object, seq: int, time: object, data: object, metadata: Mapping[str, object]) -> dict[str, object]:
    raw: dict[str, object] = {"type": type_, "seq": seq, "time": time, "data": data}
    if metadata["ignorable"]:
        raw["ignorable"] = True
    surface_op, sources = metadata["surface_op"], metadata["source_event_seqs"]
    if surface_op is not None:
        raw["surfaceOp"] = encode_surface_op(surface_op) if isinstance(surface_op, Replace) else surface_op
    if sources is not None:
        raw["sourceEventSeqs"] = list(sources) if isinstance(sources, tuple) else sources
    return raw


class Session:
    """One session log and its derived state, grown only by validated appends."""

    def __init__(
        self, *, header: Mapping[str, Any] | None = None, clock: Clock | None = None, identity: LogIdentity | None = None
    ) -> None:
        """An empty session; prefer :meth:`create`, which also validates the header line and a seed.

        ``identity`` is what the stored header line says about the log; delivery markers are
        checked against it (INV-REL-29), and not at all without one.
        """
        self._clock: Clock = clock or wall_clock_ms
        self._events: list[Event] = []
        self._surface = SurfaceManager(self._events)
        self._counts: list[int] = [0]
        """The pending-call count at each of the ``len(nodes) + 1`` cuts, negative ones included."""
        self._negative = 0
        """How many of ``_counts`` are negative: the surface has no balance while any is."""
        self._brackets = CLOSED
        self._header: FrozenObject | None = None
        self._tail = OpenTail()
        self._relations = Relations(identity)
        self._legacy_restart = False
        """Set only while :meth:`restore` replays a converted v0 log (see :func:`abandon_for_restart`)."""
        self._legacy_length = 0
        """How many leading events were replayed with ``_legacy_restart`` (:meth:`rewind` replays them so again)."""
        self._sink: EventSink | None = None
        self._view = EventsView(self._events)
        self.header_line: FrozenObject = FrozenObject(header) if header is not None else EMPTY_OBJECT

    # Construction -------------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        seed: Iterable[object] | None = None,
        header: Mapping[str, Any] | None = None,
        *,
        clock: Clock | None = None,
    ) -> Session:
        """A new session, empty or built from a seed and closed by one ``session/end-seed`` marker.

        ``header`` is the JSONL session header line; by default a fresh id and the clock's time.
        ``delegationDepth`` is written as given, ``0`` when absent.
        A seed is validated whole; a refusal names the seed index and nothing is constructed.
        """
        clock = clock or wall_clock_ms
        if header is None:
            header = {"type": "session", "version": FORMAT_VERSION, "id": uuid.uuid4().hex, "createdAt": clock()}
        header = with_delegation_depth(header)
        check_header_line(header)
        if header["version"] != FORMAT_VERSION:
            raise SeqlogError(
                Code.FORMAT_VERSION_UNSUPPORTED, f"a new session is written as version {FORMAT_VERSION}, not {header['version']}"
            )
        if seed is None:
            session = cls(header=header, clock=clock)
        else:
            session = cls.restore(seed, where="seed index", header=header, clock=clock, complete=False)
            events = session._events
            seeded = len(events)
            if not events or events[-1].type != END_SEED:
                session.append_event(Event(END_SEED, seeded, events[-1].time if events else 0, EMPTY_OBJECT))
            # The marker retires a compaction the seed left open, so this holds once it is written.
            session._check_complete(f"seed index {seeded - 1}")
        # A reader refuses a log whose header line claims more seed events than it holds.
        check_seed_length(header, len(session))
        return session

    @classmethod
    def restore(
        cls,
        events: Iterable[object],
        *,
        where: str = "index",
        first: int = 0,
        header: Mapping[str, Any] | None = None,
        clock: Clock | None = None,
        identity: LogIdentity | None = None,
        complete: bool = True,
        legacy_restart: bool = False,
    ) -> Session:
        """A session replaying a log from seq 0, with no marker added; refusals name ``where``.

        A ``complete`` log is also judged whole (:meth:`check_complete`); a seed, which its
        end-of-seed marker is still to close, is not.  ``legacy_restart`` is for the v0 edge only:
        the replay admits the released interrupted-turn restart (:func:`abandon_for_restart`);
        appends after the replay never do.
        """
        session = cls(header=header, clock=clock, identity=identity)
        session._legacy_restart = legacy_restart
        index = -1
        for index, raw in enumerate(events):
            try:
                session.commit(session.validate(raw))
            except SeqlogError as error:
                raise error.at(f"{where} {index + first}") from None
        session._legacy_restart = False
        if legacy_restart:
            session._legacy_length = len(session._events)
        if complete:
            session._check_complete(f"{where} {index + first}")
        return session

    def adopt_identity(self, identity: LogIdentity) -> None:
        """Check the delivery markers already in the log against ``identity`` (INV-REL-29), then keep
        it for later appends; a refusal names the marker's index and changes nothing."""
        self._relations.adopt(identity, self._events)

    def check_complete(self) -> None:
        """Refuse the log as a complete one: a turn boundary crossed a compaction that no
        ``session/end-seed`` retired as a crash orphan (INV-REL-11)."""
        self._relations.finish()

    def _check_complete(self, where: str) -> None:
        try:
            self._relations.finish()
        except SeqlogError as error:
            raise error.at(where) from None

    # Appending ----------------------------------------------------------------------------------

    def validate(self, raw: object) -> AppendPlan:
        """Check one raw candidate event against the session without changing anything."""
        event = decode_event(raw)
        expected = len(self._events)
        if event.seq != expected:
            raise SeqlogError(Code.SEQ_NOT_CONTIGUOUS, f"event seq {event.seq} is not contiguous; expected {expected}")
        vocabulary_check(event)
        check_payload(event)
        check_data(event)
        plan = self._surface.validate_next(event)
        delta = pairing_delta(event) if plan.touches_surface else 0
        brackets = self._brackets
        if self._legacy_restart and self._events:
            brackets = abandon_for_restart(brackets, event, self._events[event.seq - 1])
        brackets = advance(brackets, event)
        return AppendPlan(event, plan, brackets, delta, self._relations.plan(event, self._events, self._surface))

    def commit(self, plan: AppendPlan) -> Event:
        """Apply a plan from :meth:`validate`; refused only when the session moved on since."""
        event = plan.event
        if event.seq != len(self._events):
            raise SeqlogError(LibCode.STALE_PLAN, f"plan for seq {event.seq} is stale; the log has {len(self._events)} events")
        encoded = self._sink.prepare(event) if self._sink is not None else b""
        surface = plan.surface
        self._surface.commit(surface)
        self._events.append(event)
        if surface.touches_surface:
            self._count_cuts(surface, plan.pairing_delta)
        self._brackets = plan.brackets
        if plan.relations is not None:
            plan.relations()
        snapshot = header_of(event)
        if snapshot is not None:
            assert isinstance(snapshot, FrozenObject)
            self._header = snapshot  # validated canonical, so the snapshot is its own canonical form
        self._tail.observe(event)
        if self._sink is not None:
            self._sink.accept(event, encoded)
        return event

    def _count_cuts(self, surface: SurfacePlan, delta: int) -> None:
        """Keep the per-cut counts (and how many are negative) in step with a committed surface change.

        An append adds one cut.  A replacement of ``nodes[start:stop]`` by one node of ``delta``
        keeps the cuts before the range, drops the ones inside it, and moves every later cut by the
        new node's delta less the shadowed nodes' (a tool-result rewrite, or a compaction over a
        balanced range that adds no calls, moves nothing).
        """
        counts = self._counts
        if surface.replacement is None:
            joined = counts[-1] + delta
            counts.append(joined)
            self._negative += joined < 0
            return
        start, stop = surface.start_index, surface.stop_index
        joined = counts[start] + delta
        shift = joined - counts[stop]
        if shift == 0:
            self._negative += (joined < 0) - sum(1 for count in counts[start + 1 : stop + 1] if count < 0)
            counts[start + 1 : stop + 1] = (joined,)
            return
        counts[start + 1 :] = [joined, *(count + shift for count in counts[stop + 1 :])]
        self._negative = sum(1 for count in counts if count < 0)

    def append_event(self, raw: object) -> Event:
        """Validate and commit one full event (seq and time included) and return it frozen."""
        return self.commit(self.validate(raw))

    def append(  # noqa: PLR0917 - the documented call shape: type and data, then optional envelope members
        self,
        type: str,
        data: object,
        surface_op: SurfaceOp | str | Mapping[str, Any] | None = None,
        source_event_seqs: Sequence[int] | None = None,
        ignorable: bool = False,
        time: int | None = None,
    ) -> Event:
        """Append the next event, assigning its seq and (unless given) its time from the clock."""
        stamp = self._clock() if time is None else time
        metadata = {"surface_op": surface_op, "source_event_seqs": source_event_seqs, "ignorable": ignorable}
        raw = _raw_event(type, len(self._events), stamp, data, metadata)
        return self.commit(self.validate(raw))

    def rewind(self, length: int) -> None:
        """Drop the events from seq ``length`` on, and everything derived from them, as if never appended.

        The kept events are replayed into fresh derived state (O(``length``)) under the rules that
        first accepted them, and the session takes that state only once the replay is complete.
        :attr:`events` stays the same live view and the sink stays attached; :attr:`surface` is a
        new manager.  A store calls this when events it had buffered could not be made durable.
        """
        events = self._events
        if not 0 <= length <= len(events):
            raise ValueError(f"cannot rewind a log of {len(events)} events to {length}")
        if length == len(events):
            return
        # Delivery markers were judged when first appended; the identity is only carried over.
        fresh = Session(header=self.header_line, clock=self._clock)
        fresh._relations.identity = self._relations.identity
        legacy = min(self._legacy_length, length)
        for event in events[:length]:
            fresh._legacy_restart = event.seq < legacy
            fresh.commit(fresh.validate(event))
        self._events = fresh._events
        self._view._events = fresh._events
        self._surface = fresh._surface
        self._counts, self._negative = fresh._counts, fresh._negative
        self._brackets, self._header = fresh._brackets, fresh._header
        self._tail, self._relations = fresh._tail, fresh._relations
        self._legacy_length = legacy

    def attach(self, sink: EventSink | None) -> None:
        """Send every later commit to ``sink`` (``None`` detaches)."""
        self._sink = sink

    # Observing ----------------------------------------------------------------------------------

    @property
    def events(self) -> EventsView:
        """The log as a read-only live sequence."""
        return self._view

    def __len__(self) -> int:
        return len(self._events)

    @property
    def surface(self) -> SurfaceManager:
        """The surface manager over this session's log."""
        return self._surface

    @property
    def clock(self) -> Clock:
        """The clock that stamps appends."""
        return self._clock

    def request_header(self) -> FrozenObject | None:
        """The request header in force: the canonical latest snapshot, or ``None``."""
        return self._header

    @property
    def brackets(self) -> Brackets:
        """The open turn and step."""
        return self._brackets

    @property
    def open_turn(self) -> int | None:
        """The open turn, if any."""
        return self._brackets.open_turn

    @property
    def open_step(self) -> int | None:
        """The open step of the open turn, if any."""
        return self._brackets.open_step

    @property
    def pending_calls(self) -> int:
        """Tool calls opened on the surface and not yet answered: the count at the last cut.

        Negative when surface results close calls no surface node opened (a compaction that
        shadowed an assistant message but not its results): the log does not police the balance.
        """
        return self._counts[-1]

    def _check_balance(self) -> None:
        """Refuse a surface whose count goes negative: it has no balance to read."""
        if self._negative:
            cut = next(index for index, count in enumerate(self._counts) if count < 0)
            seq = self._surface.nodes[cut - 1]
            raise SeqlogError(Code.TOOL_PAIRING_NEGATIVE, f"tool/result at surface seq {seq} has no matching tool call")

    def cut_balances(self) -> tuple[bool, ...]:
        """Whether each of the ``len(nodes) + 1`` cuts of the surface is balanced.

        Refused with ``TOOL_PAIRING_NEGATIVE`` when the count goes negative anywhere on the surface.
        """
        self._check_balance()
        return tuple(count == 0 for count in self._counts)

    def balanced_around(self, seq: object) -> tuple[bool, bool]:
        """Whether the cuts just before and just after surface node ``seq`` are balanced.

        ``NOT_ON_SURFACE`` when ``seq`` is no surface node, then ``TOOL_PAIRING_NEGATIVE`` on a
        surface with no balance.
        """
        nodes = self._surface.nodes
        index = _node_index(nodes, seq)
        if index is None:
            raise SeqlogError(Code.NOT_ON_SURFACE, f"surface seq {seq!r} not found")
        self._check_balance()
        return self._counts[index] == 0, self._counts[index + 1] == 0

    def compaction_region(self, start: object, end: object) -> tuple[int, ...]:
        """The surface nodes a compaction of ``start..end`` would replace, if a compactor may write it.

        The session accepts a replacement over any contiguous range; a compactor checks its region
        first, in this order: ``start`` on the surface (``REPLACE_START_NOT_ON_SURFACE``), ``end``
        on the surface (``REPLACE_END_NOT_ON_SURFACE``), ``start`` not after ``end``
        (``REPLACE_RANGE_INVERTED``), a surface with a balance (``TOOL_PAIRING_NEGATIVE``), then the
        cut before ``start`` and the cut after ``end`` balanced (``REPLACE_SPLITS_TOOL_PAIR``).
        """
        nodes = self._surface.nodes
        first, last = _node_index(nodes, start), _node_index(nodes, end)
        if first is None:
            raise SeqlogError(Code.REPLACE_START_NOT_ON_SURFACE, f"compaction region start seq {start!r} is not on the surface")
        if last is None:
            raise SeqlogError(Code.REPLACE_END_NOT_ON_SURFACE, f"compaction region end seq {end!r} is not on the surface")
        if first > last:
            raise SeqlogError(
                Code.REPLACE_RANGE_INVERTED,
                f"compaction region start seq {start!r} (index {first}) is after end seq {end!r} (index {last})",
            )
        self._check_balance()
        counts = self._counts
        for cut, bound in ((first, f"before {start!r}"), (last + 1, f"after {end!r}")):
            if counts[cut] != 0:
                raise SeqlogError(
                    Code.REPLACE_SPLITS_TOOL_PAIR, f"compaction region {start!r}..{end!r}: the cut {bound} is not balanced"
                )
        return tuple(nodes[first : last + 1])

    def closers(self) -> tuple[Event, ...]:
        """The crash-repair closers the log would need now (empty when no turn is open)."""
        return self._tail.closers()

    def repair(self) -> tuple[Event, ...]:
        """Append the crash-repair closers and return them."""
        closers = self._tail.closers()
        for closer in closers:
            self.append_event(closer)
        return closers


def _node_index(nodes: Sequence[int], seq: object) -> int | None:
    """The index of surface node ``seq``, numbers compared as JSON compares them (``3.0`` is node 3; a
    flag is no seq, though Python counts ``True`` equal to 1); ``None`` when it is not on the surface."""
    if isinstance(seq, bool) or not isinstance(seq, int | float):
        return None
    for index, node in enumerate(nodes):
        if node == seq:
            return index
    return None
