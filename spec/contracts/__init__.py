"""Every invariant of :mod:`sessionlog_spec.registry` as an icontract contract over the model.

Each module here wraps the model functions of one group in thin, contracted functions: the
preconditions say what the function may assume, the postconditions state the invariants, and each
contract's description starts with the invariant's ID.  Tests and the in-process oracle call these
wrappers, so every call checks the rules; CrossHair searches the small ones for counterexamples.

Set ``SESSIONLOG_CONTRACTS=0`` to call the model without the checks (for benchmarks).
"""

from __future__ import annotations

import os

ENABLED = os.environ.get("SESSIONLOG_CONTRACTS", "1") != "0"
