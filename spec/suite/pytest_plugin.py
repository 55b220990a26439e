"""The conformance suite as pytest tests, for a port's own CI: ``pytest --sessionlog-driver="CMD"``.

With ``--sessionlog-driver`` (or ``--sessionlog-port model|python``) the plugin adds one test per
capability group, ``sessionlog[<group>]``, each running that group's state machine against one
shared port process.  Undeclared groups are skipped, void groups fail, and a disagreement fails
with the mismatch, the shrunk steps and the path of its counterexample file.

pytest loads this module in every run of every project where the package is installed, so it
imports nothing but pytest until one of its options asks for the suite: without the option it only
registers its options and changes nothing, and a project's own packages (a ``model`` or a ``spec``
of its own) never meet the suite's.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from sessionlog_spec.protocol.messages import Port
    from sessionlog_spec.suite.run import GroupResult

GROUPS = ("session", "surface", "header", "repair", "jsonl", "read", "legacy", "compaction", "storage", "fuzz")
"""The suite's groups, in report order (:data:`sessionlog_spec.suite.groups.SUITE_GROUPS`; a test holds the two equal)."""
PROFILE_NAMES = ("ci", "dev", "nightly")
"""The suite's profiles (a test holds this equal to :data:`sessionlog_spec.suite.profiles.PROFILES`)."""

PORT_KEY = pytest.StashKey["Port | str"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """The plugin's options."""
    group = parser.getgroup("sessionlog", "sessionlog conformance suite")
    group.addoption("--sessionlog-driver", metavar="CMD", help="check this driver program against the model")
    group.addoption("--sessionlog-port", metavar="PORT", help="check 'model' or 'python' in-process instead")
    group.addoption("--sessionlog-profile", choices=PROFILE_NAMES, default="ci", help="search profile (default ci)")
    group.addoption(
        "--sessionlog-any-code",
        action="store_true",
        help="count a refusal with any code as agreeing (by default the model's violation code is required)",
    )
    group.addoption("--sessionlog-strict-codes", action="store_true", help="the default: require the model's violation codes")
    group.addoption("--sessionlog-timeout", type=float, default=5.0, help="seconds per driver request")
    group.addoption("--sessionlog-cases-dir", default="reports/cases", help="where counterexample files go")
    group.addoption("--sessionlog-max-examples", type=int, help="override the profile's examples per group")


def enabled(config: pytest.Config) -> bool:
    """Whether this run asked for the conformance tests."""
    return bool(config.getoption("sessionlog_driver") or config.getoption("sessionlog_port"))


class ConformanceFailure(Exception):
    """A group's machine found a disagreement, or checked nothing."""


class GroupItem(pytest.Item):
    """One capability group's state machine as a test."""

    def __init__(self, *, group: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.group = group

    def runtest(self) -> None:
        from sessionlog_spec.suite.profiles import PROFILES, database_for
        from sessionlog_spec.suite.run import ERROR, FAILED, UNSUPPORTED, VOID, RunOptions, run_group

        config = self.config
        options = RunOptions(
            profile=PROFILES[config.getoption("sessionlog_profile")],
            strict_codes=not config.getoption("sessionlog_any_code"),
            database=database_for(None),
            cases_dir=Path(config.getoption("sessionlog_cases_dir")),
            max_examples=config.getoption("sessionlog_max_examples"),
        )
        port = shared_port(config)
        if isinstance(port, str):
            raise ConformanceFailure(f"{self.group}: cannot start the port: {port}")
        result = run_group(self.group, port, port.hello, options)
        if result.status == UNSUPPORTED:
            pytest.skip(f"{self.group}: {result.detail}")
        if result.status in (FAILED, VOID, ERROR):
            raise ConformanceFailure(describe(result, replay_options(config)))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ConformanceFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"sessionlog conformance: {self.group}"


def describe(result: GroupResult, port_options: str) -> str:
    """A failed group, as pytest shows it, with the command that replays each counterexample."""
    from sessionlog_spec.suite.output.replay import replay_command

    lines = [f"{result.group} {result.status}: {result.detail}"]
    for failure in result.failures:
        lines += [
            "",
            str(failure.disagreement),
            f"invariants: {', '.join(failure.disagreement.invariants) or '-'}",
            f"counterexample: {failure.case_file}",
            f"replay: {replay_command(failure.case_file, port_options)}",
            *failure.steps_shown,
        ]
    return "\n".join(lines)


def replay_options(config: pytest.Config) -> str:
    """The ``check``/``replay`` options that name the port this run checks."""
    from sessionlog_spec.suite.output.replay import port_arguments

    return port_arguments(
        config.getoption("sessionlog_driver"), config.getoption("sessionlog_port"), config.getoption("sessionlog_timeout")
    )


def shared_port(config: pytest.Config) -> Port | str:
    """The port every group's test uses, started on first use; why it cannot start, if it cannot.

    A port that cannot start is tried once: every group then fails with the same one-paragraph
    reason (the driver's stderr tail included), not with a traceback of the suite's internals.
    """
    from sessionlog_spec.suite.commands import PortError, open_port

    if PORT_KEY not in config.stash:
        try:
            config.stash[PORT_KEY] = open_port(
                config.getoption("sessionlog_driver"), config.getoption("sessionlog_port"), config.getoption("sessionlog_timeout")
            )
        except PortError as error:
            config.stash[PORT_KEY] = str(error)
    return config.stash[PORT_KEY]


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Add one test per group when the plugin is asked for."""
    if enabled(config):
        items.extend(GroupItem.from_parent(session, name=f"sessionlog[{group}]", group=group) for group in GROUPS)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Say ``bye`` to the port."""
    port = config.stash.get(PORT_KEY, None)
    if port is not None and not isinstance(port, str):
        port.close()
