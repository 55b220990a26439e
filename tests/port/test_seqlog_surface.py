"""SurfaceManager: validate without mutating, commit plans, lazy folding, windows; fold_surface."""

from __future__ import annotations

import pytest
from seqlog_fixtures import tool_result, user

from seqlog import APPEND, Code, Event, LibCode, Replace, SeqlogError, SurfaceManager, fold_surface, freeze


def _user(seq: int, op: object = APPEND, sources: tuple[int, ...] | None = None) -> Event:
    return Event("user/message", seq, 0, freeze(user(f"u{seq}")), surface_op=op, source_event_seqs=sources)  # type: ignore[arg-type]


def _note(seq: int) -> Event:
    return Event("todo/write", seq, 0, freeze({"todos": []}))


def test_validate_next_changes_nothing_and_commit_applies() -> None:
    log: list[Event] = []
    manager = SurfaceManager(log)
    event = _user(0)
    plan = manager.validate_next(event)
    assert list(manager.nodes) == [] and plan.touches_surface
    log.append(event)
    manager.commit(plan)
    assert list(manager.nodes) == [0]
    with pytest.raises(SeqlogError) as stale:
        manager.commit(plan)
    assert stale.value.code == LibCode.STALE_PLAN


def test_it_folds_lazily_what_was_appended_to_its_log() -> None:
    log = [_user(0), _note(1), _user(2)]
    manager = SurfaceManager(log)
    assert list(manager.nodes) == [0, 2]
    log.append(_user(3, Replace(0, 2), (0, 2)))
    assert list(manager.nodes) == [3] and manager.replace_generation == 1


def test_nodes_are_a_read_only_sequence_of_ints() -> None:
    manager = SurfaceManager([_user(0), _user(1)])
    nodes = manager.nodes
    assert nodes == [0, 1] and nodes[1] == 1 and 1 in nodes and nodes.index(1) == 1
    assert not hasattr(nodes, "append")
    with pytest.raises(TypeError):
        nodes[0] = 5  # type: ignore[index]


@pytest.mark.parametrize(
    ("event", "code"),
    [
        (_user(3, Replace(9, 1), (1,)), Code.REPLACE_START_NOT_ON_SURFACE),
        (_user(3, Replace(0, 9), (0,)), Code.REPLACE_END_NOT_ON_SURFACE),
        (_user(3, Replace(2, 0), (0, 2)), Code.REPLACE_RANGE_INVERTED),
        (_user(3, Replace(0, 2), (0,)), Code.SOURCES_MISSING_SHADOWED),
        (_user(3, Replace(0, 0), (0, 0)), Code.SOURCES_DUPLICATE),
        (_user(3, APPEND, (5,)), Code.SOURCES_NOT_EARLIER),
        (_user(3, APPEND, ()), Code.SOURCES_EMPTY),
        (_user(4), Code.SEQ_NOT_CONTIGUOUS),
        (Event("todo/write", 3, 0, None, surface_op=APPEND), Code.SURFACE_OP_FORBIDDEN),
        (Event("todo/write", 3, 0, None, source_event_seqs=(1,)), Code.SOURCES_FORBIDDEN),
        (Event("user/message", 3, 0, None), Code.SURFACE_OP_MISSING),
        (Event("tool/result", 3, 0, freeze(tool_result(1, 1, "c")), surface_op=Replace(0, 0), source_event_seqs=(0,)),
         Code.TOOL_REWRITE_TARGET),
        (Event("tool/result", 3, 0, freeze(tool_result(1, 1, "c")), surface_op=Replace(0, 2), source_event_seqs=(0, 2)),
         Code.TOOL_REWRITE_SPAN),
    ],
)
def test_surface_refusals(event: Event, code: Code) -> None:
    manager = SurfaceManager([_user(0), _note(1), _user(2)])
    before = (tuple(manager.nodes), manager.replace_generation)
    with pytest.raises(SeqlogError) as refused:
        manager.validate_next(event)
    assert refused.value.code == code
    assert (tuple(manager.nodes), manager.replace_generation) == before


def test_tool_result_rewrites_may_change_only_content() -> None:
    result = Event("tool/result", 0, 0, freeze(tool_result(1, 1, "c", "long output")), surface_op=APPEND)
    manager = SurfaceManager([result])
    rewrite = {"surface_op": Replace(0, 0), "source_event_seqs": (0,)}
    elided = Event("tool/result", 1, 0, freeze(tool_result(1, 1, "c", "[elided]")), **rewrite)  # type: ignore[arg-type]
    assert manager.validate_next(elided).replacement is not None
    renamed = Event("tool/result", 1, 0, freeze(tool_result(1, 1, "c", "x", message_id="other")), **rewrite)  # type: ignore[arg-type]
    with pytest.raises(SeqlogError) as refused:
        manager.validate_next(renamed)
    assert refused.value.code == Code.TOOL_REWRITE_CHANGES


def test_a_window_starts_from_loaded_state() -> None:
    window = [_user(10), _user(11, Replace(3, 10), (3, 10))]
    manager = SurfaceManager(window, base_seq=10, nodes=[1, 3], replace_generation=2)
    assert list(manager.nodes) == [1, 11] and manager.replace_generation == 3
    target = Event("tool/result", 12, 0, freeze(tool_result(1, 1, "c")), surface_op=Replace(1, 1), source_event_seqs=(1,))
    with pytest.raises(SeqlogError) as outside:
        manager.validate_next(target)
    assert outside.value.code == LibCode.OUTSIDE_WINDOW


def test_fold_surface_reports_every_replacement() -> None:
    folded = fold_surface([_user(0), _user(1), _user(2, Replace(0, 1), (0, 1)), _user(3, Replace(2, 2), (2,))])
    assert folded.nodes == (3,) and folded.replace_generation == 2
    assert [(r.seq, r.start, r.end, r.shadowed) for r in folded.replacements] == [(2, 0, 1, (0, 1)), (3, 2, 2, (2,))]
