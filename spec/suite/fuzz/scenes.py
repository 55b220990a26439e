"""Relationship scenes generated from the relationship rules: a walk over the rules' preconditions.

Each rule of :data:`~sessionlog_spec.model.relationships._HANDLERS` reads some members of its event
(``callId``, ``compactionId``, ``turn``, ``retryId``, ``subCallId``, ...) and compares them with what
earlier events left in the relationship state: a pending call, an open compaction, a retry chain,
a started dispatch, a run command.  The members a rule reads are read off its source
(:func:`rule_members`: the string constants of the rule's function and of the model functions it
calls), not listed here.

A *walk* starts from a valid session and, step by step, offers every move it can make from where
it stands:

* the **constructive** moves of a harness (:class:`~sessionlog_spec.suite.agent.builder.SessionBuilder`
  given the walk's state): open or close a turn or step, a message, an advertised call started or
  answered, the exact not-started repair result, a rewrite of any tool result, a compaction opened
  (owned by the open turn, or by none between turns), summarised over each legal range, ended with
  and without an error, a retry of each policy, crash repair's closers of the open turn;
* the **rebound** moves: for each rule's type, an event of that type (one already in the log, one
  a constructive move would write, or one drawn along the type's shape) with each member the rule
  reads set to each value those members hold anywhere in the log or the event (so a call id is
  advertised again after its result, a compaction names the one a turn boundary crossed, a retry
  reuses another chain's id, a dispatch is started under a settled one), to ``null``, one past a
  number, or dropped.

The model judges each move.  An accepted move is a state the walk may go on from (valid but rare:
the next moves meet a rule's precondition there); a refused one is a *scene*, the refused event on
the log before it.  The walk goes on, drawn by a seeded generator, from a rebound move when one was
accepted (the rare orders), else from a constructive one; so retries and compactions run across
step and turn ends, and repair follows each of them.

:func:`scene_submissions` puts each scene on every path (:func:`~sessionlog_spec.suite.fuzz.witness.on_paths`):
the witness search and the nightly census include them, and the ``fuzz`` group draws walks from its
own session (:func:`walk_from`).
"""

from __future__ import annotations

import ast
import copy
import functools
import inspect
import random
import textwrap
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

from sessionlog_spec.model import relationships
from sessionlog_spec.model.event import encode_event
from sessionlog_spec.model.payloads import EVENT_PAYLOADS
from sessionlog_spec.model.repair import interrupted_turn_closers
from sessionlog_spec.model.session import SessionState, append_event
from sessionlog_spec.model.shapes import Context
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.suite.agent.builder import RawEvent, SessionBuilder, basic_header, realistic_session
from sessionlog_spec.suite.agent.payload_values import valid_payload
from sessionlog_spec.suite.fuzz.alternatives import alternative_sites, by_edit
from sessionlog_spec.suite.fuzz.legacy_v0 import v0_sessions
from sessionlog_spec.suite.fuzz.perturb import renumbered
from sessionlog_spec.suite.judged import folded

RULE_TYPES: Final = tuple(relationships._HANDLERS)
"""The event types a relationship rule is written for."""
BRACKETS: Final = frozenset({"turn/start", "turn/end", "step/start", "step/end"})
POOL_CAP = 8
"""Values a rebound member takes at most: the latest three seqs, then the latest values of the log."""
MOVES_CAP = 80
"""Moves offered at one step at most (constructive ones always; rebound ones drawn)."""
FIRST_MOVES_CAP = 600
"""Rebound moves offered at a walk's first step at most."""
WALK_DEPTH = 10
WALK_SEEDS = range(3)


def _string_constants(function: Callable[..., Any], seen: set[str]) -> set[str]:
    function = inspect.unwrap(function)
    key = f"{function.__module__}.{function.__qualname__}"
    if key in seen:
        return set()
    seen.add(key)
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    found: set[str] = set()
    namespace = function.__globals__
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            found.add(node.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            target = namespace.get(node.func.id)
            if inspect.isfunction(target) and target.__module__.startswith("sessionlog_spec.model."):
                found |= _string_constants(target, seen)
    return found


@functools.cache
def rule_members(type_: str) -> frozenset[str]:
    """The payload members the relationship rule of ``type_`` reads (and the model functions it calls)."""
    handler = relationships._HANDLERS.get(type_)
    if handler is None:
        return frozenset()
    return frozenset(_string_constants(handler, set()))


# -- the values a member may be rebound to ---------------------------------------------------------


def _leaves(value: object, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], object]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*path, key), item
            yield from _leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, index))


def _scalar(value: object) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def member_pool(events: Sequence[RawEvent], members: frozenset[str]) -> list[object]:
    """Every scalar value any of ``members`` holds in ``events`` (latest first, distinct)."""
    pool: dict[str, object] = {}
    for event in reversed(events):
        for location, value in _leaves(event.get("data")):
            if isinstance(location[-1], str) and location[-1] in members and _scalar(value):
                pool.setdefault(repr(value), value)
    return list(pool.values())


_DROP: Final = object()
"""A rebinding that removes the member."""
Edits = tuple[tuple[tuple[str | int, ...], object], ...]


def _apply(value: Any, edits: Edits) -> Any:
    out = copy.deepcopy(value)
    for location, new in edits:
        target = out
        for key in location[:-1]:
            target = target[key]
        if new is _DROP:
            del target[location[-1]]
        else:
            target[location[-1]] = copy.deepcopy(new)
    return out


def rebindings(template: RawEvent, pool: Sequence[object], rng: random.Random) -> Iterator[tuple[str, Edits]]:
    """The edits that set each member ``template``'s rule reads to each value of ``pool``, to
    ``null``, one past a number, or drop it; each also with a second member rebound, since a rule
    often compares two members with the state at once (a retry's id and number, a done command's
    id and source)."""
    members = rule_members(template["type"])
    sites = [(loc, v) for loc, v in _leaves(template["data"]) if isinstance(loc[-1], str) and loc[-1] in members and _scalar(v)]
    for location, value in sites:
        choices: list[object] = [v for v in pool if v != value or type(v) is not type(value)][:POOL_CAP]
        if isinstance(value, int) and not isinstance(value, bool):
            choices.append(value + 1)
        choices.append(None)
        others = [loc for loc, _ in sites if loc != location]
        for choice in choices:
            yield f"{location[-1]}={choice!r}", ((location, choice),)
            if others and pool:
                second, again = rng.choice(others), rng.choice(list(pool))
                yield f"{location[-1]}={choice!r}, {second[-1]}={again!r}", ((location, choice), (second, again))
        yield f"{location[-1]} dropped", ((location, _DROP),)


def rebound(template: RawEvent, pool: Sequence[object], rng: random.Random) -> Iterator[tuple[str, RawEvent]]:
    """``template`` with each of :func:`rebindings` applied."""
    for name, edits in rebindings(template, pool, rng):
        yield name, {**template, "data": _apply(template["data"], edits)}


# -- the moves from one state ----------------------------------------------------------------------


@functools.cache
@functools.cache
def drawn_templates() -> Mapping[str, tuple[Mapping[str, Any], ...]]:
    """Two payloads of every rule's type, drawn along the type's shape (derandomised, once)."""
    drawn: dict[str, list[Mapping[str, Any]]] = {t: [] for t in RULE_TYPES if t in EVENT_PAYLOADS}

    @settings(max_examples=2, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.data())
    def draw(data: st.DataObject) -> None:
        for type_, found in drawn.items():
            payload = data.draw(valid_payload(EVENT_PAYLOADS[type_], Context(event_seq=60)), label=type_)
            if isinstance(payload, dict):
                found.append(payload)

    draw()
    return {t: tuple(p) for t, p in drawn.items()}


def ready_templates() -> Mapping[str, tuple[Mapping[str, Any], ...]]:
    """:func:`drawn_templates` where they can be had: drawn already, or drawable here (outside a
    Hypothesis test, which cannot run another inside it); else none."""
    if drawn_templates.cache_info().currsize or not currently_in_test_context():
        return drawn_templates()
    return {}


def _attempt(make: Callable[[], RawEvent | None]) -> RawEvent | None:
    try:
        return make()
    except (AssertionError, KeyError, ValueError, IndexError, TypeError):
        return None  # the move needs a state this one is not in


def constructive_moves(state: SessionState) -> list[tuple[str, list[RawEvent]]]:
    """What a harness could write next from ``state``: each move one event (repair: its closers)."""
    b = SessionBuilder(state)
    trace = state.trace
    makes: list[tuple[str, Callable[[], RawEvent | None]]] = [
        ("turn/start", lambda: b.turn_start(commit=False)),
        ("turn/end", lambda: b.turn_end(commit=False)),
        ("step/start", lambda: b.step_start(commit=False)),
        ("step/end", lambda: b.step_end(commit=False)),
        ("user message", lambda: b.user_message(commit=False)),
        ("assistant message", lambda: b.assistant_message(commit=False)),
        (
            "calls advertised",
            lambda: b.assistant_message("Reading.", [f"call-{b.next_seq}", f"call-{b.next_seq}b"], commit=False),
        ),
        ("header", lambda: b.request_header(basic_header(), "resume", commit=False)),
        ("compaction/start", lambda: b.compaction_start(commit=False)),
        ("compaction/start by command", lambda: b.compaction_start(f"command-{b.next_seq}", commit=False)),
        ("compaction/end", lambda: b.compaction_end(commit=False)),
        ("compaction/end failed", lambda: b.compaction_end(error="provider failed", commit=False)),
        ("compaction/end empty error", lambda: b.compaction_end(error="", commit=False)),
        ("retry transient", lambda: b.retry(commit=False)),
        ("retry rate-limit", lambda: b.retry("rate-limit", commit=False)),
        # Another writer's note the reader keeps without knowing its type: valid anywhere, and an
        # event a rule about "the last event" (a seed's marker, a turn's end) must look past or not.
        ("ignorable note", lambda: b.event("vendor/note", {"text": "kept as it is"}, False, ignorable=True)),
    ]
    for start, end in b.legal_ranges()[-3:]:
        makes.append((f"summary {start}..{end}", functools.partial(b.compaction_summary, start, end, commit=False)))
    for seq in b.tool_result_seqs()[-2:]:
        makes.append((f"rewrite {seq}", functools.partial(b.rewrite_tool_result, seq, commit=False)))
    for lifecycle in state.relations.tools:
        call = lifecycle.call[1] if isinstance(lifecycle.call, tuple) and len(lifecycle.call) == 2 else None
        if isinstance(call, str):
            makes.append((f"tool/call {call}", functools.partial(b.tool_call, call, commit=False)))
            makes.append((f"tool/result {call}", functools.partial(b.tool_result, call, commit=False)))
            makes.append((f"not started {call}", functools.partial(b.not_started_result, call, commit=False)))
    for retry_id, attempt in state.relations.scheduled:
        if (retry_id, attempt) not in state.relations.retries_started:
            makes.append((f"retry started {retry_id}", functools.partial(_retry_started, b, retry_id, attempt)))
    moves: list[tuple[str, list[RawEvent]]] = []
    for name, make in makes:
        raw = _attempt(make)
        if raw is not None:
            moves.append((name, [raw]))
    if trace.open_turn is not None:
        moves.append(("repair", [encode_event(e) for e in interrupted_turn_closers(state.events)]))
    return moves


def with_move_inserted(log: Sequence[RawEvent], at: int, rng: random.Random) -> list[RawEvent] | None:
    """``log`` with a move a harness could have written after its first ``at`` events (a turn or step
    opened or closed, a message, a header, a compaction's event, a retry, a rewrite) inserted there,
    at the time of the event before it, and the seqs renumbered; ``None`` when the prefix is not
    valid or has no single-event move.  The events after it now stand across a boundary they were
    not written across: the rules that span one (a compaction inside its owner turn, a result in its
    call's step) are asked."""
    state = folded(log[:at], complete=False)
    if isinstance(state, Violation):
        return None
    moves = [raws[0] for _, raws in constructive_moves(state) if len(raws) == 1]
    if not moves:
        return None
    time = log[at - 1]["time"] if at > 0 else rng.choice(moves)["time"]
    return renumbered([*log[:at], {**rng.choice(moves), "time": time}, *log[at:]])


def _retry_started(b: SessionBuilder, retry_id: Hashable, attempt: Hashable) -> RawEvent | None:
    """The start of a scheduled retry attempt, at the turn and step it was scheduled for."""
    where = b.state.relations.scheduled[(retry_id, attempt)]
    values = [token[1] if isinstance(token, tuple) and len(token) == 2 else None for token in (retry_id, attempt, *where)]
    if any(v is None for v in values):
        return None
    data = dict(zip(("retryId", "retry", "turn", "step"), values, strict=True))
    return b.event("llm/retry-started", data, commit=False)


def rebound_moves(
    state: SessionState,
    constructive: Sequence[tuple[str, list[RawEvent]]],
    rng: random.Random,
    cap: int = MOVES_CAP,
    drawn: bool = True,
) -> list[Rebound]:
    """Rule types written with their members rebound to the values the log holds (``cap`` of them,
    drawn); ``drawn``: with payloads drawn along each type's shape among the templates (not inside a
    Hypothesis test, which cannot nest another)."""
    events = [encode_event(e) for e in state.events]
    seq = len(events)
    time = (state.events[-1].time if state.events else 1_700_000_000_000) + 1
    templates: dict[str, list[RawEvent]] = {t: [] for t in RULE_TYPES}
    for event in events:
        if event["type"] in templates and not templates[event["type"]][-1:]:
            templates[event["type"]].append(event)
        elif event["type"] in templates:
            templates[event["type"]][-1] = event  # the latest of its type
    for _, raws in constructive:
        if raws and raws[0]["type"] in templates:
            templates[raws[0]["type"]].append(raws[0])
    for type_, payloads in (ready_templates() if drawn else {}).items():
        templates[type_].extend({"type": type_, "seq": 0, "time": 0, "data": copy.deepcopy(p)} for p in payloads)
    specs: list[tuple[str, RawEvent, Edits]] = []
    for type_, found in templates.items():
        if type_ in BRACKETS:
            continue
        # Members that cite an event by seq take the latest seqs too.
        pool = [*reversed(range(max(0, seq - 3), seq)), *member_pool(events, rule_members(type_))]
        for template in found:
            placed = {**template, "seq": seq, "time": time}
            specs.append((f"{type_} as drawn", placed, ()))
            specs.extend((f"{type_} {name}", placed, edits) for name, edits in rebindings(placed, pool, rng))
    # Every template as it stands (an event of the log written again) is offered; the rebindings are drawn.
    plain = [spec for spec in specs if not spec[2]]
    rebound_ = [spec for spec in specs if spec[2]]
    if len(rebound_) > cap:
        rebound_ = rng.sample(rebound_, cap)
    specs = plain + rebound_
    return [Rebound(name, {**placed, "data": _apply(placed["data"], edits)}, placed, edits) for name, placed, edits in specs]


def alternative_moves(constructive: Sequence[tuple[str, list[RawEvent]]], rng: random.Random) -> list[tuple[str, RawEvent]]:
    """Each single constructive move with one value replaced by an alternative of its schema, drawn
    by edit (:func:`~sessionlog_spec.suite.fuzz.alternatives.by_edit`): the other repair code on a
    crash-repair result, a rewrite without its flag, another abort cause.  The relationship rules are
    about values as much as about which ids a move names."""
    found: list[tuple[str, RawEvent]] = []
    for name, raws in constructive:
        if len(raws) != 1 or raws[0].get("type") not in EVENT_PAYLOADS:
            continue
        sites = alternative_sites(str(raws[0]["type"]), raws[0].get("data"))
        if sites:
            site, data = by_edit(sites, rng)
            found.append((f"{name}, {site}", {**raws[0], "data": copy.deepcopy(data)}))
    return found


@dataclass(frozen=True, slots=True)
class Rebound:
    """A rebound move: the event, and the template it was rebound from with the edits."""

    name: str
    event: RawEvent
    base: RawEvent
    edits: Edits


# -- the walk ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Scene:
    """A move the model refused, on the valid log before it."""

    log: tuple[RawEvent, ...]
    event: RawEvent
    what: str
    code: str
    base: RawEvent | None = None
    """The template a rebound move was made from (``None`` for a constructive move)."""
    edits: Edits = ()
    """The rebindings that made ``event`` of ``base``."""
    state: SessionState | None = field(default=None, compare=False, repr=False)
    """The model's session after ``log``, when the walk had it."""


def _extend(state: SessionState, raws: Sequence[RawEvent]) -> SessionState | Violation:
    for raw in raws:
        after = append_event(state, raw)
        if isinstance(after, Violation):
            return after
        state = after
    return state


def walk_from(
    state: SessionState, rng: random.Random, depth: int = WALK_DEPTH, drawn: bool = True, first_cap: int = FIRST_MOVES_CAP
) -> Iterator[Scene]:
    """The scenes of one walk from ``state``: every refused move of every step, the walk going on
    from an accepted rebound move when there is one (else a constructive one); ``drawn`` as for
    :func:`rebound_moves`, ``first_cap`` the rebound moves offered at the first step."""
    for step in range(depth):
        constructive = constructive_moves(state)
        # Every rebinding where the walk starts (its base is a precondition chosen for it), a draw after.
        rebounds = rebound_moves(state, constructive, rng, cap=MOVES_CAP if step else first_cap, drawn=drawn)
        log = tuple(encode_event(e) for e in state.events)
        rare: list[SessionState] = []
        plain: list[SessionState] = []
        related: list[SessionState] = []
        moves: list[tuple[str, list[RawEvent], Rebound | None]] = [(n, r, None) for n, r in constructive]
        moves += [(r.name, [r.event], r) for r in rebounds]
        moves += [(name, [event], None) for name, event in alternative_moves(constructive, rng)]
        for index, (name, raws, origin) in enumerate(moves):
            after = _extend(state, raws)
            if isinstance(after, Violation):
                if len(raws) == 1:
                    base, edits = (origin.base, origin.edits) if origin is not None else (None, ())
                    yield Scene(log, raws[0], name, after.code.value, base, edits, state)
                continue
            if index >= len(constructive):
                rare.append(after)
            else:
                plain.append(after)
                if raws and raws[0]["type"] in RULE_TYPES and raws[0]["type"] not in BRACKETS:
                    related.append(after)  # a state a rule remembers something of
        # On from a rare state half the time, else a related one (an open compaction, a scheduled
        # retry) or any the harness could be in.
        if rare and rng.randrange(2):
            state = rng.choice(rare)
        elif related and rng.randrange(3):
            state = _least_seen(related, rng)
        elif plain or rare:
            state = rng.choice(plain or rare)
        else:
            return


def _least_seen(states: Sequence[SessionState], rng: random.Random) -> SessionState:
    """The state whose last event's type the log holds fewest of (the rule least walked so far)."""

    def seen(state: SessionState) -> int:
        last = state.events[-1].type
        return sum(1 for event in state.events if event.type == last)

    fewest = min(map(seen, states))
    return rng.choice([state for state in states if seen(state) == fewest])


def walk_bases() -> Iterator[SessionState]:
    """The valid sessions walks start from: empty, a realistic one and every third cut of it, then
    every second cut of a session holding a retry chain, a rewrite, a compaction group and a command
    (:func:`rich_session`), so that walks start inside each rule's precondition."""
    events = realistic_session(2, calls_per_step=2).events
    for length in range(0, len(events) + 1, 3):
        state = _live(events[:length])
        if state is not None:
            yield state
    rich = rich_session()
    for length in range(2, len(rich) + 1, 2):
        state = _live(rich[:length])
        if state is not None:
            yield state


def rich_session() -> list[RawEvent]:
    """A valid session with an event of most rule types: the v0 edge's session (a retry chain, a
    rewrite, a compaction group with its summary and checkpoint), then a command run and its success."""
    events = v0_sessions()[1]
    state = _live(events)
    assert state is not None
    b = SessionBuilder(state)
    b.turn_start()
    b.user_message("Run the tests.")
    b.event("command/run", {"commandId": "command-1", "name": "test", "source": {"kind": "user"}})
    b.event("command/done", {"commandId": "command-1", "kind": "success", "sourceEventSeq": b.next_seq - 2})
    b.turn_end()
    return b.events


def _live(events: Sequence[RawEvent]) -> SessionState | None:
    """``events`` appended one by one (a seed would add its end marker)."""
    state: SessionState | Violation = SessionBuilder().state
    for raw in events:
        if isinstance(state, Violation):
            return None
        state = append_event(state, raw)
    return None if isinstance(state, Violation) else state


def scenes(seeds: Sequence[int] = WALK_SEEDS) -> Iterator[Scene]:
    """Every scene of the walks from every base, one walk per seed."""
    for index, base in enumerate(walk_bases()):
        for seed in seeds:
            yield from walk_from(base, random.Random(f"{index}:{seed}"))


SCENES_PER_KIND = 3
"""Scenes put on every path for each (code, type) the walks refuse with: a path other than
``append`` may judge one scene's log otherwise (a seed refuses what an append allows)."""


def distinct_scenes(seeds: Sequence[int] = WALK_SEEDS) -> list[Scene]:
    """Up to :data:`SCENES_PER_KIND` scenes of each (code, refused type), in walk order."""
    kept: dict[tuple[str, str], list[Scene]] = {}
    for scene in scenes(seeds):
        found = kept.setdefault((scene.code, str(scene.event.get("type"))), [])
        if len(found) < SCENES_PER_KIND:
            found.append(scene)
    return [scene for found in kept.values() for scene in found]
