"""The suite's groups: one per capability group of the protocol, then the groups that check across them.

A capability group (:data:`sessionlog_spec.protocol.messages.GROUPS`) is what a port declares in
``hello``.  A group *across* capabilities is no capability of its own: ``fuzz`` sends perturbed
events and stored lines on every path the port declares, and runs when the port declares any of
the capabilities it names in :data:`ACROSS`.
"""

from __future__ import annotations

from sessionlog_spec.protocol.messages import GROUPS

ACROSS: dict[str, tuple[str, ...]] = {"fuzz": ("session", "read", "legacy")}
"""Groups that are no capability of their own: each runs when the port declares any of these."""
SUITE_GROUPS: tuple[str, ...] = (*GROUPS, *ACROSS)
"""Every group a run can cover, in report order."""
