"""Mutants of the second half (see :func:`killrate.mutants.blind_mutant`).

The edges of the format: request headers (``INV-HDR``), the JSONL codec and the durable store
(``INV-JSONL``) and the v0-to-v1 edge (``INV-LEGACY``).  Written from ``invariants.md``,
``spec/PROTOCOL.md`` and seqlog's source alone; each breaks one rule in one place (invariant x event
type x path) that the first half of the catalogue does not already break.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import seqlog.codec as sl_codec
import seqlog.event as sl_event
import seqlog.header as sl_header
import seqlog.legacy as sl_legacy
import seqlog.rows as sl_rows
import seqlog.store as sl_store
from killrate import probes as p
from killrate.mutants import Fn, blind_mutant
from seqlog.errors import Code, SeqlogError
from seqlog.event import KNOWN_TYPES, Event
from seqlog.header import ADAPTER_DEFAULT_KEYS, InstanceFacts
from seqlog.headerline import FORMAT_VERSION, HEADER_LINE_REQUIRED
from seqlog.jsonvalue import FrozenObject, as_object, freeze
from seqlog.session import Session
from seqlog.store import SessionStore

# --- probe helpers ------------------------------------------------------------------------------------

_V1_HEADER: dict[str, Any] = json.loads(p.SESSION_LINE)


def _decision(
    events: Sequence[dict[str, Any]], header: dict[str, Any], *, first: bool = False, series: bool = False, replaced: bool = False
) -> p.Probe:
    """One ``header_decision`` with every instance fact given."""
    instance = {"first_request": first, "begins_series": series, "replaced_since_last_request": replaced}
    return ({"op": "header_decision", "events": list(events), "header": header, "instance": instance},)


def _read(*lines: str) -> p.Probe:
    """``read`` of a stored log made of ``lines`` (each ending in a newline)."""
    return ({"op": "read", "jsonl": "".join(f"{line}\n" for line in lines)},)


def _upgrade_v1(*events: dict[str, Any]) -> p.Probe:
    """``upgrade_v0`` of a log that already is v1 (the edge's own output)."""
    return ({"op": "upgrade_v0", "log": {"header": _V1_HEADER, "events": list(events)}},)


def _text_row(seq0: int, texts: list[Any], dt: list[int]) -> str:
    """A packed ``text-chunks`` row standing for ``len(texts)`` chunks of turn 1, step 1."""
    data = {"turn": 1, "step": 1, "index": 0, "dt": dt, "texts": texts}
    return p.line({"type": "text-chunks", "seq0": seq0, "time0": p.T + seq0, "data": data})


_SPLICED = p.event(
    "agent/inbox/spliced",
    1,
    {"target": "next-turn", "start": 0, "inserted": [{"id": "q1", "role": "user", "content": [], "source": {"kind": "user"}}]},
)
_RESTART = (p.turn_start(0), _SPLICED, p.turn_start(2, turn=2))
"""A released v0 writer's interrupted-turn restart: turn 2 starts after a next-turn splice, turn 1 never ended."""


def _data(event: Event) -> Mapping[str, Any]:
    return event.data if isinstance(event.data, Mapping) else {}


# --- INV-HDR: request headers -------------------------------------------------------------------------


@blind_mutant(
    "adapter_marker_for_absent_field", "INV-HDR-3", "header", sl_header, "check_header_shape",
    _decision([p.turn_start(0), p.header_event(1, p.HEADER)], {**p.HEADER, "adapterDefaults": {"maxTokens": True}}),
)  # fmt: skip
def _adapter_marker_for_absent_field(original: Fn) -> Fn:
    """adapterDefaults may mark reasoningEffort/maxTokens as true without the config field being present."""

    def check_header_shape(header: object) -> None:
        obj = as_object(header)
        defaults = as_object(obj.get("adapterDefaults")) if obj is not None else None
        if obj is not None and defaults is not None and all(k in ADAPTER_DEFAULT_KEYS and v is True for k, v in defaults.items()):
            header = {k: v for k, v in obj.items() if k != "adapterDefaults"}
        original(header)

    return check_header_shape


@blind_mutant(
    "header_equality_one_sided", "INV-HDR-12", "header", sl_header, "header_equals",
    _decision([p.turn_start(0), p.header_event(1, p.HEADER)], p.HEADER_B),
)  # fmt: skip
def _header_equality_one_sided(original: Fn) -> Fn:
    """Header equality compares only the members of the latest snapshot, so a member the assembled header
    adds (a system prompt) writes no snapshot and the reconstructed header lacks it."""

    def header_equals(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
        equal: bool = original(a, {k: v for k, v in b.items() if k in a})
        return equal

    return header_equals


@blind_mutant(
    "fold_skips_series_snapshot", "INV-HDR-8", "header", sl_header, "fold_request_header",
    p.pure("fold_header", p.header_event(0, p.HEADER), p.header_event(1, p.HEADER_B, "series")),
)  # fmt: skip
def _fold_skips_series_snapshot(original: Fn) -> Fn:
    """Reconstruction skips ``series`` snapshots (taken as repeats), so the header in force is an older one."""

    def fold_request_header(events: Iterable[Event]) -> FrozenObject | None:
        kept = [e for e in events if not (e.type == "request/header" and _data(e).get("reason") == "series")]
        folded: FrozenObject | None = original(kept)
        return folded

    return fold_request_header


@blind_mutant(
    "resume_snapshot_not_tracked", "INV-HDR-8", "header", Session, "commit",
    p.appends(p.turn_start(0), p.header_event(1, p.HEADER), p.header_event(2, p.HEADER_B, "resume")),
)  # fmt: skip
def _resume_snapshot_not_tracked(original: Fn) -> Fn:
    """The session's tracked header ignores ``resume`` snapshots (taken as re-anchoring the same header)."""

    def commit(self: Session, plan: Any) -> Event:
        before = self._header
        event: Event = original(self, plan)
        if event.type == "request/header" and _data(event).get("reason") == "resume":
            self._header = before
        return event

    return commit


@blind_mutant(
    "frozen_empty_tools_canonical", "INV-HDR-5", "jsonl", sl_header, "dropped_in_canonical",
    p.load(p.SESSION_LINE, p.line(p.turn_start(0)), p.line(p.header_event(1, {**p.HEADER, "tools": []}))),
)  # fmt: skip
def _frozen_empty_tools_canonical(original: Fn) -> Fn:
    """Only an empty ``list`` of tools counts as empty, so a decoded (frozen, tuple) empty tool list
    passes as canonical when a stored log is loaded."""

    def dropped_in_canonical(key: str, value: object) -> bool:
        if key == "tools":
            return isinstance(value, list) and len(value) == 0
        dropped: bool = original(key, value)
        return dropped

    return dropped_in_canonical


@blind_mutant(
    "tool_extra_members_ignored", "INV-HDR-1", "session", sl_event, "decode_event",
    p.appends(p.turn_start(0), p.header_event(1, {**p.HEADER, "tools": [{**p.TOOL, "strict": True}]})),
)  # fmt: skip
def _tool_extra_members_ignored(original: Fn) -> Fn:
    """A header tool may carry members beyond name/description/parameters (a ``strict`` flag): decode_event
    drops them instead of the snapshot being refused."""

    # The header rules and the payload table both refuse the extra member, so the mutant drops it
    # before either looks (one decision: extra tool members are ignored).
    def decode_event(raw: object) -> Event:
        data = raw.get("data") if isinstance(raw, Mapping) and raw.get("type") == "request/header" else None
        header = data.get("header") if isinstance(data, Mapping) else None
        tools = header.get("tools") if isinstance(header, Mapping) else None
        if isinstance(raw, Mapping) and isinstance(data, Mapping) and isinstance(header, Mapping) and isinstance(tools, list):
            kept = [{k: v for k, v in t.items() if k in _TOOL_KEYS} if isinstance(t, Mapping) else t for t in tools]
            raw = {**raw, "data": {**data, "header": {**header, "tools": kept}}}
        decoded: Event = original(raw)
        return decoded

    return decode_event


_TOOL_KEYS = ("name", "description", "parameters")


@blind_mutant(
    "replacement_not_a_series", "INV-HDR-11", "header", sl_header, "decide_request_header",
    _decision([p.turn_start(0), p.header_event(1, p.HEADER)], p.HEADER, replaced=True),
)  # fmt: skip
def _replacement_not_a_series(original: Fn) -> Fn:
    """Only a declared series begins one: a surface replacement since the last request writes no ``series`` snapshot."""

    def decide_request_header(latest: Any, assembled: Any, facts: InstanceFacts) -> Any:
        facts = dataclasses.replace(facts, replaced_since_last_request=False)
        return original(latest, assembled, facts)

    return decide_request_header


# --- INV-JSONL: the stored form -------------------------------------------------------------------


@blind_mutant(
    "packed_times_not_cumulative", "INV-JSONL-9", "read", sl_rows, "decode_packed_row",
    _read(p.SESSION_LINE, p.line(p.turn_start(0)), p.line(p.step_start(1)), _text_row(2, ["a", "b", "c"], [3, 4])),
)  # fmt: skip
def _packed_times_not_cumulative(original: Fn) -> Fn:
    """A packed chunk row's member k is timed time0 + dt[k-1] instead of time0 plus the first k gaps."""

    def decode_packed_row(row: Mapping[str, Any], tag: str) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = original(row, tag)
        gaps = row["data"]["dt"]
        time0 = events[0]["time"]
        return [{**e, "time": time0 + (int(gaps[k - 1]) if k else 0)} for k, e in enumerate(events)]

    return decode_packed_row


@blind_mutant(
    "packed_row_half_read", "INV-JSONL-9", "jsonl", sl_rows, "decode_packed_row",
    p.load(p.SESSION_LINE, p.line(p.turn_start(0)), p.line(p.step_start(1)), _text_row(2, ["a", 5, "b"], [1, 1])),
)  # fmt: skip
def _packed_row_half_read(original: Fn) -> Fn:
    """A packed chunk row with a member that is not a string expands its other members instead of being a faulty row."""

    def decode_packed_row(row: Mapping[str, Any], tag: str) -> list[dict[str, Any]]:
        data = row.get("data")
        member = "args" if tag == "tool-call-chunks" else "texts"
        payload = data.get(member) if isinstance(data, Mapping) else None
        if isinstance(data, Mapping) and isinstance(payload, list) and any(type(m) is str for m in payload):
            strings = [m for m in payload if type(m) is str]
            if len(strings) < len(payload):
                gaps = data.get("dt")
                gaps = gaps[: len(strings) - 1] if isinstance(gaps, list) else gaps
                row = {**row, "data": {**data, member: strings, "dt": gaps}}
        events: list[dict[str, Any]] = original(row, tag)
        return events

    return decode_packed_row


@blind_mutant(
    "range_end_exclusive", "INV-JSONL-10", "read", sl_rows, "expand_spans",
    _read(p.SESSION_LINE, p.line(p.user(0)), p.line(p.user(1)), p.line({**p.user(2), "sourceEventSeqs": [[0, 1]]})),
)  # fmt: skip
def _range_end_exclusive(original: Fn) -> Fn:
    """A stored ``[start, end]`` provenance range expands without its end (``range(start, end)``)."""

    def expand_spans(spans: list[tuple[int, int]]) -> list[int]:
        out: list[int] = []
        for start, end in spans:
            out.extend([start] if start == end else range(start, end))
        return out

    return expand_spans


@blind_mutant(
    "range_order_unchecked", "INV-JSONL-10", "jsonl", sl_rows, "decode_seq_ranges",
    p.load(p.SESSION_LINE, p.line(p.user(0)), p.line(p.user(1)), p.line({**p.user(2), "sourceEventSeqs": [[1, 1], 0]})),
)  # fmt: skip
def _range_order_unchecked(original: Fn) -> Fn:
    """Range-encoded provenance need not be strictly increasing: ``[[1, 1], 0]`` reads as ``[1, 0]``."""

    def decode_seq_ranges(value: object, max_entries: int) -> list[tuple[int, int]]:
        try:
            spans: list[tuple[int, int]] = original(value, max_entries)
            return spans
        except sl_rows.RowError as error:
            if "strictly increasing" not in str(error) or not isinstance(value, list | tuple):
                raise
        return [span for entry in value for span in original([entry], max_entries)]

    return decode_seq_ranges


@blind_mutant(
    "repeated_row_skipped", "INV-JSONL-5", "read", sl_codec, "_split",
    _read(p.SESSION_LINE, p.line(p.turn_start(0)), p.line(p.turn_start(0)), p.line(p.turn_end(1))),
)  # fmt: skip
def _repeated_row_skipped(original: Fn) -> Fn:
    """A row written twice in a row is read once (a retried write taken as harmless) instead of as a duplicated row."""

    def _split(data: bytes | str) -> tuple[list[Any], bool]:
        lines, torn = original(data)
        # The header line and the first row are kept as they are; a later row equal to the one before it goes.
        kept = [line for i, line in enumerate(lines) if i < 2 or line != lines[i - 1]]
        return kept, torn

    return _split


@blind_mutant(
    "save_writes_required_header_only", "INV-JSONL-2", "jsonl", sl_codec, "encode_header_line",
    ({"op": "reset", "header": {**_V1_HEADER, "cwd": "/work", "agentPreset": "coder"}}, {"op": "save"}),
)  # fmt: skip
def _save_writes_required_header_only(original: Fn) -> Fn:
    """The stored header line keeps only the required members; optional ones (cwd, agentPreset...) are lost on save."""

    def encode_header_line(header: Mapping[str, Any]) -> bytes:
        line: bytes = original({k: v for k, v in header.items() if k in HEADER_LINE_REQUIRED})
        return line

    return encode_header_line


@blind_mutant(
    "restart_admitted_on_v1_load", "INV-LEGACY-6", "jsonl", sl_codec, "_read",
    p.load(p.SESSION_LINE, *map(p.line, _RESTART)),
)  # fmt: skip
def _restart_admitted_on_v1_load(original: Fn) -> Fn:
    """The v1 reader replays every log as the edge replays its output, so a v1 log with an interrupted-turn restart loads."""

    def _read(data: bytes | str, clock: Any, upgraded: bool = False) -> Any:
        return original(data, clock, True)

    return _read


# --- INV-LEGACY: the v0-to-v1 edge -----------------------------------------------------------------


@blind_mutant(
    "v1_log_passed_unvalidated", "INV-LEGACY-6", "legacy", sl_legacy, "upgrade_with_session",
    _upgrade_v1(p.turn_start(0, turn=2)),
)  # fmt: skip
def _v1_log_passed_unvalidated(original: Fn) -> Fn:
    """The edge hands a v1 log back as it came without validating it (a broken v1 log goes through)."""

    def upgrade_with_session(log: sl_legacy.StoredLog) -> tuple[sl_legacy.StoredLog, Session]:
        if sl_legacy.check_header_and_version(log.header) == FORMAT_VERSION:
            try:
                upgraded: tuple[sl_legacy.StoredLog, Session] = original(log)
            except SeqlogError:
                return log, Session(header=log.header)
            return upgraded
        converted: tuple[sl_legacy.StoredLog, Session] = original(log)
        return converted

    return upgrade_with_session


@blind_mutant(
    "reupgrade_refuses_restart", "INV-LEGACY-7", "legacy", sl_legacy, "upgrade_with_session",
    _upgrade_v1(*_RESTART),
)  # fmt: skip
def _reupgrade_refuses_restart(original: Fn) -> Fn:
    """The edge validates a v1 log as plain v1, so its own output with an interrupted-turn restart is refused
    when upgraded again (the edge is not a fixed point)."""

    def upgrade_with_session(log: sl_legacy.StoredLog) -> tuple[sl_legacy.StoredLog, Session]:
        if sl_legacy.check_header_and_version(log.header) == FORMAT_VERSION:
            try:
                return log, Session.restore(log.events)
            except SeqlogError as error:
                raise error.at("v1 log") from None
        converted: tuple[sl_legacy.StoredLog, Session] = original(log)
        return converted

    return upgrade_with_session


_LEGACY_ONLY_TYPES = sl_legacy.V0_INVENTORY - KNOWN_TYPES
"""The v0 types the edge renames or rewrites (``steering/message``, ``compact/*``)."""


@blind_mutant(
    "ignorable_legacy_form_kept", "INV-LEGACY-8", "legacy", sl_legacy._Edge, "convert",
    p.upgrade(
        p.turn_start(0),
        p.event("steering/message", 1, {"turn": 1, "content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}},
                ignorable=True),
    ),
)  # fmt: skip
def _ignorable_legacy_form_kept(original: Fn) -> Fn:
    """An ignorable ``steering/message`` or ``compact/*`` event passes through the edge unconverted
    (a v1 reader may skip it), so the output still holds a legacy form."""

    def convert(self: Any, raw: object, index: int) -> object:
        legacy_form = isinstance(raw, Mapping) and raw.get("type") in _LEGACY_ONLY_TYPES and raw.get("seq") == index
        if legacy_form and isinstance(raw, Mapping) and raw.get("ignorable") is True:
            sl_legacy.check_refusals((raw,))
            return freeze(raw)
        return original(self, raw, index)

    return convert


@blind_mutant(
    "message_prefix_any_type_dropped", "INV-LEGACY-9", "legacy", sl_legacy, "_request_header",
    p.upgrade(p.turn_start(0), p.header_event(1, {**p.HEADER, "messagePrefix": "Hello."})),
)  # fmt: skip
def _message_prefix_any_type_dropped(original: Fn) -> Fn:
    """N5 drops a v0 snapshot's ``messagePrefix`` whatever it holds, instead of refusing one that is not an array."""

    def _request_header(data: Mapping[str, Any], seq: int) -> Mapping[str, Any]:
        header = as_object(data.get("header"))
        if header is not None and "messagePrefix" in header and not isinstance(header["messagePrefix"], list | tuple):
            data = {**data, "header": {**header, "messagePrefix": []}}
        out: Mapping[str, Any] = original(data, seq)
        return out

    return _request_header


# --- INV-JSONL-11: the durable store -------------------------------------------------------------------

_STORE = p.STORE
_CREATE = {"op": "store_create", "dir": _STORE, "header": _V1_HEADER}
_OPEN = {"op": "store_open", "dir": _STORE}
_CLOSE = {"op": "store_close"}


def _damage(*lines: str, tail: str = "") -> dict[str, Any]:
    """The store's file replaced by ``lines`` (each ending in a newline) and a ``tail`` without one."""
    return {"op": "store_damage", "dir": _STORE, "jsonl": "".join(f"{line}\n" for line in lines) + tail}


_ACCENTED = {**p.user(0), "data": {**p.user(0)["data"], "content": [{"type": "text", "text": "déjà vu, naïve café"}]}}


@blind_mutant(
    "reopen_cuts_by_characters", "INV-JSONL-11", "storage", sl_store, "_read",
    (
        _CREATE, _CLOSE,
        _damage(p.SESSION_LINE, json.dumps(_ACCENTED, ensure_ascii=False, separators=(",", ":")), tail='{"type":"turn/st'),
        _OPEN, _CLOSE, _OPEN,
    ),
)  # fmt: skip
def _reopen_cuts_by_characters(original: Fn) -> Fn:
    """Reopening cuts a torn tail at the kept prefix's length in characters, not bytes, so non-ASCII text
    makes the cut land inside the last committed line."""

    def _read(path: Path, clock: Any) -> Any:
        disk = original(path, clock)
        if not disk.cut or path.name.endswith(".zst"):
            return disk
        data = path.read_bytes()
        keep = len(data[: disk.keep_bytes].decode("utf-8", "replace"))
        return dataclasses.replace(disk, keep_bytes=keep, dropped=data[keep:])

    return _read


@blind_mutant(
    "reopen_closers_in_memory_only", "INV-JSONL-11", "storage", SessionStore, "_finish_tail",
    (_CREATE, {"op": "store_append", "event": p.turn_start(0)}, _CLOSE, _OPEN, _CLOSE, _OPEN),
)  # fmt: skip
def _reopen_closers_in_memory_only(original: Fn) -> Fn:
    """Reopening closes a crash-orphaned turn in memory only: the closers are reported durable but never written."""

    def _finish_tail(path: Path, disk: Any, pack_chunks: bool) -> None:
        original(path, dataclasses.replace(disk, loaded=dataclasses.replace(disk.loaded, closers=())), pack_chunks)

    return _finish_tail


@blind_mutant(
    "open_salvages_committed_damage", "INV-JSONL-11", "storage", sl_store, "_read",
    (
        _CREATE, {"op": "store_append", "event": p.turn_start(0)}, {"op": "store_append", "event": p.turn_end(1)}, _CLOSE,
        _damage(p.SESSION_LINE, p.line(p.turn_start(0)), '{"type":"turn/e', p.line(p.turn_end(1))),
        _OPEN,
    ),
)  # fmt: skip
def _open_salvages_committed_damage(original: Fn) -> Fn:
    """Reopening a store whose committed history is damaged keeps the longest readable prefix (cutting the rest,
    acknowledged events included) instead of refusing it."""

    def _read(path: Path, clock: Any) -> Any:
        try:
            return original(path, clock)
        except SeqlogError as error:
            if error.code not in (Code.JSONL_MALFORMED_LINE, Code.SEQ_NOT_CONTIGUOUS) or path.name.endswith(".zst"):
                raise
            data = path.read_bytes()
            ends = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
            for end in reversed(ends[:-1]):
                try:
                    loaded = sl_codec.load_bytes(data[:end], clock=clock)
                except SeqlogError:
                    continue
                return sl_store._OnDisk(loaded, end, True, False, False, data[end:])
            raise

    return _read


@blind_mutant(
    "checkpoint_counts_before_flush", "INV-JSONL-11", "storage", SessionStore, "_sync",
    (_CREATE, {"op": "store_append", "event": p.turn_start(0)}, {"op": "store_checkpoint"}),
)  # fmt: skip
def _checkpoint_counts_before_flush(original: Fn) -> Fn:
    """A checkpoint records as durable what had been written before it flushed its buffer, so the events it
    just wrote and synced are not counted (durable_length lags behind length)."""

    def _sync(self: SessionStore) -> None:
        written_before = self._written
        original(self)
        self._durable = written_before

    return _sync
