"""Keyless ACP snapshot harness for the seqlog Python port.

A scripted agent (:mod:`acp_snapshots.agent`) speaks the Agent Client Protocol over stdio, logs every
session through seqlog and answers from a scripted model, so no API key is needed.  A recording
client (:mod:`acp_snapshots.client`) drives the scenarios of :mod:`acp_snapshots.scenarios` through a real ACP
connection and writes fixtures under ``fixtures/acp/<scenario>/``; :mod:`acp_snapshots.replay` rebuilds
every model request from a fixture's log and compares it with what the transcript shows was sent.

Run ``python -m acp_snapshots record|replay|refresh``.
"""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES_DIR = REPO_ROOT / "fixtures" / "acp"
"""Where ``record`` writes and ``replay`` reads: one directory per scenario."""

MODEL_REQUEST_METHOD = "sessionlog/model_request"
"""The ACP extension notification (sent as ``_sessionlog/model_request``) recording each model request."""
SESSION_LOADED_METHOD = "sessionlog/session_loaded"
"""The ACP extension notification reporting what loading a stored session repaired."""
