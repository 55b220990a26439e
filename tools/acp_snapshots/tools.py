"""The scripted agent's tools, its session modes, and the request envelope each mode assembles.

Each ACP session mode has a complete system prompt and a tool set of its own.  Switching mode
changes both, so the next request header differs from the latest snapshot and the header writer
records a new full snapshot (reason ``change``), never a delta.  Each mode also stands for one of
the released sandbox policies, which is what the log records of a switch (``sandbox/mode``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

CONFIG: dict[str, Any] = {
    "provider": "scripted",
    "model": "scripted-coder-1",
    "reasoningEffort": "medium",
    "maxTokens": 8192,
}
"""The pinned provider configuration; ``maxTokens`` is the adapter's default (see ``ADAPTER_DEFAULTS``)."""
ADAPTER_DEFAULTS: dict[str, Any] = {"maxTokens": True}


def _object_schema(properties: Mapping[str, str], required: tuple[str, ...]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": "string", "description": text} for name, text in properties.items()},
        "required": list(required),
        "additionalProperties": False,
    }


TOOL_SPECS: dict[str, dict[str, Any]] = {
    "list_files": {
        "name": "list_files",
        "description": "List every file in the workspace, one path per line.",
        "parameters": _object_schema({}, ()),
    },
    "read_file": {
        "name": "read_file",
        "description": "Read a UTF-8 text file from the workspace.",
        "parameters": _object_schema({"path": "Workspace-relative path of the file."}, ("path",)),
    },
    "write_file": {
        "name": "write_file",
        "description": "Create or overwrite a UTF-8 text file in the workspace.",
        "parameters": _object_schema(
            {"path": "Workspace-relative path of the file.", "content": "The complete new content."}, ("path", "content")
        ),
    },
    "run_shell": {
        "name": "run_shell",
        "description": "Run a shell command in the workspace with the user's permissions and return its output.",
        "parameters": _object_schema({"command": "The command line to run."}, ("command",)),
    },
    "sandbox_exec": {
        "name": "sandbox_exec",
        "description": (
            "Run a command inside the isolated sandbox: a read-only copy of the workspace, no network, "
            "a 60-second limit.  Returns its output."
        ),
        "parameters": _object_schema({"command": "The command line to run in the sandbox."}, ("command",)),
    },
}


@dataclass(frozen=True, slots=True)
class Mode:
    """An ACP session mode: its id, its label, and the request envelope it assembles."""

    id: str
    name: str
    description: str
    system: str
    tools: tuple[str, ...]
    sandbox: str
    """The released sandbox policy of the mode: the ``mode`` a ``sandbox/mode`` event records."""


DEFAULT_SYSTEM = """You are a careful coding agent working in the user's workspace.

Work in small, verifiable steps:
- Read the relevant files before you change them.
- After a change, run the tests with run_shell and report what they say.
- Never claim a command succeeded unless its output shows it.

Tools: list_files, read_file, write_file and run_shell act directly on the workspace with the
user's permissions.  Ask before running anything destructive or irreversible."""

SANDBOX_SYSTEM = """You are a careful coding agent in SANDBOX MODE.

The workspace is mounted read-only.  You cannot write files and you cannot run commands on the
user's machine.  You may:
- list and read files with list_files and read_file;
- run commands with sandbox_exec, inside an isolated copy of the workspace with no network access
  and a 60-second limit.

Nothing you do in the sandbox changes the user's workspace.  When a change is needed, describe it
precisely and tell the user to leave sandbox mode to apply it."""

MODES: dict[str, Mode] = {
    "default": Mode(
        "default",
        "Default",
        "Full access to the workspace: read, write and run commands.",
        DEFAULT_SYSTEM,
        ("list_files", "read_file", "write_file", "run_shell"),
        "workspace-write",
    ),
    "sandbox": Mode(
        "sandbox",
        "Sandbox",
        "Read-only workspace; commands run in an isolated sandbox.",
        SANDBOX_SYSTEM,
        ("list_files", "read_file", "sandbox_exec"),
        "read-only",
    ),
}
INITIAL_MODE = "default"
MODE_OF_SANDBOX: dict[str, str] = {mode.sandbox: mode.id for mode in MODES.values()}
"""The ACP mode id of each sandbox policy a ``sandbox/mode`` event can record: a loaded session
resumes in the mode of its latest switch."""
assert len(MODE_OF_SANDBOX) == len(MODES), "each mode has a sandbox policy of its own"


def assemble_header(mode: Mode) -> dict[str, Any]:
    """The complete request envelope (everything but the messages) a request in ``mode`` carries."""
    return {
        "config": dict(CONFIG),
        "adapterDefaults": dict(ADAPTER_DEFAULTS),
        "system": mode.system,
        "tools": [json.loads(json.dumps(TOOL_SPECS[name])) for name in mode.tools],
    }


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a tool returned."""

    text: str
    is_error: bool = False


class Workspace:
    """The virtual workspace the tools act on: files in memory, shell output from the scenario's table."""

    def __init__(self, files: Mapping[str, str], commands: Mapping[str, str]) -> None:
        self.files = dict(files)
        self.commands = dict(commands)

    def run(self, mode: Mode, name: str, arguments: Mapping[str, Any]) -> Outcome:
        """Run tool ``name``; a tool outside the mode's tool set is refused."""
        if name not in mode.tools:
            return Outcome(f"Tool {name!r} is not available in {mode.name.lower()} mode.", is_error=True)
        if name == "list_files":
            return Outcome("\n".join(sorted(self.files)))
        path = str(arguments.get("path", ""))
        if name == "read_file":
            if path not in self.files:
                return Outcome(f"No such file: {path}", is_error=True)
            return Outcome(self.files[path])
        if name == "write_file":
            content = str(arguments.get("content", ""))
            self.files[path] = content
            return Outcome(f"Wrote {len(content.encode())} bytes to {path}.")
        command = str(arguments.get("command", ""))
        if command not in self.commands:
            return Outcome(f"{command}: command not found", is_error=True)
        return Outcome(self.commands[command])
