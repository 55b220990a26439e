"""A port whose request handler runs in this process: the model, or a Python port such as seqlog."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from sessionlog_spec.protocol.messages import Handler, Hello, Ok, PortFault, Reply, hello_from, reply_from


@dataclass
class InProcessPort:
    """A port whose driver handler runs in this process: no serialisation beyond the handler's own."""

    handler: Handler
    _next_id: int = 0
    _hello: Hello | None = field(default=None, init=False)

    @property
    def hello(self) -> Hello:
        if self._hello is None:
            reply = self.call("hello")
            assert isinstance(reply, Ok), reply
            self._hello = hello_from(reply.result)
        return self._hello

    def call(self, op: str, **args: Any) -> Reply:
        self._next_id += 1
        message = self.handler({"id": self._next_id, "op": op, **args})
        if message.get("id") != self._next_id:
            raise PortFault("wrong-id", f"expected id {self._next_id}, got {message.get('id')!r}")
        return reply_from(message)

    def close(self) -> None:
        self.call("bye")


class PortUnavailable(RuntimeError):
    """A port that cannot be built here (a missing package, an empty command)."""


PYTHON_DRIVER = ("seqlog.driver", "SeqlogDriver")
"""Where the Python port's in-process driver lives (the ``sessionlog-seqlog`` distribution, ``ports/python``)."""


def python_driver() -> Any:
    """A fresh in-process driver of the Python port, imported only when asked for."""
    module_name, class_name = PYTHON_DRIVER
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise PortUnavailable(
            f"--port python needs the seqlog package ({error}); install it with"
            " `pip install 'sessionlog-spec[python-port]'` or, in this repository, `pip install -e ports/python`"
        ) from error
    driver_class = getattr(module, class_name, None)
    if driver_class is None:
        raise PortUnavailable(f"{module_name} has no {class_name}")
    return driver_class()
