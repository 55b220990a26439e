"""The recording ACP client: plays a scenario against agent processes and keeps every message.

The client spawns ``python -m acp_snapshots.agent`` with the SDK's ``spawn_agent_process`` and observes
the connection, so the transcript holds every JSON-RPC message in both directions, in the order
the client sent or received it, including the agent's ``_sessionlog/model_request`` notifications.
A :class:`~acp_snapshots.scenarios.Restart` ends the agent process and starts a new one that loads the
session; a prompt with ``kill_during`` SIGKILLs the agent while that tool call runs.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import acp
from acp import Client, RequestError
from acp.connection import StreamDirection, StreamEvent
from acp.core import ClientSideConnection
from acp.helpers import text_block
from acp.schema import ClientCapabilities, Implementation, RequestPermissionResponse, ToolCallProgress

from acp_snapshots import REPO_ROOT
from acp_snapshots.scenarios import Action, Prompt, Restart, Scenario, SetMode

CLIENT_INFO = Implementation(name="sessionlog-harness-client", title="Recording ACP client", version="1")
SCENARIO_TIMEOUT_S = 180.0
"""A safety net only: a scenario takes a few seconds, most of it the agent importing the ACP SDK."""
DEFAULT_PARALLEL = max(1, min(4, os.cpu_count() or 1))
"""Scenarios recorded at once: agent start-up is CPU-bound (importing the SDK's models)."""
SHUTDOWN_TIMEOUT_S = 30.0
"""How long an agent may take to exit after its stdin closes before the SDK terminates it."""


class HarnessError(RuntimeError):
    """A scenario did not run as scripted."""


@dataclass(frozen=True, slots=True)
class Recording:
    """What one scenario run produced."""

    transcript: list[dict[str, Any]]
    """One entry per JSON-RPC message (``{"conn", "to", "msg"}``) or harness note (``{"conn", "note"}``)."""
    events: bytes
    """The session's stored JSONL log, byte for byte."""


class Transcript:
    """Every message of every connection, in order."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []
        self.connection = 0

    def observe(self, event: StreamEvent) -> None:
        to = "agent" if event.direction == StreamDirection.OUTGOING else "client"
        self.entries.append({"conn": self.connection, "to": to, "msg": event.message})

    def note(self, text: str) -> None:
        self.entries.append({"conn": self.connection, "note": text})


class RecordingClient:
    """The client side: accepts updates, and kills the agent when the scenario says so.

    The SDK dispatches each agent-to-client method to the attribute of the same name and answers
    ``method_not_found`` for any it lacks (file system and terminal methods here).
    """

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self.process: asyncio.subprocess.Process | None = None
        self.kill_during: str | None = None
        self.killed = False

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if (
            isinstance(update, ToolCallProgress)
            and update.status == "in_progress"
            and update.tool_call_id == self.kill_during
            and self.process is not None
        ):
            self.process.kill()
            self.killed = True
            self.transcript.note(f"client killed the agent process (SIGKILL) while tool call {update.tool_call_id} ran")

    async def request_permission(self, session_id: str, tool_call: Any, options: Any, **kwargs: Any) -> RequestPermissionResponse:
        return RequestPermissionResponse.model_validate({"outcome": {"outcome": "cancelled"}})

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None  # the transcript already holds it

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(f"_{method}")


def _segments(actions: Sequence[Action]) -> list[list[Action]]:
    """The actions each agent instance plays: a :class:`Restart` starts the next instance."""
    segments: list[list[Action]] = [[]]
    for action in actions:
        if isinstance(action, Restart):
            segments.append([])
        else:
            segments[-1].append(action)
    return segments


def workspace_cwd(scenario: Scenario) -> str:
    """The (fictional, fixed) working directory the client opens the session in."""
    return f"/workspace/{scenario.name}"


async def _play(scenario: Scenario, workdir: Path) -> Recording:
    transcript = Transcript()
    client = RecordingClient(transcript)
    session_dir = workdir / "sessions"
    session_id: str | None = None
    env = {"PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    for instance, actions in enumerate(_segments(scenario.actions), start=1):
        transcript.connection = instance
        client.killed = False
        stderr_path = workdir / f"agent-{instance}.stderr"
        with stderr_path.open("wb") as stderr:
            async with acp.spawn_agent_process(
                cast(Client, client),
                sys.executable,
                "-m",
                "acp_snapshots.agent",
                "--script",
                scenario.name,
                "--session-dir",
                str(session_dir),
                env=env,
                cwd=REPO_ROOT,
                transport_kwargs={"stderr": stderr.fileno(), "shutdown_timeout": SHUTDOWN_TIMEOUT_S},
                observers=[transcript.observe],
            ) as (conn, process):
                client.process = process
                try:
                    await conn.initialize(
                        protocol_version=acp.PROTOCOL_VERSION, client_capabilities=ClientCapabilities(), client_info=CLIENT_INFO
                    )
                    if session_id is None:
                        session_id = (await conn.new_session(cwd=workspace_cwd(scenario))).session_id
                    else:
                        await conn.load_session(cwd=workspace_cwd(scenario), session_id=session_id)
                    for action in actions:
                        await _act(conn, client, session_id, action)
                except (ConnectionError, RequestError) as error:
                    failure = f"{scenario.name}: agent instance {instance} failed: {error!r}"
                    raise HarnessError(f"{failure}\n{_tail(stderr_path)}") from error
        if process.returncode != (-9 if client.killed else 0):
            raise HarnessError(f"{scenario.name}: agent instance {instance} exited {process.returncode}\n{_tail(stderr_path)}")
    assert session_id is not None
    return Recording(transcript.entries, (session_dir / session_id / "events.jsonl").read_bytes())


async def _act(conn: ClientSideConnection, client: RecordingClient, session_id: str, action: Action) -> None:
    if isinstance(action, SetMode):
        await conn.set_session_mode(session_id=session_id, mode_id=action.mode)
        return
    assert isinstance(action, Prompt)
    client.kill_during = action.kill_during
    try:
        await conn.prompt(session_id=session_id, prompt=[text_block(action.text)])
    except ConnectionError:
        if not client.killed:
            raise
        return
    if action.kill_during is not None:
        raise HarnessError(f"the turn ended before tool call {action.kill_during} ran; nothing was killed")


def _tail(path: Path, limit: int = 4000) -> str:
    text = path.read_text(errors="replace") if path.exists() else ""
    return f"agent stderr:\n{text[-limit:]}" if text else "agent stderr: (empty)"


def record_scenario(scenario: Scenario, workdir: Path) -> Recording:
    """Run ``scenario`` against fresh agent processes whose sessions live under ``workdir``."""
    return asyncio.run(asyncio.wait_for(_play(scenario, workdir), SCENARIO_TIMEOUT_S))


async def record_many(scenarios: Sequence[Scenario], workdir: Path, parallel: int = DEFAULT_PARALLEL) -> dict[str, Recording]:
    """Run several scenarios concurrently (each in its own directory under ``workdir``).

    Every scenario runs to its end even when another fails (cancelling a task while asyncio is
    still connecting a subprocess's pipes can hang it), and the failures are reported together.
    """
    gate = asyncio.Semaphore(parallel)

    async def one(scenario: Scenario) -> Recording:
        async with gate:
            own = workdir / scenario.name
            own.mkdir(parents=True, exist_ok=True)
            return await asyncio.wait_for(_play(scenario, own), SCENARIO_TIMEOUT_S)

    outcomes = await asyncio.gather(*(one(s) for s in scenarios), return_exceptions=True)
    failures = [
        str(o) if isinstance(o, HarnessError) else f"{s.name}: {o!r}"
        for s, o in zip(scenarios, outcomes, strict=True)
        if isinstance(o, BaseException)
    ]
    if failures:
        raise HarnessError("\n".join(failures))
    return {s.name: o for s, o in zip(scenarios, outcomes, strict=True) if isinstance(o, Recording)}
