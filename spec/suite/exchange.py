"""One request sent to the oracle and to the port under test, with both answers.

A state machine's run is a list of exchanges; a counterexample file stores that list, and
``replay`` sends the same requests again.  Replies are kept in their protocol JSON form
(``{"ok": true, "result": …}`` or ``{"ok": false, "error": {…}}``), a port fault as ``{"fault": …}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sessionlog_spec.protocol.messages import Ok, PortFault, Refused, Reply

Answer = Reply | PortFault
"""What a port gave back: a reply, or the fault it committed instead."""


@dataclass(frozen=True, slots=True)
class Exchange:
    """A request (``op`` and ``args``), the oracle's reply and the port's answer."""

    op: str
    args: dict[str, Any]
    expected: Reply
    actual: Answer

    def to_json(self) -> dict[str, Any]:
        """The exchange as stored in a counterexample file."""
        return {"op": self.op, "args": self.args, "expected": answer_json(self.expected), "actual": answer_json(self.actual)}


def answer_json(answer: Answer) -> dict[str, Any]:
    """A reply or fault in its protocol JSON form."""
    if isinstance(answer, Ok):
        return {"ok": True, "result": answer.result}
    if isinstance(answer, Refused):
        return {"ok": False, "error": {"code": answer.code, "message": answer.message}}
    return {"fault": {"kind": answer.kind, "detail": answer.detail, "stderr_tail": answer.stderr_tail}}
