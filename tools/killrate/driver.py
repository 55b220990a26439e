"""``python -m killrate.driver NAME``: seqlog with one mutant applied, served over ``sessionlog-driver/1``.

``NAME`` is a catalogue mutant, the canary, or ``none`` for the unmutated port.  The patch is applied
before the first request is read, and the port is seqlog's own driver and stdio loop.
"""

from __future__ import annotations

import sys

from killrate.mutants import BY_NAME
from killrate.patching import Patcher
from seqlog.driver import SeqlogDriver, serve

UNMUTATED = "none"


def main(argv: list[str] | None = None) -> int:
    """Apply the named mutant and serve requests on stdin/stdout until ``bye``."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or (args[0] != UNMUTATED and args[0] not in BY_NAME):
        print(f"usage: python -m killrate.driver {{{UNMUTATED}|MUTANT}}; mutants: {', '.join(BY_NAME)}", file=sys.stderr)
        return 2
    if args[0] != UNMUTATED:
        mutant = BY_NAME[args[0]]
        mutant.apply(Patcher())
        print(f"killrate: {mutant.name} replaces {mutant.target} ({mutant.invariant})", file=sys.stderr, flush=True)
    serve(SeqlogDriver())
    return 0


if __name__ == "__main__":
    sys.exit(main())
