"""A scripted ACP agent whose sessions are seqlog logs.

``python -m acp_snapshots.agent --script SCENARIO --session-dir DIR`` speaks the Agent Client Protocol
(JSON-RPC over stdio).  Each ACP session is a seqlog :class:`~seqlog.SessionStore` under
``DIR/<session id>/``.  A prompt runs one turn: the user message, then steps, each with one model
request answered by the scenario's scripted model and the tool calls it asks for.  Before every
request the loop instance's :class:`~seqlog.HeaderWriter` appends the snapshot that is due, inside
the open step; the request itself (header and messages, as a provider would get them) is reported
to the client as the extension notification ``_sessionlog/model_request``.

Time comes from a fixed injected clock, so the same scenario always writes the same bytes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any, cast

import acp
from acp import Agent, Client, RequestError
from acp.helpers import (
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
    TextContentBlock,
    ToolKind,
)

from acp_snapshots import MODEL_REQUEST_METHOD, SESSION_LOADED_METHOD
from acp_snapshots.requests import ModelRequest, project_surface
from acp_snapshots.scenarios import SCENARIOS, Call, Compact, Prompt, Reply, Rewrite, Scenario, ScenarioError
from acp_snapshots.tools import CONFIG, INITIAL_MODE, MODE_OF_SANDBOX, MODES, Mode, Outcome, Workspace, assemble_header
from seqlog import HeaderWriter, Replace, SessionStore, canonical_header, thaw
from seqlog.event import Event

BASE_TIME_MS = 1_767_225_600_000
"""2026-01-01T00:00:00Z: the fixed clock's first reading."""
TICK_MS = 1_000
AGENT_INFO = Implementation(name="sessionlog-harness-agent", title="Scripted seqlog agent", version="1")
TOOL_KINDS: dict[str, ToolKind] = {
    "list_files": "search",
    "read_file": "read",
    "write_file": "edit",
    "run_shell": "execute",
    "sandbox_exec": "execute",
}


class StepClock:
    """The injected clock: ``BASE_TIME_MS``, then one tick later on every reading."""

    def __init__(self, start: int = BASE_TIME_MS, tick: int = TICK_MS) -> None:
        self._next = start
        self._tick = tick

    def __call__(self) -> int:
        now = self._next
        self._next += self._tick
        return now

    def resume_after(self, time: int) -> None:
        """Continue after a loaded log's last event, so times never go back."""
        self._next = max(self._next, time + self._tick)


def _text(block: str) -> dict[str, Any]:
    return {"type": "text", "text": block}


def _arguments(call: Call) -> str:
    return json.dumps(dict(call.arguments), ensure_ascii=False, separators=(",", ":"))


class Loop:
    """One loop instance over one ACP session: its store, header writer, mode and workspace."""

    def __init__(self, agent: ScriptedAgent, session_id: str, store: SessionStore, mode: Mode) -> None:
        self.agent = agent
        self.session_id = session_id
        self.store = store
        self.session = store.session
        self.writer = HeaderWriter(store.session)
        self.mode = mode
        self.workspace = Workspace(agent.scenario.files, agent.scenario.commands)

    async def update(self, update: Any) -> None:
        await self.agent.client.session_update(session_id=self.session_id, update=update)

    # Turns ------------------------------------------------------------------------------------

    async def run_turn(self, script: Prompt) -> None:
        s = self.session
        turn = s.brackets.last_turn + 1
        s.append("turn/start", {"turn": turn})
        user = s.append(
            "user/message",
            {"id": f"user-{turn}", "role": "user", "source": {"kind": "user"}, "content": [_text(script.text)]},
            surface_op="append",
        )
        if script.compact is not None:
            self.compact(turn, user.seq, script.compact)
        if script.rewrite is not None:
            self.rewrite(script.rewrite)
        # One step per scripted reply: a reply with tool calls (or an empty one) is followed by another
        # request, and check_scenario guarantees that only the last reply ends the turn.
        for step, reply in enumerate(script.replies, start=1):
            s.append("step/start", {"turn": turn, "step": step})
            sent = await self.request(turn, step, reply)
            await self.answer(turn, step, reply, sent)
            for call in reply.calls:
                await self.run_tool(turn, step, call)
            s.append("step/end", {"turn": turn, "step": step})
        s.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})

    async def request(self, turn: int, step: int, reply: Reply) -> ModelRequest:
        """Write the header that is due, make the log durable, and report the request as sent."""
        assembled = assemble_header(self.mode)
        written = self.writer.before_request(assembled, begins_series=reply.begins_series)
        self.store.checkpoint()
        header_event = None
        if written is not None:
            data = thaw(written.data)
            header_event = {"seq": written.seq, "reason": data["reason"]}
            if data.get("startsSeries") is True:
                header_event["startsSeries"] = True
        s = self.session
        messages = project_surface((s.events[n].type, thaw(s.events[n].data)) for n in s.surface.nodes)
        record = ModelRequest(turn, step, len(s.events), thaw(canonical_header(assembled)), messages, header_event)
        await self.agent.client.ext_notification(MODEL_REQUEST_METHOD, record.to_json())
        return record

    async def answer(self, turn: int, step: int, reply: Reply, request: ModelRequest) -> None:
        """Stream the scripted reply to the client and log it as the step's assistant message."""
        content: list[dict[str, Any]] = []
        if reply.reasoning:
            content.append({"type": "reasoning", "text": reply.reasoning})
            await self.update(update_agent_thought_text(reply.reasoning))
        if reply.text:
            content.append(_text(reply.text))
            await self.update(update_agent_message_text(reply.text))
        content += [{"type": "tool-call", "id": c.id, "name": c.name, "arguments": _arguments(c)} for c in reply.calls]
        message = {
            "id": f"assistant-{turn}-{step}",
            "role": "assistant",
            "source": {"kind": "model", "provider": CONFIG["provider"], "model": CONFIG["model"]},
            "content": content,
        }
        # A rough, deterministic token count: four characters of JSON per token.
        sent = json.dumps([request.header, request.messages], ensure_ascii=False)
        usage = {"inputTokens": len(sent) // 4, "outputTokens": len(json.dumps(content, ensure_ascii=False)) // 4}
        self.session.append(
            "assistant/message", {"turn": turn, "step": step, "message": message, "usage": usage}, surface_op="append"
        )

    async def run_tool(self, turn: int, step: int, call: Call) -> None:
        """Record the call as started (durably), run it, and log its result."""
        await self.update(
            start_tool_call(
                call.id, f"{call.name} {_arguments(call)}", kind=TOOL_KINDS.get(call.name, "other"), status="pending",
                raw_input=dict(call.arguments),
            )
        )
        started = self.session.append(
            "tool/call", {"turn": turn, "step": step, "callId": call.id, "name": call.name, "arguments": _arguments(call)}
        )
        self.store.checkpoint()
        await self.update(update_tool_call(call.id, status="in_progress"))
        if call.arguments.get("command") in self.agent.scenario.hanging:
            await asyncio.Event().wait()  # never finishes: the scenario kills the process here
        outcome: Outcome = self.workspace.run(self.mode, call.name, call.arguments)
        block: dict[str, Any] = {"type": "tool-result", "toolCallId": call.id, "content": [_text(outcome.text)]}
        if outcome.is_error:
            block["isError"] = True
        message = {"id": f"result-{call.id}", "role": "user", "source": {"kind": "tool", "callId": call.id}, "content": [block]}
        self.session.append(
            "tool/result", {"turn": turn, "step": step, "message": message}, surface_op="append", source_event_seqs=[started.seq]
        )
        await self.update(
            update_tool_call(
                call.id, status="failed" if outcome.is_error else "completed", content=[tool_content(text_block(outcome.text))]
            )
        )

    # Surface maintenance ------------------------------------------------------------------------

    def _token_count(self, seqs: list[int]) -> int:
        """What the surface nodes ``seqs`` cost in a request, by the same rough count as usage."""
        s = self.session
        messages = project_surface((s.events[n].type, thaw(s.events[n].data)) for n in seqs)
        return len(json.dumps(messages, ensure_ascii=False)) // 4

    def compact(self, turn: int, prompt_seq: int, compact: Compact) -> None:
        """Replace every surface node before the prompt with one summary user message.

        The released compaction lifecycle, inside the turn that owns it and under one
        ``compactionId``: ``compaction/start``; ``compaction/summary`` pricing the shadowed span (the
        current surface nodes of ``shadowedRange``, in surface order); the checkpoint (a replacing
        ``user/message`` from the ``compact`` plugin, citing the shadowed nodes); ``compaction/end``.
        """
        s = self.session
        nodes = list(s.surface.nodes)
        balanced = s.cut_balances()
        end_index = nodes.index(prompt_seq)
        if end_index == 0 or not (balanced[0] and balanced[end_index]):
            raise ScenarioError(f"turn {turn}: nothing before the prompt can be compacted")
        shadowed = nodes[:end_index]
        compaction_id = f"compaction-{turn}"
        s.append("compaction/start", {"compactionId": compaction_id, "turn": turn})
        s.append(
            "compaction/summary",
            {
                "compactionId": compaction_id,
                "summary": [_text(compact.summary)],
                "shadowedRange": {"start": shadowed[0], "end": shadowed[-1]},
                "shadowedSeqs": shadowed,
                "shadowedTokenCount": self._token_count(shadowed),
                "provider": CONFIG["provider"],
                "model": CONFIG["model"],
            },
        )
        s.append(
            "user/message",
            {
                "id": f"summary-{turn}",
                "role": "user",
                "source": {"kind": "plugin", "plugin": "compact", "compactionId": compaction_id},
                "content": [_text(compact.summary)],
            },
            surface_op=Replace(shadowed[0], shadowed[-1]),
            source_event_seqs=shadowed,
        )
        s.append("compaction/end", {"compactionId": compaction_id, "turn": turn})

    def rewrite(self, rewrite: Rewrite) -> None:
        """Rewrite the content of the tool result answering ``rewrite.call_id`` (content only).

        A ``compaction/prune`` prices the one node it shadows, then the rewritten ``tool/result``
        replaces that node, citing it.
        """
        s = self.session
        target: Event | None = None
        for seq in s.surface.nodes:
            event = s.events[seq]
            if event.type == "tool/result" and thaw(event.data)["message"]["source"]["callId"] == rewrite.call_id:
                target = event
        if target is None:
            raise ScenarioError(f"no tool result for {rewrite.call_id!r} on the surface")
        data = thaw(target.data)
        data["message"]["content"][0]["content"] = [_text(rewrite.text)]
        s.append(
            "compaction/prune",
            {
                "shadowedRange": {"start": target.seq, "end": target.seq},
                "shadowedSeqs": [target.seq],
                "shadowedTokenCount": self._token_count([target.seq]),
            },
        )
        s.append("tool/result", data, surface_op=Replace(target.seq, target.seq), source_event_seqs=[target.seq])

    def set_mode(self, mode: Mode) -> None:
        """Switch the ACP session mode; the log records the sandbox policy it switches to."""
        if mode.id == self.mode.id:
            return
        self.session.append("sandbox/mode", {"mode": mode.sandbox})
        self.store.checkpoint()
        self.mode = mode


def _mode_state(current: str) -> SessionModeState:
    return SessionModeState(
        current_mode_id=current,
        available_modes=[SessionMode(id=m.id, name=m.name, description=m.description) for m in MODES.values()],
    )


class ScriptedAgent:
    """The ACP agent: session lifecycle, modes and prompts, over seqlog stores.

    The SDK dispatches each JSON-RPC method to the attribute of the same (snake-cased) name and
    answers ``method_not_found`` for any it lacks, so only the methods the harness uses are here.
    """

    def __init__(self, scenario: Scenario, session_dir: Path, clock: StepClock | None = None) -> None:
        self.scenario = scenario
        self.session_dir = session_dir
        self.clock = clock or StepClock()
        self.loops: dict[str, Loop] = {}
        self._client: Client | None = None

    @property
    def client(self) -> Client:
        if self._client is None:
            raise RuntimeError("no client connected")
        return self._client

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    def close(self) -> None:
        for loop in self.loops.values():
            loop.store.close()
        self.loops.clear()

    def _loop(self, session_id: str) -> Loop:
        loop = self.loops.get(session_id)
        if loop is None:
            raise RequestError.invalid_params({"sessionId": session_id, "details": "unknown session"})
        return loop

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(load_session=True),
            agent_info=AGENT_INFO,
        )

    async def new_session(
        self, cwd: str, additional_directories: list[str] | None = None, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        session_id = self.scenario.session_id
        header = {"type": "session", "version": 1, "id": session_id, "createdAt": self.clock(), "cwd": cwd, "delegationDepth": 0}
        store = SessionStore.create(self.session_dir / session_id, header=header, clock=self.clock)
        self.loops[session_id] = Loop(self, session_id, store, MODES[INITIAL_MODE])
        return NewSessionResponse(session_id=session_id, modes=_mode_state(INITIAL_MODE))

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        store = SessionStore.open(self.session_dir / session_id, clock=self.clock)
        events = store.session.events
        if len(events) > 0:
            self.clock.resume_after(events[-1].time)
        mode = INITIAL_MODE
        for event in events:
            if event.type == "sandbox/mode":
                mode = MODE_OF_SANDBOX[str(thaw(event.data)["mode"])]
        loop = Loop(self, session_id, store, MODES[mode])
        self.loops[session_id] = loop
        loaded = store.loaded
        closers = loaded.closers if loaded is not None else ()
        await self.client.ext_notification(
            SESSION_LOADED_METHOD,
            {
                "events": len(events),
                "droppedTornTail": loaded is not None and loaded.dropped_torn_tail,
                "closers": [{"seq": c.seq, "type": c.type} for c in closers],
            },
        )
        await self._replay_history(loop)
        return LoadSessionResponse(modes=_mode_state(mode))

    async def _replay_history(self, loop: Loop) -> None:
        """Stream the conversation back to the client, as ACP asks of ``session/load``."""
        for event in loop.session.events:
            data = thaw(event.data)
            if event.type == "user/message" and data["source"]["kind"] == "user":
                for block in data["content"]:
                    if block["type"] == "text":
                        await loop.update(update_user_message_text(block["text"]))
            elif event.type == "assistant/message":
                for block in data["message"]["content"]:
                    if block["type"] == "text":
                        await loop.update(update_agent_message_text(block["text"]))

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        mode = MODES.get(mode_id)
        if mode is None:
            raise RequestError.invalid_params({"modeId": mode_id, "details": "unknown mode"})
        self._loop(session_id).set_mode(mode)
        return SetSessionModeResponse()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        loop = self._loop(session_id)
        text = "".join(block.text for block in prompt if isinstance(block, TextContentBlock))
        turn = loop.session.brackets.last_turn + 1
        prompts = self.scenario.prompts
        if turn > len(prompts) or prompts[turn - 1].text != text:
            expected = prompts[turn - 1].text if turn <= len(prompts) else None
            raise RequestError.invalid_params({"details": f"turn {turn}: the script expects {expected!r}, got {text!r}"})
        await loop.run_turn(prompts[turn - 1])
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m acp_snapshots.agent", description=__doc__.split("\n\n")[0])
    parser.add_argument("--script", required=True, choices=sorted(SCENARIOS), help="the scenario whose model to play")
    parser.add_argument("--session-dir", required=True, type=Path, help="where session logs live (one directory each)")
    args = parser.parse_args(argv)
    agent = ScriptedAgent(SCENARIOS[args.script], args.session_dir)
    try:
        # The SDK types run_agent's argument as the full Agent protocol; it dispatches by attribute.
        asyncio.run(acp.run_agent(cast(Agent, agent)))
    finally:
        agent.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
