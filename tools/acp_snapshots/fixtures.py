"""Fixture files: writing a recording, reading it back, a readable summary, and readable diffs.

A fixture directory ``fixtures/acp/<scenario>/`` holds:

* ``transcript.jsonl``: every JSON-RPC message of the run, one per line, as
  ``{"conn": n, "to": "agent"|"client", "msg": …}`` (``conn`` numbers the agent processes), plus
  ``{"conn": n, "note": …}`` lines for what the harness itself did (killing the agent);
* ``events.jsonl``: the session log exactly as seqlog stored it;
* ``summary.md``: a readable digest of both, regenerated on every record.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from acp_snapshots import MODEL_REQUEST_METHOD, SESSION_LOADED_METHOD
from acp_snapshots.client import Recording
from acp_snapshots.requests import ModelRequest
from acp_snapshots.scenarios import Scenario

TRANSCRIPT = "transcript.jsonl"
EVENTS = "events.jsonl"
SUMMARY = "summary.md"
FILES = (TRANSCRIPT, EVENTS, SUMMARY)


def dump_line(value: object) -> str:
    """One readable JSON line: UTF-8 text, spaces after separators, members in their given order."""
    return json.dumps(value, ensure_ascii=False)


def fixture_files(scenario: Scenario, recording: Recording) -> dict[str, bytes]:
    """The contents of every fixture file for one recording."""
    transcript = "".join(dump_line(entry) + "\n" for entry in recording.transcript)
    return {
        TRANSCRIPT: transcript.encode(),
        EVENTS: recording.events,
        SUMMARY: summarize(scenario, recording.transcript, recording.events).encode(),
    }


def write_fixture(directory: Path, files: Mapping[str, bytes]) -> None:
    """Write one fixture directory, replacing the files it had."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        (directory / name).unlink(missing_ok=True)
    for name, content in files.items():
        (directory / name).write_bytes(content)


def read_transcript(directory: Path) -> list[dict[str, Any]]:
    """The transcript entries of a fixture."""
    lines = (directory / TRANSCRIPT).read_text().splitlines()
    return [json.loads(line) for line in lines if line]


def model_requests(transcript: list[dict[str, Any]]) -> list[ModelRequest]:
    """Every model request the agent reported, in order."""
    return [
        ModelRequest.from_json(entry["msg"]["params"])
        for entry in transcript
        if entry.get("to") == "client" and entry["msg"].get("method") == f"_{MODEL_REQUEST_METHOD}"
    ]


# Summary --------------------------------------------------------------------------------------


def _clip(text: str, limit: int = 72) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _describe_request(method: str, params: Any) -> str:
    if method == "session/prompt":
        texts = [b.get("text", "") for b in params.get("prompt", []) if isinstance(b, dict)]
        return f'"{_clip(" ".join(texts))}"'
    if method == "session/set_mode":
        return f"mode {params.get('modeId')}"
    if method == "session/new":
        return f"cwd {params.get('cwd')}"
    if method == "session/load":
        return f"session {params.get('sessionId')}"
    return ""


def _describe_update(update: Mapping[str, Any]) -> str:
    kind = str(update.get("sessionUpdate"))
    if kind in ("agent_message_chunk", "agent_thought_chunk", "user_message_chunk"):
        return f'{kind} "{_clip(str(update.get("content", {}).get("text", "")))}"'
    if kind == "tool_call":
        return f"tool_call {update.get('toolCallId')} {update.get('status')}: {_clip(str(update.get('title')), 60)}"
    if kind == "tool_call_update":
        return f"tool_call_update {update.get('toolCallId')} {update.get('status')}"
    return kind


def _describe_model_request(params: Mapping[str, Any]) -> str:
    request = ModelRequest.from_json(params)
    event = request.header_event
    if event is None:
        header = "header inherited"
    else:
        header = f"header {event['reason']}{' +startsSeries' if event.get('startsSeries') else ''} at seq {event['seq']}"
    tools = ", ".join(t["name"] for t in request.header.get("tools", []))
    count = len(request.messages)
    messages = f"{count} message{'s' if count != 1 else ''}"
    return f"model request turn {request.turn} step {request.step}: {header}; tools [{tools}]; {messages}"


def _transcript_lines(transcript: list[dict[str, Any]]) -> Iterator[str]:
    methods: dict[tuple[int, Any], str] = {}
    connection = 0
    for entry in transcript:
        if entry["conn"] != connection:
            connection = entry["conn"]
            yield f"\n### agent process {connection}\n"
        if "note" in entry:
            yield f"- **harness:** {entry['note']}"
            continue
        msg, arrow = entry["msg"], "→" if entry["to"] == "agent" else "←"
        if "method" in msg:
            method, params = msg["method"], msg.get("params") or {}
            if "id" in msg:
                methods[(connection, msg["id"])] = method
                yield f"- {arrow} `{method}` #{msg['id']} {_describe_request(method, params)}".rstrip()
            elif method == "session/update":
                yield f"- {arrow} {_describe_update(params.get('update', {}))}"
            elif method == f"_{MODEL_REQUEST_METHOD}":
                yield f"- {arrow} **{_describe_model_request(params)}**"
            elif method == f"_{SESSION_LOADED_METHOD}":
                closers = ", ".join(f"{c['seq']} {c['type']}" for c in params.get("closers", []))
                yield f"- {arrow} session loaded: {params.get('events')} events, repair closers included: {closers or 'none'}"
            else:
                yield f"- {arrow} `{method}`"
        else:
            method = methods.get((connection, msg.get("id")), "?")
            outcome = f"error {msg['error'].get('message')}" if "error" in msg else "ok"
            if method == "session/prompt" and "result" in msg:
                outcome = f"stopReason {msg['result'].get('stopReason')}"
            yield f"- {arrow} reply #{msg.get('id')} to `{method}`: {outcome}"


def _describe_event(event: Mapping[str, Any]) -> str:
    data, kind = event["data"], event["type"]
    parts = [f"{event['seq']:>3}", kind]
    if kind in ("turn/start", "turn/end", "step/start", "step/end"):
        parts.append(" ".join(f"{k}={v if not isinstance(v, dict) else v.get('kind')}" for k, v in data.items()))
    elif kind == "request/header":
        tools = ", ".join(t["name"] for t in data["header"].get("tools", []))
        series = " startsSeries" if data.get("startsSeries") else ""
        system = _clip(data["header"].get("system", ""), 40)
        parts.append(f"**{data['reason']}**{series}: system \"{system}\"; tools [{tools}]")
    elif kind in ("user/message", "assistant/message", "tool/result"):
        message = data if kind == "user/message" else data["message"]
        blocks = []
        for block in message["content"]:
            if block["type"] == "tool-call":
                blocks.append(f"call {block['id']} {block['name']}")
            elif block["type"] == "tool-result":
                inner = " ".join(b.get("text", "") for b in block["content"])
                blocks.append(f"{'error ' if block.get('isError') else ''}result \"{_clip(inner, 50)}\"")
            else:
                blocks.append(f"{block['type']} \"{_clip(block.get('text', ''), 50)}\"")
        op = event["surfaceOp"]
        where = "append" if op == "append" else f"replace {op['start']}..{op['end']}"
        cites = f" cites {event['sourceEventSeqs']}" if "sourceEventSeqs" in event else ""
        parts.append(f"[{where}{cites}] " + ("; ".join(blocks) or "(no content)"))
    elif kind == "tool/call":
        parts.append(f"{data['callId']} {data['name']} {_clip(data['arguments'], 50)}")
    else:
        parts.append(_clip(json.dumps(data, ensure_ascii=False), 80))
    return "    " + " ".join(parts)


def summarize(scenario: Scenario, transcript: list[dict[str, Any]], events: bytes) -> str:
    """A readable digest of a recording: the scenario, the conversation, the log."""
    lines = events.decode().splitlines()
    header, records = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
    out = [
        f"# ACP fixture `{scenario.name}`",
        "",
        scenario.description,
        "",
        "Generated by `python -m acp_snapshots record`; do not edit by hand.",
        "",
        "## Transcript (client view)",
        *_transcript_lines(transcript),
        "",
        f"## Session log `{header['id']}` ({len(records)} events)",
        "",
        *(_describe_event(record) for record in records),
        "",
    ]
    return "\n".join(out)


# Diffs ----------------------------------------------------------------------------------------


def _readable(name: str, content: bytes) -> list[str]:
    """Lines to diff: a JSONL line pretty-printed, each printed line prefixed with its JSONL line number,
    so a diff names the line (event or message) and the member that changed."""
    text = content.decode(errors="replace")
    if not name.endswith(".jsonl"):
        return text.splitlines(keepends=True)
    out: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            pretty = json.dumps(json.loads(line), ensure_ascii=False, indent=2)
        except ValueError:
            pretty = line
        out.extend(f"{number:>4}| {part}\n" for part in pretty.splitlines())
    return out


def diff_fixture(name: str, old: Mapping[str, bytes], new: Mapping[str, bytes]) -> str:
    """A unified diff of one fixture's files (old vs new); empty when nothing changed."""
    chunks: list[str] = []
    for file in sorted(set(old) | set(new)):
        before, after = old.get(file), new.get(file)
        if before == after:
            continue
        chunks.extend(
            difflib.unified_diff(
                _readable(file, before or b""),
                _readable(file, after or b""),
                fromfile=f"a/{name}/{file}" if before is not None else "/dev/null",
                tofile=f"b/{name}/{file}" if after is not None else "/dev/null",
                n=3,
            )
        )
    return "".join(chunks)


def read_fixture(directory: Path) -> dict[str, bytes]:
    """The fixture files present in ``directory``."""
    return {name: (directory / name).read_bytes() for name in FILES if (directory / name).exists()}
