"""The divergence catalogue, asked again: a quarter of it in every run, all of it in the slow run.

Each catalogue holds every question ``tools/dsh_upstream/divergences.py`` asks a driver (tens of
thousands for dsh-session) with the verdict it got.  Asking every one takes minutes, so the
default run asks a fixed slice of one question in four, spread over every group, candidate and
state; ``SESSIONLOG_SLOW=1`` (the nightly job) asks them all.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

SLICES = [
    pytest.param("0/4", id="a-quarter"),
    pytest.param(
        "0/1",
        id="whole",
        marks=[
            pytest.mark.slow,
            pytest.mark.skipif(os.environ.get("SESSIONLOG_SLOW") != "1", reason="set SESSIONLOG_SLOW=1: minutes of driver time"),
        ],
    ),
]
"""The slices a catalogue test is run with."""


def check_catalogue(catalogue: Path, sample: str, driver: list[str] | None = None) -> None:
    """Ask the ``sample`` slice of ``catalogue``'s questions again; fail on any changed verdict."""
    command = [sys.executable, "-m", "dsh_upstream.divergences", "--check", str(catalogue), "--sample", sample]
    if driver is not None:
        command += ["--driver", shlex.join(driver)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    assert "0 verdict(s) changed" in run.stdout
    asked = int(run.stdout.rsplit(" questions,", 1)[0].rsplit("\n", 1)[-1])
    shards = int(sample.split("/")[1])
    # A slice that asked (almost) nothing would pass whatever upstream does.
    assert asked >= 1000 // shards, run.stdout[-2000:]
