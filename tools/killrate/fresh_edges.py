"""The third half of the catalogue, edges: request headers (INV-HDR), the JSONL codec, its reader and
the durable store (INV-JSONL), and the v0-to-v1 edge (INV-LEGACY).

Written from the invariant list (``invariants.md``), the on-disk format, the reference model and
seqlog's source alone, before any suite change aimed at them.  Each mutant is one decision a port's
author could get wrong while reading the same rules: a bound taken as exclusive, a member made
optional or a blank value taken for an empty one, a reader stricter or looser than the released one,
a number written with fewer digits, one normalisation of the v0 edge done slightly wrong.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import orjson

import seqlog.codec as sl_codec
import seqlog.header as sl_header
import seqlog.headerline as sl_headerline
import seqlog.legacy as sl_legacy
import seqlog.payloads as sl_payloads
import seqlog.rows as sl_rows
import seqlog.trace as sl_trace
from killrate import probes as p
from killrate.mutants import Fn, fresh_mutant
from seqlog.codec import LineError, LoadedLog, ReadLog
from seqlog.errors import Code, SeqlogError
from seqlog.event import Event
from seqlog.header import HeaderDecision, InstanceFacts, Reason
from seqlog.jsonvalue import FrozenObject, as_object, freeze, is_nonempty_string, is_safe_natural
from seqlog.payloads import Problem
from seqlog.rows import MIN_RUN, RowError, SeqSpans
from seqlog.store import SessionStore
from seqlog.trace import Brackets

T = p.T


# --- probe pieces -------------------------------------------------------------------------------------


def _header_line(**members: object) -> str:
    """A v1 session header line with ``members`` added."""
    return p.line({"type": "session", "version": 1, "id": "s", "createdAt": 0, "delegationDepth": 0, **members})


def _read(*lines: str, final_newline: bool = True) -> p.Probe:
    """``read`` of a stored log made of ``lines``."""
    return ({"op": "read", "jsonl": "\n".join(lines) + ("\n" if final_newline else "")},)


def _headed(seq: int, header: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """Turn 1 open, then a snapshot of ``header`` at ``seq`` (the turn's start sits just before it)."""
    return (p.turn_start(seq - 1), p.header_event(seq, header))


def _v0(type_: str, seq: int, data: dict[str, Any], **envelope: Any) -> dict[str, Any]:
    return {"type": type_, "seq": seq, "time": T, "data": data, **envelope}


def _v0_tool_result(seq: int, op: Any, **envelope: Any) -> dict[str, Any]:
    """A pre-identity ``tool/result`` answering ``c1``."""
    data = {"turn": 1, "step": 1, "callId": "c1", "content": [{"type": "text", "text": "out"}], "isError": False}
    return _v0("tool/result", seq, data, surfaceOp=op, **envelope)


def _v0_retry(seq: int, attempt: int) -> dict[str, Any]:
    """A v0 ``llm/retry`` without ``retryId``."""
    data = {"turn": 1, "step": 1, "provider": "p", "policyKey": "default", "retry": attempt, "delayMs": 0,
            "failure": {"message": "overloaded", "code": "OVERLOADED"}, "mode": "always"}
    return _v0("llm/retry", seq, data)


_KEYS_IN_ANOTHER_ORDER: dict[str, Any] = {"config": {"model": "m", "provider": "p"}}


# --- INV-HDR: request headers -------------------------------------------------------------------------


@fresh_mutant(
    "tool_description_optional", "INV-HDR-1", "header", sl_payloads, "payload_problem",
    p.appends(*_headed(1, {**p.HEADER, "tools": [{"name": "read_file", "parameters": {"type": "object"}}]})),
)
def _tool_description_optional(original: Fn) -> Fn:
    """A header tool's ``description`` is read as optional: a tool of only a name and parameters is stored."""

    def payload_problem(event_type: str, data: object, seq: int, generation: int = 1) -> Problem | None:
        header = data.get("header") if event_type == "request/header" and isinstance(data, Mapping) else None
        tools = header.get("tools") if isinstance(header, Mapping) else None
        if isinstance(header, Mapping) and isinstance(tools, tuple | list):
            described = [{"description": "", **tool} if isinstance(tool, Mapping) else tool for tool in tools]
            data = {**data, "header": {**header, "tools": described}}  # type: ignore[dict-item]
        return original(event_type, data, seq, generation)  # type: ignore[no-any-return]

    return payload_problem


@fresh_mutant(
    "model_unpinned_accepted", "INV-HDR-2", "header", sl_header, "check_header_shape",
    p.decision([], {"config": {"provider": "p"}}, first=True, series=False),
)
def _model_unpinned_accepted(original: Fn) -> Fn:
    """A header counts as pinned once it names its provider: a config without a model passes the pin check."""

    def check_header_shape(header: object) -> None:
        config = header.get("config") if isinstance(header, Mapping) else None
        provider_only = isinstance(config, Mapping) and is_nonempty_string(config.get("provider")) and "model" not in config
        if isinstance(header, Mapping) and isinstance(config, Mapping) and provider_only:
            header = {**header, "config": {**config, "model": "(provider default)"}}
        original(header)

    return check_header_shape


@fresh_mutant(
    "adapter_marker_false_accepted", "INV-HDR-3", "header", sl_header, "check_header_shape",
    p.decision([], {"config": {"provider": "p", "model": "m", "maxTokens": 4096}, "adapterDefaults": {"maxTokens": False}},
               first=True, series=False),
)
def _adapter_marker_false_accepted(original: Fn) -> Fn:
    """``adapterDefaults`` may mark a field ``false`` (read as "not defaulted"), where the rule allows only ``true``."""

    def check_header_shape(header: object) -> None:
        defaults = header.get("adapterDefaults") if isinstance(header, Mapping) else None
        if isinstance(header, Mapping) and isinstance(defaults, Mapping):
            header = {**header, "adapterDefaults": {k: v for k, v in defaults.items() if v is not False}}
        original(header)

    return check_header_shape


@fresh_mutant(
    "empty_adapter_defaults_canonical", "INV-HDR-5", "header", sl_header, "dropped_in_canonical",
    p.appends(*_headed(1, {**p.HEADER, "adapterDefaults": {}})),
)
def _empty_adapter_defaults_canonical(original: Fn) -> Fn:
    """Only a non-object ``adapterDefaults`` counts as marker-free: an empty ``{}`` is kept as canonical."""

    def dropped_in_canonical(key: str, value: object) -> bool:
        if key == "adapterDefaults" and isinstance(value, Mapping) and not value:
            return False
        return original(key, value)  # type: ignore[no-any-return]

    return dropped_in_canonical


@fresh_mutant(
    "blank_system_dropped", "INV-HDR-6", "header", sl_header, "dropped_in_canonical",
    p.appends(*_headed(1, {**p.HEADER, "system": " "})),
)
def _blank_system_dropped(original: Fn) -> Fn:
    """Canonical form drops a ``system`` of only whitespace as if it were empty: such a snapshot is refused as not canonical."""

    def dropped_in_canonical(key: str, value: object) -> bool:
        if key == "system" and isinstance(value, str) and value.strip() == "":
            return True
        return original(key, value)  # type: ignore[no-any-return]

    return dropped_in_canonical


@fresh_mutant(
    "header_equality_key_order", "INV-HDR-7", "header", sl_header, "header_equals",
    p.decision(_headed(1, p.HEADER), _KEYS_IN_ANOTHER_ORDER, first=False, series=False),
)
def _header_equality_key_order(original: Fn) -> Fn:
    """Header equality compares compact encodings as written, so the same members in another order count as a change."""

    def header_equals(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
        kept_a = {k: v for k, v in a.items() if not sl_header.dropped_in_canonical(k, v)}
        kept_b = {k: v for k, v in b.items() if not sl_header.dropped_in_canonical(k, v)}
        return orjson.dumps(kept_a) == orjson.dumps(kept_b)

    return header_equals


@fresh_mutant(
    "unchanged_first_request_writes_nothing", "INV-HDR-9", "header", sl_header, "decide_request_header",
    p.decision(_headed(1, p.HEADER), p.HEADER, first=True, series=False),
)
def _unchanged_first_request_writes_nothing(original: Fn) -> Fn:
    """The first request of a loop instance writes ``resume`` only when its header changed; an unchanged one writes nothing."""

    def decide_request_header(
        latest: Mapping[str, Any] | None, assembled: Mapping[str, Any], facts: InstanceFacts
    ) -> HeaderDecision | None:
        if facts.first_request and latest is not None and sl_header.header_equals(latest, assembled):
            return None
        return original(latest, assembled, facts)  # type: ignore[no-any-return]

    return decide_request_header


@fresh_mutant(
    "later_request_on_empty_log_initial", "INV-HDR-10", "header", sl_header, "decide_request_header",
    p.decision([], p.HEADER, first=False, series=False),
)
def _later_request_on_empty_log_initial(original: Fn) -> Fn:
    """A later request on a log without a snapshot writes ``initial`` (the log's first) instead of ``change``."""

    def decide_request_header(
        latest: Mapping[str, Any] | None, assembled: Mapping[str, Any], facts: InstanceFacts
    ) -> HeaderDecision | None:
        decision: HeaderDecision | None = original(latest, assembled, facts)
        if latest is None and decision is not None and decision.reason == Reason.CHANGE:
            return HeaderDecision(Reason.INITIAL, decision.starts_series)
        return decision

    return decide_request_header


@fresh_mutant(
    "series_flagged_starts_series", "INV-HDR-11", "header", sl_header, "decide_request_header",
    p.decision(_headed(1, p.HEADER), p.HEADER, first=False, series=True),
)
def _series_flagged_starts_series(original: Fn) -> Fn:
    """A ``series`` snapshot is also flagged ``startsSeries``, which only a ``change`` that begins a series carries."""

    def decide_request_header(
        latest: Mapping[str, Any] | None, assembled: Mapping[str, Any], facts: InstanceFacts
    ) -> HeaderDecision | None:
        decision: HeaderDecision | None = original(latest, assembled, facts)
        if decision is not None and decision.reason == Reason.SERIES:
            return HeaderDecision(Reason.SERIES, starts_series=True)
        return decision

    return decide_request_header


# --- INV-JSONL: the header line, the reader, the stored form ------------------------------------------


@fresh_mutant(
    "relative_cwd_accepted", "INV-JSONL-1", "jsonl", sl_headerline, "check_header_line",
    p.load(_header_line(cwd="work/project"), p.line(p.turn_start(0)), p.line(p.turn_end(1))),
)
def _relative_cwd_accepted(original: Fn) -> Fn:
    """The header line's ``cwd`` is checked to be a string, not an absolute path."""

    def check_header_line(header: Mapping[str, Any]) -> None:
        cwd = header.get("cwd")
        if isinstance(cwd, str) and not cwd.startswith("/"):
            header = {**header, "cwd": "/" + cwd}
        original(header)

    return check_header_line


@fresh_mutant(
    "seed_length_bound_exclusive", "INV-JSONL-1", "jsonl", sl_headerline, "check_seed_length",
    p.load(_header_line(seedLength=2), p.line(p.turn_start(0)), p.line(p.turn_end(1))),
)
def _seed_length_bound_exclusive(original: Fn) -> Fn:
    """``seedLength`` must be below the number of events read, so a log that is all seed is refused."""

    def check_seed_length(header: Mapping[str, Any], events: int) -> None:
        if header.get("seedLength") == events and events > 0:
            problem = f"line 1: session header seedLength {events} reaches the {events} events read"
            raise SeqlogError(Code.JSONL_HEADER_INVALID, problem)
        original(header, events)

    return check_seed_length


@fresh_mutant(
    "damaged_suffix_refused", "INV-JSONL-3", "jsonl", sl_codec, "_scan",
    p.load(p.SESSION_LINE, p.line(p.turn_start(0)), '{"type": "step/start", "seq": 1, "time"'),
)
def _damaged_suffix_refused(original: Fn) -> Fn:
    """A faulty complete row refuses the log even when no later ``turn/end`` proves it committed (the reader keeps no prefix)."""

    def _scan(data: bytes | str) -> Any:
        scanned = original(data)
        if scanned.dropped_line is not None:
            raise SeqlogError(Code.JSONL_MALFORMED_LINE, f"line {scanned.dropped_line} is not a stored row")
        return scanned

    return _scan


@fresh_mutant(
    "crlf_row_refused", "INV-JSONL-4", "jsonl", sl_codec, "parse_line",
    p.load(p.SESSION_LINE, p.line(p.turn_start(0)) + "\r", p.line(p.turn_end(1))),
)
def _crlf_row_refused(original: Fn) -> Fn:
    """A row ending in ``\\r`` (a CRLF line) is not JSON to the reader, though ``JSON.parse`` takes CR as whitespace."""

    def parse_line(line: bytes | str) -> dict[str, Any]:
        crlf = line.endswith(b"\r") if isinstance(line, bytes) else line.endswith("\r")
        if crlf:
            raise LineError("is not valid JSON (a carriage return follows the value)")
        return original(line)  # type: ignore[no-any-return]

    return parse_line


_UNDECODABLE_TURN_END = p.line({**p.turn_end(1), "sourceEventSeqs": [[1, 0]]})


@fresh_mutant(
    "unparsed_turn_end_not_proof", "INV-JSONL-4", "jsonl", sl_codec, "_parses_as_turn_end",
    p.load(p.SESSION_LINE, p.line(p.turn_start(0)), "not json", _UNDECODABLE_TURN_END),
)
def _unparsed_turn_end_not_proof(original: Fn) -> Fn:
    """After a line that is not JSON, only a ``turn/end`` row that decodes proves the damage committed, not any such object."""

    def _parses_as_turn_end(line: bytes | str) -> bool:
        return False

    return _parses_as_turn_end


@fresh_mutant(
    "gap_refused_as_malformed", "INV-JSONL-5", "jsonl", sl_codec, "_committed_damage",
    p.load(p.SESSION_LINE, p.line(p.turn_start(0)), p.line(p.turn_start(0)), p.line(p.turn_end(1))),
)
def _gap_refused_as_malformed(original: Fn) -> Fn:
    """Committed damage is always refused as a malformed line, even when the damage is a duplicated row or a seq gap."""

    def _committed_damage(issue: SeqlogError, number: int) -> SeqlogError:
        refusal: SeqlogError = original(issue, number)
        return SeqlogError(Code.JSONL_MALFORMED_LINE, refusal.message)

    return _committed_damage


@fresh_mutant(
    "closers_skipped_after_dropped_tail", "INV-JSONL-8", "jsonl", sl_codec, "_load",
    p.load(p.SESSION_LINE, p.line(p.turn_start(0)), '{"type":"user/mess', final_newline=False),
)
def _closers_skipped_after_dropped_tail(original: Fn) -> Fn:
    """A log read after dropping a torn tail is left unrepaired, so its crash-orphaned turn stays open."""

    def _load(read: ReadLog) -> LoadedLog:
        if not read.dropped_torn_tail:
            return original(read)  # type: ignore[no-any-return]
        return LoadedLog(read.header, read.session, read.version, True, (), read.dropped_line, read.committed_length)

    return _load


def _fifteen_digits(value: object) -> object:
    """``value`` with every float rounded to 15 significant digits."""
    if type(value) is float:
        return float(f"{value:.15g}")
    if isinstance(value, Mapping):
        return {key: _fifteen_digits(member) for key, member in value.items()}
    if isinstance(value, tuple | list):
        return [_fifteen_digits(member) for member in value]
    return value


@fresh_mutant(
    "save_floats_fifteen_digits", "INV-JSONL-2", "jsonl", sl_codec, "encode_line",
    ({"op": "reset"}, {"op": "append", "event": {"type": "x/note", "seq": 0, "time": T, "data": {"ratio": 0.1 + 0.2},
                                                  "ignorable": True}}, {"op": "save"}),
)
def _save_floats_fifteen_digits(original: Fn) -> Fn:
    """The stored form writes floats with 15 significant digits, so a double that needs 17 reads back as another number."""

    def encode_line(value: object) -> bytes:
        return original(_fifteen_digits(value))  # type: ignore[no-any-return]

    return encode_line


_SINGLE_CHUNK_ROW = p.line(
    {"type": "text-chunks", "seq0": 2, "time0": T, "data": {"turn": 1, "step": 1, "index": 0, "dt": [], "texts": ["Hi"]}}
)


@fresh_mutant(
    "packed_single_chunk_refused", "INV-JSONL-9", "read", sl_rows, "decode_packed_row",
    _read(p.SESSION_LINE, p.line(p.turn_start(0)), p.line(p.step_start(1)), _SINGLE_CHUNK_ROW),
)
def _packed_single_chunk_refused(original: Fn) -> Fn:
    """A packed chunk row must hold at least the writer's minimum run of three chunks; a shorter row is read as faulty."""

    def decode_packed_row(row: Mapping[str, Any], tag: str) -> list[dict[str, Any]]:
        data = row.get("data")
        payload = data.get("args" if tag == "tool-call-chunks" else "texts") if isinstance(data, Mapping) else None
        if isinstance(payload, list | tuple) and len(payload) < MIN_RUN:
            raise RowError(f"{tag} row holds fewer than {MIN_RUN} chunks")
        return original(row, tag)  # type: ignore[no-any-return]

    return decode_packed_row


def _ranged_replace(seq: int) -> str:
    """The stored row of a user message at ``seq`` replacing ``0..seq-1``, its provenance written as one range."""
    event = p.user(seq, p.replace(0, seq - 1))
    event["sourceEventSeqs"] = [[0, seq - 1]]
    return p.line(event)


@fresh_mutant(
    "range_count_bound_exclusive", "INV-JSONL-10", "read", sl_rows, "decode_seq_ranges",
    _read(p.SESSION_LINE, p.line(p.user(0)), p.line(p.user(1)), _ranged_replace(2)),
)
def _range_count_bound_exclusive(original: Fn) -> Fn:
    """Range-encoded provenance must expand to fewer seqs than the event's own seq: citing every earlier event is a faulty row."""

    def decode_seq_ranges(value: object, max_entries: int) -> SeqSpans:
        return original(value, max_entries - 1)  # type: ignore[no-any-return]

    return decode_seq_ranges


@fresh_mutant(
    "reopen_durable_excludes_closers", "INV-JSONL-11", "storage", SessionStore, "open",
    ({"op": "store_create", "dir": p.STORE}, {"op": "store_append", "event": p.turn_start(0)}, {"op": "store_close"},
     {"op": "store_open", "dir": p.STORE}, {"op": "store_close"}),
)
def _reopen_durable_excludes_closers(original: Fn) -> Fn:
    """Reopening counts as durable the events it read, not the repair closers it appended and synced after them."""

    def open_(cls: type[SessionStore], directory: Any, **options: Any) -> SessionStore:
        store: SessionStore = original(cls, directory, **options)
        if store.loaded is not None:
            store._durable -= len(store.loaded.closers)
        return store

    return open_


# --- INV-LEGACY: the v0-to-v1 edge --------------------------------------------------------------------


@fresh_mutant(
    "trigger_kind_unchecked", "INV-LEGACY-9", "legacy", sl_legacy, "_turn_start",
    p.upgrade(_v0("turn/start", 0, {"turn": 1, "trigger": {}})),
)
def _trigger_kind_unchecked(original: Fn) -> Fn:
    """N1 drops ``trigger`` whatever it holds: a trigger without its non-empty ``kind`` is not refused."""

    def _turn_start(data: Mapping[str, Any], seq: int) -> Mapping[str, Any]:
        trigger = data.get("trigger")
        if isinstance(trigger, Mapping) and not is_nonempty_string(trigger.get("kind")):
            data = {**data, "trigger": {**trigger, "kind": "unknown"}}
        return original(data, seq)  # type: ignore[no-any-return]

    return _turn_start


@fresh_mutant(
    "disposed_cause_legacy", "INV-LEGACY-5", "legacy", sl_legacy, "_turn_end_reason",
    p.upgrade(_v0("turn/start", 0, {"turn": 1}), _v0("turn/end", 1, {"turn": 1, "reason": {"kind": "disposed"}})),
)
def _disposed_cause_legacy(original: Fn) -> Fn:
    """N2 turns a ``disposed`` reason into an abort of cause ``legacy``, as for a cause-less ``aborted``, not ``disposed``."""

    def _turn_end_reason(reason: Mapping[str, Any], seq: int) -> Mapping[str, Any]:
        converted: Mapping[str, Any] = original(reason, seq)
        if reason.get("kind") == "disposed":
            return {"kind": "aborted", "reason": {"kind": "legacy"}}
        return converted

    return _turn_end_reason


_FAILURE = {"message": "upstream failed", "code": "E_UPSTREAM", "status": 503, "requestId": "req-1"}


@fresh_mutant(
    "failure_extras_dropped", "INV-LEGACY-5", "legacy", sl_legacy, "_turn_end_reason",
    p.upgrade(
        _v0("turn/start", 0, {"turn": 1}),
        _v0("turn/end", 1, {"turn": 1, "reason": {"kind": "error", "step": 0, "failure": _FAILURE}}),
    ),
)
def _failure_extras_dropped(original: Fn) -> Fn:
    """N2 keeps only ``message`` and ``code`` of a legacy failure record, where the record becomes ``error`` whole."""

    def _turn_end_reason(reason: Mapping[str, Any], seq: int) -> Mapping[str, Any]:
        converted: Mapping[str, Any] = original(reason, seq)
        error = converted.get("error")
        if "failure" in reason and isinstance(error, Mapping):
            return {**converted, "error": {"message": error["message"], "code": error["code"]}}
        return converted

    return _turn_end_reason


@fresh_mutant(
    "steering_turn_unchecked", "INV-LEGACY-9", "legacy", sl_legacy, "_steering_data",
    p.upgrade(
        _v0("turn/start", 0, {"turn": 1}),
        _v0("steering/message", 1, {"turn": -1, "content": [{"type": "text", "text": "faster"}], "source": {"kind": "user"}},
            surfaceOp="append"),
    ),
)
def _steering_turn_unchecked(original: Fn) -> Fn:
    """N3 drops a steering message's ``turn`` without reading it, so a turn that is not a count is not refused."""

    def _steering_data(data: Mapping[str, Any], session_id: str, seq: int) -> Mapping[str, Any]:
        if "turn" in data and not is_safe_natural(data["turn"]):
            data = {**data, "turn": 0}
        return original(data, session_id, seq)  # type: ignore[no-any-return]

    return _steering_data


@fresh_mutant(
    "rewrite_id_minted", "INV-LEGACY-5", "legacy", sl_legacy._Edge, "_rewritten_id",
    p.upgrade(
        _v0("turn/start", 0, {"turn": 1}),
        _v0("step/start", 1, {"turn": 1, "step": 1}),
        p.assistant(2, ["c1"]),
        p.tool_call(3, "c1"),
        _v0_tool_result(4, "append"),
        _v0_tool_result(5, p.replace(4, 4), sourceEventSeqs=[4]),
    ),
)
def _rewrite_id_minted(original: Fn) -> Fn:
    """N4 mints a rewriting pre-identity ``tool/result`` an id of its own instead of taking the id of the result it replaces."""

    def _rewritten_id(self: Any, raw: Mapping[str, Any], data: object, seq: int) -> object:
        return data

    return _rewritten_id


@fresh_mutant(
    "retry_chain_id_per_attempt", "INV-LEGACY-5", "legacy", sl_legacy._Edge, "_retry",
    p.upgrade(
        _v0("turn/start", 0, {"turn": 1}),
        _v0("step/start", 1, {"turn": 1, "step": 1}),
        p.header_event(2, p.HEADER),
        _v0_retry(3, 1),
        _v0_retry(4, 2),
    ),
)
def _retry_chain_id_per_attempt(original: Fn) -> Fn:
    """N8 mints ``legacy-retry:<sessionId>:<seq>`` for every retry without an id, instead of reusing its chain's id."""

    def _retry(self: Any, data: Mapping[str, Any], seq: int) -> Mapping[str, Any]:
        if "retryId" in data:
            return original(self, data, seq)  # type: ignore[no-any-return]
        return {**data, "retryId": f"legacy-retry:{self.session_id}:{seq}"}

    return _retry


_CHECKPOINT = {"id": "checkpoint-3", "role": "user", "content": [{"type": "text", "text": "Summary so far."}],
               "source": {"kind": "plugin", "plugin": "compact"}}


@fresh_mutant(
    "checkpoint_group_id_missing", "INV-LEGACY-5", "legacy", sl_legacy._Edge, "_compaction",
    p.upgrade(
        p.user(0),
        _v0("compact/start", 1, {"turn": None}),
        _v0("compact/summary", 2, {"summary": [{"type": "text", "text": "so far"}], "shadowedRange": {"start": 0, "end": 0},
                                   "shadowedSeqs": [0], "shadowedTokenCount": 1, "provider": "p", "model": "m"}),
        _v0("user/message", 3, _CHECKPOINT, surfaceOp=p.replace(0, 0), sourceEventSeqs=[0]),
        _v0("compact/end", 4, {"turn": None}),
    ),
)
def _checkpoint_group_id_missing(original: Fn) -> Fn:
    """N9 gives the open group's id to its summary and end but not to the compaction's checkpoint message."""

    def _compaction(self: Any, type_: str, data: Mapping[str, Any], seq: int) -> Mapping[str, Any]:
        if type_ == "user/message":
            return data
        return original(self, type_, data, seq)  # type: ignore[no-any-return]

    return _compaction


@fresh_mutant(
    "restart_inserted_unchecked", "INV-LEGACY-6", "legacy", sl_trace, "abandon_for_restart",
    p.upgrade(
        _v0("turn/start", 0, {"turn": 1}),
        _v0("agent/inbox/spliced", 1, {"target": "next-turn", "start": 0, "inserted": []}),
        _v0("turn/start", 2, {"turn": 2}),
    ),
)
def _restart_inserted_unchecked(original: Fn) -> Fn:
    """The interrupted-turn restart is admitted after any next-turn splice, even one that inserted nothing."""

    def abandon_for_restart(state: Brackets, event: Event, before: Event | None) -> Brackets:
        splice = as_object(before.data) if before is not None and before.type == "agent/inbox/spliced" else None
        if before is not None and splice is not None and splice.get("inserted") == ():
            before = Event(before.type, before.seq, before.time, freeze({**splice, "inserted": [{}]}))
        return original(state, event, before)  # type: ignore[no-any-return]

    return abandon_for_restart


_V0_LINE = p.line({"type": "session", "version": 0, "id": "s", "createdAt": 0, "delegationDepth": 0})


@fresh_mutant(
    "read_keeps_v0_header", "INV-JSONL-7", "read", sl_codec, "read_text",
    _read(_V0_LINE, p.line(_v0("turn/start", 0, {"turn": 1, "trigger": {"kind": "user"}}))),
)
def _read_keeps_v0_header(original: Fn) -> Fn:
    """``read`` of a v0 log converts its events through the edge but hands back the header line as stored, still version 0."""

    def read_text(text: str, *, clock: Any = None) -> ReadLog:
        read: ReadLog = original(text, clock=clock)
        if read.version == 0:
            header = freeze({**read.header, "version": 0})
            assert isinstance(header, FrozenObject)
            return dataclasses.replace(read, header=header)
        return read

    return read_text
