"""Every event candidate on every path that admits events: the twins the registry adds.

A rule holds wherever an event enters a session; a port may check it on one path and forget
another.  :func:`add_twins` lifts each ``append`` candidate onto the seed, load and upgrade paths,
writes each ``seed`` candidate out as a stored log and each ``upgrade`` candidate as a stored v1 log.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping

from sessionlog_spec.model.violation import Code, Violation
from sessionlog_spec.suite.agent.builder import RawEvent, SessionBuilder
from sessionlog_spec.suite.agent.candidates.base import (
    STORED_HEADER,
    Build,
    Context,
    Mutation,
    _as_stored,
    _model_answer,
    _put,
    _scratch,
    _stored_with,
    _text,
)
from sessionlog_spec.suite.agent.candidates.legacy import _v0_log, _v0_writable

# -- every event candidate on every path that admits events ---------------------------------------
#
# A rule holds wherever an event enters a session: appended live, in a seed, on a line of a stored
# log, in a v0 log through the edge.  A port may check it on one path and forget another, so every
# ``append`` candidate is also submitted on the other three, standing where it stood: the last
# event of the seed, the last line of the stored log, the last event of the v0 log.  The model
# decides what the path answers: a lifted candidate is used whenever the path refuses it, with its
# own code or another (the edge refuses some faults as v0 source problems first, a line that is not
# an event object is a malformed line), and dropped where the path accepts it (a form the edge
# converts).

LIFTED_CONTEXTS: tuple[Context, ...] = ("seed", "load", "upgrade")
READ_ON_PATH: dict[tuple[str, Context], str] = {
    ("assistant_v0_provenance", "upgrade"): "the edge converts the v0 form",
    ("header_message_prefix", "upgrade"): "the edge drops a v0 header's messagePrefix (N5)",
    ("tool_result_v0_flat", "upgrade"): "the edge converts the v0 form",
    ("event_as_array", "load"): "a last line that is no event is a torn tail, dropped",
    ("event_double_encoded", "load"): "a last line that is no event is a torn tail, dropped",
    ("seq_not_natural", "load"): "a last line whose seq is not a natural is a torn tail, dropped",
    ("skipped_seq", "load"): "a last line whose seq does not follow is a torn tail, dropped",
    ("duplicate_last_event", "load"): "a last line whose seq does not follow is a torn tail, dropped",
    ("sources_range_encoded", "load"): "a stored line may encode sourceEventSeqs as ranges (INV-JSONL-10)",
}
"""Lifts the model accepts on every builder state: the path reads the candidate as valid (why, per pair)."""


def _upgraded_as_v1(builder: SessionBuilder, rng: random.Random, event: object) -> object:
    return {"header": {**STORED_HEADER, "version": 1}, "events": [*builder.events, event]}


def _upgraded_as_v0(builder: SessionBuilder, rng: random.Random, event: object) -> object:
    return _v0_log(builder, rng, event) if isinstance(event, dict) and _v0_writable(builder) else None


def lift_event(builder: SessionBuilder, rng: random.Random, event: RawEvent, context: Context, code: Code) -> object:
    """``event`` (an append candidate after the builder's log) as a candidate of ``context``: the last
    event of a seed, the last line of a stored log, the last event of a v0 or v1 log through the
    edge; ``None`` where that path does not refuse it with ``code``."""
    if context == "append":
        return event if _refused_with(_model_answer(builder, context, event), code) else None
    if context == "seed":
        value: object = [*builder.events, event]
    elif context == "load":
        value = _stored_with(builder, event)
    else:
        # A v1 log through the edge is validated as v1 and comes back unchanged, or is refused;
        # a v0 log is checked as a v0 source first, so either route may give another code.
        routes = [_upgraded_as_v1, _upgraded_as_v0]
        rng.shuffle(routes)
        logs = [log for log in (route(builder, rng, event) for route in routes) if log is not None]
        return next((log for log in logs if _refused_with(_model_answer(builder, context, log), code)), None)
    return value if _refused_with(_model_answer(builder, context, value), code) else None


def _lifted(mutation: Mutation, context: Context) -> Build:
    def build(builder: SessionBuilder, rng: random.Random) -> object:
        event = mutation.build(builder, rng)
        if event is None and builder.state.trace.open_turn is None:
            # A whole-log candidate may take its scene into a turn first.  The groups that store
            # or seed logs are between turns at most of their inject steps (one ci run of the
            # jsonl group: 179 of 183), so a rule that needs an open turn (a header snapshot, a
            # step) came up there once a run.
            b = _scratch(builder)
            if _put(b, b.turn_start(commit=False)):
                builder, event = b, mutation.build(b, rng)
        return None if event is None else lift_event(builder, rng, event, context, mutation.code)

    build.__name__ = build.__qualname__ = f"{mutation.name}@{context}"
    build.__doc__ = f"``{mutation.name}``'s candidate, submitted in a ``{context}`` candidate."
    return build


def _refused_with(answer: object, code: Code) -> bool:
    # A twin refused for another reason is another rule's candidate: it would be labelled, and
    # routed to groups, by a code the path does not give.
    return isinstance(answer, Violation) and answer.code is code


def _as_v1_text(mutation: Mutation) -> Build:
    """``mutation``'s v0 log written out as a stored v1 log: the v1 reader admits none of the edge's
    conversions (a legacy form, a v0 payload, the restart the edge lets stand)."""

    def build(builder: SessionBuilder, rng: random.Random) -> object:
        log = mutation.build(builder, rng)
        if not isinstance(log, Mapping) or not isinstance(log.get("events"), list):
            return None
        text = _text([json.dumps({**STORED_HEADER, "version": 1}), *(json.dumps(e) for e in log["events"])])
        return text if _refused_with(_model_answer(builder, "load", text), mutation.code) else None

    build.__name__ = build.__qualname__ = f"{mutation.name}@v1-load"
    build.__doc__ = f"``{mutation.name}``'s v0 log, stored as a v1 log."
    return build


NO_V1_TWIN: dict[str, str] = {
    "v0_ignorable_unknown": "the v1 reader keeps an ignorable event of a type it does not know (INV-LOG-6)",
    "v0_newer_version": "stored as v1 the log has version 1; its v0 trace forms are refused by the v1 trace rules",
    "v0_payload_fault": "the v1 reader refuses the fault under the v1 payload or trace rules, not as a v0 source",
    "v0_malformed_legacy_form": "the v1 reader refuses the v0 trace form under the v1 trace rules",
    "v0_marker_not_v0": "the v1 reader refuses the v0 trace form under the v1 trace rules",
}
"""Upgrade mutations with no ``@v1-load`` twin: stored as v1, the log is accepted or refused under
another rule, whose own candidates already cover it (why, per name)."""


def _stored_seed(mutation: Mutation) -> Build:
    """``mutation``'s seed written out as a stored v1 log: the same scene and fault on the load path."""

    def build(builder: SessionBuilder, rng: random.Random) -> object:
        text = _as_stored(mutation.build(builder, rng))
        return text if text is not None and _refused_with(_model_answer(builder, "load", text), mutation.code) else None

    build.__name__ = build.__qualname__ = f"{mutation.name}@load"
    build.__doc__ = f"``{mutation.name}``'s seed, stored as a v1 log."
    return build


def add_twins(mutations: list[Mutation]) -> None:
    """Append the twins of ``mutations`` to it, in this order: every ``upgrade`` mutation's log stored
    as v1 (``@v1-load``, but those in :data:`NO_V1_TWIN`), every ``seed`` mutation's seed stored
    (``@load``), then every ``append`` mutation lifted onto each path of :data:`LIFTED_CONTEXTS` that
    does not read it as valid (:data:`READ_ON_PATH`).  Seeded draws depend on this order."""
    for upgraded in [m for m in mutations if m.context == "upgrade" and m.name not in NO_V1_TWIN]:
        build = _as_v1_text(upgraded)
        mutations.append(Mutation(build.__name__, upgraded.code, "load", build, lifted_from=upgraded.name))
    for seeded in [m for m in mutations if m.context == "seed"]:
        build = _stored_seed(seeded)
        mutations.append(Mutation(build.__name__, seeded.code, "load", build, lifted_from=seeded.name))
    for appended in [m for m in mutations if m.context == "append"]:
        for context in (c for c in LIFTED_CONTEXTS if (appended.name, c) not in READ_ON_PATH):
            build = _lifted(appended, context)
            mutations.append(Mutation(build.__name__, appended.code, context, build, lifted_from=appended.name))
