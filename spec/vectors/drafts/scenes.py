"""Small valid sessions the drafts start from: a seed of closed history, then live appends.

A scene is what a harness has after some work: a seeded history (possibly empty) and the events
appended since.  Replaying ``seed(history)`` then ``append`` of each live event reproduces the
scene's state on any port, which is how refusal vectors reach the state their candidate needs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sessionlog_spec.model.session import seed_session
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.suite.agent.builder import RawEvent, SessionBuilder, basic_header
from sessionlog_spec.vectors.drafts import steps
from sessionlog_spec.vectors.format import Step


@dataclass(frozen=True, slots=True)
class Scene:
    """A named session: its seed, its live events, and a builder holding the result."""

    name: str
    history: list[RawEvent]
    live: list[RawEvent]
    builder: SessionBuilder

    def replay(self) -> list[Step]:
        """The steps that rebuild this scene on a port."""
        return [steps.seed(self.history), *(steps.append(e) for e in self.live)]

    @property
    def events(self) -> list[RawEvent]:
        """The whole log of the scene, end-of-seed marker included."""
        return self.builder.events


def seeded(history: list[RawEvent]) -> SessionBuilder:
    """A builder continuing from the session that seeding ``history`` gives."""
    state = seed_session(history)
    assert not isinstance(state, Violation), state
    return SessionBuilder(state)


def _scene(name: str, history: list[RawEvent], play: Callable[[SessionBuilder], Any]) -> Scene:
    builder = seeded(history)
    start = builder.next_seq
    play(builder)
    return Scene(name, history, builder.events[start:], builder)


def closed_turn(b: SessionBuilder, calls: tuple[str, ...] = ("call-1",), header_reason: str | None = "initial") -> None:
    """One complete turn: a tool step answering ``calls`` and a final answer."""
    b.tool_turn("Please fix the failing test.", calls, basic_header(), header_reason)


def history_one_turn() -> list[RawEvent]:
    """A closed one-turn session, as a seed."""
    b = SessionBuilder()
    closed_turn(b)
    return b.events


def _open_turn(b: SessionBuilder) -> None:
    b.turn_start()
    b.user_message("Please fix the failing test.")


def _open_step(b: SessionBuilder) -> None:
    _open_turn(b)
    b.step_start()
    b.request_header(basic_header(), "initial")


def _pending(b: SessionBuilder) -> None:
    _open_step(b)
    b.assistant_message("Reading files.", ["call-1", "call-2"])
    b.tool_call("call-1")


def _answered(b: SessionBuilder) -> None:
    """``call-1`` answered, ``call-2`` asked for but not started."""
    _pending(b)
    b.tool_result("call-1")


def _all_answered(b: SessionBuilder) -> None:
    _answered(b)
    b.tool_call("call-2")
    b.tool_result("call-2")


def _between_steps(b: SessionBuilder) -> None:
    _all_answered(b)
    b.step_end()


def _compacted(b: SessionBuilder) -> None:
    """Turn 2 of a seeded session, after a compaction of turn 1 and a rewrite of a fresh result."""
    b.turn_start()
    b.user_message("Now the second bug.")
    b.step_start()
    b.request_header(basic_header(), "resume")
    nodes = b.state.surface.nodes
    b.compaction(nodes[0], nodes[3])
    b.assistant_message("Reading more files.", ["call-2"])
    b.tool_call("call-2")
    result = b.tool_result("call-2")
    b.rewrite_tool_result(result["seq"])


def _compacting(b: SessionBuilder) -> None:
    """Between turns of a seeded session, a compaction started and waiting for its summary."""
    b.compaction_start()


def _summarised(b: SessionBuilder) -> None:
    """Between turns of a seeded session, a compaction started and summarised, waiting for its end."""
    b.compaction_start()
    b.compaction_summary(*b.legal_ranges()[-1])


def _commanded(b: SessionBuilder) -> None:
    """Between turns of a seeded session, the user ran a command, which finished."""
    b.event("command/run", {"commandId": "cmd-1", "name": "clear", "source": {"kind": "user"}})
    b.event("command/done", {"commandId": "cmd-1", "kind": "success", "text": "Cleared the screen."})


def scenes() -> list[Scene]:
    """The scenes refusal vectors are drawn from, smallest first."""
    return [
        _scene("fresh", [], lambda b: None),
        _scene("closed", history_one_turn(), lambda b: None),
        _scene("open-turn", [], _open_turn),
        _scene("open-step", [], _open_step),
        _scene("pending-call", [], _pending),
        _scene("answered", [], _answered),
        _scene("all-answered", [], _all_answered),
        _scene("between-steps", [], _between_steps),
        _scene("compacted", history_one_turn(), _compacted),
        _scene("compacting", history_one_turn(), _compacting),
        _scene("commanded", history_one_turn(), _commanded),
        _scene("summarised", history_one_turn(), _summarised),
    ]


def scene(name: str) -> Scene:
    """The scene called ``name``."""
    return next(s for s in scenes() if s.name == name)
