"""Which invariants a step of a state machine exercises: a small table, rule by rule.

A step is counted under an agent action (the agent machines retitle each action they take with its
name; the invariants of the actions are :data:`sessionlog_spec.suite.agent.actions.ACTION_INVARIANTS`)
or under one of the machines' own rules: their ``@step`` methods and the names they retitle to
(``RULE_INVARIANTS``).  A step exercises the invariants its action's or rule's input is about
(``STEP_INVARIANTS``), but only those the capability group's ops can observe (``GROUP_OBSERVES``),
plus the invariants the ops themselves check when compared (``OP_INVARIANTS``), plus the owners of
every violation code the oracle refused with.  Coverage is counted from these tags, so an invariant
is only reported as exercised when a port was actually asked about it.
"""

from __future__ import annotations

from collections.abc import Iterable

from sessionlog_spec.model.violation import Code
from sessionlog_spec.registry import INVARIANTS
from sessionlog_spec.suite.agent.actions import ACTION_INVARIANTS
from sessionlog_spec.suite.fuzz import paths as fuzz_paths

RULE_INVARIANTS: dict[str, tuple[str, ...]] = {
    # the agent machines (every agent action counts under its own name: see ACTION_INVARIANTS)
    "send_request": (*ACTION_INVARIANTS["request_header"], "INV-HDR-12"),  # the writer's decision, then its snapshot
    "switch_mode": ("INV-LOG-6", "INV-HDR-7"),
    "switch_model": ("INV-LOG-6", "INV-HDR-2", "INV-HDR-3"),
    "inject": ("INV-LOG-11",),
    # session
    "reseed": ("INV-LOG-10", "INV-LOG-11", "INV-LOG-5"),
    # header
    "fold_headers": ("INV-HDR-6", "INV-HDR-7", "INV-HDR-8"),
    "request_with_bad_header": ("INV-HDR-1", "INV-HDR-2"),
    "request_with_other_tools": ("INV-HDR-7", "INV-HDR-10"),
    "request_after_drift_undone": (),  # tagged from the facts asked about, as a request is
    "request_with_alternative_header": ("INV-HDR-7",),
    "request_with_same_header": (),  # tagged from the facts asked about, as a request is
    # repair
    "repair_crash_prefix": ("INV-REPAIR-2", "INV-REPAIR-3", "INV-REPAIR-4"),
    "repair_repaired": ("INV-REPAIR-5",),
    "repair_seeded_child": ("INV-REPAIR-1", "INV-REPAIR-2", "INV-REPAIR-4", "INV-LOG-10"),
    # jsonl
    "save": ("INV-JSONL-1", "INV-JSONL-2"),
    "load_saved": ("INV-JSONL-2", "INV-JSONL-8"),
    "crash_cut": ("INV-JSONL-3", "INV-JSONL-4", "INV-JSONL-8", "INV-REPAIR-2", "INV-REPAIR-3", "INV-REPAIR-4", "INV-REPAIR-5"),
    "crash_no_final_newline": ("INV-JSONL-3", "INV-JSONL-8", "INV-REPAIR-5"),
    "crash_load_reload": ("INV-JSONL-8", "INV-REPAIR-5"),
    "crash_duplicate_last_line": ("INV-JSONL-3", "INV-JSONL-5", "INV-LOG-11"),
    "crash_duplicate_line": ("INV-JSONL-3", "INV-JSONL-5", "INV-LOG-11"),
    "crash_damage_middle_line": ("INV-JSONL-3", "INV-JSONL-4", "INV-LOG-11"),
    "crash_lose_line": ("INV-JSONL-3", "INV-JSONL-5", "INV-LOG-11"),
    "crash_stray_line": ("INV-JSONL-3", "INV-JSONL-4", "INV-JSONL-5", "INV-LOG-11"),
    "crash_faulty_last_row": ("INV-JSONL-3", "INV-JSONL-9"),
    "crash_faulty_row": ("INV-JSONL-3", "INV-JSONL-9", "INV-LOG-11"),
    "load_layout": ("INV-JSONL-2", "INV-JSONL-4", "INV-JSONL-9", "INV-JSONL-10"),
    "read_saved": ("INV-JSONL-2",),
    "read_packed": ("INV-JSONL-2", "INV-JSONL-9"),
    "read_layout": ("INV-JSONL-2", "INV-JSONL-4", "INV-JSONL-9", "INV-JSONL-10"),
    "read_v0": ("INV-JSONL-7", "INV-LEGACY-6"),
    "read_crash_cut": ("INV-JSONL-3", "INV-JSONL-4"),
    "read_crash_no_final_newline": ("INV-JSONL-3",),
    "read_crash_duplicate_last_line": ("INV-JSONL-3", "INV-JSONL-5"),
    "read_crash_duplicate_line": ("INV-JSONL-3", "INV-JSONL-5"),
    "read_crash_damage_middle_line": ("INV-JSONL-3", "INV-JSONL-4"),
    "read_crash_lose_line": ("INV-JSONL-3", "INV-JSONL-5"),
    "read_crash_stray_line": ("INV-JSONL-3", "INV-JSONL-4", "INV-JSONL-5"),
    "read_crash_faulty_last_row": ("INV-JSONL-3", "INV-JSONL-9"),
    "read_crash_faulty_row": ("INV-JSONL-3", "INV-JSONL-9"),
    "read_other_version": ("INV-JSONL-7",),
    "begin_session": ("INV-JSONL-1",),
    "load_other_version": ("INV-JSONL-7",),
    # legacy
    "upgrade_legacy": ("INV-LEGACY-5", "INV-LEGACY-6", "INV-LEGACY-8"),
    "upgrade_refused_form": ("INV-LEGACY-1", "INV-LEGACY-2", "INV-LEGACY-3", "INV-LEGACY-4"),
    "upgrade_v1_unchanged": ("INV-LEGACY-7",),
    "upgrade_twice": ("INV-LEGACY-7",),
    "restart_interrupted_turn": ("INV-LEGACY-6", "INV-LEGACY-7", "INV-JSONL-7"),
    "load_legacy": ("INV-JSONL-7", "INV-LEGACY-6"),
    # compaction
    "balance_around": ("INV-COMPACT-1", "INV-COMPACT-2", "INV-COMPACT-5"),
    "compaction_region": ("INV-COMPACT-3",),
    "careless_compaction": ("INV-COMPACT-1", "INV-COMPACT-3", "INV-COMPACT-6"),
    # storage
    "create_store": ("INV-JSONL-1", "INV-JSONL-11"),
    "checkpoint": ("INV-JSONL-11",),
    "close_and_reopen": ("INV-JSONL-2", "INV-JSONL-8", "INV-JSONL-11"),
    "damage_and_reopen": ("INV-JSONL-3", "INV-JSONL-4", "INV-JSONL-5", "INV-JSONL-8", "INV-JSONL-11", "INV-REPAIR-5"),
    "crash_and_reopen": ("INV-JSONL-3", "INV-JSONL-8", "INV-JSONL-11", "INV-REPAIR-2", "INV-REPAIR-5"),
    # fuzz: one row per path and kind of perturbation
    **fuzz_paths.rule_rows(),
}
"""The machines' own rules: their ``@step`` methods and the names they ``retitle`` to, agent actions aside."""

STEP_INVARIANTS: dict[str, tuple[str, ...]] = {**ACTION_INVARIANTS, **RULE_INVARIANTS}
"""Every name a step is counted under: an agent action or a machine's rule."""
assert not set(ACTION_INVARIANTS) & set(RULE_INVARIANTS), "a rule named like an agent action"

OP_INVARIANTS: dict[str, tuple[str, ...]] = {
    "append": ("INV-LOG-5", "INV-LOG-12"),
    "seed": ("INV-LOG-10",),
    "state": ("INV-SURF-9", "INV-SURF-10", "INV-TRACE-10", "INV-COMPACT-6"),
    "fold_surface": ("INV-SURF-12",),
    "fold_header": ("INV-HDR-8",),
    "header_decision": (),
    "repair": ("INV-REPAIR-1",),
    "save": ("INV-JSONL-1", "INV-JSONL-2"),
    "load": ("INV-JSONL-1",),
    "read": ("INV-JSONL-1", "INV-JSONL-5", "INV-JSONL-7"),
    "upgrade_v0": ("INV-LEGACY-6",),
    "cuts": ("INV-COMPACT-2", "INV-COMPACT-4"),
    "store_create": ("INV-JSONL-1",),
    "store_open": ("INV-JSONL-1", "INV-JSONL-11"),
    "store_append": ("INV-LOG-5", "INV-LOG-12"),
    "store_checkpoint": ("INV-JSONL-11",),
    "store_close": ("INV-JSONL-11",),
}

GROUP_OBSERVES: dict[str, frozenset[str]] = {
    "session": frozenset({"LOG", "PAY", "SURF", "TRACE", "COMPACT", "HDR", "REL"}),
    "surface": frozenset({"SURF"}),
    "header": frozenset({"HDR"}),
    "repair": frozenset({"REPAIR"}),
    "jsonl": frozenset({"JSONL", "REPAIR", "PAY", "REL"}),
    "read": frozenset({"JSONL", "LEGACY", "LOG", "PAY", "SURF", "TRACE", "HDR", "COMPACT", "REL"}),
    "legacy": frozenset({"LEGACY", "JSONL"}),
    "compaction": frozenset({"COMPACT"}),
    "storage": frozenset({"JSONL", "REPAIR", "LOG", "PAY", "SURF", "TRACE", "HDR", "COMPACT", "REL"}),
    "fuzz": frozenset({"LOG", "PAY", "SURF", "TRACE", "HDR", "REPAIR", "COMPACT", "JSONL", "LEGACY", "REL"}),
}
"""The invariant groups whose effects a capability group's ops make visible."""

CODE_OWNERS: dict[str, tuple[str, ...]] = {
    code.value: tuple(inv.id for inv in INVARIANTS if code in inv.codes) for code in Code
}


STORED_OPS = frozenset({"save", "load", "read", "store_create", "store_open", "store_append", "store_checkpoint", "store_close"})

PATH_OWNED: dict[str, frozenset[str]] = {"JSONL": STORED_OPS}
"""Invariant groups whose rules are about one path (the stored log's): a code they share with a rule
of every path (a seq gap, say) counts for them only when a step's ops took theirs."""


def step_invariants(group: str, rule: str | None, ops: Iterable[str], codes: Iterable[str]) -> set[str]:
    """The invariant IDs one step exercised: its action's or rule's (as far as ``group`` observes them), its ops', its codes'."""
    observed = GROUP_OBSERVES[group]
    taken = set(ops)
    tags = {i for i in STEP_INVARIANTS.get(rule or "", ()) if i.split("-")[1] in observed}
    for op in taken:
        tags.update(OP_INVARIANTS.get(op, ()))
    for code in codes:
        tags.update(i for i in CODE_OWNERS.get(code, ()) if _on_its_path(i, taken))
    return tags


def _on_its_path(invariant: str, ops: set[str]) -> bool:
    path = PATH_OWNED.get(invariant.split("-")[1])
    return path is None or bool(ops & path)
