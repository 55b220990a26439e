"""The fifth half of the catalogue, edges: request headers (INV-HDR), the JSONL codec and its reader
(INV-JSONL), and the v0-to-v1 edge (INV-LEGACY).

Written from the documents (``invariants.md``, the protocol, the on-disk format), the reference model
and seqlog's source alone, without reading the conformance suite or its tests, and never run against
the suite before the measurement that first judges them.  Each mutant is one decision a port's author
could get wrong while reading the same rules: a header member accepted in a friendlier form, a pin
judged by presence, equality by the host language's ``==``, a header decision with the wrong flag, a
reader stricter or looser than the released one about lines, seqs and packed rows, a stored form
written in a shape its own reader refuses, one normalisation of the v0 edge done slightly wrong.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import seqlog.codec as sl_codec
import seqlog.event as sl_event
import seqlog.header as sl_header
import seqlog.headerline as sl_headerline
import seqlog.legacy as sl_legacy
import seqlog.payloads as sl_payloads
import seqlog.rows as sl_rows
import seqlog.trace as sl_trace
from killrate import probes as p
from killrate.mutants import Fn, sealed_mutant
from seqlog.codec import LoadedLog, ReadLog
from seqlog.errors import Code, SeqlogError
from seqlog.event import LEGACY_TYPES, Event
from seqlog.header import HeaderDecision, InstanceFacts
from seqlog.jsonvalue import FrozenObject
from seqlog.legacy import REFUSED_TYPES, V0_INVENTORY
from seqlog.payloads import Problem
from seqlog.trace import Brackets

T = p.T


# --- probe pieces -------------------------------------------------------------------------------------


def _header_line(**members: object) -> str:
    """A v1 session header line with ``members`` added."""
    return p.line({"type": "session", "version": 1, "id": "s", "createdAt": 0, "delegationDepth": 0, **members})


_V0_LINE = p.line({"type": "session", "version": 0, "id": "s", "createdAt": 0, "delegationDepth": 0})


def _read(*lines: str) -> p.Probe:
    """``read`` of a stored log made of ``lines``."""
    return ({"op": "read", "jsonl": "\n".join(lines) + "\n"},)


def _headed(seq: int, header: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """Turn 1 open, then a snapshot of ``header`` at ``seq`` (the turn's start sits just before it)."""
    return (p.turn_start(seq - 1), p.header_event(seq, header))


def _decision(events: Sequence[dict[str, Any]], header: dict[str, Any], **instance: bool) -> p.Probe:
    """One ``header_decision`` of a later request (``instance`` overrides the loop instance's facts)."""
    facts = {"first_request": False, "begins_series": False, "replaced_since_last_request": False, **instance}
    return ({"op": "header_decision", "events": list(events), "header": header, "instance": facts},)


def _v0(type_: str, seq: int, data: object, **envelope: Any) -> dict[str, Any]:
    return {"type": type_, "seq": seq, "time": T, "data": data, **envelope}


def _tool(**parameters: Any) -> dict[str, Any]:
    return {"name": "read_file", "description": "Read a file.", "parameters": parameters or {"type": "object"}}


_V0_HEADER = {"header": {"config": {"provider": "p", "model": "m"}}, "reason": "initial"}


def _v0_retry(seq: int, attempt: int, **more: Any) -> dict[str, Any]:
    data = {"turn": 1, "step": 1, "provider": "p", "policyKey": "default", "retry": attempt, "delayMs": 0,
            "failure": {"message": "overloaded", "code": "OVERLOADED"}, "mode": "always", **more}
    return _v0("llm/retry", seq, data)


def _v0_summary(seq: int, **more: Any) -> dict[str, Any]:
    data = {"summary": [{"type": "text", "text": "so far"}], "shadowedRange": {"start": 0, "end": 1}, "shadowedSeqs": [0, 1],
            "shadowedTokenCount": 1, "provider": "p", "model": "m", **more}
    return _v0("compaction/summary", seq, data)


def _v0_user(seq: int) -> dict[str, Any]:
    return _v0("user/message", seq, p.user(seq)["data"], surfaceOp="append")


# --- INV-HDR: request headers -------------------------------------------------------------------------


@sealed_mutant(
    "tool_parameters_any_json", "INV-HDR-1", "header", sl_payloads, "payload_problem",
    p.decision([], {**p.HEADER, "tools": [{**_tool(), "parameters": "{\"type\": \"object\"}"}]}, first=True, series=False),
)
def _tool_parameters_any_json(original: Fn) -> Fn:
    """A header tool's ``parameters`` are taken as an opaque JSON Schema of any type: a schema sent as a string passes."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        header = data.get("header") if event_type == "request/header" and isinstance(data, Mapping) else None
        tools = header.get("tools") if isinstance(header, Mapping) else None
        if isinstance(data, Mapping) and isinstance(header, Mapping) and isinstance(tools, tuple | list):
            objects = [{**tool, "parameters": {}} if isinstance(tool, Mapping) and "parameters" in tool else tool
                       for tool in tools]
            data = {**data, "header": {**header, "tools": objects}}
        return original(event_type, data, seq, generation)  # type: ignore[no-any-return]

    return payload_problem


@sealed_mutant(
    "stop_string_accepted", "INV-HDR-1", "header", sl_payloads, "payload_problem",
    p.decision([], {"config": {"provider": "p", "model": "m", "stop": "END"}}, first=True, series=False),
)
def _stop_string_accepted(original: Fn) -> Fn:
    """A config's ``stop`` may be one string as well as an array of strings (as provider APIs take it)."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        header = data.get("header") if event_type == "request/header" and isinstance(data, Mapping) else None
        config = header.get("config") if isinstance(header, Mapping) else None
        one_stop = isinstance(config, Mapping) and isinstance(config.get("stop"), str)
        if isinstance(data, Mapping) and isinstance(header, Mapping) and isinstance(config, Mapping) and one_stop:
            data = {**data, "header": {**header, "config": {**config, "stop": [config["stop"]]}}}
        return original(event_type, data, seq, generation)  # type: ignore[no-any-return]

    return payload_problem


@sealed_mutant(
    "empty_provider_pinned", "INV-HDR-2", "header", sl_header, "check_header_shape",
    p.decision([], {"config": {"provider": "", "model": "m"}}, first=True, series=False),
)
def _empty_provider_pinned(original: Fn) -> Fn:
    """The pin check asks only that ``provider`` and ``model`` be present: an empty provider is pinned, and fails later."""

    def check_header_shape(header: object) -> None:
        config = header.get("config") if isinstance(header, Mapping) else None
        if isinstance(header, Mapping) and isinstance(config, Mapping) and config.get("provider") == "":
            config = {**config, "provider": "(present)"}
            original({**header, "config": config})
            return
        original(header)

    return check_header_shape


_STRICT = {**p.HEADER, "tools": [_tool(type="object", strict=True)]}
_STRICT_AS_ONE = {**p.HEADER, "tools": [_tool(type="object", strict=1)]}


@sealed_mutant(
    "header_equality_by_host_equality", "INV-HDR-7", "header", sl_header, "header_equals",
    _decision(_headed(1, _STRICT), _STRICT_AS_ONE),
)
def _header_equality_by_host_equality(original: Fn) -> Fn:
    """Header equality compares canonical forms with the language's ``==``, so ``true`` in a tool schema equals ``1``."""

    def header_equals(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
        pick_a = {k: v for k, v in a.items() if not sl_header.dropped_in_canonical(k, v)}
        pick_b = {k: v for k, v in b.items() if not sl_header.dropped_in_canonical(k, v)}
        return _plain(pick_a) == _plain(pick_b)

    return header_equals


def _plain(value: object) -> object:
    """``value`` with arrays as lists, so that ``==`` compares members and nothing else."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


@sealed_mutant(
    "replacement_change_not_flagged", "INV-HDR-10", "header", sl_header, "decide_request_header",
    _decision(_headed(1, p.HEADER), p.HEADER_B, replaced_since_last_request=True),
)
def _replacement_change_not_flagged(original: Fn) -> Fn:
    """A ``change`` is flagged ``startsSeries`` only when the caller declares a series, not after a surface replacement."""

    def decide_request_header(
        latest: Mapping[str, Any] | None, assembled: Mapping[str, Any], facts: InstanceFacts
    ) -> HeaderDecision | None:
        decision: HeaderDecision | None = original(latest, assembled, facts)
        if decision is not None and decision.reason is sl_header.Reason.CHANGE and not facts.begins_series:
            return HeaderDecision(decision.reason)
        return decision

    return decide_request_header


@sealed_mutant(
    "assembled_header_must_be_canonical", "INV-HDR-12", "header", sl_header, "check_assembled_header",
    p.decision([], {**p.HEADER, "system": ""}, first=True, series=False),
)
def _assembled_header_must_be_canonical(original: Fn) -> Fn:
    """A request's header is held to canonical form, though the writer makes its snapshot so: an empty system is refused."""

    def check_assembled_header(header: object) -> None:
        original(header)
        if isinstance(header, Mapping) and not sl_header.is_canonical(header):
            raise SeqlogError(Code.HEADER_NOT_CANONICAL, "request header is not canonical")

    return check_assembled_header


@sealed_mutant(
    "fallback_checked_after_members", "INV-LEGACY-2", "session", sl_header, "check_header_event",
    p.appends(p.turn_start(0), p.header_event(1, p.HEADER, reason="fallback", delta=[])),
)
def _fallback_checked_after_members(original: Fn) -> Fn:
    """A snapshot's member set is checked before its reason: a ``fallback`` snapshot with a delta member is HEADER_INVALID."""

    def check_header_event(data: object) -> None:
        if isinstance(data, Mapping) and not sl_header.HEADER_EVENT_KEYS.issuperset(data):
            raise SeqlogError(Code.HEADER_INVALID, "request/header data must be {header, reason, startsSeries?}")
        original(data)

    return check_header_event


# --- INV-JSONL: the stored form and its reader ----------------------------------------------------------


@sealed_mutant(
    "empty_session_id_refused", "INV-JSONL-1", "jsonl", sl_headerline, "check_header_line",
    p.load(_header_line(id="")),
)
def _empty_session_id_refused(original: Fn) -> Fn:
    """The header line's ``id`` must be a non-empty string, where the released codec takes any string."""

    def check_header_line(header: Mapping[str, Any]) -> None:
        original(header)
        if header.get("id") == "":
            raise SeqlogError(Code.JSONL_HEADER_INVALID, "line 1: session header id must not be empty")

    return check_header_line


@sealed_mutant(
    "unterminated_header_read", "INV-JSONL-1", "jsonl", sl_codec, "_split",
    p.load(p.SESSION_LINE, final_newline=False),
)
def _unterminated_header_read(original: Fn) -> Fn:
    """A log that is only a header line without its newline is read as a log with no events, not refused for a missing header."""

    def _split(data: bytes | str) -> tuple[list[Any], bool]:
        lines, torn = original(data)
        if not lines and torn:
            return [data], False
        return lines, torn

    return _split


def _ranged(seqs: Sequence[int]) -> list[object]:
    """``seqs`` with every run of two or more consecutive seqs written as a ``[start, end]`` range."""
    out: list[object] = []
    index = 0
    while index < len(seqs):
        end = index
        while end + 1 < len(seqs) and seqs[end + 1] == seqs[end] + 1:
            end += 1
        out.append([seqs[index], seqs[end]] if end > index else seqs[index])
        index = end + 1
    return out


@sealed_mutant(
    "unordered_provenance_range_encoded", "INV-JSONL-10", "jsonl", sl_event, "encode_event",
    ({"op": "reset"}, *({"op": "append", "event": e} for e in (p.user(0), p.user(1), p.user(2), p.user(3, sources=[2, 0, 1]))),
     {"op": "save"}),
)
def _unordered_provenance_range_encoded(original: Fn) -> Fn:
    """The writer range-encodes runs of consecutive seqs also in provenance not increasing as a whole, which readers refuse."""

    def encode_event(event: Event) -> dict[str, object]:
        out: dict[str, object] = original(event)
        sources = event.source_event_seqs
        if sources and any(later == earlier + 1 for earlier, later in itertools.pairwise(sources)):
            out["sourceEventSeqs"] = _ranged(sources)
        return out

    return encode_event


@sealed_mutant(
    "faulty_turn_end_not_its_own_proof", "INV-JSONL-3", "jsonl", sl_codec, "_scan",
    p.load(p.SESSION_LINE, p.line(p.turn_start(0)), p.line(p.turn_end(5))),
)
def _faulty_turn_end_not_its_own_proof(original: Fn) -> Fn:
    """Only a ``turn/end`` after the damage proves it committed: an off-sequence ``turn/end`` row is dropped, not refused."""

    def _scan(data: bytes | str) -> Any:
        while True:
            try:
                return original(data)
            except SeqlogError as error:
                match = re.match(r"line (\d+): event seq .*; line (\d+) is a later turn/end", error.message)
                if error.code is not Code.SEQ_NOT_CONTIGUOUS or match is None or match[1] != match[2]:
                    raise
                data = _replace_line(data, int(match[1]))

    return _scan


def _replace_line(data: bytes | str, number: int) -> bytes | str:
    """``data`` with line ``number`` replaced by a stray ``{}`` row (off the sequence, and no ``turn/end``)."""
    if isinstance(data, bytes):
        rows = data.split(b"\n")
        rows[number - 1] = b"{}"
        return b"\n".join(rows)
    lines = data.split("\n")
    lines[number - 1] = "{}"
    return "\n".join(lines)


@sealed_mutant(
    "blank_line_skipped", "INV-JSONL-4", "jsonl", sl_codec, "_split",
    p.load(p.SESSION_LINE, p.line(p.turn_start(0)), "", p.line(p.turn_end(1))),
)
def _blank_line_skipped(original: Fn) -> Fn:
    """An empty line is skipped as a JSONL reader's usual courtesy, though ``JSON.parse("")`` fails: it is a malformed row."""

    def _split(data: bytes | str) -> tuple[list[Any], bool]:
        lines, torn = original(data)
        return [line for line in lines if len(line) > 0], torn

    return _split


_UNICODE_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
"""The line boundaries ``str.splitlines`` knows besides ``\\n`` and ``\\r``."""


def _separated_text(seq: int) -> str:
    """The stored line of a user message whose text holds a raw U+2028 (JSON allows it unescaped in a string)."""
    event = p.user(seq)
    event["data"]["content"] = [{"type": "text", "text": "first\u2028second"}]
    return json.dumps(event, separators=(",", ":"), ensure_ascii=False)


@sealed_mutant(
    "split_at_unicode_line_breaks", "INV-JSONL-4", "jsonl", sl_codec, "_split",
    p.load(p.SESSION_LINE, _separated_text(0)),
)
def _split_at_unicode_line_breaks(original: Fn) -> Fn:
    """The text is split into lines the language's way (``splitlines``), so a raw U+2028 inside a string cuts its row in two."""

    def _split(data: bytes | str) -> tuple[list[Any], bool]:
        lines, torn = original(data)
        if isinstance(data, str):
            lines = [piece for line in lines for piece in _UNICODE_BREAKS.split(line)]
        return lines, torn

    return _split


@sealed_mutant(
    "integral_float_row_seq_off_sequence", "INV-JSONL-5", "jsonl", sl_codec, "_is_number",
    p.load(p.SESSION_LINE, p.line(p.turn_start(0)), p.line({**p.user(1), "seq": 1.0}), p.line(p.turn_end(2))),
)
def _integral_float_row_seq_off_sequence(original: Fn) -> Fn:
    """The reader keeps the sequence only with an integer-typed seq: a row at ``1.0``, the same number as 1, is off it."""

    def _is_number(value: object) -> bool:
        return type(value) is int

    return _is_number


@sealed_mutant(
    "unknown_row_dropped_as_damage", "INV-JSONL-6", "jsonl", sl_codec, "_decode_row",
    p.load(p.SESSION_LINE, p.line(p.turn_start(0)), p.line(p.event("x/later", 1, {}))),
)
def _unknown_row_dropped_as_damage(original: Fn) -> Fn:
    """A row of an unknown type not marked ignorable is taken as damage (dropped with the rest when uncommitted), not refused."""

    def _decode_row(line: bytes | str, number: int) -> tuple[list[dict[str, Any]], bool, Any]:
        decoded, packed, spans = original(line, number)
        first = decoded[0]
        kind = first.get("type")
        unknown = isinstance(kind, str) and kind not in V0_INVENTORY and kind not in LEGACY_TYPES
        if not packed and unknown and "ignorable" not in first:
            raise SeqlogError(Code.JSONL_MALFORMED_LINE, f"line {number}: unknown event type {kind!r}")
        return decoded, packed, spans

    return _decode_row


@sealed_mutant(
    "v0_log_read_as_v1", "INV-JSONL-7", "jsonl", sl_codec, "_scan",
    p.load(_V0_LINE, p.line(_v0("compact/start", 0, {"compactionId": "k1", "turn": None}))),
)
def _v0_log_read_as_v1(original: Fn) -> Fn:
    """The reader takes version 0 as an older spelling of the format it reads, and reads a v0 log as v1 without the edge."""

    def _scan(data: bytes | str) -> Any:
        scanned = original(data)
        if scanned.header.get("version") == 0:
            scanned.header = {**scanned.header, "version": 1}
        return scanned

    return _scan


@sealed_mutant(
    "v0_load_left_unrepaired", "INV-JSONL-8", "jsonl", sl_codec, "_load",
    p.load(_V0_LINE, p.line(_v0("turn/start", 0, {"turn": 1}))),
)
def _v0_load_left_unrepaired(original: Fn) -> Fn:
    """Loading repairs a crash-orphaned turn of a v1 log only: a v0 log read through the edge keeps its open turn."""

    def _load(read: ReadLog) -> LoadedLog:
        if read.version == 0:
            return LoadedLog(read.header, read.session, read.version, read.dropped_torn_tail, (), read.dropped_line,
                             read.committed_length)
        return original(read)  # type: ignore[no-any-return]

    return _load


_TEXT_ROW = {"type": "text-chunks", "seq0": 2, "time0": T,
             "data": {"turn": 1, "step": 1, "index": 0, "dt": [1], "texts": ["He", "llo"]}}
_TOOL_ROW = {"type": "tool-call-chunks", "seq0": 2, "time0": T,
             "data": {"turn": 1, "step": 1, "index": 0, "id": "c1", "name": "read_file", "dt": [1, 1], "args": ["{", "}", ""]}}


@sealed_mutant(
    "packed_index_per_member", "INV-JSONL-9", "read", sl_rows, "decode_packed_row",
    _read(p.SESSION_LINE, p.line(p.turn_start(0)), p.line(p.step_start(1)), p.line(_TEXT_ROW)),
)
def _packed_index_per_member(original: Fn) -> Fn:
    """A packed row's ``index`` is read as the first member's, counting up by one per member, not as the block index all share."""

    def decode_packed_row(row: Mapping[str, Any], tag: str) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = original(row, tag)
        for k, event in enumerate(events):
            chunk = event["data"]["chunk"]
            event["data"]["chunk"] = {**chunk, "index": chunk["index"] + k}
        return events

    return decode_packed_row


@sealed_mutant(
    "packed_name_on_first_member_only", "INV-JSONL-9", "read", sl_rows, "decode_packed_row",
    _read(p.SESSION_LINE, p.line(p.turn_start(0)), p.line(p.step_start(1)), p.line(_TOOL_ROW)),
)
def _packed_name_on_first_member_only(original: Fn) -> Fn:
    """A tool-call row's ``name`` goes to its first member only, as a stream sends it once, not to every member it stands for."""

    def decode_packed_row(row: Mapping[str, Any], tag: str) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = original(row, tag)
        for event in events[1:]:
            event["data"]["chunk"] = {k: v for k, v in event["data"]["chunk"].items() if k != "name"}
        return events

    return decode_packed_row


# --- INV-LEGACY: the v0-to-v1 edge ----------------------------------------------------------------------


@sealed_mutant(
    "retired_types_scanned_first", "INV-LEGACY-1", "legacy", sl_legacy, "upgrade_with_session",
    p.upgrade(_v0("turn/start", 0, "one"), _v0("request/header-delta", 1, {"delta": {}})),
)
def _retired_types_scanned_first(original: Fn) -> Fn:
    """The edge scans the whole log for retired types before reading it in order: a later header delta beats an earlier fault."""

    def upgrade_with_session(log: sl_legacy.StoredLog) -> Any:
        if log.header.get("version") == 0:
            for index, raw in enumerate(log.events):
                kind = raw.get("type") if isinstance(raw, Mapping) else None
                if isinstance(kind, str) and kind in REFUSED_TYPES:
                    raise SeqlogError(REFUSED_TYPES[kind], f"v0 index {index}: legacy {kind} is not convertible")
        return original(log)

    return upgrade_with_session


@sealed_mutant(
    "v0_compaction_names_unknown", "INV-LEGACY-4", "legacy", sl_legacy, "check_refusals",
    p.upgrade(_v0("compaction/start", 0, {"compactionId": "k1", "turn": None})),
)
def _v0_compaction_names_unknown(original: Fn) -> Fn:
    """The v0 inventory has the ``compact/*`` names in place of ``compaction/*``: a v0 log with the later names is refused."""

    def check_refusals(raw_events: Sequence[object]) -> None:
        original(raw_events)
        for raw in raw_events:
            kind = raw.get("type") if isinstance(raw, Mapping) else None
            if isinstance(kind, str) and kind.startswith("compaction/"):
                raise SeqlogError(Code.LEGACY_UNKNOWN_TYPE, f"v0 type {kind!r} is outside the v0 inventory")

    return check_refusals


@sealed_mutant(
    "role_only_user_message_minted", "INV-LEGACY-5", "legacy", sl_legacy, "_normalise_data",
    p.upgrade(_v0("user/message", 0, {"role": "user", "content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}},
                  surfaceOp="append")),
)
def _role_only_user_message_minted(original: Fn) -> Fn:
    """N4 mints an id for any user message without one, also one that has a ``role``, which the released edge leaves alone."""

    def _normalise_data(type_: str, data: Mapping[str, Any], session_id: str, seq: object) -> object:
        if type_ == "user/message" and "id" not in data and "message" not in data and {"content", "source"} <= data.keys():
            return {**data, "id": sl_legacy._legacy_id(session_id, seq), "role": "user"}
        return original(type_, data, session_id, seq)

    return _normalise_data


@sealed_mutant(
    "compact_prune_not_renamed", "INV-LEGACY-5", "legacy", sl_legacy._Edge, "convert",
    p.upgrade(_v0_user(0), _v0_user(1),
              _v0("compact/prune", 2, {"shadowedRange": {"start": 0, "end": 1}, "shadowedSeqs": [0, 1],
                                       "shadowedTokenCount": 1})),
)
def _compact_prune_not_renamed(original: Fn) -> Fn:
    """N7 renames ``compact/start``, ``-summary`` and ``-end`` but forgets ``compact/prune``, which stays in the v1 log."""

    def convert(self: Any, raw: object, index: int) -> object:
        converted = original(self, raw, index)
        if isinstance(raw, Mapping) and raw.get("type") == "compact/prune" and isinstance(converted, Mapping):
            return {**converted, "type": "compact/prune"}
        return converted

    return convert


@sealed_mutant(
    "given_retry_id_not_inherited", "INV-LEGACY-5", "legacy", sl_legacy._Edge, "_retry",
    p.upgrade(_v0("turn/start", 0, {"turn": 1}), _v0("step/start", 1, {"turn": 1, "step": 1}),
              _v0("request/header", 2, _V0_HEADER), _v0_retry(3, 1, retryId="r1"), _v0_retry(4, 2)),
)
def _given_retry_id_not_inherited(original: Fn) -> Fn:
    """N8 remembers only the ids it mints: a retry without an id after its chain's given ``retryId`` gets a new one."""

    def _retry(self: Any, data: Mapping[str, Any], seq: int) -> Mapping[str, Any]:
        if "retryId" in data:
            return data
        return original(self, data, seq)  # type: ignore[no-any-return]

    return _retry


@sealed_mutant(
    "given_compaction_id_not_propagated", "INV-LEGACY-5", "legacy", sl_legacy._Edge, "_compaction",
    p.upgrade(_v0_user(0), _v0_user(1), _v0("compaction/start", 2, {"compactionId": "k1", "turn": None}), _v0_summary(3),
              _v0("compaction/end", 4, {"turn": None})),
)
def _given_compaction_id_not_propagated(original: Fn) -> Fn:
    """N9 opens a group only for a start whose id it mints: the summary and end of a start with its own id get none."""

    def _compaction(self: Any, type_: str, data: Mapping[str, Any], seq: int) -> Mapping[str, Any]:
        out: Mapping[str, Any] = original(self, type_, data, seq)
        if type_ == "compaction/start" and "compactionId" in data:
            self.group = None
        return out

    return _compaction


def _splice(seq: int, target: str) -> dict[str, Any]:
    inserted = [{"id": "queued", "role": "user", "content": [{"type": "text", "text": "and then?"}], "source": {"kind": "user"}}]
    return _v0("agent/inbox/spliced", seq, {"target": target, "start": 0, "inserted": inserted})


@sealed_mutant(
    "restart_after_next_step_splice", "INV-LEGACY-6", "legacy", sl_trace, "abandon_for_restart",
    p.upgrade(_v0("turn/start", 0, {"turn": 1}), _splice(1, "next-step"), _v0("turn/start", 2, {"turn": 2})),
)
def _restart_after_next_step_splice(original: Fn) -> Fn:
    """The interrupted-turn restart is admitted after any inbox splice, one for the next step as well as for the next turn."""

    def abandon_for_restart(state: Brackets, event: Event, before: Event | None) -> Brackets:
        data = before.data if before is not None and isinstance(before.data, Mapping) else None
        if before is not None and before.type == "agent/inbox/spliced" and data is not None and data.get("target") == "next-step":
            before = Event(before.type, before.seq, before.time, FrozenObject({**data, "target": "next-turn"}))
        return original(state, event, before)  # type: ignore[no-any-return]

    return abandon_for_restart


@sealed_mutant(
    "legacy_error_step_kept", "INV-LEGACY-8", "legacy", sl_legacy, "_turn_end_reason",
    p.upgrade(_v0("turn/start", 0, {"turn": 1}),
              _v0("turn/end", 1, {"turn": 1, "reason": {"kind": "error", "step": 0, "message": "boom", "code": "E"}})),
)
def _legacy_error_step_kept(original: Fn) -> Fn:
    """N2 gives a legacy ``error`` reason its ``error`` record but keeps the ``step`` it no longer needs beside it."""

    def _turn_end_reason(reason: Mapping[str, Any], seq: int) -> Mapping[str, Any]:
        converted: Mapping[str, Any] = original(reason, seq)
        if converted is not reason and converted.get("kind") == "error" and "step" in reason:
            return {**converted, "step": reason["step"]}
        return converted

    return _turn_end_reason


@sealed_mutant(
    "bare_reason_extras_dropped", "INV-LEGACY-9", "legacy", sl_legacy, "_turn_end_reason",
    p.upgrade(_v0("turn/start", 0, {"turn": 1}),
              _v0("turn/end", 1, {"turn": 1, "reason": {"kind": "completed", "summary": "done"}})),
)
def _bare_reason_extras_dropped(original: Fn) -> Fn:
    """N2 keeps only the ``kind`` of a bare reason (``completed``, ``blocked``, …) instead of refusing one with more members."""

    def _turn_end_reason(reason: Mapping[str, Any], seq: int) -> Mapping[str, Any]:
        if reason.get("kind") in sl_legacy.BARE_REASONS:
            reason = {"kind": reason["kind"]}
        return original(reason, seq)  # type: ignore[no-any-return]

    return _turn_end_reason


@sealed_mutant(
    "failure_code_defaulted", "INV-LEGACY-9", "legacy", sl_legacy, "_turn_end_reason",
    p.upgrade(_v0("turn/start", 0, {"turn": 1}),
              _v0("turn/end", 1, {"turn": 1, "reason": {"kind": "error", "step": 0, "failure": {"message": "boom"}}})),
)
def _failure_code_defaulted(original: Fn) -> Fn:
    """N2 gives a legacy failure record without ``code`` the code ``UNKNOWN``, as for the message form, instead of refusing it."""

    def _turn_end_reason(reason: Mapping[str, Any], seq: int) -> Mapping[str, Any]:
        failure = reason.get("failure") if reason.get("kind") == "error" else None
        if isinstance(failure, Mapping) and "code" not in failure:
            reason = {**reason, "failure": {**failure, "code": "UNKNOWN"}}
        return original(reason, seq)  # type: ignore[no-any-return]

    return _turn_end_reason
