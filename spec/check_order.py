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

from sessionlog_spec.model import header, legacy, payloads, session, shapes, surface, trace
from sessionlog_spec.model.violation import Code
from sessionlog_spec.protocol.model_driver import ModelDriver


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
            # A dispatch table (the relationship rule of each event type): each rule, in the table's order;
            # a table of codes (the own code of each type): each code, in the table's order.
            found.extend(("call", rule) for rule in table.values() if _model_function(rule))
            found.extend(("code", code.name) for code in table.values() if isinstance(code, Code))
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


@functools.cache
def ordered_pairs() -> tuple[tuple[str, str], ...]:
    """Every pair of codes ``(a, b)`` the order places ``a`` before ``b``: ``a`` in an earlier stage, or
    earlier in the same stage (a code checked in two stages counts at its first).  An event carrying a
    fault of each is answered with ``a``; whether one event can carry both is for the generator to find
    (``sessionlog_spec.suite.fuzz.pairs``)."""
    position: dict[str, tuple[int, int]] = {}
    for index, stage in enumerate(check_order()):
        for rank, code in enumerate(stage.codes):
            position.setdefault(code, (index, rank))
    codes = sorted(position, key=position.__getitem__)
    return tuple((a, b) for i, a in enumerate(codes) for b in codes[i + 1 :])


def render_check_order() -> list[str]:
    """The table's Markdown, for ``invariants.md``."""
    lines = [
        "## Check order",
        "",
        "An event is checked in stages, and the first violation met refuses it (`model/session.py`, `admit`).",
        "This table is read off the model's source by `spec/check_order.py`: the stages in the order `admit` runs",
        "them, and in each the codes in the order the stage's source first names them.  An event with faults in",
        "two stages gets the earlier stage's code.  Within the envelope stage the codes are checked in the order",
        "listed.  Within the surface, header and tool-pairing stages the order depends on the event's path",
        "through the stage (an append or a replace, which members are present), and a code may be given at",
        "several checks: *Within a stage* below lists their checks one by one, in the order they run.  Every",
        "event path (`append`, `seed`, `load`, `read`, `upgrade_v0`) admits events this way.",
        "",
        "| # | stage | model function | codes, first checked first |",
        "|---|---|---|---|",
    ]
    for index, stage in enumerate(check_order(), 1):
        codes = ", ".join(f"`{c}`" for c in stage.codes) or "(none of its own)"
        lines.append(f"| {index} | {stage.name} | `{stage.function}` | {codes} |")
    return [*lines, "", *render_within_stages()]


# -- within a stage: each check in the order the source runs it --------------------------------------

HOOKS = {
    "session_of": "the events, validated as a whole log: every stage of the table above, event by event, "
    "then the complete-log rule (INV-REL-11)",
    "events_of": "each event's envelope (stage 1 alone), in order",
}
"""What a driver op's call of its two hooks (``self.session_of``, ``self.events_of``) checks."""


def _message(node: ast.expr) -> str:
    """A violation message as its source spells it, each interpolated expression in braces."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif isinstance(value, ast.FormattedValue):
                parts.append("{" + ast.unparse(value.value) + "}")
        return "".join(parts)
    return "{" + ast.unparse(node) + "}"


def _violation(node: ast.Call) -> str:
    """``Violation(Code.X, message)`` as one item: the code, then the message."""
    code = node.args[0]
    is_code = isinstance(code, ast.Attribute) and isinstance(code.value, ast.Name) and code.value.id == "Code"
    named = code.attr if is_code and isinstance(code, ast.Attribute) else None
    message = _message(node.args[1]) if len(node.args) > 1 else ""
    return f"`{named}`: {message}" if named is not None else f"`{ast.unparse(code)}`: {message}"


class _Outline:
    """The checks of one function, in the order its source runs them, as a nested Markdown list.

    Each ``Violation(Code.X, …)`` is one item (its code and message); a call of a model function
    that can refuse is an item holding that function's own checks (listed once: a later call says
    so); an ``if`` whose body does more than refuse is a ``when …`` item, and ``nothing after it``
    when its body ends by returning.
    """

    def __init__(self, elsewhere: Mapping[Callable[..., Any], str] | None = None) -> None:
        self.expanded: set[str] = set()
        self.elsewhere = {_key(f): where for f, where in (elsewhere or {}).items()}

    def function(self, function: Callable[..., Any], indent: int) -> list[str]:
        function = inspect.unwrap(function)
        self.expanded.add(f"{function.__module__}.{function.__qualname__}")
        return self.statements(_tree(function).body, function.__globals__, indent)

    def statements(self, body: list[ast.stmt], namespace: dict[str, Any], indent: int) -> list[str]:
        lines: list[str] = []
        for statement in body:
            if isinstance(statement, ast.If):
                lines += self.branch(statement, namespace, indent)
            elif isinstance(statement, ast.For):
                inner = self.items(statement.iter, namespace, indent + 1)
                inner += self.statements(statement.body, namespace, indent + 1)
                if inner:
                    each = f"`{ast.unparse(statement.target)}` in `{ast.unparse(statement.iter)}`"
                    lines += [f"{'  ' * indent}- for each {each}:", *inner]
            elif not isinstance(statement, ast.FunctionDef | ast.ClassDef):
                lines += self.items(statement, namespace, indent)
        return lines

    def branch(self, node: ast.If, namespace: dict[str, Any], indent: int) -> list[str]:
        pad = "  " * indent
        lines = self.items(node.test, namespace, indent)
        body = node.body
        if len(body) == 1 and isinstance(body[0], ast.Return) and self._is_violation(body[0].value):
            lines += self.items(body[0], namespace, indent)
        else:
            inner = self.statements(body, namespace, indent + 1)
            if inner:
                final = " (nothing after it is checked)" if isinstance(body[-1], ast.Return) else ""
                lines += [f"{pad}- when `{ast.unparse(node.test)}`{final}:", *inner]
        if node.orelse:
            inner = self.statements(node.orelse, namespace, indent + 1)
            if inner:
                lines += [f"{pad}- otherwise:", *inner]
        return lines

    @staticmethod
    def _is_violation(node: ast.expr | None) -> bool:
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Violation"

    def items(self, node: ast.AST, namespace: dict[str, Any], indent: int) -> list[str]:
        """The checks one statement or expression makes, in source order."""
        pad = "  " * indent
        lines: list[str] = []
        inside: set[int] = set()
        for child in _in_order(node):
            if id(child) in inside or not isinstance(child, ast.Call):
                continue
            if self._is_violation(child):
                lines.append(f"{pad}- {_violation(child)}")
                inside.update(id(n) for n in ast.walk(child))
                continue
            func = child.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
                if func.attr in HOOKS:
                    lines.append(f"{pad}- {HOOKS[func.attr]}")
                continue
            target = namespace.get(func.id) if isinstance(func, ast.Name) else None
            if target is None or not _model_function(target) or not ordered_codes(target):
                continue
            inner = inspect.unwrap(target)
            key = _key(inner)
            name = f"{inner.__module__.rsplit('.', 1)[-1]}.{inner.__name__}"
            if key in self.elsewhere:
                lines.append(f"{pad}- `{name}` (its checks: {self.elsewhere[key]})")
                continue
            if key in self.expanded:
                lines.append(f"{pad}- `{name}` (its checks as listed above)")
                continue
            doc = (inner.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
            doc = " ".join(doc.split()).replace("``", "`")
            lines.append(f"{pad}- `{name}`{f' ({doc})' if doc else ''}:")
            lines += self.function(inner, indent + 1)
        return lines


def _key(function: Callable[..., Any]) -> str:
    inner = inspect.unwrap(function)
    return f"{inner.__module__}.{inner.__qualname__}"


def check_outline(function: Callable[..., Any], elsewhere: Mapping[Callable[..., Any], str] | None = None) -> list[str]:
    """Every check ``function`` makes, in the order it runs them, as a nested Markdown list.

    A model function in ``elsewhere`` is not expanded: its item says where its checks are listed.
    """
    return _Outline(elsewhere).function(function, 0)


WITHIN = "`invariants.md`, *Check order*, *Within a stage*"
"""Where the checks of the stages listed within a stage are (for the documents that refer to them)."""


def within_stage_functions() -> dict[str, Callable[..., Any]]:
    """The stages whose checks ``invariants.md`` lists one by one: a title and the function that runs them."""
    return {
        "surface (stage 5, `surface.plan_surface_event`)": surface.plan_surface_event,
        "header: the payload of a `request/header` (in stage 4, `header.header_event_problem`)": header.header_event_problem,
        "tool pairing: the `cuts` op (`compaction`, as the model driver runs it)": ModelDriver.op_cuts,
    }


def render_within_stages() -> list[str]:
    """The checks of the surface, header and tool-pairing stages in the order they run, for ``invariants.md``."""
    lines = [
        "### Within a stage",
        "",
        "Within a stage the checks run in a fixed order too, and the first that fails decides, so an event",
        "with two faults in one stage gets the code of the check listed first below *on the event's own",
        "path through the stage* (a check under `when …` runs only when its condition holds; a code may be",
        "listed more than once, at each check that gives it).  These lists are read off the model's source",
        "by `spec/check_order.py`, each message as the model words it, `{…}` standing for the value shown.",
        "",
    ]
    for title, function in within_stage_functions().items():
        lines += [f"#### {title}", "", *check_outline(function), ""]
    return lines


# -- the code of a payload fault, by event type and path ---------------------------------------------


@dataclass(frozen=True, slots=True)
class PayloadCodes:
    """The codes a payload fault of one event type gets: on a v1 path, and in a v0 log through the edge."""

    event_type: str
    v1: tuple[str, ...]
    v0: tuple[str, ...]
    note: str = ""


def _v1_payload_codes(event_type: str) -> tuple[str, ...]:
    """The payload stage's codes for ``event_type``, read off the model's tables and its rule for the type."""
    if event_type == "request/header":
        return ordered_codes(header.header_event_problem)
    if event_type in trace.TRACE_TYPES:
        own = [code.name for (type_, _), code in trace.MEMBER_CODES.items() if type_ == event_type]
        return (*own, Code.TRACE_DATA_INVALID.name)
    return (session.TYPE_CODES.get(event_type, Code.PAYLOAD_INVALID).name,)


def payload_codes() -> tuple[PayloadCodes, ...]:
    """One row per event type of the payload table and per type only a v0 log holds, then any other type.

    v1: the payload stage of ``admit`` (``session.TYPE_CODES``, the trace types' ``TRACE_DATA_INVALID``
    with ``trace.MEMBER_CODES``, the request header's own rule).  v0: the edge checks each converted
    payload against the released v0 table first (``LEGACY_SOURCE_INVALID``, but for
    ``legacy.LEFT_TO_V1``), then the v1 rules judge the converted log.
    """
    source = Code.LEGACY_SOURCE_INVALID.name
    rows = []
    for type_ in sorted(payloads.EVENT_PAYLOADS):
        v1 = _v1_payload_codes(type_)
        # The edge refuses a retired form (the ``fallback`` reason: ``legacy._retired_form``) before the v0 table.
        retired = (Code.LEGACY_FALLBACK_REASON.name,) if type_ == "request/header" else ()
        v0 = tuple(dict.fromkeys((*retired, source, *v1)))  # every type: a payload that is no object is a bad source
        differs = shapes.json_schema(payloads.payload_shape(type_, 0)) != shapes.json_schema(payloads.EVENT_PAYLOADS[type_])
        note = "the v0 table differs from v1 (appendix)" if differs else ""
        if type_ in legacy.LEFT_TO_V1:
            note = "the edge asks only for an object, and leaves the rest to v1 (`legacy.LEFT_TO_V1`)"
        rows.append(PayloadCodes(type_, v1, v0, note))
    unknown = Code.UNKNOWN_EVENT_TYPE.name
    for old, new in sorted(legacy.COMPACT_RENAMES.items()):
        rows.append(PayloadCodes(old, (unknown,), (source, *_v1_payload_codes(new)), f"v0 only: renamed `{new}` (N7)"))
    steering = (source, *_v1_payload_codes("user/message"))
    rows.append(PayloadCodes("steering/message", (unknown,), steering, "v0 only: becomes `user/message` (N3)"))
    for type_, code in sorted({**session.LEGACY_TYPES, **legacy.REFUSED_TYPES}.items()):
        rows.append(PayloadCodes(type_, (code.name,), (code.name,), "refused by name, whatever its payload"))
    other = (source, Code.LEGACY_UNKNOWN_TYPE.name)  # the edge asks for an object payload before the inventory
    rows.append(PayloadCodes("any other type", (unknown,), other, "v1: any payload when `ignorable: true`"))
    return tuple(rows)


def render_payload_codes() -> list[str]:
    """The table of payload codes by event type and path, for ``invariants.md``."""
    lines = [
        "## Payload codes by event type and path",
        "",
        "Which code an event whose `data` breaks its type's rules gets (stage 4 above; an event with an",
        "earlier fault gets the earlier stage's code).  Where a cell lists several codes, the first check",
        "that fails decides, in the order listed (for `request/header`, as in *Within a stage* below).",
        "Rendered from the model's tables by `spec/check_order.py` (`session.TYPE_CODES`, `trace.TRACE_TYPES`",
        "and `trace.MEMBER_CODES`, `legacy.LEFT_TO_V1`, `legacy.COMPACT_RENAMES`, `legacy.REFUSED_TYPES`).",
        "",
        "* **v1**: `append`, `seed` and `store_append`; `load`, `read` and `store_open` of a version-1 log;",
        "  `upgrade_v0` of a version-1 log.",
        "* **v0**: `upgrade_v0`, `load`, `read` and `store_open` of a version-0 log.  The edge checks each",
        "  converted payload against the released v0 payload table (`LEGACY_SOURCE_INVALID`), then the whole",
        "  converted log is validated as v1, so a payload the v0 table accepts and v1 refuses gets the v1 code.",
        "",
        "| event type | v1 | v0, through the edge | note |",
        "|---|---|---|---|",
    ]
    for row in payload_codes():
        name = row.event_type if row.event_type == "any other type" else f"`{row.event_type}`"
        v1 = ", ".join(f"`{c}`" for c in row.v1)
        v0 = "as v1" if row.v0 == row.v1 else ", ".join(f"`{c}`" for c in row.v0)
        lines.append(f"| {name} | {v1} | {v0} | {row.note} |")
    return [*lines, ""]
