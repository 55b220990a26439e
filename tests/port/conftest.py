"""seqlog's slow tests (the 200-kill crash run) stay out of a default run.

They run when the marker expression names them (``-m slow``) or with ``SEQLOG_SLOW=1``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

HERE = Path(__file__).parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip this directory's ``slow`` tests unless they were asked for."""
    if os.environ.get("SEQLOG_SLOW") == "1" or "slow" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow or SEQLOG_SLOW=1")
    for item in items:
        if "slow" in item.keywords and item.path.is_relative_to(HERE):
            item.add_marker(skip)
