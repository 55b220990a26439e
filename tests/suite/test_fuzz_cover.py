"""The cover sweep of the ``fuzz`` group: payloads built to hold every part of every type's shape, and
every keyword and alternative of them sent in turn over a run."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from test_fuzz import FUZZ_ONLY

from sessionlog_spec.model.json_value import MAX_SAFE_INTEGER, as_object, freeze, thaw
from sessionlog_spec.model.legacy import RETRY_CHAIN, _Conversion
from sessionlog_spec.model.payloads import EVENT_PAYLOADS
from sessionlog_spec.model.shapes import Context, Record, shape_problem, unwrap
from sessionlog_spec.model.violation import Code, Violation
from sessionlog_spec.protocol.model_driver import ModelDriver
from sessionlog_spec.suite.agent.payload_values import arms_taken, member_names, union_arms
from sessionlog_spec.suite.fuzz.cover import COVER_SEQ, CoverEdit, CoverSweep, _change, covering_payloads, covers
from sessionlog_spec.suite.fuzz.legacy_v0 import V0_HEADER, retry_chains
from sessionlog_spec.suite.fuzz.perturb import literal_respellings
from sessionlog_spec.suite.fuzz.schema_faults import keyword_sites
from sessionlog_spec.suite.ports.inprocess import InProcessPort
from sessionlog_spec.suite.run import ERROR, FAILED, run

CONTEXT = Context(event_seq=COVER_SEQ)


def _names_in(value: object) -> set[str]:
    """Every member name anywhere in ``value``."""
    names: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            names.update(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return names


def _caught(status: str, detail: str) -> bool:
    """Whether a run failed the port: a disagreement reported, or one Hypothesis could not replay (the
    cover sweep goes on where the last example stopped, so a replay sends other edits)."""
    return status == FAILED or (status == ERROR and "FlakyFailure" in detail)


def test_inv_pay_2_every_covering_payload_is_valid_by_the_model() -> None:
    for cover in covers(COVER_SEQ):
        assert shape_problem(EVENT_PAYLOADS[cover.event_type], cover.payload, "$", CONTEXT) is None, cover


def test_inv_pay_3_the_cover_takes_every_arm_of_every_union() -> None:
    for event_type, shape in sorted(EVENT_PAYLOADS.items()):
        taken = {
            (id(union), repr(key))
            for cover in covering_payloads(event_type, CONTEXT)
            for union, key in arms_taken(shape, cover.payload)
        }
        for union, key in union_arms(shape):
            assert (id(union), repr(key)) in taken, f"{event_type}: no cover takes {union.discriminant}={key!r}"


def test_inv_pay_1_the_cover_holds_every_declared_member() -> None:
    for event_type, shape in sorted(EVENT_PAYLOADS.items()):
        held = set().union(*(_names_in(cover.payload) for cover in covering_payloads(event_type, CONTEXT)))
        missing = set(member_names(shape)) - held
        assert not missing, f"{event_type}: no covering payload holds {sorted(missing)}"


def test_inv_pay_1_the_cover_leaves_optional_members_out_too() -> None:
    # A bare payload per type: a port that requires an optional member is asked without it.
    for event_type in sorted(EVENT_PAYLOADS):
        found = covering_payloads(event_type, CONTEXT)
        assert found[0].what == "bare", event_type
        top = unwrap(EVENT_PAYLOADS[event_type])
        if isinstance(top, Record) and top.optional and not top.min_members:
            assert isinstance(found[0].payload, dict)
            assert not set(top.optional) & set(found[0].payload), event_type


def test_a_round_of_the_cover_sweep_sends_every_keyword_site_once() -> None:
    sweep = CoverSweep()
    total = sweep.round_size()
    taken: list[CoverEdit] = []
    while len(taken) < total:
        taken += sweep.take(min(97, total - len(taken)))
    assert len(taken) == total
    changes = {(e.cover.event_type, e.name, _change(e.cover.payload, e.payload)) for e in taken}
    assert len(changes) == total  # no change sent twice in a round
    for cover in sweep.order:
        for site in keyword_sites(cover.event_type, cover.payload):
            if site.payload != cover.payload:
                # The same change made on another cover of the type first was sent for that one.
                change = (cover.event_type, f"payload data.{site.key}", _change(cover.payload, site.payload))
                assert change in changes, (cover.event_type, site.key, site.detail)
    # Every bound of every cover comes before any member dropped, any alternative, any wrong JSON type.
    bounds = [i for i, e in enumerate(taken) if e.name.split(" ")[-1] in ("minimum", "maximum", "minLength", "const", "enum")]
    others = [
        i
        for i, e in enumerate(taken)
        if e.name.startswith(("alternative", "lossless")) or e.name.endswith((" type", " required"))
    ]
    assert max(bounds) < min(others)
    # The next round starts over where this one started.
    assert [e.payload for e in sweep.take(5)] == [e.payload for e in taken[:5]]


def _at_a_maximum(event_type: str, data: object) -> bool:
    """Whether some value three or more members deep sits at a ``maximum`` of its schema that is a rule
    of the domain (an HTTP status, a format version), not the safe-integer bound every count has."""
    try:
        sites = keyword_sites(event_type, data)
    except ValueError:  # nested past what the schema validator walks: no bound to look at
        return False
    return any(
        site.keyword == "maximum"
        and len(site.location) >= 3
        and site.payload == data
        and site.detail == f"maximum {site.detail.split()[1]}"
        and int(site.detail.split()[1]) < MAX_SAFE_INTEGER
        for site in sites
    )


class NestedMaximaExclusive(ModelDriver):
    """``append`` reads an inclusive ``maximum`` as exclusive on members three or more levels down (a
    domain bound few payloads reach), refusing a payload there with ``PAYLOAD_INVALID``."""

    def op_append(self, request: dict[str, Any]) -> Any:
        event = request.get("event")
        if isinstance(event, dict) and event.get("type") in EVENT_PAYLOADS and _at_a_maximum(event["type"], event.get("data")):
            return Violation(Code.PAYLOAD_INVALID, "a value at its maximum")
        return super().op_append(request)


def test_the_fuzz_group_finds_a_bound_on_a_rarely_present_member() -> None:
    result = run(InProcessPort(NestedMaximaExclusive()), dataclasses.replace(FUZZ_ONLY, max_examples=30))
    (fuzz,) = result.groups
    assert _caught(fuzz.status, fuzz.detail), f"{fuzz.status} {fuzz.detail}"


class SeedConvertsV0Spellings(ModelDriver):
    """``seed`` gives an event of a v1 type the v1 rules refuse a second chance through the v0 edge's
    normalisation, so a v0 spelling of its members (an end reason, a turn's trigger, a pre-identity
    message) is converted on a v1 path instead of refused (INV-LEGACY-1: only the edge converts)."""

    def op_seed(self, request: dict[str, Any]) -> Any:
        answer = super().op_seed(request)
        events = request.get("events")
        refused_at = re.search(r"index (\d+)", answer.message) if isinstance(answer, Violation) else None
        if refused_at is None or not isinstance(events, list) or int(refused_at[1]) >= len(events):
            return answer
        at = int(refused_at[1])
        header = as_object(freeze(V0_HEADER))
        assert header is not None
        converted = _Conversion(header, str(V0_HEADER["id"])).event(events[at], at)
        if isinstance(converted, Violation) or converted.get("type") != events[at].get("type"):
            return answer  # a renamed type is another rule (a v0 name on a v1 path)
        return super().op_seed({**request, "events": [*events[:at], thaw(converted), *events[at + 1 :]]})


def test_the_fuzz_group_finds_v0_spellings_converted_on_a_v1_path() -> None:
    result = run(InProcessPort(SeedConvertsV0Spellings()), dataclasses.replace(FUZZ_ONLY, max_examples=30))
    (fuzz,) = result.groups
    assert _caught(fuzz.status, fuzz.detail), f"{fuzz.status} {fuzz.detail}"


def test_inv_jsonl_4_every_integer_literal_of_a_line_is_respelled_every_way() -> None:
    line = '{"type":"x/note","seq":3,"time":1700000000000,"data":{"counts":[0,12],"depth":-5}}'
    respelled = dict(literal_respellings(line))
    assert len(respelled) == 5 * 4  # five literals, four spellings each (none the literal itself)
    for name, edited in respelled.items():
        if name.endswith(("fraction", "exponent")):
            assert json.loads(edited) == json.loads(line)  # one JSON number, another spelling
        elif name.endswith("negative zero"):
            assert "-0," in edited or "-0]" in edited or "-0}" in edited
    assert {name.split()[1] for name in respelled} == {"0", "1", "2", "3", "4"}


class ReaderTakesNegativeZeroForZero(ModelDriver):
    """``load`` and ``read`` take the literal ``-0`` for the integer ``0`` wherever it stands (a parser
    that reads integer literals itself), where ``JSON.parse`` reads negative zero (INV-JSONL-4)."""

    def _zeroed(self, request: dict[str, Any]) -> dict[str, Any]:
        return {**request, "jsonl": re.sub(r"(?<=[:\[,])-0(?=[,}\]])", "0", str(request.get("jsonl")))}

    def op_load(self, request: dict[str, Any]) -> Any:
        return super().op_load(self._zeroed(request))

    def op_read(self, request: dict[str, Any]) -> Any:
        return super().op_read(self._zeroed(request))


def test_the_fuzz_group_finds_a_reader_that_respells_a_literal() -> None:
    result = run(InProcessPort(ReaderTakesNegativeZeroForZero()), dataclasses.replace(FUZZ_ONLY, max_examples=30))
    (fuzz,) = result.groups
    assert _caught(fuzz.status, fuzz.detail), f"{fuzz.status} {fuzz.detail}"


class AppendMintsEmptyIds(ModelDriver):
    """``append`` takes an empty id for one not yet given and mints it (``callId: ""`` becomes a fresh
    id), where the model judges the empty string it was given (a rule of the event in its place)."""

    def op_append(self, request: dict[str, Any]) -> Any:
        event = request.get("event")
        data = event.get("data") if isinstance(event, dict) else None
        if isinstance(event, dict) and isinstance(data, dict) and any(k.endswith("Id") and v == "" for k, v in data.items()):
            minted = {k: ("minted-1" if k.endswith("Id") and v == "" else v) for k, v in data.items()}
            return super().op_append({**request, "event": {**event, "data": minted}})
        return super().op_append(request)


def test_the_fuzz_group_asks_a_rare_value_where_the_event_stands() -> None:
    result = run(InProcessPort(AppendMintsEmptyIds()), dataclasses.replace(FUZZ_ONLY, max_examples=30))
    (fuzz,) = result.groups
    assert _caught(fuzz.status, fuzz.detail), f"{fuzz.status} {fuzz.detail}"


class SeedLengthCountsRows(ModelDriver):
    """``load`` and ``read`` compare a fork's ``seedLength`` with the rows of its text, not the events
    they stand for: a seed ending in a packed row is refused as claiming more than it holds (INV-JSONL-1)."""

    def _checked(self, request: dict[str, Any], op: Any) -> Any:
        lines = [line for line in str(request.get("jsonl")).split("\n") if line.strip()]
        try:
            header = json.loads(lines[0]) if lines else None
        except ValueError:
            header = None
        inherited = header.get("seedLength") if isinstance(header, dict) else None
        if isinstance(inherited, int) and inherited > len(lines) - 1:
            return Violation(Code.JSONL_HEADER_INVALID, "line 1: seedLength exceeds the rows read")
        return op(request)

    def op_load(self, request: dict[str, Any]) -> Any:
        return self._checked(request, super().op_load)

    def op_read(self, request: dict[str, Any]) -> Any:
        return self._checked(request, super().op_read)


def test_the_fuzz_group_puts_a_fork_s_seed_length_at_the_bounds_of_its_rows() -> None:
    result = run(InProcessPort(SeedLengthCountsRows()), dataclasses.replace(FUZZ_ONLY, max_examples=15))
    (fuzz,) = result.groups
    assert _caught(fuzz.status, fuzz.detail), f"{fuzz.status} {fuzz.detail}"


def test_inv_legacy_5_the_v0_retry_chains_differ_by_each_key_member_alone() -> None:
    keys = [tuple(e["data"][k] for k in RETRY_CHAIN) for e in retry_chains() if e["type"] == "llm/retry"]
    for place, member in enumerate(RETRY_CHAIN):
        if member == "provider":
            continue  # one provider per session: a request header changes it only between steps
        assert any(
            a[place] != b[place] and all(a[i] == b[i] for i in range(len(RETRY_CHAIN)) if i != place) for a in keys for b in keys
        ), member
