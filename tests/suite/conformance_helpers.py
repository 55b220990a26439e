"""Shared helpers of the conformance-suite tests: running the CLI and naming the broken drivers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
BROKEN = Path(__file__).resolve().parent / "broken"
MODEL_DRIVER = f"{sys.executable} -m sessionlog_spec.protocol.model_driver"


def broken_driver(name: str) -> str:
    """The command line of the deliberately broken driver ``tests/suite/broken/<name>.py``."""
    return f"{sys.executable} {BROKEN / name}.py"


def run_cli(*args: str | Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """``python -m sessionlog_spec ARGS`` in the project root, output captured."""
    command = [sys.executable, "-m", "spec", *(str(a) for a in args)]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False)


def read_json(path: Path) -> Any:
    """A JSON file's content."""
    return json.loads(path.read_text(encoding="utf-8"))


def case_files(directory: Path) -> list[Path]:
    """The counterexample files written into ``directory``."""
    return sorted(directory.glob("*.json")) if directory.exists() else []
