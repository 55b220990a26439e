"""The v0-to-v1 edge: each lossless normalisation N1–N7, fixed points, and every legacy refusal on every path (INV-LEGACY)."""

from __future__ import annotations

from typing import Any

from sessionlog_spec.model.json_value import as_object, freeze, thaw
from sessionlog_spec.model.legacy import StoredLog, upgrade_v0
from sessionlog_spec.suite.agent.builder import PROVIDER, basic_header, text_block
from sessionlog_spec.vectors.drafts import steps
from sessionlog_spec.vectors.drafts.scenes import history_one_turn, scene
from sessionlog_spec.vectors.drafts.steps import V0_LINE, case, jsonl
from sessionlog_spec.vectors.format import Draft, Step

FILE = "legacy"
NORMALISING = "INV-LEGACY-5 INV-LEGACY-6 INV-LEGACY-8"


class V0:
    """A v0 log written event by event, seqs and times assigned."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def add(self, type_: str, data: Any, **envelope: Any) -> int:
        """Append one event and return its seq."""
        seq = len(self.events)
        self.events.append({"type": type_, "seq": seq, "time": 1_000 + seq, "data": data, **envelope})
        return seq

    def turn(self, reason: Any = None) -> V0:
        """Open turn 1 (with a v0 trigger) if none is open, else close it with ``reason``."""
        if reason is None:
            self.add("turn/start", {"turn": 1, "trigger": {"kind": "user"}})
        else:
            self.add("turn/end", {"turn": 1, "reason": reason})
        return self


def _turn_end(reason: dict[str, Any]) -> list[dict[str, Any]]:
    return V0().turn().turn(reason).events


def _steering(wrapped: bool) -> list[dict[str, Any]]:
    log = V0().turn()
    content, source = [text_block("also check b.py")], {"kind": "user"}
    message = {"id": "steer-1", "role": "user", "content": content, "source": source}
    data = {"turn": 1, "message": message} if wrapped else {"turn": 1, "content": content, "source": source}
    # A released v0 writer appended steering to the surface like any user message.
    log.add("steering/message", data, surfaceOp="append")
    return log.turn({"kind": "completed"}).events


def _pre_identity() -> list[dict[str, Any]]:
    """Messages from before message ids: bare user message, assistant with provenance, flat tool results, a flat rewrite."""
    log = V0().turn()
    log.add("user/message", {"content": [text_block("fix it")], "source": {"kind": "user"}}, surfaceOp="append")
    log.add("step/start", {"turn": 1, "step": 1})
    call = {"type": "tool-call", "id": "c1", "name": "read_file", "arguments": "{}"}
    log.add("assistant/message", {"turn": 1, "step": 1, "content": [call], "provenance": dict(PROVIDER)}, surfaceOp="append")
    log.add("tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "read_file", "arguments": "{}"})
    flat = {"turn": 1, "step": 1, "callId": "c1", "content": [text_block("x = 1")], "isError": False}
    result = log.add("tool/result", flat, surfaceOp="append")
    rewrite = {**flat, "content": [text_block("[elided]")]}
    log.add("tool/result", rewrite, surfaceOp={"op": "replace", "start": result, "end": result}, sourceEventSeqs=[result])
    log.add("step/end", {"turn": 1, "step": 1})
    return log.turn({"kind": "completed"}).events


def _header(header: dict[str, Any]) -> list[dict[str, Any]]:
    log = V0().turn()
    log.add("request/header", {"header": header, "reason": "initial"})
    return log.turn({"kind": "completed"}).events


def _compact(log: V0 | None = None) -> list[dict[str, Any]]:
    """A ``/compact`` between turns in v0 names, its events without the compaction id the edge mints:
    start, the summary of the first message on the surface, a prune of it, end.  Without ``log``,
    after one closed turn holding one pre-identity user message."""
    if log is None:
        log = V0().turn()
        log.add("user/message", {"content": [text_block("fix it")], "source": {"kind": "user"}}, surfaceOp="append")
        log.turn({"kind": "completed"})
    first = next(e["seq"] for e in log.events if e.get("surfaceOp") == "append")
    span = {"shadowedRange": {"start": first, "end": first}, "shadowedSeqs": [first], "shadowedTokenCount": 12}
    log.add("compact/start", {"turn": None})
    log.add("compact/summary", {"summary": [text_block("The user asked for a fix.")], **span, **PROVIDER})
    log.add("compact/prune", span)
    log.add("compact/end", {"turn": None})
    return log.events


def _everything() -> list[dict[str, Any]]:
    """The N1, N2, N4 and N7 forms in one log, for the load path."""
    log = V0()
    log.events = _pre_identity()
    return _compact(log)


NORMALISATIONS: tuple[tuple[str, str, list[dict[str, Any]]], ...] = (
    ("n1-turn-start-trigger", "N1: turn/start drops trigger", V0().turn().turn({"kind": "completed"}).events),
    ("n2-aborted-without-cause", "N2: aborted gains cause {kind: legacy}", _turn_end({"kind": "aborted"})),
    ("n2-disposed", "N2: disposed becomes aborted with cause disposed", _turn_end({"kind": "disposed"})),
    ("n2-error-failure", "N2: error with failure becomes error {message, code}, step dropped",
     _turn_end({"kind": "error", "failure": {"message": "boom", "code": "E_IO"}, "step": 2})),
    ("n2-error-message-code", "N2: error with message and code",
     _turn_end({"kind": "error", "message": "boom", "code": "E_IO", "step": 1})),
    ("n2-error-message-only", "N2: error with only a message gets code UNKNOWN",
     _turn_end({"kind": "error", "message": "boom", "step": 1})),
    ("n3-steering-wrapped", "N3: steering/message {turn, message} becomes an appended user/message", _steering(True)),
    ("n3-steering-bare", "N3: bare steering/message gets a minted id", _steering(False)),
    ("n4-pre-identity-messages", "N4: user, assistant and tool-result messages gain legacy ids; a rewrite keeps its target's",
     _pre_identity()),
    ("n5-message-prefix", "N5: request/header loses messagePrefix",
     _header({**basic_header(), "messagePrefix": [{"role": "user"}]})),
    ("n6-header-kept-as-written", "N6 (withdrawn): a request/header snapshot is kept as written, members in its own order",
     _header({"tools": basic_header()["tools"], "config": {"model": PROVIDER["model"], "provider": PROVIDER["provider"]}})),
    ("n7-compact-renamed", "N7: compact/* becomes compaction/*", _compact()),
)

LEGACY_FORMS: dict[str, dict[str, Any]] = {
    "header-delta": {"type": "request/header-delta", "data": {"changes": [{"path": "system", "value": "x"}]}},
    "fallback-reason": {"type": "request/header", "data": {"header": basic_header(), "reason": "fallback"}},
    "mode-set": {"type": "mode/set", "data": {"mode": "plan"}},
    "unknown-v0-type": {"type": "future/telemetry", "data": {"x": 1}, "ignorable": True},
}
"""The forms the edge refuses; the last is only refused on a v0 log (an ignorable unknown type is fine in v1)."""


def _refusal_paths(form: str, event: dict[str, Any]) -> list[tuple[str, list[Step]]]:
    """The steps that submit ``event`` after an open v0/v1 turn on each path that must refuse it."""
    v0 = V0().turn().events
    v0_log = [*v0, {**event, "seq": len(v0), "time": 2_000}]
    open_turn = scene("open-turn")
    v1_event = {**event, "seq": open_turn.builder.next_seq, "time": 2_000}
    v1_log = [*open_turn.events, v1_event]
    paths: list[tuple[str, list[Step]]] = [
        ("upgrade", [steps.upgrade(V0_LINE, v0_log)]),
        ("load-v0", [steps.seed([]), steps.load(jsonl(v0_log, V0_LINE))]),
    ]
    if form != "unknown-v0-type":
        paths += [
            ("append", [*open_turn.replay(), steps.append(v1_event)]),
            ("seed", [steps.seed([]), steps.seed(v1_log)]),
            ("load-v1", [steps.seed([]), steps.load(jsonl(v1_log))]),
        ]
    return paths


def _refusals() -> list[Draft]:
    ids = {
        "header-delta": "INV-LEGACY-1",
        "fallback-reason": "INV-LEGACY-2",
        "mode-set": "INV-LEGACY-3",
        "unknown-v0-type": "INV-LEGACY-4",
    }
    return [
        case(FILE, f"refuse-{form}-{path}", ids[form], f"{form.replace('-', ' ')} refused on the {path} path", *submitted)
        for form, event in LEGACY_FORMS.items()
        for path, submitted in _refusal_paths(form, event)
    ]


def _upgraded(events: list[dict[str, Any]]) -> dict[str, Any]:
    header = as_object(freeze(V0_LINE))
    frozen = tuple(as_object(freeze(e)) for e in events)
    assert header is not None and all(e is not None for e in frozen)
    out = upgrade_v0(StoredLog(header, frozen))  # type: ignore[arg-type]
    assert isinstance(out, StoredLog), out
    return {"header": thaw(out.header), "events": [thaw(e) for e in out.events]}


def drafts() -> list[Draft]:
    """The LEGACY vectors."""
    once = _upgraded(_everything())
    return [
        *(
            case(FILE, slug, NORMALISING, description, steps.upgrade(V0_LINE, events))
            for slug, description, events in NORMALISATIONS
        ),
        case(FILE, "load-everything", f"{NORMALISING} INV-JSONL-7", "a v0 log with N1, N4 and N7 forms, loaded and saved as v1",
             steps.load(jsonl(_everything(), V0_LINE)), steps.save()),
        case(FILE, "v1-unchanged", "INV-LEGACY-7", "a v1 log passes through the edge unchanged",
             steps.upgrade({**V0_LINE, "version": 1}, history_one_turn())),
        case(FILE, "fixed-point", "INV-LEGACY-7 INV-LEGACY-8", "the edge's own output comes back unchanged",
             steps.upgrade(once["header"], once["events"])),
        case(FILE, "refuse-still-invalid-after-normalising", "INV-LEGACY-6",
             "an error reason without a message cannot be normalised; v1 validation refuses it",
             steps.upgrade(V0_LINE, _turn_end({"kind": "error"}))),
        case(FILE, "refuse-v0-seq-gap", "INV-LEGACY-6", "a v0 log with a seq gap is refused by the v1 rules",
             steps.upgrade(V0_LINE, [_compact()[0], _compact()[2]])),
        *_refusals(),
    ]
