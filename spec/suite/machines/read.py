"""The ``read`` group: the stateless reader, for ports that only read stored logs.

The harness builds a session on the model alone; now and then its stored text, in any layout a
released writer uses and after anything a crash or a bad disk does to it, is handed to the port's
``read``, which must keep the same header line and events as the model's reader or refuse with it.
Stored-log candidates (``load``) and legacy logs (``upgrade``, written out as v0 text) are read too,
so an importer, an analytics tool or a format edge is checked on every stored text the other
groups build.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from sessionlog_spec.model.json_value import thaw
from sessionlog_spec.model.load import save_session
from sessionlog_spec.model.rows import MIN_PACKED_RUN
from sessionlog_spec.suite.agent.builder import RawEvent
from sessionlog_spec.suite.agent.candidates import Mutation
from sessionlog_spec.suite.machines.agent import AgentMachine, mutations_in
from sessionlog_spec.suite.machines.base import step
from sessionlog_spec.suite.machines.jsonl import CRASHES, DrawnChoices, crashed_text, relaid_text
from sessionlog_spec.suite.machines.legacy import stored_text


def has_chunk_run(log: list[Any]) -> bool:
    """Whether ``log`` holds a run of chunks a packed row holds (three in a row)."""
    run = 0
    for event in log:
        run = run + 1 if event.get("type") == "assistant/chunk" else 0
        if run >= MIN_PACKED_RUN:
            return True
    return False


READS = ("plain", "packed", "layout", "v0", *CRASHES)
"""What is read: the saved form, the same packed as upstream's writer packs by default, another
layout, the log as v0, the saved form after a crash."""


class ReadMachine(AgentMachine):
    """Checks ``read`` on stored texts of the session the harness builds."""

    group = "read"
    injections = mutations_in(("load", "upgrade"))

    def deliver(self, raw: RawEvent) -> None:
        self.loop.commit(raw)

    def text(self, packed: bool = False) -> str:
        """The model's stored form of the session so far (runs of chunks as packed rows when ``packed``)."""
        return save_session(self.oracle.header, self.loop.state, packed)

    def header(self) -> dict[str, Any]:
        header = thaw(self.oracle.header)
        assert isinstance(header, dict)
        return header

    def submit(self, mutation: Mutation, candidate: Any) -> None:
        jsonl = candidate if mutation.context == "load" else stored_text(candidate)
        self.exchange("read", jsonl=jsonl)

    @rule(data=st.data(), what=st.sampled_from(READS))
    @step
    def read_stored(self, data: st.DataObject, what: str) -> None:
        text = self.text(packed=what == "packed" or (what in CRASHES and data.draw(st.booleans(), label="packed")))
        if what in {"plain", "packed"}:
            self.retitle(f"read_{'saved' if what == 'plain' else what}")
        elif what == "layout":
            self.retitle("read_layout")
            text = relaid_text(text, DrawnChoices(data))
        elif what == "v0":
            # The v1 layout is the v0 layout: the edge reads the same log as version 0.
            self.retitle("read_v0")
            text = stored_text({"header": {**self.header(), "version": 0}, "events": list(self.loop.log)})
        else:
            self.retitle("read_other_version" if what == "newer_version" else f"read_crash_{what}")
            text = crashed_text(text, self.header(), DrawnChoices(data), what)
        self.exchange("read", jsonl=text)

    @precondition(lambda self: has_chunk_run(self.loop.log))
    @rule()
    @step
    def read_packed(self) -> None:
        # A released log holds its bursts of chunks as packed rows (upstream's writer packs by
        # default); a rule of its own reads one as often as the session streams, not once in the
        # dozen forms read_stored draws from.
        self.retitle("read_packed")
        self.exchange("read", jsonl=self.text(packed=True))
