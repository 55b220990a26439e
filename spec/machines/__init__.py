"""The conformance state machines, one per capability group of ``sessionlog-driver/1``.

Each machine holds the oracle (the model as an in-process driver) and the port under test, builds
realistic sessions through :class:`~spec.builders.SessionBuilder`, and after every step requires
the port to agree with the model.  :data:`MACHINES` maps each group to its machine class.
"""

from __future__ import annotations

from spec.machines.base import ConformanceMachine, Disagreement, MachineContext
from spec.machines.header import HeaderMachine
from spec.machines.jsonl import JsonlMachine
from spec.machines.legacy import LegacyMachine
from spec.machines.pure import CompactionMachine, RepairMachine, SurfaceMachine
from spec.machines.session import SessionMachine
from spec.port import GROUPS

MACHINES: dict[str, type[ConformanceMachine]] = {
    "session": SessionMachine,
    "surface": SurfaceMachine,
    "header": HeaderMachine,
    "repair": RepairMachine,
    "jsonl": JsonlMachine,
    "legacy": LegacyMachine,
    "compaction": CompactionMachine,
}
assert tuple(MACHINES) == GROUPS

REQUIRES: dict[str, tuple[str, ...]] = {"jsonl": ("session",)}
"""Groups that can only run when the port also declares others."""

__all__ = ["MACHINES", "REQUIRES", "ConformanceMachine", "Disagreement", "MachineContext"]
