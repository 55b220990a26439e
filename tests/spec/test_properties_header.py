"""Property tests over request headers: canonical form, equality, and the writer decision rule.

The last property simulates loop instances writing a real log: before every request the writer
asks :func:`decide_request_header` whether a snapshot is due, appends what it says, and the header
reconstructed from the log must then be the header the request was assembled with.
"""

from __future__ import annotations

import copy
from typing import Any

import strategies as S
from hypothesis import event, given
from hypothesis import strategies as st

from sessionlog_spec.contracts import header as header_c
from sessionlog_spec.contracts import log as log_c
from sessionlog_spec.model.header import HeaderDecision, InstanceFacts, Reason, header_event_data
from sessionlog_spec.model.json_value import JsonObject, as_object, freeze, json_equal, thaw
from sessionlog_spec.model.violation import Code, Violation
from sessionlog_spec.suite.agent.builder import SessionBuilder

PROPERTIES = S.property_settings()
EMPTY_SPELLINGS: dict[str, Any] = {"system": "", "tools": [], "adapterDefaults": {}}


def _frozen(value: dict[str, Any]) -> JsonObject:
    frozen = as_object(freeze(value))
    assert frozen is not None
    return frozen


@st.composite
def same_header(draw: st.DrawFn, header: JsonObject) -> JsonObject:
    """Another spelling of ``header``: members reordered, empty members added or dropped."""
    plain = thaw(header)
    assert isinstance(plain, dict)
    for key, empty in EMPTY_SPELLINGS.items():
        if key not in plain and draw(st.booleans()):
            plain[key] = copy.deepcopy(empty)
        elif key in plain and plain[key] == empty and draw(st.booleans()):
            del plain[key]
    config = plain["config"]
    plain["config"] = {k: config[k] for k in draw(st.permutations(sorted(config)))}
    return _frozen({k: plain[k] for k in draw(st.permutations(sorted(plain)))})


@st.composite
def different_header(draw: st.DrawFn, header: JsonObject) -> JsonObject:
    """``header`` with one meaningful change (not merely another spelling)."""
    plain = thaw(header)
    assert isinstance(plain, dict)
    change = draw(st.sampled_from(["model", "system", "tools", "effort"]))
    if change == "model":
        plain["config"]["model"] += "-next"
    elif change == "system":
        plain["system"] = (plain.get("system") or "") + " Be terse."
    elif change == "tools":
        tools = [t for t in plain.get("tools", []) if t["name"] != "patch"]
        plain["tools"] = [*tools, {"name": "patch"}] if len(tools) == len(plain.get("tools", [])) else tools
        if not plain["tools"]:
            plain["tools"] = [{"name": "patch", "description": "new"}]
    else:
        plain["config"]["reasoningEffort"] = plain["config"].get("reasoningEffort", "") + "!"
    return _frozen(plain)


@PROPERTIES
@given(S.frozen_headers())
def test_inv_hdr_6_canonicalisation_is_idempotent_and_drops_only_empty_members(header: JsonObject) -> None:
    canonical = header_c.canonical_header(header)
    assert json_equal(header_c.canonical_header(canonical), canonical)
    dropped = set(header) - set(canonical)
    assert dropped == {k for k, empty in EMPTY_SPELLINGS.items() if k in header and json_equal(header[k], freeze(empty))}
    assert all(json_equal(canonical[k], header[k]) for k in canonical)
    # The canonical form is what a snapshot must store (INV-HDR-5); the original only if it was canonical.
    assert header_c.header_event_problem(_frozen({"header": thaw(canonical), "reason": "change"})) is None
    problem = header_c.header_event_problem(_frozen({"header": thaw(header), "reason": "change"}))
    if dropped:
        assert isinstance(problem, Violation) and problem.code == Code.HEADER_NOT_CANONICAL
    else:
        assert problem is None
    event("non-canonical" if dropped else "canonical")


@st.composite
def header_chains(draw: st.DrawFn) -> tuple[list[JsonObject], list[bool]]:
    """Headers ``a, b, c`` where each is another spelling of the previous one, or a real change."""
    chain = [draw(S.frozen_headers())]
    same: list[bool] = []
    for _ in range(2):
        keep = draw(st.booleans())
        chain.append(draw(same_header(chain[-1]) if keep else different_header(chain[-1])))
        same.append(keep)
    return chain, same


@PROPERTIES
@given(header_chains())
def test_inv_hdr_7_header_equality_is_an_equivalence_on_spellings(chain: tuple[list[JsonObject], list[bool]]) -> None:
    (a, b, c), (ab_same, bc_same) = chain
    eq = header_c.header_equals
    for x in (a, b, c):
        assert eq(x, x)
        assert eq(x, header_c.canonical_header(x))
    for x, y in ((a, b), (b, c), (a, c)):
        assert eq(x, y) == eq(y, x)
    assert eq(a, b) == ab_same
    assert eq(b, c) == bc_same
    if eq(a, b) and eq(b, c):
        assert eq(a, c)
    if eq(a, b) != eq(b, c):
        assert not eq(a, c)
    event(f"a~b {ab_same}, b~c {bc_same}")


FACTS = st.builds(InstanceFacts, st.booleans(), st.booleans(), st.booleans())


@st.composite
def decision_inputs(draw: st.DrawFn) -> tuple[JsonObject | None, JsonObject, InstanceFacts]:
    latest = draw(st.none() | S.frozen_headers(canonical=True))
    if latest is None:
        assembled = draw(S.frozen_headers())
    else:
        assembled = draw(st.one_of(same_header(latest), different_header(latest), S.frozen_headers()))
    return latest, assembled, draw(FACTS)


@PROPERTIES
@given(decision_inputs())
def test_inv_hdr_9_inv_hdr_10_inv_hdr_11_decision_rule(inputs: tuple[JsonObject | None, JsonObject, InstanceFacts]) -> None:
    latest, assembled, facts = inputs
    decision = header_c.decide_request_header(latest, assembled, facts)
    begins = facts.begins_series or facts.replaced_since_last_request
    unchanged = latest is not None and header_c.header_equals(latest, assembled)
    if facts.first_request:
        # INV-HDR-9: a loop instance always anchors its first request, changed or not.
        expected: HeaderDecision | None = HeaderDecision(Reason.INITIAL if latest is None else Reason.RESUME)
    elif not unchanged:
        # INV-HDR-10
        expected = HeaderDecision(Reason.CHANGE, starts_series=begins)
    else:
        # INV-HDR-11
        expected = HeaderDecision(Reason.SERIES) if begins else None
    assert decision == expected
    event(f"{'first' if facts.first_request else 'later'}: {None if decision is None else decision.reason.value}")


@st.composite
def loop_runs(draw: st.DrawFn) -> list[tuple[str, Any]]:
    """A script of loop instances: per request, the header it assembles, whether it declares a
    series, and whether it compacts first."""
    pool = draw(st.lists(S.frozen_headers(), min_size=1, max_size=3))
    script: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(1, 3))):  # loop instances
        script.append(("instance", None))
        for _ in range(draw(st.integers(1, 3))):  # turns
            script.append(("turn", None))
            for _ in range(draw(st.integers(1, 3))):  # steps, one request each
                base = draw(st.sampled_from(pool))
                assembled = draw(st.one_of(st.just(base), same_header(base)))
                declares, compacts, calls = draw(st.integers(0, 3)) == 0, draw(st.integers(0, 3)) == 0, draw(st.booleans())
                script.append(("request", (assembled, declares, compacts, calls)))
            script.append(("end turn", None))
    return script


@PROPERTIES
@given(loop_runs(), st.data())
def test_inv_hdr_12_simulated_writer_always_reconstructs_the_assembled_header(
    script: list[tuple[str, Any]], data: st.DataObject
) -> None:
    builder = SessionBuilder()
    first = True
    generation_at_last_request = 0
    written = 0

    def commit(raw: dict[str, Any]) -> None:
        assert not isinstance(log_c.append_event(builder.state, raw), Violation)
        builder.commit(raw)

    for kind, payload in script:
        if kind == "instance":
            first = True
            continue
        if kind == "turn":
            commit(builder.turn_start(commit=False))
            commit(builder.user_message("Go on.", commit=False))
            continue
        if kind == "end turn":
            commit(builder.turn_end(commit=False))
            continue
        assembled, declares_series, compacts, calls_tools = payload
        commit(builder.step_start(commit=False))
        ranges = builder.legal_ranges()
        if compacts and ranges:
            start, end = data.draw(st.sampled_from(ranges), label="compaction range")
            commit(builder.compaction(start, end, commit=False))
        facts = InstanceFacts(
            first_request=first,
            begins_series=declares_series,
            replaced_since_last_request=builder.state.surface.replace_generation != generation_at_last_request,
        )
        latest = header_c.fold_request_header(builder.state.events)
        decision = header_c.decide_request_header(latest, assembled, facts)
        if decision is not None:
            commit(
                builder.request_header(
                    thaw(header_event_data(decision, assembled))["header"],  # type: ignore[index]
                    decision.reason.value,
                    decision.starts_series,
                    commit=False,
                )
            )
            written += 1
        # The request goes out with `assembled`; the log must say exactly that.
        reconstructed = header_c.fold_request_header(builder.state.events)
        assert reconstructed is not None and header_c.header_equals(reconstructed, assembled)
        assert builder.state.header is not None and json_equal(builder.state.header, reconstructed)
        # Nothing is written for an ordinary later request with an unchanged header.
        if (
            not first
            and latest is not None
            and header_c.header_equals(latest, assembled)
            and not (facts.begins_series or facts.replaced_since_last_request)
        ):
            assert decision is None
        first = False
        generation_at_last_request = builder.state.surface.replace_generation
        calls = ["c1", "c2"] if calls_tools else []
        commit(builder.assistant_message("Working.", calls, commit=False))
        for call in calls:
            commit(builder.tool_call(call, commit=False))
            commit(builder.tool_result(call, commit=False))
        commit(builder.step_end(commit=False))
    requests = sum(1 for kind, _ in script if kind == "request")
    event(f"{written} snapshot(s) for {requests} request(s)")
