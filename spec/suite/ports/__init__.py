"""The port under test: a driver program over a pipe, or a request handler in this process.

:func:`port_for` turns the command line's ``--port`` into a :class:`~sessionlog_spec.protocol.messages.Port`.
"""

from __future__ import annotations

import shlex

from sessionlog_spec.protocol.messages import Port
from sessionlog_spec.protocol.model_driver import ModelDriver
from sessionlog_spec.suite.ports.inprocess import InProcessPort, PortUnavailable, python_driver
from sessionlog_spec.suite.ports.subprocess import SubprocessPort


def port_for(spec: str, timeout: float = 5.0) -> Port:
    """The port a CLI spec names: ``model``, ``python``, or a driver command line."""
    if spec == "model":
        return InProcessPort(ModelDriver())
    if spec == "python":
        return InProcessPort(python_driver())
    try:
        argv = shlex.split(spec)
    except ValueError as error:
        raise PortUnavailable(f"cannot read the driver command {spec!r}: {error}") from error
    if not argv:
        raise PortUnavailable("empty port: give 'model', 'python' or a driver command")
    return SubprocessPort(argv, timeout=timeout)


__all__ = ["InProcessPort", "PortUnavailable", "SubprocessPort", "port_for"]
