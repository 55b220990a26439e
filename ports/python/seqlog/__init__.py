"""seqlog: the production library for v1 agent session logs.

* :class:`Session`: the log and everything derived from it, grown by validated atomic appends;
* :class:`SurfaceManager` and :func:`fold_surface`: the surface of message events;
* :class:`HeaderWriter` and the header rules: full canonical request-header snapshots;
* :class:`SessionStore`: durable JSONL (optionally zstd) storage, one directory per session;
* :func:`load_bytes` / :func:`read_bytes`: the reader of the released on-disk form (packed chunk
  rows, range-encoded provenance, recovery of an uncommitted damaged suffix);
* :func:`upgrade_v0`: the v0-to-v1 edge;
* :class:`SeqlogError`: every refusal, with a stable :class:`Code`.
"""

from __future__ import annotations

__version__ = "0.1.0"

from seqlog.codec import LoadedLog, ReadLog, encode_jsonl, load_bytes, load_text, read_bytes, read_text
from seqlog.errors import Code, LibCode, SeqlogError
from seqlog.event import APPEND, Append, Event, Replace, SurfaceOp
from seqlog.header import (
    HeaderDecision,
    HeaderWriter,
    InstanceFacts,
    Reason,
    canonical_header,
    decide_request_header,
    fold_request_header,
    header_equals,
)
from seqlog.jsonvalue import FrozenObject, JsonValue, freeze, thaw
from seqlog.legacy import StoredLog, upgrade_v0
from seqlog.repair import interrupted_turn_closers
from seqlog.session import AppendPlan, Session
from seqlog.store import SessionStore, read_session
from seqlog.surface import FoldedSurface, Replacement, SurfaceManager, SurfacePlan, fold_surface

__all__ = [
    "APPEND",
    "Append",
    "AppendPlan",
    "Code",
    "Event",
    "FoldedSurface",
    "FrozenObject",
    "HeaderDecision",
    "HeaderWriter",
    "InstanceFacts",
    "JsonValue",
    "LibCode",
    "LoadedLog",
    "ReadLog",
    "Reason",
    "Replace",
    "Replacement",
    "SeqlogError",
    "Session",
    "SessionStore",
    "StoredLog",
    "SurfaceManager",
    "SurfaceOp",
    "SurfacePlan",
    "__version__",
    "canonical_header",
    "decide_request_header",
    "encode_jsonl",
    "fold_request_header",
    "fold_surface",
    "freeze",
    "header_equals",
    "interrupted_turn_closers",
    "load_bytes",
    "load_text",
    "read_bytes",
    "read_session",
    "read_text",
    "thaw",
    "upgrade_v0",
]
