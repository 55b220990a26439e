"""The recorded scenarios, as data.

A scenario is what the client does (prompts, mode switches, restarts of the agent process) and,
for every prompt, what the scripted model answers to each request of that turn.  The n-th
:class:`Prompt` of a scenario is turn n of its session, whichever agent instance handles it.

Within a turn the agent sends one request per step.  A reply with tool calls, or an empty reply,
is followed by another step; the first reply with content and no tool calls ends the turn, so it
must be the turn's last reply (:func:`check_scenario`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from acp_snapshots.tools import MODES


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call the scripted model asks for."""

    id: str
    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Reply:
    """The scripted model's answer to one request."""

    text: str = ""
    reasoning: str = ""
    calls: tuple[Call, ...] = ()
    begins_series: bool = False
    """The request this reply answers begins an explicitly declared message series."""

    @property
    def empty(self) -> bool:
        """The model returned no content at all (the agent asks again in a new step)."""
        return not (self.text or self.reasoning or self.calls)


@dataclass(frozen=True, slots=True)
class Compact:
    """Before the turn's first request, replace every surface node before the prompt with one summary."""

    summary: str


@dataclass(frozen=True, slots=True)
class Rewrite:
    """Before the turn's first request, rewrite the content of the result of ``call_id``."""

    call_id: str
    text: str


@dataclass(frozen=True, slots=True)
class Prompt:
    """A ``session/prompt`` and the scripted model's replies to the requests of that turn."""

    text: str
    replies: tuple[Reply, ...]
    compact: Compact | None = None
    rewrite: Rewrite | None = None
    kill_during: str | None = None
    """The client kills the agent process (SIGKILL) while the tool call with this id runs."""


@dataclass(frozen=True, slots=True)
class SetMode:
    """A ``session/set_mode`` between turns."""

    mode: str


@dataclass(frozen=True, slots=True)
class Restart:
    """End the agent process (if it still runs) and start a new one that loads the session."""


Action = Prompt | SetMode | Restart


@dataclass(frozen=True, slots=True)
class Scenario:
    """One recorded session."""

    name: str
    description: str
    actions: tuple[Action, ...]
    files: Mapping[str, str] = field(default_factory=dict)
    """The virtual workspace the file tools work on."""
    commands: Mapping[str, str] = field(default_factory=dict)
    """Canned output of the shell commands the scripted model runs."""
    hanging: frozenset[str] = frozenset()
    """Commands that never finish (the process is killed while they run)."""

    @property
    def prompts(self) -> tuple[Prompt, ...]:
        """The prompts in order: the n-th is turn n."""
        return tuple(a for a in self.actions if isinstance(a, Prompt))

    @property
    def session_id(self) -> str:
        """The ACP session id and session-log id the agent assigns (deterministic)."""
        return f"acp-{self.name}"


class ScenarioError(ValueError):
    """A scenario the agent could not play as written."""


def check_scenario(scenario: Scenario) -> None:
    """Refuse a scenario whose turns would not end where the script ends."""
    seen_calls: set[str] = set()
    actions = scenario.actions
    for index, action in enumerate(actions):
        if isinstance(action, SetMode) and action.mode not in MODES:
            raise ScenarioError(f"{scenario.name}: unknown mode {action.mode!r}")
        if not isinstance(action, Prompt):
            continue
        where = f"{scenario.name}: prompt {action.text!r}"
        if not action.replies:
            raise ScenarioError(f"{where} has no replies")
        for position, reply in enumerate(action.replies):
            last = position == len(action.replies) - 1
            ends_turn = not (reply.calls or reply.empty)
            if ends_turn != last:
                raise ScenarioError(f"{where}: only the last reply may end the turn (reply {position + 1})")
            for call in reply.calls:
                if call.id in seen_calls:
                    raise ScenarioError(f"{where}: duplicate call id {call.id!r}")
                seen_calls.add(call.id)
        if action.rewrite is not None and action.rewrite.call_id not in seen_calls:
            raise ScenarioError(f"{where}: rewrites the result of {action.rewrite.call_id!r} before it exists")
        if action.kill_during is not None:
            if action.kill_during not in {c.id for r in action.replies for c in r.calls}:
                raise ScenarioError(f"{where}: kills during {action.kill_during!r}, which this turn never calls")
            if index + 1 >= len(actions) or not isinstance(actions[index + 1], Restart):
                raise ScenarioError(f"{where}: a prompt that kills the agent must be followed by a restart")


WORKSPACE = {
    "README.md": "# calc\n\nA tiny calculator package.\n",
    "calc/ops.py": "def add(a, b):\n    return a + b\n\n\ndef div(a, b):\n    return a / b\n",
    "tests/test_ops.py": (
        "from calc.ops import add, div\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_div_by_zero():\n    assert div(1, 0) is None\n"
    ),
}

FIXED_OPS = "def add(a, b):\n    return a + b\n\n\ndef div(a, b):\n    if b == 0:\n        return None\n    return a / b\n"

PYTEST_FAIL = (
    "F.\n=================================== FAILURES ===================================\n"
    "______________________________ test_div_by_zero _______________________________\n"
    "    def test_div_by_zero():\n>       assert div(1, 0) is None\n"
    "calc/ops.py:6: in div\n    return a / b\nE   ZeroDivisionError: division by zero\n"
    "1 failed, 1 passed in 0.02s\n"
)

BUILD_LOG = "\n".join(
    [f"[build] compiling module {i:02d}/40 ... ok" for i in range(1, 41)] + ["[build] 40 modules, 0 warnings, 0 errors"]
)


PLAIN = Scenario(
    name="plain-multi-turn",
    description="Three turns of plain conversation: text and reasoning, and one empty reply the agent retries.",
    actions=(
        Prompt(
            "What does this project do?",
            (
                Reply(
                    text="It is a tiny calculator package with an add and a div function.",
                    reasoning="The user wants an overview.",
                ),
            ),
        ),
        Prompt(
            "Which function is risky?",
            (
                Reply(),
                Reply(
                    text="div: it divides without checking for a zero divisor.",
                    reasoning="The first answer came back empty; answer again.",
                ),
            ),
        ),
        Prompt("Thanks, that is all.", (Reply(text="You're welcome."),)),
    ),
    files=WORKSPACE,
)

TOOLS = Scenario(
    name="tool-calls",
    description="Tool calls and results: two calls in one step, a fix, a test run, and a failing tool call.",
    actions=(
        Prompt(
            "The division test fails. Please fix it.",
            (
                Reply(
                    reasoning="Look at the code and the test first.",
                    calls=(
                        Call("call-read-ops", "read_file", {"path": "calc/ops.py"}),
                        Call("call-read-test", "read_file", {"path": "tests/test_ops.py"}),
                    ),
                ),
                Reply(
                    text="div must return None for a zero divisor.",
                    calls=(Call("call-write-ops", "write_file", {"path": "calc/ops.py", "content": FIXED_OPS}),),
                ),
                Reply(calls=(Call("call-pytest", "run_shell", {"command": "pytest -q"}),)),
                Reply(text="Fixed: div returns None when the divisor is zero, and both tests pass."),
            ),
        ),
        Prompt(
            "Is there a changelog?",
            (
                Reply(calls=(Call("call-read-changelog", "read_file", {"path": "CHANGELOG.md"}),)),
                Reply(text="No, the project has no CHANGELOG.md."),
            ),
        ),
    ),
    files=WORKSPACE,
    commands={"pytest -q": "..\n2 passed in 0.01s\n"},
)

COMPACTION = Scenario(
    name="compaction",
    description=(
        "Two turns of tool work, then a compaction at the start of turn 3, owned by that turn: compaction/start, "
        "a compaction/summary pricing the shadowed span, the checkpoint user/message (from the compact plugin) "
        "replacing every earlier surface node (a legal range) and citing the shadowed seqs, compaction/end."
    ),
    actions=(
        Prompt(
            "Run the tests.",
            (
                Reply(calls=(Call("call-pytest-1", "run_shell", {"command": "pytest -q"}),)),
                Reply(text="One test fails: test_div_by_zero raises ZeroDivisionError."),
            ),
        ),
        Prompt(
            "Fix it.",
            (
                Reply(calls=(Call("call-write", "write_file", {"path": "calc/ops.py", "content": FIXED_OPS}),)),
                Reply(text="div now returns None for a zero divisor."),
            ),
        ),
        Prompt(
            "Now add a README note about the new behaviour.",
            (
                Reply(calls=(Call("call-read-readme", "read_file", {"path": "README.md"}),)),
                Reply(
                    calls=(
                        Call(
                            "call-write-readme",
                            "write_file",
                            {"path": "README.md", "content": WORKSPACE["README.md"] + "\n`div(a, 0)` returns None.\n"},
                        ),
                    )
                ),
                Reply(text="README.md now documents that div(a, 0) returns None."),
            ),
            compact=Compact(
                "Earlier in this session: the tests were run and test_div_by_zero failed with "
                "ZeroDivisionError; calc/ops.py was then changed so that div returns None for a zero divisor."
            ),
        ),
    ),
    files=WORKSPACE,
    commands={"pytest -q": PYTEST_FAIL},
)

REWRITE = Scenario(
    name="tool-result-rewrite",
    description=(
        "A long build log as a tool result, then in the next turn a content-only rewrite of that one "
        "tool/result before the next request: a compaction/prune pricing the node, then the replace over "
        "that single node, citing it."
    ),
    actions=(
        Prompt(
            "Build the project.",
            (
                Reply(calls=(Call("call-build", "run_shell", {"command": "make build"}),)),
                Reply(text="The build succeeded: 40 modules, no warnings."),
            ),
        ),
        Prompt(
            "Did the build print any warnings?",
            (Reply(text="No. The (now elided) build log ended with 0 warnings and 0 errors."),),
            rewrite=Rewrite("call-build", "[build log elided: 41 lines; last line: 40 modules, 0 warnings, 0 errors]"),
        ),
    ),
    files=WORKSPACE,
    commands={"make build": BUILD_LOG},
)

CRASH = Scenario(
    name="crash-resume",
    description=(
        "The agent process is killed (SIGKILL) while a deploy tool call runs.  A new agent instance loads "
        "the session: crash repair appends an error tool/result, step/end and an interrupted turn/end; "
        "the first request of the new instance writes a resume header."
    ),
    actions=(
        Prompt(
            "Deploy the current version.",
            (
                Reply(
                    reasoning="Check the version, then deploy.",
                    calls=(Call("call-read-readme", "read_file", {"path": "README.md"}),),
                ),
                Reply(calls=(Call("call-deploy", "run_shell", {"command": "./deploy.sh --prod"}),)),
                Reply(text="Deployed."),
            ),
            kill_during="call-deploy",
        ),
        Restart(),
        Prompt(
            "You were restarted in the middle of the deploy. Where are we?",
            (
                Reply(
                    reasoning="The deploy result is unknown; the deploy is not idempotent, so check its status first.",
                    calls=(Call("call-status", "run_shell", {"command": "./deploy.sh --status"}),),
                ),
                Reply(text="The deploy did not complete: production still runs the previous version. Shall I retry it?"),
            ),
        ),
    ),
    files=WORKSPACE,
    commands={"./deploy.sh --status": "production: v0.9.3 (previous release); no deploy in progress\n"},
    hanging=frozenset({"./deploy.sh --prod"}),
)

SERIES = Scenario(
    name="message-series",
    description=(
        "Declared message series: a request that begins a series with an unchanged header writes a "
        "series snapshot; after a mode switch, one that begins a series writes change with startsSeries."
    ),
    actions=(
        Prompt(
            "List the files.",
            (
                Reply(calls=(Call("call-list", "list_files"),)),
                Reply(text="Three files: README.md, calc/ops.py, tests/test_ops.py."),
            ),
        ),
        Prompt(
            "Review each file in turn, starting a fresh review series.",
            (
                Reply(
                    text="Starting the review series with calc/ops.py.",
                    calls=(Call("call-review-ops", "read_file", {"path": "calc/ops.py"}),),
                    begins_series=True,
                ),
                Reply(calls=(Call("call-review-test", "read_file", {"path": "tests/test_ops.py"}),)),
                Reply(text="Review: div lacks a zero check, and test_div_by_zero expects None."),
            ),
        ),
        SetMode("sandbox"),
        Prompt(
            "Now re-run the review in the sandbox as a new series.",
            (
                Reply(calls=(Call("call-sandbox-pytest", "sandbox_exec", {"command": "pytest -q"}),), begins_series=True),
                Reply(text="In the sandbox the division test still fails, as the review predicted."),
            ),
        ),
    ),
    files=WORKSPACE,
    commands={"pytest -q": PYTEST_FAIL},
)

SANDBOX = Scenario(
    name="sandbox-mode-switch",
    description=(
        "An ACP session-mode switch to sandbox mid-session (logged as sandbox/mode read-only) changes the "
        "tool set and the system prompt: "
        "the next request writes a full pinned request/header (reason change) with the whole new system "
        "prompt and tools; a later turn in the same mode inherits it; switching back writes change again."
    ),
    actions=(
        Prompt(
            "Run the tests.",
            (
                Reply(calls=(Call("call-pytest", "run_shell", {"command": "pytest -q"}),)),
                Reply(text="One of two tests fails (test_div_by_zero)."),
            ),
        ),
        SetMode("sandbox"),
        Prompt(
            "Try the fix in the sandbox.",
            (
                Reply(
                    reasoning="write_file and run_shell are gone in sandbox mode; only sandbox_exec can run code.",
                    calls=(Call("call-shell-refused", "run_shell", {"command": "pytest -q"}),),
                ),
                Reply(calls=(Call("call-sandbox", "sandbox_exec", {"command": "pytest -q"}),)),
                Reply(text="In the sandbox the failure reproduces; the fix needs write access outside the sandbox."),
            ),
        ),
        Prompt("Anything else?", (Reply(text="No, nothing else in sandbox mode."),)),
        SetMode("default"),
        Prompt(
            "Apply the fix now.",
            (
                Reply(calls=(Call("call-write", "write_file", {"path": "calc/ops.py", "content": FIXED_OPS}),)),
                Reply(text="Applied."),
            ),
        ),
    ),
    files=WORKSPACE,
    commands={"pytest -q": PYTEST_FAIL},
)

SCENARIOS: dict[str, Scenario] = {s.name: s for s in (PLAIN, TOOLS, COMPACTION, REWRITE, CRASH, SERIES, SANDBOX)}
"""Every recorded scenario, by name (the fixture directory name)."""

for _scenario in SCENARIOS.values():
    check_scenario(_scenario)
