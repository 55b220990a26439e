"""v0 logs generated from the edge's own tables, alone and in chains, and their legacy members broken.

The released v0 inventory and its normalisations are data in :mod:`sessionlog_spec.model.legacy`:
the plain turn-end kinds (:data:`~sessionlog_spec.model.legacy.PLAIN_END_KINDS`), the members of a
legacy failure record (``FAILURE_REQUIRED``, ``FAILURE_OPTIONAL``), the ``compact/*`` names
(``COMPACT_RENAMES``), the retry chain's members (``RETRY_CHAIN``), the retired types
(``REFUSED_TYPES``) and the ``fallback`` reason.  :func:`spellings` writes a valid v1 event in every
v0 spelling those tables give it (N1 a trigger, N2 each legacy reason and failure record, N3 both
steering forms, N4 the pre-identity messages, N5 a ``messagePrefix``, N7 the old names, N8 and N9
the ids a v0 writer left out); :func:`member_faults` breaks a spelling's legacy members (each
dropped, an undeclared one added, each given another JSON type, a count at its bounds), which is
what the edge's exactness checks refuse; :func:`retired_forms` are the forms the edge refuses whole.
A whole log is spelled event by event with drawn forms (:func:`spelled_log`), so the chains the edge
keeps state for (a retry chain's id, a compaction group's id, a rewrite's message id) are written
as a v0 writer wrote them.

The model decides every verdict; these functions only decide what to ask.
"""

from __future__ import annotations

import contextlib
import copy
import random
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from sessionlog_spec.model.header import LEGACY_REASON_FALLBACK
from sessionlog_spec.model.legacy import (
    COMPACT_RENAMES,
    FAILURE_OPTIONAL,
    FAILURE_REQUIRED,
    PLAIN_END_KINDS,
    REFUSED_TYPES,
    RETRY_CHAIN,
)
from sessionlog_spec.model.payloads import EVENT_PAYLOADS
from sessionlog_spec.suite.agent.builder import RawEvent, SessionBuilder, basic_header, realistic_session, text_block
from sessionlog_spec.suite.agent.legacy_forms import pre_identity
from sessionlog_spec.suite.fuzz.alternatives import alternative_sites

OLD_NAMES: Final = {new: old for old, new in COMPACT_RENAMES.items()}
"""N7 backwards: the ``compact/*`` name of each ``compaction/*`` type."""
RETYPED: Final[Mapping[str, object]] = {"string": "1", "number": 7, "object": {}, "array": [], "boolean": True, "null": None}
"""One value of each JSON type, for a legacy member given another type."""
V0_HEADER: Final = {"type": "session", "version": 0, "id": "v0-session", "createdAt": 1_700_000_000_000, "delegationDepth": 0}

Spelling = tuple[str, RawEvent]


def _data(event: RawEvent) -> dict[str, Any]:
    data = event.get("data")
    return copy.deepcopy(data) if isinstance(data, dict) else {}


def _with(event: RawEvent, **changes: Any) -> RawEvent:
    return {**copy.deepcopy(event), **changes}


def _end_reasons() -> list[tuple[str, dict[str, Any]]]:
    """Every legacy ``turn/end`` reason N2 converts, from its tables."""
    reasons: list[tuple[str, dict[str, Any]]] = [(f"N2 {kind}", {"kind": kind}) for kind in sorted(PLAIN_END_KINDS)]
    reasons += [("N2 aborted without a cause", {"kind": "aborted"}), ("N2 disposed", {"kind": "disposed"})]
    required = {key: f"provider {key}" for key in FAILURE_REQUIRED}
    optional: dict[str, object] = {"status": 503, "providerRetryAfterMs": 2000, "requestId": "req-1"}
    assert set(optional) == set(FAILURE_OPTIONAL)
    reasons.append(("N2 failure record", {"kind": "error", "step": 1, "failure": dict(required)}))
    for key in FAILURE_OPTIONAL:
        failure = {**required, key: optional[key]}
        reasons.append((f"N2 failure record with {key}", {"kind": "error", "step": 1, "failure": failure}))
    reasons.append(("N2 failure record whole", {"kind": "error", "step": 2, "failure": {**required, **optional}}))
    reasons.append(("N2 flat error", {"kind": "error", "step": 0, "message": "failed", "code": "E_FAILED"}))
    reasons.append(("N2 flat error without code", {"kind": "error", "step": 0, "message": "failed"}))
    return reasons


def spellings(event: RawEvent) -> list[Spelling]:
    """Every v0 spelling of the valid v1 ``event`` the edge's tables give (none for a type v0 wrote as v1)."""
    type_, seq, data = event.get("type"), event.get("seq", 0), _data(event)
    found: list[Spelling] = []
    if type_ == "turn/start":
        for trigger in ({"kind": "user"}, {"kind": "schedule", "id": seq}):
            found.append((f"N1 trigger {trigger['kind']}", _with(event, data={**data, "trigger": trigger})))
    elif type_ == "turn/end":
        found += [(name, _with(event, data={**data, "reason": reason})) for name, reason in _end_reasons()]
    elif type_ == "user/message":
        if event.get("surfaceOp") == "append" and "sourceEventSeqs" not in event:
            found.append(
                ("N3 steering wrapping its message", _with(event, type="steering/message", data={"turn": 1, "message": data}))
            )
            if {"content", "source"} <= data.keys():
                bare = {"turn": 1, "content": data["content"], "source": data["source"]}
                found.append(("N3 steering with content and source", _with(event, type="steering/message", data=bare)))
        if {"content", "source"} <= data.keys():
            found.append(("N4 pre-identity user message", _with(event, data=pre_identity("user/message", data))))
        source = data.get("source")
        if isinstance(source, dict) and source.get("plugin") == "compact" and "compactionId" in source:
            unnamed = {**data, "source": {k: v for k, v in source.items() if k != "compactionId"}}
            found.append(("N9 checkpoint without its group id", _with(event, data=unnamed)))
    elif type_ in ("assistant/message", "tool/result") and isinstance(data.get("message"), dict):
        with contextlib.suppress(KeyError, IndexError, TypeError):  # a message without the blocks N4 rewrites
            found.append((f"N4 pre-identity {type_}", _with(event, data=pre_identity(str(type_), data))))
    elif type_ == "request/header" and isinstance(data.get("header"), dict):
        prefix = [{"role": "user", "content": [text_block("earlier")]}]
        found.append(("N5 messagePrefix", _with(event, data={**data, "header": {**data["header"], "messagePrefix": prefix}})))
    elif type_ == "llm/retry" and "retryId" in data and all(key in data for key in RETRY_CHAIN):
        found.append(("N8 retry without its id", _with(event, data={k: v for k, v in data.items() if k != "retryId"})))
    if isinstance(type_, str) and type_ in OLD_NAMES:
        found.append((f"N7 {OLD_NAMES[type_]}", _with(event, type=OLD_NAMES[type_])))
        if "compactionId" in data:
            unnamed = {k: v for k, v in data.items() if k != "compactionId"}
            found.append((f"N9 {type_} without its group id", _with(event, data=unnamed)))
            found.append((f"N7 N9 {OLD_NAMES[type_]} without its group id", _with(event, type=OLD_NAMES[type_], data=unnamed)))
    return found


def retired_forms(seq: int, time: int) -> list[Spelling]:
    """The forms the edge refuses whole: each retired type (plain and ignorable) and the ``fallback`` reason."""
    found: list[Spelling] = []
    for type_ in sorted(REFUSED_TYPES):
        for ignorable in (False, True):
            raw: RawEvent = {"type": type_, "seq": seq, "time": time, "data": {}}
            found.append(
                (f"retired {type_}{' ignorable' if ignorable else ''}", {**raw, "ignorable": True} if ignorable else raw)
            )
    fallback = {"header": basic_header(), "reason": LEGACY_REASON_FALLBACK}
    found.append(("retired fallback reason", {"type": "request/header", "seq": seq, "time": time, "data": fallback}))
    found.append(("outside the v0 inventory", {"type": "vendor/v0-extension", "seq": seq, "time": time, "data": {}}))
    return found


def _records(value: object, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], dict[str, Any]]]:
    """Every object of a payload (the payload itself first) with its location, two levels deep."""
    if isinstance(value, dict):
        yield path, value
        if len(path) < 2:
            for key, item in value.items():
                yield from _records(item, (*path, key))


_DROPPED: Final = object()


def _edit(event: RawEvent, path: tuple[str | int, ...], key: str, value: object) -> RawEvent:
    """``event`` with the member ``key`` of the record at ``path`` set to ``value`` (or dropped)."""
    out = copy.deepcopy(event)
    target = out["data"]
    for step in path:
        target = target[step]
    if value is _DROPPED:
        del target[key]
    else:
        target[key] = copy.deepcopy(value)
    return out


def member_faults(name: str, spelled: RawEvent) -> list[Spelling]:
    """The legacy record of ``spelled`` broken member by member: each dropped, an undeclared one added,
    each given every other JSON type, a count moved to its bounds, a string emptied."""
    found: list[Spelling] = []
    for path, record in _records(spelled.get("data")):
        where = ".".join(str(p) for p in ("data", *path))
        found.append((f"{name}: {where} undeclared member", _edit(spelled, path, "legacyExtra", 1)))
        for key, value in list(record.items()):
            values: list[tuple[str, object]] = [("dropped", _DROPPED)]
            values += [(kind, other) for kind, other in RETYPED.items() if type(other) is not type(value)]
            if isinstance(value, int) and not isinstance(value, bool):
                values += [(str(bound), bound) for bound in (-1, 0, 1, 1.5)]
            if isinstance(value, str):
                values.append(("empty", ""))
            found += [(f"{name}: {where}.{key} {label}", _edit(spelled, path, key, new)) for label, new in values]
    return found


def _names_of(value: object) -> set[str]:
    """Every member name of every object inside ``value``."""
    if isinstance(value, dict):
        return set(value).union(*(_names_of(item) for item in value.values()))
    if isinstance(value, list):
        return set().union(*(_names_of(item) for item in value))
    return set()


def member_additions(name: str, spelled: RawEvent, upgraded: RawEvent) -> list[Spelling]:
    """The legacy record of ``spelled`` with a member added that the edge writes itself: each name of
    the v1 event it becomes (``kind`` in a provenance, ``id`` in a trigger, ``surfaceOp`` beside a
    steering message), given the v1 value where it has one at the same place, else a string.  A record
    open to any member keeps it (and the edge must not let it overwrite what it writes); a closed one
    is refused: the model says which."""
    found: list[Spelling] = []
    names = _names_of(upgraded.get("data")) | {"kind", "id", "role", "source", "turn", "step"}
    for path, record in _records(spelled.get("data")):
        where = ".".join(str(p) for p in ("data", *path))
        target: object = upgraded.get("data")
        for step in path:
            target = target.get(step) if isinstance(target, dict) and isinstance(step, str) else None
        for key in sorted(names - set(record)):
            value = target.get(key, f"written {key}") if isinstance(target, dict) else f"written {key}"
            found.append((f"{name}: {where}.{key} added", _edit(spelled, path, key, value)))
            if value != f"written {key}":
                # The writer's own value, not the one the edge would write: what the edge keeps (and
                # what the events after it inherit: a chain's retry id, a group's compaction id) shows.
                found.append((f"{name}: {where}.{key} given", _edit(spelled, path, key, f"given {key}")))
    for key in ("surfaceOp", "sourceEventSeqs", "ignorable"):
        if key in upgraded and key not in spelled:
            found.append((f"{name}: {key} beside it", {**copy.deepcopy(spelled), key: copy.deepcopy(upgraded[key])}))
        elif key in spelled:
            found.append((f"{name}: without {key}", {k: copy.deepcopy(v) for k, v in spelled.items() if k != key}))
    return found


def v0_alternatives(spelled: RawEvent) -> list[Spelling]:
    """``spelled`` with one value replaced by another a writer could write there
    (:func:`~sessionlog_spec.suite.fuzz.alternatives.alternative_sites` of the v1 type it names, an old
    name read as its new one): the other arm of a splice's target, the other repair code, a flag
    flipped or left out, a twin.  The edge's normalisations are rules on values as much as on forms."""
    type_ = spelled.get("type")
    type_ = COMPACT_RENAMES.get(type_, type_) if isinstance(type_, str) else type_
    if not isinstance(type_, str) or type_ not in EVENT_PAYLOADS:
        return []
    return [
        (f"alternative {site}", {**copy.deepcopy(spelled), "data": copy.deepcopy(data)})
        for site, data in alternative_sites(type_, spelled.get("data"))
    ]


def by_place(found: Sequence[Spelling], rng: random.Random) -> Spelling:
    """One of ``found`` (named ``<spelling>: <place> <change>``), its place drawn evenly first: a
    record's members each come up as often, however many values each is given."""
    places: dict[str, list[Spelling]] = {}
    for spelling in found:
        places.setdefault(spelling[0].rsplit(" ", 1)[0], []).append(spelling)
    return rng.choice(places[rng.choice(sorted(places))])


def spelled_log(events: Sequence[RawEvent], rng: random.Random, share: float = 0.5) -> tuple[list[RawEvent], list[str]]:
    """``events`` as a v0 writer could have written them: each event, with chance ``share``, in one of
    its spellings (drawn), and the names of the spellings used."""
    out: list[RawEvent] = []
    names: list[str] = []
    for event in events:
        options = spellings(event)
        if options and rng.random() < share:
            name, spelled = rng.choice(options)
            out.append(spelled)
            names.append(f"{event.get('seq')}: {name}")
        else:
            out.append(copy.deepcopy(dict(event)))
    return out, names


def v0_sessions() -> list[list[RawEvent]]:
    """Valid sessions holding every type a spelling applies to: a realistic one, one with a retry
    chain, a rewrite and a compaction group whose checkpoint replaces a span, and one whose retry
    chains differ by one key member each (:func:`retry_chains`)."""
    plain = realistic_session(2, calls_per_step=1).events
    b = SessionBuilder()
    b.tool_turn("Start", ["call-0"], basic_header(), "initial")
    b.turn_start()
    b.user_message("Go on.")
    b.step_start()
    b.request_header(basic_header(), "resume")
    b.retry()
    b.retry()
    b.assistant_message("Reading.", ["call-1"])
    b.tool_call("call-1")
    b.tool_result("call-1")
    b.rewrite_tool_result(b.tool_result_seqs()[-1])
    b.step_end()
    b.compaction_start()
    ranges = b.legal_ranges()
    start, end = ranges[0]
    b.compaction_summary(start, end)
    open_ = b.open_compaction()
    assert open_ is not None
    nodes = b.state.surface.nodes
    shadowed = list(nodes[nodes.index(start) : nodes.index(end) + 1])
    checkpoint = {
        "id": "checkpoint-1",
        "role": "user",
        "content": [text_block("Summary of earlier work.")],
        "source": {"kind": "plugin", "plugin": "compact", "compactionId": open_.compaction_id},
    }
    b.event("user/message", checkpoint, surfaceOp={"op": "replace", "start": start, "end": end}, sourceEventSeqs=shadowed)
    b.compaction_end()
    b.turn_end()
    return [plain, b.events, retry_chains()]


def retry_chains() -> list[RawEvent]:
    """A session whose retries make chains that share all but one member of the chain key (N8:
    ``turn``, ``step``, ``provider``, ``policyKey``): two policies interleaved in one step, the same
    policy again in the next step and in the next turn, so an edge that leaves a member out of the
    key gives one chain's id to another.  (The provider stays one: a session changes it only with a
    request header between steps.)"""
    b = SessionBuilder()
    b.turn_start()
    b.user_message("Try again until it works.")
    b.step_start()
    b.request_header(basic_header(), "initial")
    for policy in ("transient", "rate-limit", "transient", "rate-limit"):
        b.retry(policy)
    b.assistant_message("Step one done.")
    b.step_end()
    b.step_start()
    b.request_header(basic_header(), "series")
    b.retry("transient")
    b.assistant_message("Step two done.")
    b.step_end()
    b.turn_end()
    b.turn_start()
    b.user_message("Once more.")
    b.step_start()
    b.request_header(basic_header(), "series")
    b.retry("transient")
    b.retry("rate-limit")
    b.assistant_message("Done.")
    b.step_end()
    b.turn_end()
    return list(b.events)


def v0_log(events: Sequence[RawEvent], session_id: str = str(V0_HEADER["id"])) -> dict[str, Any]:
    """``events`` under a v0 header line."""
    return {"header": {**V0_HEADER, "id": session_id}, "events": list(events)}
