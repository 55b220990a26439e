"""Every test run imports the suite by one name only: ``sessionlog_spec``.

The checkout's folders ``model/`` and ``spec/`` sit next to the tests, so a stray ``import model``
would find them under a second name and load a second copy of every module.  This finder refuses
those names for the whole run.
"""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

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
