"""The sixth half of the catalogue, edges: request headers (INV-HDR), the JSONL codec, its reader and the
durable store (INV-JSONL), and the v0-to-v1 edge (INV-LEGACY).

Written from the documents (``invariants.md``, the protocol, the on-disk format), the reference model
and seqlog's source alone, without reading the conformance suite or its tests, and never run against
the suite before the measurement that first judges them.  Each mutant is one decision a port's author
could get wrong while reading the same rules: a reason list of an earlier design, canonical form
applied where it should be judged, a member dropped that canonical form keeps, equality by bytes, a
seed's header taken as its parent's, a header decision with the wrong reason or flag, a request's
header left unjudged; a header line read against rows instead of events, a writer that loses what
UTF-8 cannot hold, a reader looser or stricter than ``JSON.parse`` and the released codec about
whitespace, ``-0``, seqs, versions, packed rows and ranges, a store that writes before it validates;
one normalisation of the v0 edge done slightly wrong, or a check of the edge skipped or tightened.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

import seqlog.codec as sl_codec
import seqlog.header as sl_header
import seqlog.headerline as sl_headerline
import seqlog.legacy as sl_legacy
import seqlog.rows as sl_rows
from killrate import probes as p
from killrate.mutants import Fn, hidden_mutant
from seqlog.errors import Code, SeqlogError
from seqlog.event import decode_event
from seqlog.header import HeaderDecision, InstanceFacts, Reason, canonical_header, dropped_in_canonical
from seqlog.jsonvalue import FrozenObject, is_safe_natural
from seqlog.session import Session
from seqlog.store import SessionStore

T = p.T
MARKER = "session-log-deepseek/delivery-accepted"


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


def _packed(tag: str, seq0: int, members: Sequence[str], **more: Any) -> str:
    """The stored line of a packed chunk row of ``members`` in turn 1, step 1, one millisecond apart."""
    payload = "args" if tag == "tool-call-chunks" else "texts"
    data = {"turn": 1, "step": 1, "index": 0, **more, "dt": [1] * (len(members) - 1), payload: list(members)}
    return p.line({"type": tag, "seq0": seq0, "time0": T + seq0, "data": data})


def _v0(type_: str, seq: int, data: object, **envelope: Any) -> dict[str, Any]:
    return {"type": type_, "seq": seq, "time": T + seq, "data": data, **envelope}


def _v1_upgrade(*events: dict[str, Any]) -> p.Probe:
    """``upgrade_v0`` of a version-1 log holding ``events``."""
    header = {"type": "session", "version": 1, "id": "s", "createdAt": 0, "delegationDepth": 0}
    return ({"op": "upgrade_v0", "log": {"header": header, "events": list(events)}},)


def _v0_retry(seq: int, policy: str) -> dict[str, Any]:
    data = {"turn": 1, "step": 1, "provider": "p", "policyKey": policy, "retry": 1, "delayMs": 0,
            "failure": {"message": "overloaded", "code": "OVERLOADED"}, "mode": "always"}
    return _v0("llm/retry", seq, data)


_STEERING_CONTENT = [{"type": "text", "text": "also check the tests"}]


# --- INV-HDR: request headers -------------------------------------------------------------------------


@hidden_mutant(
    "resume_reason_unknown", "INV-HDR-4", "header", sl_header, "check_header_event",
    p.pure("fold_header", *_headed(p.HEADER, "resume")),
)
def _resume_reason_unknown(original: Fn) -> Fn:
    """The header check knows the reasons of an earlier writer rule (``initial``, ``change``, ``series``):
    a ``resume`` snapshot, which a resumed loop instance writes, is refused as an invalid reason."""

    def check_header_event(data: object) -> None:
        keys = sl_header.HEADER_EVENT_KEYS
        if isinstance(data, Mapping) and data.get("reason") == "resume" and keys.issuperset(data) and "header" in data:
            raise SeqlogError(Code.HEADER_REASON_INVALID, "request/header has an invalid reason 'resume'")
        original(data)

    return check_header_event


@hidden_mutant(
    "folded_snapshots_canonicalised", "INV-HDR-5", "header", sl_header, "check_snapshots",
    p.pure("fold_header", *_headed({**p.HEADER, "system": ""})),
)
def _folded_snapshots_canonicalised(original: Fn) -> Fn:
    """Reconstruction canonicalises each stored snapshot before judging it, so a log holding a snapshot
    with an empty ``system`` folds to its canonical header instead of being refused as not canonical."""

    def check_snapshots(events: Any) -> None:
        tidy = []
        for event in events:
            data = event.data if event.type == "request/header" and isinstance(event.data, Mapping) else None
            header = data.get("header") if data is not None else None
            if data is not None and isinstance(header, Mapping):
                tidy.append(dataclasses.replace(event, data=FrozenObject({**data, "header": canonical_header(header)})))
            else:
                tidy.append(event)
        original(tidy)

    return check_snapshots


@hidden_mutant(
    "canonical_drops_empty_stop", "INV-HDR-6", "header", sl_header, "canonical_header",
    p.pure("fold_header", *_headed({"config": {"provider": "p", "model": "m", "stop": []}})),
)
def _canonical_drops_empty_stop(original: Fn) -> Fn:
    """Canonical form drops an empty ``config.stop`` along with the empty system and tool list, though
    only those three members are dropped (an empty stop list is a value the request sent)."""

    def canonical_header(header: Mapping[str, Any]) -> FrozenObject:
        canonical: FrozenObject = original(header)
        config = canonical.get("config")
        if isinstance(config, Mapping) and config.get("stop") in ((), []):
            config = FrozenObject({k: v for k, v in config.items() if k != "stop"})
            return FrozenObject({**canonical, "config": config})
        return canonical

    return canonical_header


@hidden_mutant(
    "header_equality_by_sorted_bytes", "INV-HDR-7", "header", sl_header, "header_equals",
    _decision(_headed({"config": {"provider": "p", "model": "m", "temperature": 1}}),
              {"config": {"provider": "p", "model": "m", "temperature": 1.0}}),
)
def _header_equality_by_sorted_bytes(original: Fn) -> Fn:
    """Header equality compares the key-sorted encodings of the canonical forms and nothing else, so a
    temperature of ``1.0`` differs from ``1``, the same JSON number."""

    def header_equals(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
        pick_a = {k: v for k, v in a.items() if not dropped_in_canonical(k, v)}
        pick_b = {k: v for k, v in b.items() if not dropped_in_canonical(k, v)}
        try:
            return orjson.dumps(pick_a, option=orjson.OPT_SORT_KEYS) == orjson.dumps(pick_b, option=orjson.OPT_SORT_KEYS)
        except orjson.JSONEncodeError:
            return original(a, b)  # type: ignore[no-any-return]

    return header_equals


@hidden_mutant(
    "seeded_header_not_tracked", "INV-HDR-8", "header", Session, "create",
    ({"op": "reset"}, {"op": "seed", "events": list(_headed(p.HEADER))}),
)
def _seeded_header_not_tracked(original: Fn) -> Fn:
    """A seeded session starts with no header in force: the snapshots its seed copied are taken as the
    parent's, so the reconstructed header ignores them until the session writes its own."""

    def create(cls: type[Session], seed: Any = None, header: Any = None, *, clock: Any = None) -> Session:
        session: Session = original(cls, seed, header, clock=clock)
        if seed is not None:
            session._header = None
        return session

    return create


def _begins(facts: InstanceFacts) -> bool:
    return facts.begins_series or facts.replaced_since_last_request


@hidden_mutant(
    "changed_first_request_writes_change", "INV-HDR-9", "header", sl_header, "decide_request_header",
    p.decision(_headed(p.HEADER), p.HEADER_B, first=True, series=False),
)
def _changed_first_request_writes_change(original: Fn) -> Fn:
    """The first request of a loop instance writes ``resume`` only when its header is unchanged: a
    changed one is written as a ``change``, where ``resume`` anchors the instance either way."""

    def decide_request_header(latest: Any, assembled: Any, facts: InstanceFacts) -> HeaderDecision | None:
        if facts.first_request and latest is not None and not sl_header.header_equals(latest, assembled):
            return HeaderDecision(Reason.CHANGE, starts_series=_begins(facts))
        return original(latest, assembled, facts)  # type: ignore[no-any-return]

    return decide_request_header


@hidden_mutant(
    "every_change_starts_series", "INV-HDR-10", "header", sl_header, "decide_request_header",
    p.decision(_headed(p.HEADER), p.HEADER_B, first=False, series=False),
)
def _every_change_starts_series(original: Fn) -> Fn:
    """Every ``change`` snapshot is flagged ``startsSeries`` (a new header taken to begin a new series),
    not only one written when a series begins."""

    def decide_request_header(latest: Any, assembled: Any, facts: InstanceFacts) -> HeaderDecision | None:
        decision: HeaderDecision | None = original(latest, assembled, facts)
        if decision is not None and decision.reason is Reason.CHANGE:
            return HeaderDecision(Reason.CHANGE, starts_series=True)
        return decision

    return decide_request_header


@hidden_mutant(
    "series_written_as_flagged_change", "INV-HDR-11", "header", sl_header, "decide_request_header",
    p.decision(_headed(p.HEADER), p.HEADER, first=False, series=True),
)
def _series_written_as_flagged_change(original: Fn) -> Fn:
    """A series that begins with an unchanged header is written as a ``change`` flagged ``startsSeries``
    (the one way the writer marks a series), not as a ``series`` snapshot."""

    def decide_request_header(latest: Any, assembled: Any, facts: InstanceFacts) -> HeaderDecision | None:
        decision: HeaderDecision | None = original(latest, assembled, facts)
        if decision is not None and decision.reason is Reason.SERIES:
            return HeaderDecision(Reason.CHANGE, starts_series=True)
        return decision

    return decide_request_header


@hidden_mutant(
    "assembled_header_unchecked", "INV-HDR-12", "header", sl_header, "check_assembled_header",
    p.decision([], {"config": {"provider": "p"}}, first=True, series=False),
)
def _assembled_header_unchecked(original: Fn) -> Fn:
    """The writer decides on the header the caller assembled without judging it (it is the caller's), so
    a request whose header names no model gets a decision, and its snapshot is refused only when written."""

    def check_assembled_header(header: object) -> None:
        return None

    return check_assembled_header


# --- INV-JSONL: the header line, the stored form, the reader -------------------------------------------


@hidden_mutant(
    "seed_length_counts_rows", "INV-JSONL-1", "jsonl", sl_codec, "_scan",
    p.load(_header_line(seedLength=5), p.line(p.turn_start(0)), p.line(p.step_start(1)),
           _packed("text-chunks", 2, ["a", "b", "c"])),
)
def _seed_length_counts_rows(original: Fn) -> Fn:
    """``seedLength`` is compared with the rows read, not the events they stand for: a log whose seed ends
    in a packed chunk row is refused as claiming more seed than it holds."""

    def _scan(data: bytes | str) -> Any:
        scanned = original(data)
        seed_length, rows = scanned.header.get("seedLength"), len(set(scanned.lines))
        if is_safe_natural(seed_length) and seed_length > rows:
            raise SeqlogError(
                Code.JSONL_HEADER_INVALID, f"line 1: session header seedLength {seed_length} exceeds the {rows} rows read"
            )
        return scanned

    return _scan


@hidden_mutant(
    "origin_any_string", "INV-JSONL-1", "jsonl", sl_headerline, "check_header_line",
    p.load(_header_line(origin="fork"), p.line(p.turn_start(0))),
)
def _origin_any_string(original: Fn) -> Fn:
    """The header line's ``origin`` is read as a free-form label (any string), where the released codec
    takes only ``"subagent"``."""

    def check_header_line(header: Mapping[str, Any]) -> None:
        if isinstance(header.get("origin"), str):
            header = {**header, "origin": "subagent"}
        original(header)

    return check_header_line


def _utf8_or_replaced(value: object) -> bytes | None:
    """``value`` as compact UTF-8 JSON, with what UTF-8 cannot hold replaced; ``None`` when it will not encode."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None
    return text.encode("utf-8", "replace")


@hidden_mutant(
    "save_replaces_lone_surrogates", "INV-JSONL-2", "jsonl", sl_codec, "encode_line",
    ({"op": "reset"},
     {"op": "append", "event": {"type": "x/note", "seq": 0, "time": T, "data": {"text": "half \ud83d"}, "ignorable": True}},
     {"op": "save"}),
)
def _save_replaces_lone_surrogates(original: Fn) -> Fn:
    """The writer writes every line as UTF-8 text without escapes, replacing what UTF-8 cannot hold, so a
    string holding a lone surrogate is saved as another string."""

    def encode_line(value: object) -> bytes:
        try:
            return orjson.dumps(value)
        except orjson.JSONEncodeError:
            pass
        line = _utf8_or_replaced(value)
        return line if line is not None else original(value)

    return encode_line


def _torn_segment(data: bytes | str) -> bytes | str:
    if isinstance(data, bytes):
        return data[data.rfind(b"\n") + 1 :]
    return data[data.rfind("\n") + 1 :]


@hidden_mutant(
    "torn_turn_end_proves_damage", "INV-JSONL-3", "jsonl", sl_codec, "_scan",
    p.load(p.SESSION_LINE, p.line(p.turn_start(0)), '{"type": "turn/start", "seq": 1,', p.line(p.turn_end(1)),
           final_newline=False),
)
def _torn_turn_end_proves_damage(original: Fn) -> Fn:
    """A torn final segment that parses as a ``turn/end`` proves the damage before it committed, though a
    torn write is dropped unread: the damaged log is refused instead of read up to the damage."""

    def _scan(data: bytes | str) -> Any:
        scanned = original(data)
        torn = _torn_segment(data)
        if scanned.dropped_line is not None and torn:
            try:
                row = sl_codec.parse_line(torn)
            except sl_codec.LineError:
                return scanned
            if row.get("type") == "turn/end":
                raise SeqlogError(
                    Code.JSONL_MALFORMED_LINE, f"line {scanned.dropped_line} is damaged, and a later turn/end commits it"
                )
        return scanned

    return _scan


@hidden_mutant(
    "row_trimmed_of_any_whitespace", "INV-JSONL-4", "jsonl", sl_codec, "parse_line",
    p.load(p.SESSION_LINE, p.line(p.turn_start(0)) + "\x0c"),
)
def _row_trimmed_of_any_whitespace(original: Fn) -> Fn:
    """A row is trimmed with the language's own notion of whitespace before it is parsed, so a form feed
    after the object (which ``JSON.parse`` does not take as whitespace) leaves a readable row."""

    def parse_line(line: bytes | str) -> dict[str, Any]:
        return original(line.strip())  # type: ignore[no-any-return]

    return parse_line


@hidden_mutant(
    "negative_zero_literal_read_as_zero", "INV-JSONL-4", "jsonl", sl_codec, "_js_int",
    p.load(p.SESSION_LINE, '{"type":"turn/start","seq":0,"time":-0,"data":{"turn":1}}'),
)
def _negative_zero_literal_read_as_zero(original: Fn) -> Fn:
    """The reader parses the integer literal ``-0`` as the integer 0, where ``JSON.parse`` reads negative
    zero: a stored time of ``-0`` is read as 0 (an append of ``-0`` is still refused)."""

    def _js_int(text: str) -> object:
        return 0 if text == "-0" else original(text)

    return _js_int


@hidden_mutant(
    "numeric_string_seq_read_as_number", "INV-JSONL-5", "jsonl", sl_codec, "_decode_row",
    p.load(p.SESSION_LINE, '{"type":"turn/start","seq":"0","time":1700000000000,"data":{"turn":1}}'),
)
def _numeric_string_seq_read_as_number(original: Fn) -> Fn:
    """The reader compares a row's seq loosely (``"0" == 0``): a seq written as a numeric string keeps the
    sequence and is read as that number, where it is off the sequence."""

    def _decode_row(line: bytes | str, number: int) -> Any:
        decoded, packed, spans = original(line, number)
        seq = decoded[0].get("seq") if not packed else None
        if isinstance(seq, str) and seq.isascii() and seq.isdigit():
            decoded = [{**decoded[0], "seq": int(seq)}]
        return decoded, packed, spans

    return _decode_row


@hidden_mutant(
    "integral_float_version_unsupported", "INV-JSONL-7", "jsonl", sl_headerline, "check_version",
    p.load('{"type":"session","version":1.0,"id":"s","createdAt":0,"delegationDepth":0}', p.line(p.turn_start(0))),
)
def _integral_float_version_unsupported(original: Fn) -> Fn:
    """The format version is compared by type and value: a header line of version ``1.0``, the same JSON
    number as 1, is refused as an unsupported version."""

    def check_version(header: Mapping[str, Any]) -> None:
        version = header.get("version")
        if type(version) is float:
            raise SeqlogError(Code.FORMAT_VERSION_UNSUPPORTED, f"line 1: format version {version} is not supported")
        original(header)

    return check_version


@hidden_mutant(
    "reasoning_row_as_text_deltas", "INV-JSONL-9", "read", sl_rows, "decode_packed_row",
    _read(p.SESSION_LINE, p.line(p.turn_start(0)), p.line(p.step_start(1)), _packed("reasoning-chunks", 2, ["a", "b", "c"])),
)
def _reasoning_row_as_text_deltas(original: Fn) -> Fn:
    """A ``reasoning-chunks`` row is expanded like a ``text-chunks`` row (both carry ``texts``), so its
    members come back as text deltas instead of reasoning deltas."""

    def decode_packed_row(row: Mapping[str, Any], tag: str) -> list[dict[str, Any]]:
        return original(row, "text-chunks" if tag == "reasoning-chunks" else tag)  # type: ignore[no-any-return]

    return decode_packed_row


@hidden_mutant(
    "packed_absent_name_as_empty", "INV-JSONL-9", "read", sl_rows, "decode_packed_row",
    _read(p.SESSION_LINE, p.line(p.turn_start(0)), p.line(p.step_start(1)),
          _packed("tool-call-chunks", 2, ['{"pa', 'th": ', '"a"}'], id="c1")),
)
def _packed_absent_name_as_empty(original: Fn) -> Fn:
    """A ``tool-call-chunks`` row without ``name`` gives its members an empty ``name`` (a missing string
    read as empty), where they carry none."""

    def decode_packed_row(row: Mapping[str, Any], tag: str) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = original(row, tag)
        data = row.get("data")
        if tag == "tool-call-chunks" and isinstance(data, Mapping) and "name" not in data:
            for event in events:
                event["data"]["chunk"]["name"] = ""
        return events

    return decode_packed_row


@hidden_mutant(
    "reversed_range_normalised", "INV-JSONL-10", "read", sl_rows, "decode_seq_ranges",
    _read(p.SESSION_LINE, p.line(p.user(0)), p.line(p.user(1)), p.line({**p.user(2), "sourceEventSeqs": [[1, 0]]})),
)
def _reversed_range_normalised(original: Fn) -> Fn:
    """A stored ``[start, end]`` range written end first is read as the same range (its bounds put in
    order), instead of making the row faulty."""

    def decode_seq_ranges(value: object, max_entries: int) -> Any:
        if isinstance(value, list | tuple):
            value = [sorted(entry) if isinstance(entry, list | tuple) and len(entry) == 2
                     and all(isinstance(bound, int | float) for bound in entry) else entry for entry in value]
        return original(value, max_entries)

    return decode_seq_ranges


@hidden_mutant(
    "refused_append_written_ahead", "INV-JSONL-11", "storage", Session, "validate",
    ({"op": "store_create", "dir": p.STORE, "header": json.loads(p.SESSION_LINE)},
     {"op": "store_append", "event": p.turn_start(0)},
     {"op": "store_append", "event": p.turn_start(1, turn=2)},
     {"op": "store_close"},
     {"op": "store_open", "dir": p.STORE}),
)
def _refused_append_written_ahead(original: Fn) -> Fn:
    """A store writes each candidate's line before the session judges it (write-ahead) and does not take
    a refused one back, so the refused event is on disk and counted as written."""

    def validate(self: Session, raw: object) -> Any:
        try:
            return original(self, raw)
        except SeqlogError as error:
            sink = self._sink
            if isinstance(sink, SessionStore):
                try:
                    event = decode_event(raw)
                    line = sl_codec.encode_event_line(event)
                except SeqlogError:
                    raise error from None
                sink._buffer.append(line)
                sink._buffered.append(event)
                sink._buffered_bytes += len(line)
                sink._buffered_events += 1
            raise

    return validate


# --- INV-LEGACY: the v0-to-v1 edge ----------------------------------------------------------------------


@hidden_mutant(
    "edge_fallback_refused_as_malformed", "INV-LEGACY-2", "legacy", sl_legacy, "check_refusals",
    p.upgrade(p.turn_start(0), p.header_event(1, p.HEADER, "fallback")),
)
def _edge_fallback_refused_as_malformed(original: Fn) -> Fn:
    """The edge has no refusal of its own for the ``fallback`` reason: its v0 payload table finds the
    snapshot's reason unknown and refuses it as a malformed source, not as the legacy reason it is."""

    def check_refusals(raw_events: Sequence[object]) -> None:
        hidden: list[object] = []
        for raw in raw_events:
            data = raw.get("data") if isinstance(raw, Mapping) else None
            fallback = isinstance(data, Mapping) and data.get("reason") == "fallback"
            if isinstance(raw, Mapping) and isinstance(data, Mapping) and raw.get("type") == "request/header" and fallback:
                hidden.append({**raw, "data": {**data, "reason": "initial"}})
            else:
                hidden.append(raw)
        original(hidden)

    return check_refusals


@hidden_mutant(
    "wrapped_steering_id_reminted", "INV-LEGACY-5", "legacy", sl_legacy, "_steering_data",
    p.upgrade(_v0("steering/message", 0, {"turn": 1, "message": {**p.user(0)["data"], "id": "steer-7"}}, surfaceOp="append")),
)
def _wrapped_steering_id_reminted(original: Fn) -> Fn:
    """N3 mints ``legacy-message:<sessionId>:<seq>`` for every steering message, also one of the
    ``{turn, message}`` form whose message already has its id."""

    def _steering_data(data: Mapping[str, Any], session_id: str, seq: int) -> Mapping[str, Any]:
        converted: Mapping[str, Any] = original(data, session_id, seq)
        if "message" in data:
            return {**converted, "id": sl_legacy._legacy_id(session_id, seq)}
        return converted

    return _steering_data


@hidden_mutant(
    "steering_turn_kept", "INV-LEGACY-5", "legacy", sl_legacy, "_steering_data",
    p.upgrade(_v0("steering/message", 0, {"turn": 1, "content": _STEERING_CONTENT, "source": {"kind": "user"}},
                  surfaceOp="append")),
)
def _steering_turn_kept(original: Fn) -> Fn:
    """N3 converts the ``{turn, content, source}`` form into a user message but keeps its ``turn`` beside
    the minted id and role, where the turn is dropped."""

    def _steering_data(data: Mapping[str, Any], session_id: str, seq: int) -> Mapping[str, Any]:
        converted: Mapping[str, Any] = original(data, session_id, seq)
        if "message" not in data:
            return {**converted, "turn": data["turn"]}
        return converted

    return _steering_data


@hidden_mutant(
    "legacy_result_is_error_false_dropped", "INV-LEGACY-5", "legacy", sl_legacy, "_normalise_data",
    p.upgrade(p.turn_start(0), p.step_start(1), p.assistant(2, ["c1"]), p.tool_call(3, "c1"),
              _v0("tool/result", 4, {"turn": 1, "step": 1, "callId": "c1", "content": [{"type": "text", "text": "out"}],
                                     "isError": False}, surfaceOp="append")),
)
def _legacy_result_is_error_false_dropped(original: Fn) -> Fn:
    """N4 builds a pre-identity result's tool-result block with ``isError`` only when it is ``true``
    (``false`` taken as the default), where the block keeps the flag as the v0 result gave it."""

    def _normalise_data(type_: str, data: Mapping[str, Any], session_id: str, seq: object) -> object:
        converted = original(type_, data, session_id, seq)
        message = converted.get("message") if isinstance(converted, Mapping) else None
        if type_ == "tool/result" and "message" not in data and data.get("isError") is False and isinstance(message, Mapping):
            block = {k: v for k, v in message["content"][0].items() if k != "isError"}
            return {**converted, "message": {**message, "content": [block]}}
        return converted

    return _normalise_data


@hidden_mutant(
    "assistant_provenance_left_beside_message", "INV-LEGACY-5", "legacy", sl_legacy, "_normalise_data",
    p.upgrade(p.turn_start(0), p.step_start(1),
              _v0("assistant/message", 2, {"turn": 1, "step": 1, "content": [{"type": "text", "text": "ok"}],
                                           "provenance": {"provider": "p", "model": "m"}}, surfaceOp="append")),
)
def _assistant_provenance_left_beside_message(original: Fn) -> Fn:
    """N4 builds a pre-identity assistant message from ``content`` and ``provenance`` but leaves both
    members beside the new ``message``, where they move into it."""

    def _normalise_data(type_: str, data: Mapping[str, Any], session_id: str, seq: object) -> object:
        converted = original(type_, data, session_id, seq)
        if type_ == "assistant/message" and "message" not in data and isinstance(converted, Mapping) and "message" in converted:
            return {**data, **converted}
        return converted

    return _normalise_data


@hidden_mutant(
    "retry_chain_key_without_policy", "INV-LEGACY-5", "legacy", sl_legacy, "_chain_key",
    p.upgrade(p.turn_start(0), p.step_start(1), p.header_event(2, p.HEADER), _v0_retry(3, "a"), _v0_retry(4, "b")),
)
def _retry_chain_key_without_policy(original: Fn) -> Fn:
    """N8 names a retry chain by turn, step and provider, leaving out ``policyKey``: the first attempt of a
    second policy inherits the first policy's minted id."""

    def _chain_key(data: Mapping[str, Any]) -> str:
        return original({k: v for k, v in data.items() if k != "policyKey"})  # type: ignore[no-any-return]

    return _chain_key


@hidden_mutant(
    "trigger_extra_members_refused", "INV-LEGACY-9", "legacy", sl_legacy, "_turn_start",
    p.upgrade(_v0("turn/start", 0, {"turn": 1, "trigger": {"kind": "user", "source": "cli"}})),
)
def _trigger_extra_members_refused(original: Fn) -> Fn:
    """N1 wants a ``trigger`` of exactly ``{kind}``: a v0 trigger carrying more than its kind, which the
    edge drops whole, is refused as a malformed source."""

    def _turn_start(data: Mapping[str, Any], seq: int) -> Mapping[str, Any]:
        trigger = data.get("trigger")
        if isinstance(trigger, Mapping) and set(trigger) - {"kind"}:
            raise SeqlogError(Code.LEGACY_SOURCE_INVALID, f"v0 index {seq}: turn/start trigger must be exactly {{kind}}")
        return original(data, seq)  # type: ignore[no-any-return]

    return _turn_start


@hidden_mutant(
    "edge_marker_session_unchecked", "INV-LEGACY-9", "legacy", sl_legacy._Edge, "_check_marker",
    p.upgrade(p.turn_start(0), _v0(MARKER, 1, {"sessionId": "other", "throughSeq": 0})),
)
def _edge_marker_session_unchecked(original: Fn) -> Fn:
    """The edge converts delivery markers without reading them: a marker of the log's own generation that
    names another session is passed on (and no v1 rule judges a generation-0 marker)."""

    def _check_marker(self: Any, type_: str, data: object, seq: int) -> None:
        return None

    return _check_marker


@hidden_mutant(
    "edge_renumbers_v0_seqs", "INV-LEGACY-9", "legacy", sl_legacy._Edge, "convert",
    p.upgrade(p.turn_start(0), p.user(3)),
)
def _edge_renumbers_v0_seqs(original: Fn) -> Fn:
    """The edge numbers the events it converts by their position, as the v1 log needs them, instead of
    refusing a v0 event that is not at its own seq."""

    def convert(self: Any, raw: object, index: int) -> object:
        if isinstance(raw, Mapping) and raw.get("seq") != index:
            raw = {**raw, "seq": index}
        return original(self, raw, index)

    return convert


@hidden_mutant(
    "v1_log_sent_through_edge", "INV-LEGACY-7", "legacy", sl_legacy, "upgrade_with_session",
    _v1_upgrade(p.turn_start(0), p.event(MARKER, 1, {"sessionId": "s", "throughSeq": 0, "sessionFormatVersion": 1})),
)
def _v1_log_sent_through_edge(original: Fn) -> Fn:
    """The edge converts a v1 log like a v0 one (taken as a no-op on it), so a v1 event the v0 payload
    table does not know, a delivery marker of generation 1, is refused as a malformed source."""

    def upgrade_with_session(log: sl_legacy.StoredLog) -> Any:
        if sl_legacy.check_header_and_version(log.header) == 1:
            edge = sl_legacy._Edge(log.header, str(log.header.get("id")))
            events = [edge.convert(raw, index) for index, raw in enumerate(log.events)]
            return log, Session.restore(events, legacy_restart=True)
        return original(log)

    return upgrade_with_session
