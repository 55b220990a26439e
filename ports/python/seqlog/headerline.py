"""The session header line: the first line of every stored log, naming the session and its format version."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seqlog.errors import Code, SeqlogError
from seqlog.jsonvalue import is_nonempty_string, is_safe_natural, lossless_problem

FORMAT_VERSION = 1
"""The format this library writes."""
LEGACY_VERSION = 0
"""The one older format it reads, through the v0-to-v1 edge."""

HEADER_LINE_KEYS = frozenset(
    {"type", "version", "id", "createdAt", "cwd", "parentSession", "seedLength", "origin", "delegationDepth", "agentPreset"}
)


def check_header_line(header: Mapping[str, Any]) -> None:
    """Refuse a session header line that does not name the session and its format version."""
    problems = []
    if header.get("type") != "session":
        problems.append('type must be "session"')
    if not HEADER_LINE_KEYS.issuperset(header):
        problems.append(f"unknown member(s) {sorted(set(header) - HEADER_LINE_KEYS)}")
    if not is_safe_natural(header.get("version")):
        problems.append("version must be a non-negative integer")
    if not is_nonempty_string(header.get("id")):
        problems.append("id must be a non-empty string")
    if not is_safe_natural(header.get("createdAt")):
        problems.append("createdAt must be a non-negative safe integer")
    cwd = header.get("cwd")
    if cwd is not None and not (isinstance(cwd, str) and cwd.startswith("/")):
        problems.append("cwd must be an absolute path")
    for key in ("seedLength", "delegationDepth"):
        if key in header and not is_safe_natural(header[key]):
            problems.append(f"{key} must be a non-negative integer")
    for key in ("parentSession", "agentPreset"):
        if key in header and not is_nonempty_string(header[key]):
            problems.append(f"{key} must be a non-empty string")
    if "origin" in header and header["origin"] != "subagent":
        problems.append('origin must be "subagent"')
    if lossless_problem(header) is not None:
        problems.append("is not lossless JSON")
    if problems:
        raise SeqlogError(Code.JSONL_HEADER_INVALID, "line 1: session header " + "; ".join(problems))
