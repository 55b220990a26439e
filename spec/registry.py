"""The catalogue of invariants: every rule of the v1 session log, with a stable ID.

Each entry states the rule in a sentence or two, says why it exists and which violation codes
enforce it.  The contracts in :mod:`sessionlog_spec.contracts` carry the IDs in their descriptions, the tests
carry them in their names, and ``invariants.md`` is generated from this catalogue, so a reader can
go from a sentence to its contract and its test with one search.
"""

from __future__ import annotations

from dataclasses import dataclass

from sessionlog_spec.model.violation import Code

GROUP_NAMES = {
    "LOG": "Event envelope, vocabulary and message shapes",
    "PAY": "Event payloads",
    "SURF": "Surface",
    "TRACE": "Turn / step / tool trace",
    "HDR": "Request headers",
    "REPAIR": "Crash repair",
    "COMPACT": "Tool-pairing balance and compaction",
    "JSONL": "JSONL codec",
    "LEGACY": "The v0-to-v1 edge",
    "REL": "Relationships between events",
}


@dataclass(frozen=True, slots=True)
class Invariant:
    """One rule: its ID, statement, reason, and the violation codes that enforce it."""

    id: str
    statement: str
    why: str
    codes: tuple[Code, ...] = ()

    @property
    def group(self) -> str:
        """The group key, e.g. ``SURF`` for ``INV-SURF-3``."""
        return self.id.split("-")[1]

    @property
    def test_token(self) -> str:
        """How tests name this invariant: ``inv_surf_3``."""
        return self.id.lower().replace("-", "_")


def _inv(id_: str, statement: str, why: str, *codes: Code) -> Invariant:
    return Invariant(id_, statement, why, codes)


C = Code
INVARIANTS: tuple[Invariant, ...] = (
    # --- LOG ---------------------------------------------------------------------------------
    _inv(
        "INV-LOG-1",
        "An event is a JSON object whose keys are exactly `type`, `seq`, `time`, `data` plus, optionally, "
        "`ignorable`, `surfaceOp` and `sourceEventSeqs`; `type` is a non-empty string.",
        "A closed envelope means a reader never has to guess what an unknown member meant.",
        C.ENVELOPE_NOT_OBJECT,
        C.ENVELOPE_UNKNOWN_KEY,
        C.ENVELOPE_MISSING_KEY,
        C.ENVELOPE_BAD_TYPE,
    ),
    _inv(
        "INV-LOG-2",
        "`seq` is a non-negative safe integer and `time` a safe integer (magnitude at most 2^53 − 1, not −0).",
        "Every language reads them back exactly; a fractional or huge number would not round-trip. "
        "A time before the epoch is a value the released reader accepts, so the model does too.",
        C.ENVELOPE_BAD_SEQ,
        C.ENVELOPE_BAD_TIME,
    ),
    _inv(
        "INV-LOG-3",
        "`ignorable` is absent or exactly `true`.",
        "The marker has one meaning (an older reader may skip this event); `false` would be a second spelling of absent.",
        C.ENVELOPE_BAD_IGNORABLE,
    ),
    _inv(
        "INV-LOG-4",
        "`data`, `surfaceOp` and `sourceEventSeqs` are lossless JSON: no NaN or ±infinity, no -0, "
        "integers within the safe range, string keys only.  A number is judged by the value its literal writes, "
        "whatever its length: an integer literal outside the safe range is refused however many digits it has, and "
        "one beyond the largest double, which `JSON.parse` (the released reader's parser) reads as ±infinity, is "
        "refused as not finite.  Each of the three nests at most 256 levels (a scalar is at depth 0, an array or "
        "object one level deeper than its deepest member); a deeper value is refused, however deep, and a stored "
        "line that deep is still JSON (as for `JSON.parse`), so its event is refused for its value, not dropped "
        "as malformed.",
        "A log is read by other languages; a value that changes on the way through is silent corruption.  A verdict "
        "never depends on a reader's own limits (such as an interpreter's cap on integer digits, or its stack), so "
        "every reader gives a huge literal and a deep value the same answer, in time linear in its length.  The "
        "released writer's `JSON.stringify` fails somewhere past 4,000 levels, depending on its stack; 256 is far "
        "above any real payload and within every reader's reach.",
        C.JSON_NOT_LOSSLESS,
    ),
    _inv(
        "INV-LOG-5",
        "Seqs are contiguous from 0: the event at index i has seq i, and an append adds exactly one event "
        "at seq = length, leaving the earlier events as they were.",
        "Consumers index `events[seq]` directly; a gap or a duplicate would make every reference ambiguous.",
        C.SEQ_NOT_CONTIGUOUS,
    ),
    _inv(
        "INV-LOG-6",
        "An event's type belongs to the v1 vocabulary, or the event carries `ignorable: true`.",
        "Silently skipping a required event written by a newer harness would rebuild a wrong session.",
        C.UNKNOWN_EVENT_TYPE,
    ),
    _inv(
        "INV-LOG-7",
        "`user/message` data is an identified user message: non-empty `id`, role `user`, a `source` with a "
        "non-empty `kind`, and `content` an array of typed blocks.",
        "The surface replays these messages to the model verbatim; a message without identity cannot be rewritten or cited.",
        C.USER_MESSAGE_INVALID,
    ),
    _inv(
        "INV-LOG-8",
        "`assistant/message` data is `{turn, step, message, usage?, interrupted?: true}` and its message has "
        "role `assistant`, a `model` source naming provider and model, and tool-call blocks with ids and raw "
        "string arguments (a pending id is never advertised twice: INV-REL-2).",
        "Tool pairing counts these blocks and repair answers them by id.",
        C.ASSISTANT_MESSAGE_INVALID,
    ),
    _inv(
        "INV-LOG-9",
        "`tool/result` data is `{turn, step, message, error?, meta?}` whose message has role `user`, a `tool` "
        "source with a `callId`, and exactly one `tool-result` block answering that call id.",
        "A result that answers a different call than it claims breaks the provider's pairing.",
        C.TOOL_RESULT_INVALID,
    ),
    _inv(
        "INV-LOG-10",
        "A seeded session ends its seed with exactly one `session/end-seed` marker (data `{}`, no member) "
        "at seq = seed length, timed like the last seed event, unless the seed already ends with one.",
        "The marker separates inherited history from live appends; writing it twice would move that boundary.",
        C.END_SEED_INVALID,
    ),
    _inv(
        "INV-LOG-11",
        "A rejected candidate (seed, append or load) leaves the session exactly as it was.",
        "Validation and commit are one atomic step; a half-applied event is worse than a refused one.",
    ),
    _inv(
        "INV-LOG-12",
        "An accepted event is stored frozen, and its stored JSON form equals the candidate it came from.",
        "What the log says is what was appended; nothing downstream can change it.",
    ),
    # --- PAY ---------------------------------------------------------------------------------
    _inv(
        "INV-PAY-1",
        "Every event of the v1 vocabulary carries a payload object with exactly its type's members: every required "
        "member present, no member outside the required and optional ones.",
        "The released reader refuses any other member; a port that writes one writes a log upstream cannot read.",
        C.PAYLOAD_INVALID,
    ),
    _inv(
        "INV-PAY-2",
        "Each member has its released shape: nested records exact, leaf types, literals, counts, non-empty strings, "
        "and seqs that name earlier events, as listed in the payload appendix.",
        "A shape the released validator refuses makes the whole log unreadable.",
        C.PAYLOAD_INVALID,
    ),
    _inv(
        "INV-PAY-3",
        "Only the documented discriminants are merge-extensible (content-block `type`, message-source `kind`, "
        "finish-reason `kind`, `turn/end` reason `kind`, and the others the table marks): an unknown variant is kept "
        "as owner-opaque JSON; opaque members (`tool/result.meta`, PTC `arguments`, …) are lossless JSON and never "
        "inspected.",
        "Owners extend these unions without a format change; the log keeps what it cannot interpret.",
    ),
    # --- SURF --------------------------------------------------------------------------------
    _inv(
        "INV-SURF-1",
        "Only `user/message`, `assistant/message` and `tool/result` may carry `surfaceOp` or `sourceEventSeqs`.",
        "Log-only events never reach the model, so surface metadata on them would be meaningless.",
        C.SURFACE_OP_FORBIDDEN,
        C.SOURCES_FORBIDDEN,
    ),
    _inv(
        "INV-SURF-2",
        "Every `user/message`, `assistant/message` and `tool/result` carries a `surfaceOp`.",
        "Whether a message joins or replaces the surface is always explicit, never inferred.",
        C.SURFACE_OP_MISSING,
    ),
    _inv(
        "INV-SURF-3",
        '`surfaceOp` is the string `append` or exactly `{op: "replace", start, end}` with non-negative safe-integer endpoints.',
        "One spelling per operation keeps every reader's fold identical.",
        C.SURFACE_OP_INVALID,
    ),
    _inv(
        "INV-SURF-4",
        "A replace names a range of the current surface: `start` and `end` are both on it, and `start` is not after `end`.",
        "A replacement can only shadow what the model currently sees.",
        C.REPLACE_START_NOT_ON_SURFACE,
        C.REPLACE_END_NOT_ON_SURFACE,
        C.REPLACE_RANGE_INVERTED,
    ),
    _inv(
        "INV-SURF-5",
        "`sourceEventSeqs`, when present, is an array of distinct seqs of earlier events, non-empty except "
        "on `assistant/message` (where empty means a known-empty stream).",
        "Provenance must point backwards at real events, once each.",
        C.SOURCES_INVALID,
        C.SOURCES_EMPTY,
        C.SOURCES_DUPLICATE,
        C.SOURCES_NOT_EARLIER,
    ),
    _inv(
        "INV-SURF-6",
        "A replace cites every surface node it shadows in its `sourceEventSeqs`.",
        "Nothing leaves the model's view without a record of what replaced it.",
        C.SOURCES_MISSING_SHADOWED,
    ),
    _inv(
        "INV-SURF-7",
        "An append puts its seq at the tail of the surface and changes nothing else.",
        "Appends are the common case and must be cheap and predictable.",
    ),
    _inv(
        "INV-SURF-8",
        "A replace removes exactly the nodes from `start` to `end` and puts its own seq in their place.",
        "The replacement stands where the shadowed range stood, so order is preserved.",
    ),
    _inv(
        "INV-SURF-9",
        "Surface nodes are distinct seqs of surface-type events already in the log.",
        "The surface is a view of the log, never a second copy of it.",
    ),
    _inv(
        "INV-SURF-10",
        "The replace generation starts at 0, never decreases, and grows by exactly one per committed replacement.",
        "Caches of derived messages and cut balances detect non-append rewrites by it.",
    ),
    _inv(
        "INV-SURF-11",
        "A `tool/result` replace rewrites exactly one current `tool/result`, and the two differ only in "
        "the content of the tool-result block.  Every path enforces it: `append` and `seed`, and a stored or "
        "converted log on `load`, `read` and `upgrade_v0`, as the released Session's restore does.",
        "A rewrite may shrink an output, never change which call it answers or whether it failed.",
        C.TOOL_REWRITE_SPAN,
        C.TOOL_REWRITE_TARGET,
        C.TOOL_REWRITE_CHANGES,
    ),
    _inv(
        "INV-SURF-12",
        "`fold_surface` of a log equals the surface transition applied event by event, and reports each "
        "replacement with its seq, declared range and the nodes it removed.",
        "The full read and the incremental manager must never disagree.",
    ),
    _inv(
        "INV-SURF-13",
        "A shadowed node never returns to the surface.",
        "Replacement is final; the log keeps the old event, the model never sees it again.",
    ),
    # --- TRACE -------------------------------------------------------------------------------
    _inv(
        "INV-TRACE-1",
        "`turn/start` needs no open turn and numbers turns 1, 2, 3, … without gaps (the v0 edge admits one "
        "released exception, INV-LEGACY-6).",
        "Turns never nest, and their numbers identify them across events.",
        C.TURN_ALREADY_OPEN,
        C.TURN_NUMBER,
    ),
    _inv(
        "INV-TRACE-2",
        "`turn/end` names the open turn and needs no open step.",
        "A turn closes its steps before it closes itself; repair writes them in that order.",
        C.TURN_END_MISMATCH,
        C.STEP_STILL_OPEN,
    ),
    _inv(
        "INV-TRACE-3",
        "A `turn/end` reason has a non-empty `kind`; the released kinds have their exact shapes (completed, "
        "blocked, max-tokens and interrupted alone; aborted with a cause, a `hook` cause with its `reason`; error "
        "with its failure record); any other kind is owner-opaque.",
        "The reason decides how a resumed session continues; the owner of a new kind extends the union without a "
        "format change, as the released validator allows.",
        C.TURN_END_REASON_INVALID,
    ),
    _inv(
        "INV-TRACE-4",
        "`step/start` sits inside the open turn, needs no open step, and numbers steps 1, 2, … within each turn.",
        "Steps are the unit of one model call and its tools.",
        C.STEP_OUTSIDE_TURN,
        C.STEP_ALREADY_OPEN,
        C.STEP_NUMBER,
    ),
    _inv(
        "INV-TRACE-5",
        "`step/end` names the open step of the open turn.",
        "Brackets close in the order they opened.",
        C.STEP_END_MISMATCH,
    ),
    _inv(
        "INV-TRACE-6",
        "Assistant chunks and messages, tool calls and appended tool results name the open turn and step.",
        "Model output and tool traffic belong to exactly one step.",
        C.EVENT_OUTSIDE_STEP,
    ),
    _inv(
        "INV-TRACE-7",
        "`request/header`, `request/context` and tool-result rewrites sit inside an open turn.",
        "Turn-scoped bookkeeping belongs to the turn it happened in.",
        C.EVENT_OUTSIDE_TURN,
    ),
    _inv(
        "INV-TRACE-8",
        "An appended `tool/result` answers a `tool/call` recorded earlier in the same step and not yet "
        "answered, unless it is the synthetic result for a call that never started (`TOOL_NOT_STARTED`).",
        "A result for a call that was never made is a fabricated tool outcome.",
        C.TOOL_RESULT_UNPAIRED,
    ),
    _inv(
        "INV-TRACE-9",
        "Bracket, chunk and tool-call events carry exactly their released members, with turn and step numbers that "
        "are counts (whether they name the open turn and step is INV-TRACE-1..6).",
        "The trace rules read these numbers; a malformed one would make the check meaningless.",
        C.TRACE_DATA_INVALID,
    ),
    _inv(
        "INV-TRACE-10",
        "The open turn and step are always the latest started ones, and a step is open only inside an open turn.",
        "This is the state the other trace rules rely on.",
    ),
    # --- HDR ---------------------------------------------------------------------------------
    _inv(
        "INV-HDR-1",
        "`request/header` data is `{header, reason, startsSeries?: true}`, and its header has only `config`, "
        "`adapterDefaults`, `system` (a string) and `tools` (objects `{name, description, parameters}`).",
        "A full snapshot is the whole request envelope and nothing else; no deltas, no message prefix.",
        C.HEADER_INVALID,
    ),
    _inv(
        "INV-HDR-2",
        "Every header snapshot is pinned: `config` names a non-empty provider and model.",
        "Replaying a request must reach the same model, not whatever is configured today.",
        C.HEADER_NOT_PINNED,
    ),
    _inv(
        "INV-HDR-3",
        "`adapterDefaults` marks only `reasoningEffort` and/or `maxTokens`, each as `true`, each for a config "
        "field that is present.",
        "The marker records that a value came from the adapter's default, so the value itself must be there.",
        C.HEADER_ADAPTER_DEFAULTS_INVALID,
    ),
    _inv(
        "INV-HDR-4",
        "A snapshot's reason is `initial`, `resume`, `change` or `series`.",
        "The reasons are the writer rule's vocabulary; anything else was written by a different rule.",
        C.HEADER_REASON_INVALID,
    ),
    _inv(
        "INV-HDR-5",
        "Stored snapshots are canonical: no empty `system`, no empty `tools`, no `adapterDefaults` without a marker.",
        "One representation per header, so equal headers are stored identically.",
        C.HEADER_NOT_CANONICAL,
    ),
    _inv(
        "INV-HDR-6",
        "Canonicalisation is idempotent and drops exactly the empty system, the empty tool list and a "
        "marker-free adapterDefaults.",
        "Canonical form is a normal form: applying it twice changes nothing.",
    ),
    _inv(
        "INV-HDR-7",
        "Header equality is reflexive and symmetric, ignores the difference between a header and its "
        "canonical form, and compares JSON values (key order does not matter).",
        "The writer rule's `change` decision depends on it.",
    ),
    _inv(
        "INV-HDR-8",
        "The reconstructed request header is the canonical form of the latest snapshot in the log, and the "
        "incrementally tracked header always equals it.",
        "Reconstruction needs no deltas: the latest full snapshot is the header in force.",
    ),
    _inv(
        "INV-HDR-9",
        "The first request of a loop instance writes a snapshot: `initial` on a log without one, `resume` "
        "otherwise, even when unchanged.",
        "Every loop instance anchors what it sends, so a resumed session records its header again.",
    ),
    _inv(
        "INV-HDR-10",
        "A later request whose header differs from the latest snapshot writes `change`, flagged "
        "`startsSeries` exactly when a series begins (declared, or after a surface replacement).",
        "The log must show every header actually sent.",
    ),
    _inv(
        "INV-HDR-11",
        "A later request with an unchanged header writes `series` when a series begins and nothing otherwise.",
        "Ordinary turns, steps and retries inherit the latest snapshot; a series start is still recorded.",
    ),
    _inv(
        "INV-HDR-12",
        "After the writer's decision is applied, the reconstructed header equals the assembled header of the request.",
        "Reconstruction from the log gives exactly what was sent.",
    ),
    # --- REPAIR ------------------------------------------------------------------------------
    _inv(
        "INV-REPAIR-1", "Repair writes nothing when no turn is open at the end of the log.", "A balanced log is already complete."
    ),
    _inv(
        "INV-REPAIR-2",
        "The closers for an open turn are, in order: one error `tool/result` per pending call, `step/end` "
        "if a step is open, and `turn/end` with reason `interrupted`.",
        "The order mirrors a clean shutdown, so the repaired trace is valid.",
    ),
    _inv(
        "INV-REPAIR-3",
        "A closer `tool/result` cites the `tool/call` seq and reports `TOOL_OUTCOME_UNKNOWN` when the call "
        "was recorded as started, and reports `TOOL_NOT_STARTED` with no sources otherwise.",
        "The model must know whether a side effect may already have happened.",
    ),
    _inv(
        "INV-REPAIR-4",
        "Closers continue the seqs from the log's length and reuse the last event's time.",
        "Repair is deterministic: the same crashed log always gets the same bytes.",
    ),
    _inv(
        "INV-REPAIR-5",
        "A repaired log is a valid v1 log, and repairing it again adds nothing.",
        "Repair runs on every load; it must converge after one application.",
    ),
    # --- COMPACT -----------------------------------------------------------------------------
    _inv(
        "INV-COMPACT-1",
        "Walking the surface from head to tail, the count of pending tool calls goes up by the `tool-call` blocks of "
        "each `assistant/message` and down by one for each `tool/result`; a surface on which it goes negative has no "
        "balance, and asking for its cuts or a compaction region is refused. The log itself accepts such a surface: "
        "the balance is the compactor's rule.",
        "A compactor that read a negative balance would cut where a result is already orphaned; the released session "
        "accepts the events and only the compaction package's balance refuses.",
        C.TOOL_PAIRING_NEGATIVE,
    ),
    _inv(
        "INV-COMPACT-2",
        "A surface of N nodes has N + 1 cuts; the cut before the head is balanced.",
        "Cuts are where compaction may begin or end.",
    ),
    _inv(
        "INV-COMPACT-3",
        "A compaction region `start..end` is legal when both are on the surface, `start` is not after `end` (refused with "
        "INV-SURF-4's codes), and the cuts before `start` and after `end` are both balanced; it then shadows the "
        "nodes from `start` to `end`. The "
        "log accepts a replacement over any contiguous range; the region is checked by the compactor, before it "
        "writes anything.",
        "No compaction may separate a tool call from its result; the released session leaves that to the compactor.",
        C.REPLACE_SPLITS_TOOL_PAIR,
    ),
    _inv(
        "INV-COMPACT-4",
        "The per-cut balance cache always equals the balance recomputed from scratch.",
        "The cache is an optimisation; it may never change an answer.",
    ),
    _inv(
        "INV-COMPACT-5",
        "Asking for the balance around a seq that is not on the surface is refused.",
        "A cut is defined only between current nodes.",
        C.NOT_ON_SURFACE,
    ),
    _inv(
        "INV-COMPACT-6",
        "The session's tracked count of pending calls equals the count at the last cut of its surface, negative "
        "included: a replacement takes back the counts of the nodes it shadows.",
        "A compactor and crash repair read this count instead of rescanning the surface.",
    ),
    # --- JSONL -------------------------------------------------------------------------------
    _inv(
        "INV-JSONL-1",
        'A stored log starts with a complete header line holding exactly `type: "session"`, `version`, a string `id`, '
        "non-negative safe integers `createdAt` and `delegationDepth`, and optionally an absolute `cwd`, string "
        '`parentSession` and `agentPreset`, `origin: "subagent"`, and a `seedLength` no larger than the events read.',
        "The header says which format the rest is in before anything else is read; the members and their types are "
        "the released codec's (`delegationDepth` is required on disk, 0 for a top-level session).",
        C.JSONL_HEADER_MISSING,
        C.JSONL_HEADER_INVALID,
    ),
    _inv(
        "INV-JSONL-2",
        "Decoding what was encoded gives back the same header and events, in either layout (one event per line, or "
        "chunk runs packed).",
        "Save and load are inverse; nothing is lost on disk.",
    ),
    _inv(
        "INV-JSONL-3",
        "A final segment without its newline is a torn write and is dropped; so are the first faulty row and every row "
        "after it when no `turn/end` at or after it proves the damaged region committed.",
        "The released reader's rule: a crash can only leave an uncommitted tail, and a `turn/end` is written only "
        "after its turn was durable, so a damaged suffix without one is what a crash leaves and is dropped like a "
        "torn write.",
    ),
    _inv(
        "INV-JSONL-4",
        "A complete row that is not JSON as `JSON.parse` reads it (CR is whitespace, a repeated key keeps its last "
        "value; no BOM, no NaN/Infinity; bytes that are not UTF-8 read as U+FFFD, one per maximal invalid sequence, "
        "as the released reader decodes a line, so inside a string they are kept as replacement characters and "
        "elsewhere the row is not JSON), not an object, or a malformed packed row or provenance range, refuses the "
        "whole log naming its line when a `turn/end` at or after it proves it committed.",
        "The released reader's rule: damage inside committed history is corruption, not a crash, and guessing past "
        "it would lose data silently; what counts as JSON is what the released reader parses.",
        C.JSONL_MALFORMED_LINE,
    ),
    _inv(
        "INV-JSONL-5",
        "A loaded log is contiguous from seq 0; a gap, a duplicated row or a stray line starts a faulty suffix, which "
        "refuses the log naming its line when a `turn/end` at or after it proves it committed.",
        "Committed history must be whole; an uncommitted suffix is a crash's leftovers (INV-JSONL-3).",
        C.SEQ_NOT_CONTIGUOUS,
    ),
    _inv(
        "INV-JSONL-6",
        "A loaded log holds only known types or ignorable events; an unknown ignorable event is kept, not dropped.",
        "An older reader may skip what it does not understand only when the writer said so.",
    ),
    _inv(
        "INV-JSONL-7",
        "Only format version 1 is read directly; version 0 goes through the v0-to-v1 edge; any other version is refused.",
        "A reader never interprets a format it does not know.",
        C.FORMAT_VERSION_UNSUPPORTED,
    ),
    _inv(
        "INV-JSONL-8",
        "Loading closes a crash-orphaned turn once: loading the saved result again adds no closers and gives the same "
        "session.  The one exception is a v0 log with an interrupted-turn restart (INV-LEGACY-6): its saved v1 form "
        "is refused, as the released v1 reader refuses it.",
        "Repair on load is durable and idempotent.",
    ),
    _inv(
        "INV-JSONL-9",
        "A packed chunk row `{type: text-chunks | reasoning-chunks | tool-call-chunks, seq0, time0, data}` stands for "
        "its run of `assistant/chunk` events (member k at seq0 + k, time0 plus the first k gaps of `dt`); it is "
        "validated as a whole and a malformed one is a faulty row.",
        "Upstream's writer packs chunk runs by default, so a reader that cannot expand them cannot read real logs; a "
        "row is never half-read, so a run is never partly lost.",
        C.JSONL_MALFORMED_LINE,
    ),
    _inv(
        "INV-JSONL-10",
        "In a stored row, `sourceEventSeqs` may hold `[start, end]` ranges: expanded in place, at most seq entries in "
        "all, strictly increasing once any range is used; a malformed list is a faulty row.",
        "The released codec writes long provenance compactly; the session sees only the expanded seqs.",
        C.JSONL_MALFORMED_LINE,
    ),
    _inv(
        "INV-JSONL-11",
        "A durable store never loses an event it acknowledged as durable: after a crash at any moment (a killed "
        "process, a write cut short) or damage past its durable bytes, reopening recovers, exactly as `load` reads "
        "the bytes left on disk, a session whose events begin with every acknowledged event; what reopening leaves "
        "on disk reads back as that session, and a refused append changes neither the session nor what is durable.",
        "A caller that was told an event is durable has moved on (answered the user, started the tool); losing it "
        "afterwards rewrites history that others already acted on.",
    ),
    # --- LEGACY ------------------------------------------------------------------------------
    _inv(
        "INV-LEGACY-1",
        "`request/header-delta` events are refused, by the edge and by v1 seed, append and load.",
        "Header deltas were removed from the format; v1 keeps full snapshots only.",
        C.LEGACY_HEADER_DELTA,
    ),
    _inv(
        "INV-LEGACY-2",
        "A `request/header` with reason `fallback` is refused, by the edge and by v1 validation.",
        "`fallback` belonged to the delta codec; without deltas it has no meaning.",
        C.LEGACY_FALLBACK_REASON,
    ),
    _inv(
        "INV-LEGACY-3",
        "`mode/set` events are refused, by the edge and by v1 validation.",
        "Its meaning moved into request headers and cannot be reconstructed losslessly.",
        C.LEGACY_MODE_SET,
    ),
    _inv(
        "INV-LEGACY-4",
        "A v0 log with a type outside the frozen v0 inventory is refused, even when ignorable.",
        "The edge converts only what it knows; it cannot vouch for anything else.",
        C.LEGACY_UNKNOWN_TYPE,
    ),
    _inv(
        "INV-LEGACY-5",
        "The edge changes events only by the enumerated normalisations N1–N5 and N7–N9 (N6, header "
        "canonicalisation, is withdrawn); each event's envelope (seq, time, `ignorable`, `surfaceOp`, "
        "`sourceEventSeqs`) and the order of events are kept.",
        "Every change the edge makes is the released edge's and is listed; it invents nothing (no `surfaceOp`, "
        "no respelt snapshot), and the ids it mints (`legacy-message:`, `legacy-retry:`, `legacy-compaction:` "
        "+ `<sessionId>:<seq>`) depend on the log alone.",
    ),
    _inv(
        "INV-LEGACY-6",
        "The edge's output always validates as v1, read as the released edge reads its output: with one extension, "
        "the interrupted-turn restart of released v0 writers.  A `turn/start` of the open turn + 1, with no step "
        "open, right after an `agent/inbox/spliced` whose `target` is `next-turn` and whose `inserted` is a "
        "non-empty array, treats the open turn as abandoned and opens the new turn; nothing is written for the "
        "abandoned turn, and the same log read or appended to as v1 is refused (`TURN_ALREADY_OPEN`).",
        "No v1 session is ever built from a log the edge let through half-converted; the released edge "
        "(`legacyInterruptedTurnRestart`) admits the one v0 pattern in which a resumed writer never ended the "
        "interrupted turn, and only for logs it converts.",
    ),
    _inv(
        "INV-LEGACY-7",
        "The edge is a fixed point: applied to its own output it changes nothing.",
        "Upgrading twice is the same as upgrading once.",
    ),
    _inv(
        "INV-LEGACY-8",
        "The edge's output holds no legacy form: no `steering/message`, `compact/*`, `messagePrefix`, "
        "`turn/start.trigger`, or legacy turn-end reason (`disposed`, an `aborted` without its cause, an "
        "`error` without its `error` record).",
        "Legacy forms are known in one place only.",
    ),
    _inv(
        "INV-LEGACY-9",
        "The edge reads each event of a v0 log, in order, as a released v0 source before converting it: an "
        "object at its own seq with object data; each legacy form with exactly the members a v0 writer gave it "
        "(a `trigger` an object with a non-empty `kind`; a steering message `{turn, message}` or "
        "`{turn, content, source}`; a legacy error reason with a `step` and its failure record or message); each "
        "converted payload one the released v0 payload table admits (members only v1 has refused); a rewritten "
        "pre-identity tool result's target with a message id; a delivery marker of the session's own generation "
        "naming it.  Anything else is refused; the first problem in reading order decides.",
        "The released edge converts only the forms v0 writers wrote; guessing at anything else (inventing a "
        "`surfaceOp`, dropping a malformed member) would make the v1 log say what the v0 log never said.",
        C.LEGACY_SOURCE_INVALID,
    ),
    # --- Relationships between events ------------------------------------------------------
    _inv(
        "INV-REL-1",
        "A `tool/call` starts one call advertised by a `tool-call` block of an `assistant/message` earlier in the "
        "same step and not yet started or answered, with the same `callId`, `name` and raw `arguments`.",
        "The log never records running something the model did not ask for, or running it twice.",
        C.TOOL_CALL_NOT_ADVERTISED,
    ),
    _inv(
        "INV-REL-2",
        "An `assistant/message` does not advertise a call id that is still pending (advertised and unanswered) in "
        "the open step, within one message or across messages.",
        "A result must answer exactly one request.",
        C.TOOL_CALL_ID_REPEATED,
    ),
    _inv(
        "INV-REL-3",
        "An appended `tool/result` answers a call advertised in the open step and not yet answered (`message.source.callId`).",
        "A result without its request is noise the provider rejects.",
        C.TOOL_RESULT_UNADVERTISED,
    ),
    _inv(
        "INV-REL-4",
        'A call that was advertised but never started (no `tool/call`) is answered only by the exact crash-repair '
        'result: error `{name: "ToolNotStartedError", code: "TOOL_NOT_STARTED"}`, no `sourceEventSeqs`, message id '
        '`interrupted-tool-result-<callId>-<seq>`, one `isError: true` tool-result block holding exactly the '
        'repair\'s text.',
        "Only crash repair may answer work that never ran.",
        C.TOOL_RESULT_NOT_EXACT_REPAIR,
    ),
    _inv(
        "INV-REL-5",
        "A `step/end` (or `turn/end`) is refused while a call advertised in the step is unanswered.",
        "Every request the model made gets its answer before the loop moves on.",
        C.TOOL_CALL_UNRESOLVED,
    ),
    _inv(
        "INV-REL-6",
        "A `compaction/start` does not open while another compaction is open.",
        "A compaction is a lock over the surface; two would fight over it.",
        C.COMPACTION_OVERLAP,
    ),
    _inv(
        "INV-REL-7",
        "A compaction starts, summarises and ends inside its owner turn (`turn: null`: between turns), and its "
        "`compaction/end` names the same owner turn as its start.",
        "A compaction belongs to exactly one point of the loop.",
        C.COMPACTION_TURN_MISMATCH,
    ),
    _inv(
        "INV-REL-8",
        "`compaction/summary`, `compaction/end` and a compaction checkpoint (a replacing `user/message` whose "
        "source is plugin `compact`) name the open compaction by `compactionId` and the same `sourceCommandId` "
        "(both absent or equal).",
        "Summary, checkpoint and end of one compaction cannot be mixed with another's.",
        C.COMPACTION_NOT_OWNED,
    ),
    _inv(
        "INV-REL-9",
        "A compaction has at most one `compaction/summary`.",
        "One summary prices one replacement.",
        C.COMPACTION_SUMMARY_REPEATED,
    ),
    _inv(
        "INV-REL-10",
        "A `compaction/end` without `error` follows its compaction's summary.",
        "A successful compaction has something to show for it.",
        C.COMPACTION_SUMMARY_MISSING,
    ),
    _inv(
        "INV-REL-11",
        "No `turn/start` or `turn/end` occurs while a compaction is open, unless a `session/end-seed` retires that "
        "compaction (a crash orphan) before any later `compaction/start` or `compaction/end`; the crossing is held "
        "until the log decides it, and a complete log may not end with it undecided.",
        "The lock holds across the loop; only the closers of a crash, ended by the resume's or fork's end-seed, may cross it.",
        C.COMPACTION_CROSSES_TURN,
    ),
    _inv(
        "INV-REL-12",
        "The `shadowedSeqs` of a `compaction/summary` or `compaction/prune` are exactly the current surface nodes "
        "from `shadowedRange.start` to `shadowedRange.end`, in surface order.",
        "The summary and prune price exactly what the following replacement removes.",
        C.COMPACTION_SPAN_NOT_ON_SURFACE,
    ),
    _inv(
        "INV-REL-13",
        "An `llm/retry` names the open turn and its open step or, when no step is open, the step that ended last in that turn.",
        "A retry is scheduled for the request that failed.",
        C.RETRY_OUTSIDE_STEP,
    ),
    _inv(
        "INV-REL-14",
        "An `llm/retry` names the provider of the latest `request/header` (in any earlier step or turn).",
        "The retry re-sends the request in force.",
        C.RETRY_PROVIDER_MISMATCH,
    ),
    _inv(
        "INV-REL-15",
        "An `llm/retry` is attempt 1 of a new policy chain (same turn, step, provider and `policyKey`) or the "
        "previous attempt of its chain plus one.",
        "Attempts count up without gaps or repeats.",
        C.RETRY_NUMBER_INVALID,
    ),
    _inv(
        "INV-REL-16",
        "All attempts of a policy chain share one `retryId`, and no other chain uses it.",
        "`retryId` identifies the chain its starts pair with.",
        C.RETRY_ID_INVALID,
    ),
    _inv(
        "INV-REL-17",
        "An `llm/retry-started` starts an attempt (`retryId`, `retry`) that an earlier `llm/retry` scheduled, "
        "naming the same turn and step.",
        "A start answers one schedule.",
        C.RETRY_START_UNPAIRED,
        C.RETRY_START_MISMATCH,
    ),
    _inv(
        "INV-REL-18",
        "A scheduled attempt starts at most once.",
        "One schedule, one request.",
        C.RETRY_START_REPEATED,
    ),
    _inv(
        "INV-REL-19",
        "`tool/code-dispatch-start` and `tool/code-dispatch` occur inside an open turn.",
        "Programmatic calls run on behalf of a turn's tool call.",
        C.PTC_OUTSIDE_TURN,
    ),
    _inv(
        "INV-REL-20",
        "A PTC `subCallId` keeps the `rootCallId` it was first seen with, and its `parentCallId` is the root or a "
        "sub-call already seen under that root.",
        "Dispatches form one tree per root call.",
        C.PTC_ANCESTRY_INVALID,
    ),
    _inv(
        "INV-REL-21",
        "A PTC `subCallId` is started once.",
        "A sub-call is one unit of work.",
        C.PTC_START_REPEATED,
    ),
    _inv(
        "INV-REL-22",
        "A `tool/code-dispatch` settles a started, unsettled sub-call with the same root, parent, name and "
        "(JSON-equal) arguments.",
        "A settlement reports the call that was made, once.",
        C.PTC_SETTLE_UNPAIRED,
        C.PTC_SETTLE_MISMATCH,
    ),
    _inv(
        "INV-REL-23",
        "A `command/run` uses a `commandId` no earlier run used.",
        "A command id names one command.",
        C.COMMAND_RUN_REPEATED,
    ),
    _inv(
        "INV-REL-24",
        "A `command/done` follows the `command/run` of its `commandId`.",
        "A command finishes after it starts.",
        C.COMMAND_DONE_UNPAIRED,
    ),
    _inv(
        "INV-REL-25",
        "A `command/done` carries `sourceEventSeq` only when its `kind` is `success`, and never citing a "
        "`command/run` or `command/done`.",
        "It cites what the command produced, not the command's own bookkeeping.",
        C.COMMAND_DONE_SOURCE_INVALID,
    ),
    _inv(
        "INV-REL-26",
        "A `session/title` has empty `messageSeqs` exactly when its source kind is `user`.",
        "A typed title cites nothing; a generated one cites what it was made from.",
        C.TITLE_SEQS_CARDINALITY,
    ),
    _inv(
        "INV-REL-27",
        "Every seq in the `messageSeqs` of a `session/title` or `session/title-llm-request` is a `user/message` "
        "whose source kind is `user`.",
        "Titles are made from what the person wrote.",
        C.TITLE_SOURCE_NOT_HUMAN,
    ),
    _inv(
        "INV-REL-28",
        'A `session/title-llm-request` sends exactly one `user` message from plugin `dsh-session-title-llm` with '
        'one text block equal to the frame of its cited messages (`"Generate the session title from this JSON '
        'array of human messages:\\n"` followed by the JSON array of `{seq, text}`, text being the message\'s text '
        'blocks joined by newlines, serialised as JSON.stringify writes it).',
        "The logged request is the request that was sent, reproducible from the log.",
        C.TITLE_REQUEST_FRAMING,
    ),
    _inv(
        "INV-REL-29",
        "A `session-log-deepseek/delivery-accepted` marker accepted by the log's own generation "
        "(`sessionFormatVersion`, absent = 0, equal to the header's version) names the log's own session id, "
        "unless the header names a parent and the marker lies in the inherited seed (seq < seedLength).",
        "A marker confirms delivery of this session; inherited markers keep their ancestor's id.",
        C.DELIVERY_MARKER_WRONG_SESSION,
    ),
)

BY_ID: dict[str, Invariant] = {inv.id: inv for inv in INVARIANTS}
assert len(BY_ID) == len(INVARIANTS), "duplicate invariant id"
