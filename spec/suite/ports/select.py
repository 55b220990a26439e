"""An implementation under test, as typed capability groups over a :class:`~sessionlog_spec.protocol.messages.Port`.

Each group of ``sessionlog-driver/1`` is a :class:`~typing.Protocol` whose methods mirror the group's
ops and return :class:`~sessionlog_spec.protocol.messages.Ok` or :class:`~sessionlog_spec.protocol.messages.Refused`.  :class:`GroupClient`
implements all of them over ``Port.call``, so a test written against a group works the same for
the model in-process, a Python port in-process and any driver program.  :func:`port_for` turns the
``--port`` argument of the CLI into a :class:`~sessionlog_spec.protocol.messages.Port`.
"""

from __future__ import annotations

import importlib
import shlex
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypedDict

from sessionlog_spec.protocol.messages import Hello, InProcessPort, Port, Reply
from sessionlog_spec.protocol.model_driver import ModelDriver
from sessionlog_spec.suite.ports.subprocess import SubprocessPort

Events = Sequence[Any]
"""A log as sent to a port: any JSON values, valid events or not."""


class InstanceFacts(TypedDict):
    """The loop-instance facts of ``header_decision``."""

    first_request: bool
    begins_series: bool
    replaced_since_last_request: bool


class StoredLog(TypedDict):
    """A whole stored log, as ``upgrade_v0`` takes and returns it."""

    header: Mapping[str, Any]
    events: Events


class SessionGroup(Protocol):
    """``session``: a live session the suite builds and observes."""

    def reset(self, header: Mapping[str, Any] | None = None) -> Reply:
        """Start an empty session; ``header`` is the header line ``save`` writes."""
        ...

    def seed(self, events: Events) -> Reply:
        """Replace the session with one built from ``events`` and closed by an end-of-seed marker."""
        ...

    def append(self, event: Any) -> Reply:
        """Validate one event and commit it."""
        ...

    def state(self) -> Reply:
        """The observable state of the session."""
        ...


class SurfaceGroup(Protocol):
    """``surface``: the surface rules alone."""

    def fold_surface(self, events: Events) -> Reply:
        """Replay a whole log through the surface rules."""
        ...


class HeaderGroup(Protocol):
    """``header``: request-header reconstruction and the writer decision rule."""

    def fold_header(self, events: Events) -> Reply:
        """The request header in force after ``events``."""
        ...

    def header_decision(self, events: Events, header: Any, instance: InstanceFacts) -> Reply:
        """Which ``request/header`` must be appended before the next request."""
        ...


class RepairGroup(Protocol):
    """``repair``: closing a crash-orphaned turn."""

    def repair(self, events: Events) -> Reply:
        """The closer events for a valid log."""
        ...


class JsonlGroup(Protocol):
    """``jsonl``: the stored form of the session."""

    def save(self) -> Reply:
        """The current session as JSONL."""
        ...

    def load(self, jsonl: str) -> Reply:
        """Replace the session with a stored log."""
        ...


class LegacyGroup(Protocol):
    """``legacy``: the v0-to-v1 edge."""

    def upgrade_v0(self, log: StoredLog) -> Reply:
        """A stored log upgraded to v1 (or unchanged when it already is)."""
        ...


class CompactionGroup(Protocol):
    """``compaction``: tool-pairing balance at every cut of the surface."""

    def cuts(self, events: Events) -> Reply:
        """One balance flag per cut of the surface of a valid log."""
        ...


class GroupClient:
    """Every capability group over one :class:`~sessionlog_spec.protocol.messages.Port`: each method is one request."""

    def __init__(self, port: Port) -> None:
        self.port = port

    @property
    def hello(self) -> Hello:
        """What the port said about itself."""
        return self.port.hello

    def reset(self, header: Mapping[str, Any] | None = None) -> Reply:
        """Start an empty session; ``header`` is the header line ``save`` writes."""
        if header is None:
            return self.port.call("reset")
        return self.port.call("reset", header=dict(header))

    def seed(self, events: Events) -> Reply:
        """Replace the session with one built from ``events`` and closed by an end-of-seed marker."""
        return self.port.call("seed", events=list(events))

    def append(self, event: Any) -> Reply:
        """Validate one event and commit it."""
        return self.port.call("append", event=event)

    def state(self) -> Reply:
        """The observable state of the session."""
        return self.port.call("state")

    def fold_surface(self, events: Events) -> Reply:
        """Replay a whole log through the surface rules."""
        return self.port.call("fold_surface", events=list(events))

    def fold_header(self, events: Events) -> Reply:
        """The request header in force after ``events``."""
        return self.port.call("fold_header", events=list(events))

    def header_decision(self, events: Events, header: Any, instance: InstanceFacts) -> Reply:
        """Which ``request/header`` must be appended before the next request."""
        return self.port.call("header_decision", events=list(events), header=header, instance=dict(instance))

    def repair(self, events: Events) -> Reply:
        """The closer events for a valid log."""
        return self.port.call("repair", events=list(events))

    def save(self) -> Reply:
        """The current session as JSONL."""
        return self.port.call("save")

    def load(self, jsonl: str) -> Reply:
        """Replace the session with a stored log."""
        return self.port.call("load", jsonl=jsonl)

    def upgrade_v0(self, log: StoredLog) -> Reply:
        """A stored log upgraded to v1 (or unchanged when it already is)."""
        return self.port.call("upgrade_v0", log={"header": dict(log["header"]), "events": list(log["events"])})

    def cuts(self, events: Events) -> Reply:
        """One balance flag per cut of the surface of a valid log."""
        return self.port.call("cuts", events=list(events))

    def close(self) -> None:
        """Say ``bye`` and release the port."""
        self.port.close()


class PortUnavailable(RuntimeError):
    """A ``--port`` spec names a port that cannot be built here."""


PYTHON_DRIVER = ("seqlog.driver", "SeqlogDriver")
"""Where the Python port's in-process driver lives (``ports/python``)."""


def port_for(spec: str, timeout: float = 5.0) -> Port:
    """The port a CLI spec names: ``model``, ``python``, or a driver command line."""
    if spec == "model":
        return InProcessPort(ModelDriver())
    if spec == "python":
        return InProcessPort(python_driver())
    argv = shlex.split(spec)
    if not argv:
        raise PortUnavailable("empty --port: give 'model', 'python' or a driver command")
    return SubprocessPort(argv, timeout=timeout)


def python_driver() -> Any:
    """A fresh in-process driver of the Python port, imported only when asked for."""
    module_name, class_name = PYTHON_DRIVER
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise PortUnavailable(
            f"--port python needs the seqlog package ({error}); install it with `pip install -e ports/python`"
        ) from error
    driver_class = getattr(module, class_name, None)
    if driver_class is None:
        raise PortUnavailable(f"{module_name} has no {class_name}")
    return driver_class()
