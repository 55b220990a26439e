"""The ``compaction`` group asks ``cuts`` with its seqs spelled as a JSON reader may hand them over."""

from __future__ import annotations

import dataclasses
from typing import Any

from sessionlog_spec.model.compaction import surface_index
from sessionlog_spec.model.violation import Code, Violation
from sessionlog_spec.protocol.model_driver import ModelDriver
from sessionlog_spec.suite.ports.inprocess import InProcessPort
from sessionlog_spec.suite.profiles import PROFILES
from sessionlog_spec.suite.run import FAILED, RunOptions, run

COMPACTION_ONLY = RunOptions(
    profile=dataclasses.replace(PROFILES["dev"], shrink_seconds=2), only=("compaction",), max_examples=20, step_count=20, seed=5
)


def test_inv_compact_5_a_seq_is_found_as_json_compares_numbers() -> None:
    nodes = (1, 4, 6)
    assert surface_index(nodes, 4) == surface_index(nodes, 4.0) == 1
    assert surface_index(nodes, True) is None  # a flag is no seq, though Python counts it equal to 1
    assert surface_index(nodes, "4") is None
    assert surface_index(nodes, 5) is None


class CutsTypedLookup(ModelDriver):
    """``cuts`` looks a seq up by its type as well as its value: ``4.0``, the same JSON number as the
    surface node 4, is not found (INV-COMPACT-5)."""

    def op_cuts(self, request: dict[str, Any]) -> Any:
        region = request.get("region")
        bounds = [request.get("seq"), *(region.values() if isinstance(region, dict) else ())]
        if any(isinstance(bound, float) for bound in bounds):
            return Violation(Code.NOT_ON_SURFACE, "surface seq not found")
        return super().op_cuts(request)


def test_the_compaction_group_asks_seqs_spelled_with_a_fraction() -> None:
    (compaction,) = run(InProcessPort(CutsTypedLookup()), COMPACTION_ONLY).groups
    assert compaction.status == FAILED, f"{compaction.status} {compaction.detail}"
