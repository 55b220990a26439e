"""``python -m rule_space``: the declared cell space, the witness search's reach of it, and a run's.

Prints the space by invariant group, the cells the model cannot reach (with the reason the rule space
gives, outside every denominator), the cells the generic witness search reaches (a few minutes of one
core), and, given ``--run REPORT.json`` reports of conformance runs, the cells each reached; ``--pairs``
adds the check-order pair table's coverage (which pairs the generators build, why the rest cannot be);
``--json OUT`` writes all of it, with every reachable declared cell neither reaches, for ``docs/strength.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from sessionlog_spec.suite.fuzz.pairs import pair_census
from sessionlog_spec.suite.fuzz.witness import witness_cells
from sessionlog_spec.suite.rule_space import by_group, covered, declared_cells, parse_cell, reachable_declared, unreachable_cells


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rule_space", description=__doc__)
    parser.add_argument("--run", type=Path, action="append", default=[], metavar="REPORT.json", help="a run's JSON report")
    parser.add_argument("--json", type=Path, metavar="OUT.json", help="write the figures and the unreached cells")
    parser.add_argument("--no-witness", action="store_true", help="skip the witness search")
    parser.add_argument("--pairs", action="store_true", help="build the check-order pairs (a few minutes)")
    parser.add_argument("--witness-from", type=Path, metavar="OUT.json", help="the witness cells of an earlier --json output")
    args = parser.parse_args(argv)
    space = declared_cells()
    unreachable = unreachable_cells()
    declared = reachable_declared()
    out: dict[str, object] = {
        "declared": {"cells": len(space), "by_group": dict(by_group(space))},
        "unreachable": {" ".join(cell): reason for cell, reason in sorted(unreachable.items())},
        "reachable": {"cells": len(declared), "by_group": dict(by_group(declared))},
    }
    print(f"declared: {len(space)} cells " + ", ".join(f"{g} {n}" for g, n in by_group(space)))
    print(f"unreachable (left out of every denominator): {len(unreachable)}")
    for cell, reason in sorted(unreachable.items()):
        print(f"  {' '.join(cell)}: {reason}")
    print(f"reachable declared: {len(declared)} cells")
    witnessed: frozenset[tuple[str, str, str]] = frozenset()
    if args.witness_from is not None:
        raw_keys = json.loads(args.witness_from.read_text(encoding="utf-8"))["witness_cells"]
        witnessed = covered(declared, (parse_cell(k) for k in raw_keys))
        out["witness_cells"] = raw_keys
        out["witness"] = {"reached": len(witnessed), "by_group": dict(by_group(witnessed))}
        print(f"witness search (from {args.witness_from}): {len(witnessed)} of {len(declared)}")
    elif not args.no_witness:
        started = time.monotonic()
        raw = witness_cells()
        witnessed = covered(declared, raw)
        out["witness_cells"] = sorted(" ".join(cell) for cell in raw)
        groups = ", ".join(f"{g} {n}" for g, n in by_group(witnessed))
        print(f"witness search: {len(witnessed)} of {len(declared)} ({time.monotonic() - started:.0f} s) {groups}")
        out["witness"] = {"reached": len(witnessed), "by_group": dict(by_group(witnessed))}
    runs: list[dict[str, object]] = []
    reached_by_run: list[frozenset[tuple[str, str, str]]] = []
    for report in args.run:
        document = json.loads(report.read_text(encoding="utf-8"))
        keys = {key for section in document["groups"].values() for key in section.get("cells", {})}
        reached = covered(declared, (parse_cell(k) for k in keys))
        print(f"{report}: {len(reached)} of {len(declared)} " + ", ".join(f"{g} {n}" for g, n in by_group(reached)))
        figures = {"reached": len(reached), "by_group": dict(by_group(reached))}
        runs.append({"report": str(report), "profile": document.get("profile"), **figures})
        reached_by_run.append(reached)
    union = witnessed.union(*reached_by_run)
    if args.run or witnessed:
        left = sorted(" ".join(c) for c in declared - union)
        print(f"together: {len(union)} of {len(declared)}; unreached: " + "; ".join(left))
    if args.pairs:
        started = time.monotonic()
        pairs = pair_census().to_json()
        out["pairs"] = pairs
        shown = {k: v for k, v in pairs.items() if k != "unbuilt"}
        print(f"check-order pairs ({time.monotonic() - started:.0f} s): {json.dumps(shown)}")
    if args.json is not None:
        out["runs"] = runs
        out["unreached"] = sorted(" ".join(c) for c in declared - union)
        args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
