"""The model's ops agree with each other.

Each op is a reading of the same rules, so two ops asked about the same thing must give the same
answer: what the writer rule approves, ``append`` accepts and ``fold_header`` reconstructs; a
snapshot is judged alike by ``fold_header``, ``seed`` and ``header_decision``; ``read`` and ``load``
keep the same events; ``save`` then ``load`` gives the session back; and a v0 log read directly
holds what its upgrade, stored as v1, holds.  A port is held to each op separately, so a
disagreement inside the model would make some port wrong whichever op it followed.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import assume, given
from hypothesis import strategies as st
from strategies import V0Case, headers, perform, property_settings, sessions, v0_logs

from sessionlog_spec.model.header import canonical_header
from sessionlog_spec.model.json_value import JsonObject, as_object, freeze, json_equal, thaw
from sessionlog_spec.model.jsonl import encode_line
from sessionlog_spec.model.legacy import StoredLog, upgrade_v0
from sessionlog_spec.model.load import load_session, read_log, save_session
from sessionlog_spec.model.session import seed_session
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.protocol.model_driver import ModelDriver
from sessionlog_spec.suite.agent.builder import SessionBuilder

HEADER_LINE = {"type": "session", "version": 1, "id": "agreement", "createdAt": 0, "delegationDepth": 0}
FACTS = st.fixed_dictionaries(
    {"first_request": st.booleans(), "begins_series": st.booleans(), "replaced_since_last_request": st.booleans()}
)


def ask(op: str, **members: Any) -> dict[str, Any]:
    """One request to a fresh model driver, its whole reply."""
    return ModelDriver()({"id": 1, "op": op, **members})


def code(reply: dict[str, Any]) -> str | None:
    """The refusal's code, or ``None`` for an answer."""
    return None if reply["ok"] else str(reply["error"]["code"])


@st.composite
def assembled_headers(draw: st.DrawFn) -> dict[str, Any]:
    """A request's header in any spelling, now and then with one member of a tool or the header spoiled."""
    header = draw(headers())
    spoil = draw(st.sampled_from(["none", "none", "tool_member", "tool_extra", "system", "config"]))
    tools = header.get("tools")
    if spoil == "tool_member" and tools:
        del tools[0][draw(st.sampled_from(["name", "description", "parameters"]))]
    elif spoil == "tool_extra" and tools:
        tools[0]["strict"] = True
    elif spoil == "system":
        header["system"] = draw(st.sampled_from([None, 0, [], ""]))
    elif spoil == "config":
        header["config"]["maxTokens"] = draw(st.sampled_from([0, -1, "many", 1.5]))
    return header


@st.composite
def open_turn_logs(draw: st.DrawFn) -> SessionBuilder:
    """A valid session whose turn is open, so a snapshot may be written next."""
    builder = draw(sessions(max_actions=20))
    if builder.state.trace.open_turn is None:
        perform(draw, builder, "turn_start")
    return builder


def snapshot_event(builder: SessionBuilder, data: Any) -> dict[str, Any]:
    events = builder.events
    return {"type": "request/header", "seq": len(events), "time": events[-1]["time"] if events else 0, "data": data}


@given(builder=open_turn_logs(), assembled=assembled_headers(), facts=FACTS)
@property_settings(0.5)
def test_inv_hdr_12_what_header_decision_approves_append_accepts_and_fold_header_reconstructs(
    builder: SessionBuilder, assembled: dict[str, Any], facts: dict[str, bool]
) -> None:
    log = builder.events
    decided = ask("header_decision", events=log, header=copy.deepcopy(assembled), instance=facts)
    canonical = canonical_header(as_object(freeze(assembled)) or freeze({}))  # type: ignore[arg-type]
    # The snapshot of this header, whichever reason: the writer would write its canonical form.
    snapshot = snapshot_event(builder, {"header": thaw(canonical), "reason": "change"})
    driver = ModelDriver()
    seeded = driver({"id": 1, "op": "seed", "events": log})
    assert seeded["ok"], seeded
    # A seed may end in its marker: the snapshot goes right after whatever the session holds.
    appended = driver({"id": 2, "op": "append", "event": {**snapshot, "seq": seeded["result"]["length"]}})
    if not decided["ok"]:
        # Refused for the header: the same header as a snapshot is refused by append, with the same code.
        assert code(appended) == code(decided), (decided, appended)
        return
    assert appended["ok"], (decided, appended)
    decision = decided["result"]["decision"]
    written = [*log, snapshot] if decision is not None else log
    folded = ask("fold_header", events=written)
    assert folded["ok"], folded
    in_force = folded["result"]["header"]
    assert in_force is not None
    assert json_equal(canonical_header(as_object(freeze(in_force))), canonical), (in_force, assembled)  # type: ignore[arg-type]


SNAPSHOT_DATA: st.SearchStrategy[Any] = st.one_of(
    headers().map(lambda h: {"header": h, "reason": "change"}),
    st.fixed_dictionaries(
        {"header": assembled_headers(), "reason": st.sampled_from(["initial", "resume", "change", "series", "fallback", "x"])},
        optional={"startsSeries": st.sampled_from([True, False, None])},
    ),
    st.sampled_from([{}, [], None, {"header": {}}, {"reason": "change"}]),
)


@given(builder=open_turn_logs(), data=SNAPSHOT_DATA, assembled=headers(canonical=True), facts=FACTS)
@property_settings(0.5)
def test_inv_hdr_5_fold_header_seed_and_header_decision_judge_a_snapshot_alike(
    builder: SessionBuilder, data: Any, assembled: dict[str, Any], facts: dict[str, bool]
) -> None:
    good = [*builder.events, snapshot_event(builder, {"header": assembled, "reason": "change"})]
    # Only the snapshot is asked about: the rest of the log is one every op takes (a seed, unlike a
    # complete log, may leave a compaction open across a turn, which its end marker retires).
    assume(all(ask(op, events=good, header=assembled, instance=facts)["ok"] for op in ("seed", "fold_header", "header_decision")))
    log = [*builder.events, snapshot_event(builder, data)]
    seeded = ask("seed", events=log)
    folded = ask("fold_header", events=log)
    decided = ask("header_decision", events=log, header=assembled, instance=facts)
    assert code(seeded) == code(folded) == code(decided), (seeded, folded, decided)


def stored_variants(text: str) -> st.SearchStrategy[str]:
    """The stored text, whole, cut anywhere, or with a damaged line after it."""
    return st.one_of(
        st.just(text),
        st.integers(0, len(text)).map(lambda cut: text[:cut]),
        st.sampled_from(["{", "not json", '{"type": "turn/start"}', "\n"]).map(lambda tail: text + tail + "\n"),
    )


@given(builder=sessions(max_actions=25), data=st.data())
@property_settings(0.5)
def test_inv_jsonl_10_read_and_load_keep_the_same_events(builder: SessionBuilder, data: st.DataObject) -> None:
    state = seed_session(builder.events)
    assert not isinstance(state, Violation)
    text = data.draw(stored_variants(save_session(_header_line(), state)), label="stored")
    read, loaded = read_log(text), load_session(text)
    if isinstance(read, Violation) or isinstance(loaded, Violation):
        assert isinstance(read, Violation) and isinstance(loaded, Violation) and read.code == loaded.code, (read, loaded)
        return
    assert json_equal(read.header, loaded.header)
    kept = len(read.state.events)
    assert loaded.state.events[:kept] == read.state.events
    assert loaded.state.events[kept:] == loaded.closers


@given(builder=sessions(max_actions=25), packed=st.booleans())
@property_settings(0.5)
def test_inv_jsonl_8_save_then_load_is_the_identity(builder: SessionBuilder, packed: bool) -> None:
    state = seed_session(builder.events)
    assert not isinstance(state, Violation)
    loaded = load_session(save_session(_header_line(), state, packed=packed))
    assert not isinstance(loaded, Violation), loaded
    assert json_equal(loaded.header, _header_line())
    assert loaded.state.events[: len(state.events)] == state.events
    # Only a crash-orphaned turn grows: load closes it with the repair events, and nothing else changes.
    if not loaded.closers:
        assert loaded.state.events == state.events
        assert loaded.state.surface == state.surface
        assert loaded.state.header == state.header


@given(case=v0_logs(max_actions=20))
@property_settings(0.5)
def test_inv_legacy_6_upgrade_then_read_of_the_saved_text_agrees(case: V0Case) -> None:
    upgraded = upgrade_v0(case.v0)
    assert isinstance(upgraded, StoredLog), upgraded
    direct = read_log(_stored(case.v0))
    via_v1 = read_log(_stored(upgraded))
    assert not isinstance(direct, Violation), direct
    assert not isinstance(via_v1, Violation), via_v1
    assert json_equal(direct.header, via_v1.header)
    assert direct.state.events == via_v1.state.events


def _header_line() -> JsonObject:
    line = as_object(freeze(HEADER_LINE))
    assert line is not None
    return line


def _stored(log: StoredLog) -> str:
    return "".join(encode_line(thaw(value)) + "\n" for value in (log.header, *log.events))
