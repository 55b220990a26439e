"""The first-violation order, as data read off the model: which code a candidate gets when it breaks
several rules at once.

:func:`~sessionlog_spec.model.session.admit` checks one event in stages (the envelope, the seq's
place, the vocabulary, the payload, the surface, the trace, the relationships) and refuses with the
first violation it meets.  :func:`check_order` reads ``admit``'s source and, for each stage it calls,
the codes the stage's function names, in the order its source names them, following the functions
it calls depth first (into any model module).  So the table is the model's own order, and
``invariants.md`` renders it: a port that reports another code for an event with two faults checks in
another order.

Within a stage, a rule written for some event types only (a trace rule for ``step/end``, a
relationship rule for ``llm/retry``) comes first only among the rules that apply to the event's
type; the order is the order of the source, branch by branch.
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sessionlog_spec.model import session


@dataclass(frozen=True, slots=True)
class Stage:
    """One stage of :func:`~sessionlog_spec.model.session.admit`: the function, and its codes in order."""

    name: str
    function: str
    """``module.function`` of the model that runs the stage (``admit`` itself for a check written inline)."""
    codes: tuple[str, ...]


def _tree(function: Callable[..., Any]) -> ast.FunctionDef:
    node = ast.parse(textwrap.dedent(inspect.getsource(function))).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


def _in_order(node: ast.AST) -> list[ast.expr | ast.stmt]:
    """The nodes under ``node`` in source order (``ast.walk`` is breadth first)."""
    nodes = [n for n in ast.walk(node) if isinstance(n, ast.expr | ast.stmt)]
    return sorted(nodes, key=lambda n: (n.lineno, n.col_offset))


def _codes_and_calls(function: Callable[..., Any]) -> list[tuple[str, str | Callable[..., Any]]]:
    """What ``function``'s source names, in order: ``("code", NAME)`` and ``("call", fn)`` of model functions."""
    found: list[tuple[str, str | Callable[..., Any]]] = []
    function = inspect.unwrap(function)
    namespace = function.__globals__
    for node in _in_order(_tree(function)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "Code":
            found.append(("code", node.attr))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            target = namespace.get(node.func.id)
            if callable(target) and _model_function(target):
                found.append(("call", target))
        elif isinstance(node, ast.Name) and isinstance(table := namespace.get(node.id), Mapping):
            # A dispatch table (the relationship rule of each event type): each rule, in the table's order.
            found.extend(("call", rule) for rule in table.values() if _model_function(rule))
    return found


def _model_function(value: object) -> bool:
    """Whether ``value`` is a function of the model (a class, such as ``Violation``, is not a stage)."""
    if not callable(value):
        return False
    inner = inspect.unwrap(value)
    return inspect.isfunction(inner) and inner.__module__.startswith("sessionlog_spec.model.")


def ordered_codes(function: Callable[..., Any], seen: set[str] | None = None) -> tuple[str, ...]:
    """Every code ``function`` can refuse with, in the order its source (and its callees', depth first) names them."""
    seen = set() if seen is None else seen
    function = inspect.unwrap(function)
    key = f"{function.__module__}.{function.__qualname__}"
    if key in seen:
        return ()
    seen.add(key)
    codes: list[str] = []
    for kind, what in _codes_and_calls(function):
        if kind == "code" and isinstance(what, str):
            codes.append(what)
        elif callable(what):
            codes.extend(ordered_codes(what, seen))
    return tuple(dict.fromkeys(codes))


STAGE_NAMES = {
    "decode_event": "envelope",
    "vocabulary_problem": "vocabulary",
    "payload_problem": "payload",
    "plan_surface_event": "surface",
    "restart_interrupted_turn": "trace (the v0 edge's restart)",
    "trace_transition": "trace",
    "relationship_transition": "relationships",
}
"""What each stage function of ``admit`` checks, for the table's reader."""


@functools.cache
def check_order() -> tuple[Stage, ...]:
    """The stages of :func:`~sessionlog_spec.model.session.admit` in the order it runs them, with their codes."""
    stages: list[Stage] = []
    seen: set[str] = set()
    for kind, what in _codes_and_calls(session.admit):
        if kind == "code" and isinstance(what, str):
            stages.append(Stage("seq position", "session.admit", (what,)))
        elif callable(what):
            name = what.__name__
            codes = ordered_codes(what, seen)
            if codes or name in STAGE_NAMES:
                stages.append(Stage(STAGE_NAMES.get(name, name), f"{what.__module__.rsplit('.', 1)[-1]}.{name}", codes))
    return tuple(stages)


def stage_of(code: str) -> int | None:
    """The index of the first stage that refuses with ``code`` (``None``: no stage of ``admit`` does)."""
    for index, stage in enumerate(check_order()):
        if code in stage.codes:
            return index
    return None


def render_check_order() -> list[str]:
    """The table's Markdown, for ``invariants.md``."""
    lines = [
        "## Check order",
        "",
        "An event is checked in stages, and the first violation met refuses it (`model/session.py`, `admit`).",
        "This table is read off the model's source by `spec/check_order.py`: the stages in the order `admit` runs",
        "them, and in each the codes in the order the stage's source names them.  An event with faults in two",
        "stages gets the earlier stage's code; within a stage, the earlier code among the rules that apply to the",
        "event's type.  Every event path (`append`, `seed`, `load`, `read`, `upgrade_v0`) admits events this way.",
        "",
        "| # | stage | model function | codes, first checked first |",
        "|---|---|---|---|",
    ]
    for index, stage in enumerate(check_order(), 1):
        codes = ", ".join(f"`{c}`" for c in stage.codes) or "(none of its own)"
        lines.append(f"| {index} | {stage.name} | `{stage.function}` | {codes} |")
    return [*lines, ""]
