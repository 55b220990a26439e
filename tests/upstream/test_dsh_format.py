"""The published v0-to-v1 edge (``ports/dsh-format``) against the model.

The driver wires ``@deepseek-ai/dsh-session-format-v0-to-v1@0.1.3-alpha.2`` into the format catalog
as upstream's own test facade does, follows it with the published Session's surface fold as
upstream's production read path does (``Session.fromRestore``), and answers ``upgrade_v0`` and ``read``.  These tests pin what
the released reader does with the physical forms the model learned from it (packed chunk rows,
range provenance, recovery of a damaged tail), and the whole divergence catalogue, so a change on
either side fails here.  Skipped when ``node`` or ``ports/dsh-format/node_modules`` is missing (run
``cd ports/dsh-format && npm ci``).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from catalogue_check import SLICES, check_catalogue

from sessionlog_spec.model.jsonl import encode_line
from sessionlog_spec.protocol.messages import Ok, Refused
from sessionlog_spec.protocol.model_driver import DEFAULT_HEADER, ModelDriver
from sessionlog_spec.suite.agent import layouts
from sessionlog_spec.suite.agent.builder import SessionBuilder, basic_header
from sessionlog_spec.suite.agreement import compare
from sessionlog_spec.suite.expectations import load_expectations
from sessionlog_spec.suite.machines.base import Disagreement
from sessionlog_spec.suite.ports.inprocess import InProcessPort
from sessionlog_spec.suite.ports.subprocess import SubprocessPort
from sessionlog_spec.suite.run import Failure

ROOT = Path(__file__).resolve().parents[2]
PORT_DIR = ROOT / "ports" / "dsh-format"
NODE = shutil.which("node")
PACKAGES = ("dsh-session-format-v0-to-v1", "dsh-session")
"""The driver's packages (under ``@deepseek-ai/``): the edge, and the Session whose surface fold follows it."""

pytestmark = [
    pytest.mark.skipif(NODE is None, reason="node is not installed"),
    pytest.mark.skipif(
        not all((PORT_DIR / "node_modules" / "@deepseek-ai" / name).is_dir() for name in PACKAGES),
        reason="ports/dsh-format/node_modules is missing or out of date: run `cd ports/dsh-format && npm ci`",
    ),
]


@pytest.fixture(scope="module")
def edge() -> Iterator[SubprocessPort]:
    """The edge's driver, one process for the whole module."""
    assert NODE is not None
    port = SubprocessPort([NODE, str(PORT_DIR / "driver.mjs")], timeout=20.0)
    yield port
    port.close()


def streamed_text() -> str:
    """A closed turn whose answer streamed as four text chunks, stored one event per line."""
    b = SessionBuilder()
    b.streamed_turn("Explain it.", ("The ", "loop ", "never ", "ends."), (), basic_header(), "initial")
    return "".join(encode_line(line) + "\n" for line in [DEFAULT_HEADER, *b.events])


def agree(edge: SubprocessPort, text: str) -> None:
    """``read`` of ``text`` gives the model's answer (the same refusal code, or the same header and events)."""
    expected = InProcessPort(ModelDriver()).call("read", jsonl=text)
    actual = edge.call("read", jsonl=text)
    assert compare("read", expected, actual, strict_codes=True) is None, (expected, actual)


def test_the_edge_declares_the_reader_and_the_edge(edge: SubprocessPort) -> None:
    assert set(edge.hello.capabilities) == {"legacy", "read"}


@pytest.mark.parametrize("layout", sorted(layouts.LAYOUTS))
def test_inv_jsonl_9_inv_jsonl_10_every_stored_layout_reads_as_the_model_reads_it(edge: SubprocessPort, layout: str) -> None:
    """Packed rows, range provenance, CRLF and repeated keys: the released reader keeps the same events."""
    text = layouts.LAYOUTS[layout](streamed_text())
    if layout.startswith("packed"):
        assert '"text-chunks"' in text
    agree(edge, text)


def test_inv_jsonl_3_an_uncommitted_damaged_row_is_dropped_by_the_released_reader(edge: SubprocessPort) -> None:
    text = streamed_text() + '{"type":"session/title","seq":\n'
    reply = edge.call("read", jsonl=text)
    assert isinstance(reply, Ok) and len(reply.result["events"]) == text.count("\n") - 2
    agree(edge, text)


def test_inv_jsonl_4_committed_damage_is_refused_by_the_released_reader(edge: SubprocessPort) -> None:
    lines = streamed_text().split("\n")
    lines[3] = lines[3][:10]
    text = "\n".join(lines)
    reply = edge.call("read", jsonl=text)
    assert isinstance(reply, Refused) and reply.code == "JSONL_MALFORMED_LINE"
    agree(edge, text)


def test_inv_jsonl_1_a_header_line_without_delegation_depth_is_refused_by_the_released_reader(edge: SubprocessPort) -> None:
    text = streamed_text().replace(',"delegationDepth":0', "", 1)
    reply = edge.call("read", jsonl=text)
    assert isinstance(reply, Refused) and reply.code == "JSONL_HEADER_INVALID"
    agree(edge, text)


def test_inv_log_4_an_integral_double_beyond_2_53_comes_back_as_the_same_number(edge: SubprocessPort) -> None:
    """A float the model keeps (``4.607427877621723e+16``) comes back from JavaScript in integer
    digits, which read back as an integer of another exact value: the same double, so they agree."""
    b = SessionBuilder()
    schema = {"type": "object", "properties": {"n": {"type": "number", "maximum": 4.607427877621723e16}}}
    header = {**basic_header(tools=("read_file",)), "tools": [{"name": "read_file", "description": "d", "parameters": schema}]}
    b.streamed_turn("Explain it.", ("The ", "loop."), (), header, "initial")
    text = "".join(encode_line(line) + "\n" for line in [DEFAULT_HEADER, *b.events])
    released = edge.call("read", jsonl=text)
    assert isinstance(released, Ok)
    maximum = released.result["events"][3]["data"]["header"]["tools"][0]["parameters"]["properties"]["n"]["maximum"]
    assert type(maximum) is int and maximum != 4.607427877621723e16 and float(maximum) == 4.607427877621723e16
    agree(edge, text)


def tool_turn_text(last: Callable[[SessionBuilder], dict[str, Any]], version: int = 1) -> str:
    """A stored log of one turn that called ``read_file`` and a second turn open, then the event ``last`` builds."""
    b = SessionBuilder()
    b.tool_turn("Read it.", ("call-1",), basic_header(tools=("read_file",)), "initial")
    b.turn_start()
    events = [*b.events, last(b)]
    return "".join(encode_line(line) + "\n" for line in [{**DEFAULT_HEADER, "version": version}, *events])


def flip_is_error(b: SessionBuilder) -> dict[str, Any]:
    """A rewrite of the turn's tool result that also marks it failed."""
    event = b.rewrite_tool_result(b.tool_result_seqs()[0], commit=False)
    event["data"]["message"]["content"][0]["isError"] = True
    return event


def spanning_two(b: SessionBuilder) -> dict[str, Any]:
    """A rewrite of the turn's tool result that replaces the assistant message before it too."""
    result = b.tool_result_seqs()[0]
    event = b.rewrite_tool_result(result, commit=False)
    return {**event, "surfaceOp": {"op": "replace", "start": result - 2, "end": result}, "sourceEventSeqs": [result - 2, result]}


def targeting_a_message(b: SessionBuilder) -> dict[str, Any]:
    """A tool-result replace whose target is the assistant message that asked for the call."""
    asked = b.tool_result_seqs()[0] - 2
    event = b.rewrite_tool_result(b.tool_result_seqs()[0], commit=False)
    return {**event, "surfaceOp": {"op": "replace", "start": asked, "end": asked}, "sourceEventSeqs": [asked]}


@pytest.mark.parametrize(
    ("last", "code"),
    [
        pytest.param(spanning_two, "TOOL_REWRITE_SPAN", id="spans-two"),
        pytest.param(targeting_a_message, "TOOL_REWRITE_TARGET", id="targets-a-message"),
        pytest.param(flip_is_error, "TOOL_REWRITE_CHANGES", id="flips-is-error"),
    ],
)
@pytest.mark.parametrize("version", [1, 0], ids=["v1", "v0"])
def test_inv_surf_11_the_released_restore_refuses_a_bad_rewrite_in_a_stored_log(
    edge: SubprocessPort, last: Callable[[SessionBuilder], dict[str, Any]], code: str, version: int
) -> None:
    """The Session's restore after the format checks (production's read path) refuses what the model refuses."""
    text = tool_turn_text(last, version)
    released = edge.call("read", jsonl=text)
    assert isinstance(released, Refused) and released.code == code, released
    agree(edge, text)


def test_inv_surf_11_a_content_only_rewrite_in_a_stored_log_is_read_by_the_release(edge: SubprocessPort) -> None:
    text = tool_turn_text(lambda b: b.rewrite_tool_result(b.tool_result_seqs()[0], commit=False))
    assert isinstance(edge.call("read", jsonl=text), Ok)
    agree(edge, text)


@pytest.mark.parametrize("member", [{"surfaceOp": "append"}, {"sourceEventSeqs": [1]}], ids=["surface-op", "sources"])
def test_inv_surf_1_an_unknown_ignorable_event_carries_no_surface_metadata_in_production(
    edge: SubprocessPort, member: dict[str, Any]
) -> None:
    """Production's restore (the Session's ``surfaceOpOf``) refuses ``surfaceOp`` and ``sourceEventSeqs``
    on every type but the three surface types, an unknown ignorable one included; without them it is read."""
    unknown = {"type": "vendor/trace", "data": {}, "ignorable": True}
    bare = tool_turn_text(lambda b: {**unknown, "seq": b.next_seq, "time": b.time})
    assert isinstance(edge.call("read", jsonl=bare), Ok)
    text = tool_turn_text(lambda b: {**unknown, "seq": b.next_seq, "time": b.time, **member})
    released = edge.call("read", jsonl=text)
    assert isinstance(released, Refused), released
    agree(edge, text)


NEGATIVE_ZERO_SEQ = '{"type":"session/title","seq":-0,"time":1,"data":{"title":"t","messageSeqs":[],"source":{"kind":"user"}}}'


@pytest.mark.parametrize("version", [0, 1])
def test_deviation_d5_the_released_reader_reads_a_first_seq_of_negative_zero(edge: SubprocessPort, version: int) -> None:
    """D5: the release compares the first seq with its index (``-0 !== 0`` is false), so it reads
    ``-0`` there as seq 0; the model refuses it, and the port's expected failure names exactly that."""
    header = encode_line({**DEFAULT_HEADER, "version": version})
    text = f"{header}\n{NEGATIVE_ZERO_SEQ}\n"
    released = edge.call("read", jsonl=text)
    assert isinstance(released, Ok) and released.result["events"][0]["seq"] == 0
    model = InProcessPort(ModelDriver()).call("read", jsonl=text)
    assert isinstance(model, Refused) and model.code == "ENVELOPE_BAD_SEQ"
    mismatch = compare("read", model, released, strict_codes=False)
    assert mismatch is not None
    failure = Failure(
        Disagreement("read", mismatch, [], rule="inject", invariants=["INV-LOG-2"], codes=[model.code]), Path("c.json"), []
    )
    excusing = [e for e in load_expectations(PORT_DIR / "expected-failures.json") if e.matches(failure)]
    assert [e.code for e in excusing] == ["ENVELOPE_BAD_SEQ"] and "D5" in excusing[0].reason
    # Anywhere but the first line -0 is not the event's index: a committed one is refused by both.
    first = NEGATIVE_ZERO_SEQ.replace('"seq":-0', '"seq":0')
    turn = '{"type":"turn/start","seq":2,"time":1,"data":{"turn":1}}\n'
    turn += '{"type":"turn/end","seq":3,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}\n'
    committed = f"{header}\n{first}\n{NEGATIVE_ZERO_SEQ}\n{turn}"
    released_later = edge.call("read", jsonl=committed)
    model_later = InProcessPort(ModelDriver()).call("read", jsonl=committed)
    assert isinstance(released_later, Refused) and isinstance(model_later, Refused)
    assert released_later.code == model_later.code == "SEQ_NOT_CONTIGUOUS"


@pytest.mark.parametrize("sample", SLICES)
def test_divergence_catalogue_is_unchanged(sample: str) -> None:
    """Every question of the divergence catalogue (or a slice of them) still gets the verdict recorded
    in ``docs/conformance/dsh-format-divergences.json``: a divergence that closes or opens fails here."""
    check_catalogue(ROOT / "docs" / "conformance" / "dsh-format-divergences.json", sample, ["node", str(PORT_DIR / "driver.mjs")])
