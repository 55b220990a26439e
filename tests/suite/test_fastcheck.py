"""The fast checker of ``check-log`` against the model: the same answer on every log, every code,
line and message compared (the whole :class:`~sessionlog_spec.suite.check_log.LogCheck`).

The fast checker certifies a log valid or hands it to the model, so the comparison is meaningful only
if it does certify valid logs: the tests also require that it certifies every valid log they build.
Hypothesis draws are capped (:func:`strategies.property_settings`); ``SESSIONLOG_SLOW=1`` runs more.
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import strategies as S
from conformance_helpers import ROOT
from hypothesis import given
from hypothesis import strategies as st

from sessionlog_spec.model.json_value import as_object, freeze
from sessionlog_spec.model.jsonl import encode_line
from sessionlog_spec.model.load import read_log, save_session
from sessionlog_spec.model.rows import pack_chunk_runs
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.suite import check_log as C
from sessionlog_spec.suite import fastcheck
from sessionlog_spec.suite.agent.crashes import CORRUPTIONS, damage_line
from sessionlog_spec.suite.fuzz.perturb import LINE_EDITS, perturbations
from sessionlog_spec.vectors.realistic import HEADER_LINE, expand_step, realistic_events

VECTORS = ROOT / "spec" / "vectors" / "data"


def _joined(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


def _stored(events: list[dict[str, Any]], packed: bool = False) -> str:
    """``events`` under the realistic header, one per line or with chunk runs packed."""
    if not packed:
        return _joined([encode_line(HEADER_LINE), *(encode_line(e) for e in events)])
    return _joined([encode_line(HEADER_LINE), *(encode_line(r) for r in pack_chunk_runs(events))])


def _certified(text: str) -> fastcheck.Certified | None:
    return fastcheck.certify([text.encode("utf-8")], C.READ_CHUNK_BYTES, C.MAX_LINE_BYTES)


def _same_answer(text: str) -> C.LogCheck:
    """The fast path's whole answer on ``text`` is the model's; whenever the model finds the log valid
    (no violation), the fast checker certified it.  Returns the answer."""
    model = C.check_log(text, model=True)
    fast = C.check_log(text)
    assert fast == model, (fast, model)
    data = text.encode("utf-8", "surrogatepass")  # streamed in pieces, read again from the copy when not certified
    assert C.check_chunks(_chunked(data, 97)) == C.check_chunks(_chunked(data, 97), model=True)
    return model


def _chunked(data: bytes, size: int) -> Iterator[bytes]:
    return (data[i : i + size] for i in range(0, len(data), size))


# -- valid logs are certified ---------------------------------------------------------------------------------


@pytest.mark.parametrize("packed", [False, True], ids=["plain", "packed"])
def test_fast_checker_certifies_a_valid_realistic_log_with_the_models_counts(packed: bool) -> None:
    events = realistic_events(turns=60, seed=3)
    text = _stored(events, packed)
    certified = _certified(text)
    assert certified is not None
    assert (certified.events, certified.torn, certified.open_turn) == (len(events), False, None)
    assert C.check_log(text) == C.check_log(text, model=True)


def test_fast_checker_notes_a_torn_tail_and_an_open_turn_as_the_model_does() -> None:
    events = realistic_events(turns=5, seed=11, drop_last=3)  # a crash inside the last turn
    text = _stored(events) + '{"type":"tu'
    certified = _certified(text)
    assert certified is not None and certified.torn and certified.closers > 0
    answer = _same_answer(text)
    assert answer.torn and any("repair closer" in note for note in answer.notes)


@S.property_settings(scale=0.5)
@given(S.sessions(max_actions=30), st.booleans())
def test_fast_checker_certifies_every_drawn_valid_session(builder: Any, packed: bool) -> None:
    header = as_object(freeze({**HEADER_LINE, "version": 1}))
    assert header is not None
    text = save_session(header, builder.state, packed=packed)
    assert not isinstance(read_log(text), Violation)
    assert _certified(text) is not None
    assert C.check_log(text) == C.check_log(text, model=True)


# -- damaged, perturbed and drawn logs get the model's answer ------------------------------------------------


@st.composite
def drawn_logs(draw: st.DrawFn) -> str:
    """A drawn session stored plain or packed, then perhaps extended by a hostile or a perturbed
    event, a damaged line, edited lines, a committing turn/end and a torn tail."""
    builder = draw(S.sessions(max_actions=25))
    header = as_object(freeze({**HEADER_LINE, "version": 1}))
    assert header is not None
    lines = save_session(header, builder.state, packed=draw(st.booleans())).split("\n")[:-1]
    rng = random.Random(draw(st.integers(0, 2**32)))
    extra = draw(st.sampled_from(["none", "candidate", "mutated", "perturbed"]))
    if extra == "perturbed":
        event = draw(S.next_events(builder))
        found = [p for family in perturbations(event, builder.next_seq, rng).values() for p in family]
        if found:
            with contextlib.suppress(TypeError, ValueError):
                lines.append(encode_line(draw(st.sampled_from(found)).edit(json.loads(json.dumps(event)))))
    elif extra != "none":
        raw = draw(S.candidates(builder.next_seq) if extra == "candidate" else S.mutated(draw(S.next_events(builder))))
        with contextlib.suppress(TypeError, ValueError):  # unless no JSON text can hold it (NaN, an opaque object)
            lines.append(encode_line(raw))
    if len(lines) > 1 and draw(st.booleans()):
        damaged = damage_line(_joined(lines), draw(st.integers(1, len(lines) - 1)), draw(st.sampled_from(CORRUPTIONS)))
        lines = damaged.split("\n")[:-1] if damaged.endswith("\n") else damaged.split("\n")
    if len(lines) > 1 and draw(st.booleans()):
        edit = LINE_EDITS[draw(st.sampled_from(sorted(LINE_EDITS)))]
        lines = edit(lines, draw(st.integers(1, len(lines) - 1)))
    if draw(st.booleans()):
        data = {"turn": 1, "reason": {"kind": "completed"}}
        lines.append(encode_line({"type": "turn/end", "seq": len(lines) + 5, "time": 0, "data": data}))
    return _joined(lines) + draw(st.sampled_from(["", '{"type":"tu']))


@S.property_settings()
@given(drawn_logs())
def test_any_drawn_log_gets_the_models_whole_answer_from_the_fast_path(text: str) -> None:
    _same_answer(text)


@pytest.mark.parametrize("family", ["envelope", "payload", "lossless", "type"])
def test_every_perturbation_of_a_realistic_event_gets_the_models_whole_answer(family: str) -> None:
    events = realistic_events(turns=3, seed=5)
    rng = random.Random(family)
    checked = 0
    for at in range(0, len(events), 1 if SLOW else 4):
        for perturbation in perturbations(events[at], at, rng)[family][: None if SLOW else 5]:
            edited = [*events[:at], perturbation.edit(json.loads(json.dumps(events[at]))), *events[at + 1 :]]
            try:
                text = _stored(edited)
            except (TypeError, ValueError):  # no JSON text holds it
                continue
            answer = _same_answer(text)
            checked += 1
            # Certified only when valid; a valid log may still go to the model (a dropped damaged row,
            # an integral float where an integer is expected), which the comparison above covers.
            assert _certified(text) is None or (answer.verdict is None and not answer.dropped), perturbation.name
    assert checked > 20


# -- packed rows, provenance and rewrites, edited one member at a time ------------------------------------------


def _streamed_turn() -> list[dict[str, Any]]:
    """One turn whose step streams a reasoning run, a text run and a tool-call run before its message
    (each run packed into one row), then calls the tool and takes its result."""
    events: list[dict[str, Any]] = []

    def add(type_: str, data: dict[str, Any], **envelope: Any) -> None:
        events.append({"type": type_, "seq": len(events), "time": 1000 + 7 * len(events), "data": data, **envelope})

    where = {"turn": 1, "step": 1}
    add("turn/start", {"turn": 1})
    user = {"id": "user-1", "role": "user", "content": [{"type": "text", "text": "Go"}], "source": {"kind": "user"}}
    add("user/message", user, surfaceOp="append")
    add("step/start", where)
    for kind in ("reasoning-delta", "text-delta"):
        for piece in ("a", "b", "c", "d"):
            add("assistant/chunk", {**where, "chunk": {"type": kind, "index": 0, "text": piece}})
    for piece in ('{"p', '":', "1}"):
        chunk = {"type": "tool-call-delta", "index": 1, "id": "call-1", "name": "read", "argumentsDelta": piece}
        add("assistant/chunk", {**where, "chunk": chunk})
    call = {"type": "tool-call", "id": "call-1", "name": "read", "arguments": '{"p":1}'}
    source = {"kind": "model", "provider": "p", "model": "m"}
    message = {
        "id": "assistant-1",
        "role": "assistant",
        "content": [{"type": "text", "text": "Reading."}, call],
        "source": source,
    }
    add("assistant/message", {**where, "message": message}, surfaceOp="append")
    add("tool/call", {**where, "callId": "call-1", "name": "read", "arguments": '{"p":1}'})
    block = {"type": "tool-result", "toolCallId": "call-1", "content": [{"type": "text", "text": "1"}], "isError": False}
    result = {"id": "result-1", "role": "user", "source": {"kind": "tool", "callId": "call-1"}, "content": [block]}
    add("tool/result", {**where, "message": result}, surfaceOp="append")
    add("step/end", where)
    add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    return events


MAX_SAFE = 2**53 - 1
PACKED_ROW_EDITS: dict[str, tuple[str, Any, bool]] = {
    # name: (row type, edit of its data, whether the stored form (docs/conformance/on-disk-format.md) keeps the log valid)
    "dt of zeros": ("text-chunks", lambda d: d.update(dt=[0, 0, 0]), True),
    "dt of ones": ("text-chunks", lambda d: d.update(dt=[1, 1, 1]), True),
    "dt with a negative gap": ("text-chunks", lambda d: d.update(dt=[7, -3, 7]), True),
    "texts of empty strings": ("text-chunks", lambda d: d.update(texts=["", "", "", ""]), True),
    "tool row without a name": ("tool-call-chunks", lambda d: d.pop("name"), True),
    "dt with a boolean": ("text-chunks", lambda d: d.update(dt=[True, 7, 7]), False),
    "dt with a false": ("text-chunks", lambda d: d.update(dt=[False, 7, 7]), False),
    "dt with an integral float": ("text-chunks", lambda d: d.update(dt=[7.0, 7, 7]), False),
    "dt past the safe integers": ("text-chunks", lambda d: d.update(dt=[MAX_SAFE, 7, 7]), False),
    "dt below the safe integers": ("text-chunks", lambda d: d.update(dt=[-MAX_SAFE, -MAX_SAFE, 7]), False),
    "dt with a string": ("text-chunks", lambda d: d.update(dt=["7", 7, 7]), False),
    "dt one short": ("text-chunks", lambda d: d.update(dt=[7, 7]), False),
    "texts with a number": ("text-chunks", lambda d: d.update(texts=["a", 1, "c", "d"]), False),
    "texts empty": ("text-chunks", lambda d: d.update(texts=[], dt=[]), False),
    "index a boolean": ("text-chunks", lambda d: d.update(index=False), False),
    "index an integral float": ("text-chunks", lambda d: d.update(index=0.0), False),
    "index negative": ("text-chunks", lambda d: d.update(index=-1), False),
    "turn an integral float": ("text-chunks", lambda d: d.update(turn=1.0), False),
    "another step": ("reasoning-chunks", lambda d: d.update(step=2), False),
    "an extra member": ("text-chunks", lambda d: d.update(extra=1), False),
    "tool row id empty": ("tool-call-chunks", lambda d: d.update(id=""), False),
    "tool row name a number": ("tool-call-chunks", lambda d: d.update(name=5), False),
    "tool row args with a number": ("tool-call-chunks", lambda d: d.update(args=['{"p', 2, "1}"]), False),
}


@pytest.mark.parametrize("name", sorted(PACKED_ROW_EDITS))
def test_every_edit_of_a_packed_row_gets_the_models_whole_answer(name: str) -> None:
    row_type, edit, valid = PACKED_ROW_EDITS[name]
    rows = [json.loads(encode_line(row)) for row in pack_chunk_runs(_streamed_turn())]
    assert {"text-chunks", "reasoning-chunks", "tool-call-chunks"} <= {row["type"] for row in rows}
    edit(next(row for row in rows if row["type"] == row_type)["data"])
    text = _joined([encode_line(HEADER_LINE), *(encode_line(row) for row in rows)])
    answer = _same_answer(text)
    certified = _certified(text)
    assert (certified is not None) == valid, (certified, answer)
    assert certified is None or (answer.verdict is None and not answer.violations)


def _with_rewrite() -> tuple[list[dict[str, Any]], int, int]:
    """A realistic log with a tool-result rewrite and a compaction, and their seqs."""
    events = realistic_events(turns=10, seed=3)
    rewrite = next(e["seq"] for e in events if e["type"] == "tool/result" and e["surfaceOp"] != "append")
    compaction = next(e["seq"] for e in events if e["type"] == "user/message" and e["surfaceOp"] != "append")
    return events, rewrite, compaction


def _cite(seq: int, sources: Any) -> Any:
    return lambda events, _r, _c: events[seq].update(sourceEventSeqs=sources(events[seq]["sourceEventSeqs"]))


def _meta(original: object, rewritten: object) -> Any:
    def edit(events: list[dict[str, Any]], rewrite: int, _c: int) -> None:
        events[events[rewrite]["sourceEventSeqs"][0]]["data"]["meta"] = original
        events[rewrite]["data"]["meta"] = rewritten

    return edit


PROVENANCE_EDITS: dict[str, tuple[Any, bool]] = {
    # name: (edit of the events, given the rewrite's and the compaction's seqs; whether the log stays valid)
    "none": (lambda _e, _r, _c: None, True),
    "a rewrite citing a range": (lambda e, r, _c: _cite(r, lambda s: [[s[0], s[0]]])(e, r, _c), True),
    "a rewrite citing an integral float": (lambda e, r, _c: _cite(r, lambda s: [float(s[0])])(e, r, _c), True),
    "a compaction citing one more seq": (lambda e, _r, c: _cite(c, lambda s: [0, *s])(e, _r, c), True),
    "a rewrite citing a boolean": (lambda e, r, _c: _cite(r, lambda _s: [True])(e, r, _c), False),
    "a rewrite citing a negative seq": (lambda e, r, _c: _cite(r, lambda s: [-1, *s])(e, r, _c), False),
    "a rewrite citing a seq twice": (lambda e, r, _c: _cite(r, lambda s: [*s, *s])(e, r, _c), False),
    "a rewrite citing nothing": (lambda e, r, _c: _cite(r, lambda _s: [])(e, r, _c), False),
    "a rewrite citing itself": (lambda e, r, _c: _cite(r, lambda s: [*s, r])(e, r, _c), False),
    "a compaction citing a later seq": (lambda e, _r, c: _cite(c, lambda s: [*s, c + 5])(e, _r, c), False),
    "a compaction citing decreasing ranges": (
        lambda e, _r, c: _cite(c, lambda s: [[x, x] for x in sorted(s)[::-1]])(e, _r, c),
        False,
    ),
    "a rewrite keeping a number written otherwise": (_meta({"n": 1}, {"n": 1.0}), True),
    "a rewrite keeping members in another order": (_meta({"a": 1, "b": 2}, {"b": 2, "a": 1}), True),
    "a rewrite turning a boolean into a number": (_meta({"n": True}, {"n": 1}), False),
    "a rewrite changing a kept member": (_meta({"a": 1}, {"a": 2}), False),
}


@pytest.mark.parametrize("name", sorted(PROVENANCE_EDITS))
def test_every_edit_of_provenance_and_rewrites_gets_the_models_whole_answer(name: str) -> None:
    edit, valid = PROVENANCE_EDITS[name]
    events, rewrite, compaction = _with_rewrite()
    edit(events, rewrite, compaction)
    text = _stored(events)
    answer = _same_answer(text)
    assert (_certified(text) is not None) == valid, answer


def test_text_row_verdicts_are_remembered_only_while_turn_and_step_stand_apart() -> None:
    schema = json.loads(fastcheck._schema_text(fastcheck.CHUNK))
    assert fastcheck.TURN_AND_STEP_APART and fastcheck._turn_and_step_apart(schema)
    bounded = {**schema, "properties": {**schema["properties"], "turn": {**schema["properties"]["turn"], "maximum": 5}}}
    related = {
        **schema,
        "allOf": [{"if": {"properties": {"turn": {"const": 1}}}, "then": {"properties": {"step": {"const": 1}}}}],
    }
    without_step = {**schema, "properties": {k: v for k, v in schema["properties"].items() if k != "step"}}
    assert not any(fastcheck._turn_and_step_apart(s) for s in (bounded, related, without_step))


def _first(events: list[dict[str, Any]], type_: str) -> dict[str, Any]:
    return next(event for event in events if event["type"] == type_)


def _recall(original: int, retained: int, omitted: int) -> dict[str, Any]:
    """A session-reference source citing one session's message counts (its schema cannot say they must add up)."""
    counts = {"originalMessages": original, "retainedMessages": retained, "omittedMessages": omitted, "omittedBytes": 0}
    reference = {"sessionId": "s", "label": "", "capturedThroughSeq": None, "compacted": False, **counts}
    return {
        "kind": "session-reference",
        "form": "recall",
        "version": 1,
        "references": [{**reference, "truncated": True, "inputIndex": 0}],
    }


FREQUENT_ROW_EDITS: dict[str, Any] = {
    "an ignorable step/start": lambda e: _first(e, "step/start").update(ignorable=True),
    "a step/start with an ignorable false": lambda e: _first(e, "step/start").update(ignorable=False),
    "a tool/call appended to the surface": lambda e: _first(e, "tool/call").update(surfaceOp="append"),
    "a step/end citing sources": lambda e: _first(e, "step/end").update(sourceEventSeqs=[0]),
    "an assistant/message citing nothing": lambda e: _first(e, "assistant/message").update(sourceEventSeqs=[]),
    "an assistant/message with an unknown envelope member": lambda e: _first(e, "assistant/message").update(extra=1),
    "a tool/result appended by an op object": lambda e: _first(e, "tool/result").update(surfaceOp={"op": "append"}),
    "a user/message restating a goal": lambda e: _first(e, "user/message")["data"].update(source={"kind": "goal"}),
    "a user/message citing counts that add up": lambda e: _first(e, "user/message")["data"].update(source=_recall(5, 4, 1)),
    "a user/message citing counts that do not add up": lambda e: _first(e, "user/message")["data"].update(
        source=_recall(5, 1, 1)
    ),
    "a turn/start without its data": lambda e: _first(e, "turn/start").pop("data"),
    "a turn/start with a time past the safe integers": lambda e: _first(e, "turn/start").update(time=MAX_SAFE + 1),
}


@pytest.mark.parametrize("name", sorted(FREQUENT_ROW_EDITS))
def test_frequent_types_in_another_envelope_get_the_models_whole_answer(name: str) -> None:
    events = _streamed_turn()
    FREQUENT_ROW_EDITS[name](events)
    for packed in (False, True):
        _same_answer(_stored(events, packed))


def test_the_fast_checker_leaves_no_reference_cycle_behind() -> None:
    """What a fold keeps (lines, rows, the relationship state) is freed when the check returns, not
    at the cyclic collector's next pass: repeated checks would otherwise pile up."""
    text = _stored(realistic_events(turns=20, seed=2), packed=True)
    gc.collect()
    gc.disable()
    try:
        assert _certified(text) is not None
        assert gc.collect() == 0
    finally:
        gc.enable()


# -- every stored log of the vectors --------------------------------------------------------------------------


def _vector_texts(name: str) -> list[tuple[str, str]]:
    document = json.loads((VECTORS / name).read_text(encoding="utf-8"))
    texts = []
    for case in document["cases"]:
        for index, step in enumerate(case["input"]):
            if step.get("op") == "load":
                text = expand_step(step).get("jsonl")
                if isinstance(text, str):
                    texts.append((f"{case['id']}#{index}", text))
    return texts


VECTOR_FILES = sorted(path.name for path in VECTORS.glob("*.json") if path.name != "schema.json")


SLOW = os.environ.get("SESSIONLOG_SLOW") == "1"
DEEP = pytest.mark.skipif(not SLOW, reason="set SESSIONLOG_SLOW=1: about a minute of model time")


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=[pytest.mark.slow, DEEP]) if n == "large.json" else n for n in VECTOR_FILES]
)
def test_every_stored_vector_log_gets_the_models_whole_answer(name: str) -> None:
    texts = _vector_texts(name)
    for case, text in texts:
        try:
            _same_answer(text)
        except AssertionError as error:
            raise AssertionError(f"{name} {case}") from error


def test_the_vectors_hold_stored_logs_the_fast_checker_certifies_and_refuses() -> None:
    verdicts = [_certified(text) is not None for name in VECTOR_FILES if name != "large.json" for _, text in _vector_texts(name)]
    assert len(verdicts) > 100 and any(verdicts) and not all(verdicts)


# -- streams and the command line ----------------------------------------------------------------------------


def test_a_stream_that_cannot_seek_is_read_again_by_the_model_when_not_certified(tmp_path: Path) -> None:
    lines = _stored(realistic_events(turns=30, seed=2)).split("\n")[:-1]
    raw = json.loads(lines[-2])
    raw["data"]["turn"] = 999  # a contract violation near the end, after many certified lines
    lines[-2] = encode_line(raw)
    data = _joined(lines).encode("utf-8")
    model = C.check_chunks(_chunked(data, 4093), model=True)
    assert model.verdict is not None
    assert C.check_chunks(_chunked(data, 4093)) == model
    with monkeypatched_spool(64):  # the copy spills to a temporary file
        assert C.check_chunks(_chunked(data, 4093)) == model
    path = tmp_path / "bad.jsonl"
    path.write_bytes(data)
    assert C.check_path(str(path)) == C.check_path(str(path), model=True) == model


@contextlib.contextmanager
def monkeypatched_spool(size: int) -> Iterator[None]:
    saved = C.SPOOL_BYTES
    C.SPOOL_BYTES = size  # type: ignore[misc]
    try:
        yield
    finally:
        C.SPOOL_BYTES = saved  # type: ignore[misc]


def test_check_log_prints_the_same_with_and_without_model(tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    good.write_text(_stored(realistic_events(turns=6, seed=4), packed=True), encoding="utf-8")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(damage_line(good.read_text(encoding="utf-8"), 7, CORRUPTIONS[0]), encoding="utf-8")
    outputs = []
    for extra in ([], ["--model"]):
        out, err = io.StringIO(), io.StringIO()
        status = C.run([str(good), str(bad)], out, err, model=bool(extra))
        outputs.append((status, out.getvalue(), err.getvalue()))
    assert outputs[0] == outputs[1]
    assert f"{good}: ok:" in outputs[0][1]
