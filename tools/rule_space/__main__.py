"""``python -m rule_space``: the declared cell space, the witness search's reach of it, and a run's.

Prints the space by invariant group, the cells the generic witness search reaches (a few minutes of
one core), and, given ``--run REPORT.json`` reports of conformance runs, the cells each reached;
``--json OUT`` writes all of it, with every declared cell neither reaches, for ``docs/strength.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from sessionlog_spec.suite.fuzz.witness import witness_cells
from sessionlog_spec.suite.rule_space import by_group, covered, declared_cells, parse_cell


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rule_space", description=__doc__)
    parser.add_argument("--run", type=Path, action="append", default=[], metavar="REPORT.json", help="a run's JSON report")
    parser.add_argument("--json", type=Path, metavar="OUT.json", help="write the figures and the unreached cells")
    parser.add_argument("--no-witness", action="store_true", help="skip the witness search")
    parser.add_argument("--witness-from", type=Path, metavar="OUT.json", help="the witness cells of an earlier --json output")
    args = parser.parse_args(argv)
    declared = declared_cells()
    out: dict[str, object] = {"declared": {"cells": len(declared), "by_group": dict(by_group(declared))}}
    print(f"declared: {len(declared)} cells " + ", ".join(f"{g} {n}" for g, n in by_group(declared)))
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
    if args.json is not None:
        union = witnessed.union(*reached_by_run)
        out["runs"] = runs
        out["unreached"] = sorted(" ".join(c) for c in declared - union)
        args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
