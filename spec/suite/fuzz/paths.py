"""The paths a perturbed event or stored text is sent on, what a port must declare for each, and
what a step on it exercises besides the codes the model answers with."""

from __future__ import annotations

from typing import Final

PATHS: Final = ("append", "seed", "load", "read", "upgrade_v1", "upgrade_v0")
"""The live session, a seed, a stored text loaded or read, the edge given a v1 log and a v0 log."""
PATH_GROUPS: Final[dict[str, tuple[str, ...]]] = {
    "append": ("session",),
    "seed": ("session",),
    "load": ("session", "jsonl"),
    "read": ("read",),
    "upgrade_v1": ("legacy",),
    "upgrade_v0": ("legacy",),
}
"""The capability groups a port must declare for each path."""
PATH_INVARIANTS: Final[dict[str, tuple[str, ...]]] = {
    "append": ("INV-LOG-11",),
    "seed": ("INV-LOG-10", "INV-LOG-11"),
    "load": ("INV-JSONL-2", "INV-LOG-11"),
    "read": ("INV-JSONL-2",),
    "upgrade_v1": ("INV-LEGACY-7",),
    "upgrade_v0": ("INV-LEGACY-6",),
}
"""What a fuzz step on the path exercises whatever the verdict (a refusal adds its code's owners)."""
KINDS: Final[dict[str, tuple[str, ...]]] = {
    "": (),
    "order_": (),
    "drawn_": ("INV-PAY-1",),
    "cover_": ("INV-PAY-1", "INV-PAY-2", "INV-PAY-3"),
    "lines_": ("INV-JSONL-3", "INV-JSONL-4", "INV-JSONL-5"),
    "header_": ("INV-JSONL-1",),
    "pair_": (),
    "scene_": (),
    "v0_": ("INV-LEGACY-5",),
    "layout_": ("INV-JSONL-9", "INV-JSONL-10"),
}
"""The fuzz rules by the prefix they retitle with (``fuzz_order_seed``) and what each adds."""
STORED_PATHS: Final = ("load", "read")
"""The paths that take a stored text, which the line edits go to."""
V0_PATHS: Final = ("upgrade_v0", "load", "read")
"""The paths a v0 log goes to: the edge, and its stored text loaded or read."""
KIND_PATHS: Final[dict[str, tuple[str, ...]]] = {
    "lines_": STORED_PATHS,
    "header_": STORED_PATHS,
    "v0_": V0_PATHS,
    "layout_": STORED_PATHS,
}
"""The kinds sent on fewer paths than :data:`PATHS`."""


def rule_rows() -> dict[str, tuple[str, ...]]:
    """Every name a fuzz step is counted under, with its invariants."""
    rows: dict[str, tuple[str, ...]] = {"fuzz_closing": ()}
    for kind, extra in KINDS.items():
        for path in KIND_PATHS.get(kind, PATHS):
            rows[f"fuzz_{kind}{path}"] = (*PATH_INVARIANTS[path], *extra)
    return rows
