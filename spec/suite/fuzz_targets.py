"""The conformance machines as plain Hypothesis tests, for a coverage-guided fuzzer to run as long as it is left to.

The pytest plugin (``pytest --sessionlog-driver CMD``) makes each group one test item of its own,
which runs the group's machine once with the profile's budget: no Hypothesis test a fuzzer can call
again and again.  This module gives one: imported with ``$SESSIONLOG_DRIVER`` (a driver command) or
``$SESSIONLOG_PORT`` (``python``, ``model`` or a command) set, it defines ``Test<Group>``, a
``unittest`` test case per group the port can run, each the group's state machine against one port
that the module starts (one per process that imports it), searching like the profile
``$SESSIONLOG_PROFILE`` (``ci`` by default) and keeping what it finds in the example database of
``$SESSIONLOG_DATABASE`` (a directory or a ``redis://`` URL; the suite's default directory without it)::

    SESSIONLOG_PORT=python hypothesis fuzz -n 2 -- --pyargs sessionlog_spec.suite.fuzz_targets

HypoFuzz (the ``[fuzz]`` extra) runs them for as long as it is left to; ``pytest --pyargs
sessionlog_spec.suite.fuzz_targets`` runs each once.  A failure a fuzzer keeps in the database is
tried first by the next ``check`` that uses the same database and group (``docs/nightly.md``).
"""

from __future__ import annotations

import os
import unittest

from hypothesis import settings

from sessionlog_spec.suite.commands import open_port
from sessionlog_spec.suite.coverage import GroupCoverage
from sessionlog_spec.suite.machines import MACHINES, ConformanceMachine, MachineContext
from sessionlog_spec.suite.profiles import PROFILES, database_for, hypothesis_settings, keep_hypothesis_files_in_the_cache
from sessionlog_spec.suite.run import unsupported_reason

DRIVER_ENV, PORT_ENV, PROFILE_ENV = "SESSIONLOG_DRIVER", "SESSIONLOG_PORT", "SESSIONLOG_PROFILE"
FUZZ_PROFILE = "sessionlog-fuzz"
"""The Hypothesis settings profile this module loads: the defaults, with the suite's example database."""


def group_test_cases(driver: str | None, port_name: str | None, profile: str = "ci") -> dict[str, type[unittest.TestCase]]:
    """``Test<Group>`` for every group the port ``driver`` (or ``port_name``) can run, all on one started port."""
    keep_hypothesis_files_in_the_cache()
    port = open_port(driver, port_name, timeout=5.0)
    database = database_for(None)
    # HypoFuzz fuzzes only the tests whose database is the default one, and keeps its corpus and
    # failures there: the suite's database becomes the default of the process that imports this module.
    settings.register_profile(FUZZ_PROFILE, database=database)
    settings.load_profile(FUZZ_PROFILE)
    group_settings = hypothesis_settings(PROFILES[profile], database)
    cases: dict[str, type[unittest.TestCase]] = {}
    for group, machine in MACHINES.items():
        if unsupported_reason(group, port.hello.capabilities) is None:
            context = MachineContext(group, port, frozenset(port.hello.capabilities), coverage=GroupCoverage(group))
            case = _on_port(machine, context).TestCase
            case.settings = group_settings
            cases[f"Test{group.capitalize()}"] = case
    return cases


def _on_port(machine: type[ConformanceMachine], context: MachineContext) -> type[ConformanceMachine]:
    """``machine`` with ``context`` bound, so Hypothesis can start it without arguments (and key its examples by group)."""

    def start(self: ConformanceMachine) -> None:
        machine.__init__(self, context)

    bound = type(f"{machine.__name__}On{context.group.capitalize()}", (machine,), {"__init__": start})
    bound._hypothesis_internal_add_digest = f"sessionlog-fuzz:{context.group}".encode()  # type: ignore[attr-defined]
    return bound


if os.environ.get(DRIVER_ENV) or os.environ.get(PORT_ENV):
    globals().update(
        group_test_cases(os.environ.get(DRIVER_ENV) or None, os.environ.get(PORT_ENV) or None, os.environ.get(PROFILE_ENV, "ci"))
    )
