"""Every invariant of :mod:`sessionlog_spec.registry` as an icontract contract over the model.

Each module here wraps the model functions of one group in thin, contracted functions: the
preconditions say what the function may assume, the postconditions state the invariants, and each
contract's description starts with the invariant's ID.  The model's tests and the registry of
invalid candidates (:mod:`sessionlog_spec.suite.agent.candidates`) call these wrappers, so every such
call checks the rules, and CrossHair searches the small ones for counterexamples.  The suite's
oracle calls the model functions themselves: a conformance run's cost does not include the checks.

Set ``SESSIONLOG_CONTRACTS=0`` to call the model without the checks (for benchmarks).
"""

from __future__ import annotations

import os

ENABLED = os.environ.get("SESSIONLOG_CONTRACTS", "1") != "0"
