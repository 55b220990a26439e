"""The payload vocabulary as JSON Schema documents (draft 2020-12), one file per event type.

``<type with "/" as ".">.schema.json`` validates the ``data`` of one event type, generation 1
(:data:`sessionlog_spec.model.payloads.EVENT_PAYLOADS`); ``<type with "/" as ".">.v0.schema.json``,
written only for the few types whose generation-0 payload (the v0 source a migration reads, see
:func:`sessionlog_spec.model.payloads.payload_shape`) differs from generation 1, validates that
type's v0 ``data`` (any other type's v0 ``data`` is validated by its generation-1 document);
``header-line.schema.json`` validates the stored header line.  The documents are derived from the model's shapes
(:func:`sessionlog_spec.model.shapes.json_schema`): what JSON Schema cannot state (a seq earlier
than the event's own, relations between members) is an ``x-`` annotation, explained in each
event-type document's ``$comment``.  The committed copies live in ``spec/vectors/schemas/``;
:func:`verify_schemas` says whether they are current, :func:`write_schemas` rewrites them.
"""

from __future__ import annotations

import json
from pathlib import Path

from sessionlog_spec.model.payloads import CURRENT_GENERATION, EVENT_PAYLOADS, GENERATIONS, HEADER_LINE, payload_shape
from sessionlog_spec.model.shapes import JSON_SCHEMA_DIALECT, json_schema

SCHEMA_DIRECTORY = Path(__file__).parent / "vectors" / "schemas"
HEADER_LINE_FILE = "header-line.schema.json"

ANNOTATIONS = (
    "Annotations beyond JSON Schema: x-earlierThanEventSeq (the integer must also be lower than the "
    "seq of the event carrying this data); x-relations (cross-member rules that must also hold: "
    "equal, notAbove, sumOf, flagIfAnyPositive, itemIndex, uniqueMember, membersWithin, "
    "goalStateRestatement; paths are arrays of member names and indexes, -1 the last item); "
    "x-discriminant and x-mergeExtensible (the member selecting a union's arm, and whether an "
    "unknown value of it is kept as owner-opaque JSON); x-opaque (lossless JSON, not inspected)."
)


def schema_file(event_type: str, generation: int = CURRENT_GENERATION) -> str:
    """The file name of an event type's schema: ``tool/result`` is ``tool.result.schema.json``;
    an older generation's is ``tool.result.v0.schema.json`` (written only where it differs)."""
    stem = event_type.replace("/", ".")
    return f"{stem}.schema.json" if generation == CURRENT_GENERATION else f"{stem}.v{generation}.schema.json"


def generation_differs(event_type: str, generation: int) -> bool:
    """Whether ``event_type``'s payload in ``generation`` has another JSON Schema than in the current one."""
    return json_schema(payload_shape(event_type, generation)) != json_schema(EVENT_PAYLOADS[event_type])


def _payload_document(event_type: str, generation: int) -> dict[str, object]:
    if generation == CURRENT_GENERATION:
        what = f"The data member of a {event_type!r} event (payload generation {generation})"
    else:
        what = (
            f"The data member of a v{generation} source's {event_type!r} event, after the edge's conversion "
            f"(payload generation {generation}; it differs from {schema_file(event_type)})"
        )
    return {
        "$schema": JSON_SCHEMA_DIALECT,
        "title": f"{event_type} data" + ("" if generation == CURRENT_GENERATION else f" (generation {generation})"),
        "description": f"{what}: validate the event's data with this schema, not the whole event.",
        "$comment": ANNOTATIONS,
        **json_schema(payload_shape(event_type, generation)),
    }


def schema_documents() -> dict[str, dict[str, object]]:
    """Every schema document, by file name: each type's current one, and an older generation's
    where it differs."""
    documents: dict[str, dict[str, object]] = {}
    for event_type in EVENT_PAYLOADS:
        documents[schema_file(event_type)] = _payload_document(event_type, CURRENT_GENERATION)
        for generation in GENERATIONS:
            if generation != CURRENT_GENERATION and generation_differs(event_type, generation):
                documents[schema_file(event_type, generation)] = _payload_document(event_type, generation)
    documents[HEADER_LINE_FILE] = {
        "$schema": JSON_SCHEMA_DIALECT,
        "title": "stored header line",
        "description": (
            "The first line of a stored session log (a JSON object).  Not stated here: seedLength must "
            "not exceed the number of events the log holds."
        ),
        **json_schema(HEADER_LINE),
    }
    return dict(sorted(documents.items()))


def schema_text(document: dict[str, object]) -> str:
    """The committed text of a document: two-space indented JSON, non-ASCII kept, a final newline."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def write_schemas(directory: Path = SCHEMA_DIRECTORY) -> list[Path]:
    """Write every document into ``directory`` (created if need be), removing stale ``*.schema.json``."""
    directory.mkdir(parents=True, exist_ok=True)
    documents = schema_documents()
    for stale in directory.glob("*.schema.json"):
        if stale.name not in documents:
            stale.unlink()
    written = []
    for name, document in documents.items():
        path = directory / name
        text = schema_text(document)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def verify_schemas(directory: Path = SCHEMA_DIRECTORY) -> list[str]:
    """The differences between ``directory`` and the documents the model gives (empty when current)."""
    documents = schema_documents()
    problems = []
    present = {path.name for path in directory.glob("*.schema.json")} if directory.is_dir() else set()
    for name in sorted(present - set(documents)):
        problems.append(f"{name}: not a schema of the vocabulary")
    for name, document in documents.items():
        path = directory / name
        if name not in present:
            problems.append(f"{name}: missing")
        elif path.read_text(encoding="utf-8") != schema_text(document):
            problems.append(f"{name}: out of date (regenerate with sessionlog_spec.schemas.write_schemas)")
    return problems
