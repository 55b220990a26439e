"""INV-HDR: request-header snapshots, canonical form, equality, reconstruction and the writer rule."""

from __future__ import annotations

from typing import Any

import pytest
from model_cases import PINNED, code_of, ev, header_data, refusal, session, title_data

from sessionlog_spec.contracts.header import (
    canonical_header,
    decide_request_header,
    fold_request_header,
    header_equals,
    header_event_problem,
)
from sessionlog_spec.contracts.log import decode_event
from sessionlog_spec.model.event import Event
from sessionlog_spec.model.header import HeaderDecision, InstanceFacts, Reason, header_event_data
from sessionlog_spec.model.json_value import JsonObject, freeze, json_equal, thaw
from sessionlog_spec.model.session import SessionState
from sessionlog_spec.model.violation import Code

TOOL_A = {"name": "read_file", "description": "Read a file.", "parameters": {"type": "object"}}
TOOL_B = {"name": "write_file", "description": "Write a file.", "parameters": {"type": "object"}}


def frozen(value: dict[str, Any]) -> JsonObject:
    """A frozen JSON object, as the model stores it."""
    result = freeze(value)
    assert isinstance(result, dict) is False
    return result  # type: ignore[return-value]


def in_turn() -> SessionState:
    """Turn 1 open, no header yet."""
    return session([ev("turn/start", 0, {"turn": 1})])


def header_event(seq: int, data: Any) -> dict[str, Any]:
    """A ``request/header`` event."""
    return ev("request/header", seq, data)


def problem(data: Any) -> Code | None:
    """The code ``header_event_problem`` reports for a payload, and the same through append."""
    direct = code_of(header_event_problem(freeze(data)))
    assert refusal(in_turn(), header_event(1, data)) is direct
    return direct


def facts(first: bool = False, begins: bool = False, replaced: bool = False) -> InstanceFacts:
    """Loop-instance facts."""
    return InstanceFacts(first_request=first, begins_series=begins, replaced_since_last_request=replaced)


H1 = frozen({"config": dict(PINNED), "system": "You are terse.", "tools": [TOOL_A]})
H2 = frozen({"config": dict(PINNED), "system": "You are verbose.", "tools": [TOOL_A]})


# -- INV-HDR-1: snapshot shape ----------------------------------------------------------------------------


def test_inv_hdr_1_full_snapshot_is_accepted() -> None:
    """Config, adapterDefaults, system and tools, with ``startsSeries: true``."""
    data = header_data(
        "change", system="Be terse.", tools=[TOOL_A, TOOL_B], adapterDefaults={"maxTokens": True}
    ) | {"startsSeries": True}
    data["header"]["config"]["maxTokens"] = 4096
    data["header"]["config"]["reasoningEffort"] = "high"
    assert problem(data) is None


@pytest.mark.parametrize(
    "data",
    [
        None,
        [],
        {"header": {"config": PINNED}},
        {"reason": "initial"},
        {"header": {"config": PINNED}, "reason": "initial", "generation": 1},
        {"header": {"config": PINNED}, "reason": "change", "startsSeries": False},
        {"header": None, "reason": "initial"},
        {"header": {"config": PINNED, "messagePrefix": []}, "reason": "initial"},
        {"header": {"config": PINNED, "system": ["Be", "terse"]}, "reason": "initial"},
        {"header": {"config": PINNED, "tools": {"read_file": {}}}, "reason": "initial"},
        {"header": {"config": PINNED, "tools": [{"description": "no name"}]}, "reason": "initial"},
        {"header": {"config": PINNED, "tools": [{"name": ""}]}, "reason": "initial"},
        {"header": {"config": PINNED, "tools": [{"name": "read_file", "description": "reads"}]}, "reason": "initial"},
        {"header": {"config": {**PINNED, "reasoningEffort": ""}}, "reason": "initial"},
        {"header": {"config": {**PINNED, "maxTokens": 0}}, "reason": "initial"},
        {"header": {"config": {**PINNED, "maxTokens": "4096"}}, "reason": "initial"},
    ],
    ids=[
        "null", "array", "no-reason", "no-header", "extra-member", "starts-series-false", "header-null",
        "message-prefix", "system-array", "tools-object", "tool-without-name", "tool-empty-name",
        "tool-without-parameters", "empty-reasoning-effort", "zero-max-tokens", "string-max-tokens",
    ],
)
def test_inv_hdr_1_malformed_snapshot_is_refused(data: Any) -> None:
    """Anything but ``{header, reason, startsSeries?: true}`` with a well-formed header is refused."""
    assert problem(data) is Code.HEADER_INVALID


@pytest.mark.parametrize(
    "tool",
    [
        {"name": "read_file", "description": ""},
        {**TOOL_A, "parameters": "object"},
        {"name": "read_file", "parameters": {}},
        {**TOOL_A, "strict": True},
    ],
    ids=["without-parameters", "parameters-string", "without-description", "extra-member"],
)
def test_inv_hdr_1_tool_schema_has_exactly_name_description_and_parameters(tool: dict[str, Any]) -> None:
    """Each offered tool is ``{name, description, parameters}`` with an object for the parameters
    (the payload table's part of the snapshot shape, reported with the header's code)."""
    data = header_data(tools=[tool])
    assert refusal(in_turn(), header_event(1, data)) is Code.HEADER_INVALID
    assert refusal(in_turn(), header_event(1, header_data(tools=[TOOL_A]))) is None


# -- INV-HDR-2: pinned ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "config",
    [
        None, {}, {"provider": "deepseek"}, {"model": "deepseek-chat"}, {"provider": "", "model": "m"},
        {"provider": "p", "model": 3},
    ],
    ids=repr,
)
def test_inv_hdr_2_unpinned_snapshot_is_refused(config: Any) -> None:
    """``config`` must name a non-empty provider and model."""
    assert problem({"header": {"config": config}, "reason": "initial"}) is Code.HEADER_NOT_PINNED


def test_inv_hdr_2_pinned_minimal_snapshot_is_accepted() -> None:
    """Provider and model are enough."""
    assert problem(header_data()) is None


# -- INV-HDR-3: adapterDefaults ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "config, defaults",
    [
        ({"maxTokens": 4096}, {"maxTokens": True}),
        ({"reasoningEffort": "high"}, {"reasoningEffort": True}),
        ({"maxTokens": 4096, "reasoningEffort": "low"}, {"maxTokens": True, "reasoningEffort": True}),
    ],
)
def test_inv_hdr_3_marker_for_a_present_field_is_accepted(config: dict[str, Any], defaults: dict[str, Any]) -> None:
    """Each marker is ``true`` and names a config field that is there."""
    data = header_data(adapterDefaults=defaults)
    data["header"]["config"].update(config)
    assert problem(data) is None


@pytest.mark.parametrize(
    "config, defaults",
    [
        ({}, {"maxTokens": True}),
        ({"maxTokens": 4096}, {"reasoningEffort": True}),
        ({"temperature": 0.2}, {"temperature": True}),
        ({"maxTokens": 4096}, {"maxTokens": False}),
        ({"maxTokens": 4096}, {"maxTokens": "yes"}),
        ({"maxTokens": 4096}, ["maxTokens"]),
    ],
    ids=repr,
)
def test_inv_hdr_3_other_markers_are_refused(config: dict[str, Any], defaults: Any) -> None:
    """A marker for a missing field, an unknown field, or a value other than true is refused."""
    data = header_data(adapterDefaults=defaults)
    data["header"]["config"].update(config)
    assert problem(data) is Code.HEADER_ADAPTER_DEFAULTS_INVALID


# -- INV-HDR-4: reasons -------------------------------------------------------------------------------------


@pytest.mark.parametrize("reason", ["initial", "resume", "change", "series"])
def test_inv_hdr_4_current_reasons_are_accepted(reason: str) -> None:
    """The four reasons of the writer rule."""
    assert problem(header_data(reason)) is None


@pytest.mark.parametrize("reason", ["startup", "compact", "Initial", "", None, 1])
def test_inv_hdr_4_other_reasons_are_refused(reason: Any) -> None:
    """Anything else is refused (``fallback`` has its own legacy code, INV-LEGACY-2)."""
    assert problem(header_data(reason)) is Code.HEADER_REASON_INVALID


def test_inv_hdr_4_reason_is_checked_before_the_header() -> None:
    """An unknown reason on an unpinned header is reported as the reason."""
    assert problem({"header": {"config": {}}, "reason": "startup"}) is Code.HEADER_REASON_INVALID


# -- INV-HDR-5: canonical snapshots ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "member", [{"system": ""}, {"tools": []}, {"adapterDefaults": {}}], ids=["empty-system", "empty-tools", "empty-defaults"]
)
def test_inv_hdr_5_non_canonical_snapshot_is_refused(member: dict[str, Any]) -> None:
    """An empty system, an empty tool list or a marker-free adapterDefaults must be left out."""
    assert problem(header_data(**member)) is Code.HEADER_NOT_CANONICAL


def test_inv_hdr_5_shape_is_checked_before_canonical_form() -> None:
    """An unpinned header with an empty system is reported as unpinned."""
    assert problem({"header": {"config": {"provider": "p"}, "system": ""}, "reason": "initial"}) is Code.HEADER_NOT_PINNED


# -- INV-HDR-6: canonicalisation ---------------------------------------------------------------------------


def test_inv_hdr_6_canonical_form_drops_exactly_the_empty_members() -> None:
    """Empty system, empty tools and marker-free adapterDefaults go; everything else stays."""
    header = frozen({"config": dict(PINNED), "system": "", "tools": [], "adapterDefaults": {}})
    assert thaw(canonical_header(header)) == {"config": PINNED}


def test_inv_hdr_6_canonical_form_keeps_non_empty_members() -> None:
    """A header that is already canonical comes back equal, members and values kept."""
    header = frozen(
        {"config": {**PINNED, "maxTokens": 8}, "system": "s", "tools": [TOOL_A], "adapterDefaults": {"maxTokens": True}}
    )
    assert thaw(canonical_header(header)) == thaw(header)


def test_inv_hdr_6_canonical_form_is_idempotent_and_does_not_mutate() -> None:
    """Canonicalising twice changes nothing, and the input is left as it was."""
    header = frozen({"config": dict(PINNED), "system": "", "tools": [TOOL_A]})
    once = canonical_header(header)
    assert json_equal(canonical_header(once), once)
    assert thaw(header) == {"config": PINNED, "system": "", "tools": [TOOL_A]}


# -- INV-HDR-7: equality ------------------------------------------------------------------------------------


def test_inv_hdr_7_a_header_equals_its_canonical_form() -> None:
    """An empty system or tool list is the same as none."""
    bare = frozen({"config": dict(PINNED)})
    padded = frozen({"config": dict(PINNED), "system": "", "tools": [], "adapterDefaults": {}})
    assert header_equals(bare, padded) and header_equals(padded, bare)


def test_inv_hdr_7_key_order_does_not_matter() -> None:
    """Headers are compared as JSON values."""
    a = frozen({"config": {"provider": "p", "model": "m"}, "system": "s"})
    b = frozen({"system": "s", "config": {"model": "m", "provider": "p"}})
    assert header_equals(a, b)


@pytest.mark.parametrize(
    "other",
    [
        {"config": dict(PINNED), "system": "You are verbose.", "tools": [TOOL_A]},
        {"config": dict(PINNED), "system": "You are terse.", "tools": [TOOL_A, TOOL_B]},
        {"config": dict(PINNED, model="deepseek-reasoner"), "system": "You are terse.", "tools": [TOOL_A]},
        {"config": dict(PINNED), "system": "You are terse."},
    ],
    ids=["system", "tools", "model", "no-tools"],
)
def test_inv_hdr_7_any_difference_makes_headers_unequal(other: dict[str, Any]) -> None:
    """A different system, tool list or config is a different header, both ways round."""
    assert not header_equals(H1, frozen(other))
    assert not header_equals(frozen(other), H1)


def test_inv_hdr_7_tool_order_matters() -> None:
    """Tools are compared in order."""
    a = frozen({"config": dict(PINNED), "tools": [TOOL_A, TOOL_B]})
    b = frozen({"config": dict(PINNED), "tools": [TOOL_B, TOOL_A]})
    assert not header_equals(a, b)
    assert header_equals(a, a)


# -- INV-HDR-8: reconstruction -----------------------------------------------------------------------------


def _events(raws: list[dict[str, Any]]) -> tuple[Event, ...]:
    events = tuple(decode_event(r) for r in raws)
    assert all(isinstance(e, Event) for e in events)
    return events  # type: ignore[return-value]


def test_inv_hdr_8_latest_snapshot_is_the_header_in_force() -> None:
    """Two snapshots: the second is in force, in the session and in the fold."""
    raws = [
        ev("turn/start", 0, {"turn": 1}),
        header_event(1, {"header": thaw(H1), "reason": "initial"}),
        ev("session/title", 2, title_data()),
        header_event(3, {"header": thaw(H2), "reason": "change"}),
        ev("session/title", 4, title_data()),
    ]
    state = session(raws)
    assert state.header is not None and thaw(state.header) == thaw(H2)
    folded = fold_request_header(_events(raws))
    assert folded is not None and thaw(folded) == thaw(H2)


def test_inv_hdr_8_no_snapshot_means_no_header_unless_one_is_carried_in() -> None:
    """Without a snapshot the fold gives ``None``, or the header it starts from (canonicalised)."""
    raws = [ev("session/title", 0, title_data())]
    assert fold_request_header(_events(raws)) is None
    assert session(raws).header is None
    start = frozen({"config": dict(PINNED), "system": ""})
    folded = fold_request_header(_events(raws), start)
    assert folded is not None and thaw(folded) == {"config": PINNED}


def test_inv_hdr_8_snapshot_overrides_the_carried_header() -> None:
    """A snapshot in the events wins over the header the fold starts from."""
    folded = fold_request_header(_events([header_event(0, {"header": thaw(H1), "reason": "resume"})]), H2)
    assert folded is not None and thaw(folded) == thaw(H1)


# -- INV-HDR-9: the first request of an instance anchors it ----------------------------------------------------


def test_inv_hdr_9_first_request_on_empty_log_writes_initial() -> None:
    """No snapshot yet: ``initial``."""
    assert decide_request_header(None, H1, facts(first=True)) == HeaderDecision(Reason.INITIAL)


@pytest.mark.parametrize("latest", [H1, H2], ids=["unchanged", "changed"])
def test_inv_hdr_9_first_request_after_a_snapshot_writes_resume(latest: JsonObject) -> None:
    """A snapshot exists: ``resume``, even when the header is unchanged, and never flagged."""
    assert decide_request_header(latest, H1, facts(first=True, begins=True, replaced=True)) == HeaderDecision(Reason.RESUME)


# -- INV-HDR-10: a changed header writes change ---------------------------------------------------------------


def test_inv_hdr_10_changed_header_writes_change() -> None:
    """A later request with a different header writes ``change``, unflagged when no series begins."""
    assert decide_request_header(H1, H2, facts()) == HeaderDecision(Reason.CHANGE, starts_series=False)


@pytest.mark.parametrize("begins, replaced", [(True, False), (False, True), (True, True)])
def test_inv_hdr_10_changed_header_starting_a_series_is_flagged(begins: bool, replaced: bool) -> None:
    """A declared series or a replacement since the last request flags the change."""
    assert decide_request_header(H1, H2, facts(begins=begins, replaced=replaced)) == HeaderDecision(Reason.CHANGE, True)


def test_inv_hdr_10_later_request_without_any_snapshot_writes_change() -> None:
    """Not the first request, but the log has no snapshot: the header is new, so ``change``."""
    assert decide_request_header(None, H1, facts()) == HeaderDecision(Reason.CHANGE)


# -- INV-HDR-11: an unchanged header writes series or nothing -------------------------------------------------


@pytest.mark.parametrize("begins, replaced", [(True, False), (False, True)])
def test_inv_hdr_11_unchanged_header_starting_a_series_writes_series(begins: bool, replaced: bool) -> None:
    """The series start is recorded even though the header is the same."""
    assert decide_request_header(H1, H1, facts(begins=begins, replaced=replaced)) == HeaderDecision(Reason.SERIES)


def test_inv_hdr_11_unchanged_header_otherwise_writes_nothing() -> None:
    """Ordinary turns, steps and retries inherit the latest snapshot."""
    assert decide_request_header(H1, H1, facts()) is None


def test_inv_hdr_11_unchanged_modulo_canonical_form_writes_nothing() -> None:
    """An assembled header differing only by an empty system, tool list and adapterDefaults is unchanged."""
    latest = frozen({"config": dict(PINNED)})
    assembled = frozen({"config": dict(PINNED), "system": "", "tools": [], "adapterDefaults": {}})
    assert decide_request_header(latest, assembled, facts()) is None


# -- INV-HDR-12: applying the decision reconstructs the assembled header ----------------------------------------


@pytest.mark.parametrize(
    "latest, assembled, instance",
    [
        (None, H1, facts(first=True)),
        (H1, H1, facts(first=True)),
        (H1, H2, facts()),
        (H1, H1, facts()),
        (H1, H1, facts(begins=True)),
        (H1, frozen({"config": dict(PINNED), "system": ""}), facts(replaced=True)),
    ],
    ids=["initial", "resume", "change", "nothing", "series", "change-to-canonical"],
)
def test_inv_hdr_12_decision_applied_reconstructs_the_assembled_header(
    latest: JsonObject | None, assembled: JsonObject, instance: InstanceFacts
) -> None:
    """Append what the decision says (if anything); the session's header then equals the assembled one."""
    raws = [ev("turn/start", 0, {"turn": 1})]
    if latest is not None:
        raws.append(header_event(1, {"header": thaw(latest), "reason": "initial"}))
    state = session(raws)
    decision = decide_request_header(state.header, assembled, instance)
    if decision is not None:
        state = session([header_event(len(state.events), thaw(header_event_data(decision, assembled)))], state)
    assert state.header is not None and header_equals(state.header, assembled)
    assert json_equal(state.header, canonical_header(assembled))


def test_inv_hdr_12_written_snapshot_is_canonical_and_flagged() -> None:
    """The payload the rule writes is the canonical header with its reason and, for a series start, the flag."""
    assembled = frozen({"config": dict(PINNED), "system": "", "tools": [TOOL_A]})
    data = header_event_data(HeaderDecision(Reason.CHANGE, starts_series=True), assembled)
    assert thaw(data) == {"header": {"config": PINNED, "tools": [TOOL_A]}, "reason": "change", "startsSeries": True}
    assert header_event_problem(data) is None
