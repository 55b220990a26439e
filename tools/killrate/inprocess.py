"""Running a probe against seqlog in-process, with and without a mutant: no suite, no subprocess."""

from __future__ import annotations

import copy
import json
from typing import Any

from killrate.mutants import Mutant
from killrate.patching import Patcher
from killrate.probes import Probe
from seqlog.driver import SeqlogDriver, write_reply

Observed = tuple[str, Any]
"""``("ok", result)`` or ``("refused", code)``, as the suite would see the reply."""


def run_probe(probe: Probe) -> list[Observed]:
    """The observable replies of a fresh seqlog driver to ``probe``."""
    driver = SeqlogDriver()
    observed: list[Observed] = []
    for number, request in enumerate(probe, start=1):
        reply = json.loads(write_reply(driver({"id": number, **copy.deepcopy(request)})))
        observed.append(("ok", reply["result"]) if reply["ok"] else ("refused", reply["error"]["code"]))
    return observed


def probe_both(mutant: Mutant) -> tuple[list[Observed], list[Observed]]:
    """The probe's replies from seqlog and from seqlog with ``mutant`` applied (undone afterwards)."""
    original = run_probe(mutant.probe)
    patcher = Patcher()
    mutant.apply(patcher)
    try:
        mutated = run_probe(mutant.probe)
    finally:
        patcher.undo()
    return original, mutated
