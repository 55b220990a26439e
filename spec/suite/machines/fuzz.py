"""The ``fuzz`` group: differential generation with no hand-written candidate.

The harness builds a realistic session as the other groups do.  Now and then an event of it is
perturbed (:mod:`sessionlog_spec.suite.fuzz.perturb`: an envelope member, a keyword of the
payload's published schema, a value that is not lossless, the type) once or twice, and sent on
every path the port declares: appended to the live session (``append``), put in place of the
event in a copy of the log (``seed``, ``load`` and ``read`` of its stored text, ``upgrade_v0`` of it
as a v1 and as a v0 log).  Whole stored texts are perturbed line by line too.  The model's answer
decides; the port must give the same verdict, code and state.

Three rules generate from the model's rules and tables rather than perturb: a valid next event
carrying two faults whose order the check-order table fixes (``fault_pair``), a short walk over the
relationship rules' preconditions from where the log stands (``relationship_scene``), and the log
spelled in the v0 forms of the edge's tables, now and then with a legacy member broken or a retired
form added (``v0_log``).

The group runs against any port that declares ``session``, ``read`` or ``legacy``, and asks only
the paths the port declares.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from sessionlog_spec.model.load import save_session
from sessionlog_spec.model.payloads import EVENT_PAYLOADS
from sessionlog_spec.model.session import SessionState
from sessionlog_spec.model.shapes import Context
from sessionlog_spec.protocol.messages import Ok
from sessionlog_spec.suite.agent.builder import RawEvent
from sessionlog_spec.suite.agent.payload_values import valid_payload
from sessionlog_spec.suite.fuzz.legacy_v0 import V0_HEADER, member_faults, retired_forms, spelled_log
from sessionlog_spec.suite.fuzz.pairs import pairs_on
from sessionlog_spec.suite.fuzz.paths import PATH_GROUPS, PATHS, STORED_PATHS, V0_PATHS
from sessionlog_spec.suite.fuzz.perturb import (
    FAMILIES,
    carried,
    draw_perturbation,
    family_sweep,
    header_line_edits,
    moved_to,
    perturb_lines,
    reordered,
)
from sessionlog_spec.suite.fuzz.scenes import MOVES_CAP, constructive_moves, walk_from
from sessionlog_spec.suite.machines.agent import AgentMachine
from sessionlog_spec.suite.machines.base import step
from sessionlog_spec.suite.machines.legacy import stored_text

SWEEP_CAP = 24
"""How many perturbations of one family one step sends at most."""
DRAWN_AFTER = 4
"""Events a log holds before a payload is drawn for its end: a payload citing earlier seqs needs some."""
SECOND_FAULT = 3
"""One perturbed event in this many carries a second fault: which code a port gives first
(``invariants.md``, "Check order") is then asked too."""
HEADER_LINE = {"type": "session", "version": 1, "id": "fuzz-1", "createdAt": 1_700_000_000_000, "delegationDepth": 0}
PAIR_FAULTS = 40
"""Faults of one event a pair step asks the model about at most, to find the pairs it carries."""
SCENE_DEPTH = 2
"""Steps of a relationship walk from the log one scene step takes."""
SCENES_SENT = 6
"""Scenes of such a walk one step sends at most (distinct codes first)."""
"""The header line of a stored text the group writes when the port holds no session of its own."""


class FuzzMachine(AgentMachine):
    """Checks every declared path with perturbed events and stored lines."""

    group = "fuzz"
    injections = ()

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
        refused one owes a state check; a check owed before is paid first, as the replacement hides it."""
        self.settle_state_check()
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
        declared path; one in :data:`SECOND_FAULT` carries a second fault."""
        path = self.pick(data, self.paths(), "path")
        family = self.pick(data, FAMILIES, "family")
        log = list(self.loop.log)
        if path == "append":
            base = moved_to(rng.choice(log), len(log), self.clock()) if rng.randrange(2) else rng.choice(log)
            index = len(log)
        else:
            index = rng.randrange(len(log))
            base = log[index]
        self.retitle(f"fuzz_{path}")
        with self.one_state_check():
            for perturbation in family_sweep(base, index, rng, family, SWEEP_CAP):
                event = perturbation.edit(base)
                if rng.randrange(SECOND_FAULT) == 0:
                    # A second fault, half the time of the same family (two rules of one stage: the order
                    # within it), else of any: the order across stages.
                    second = draw_perturbation(event, index, rng, only=family if rng.randrange(2) else None)
                    event = event if second is None or second.name == perturbation.name else second.edit(event)
                if path == "append":
                    if self.append_or_refuse(event):
                        return
                else:
                    self.send_log([*log[:index], event, *log[index + 1 :]], path)
                    if path in ("seed", "load") and len(self.loop.log) != len(log):
                        return

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

    @precondition(lambda self: len(self.loop.log) > 1 and bool(self.paths()))
    @rule(rng=st.randoms(use_true_random=True), data=st.data())
    @step
    def reordered_log(self, rng: random.Random, data: st.DataObject) -> None:
        """The log with one event dropped, doubled, swapped with the next or moved to the end, renumbered:
        an order of valid events the harness never writes, judged by the relationship rules alone.
        On the live path the moved event is appended again as it stands."""
        path = self.pick(data, self.paths(), "path")
        log = list(self.loop.log)
        self.retitle(f"fuzz_order_{path}")
        if path == "append":
            again = moved_to(rng.choice(log), len(log), self.clock())
            with self.one_state_check():
                self.append_or_refuse(again)
            return
        events, _ = reordered(log, rng)
        self.send_log(events, path)

    @precondition(lambda self: len(self.loop.log) >= DRAWN_AFTER and bool(self.paths()))
    @rule(data=st.data())
    @step
    def drawn_payload(self, data: st.DataObject) -> None:
        """An event of any type whose payload is drawn along its shape (boundaries included) where the
        log stands: valid values the harness's builders never write, and the relationship rules on them."""
        path = self.pick(data, self.paths(), "path")
        event_type = self.pick(data, sorted(EVENT_PAYLOADS), "type")
        seq = len(self.loop.log)
        payload = data.draw(valid_payload(EVENT_PAYLOADS[event_type], Context(event_seq=seq)), label="payload")
        if not carried(payload):
            return
        time = self.clock()
        event = {"type": event_type, "seq": seq, "time": time, "data": payload}
        self.retitle(f"fuzz_drawn_{path}")
        if path == "append":
            with self.one_state_check():
                self.append_or_refuse(event)
            return
        self.send_log([*self.loop.log, event], path)

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
        with self.one_state_check():
            for _, edited in rng.sample(edits, min(SWEEP_CAP, len(edits))):
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
        witness = next((w for event in nexts[:3] for w in pairs_on(state, event, rng, cap=PAIR_FAULTS)), None)
        if witness is None:
            return
        self.retitle(f"fuzz_pair_{path}")
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
        for scene in walk_from(self.loop.state, rng, depth=SCENE_DEPTH, drawn=False, first_cap=MOVES_CAP):
            found.setdefault(scene.code, []).append(scene)
        if not found:
            return
        chosen = [rng.choice(found[code]) for code in rng.sample(sorted(found), min(SCENES_SENT, len(found)))]
        self.retitle(f"fuzz_scene_{path}")
        with self.one_state_check():
            for scene in chosen:
                if path == "append":
                    if list(scene.log) != list(self.loop.log):
                        continue  # the walk moved on from the harness's log: only a seed of it says so
                    if self.append_or_refuse(scene.event):
                        return
                else:
                    self.send_log([*scene.log, scene.event], path)
                    if path in ("seed", "load"):
                        return

    @precondition(lambda self: bool(self.loop.log) and any(p in self.paths() for p in V0_PATHS))
    @rule(rng=st.randoms(use_true_random=True), data=st.data())
    @step
    def v0_log(self, rng: random.Random, data: st.DataObject) -> None:
        """The log as a v0 writer could have written it: each event in a drawn spelling of the edge's
        tables (N1–N9), and one in three with a legacy member broken or a retired form added; put to
        the edge, or stored as v0 and loaded or read."""
        path = self.pick(data, [p for p in V0_PATHS if p in self.paths()], "path")
        events, _ = spelled_log(list(self.loop.log), rng)
        fault = rng.randrange(3)
        if fault == 1:
            at = rng.randrange(len(events))
            faults = member_faults("v0", events[at])
            if faults:
                events[at] = rng.choice(faults)[1]
        elif fault == 2:
            events.append(rng.choice(retired_forms(len(events), self.clock()))[1])
        self.retitle(f"fuzz_v0_{path}")
        log = {"header": {**V0_HEADER, "id": HEADER_LINE["id"]}, "events": events}
        if path == "upgrade_v0":
            self.exchange("upgrade_v0", log=log)
        else:
            self.send_text(stored_text(log), path)

    def send_at_end(self, event: Any, path: str) -> None:
        """``event`` after the log on ``path``: appended, or at the end of the log sent whole."""
        if path == "append":
            with self.one_state_check():
                self.append_or_refuse(event)
            return
        self.send_log([*self.loop.log, event], path)
