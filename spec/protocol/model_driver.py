"""The model itself as a ``sessionlog-driver/1`` port.

:class:`ModelDriver` answers every op from the reference model; the suite uses it in-process as
the oracle and, through ``python -m sessionlog_spec.protocol.model_driver``, as a subprocess port that must pass every
group.  It is also the reference for anyone writing a driver: each op is a few lines over the model.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from sessionlog_spec.model.compaction import balanced_around, cut_balances, region_shadowed
from sessionlog_spec.model.event import Event, decode_event, encode_event
from sessionlog_spec.model.header import (
    InstanceFacts,
    assembled_header_problem,
    decide_request_header,
    fold_request_header,
    snapshot_problem,
)
from sessionlog_spec.model.json_value import JsonObject, as_object, freeze, thaw
from sessionlog_spec.model.jsonl import decode_jsonl, decode_text, header_line_problem
from sessionlog_spec.model.legacy import StoredLog, upgrade_v0
from sessionlog_spec.model.load import Decode, load_session, read_log, save_session
from sessionlog_spec.model.repair import interrupted_turn_closers
from sessionlog_spec.model.session import EMPTY_SESSION, Fold, SessionState, append_event, fold_session, seed_session
from sessionlog_spec.model.surface import fold_surface
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.protocol import jsonlines
from sessionlog_spec.protocol.messages import GROUPS, PROTOCOL

STORE_FILE = "events.jsonl"
"""The durable log of a ``storage`` store: ``dir/events.jsonl``."""
DEFAULT_HEADER: dict[str, Any] = {"type": "session", "version": 1, "id": "conformance", "createdAt": 0, "delegationDepth": 0}


class BadRequest(Exception):
    """The request is malformed."""


def state_result(state: SessionState) -> dict[str, Any]:
    """The observable state of a session, as the protocol's ``state`` result."""
    return {
        "length": len(state.events),
        "nodes": list(state.surface.nodes),
        "replace_generation": state.surface.replace_generation,
        "header": None if state.header is None else thaw(state.header),
    }


def decode_log(raws: Any) -> tuple[Event, ...] | Violation:
    """Decode a list of raw events, stopping at the first envelope violation."""
    if not isinstance(raws, list):
        raise BadRequest("events must be an array")
    events: list[Event] = []
    for index, raw in enumerate(raws):
        event = decode_event(raw)
        if isinstance(event, Violation):
            return event.at(f"index {index}")
        events.append(event)
    return tuple(events)


class ModelDriver:
    """A stateful request handler answering from the model."""

    name = "sessionlog-model"
    version = "1"
    append = staticmethod(append_event)
    """How an event is appended to a session (the suite's oracle puts one that remembers in its place)."""
    fold: Fold = staticmethod(fold_session)
    """How a whole log is validated (likewise)."""
    decode: Decode = staticmethod(decode_jsonl)
    """How a stored text's lines are read (likewise)."""
    upgrade: Callable[[StoredLog], StoredLog | Violation] = staticmethod(upgrade_v0)
    """How a log goes through the v0 edge (likewise)."""
    save: Callable[[JsonObject, SessionState], str] = staticmethod(save_session)
    """How a session is written as a stored text (likewise)."""

    def __init__(self) -> None:
        self.state: SessionState = EMPTY_SESSION
        self.header: JsonObject = _frozen(DEFAULT_HEADER)
        self.ops: dict[str, Callable[[dict[str, Any]], Any]] = {
            "hello": self.op_hello,
            "bye": lambda _: None,
            "reset": self.op_reset,
            "seed": self.op_seed,
            "append": self.op_append,
            "state": lambda _: state_result(self.state),
            "fold_surface": self.op_fold_surface,
            "fold_header": self.op_fold_header,
            "header_decision": self.op_header_decision,
            "repair": self.op_repair,
            "save": lambda _: {"jsonl": self.save(self.header, self.state)},
            "load": self.op_load,
            "read": self.op_read,
            "upgrade_v0": self.op_upgrade_v0,
            "cuts": self.op_cuts,
            "store_create": self.op_store_create,
            "store_open": self.op_store_open,
            "store_append": self.op_store_append,
            "store_checkpoint": lambda _: {"durable_length": self._checkpoint()},
            "store_close": self.op_store_close,
        }
        self.store: Path | None = None
        """The directory of the open durable store, if any."""
        self.durable = 0
        """How many events of the open store are on stable storage."""

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        request_id = request.get("id")
        op = self.ops.get(str(request.get("op")))
        if op is None:
            return _error(request_id, "UNSUPPORTED", f"unknown op {request.get('op')!r}")
        try:
            result = op(request)
        except BadRequest as error:
            return _error(request_id, "BAD_REQUEST", str(error))
        except (KeyError, TypeError) as error:
            return _error(request_id, "BAD_REQUEST", f"malformed request: {error!r}")
        if isinstance(result, Violation):
            return _error(request_id, result.code.value, result.message)
        return {"id": request_id, "ok": True, "result": result}

    def op_hello(self, _: dict[str, Any]) -> Any:
        return {
            "protocol": PROTOCOL,
            "implementation": {"name": self.name, "version": self.version},
            "capabilities": list(GROUPS),
            "format_version": 1,
        }

    def op_reset(self, request: dict[str, Any]) -> Any:
        header = request.get("header", DEFAULT_HEADER)
        if not isinstance(header, Mapping) or header_line_problem(header) is not None:
            raise BadRequest("header must be a valid session header line")
        self.state, self.header = EMPTY_SESSION, _frozen(header)
        return None

    def op_seed(self, request: dict[str, Any]) -> Any:
        if not isinstance(request["events"], list):
            raise BadRequest("events must be an array")
        state = seed_session(request["events"], self.fold)
        if isinstance(state, Violation):
            return state
        self.state = state
        return state_result(state)

    def op_append(self, request: dict[str, Any]) -> Any:
        state = self.append(self.state, request["event"])
        if isinstance(state, Violation):
            return state
        self.state = state
        return state_result(state)

    # -- the whole-log ops: one definition, over two hooks the oracle overrides ------------------------

    def events_of(self, raws: Any) -> tuple[Event, ...] | Violation:
        """``raws`` decoded event by event (the envelope only), or the first violation."""
        return decode_log(raws)

    def session_of(self, raws: Any) -> SessionState | Violation:
        """``raws`` validated as a whole v1 session from seq 0, or the first violation."""
        if not isinstance(raws, list):
            raise BadRequest("events must be an array")
        return self.fold(raws)

    def op_fold_surface(self, request: dict[str, Any]) -> Any:
        events = self.events_of(request["events"])
        if isinstance(events, Violation):
            return events
        folded = fold_surface(events)
        if isinstance(folded, Violation):
            return folded
        return {
            "nodes": list(folded.surface.nodes),
            "replace_generation": folded.surface.replace_generation,
            "replacements": [
                {"seq": r.seq, "start": r.start, "end": r.end, "shadowed": list(r.shadowed)} for r in folded.replacements
            ],
        }

    def op_fold_header(self, request: dict[str, Any]) -> Any:
        events = self.events_of(request["events"])
        if isinstance(events, Violation):
            return events
        problem = snapshot_problem(events)
        if problem is not None:
            return problem
        header = fold_request_header(events)
        return {"header": None if header is None else thaw(header)}

    def op_header_decision(self, request: dict[str, Any]) -> Any:
        state = self.session_of(request["events"])
        if isinstance(state, Violation):
            return state
        problem = assembled_header_problem(freeze(request["header"]))
        if problem is not None:
            return problem
        return decision_result(state.header, _frozen(request["header"]), request["instance"])

    def op_repair(self, request: dict[str, Any]) -> Any:
        state = self.session_of(request["events"])
        if isinstance(state, Violation):
            return state
        return {"closers": [encode_event(e) for e in interrupted_turn_closers(state.events)]}

    def op_load(self, request: dict[str, Any]) -> Any:
        if not isinstance(request["jsonl"], str):
            raise BadRequest("jsonl must be a string")
        loaded = load_session(request["jsonl"], self.fold, self.decode)
        if isinstance(loaded, Violation):
            return loaded
        self.state, self.header = loaded.state, loaded.header
        return {**state_result(loaded.state), "dropped_torn_tail": loaded.dropped_torn_tail, "closers": len(loaded.closers)}

    # -- storage: a reference durable store that writes the whole stored form at every checkpoint ------

    def _store_dir(self, request: dict[str, Any]) -> Path:
        directory = request["dir"]
        if not isinstance(directory, str) or not directory:
            raise BadRequest("dir must be a non-empty path")
        if self.store is not None:
            raise BadRequest("a store is open: close it first")
        return Path(directory)

    def _open_store(self) -> Path:
        if self.store is None:
            raise BadRequest("no store is open")
        return self.store

    def stored_text(self, directory: Path) -> str:
        """The text of ``directory``'s log, as a reader decodes its bytes; a missing one is a bad request."""
        try:
            return decode_text((directory / STORE_FILE).read_bytes())[0]
        except OSError as error:
            raise BadRequest(f"no store to open in {directory}: {error.strerror or error}") from None

    def persist(self, directory: Path) -> None:
        """Replace the log with the session's stored form: a temporary file, fsync, rename, fsync the directory."""
        temporary = directory / (STORE_FILE + ".tmp")
        with open(temporary, "wb") as file:
            file.write(self.save(self.header, self.state).encode("utf-8"))
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, directory / STORE_FILE)
        descriptor = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)

    def _checkpoint(self) -> int:
        self.persist(self._open_store())
        self.durable = len(self.state.events)
        return self.durable

    def op_store_create(self, request: dict[str, Any]) -> Any:
        directory = self._store_dir(request)
        header = request.get("header", DEFAULT_HEADER)
        if not isinstance(header, Mapping) or header_line_problem(header) is not None:
            raise BadRequest("header must be a valid session header line")
        self.state, self.header = EMPTY_SESSION, _frozen(header)
        self.prepare(directory)
        self.store = directory
        return {**state_result(self.state), "durable_length": self._checkpoint()}

    def prepare(self, directory: Path) -> None:
        """Make the new store's directory; a log already there is not overwritten."""
        directory.mkdir(parents=True, exist_ok=True)
        if (directory / STORE_FILE).exists():
            raise BadRequest(f"{directory} already holds a log")

    def op_store_open(self, request: dict[str, Any]) -> Any:
        directory = self._store_dir(request)
        loaded = load_session(self.stored_text(directory), self.fold, self.decode)
        if isinstance(loaded, Violation):
            return loaded
        self.state, self.header, self.store = loaded.state, loaded.header, directory
        recovered = {"dropped_torn_tail": loaded.dropped_torn_tail, "closers": len(loaded.closers)}
        return {**state_result(loaded.state), "durable_length": self._checkpoint(), **recovered}

    def op_store_append(self, request: dict[str, Any]) -> Any:
        self._open_store()
        appended = self.op_append(request)
        if isinstance(appended, Violation):
            return appended
        return {**appended, "durable_length": self.durable}

    def op_store_close(self, _: dict[str, Any]) -> Any:
        durable = self._checkpoint()
        self.store = None
        return {"durable_length": durable}

    def op_read(self, request: dict[str, Any]) -> Any:
        if not isinstance(request["jsonl"], str):
            raise BadRequest("jsonl must be a string")
        read = read_log(request["jsonl"], self.fold, self.decode)
        if isinstance(read, Violation):
            return read
        return {"header": thaw(read.header), "events": [encode_event(e) for e in read.state.events]}

    def op_upgrade_v0(self, request: dict[str, Any]) -> Any:
        log = request["log"]
        if not isinstance(log, Mapping) or not isinstance(log.get("header"), Mapping) or not isinstance(log.get("events"), list):
            raise BadRequest("log must be {header, events}")
        upgraded = self.upgrade(StoredLog(_frozen(log["header"]), tuple(log["events"])))
        if isinstance(upgraded, Violation):
            return upgraded
        return {"log": {"header": thaw(upgraded.header), "events": [thaw(e) for e in upgraded.events]}}

    def op_cuts(self, request: dict[str, Any]) -> Any:
        state = self.session_of(request["events"])
        if isinstance(state, Violation):
            return state
        balanced = cut_balances(state.surface.nodes, state.events)
        if isinstance(balanced, Violation):
            return balanced
        result: dict[str, Any] = {"nodes": list(state.surface.nodes), "balanced": list(balanced)}
        if "seq" in request:
            around = balanced_around(state.surface.nodes, state.events, request["seq"])
            if isinstance(around, Violation):
                return around
            result["around"] = list(around)
        if "region" in request:
            shadowed = region_shadowed(state.surface.nodes, state.events, request["region"]["start"], request["region"]["end"])
            if isinstance(shadowed, Violation):
                return shadowed
            result["shadowed"] = list(shadowed)
        return result


def decision_result(latest: JsonObject | None, assembled: JsonObject, facts: Mapping[str, Any]) -> dict[str, Any]:
    """The ``header_decision`` result for a request whose header is ``assembled``, after ``latest``.

    ``facts`` are the loop-instance facts as the protocol spells them (``first_request``,
    ``begins_series``, ``replaced_since_last_request``).
    """
    decision = decide_request_header(
        latest,
        assembled,
        InstanceFacts(
            first_request=bool(facts["first_request"]),
            begins_series=bool(facts["begins_series"]),
            replaced_since_last_request=bool(facts["replaced_since_last_request"]),
        ),
    )
    if decision is None:
        return {"decision": None}
    return {"decision": {"reason": decision.reason.value, "startsSeries": decision.starts_series}}


def _frozen(value: Any) -> JsonObject:
    frozen = as_object(freeze(value))
    if frozen is None:
        raise BadRequest("expected a JSON object")
    return frozen


def _error(request_id: Any, code: str, message: str) -> dict[str, Any]:
    return {"id": request_id, "ok": False, "error": {"code": code, "message": message}}


def serve(handler: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """Run a handler as a JSON Lines driver on stdin/stdout until ``bye`` or end of input."""
    for line in sys.stdin.buffer:
        try:
            # Exact: orjson alone reads an integer beyond 64 bits as a float, which the model would accept.
            request = jsonlines.loads(line)
        except ValueError as error:
            print(f"unreadable request: {error}", file=sys.stderr)
            continue
        reply = handler(request)
        sys.stdout.buffer.write(jsonlines.dumps(reply))
        sys.stdout.buffer.flush()
        if request.get("op") == "bye":
            return


if __name__ == "__main__":
    serve(ModelDriver())
