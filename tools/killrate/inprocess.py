"""Running a probe against seqlog in-process, with and without a mutant: no suite, no subprocess."""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

from killrate.mutants import Mutant
from killrate.patching import Patcher
from killrate.probes import STORE, Probe
from seqlog.driver import SeqlogDriver, write_reply

Observed = tuple[str, Any]
"""``("ok", result)`` or ``("refused", code)``, as the suite would see the reply."""


def run_probe(probe: Probe) -> list[Observed]:
    """The observable replies of a fresh seqlog driver to ``probe``.

    A storage probe names its store :data:`~killrate.probes.STORE`; each run gets a fresh directory
    for it, and a ``store_damage`` request is the probe's own action on the file, not sent.
    """
    driver = SeqlogDriver()
    observed: list[Observed] = []
    with tempfile.TemporaryDirectory(prefix="killrate-probe-") as scratch:
        for number, written in enumerate(probe, start=1):
            request = copy.deepcopy(written)
            if request.get("dir") == STORE:
                request["dir"] = str(Path(scratch) / "store")
            if request["op"] == "store_damage":
                (Path(request["dir"]) / "events.jsonl").write_text(request["jsonl"], encoding="utf-8")
                continue
            reply = json.loads(write_reply(driver({"id": number, **request})))
            observed.append(("ok", reply["result"]) if reply["ok"] else ("refused", reply["error"]["code"]))
        driver({"id": 0, "op": "store_close"})  # release the store before its directory goes
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
