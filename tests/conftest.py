"""What every test run shares: one import name for the suite, and seqlog's slow tests kept out.

The checkout's folders ``model/`` and ``spec/`` sit next to the tests, so a stray ``import model``
would find them under a second name and load a second copy of every module.  :class:`OneNameOnly`
refuses those names for the whole run.

seqlog's slow tests (the 200-kill crash run under ``tests/port``) run only when the marker
expression names them (``-m slow``) or with ``SEQLOG_SLOW=1``.
"""

from __future__ import annotations

import importlib.abc
import os
import sys
from collections.abc import Iterator, Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

import pytest

GENERIC_NAMES = frozenset({"model", "spec", "harness"})


class OneNameOnly(importlib.abc.MetaPathFinder):
    """Refuses the checkout's folder names as top-level modules."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname.partition(".")[0] in GENERIC_NAMES:
            raise ImportError(f"{fullname}: import the suite as sessionlog_spec (model/ is sessionlog_spec.model)")
        return None


sys.meta_path.insert(0, OneNameOnly())


PORT_TESTS = Path(__file__).parent / "port"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip seqlog's ``slow`` tests unless they were asked for."""
    if os.environ.get("SEQLOG_SLOW") == "1" or "slow" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow or SEQLOG_SLOW=1")
    for item in items:
        if "slow" in item.keywords and item.path.is_relative_to(PORT_TESTS):
            item.add_marker(skip)


@pytest.fixture(params=[0, 4300, 640], ids=lambda limit: f"digit-limit-{limit}")
def digit_limit(request: pytest.FixtureRequest) -> Iterator[int]:
    """The interpreter's limit on integer digits, set for one test (0: none; 4300: the default; 640: the smallest)."""
    saved = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(request.param)
    yield request.param
    sys.set_int_max_str_digits(saved)
