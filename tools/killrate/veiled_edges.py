"""The seventh half of the catalogue, edges: request headers (INV-HDR), the JSONL codec and its reader
(INV-JSONL), and the v0-to-v1 edge (INV-LEGACY).

Written from the documents (``invariants.md``, the protocol, the on-disk format), the reference model
and seqlog's source alone, without reading the conformance suite or its tests, and never run against
the suite before the measurement that first judges them.  Each mutant is one decision a port's author
could get wrong while reading the same rules: a header member's bound or shape read one way too strict
or too loose, canonical form made to do more than drop the empty members, equality that skips a member,
a fork's first request taken as a new log's, the header in force forgotten at a boundary; a header line
or a stored row a writer on another platform produces read differently from the released reader, a
proof of committed damage looked for in one place only, a number written the way another language
writes it; an edge list of an older release, one normalisation done slightly wrong, a restart admitted
on a wider pattern, a v0 source bound read one step too tight.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import seqlog.codec as sl_codec
import seqlog.header as sl_header
import seqlog.headerline as sl_headerline
import seqlog.legacy as sl_legacy
import seqlog.rows as sl_rows
import seqlog.trace as sl_trace
from killrate import probes as p
from killrate.mutants import Fn, veiled_mutant
from seqlog.driver import SeqlogDriver
from seqlog.errors import Code, SeqlogError
from seqlog.event import END_SEED, Event, decode_event, vocabulary_check
from seqlog.jsonvalue import MAX_SAFE_INTEGER, FrozenObject
from seqlog.legacy import _Edge
from seqlog.messages import pairing_delta
from seqlog.payloads import check_data
from seqlog.session import AppendPlan, Session, check_payload
from seqlog.trace import Brackets, abandon_for_restart, advance

T = p.T


# --- probe pieces -------------------------------------------------------------------------------------


def _header_line(**members: object) -> str:
    """A v1 session header line with ``members`` added (or replaced)."""
    return p.line({"type": "session", "version": 1, "id": "s", "createdAt": 0, "delegationDepth": 0, **members})


def _read(*lines: str) -> p.Probe:
    """``read`` of a stored log made of ``lines``."""
    return ({"op": "read", "jsonl": "\n".join(lines) + "\n"},)


def _decision(events: Sequence[dict[str, Any]], header: dict[str, Any], **instance: bool) -> p.Probe:
    """One ``header_decision`` of a later request (``instance`` overrides the loop instance's facts)."""
    facts = {"first_request": False, "begins_series": False, "replaced_since_last_request": False, **instance}
    return ({"op": "header_decision", "events": list(events), "header": header, "instance": facts},)


def _headed(header: dict[str, Any], reason: str = "initial") -> tuple[dict[str, Any], ...]:
    """Turn 1 open, then a snapshot of ``header``."""
    return (p.turn_start(0), p.header_event(1, header, reason))


def _tool(name: str, parameters: object = None) -> dict[str, Any]:
    schema = {"type": "object"} if parameters is None else parameters
    return {"name": name, "description": f"The {name} tool.", "parameters": schema}


def _note(seq: int, data: object) -> dict[str, Any]:
    return {"type": "x/note", "seq": seq, "time": T + seq, "data": data, "ignorable": True}


def _v0(type_: str, seq: int, data: object, **envelope: Any) -> dict[str, Any]:
    return {"type": type_, "seq": seq, "time": T + seq, "data": data, **envelope}


_SPLICE = _v0("agent/inbox/spliced", 1, {"target": "next-turn", "start": 0, "inserted": [
    {"id": "u-queued", "role": "user", "content": [{"type": "text", "text": "and the docs"}], "source": {"kind": "user"}}]})


# --- INV-HDR: request headers -------------------------------------------------------------------------


@veiled_mutant(
    "parameters_need_object_type", "INV-HDR-1", "header", sl_header, "check_header_shape",
    p.pure("fold_header", *_headed({**p.HEADER, "tools": [_tool("list_dir", {})]})),
)
def _parameters_need_object_type(original: Fn) -> Fn:
    """A header tool's ``parameters`` must be a JSON Schema of ``type: "object"`` (what a provider takes for a
    function's arguments), where any JSON object is a tool's parameters: ``{}`` is refused."""

    def check_header_shape(header: object) -> None:
        original(header)
        tools = header.get("tools") if isinstance(header, Mapping) else None
        for tool in tools if isinstance(tools, list | tuple) else ():
            parameters = tool.get("parameters") if isinstance(tool, Mapping) else None
            if not isinstance(parameters, Mapping) or parameters.get("type") != "object":
                raise SeqlogError(Code.HEADER_INVALID, "request/header tool parameters must be an object schema")

    return check_header_shape


@veiled_mutant(
    "starts_series_only_on_change", "INV-HDR-1", "header", sl_header, "check_header_event",
    p.appends(p.turn_start(0), p.header_event(1, p.HEADER, "initial", startsSeries=True)),
)
def _starts_series_only_on_change(original: Fn) -> Fn:
    """A stored snapshot may carry ``startsSeries`` only with reason ``change`` (the writer flags only a
    change), where the payload takes the flag with any reason: an ``initial`` snapshot flagged so is refused."""

    def check_header_event(data: object) -> None:
        original(data)
        if isinstance(data, Mapping) and data.get("startsSeries") is True and data.get("reason") != "change":
            raise SeqlogError(Code.HEADER_INVALID, "request/header startsSeries belongs to a change snapshot")

    return check_header_event


@veiled_mutant(
    "canonical_sorts_tools", "INV-HDR-6", "header", sl_header, "canonical_header",
    p.pure("fold_header", *_headed({**p.HEADER, "tools": [_tool("write_file"), _tool("read_file")]})),
)
def _canonical_sorts_tools(original: Fn) -> Fn:
    """Canonical form also sorts the tool list by name (one representation per header), where it drops the
    empty members and nothing else: the tools the request offered, in its order, are respelt."""

    def canonical_header(header: Mapping[str, Any]) -> FrozenObject:
        canonical: FrozenObject = original(header)
        tools = canonical.get("tools")
        if isinstance(tools, tuple) and all(isinstance(t, Mapping) and isinstance(t.get("name"), str) for t in tools):
            ordered = tuple(sorted(tools, key=lambda tool: str(tool["name"])))
            if ordered != tools:
                return FrozenObject({**canonical, "tools": ordered})
        return canonical

    return canonical_header


_DEFAULTED = {"config": {"provider": "p", "model": "m", "maxTokens": 4096}, "adapterDefaults": {"maxTokens": True}}


@veiled_mutant(
    "equality_ignores_adapter_markers", "INV-HDR-7", "header", sl_header, "header_equals",
    _decision(_headed(_DEFAULTED), {"config": {"provider": "p", "model": "m", "maxTokens": 4096}}),
)
def _equality_ignores_adapter_markers(original: Fn) -> Fn:
    """Header equality leaves ``adapterDefaults`` out (it says where a value came from, not what is sent), so
    a request whose caller now sets a value the adapter used to default writes no ``change``."""

    def header_equals(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
        strip_a = {k: v for k, v in a.items() if k != "adapterDefaults"}
        strip_b = {k: v for k, v in b.items() if k != "adapterDefaults"}
        equal: bool = original(strip_a, strip_b)
        return equal

    return header_equals


@veiled_mutant(
    "fork_first_request_initial", "INV-HDR-9", "header", SeqlogDriver, "op_header_decision",
    p.decision((*_headed(p.HEADER), p.turn_end(2), p.event(END_SEED, 3, {})), p.HEADER, first=True, series=False),
)
def _fork_first_request_initial(original: Fn) -> Fn:
    """A fork's first request writes ``initial``: the snapshots before its end-of-seed marker are the
    parent's, so its own log is taken to have none yet, where any snapshot in the log makes it ``resume``."""

    def op_header_decision(self: SeqlogDriver, request: dict[str, Any]) -> Any:
        result = original(self, request)
        events = request.get("events")
        facts = request.get("instance")
        if not (isinstance(events, list) and isinstance(facts, Mapping) and facts.get("first_request")):
            return result
        kinds = [e.get("type") if isinstance(e, Mapping) else None for e in events]
        seed_end = max((i for i, kind in enumerate(kinds) if kind == END_SEED), default=-1)
        last_header = max((i for i, kind in enumerate(kinds) if kind == "request/header"), default=-1)
        decision = result.get("decision") if isinstance(result, Mapping) else None
        if seed_end > last_header and isinstance(decision, Mapping) and decision.get("reason") == "resume":
            return {"decision": {**decision, "reason": "initial"}}
        return result

    return op_header_decision


@veiled_mutant(
    "header_forgotten_at_turn_start", "INV-HDR-8", "header", sl_header, "fold_request_header",
    p.pure("fold_header", *_headed(p.HEADER), p.turn_end(2), p.turn_start(3, turn=2)),
)
def _header_forgotten_at_turn_start(original: Fn) -> Fn:
    """Reconstruction takes the header in force from the snapshots of the latest turn (each turn's first
    request writes its own), so a turn that has sent none yet has no header, where the latest snapshot holds."""

    def fold_request_header(events: Any) -> FrozenObject | None:
        log = list(events)
        starts = [index for index, event in enumerate(log) if event.type == "turn/start"]
        folded: FrozenObject | None = original(log[starts[-1] :] if starts else log)
        return folded

    return fold_request_header


# --- INV-JSONL: the stored form and the reader --------------------------------------------------------


@veiled_mutant(
    "float_created_at_refused", "INV-JSONL-1", "jsonl", sl_headerline, "check_header_line",
    p.load(_header_line(createdAt=1_700_000_000_000.0)),
)
def _float_created_at_refused(original: Fn) -> Fn:
    """The header line's ``createdAt`` must be integer-typed: a line written by a writer whose clock is a float
    (``1700000000000.0``, the same JSON number as the integer) is refused as an invalid header."""

    def check_header_line(header: Mapping[str, Any]) -> None:
        original(header)
        if type(header.get("createdAt")) is float:
            raise SeqlogError(Code.JSONL_HEADER_INVALID, "line 1: session header createdAt must be an integer")

    return check_header_line


_DRIVE_PATH = re.compile(r"^[A-Za-z]:[\\/]")


@veiled_mutant(
    "windows_cwd_accepted", "INV-JSONL-1", "read", sl_headerline, "check_header_line",
    _read(_header_line(cwd="C:\\work\\project")),
)
def _windows_cwd_accepted(original: Fn) -> Fn:
    """The header line's ``cwd`` is judged absolute the way the host's path library judges it, so a Windows
    drive path (``C:\\work``) passes, where the released reader wants a path starting with ``/``."""

    def check_header_line(header: Mapping[str, Any]) -> None:
        cwd = header.get("cwd")
        if isinstance(cwd, str) and _DRIVE_PATH.match(cwd):
            header = {**header, "cwd": "/" + cwd}
        original(header)

    return check_header_line


def _js_numbers(value: object) -> object:
    """``value`` with every integral double of magnitude 2^53 or more written as JavaScript writes it: digits."""
    if isinstance(value, Mapping):
        return {k: _js_numbers(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_js_numbers(v) for v in value]
    if type(value) is float and math.isfinite(value) and value.is_integer() and abs(value) > MAX_SAFE_INTEGER:
        return int(value)
    return value


@veiled_mutant(
    "large_float_written_as_digits", "INV-JSONL-2", "jsonl", sl_codec, "encode_line",
    ({"op": "reset"}, {"op": "append", "event": _note(0, {"bytes": 1e16})}, {"op": "save"}),
)
def _large_float_written_as_digits(original: Fn) -> Fn:
    """The writer spells numbers as ``JSON.stringify`` does, so a double of 2^53 or more is written in integer
    digits (``10000000000000000``), which reads back as an integer outside the safe range."""

    def encode_line(value: object) -> bytes:
        line: bytes = original(_js_numbers(value))
        return line

    return encode_line


@veiled_mutant(
    "blank_torn_tail_ignored", "INV-JSONL-3", "jsonl", sl_codec, "_split",
    ({"op": "reset"}, {"op": "load", "jsonl": p.SESSION_LINE + "\n" + p.note_line(0) + "\n \r"}),
)
def _blank_torn_tail_ignored(original: Fn) -> Fn:
    """The reader trims trailing whitespace before it looks for a torn tail, so a final segment of spaces and
    ``\\r`` after the last newline is not reported as a dropped torn write."""

    def _split(data: bytes | str) -> tuple[list[Any], bool]:
        lines, torn = original(data)
        if isinstance(data, bytes):
            blank = not data[data.rfind(b"\n") + 1 :].strip(b" \t\r")
        else:
            blank = not data[data.rfind("\n") + 1 :].strip(" \t\r")
        return lines, torn and not blank

    return _split


def _scan_peeking_one_row(data: bytes | str) -> Any:
    """codec._scan with a damaged suffix proved committed only by a ``turn/end`` in the very next row."""
    lines, torn = sl_codec._split(data)
    if not lines:
        raise SeqlogError(Code.JSONL_HEADER_MISSING, "log has no complete header line")
    header = sl_codec._parse_numbered(lines[0], 1)
    sl_headerline.check_header_line(header)
    events: list[dict[str, Any]] = []
    numbers: list[int] = []
    issue: SeqlogError | None = None
    issue_line: int | None = None
    not_json = False
    committed = offset = len(lines[0]) + 1
    for number, line in enumerate(lines[1:], start=2):
        offset += len(line) + 1
        peek = issue_line is not None and number == issue_line + 1
        try:
            decoded, packed, spans = sl_codec._decode_row(line, number)
        except SeqlogError as faulty:
            if issue is None:
                issue, issue_line, not_json = faulty, number, sl_codec._not_json(line)
            elif peek and not_json and sl_codec._parses_as_turn_end(line):
                raise sl_codec._committed_damage(issue, number) from None
            continue
        first = decoded[0]
        is_turn_end = not packed and first.get("type") == "turn/end"
        if issue is not None:
            if is_turn_end and peek:
                raise sl_codec._committed_damage(issue, number)
            continue
        seq = first.get("seq")
        expected = len(events)
        if not (sl_codec._is_number(seq) and seq == expected):
            message = f"line {number}: event seq {seq!r} is not contiguous; expected {expected}"
            issue, issue_line = SeqlogError(Code.SEQ_NOT_CONTIGUOUS, message), number
            if is_turn_end:
                raise sl_codec._committed_damage(issue, number)
            continue
        if spans is not None:
            decoded = [{**first, "sourceEventSeqs": sl_rows.expand_spans(spans)}]
        events.extend(decoded)
        numbers.extend([number] * len(decoded))
        committed = offset
    sl_headerline.check_seed_length(header, len(events))
    return sl_codec._Scanned(header, events, numbers, torn or issue is not None, issue_line, committed)


@veiled_mutant(
    "proof_only_in_next_row", "INV-JSONL-3", "jsonl", sl_codec, "_scan",
    p.load(p.SESSION_LINE, p.line(p.turn_start(0)), '{"type": "user/mess', p.note_line(1), p.line(p.turn_end(2))),
)
def _proof_only_in_next_row(original: Fn) -> Fn:
    """The reader looks one row past the first faulty row for the ``turn/end`` that proves the damage
    committed: a ``turn/end`` further on is missed, and committed damage is dropped like a torn write."""
    return _scan_peeking_one_row


@veiled_mutant(
    "array_row_read_as_stray", "INV-JSONL-4", "jsonl", sl_codec, "parse_line",
    p.load(p.SESSION_LINE, p.line(p.turn_start(0)), "[1]", p.line(p.turn_end(1))),
)
def _array_row_read_as_stray(original: Fn) -> Fn:
    """The reader takes any JSON value as a row and reads its members loosely, so a row that is an array is
    a stray row without a seq (off the sequence) instead of a row that is not an object (malformed)."""

    def parse_line(line: bytes | str) -> dict[str, Any]:
        try:
            parsed: dict[str, Any] = original(line)
        except sl_codec.LineError as error:
            if str(error) == "is not a JSON object":
                return {}
            raise
        return parsed

    return parse_line


def _lone_surrogate(value: object) -> bool:
    if isinstance(value, str):
        return any(0xD800 <= ord(char) <= 0xDFFF for char in value)
    if isinstance(value, Mapping):
        return any(_lone_surrogate(k) or _lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_lone_surrogate(v) for v in value)
    return False


@veiled_mutant(
    "lone_surrogate_escape_refused", "INV-JSONL-4", "read", sl_codec, "parse_line",
    _read(p.SESSION_LINE, p.line(_note(0, {"text": "\ud83d"}))),
)
def _lone_surrogate_escape_refused(original: Fn) -> Fn:
    """The reader decodes strings into well-formed Unicode and takes an escaped lone surrogate (``\\ud83d``)
    as a line that is not JSON, where ``JSON.parse`` reads it as a string holding that code unit."""

    def parse_line(line: bytes | str) -> dict[str, Any]:
        parsed: dict[str, Any] = original(line)
        if _lone_surrogate(parsed):
            raise sl_codec.LineError("is not valid JSON (a lone surrogate)")
        return parsed

    return parse_line


@veiled_mutant(
    "raw_control_char_in_string_read", "INV-JSONL-4", "jsonl", sl_codec, "parse_line",
    p.load(p.SESSION_LINE, p.line(_note(0, {"text": "a\tb"})).replace("\\t", "\t")),
)
def _raw_control_char_in_string_read(original: Fn) -> Fn:
    """The reader parses rows leniently about control characters, so a raw tab inside a string, which
    ``JSON.parse`` refuses, is read as part of it instead of making the row malformed."""

    def parse_line(line: bytes | str) -> dict[str, Any]:
        try:
            parsed: dict[str, Any] = original(line)
        except sl_codec.LineError:
            text = line if isinstance(line, str) else line.decode("utf-8", "replace")
            try:
                value = json.loads(text, strict=False, parse_constant=sl_codec._reject_constant, parse_int=sl_codec._js_int)
            except (ValueError, RecursionError):
                raise sl_codec.LineError("is not valid JSON") from None
            if not isinstance(value, dict):
                raise
            return value
        return parsed

    return parse_line


def _same_length_row(seq0: int) -> str:
    data = {"turn": 1, "step": 1, "index": 0, "dt": [0, 4, 4], "texts": ["Hel", "lo", "!"]}
    return p.line({"type": "text-chunks", "seq0": seq0, "time0": T + seq0, "data": data})


@veiled_mutant(
    "dt_same_length_accepted", "INV-JSONL-9", "read", sl_rows, "decode_packed_row",
    _read(p.SESSION_LINE, p.line(p.turn_start(0)), p.line(p.step_start(1)), _same_length_row(2)),
)
def _dt_same_length_accepted(original: Fn) -> Fn:
    """A packed row whose ``dt`` has one gap per member (the first taken from ``time0``) is read too, as a
    writer that records every member's gap writes it, where ``dt`` is exactly one shorter than its members."""

    def decode_packed_row(row: Mapping[str, Any], tag: str) -> list[dict[str, Any]]:
        data = row.get("data")
        payload = data.get("args" if tag == "tool-call-chunks" else "texts") if isinstance(data, Mapping) else None
        gaps = data.get("dt") if isinstance(data, Mapping) else None
        time0 = row.get("time0")
        if (
            isinstance(payload, list | tuple)
            and isinstance(gaps, list | tuple)
            and gaps
            and len(gaps) == len(payload)
            and type(time0) is int
            and type(gaps[0]) is int
            and isinstance(data, Mapping)
        ):
            row = {**row, "time0": time0 + gaps[0], "data": {**data, "dt": list(gaps[1:])}}
        events: list[dict[str, Any]] = original(row, tag)
        return events

    return decode_packed_row


@veiled_mutant(
    "range_count_by_entries", "INV-JSONL-10", "read", sl_rows, "decode_seq_ranges",
    _read(p.SESSION_LINE, p.line(p.user(0)), p.line(p.user(1)), p.line(p.user(2, sources=[[0, 5]]))),  # type: ignore[list-item]
)
def _range_count_by_entries(original: Fn) -> Fn:
    """Stored provenance is held to at most ``seq`` entries as written, a range counting as one, instead of
    at most ``seq`` seqs once expanded: a row citing a range longer than its own seq is kept, not faulty."""

    def decode_seq_ranges(value: object, max_entries: int) -> Any:
        if isinstance(value, list | tuple) and len(value) <= max_entries:
            return original(value, MAX_SAFE_INTEGER)
        return original(value, max_entries)

    return decode_seq_ranges


# --- INV-LEGACY: the v0-to-v1 edge --------------------------------------------------------------------


@veiled_mutant(
    "retired_types_refused_as_unknown", "INV-LEGACY-1", "legacy", sl_legacy, "check_refusals",
    p.upgrade(_v0("request/header-delta", 0, {"changes": []})),
)
def _retired_types_refused_as_unknown(original: Fn) -> Fn:
    """The edge knows a v0 type only by its inventory, which leaves the retired types out: a
    ``request/header-delta`` in a v0 log is refused as outside the inventory, not with its own code."""

    def check_refusals(raw_events: Sequence[object]) -> None:
        for raw in raw_events:
            if isinstance(raw, Mapping) and raw.get("type") in sl_legacy.REFUSED_TYPES:
                raise SeqlogError(Code.LEGACY_UNKNOWN_TYPE, f"v0 index {raw.get('seq')}: type {raw.get('type')!r} is unknown")
        original(raw_events)

    return check_refusals


_LATE_TYPES = frozenset({"model/selection", "session-log-deepseek/delivery-accepted", "subagent/model-selection-policy"})


@veiled_mutant(
    "late_types_outside_v0_inventory", "INV-LEGACY-4", "legacy", sl_legacy, "check_refusals",
    p.upgrade(_v0("model/selection", 0, {"provider": "p", "model": "m"})),
)
def _late_types_outside_v0_inventory(original: Fn) -> Fn:
    """The edge's v0 inventory is the baseline release's, without the types released after it
    (``model/selection``, the delivery marker, the model-selection policy), so a v0 log holding one is refused."""

    def check_refusals(raw_events: Sequence[object]) -> None:
        original(raw_events)
        for raw in raw_events:
            if isinstance(raw, Mapping) and raw.get("type") in _LATE_TYPES:
                raise SeqlogError(Code.LEGACY_UNKNOWN_TYPE, f"v0 index {raw.get('seq')}: type {raw.get('type')!r} is unknown")

    return check_refusals


def _legacy_result(seq: int) -> dict[str, Any]:
    data = {"turn": 1, "step": 1, "callId": "c1", "content": [{"type": "text", "text": "no such file"}], "isError": True,
            "error": {"name": "ToolError", "code": "ENOENT"}}
    return _v0("tool/result", seq, data, surfaceOp="append")


@veiled_mutant(
    "legacy_result_error_dropped", "INV-LEGACY-5", "legacy", sl_legacy, "_normalise_data",
    p.upgrade(p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]), p.tool_call(3, "c1"), _legacy_result(4)),
)
def _legacy_result_error_dropped(original: Fn) -> Fn:
    """N4 builds a pre-identity result's message from ``callId``, ``content`` and ``isError`` and keeps only
    ``turn`` and ``step`` beside it, so the result's ``error`` record is lost in the conversion."""

    def _normalise_data(type_: str, data: Mapping[str, Any], session_id: str, seq: object) -> object:
        out = original(type_, data, session_id, seq)
        if type_ == "tool/result" and "message" not in data and isinstance(out, Mapping) and "message" in out:
            return {k: v for k, v in out.items() if k != "error"}
        return out

    return _normalise_data


@veiled_mutant(
    "prune_given_group_id", "INV-LEGACY-5", "legacy", _Edge, "_compaction",
    p.upgrade(p.user(0), _v0("compact/start", 1, {"turn": None}),
              _v0("compact/prune", 2, {"shadowedRange": {"start": 0, "end": 0}, "shadowedSeqs": [0], "shadowedTokenCount": 40})),
)
def _prune_given_group_id(original: Fn) -> Fn:
    """N9 gives the open group's id to every compaction event of the group without one, a prune too, where
    only its summary, end and checkpoint take it (a prune has no ``compactionId``)."""

    def _compaction(self: _Edge, type_: str, data: Mapping[str, Any], seq: int) -> Mapping[str, Any]:
        group = self.group
        out: Mapping[str, Any] = original(self, type_, data, seq)
        if type_ == "compaction/prune" and group is not None and "compactionId" not in out:
            return {**out, "compactionId": group}
        return out

    return _compaction


def _validate_after_splice(session: Session, raw: object, splice: Event) -> AppendPlan:
    """Session.validate with ``splice`` read as the event before the candidate."""
    event = decode_event(raw)
    expected = len(session.events)
    if event.seq != expected:
        raise SeqlogError(Code.SEQ_NOT_CONTIGUOUS, f"event seq {event.seq} is not contiguous; expected {expected}")
    vocabulary_check(event)
    check_payload(event)
    check_data(event)
    plan = session.surface.validate_next(event)
    delta = pairing_delta(event) if plan.touches_surface else 0
    brackets = advance(abandon_for_restart(session.brackets, event, splice), event)
    return AppendPlan(event, plan, brackets, delta, session._relations.plan(event, session.events, session.surface))


@veiled_mutant(
    "restart_after_earlier_splice", "INV-LEGACY-6", "legacy", Session, "validate",
    p.upgrade(p.turn_start(0), _SPLICE, _v0("plan/mode", 2, {"active": True}), p.turn_start(3, turn=2)),
)
def _restart_after_earlier_splice(original: Fn) -> Fn:
    """The edge admits the interrupted-turn restart after a next-turn splice anywhere in the open turn, not
    only right before the ``turn/start``: an event between the splice and the new turn does not stop it."""

    def validate(self: Session, raw: object) -> Any:
        if not (self._legacy_restart and len(self.events)) or not isinstance(raw, Mapping) or raw.get("type") != "turn/start":
            return original(self, raw)
        splice = None
        for earlier in reversed(self.events):
            if earlier.type == "agent/inbox/spliced":
                splice = earlier
                break
            if earlier.type in ("turn/start", "turn/end"):
                break
        if splice is None or splice is self.events[-1]:
            return original(self, raw)
        return _validate_after_splice(self, raw, splice)

    return validate


@veiled_mutant(
    "restart_turn_number_unchecked", "INV-LEGACY-6", "legacy", sl_trace, "abandon_for_restart",
    p.upgrade(p.turn_start(0), _SPLICE, p.turn_start(2, turn=3)),
)
def _restart_turn_number_unchecked(original: Fn) -> Fn:
    """The interrupted-turn restart is recognised by the splice before it and the turn open without a step;
    the new turn's number is left to the numbering rule, so a restart naming another turn abandons the open one."""

    def abandon_for_restart(state: Brackets, event: Event, before: Event | None) -> Brackets:
        if event.type == "turn/start" and state.open_turn is not None and isinstance(event.data, Mapping):
            event = dataclasses.replace(event, data=FrozenObject({**event.data, "turn": state.open_turn + 1}))
        after: Brackets = original(state, event, before)
        return after

    return abandon_for_restart


@veiled_mutant(
    "legacy_error_step_zero_refused", "INV-LEGACY-9", "legacy", sl_legacy, "_turn_end_reason",
    p.upgrade(p.turn_start(0), _v0("turn/end", 1, {"turn": 1, "reason": {"kind": "error", "step": 0, "message": "boom"}})),
)
def _legacy_error_step_zero_refused(original: Fn) -> Fn:
    """A legacy error reason's ``step`` is read as a step number (from 1), where it is any non-negative
    integer: a v0 turn that failed before its first step, ``step: 0``, is refused as a malformed source."""

    def _turn_end_reason(reason: Mapping[str, Any], seq: int) -> Mapping[str, Any]:
        if reason.get("kind") == "error" and "error" not in reason and reason.get("step") == 0:
            raise SeqlogError(Code.LEGACY_SOURCE_INVALID, f"v0 index {seq}: turn/end error step must be at least 1")
        converted: Mapping[str, Any] = original(reason, seq)
        return converted

    return _turn_end_reason


@veiled_mutant(
    "steering_turn_zero_refused", "INV-LEGACY-9", "legacy", sl_legacy, "_steering_data",
    p.upgrade(_v0("steering/message", 0, {"turn": 0, "content": [{"type": "text", "text": "use tabs"}],
                                          "source": {"kind": "user"}}, surfaceOp="append")),
)
def _steering_turn_zero_refused(original: Fn) -> Fn:
    """A steering message's ``turn`` is read as a turn number (from 1), where it is any non-negative integer:
    steering queued before the first turn, ``turn: 0``, is refused as a malformed source."""

    def _steering_data(data: Mapping[str, Any], session_id: str, seq: int) -> Mapping[str, Any]:
        if data.get("turn") == 0 and not isinstance(data.get("turn"), bool):
            raise SeqlogError(Code.LEGACY_SOURCE_INVALID, f"v0 index {seq}: steering/message turn must be at least 1")
        converted: Mapping[str, Any] = original(data, session_id, seq)
        return converted

    return _steering_data
