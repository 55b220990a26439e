"""Accepted logs for the envelope, the vocabulary, contiguity and the end-of-seed marker (INV-LOG)."""

from __future__ import annotations

from sessionlog_spec.model.event import KNOWN_EVENT_TYPES
from sessionlog_spec.model.json_value import MAX_SAFE_INTEGER
from sessionlog_spec.model.trace import TRACE_DATA_KEYS, TURN_SCOPED
from sessionlog_spec.suite.agent.builder import SessionBuilder, text_block
from sessionlog_spec.vectors.drafts import steps
from sessionlog_spec.vectors.drafts.scenes import history_one_turn, scene
from sessionlog_spec.vectors.drafts.steps import case
from sessionlog_spec.vectors.format import Draft

FILE = "log"
SHAPED = {*TRACE_DATA_KEYS, *TURN_SCOPED, "user/message", "assistant/message", "tool/result", "session/end-seed"}
"""Types with payload or placement rules; every other known type takes any object as data."""


def _free_form_log() -> list[dict[str, object]]:
    """A turn holding one event of every known type whose data is free-form, plus the turn-scoped ones."""
    b = SessionBuilder()
    b.turn_start()
    for type_ in sorted(KNOWN_EVENT_TYPES - SHAPED):
        b.event(type_, {"note": f"a {type_} event"})
    b.event("todo/write", {"todos": [{"content": "fix the test", "status": "pending"}]})
    b.event("request/context", {"files": ["a.py"]})
    b.turn_end()
    return b.events


def _lossless_data() -> dict[str, object]:
    return {
        "max": MAX_SAFE_INTEGER,
        "min": -MAX_SAFE_INTEGER,
        "fraction": 1.5,
        "zero": 0.0,
        "tiny": 5e-324,
        "text": "caf\u00e9 \u2014 \U0001f600 \"quoted\" \\ back",
        "nested": [[], {}, [None, True, False]],
    }


def drafts() -> list[Draft]:
    """The LOG vectors that the model accepts."""
    open_turn = scene("open-turn")
    history = history_one_turn()
    marker = {"type": "session/end-seed", "seq": len(history), "time": history[-1]["time"], "data": {"inherited": True}}
    later = SessionBuilder(open_turn.builder.state)
    step = later.step_start(commit=False)
    ignorable = {"type": "future/telemetry", "seq": later.next_seq, "time": 1, "data": {"x": 1}, "ignorable": True}
    known_ignorable = {**step, "ignorable": True}
    lossless = {"type": "session/title", "seq": later.next_seq, "time": 1, "data": _lossless_data()}
    limits = {"type": "session/title", "seq": later.next_seq, "time": MAX_SAFE_INTEGER, "data": {}}
    text = later.event("user/message", None, commit=False)  # only for its seq and time
    odd_order = {
        "surfaceOp": "append",
        "data": {"source": {"kind": "user"}, "content": [text_block("\u00e9t\u00e9")], "role": "user", "id": "u-odd"},
        "time": text["time"],
        "seq": text["seq"],
        "type": "user/message",
    }
    return [
        case(FILE, "seed-empty-gets-marker", "INV-LOG-10", "an empty seed becomes one end-of-seed marker at seq 0, time 0",
             steps.seed([])),
        case(FILE, "seed-gets-marker", "INV-LOG-10 INV-LOG-5",
             "a closed one-turn seed is closed by a marker at seq = seed length", steps.seed(history)),
        case(FILE, "seed-ending-with-marker-kept", "INV-LOG-10",
             "a seed that already ends with {inherited: true} gets no second marker", steps.seed([*history, marker])),
        case(FILE, "append-at-length", "INV-LOG-5 INV-LOG-12", "a live append at seq = length is committed after the seed",
             *open_turn.replay(), steps.append(step)),
        case(FILE, "every-free-form-type", "INV-LOG-6 INV-LOG-1",
             "every known type with free-form data, inside one turn, is accepted", steps.seed(_free_form_log())),
        case(FILE, "ignorable-unknown-type", "INV-LOG-6 INV-LOG-3", "an unknown type marked ignorable: true is accepted and kept",
             *open_turn.replay(), steps.append(ignorable)),
        case(FILE, "ignorable-known-type", "INV-LOG-3", "ignorable: true on a known type changes nothing about its rules",
             *open_turn.replay(), steps.append(known_ignorable)),
        case(FILE, "lossless-values", "INV-LOG-4", "safe-integer bounds, finite fractions, 0.0 and non-ASCII text are lossless",
             *open_turn.replay(), steps.append(lossless)),
        case(FILE, "time-at-safe-maximum", "INV-LOG-2", "time may be 2^53 - 1", *open_turn.replay(), steps.append(limits)),
        case(FILE, "stored-form-equals-candidate", "INV-LOG-12 INV-JSONL-2",
             "a candidate with envelope and data members out of order is saved as the same JSON value",
             *open_turn.replay(), steps.append(odd_order), steps.save()),
        case(FILE, "refused-seed-keeps-session", "INV-LOG-11 INV-LOG-5",
             "a seed refused at index 1 leaves the earlier seeded session",
             steps.seed(history), steps.seed([history[0], {**history[1], "seq": 7}])),
    ]
