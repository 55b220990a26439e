"""Replay: rebuild every model request from a fixture's stored log and compare it with the transcript.

The log is read twice, independently: through seqlog's store (``seqlog.read_session``) and through
the reference model (``sessionlog_spec.model.load.load_session``).  The k-th request the agent reported answers
to the k-th ``assistant/message`` of the log, so it was sent when the log held exactly the events
before that message.  At that point each reading must give

* the header in force: the canonical latest ``request/header`` snapshot (nothing else);
* the messages: the surface projected (user/message → data, assistant/message → message unless
  its content is empty, tool/result → message);

and both must equal what the transcript shows was sent.  The ``request/header`` written inside the
request's step must be the one the agent reported writing.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import seqlog
from acp_snapshots.fixtures import EVENTS, model_requests, read_transcript
from acp_snapshots.requests import ModelRequest, project_surface
from seqlog.event import encode_event as seqlog_encode_event
from sessionlog_spec.model.event import encode_event as model_encode_event
from sessionlog_spec.model.header import fold_request_header as model_fold_header
from sessionlog_spec.model.json_value import thaw as model_thaw
from sessionlog_spec.model.load import load_session
from sessionlog_spec.model.surface import fold_surface as model_fold_surface
from sessionlog_spec.model.violation import Violation


@dataclass(frozen=True, slots=True)
class Reconstructed:
    """A request as the log says it was: header in force and messages."""

    header: Any
    messages: list[Any]

    def to_json(self) -> dict[str, Any]:
        return {"header": self.header, "messages": self.messages}


@dataclass(frozen=True, slots=True)
class LogView:
    """One reading of the stored log: its events as plain JSON, and how to rebuild a request at a prefix."""

    name: str
    events: list[dict[str, Any]]
    rebuild: Callable[[int], Reconstructed]


def _canonical_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _pretty(value: Any) -> list[str]:
    return [line + "\n" for line in json.dumps(value, ensure_ascii=False, indent=2).splitlines()]


def seqlog_view(directory: Path) -> LogView | str:
    """The log read through seqlog's store, or why it could not be."""
    try:
        loaded = seqlog.read_session(directory)
    except seqlog.SeqlogError as error:
        return f"seqlog refused {directory / EVENTS}: {error}"
    if loaded.closers:
        return f"seqlog: the log is open; loading it appends {len(loaded.closers)} repair closers"
    events = list(loaded.session.events)

    def rebuild(length: int) -> Reconstructed:
        prefix = events[:length]
        nodes = seqlog.fold_surface(prefix).nodes
        header = seqlog.fold_request_header(prefix)
        messages = project_surface((prefix[n].type, seqlog.thaw(prefix[n].data)) for n in nodes)
        return Reconstructed(None if header is None else seqlog.thaw(header), messages)

    return LogView("seqlog", [seqlog_encode_event(e) for e in events], rebuild)


def model_view(directory: Path) -> LogView | str:
    """The log read through the reference model, or why it could not be."""
    loaded = load_session((directory / EVENTS).read_text())
    if isinstance(loaded, Violation):
        return f"the model refused {directory / EVENTS}: {loaded.code}: {loaded.message}"
    if loaded.closers:
        return f"model: the log is open; loading it appends {len(loaded.closers)} repair closers"
    events = loaded.state.events

    def rebuild(length: int) -> Reconstructed:
        prefix = events[:length]
        folded = model_fold_surface(prefix)
        if isinstance(folded, Violation):
            raise AssertionError(f"model fold_surface refused a loaded log: {folded}")
        header = model_fold_header(prefix)
        messages = project_surface((prefix[n].type, model_thaw(prefix[n].data)) for n in folded.surface.nodes)
        return Reconstructed(None if header is None else model_thaw(header), messages)

    return LogView("model", [model_encode_event(e) for e in events], rebuild)


def _header_event_problem(events: Sequence[dict[str, Any]], request: ModelRequest) -> str | None:
    """The ``request/header`` inside the request's step must be the one the agent reported writing."""
    step_start = max(
        (i for i, e in enumerate(events[: request.log_length]) if e["type"] == "step/start"),
        default=-1,
    )
    written = [e for e in events[step_start + 1 : request.log_length] if e["type"] == "request/header"]
    logged = None
    if len(written) > 1:
        return f"{len(written)} request/header events in one step"
    if written:
        data = written[0]["data"]
        logged = {"seq": written[0]["seq"], "reason": data["reason"]}
        if data.get("startsSeries") is True:
            logged["startsSeries"] = True
    if logged != request.header_event:
        return f"the log's request/header for this request is {logged}, the agent reported {request.header_event}"
    return None


def replay_fixture(directory: Path) -> list[str]:
    """Every disagreement between a fixture's log and its transcript; empty when replay passes."""
    views: list[LogView] = []
    problems: list[str] = []
    for read in (seqlog_view, model_view):
        view = read(directory)
        if isinstance(view, str):
            problems.append(view)
        else:
            views.append(view)
    if problems:
        return problems
    seqlog_events, model_events = views[0].events, views[1].events
    if _canonical_json(seqlog_events) != _canonical_json(model_events):
        problems.append("seqlog and the model read different events:\n" + _diff(seqlog_events, model_events, "seqlog", "model"))
    events = model_events
    requests = model_requests(read_transcript(directory))
    answered = [e["seq"] for e in events if e["type"] == "assistant/message"]
    sent_at = [r.log_length for r in requests]
    if answered != sent_at:
        problems.append(
            f"the transcript has {len(requests)} model requests sent at log lengths {sent_at}; "
            f"the log answers requests at seqs {answered}"
        )
        return problems
    for index, request in enumerate(requests, start=1):
        label = f"request {index} (turn {request.turn}, step {request.step})"
        answer = events[request.log_length]["data"]
        if (answer["turn"], answer["step"]) != (request.turn, request.step):
            problems.append(f"{label}: its answer in the log is turn {answer['turn']} step {answer['step']}")
        problem = _header_event_problem(events, request)
        if problem is not None:
            problems.append(f"{label}: {problem}")
        sent = {"header": request.header, "messages": request.messages}
        for view in views:
            rebuilt = view.rebuild(request.log_length).to_json()
            if _canonical_json(rebuilt) != _canonical_json(sent):
                diff = _diff(sent, rebuilt, "sent (transcript)", f"rebuilt from the log ({view.name})")
                problems.append(f"{label}: the log does not reconstruct what was sent:\n{diff}")
    return problems


def _diff(a: Any, b: Any, a_name: str, b_name: str) -> str:
    return "".join(difflib.unified_diff(_pretty(a), _pretty(b), fromfile=a_name, tofile=b_name, n=4))


def request_count(directory: Path) -> int:
    """How many model requests a fixture's transcript records."""
    return len(model_requests(read_transcript(directory)))
