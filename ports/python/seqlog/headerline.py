"""The session header line: the first line of every stored log, naming the session and its format version.

Exactly these members, as the released reader reads them:

==================  ========  =====================================================================
member              required  value
==================  ========  =====================================================================
``type``            yes       ``"session"``
``version``         yes       ``0`` or ``1``
``id``              yes       a string
``createdAt``       yes       a non-negative safe integer
``delegationDepth`` yes       a non-negative safe integer (``0`` for a top-level session)
``cwd``             no        an absolute path (a string starting with ``/``)
``parentSession``   no        a string
``seedLength``      no        a non-negative safe integer, at most the number of events read
``origin``          no        ``"subagent"``
``agentPreset``     no        a string
==================  ========  =====================================================================

The version is dispatched first: any other non-negative integer version is refused as unsupported
before anything else is checked, so a newer format never reads as a corrupt one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seqlog.errors import Code, SeqlogError
from seqlog.jsonvalue import is_safe_natural, lossless_problem

FORMAT_VERSION = 1
"""The format this library writes."""
LEGACY_VERSION = 0
"""The one older format it reads, through the v0-to-v1 edge."""
READ_VERSIONS = (LEGACY_VERSION, FORMAT_VERSION)

HEADER_LINE_REQUIRED = ("type", "version", "id", "createdAt", "delegationDepth")
HEADER_LINE_OPTIONAL = ("cwd", "parentSession", "seedLength", "origin", "agentPreset")
HEADER_LINE_KEYS = frozenset(HEADER_LINE_REQUIRED + HEADER_LINE_OPTIONAL)
DEFAULT_DELEGATION_DEPTH = 0


def check_version(header: Mapping[str, Any]) -> None:
    """Refuse a header line declaring a format version this library does not read (checked first)."""
    version = header.get("version")
    if is_safe_natural(version) and version not in READ_VERSIONS:
        raise SeqlogError(Code.FORMAT_VERSION_UNSUPPORTED, f"line 1: format version {version} is not supported")


def check_header_line(header: Mapping[str, Any]) -> None:
    """Refuse a session header line that the released reader does not read.

    ``seedLength`` is only checked here for its type: whether it is at most the number of events
    depends on the log, and the reader checks it once the events are read.
    """
    check_version(header)
    problems = []
    if header.get("type") != "session":
        problems.append('type must be "session"')
    extra = sorted(str(key) for key in header if key not in HEADER_LINE_KEYS)
    if extra:
        problems.append(f"unknown member(s) {extra}")
    missing = [key for key in HEADER_LINE_REQUIRED if key not in header]
    if missing:
        problems.append(f"missing member(s) {missing}")
    if "version" in header and not is_safe_natural(header["version"]):
        problems.append("version must be a non-negative integer")
    if "id" in header and not isinstance(header["id"], str):
        problems.append("id must be a string")
    for key in ("createdAt", "delegationDepth", "seedLength"):
        if key in header and not is_safe_natural(header[key]):
            problems.append(f"{key} must be a non-negative safe integer")
    cwd = header.get("cwd")
    if "cwd" in header and not (isinstance(cwd, str) and cwd.startswith("/")):
        problems.append("cwd must be an absolute path")
    for key in ("parentSession", "agentPreset"):
        if key in header and not isinstance(header[key], str):
            problems.append(f"{key} must be a string")
    if "origin" in header and header["origin"] != "subagent":
        problems.append('origin must be "subagent"')
    if not problems and lossless_problem(header) is not None:
        problems.append("is not lossless JSON")
    if problems:
        raise SeqlogError(Code.JSONL_HEADER_INVALID, "line 1: session header " + "; ".join(problems))


def check_seed_length(header: Mapping[str, Any], events: int) -> None:
    """Refuse a header line whose ``seedLength`` exceeds the number of events the log holds."""
    seed_length = header.get("seedLength")
    if seed_length is not None and seed_length > events:
        raise SeqlogError(
            Code.JSONL_HEADER_INVALID, f"line 1: session header seedLength {seed_length} exceeds the {events} events read"
        )


def with_delegation_depth(header: Mapping[str, Any]) -> dict[str, Any]:
    """``header`` as the writer writes it: ``delegationDepth`` kept when present, else ``0``."""
    if "delegationDepth" in header:
        return dict(header)
    return {**header, "delegationDepth": DEFAULT_DELEGATION_DEPTH}
