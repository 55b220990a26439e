"""Agent-loop logs for the relationship rules: valid ones, and ones with exactly one broken pairing.

:class:`LogBuilder` writes raw v1 events (the stored JSON form) whose payloads are exact by the
released payload rules, tracking what a writer knows: the open turn and step, the surface and the
pending-call balance at each cut (so compactions cover only balanced ranges), the human messages
a title may cite, the provider in force.  :func:`valid_log` draws a random agent loop with tool
calls, crash-repair results, PTC dispatches, retries, compactions, prunes, commands, titles,
delivery markers, ignorable extension events, and crash/resume and fork boundaries;
:data:`FAULTS` appends one broken relationship to a valid prefix and names the code the model
should refuse it with.

:func:`model_verdict` is the model's answer on a whole artifact with the relationship rules run
last in :func:`sessionlog_spec.model.session.admit`, on the surface before each event, and
:func:`sessionlog_spec.model.relationships.relationship_finish` at the end.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sessionlog_spec.model.event import decode_event, encode_event
from sessionlog_spec.model.relationships import (
    NOT_STARTED_CODE,
    NOT_STARTED_NAME,
    SessionIdentity,
    repair_result_id,
    title_frame,
)
from sessionlog_spec.model.repair import NOT_STARTED_TEXT, interrupted_turn_closers
from sessionlog_spec.model.session import fold_session
from sessionlog_spec.model.violation import Code, Violation

T0 = 1_700_000_000_000
SESSION_ID = "rel-session"
PARENT_ID = "rel-parent"
PROVIDERS = ("deepseek", "openai")
MODEL = "chat-model"
Raw = dict[str, Any]


@dataclass
class Artifact:
    """A v1 artifact: the session header line and its events, and what it is meant to test."""

    header: Raw
    events: list[Raw]
    name: str = "valid"
    expect: Code | None = None
    """The code the model should refuse it with; ``None`` for a valid log."""

    def request(self) -> Raw:
        """The oracle's request line."""
        return {"header": self.header, "events": self.events}

    def identity(self) -> SessionIdentity:
        """The session header facts the relationship rules read."""
        return SessionIdentity(
            session_id=self.header["id"],
            format_version=self.header["version"],
            has_parent="parentSession" in self.header,
            inherited_event_count=self.header.get("seedLength", 0),
        )


def header_line(session_id: str = SESSION_ID, parent: str | None = None, seed_length: float | None = None) -> Raw:
    """A v1 session header line."""
    header: Raw = {"type": "session", "version": 1, "id": session_id, "createdAt": T0, "delegationDepth": 0}
    if parent is not None:
        header |= {"parentSession": parent, "delegationDepth": 1}
    if seed_length is not None:
        header["seedLength"] = seed_length
    return header


def text(value: str) -> Raw:
    """A text content block."""
    return {"type": "text", "text": value}


def model_verdict(artifact: Artifact) -> Violation | None:
    """The model's verdict on the whole artifact: the fold, relationship rules included."""
    state = fold_session(artifact.events, identity=artifact.identity())
    return state if isinstance(state, Violation) else None


@dataclass
class Call:
    """A call the model asked for."""

    id: str
    name: str
    arguments: str


@dataclass
class LogBuilder:
    """Writes one log event by event, keeping what a writer knows about it."""

    session_id: str = SESSION_ID
    events: list[Raw] = field(default_factory=list)
    turn: int = 0
    open_turn: int | None = None
    step: int = 0
    open_step: int | None = None
    surface: list[int] = field(default_factory=list)
    delta: dict[int, int] = field(default_factory=dict)
    """How each surface node moves the pending-call count."""
    humans: list[int] = field(default_factory=list)
    provider: str | None = None
    retries: dict[tuple[int, int, str, str], tuple[str, int]] = field(default_factory=dict)
    counter: int = 0

    # -- plumbing -------------------------------------------------------------------------------

    def fresh(self, prefix: str) -> str:
        """A new id."""
        self.counter += 1
        return f"{prefix}-{self.counter}"

    @property
    def seq(self) -> int:
        """The seq of the next event."""
        return len(self.events)

    def add(self, type_: str, data: Any, **envelope: Any) -> int:
        """Append an event and track what it changes; returns its seq."""
        seq = self.seq
        self.events.append({"type": type_, "seq": seq, "time": T0 + seq, "data": data, **envelope})
        self._track(self.events[-1])
        return seq

    def _track(self, event: Raw) -> None:
        type_, seq, data = event["type"], event["seq"], event["data"]
        if type_ == "turn/start":
            self.turn, self.open_turn, self.step, self.open_step = data["turn"], data["turn"], 0, None
        elif type_ == "turn/end":
            self.open_turn = None
        elif type_ == "step/start":
            self.step = self.open_step = data["step"]
        elif type_ == "step/end":
            self.open_step = None
        elif type_ == "request/header":
            self.provider = data["header"]["config"]["provider"]
        op = event.get("surfaceOp")
        if op is None:
            return
        delta = -1 if type_ == "tool/result" else 0
        if type_ == "assistant/message":
            delta = sum(1 for b in data["message"]["content"] if b["type"] == "tool-call")
        self.delta[seq] = delta
        if op == "append":
            self.surface.append(seq)
        else:
            start, end = self.surface.index(op["start"]), self.surface.index(op["end"])
            self.surface[start : end + 1] = [seq]
        if type_ == "user/message" and data["source"]["kind"] == "user":
            self.humans.append(seq)

    def add_event(self, event: Raw) -> int:
        """Append a ready-made event (its seq must be the next one)."""
        assert event["seq"] == self.seq
        self.events.append(event)
        self._track(event)
        return len(self.events) - 1

    def balanced_cuts(self) -> list[int]:
        """The surface positions whose cut (before that position) has no call pending."""
        cuts, count = [0], 0
        for index, seq in enumerate(self.surface):
            count += self.delta[seq]
            if count == 0:
                cuts.append(index + 1)
        return cuts

    def balanced_range(self, rng: random.Random) -> tuple[int, int] | None:
        """Surface positions ``(i, j)`` of a non-empty range with balanced cuts on both sides."""
        cuts = self.balanced_cuts()
        pairs = [(a, b - 1) for a in cuts for b in cuts if b > a]
        return rng.choice(pairs) if pairs else None

    def artifact(self, header: Raw | None = None, name: str = "valid", expect: Code | None = None) -> Artifact:
        """The log so far as an artifact."""
        return Artifact(header or header_line(self.session_id), [dict(e) for e in self.events], name, expect)

    # -- brackets -------------------------------------------------------------------------------

    def turn_start(self) -> int:
        return self.add("turn/start", {"turn": self.turn + 1})

    def turn_end(self, kind: str = "completed") -> int:
        return self.add("turn/end", {"turn": self.open_turn, "reason": {"kind": kind}})

    def step_start(self) -> int:
        return self.add("step/start", {"turn": self.open_turn, "step": self.step + 1})

    def step_end(self) -> int:
        return self.add("step/end", {"turn": self.open_turn, "step": self.open_step})

    def header(self, provider: str, reason: str = "initial") -> int:
        return self.add("request/header", {"header": {"config": {"provider": provider, "model": MODEL}}, "reason": reason})

    # -- messages and tools -----------------------------------------------------------------------

    def user(self, value: str, source: Raw | None = None, op: Any = "append", sources: list[int] | None = None) -> int:
        envelope: Raw = {"surfaceOp": op}
        if sources is not None:
            envelope["sourceEventSeqs"] = sources
        data = {"id": self.fresh("user"), "role": "user", "content": [text(value)], "source": source or {"kind": "user"}}
        return self.add("user/message", data, **envelope)

    def assistant(self, calls: list[Call], value: str = "Working on it.") -> int:
        blocks = [text(value)] + [{"type": "tool-call", "id": c.id, "name": c.name, "arguments": c.arguments} for c in calls]
        message = {
            "id": self.fresh("assistant"),
            "role": "assistant",
            "content": blocks,
            "source": {"kind": "model", "provider": self.provider or PROVIDERS[0], "model": MODEL},
        }
        return self.add(
            "assistant/message", {"turn": self.open_turn, "step": self.open_step, "message": message}, surfaceOp="append"
        )

    def tool_call(self, call: Call, name: str | None = None, arguments: str | None = None) -> int:
        data = {
            "turn": self.open_turn,
            "step": self.open_step,
            "callId": call.id,
            "name": call.name if name is None else name,
            "arguments": call.arguments if arguments is None else arguments,
        }
        return self.add("tool/call", data)

    def result_data(self, call_id: str, value: str, *, message_id: str | None = None, is_error: bool = False) -> Raw:
        block = {"type": "tool-result", "toolCallId": call_id, "content": [text(value)], "isError": is_error}
        message = {
            "id": message_id or self.fresh("result"),
            "role": "user",
            "content": [block],
            "source": {"kind": "tool", "callId": call_id},
        }
        return {"turn": self.open_turn, "step": self.open_step, "message": message}

    def tool_result(self, call_id: str, value: str = "done", **extra: Any) -> int:
        data = self.result_data(call_id, value) | extra.pop("data", {})
        return self.add("tool/result", data, surfaceOp="append", **extra)

    def repair_result(self, call_id: str, **change: Any) -> int:
        """The exact crash-repair result for an advertised call that never started; ``change``
        breaks one of its parts (``name``, ``message_id``, ``text``, ``is_error``, ``sources``)."""
        seq = self.seq
        data = self.result_data(
            call_id,
            change.get("text", NOT_STARTED_TEXT),
            message_id=change.get("message_id", repair_result_id(call_id, seq)),
            is_error=change.get("is_error", True),
        )
        data["error"] = {"name": change.get("name", NOT_STARTED_NAME), "code": NOT_STARTED_CODE}
        envelope: Raw = {"surfaceOp": "append"}
        if "sources" in change:
            envelope["sourceEventSeqs"] = change["sources"]
        return self.add("tool/result", data, **envelope)

    def rewrite_result(self, target: int, value: str) -> int:
        """A tool/result replacing the content of the current result at ``target``."""
        data = self.events[target]["data"]
        block = dict(data["message"]["content"][0]) | {"content": [text(value)]}
        rewritten = dict(data) | {"message": dict(data["message"]) | {"content": [block]}}
        return self.add(
            "tool/result", rewritten, surfaceOp={"op": "replace", "start": target, "end": target}, sourceEventSeqs=[target]
        )

    # -- retries, PTC, commands, titles, markers ------------------------------------------------------

    def retry(
        self,
        retry_id: str,
        attempt: int,
        *,
        policy: str = "default",
        provider: str | None = None,
        turn: int | None = None,
        step: int | None = None,
    ) -> int:
        data = {
            "retryId": retry_id,
            "turn": self.open_turn if turn is None else turn,
            "step": (self.open_step or self.step) if step is None else step,
            "provider": provider or self.provider or PROVIDERS[0],
            "mode": "normal",
            "policyKey": policy,
            "retry": attempt,
            "maxRetries": 5,
            "delayMs": 250,
            "failure": {"message": "overloaded", "code": "SERVER"},
        }
        return self.add("llm/retry", data)

    def retry_started(self, retry_id: str, attempt: int, turn: int, step: int) -> int:
        return self.add("llm/retry-started", {"retryId": retry_id, "turn": turn, "step": step, "retry": attempt})

    def ptc(self, settle: bool, root: str, parent: str, sub: str, *, name: str = "read", arguments: Any = None) -> int:
        data = {
            "rootCallId": root,
            "parentCallId": parent,
            "subCallId": sub,
            "name": name,
            "arguments": {"path": "a.py"} if arguments is None else arguments,
        }
        if settle:
            return self.add("tool/code-dispatch", data | {"isError": False, "content": [text("contents")]})
        return self.add("tool/code-dispatch-start", data)

    def command_run(self, command_id: str) -> int:
        return self.add("command/run", {"commandId": command_id, "name": "compact", "source": {"kind": "user"}})

    def command_done(self, command_id: str, kind: str = "success", source_seq: int | None = None) -> int:
        data: Raw = {"commandId": command_id, "kind": kind}
        if kind == "error":
            data["text"] = "failed"
        if source_seq is not None:
            data["sourceEventSeq"] = source_seq
        return self.add("command/done", data)

    def title(self, seqs: list[int], kind: str = "fallback") -> int:
        source: Raw = {"kind": kind} if kind != "provider" else {"kind": "provider", "provider": PROVIDERS[0]}
        return self.add("session/title", {"title": "A title", "messageSeqs": seqs, "source": source})

    def title_request(self, seqs: list[int], *, frame: str | None = None, messages: list[Raw] | None = None) -> int:
        cited = [(s, "\n".join(b["text"] for b in self.events[s]["data"]["content"] if b["type"] == "text")) for s in seqs]
        message = {
            "id": self.fresh("title"),
            "role": "user",
            "content": [text(title_frame(cited) if frame is None else frame)],
            "source": {"kind": "plugin", "plugin": "dsh-session-title-llm"},
        }
        data = {
            "titleProvider": PROVIDERS[0],
            "messageSeqs": seqs,
            "route": {"provider": PROVIDERS[0], "model": MODEL},
            "system": "Write a short title.",
            "messages": [message] if messages is None else messages,
            "maxTokens": 32,
        }
        return self.add("session/title-llm-request", data)

    def delivery(self, session_id: str, version: int | None = 1) -> int:
        data: Raw = {"sessionId": session_id, "throughSeq": max(self.seq - 1, 0)}
        if version is not None:
            data["sessionFormatVersion"] = version
        return self.add("session-log-deepseek/delivery-accepted", data)

    # -- compaction ------------------------------------------------------------------------------

    def compaction_start(self, compaction_id: str, turn: int | None, command: str | None = None) -> int:
        data: Raw = {"compactionId": compaction_id, "turn": turn}
        if command is not None:
            data["sourceCommandId"] = command
        return self.add("compaction/start", data)

    def compaction_end(self, compaction_id: str, turn: int | None, command: str | None = None, error: str | None = None) -> int:
        data: Raw = {"compactionId": compaction_id, "turn": turn}
        if command is not None:
            data["sourceCommandId"] = command
        if error is not None:
            data["error"] = error
        return self.add("compaction/end", data)

    def span(self, positions: tuple[int, int]) -> Raw:
        """The ``shadowedRange`` / ``shadowedSeqs`` members for surface positions ``i..j``."""
        shadowed = self.surface[positions[0] : positions[1] + 1]
        return {
            "shadowedRange": {"start": shadowed[0], "end": shadowed[-1]},
            "shadowedSeqs": shadowed,
            "shadowedTokenCount": 10 * len(shadowed),
        }

    def summary(self, compaction_id: str, span: Raw, command: str | None = None) -> int:
        data: Raw = {
            "compactionId": compaction_id,
            "summary": [text("Earlier work, summarised.")],
            **span,
            "provider": PROVIDERS[0],
            "model": MODEL,
        }
        if command is not None:
            data["sourceCommandId"] = command
        return self.add("compaction/summary", data)

    def checkpoint(self, compaction_id: str, span: Raw, cites: list[int], command: str | None = None) -> int:
        source: Raw = {"kind": "plugin", "plugin": "compact", "compactionId": compaction_id}
        if command is not None:
            source["sourceCommandId"] = command
        op = {"op": "replace", **span["shadowedRange"]}
        return self.user("Summary of the earlier conversation.", source, op, [*cites, *span["shadowedSeqs"]])

    def compaction(self, rng: random.Random, turn: int | None, command: str | None = None) -> None:
        """A whole compaction: start, summary, checkpoint, end (or a failed one with no summary)."""
        compaction_id = self.fresh("compaction")
        start = self.compaction_start(compaction_id, turn, command)
        positions = self.balanced_range(rng)
        if positions is None or rng.random() < 0.15:
            self.compaction_end(compaction_id, turn, command, error="skipped")
            return
        span = self.span(positions)
        summary = self.summary(compaction_id, span, command)
        self.checkpoint(compaction_id, span, [start, summary], command)
        self.compaction_end(compaction_id, turn, command)

    def prune(self, rng: random.Random) -> None:
        """A model-free prune and its replacement."""
        positions = self.balanced_range(rng)
        if positions is None:
            return
        span = self.span(positions)
        seq = self.add("compaction/prune", span)
        op = {"op": "replace", **span["shadowedRange"]}
        self.user("(older messages pruned)", {"kind": "plugin", "plugin": "prune"}, op, [seq, *span["shadowedSeqs"]])

    # -- crash repair ------------------------------------------------------------------------------

    def close_crash(self) -> None:
        """The closers crash repair writes for the open turn, then the end-of-seed marker of a resume."""
        decoded = [decode_event(e) for e in self.events]
        closers = interrupted_turn_closers([e for e in decoded if not isinstance(e, Violation)])
        for closer in closers:
            self.add_event(encode_event(closer))
        self.add("session/end-seed", {})


# -- valid agent loops ----------------------------------------------------------------------------


def tool_step(b: LogBuilder, rng: random.Random) -> None:
    """One step: maybe a request header and retries, an answer with calls, and their results."""
    b.step_start()
    if b.provider is None or rng.random() < 0.2:
        provider = rng.choice(PROVIDERS) if b.provider is not None else PROVIDERS[0]
        b.header(provider, "initial" if b.provider is None else "change")
    if rng.random() < 0.3:
        retry_chain(b, rng, b.open_turn or 0, b.open_step or 0)
    calls = [
        Call(b.fresh("call"), rng.choice(["read", "grep", "run"]), f'{{"n": {rng.randint(0, 9)}}}')
        for _ in range(rng.choice([0, 1, 1, 2, 3]))
    ]
    b.assistant(calls)
    results: list[int] = []
    for call in calls:
        if rng.random() < 0.15:
            b.repair_result(call.id)
            continue
        b.tool_call(call)
        if rng.random() < 0.3:
            ptc_tree(b, rng, call.id)
        results.append(b.tool_result(call.id, f"output of {call.name}"))
    if results and rng.random() < 0.2:
        b.rewrite_result(rng.choice(results), "(output elided)")
    if rng.random() < 0.1:
        b.add("plugin/informational", {"note": "extension event"}, ignorable=True)
    b.step_end()
    if rng.random() < 0.15:
        retry_chain(b, rng, b.open_turn or 0, b.step)


def retry_chain(b: LogBuilder, rng: random.Random, turn: int, step: int) -> None:
    """One or two attempts of a fresh policy chain, most of them started."""
    policy = rng.choice(["default", "rate-limit"])
    provider = b.provider or PROVIDERS[0]
    key = (turn, step, provider, policy)
    retry_id, last = b.retries.get(key, (b.fresh("retry"), 0))
    for attempt in range(last + 1, last + 1 + rng.randint(1, 2)):
        b.retry(retry_id, attempt, policy=policy, turn=turn, step=step)
        b.retries[key] = (retry_id, attempt)
        if rng.random() < 0.8:
            b.retry_started(retry_id, attempt, turn, step)


def ptc_tree(b: LogBuilder, rng: random.Random, root: str) -> None:
    """Programmatic calls under tool call ``root``: one or two children, maybe a grandchild."""
    open_calls: list[tuple[str, str]] = []
    for _ in range(rng.randint(1, 2)):
        parent = rng.choice([root] + [sub for sub, _ in open_calls])
        sub = b.fresh("sub")
        b.ptc(False, root, parent, sub, arguments=[1, {"deep": sub}])
        open_calls.append((sub, parent))
    for sub, parent in reversed(open_calls):
        if rng.random() < 0.9:
            b.ptc(True, root, parent, sub, arguments=[1, {"deep": sub}])


def valid_turn(b: LogBuilder, rng: random.Random) -> None:
    """One closed turn of the agent loop."""
    b.turn_start()
    b.user(rng.choice(["Fix the failing test.", 'Say "hi"\tand\\or\nleave', "Résumé ✓ 😀", "\u0001 odd \u2028 text"]))
    if len(b.humans) == 1 and rng.random() < 0.7:
        if rng.random() < 0.5:
            b.title([b.humans[0]], rng.choice(["fallback", "provider"]))
        else:
            b.title_request(list(b.humans))
    for _ in range(rng.randint(1, 3)):
        tool_step(b, rng)
        if rng.random() < 0.15:
            b.compaction(rng, b.open_turn, b.fresh("cmd") if rng.random() < 0.3 else None)
        if rng.random() < 0.1:
            b.prune(rng)
    b.turn_end()


def between_turns(b: LogBuilder, rng: random.Random) -> None:
    """What happens between turns: commands, titles, markers, standalone compactions."""
    roll = rng.random()
    if roll < 0.2:
        command = b.fresh("cmd")
        b.command_run(command)
        if rng.random() < 0.5:
            b.compaction(rng, None, command)
            b.command_done(command, "success", b.seq - 1 if rng.random() < 0.5 else None)
        else:
            b.command_done(command, rng.choice(["success", "error"]))
    elif roll < 0.3 and b.humans:
        b.title_request(rng.sample(b.humans, min(len(b.humans), rng.randint(1, 2))))
    elif roll < 0.35:
        b.title([], "user")
    elif roll < 0.5 and b.seq > 0:
        b.delivery(b.session_id)
    elif roll < 0.55:
        b.delivery("any-earlier-generation", version=None)
    elif roll < 0.65:
        b.compaction(rng, None)


def crash(b: LogBuilder, rng: random.Random) -> None:
    """A turn cut off by a crash, maybe inside a compaction, closed by repair and resumed."""
    b.turn_start()
    b.user("Keep going.")
    b.step_start()
    if b.provider is None:
        b.header(PROVIDERS[0])
    calls = [Call(b.fresh("call"), "run", "{}") for _ in range(rng.randint(0, 2))]
    b.assistant(calls)
    if calls and rng.random() < 0.5:
        b.tool_call(calls[0])
    if rng.random() < 0.7:
        b.compaction_start(b.fresh("compaction"), b.open_turn)
    b.close_crash()


def valid_log(rng: random.Random, session_id: str = SESSION_ID, builder: LogBuilder | None = None) -> LogBuilder:
    """A random valid agent loop."""
    b = builder or LogBuilder(session_id)
    for _ in range(rng.randint(1, 4)):
        between_turns(b, rng)
        if rng.random() < 0.12:
            crash(b, rng)
        valid_turn(b, rng)
    return b


def valid_artifact(rng: random.Random) -> Artifact:
    """A valid log, a third of them forked from a parent (the parent's log is the seed)."""
    if rng.random() < 0.33:
        b = valid_log(rng, PARENT_ID)
        b.delivery(PARENT_ID)
        if rng.random() < 0.5:
            crash(b, rng)
        else:
            b.add("session/end-seed", {})
        seed_length = b.seq - 1
        b.session_id = SESSION_ID
        valid_log(rng, builder=b)
        return b.artifact(header_line(SESSION_ID, PARENT_ID, seed_length), "fork")
    return valid_log(rng).artifact()


# -- one broken relationship -------------------------------------------------------------------------


def in_step(b: LogBuilder) -> None:
    """Open a turn and a step with a request header in force."""
    b.turn_start()
    b.user("Do the thing.")
    b.step_start()
    if b.provider is None:
        b.header(PROVIDERS[0])


def advertised(b: LogBuilder, count: int = 1) -> list[Call]:
    """Open a step whose answer asks for ``count`` calls."""
    in_step(b)
    calls = [Call(b.fresh("call"), "read", '{"path": "a.py"}') for _ in range(count)]
    b.assistant(calls)
    return calls


def closed_turn_with_human(b: LogBuilder) -> tuple[int, int, int]:
    """A closed turn: seqs of its human message, the assistant answer and the tool result."""
    b.turn_start()
    question = b.user("Please fix it.")
    b.step_start()
    if b.provider is None:
        b.header(PROVIDERS[0])
    call = Call(b.fresh("call"), "read", "{}")
    answer = b.assistant([call])
    b.tool_call(call)
    result = b.tool_result(call.id)
    b.step_end()
    b.turn_end()
    return question, answer, result


Fault = Callable[[LogBuilder, random.Random], Code]


def f_call_name(b: LogBuilder, rng: random.Random) -> Code:
    (call,) = advertised(b)
    b.tool_call(call, name="write")
    return Code.TOOL_CALL_NOT_ADVERTISED


def f_call_arguments(b: LogBuilder, rng: random.Random) -> Code:
    (call,) = advertised(b)
    b.tool_call(call, arguments='{"path": "b.py"}')
    return Code.TOOL_CALL_NOT_ADVERTISED


def f_call_unadvertised(b: LogBuilder, rng: random.Random) -> Code:
    advertised(b, 0)
    b.tool_call(Call("never-asked", "read", "{}"))
    return Code.TOOL_CALL_NOT_ADVERTISED


def f_call_twice(b: LogBuilder, rng: random.Random) -> Code:
    (call,) = advertised(b)
    b.tool_call(call)
    b.tool_call(call)
    return Code.TOOL_CALL_NOT_ADVERTISED


def f_call_from_earlier_step(b: LogBuilder, rng: random.Random) -> Code:
    (call,) = advertised(b)
    b.tool_call(call)
    b.tool_result(call.id)
    b.step_end()
    b.step_start()
    b.assistant([])
    b.tool_call(call)
    return Code.TOOL_CALL_NOT_ADVERTISED


def f_advertised_twice(b: LogBuilder, rng: random.Random) -> Code:
    (call,) = advertised(b)
    b.assistant([call])
    return Code.TOOL_CALL_ID_REPEATED


def f_repair_unadvertised(b: LogBuilder, rng: random.Random) -> Code:
    advertised(b)
    b.repair_result("never-asked")
    return Code.TOOL_RESULT_UNADVERTISED


def f_result_twice(b: LogBuilder, rng: random.Random) -> Code:
    first, _ = advertised(b, 2)
    b.tool_call(first)
    b.tool_result(first.id)
    b.tool_result(first.id)
    return Code.TOOL_RESULT_UNPAIRED


def f_result_never_started(b: LogBuilder, rng: random.Random) -> Code:
    (call,) = advertised(b)
    b.tool_result(call.id)
    return Code.TOOL_RESULT_UNPAIRED


def f_repair_name(b: LogBuilder, rng: random.Random) -> Code:
    (call,) = advertised(b)
    b.repair_result(call.id, name="ToolFailedError")
    return Code.TOOL_RESULT_NOT_EXACT_REPAIR


def f_repair_id(b: LogBuilder, rng: random.Random) -> Code:
    (call,) = advertised(b)
    b.repair_result(call.id, message_id=f"interrupted-tool-result-{call.id}")
    return Code.TOOL_RESULT_NOT_EXACT_REPAIR


def f_repair_text(b: LogBuilder, rng: random.Random) -> Code:
    (call,) = advertised(b)
    b.repair_result(call.id, text="Interrupted.")
    return Code.TOOL_RESULT_NOT_EXACT_REPAIR


def f_repair_sources(b: LogBuilder, rng: random.Random) -> Code:
    (call,) = advertised(b)
    b.repair_result(call.id, sources=[b.seq - 1])
    return Code.TOOL_RESULT_NOT_EXACT_REPAIR


def f_repair_not_error(b: LogBuilder, rng: random.Random) -> Code:
    (call,) = advertised(b)
    b.repair_result(call.id, is_error=False)
    return Code.TOOL_RESULT_NOT_EXACT_REPAIR


def f_step_end_unresolved(b: LogBuilder, rng: random.Random) -> Code:
    (call,) = advertised(b)
    if rng.random() < 0.5:
        b.tool_call(call)
    b.step_end()
    return Code.TOOL_CALL_UNRESOLVED


def f_turn_end_unresolved(b: LogBuilder, rng: random.Random) -> Code:
    advertised(b)
    b.turn_end()
    return Code.STEP_STILL_OPEN


def f_compaction_overlap(b: LogBuilder, rng: random.Random) -> Code:
    in_step(b)
    b.compaction_start("first", b.open_turn)
    b.compaction_start("second", b.open_turn)
    return Code.COMPACTION_OVERLAP


def f_compaction_null_in_turn(b: LogBuilder, rng: random.Random) -> Code:
    in_step(b)
    b.compaction_start("c", None)
    return Code.COMPACTION_TURN_MISMATCH


def f_compaction_turn_between_turns(b: LogBuilder, rng: random.Random) -> Code:
    b.compaction_start("c", b.turn + 1)
    return Code.COMPACTION_TURN_MISMATCH


def f_compaction_end_turn(b: LogBuilder, rng: random.Random) -> Code:
    in_step(b)
    b.compaction_start("c", b.open_turn)
    b.compaction_end("c", (b.open_turn or 0) + 1, error="skipped")
    return Code.COMPACTION_TURN_MISMATCH


def f_summary_unowned(b: LogBuilder, rng: random.Random) -> Code:
    in_step(b)
    positions = b.balanced_range(rng)
    assert positions is not None
    if rng.random() < 0.5:
        b.compaction_start("c", b.open_turn)
    b.summary("other", b.span(positions))
    return Code.COMPACTION_NOT_OWNED


def f_summary_command(b: LogBuilder, rng: random.Random) -> Code:
    in_step(b)
    positions = b.balanced_range(rng)
    assert positions is not None
    b.compaction_start("c", b.open_turn, "cmd-1")
    b.summary("c", b.span(positions), rng.choice([None, "cmd-2"]))
    return Code.COMPACTION_NOT_OWNED


def f_end_unowned(b: LogBuilder, rng: random.Random) -> Code:
    b.compaction_end("c", None, error="skipped")
    return Code.COMPACTION_NOT_OWNED


def f_checkpoint_unowned(b: LogBuilder, rng: random.Random) -> Code:
    in_step(b)
    positions = b.balanced_range(rng)
    assert positions is not None
    span = b.span(positions)
    if rng.random() < 0.5:
        start = b.compaction_start("c", b.open_turn)
        summary = b.summary("c", span)
        b.checkpoint("other", span, [start, summary])
    else:
        b.checkpoint("c", span, [])
    return Code.COMPACTION_NOT_OWNED


def f_summary_twice(b: LogBuilder, rng: random.Random) -> Code:
    in_step(b)
    positions = b.balanced_range(rng)
    assert positions is not None
    b.compaction_start("c", b.open_turn)
    b.summary("c", b.span(positions))
    b.summary("c", b.span(positions))
    return Code.COMPACTION_SUMMARY_REPEATED


def f_end_unsummarised(b: LogBuilder, rng: random.Random) -> Code:
    in_step(b)
    b.compaction_start("c", b.open_turn)
    b.compaction_end("c", b.open_turn)
    return Code.COMPACTION_SUMMARY_MISSING


def f_crossing_turn_end(b: LogBuilder, rng: random.Random) -> Code:
    in_step(b)
    b.compaction_start("c", b.open_turn)
    b.step_end()
    b.turn_end()
    if rng.random() < 0.5:
        b.compaction_end("c", b.turn, error="late")
    return Code.COMPACTION_CROSSES_TURN


def f_crossing_turn_start(b: LogBuilder, rng: random.Random) -> Code:
    b.compaction_start("c", None)
    b.turn_start()
    return Code.COMPACTION_CROSSES_TURN


def f_summary_span_gap(b: LogBuilder, rng: random.Random) -> Code:
    in_step(b)
    b.user("one more")
    b.user("and another")
    b.compaction_start("c", b.open_turn)
    span = b.span((0, len(b.surface) - 1))
    seqs = span["shadowedSeqs"]
    b.summary("c", span | {"shadowedSeqs": [seqs[0], seqs[-1]]})
    return Code.COMPACTION_SPAN_NOT_ON_SURFACE


def f_summary_span_stale(b: LogBuilder, rng: random.Random) -> Code:
    in_step(b)
    first = b.user("to be pruned")
    b.user("kept")
    span = b.span((b.surface.index(first), b.surface.index(first)))
    b.add("compaction/prune", span)
    b.user("(pruned)", {"kind": "plugin", "plugin": "prune"}, {"op": "replace", "start": first, "end": first}, [first])
    b.compaction_start("c", b.open_turn)
    b.summary("c", span)
    return Code.COMPACTION_SPAN_NOT_ON_SURFACE


def f_prune_span(b: LogBuilder, rng: random.Random) -> Code:
    in_step(b)
    first, _, last = b.user("one"), b.user("two"), b.user("three")
    b.add(
        "compaction/prune",
        {"shadowedRange": {"start": first, "end": last}, "shadowedSeqs": [first, last], "shadowedTokenCount": 1},
    )
    return Code.COMPACTION_SPAN_NOT_ON_SURFACE


def f_retry_step(b: LogBuilder, rng: random.Random) -> Code:
    in_step(b)
    b.retry("r", 1, step=(b.open_step or 0) + 1)
    return Code.RETRY_OUTSIDE_STEP


def f_retry_outside_turn(b: LogBuilder, rng: random.Random) -> Code:
    b.retry("r", 1, turn=max(b.turn, 1), step=1)
    return Code.RETRY_OUTSIDE_STEP


def f_retry_after_step(b: LogBuilder, rng: random.Random) -> Code:
    in_step(b)
    b.step_end()
    b.step_start()
    b.step_end()
    b.retry("r", 1, step=b.step - 1)
    return Code.RETRY_OUTSIDE_STEP


def f_retry_provider(b: LogBuilder, rng: random.Random) -> Code:
    in_step(b)
    b.retry("r", 1, provider="another-provider")
    return Code.RETRY_PROVIDER_MISMATCH


def f_retry_number(b: LogBuilder, rng: random.Random) -> Code:
    in_step(b)
    if rng.random() < 0.5:
        b.retry("r", 2)
    else:
        b.retry("r", 1)
        b.retry("r", rng.choice([1, 3]))
    return Code.RETRY_NUMBER_INVALID


def f_retry_id(b: LogBuilder, rng: random.Random) -> Code:
    in_step(b)
    b.retry("r", 1)
    if rng.random() < 0.5:
        b.retry("s", 2)
    else:
        b.retry("r", 1, policy="other-policy")
    return Code.RETRY_ID_INVALID


def f_retry_started_unpaired(b: LogBuilder, rng: random.Random) -> Code:
    in_step(b)
    if rng.random() < 0.5:
        b.retry("r", 1)
        b.retry_started("r", 2, b.turn, b.step)
    else:
        b.retry_started("r", 1, b.turn, b.step)
    return Code.RETRY_START_UNPAIRED


def f_retry_started_step(b: LogBuilder, rng: random.Random) -> Code:
    in_step(b)
    b.retry("r", 1)
    b.retry_started("r", 1, b.turn, b.step + 1)
    return Code.RETRY_START_MISMATCH


def f_retry_started_twice(b: LogBuilder, rng: random.Random) -> Code:
    in_step(b)
    b.retry("r", 1)
    b.retry_started("r", 1, b.turn, b.step)
    b.retry_started("r", 1, b.turn, b.step)
    return Code.RETRY_START_REPEATED


def f_ptc_outside_turn(b: LogBuilder, rng: random.Random) -> Code:
    b.ptc(False, "root", "root", "sub")
    return Code.PTC_OUTSIDE_TURN


def f_ptc_parent(b: LogBuilder, rng: random.Random) -> Code:
    in_step(b)
    b.ptc(False, "root", "unknown-parent", "sub")
    return Code.PTC_ANCESTRY_INVALID


def f_ptc_root(b: LogBuilder, rng: random.Random) -> Code:
    in_step(b)
    b.ptc(False, "root", "root", "sub")
    b.ptc(rng.random() < 0.5, "other-root", "other-root", "sub")
    return Code.PTC_ANCESTRY_INVALID


def f_ptc_start_twice(b: LogBuilder, rng: random.Random) -> Code:
    in_step(b)
    b.ptc(False, "root", "root", "sub")
    if rng.random() < 0.5:
        b.ptc(True, "root", "root", "sub")
    b.ptc(False, "root", "root", "sub")
    return Code.PTC_START_REPEATED


def f_ptc_settle_unpaired(b: LogBuilder, rng: random.Random) -> Code:
    in_step(b)
    if rng.random() < 0.5:
        b.ptc(False, "root", "root", "sub")
        b.ptc(True, "root", "root", "sub")
    b.ptc(True, "root", "root", "sub")
    return Code.PTC_SETTLE_UNPAIRED


def f_ptc_settle_mismatch(b: LogBuilder, rng: random.Random) -> Code:
    in_step(b)
    b.ptc(False, "root", "root", "sub", arguments=[1, {"x": 1}])
    if rng.random() < 0.5:
        b.ptc(True, "root", "root", "sub", name="write", arguments=[1, {"x": 1}])
    else:
        b.ptc(True, "root", "root", "sub", arguments=[1, {"x": 1.5}])
    return Code.PTC_SETTLE_MISMATCH


def f_command_run_twice(b: LogBuilder, rng: random.Random) -> Code:
    b.command_run("cmd")
    if rng.random() < 0.5:
        b.command_done("cmd")
    b.command_run("cmd")
    return Code.COMMAND_RUN_REPEATED


def f_command_done_unpaired(b: LogBuilder, rng: random.Random) -> Code:
    b.command_done("cmd")
    return Code.COMMAND_DONE_UNPAIRED


def f_command_done_source(b: LogBuilder, rng: random.Random) -> Code:
    run = b.command_run("cmd")
    if rng.random() < 0.5:
        b.command_done("cmd", "success", run)
    else:
        b.user("something")
        b.command_done("cmd", "error", b.seq - 1)
    return Code.COMMAND_DONE_SOURCE_INVALID


def f_title_cardinality(b: LogBuilder, rng: random.Random) -> Code:
    question, _, _ = closed_turn_with_human(b)
    if rng.random() < 0.5:
        b.title([], rng.choice(["fallback", "provider"]))
    else:
        b.title([question], "user")
    return Code.TITLE_SEQS_CARDINALITY


def f_title_not_human(b: LogBuilder, rng: random.Random) -> Code:
    question, answer, result = closed_turn_with_human(b)
    b.turn_start()
    plugin = b.user("From a plugin.", {"kind": "plugin", "plugin": "notes"})
    b.turn_end()
    cited = rng.choice([answer, result, plugin, question - 1])
    if rng.random() < 0.5:
        b.title([question, cited])
    else:
        b.add(
            "session/title-llm-request",
            {
                "titleProvider": PROVIDERS[0],
                "messageSeqs": [cited],
                "route": {"provider": PROVIDERS[0], "model": MODEL},
                "system": "s",
                "messages": [],
                "maxTokens": 8,
            },
        )
    return Code.TITLE_SOURCE_NOT_HUMAN


def f_title_framing(b: LogBuilder, rng: random.Random) -> Code:
    question, _, _ = closed_turn_with_human(b)
    roll = rng.random()
    if roll < 0.4:
        b.title_request([question], frame=title_frame([(question, "something else")]))
    elif roll < 0.7:
        twice = {
            "id": "t",
            "role": "user",
            "content": [text(title_frame([(question, "Please fix it.")]))],
            "source": {"kind": "plugin", "plugin": "dsh-session-title-llm"},
        }
        b.title_request([question], messages=[twice, twice | {"id": "t2"}])
    else:
        wrong = {
            "id": "t",
            "role": "user",
            "content": [text(title_frame([(question, "Please fix it.")]))],
            "source": {"kind": "plugin", "plugin": "another-plugin"},
        }
        b.title_request([question], messages=[wrong])
    return Code.TITLE_REQUEST_FRAMING


def f_delivery_session(b: LogBuilder, rng: random.Random) -> Code:
    if b.seq == 0:
        closed_turn_with_human(b)
    b.delivery(rng.choice(["someone-else", PARENT_ID]))
    return Code.DELIVERY_MARKER_WRONG_SESSION


FAULTS: dict[str, Fault] = {
    f.__name__.removeprefix("f_"): f
    for f in [
        f_call_name,
        f_call_arguments,
        f_call_unadvertised,
        f_call_twice,
        f_call_from_earlier_step,
        f_advertised_twice,
        f_repair_unadvertised,
        f_result_twice,
        f_result_never_started,
        f_repair_name,
        f_repair_id,
        f_repair_text,
        f_repair_sources,
        f_repair_not_error,
        f_step_end_unresolved,
        f_turn_end_unresolved,
        f_compaction_overlap,
        f_compaction_null_in_turn,
        f_compaction_turn_between_turns,
        f_compaction_end_turn,
        f_summary_unowned,
        f_summary_command,
        f_end_unowned,
        f_checkpoint_unowned,
        f_summary_twice,
        f_end_unsummarised,
        f_crossing_turn_end,
        f_crossing_turn_start,
        f_summary_span_gap,
        f_summary_span_stale,
        f_prune_span,
        f_retry_step,
        f_retry_outside_turn,
        f_retry_after_step,
        f_retry_provider,
        f_retry_number,
        f_retry_id,
        f_retry_started_unpaired,
        f_retry_started_step,
        f_retry_started_twice,
        f_ptc_outside_turn,
        f_ptc_parent,
        f_ptc_root,
        f_ptc_start_twice,
        f_ptc_settle_unpaired,
        f_ptc_settle_mismatch,
        f_command_run_twice,
        f_command_done_unpaired,
        f_command_done_source,
        f_title_cardinality,
        f_title_not_human,
        f_title_framing,
        f_delivery_session,
    ]
}
"""Each fault appends one broken relationship to a log between turns and names the model's code."""


def faulty_artifact(rng: random.Random, name: str) -> Artifact:
    """A valid prefix (possibly empty) followed by the fault ``name``."""
    b = LogBuilder()
    for _ in range(rng.randint(0, 2)):
        valid_turn(b, rng)
    expect = FAULTS[name](b, rng)
    return b.artifact(name=name, expect=expect)
