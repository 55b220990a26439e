"""The model's judgement of one appended event, computed once per session and event.

A conformance step asks the model about the same event on the same session several times: the
builder checks that an action's event is admissible, the oracle answers the port's ``append``, the
builder commits it, and a scene replayed live folds the events a seed candidate was just judged on.
:func:`appended` is :func:`~sessionlog_spec.model.session.append_event` remembered: the answer
for a session (by identity: a :class:`~sessionlog_spec.model.session.SessionState` is frozen, and
the memory holds it, so its identity is not reused while remembered) and a raw event (by
:func:`raw_key`, which tells apart every two raw values the model could tell apart) is computed
once and returned again.  The model stays a pure function; only repeated work is skipped.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Sequence

from sessionlog_spec.model.relationships import SessionIdentity, relations_for, relationship_finish
from sessionlog_spec.model.session import EMPTY_SESSION, SessionState, append_event, fold_session, position_named
from sessionlog_spec.model.violation import Violation

REMEMBERED = 8192
"""How many (session, event) answers are kept; the least recently asked go first."""


class _Unkeyable(Exception):
    """A raw value :func:`raw_key` does not describe exactly (it is judged afresh every time)."""


_LIST, _TUPLE, _DICT, _INT, _FLOAT = "list", "tuple", "dict", "int", "float"


def raw_key(value: object) -> Hashable:
    """A hashable description of a raw JSON-like value, equal for two values only when they are the
    same value of the same types, member order included (``1``, ``1.0`` and ``True`` differ, and so
    do ``0.0`` and ``-0.0``).  Raises :class:`_Unkeyable` for anything else: a subclass of a JSON
    type, a mapping that is not a ``dict``, a non-string key, a foreign object, a value nested
    too deep for the walk."""
    kind = type(value)
    if kind is str or value is None or kind is bool:
        return value
    if kind is int:
        return (_INT, value)
    if kind is float:
        return (_FLOAT, repr(value))
    if kind is dict:
        members = []
        for key, member in value.items():  # type: ignore[attr-defined]
            if type(key) is not str:
                raise _Unkeyable
            members.append((key, raw_key(member)))
        return (_DICT, tuple(members))
    if kind is list or kind is tuple:
        return (_LIST if kind is list else _TUPLE, tuple(raw_key(item) for item in value))  # type: ignore[attr-defined]
    raise _Unkeyable


_answers: OrderedDict[tuple[int, Hashable], tuple[SessionState, SessionState | Violation]] = OrderedDict()


def appended(state: SessionState, raw: object) -> SessionState | Violation:
    """``append_event(state, raw)``, computed once for the same session and the same raw event."""
    try:
        key = (id(state), raw_key(raw))
    except (_Unkeyable, RecursionError):
        return append_event(state, raw)
    known = _answers.get(key)
    if known is not None and known[0] is state:
        _answers.move_to_end(key)
        return known[1]
    answer = append_event(state, raw)
    _answers[key] = (state, answer)
    if len(_answers) > REMEMBERED:
        _answers.popitem(last=False)
    return answer


_starts: dict[SessionIdentity, SessionState] = {}


def _start(identity: SessionIdentity | None) -> SessionState:
    """The empty session of ``identity``: one object per identity, so that folds share their prefixes."""
    if identity is None:
        return EMPTY_SESSION
    known = _starts.get(identity)
    if known is None:
        known = _starts[identity] = SessionState(relations=relations_for(identity))
    return known


def folded(
    raws: Sequence[object],
    where: str = "index",
    first: int = 0,
    positions: Sequence[int] | None = None,
    *,
    identity: SessionIdentity | None = None,
    complete: bool = True,
    legacy_restart: bool = False,
) -> SessionState | Violation:
    """:func:`~sessionlog_spec.model.session.fold_session` as the fold of :func:`appended` it is
    specified to equal (a :class:`~sessionlog_spec.model.session.Fold`): a prefix already judged,
    by the builder, a scene or an earlier read of the same log, is not judged again.  The v0 edge's
    reading (``legacy_restart``) is the model's own fold."""
    if legacy_restart:
        return fold_session(raws, where, first, positions, identity=identity, complete=complete, legacy_restart=True)
    state = _start(identity)
    for index, raw in enumerate(raws):
        following = appended(state, raw)
        if isinstance(following, Violation):
            return following.at(position_named(where, index, first, positions))
        state = following
    if complete and (unfinished := relationship_finish(state.relations)) is not None:
        return unfinished.at(position_named(where, len(raws) - 1, first, positions))
    return state
