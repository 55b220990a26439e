"""The ``jsonl`` group: ``save`` and ``load``, round trips and crash recovery.

The harness builds a live session on the port; now and then the session is saved (the port's text
must decode to the model's), loaded back, loaded in another layout a released writer uses (packed
chunk rows, range provenance, CRLF), or damaged the way crashes and bad disks damage files (cut at
any character, final newline lost, last line written twice, a middle line corrupted or lost, a
stray line) and loaded: the port must keep the same prefix (dropping a torn tail or an
uncommitted damaged suffix) and write the same repair closers, or refuse with the model when a
later ``turn/end`` proves the damage committed, leaving its session unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule

from sessionlog_spec.model.json_value import thaw
from sessionlog_spec.protocol.messages import Ok
from sessionlog_spec.suite.agent import crashes, layouts
from sessionlog_spec.suite.agent.candidates import Mutation
from sessionlog_spec.suite.judged import saved
from sessionlog_spec.suite.machines.agent import mutations_in
from sessionlog_spec.suite.machines.base import step
from sessionlog_spec.suite.machines.session import LiveSessionMachine

CRASHES = (
    "cut",
    "no_final_newline",
    "duplicate_last_line",
    "duplicate_line",
    "damage_middle_line",
    "lose_line",
    "stray_line",
    "faulty_last_row",
    "faulty_row",
    "newer_version",
)
"""What a crash or a bad disk does to the file (:mod:`sessionlog_spec.suite.agent.crashes`)."""
STORAGE_EVENTS = ("save", "load_saved", "layout", *CRASHES)
"""A save, a clean reload, a reload of another layout of the same log, or a reload after a crash."""

SESSION_HEADERS = st.fixed_dictionaries(
    {
        "type": st.just("session"),
        "version": st.just(1),
        "id": st.one_of(st.sampled_from(["s-1", "01JB7Z3K9Q", "session with spaces", "séance-→", ""]), st.text()),
        "createdAt": st.one_of(st.sampled_from([0, 2**53 - 1]), st.integers(0, 2**53 - 1)),
        "delegationDepth": st.one_of(st.sampled_from([0, 1, 2**53 - 1]), st.integers(0, 2**53 - 1)),
    },
    optional={
        "cwd": st.one_of(st.sampled_from(["/home/dev/project", "/"]), st.text().map(lambda tail: "/" + tail)),
        "parentSession": st.one_of(st.just("parent-1"), st.text()),
        "origin": st.just("subagent"),
        "agentPreset": st.one_of(st.just("reviewer"), st.text()),
        "seedLength": st.just(0),
    },
)
"""Valid header lines, with and without the optional members."""


def loaded_with(result: Any) -> tuple[str, ...]:
    """What an accepted load shows: a torn tail dropped, a crashed turn repaired."""
    tags: tuple[str, ...] = ("INV-JSONL-3",) if result["dropped_torn_tail"] else ()
    if result["closers"]:
        tags += ("INV-JSONL-8", "INV-REPAIR-2", "INV-REPAIR-4", "INV-REPAIR-5")
    return tags


class Choices(Protocol):
    """Where a crash's details come from: a Hypothesis example in the machines, a seeded
    ``random.Random`` in tools that must ask the same questions on every run."""

    def integer(self, low: int, high: int, label: str) -> int:
        """A whole number from ``low`` to ``high``."""
        ...

    def choice(self, options: Sequence[Any], label: str) -> Any:
        """One of ``options``."""
        ...


@dataclass(frozen=True)
class DrawnChoices:
    """Choices drawn from a Hypothesis ``data`` object (shrinkable, labelled in the report)."""

    data: st.DataObject

    def integer(self, low: int, high: int, label: str) -> int:
        return self.data.draw(st.integers(low, high), label=label)

    def choice(self, options: Sequence[Any], label: str) -> Any:
        return self.data.draw(st.sampled_from(options), label=label)


def crashed_text(text: str, header: dict[str, Any], choices: Choices, crash: str) -> str:
    """The stored ``text`` after ``crash``; the reader then drops an uncommitted suffix or refuses."""
    events = len(crashes.lines_of(text)) - 1
    if crash == "cut":
        return crashes.cut_at(text, choices.integer(0, len(text), "crash at character"))
    if crash == "no_final_newline":
        return crashes.drop_final_newline(text)
    if crash == "duplicate_last_line":
        return crashes.duplicate_last_line(text)
    if crash == "duplicate_line" and events > 0:
        return crashes.duplicate_line(text, choices.integer(1, events, "duplicated line"))
    if crash == "damage_middle_line" and events > 0:
        line = choices.integer(1, events, "damaged line")
        return crashes.damage_line(text, line, choices.choice(crashes.CORRUPTIONS, "damage"))
    if crash == "stray_line":
        at = choices.integer(1, events + 1, "stray line at")
        return crashes.insert_stray_line(text, at, choices.choice(crashes.STRAY_LINES, "stray"))
    if crash == "faulty_last_row":
        return crashes.append_faulty_row(text, choices.choice(crashes.FAULTY_ROWS, "fault"))
    if crash == "faulty_row":
        at = choices.integer(1, events + 1, "faulty row at")
        return crashes.insert_faulty_row(text, at, choices.choice(crashes.FAULTY_ROWS, "fault"))
    if crash == "lose_line" and events > 1:
        return crashes.drop_line(text, choices.integer(0, events - 1, "lost line"))
    return crashes.replace_header(text, {**header, "version": choices.choice([2, 3, 17], "version")})


def relaid_text(text: str, choices: Choices) -> str:
    """The same log in another layout a released writer may use (:mod:`sessionlog_spec.suite.agent.layouts`)."""
    return layouts.LAYOUTS[choices.choice(sorted(layouts.LAYOUTS), "layout")](text)


class JsonlMachine(LiveSessionMachine):
    """Checks ``save`` and ``load`` against the model on the same text."""

    group = "jsonl"
    injections = mutations_in(("load",))

    def stored_text(self, packed: bool = False) -> str:
        """The model's stored form of the current session (runs of chunks as packed rows when ``packed``,
        as upstream's writer stores them by default)."""
        return saved(self.oracle.header, self.oracle.state, packed)

    def load(self, text: str) -> None:
        """Load ``text`` on both sides (and read it, when the port reads); continue from the loaded
        session, or check nothing changed."""
        if self.ctx.supports("read"):
            self.exchange("read", jsonl=text)
        reply = self.exchange("load", loaded_with, jsonl=text)
        if isinstance(reply, Ok):
            self.take_over(self.oracle.state)
        else:
            self.after_refusal()

    def submit(self, mutation: Mutation, candidate: Any) -> None:
        self.load(candidate)

    @initialize(header=SESSION_HEADERS)
    @step
    def begin_session(self, header: dict[str, Any]) -> None:
        self.exchange("reset", header=header)
        self.loop.builder.session_id = header["id"]
        self.take_over(self.oracle.state)

    @rule(data=st.data())
    @step
    def storage(self, data: st.DataObject) -> None:
        what = self.pick(data, STORAGE_EVENTS, "storage")
        if what == "save":
            self.retitle("save")
            self.exchange("save")
            self.check_state()
        elif what == "load_saved":
            # A round trip: the port's saved text is compared with the model's, then loaded back.
            self.retitle("load_saved")
            self.exchange("save")
            self.load(self.stored_text())
        elif what == "layout":
            self.retitle("load_layout")
            self.load(relaid_text(self.stored_text(), DrawnChoices(data)))
        else:
            self.retitle("load_other_version" if what == "newer_version" else f"crash_{what}")
            self.load(self.crashed(data, what))

    @precondition(lambda self: self.loop.state.trace.open_turn is not None)
    @rule(loads=st.just(2))
    @step
    def crash_load_reload(self, loads: int) -> None:
        # The process dies mid-turn: the next load closes the turn with repair events and saves
        # them; loading that saved log again must find nothing left to repair.
        for _ in range(loads):
            self.load(self.stored_text())

    def crashed(self, data: st.DataObject, crash: str) -> str:
        """The stored text of the session after ``crash``."""
        header = thaw(self.oracle.header)
        assert isinstance(header, dict)
        packed = data.draw(st.booleans(), label="packed")
        return crashed_text(self.stored_text(packed), header, DrawnChoices(data), crash)
