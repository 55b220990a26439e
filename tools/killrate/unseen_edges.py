"""The fourth half of the catalogue, edges: request headers (INV-HDR), the JSONL codec and its reader
(INV-JSONL), and the v0-to-v1 edge (INV-LEGACY).

Written from the invariant list (``invariants.md``), the protocol, the on-disk format, the reference
model and seqlog's source alone, without reading the conformance suite or its tests.  Each mutant is
one decision a port's author could get wrong while reading the same rules: a header decision that
carries the wrong flag, two header checks in the other order, equality by spelling, a header line read
more loosely or written more tersely than the released codec, a packed row or provenance range judged
by a rule the format does not have, one normalisation of the v0 edge done slightly wrong.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import seqlog.codec as sl_codec
import seqlog.event as sl_event
import seqlog.header as sl_header
import seqlog.headerline as sl_headerline
import seqlog.legacy as sl_legacy
import seqlog.rows as sl_rows
import seqlog.trace as sl_trace
from killrate import probes as p
from killrate.mutants import Fn, unseen_mutant
from seqlog.errors import Code, SeqlogError
from seqlog.event import Event
from seqlog.header import HeaderDecision, InstanceFacts
from seqlog.jsonvalue import FrozenObject, as_object, freeze, is_safe_integer, json_equal
from seqlog.rows import RowError, SeqSpans
from seqlog.trace import Brackets

T = p.T


# --- probe pieces -------------------------------------------------------------------------------------


def _header_line(**members: object) -> str:
    """A v1 session header line with ``members`` added (a member given ``None`` is left out)."""
    line = {"type": "session", "version": 1, "id": "s", "createdAt": 0, "delegationDepth": 0, **members}
    return p.line({k: v for k, v in line.items() if v is not None})


def _read(*lines: str) -> p.Probe:
    """``read`` of a stored log made of ``lines``."""
    return ({"op": "read", "jsonl": "\n".join(lines) + "\n"},)


def _v0(type_: str, seq: int, data: object, **envelope: Any) -> dict[str, Any]:
    return {"type": type_, "seq": seq, "time": T, "data": data, **envelope}


_HUMAN = {"id": "u9", "role": "user", "content": [{"type": "text", "text": "next"}], "source": {"kind": "user"}}
_CLOSED_TURN = (p.line(p.turn_start(0)), p.line(p.turn_end(1)))


# --- INV-HDR: request headers -------------------------------------------------------------------------


@unseen_mutant(
    "starts_series_false_accepted", "INV-HDR-1", "header", sl_event, "decode_event",
    p.appends(p.turn_start(0), p.header_event(1, p.HEADER, startsSeries=False)),
)
def _starts_series_false_accepted(original: Fn) -> Fn:
    """A snapshot's ``startsSeries: false`` is read as absent and dropped instead of refused (the flag is absent or ``true``)."""

    def decode_event(raw: object) -> Event:
        data = raw.get("data") if isinstance(raw, Mapping) and raw.get("type") == "request/header" else None
        if isinstance(raw, Mapping) and isinstance(data, Mapping) and data.get("startsSeries", None) is False:
            raw = {**raw, "data": {k: v for k, v in data.items() if k != "startsSeries"}}
        return original(raw)  # type: ignore[no-any-return]

    return decode_event


@unseen_mutant(
    "adapter_marker_any_config_field", "INV-HDR-3", "header", sl_header, "check_header_shape",
    p.decision([], {"config": {"provider": "p", "model": "m", "temperature": 0.5}, "adapterDefaults": {"temperature": True}},
               first=True, series=False),
)
def _adapter_marker_any_config_field(original: Fn) -> Fn:
    """``adapterDefaults`` may mark any config field that is present, not only ``reasoningEffort`` and ``maxTokens``."""

    def check_header_shape(header: object) -> None:
        config = header.get("config") if isinstance(header, Mapping) else None
        defaults = header.get("adapterDefaults") if isinstance(header, Mapping) else None
        if isinstance(header, Mapping) and isinstance(config, Mapping) and isinstance(defaults, Mapping):
            kept = {k: v for k, v in defaults.items() if k in sl_header.ADAPTER_DEFAULT_KEYS or not (v is True and k in config)}
            header = {**header, "adapterDefaults": kept} if kept else {k: v for k, v in header.items() if k != "adapterDefaults"}
        original(header)

    return check_header_shape


@unseen_mutant(
    "header_reason_checked_before_members", "INV-HDR-4", "header", sl_header, "check_header_event",
    p.appends(p.turn_start(0), p.header_event(1, p.HEADER, reason="startup", requestId="q1")),
)
def _header_reason_checked_before_members(original: Fn) -> Fn:
    """A snapshot's reason is checked before its member set: an extra member and a bad reason give HEADER_REASON_INVALID."""

    def check_header_event(data: object) -> None:
        reason = data.get("reason") if isinstance(data, Mapping) else None
        if isinstance(reason, str) and reason != sl_header.LEGACY_REASON_FALLBACK and reason not in set(sl_header.Reason):
            raise SeqlogError(Code.HEADER_REASON_INVALID, f"request/header has an invalid reason {reason!r}")
        original(data)

    return check_header_event


@unseen_mutant(
    "canonical_form_checked_before_pin", "INV-HDR-5", "header", sl_header, "check_header_event",
    p.appends(p.turn_start(0), p.header_event(1, {"config": {"provider": "p"}, "system": ""})),
)
def _canonical_form_checked_before_pin(original: Fn) -> Fn:
    """Canonical form is checked before the header's shape: an unpinned snapshot with an empty system is NOT_CANONICAL."""

    def check_header_event(data: object) -> None:
        header = data.get("header") if isinstance(data, Mapping) else None
        if isinstance(header, Mapping) and not sl_header.is_canonical(header):
            raise SeqlogError(Code.HEADER_NOT_CANONICAL, "request/header snapshot is not canonical")
        original(data)

    return check_header_event


@unseen_mutant(
    "fold_header_merges_snapshots", "INV-HDR-8", "header", sl_header, "fold_request_header",
    ({"op": "fold_header", "events": [p.turn_start(0), p.header_event(1, p.HEADER_B), p.header_event(2, p.HEADER, "change")]},),
)
def _fold_header_merges_snapshots(original: Fn) -> Fn:
    """Reconstruction lays each snapshot over the ones before it, so a member a later snapshot no longer has stays in force."""

    def fold_request_header(events: Any) -> FrozenObject | None:
        merged: dict[str, Any] | None = None
        for event in events:
            snapshot = sl_header.header_of(event)
            if snapshot is not None:
                merged = {**(merged or {}), **snapshot}
        return None if merged is None else sl_header.canonical_header(merged)

    return fold_request_header


@unseen_mutant(
    "first_request_carries_series_flag", "INV-HDR-9", "header", sl_header, "decide_request_header",
    p.decision([], p.HEADER, first=True, series=True),
)
def _first_request_carries_series_flag(original: Fn) -> Fn:
    """The first request's ``initial`` or ``resume`` snapshot is flagged ``startsSeries`` when a series begins with it."""

    def decide_request_header(
        latest: Mapping[str, Any] | None, assembled: Mapping[str, Any], facts: InstanceFacts
    ) -> HeaderDecision | None:
        decision: HeaderDecision | None = original(latest, assembled, facts)
        if facts.first_request and facts.begins_series and decision is not None:
            return HeaderDecision(decision.reason, starts_series=True)
        return decision

    return decide_request_header


@unseen_mutant(
    "equality_counts_empty_members", "INV-HDR-7", "header", sl_header, "header_equals",
    p.decision([p.turn_start(0), p.header_event(1, p.HEADER)], {**p.HEADER, "system": "", "tools": []},
               first=False, series=False),
)
def _equality_counts_empty_members(original: Fn) -> Fn:
    """Header equality compares the headers as given, so an empty system or tool list differs from the canonical snapshot."""

    def header_equals(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
        return json_equal(dict(a), dict(b))

    return header_equals


# --- INV-JSONL: the header line, the reader, the stored form ------------------------------------------


@unseen_mutant(
    "delegation_depth_defaulted_on_read", "INV-JSONL-1", "jsonl", sl_headerline, "check_header_line",
    p.load(_header_line(delegationDepth=None), *_CLOSED_TURN),
)
def _delegation_depth_defaulted_on_read(original: Fn) -> Fn:
    """The reader takes a header line without ``delegationDepth`` as a top-level session (depth 0), as the writer defaults it."""

    def check_header_line(header: Mapping[str, Any]) -> None:
        original(sl_headerline.with_delegation_depth(header))

    return check_header_line


@unseen_mutant(
    "created_at_read_as_time", "INV-JSONL-1", "jsonl", sl_headerline, "check_header_line",
    p.load(_header_line(createdAt=-5), *_CLOSED_TURN),
)
def _created_at_read_as_time(original: Fn) -> Fn:
    """The header line's ``createdAt`` is read like an event time (any safe integer), so a time before the epoch passes."""

    def check_header_line(header: Mapping[str, Any]) -> None:
        created = header.get("createdAt")
        if is_safe_integer(created) and created < 0:  # type: ignore[operator]
            header = {**header, "createdAt": 0}
        original(header)

    return check_header_line


@unseen_mutant(
    "zero_delegation_depth_left_out", "INV-JSONL-2", "jsonl", sl_codec, "encode_header_line",
    ({"op": "reset"}, {"op": "append", "event": p.turn_start(0)}, {"op": "save"}),
)
def _zero_delegation_depth_left_out(original: Fn) -> Fn:
    """The stored header line leaves ``delegationDepth`` out when it is 0, taking the top-level default as implied."""

    def encode_header_line(header: Mapping[str, Any]) -> bytes:
        if header.get("delegationDepth", 0) == 0:
            return sl_codec.encode_line({k: v for k, v in header.items() if k != "delegationDepth"}) + b"\n"
        return original(header)  # type: ignore[no-any-return]

    return encode_header_line


@unseen_mutant(
    "bom_row_read", "INV-JSONL-4", "jsonl", sl_codec, "parse_line",
    p.load(p.SESSION_LINE, "\ufeff" + p.line(p.turn_start(0)), p.line(p.turn_end(1))),
)
def _bom_row_read(original: Fn) -> Fn:
    """The reader skips a byte-order mark before a row, which ``JSON.parse`` does not take as JSON."""

    def parse_line(line: bytes | str) -> dict[str, Any]:
        line = line.removeprefix("\ufeff") if isinstance(line, str) else line.removeprefix(b"\xef\xbb\xbf")
        return original(line)  # type: ignore[no-any-return]

    return parse_line


_NAN_ROW = '{"type":"x/note","seq":1,"time":' + str(T) + ',"data":{"ratio":NaN},"ignorable":true}'


@unseen_mutant(
    "nan_literal_parsed", "INV-JSONL-4", "jsonl", sl_codec, "_parse_text",
    p.load(p.SESSION_LINE, p.line(p.turn_start(0)), _NAN_ROW, p.line(p.turn_end(2))),
)
def _nan_literal_parsed(original: Fn) -> Fn:
    """The reader parses rows with the language's lenient JSON reader, which takes ``NaN`` and ``Infinity`` as numbers."""

    def _parse_text(text: str) -> object:
        try:
            return json.loads(text, parse_int=sl_codec._js_int)
        except (ValueError, RecursionError):
            return original(text)

    return _parse_text


@unseen_mutant(
    "repeated_header_line_skipped", "INV-JSONL-5", "jsonl", sl_codec, "_split",
    p.load(p.SESSION_LINE, p.line(p.turn_start(0)), p.SESSION_LINE, p.line(p.turn_end(1))),
)
def _repeated_header_line_skipped(original: Fn) -> Fn:
    """A session header line after the first (two writers' files joined) is skipped, not a stray row that refuses the log."""

    def _split(data: bytes | str) -> tuple[list[Any], bool]:
        lines, torn = original(data)
        return [lines[0], *(line for line in lines[1:] if line != lines[0])] if lines else lines, torn

    return _split


@unseen_mutant(
    "header_type_checked_before_version", "INV-JSONL-7", "jsonl", sl_headerline, "check_header_line",
    p.load(_header_line(type="session-log", version=2), *_CLOSED_TURN),
)
def _header_type_checked_before_version(original: Fn) -> Fn:
    """The header line's ``type`` is checked before its version: a later format that renamed the line is an invalid header."""

    def check_header_line(header: Mapping[str, Any]) -> None:
        if header.get("type") != "session":
            raise SeqlogError(Code.JSONL_HEADER_INVALID, 'line 1: session header type must be "session"')
        original(header)

    return check_header_line


def _text_row(seq0: int, dt: list[int]) -> str:
    data = {"turn": 1, "step": 1, "index": 0, "dt": dt, "texts": ["Hel", "lo", "!"]}
    return p.line({"type": "text-chunks", "seq0": seq0, "time0": T, "data": data})


@unseen_mutant(
    "packed_negative_gap_refused", "INV-JSONL-9", "read", sl_rows, "decode_packed_row",
    _read(p.SESSION_LINE, p.line(p.turn_start(0)), p.line(p.step_start(1)), _text_row(2, [-1, 0])),
)
def _packed_negative_gap_refused(original: Fn) -> Fn:
    """A packed row's ``dt`` gaps must be non-negative (times taken to never go back); a row with a negative gap is faulty."""

    def decode_packed_row(row: Mapping[str, Any], tag: str) -> list[dict[str, Any]]:
        data = row.get("data")
        gaps = data.get("dt") if isinstance(data, Mapping) else None
        if isinstance(gaps, list | tuple) and any(isinstance(g, int | float) and g < 0 for g in gaps):
            raise RowError(f"{tag} row dt members must be non-negative")
        return original(row, tag)  # type: ignore[no-any-return]

    return decode_packed_row


_NULL_NAME_ROW = p.line({"type": "tool-call-chunks", "seq0": 3, "time0": T,
                         "data": {"turn": 1, "step": 1, "index": 0, "id": "c1", "name": None, "dt": [0, 0],
                                  "args": ["{", "}", ""]}})


@unseen_mutant(
    "packed_null_name_as_absent", "INV-JSONL-9", "read", sl_rows, "decode_packed_row",
    _read(p.SESSION_LINE, p.line(p.turn_start(0)), p.line(p.step_start(1)), p.line(p.chunk(2)), _NULL_NAME_ROW),
)
def _packed_null_name_as_absent(original: Fn) -> Fn:
    """A tool-call row's ``name: null`` is read as no name, instead of the malformed member that makes the row faulty."""

    def decode_packed_row(row: Mapping[str, Any], tag: str) -> list[dict[str, Any]]:
        data = row.get("data")
        if tag == "tool-call-chunks" and isinstance(data, Mapping) and "name" in data and data["name"] is None:
            row = {**row, "data": {k: v for k, v in data.items() if k != "name"}}
        return original(row, tag)  # type: ignore[no-any-return]

    return decode_packed_row


def _ranged_user(seq: int, op: Any, sources: list[Any]) -> str:
    event = p.user(seq, op)
    event["sourceEventSeqs"] = sources
    return p.line(event)


@unseen_mutant(
    "single_seq_range_refused", "INV-JSONL-10", "read", sl_rows, "decode_seq_ranges",
    _read(p.SESSION_LINE, p.line(p.user(0)), _ranged_user(1, p.replace(0, 0), [[0, 0]])),
)
def _single_seq_range_refused(original: Fn) -> Fn:
    """A stored range must span at least two seqs (``start < end``): ``[3, 3]``, which no writer needs, is a faulty row."""

    def decode_seq_ranges(value: object, max_entries: int) -> SeqSpans:
        if isinstance(value, list | tuple) and any(isinstance(e, list | tuple) and len(e) == 2 and e[0] == e[1] for e in value):
            raise RowError("sourceEventSeqs range must span at least two seqs")
        return original(value, max_entries)  # type: ignore[no-any-return]

    return decode_seq_ranges


@unseen_mutant(
    "plain_provenance_order_enforced", "INV-JSONL-10", "read", sl_rows, "decode_seq_ranges",
    _read(p.SESSION_LINE, p.line(p.user(0)), p.line(p.user(1)), _ranged_user(2, p.replace(0, 1), [1, 0])),
)
def _plain_provenance_order_enforced(original: Fn) -> Fn:
    """Stored provenance must be strictly increasing even without a range: plain seqs in another order make a faulty row."""

    def decode_seq_ranges(value: object, max_entries: int) -> SeqSpans:
        spans: SeqSpans = original(value, max_entries)
        if any(spans[i][0] <= spans[i - 1][1] for i in range(1, len(spans))):
            raise RowError("sourceEventSeqs must be strictly increasing")
        return spans

    return decode_seq_ranges


# --- INV-LEGACY: the v0-to-v1 edge --------------------------------------------------------------------


@unseen_mutant(
    "inventory_checked_before_payload_object", "INV-LEGACY-4", "legacy", sl_legacy, "check_refusals",
    p.upgrade(_v0("x/new-thing", 0, "opaque")),
)
def _inventory_checked_before_payload_object(original: Fn) -> Fn:
    """The edge checks the v0 inventory before the payload is an object: an unknown type with bad data is refused as unknown."""

    def check_refusals(raw_events: Any) -> None:
        for raw in raw_events:
            type_ = raw.get("type") if isinstance(raw, Mapping) else None
            known = isinstance(type_, str) and (type_ in sl_legacy.V0_INVENTORY or type_ in sl_legacy.REFUSED_TYPES)
            if isinstance(raw, Mapping) and not known:
                problem = f"v0 index {raw.get('seq')}: type {type_!r} is outside the v0 inventory"
                raise SeqlogError(Code.LEGACY_UNKNOWN_TYPE, problem)
        original(raw_events)

    return check_refusals


@unseen_mutant(
    "provenance_kind_kept", "INV-LEGACY-5", "legacy", sl_legacy, "_normalise_data",
    p.upgrade(
        _v0("turn/start", 0, {"turn": 1}),
        _v0("step/start", 1, {"turn": 1, "step": 1}),
        _v0("assistant/message", 2, {"turn": 1, "step": 1, "content": [{"type": "text", "text": "ok"}],
                                     "provenance": {"kind": "llm", "provider": "p", "model": "m"}}, surfaceOp="append"),
    ),
)
def _provenance_kind_kept(original: Fn) -> Fn:
    """N4 builds an assistant source as ``{kind: "model", ...provenance}``, so a provenance ``kind`` overrides ``model``."""

    def _normalise_data(type_: str, data: Mapping[str, Any], session_id: str, seq: object) -> object:
        converted = original(type_, data, session_id, seq)
        provenance = as_object(data.get("provenance"))
        message = as_object(converted.get("message")) if isinstance(converted, Mapping) else None
        if type_ == "assistant/message" and provenance is not None and message is not None and "kind" in provenance:
            return {**converted, "message": {**message, "source": {"kind": "model", **provenance}}}
        return converted

    return _normalise_data


@unseen_mutant(
    "missing_error_code_left_empty", "INV-LEGACY-5", "legacy", sl_legacy, "_turn_end_reason",
    p.upgrade(_v0("turn/start", 0, {"turn": 1}), _v0("turn/end", 1, {"turn": 1, "reason": {"kind": "error", "step": 0,
                                                                                         "message": "boom"}})),
)
def _missing_error_code_left_empty(original: Fn) -> Fn:
    """N2 gives a legacy error without ``code`` an empty code instead of ``UNKNOWN``."""

    def _turn_end_reason(reason: Mapping[str, Any], seq: int) -> Mapping[str, Any]:
        converted: Mapping[str, Any] = original(reason, seq)
        error = converted.get("error")
        if reason.get("kind") == "error" and "message" in reason and "code" not in reason and isinstance(error, Mapping):
            return {**converted, "error": {**error, "code": ""}}
        return converted

    return _turn_end_reason


@unseen_mutant(
    "steering_surface_op_invented", "INV-LEGACY-5", "legacy", sl_legacy._Edge, "convert",
    p.upgrade(
        _v0("turn/start", 0, {"turn": 1}),
        _v0("steering/message", 1, {"turn": 1, "content": [{"type": "text", "text": "faster"}], "source": {"kind": "user"}}),
    ),
)
def _steering_surface_op_invented(original: Fn) -> Fn:
    """N3 gives a ``steering/message`` without ``surfaceOp`` an ``append``, since steering always joined the surface."""

    def convert(self: Any, raw: object, index: int) -> object:
        converted = original(self, raw, index)
        steering = isinstance(raw, Mapping) and raw.get("type") == "steering/message" and "surfaceOp" not in raw
        if steering and isinstance(converted, Mapping):
            return freeze({**converted, "surfaceOp": "append"})
        return converted

    return convert


@unseen_mutant(
    "end_seed_keeps_compaction_group", "INV-LEGACY-5", "legacy", sl_legacy._Edge, "_compaction",
    p.upgrade(
        p.user(0),
        _v0("compact/start", 1, {"turn": None}),
        _v0("session/end-seed", 2, {}),
        _v0("compact/end", 3, {"turn": None, "error": "crashed"}),
    ),
)
def _end_seed_keeps_compaction_group(original: Fn) -> Fn:
    """N9 closes a compaction group only at its ``compaction/end``; a ``session/end-seed`` leaves it open for later events."""

    def _compaction(self: Any, type_: str, data: Mapping[str, Any], seq: int) -> Mapping[str, Any]:
        if type_ == "session/end-seed":
            return data
        return original(self, type_, data, seq)  # type: ignore[no-any-return]

    return _compaction


@unseen_mutant(
    "restart_admitted_with_step_open", "INV-LEGACY-6", "legacy", sl_trace, "abandon_for_restart",
    p.upgrade(
        _v0("turn/start", 0, {"turn": 1}),
        _v0("step/start", 1, {"turn": 1, "step": 1}),
        _v0("agent/inbox/spliced", 2, {"target": "next-turn", "start": 0, "inserted": [_HUMAN]}),
        _v0("turn/start", 3, {"turn": 2}),
    ),
)
def _restart_admitted_with_step_open(original: Fn) -> Fn:
    """The interrupted-turn restart is admitted whether or not a step is still open in the abandoned turn."""

    def abandon_for_restart(state: Brackets, event: Event, before: Event | None) -> Brackets:
        if state.open_turn is not None and state.open_step is not None:
            closed = Brackets(state.open_turn, state.last_turn, None, state.last_step)
            restarted: Brackets = original(closed, event, before)
            return state if restarted is closed else restarted
        return original(state, event, before)  # type: ignore[no-any-return]

    return abandon_for_restart


@unseen_mutant(
    "bare_abort_left_unconverted", "INV-LEGACY-8", "legacy", sl_legacy, "_turn_end_reason",
    p.upgrade(_v0("turn/start", 0, {"turn": 1}), _v0("turn/end", 1, {"turn": 1, "reason": {"kind": "aborted"}})),
)
def _bare_abort_left_unconverted(original: Fn) -> Fn:
    """N2 leaves a cause-less ``aborted`` reason as it is, taking it for a v1 reason already."""

    def _turn_end_reason(reason: Mapping[str, Any], seq: int) -> Mapping[str, Any]:
        if dict(reason) == {"kind": "aborted"}:
            return reason
        return original(reason, seq)  # type: ignore[no-any-return]

    return _turn_end_reason


@unseen_mutant(
    "trigger_turn_zero_read", "INV-LEGACY-9", "legacy", sl_legacy, "_turn_start",
    p.upgrade(_v0("turn/start", 0, {"turn": 0, "trigger": {"kind": "user"}})),
)
def _trigger_turn_zero_read(original: Fn) -> Fn:
    """N1 reads a legacy ``turn/start``'s turn as a count, so turn 0 passes the edge (and v1 refuses it as misnumbered)."""

    def _turn_start(data: Mapping[str, Any], seq: int) -> Mapping[str, Any]:
        if "trigger" in data and data.get("turn") == 0:
            original({**data, "turn": 1}, seq)
            return {"turn": 0}
        return original(data, seq)  # type: ignore[no-any-return]

    return _turn_start
