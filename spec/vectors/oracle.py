"""The model's answer to a draft: every vector's ``expected`` comes from here, never from a file."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sessionlog_spec.protocol.messages import GROUPS, OPS_BY_GROUP, PROTOCOL_CODES, Ok
from sessionlog_spec.protocol.model_driver import ModelDriver
from sessionlog_spec.protocol.schema import validate_request
from sessionlog_spec.suite.ports.inprocess import InProcessPort
from sessionlog_spec.vectors.format import Case, Draft, Step, dumps_value
from sessionlog_spec.vectors.realistic import expand_step

STATEFUL = frozenset({"seed", "append", "load"})
"""Ops that replace or extend the session: after refusing one, the session must be as it was."""
GROUP_OF = {op: group for group, ops in OPS_BY_GROUP.items() for op in ops}


class DraftError(ValueError):
    """A draft the model cannot answer as a vector: a setup step refused, or a malformed request."""


@dataclass
class Answer:
    """The model's outcome of the last step, and the earlier steps it refused (with their codes)."""

    expected: dict[str, Any]
    refused_steps: list[dict[str, Any]] = field(default_factory=list)


def requires(steps: Sequence[Step]) -> list[str]:
    """The capability groups a port needs to run ``steps``, in protocol order."""
    needed = {GROUP_OF[step["op"]] for step in steps}
    if "jsonl" in needed or steps[-1]["op"] in STATEFUL:
        needed.add("session")
    return [group for group in GROUPS if group in needed]


def answer(steps: Sequence[Step], refusals_allowed: bool = False) -> Answer:
    """The model's outcome of the last step; an earlier refusal is a draft bug unless ``refusals_allowed``."""
    if not steps:
        raise DraftError("a draft needs at least one step")
    port = InProcessPort(ModelDriver())
    out = Answer({})
    for index, step in enumerate(steps):
        request = expand_step(step)
        op = request.pop("op")
        validate_request({"id": 1, "op": op, **request})
        reply = port.call(op, **request)
        last = index == len(steps) - 1
        if isinstance(reply, Ok):
            if last:
                out.expected = {"ok": True, "result": reply.result}
            continue
        if reply.code in PROTOCOL_CODES:
            raise DraftError(f"step {index} ({op}) is not a well-formed request: {reply.code}: {reply.message}")
        if not last:
            if not refusals_allowed:
                raise DraftError(f"setup step {index} ({op}) was refused: {reply.code}: {reply.message}")
            out.refused_steps.append({"step": index, "code": reply.code})
            continue
        out.expected = {"ok": False, "code": reply.code}
        if op in STATEFUL:
            state = port.call("state")
            assert isinstance(state, Ok)
            out.expected["state"] = state.result
    return out


def case_of(draft: Draft, refusals_allowed: bool = False) -> Case:
    """The stored vector for ``draft``, its expectation computed by the model."""
    # The model answers what is stored, so a value JSON cannot carry exactly never reaches the file unnoticed.
    steps = json.loads(dumps_value(list(draft.steps)))
    try:
        got = answer(steps, refusals_allowed)
    except DraftError as error:
        raise DraftError(f"{draft.id}: {error}") from None
    case: Case = {
        "id": draft.id,
        "invariants": list(draft.invariants),
        "description": draft.description,
        "requires": requires(steps),
        "input": steps,
        "expected": got.expected,
    }
    if got.refused_steps:
        case["refused_steps"] = got.refused_steps
    return case
