"""The ``read`` group: the stateless reader, for ports that only read stored logs.

The harness builds a session on the model alone; now and then its stored text, in any layout a
released writer uses and after anything a crash or a bad disk does to it, is handed to the port's
``read``, which must keep the same header line and events as the model's reader or refuse with it.
Stored-log candidates (``load``) and legacy logs (``upgrade``, written out as v0 text) are read too,
so an importer, an analytics tool or a format edge is checked on every stored text the other
groups build.
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import rule

from sessionlog_spec.model.json_value import thaw
from sessionlog_spec.model.rows import MIN_PACKED_RUN
from sessionlog_spec.suite.agent import layouts
from sessionlog_spec.suite.agent.builder import RawEvent
from sessionlog_spec.suite.agent.candidates import Mutation
from sessionlog_spec.suite.judged import saved
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


def has_seq_run(log: list[Any]) -> bool:
    """Whether some event of ``log`` cites two consecutive seqs: what a stored range (``[start, end]``) encodes."""
    for event in log:
        sources = event.get("sourceEventSeqs")
        if isinstance(sources, list) and any(b == a + 1 for a, b in itertools.pairwise(sources)):
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
        return saved(self.oracle.header, self.loop.state, packed)

    def header(self) -> dict[str, Any]:
        header = thaw(self.oracle.header)
        assert isinstance(header, dict)
        return header

    def submit(self, mutation: Mutation, candidate: Any) -> None:
        jsonl = candidate if mutation.context == "load" else stored_text(candidate)
        self.exchange("read", jsonl=jsonl)

    def closing_check(self) -> None:
        self.retitle("read_saved")
        self.exchange("read", jsonl=self.text())

    @rule(data=st.data())
    @step
    def read_stored(self, data: st.DataObject) -> None:
        what = self.pick(data, READS, "read")
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

    @rule(data=st.data())
    @step
    def read_packed(self, data: st.DataObject) -> None:
        # A released log holds its bursts of chunks as packed rows (upstream's writer packs by
        # default); a rule of its own reads one, not once in the dozen forms read_stored draws
        # from.  A session that has not streamed a run of chunks yet is taken to its next request
        # and streams first: most examples are short, and few got there on their own.
        for _ in range(3):
            if has_chunk_run(self.loop.log):
                break
            self.request_now(data)
            if not self.loop.can("chunk"):
                break
            self.perform(data, "chunk")
        self.retitle("read_packed")
        self.exchange("read", jsonl=self.text(packed=True))

    @rule(data=st.data(), layout=st.sampled_from(("ranged", "packed+ranged")))
    @step
    def read_ranged(self, data: st.DataObject, layout: str) -> None:
        # A released writer stores provenance as ranges; a session that has not replaced a run of
        # consecutive nodes yet compacts first, so a range is read as often as a packed row is.
        if not has_seq_run(self.loop.log) and self.loop.can("compaction"):
            self.perform(data, "compaction")
        self.retitle("read_layout")
        self.exchange("read", jsonl=layouts.LAYOUTS[layout](self.text()))
