"""The vocabulary appendix of ``invariants.md``: everything a port needs to write and read a log.

Rendered from the model's own tables, so the document cannot drift from the rules: the event
types and each payload's members (:mod:`sessionlog_spec.model.payloads`), the shared sub-shapes
they name, the crash-repair closers with their exact texts (rendered by running the repair), the
stored header line (:mod:`sessionlog_spec.model.jsonl`) and the v0 inventory the edge reads
(:mod:`sessionlog_spec.model.legacy`).
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import typing
from collections.abc import Iterator

from sessionlog_spec.model import legacy
from sessionlog_spec.model.event import ENVELOPE_KEYS, KNOWN_EVENT_TYPES, SURFACE_TYPES, Event
from sessionlog_spec.model.json_value import freeze, thaw
from sessionlog_spec.model.jsonl import HEADER_LINE_OPTIONAL, HEADER_LINE_REQUIRED
from sessionlog_spec.model.legacy import COMPACT_RENAMES, REFUSED_TYPES, V0_INVENTORY
from sessionlog_spec.model.payloads import EVENT_PAYLOADS, HEADER_LINE, payload_shape
from sessionlog_spec.model.repair import NOT_STARTED_TEXT, OUTCOME_UNKNOWN_TEXT, interrupted_turn_closers
from sessionlog_spec.model.shapes import (
    ABSENT,
    Array,
    Bool,
    EarlierSeq,
    Finite,
    Integer,
    Literal,
    Named,
    Nullable,
    Opaque,
    Record,
    Related,
    Relation,
    Shape,
    Str,
    Variants,
    json_schema,
    relation_annotation,
)

MAX_SAFE = 2**53 - 1


def _literal(value: object) -> str:
    return f"`{json.dumps(value, ensure_ascii=False)}`"


def _integer(shape: Integer) -> str:
    if shape.minimum == 0 and shape.maximum == MAX_SAFE:
        return "count (non-negative safe integer)"
    if shape.minimum == 1 and shape.maximum == MAX_SAFE:
        return "positive safe integer"
    if shape.minimum == -MAX_SAFE and shape.maximum == MAX_SAFE:
        return "safe integer"
    return f"safe integer {shape.minimum}..{shape.maximum}"


def _finite(shape: Finite) -> str:
    bounds = []
    if shape.minimum is not None:
        bounds.append(f"{'>' if shape.exclusive_minimum else '≥'} {shape.minimum:g}")
    if shape.maximum is not None:
        bounds.append(f"≤ {shape.maximum:g}")
    return "finite number (not -0)" + (f", {', '.join(bounds)}" if bounds else "")


def _string(shape: Str) -> str:
    text = "non-empty string" if shape.non_empty else "string"
    return f"{text} ({shape.form.value})" if shape.form is not None else text


class _Writer:
    """Writes shapes as nested Markdown lists; named sub-shapes are written once, in their own section."""

    def __init__(self) -> None:
        self.named: dict[str, Named] = {}

    def inline(self, shape: Shape) -> str | None:
        """A one-line description, or ``None`` when the shape needs its own list."""
        if isinstance(shape, Named):
            self.named.setdefault(shape.name, shape)
            return f"`{shape.name}` (see shared shapes)"
        simple: str | None = None
        if isinstance(shape, Opaque):
            simple = "any lossless JSON (opaque, not inspected)"
        elif isinstance(shape, Bool):
            simple = "boolean"
        elif isinstance(shape, Str):
            simple = _string(shape)
        elif isinstance(shape, Literal):
            simple = "one of " + ", ".join(_literal(v) for v in shape.values)
        elif isinstance(shape, Integer):
            simple = _integer(shape)
        elif isinstance(shape, Finite):
            simple = _finite(shape)
        elif isinstance(shape, EarlierSeq):
            simple = "seq of an earlier event (count below this event's seq)"
        elif isinstance(shape, Nullable):
            inner = self.inline(shape.shape)
            simple = f"`null` or {inner}" if inner is not None else None
        elif isinstance(shape, Array):
            inner = self.inline(shape.items)
            if inner is not None:
                simple = f"array of {inner}{self._array_bounds(shape)}"
        elif isinstance(shape, Record) and not shape.names and shape.additional is not None:
            value = self.inline(shape.additional)
            simple = f"object whose members are each {value}" if value is not None else None
        return simple

    @staticmethod
    def _array_bounds(shape: Array) -> str:
        parts = []
        if shape.min_items:
            parts.append(f"at least {shape.min_items}")
        if shape.max_items is not None:
            parts.append(f"at most {shape.max_items}")
        if shape.unique:
            parts.append("pairwise different")
        return f" ({', '.join(parts)})" if parts else ""

    def lines(self, shape: Shape, indent: int = 0) -> Iterator[str]:
        """The shape as list items at ``indent``."""
        pad = "  " * indent
        if isinstance(shape, Related):
            yield from self.lines(shape.shape, indent)
            for relation in shape.relations:
                yield f"{pad}- and: {_relation(relation)}"
            return
        if isinstance(shape, Record):
            yield from self._record(shape, indent)
            return
        if isinstance(shape, Variants):
            yield from self._variants(shape, indent)
            return
        if isinstance(shape, Nullable):
            yield f"{pad}- `null`, or:"
            yield from self.lines(shape.shape, indent + 1)
            return
        if isinstance(shape, Array):
            yield f"{pad}- an array{self._array_bounds(shape)} of:"
            yield from self.lines(shape.items, indent + 1)
            return
        yield f"{pad}- {self.inline(shape)}"

    def _record(self, shape: Record, indent: int) -> Iterator[str]:
        pad = "  " * indent
        if not shape.names and shape.additional is None:
            yield f"{pad}- `{{}}`: an object with no member"
            return
        for label, members in (("required", shape.required), ("optional", shape.optional)):
            for name, member in members.items():
                text = self.inline(member)
                if text is not None:
                    yield f"{pad}- `{name}` ({label}): {text}"
                else:
                    yield f"{pad}- `{name}` ({label}):"
                    yield from self.lines(member, indent + 1)
        if shape.additional is not None:
            text = self.inline(shape.additional)
            yield f"{pad}- any other member: {text if text is not None else 'see below'}"
        else:
            yield f"{pad}- no other member"
        for name, needed in shape.dependent_required.items():
            yield f"{pad}- when `{name}` is present: {', '.join(f'`{n}`' for n in needed)} too"

    def _variants(self, shape: Variants, indent: int) -> Iterator[str]:
        pad = "  " * indent
        extensible = " (merge-extensible: any other non-empty value is owner-opaque JSON)" if shape.extensible else ""
        yield f"{pad}- one of, by `{shape.discriminant}`{extensible}:"
        for key, arm in shape.arms:
            label = f"`{shape.discriminant}` absent" if key is ABSENT else f"`{shape.discriminant}` = {_literal(key)}"
            yield f"{pad}  - {label}:"
            yield from self.lines(arm, indent + 2)


def _relation(relation: object) -> str:
    doc = (type(relation).__doc__ or type(relation).__name__).strip().splitlines()[0]
    fields = getattr(relation, "__dataclass_fields__", {})
    values = ", ".join(f"{name} = `{_path(getattr(relation, name))}`" for name in fields)
    return f"{doc} ({values})" if values else doc


def _path(value: object) -> str:
    if isinstance(value, tuple):
        return "/".join(_path(v) for v in value) if value else "$"
    return str(value)


def _closer_example() -> tuple[Event, ...]:
    """The closers of a turn a crash left open in step 1, with one started and one unstarted call."""

    def event(type_: str, seq: int, data: object) -> Event:
        return Event(type_, seq, 1_700_000_000_000, freeze(data))

    calls = [{"type": "tool-call", "id": call, "name": "read_file", "arguments": "{}"} for call in ("call-a", "call-b")]
    message = {"id": "m-1", "role": "assistant", "source": {"kind": "model"}, "content": calls}
    log = (
        event("turn/start", 0, {"turn": 1}),
        event("step/start", 1, {"turn": 1, "step": 1}),
        event("assistant/message", 2, {"turn": 1, "step": 1, "message": message}),
        event("tool/call", 3, {"turn": 1, "step": 1, "callId": "call-a", "name": "read_file", "arguments": "{}"}),
    )
    return interrupted_turn_closers(log)


def _closer_json(event: Event) -> str:
    out: dict[str, object] = {"type": event.type, "seq": event.seq, "time": event.time, "data": thaw(event.data)}
    if event.surface_op is not None:
        out["surfaceOp"] = "append"
    if event.source_event_seqs is not None:
        out["sourceEventSeqs"] = list(event.source_event_seqs)
    return json.dumps(out, ensure_ascii=False)


def render_appendix() -> list[str]:
    """The appendix, as Markdown lines."""
    writer = _Writer()
    out = [
        "## Appendix: the vocabulary",
        "",
        "Rendered from the model's tables (`model/payloads.py`, `model/jsonl.py`, `model/repair.py`, "
        "`model/legacy.py`); JSON Schema files of the same payloads are in `spec/vectors/schemas/`.",
        "",
        "### Event envelope",
        "",
        f"Members: {', '.join(f'`{k}`' for k in sorted(ENVELOPE_KEYS))}; `type`, `seq`, `time`, `data` are required. "
        f"Surface types (the only ones that may carry `surfaceOp` and `sourceEventSeqs`): "
        f"{', '.join(f'`{t}`' for t in sorted(SURFACE_TYPES))}.",
        "",
        f"### Event types and payloads ({len(KNOWN_EVENT_TYPES)} types, payload generation 1)",
        "",
        "Each `data` is an object with exactly the members listed (INV-PAY-1..3).",
        "",
    ]
    for event_type in sorted(EVENT_PAYLOADS):
        out.append(f"#### `{event_type}`")
        out.append("")
        out.extend(writer.lines(EVENT_PAYLOADS[event_type]))
        v0 = payload_shape(event_type, 0)
        if json_schema(v0) != json_schema(EVENT_PAYLOADS[event_type]):
            out.append("")
            out.append("In a v0 source (payload generation 0, read by the edge):")
            out.append("")
            out.extend(writer.lines(v0))
        out.append("")
    out += ["### Shared shapes", ""]
    done: set[str] = set()
    while len(done) < len(writer.named):
        for name in sorted(set(writer.named) - done):
            named = writer.named[name]
            done.add(name)
            out += [f"#### `{name}`", "", named.doc, ""]
            out.extend(writer.lines(named.shape))
            out.append("")
    header_writer = _Writer()
    out += [
        "### The stored header line",
        "",
        f"Required: {', '.join(f'`{k}`' for k in HEADER_LINE_REQUIRED)}; optional: "
        f"{', '.join(f'`{k}`' for k in HEADER_LINE_OPTIONAL)}.",
        "",
        *header_writer.lines(HEADER_LINE),
        "",
    ]
    for name in sorted(header_writer.named):
        named = header_writer.named[name]
        out += [f"#### `{name}`", "", named.doc, "", *header_writer.lines(named.shape), ""]
    out += [
        "### Crash-repair closers",
        "",
        "A turn left open is closed by, in order: one error `tool/result` per unanswered call, `step/end` "
        "when a step is open, and `turn/end` with reason `interrupted`; seqs continue the log and every "
        "closer has the last event's time.  A call recorded by `tool/call` gets error "
        "`{name: \"ToolOutcomeUnknownError\", code: \"TOOL_OUTCOME_UNKNOWN\"}`, cites the `tool/call` seq in "
        "`sourceEventSeqs`, and says:",
        "",
        f"> {OUTCOME_UNKNOWN_TEXT}",
        "",
        "A call never started gets error `{name: \"ToolNotStartedError\", code: \"TOOL_NOT_STARTED\"}`, no "
        "`sourceEventSeqs`, and says:",
        "",
        f"> {NOT_STARTED_TEXT}",
        "",
        "The closers of a turn open in step 1 after an assistant message asked for `call-a` (started) and "
        "`call-b` (never started):",
        "",
        "```json",
        *(_closer_json(e) for e in _closer_example()),
        "```",
        "",
        "### The v0 inventory",
        "",
        f"A v0 log may hold the {len(V0_INVENTORY)} types below; any other type is refused, even when "
        "ignorable.  The edge renames "
        + ", ".join(f"`{old}` to `{new}`" for old, new in sorted(COMPACT_RENAMES.items()))
        + ", converts `steering/message` to `user/message`, and refuses "
        + ", ".join(f"`{t}` (`{code.value}`)" for t, code in sorted(REFUSED_TYPES.items()))
        + ".",
        "",
        ", ".join(f"`{t}`" for t in sorted(V0_INVENTORY)),
        "",
        *render_edge(),
        *render_relations(),
    ]
    return out


def _bullets(text: str) -> list[str]:
    """The ``* …`` items of a docstring passage, each joined into one line, Markdown-quoted."""
    items: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("* "):
            items.append(stripped[2:])
        elif stripped and items:
            items[-1] += " " + stripped
    return [item.replace("``", "`") for item in items]


def normalisations() -> list[tuple[str, str]]:
    """The edge's normalisations, ``(N1, text)`` …, as :mod:`sessionlog_spec.model.legacy` states them."""
    doc = legacy.__doc__ or ""
    rows = []
    for item in _bullets(doc[doc.index("* N1 ") :]):
        number, _, text = item.partition(" ")
        rows.append((number, text))
    return rows


def edge_refusals() -> list[str]:
    """What the edge refuses, and with which code, as :mod:`sessionlog_spec.model.legacy` states it."""
    doc = legacy.__doc__ or ""
    start = doc.index("What the edge refuses")
    return _bullets(doc[start : doc.index("The normalisations")])


def render_edge() -> list[str]:
    """The v0-to-v1 edge: what it refuses and its normalisations, one table (INV-LEGACY-5)."""
    return [
        "### The v0-to-v1 edge: refusals and normalisations (INV-LEGACY-5)",
        "",
        "Rendered from `model/legacy.py`.  What the edge refuses, and with which code, in reading order (the",
        "first problem of the first event that has one):",
        "",
        *(f"* {item}" for item in edge_refusals()),
        "",
        "The normalisations, the only changes the edge makes (each legacy form with exactly the members listed;",
        "N6 is withdrawn and changes nothing):",
        "",
        "| id | normalisation |",
        "|---|---|",
        *(f"| {number} | {_cell(text)} |" for number, text in normalisations()),
        "",
    ]


def _cell(text: str) -> str:
    """``text`` as one Markdown table cell: a pipe escaped."""
    return text.replace("|", "\\|")


def relation_kinds() -> dict[str, type]:
    """Each relation of :data:`~sessionlog_spec.model.shapes.Relation` by its ``x-relations`` name."""
    kinds: dict[str, type] = {}
    for kind in typing.get_args(Relation):
        blank = {f.name: "member" if f.type == "str" else () for f in dataclasses.fields(kind)}
        kinds[str(relation_annotation(kind(**blank))["relation"])] = kind
    return kinds


def render_relations() -> list[str]:
    """Every cross-member relation a schema's ``x-relations`` may name, defined as the model checks it."""
    lines = [
        "### Cross-member relations (`x-relations`)",
        "",
        "The rules between members of one payload that the model checks once its shape holds, by the name",
        "a published schema gives them in `x-relations` (`model/shapes.py`, `relation_problem`), with the",
        "members of each annotation (a path is an array of member names and indexes, `-1` the last item):",
        "",
    ]
    for name, kind in relation_kinds().items():
        doc = inspect.cleandoc(kind.__doc__ or "").replace("``", "`")
        fields = ", ".join(f"`{f.name}`" for f in dataclasses.fields(kind))
        lines += [f"#### `{name}`", "", doc, ""]
        if fields:
            lines += [f"Annotation members: {fields}.", ""]
    return lines
