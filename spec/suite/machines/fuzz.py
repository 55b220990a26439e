"""The ``fuzz`` group: differential generation with no hand-written candidate.

The harness builds a realistic session as the other groups do, and now and then appends a rare move
a harness could write (``next_move``).  An event of it is perturbed
(:mod:`sessionlog_spec.suite.fuzz.perturb`: an envelope member, a keyword of the payload's published
schema, a value that is not lossless, the type, or an alternative a writer could write instead) and
sent on every path the port declares: appended to the live session (``append``), put in place of the
event in a copy of the log (``seed``, ``load`` and ``read`` of its stored text, ``upgrade_v0`` of it
as a v1 and as a v0 log).  So is a payload of any type drawn along its shape, or a move the harness
could write next (``drawn_perturbed``).  A sweep sends every value the model refuses and some it
accepts.  Whole stored texts are perturbed line by line too.  The model's answer decides; the port
must give the same verdict, code and state.

Which event is perturbed is drawn by form first (type, surface op, cited sources), so the rare forms
of a log (a rewrite, a retry, a compaction's events) are perturbed as often as its messages; and an
event, a header line or a relationship scene is sent now and then with two faults whose codes alone
differ (:mod:`sessionlog_spec.suite.fuzz.double`), so the order of any two checks is asked.

Four rules generate from the model's rules and tables rather than perturb: a valid next event
carrying two faults whose order the check-order table fixes (``fault_pair``), a short walk over the
relationship rules' preconditions from where the log stands (``relationship_scene``), the log
spelled in the v0 forms of the edge's tables, with a legacy member broken, a member the edge writes
added, an envelope member changed, a value replaced by an alternative, the order edited or a retired
form added (``v0_log``), and the log stored in a drawn layout of the physical codec, under a fork's
header line now and then (``stored_layout``).  The order edits insert a valid move inside the log too.

The group runs against any port that declares ``session``, ``read`` or ``legacy``, and asks only
the paths the port declares.
"""

from __future__ import annotations

import functools
import itertools
import random
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from sessionlog_spec.model.jsonl import header_line_problem, seed_length_problem
from sessionlog_spec.model.load import save_session
from sessionlog_spec.model.payloads import EVENT_PAYLOADS
from sessionlog_spec.model.session import SessionState
from sessionlog_spec.model.shapes import Context
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.protocol.messages import Ok
from sessionlog_spec.suite.agent.builder import RawEvent, SessionBuilder
from sessionlog_spec.suite.agent.legacy_forms import restarted_turn
from sessionlog_spec.suite.agent.payload_values import valid_payload
from sessionlog_spec.suite.fuzz.alternatives import by_edit
from sessionlog_spec.suite.fuzz.cover import COVER_SEQ, CoverSweep, as_event, covers, fitted
from sessionlog_spec.suite.fuzz.double import double_faults, same_stage
from sessionlog_spec.suite.fuzz.layouts import chunk_run, laid_out_rows, layout, retimed, row_faults
from sessionlog_spec.suite.fuzz.legacy_v0 import (
    V0_HEADER,
    by_place,
    member_additions,
    member_faults,
    retired_forms,
    spelled_log,
    v0_alternatives,
    v0_sessions,
)
from sessionlog_spec.suite.fuzz.pairs import pairs_on, scene_doubles
from sessionlog_spec.suite.fuzz.paths import PATH_GROUPS, PATHS, STORED_PATHS, V0_PATHS
from sessionlog_spec.suite.fuzz.perturb import (
    FAMILIES,
    Perturbation,
    by_form,
    carried,
    envelope_perturbations,
    family_sweep,
    header_line_edits,
    literal_respellings,
    moved_to,
    perturb_lines,
    perturbations,
    reordered,
)
from sessionlog_spec.suite.fuzz.scenes import MOVES_CAP, constructive_moves, drawn_templates, walk_from, with_move_inserted
from sessionlog_spec.suite.judged import appended, folded
from sessionlog_spec.suite.machines.agent import AgentMachine
from sessionlog_spec.suite.machines.base import step
from sessionlog_spec.suite.machines.legacy import stored_text

SWEEP_CAP = 24
"""How many perturbations of one family one step sends at most."""
DRAWN_AFTER = 4
"""Events a log holds before a payload is drawn for its end: a payload citing earlier seqs needs some."""
DRAWN_PER_STEP = 4
"""Payloads of one drawn type a drawn step sends at most (until one is accepted)."""
ACCEPTED_CAP = 6
"""Values of one sweep the model accepts that one step sends at most (it sends every refused one)."""
DOUBLE_CAP = 16
"""Values carrying two faults with different codes alone (:mod:`~sessionlog_spec.suite.fuzz.double`)
one step sends at most, beside its single faults: the order of two checks inside one value."""
HEADER_LINE = {"type": "session", "version": 1, "id": "fuzz-1", "createdAt": 1_700_000_000_000, "delegationDepth": 0}
"""The header line of a stored text the group writes when the port holds no session of its own."""
PAIR_FAULTS = 40
"""Faults of one event a pair step asks the model about at most, to find the pairs it carries."""
PAIRS_SENT = 6
"""Pairs of one step's events a pair step sends at most (each a different pair of codes)."""
SCENE_DEPTH = 2
"""Steps of a relationship walk from the log one scene step takes."""
SCENES_SENT = 6
"""Scenes of such a walk one step sends at most (distinct codes first)."""
LAYOUT_FAULTS = 2
"""Rows of a drawn layout one layout step sends broken (each in a text of its own)."""
SPELLED_SHARES = (0.3, 0.5, 0.8)
"""The shares of a log's events a v0 step spells in a v0 form (one drawn per step)."""
V0_VARIANTS = 4
"""Logs one v0 step sends: its spelled log as it stands or changed one way each."""
V0_CHANGES = 7
"""The kinds of change a v0 step draws its variants from (see :meth:`FuzzMachine.v0_log`)."""
WHOLE_EVENT = ("type", "legacy")
"""The families that replace what an event is, not one of its values: no second fault goes with them."""
DRAWN_FAMILIES = ("payload", "alternative", "lossless", "legacy")
"""The families a drawn payload is perturbed in: those of its values (its envelope and type are the
harness's own and perturbed on the log's events)."""
SCENE_DOUBLES = 2
"""Events carrying a scene's fault and another (or two other faults of its template) sent after it."""
COVER_BUDGET = 128
"""Edits of the cover sweep (:mod:`~sessionlog_spec.suite.fuzz.cover`) one step sends: a ``ci`` run's
steps of the rule send every edit of every covering payload about once."""
FITTED_FAMILIES = ("payload", "alternative", "legacy")
"""The families a fitted cover is swept in: what a writer could get wrong in its values."""
COVER_OTHER_PATHS = 4
"""Every this many edits of the cover sweep, one goes on a path other than ``append`` too."""


def _tracking_kept(before: SessionState, after: SessionState) -> bool:
    """Whether ``after`` holds what the harness tracks itself (the compaction, the calls' lives, the
    turn and step) as ``before`` did."""
    kept = after.relations.compaction == before.relations.compaction and after.relations.tools == before.relations.tools
    return kept and after.trace == before.trace


@functools.cache
def _chain_sessions() -> tuple[tuple[RawEvent, ...], ...]:
    return tuple(tuple(events) for events in v0_sessions())


class FuzzMachine(AgentMachine):
    """Checks every declared path with perturbed events and stored lines."""

    group = "fuzz"
    injections = ()
    cover_sweep: CoverSweep | None = None
    """The cover sweep of this process's run, shared by its examples so that they go on where the
    last one stopped."""

    @classmethod
    def prepare(cls) -> None:
        """Draw the relationship rules' templates (:func:`~sessionlog_spec.suite.fuzz.scenes.drawn_templates`)
        before the examples run, so the walks rebind drawn payloads of every rule's type too; the cover
        sweep starts afresh."""
        drawn_templates()
        FuzzMachine.cover_sweep = None

    def start(self) -> None:
        if self.live:
            self.exchange("reset")

    @property
    def live(self) -> bool:
        """Whether the port holds a live session the harness's events go to."""
        return self.ctx.supports("session")

    def paths(self) -> tuple[str, ...]:
        """The paths the port declares."""
        return tuple(p for p in PATHS if all(self.ctx.supports(g) for g in PATH_GROUPS[p]))

    def deliver(self, raw: RawEvent) -> None:
        if self.live:
            self.exchange_ok("append", event=raw)
        self.loop.commit(raw)

    def check_state(self) -> None:
        if self.live:
            self.exchange("state")
            if self.ctx.supports("jsonl"):
                self.exchange("save")

    def closing_check(self) -> None:
        self.retitle("fuzz_closing")
        self.send_log(list(self.loop.log), self.paths()[0] if self.paths() else "append")

    def take_over(self, state: SessionState) -> None:
        # A seeded or loaded log may end with a time a perturbation moved to its bound; the harness
        # keeps its own clock, so the events it writes next stay within the envelope.
        clock = self.loop.builder.time
        super().take_over(state)
        self.loop.builder.time = clock

    def clock(self) -> int:
        """The time of an event the group writes at the end of the log: the harness's clock, not the
        last event's time (which a perturbation may have moved to a bound)."""
        return int(self.loop.builder.time) + 1

    # -- what is sent ------------------------------------------------------------------------------------

    def stored(self, events: list[Any], version: int = 1) -> str:
        """``events`` as a stored text (header line first)."""
        return stored_text({"header": {**HEADER_LINE, "version": version}, "events": events})

    def append_or_refuse(self, event: Any) -> bool:
        """Append ``event`` on both sides; an accepted one joins the harness's log, a refused one owes a
        state check.  Whether it was accepted."""
        if isinstance(self.exchange("append", event=event), Ok):
            self.loop.commit(event)
            return True
        self.after_refusal()
        return False

    def send_log(self, events: list[Any], path: str) -> None:
        """Send a whole log on ``path``; a session the port now holds becomes the harness's."""
        if path in ("seed", "append"):
            self.replace_session("seed", events=events)
        elif path in STORED_PATHS:
            self.send_text(self.stored(events), path)
        else:
            version = 0 if path == "upgrade_v0" else 1
            self.exchange("upgrade_v0", log={"header": {**HEADER_LINE, "version": version}, "events": events})

    def send_text(self, text: str, path: str) -> None:
        """Send a stored text on ``path`` (``load`` or ``read``)."""
        if path == "load":
            self.replace_session("load", jsonl=text)
        else:
            self.exchange("read", jsonl=text)

    def replace_session(self, op: str, **args: Any) -> None:
        """``seed`` or ``load``: an accepted one replaces the session (the harness goes on from it), a
        refused one owes a state check; a check owed before is paid first, as the replacement hides it.

        A session loaded from a fork's log keeps its header line, which names how many events the
        fork inherited; no writer seeds such a session with fewer, and its stored text would then be
        unreadable (INV-JSONL-1).  Such a seed starts from a reset session instead."""
        self.settle_state_check()
        inherited = self.oracle.header.get("seedLength") if op == "seed" else None
        if isinstance(inherited, int) and inherited > len(args.get("events", ())):
            self.exchange("reset")
            self.take_over(self.oracle.state)
        if isinstance(self.exchange(op, **args), Ok):
            self.take_over(self.oracle.state)
        else:
            self.after_refusal()

    # -- rules ----------------------------------------------------------------------------------------------

    @precondition(lambda self: bool(self.loop.log) and bool(self.paths()))
    @rule(rng=st.randoms(use_true_random=True), data=st.data())
    @step
    def perturbed_event(self, rng: random.Random, data: st.DataObject) -> None:
        """An event of the log perturbed every way of one family (or a draw of them), each on one
        declared path, and some carrying two faults whose codes alone differ (:meth:`doubled`)."""
        path = self.pick(data, self.paths(), "path")
        family = self.pick(data, FAMILIES, "family")
        log = list(self.loop.log)
        if path == "append":
            chosen = log[by_form(log, rng)]
            base = moved_to(chosen, len(log), self.clock()) if rng.randrange(2) else chosen
            index = len(log)
        else:
            index = by_form(log, rng)
            base = log[index]
        self.retitle(f"fuzz_{path}")
        self.send_perturbed(base, index, path, family, rng)

    def send_perturbed(self, base: RawEvent, index: int, path: str, family: str, rng: random.Random) -> None:
        """``base`` (standing at ``index`` of the log: in place of an event, or after the last) perturbed
        every way of ``family`` (or a draw of them) and with two faults now and then, on ``path``.

        The values the model refuses go first; of those it accepts (a bound, a twin, a sibling: a port
        that refuses one is as wrong), :data:`ACCEPTED_CAP` are sent too.  On the live session the
        first is appended and the others seeded after the log as it stood: an append moves the session
        on, and what it moved on from is asked again whole."""
        sweep = family_sweep(base, index, rng, family, SWEEP_CAP)
        self.send_sweep([p.edit(base) for p in sweep] + self.doubled(base, index, sweep, rng), index, path)

    def send_sweep(self, events: list[RawEvent], index: int, path: str) -> None:
        """``events``, each standing at ``index`` of the log (in place of an event, or after the last),
        on ``path``: those the model refuses, then :data:`ACCEPTED_CAP` of those it accepts (see
        :meth:`send_perturbed`)."""
        log = list(self.loop.log)
        refused, accepted = self.by_verdict(events, index)
        with self.one_state_check():
            for event in refused:
                if path == "append":
                    self.append_or_refuse(event)
                else:
                    self.send_log([*log[:index], event, *log[index + 1 :]], path)
            for number, event in enumerate(accepted[:ACCEPTED_CAP]):
                if path == "append" and number == 0:
                    self.append_or_refuse(event)
                elif path == "append":
                    self.replace_session("seed", events=[*log, event])
                else:
                    self.send_log([*log[:index], event, *log[index + 1 :]], path)

    def by_verdict(self, events: list[RawEvent], index: int) -> tuple[list[RawEvent], list[RawEvent]]:
        """``events`` (each to stand at ``index`` of the log) split into those the model refuses there and
        those it accepts (all refused when the log before ``index`` is not valid itself)."""
        state = self.loop.state if index >= len(self.loop.log) else folded(self.loop.log[:index], complete=False)
        if isinstance(state, Violation):
            return events, []
        verdicts = [isinstance(appended(state, event), Violation) for event in events]
        refused = [e for e, no in zip(events, verdicts, strict=True) if no]
        return refused, [e for e, no in zip(events, verdicts, strict=True) if not no]

    def doubled(self, base: RawEvent, index: int, sweep: list[Perturbation], rng: random.Random) -> list[RawEvent]:
        """``base`` (standing at ``index`` of the log) carrying two faults whose codes alone differ, pairs
        of one check stage first, so the order of two checks within a stage (and then across stages) is
        asked (:func:`~sessionlog_spec.suite.fuzz.double.double_faults`, codes from the model)."""
        state = self.loop.state if index >= len(self.loop.log) else folded(self.loop.log[:index], complete=False)
        if isinstance(state, Violation):
            return []
        # Every perturbation (a fifth of a millisecond each for the model): a code only one site gives (a
        # header's reason) must be among them for its pairs to be asked.  A type swapped is left out: it
        # (or the event spelled as v0) puts it under another type's rules, where the other fault means
        # something else.
        every = [p for family, found in perturbations(base, index, rng).items() if family not in WHOLE_EVENT for p in found]
        singles = {p.name: p.edit(base) for p in [*sweep, *every] if p.family not in WHOLE_EVENT}

        def code_of(event: object) -> str | None:
            answer = appended(state, event)
            return answer.code.value if isinstance(answer, Violation) else None

        doubled = double_faults(base, list(singles.items()), code_of, rng, DOUBLE_CAP, near=same_stage)
        return [e for _, e in doubled if isinstance(e, dict)]

    @precondition(lambda self: bool(self.loop.log) and any(p in self.paths() for p in STORED_PATHS))
    @rule(rng=st.randoms(use_true_random=True), data=st.data(), edits=st.integers(1, 3))
    @step
    def perturbed_lines(self, rng: random.Random, data: st.DataObject, edits: int) -> None:
        """The stored text of the log with one to three line edits, loaded or read."""
        path = self.pick(data, [p for p in STORED_PATHS if p in self.paths()], "path")
        packed = data.draw(st.booleans(), label="packed")
        text = save_session(self.oracle.header, self.loop.state, packed) if self.live else self.stored(list(self.loop.log))
        perturbed, _ = perturb_lines(text, rng, edits)
        self.retitle(f"fuzz_lines_{path}")
        self.send_text(perturbed, path)

    @precondition(lambda self: bool(self.loop.log) and any(p in self.paths() for p in STORED_PATHS))
    @rule(rng=st.randoms(use_true_random=True), data=st.data())
    @step
    def respelled_literals(self, rng: random.Random, data: st.DataObject) -> None:
        """One line of the stored text (the header line too, rows packed or plain) with each of its
        integer literals spelled each other way (:func:`~sessionlog_spec.suite.fuzz.perturb.literal_respellings`:
        ``1.0``, ``1e0``, a leading zero, ``-0``), every one in a text of its own, loaded or read: a
        reader must take a literal as ``JSON.parse`` does, whichever member holds it."""
        path = self.pick(data, [p for p in STORED_PATHS if p in self.paths()], "path")
        packed = data.draw(st.booleans(), label="packed")
        text = save_session(self.oracle.header, self.loop.state, packed) if self.live else self.stored(list(self.loop.log))
        lines = text.split("\n")
        at = rng.randrange(len(lines) - 1) if rng.randrange(3) else 0
        respelled = literal_respellings(lines[at])
        if len(respelled) > SWEEP_CAP * 2:
            respelled = rng.sample(respelled, SWEEP_CAP * 2)
        self.retitle(f"fuzz_lines_{path}")
        with self.one_state_check():
            for _, line in respelled:
                self.send_text("\n".join([*lines[:at], line, *lines[at + 1 :]]), path)

    @precondition(lambda self: bool(self.loop.log) and any(p in self.paths() for p in STORED_PATHS))
    @rule(rng=st.randoms(use_true_random=True), data=st.data())
    @step
    def stored_layout(self, rng: random.Random, data: st.DataObject) -> None:
        """The log stored in a drawn layout of the physical codec (:mod:`~sessionlog_spec.suite.fuzz.layouts`):
        chunk runs packed at drawn cuts (rows of one chunk too), provenance as ranges, now and then a run
        of chunks of a drawn kind after an open step and a clock that goes back, a third of them under a
        fork's header line (the log's first events inherited); then, for some, one row the layout wrote
        broken at one place.  Loaded or read."""
        path = self.pick(data, [p for p in STORED_PATHS if p in self.paths()], "path")
        events = [*self.loop.log, *self.chunks_after(rng)]
        if rng.randrange(2):
            events = retimed(events, rng)
        rows = layout(events, rng)
        texts = [rows]
        laid = laid_out_rows(rows)
        for at in rng.sample(laid, min(LAYOUT_FAULTS, len(laid))):
            _, broken = rng.choice(row_faults(rows[at]))
            texts.append([*rows[:at], broken, *rows[at + 1 :]])
        header = HEADER_LINE
        if rng.randrange(3) == 0:
            # A fork's log: its first seedLength events are the parent's, markers naming the parent included.
            # seedLength counts events, not the rows that stand for them: its bounds by both counts.
            bounds = {0, len(rows), min(len(rows) + 1, len(events)), len(events), rng.randint(0, len(events))}
            inherited = rng.choice(sorted(bounds))
            header = {**HEADER_LINE, "id": "fuzz-child", "parentSession": HEADER_LINE["id"], "origin": "subagent",
                      "delegationDepth": 1, "seedLength": inherited}  # fmt: skip
        self.retitle(f"fuzz_layout_{path}")
        with self.one_state_check():
            for rows_ in texts:
                self.send_text(stored_text({"header": header, "events": rows_}), path)

    def chunks_after(self, rng: random.Random) -> list[RawEvent]:
        """A run of chunks the log could go on with (:func:`~sessionlog_spec.suite.fuzz.layouts.chunk_run`),
        as far as the model accepts it; none when no step is open."""
        state = self.loop.state
        turn, step_ = state.trace.open_turn, state.trace.open_step
        if turn is None or step_ is None:
            return []
        run = chunk_run(turn, step_, len(self.loop.log), self.clock(), rng)
        kept: list[RawEvent] = []
        for event in run:
            after = appended(state, event)
            if isinstance(after, Violation):
                break
            state = after
            kept.append(event)
        return kept

    @precondition(lambda self: len(self.loop.log) > 1 and bool(self.paths()))
    @rule(rng=st.randoms(use_true_random=True), data=st.data())
    @step
    def reordered_log(self, rng: random.Random, data: st.DataObject) -> None:
        """The log with one event dropped, doubled, swapped with the next or moved to the end, or with a
        valid move inserted inside it (:func:`~sessionlog_spec.suite.fuzz.scenes.with_move_inserted`),
        renumbered: an order of valid events the harness never writes, judged by the relationship
        rules alone.
        On the live path the moved event is appended again as it stands."""
        path = self.pick(data, self.paths(), "path")
        log = list(self.loop.log)
        self.retitle(f"fuzz_order_{path}")
        if path == "append":
            again = moved_to(rng.choice(log), len(log), self.clock())
            with self.one_state_check():
                self.append_or_refuse(again)
            return
        inserted = with_move_inserted(log, rng.randrange(1, len(log)), rng) if rng.randrange(2) else None
        events = inserted if inserted is not None else reordered(log, rng)[0]
        self.send_log(events, path)

    @precondition(lambda self: len(self.loop.log) >= DRAWN_AFTER and bool(self.paths()))
    @rule(data=st.data())
    @step
    def drawn_payload(self, data: st.DataObject) -> None:
        """An event of any type whose payload is drawn along its shape (boundaries included) where the
        log stands: valid values the harness's builders never write, and the relationship rules on them."""
        path = self.pick(data, self.paths(), "path")
        event_type = self.pick(data, sorted(EVENT_PAYLOADS), "type")
        seq, log = len(self.loop.log), list(self.loop.log)
        strategy = valid_payload(EVENT_PAYLOADS[event_type], Context(event_seq=seq))
        payloads = [p for p in data.draw(st.lists(strategy, min_size=1, max_size=DRAWN_PER_STEP), label="payloads") if carried(p)]
        self.retitle(f"fuzz_drawn_{path}")
        with self.one_state_check():
            for payload in payloads:
                event = {"type": event_type, "seq": seq, "time": self.clock(), "data": payload}
                if path == "append":
                    if self.append_or_refuse(event):
                        return
                    continue
                self.send_log([*log, event], path)
                if path in ("seed", "load") and len(self.loop.log) != len(log):
                    return  # accepted: the harness goes on from it

    @precondition(lambda self: self.live)
    @rule(data=st.data())
    @step
    def next_move(self, data: st.DataObject) -> None:
        """A move a harness could write next, drawn evenly by move among those the model accepts here
        (an ignorable note of another writer, a compaction a command started, a rewrite, a crash-repair
        result, a retry's start), appended: the log the other rules perturb holds the rare moves too."""
        state = self.loop.state
        valid = {}
        for name, raws in constructive_moves(state):
            after = folded([*self.loop.log, *raws], complete=False)
            # Moves that open or settle what the harness tracks itself (a compaction, a call's life, a
            # turn or step) are the harness's own to make: the loop would not know to close them.
            if isinstance(after, Violation) or not _tracking_kept(state, after):
                continue
            valid[name] = raws
        if not valid:
            return
        self.retitle("fuzz_append")
        for raw in valid[self.pick(data, sorted(valid), "move")]:
            self.deliver(raw)

    @precondition(lambda self: len(self.loop.log) >= DRAWN_AFTER and bool(self.paths()))
    @rule(rng=st.randoms(use_true_random=True), data=st.data())
    @step
    def drawn_perturbed(self, rng: random.Random, data: st.DataObject) -> None:
        """An event for the end of the log, perturbed as a log's event is: either a payload of a type
        drawn evenly, drawn valid along its shape (its schema's keywords, its alternatives, its values
        perturbed: every arm of every union meets every keyword, where the harness's builders write a
        few arms often), or a move a harness could write next, drawn evenly by move (a rewrite, a
        crash-repair result, a retry's start, a compaction's events: perturbed in every family)."""
        path = self.pick(data, self.paths(), "path")
        seq = len(self.loop.log)
        if data.draw(st.booleans(), label="a next move"):
            moves = constructive_moves(self.loop.state)
            single = {name: raws[0] for name, raws in moves if len(raws) == 1}
            if not single:
                return
            base = single[self.pick(data, sorted(single), "move")]
            family = self.pick(data, FAMILIES, "family")
        else:
            event_type = self.pick(data, sorted(EVENT_PAYLOADS), "type")
            family = self.pick(data, DRAWN_FAMILIES, "family")
            payload = data.draw(valid_payload(EVENT_PAYLOADS[event_type], Context(event_seq=seq)), label="payload")
            if not carried(payload):
                return
            base = {"type": event_type, "seq": seq, "time": self.clock(), "data": payload}
        self.retitle(f"fuzz_drawn_{path}")
        self.send_perturbed(base, seq, path, family, rng)

    @precondition(lambda self: len(self.loop.log) >= COVER_SEQ and bool(self.paths()))
    @rule(data=st.data())
    @step
    def covered_sites(self, data: st.DataObject) -> None:
        """The next edits of the cover sweep (:mod:`~sessionlog_spec.suite.fuzz.cover`): payloads built
        to hold every member of every arm of every type, each broken at every keyword of its schema and
        replaced by every alternative, in turn over the run, so a bound on a member few payloads carry
        is asked every run.  Every edit is appended to the live session (the payload is judged before
        the event's place in the log, so any payload rule shows there); every
        :data:`COVER_OTHER_PATHS`-th goes on another path too, after the log's first events."""
        if FuzzMachine.cover_sweep is None:
            FuzzMachine.cover_sweep = CoverSweep()
        edits = [e for e in FuzzMachine.cover_sweep.take(COVER_BUDGET) if carried(e.payload)]
        others = [p for p in self.paths() if p != "append"]
        if "append" in self.paths():
            self.retitle("fuzz_cover_append")
            with self.one_state_check():
                for edit in edits:
                    event = as_event(edit.cover, len(self.loop.log), self.clock(), edit.payload)
                    if self.leaves_tracking(event):
                        self.append_or_refuse(event)
            edits = edits[data.draw(st.integers(0, COVER_OTHER_PATHS - 1), label="offset") :: COVER_OTHER_PATHS]
        if not others:
            return
        path = self.pick(data, others, "path")
        self.retitle(f"fuzz_cover_{path}")
        with self.one_state_check():
            for edit in edits:
                prefix = list(self.loop.log[:COVER_SEQ])
                self.send_log([*prefix, as_event(edit.cover, COVER_SEQ, self.clock(), edit.payload)], path)

    @precondition(lambda self: self.live and len(self.loop.log) >= COVER_SEQ)
    @rule(rng=st.randoms(use_true_random=True), data=st.data())
    @step
    def fitted_cover(self, rng: random.Random, data: st.DataObject) -> None:
        """A covering payload of a type the harness could write next, fitted to where the log stands
        (:func:`~sessionlog_spec.suite.fuzz.cover.fitted`: the move's turn, step, ids and names), as far
        as the model accepts it; then every keyword, alternative and v0 spelling of it, appended.  A
        rule a port checks only for an event in its place (an id that must not be empty, a reason
        judged once the turn matches) meets the rare members too."""
        state, seq = self.loop.state, len(self.loop.log)
        moves: dict[str, RawEvent] = {}
        for _, raws in constructive_moves(state):
            if len(raws) == 1 and raws[0]["type"] in EVENT_PAYLOADS:
                moves.setdefault(raws[0]["type"], raws[0])
        if not moves:
            return
        move = moves[self.pick(data, sorted(moves), "type")]
        fits = []
        for cover in covers(COVER_SEQ):
            if cover.event_type == move["type"]:
                event = {**move, "seq": seq, "time": self.clock(), "data": fitted(cover.payload, move["data"])}
                if not isinstance(appended(state, event), Violation):
                    fits.append(event)
        if not fits:
            return
        base = rng.choice(fits)
        found = perturbations(base, seq, rng)
        edits = [p.edit(base) for family in FITTED_FAMILIES for p in found[family]]
        self.retitle("fuzz_cover_append")
        self.send_sweep([e for e in edits if carried(e) and self.leaves_tracking(e)], seq, "append")

    def leaves_tracking(self, event: RawEvent) -> bool:
        """Whether ``event``, appended, leaves what the harness tracks itself as it was (refused, or
        accepted without opening or settling a compaction, a call's life, a turn or a step): the harness
        must not be left something to close that it did not open."""
        state = self.loop.state
        after = appended(state, event)
        return isinstance(after, Violation) or _tracking_kept(state, after)

    @precondition(lambda self: any(p in self.paths() for p in STORED_PATHS))
    @rule(rng=st.randoms(use_true_random=True), data=st.data(), child=st.booleans())
    @step
    def perturbed_header_line(self, rng: random.Random, data: st.DataObject, child: bool) -> None:
        """The stored log under a header line broken at each keyword of its published document, or with
        ``seedLength`` at each bound the document cannot state; a drawn share of them, loaded or read."""
        path = self.pick(data, [p for p in STORED_PATHS if p in self.paths()], "path")
        events = list(self.loop.log)
        header: dict[str, Any] = {**HEADER_LINE, "cwd": "/work", "agentPreset": "default"}
        if child:
            header |= {"parentSession": "fuzz-parent", "seedLength": len(events), "origin": "subagent", "delegationDepth": 1}
        edits = header_line_edits(header, len(events))
        self.retitle(f"fuzz_header_{path}")

        def code_of(edited: object) -> str | None:
            if not isinstance(edited, dict):
                return "not an object"
            problem = header_line_problem(edited) or seed_length_problem(edited, len(events))
            return None if problem is None else problem.code.value

        doubled = list(double_faults(header, edits, code_of, rng, DOUBLE_CAP))
        with self.one_state_check():
            for _, edited in [*rng.sample(edits, min(SWEEP_CAP, len(edits))), *doubled]:
                self.send_text(stored_text({"header": edited, "events": events}), path)

    @precondition(lambda self: bool(self.paths()))
    @rule(rng=st.randoms(use_true_random=True), data=st.data())
    @step
    def fault_pair(self, rng: random.Random, data: st.DataObject) -> None:
        """A valid next event carrying two faults whose order the check-order table fixes
        (:func:`~sessionlog_spec.check_order.ordered_pairs`), a pair drawn among those it carries:
        the model answers the first, and a port that checks in another order the second."""
        path = self.pick(data, self.paths(), "path")
        state = self.loop.state
        nexts = [raws[0] for _, raws in constructive_moves(state) if len(raws) == 1]
        rng.shuffle(nexts)
        witnesses = [w for event in nexts[:3] for w in itertools.islice(pairs_on(state, event, rng, cap=PAIR_FAULTS), PAIRS_SENT)]
        if not witnesses:
            return
        self.retitle(f"fuzz_pair_{path}")
        with self.one_state_check():
            for witness in rng.sample(witnesses, min(PAIRS_SENT, len(witnesses))):
                self.send_at_end(witness.event, path)

    @precondition(lambda self: bool(self.paths()))
    @rule(rng=st.randoms(use_true_random=True), data=st.data())
    @step
    def relationship_scene(self, rng: random.Random, data: st.DataObject) -> None:
        """A short walk over the relationship rules' preconditions from where the log stands
        (:func:`~sessionlog_spec.suite.fuzz.scenes.walk_from`): its refused moves, each on the valid
        log the walk had built, on one drawn path."""
        path = self.pick(data, self.paths(), "path")
        found: dict[str, list[Any]] = {}
        for scene in walk_from(self.loop.state, rng, depth=SCENE_DEPTH, first_cap=MOVES_CAP):
            found.setdefault(scene.code, []).append(scene)
        if not found:
            return
        chosen = [rng.choice(found[code]) for code in rng.sample(sorted(found), min(SCENES_SENT, len(found)))]
        self.retitle(f"fuzz_scene_{path}")
        with self.one_state_check():
            for scene in chosen:
                events = [scene.event, *scene_doubles(scene, rng, SCENE_DOUBLES)]
                if path == "append":
                    if list(scene.log) != list(self.loop.log):
                        continue  # the walk moved on from the harness's log: only a seed of it says so
                    for event in events:
                        if self.append_or_refuse(event):
                            return
                else:
                    for event in events:
                        self.send_log([*scene.log, event], path)
                        if path in ("seed", "load") and list(self.loop.log) == [*scene.log, event]:
                            return  # accepted: the session the harness goes on from is another now
                    if path in ("seed", "load"):
                        return

    @precondition(lambda self: bool(self.loop.log) and any(p in self.paths() for p in V0_PATHS))
    @rule(rng=st.randoms(use_true_random=True), data=st.data())
    @step
    def v0_log(self, rng: random.Random, data: st.DataObject) -> None:
        """A log as a v0 writer could have written it (:meth:`v0_original`): a drawn share of its events
        each in a drawn spelling of the edge's tables (N1–N9); then :data:`V0_VARIANTS` logs of it, each
        as it stands or with one change of a drawn kind: a legacy member broken, a member the edge
        writes itself added to a legacy record (with the value the edge would write, or the writer's
        own), an envelope member of a spelled event dropped or added, a value replaced by an
        alternative, the order edited, a retired form added.  Put to the edge, or stored as v0 and
        loaded or read."""
        path = self.pick(data, [p for p in V0_PATHS if p in self.paths()], "path")
        original, v0_only = self.v0_original(rng)
        events, names = spelled_log(original, rng, share=rng.choice(SPELLED_SHARES))
        # The spelled events by the spelling they were given: a change goes to a spelling drawn evenly
        # (a log holds many messages spelled alike and one failure record).
        spelled: dict[str, list[int]] = {}
        for name in names:
            seq, spelling = name.split(": ", 1)
            spelled.setdefault(spelling, []).append(int(seq))
        self.retitle(f"fuzz_v0_{path}")
        # Distinct kinds of change in one step (one of them may be none): a rare kind comes up as often
        # as a common one, and the log is asked as it stands only now and then.
        kinds = rng.sample(range(V0_CHANGES), V0_VARIANTS)
        with self.one_state_check():
            for kind in kinds:
                variant = self.v0_variant(events, original, (spelled, v0_only), rng, kind)
                log = {"header": {**V0_HEADER, "id": HEADER_LINE["id"]}, "events": variant}
                if path == "upgrade_v0":
                    self.exchange("upgrade_v0", log=log)
                else:
                    self.send_text(stored_text(log), path)

    def v0_original(self, rng: random.Random) -> tuple[list[RawEvent], list[int]]:
        """The v1 log a v0 step spells, and the indices of its events only a v0 writer writes: the
        harness's log; one of the edge's chain sessions now and then
        (:func:`~sessionlog_spec.suite.fuzz.legacy_v0.v0_sessions`: a retry chain, a rewrite, a
        compaction group); or the harness's ended by the released interrupted-turn restart when a
        turn is open between steps (a v0-only order, INV-LEGACY-6: its splice and ``turn/start``)."""
        log = list(self.loop.log)
        trace = self.loop.state.trace
        if rng.randrange(4) == 0:
            return list(rng.choice(_chain_sessions())), []
        if trace.open_turn is not None and trace.open_step is None and rng.randrange(2):
            builder = SessionBuilder(self.loop.state, time=self.clock())
            restart = restarted_turn(builder)
            return [*log, *restart], list(range(len(log), len(log) + len(restart)))
        return log, []

    def v0_variant(
        self,
        events: list[RawEvent],
        original: list[RawEvent],
        places: tuple[dict[str, list[int]], list[int]],
        rng: random.Random,
        kind: int,
    ) -> list[RawEvent]:
        """``events`` (a spelled log) with one change of kind ``kind`` (see :meth:`v0_log`), where one is
        asked for at an event a v0 writer alone writes: ``places`` are the spelled events by spelling
        (one drawn evenly) and those of a v0-only order (drawn first half the time)."""
        variant = list(events)
        spelled, v0_only = places
        if v0_only and (rng.randrange(2) or not spelled):
            at = rng.choice(v0_only)
        elif spelled:
            at = rng.choice(spelled[rng.choice(sorted(spelled))])
        else:
            at = rng.randrange(len(variant))
        if kind == 1 and (faults := member_faults("v0", variant[at])):
            variant[at] = by_place(faults, rng)[1]
        elif kind == 2 and (added := member_additions("v0", variant[at], original[at])):
            variant[at] = by_place(added, rng)[1]
        elif kind == 3:
            edits = envelope_perturbations(variant[at], at)
            variant[at] = rng.choice(edits).edit(variant[at])
        elif kind == 4 and len(variant) > 1:
            variant, _ = reordered(variant, rng)
        elif kind == 5:
            variant.append(rng.choice(retired_forms(len(variant), self.clock()))[1])
        elif kind == 6 and (alternatives := v0_alternatives(variant[at])):
            variant[at] = by_edit(alternatives, rng)[1]
        return variant

    def send_at_end(self, event: Any, path: str) -> None:
        """``event`` after the log on ``path``: appended, or at the end of the log sent whole."""
        if path == "append":
            with self.one_state_check():
                self.append_or_refuse(event)
            return
        self.send_log([*self.loop.log, event], path)
