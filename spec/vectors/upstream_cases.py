"""Upstream's own test assertions for the v0-to-v1 edge and the released v1 validators, put to the model.

The cases in ``upstream/*.json`` are the calls upstream's spec files
(``packages/session/session-format-v0-to-v1/tests/*.spec.ts`` of zsagi1368/deepseek-harness-zDSH)
make to the published ``@deepseek-ai/dsh-session-format-v0-to-v1`` build, each with upstream's
outcome, which is exactly what the test asserted (``upstream/README.md`` says how they were
captured).  Each case's ``op`` is put to the model as the same question:

==============================  ===================================================================
upstream op                     model
==============================  ===================================================================
restore_v0_to_v1, restore_v1    the stored text (header line and rows, one JSON line each) through
                                :func:`~sessionlog_spec.model.jsonl.decode_jsonl` and
                                :func:`~sessionlog_spec.model.load.read_log` (the v0 edge when the
                                header says v0); ``strict`` recovery also refuses a text the reader
                                would cut short at a faulty row
assert_v1_artifact,             the artifact's logical header as a header line, then
assert_v1_migration_source,     :func:`~sessionlog_spec.model.jsonl.header_line_problem`, version 1,
assert_artifact_relationships,  the seed length, and :func:`~sessionlog_spec.model.session.fold_session`
restore_released_v1_artifact    over the events
assert_normalized_v0_artifact   the same with version 0 (the events are already normalised)
assert_v0_source_artifact       version 0, then each event through the edge's per-event conversion
assert_v1_physical_artifact     version 1, then each event's envelope
                                (:func:`~sessionlog_spec.model.event.decode_event`) at its position
assert_event_payload            :func:`sessionlog_spec.model.payloads.payload_problem`
assert_surface_metadata         the envelope (``decode_event``); the v2 policy ``forbid-assistant``
                                has no model counterpart
migrate_header                  :func:`~sessionlog_spec.model.legacy.upgrade_v0` of the header with
                                no events
stage_transform_event / _run    the edge's per-event conversion (``legacy._Conversion.event``, the
                                model's counterpart of a migration stage), fed the stage's earlier
                                events first
decode_header, decode_rows      the header line's rules and the codec's version, then the reader's
                                row loop (:class:`~sessionlog_spec.model.jsonl.RowScanner`) over the
                                rows; ``finish`` adds the seed-length rule
==============================  ===================================================================

A translation that cannot express its input (a logical header whose ``isSeeded`` is not a
boolean, an unseeded artifact with inherited events) answers "refused" and says so.  A question
whose model function does not exist (yet) is answered ``None``: "model op missing".

``known-disagreements.json`` lists every case the model answers differently, with its cause;
``tests/upstream/test_upstream_assertions.py`` holds the answers to it.  Run as a module for the
counts, or with ``--write-known`` to rewrite the list (existing causes are kept)::

    .venv/bin/python -m sessionlog_spec.vectors.upstream_cases [--write-known] [--show CAUSE]
"""

from __future__ import annotations

import argparse
import importlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sessionlog_spec.model import legacy
from sessionlog_spec.model.event import decode_event, encode_event
from sessionlog_spec.model.json_value import json_equal, thaw
from sessionlog_spec.model.jsonl import (
    RowScanner,
    decode_jsonl,
    encode_line,
    header_line_problem,
    seed_length_problem,
)
from sessionlog_spec.model.legacy import StoredLog, upgrade_v0
from sessionlog_spec.model.load import read_log
from sessionlog_spec.model.rows import Record
from sessionlog_spec.model.session import fold_session
from sessionlog_spec.model.violation import Violation

HERE = Path(__file__).resolve().parent / "upstream"
KNOWN_FILE = HERE / "known-disagreements.json"
FORMAT = "sessionlog-upstream-assertions/1"
KNOWN_FORMAT = "sessionlog-upstream-disagreements/1"
CAUSES = ("payload", "relationship", "edge normalisation", "invented rule", "physical format", "other")
"""Why the model answers a case differently (the ``cause`` of a known disagreement):

* payload: a payload shape rule (``payload_problem``, or the payload checks a fold runs) differs;
* relationship: a whole-log rule between events (trace, tools, retries, compaction, titles, ...);
* edge normalisation: the v0-to-v1 conversion refuses or rewrites differently;
* invented rule: the model refuses what upstream's tests accept, under a rule upstream lacks;
* physical format: header lines, rows, packed runs, ranges, recovery;
* other: the questions differ (a v1 input to the v0 edge, a future vocabulary, ...).
"""

Json = Any
Key = tuple[str, str, int]


@dataclass(frozen=True, slots=True)
class UpstreamCase:
    """One captured call: its input and upstream's outcome, which is what the test asserted."""

    source: str
    test: str
    index: int
    op: str
    input: Mapping[str, Json]
    expected: Mapping[str, Json]

    @property
    def key(self) -> Key:
        return (self.source, self.test, self.index)

    @property
    def accepted(self) -> bool:
        return bool(self.expected["accepted"])


@dataclass(frozen=True, slots=True)
class Answer:
    """The model's answer: accepted with an output, refused with a reason, or ``None`` (no model op)."""

    accepted: bool | None
    detail: str = ""
    output: Json = None
    has_output: bool = False


def accept(output: Json = None, has_output: bool = True) -> Answer:
    return Answer(True, output=output, has_output=has_output)


def refuse(reason: Violation | str) -> Answer:
    return Answer(False, str(reason) if isinstance(reason, str) else f"{reason.code}: {reason.message}")


MISSING = "model op missing"


@dataclass(frozen=True, slots=True)
class Verdict:
    """One case judged: ``kind`` is ``agree`` or how the answers differ."""

    case: UpstreamCase
    answer: Answer
    kind: str

    @property
    def agrees(self) -> bool:
        return self.kind == "agree"


# ---- loading ---------------------------------------------------------------------------------------


def capture_files(directory: Path = HERE) -> list[Path]:
    """The capture files, one per upstream spec file."""
    return sorted(p for p in directory.glob("*.json") if p.name != KNOWN_FILE.name)


def load_cases(directory: Path = HERE) -> list[UpstreamCase]:
    """Every captured case, in file and capture order."""
    cases = []
    for path in capture_files(directory):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            raise ValueError(f"{path.name}: not a {FORMAT} file")
        for raw in data["cases"]:
            cases.append(UpstreamCase(raw["source"], raw["test"], raw["index"], raw["op"], raw["input"], raw["expected"]))
    return cases


# ---- translations ----------------------------------------------------------------------------------


def header_line(logical: Json, inherited: Json) -> dict[str, Json] | str:
    """The header line a logical header (``isSeeded``) and its inherited event count stand for.

    Every other member is carried over as it is, so the header line rules judge it.
    """
    if not isinstance(logical, dict):
        return "translation: the logical header is not an object"
    seeded = logical.get("isSeeded")
    if not isinstance(seeded, bool):
        return "translation: no header line says isSeeded " + json.dumps(seeded)
    if not seeded and inherited != 0:
        return f"translation: an unseeded header line has no inherited events (inheritedEventCount {json.dumps(inherited)})"
    line: dict[str, Json] = {"type": "session"}
    line.update((key, value) for key, value in logical.items() if key != "isSeeded")
    if seeded:
        line["seedLength"] = inherited
    return line


def logical_header(line: Mapping[str, Json]) -> dict[str, Json]:
    """The logical header a codec decodes from a header line."""
    out = {key: thaw(value) for key, value in line.items() if key not in ("type", "seedLength")}
    out["isSeeded"] = "seedLength" in line
    return out


def stored_text(header: Json, rows: Sequence[Json]) -> str:
    """A stored log whose lines are the header and the rows."""
    return "".join(encode_line(value) + "\n" for value in (header, *rows))


def plain(value: object) -> Json:
    """A JSON copy of a model value (frozen mappings and tuples included)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def header_problem(line: Json, version: int) -> str | None:
    """The header line rules, then the exact version the question is about."""
    if not isinstance(line, dict):
        return "the header line is not an object"
    problem = header_line_problem(line)
    if problem is not None:
        return f"{problem.code}: {problem.message}"
    if line.get("version") != version or isinstance(line.get("version"), bool):
        return f"the header line is not format v{version}"
    return None


# ---- the questions ---------------------------------------------------------------------------------


def _restore(case: UpstreamCase) -> Answer:
    header, rows, recovery = case.input["header"], case.input["rows"], case.input["recovery"]
    text = stored_text(header, rows)
    decoded = decode_jsonl(text)
    if isinstance(decoded, Violation):
        return refuse(decoded)
    if recovery == "strict" and decoded.dropped_from_line is not None:
        return refuse(f"strict recovery: line {decoded.dropped_from_line} is faulty (the reader would drop it)")
    read = read_log(text)
    if isinstance(read, Violation):
        return refuse(read)
    return accept({"header": thaw(read.header), "events": [encode_event(e) for e in read.state.events]})


def _artifact_log(artifact: Json, version: int) -> tuple[dict[str, Json], list[Json]] | str:
    if not isinstance(artifact, dict) or not isinstance(artifact.get("events"), list):
        return "translation: the artifact is not {header, inheritedEventCount, events}"
    line = header_line(artifact.get("header"), artifact.get("inheritedEventCount"))
    if isinstance(line, str):
        return line
    problem = header_problem(line, version)
    if problem is not None:
        return problem
    events: list[Json] = artifact["events"]
    seed = seed_length_problem(line, len(events))
    if seed is not None:
        return f"{seed.code}: {seed.message}"
    return line, events


def _fold_artifact(version: int) -> Callable[[UpstreamCase], Answer]:
    def ask(case: UpstreamCase) -> Answer:
        log = _artifact_log(case.input["artifact"], version)
        if isinstance(log, str):
            return refuse(log)
        state = fold_session(log[1])
        return refuse(state) if isinstance(state, Violation) else accept(has_output=False)

    return ask


def _converter(header: Json, session_id: Json) -> Callable[[object, int], Mapping[str, Json] | Violation] | None:
    """The edge's per-event conversion (the model's migration stage), when the model has one."""
    factory = getattr(legacy, "_Conversion", None)
    if factory is None or not isinstance(session_id, str):
        return None
    convert: Callable[[object, int], Mapping[str, Json] | Violation] = factory(header, session_id).event
    return convert


def _position(event: Json) -> int:
    """Where a stage question's event sits: its own seq (a stage has no log to count positions in)."""
    seq = event.get("seq") if isinstance(event, dict) else None
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else 0


def _convert_all(convert: Callable[[object, int], Mapping[str, Json] | Violation], events: Iterable[Json]) -> Answer:
    out = []
    for event in events:
        converted = convert(event, _position(event))
        if isinstance(converted, Violation):
            return refuse(converted)
        out.append(plain(converted))
    return accept(out)


def _v0_source_artifact(case: UpstreamCase) -> Answer:
    log = _artifact_log(case.input["artifact"], 0)
    if isinstance(log, str):
        return refuse(log)
    convert = _converter(log[0], log[0].get("id"))
    if convert is None:
        return Answer(None, f"{MISSING}: no per-event v0 conversion")
    answer = _convert_all(convert, log[1])
    return answer if not answer.accepted else accept(has_output=False)


def _v1_physical_artifact(case: UpstreamCase) -> Answer:
    log = _artifact_log(case.input["artifact"], 1)
    if isinstance(log, str):
        return refuse(log)
    for index, raw in enumerate(log[1]):
        event = decode_event(raw)
        if isinstance(event, Violation):
            return refuse(event)
        if event.seq != index:
            return refuse(f"event {index} has seq {event.seq}")
    return accept(has_output=False)


def _payload_problem() -> Callable[[str, Json, int, int], str | None] | None:
    try:
        module = importlib.import_module("sessionlog_spec.model.payloads")
    except ImportError:
        return None
    found: Callable[[str, Json, int, int], str | None] | None = getattr(module, "payload_problem", None)
    return found


def _event_payload(case: UpstreamCase) -> Answer:
    problem_of = _payload_problem()
    if problem_of is None:
        return Answer(None, f"{MISSING}: sessionlog_spec.model.payloads.payload_problem")
    event, version = case.input["event"], case.input["version"]
    problem = problem_of(event["type"], event["data"], event["seq"], version)
    return accept(has_output=False) if problem is None else refuse(problem)


def _surface_metadata(case: UpstreamCase) -> Answer:
    if case.input["assistantSources"] != "allow-empty-assistant":
        return Answer(None, f"{MISSING}: the released-v2 surface metadata policy")
    event = decode_event(case.input["record"])
    return refuse(event) if isinstance(event, Violation) else accept(has_output=False)


def _migrate_header(case: UpstreamCase) -> Answer:
    line = header_line(case.input["header"], 0)
    if isinstance(line, str):
        return refuse(line)
    upgraded = upgrade_v0(StoredLog(line, ()))
    if isinstance(upgraded, Violation):
        return refuse(upgraded)
    return accept(logical_header(upgraded.header))


def _stage(case: UpstreamCase) -> Answer:
    stage = case.input["stage"]
    source = stage["sourceHeader"]
    line = header_line(source, stage["sourceInheritedEventCount"])
    if isinstance(line, str):
        return refuse(line)
    convert = _converter(line, source.get("id") if isinstance(source, dict) else None)
    if convert is None:
        return Answer(None, f"{MISSING}: no per-event v0 conversion")
    for earlier in case.input["history"]:
        convert(earlier["event"], _position(earlier["event"]))
    events = case.input["run"]["events"] if case.op == "stage_transform_run" else [case.input["event"]]
    return _convert_all(convert, events)


def _decode_header(case: UpstreamCase) -> Answer:
    header = case.input["header"]
    problem = header_problem(header, case.input["codecVersion"])
    return refuse(problem) if problem is not None else accept(logical_header(header))


def _decode_rows(case: UpstreamCase) -> Answer:
    header, rows = case.input["header"], case.input["rows"]
    problem = header_problem(header, case.input["codecVersion"])
    if problem is not None:
        return refuse(problem)
    kept: list[Record] = []
    scanner = RowScanner(lambda event, _line: kept.append(event))
    before = 0
    for number, row in enumerate(rows, start=2):
        before = len(kept)
        refused = scanner.feed(number, encode_line(row))
        if refused is not None:
            return refuse(refused)
        if case.input["recovery"] == "strict" and scanner.issue is not None:
            return refuse(scanner.issue)
    if case.input["finish"]:
        seed = seed_length_problem(header, scanner.count)
        return refuse(seed) if seed is not None else accept({"inheritedEventCount": header.get("seedLength", 0)})
    return accept(plain(kept[before:]) if rows else [])


QUESTIONS: dict[str, Callable[[UpstreamCase], Answer]] = {
    "restore_v0_to_v1": _restore,
    "restore_v1": _restore,
    "assert_v1_artifact": _fold_artifact(1),
    "assert_v1_migration_source": _fold_artifact(1),
    "assert_artifact_relationships": _fold_artifact(1),
    "restore_released_v1_artifact": _fold_artifact(1),
    "assert_normalized_v0_artifact": _fold_artifact(0),
    "assert_v0_source_artifact": _v0_source_artifact,
    "assert_v1_physical_artifact": _v1_physical_artifact,
    "assert_event_payload": _event_payload,
    "assert_surface_metadata": _surface_metadata,
    "migrate_header": _migrate_header,
    "stage_transform_event": _stage,
    "stage_transform_run": _stage,
    "decode_header": _decode_header,
    "decode_rows": _decode_rows,
}


def restored_output(case: UpstreamCase) -> Json:
    """Upstream's output in the model's terms: an artifact becomes ``{header line, events}``."""
    output: Json = case.expected.get("output")
    if case.op in ("restore_v0_to_v1", "restore_v1"):
        return {"header": header_line(output["header"], output["inheritedEventCount"]), "events": output["events"]}
    return output


def ask_model(case: UpstreamCase) -> Answer:
    """The model's answer to the question a case asks."""
    question = QUESTIONS.get(case.op)
    if question is None:
        return Answer(None, f"{MISSING}: no model counterpart for {case.op}")
    return question(case)


def judge(case: UpstreamCase) -> Verdict:
    """The case put to the model and compared with upstream's outcome."""
    answer = ask_model(case)
    if answer.accepted is None:
        kind = MISSING
    elif answer.accepted != case.accepted:
        kind = "model refuses, upstream accepts" if case.accepted else "model accepts, upstream refuses"
    elif answer.accepted and answer.has_output and not json_equal(answer.output, restored_output(case)):
        kind = "outputs differ"
    else:
        kind = "agree"
    return Verdict(case, answer, kind)


def judge_all(cases: Iterable[UpstreamCase] | None = None) -> list[Verdict]:
    return [judge(case) for case in (load_cases() if cases is None else cases)]


# ---- causes ----------------------------------------------------------------------------------------

_EDGE_OPS = frozenset({"migrate_header", "stage_transform_event", "stage_transform_run", "assert_v0_source_artifact"})
_FORMAT_OPS = frozenset({"decode_header", "decode_rows"})
_OTHER_QUESTIONS = frozenset({"migrate_header", "restore_released_v1_artifact"})
"""Questions the model answers under another contract: the edge is a fixed point on v1 headers
(``upgrade_v0``), and the model's vocabulary is fixed where upstream takes one from the caller."""
_REGION_CAUSES = {
    "payload-validation": "payload",
    "relationships": "relationship",
    "migration": "edge normalisation",
    "codec": "physical format",
}


def _thrown_by(case: UpstreamCase) -> list[str]:
    """Upstream's refusing frames, innermost first, without the generic helpers."""
    frames = [str(f) for f in case.expected.get("thrown_by") or []]
    helpers = ("validation-helpers:", "format/json:", "format/error:")
    return [f for f in frames if not f.startswith(helpers)] or frames


def draft_cause(verdict: Verdict) -> str:
    """A first classification of a disagreement (``known-disagreements.json`` may refine it)."""
    case = verdict.case
    if verdict.kind == MISSING:
        return "payload" if case.op == "assert_event_payload" else "other"
    if case.op in _OTHER_QUESTIONS:
        return "other"
    if verdict.kind == "outputs differ":
        return "physical format" if case.op in _FORMAT_OPS else "edge normalisation"
    if verdict.kind == "model refuses, upstream accepts":
        if case.op in _FORMAT_OPS:
            return "physical format"
        legacy_code = verdict.answer.detail.startswith("LEGACY_")
        return "edge normalisation" if (case.op in _EDGE_OPS or _is_v0(case)) and legacy_code else "invented rule"
    if case.op == "assert_event_payload":
        return "payload"
    for frame in _thrown_by(case):
        region, _, function = frame.partition(":")
        if region in _REGION_CAUSES:
            return _REGION_CAUSES[region]
        if region == "validation":
            return "payload" if function == "assertReleasedEventPayload" else "physical format"
    return "other"


def _is_v0(case: UpstreamCase) -> bool:
    header = case.input.get("header")
    return case.op == "restore_v0_to_v1" and isinstance(header, dict) and header.get("version") == 0


def describe(verdict: Verdict) -> str:
    """One line: how the answers differ."""
    case = verdict.case
    upstream = "accepts" if case.accepted else f"refuses: {case.expected.get('error')}"
    model = verdict.answer.detail or ("accepts" if verdict.answer.accepted else "refuses")
    if verdict.kind == "outputs differ":
        model = "accepts with another output"
    return f"{verdict.kind}; upstream {upstream}; model {model}"


# ---- the known disagreements -----------------------------------------------------------------------


def key_of(entry: Mapping[str, Json]) -> Key:
    return (str(entry["source"]), str(entry["test"]), int(entry["index"]))


def load_known(path: Path = KNOWN_FILE) -> dict[Key, Mapping[str, Json]]:
    """The listed disagreements by key (none when the file does not exist)."""
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("format") != KNOWN_FORMAT:
        raise ValueError(f"{path.name}: not a {KNOWN_FORMAT} file")
    return {key_of(entry): entry for entry in data["disagreements"]}


def known_entries(verdicts: Sequence[Verdict], previous: Mapping[Key, Mapping[str, Json]]) -> list[dict[str, Json]]:
    """The list for the current disagreements: a case already listed keeps its cause and reason."""
    entries = []
    for verdict in verdicts:
        if verdict.agrees:
            continue
        case = verdict.case
        old = previous.get(case.key)
        cause = str(old["cause"]) if old is not None else draft_cause(verdict)
        why = str(old["why"]) if old is not None else describe(verdict)
        entries.append({"source": case.source, "test": case.test, "index": case.index, "op": case.op, "cause": cause, "why": why})
    return entries


def write_known(entries: Sequence[Mapping[str, Json]], path: Path = KNOWN_FILE) -> None:
    counts = Counter(str(e["cause"]) for e in entries)
    head = {
        "format": KNOWN_FORMAT,
        "description": "Upstream assertion cases the model answers differently, with the cause; "
        "tests/upstream/test_upstream_assertions.py requires this list to be exact.",
        "causes": {cause: counts.get(cause, 0) for cause in CAUSES},
    }
    lines = [f"  {json.dumps(dict(e), ensure_ascii=False)}" for e in entries]
    body = ",\n".join(f' {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}' for k, v in head.items())
    text = "{\n" + body + ',\n "disagreements": [\n' + ",\n".join(lines) + ("\n ]\n}\n" if lines else " ]\n}\n")
    path.write_text(text, encoding="utf-8")


# ---- the command -----------------------------------------------------------------------------------


def summary(verdicts: Sequence[Verdict], known: Mapping[Key, Mapping[str, Json]]) -> str:
    rows = []
    by_source: dict[str, list[Verdict]] = {}
    for verdict in verdicts:
        by_source.setdefault(verdict.case.source, []).append(verdict)
    for source, group in by_source.items():
        agree = sum(v.agrees for v in group)
        rows.append(f"{source:32} {len(group):5} cases {agree:5} agree {len(group) - agree:5} disagree")
    total = len(verdicts)
    agree = sum(v.agrees for v in verdicts)
    rows.append(f"{'total':32} {total:5} cases {agree:5} agree {total - agree:5} disagree")
    kinds = Counter(v.kind for v in verdicts if not v.agrees)
    rows.append("by kind: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common()))
    causes = Counter(
        str(known[v.case.key]["cause"]) if v.case.key in known else f"unlisted ({draft_cause(v)})"
        for v in verdicts
        if not v.agrees
    )
    rows.append("by cause: " + ", ".join(f"{k} {n}" for k, n in causes.most_common()))
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--write-known", action="store_true", help="rewrite known-disagreements.json")
    parser.add_argument("--show", metavar="CAUSE", help="print each disagreement of this cause (or 'all')")
    args = parser.parse_args(argv)
    verdicts = judge_all()
    known = load_known()
    if args.write_known:
        entries = known_entries(verdicts, known)
        write_known(entries)
        known = {key_of(e): e for e in entries}
    print(summary(verdicts, known))
    if args.show:
        for verdict in verdicts:
            if verdict.agrees:
                continue
            entry = known.get(verdict.case.key)
            cause = str(entry["cause"]) if entry is not None else draft_cause(verdict)
            if args.show in ("all", cause):
                case = verdict.case
                print(f"[{cause}] {case.source} | {case.test} | {case.index} | {case.op}\n    {describe(verdict)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
