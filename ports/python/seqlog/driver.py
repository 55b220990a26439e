"""seqlog as a ``sessionlog-driver/1`` port: ``python -m seqlog.driver`` speaks JSON Lines on stdin/stdout.

Every op goes through the library's public pieces (the session, the surface manager, the header
rules, repair, the JSONL codec the store uses, the v0 edge), so the conformance suite checks the
library itself, not a re-implementation inside the driver.  The driver uses the seq and time each
request gives; the session's own clock is never consulted.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import orjson

from seqlog import __version__
from seqlog.codec import check_header_line, encode_jsonl, load_text, read_text
from seqlog.errors import Code, SeqlogError
from seqlog.event import Event, decode_event, encode_event
from seqlog.header import InstanceFacts, check_assembled_header, check_snapshots, decide_request_header, fold_request_header
from seqlog.jsonvalue import FrozenObject, NotLossless, freeze, thaw
from seqlog.legacy import StoredLog, upgrade_v0
from seqlog.repair import interrupted_turn_closers
from seqlog.session import Session
from seqlog.store import SessionStore
from seqlog.surface import fold_surface

PROTOCOL = "sessionlog-driver/1"
CAPABILITIES = ("session", "surface", "header", "repair", "jsonl", "read", "legacy", "compaction", "storage")
DEFAULT_HEADER: dict[str, Any] = {"type": "session", "version": 1, "id": "conformance", "createdAt": 0, "delegationDepth": 0}


class BadRequest(Exception):
    """The request itself is malformed."""


def _pinned_clock() -> int:
    raise AssertionError("the driver passes every event's time; the clock must not be read")


def _new_session(seed: list[Any] | None = None) -> Session:
    return Session.create(seed, header=DEFAULT_HEADER, clock=_pinned_clock)


def state_result(session: Session) -> dict[str, Any]:
    """The protocol's observable state of a session."""
    header = session.request_header()
    return {
        "length": len(session),
        "nodes": list(session.surface.nodes),
        "replace_generation": session.surface.replace_generation,
        "header": None if header is None else thaw(header),
    }


def _events_arg(request: dict[str, Any]) -> list[Any]:
    events = request["events"]
    if not isinstance(events, list):
        raise BadRequest("events must be an array")
    return events


def _decoded(raws: list[Any]) -> list[Event]:
    """Envelope-decoded events, refusing the first bad envelope by index."""
    events = []
    for index, raw in enumerate(raws):
        try:
            events.append(decode_event(raw))
        except SeqlogError as error:
            raise error.at(f"index {index}") from None
    return events


def _valid(raws: list[Any]) -> Session:
    """A whole log validated as a v1 session from seq 0 (no end-of-seed marker added)."""
    return Session.restore(raws, clock=_pinned_clock)


def _object(value: Any) -> Mapping[str, Any]:
    """A request's JSON object, frozen when lossless (the rules judge losslessness themselves)."""
    if not isinstance(value, Mapping):
        raise BadRequest("expected a JSON object")
    try:
        return freeze(value)  # type: ignore[return-value]
    except NotLossless:
        return value


class SeqlogDriver:
    """A stateful request handler answering from seqlog."""

    name = "seqlog"

    def __init__(self) -> None:
        self.session = _new_session()
        self.header: Mapping[str, Any] = FrozenObject(DEFAULT_HEADER)
        self.ops: dict[str, Callable[[dict[str, Any]], Any]] = {
            "hello": self.op_hello,
            "bye": lambda _: None,
            "reset": self.op_reset,
            "seed": self.op_seed,
            "append": self.op_append,
            "state": lambda _: state_result(self.session),
            "fold_surface": self.op_fold_surface,
            "fold_header": self.op_fold_header,
            "header_decision": self.op_header_decision,
            "repair": self.op_repair,
            "save": self.op_save,
            "load": self.op_load,
            "read": self.op_read,
            "upgrade_v0": self.op_upgrade_v0,
            "cuts": self.op_cuts,
            "store_create": self.op_store_create,
            "store_open": self.op_store_open,
            "store_append": self.op_store_append,
            "store_checkpoint": self.op_store_checkpoint,
            "store_close": self.op_store_close,
        }
        self.store: SessionStore | None = None

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(request, dict):
            return _error(None, "BAD_REQUEST", "a request must be a JSON object")
        request_id = request.get("id")
        op = self.ops.get(str(request.get("op")))
        if op is None:
            return _error(request_id, "UNSUPPORTED", f"unknown op {request.get('op')!r}")
        try:
            result = op(request)
        except SeqlogError as error:
            # A refusal of the library's own machinery (a payload too deep to encode) has no
            # violation code; the protocol calls that UNMAPPED and carries the message.
            code = str(error.code) if isinstance(error.code, Code) else "UNMAPPED"
            return _error(request_id, code, error.message)
        except BadRequest as error:
            return _error(request_id, "BAD_REQUEST", str(error))
        except (KeyError, TypeError) as error:
            return _error(request_id, "BAD_REQUEST", f"malformed request: {error!r}")
        return {"id": request_id, "ok": True, "result": result}

    def op_hello(self, _: dict[str, Any]) -> Any:
        return {
            "protocol": PROTOCOL,
            "implementation": {"name": self.name, "version": __version__},
            "capabilities": list(CAPABILITIES),
            "format_version": 1,
        }

    def op_reset(self, request: dict[str, Any]) -> Any:
        header = request.get("header", DEFAULT_HEADER)
        if not isinstance(header, Mapping):
            raise BadRequest("header must be a valid session header line")
        try:
            check_header_line(header)
        except SeqlogError:
            raise BadRequest("header must be a valid session header line") from None
        self.session, self.header = _new_session(), _object(header)
        return None

    def op_seed(self, request: dict[str, Any]) -> Any:
        self.session = _new_session(_events_arg(request))
        return state_result(self.session)

    def op_append(self, request: dict[str, Any]) -> Any:
        self.session.append_event(request["event"])
        return state_result(self.session)

    def op_fold_surface(self, request: dict[str, Any]) -> Any:
        folded = fold_surface(_decoded(_events_arg(request)))
        return {
            "nodes": list(folded.nodes),
            "replace_generation": folded.replace_generation,
            "replacements": [
                {"seq": r.seq, "start": r.start, "end": r.end, "shadowed": list(r.shadowed)} for r in folded.replacements
            ],
        }

    def op_fold_header(self, request: dict[str, Any]) -> Any:
        events = _decoded(_events_arg(request))
        check_snapshots(events)
        header = fold_request_header(events)
        return {"header": None if header is None else thaw(header)}

    def op_header_decision(self, request: dict[str, Any]) -> Any:
        session = _valid(_events_arg(request))
        check_assembled_header(request["header"])
        facts = request["instance"]
        decision = decide_request_header(
            session.request_header(),
            _object(request["header"]),
            InstanceFacts(
                first_request=bool(facts["first_request"]),
                begins_series=bool(facts["begins_series"]),
                replaced_since_last_request=bool(facts["replaced_since_last_request"]),
            ),
        )
        if decision is None:
            return {"decision": None}
        return {"decision": {"reason": decision.reason.value, "startsSeries": decision.starts_series}}

    def op_repair(self, request: dict[str, Any]) -> Any:
        session = _valid(_events_arg(request))
        return {"closers": [thaw(encode_event(e)) for e in interrupted_turn_closers(session.events)]}

    def op_save(self, _: dict[str, Any]) -> Any:
        return {"jsonl": encode_jsonl(self.header, self.session.events).decode("utf-8")}

    def op_load(self, request: dict[str, Any]) -> Any:
        text = request["jsonl"]
        if not isinstance(text, str):
            raise BadRequest("jsonl must be a string")
        loaded = load_text(text, clock=_pinned_clock)
        self.session, self.header = loaded.session, loaded.header
        return {**state_result(loaded.session), "dropped_torn_tail": loaded.dropped_torn_tail, "closers": len(loaded.closers)}

    # -- storage: the durable store itself (``dir/events.jsonl``) ----------------------------------------

    def _directory(self, request: dict[str, Any]) -> Path:
        directory = request["dir"]
        if not isinstance(directory, str) or not directory:
            raise BadRequest("dir must be a non-empty path")
        if self.store is not None:
            raise BadRequest("a store is open: close it first")
        return Path(directory)

    def _open_store(self) -> SessionStore:
        if self.store is None:
            raise BadRequest("no store is open")
        return self.store

    def _store_state(self, store: SessionStore) -> dict[str, Any]:
        return {**state_result(store.session), "durable_length": store.durable_length}

    def op_store_create(self, request: dict[str, Any]) -> Any:
        directory = self._directory(request)
        header = request.get("header", DEFAULT_HEADER)
        if not isinstance(header, Mapping):
            raise BadRequest("header must be a session header line")
        self.store = SessionStore.create(directory, header=header, clock=_pinned_clock)
        return self._store_state(self.store)

    def op_store_open(self, request: dict[str, Any]) -> Any:
        self.store = SessionStore.open(self._directory(request), clock=_pinned_clock)
        loaded = self.store.loaded
        assert loaded is not None
        return {**self._store_state(self.store), "dropped_torn_tail": loaded.dropped_torn_tail, "closers": len(loaded.closers)}

    def op_store_append(self, request: dict[str, Any]) -> Any:
        store = self._open_store()
        store.session.append_event(request["event"])
        return self._store_state(store)

    def op_store_checkpoint(self, _: dict[str, Any]) -> Any:
        store = self._open_store()
        store.checkpoint()
        return {"durable_length": store.durable_length}

    def op_store_close(self, _: dict[str, Any]) -> Any:
        store = self._open_store()
        self.store = None
        store.close()
        return {"durable_length": store.durable_length}

    def op_read(self, request: dict[str, Any]) -> Any:
        text = request["jsonl"]
        if not isinstance(text, str):
            raise BadRequest("jsonl must be a string")
        read = read_text(text, clock=_pinned_clock)
        return {"header": thaw(read.header), "events": [thaw(encode_event(e)) for e in read.session.events]}

    def op_upgrade_v0(self, request: dict[str, Any]) -> Any:
        log = request["log"]
        if not isinstance(log, Mapping) or not isinstance(log.get("header"), Mapping) or not isinstance(log.get("events"), list):
            raise BadRequest("log must be {header, events}")
        upgraded = upgrade_v0(StoredLog(_object(log["header"]), tuple(log["events"])))
        return {"log": {"header": thaw(upgraded.header), "events": [thaw(e) for e in upgraded.events]}}

    def op_cuts(self, request: dict[str, Any]) -> Any:
        session = _valid(_events_arg(request))
        result: dict[str, Any] = {"nodes": list(session.surface.nodes), "balanced": list(session.cut_balances())}
        if "seq" in request:
            result["around"] = list(session.balanced_around(request["seq"]))
        if "region" in request:
            region = request["region"]
            result["shadowed"] = list(session.compaction_region(region["start"], region["end"]))
        return result


def _error(request_id: Any, code: str, message: str) -> dict[str, Any]:
    return {"id": request_id, "ok": False, "error": {"code": code, "message": message}}


# From 19 digits on a number may leave the 64-bit range, where orjson reads integers as floats.  A run
# is found as a substring of the line with every digit made a zero: in time linear in the line, where
# the regular expression ``\d{19,}`` tries each start inside every shorter run of digits.
_LONG_RUN = b"0" * 19
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is out of range for a double")
    return value


def read_request(line: bytes) -> Any:
    """One request line parsed exactly: integers keep every digit, NaN and overflowing floats are refused."""
    if _LONG_RUN not in line.translate(_DIGITS_AS_ZERO):
        return orjson.loads(line)
    return json.loads(line.decode("utf-8"), parse_constant=_refuse_constant, parse_float=_finite_float)


def write_reply(reply: dict[str, Any]) -> bytes:
    """One reply line, newline included."""
    try:
        return orjson.dumps(reply) + b"\n"
    except orjson.JSONEncodeError:
        try:
            return json.dumps(reply, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii") + b"\n"
        except (TypeError, ValueError, RecursionError):
            return orjson.dumps(_error(reply.get("id"), "UNMAPPED", "reply could not be encoded as JSON")) + b"\n"


def serve(handler: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """Answer JSON Lines requests from stdin on stdout until ``bye`` or end of input."""
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        try:
            request = read_request(line)
        except ValueError as error:
            # No reply: without an id any line written would desynchronise the exchange.
            print(f"unreadable request: {error}", file=sys.stderr, flush=True)
            continue
        out.write(write_reply(handler(request)))
        out.flush()
        if isinstance(request, dict) and request.get("op") == "bye":
            return


def main() -> None:
    """Run the driver on stdin/stdout."""
    serve(SeqlogDriver())


if __name__ == "__main__":
    main()
