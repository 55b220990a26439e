"""Builders for realistic, valid session logs.

:class:`SessionBuilder` plays the harness: it opens turns and steps, writes user and assistant
messages, tool calls and results, request headers, compactions and tool-result rewrites, the
compaction lifecycle (``compaction/start``, ``/summary``, ``/end``), retries and titles, and
assigns seqs and times.  Every event it builds is checked against the model as it is committed,
so a builder always holds a valid v1 log; tests and state machines mutate its events to make
invalid candidates.  Every payload has the released v1 shape, and every event stands where the
released relationship rules allow it (a retry names the open step and the provider of the latest
request header, a summary belongs to the open compaction, a "never started" result is the exact
repair record).
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from sessionlog_spec.model.compaction import cut_balances
from sessionlog_spec.model.event import Event, Replace, encode_event
from sessionlog_spec.model.json_value import as_int, as_object, thaw
from sessionlog_spec.model.repair import NOT_STARTED_TEXT
from sessionlog_spec.model.session import EMPTY_SESSION, SessionState
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.suite.judged import appended

RawEvent = dict[str, Any]
PROVIDER = {"provider": "deepseek", "model": "deepseek-chat"}
NOT_STARTED_ERROR = {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}
"""The error of the synthetic result for a call the harness never started."""


@dataclass(frozen=True, slots=True)
class OpenCompaction:
    """A ``compaction/start`` with no ``compaction/end`` yet (an end-of-seed marker forgets it)."""

    compaction_id: str
    turn: int | None
    summarized: bool
    source_command_id: str | None = None


BUILDER_TICK = 7
"""Milliseconds the builder's clock moves for each event it builds."""


def text_block(text: str) -> dict[str, Any]:
    """A text content block."""
    return {"type": "text", "text": text}


def basic_header(system: str = "You are a careful coding agent.", tools: Sequence[str] = ("read_file",)) -> dict[str, Any]:
    """A canonical, pinned request header."""
    header: dict[str, Any] = {"config": dict(PROVIDER)}
    if system:
        header["system"] = system
    if tools:
        header["tools"] = [{"name": t, "description": f"the {t} tool", "parameters": {"type": "object"}} for t in tools]
    return header


def _chained(fingerprint: str, raw: Mapping[str, Any]) -> str:
    digest = hashlib.blake2b(fingerprint.encode(), digest_size=12)
    digest.update(json.dumps(raw, sort_keys=True, default=repr).encode())
    return digest.hexdigest()


_CHAIN_STEPS: OrderedDict[tuple[str, int], tuple[Event, str]] = OrderedDict()
"""Fingerprints already chained, by the fingerprint before and the (frozen) event chained onto it,
which the entry holds so that its identity is not reused: a builder taken over from a session
chains the events the builder before it chained already."""
CHAIN_STEPS_KEPT = 65_536


def _chained_event(fingerprint: str, event: Event) -> str:
    """:func:`_chained` of ``event``'s JSON form, computed once for the same fingerprint and event."""
    key = (fingerprint, id(event))
    known = _CHAIN_STEPS.get(key)
    if known is not None and known[0] is event:
        return known[1]
    following = _chained(fingerprint, encode_event(event))
    _CHAIN_STEPS[key] = (event, following)
    if len(_CHAIN_STEPS) > CHAIN_STEPS_KEPT:
        _CHAIN_STEPS.popitem(last=False)
    return following


_ENCODED: OrderedDict[int, tuple[Event, bytes | None]] = OrderedDict()
"""The JSON form of events already encoded, written out, by the (frozen) event, which the entry
holds so that its identity is not reused; ``None`` for one orjson does not write (a lone surrogate)."""
ENCODED_KEPT = 16_384


def raw_event(event: Event) -> RawEvent:
    """:func:`~sessionlog_spec.model.event.encode_event` of ``event``: a new object each time (callers
    change the events they are given), read back from the JSON form written the first time."""
    known = _ENCODED.get(id(event))
    if known is None or known[0] is not event:
        try:
            written: bytes | None = orjson.dumps(encode_event(event))
        except TypeError:
            written = None
        known = _ENCODED[id(event)] = (event, written)
        if len(_ENCODED) > ENCODED_KEPT:
            _ENCODED.popitem(last=False)
    if known[1] is None:
        return encode_event(event)
    raw: RawEvent = orjson.loads(known[1])
    return raw


class SessionBuilder:
    """Builds a valid session event by event; ``commit=False`` builds without appending."""

    def __init__(self, state: SessionState = EMPTY_SESSION, time: int = 1_700_000_000_000) -> None:
        self.state = state
        self.time = time
        self.turn = state.trace.last_turn
        self.step = state.trace.last_step
        self.ids = 0
        self.session_id: str | None = None
        """The id in the header line of the log being built, where the machine knows it."""
        self.fingerprint = ""
        """A digest of the log so far, chained event by event: what choices spread over
        (:mod:`~sessionlog_spec.suite.spread`) without serialising the whole log for each.  A
        builder taken over from a state has the fingerprint of one that committed its events."""
        for event in state.events:
            self.fingerprint = _chained_event(self.fingerprint, event)

    # -- plumbing -----------------------------------------------------------------------------

    @property
    def events(self) -> list[RawEvent]:
        """The log so far, as raw JSON events (new objects: the caller may change them)."""
        return [raw_event(e) for e in self.state.events]

    @property
    def next_seq(self) -> int:
        """The seq the next event gets."""
        return len(self.state.events)

    def _mint(self, prefix: str) -> str:
        self.ids += 1
        return f"{prefix}-{self.ids}"

    def _data_of(self, seq: int) -> dict[str, Any]:
        data = as_object(self.state.events[seq].data)
        return {} if data is None else dict(data)

    def event(self, type_: str, data: Any, commit: bool = True, **envelope: Any) -> RawEvent:
        """A raw event at the next seq; committed through the model unless ``commit`` is false."""
        self.time += BUILDER_TICK
        raw: RawEvent = {"type": type_, "seq": self.next_seq, "time": self.time, "data": data, **envelope}
        if commit:
            self.commit(raw)
        return raw

    def commit(self, raw: Mapping[str, Any]) -> None:
        """Append a raw event through the model; it must be valid."""
        state = appended(self.state, raw)
        if isinstance(state, Violation):
            raise AssertionError(f"builder produced an invalid event {raw}: {state}")
        self.state = state
        self.fingerprint = _chained_event(self.fingerprint, state.events[-1])
        trace = state.trace
        self.turn, self.step = trace.last_turn, trace.last_step

    # -- brackets -----------------------------------------------------------------------------

    def turn_start(self, commit: bool = True) -> RawEvent:
        """Open the next turn."""
        return self.event("turn/start", {"turn": self.state.trace.last_turn + 1}, commit)

    def turn_end(self, reason: Mapping[str, Any] | None = None, commit: bool = True) -> RawEvent:
        """Close the open turn."""
        return self.event(
            "turn/end", {"turn": self.state.trace.open_turn, "reason": dict(reason or {"kind": "completed"})}, commit
        )

    def step_start(self, commit: bool = True) -> RawEvent:
        """Open the next step of the open turn."""
        trace = self.state.trace
        return self.event("step/start", {"turn": trace.open_turn, "step": trace.last_step + 1}, commit)

    def step_end(self, commit: bool = True) -> RawEvent:
        """Close the open step."""
        trace = self.state.trace
        return self.event("step/end", {"turn": trace.open_turn, "step": trace.open_step}, commit)

    # -- messages -----------------------------------------------------------------------------

    def user_message(self, text: str = "Please fix the failing test.", commit: bool = True) -> RawEvent:
        """Append a user message."""
        data = {"id": self._mint("user"), "role": "user", "content": [text_block(text)], "source": {"kind": "user"}}
        return self.event("user/message", data, commit, surfaceOp="append")

    def assistant_message(
        self, text: str = "Let me look.", calls: Sequence[str] = (), reasoning: str | None = None, commit: bool = True
    ) -> RawEvent:
        """Append an assistant message asking for the tool calls ``calls`` (call ids)."""
        trace = self.state.trace
        content: list[dict[str, Any]] = []
        if reasoning:
            content.append({"type": "reasoning", "text": reasoning})
        if text:
            content.append(text_block(text))
        content += [{"type": "tool-call", "id": c, "name": "read_file", "arguments": '{"path": "a.py"}'} for c in calls]
        message = {
            "id": self._mint("assistant"),
            "role": "assistant",
            "content": content,
            "source": {"kind": "model", **PROVIDER},
        }
        data = {"turn": trace.open_turn, "step": trace.open_step, "message": message}
        return self.event("assistant/message", data, commit, surfaceOp="append")

    def chunk(self, text: str = "Let", commit: bool = True) -> RawEvent:
        """Append a raw streaming chunk."""
        trace = self.state.trace
        chunk = {"type": "text-delta", "index": 0, "text": text}
        return self.event("assistant/chunk", {"turn": trace.open_turn, "step": trace.open_step, "chunk": chunk}, commit)

    def tool_call(self, call_id: str, commit: bool = True) -> RawEvent:
        """Record that the tool call ``call_id`` started, with the name and arguments it was asked with
        (a released reader binds a ``tool/call`` to its advertised call by all three)."""
        trace = self.state.trace
        name, arguments = self.advertised_call(call_id) or ("read_file", "{}")
        data = {"turn": trace.open_turn, "step": trace.open_step, "callId": call_id, "name": name, "arguments": arguments}
        return self.event("tool/call", data, commit)

    def advertised_call(self, call_id: str) -> tuple[Any, Any] | None:
        """The name and arguments of the latest assistant message's tool-call block ``call_id``."""
        for event in reversed(self.state.events):
            if event.type != "assistant/message" or not isinstance(event.data, Mapping):
                continue
            message = event.data.get("message")
            content = message.get("content") if isinstance(message, Mapping) else None
            for block in content if isinstance(content, tuple) else ():
                if isinstance(block, Mapping) and block.get("type") == "tool-call" and block.get("id") == call_id:
                    return thaw(block.get("name")), thaw(block.get("arguments"))
        return None

    def tool_result_data(self, call_id: str, text: str, is_error: bool = False) -> dict[str, Any]:
        """The payload of a tool result for ``call_id`` in the open step."""
        trace = self.state.trace
        block = {"type": "tool-result", "toolCallId": call_id, "content": [text_block(text)], "isError": is_error}
        message = {"id": self._mint("result"), "role": "user", "source": {"kind": "tool", "callId": call_id}, "content": [block]}
        return {"turn": trace.open_turn, "step": trace.open_step, "message": message}

    def tool_result(self, call_id: str, text: str = "def main(): ...", commit: bool = True) -> RawEvent:
        """Append the result of ``call_id``."""
        return self.event("tool/result", self.tool_result_data(call_id, text), commit, surfaceOp="append")

    def not_started_result_data(self, call_id: str) -> dict[str, Any]:
        """The payload of the synthetic result for ``call_id``, asked for but never started: the exact
        record crash repair writes (its message id names the call and the result's own seq)."""
        data = self.tool_result_data(call_id, NOT_STARTED_TEXT, is_error=True)
        data["message"]["id"] = f"interrupted-tool-result-{call_id}-{self.next_seq}"
        data["error"] = dict(NOT_STARTED_ERROR)
        return data

    def not_started_result(self, call_id: str, commit: bool = True) -> RawEvent:
        """Append the synthetic result for ``call_id``, which was asked for but never started."""
        return self.event("tool/result", self.not_started_result_data(call_id), commit, surfaceOp="append")

    def request_header(
        self, header: Mapping[str, Any], reason: str, starts_series: bool = False, commit: bool = True
    ) -> RawEvent:
        """Append a full request-header snapshot."""
        data: dict[str, Any] = {"header": dict(header), "reason": reason}
        if starts_series:
            data["startsSeries"] = True
        return self.event("request/header", data, commit)

    def compaction(self, start: int, end: int, summary: str = "Summary of earlier work.", commit: bool = True) -> RawEvent:
        """Replace the surface range ``start..end`` with a summary user message citing what it shadows."""
        nodes = self.state.surface.nodes
        shadowed = list(nodes[nodes.index(start) : nodes.index(end) + 1])
        data = {"id": self._mint("summary"), "role": "user", "content": [text_block(summary)], "source": {"kind": "user"}}
        op = {"op": "replace", "start": start, "end": end}
        return self.event("user/message", data, commit, surfaceOp=op, sourceEventSeqs=shadowed)

    def compaction_start(self, source_command_id: str | None = None, commit: bool = True) -> RawEvent:
        """Open a compaction owned by the open turn (``turn: null`` between turns)."""
        data: dict[str, Any] = {"compactionId": f"compaction-{self.next_seq}", "turn": self.state.trace.open_turn}
        if source_command_id is not None:
            data["sourceCommandId"] = source_command_id
        return self.event("compaction/start", data, commit)

    def compaction_summary(
        self, start: int, end: int, summary: str = "Summary of earlier work.", commit: bool = True
    ) -> RawEvent:
        """The open compaction's summary of the surface range ``start..end`` (a span of the current surface)."""
        open_ = self.open_compaction()
        assert open_ is not None, "a summary belongs to an open compaction"
        nodes = self.state.surface.nodes
        shadowed = list(nodes[nodes.index(start) : nodes.index(end) + 1])
        data: dict[str, Any] = {"compactionId": open_.compaction_id}
        if open_.source_command_id is not None:
            data["sourceCommandId"] = open_.source_command_id
        data.update(
            summary=[text_block(summary)],
            shadowedRange={"start": start, "end": end},
            shadowedSeqs=shadowed,
            shadowedTokenCount=40 * len(shadowed),
            **PROVIDER,
        )
        return self.event("compaction/summary", data, commit)

    def compaction_end(self, error: str | None = None, commit: bool = True) -> RawEvent:
        """Close the open compaction (with ``error`` when it failed; a successful one needs its summary)."""
        open_ = self.open_compaction()
        assert open_ is not None, "no compaction is open"
        data: dict[str, Any] = {"compactionId": open_.compaction_id, "turn": open_.turn}
        if open_.source_command_id is not None:
            data["sourceCommandId"] = open_.source_command_id
        if error is not None:
            data["error"] = error
        return self.event("compaction/end", data, commit)

    def retry(self, policy_key: str = "transient", commit: bool = True) -> RawEvent:
        """An ``llm/retry`` of the current step's request (the open step's, or between steps the one
        that ended last): the next attempt of its chain for ``policy_key``, against the provider of
        the latest request header (a turn and that header must exist)."""
        trace = self.state.trace
        provider = self.request_provider()
        step = trace.open_step if trace.open_step is not None else self.state.relations.ended_steps
        assert trace.open_turn is not None and provider is not None
        prior = None
        for event in reversed(self.state.events):
            if event.type == "llm/retry":
                data = self._data_of(event.seq)
                chain = (data.get("turn"), data.get("step"), data.get("provider"), data.get("policyKey"))
                if chain == (trace.open_turn, step, provider, policy_key):
                    prior = data
                    break
        attempt = 1 if prior is None else int(prior["retry"]) + 1
        retry_id = f"retry-{self.next_seq}" if prior is None else str(prior["retryId"])
        rate_limited = policy_key == "rate-limit"
        failure: dict[str, Any] = (
            {"message": "Rate limit reached for requests", "code": "RATE_LIMITED", "status": 429, "providerRetryAfterMs": 2000}
            if rate_limited
            else {"message": "The server is overloaded.", "code": "PROVIDER_OVERLOADED", "status": 503}
        )
        data = {"retryId": retry_id, "turn": trace.open_turn, "step": step, "provider": provider}
        # A rate limit is retried for as long as it lasts; anything else gives up after five attempts.
        mode = "always" if rate_limited or attempt > 5 else "normal"
        data.update(mode=mode, policyKey=policy_key, retry=attempt)
        if mode == "normal":
            data["maxRetries"] = 5
        data.update(delayMs=min(500 * 2 ** (attempt - 1), 60_000), failure=failure)
        return self.event("llm/retry", data, commit)

    def rewrite_tool_result(self, seq: int, text: str = "[output elided]", commit: bool = True) -> RawEvent:
        """Replace the tool result at ``seq`` with a copy whose content is ``text``."""
        old = thaw(self.state.events[seq].data)
        assert isinstance(old, dict)
        old["message"]["content"][0]["content"] = [text_block(text)]
        op = {"op": "replace", "start": seq, "end": seq}
        return self.event("tool/result", old, commit, surfaceOp=op, sourceEventSeqs=[seq])

    # -- queries ------------------------------------------------------------------------------

    def legal_ranges(self) -> list[tuple[int, int]]:
        """The (start, end) seq pairs a compaction may replace now (none on a surface with no balance)."""
        nodes = self.state.surface.nodes
        balanced = cut_balances(nodes, self.state.events)
        if isinstance(balanced, Violation):
            return []
        return [(nodes[i], nodes[j]) for i in range(len(nodes)) if balanced[i] for j in range(i, len(nodes)) if balanced[j + 1]]

    def tool_result_seqs(self) -> list[int]:
        """The seqs of tool results currently on the surface."""
        return [n for n in self.state.surface.nodes if self.state.events[n].type == "tool/result"]

    def open_compaction(self) -> OpenCompaction | None:
        """The compaction started and not yet ended (an end-of-seed marker closes the books on it)."""
        open_: OpenCompaction | None = None
        for event in self.state.events:
            if event.type == "compaction/start":
                data = self._data_of(event.seq)
                turn, command = data.get("turn"), data.get("sourceCommandId")
                open_ = OpenCompaction(
                    str(data.get("compactionId")),
                    as_int(turn),  # a shaped payload may spell the turn 1.0
                    False,
                    command if isinstance(command, str) else None,
                )
            elif event.type == "compaction/summary" and open_ is not None:
                open_ = OpenCompaction(open_.compaction_id, open_.turn, True, open_.source_command_id)
            elif event.type in ("compaction/end", "session/end-seed"):
                open_ = None
        return open_

    def request_provider(self) -> str | None:
        """The provider of the latest ``request/header`` (what a retry of the next request goes to)."""
        for event in reversed(self.state.events):
            if event.type == "request/header":
                header = as_object(self._data_of(event.seq).get("header"))
                config = as_object(header.get("config")) if header is not None else None
                provider = config.get("provider") if config is not None else None
                return provider if isinstance(provider, str) else None
        return None

    def human_message_seqs(self) -> list[int]:
        """The seqs of the user's own messages (appended ``user/message`` events whose source is the user)."""
        out = []
        for event in self.state.events:
            if event.type == "user/message" and not isinstance(event.surface_op, Replace):
                source = as_object(self._data_of(event.seq).get("source"))
                if source is not None and source.get("kind") == "user":
                    out.append(event.seq)
        return out

    def tool_turn(
        self, text: str, calls: Sequence[str], header: Mapping[str, Any] | None = None, reason: str | None = None
    ) -> None:
        """One complete turn: the user's ``text``, a step whose request (with ``header`` written for
        ``reason`` when given) asks for ``calls`` and gets their results, then a step with the answer."""
        self.turn_start()
        self.user_message(text)
        self.step_start()
        if header is not None and reason is not None:
            self.request_header(header, reason)
        self.assistant_message("Reading files.", list(calls))
        for call in calls:
            self.tool_call(call)
            self.tool_result(call)
        self.step_end()
        self.step_start()
        self.assistant_message("Done.")
        self.step_end()
        self.turn_end()

    def streamed_turn(
        self,
        text: str,
        chunks: Sequence[str],
        calls: Sequence[str] = (),
        header: Mapping[str, Any] | None = None,
        reason: str | None = None,
    ) -> None:
        """One complete turn of one step whose answer streamed as ``chunks`` (a run a released writer
        packs into one row when there are three or more), asking for ``calls`` and getting their results."""
        self.turn_start()
        self.user_message(text)
        self.step_start()
        if header is not None and reason is not None:
            self.request_header(header, reason)
        for chunk in chunks:
            self.chunk(chunk)
        self.assistant_message("".join(chunks), list(calls))
        for call in calls:
            self.tool_call(call)
            self.tool_result(call)
        self.step_end()
        self.turn_end()


def realistic_session(turns: int = 3, calls_per_step: int = 2, header: Mapping[str, Any] | None = None) -> SessionBuilder:
    """A complete, closed session: turns with a header, tool steps and a final answer."""
    b = SessionBuilder()
    for turn in range(turns):
        calls = [f"call-{turn}-{i}" for i in range(calls_per_step)]
        b.tool_turn(f"Request {turn + 1}", calls, header or basic_header(), "initial" if turn == 0 else "resume")
    return b
