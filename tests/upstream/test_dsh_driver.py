"""Differential smoke test: the published @deepseek-ai/dsh-session driver against the model driver.

Starts ``node ports/dsh-session/driver.mjs`` once and sends it and the in-process model the same
requests: ``hello``, a realistic seed, live appends, a few refusals, and the pure folds.  Where
upstream agrees with the model the replies must be equal; the known divergences checked here are
pinned explicitly (see ``docs/conformance/dsh-session.md``), so a change in upstream either way
fails a test.  Skipped when ``node`` or ``ports/dsh-session/node_modules`` is missing (run
``cd ports/dsh-session && npm ci``).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from copy import deepcopy
from pathlib import Path
from typing import Any

import pytest
from catalogue_check import SLICES, check_catalogue

from sessionlog_spec.model.session import seed_session
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.protocol.messages import Ok, Port, Refused, Reply
from sessionlog_spec.protocol.model_driver import ModelDriver
from sessionlog_spec.suite.agent.builder import SessionBuilder, basic_header, realistic_session
from sessionlog_spec.suite.ports.inprocess import InProcessPort
from sessionlog_spec.suite.ports.subprocess import SubprocessPort

ROOT = Path(__file__).resolve().parents[2]
PORT_DIR = ROOT / "ports" / "dsh-session"
NODE = shutil.which("node")
NODE22 = PORT_DIR / "node_modules" / ".bin" / "node"

pytestmark = [
    pytest.mark.skipif(NODE is None, reason="node is not installed"),
    pytest.mark.skipif(
        not (PORT_DIR / "node_modules" / "@deepseek-ai" / "dsh-session").is_dir(),
        reason="ports/dsh-session/node_modules is missing: run `cd ports/dsh-session && npm ci`",
    ),
]


@pytest.fixture(scope="module")
def upstream() -> Iterator[SubprocessPort]:
    """The upstream driver, one process for the whole module."""
    assert NODE is not None
    port = SubprocessPort([NODE, str(PORT_DIR / "driver.mjs")], timeout=20.0)
    yield port
    port.close()


@pytest.fixture
def model() -> Port:
    """The model, in process."""
    return InProcessPort(ModelDriver())


def both(upstream: Port, model: Port, op: str, **args: Any) -> tuple[Reply, Reply]:
    """The same request to both ports."""
    return upstream.call(op, **deepcopy(args)), model.call(op, **deepcopy(args))


def ok(reply: Reply) -> Any:
    """The result of a successful reply."""
    assert isinstance(reply, Ok), reply
    return reply.result


def refused(reply: Reply) -> Refused:
    """A refusal."""
    assert isinstance(reply, Refused), reply
    return reply


def seeded(upstream: Port, model: Port, events: list[dict[str, Any]]) -> SessionBuilder:
    """Seed both ports with ``events``; a builder continuing the seeded session (marker included)."""
    up, mo = both(upstream, model, "seed", events=events)
    assert ok(up) == ok(mo)
    state = seed_session(events)
    assert not isinstance(state, Violation)
    return SessionBuilder(state, time=events[-1]["time"] if events else 0)


@pytest.mark.parametrize("node", ["system", "node22"])
def test_hello_declares_what_upstream_has(node: str) -> None:
    """Under Node 22 (from the npm registry) the JSONL backend is there; under an older Node it is not."""
    assert NODE is not None
    binary = NODE if node == "system" else str(NODE22)
    if node == "node22" and not NODE22.exists():
        pytest.skip("ports/dsh-session/node_modules/.bin/node is missing")
    port = SubprocessPort([binary, str(PORT_DIR / "driver.mjs")], timeout=20.0)
    version = subprocess.run([binary, "--version"], capture_output=True, text=True, check=False).stdout
    with_persistence = node == "node22" or version >= "v22.15"
    try:
        hello = port.hello
        assert hello.protocol == "sessionlog-driver/1"
        assert hello.name == "@deepseek-ai/dsh-session"
        assert hello.version == "0.1.0-rc.8"
        assert hello.format_version == 0, "upstream writes SESSION_FORMAT_VERSION 0"
        stored = ("jsonl", "read") if with_persistence else ()
        assert set(hello.capabilities) == {"session", "surface", "header", "repair", "compaction", *stored}
        unsupported: list[tuple[str, dict[str, Any]]] = [
            ("upgrade_v0", {"log": {"header": {}, "events": []}}),
            (
                "header_decision",
                {
                    "events": [],
                    "header": basic_header(),
                    "instance": {"first_request": True, "begins_series": False, "replaced_since_last_request": False},
                },
            ),
        ]
        for op, args in unsupported:
            assert refused(port.call(op, **args)).code == "UNSUPPORTED", op
    finally:
        port.close()


def test_realistic_seed_matches_the_model(upstream: Port, model: Port) -> None:
    events = realistic_session(turns=4, calls_per_step=3).events
    up, mo = both(upstream, model, "seed", events=events)
    assert ok(up) == ok(mo)
    assert ok(up)["length"] == len(events) + 1, "the end-of-seed marker is part of the log"
    assert ok(up)["header"] == basic_header()
    assert ok(upstream.call("state")) == ok(model.call("state"))


def test_live_appends_match_the_model(upstream: Port, model: Port) -> None:
    b = seeded(upstream, model, realistic_session(turns=2).events)
    new_header = basic_header(system="You are terse.", tools=("read_file", "write_file"))
    appended = [
        b.turn_start(),
        b.user_message("Now refactor it."),
        b.step_start(),
        b.request_header(new_header, "change"),
        b.assistant_message("Reading.", ["c-1", "c-2"]),
        b.tool_call("c-1"),
        b.tool_result("c-1"),
        b.tool_call("c-2"),
        b.tool_result("c-2"),
        b.step_end(),
    ]
    nodes = b.state.surface.nodes
    appended += [b.compaction(nodes[0], nodes[-1]), b.step_start()]
    appended.append(b.rewrite_tool_result(b.tool_result_seqs()[0]) if b.tool_result_seqs() else b.assistant_message())
    appended += [b.assistant_message("Done."), b.step_end(), b.turn_end()]
    for event in appended:
        up, mo = both(upstream, model, "append", event=event)
        assert ok(up) == ok(mo), event
    final = ok(upstream.call("state"))
    assert final["replace_generation"] == 1
    assert final["header"] == new_header


REFUSALS = [
    pytest.param(lambda b: b.turn_start(commit=False), "TURN_ALREADY_OPEN", id="turn-start-while-open"),
    pytest.param(
        lambda b: {
            **b.user_message(commit=False),
            "surfaceOp": {"op": "replace", "start": 9999, "end": 9999},
            "sourceEventSeqs": [1],
        },
        "REPLACE_START_NOT_ON_SURFACE",
        id="replace-start-off-surface",
    ),
    pytest.param(lambda b: {**b.turn_start(commit=False), "surfaceOp": "append"}, "SURFACE_OP_FORBIDDEN", id="surfaceop-on-turn"),
    pytest.param(lambda b: {**b.user_message(commit=False), "seq": b.next_seq + 1}, "SEQ_NOT_CONTIGUOUS", id="seq-gap"),
    pytest.param(
        lambda b: {
            "type": "tool/result",
            "seq": b.next_seq,
            "time": b.time,
            "data": b.tool_result_data("asked-not-started", "x"),
            "surfaceOp": "append",
        },
        "TOOL_RESULT_UNPAIRED",
        id="unpaired-tool-result",
    ),
    pytest.param(
        lambda b: {
            "type": "request/header",
            "seq": b.next_seq,
            "time": b.time,
            "data": {"header": basic_header(), "reason": "fallback"},
        },
        "LEGACY_FALLBACK_REASON",
        id="fallback-reason",
    ),
]


@pytest.mark.parametrize(("make", "code"), REFUSALS)
def test_refusals_match_the_model_and_change_nothing(upstream: Port, model: Port, make: Any, code: str) -> None:
    b = seeded(upstream, model, [*realistic_session(turns=1).events])
    b.turn_start()
    b.step_start()
    b.assistant_message("Reading.", ["asked-not-started"])
    for event in b.events[len(b.events) - 3 :]:
        both(upstream, model, "append", event=event)
    before = ok(upstream.call("state"))
    assert before == ok(model.call("state"))
    candidate = make(b)
    up, mo = both(upstream, model, "append", event=candidate)
    assert refused(mo).code == code
    assert refused(up).code == code, refused(up).message
    assert ok(upstream.call("state")) == before, "a refused append must leave upstream's session unchanged"


def test_refused_seed_keeps_the_previous_session(upstream: Port, model: Port) -> None:
    seeded(upstream, model, realistic_session(turns=1).events)
    before = ok(upstream.call("state"))
    bad = realistic_session(turns=2).events
    bad[5] = {**bad[5], "seq": 99}
    up, mo = both(upstream, model, "seed", events=bad)
    assert refused(mo).code == "SEQ_NOT_CONTIGUOUS"
    assert refused(up).code == "SEQ_NOT_CONTIGUOUS", refused(up).message
    assert ok(upstream.call("state")) == before


def test_pure_folds_match_the_model(upstream: Port, model: Port) -> None:
    b = realistic_session(turns=3)
    nodes = b.state.surface.nodes
    b.turn_start()
    b.step_start()
    b.compaction(nodes[1], nodes[-2])
    b.assistant_message("Continuing.", ["late-call"])
    b.tool_call("late-call")
    events = b.events
    for op in ("fold_surface", "fold_header", "repair"):
        up, mo = both(upstream, model, op, events=events)
        assert ok(up) == ok(mo), op
    closers = ok(upstream.call("repair", events=events))["closers"]
    assert [c["type"] for c in closers] == ["tool/result", "step/end", "turn/end"]
    assert closers[0]["data"]["error"]["code"] == "TOOL_OUTCOME_UNKNOWN"


# -- known divergences, pinned: each fails if upstream changes its behaviour ---------------------


def test_divergence_unknown_type_is_accepted_by_upstream(upstream: Port, model: Port) -> None:
    b = seeded(upstream, model, realistic_session(turns=1).events)
    event = b.event("x/unknown", {"anything": 1}, commit=False)
    up, mo = both(upstream, model, "append", event=event)
    assert refused(mo).code == "UNKNOWN_EVENT_TYPE"
    assert isinstance(up, Ok), "upstream Session accepts unknown, non-ignorable types (the refusal is in persistence)"


def test_divergence_null_header_is_committed_then_poisons_the_state(upstream: Port, model: Port) -> None:
    b = seeded(upstream, model, realistic_session(turns=1).events)
    b.turn_start()
    both(upstream, model, "append", event=b.events[-1])
    event = b.event("request/header", {"header": None, "reason": "change"}, commit=False)
    up, mo = both(upstream, model, "append", event=event)
    assert refused(mo).code == "HEADER_INVALID"
    assert "upstream ACCEPTED the event" in refused(up).message
    state = refused(upstream.call("state"))
    assert "TypeError" in state.message and "adapterDefaults" in state.message


def test_divergence_series_reason_is_unknown_to_upstream_seeds(upstream: Port, model: Port) -> None:
    b = SessionBuilder()
    b.turn_start()
    b.step_start()
    b.request_header(basic_header(), "initial")
    b.request_header(basic_header(), "series")
    up, mo = both(upstream, model, "seed", events=b.events)
    assert ok(mo)["length"] == 5
    # Upstream does not know "series" but does not check reasons either: it accepts "bogus" too.
    assert ok(up) == ok(mo)
    bogus = [*b.events[:-1], {**b.events[-1], "data": {"header": basic_header(), "reason": "bogus"}}]
    up, mo = both(upstream, model, "seed", events=bogus)
    assert refused(mo).code == "HEADER_REASON_INVALID"
    assert isinstance(up, Ok)


# -- the whole divergence catalogue --------------------------------------------------------------


@pytest.mark.parametrize("sample", SLICES)
def test_divergence_catalogue_is_unchanged(sample: str) -> None:
    """Every question of ``tools/dsh_upstream/divergences.py`` (or a slice of them) still gets the verdict
    recorded in ``docs/conformance/dsh-session-divergences.json``: a divergence that closes or opens fails here."""
    check_catalogue(ROOT / "docs" / "conformance" / "dsh-session-divergences.json", sample)
