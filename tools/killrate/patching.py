"""Targeted, reversible monkeypatches of one seqlog function or method.

seqlog's modules import each other's functions by name (``from seqlog.trace import advance``), so
replacing a module-level function means rebinding it in every seqlog module that holds the same
object; a method is replaced on its class.  :class:`Patcher` does either and can undo it, which lets
the tests apply a mutant in-process, observe it, and restore the port.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

Wrapper = Callable[[Callable[..., Any]], Callable[..., Any]]
"""Builds the broken variant from the original function."""


def _seqlog_modules() -> list[ModuleType]:
    return [m for name, m in list(sys.modules.items()) if (name == "seqlog" or name.startswith("seqlog.")) and m is not None]


class Patcher:
    """Applies replacements and remembers how to undo them."""

    def __init__(self) -> None:
        self._undo: list[tuple[object, str, object]] = []

    def wrap(self, owner: type | ModuleType, name: str, make: Wrapper) -> None:
        """Replace ``owner.name`` by ``make(original)``.

        For a module-level function every seqlog module that imported the same object is rebound
        too (the function is replaced wherever it is looked up); for a class the attribute is
        replaced on that class.  ``staticmethod`` and ``classmethod`` wrappers are preserved.
        """
        if isinstance(owner, type):
            raw = owner.__dict__[name]
            if isinstance(raw, classmethod):
                original = raw.__func__
                self._set(owner, name, classmethod(make(original)))
            elif isinstance(raw, staticmethod):
                self._set(owner, name, staticmethod(make(raw.__func__)))
            else:
                self._set(owner, name, make(raw))
            return
        original = getattr(owner, name)
        replacement = make(original)
        bound = False
        for module in _seqlog_modules():
            for attr, value in list(vars(module).items()):
                if value is original:
                    self._set(module, attr, replacement)
                    bound = True
        if not bound:  # pragma: no cover - the owner itself is always a seqlog module
            raise LookupError(f"{owner.__name__}.{name} is not bound in any seqlog module")

    def _set(self, owner: object, name: str, value: object) -> None:
        before = vars(owner)[name] if isinstance(owner, type) else getattr(owner, name)
        self._undo.append((owner, name, before))
        setattr(owner, name, value)

    def undo(self) -> None:
        """Restore everything this patcher replaced, newest first."""
        while self._undo:
            owner, name, value = self._undo.pop()
            setattr(owner, name, value)
