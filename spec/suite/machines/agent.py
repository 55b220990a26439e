"""The rules every session-building machine shares: an agent harness at work.

Turns and steps open and close, the step sends its request (appending the ``request/header`` the
writer rule decides), the model streams chunks and answers with or without tool calls, tools start
and report, ranges are compacted, tool outputs rewritten, the sandbox mode and the model switch
(changing tools, system prompt and config), settings drift one header member at a time, loop
instances restart, and now and then an invalid candidate from
:data:`sessionlog_spec.suite.agent.candidates.MUTATIONS` is slipped in; once per example a sweep
submits every variant of one code's candidates and every fault of one note's payload. Each machine
decides what a built event means for its group by implementing :meth:`AgentMachine.deliver` (and
:meth:`AgentMachine.submit` for the invalid candidates).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import random
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule
from hypothesis.strategies import DrawFn

from sessionlog_spec.model.header import header_event_problem
from sessionlog_spec.model.json_value import freeze, thaw
from sessionlog_spec.model.legacy import DELIVERY_MARKER, V0_INVENTORY
from sessionlog_spec.model.session import SessionState
from sessionlog_spec.model.violation import Code
from sessionlog_spec.suite.agent.actions import (
    NOTE_VARIANTS,
    TOOL_NAMES,
    TURN_ONLY_TYPES,
    applicable_actions,
    assistant_with_call,
    note_event,
    open_calls,
)
from sessionlog_spec.suite.agent.builder import BUILDER_TICK, RawEvent, SessionBuilder
from sessionlog_spec.suite.agent.candidates import MUTATIONS, Context, Mutation
from sessionlog_spec.suite.agent.candidates.lifted import lift_event
from sessionlog_spec.suite.agent.candidates.payloads import HARNESS_NOTE_TYPES, MESSAGE_FAULTS, payload_fault_sweep, standing_note
from sessionlog_spec.suite.agent.header_drift import DRIFTS, drifted
from sessionlog_spec.suite.agent.loop import MODELS, MODES, AgentLoop
from sessionlog_spec.suite.agent.variants import variants
from sessionlog_spec.suite.machines.base import ConformanceMachine, MachineContext, step
from sessionlog_spec.suite.rule_table import CODE_OWNERS
from sessionlog_spec.suite.spread import spread

T = TypeVar("T")

LOOP_CHANGES = (
    *(f"mode:{m}" for m in sorted(MODES)),
    *(f"model:{m}" for m in sorted(MODELS)),
    "tools:mcp",
    "tools:descriptions",
    "restart",
    "restart:reconfigured",
)
"""Changes of the loop instance: sandbox mode switches, model switches, tools-only changes (an MCP
server attached or detached, tool descriptions refreshed: no event, only the next header differs),
a restart (resume), and a restart after the configuration changed (the resume snapshot is a new
header, which the session must track as it tracks a change)."""


CHUNK_BURSTS = st.sampled_from((1, 2, 3, 5, 8))
"""How many chunks a model streams in one burst."""
CHUNK_GAPS = st.integers(1, 40) | st.sampled_from((0, 1_000, 30_000))
"""Milliseconds between two streamed chunks."""

COMPACT_AFTER_TURN = 4
"""One turn end in this many is followed by a compaction (see :meth:`AgentMachine.compact_between_turns`)."""
NOTE_AFTER_ACTION = 6
"""One action in this many is followed at once by a note where the action left the session (see
:meth:`AgentMachine.note_here`)."""

SWEEP_AFTER = 8
"""Events a session holds before its sweep: on a near-empty log few candidates can stand, and the
sweeps of many examples would start from the same log (and, Hypothesis drawing seeds lumpily, the
same choices)."""
SWEPT_VARIANTS = 8
"""How many variants of each candidate a sweep submits at most."""
SWEEP_BUILDS = 40
"""How many candidate builds a sweep shares out among the candidates written for its code (at least four each)."""
TWIN_BUILDS = 3
"""How many builds a sweep gives each lifted twin of a candidate."""
OWN_CODES_FIRST = 3
"""One inject step in this many begins with the codes of candidates written for the machine's own paths."""
PAYLOAD_FAULT = "payload_fault_in_event"
"""The mutation whose candidates :meth:`AgentMachine.sweep` also submits site by site."""

TOOL_RESULT_CODES = frozenset({Code.TOOL_RESULT_INVALID})
"""Codes whose candidates need a started, unanswered tool call (see ``fault_running_tool``)."""


@dataclass(frozen=True)
class Place:
    """A point of a session where some invalid candidates can be built at all, and which ones."""

    name: str
    reached: Callable[[AgentLoop], bool]
    codes: frozenset[Code]
    live_only: bool = False
    """Whether only the candidates appended to the live session are submitted there: the others of
    these codes build a scene of their own, which costs a whole log's check each and needs no place."""


PLACES = (
    Place(
        "a step is open",
        lambda loop: loop.state.trace.open_step is not None,
        frozenset({Code.ASSISTANT_MESSAGE_INVALID, Code.STEP_END_MISMATCH, Code.STEP_STILL_OPEN, Code.EVENT_OUTSIDE_STEP}),
    ),
    Place(
        "a tool call is pending in the open step",
        lambda loop: loop.state.trace.open_step is not None and loop.state.pending_calls > 0,
        frozenset({Code.TOOL_RESULT_UNPAIRED}),
    ),
    Place(
        "a turn is open between steps",
        lambda loop: loop.state.trace.open_turn is not None and loop.state.trace.open_step is None,
        frozenset({
            Code.TURN_END_REASON_INVALID, Code.TURN_END_MISMATCH, Code.STEP_OUTSIDE_TURN, Code.STEP_NUMBER,
            Code.STEP_END_MISMATCH, Code.EVENT_OUTSIDE_STEP,
        }),
    ),
    Place(
        "no turn is open",
        lambda loop: loop.state.trace.open_turn is None,
        frozenset({Code.EVENT_OUTSIDE_TURN, Code.STEP_OUTSIDE_TURN, Code.COMPACTION_TURN_MISMATCH}),
        live_only=True,
    ),
    Place(
        "a call the open step asked for is not yet started",
        lambda loop: bool(open_calls(loop.builder)[0]),
        frozenset({Code.TOOL_CALL_NOT_ADVERTISED, Code.TOOL_CALL_ID_REPEATED}),
        live_only=True,
    ),
    Place(
        "a tool result stands on the surface of an open turn",
        lambda loop: loop.state.trace.open_turn is not None
        and any(loop.state.events[seq].type == "tool/result" for seq in loop.state.surface.nodes),
        frozenset({Code.TOOL_REWRITE_SPAN, Code.TOOL_REWRITE_TARGET, Code.TOOL_REWRITE_CHANGES}),
        live_only=True,
    ),
    Place(
        "a compaction is open",
        lambda loop: loop.state.relations.compaction is not None,
        frozenset({Code.COMPACTION_OVERLAP, Code.COMPACTION_NOT_OWNED, Code.COMPACTION_SUMMARY_REPEATED}),
        live_only=True,
    ),
)
"""Where ``fault_in_place`` submits every candidate of the place's codes (see there why)."""


@dataclass(frozen=True)
class NotePlace:
    """A point of a session where a note has something of the log to relate to, and which notes."""

    name: str
    reached: Callable[[SessionBuilder], bool]
    types: tuple[str, ...]


def _between_steps(b: SessionBuilder) -> bool:
    trace = b.state.trace
    return trace.open_turn is not None and trace.open_step is None and b.state.relations.ended_steps > 0


def _logged(*types: str) -> Callable[[SessionBuilder], bool]:
    return lambda b: any(e.type in types for e in b.state.events)


COMPACTION_GOES_ON = ("compaction/summary", "compaction/end")
"""What an open compaction logs next."""

NOTE_PLACES = (
    NotePlace("a step is open", lambda b: b.state.trace.open_step is not None, ("llm/retry",)),
    NotePlace("a turn is open between steps, after one ended", _between_steps, ("llm/retry",)),
    NotePlace("a retry is scheduled", _logged("llm/retry"), ("llm/retry-started",)),
    NotePlace("the user has written", _logged("user/message"), ("session/title", "session/title-llm-request")),
    NotePlace("a command has run", _logged("command/run"), ("command/done", "command/run")),
    NotePlace("an approval was asked", _logged("approval/asked"), ("approval/decided",)),
    NotePlace("a hook was invoked", _logged("hook/invoked"), ("hook/result",)),
    NotePlace("a code dispatch started", _logged("tool/code-dispatch-start"), ("tool/code-dispatch",)),
    NotePlace("a compaction is open", lambda b: b.state.relations.compaction is not None, COMPACTION_GOES_ON),
    NotePlace(
        "between turns, with a span to summarise",
        lambda b: b.state.trace.open_turn is None and b.open_compaction() is None and bool(b.legal_ranges()),
        ("compaction/start",),
    ),
    NotePlace("a turn is open", lambda b: b.state.trace.open_turn is not None, TURN_ONLY_TYPES),
    NotePlace(
        "anywhere",
        lambda b: True,
        tuple(t for t in HARNESS_NOTE_TYPES if t not in ("compaction/start", DELIVERY_MARKER, *TURN_ONLY_TYPES)),
    ),
)
"""Where ``note_in_place`` writes a valid note whose relationships reach back into the log (see there why).
A compaction starts between turns only, as a harness starts one; a delivery marker only where the
log's session is known (after a turn ends, see :meth:`AgentMachine.perform`); a todo list or a
request context inside a turn, as the harness writes them (the model admits a todo list anywhere,
released dsh-session only inside a turn)."""


def placed_note(draw: DrawFn, builder: SessionBuilder, v0: bool = False) -> RawEvent | None:
    """A valid note for one of the :data:`NOTE_PLACES` the builder is at (of the v0 inventory when
    ``v0``), or ``None`` when the note drawn cannot stand.  An open compaction goes on more often
    than not, as a harness logs its summary (or its failure) next."""
    reached = [p for p in NOTE_PLACES if p.reached(builder)]
    compacting = [p for p in reached if p.types == COMPACTION_GOES_ON]
    goes_on = bool(compacting) and draw(st.booleans(), label="compaction goes on")
    place = compacting[0] if goes_on else spread(draw, reached, builder.fingerprint, "place")
    type_ = spread(draw, place.types, builder.fingerprint, "note")
    if v0 and type_ not in V0_INVENTORY:
        return None
    return standing_note(builder, type_, draw(st.integers(0, NOTE_VARIANTS - 1), label="variant"))


def compaction_between_turns(builder: SessionBuilder, by_command: bool) -> Iterator[RawEvent]:
    """The events that start a compaction between turns, as the harness does when the context fills
    (or, ``by_command``, the user runs ``/compact``), where the surface holds a span to summarise;
    none elsewhere.  Each is yielded uncommitted and must be committed before the next is built.
    The loop then summarises and ends the compaction, as it goes on with any open compaction."""
    if builder.state.trace.open_turn is not None or builder.open_compaction() is not None or not builder.legal_ranges():
        return
    command = None
    if by_command:
        command = f"cmd-{builder.next_seq}"
        yield builder.event("command/run", {"commandId": command, "name": "compact", "source": {"kind": "user"}}, commit=False)
    yield builder.compaction_start(command, commit=False)


def mutations_in(contexts: Iterable[Context], owners: Iterable[str] | None = None) -> tuple[Mutation, ...]:
    """The registered mutations for ``contexts`` whose code belongs to an invariant group in ``owners``."""
    wanted, groups = set(contexts), None if owners is None else set(owners)
    return tuple(
        m
        for m in MUTATIONS
        if m.context in wanted and (groups is None or any(i.split("-")[1] in groups for i in CODE_OWNERS[m.code.value]))
    )


class AgentMachine(ConformanceMachine):
    """A machine that builds a realistic session step by step and shows each event to the port."""

    injections: tuple[Mutation, ...] = ()
    """The invalid candidates this machine slips in."""
    unknown_types = True
    """Whether the harness writes ignorable events of unknown types."""

    def __init__(self, context: MachineContext) -> None:
        super().__init__(context)
        self.loop = AgentLoop(unknown_types=self.unknown_types)
        self.injected: Counter[str] = Counter()
        """How often this example submitted each invalid candidate, by mutation name."""
        self.swept = False
        """Whether this example took its :meth:`sweep`."""
        self.check_owed: bool | None = None
        """Inside :meth:`one_state_check`: whether a refusal's state check is owed; ``None`` outside."""
        self.start()

    # -- what a machine makes of the session ---------------------------------------------------------

    def start(self) -> None:
        """Prepare the port for a new example."""

    def deliver(self, raw: RawEvent) -> None:
        """Show one valid event to the port and commit it."""
        raise NotImplementedError

    def decide(self, data: st.DataObject, begins_series: bool) -> dict[str, Any] | None:
        """The writer decision for the next request (the header machine asks the port too)."""
        return self.loop.model_decision(begins_series)

    def submit(self, mutation: Mutation, candidate: Any) -> None:
        """Show one invalid candidate to the port."""
        raise NotImplementedError

    def check_state(self) -> None:
        """Compare what the port holds with the model (machines whose port holds a live session)."""

    def after_refusal(self) -> None:
        """A refused request must leave the port's session exactly as it was: check it now, or once
        at the end of the :meth:`one_state_check` around this submission."""
        if self.check_owed is None:
            self.check_state()
        else:
            self.check_owed = True

    def settle_state_check(self) -> None:
        """Pay an owed state check now, before a request that replaces the session would hide what a
        refusal changed."""
        if self.check_owed:
            self.check_owed = False
            self.check_state()

    @contextlib.contextmanager
    def one_state_check(self) -> Iterator[None]:
        """The refusals inside share one state check, at the end.

        A fault step submits from a few candidates to a hundred, and checking the state and the
        saved form after each was a fifth of the session group's time.  A session that a refusal
        changed stays changed (every candidate of the step is refused), so the check at the end
        still sees it, or the next candidate's answer does; the minimiser then cuts the transcript
        down to the submission that did it.
        """
        if self.check_owed is not None:
            yield
            return
        self.check_owed = False
        try:
            yield
            self.settle_state_check()
        finally:
            self.check_owed = None

    def take_over(self, state: SessionState) -> None:
        """Continue from a session the port now holds, with a new loop instance."""
        loop = AgentLoop.from_state(state)
        loop.mode, loop.model, loop.toolbox, loop.drift = self.loop.mode, self.loop.model, self.loop.toolbox, self.loop.drift
        loop.builder.session_id = self.loop.builder.session_id
        self.loop = loop

    # -- the agent at work --------------------------------------------------------------------------

    def next_actions(self) -> list[str]:
        """What the agent may do next, repeated by how often a harness does it."""
        if self.loop.needs_request():
            return ["send_request"] * 6 + ["log_only"]
        actions = [a for a in applicable_actions(self.loop.builder) if a != "request_header" and self.loop.can(a)]
        return actions or ["log_only"]

    def perform(self, data: st.DataObject, action: str) -> None:
        """Take one agent action and count what it exercises under the action's name."""
        self.retitle(action)
        if action == "send_request":
            begins_series = data.draw(st.booleans(), label="begins series")
            decision = self.decide(data, begins_series)
            if decision is not None:
                self.deliver(self.loop.header_event(decision))
            self.loop.request_sent()
        elif action == "chunk":
            # A model streams in bursts: runs of chunks are what a packed row holds (INV-JSONL-9),
            # at gaps that vary (none, a millisecond, a stall), which the row keeps as ``dt``.
            for _ in range(data.draw(CHUNK_BURSTS, label="chunks")):
                if not self.loop.can("chunk"):
                    break
                self.loop.builder.time += data.draw(CHUNK_GAPS, label="gap") - BUILDER_TICK
                self.deliver(self.loop.build(cast(DrawFn, data.draw), action))
        else:
            self.deliver(self.loop.build(cast(DrawFn, data.draw), action))
            if action == "turn_start" and self.loop.can("user_message") and data.draw(st.integers(0, 3), label="prompt"):
                # A turn mostly opens on the user's prompt (three in four here), in any text the user
                # types: what a title request quotes, a compaction summarises and a stored line must
                # carry verbatim.
                self.deliver(self.loop.build(cast(DrawFn, data.draw), "user_message"))
            if action == "turn_end" and data.draw(st.booleans(), label="delivery confirmed"):
                # The persistence layer confirms what it delivered once a turn is written.
                variant = self.pick(data, range(NOTE_VARIANTS), "marker")
                self.deliver(note_event(self.loop.builder, DELIVERY_MARKER, variant))
            if action == "turn_end" and data.draw(st.integers(0, COMPACT_AFTER_TURN - 1), label="compacts") == 0:
                self.compact_between_turns(data)
        if data.draw(st.integers(0, NOTE_AFTER_ACTION - 1), label="note here") == 0:
            self.note_here(data)

    def compact_between_turns(self, data: st.DataObject) -> None:
        """Start a compaction between turns (see :func:`compaction_between_turns`)."""
        for event in compaction_between_turns(self.loop.builder, data.draw(st.booleans(), label="by command")):
            self.deliver(event)

    def request_now(self, data: st.DataObject) -> None:
        """Open a turn and a step where none is open, then send the step's request unless it was sent."""
        for action in ("turn_start", "step_start"):
            if self.loop.can(action):
                self.perform(data, action)
        if self.loop.needs_request():
            self.perform(data, "send_request")

    @rule(data=st.data())
    @step
    def agent_acts(self, data: st.DataObject) -> None:
        # Hypothesis prefers the rules it sorts first (fewest arguments, then by name); this one has a
        # single argument and the first name, so the agent's work dominates as it does in a real log.
        # Several actions per step keep sessions realistic in length without starving other rules.
        for _ in range(data.draw(st.integers(1, 3), label="actions")):
            self.perform(data, data.draw(st.sampled_from(self.next_actions()), label="action"))

    @precondition(lambda self: self.loop.can("compaction") or self.loop.can("rewrite"))
    @rule(data=st.data())
    @step
    def reshape_surface(self, data: st.DataObject) -> None:
        legal = [a for a in ("compaction", "rewrite") if self.loop.can(a)]
        self.perform(data, data.draw(st.sampled_from(legal), label="reshape"))

    # -- the loop instance ------------------------------------------------------------------------------

    @rule(change=st.sampled_from(LOOP_CHANGES))
    @step
    def loop_changes(self, change: str) -> None:
        self.change_loop(change)

    def change_loop(self, change: str) -> None:
        """Apply one of :data:`LOOP_CHANGES` to the loop instance (logging it where a harness does)."""
        kind, _, name = change.partition(":")
        if kind != "restart":
            self.loop.drift = None  # a switch assembles the header from the mode and model again
        if kind == "mode":
            self.retitle("switch_mode")
            self.deliver(self.loop.event("sandbox/mode", {"mode": name}))
            self.loop.mode = name
        elif kind == "model":
            self.retitle("switch_model")
            self.deliver(self.loop.event("model/selection", {"model": name, "provider": MODELS[name]["provider"]}))
            self.loop.model = name
        elif kind == "tools":
            # Nothing is logged when the tools change; the next request's snapshot is the record.
            if name == "mcp":
                self.loop.toggle_mcp()
            else:
                self.loop.revise_tool_descriptions()
        elif self.loop.state.trace.open_step is None:
            # A new loop instance takes over between requests; nothing is written until it sends one.
            self.loop.restart_instance()
            if name == "reconfigured":
                self.loop.toggle_mcp()

    @rule(data=st.data())
    @step
    def settings_drift(self, data: st.DataObject) -> None:
        # The loop's switches each change several members of the header at once; a drift changes one
        # thing of one member (header_drift), so a request after it differs from the latest snapshot
        # in that alone.  A drift that makes no valid snapshot is not taken (the header group sends
        # broken headers on purpose).
        how = self.pick(data, DRIFTS, "drift")
        latest = self.loop.state.header
        base = self.loop.assembled() if latest is None else cast(dict[str, Any], thaw(latest))
        header = drifted(cast(DrawFn, data.draw), base, how)
        if header is not None and header_event_problem(freeze({"header": header, "reason": "change"})) is None:
            self.loop.drift = header

    @rule(data=st.data())
    @step
    def note_in_place(self, data: st.DataObject) -> None:
        self.note_here(data)

    def note_here(self, data: st.DataObject) -> None:
        """Write one valid note in the way one of the :data:`NOTE_PLACES` reached relates it to the log.

        A note whose rules relate it to the log (a retry between steps names the step that ended
        last, a title request quotes the user's latest messages, a command's done cites what it
        produced) was drawn among a dozen types wherever the agent happened to be, and most harness
        types (commands, hook results, dispatches, team and workflow records) were never written
        valid at all; so a port that refused one in a place it may stand went unseen.  The rule
        ``note_in_place`` calls this between actions, and :meth:`perform` now and then right after
        one, since some places last one action (between two steps of a turn).
        """
        event = placed_note(cast(DrawFn, data.draw), self.loop.builder, v0=not self.unknown_types)
        if event is not None:
            self.retitle("log_only")
            self.loop.builder.time = event["time"]
            self.deliver(event)

    # -- invalid candidates ---------------------------------------------------------------------------

    def mutation_order(self, rng: random.Random) -> Iterator[list[Mutation]]:
        """The machine's mutations grouped by violation code, in a random order: the codes this
        example submitted least come first, and within a code the least-submitted mutation.

        ``rng`` should come from :meth:`keyed`: Hypothesis draws the seeds of ``st.randoms`` lumpily
        (a few values come up again and again), so orders shuffled by the drawn generator alone
        exercised some codes dozens of times per run and others never.
        """
        by_code: dict[str, list[Mutation]] = {}
        for mutation in self.injections:
            by_code.setdefault(mutation.code.value, []).append(mutation)
        tried = self.injected

        def submitted(code: str) -> int:
            return sum(tried[m.name] for m in by_code[code])

        ties = {code: rng.random() for code in sorted(by_code)}
        for code in sorted(by_code, key=lambda c: (submitted(c), ties[c])):
            mutations = by_code[code]
            rng.shuffle(mutations)
            yield sorted(mutations, key=lambda m: tried[m.name])

    def pick(self, data: st.DataObject, options: Sequence[T], label: str) -> T:
        """One of ``options`` (a kind of fault, probe or change), spread over the run (see :mod:`spread`)."""
        return spread(cast(DrawFn, data.draw), options, self.loop.builder.fingerprint, label)

    def keyed(self, rng: random.Random) -> random.Random:
        """A generator seeded by the drawn one together with the session built so far.

        Two examples that drew the same seed rarely share their whole log, so the orders they get
        are independent; and the order is still a function of the example's own choices, so every
        replay of it (while Hypothesis shrinks it) submits the same candidates.  Counting across
        examples would spread the codes more evenly still, but it makes the outcome of a replayed
        choice sequence depend on earlier examples, which Hypothesis refuses as flaky.
        """
        digest = hashlib.blake2b(self.loop.builder.fingerprint.encode(), digest_size=16)
        digest.update(rng.getrandbits(64).to_bytes(8, "little"))
        return random.Random(digest.digest())

    @precondition(lambda self: bool(self.injections))
    @rule(rng=st.randoms(use_true_random=True))
    @step
    def inject(self, rng: random.Random) -> None:
        keyed = self.keyed(rng)
        # Where every append candidate is also lifted onto the machine's path (a v0 log through the
        # edge, a stored log), its own codes were a tenth of the codes and each came up a few times
        # a run; a candidate that picks one of several sites (which legacy form is malformed, which
        # row's ranges) then missed its rarer sites in whole runs.
        own = self.written_codes if keyed.randrange(OWN_CODES_FIRST) == 0 else frozenset()
        with self.one_state_check():
            self.inject_some(keyed, keyed.randint(2, 6), first=own)

    @functools.cached_property
    def written_codes(self) -> frozenset[Code]:
        """The codes of the candidates written for this machine's paths (not lifted onto them)."""
        return frozenset(m.code for m in self.injections if m.lifted_from is None)

    def inject_some(self, rng: random.Random, wanted: int, first: frozenset[Code] = frozenset()) -> None:
        """Submit candidates of the first ``wanted`` codes the session's state allows: one each, but
        for a code in ``first``, every candidate written for it that builds here.

        The order is :meth:`mutation_order`'s, with the codes in ``first`` moved ahead.  A code
        labels several rules of a path (a malformed line is a byte-order mark, a torn header, range
        provenance out of order, …), and one candidate a code left each of them a few builds a run.
        """
        order = sorted(self.mutation_order(rng), key=lambda ms: ms[0].code not in first)
        for mutations in order:
            written = [m for m in mutations if m.lifted_from is None] if mutations[0].code in first else []
            built = sum(self.slip_in(m, rng) for m in written)
            if not built and not any(self.slip_in(m, rng) for m in mutations if m not in written):
                continue
            wanted -= 1
            if wanted == 0:
                return

    def slip_in(self, mutation: Mutation, rng: random.Random) -> bool:
        """Build ``mutation``'s candidate for the session so far and submit it, if it can be built here."""
        candidate = mutation.build(self.loop.builder, rng)
        if candidate is None:
            return False
        self.injected[mutation.name] += 1
        self.submit(mutation, candidate)
        return True

    # -- invalid candidates that need a particular place in the session ----------------------------------

    @precondition(lambda self: self.injects(TOOL_RESULT_CODES) and self.loop.state.trace.open_step is not None)
    @rule(data=st.data(), rng=st.randoms(use_true_random=True))
    @step
    def fault_running_tool(self, data: st.DataObject, rng: random.Random) -> None:
        # A tool result can only be malformed against a call that started and is unanswered; the
        # agent pauses there in a few steps of a hundred, so this rule takes it there on purpose.
        unstarted, started = open_calls(self.loop.builder)
        if not started:
            if not unstarted:
                self.request_now(data)
                self.retitle("assistant_message")
                self.deliver(assistant_with_call(self.loop.builder, data.draw(st.sampled_from(TOOL_NAMES), label="tool")))
            self.perform(data, "tool_call")
        self.retitle("inject")
        with self.one_state_check():
            self.inject_some(self.keyed(rng), 1, first=TOOL_RESULT_CODES)

    @precondition(lambda self: any(self.injects(p.codes) and p.reached(self.loop) for p in PLACES))
    @rule(rng=st.randoms(use_true_random=True))
    @step
    def fault_in_place(self, rng: random.Random) -> None:
        # Where the session is at a place some candidates need (a step open, a call pending, a turn
        # open between steps), every candidate of those codes is submitted.  An inject step takes one
        # candidate per code among dozens, and only in the state it happens to find, so a candidate
        # whose place is brief or which shares its code with others came up in some runs only.
        # Nothing is done to get here, so the sessions the other rules build keep their shape.
        self.retitle("inject")
        keyed = self.keyed(rng)
        reached = [p for p in PLACES if p.reached(self.loop)]
        codes = frozenset().union(*(p.codes for p in reached if not p.live_only))
        live = frozenset().union(*(p.codes for p in reached if p.live_only))
        with self.one_state_check():
            for mutation in self.injections:
                if mutation.code in codes or (mutation.code in live and mutation.context == "append"):
                    self.slip_in(mutation, keyed)

    @precondition(lambda self: bool(self.injections) and not self.swept and len(self.loop.log) >= SWEEP_AFTER)
    @rule(rng=st.randoms(use_true_random=True))
    @step
    def sweep(self, rng: random.Random) -> None:
        # Once per example, where the session happens to be: every variant of every candidate of one
        # code (agent.variants), and sixty payload fault sites drawn over every type
        # (payload_fault_sweep).  An inject step draws one candidate per code and one variant of it,
        # so a code's rarer situation (one of its dozen mutations, one spelling, one of the events it
        # can stand on) or one site of one payload (a title's missing messageSeqs) came up a few
        # times in a thousand.
        self.retitle("inject")
        self.swept = True
        with self.one_state_check():
            self.sweep_here(self.keyed(rng))

    def sweep_here(self, keyed: random.Random) -> None:
        """The body of :meth:`sweep`, with its generator keyed to the session."""
        codes = sorted({m.code.value for m in self.injections})
        keyed.shuffle(codes)
        if keyed.random() < 0.5:
            # Half the sweeps begin with the codes of candidates written for the machine's own
            # paths: a machine whose paths also receive every candidate lifted onto them (a v0 log
            # through the edge, a stored log) otherwise swept its own rules once in dozens of codes.
            own = {c.value for c in self.written_codes}
            codes.sort(key=lambda code: code not in own)
        for code in codes:
            # The first code with a candidate here: most need a state the session is not in.
            family = [m for m in self.injections if m.code.value == code]
            # Builds are shared out among the candidates written for the code; a lifted twin (the
            # same variants on another path, each build asking the model about a whole log) gets a
            # few of its own.
            written = sum(m.lifted_from is None for m in family)
            share = max(SWEEP_BUILDS // max(written, 1), 4)
            swept = [
                (mutation, candidate)
                for mutation in family
                for candidate in variants(
                    mutation.build,
                    self.loop.builder,
                    limit=SWEPT_VARIANTS,
                    runs=share if mutation.lifted_from is None else TWIN_BUILDS,
                )
            ]
            for mutation, candidate in swept:
                self.injected[mutation.name] += 1
                self.submit(mutation, candidate)
            if swept:
                break
        payloads = [m for m in self.injections if (m.lifted_from or m.name) == PAYLOAD_FAULT]
        if payloads:
            # One path for the whole sweep; a fault of a type with its own code goes as that type's
            # candidate on the same path (refused with its code, not PAYLOAD_INVALID).
            context = keyed.choice(payloads).context
            on_path = {m.lifted_from or m.name: m for m in self.injections if m.context == context}
            for event in payload_fault_sweep(self.loop.builder, keyed):
                owner = on_path.get(MESSAGE_FAULTS.get(event["type"], PAYLOAD_FAULT))
                if owner is None:
                    continue
                candidate = lift_event(self.loop.builder, keyed, event, owner.context, owner.code)
                if candidate is not None:
                    self.injected[owner.name] += 1
                    self.submit(owner, candidate)

    def injects(self, codes: frozenset[Code]) -> bool:
        """Whether this machine slips in candidates refused with any of ``codes``."""
        return any(m.code in codes for m in self.injections)
