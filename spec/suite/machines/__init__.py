"""The conformance state machines, one per capability group of ``sessionlog-driver/1``.

Each machine holds the oracle (the model as an in-process driver) and the port under test, builds
realistic sessions through :class:`~sessionlog_spec.suite.agent.builder.SessionBuilder`, and after every step requires
the port to agree with the model.  :data:`MACHINES` maps each group to its machine class.
"""

from __future__ import annotations

from sessionlog_spec.suite.groups import ACROSS, SUITE_GROUPS
from sessionlog_spec.suite.machines.base import ConformanceMachine, Disagreement, MachineContext
from sessionlog_spec.suite.machines.fuzz import FuzzMachine
from sessionlog_spec.suite.machines.header import HeaderMachine
from sessionlog_spec.suite.machines.jsonl import JsonlMachine
from sessionlog_spec.suite.machines.legacy import LegacyMachine
from sessionlog_spec.suite.machines.pure import CompactionMachine, RepairMachine, SurfaceMachine
from sessionlog_spec.suite.machines.read import ReadMachine
from sessionlog_spec.suite.machines.session import SessionMachine
from sessionlog_spec.suite.machines.storage import StorageMachine

MACHINES: dict[str, type[ConformanceMachine]] = {
    "session": SessionMachine,
    "surface": SurfaceMachine,
    "header": HeaderMachine,
    "repair": RepairMachine,
    "jsonl": JsonlMachine,
    "read": ReadMachine,
    "legacy": LegacyMachine,
    "compaction": CompactionMachine,
    "storage": StorageMachine,
    "fuzz": FuzzMachine,
}
assert tuple(MACHINES) == SUITE_GROUPS

REQUIRES: dict[str, tuple[str, ...]] = {"jsonl": ("session",)}
"""Groups that can only run when the port also declares others."""

__all__ = ["ACROSS", "MACHINES", "REQUIRES", "SUITE_GROUPS", "ConformanceMachine", "Disagreement", "MachineContext"]
