"""The ``storage`` group: a durable store on disk, closed and reopened, damaged, and killed mid-write.

The harness writes a realistic session through ``store_append`` into the port's store at
``dir/events.jsonl`` (a directory the suite makes for each example) and checkpoints it as a loop
does.  Every reply is compared with the model's; ``durable_length`` is the port's own word about
what is on stable storage, and the suite holds it to it (INV-JSONL-11):

* it never goes down, never exceeds the session's length, and equals it after a checkpoint, a close
  and a reopen;
* after a close, the file read as ``load`` reads it is exactly the session;
* the suite damages the closed file the way crashes and bad disks do (cut at any character, the final
  newline lost, the last line written twice, a stray line), and reopening must recover what the
  model reads from the same bytes: the same session and closers, or the same refusal;
* a port that can be killed (a subprocess driver) is killed with SIGKILL while a request is in
  flight; a fresh driver reopens the store and must recover, from whatever bytes the kill left, what
  the model reads from them, keeping every event it acknowledged as durable.  Each trial is
  counted, and so is every acknowledged event lost (``crash_trials``, ``durable_lost``);
* an invalid candidate appended to the store is refused and leaves the session as it was.

The damage and the crash are the suite's own actions; they go into the transcript as
``store_damage`` and ``store_crash`` exchanges (:mod:`sessionlog_spec.suite.storage_actions`), so that
a counterexample replays them.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any, cast

from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule
from hypothesis.strategies import DrawFn

from sessionlog_spec.model.json_value import thaw
from sessionlog_spec.protocol.messages import Ok, PortFault, Reply
from sessionlog_spec.protocol.model_driver import DEFAULT_HEADER
from sessionlog_spec.suite.agent.builder import RawEvent
from sessionlog_spec.suite.agent.candidates import Mutation
from sessionlog_spec.suite.agreement import Mismatch
from sessionlog_spec.suite.exchange import Exchange
from sessionlog_spec.suite.machines.agent import AgentMachine, mutations_in
from sessionlog_spec.suite.machines.base import Exercised, step
from sessionlog_spec.suite.machines.jsonl import SESSION_HEADERS, DrawnChoices, crashed_text, loaded_with
from sessionlog_spec.suite.storage_actions import DONE, DurabilityJudge, perform, stored_text

DAMAGES = ("cut", "no_final_newline", "duplicate_last_line", "duplicate_line", "stray_line")
"""What a crash or a bad disk does to a closed store's file (see :func:`crashed_text`)."""
CRASH_DELAYS = (0.0, 0.0005, 0.002, 0.01, 0.05)
"""How long after sending a request the driver is killed: before it reads it, while it writes, after."""
CRASHES_PER_EXAMPLE = 3
"""How many times one example kills the driver at most.  A kill costs a driver's restart (a tenth of
a second for a Python driver, ten times a step), and Hypothesis, mutating an example that reached
new ground, copies its runs of steps: without a bound a run's count of kills, and its time, doubled
from one generation change to the next."""


class StorageMachine(AgentMachine):
    """Checks a port's durable store against the model's reading of the bytes it leaves."""

    group = "storage"
    injections = mutations_in(("append",))

    def start(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="sessionlog-storage-"))
        self.created = 0
        self.directory = str(self.root / "store-0")
        self.is_open = False
        self.judge = DurabilityJudge(directory=self.directory)
        self.crashes = 0

    def teardown(self) -> None:
        # The port outlives the example: leave it with no store open, whatever the example ended in
        # (a refusal of "no store is open" is fine).
        try:
            self.ctx.port.call("store_close")
        except Exception:
            self.ctx.needs_restart = True
        shutil.rmtree(self.root, ignore_errors=True)
        super().teardown()

    # -- the store, on both sides -----------------------------------------------------------------------

    def store(self, op: str, /, exercised: Exercised | None = None, **args: Any) -> Reply:
        """:meth:`exchange` one ``store_*`` op, then hold the port to its word about durability."""
        reply = self.exchange(op, exercised, **args)
        actual = self.transcript[-1].actual
        if isinstance(reply, Ok) and isinstance(actual, Ok) and isinstance(actual.result, dict):
            self.judged(self.judge.replied(op, actual.result, len(self.oracle.state.events)))
            if op == "store_close":
                self.judged(self.judge.closed(self.directory, self.oracle.state.events))
        return reply

    def judged(self, wrong: str | None) -> None:
        """Fail the example on what the durability judge found wrong."""
        if wrong is not None:
            self.tag("INV-JSONL-11")
            raise self._disagreement(Mismatch("wrong-result", wrong))

    def act(self, action: str, args: dict[str, Any]) -> None:
        """Do one of the suite's own actions, recorded in the transcript so that a replay does it too."""
        self.transcript.append(Exchange(action, args, DONE, DONE))
        try:
            perform(self.ctx.port, action, args, self.oracle)
        except PortFault as fault:
            self.ctx.needs_restart = True
            raise self._disagreement(Mismatch("port-fault", f"after {action}: {fault}")) from None

    def deliver(self, raw: RawEvent) -> None:
        reply = self.store("store_append", event=raw)
        assert isinstance(reply, Ok), f"the model refused a valid event: {reply}"
        self.loop.commit(raw)

    def submit(self, mutation: Mutation, candidate: Any) -> None:
        # Refused, and the session as it was: the next append's length and nodes show it.
        self.store("store_append", event=candidate)

    def create(self, header: dict[str, Any]) -> None:
        """Create the store at the current directory with ``header``."""
        reply = self.store("store_create", dir=self.directory, header=header)
        assert isinstance(reply, Ok), f"the model refused a new store: {reply}"
        self.loop.builder.session_id = header["id"]
        self.is_open = True

    def reopen(self) -> None:
        """Reopen the store on both sides: the oracle reads the port's file first, the port then
        recovers it; continue from the recovered session, or in a new store when both refuse."""
        if not isinstance(self.store("store_open", loaded_with, dir=self.directory), Ok):
            self.fresh_store()
            return
        self.is_open = True
        self.take_over(self.oracle.state)

    def close(self) -> None:
        """Close the store; the file must then read as exactly the session."""
        self.store("store_close")
        self.is_open = False

    def fresh_store(self) -> None:
        """Go on with a new, empty store in a new directory."""
        if self.is_open:
            self.close()
        self.created += 1
        self.directory = str(self.root / f"store-{self.created}")
        self.create(dict(DEFAULT_HEADER))
        self.take_over(self.oracle.state)

    # -- rules ------------------------------------------------------------------------------------

    @initialize(header=SESSION_HEADERS)
    @step
    def create_store(self, header: dict[str, Any]) -> None:
        self.create(header)

    @precondition(lambda self: self.is_open)
    @rule()
    @step
    def checkpoint(self) -> None:
        self.store("store_checkpoint")

    @precondition(lambda self: self.is_open)
    @rule()
    @step
    def close_and_reopen(self) -> None:
        self.close()
        self.reopen()

    @precondition(lambda self: self.is_open)
    @rule(data=st.data())
    @step
    def damage_and_reopen(self, data: st.DataObject) -> None:
        damage = self.pick(data, DAMAGES, "damage")
        self.close()
        header = thaw(self.oracle.header)
        assert isinstance(header, dict)
        damaged = crashed_text(stored_text(self.directory), header, DrawnChoices(data), damage)
        self.act("store_damage", {"dir": self.directory, "jsonl": damaged})
        self.reopen()

    @precondition(
        lambda self: self.is_open and self.crashes < CRASHES_PER_EXAMPLE and callable(getattr(self.ctx.port, "crash", None))
    )
    @rule(data=st.data(), delay=st.sampled_from(CRASH_DELAYS))
    @step
    def crash_and_reopen(self, data: st.DataObject, delay: float) -> None:
        # The request in flight: the next event the agent would write, or a checkpoint.
        action = data.draw(st.sampled_from(self.next_actions()), label="action in flight")
        if action == "send_request" or data.draw(st.booleans(), label="checkpoint in flight"):
            op, args = "store_checkpoint", {}
        else:
            op, args = "store_append", {"event": self.loop.build(cast(DrawFn, data.draw), action)}
        self.crashes += 1
        self.act("store_crash", {"op": op, "args": args, "delay": delay})
        self.is_open = False
        self.ctx.coverage.crash_trials += 1
        before = self.judge.lost
        wrong = self.judge.crashed(self.directory, self.oracle.state.events)
        self.ctx.coverage.durable_lost += self.judge.lost - before
        self.judged(wrong)
        self.reopen()
        # What survived depends on when the kill landed; an example must not (Hypothesis replays it).
        self.fresh_store()
