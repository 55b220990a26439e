"""seqlog's driver against the model's, reply for reply, on Hypothesis-generated op sequences."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from seqlog_compare import Pair
from strategies import candidates, headers, mutated, next_events, sessions, v0_logs

from seqlog import Session, encode_jsonl
from sessionlog_spec.model.json_value import thaw
from sessionlog_spec.model.load import ReadLog, read_log
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.suite.agent import candidates as mutations
from sessionlog_spec.suite.agent.builder import SessionBuilder, realistic_session
from sessionlog_spec.suite.agent.layouts import LAYOUTS

# No shrinking: a divergence is reported as drawn, so a failing run stays as fast as a passing one.
PHASES = (Phase.explicit, Phase.generate)
FAST = settings(
    max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None, phases=PHASES
)

HEADER_LINE = {"type": "session", "version": 1, "id": "diff", "createdAt": 7, "delegationDepth": 1}


def _corruptions(draw: st.DrawFn, text: str) -> str:
    """A saved log, unchanged or damaged the ways a disk or a careless editor damages one."""
    lines = text.split("\n")[:-1]
    kinds = ["none", "torn", "cut", "garbage", "duplicate", "drop", "crlf", "bom", "version", "v0", *LAYOUTS]
    kind = draw(st.sampled_from(kinds))
    if kind in LAYOUTS:
        return LAYOUTS[kind](text)
    if kind == "torn" and len(text) > 1:
        return text + text[: draw(st.integers(1, max(1, len(text) // 3)))].replace("\n", "")
    if kind == "cut":
        return text[: draw(st.integers(0, len(text)))]
    if kind == "garbage":
        lines.insert(draw(st.integers(1, len(lines))), draw(st.sampled_from(["", "{", "[1]", '{"a":1,"a":2}', "NaN", "{}"])))
    elif kind == "duplicate" and len(lines) > 1:
        index = draw(st.integers(1, len(lines) - 1))
        lines.insert(index, lines[index])
    elif kind == "drop" and len(lines) > 2:
        del lines[draw(st.integers(1, len(lines) - 2))]
    elif kind == "crlf" and lines:
        index = draw(st.integers(0, len(lines) - 1))
        lines[index] += "\r"
    elif kind == "bom":
        lines[0] = "\ufeff" + lines[0]
    elif kind == "version":
        lines[0] = lines[0].replace('"version":1', f'"version":{draw(st.sampled_from([0, 2, -1]))}')
    elif kind == "v0":
        lines[0] = lines[0].replace('"version":1', '"version":0')
    return "".join(line + "\n" for line in lines)


def _integer_paths(value: object, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _integer_paths(v, (*path, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _integer_paths(v, (*path, i))]
    return [path] if type(value) is int else []


def _floated(draw: st.DrawFn, raw: dict[str, Any]) -> dict[str, Any]:
    """``raw`` with one integer written as an integral float (JSON cannot tell ``3`` from ``3.0``)."""
    out = copy.deepcopy(raw)
    paths = _integer_paths(out)
    if paths:
        path = draw(st.sampled_from(paths))
        parent: Any = out
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = float(parent[path[-1]])
    return out


def _region(draw: st.DrawFn, events: list[dict[str, Any]]) -> object:
    """A compaction region to ask ``cuts`` about: mostly seqs of surface events, sometimes any seq
    or a malformed region."""
    surface = [e["seq"] for e in events if isinstance(e, dict) and e.get("surfaceOp") is not None]
    seqs = st.integers(-1, len(events))
    if surface:
        seqs = st.one_of(st.sampled_from(surface), st.sampled_from(surface), seqs)
    region = st.fixed_dictionaries({"start": seqs, "end": seqs})
    malformed = st.sampled_from([{"start": 0}, {"start": 1.0, "end": True}, [0, 1], None, {"start": "1", "end": 1}])
    return draw(st.one_of(region, region, region, malformed))


def _read_ops(pair: Pair, draw: st.DrawFn, events: list[dict[str, Any]]) -> None:
    """The pure ops over a log: surface, header, repair, cuts, header decision."""
    for op in draw(st.lists(st.sampled_from(["fold_surface", "fold_header", "repair", "cuts", "decision"]), max_size=3)):
        if op == "cuts" and draw(st.booleans()):
            seq = draw(st.one_of(st.integers(-1, len(events)), st.sampled_from([0.0, 1.0, True, "0", None, [0]])))
            extra = {"region": _region(draw, events)} if draw(st.booleans()) else {}
            pair.call("cuts", events=events, seq=seq, **extra)
        elif op == "cuts" and draw(st.booleans()):
            pair.call("cuts", events=events, region=_region(draw, events))
        elif op == "decision":
            facts = {k: draw(st.booleans()) for k in ("first_request", "begins_series", "replaced_since_last_request")}
            pair.call("header_decision", events=events, header=draw(headers()), instance=facts)
        else:
            pair.call(op, events=events)


@st.composite
def _scenario(draw: st.DrawFn) -> None:
    pair = Pair()
    pair.call("hello")
    pair.call("reset", header=HEADER_LINE)
    builder: SessionBuilder = draw(sessions(max_actions=24))
    log = builder.events
    hostile_budget = draw(st.integers(0, 4))
    for index, raw in enumerate(log):
        if hostile_budget and draw(st.integers(0, 5)) == 0:
            hostile_budget -= 1
            kind = draw(st.sampled_from(["candidate", "mutated", "mutated", "floated"]))
            if kind == "candidate":
                candidate = draw(candidates(index))
            elif kind == "floated":
                candidate = _floated(draw, raw)
            else:
                candidate = draw(mutated(raw))
            if pair.call("append", event=candidate)["ok"]:
                break  # the logs now differ from the drawn session; what follows would only be refused
        pair.call("append", event=raw)
        if draw(st.integers(0, 7)) == 0:
            _read_ops(pair, draw, log[: index + 1])
    pair.call("state")
    saved = pair.call("save")["result"]["jsonl"]
    _read_ops(pair, draw, log)
    # Reload what was saved, damaged or not, then keep appending to the reloaded session.
    stored = _corruptions(draw, saved)
    pair.call("read", jsonl=stored)
    loaded = pair.call("load", jsonl=stored)
    if loaded["ok"]:
        same_log = loaded["result"]["length"] == len(log)
        pair.call("append", event=draw(next_events(builder)) if same_log else log[0])
        pair.call("save")
    # Seed from a prefix, sometimes with one event changed.
    cut = draw(st.integers(0, len(log)))
    seed: list[object] = [copy.deepcopy(e) for e in log[:cut]]
    change: bool = draw(st.booleans())
    if seed and change:
        index = draw(st.integers(0, len(seed) - 1))
        seed[index] = draw(mutated(log[index]))
    pair.call("seed", events=seed)
    pair.call("state")


@FAST
@given(_scenario())
def test_sessions_appends_loads_and_seeds_agree(_: None) -> None:
    """Valid sessions, hostile candidates, reloads of damaged saves and seeds all get the same replies."""


@st.composite
def _any_range_compactions(draw: st.DrawFn) -> None:
    """Summaries over any contiguous surface range, balanced or not, then the balance queries.

    The log accepts every such range (only the compactor reads the balance), so both ports must
    agree on the accepted log, on ``cuts`` and regions over it (``TOOL_PAIRING_NEGATIVE`` once a
    result lost its call), and on the pending-call count, negative included.
    """
    pair = Pair()
    pair.call("reset", header=HEADER_LINE)
    builder: SessionBuilder
    if draw(st.booleans()):
        builder = draw(sessions(max_actions=24))
    else:
        builder = realistic_session(draw(st.integers(1, 3)), calls_per_step=draw(st.integers(1, 3)))
    for raw in builder.events:
        pair.call("append", event=raw)
    for _ in range(draw(st.integers(1, 3))):
        nodes = list(builder.state.surface.nodes)
        if not nodes:
            break
        first = draw(st.integers(0, len(nodes) - 1))
        last = draw(st.integers(first, len(nodes) - 1))
        candidate = builder.compaction(nodes[first], nodes[last], commit=False)
        if pair.call("append", event=candidate)["ok"]:
            builder.commit(candidate)
        log = builder.events
        pair.call("cuts", events=log)
        on_surface = st.sampled_from(list(builder.state.surface.nodes) or [0])
        for _ in range(draw(st.integers(0, 4))):
            region = {"start": draw(on_surface), "end": draw(on_surface)} if draw(st.booleans()) else _region(draw, log)
            pair.call("cuts", events=log, region=region)
        ask_around: bool = draw(st.booleans())
        if ask_around:
            pair.call("cuts", events=log, seq=draw(st.sampled_from(nodes)))
        restored = Session.restore(log)
        assert restored.pending_calls == builder.state.pending_calls, (restored.pending_calls, builder.state.pending_calls)
        assert pair.seqlog.session.pending_calls == builder.state.pending_calls
    pair.call("state")
    pair.call("seed", events=builder.events)
    pair.call("load", jsonl=_jsonl(builder.events))
    pair.call("state")


@FAST
@given(_any_range_compactions())
def test_compactions_over_any_range_and_the_balance_agree(_: None) -> None:
    """INV-COMPACT-1/3/6: unbalanced compactions are accepted alike; cuts, regions and pending counts agree."""


@settings(
    max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None, phases=PHASES
)
@given(v0_logs(max_actions=20), st.sampled_from(["as is", "refused", "v1", "text"]), st.randoms(use_true_random=False))
def test_v0_upgrades_agree(case: Any, twist: str, rng: random.Random) -> None:
    """The v0 edge converts and refuses exactly as the model does, directly and through ``load``."""
    pair = Pair()
    header: dict[str, Any] = dict(case.v0.header)
    events: list[Any] = [thaw(e) for e in case.v0.events]
    if twist == "refused" and events:
        refused = rng.choice(
            [
                {"type": "mode/set", "seq": 0, "time": 0, "data": {}},
                {"type": "request/header-delta", "seq": 0, "time": 0, "data": {}},
                {"type": "x-new/thing", "seq": 0, "time": 0, "data": {}, "ignorable": True},
                {"type": "request/header", "seq": 0, "time": 0, "data": {"header": {}, "reason": "fallback"}},
            ]
        )
        events.insert(rng.randrange(len(events) + 1), refused)
    if twist == "v1":
        header = {**header, "version": 1}
    log = {"header": header, "events": events}
    pair.call("upgrade_v0", log=log)
    if twist in ("text", "refused"):
        text = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in [header, *events])
        pair.call("read", jsonl=text)
        pair.call("load", jsonl=text)
        pair.call("state")


def test_mutation_catalogue_is_refused_code_for_code() -> None:
    """Every named mutation in the suite's registry of invalid candidates is refused by seqlog with the model's code."""
    rng = random.Random(20260)
    for builder in (SessionBuilder(), realistic_session(turns=2), realistic_session(turns=3, calls_per_step=3)):
        for candidate in mutations.applicable(builder, rng):
            pair = Pair()
            context, value = candidate.context, candidate.value
            if context == "append":
                pair.call("seed", events=builder.events)
                state = pair.call("state")["result"]
                if state["length"] != len(builder.events):
                    continue
                pair.call("load", jsonl=_jsonl(builder.events))
                reply = pair.call("append", event=value)
            elif context == "seed":
                reply = pair.call("seed", events=value)
            elif context == "load":
                reply = pair.call("load", jsonl=value)
            elif context == "upgrade":
                reply = pair.call("upgrade_v0", log=value)
            else:
                reply = pair.call("cuts", events=builder.events)
                continue
            assert not reply["ok"], candidate.mutation.name
            # A lifted candidate may be refused for another reason its path checks first: the model says which.
            expected = mutations.submit(builder, candidate)
            assert isinstance(expected, Violation) and (candidate.mutation.lifted_from or expected.code is candidate.code)
            assert reply["error"]["code"] == expected.code, (candidate.mutation.name, reply["error"], expected)


def _jsonl(events: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(x) + "\n" for x in [HEADER_LINE, *events])


@FAST
@given(st.integers(1, 4), st.integers(0, 3), st.integers(3, 8))
def test_inv_jsonl_9_seqlog_packed_writing_reads_the_same_in_the_model(turns: int, calls: int, chunks: int) -> None:
    """seqlog's packed mode (upstream's default layout) and its plain mode give the model the same events."""
    builder = realistic_session(turns, calls_per_step=calls)
    builder.turn_start()
    builder.user_message("Stream it.")
    builder.step_start()
    for k in range(chunks):
        builder.chunk(f"part {k} ")
    builder.step_end()
    builder.turn_end()
    session = Session.create(builder.events, header=HEADER_LINE)
    packed = encode_jsonl(HEADER_LINE, session.events, pack_chunks=True).decode("utf-8")
    plain = encode_jsonl(HEADER_LINE, session.events).decode("utf-8")
    assert '"text-chunks"' in packed and packed.count("\n") == plain.count("\n") - chunks + 1
    read_packed, read_plain = read_log(packed), read_log(plain)
    assert isinstance(read_packed, ReadLog) and isinstance(read_plain, ReadLog), (read_packed, read_plain)
    assert read_packed.state.events == read_plain.state.events
    assert len(read_plain.state.events) == len(session.events)
