"""The released upstream rules as an oracle for what the suite itself generates.

:mod:`released_oracle.check_generated` samples every generator of valid sessions the suite has
(the agent loop and its actions, the conformance machines, the vector drafts, crash repair, the
invalid candidates' valid bases, the ACP harness fixtures) and asks the published
``@deepseek-ai/dsh-session-format-v0-to-v1`` package, through ``oracle.mjs``, whether each event's
payload and each whole log's relationships are valid by the released v1 rules.

Run ``python -m released_oracle.check_generated`` for a per-type report.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
ORACLE_SCRIPT = HERE / "oracle.mjs"
"""The Node side: one process answering JSON lines (see its header comment)."""
PACKAGE_DIR = REPO_ROOT / "ports" / "dsh-format" / "node_modules" / "@deepseek-ai" / "dsh-session-format-v0-to-v1"
"""The published package, as ``ports/dsh-format`` pins it (``cd ports/dsh-format && npm ci``)."""
FORMAT_DRIVER = REPO_ROOT / "ports" / "dsh-format" / "driver.mjs"
"""The sessionlog-driver/1 driver over the same package: its ``upgrade_v0`` and ``read`` ops judge v0 logs and stored texts."""
