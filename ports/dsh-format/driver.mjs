#!/usr/bin/env node
/**
 * sessionlog-driver/1 driver for the published v0-to-v1 session-format edge:
 * @deepseek-ai/dsh-session-format-v0-to-v1 with @deepseek-ai/dsh-session-format, and the surface
 * fold of the published @deepseek-ai/dsh-session (all pinned in package.json).
 *
 * Speaks JSON Lines on stdin/stdout (one reply per request, written before the next request is
 * read); everything else goes to stderr.  Every answer comes from the packages' PUBLIC API, wired
 * the way upstream's own restore test facade wires it (upstream source, public repository
 * zsagi1368/deepseek-harness-zDSH, packages/session/session-format-v0-to-v1/src/testing/restore.ts),
 * followed, as on upstream's production read path, by the installed Session's restore (SESSION
 * below):
 *
 *   createSessionFormatCatalog({
 *     currentVersion: 1,
 *     codecs: [releasedV0SessionFormatCodec, releasedV1SessionFormatCodec],
 *     currentEncoder: <unused>,
 *     migrations: [sessionFormatV0ToV1],
 *     restoreCurrent: assertReleasedV1Artifact + the Session's surface fold,   (rebuilt, see VALIDATORS)
 *     restoreTransformedCurrent: assertReleasedV1MigrationSource + the fold,   (rebuilt)
 *     restoreCurrentHeader: assertReleasedV1Header,
 *   })
 *
 *   legacy  upgrade_v0  `catalog.createRestore(header, {recovery: 'strict', validation:
 *                       'transformed'})`, one `decodeRow` per event, `finish()`; a v1 log is then
 *                       held to assertReleasedV1MigrationSource and the fold (T6).
 *   read    read        the stored text split into lines the way upstream's historical JSONL reader
 *                       does (MigratingJsonlRows / decodeStreamingMigration in
 *                       packages/session/session-persistence-jsonl/src/generation.ts), the rows fed
 *                       to `catalog.createRestore(header, {recovery: 'recoverable', validation})`,
 *                       `finish()`; `validation` is 'transformed' for a v0 log (production's
 *                       historical read, per the catalog's README) and 'current' for a v1 log.
 *
 * Every other op replies UNSUPPORTED: the format packages hold no live session, no surface or
 * header fold, no repair and no writer (this driver reads and converts only).
 * `hello.format_version` is 1: the catalog's `currentVersion`, the version everything is read into.
 *
 * TRANSLATIONS (pure plumbing; nothing here accepts or refuses on upstream's behalf except the
 * line framing of `read`, which is upstream's persistence layer, mirrored, see R1-R3):
 *
 *  T1  Requests are parsed with JSON.parse, so an integer beyond 2^53 arrives as the nearest double
 *      (the value a JavaScript caller, and upstream's own JSON.parse of a stored line, would hand
 *      to the packages); -0 stays -0.  Replies are JSON.stringify'd (-0 is written as 0).
 *  T2  Logical header -> physical header line.  The codec decodes the physical line
 *      `{type, version, id, createdAt, cwd?, parentSession?, seedLength?, origin?,
 *      delegationDepth, agentPreset?}` into the logical `{version, id, createdAt, isSeeded,
 *      delegationDepth, cwd?, parentSession?, origin?, agentPreset?}` plus `inheritedEventCount`
 *      (= seedLength, 0 when absent; isSeeded = seedLength present).  The reply maps it back:
 *      `seedLength` = inheritedEventCount exactly when isSeeded, `type: "session"` added.
 *  T3  Packed chunk rows come out of the codec as runs (`emitRun`); the catalog's own
 *      SessionFormatEventCollector expands each run with `run.expand()` into its assistant/chunk
 *      events, so the artifact's `events` are already plain events.  Range-encoded
 *      `sourceEventSeqs` are decoded by the codec itself.
 *  T4  `read` framing (upstream's, not the format package's): the text is encoded to UTF-8 bytes
 *      and split at 0x0A; each complete line is decoded with `toString('utf8')` (a lone surrogate
 *      in the request's string therefore reads as U+FFFD, as it would from a file) and JSON.parse'd.
 *      R1  No 0x0A at all: refused, upstream's message 'empty or header-less session log'.
 *      R2  Line 1 not JSON: refused, 'corrupt session log: header line is not valid JSON'; then
 *          the reader's own version look (storedVersion: 'corrupt session log: first line is not
 *          a JSON object' / '... header version is not a non-negative safe integer'); then the
 *          parsed value goes to `createRestore` as is.  (readDecodedJsonlSource re-wraps such
 *          plain Errors as SessionFormatError(String(error)), i.e. with an "Error: " prefix; that
 *          classification wrapper is not reproduced.)
 *      R3  Whatever follows the last 0x0A is a torn tail and is never looked at.  A following line
 *          that is not JSON is NOT fed to the catalog decoder: upstream's reader keeps the issue
 *          itself ('corrupt session log: row N is not valid JSON', N counting rows after the
 *          header from 1), stops feeding rows, and throws the issue when a later line parses to an
 *          object whose `type` is "turn/end" (whether or not that row would decode); otherwise
 *          `finish()` returns the prefix.  Until then every parsed value (object or not) goes to
 *          `decodeRow`, and the codec's own recoverable scanner judges non-objects, malformed
 *          packed rows, bad ranges and seq gaps (its issue is separate from the reader's).
 *  T5  Errors.  Upstream throws SessionFormatError (malformed / corrupt) and its subclass
 *      SessionFormatUnsupportedMigrationError (a readable log the edge refuses).  ERROR_TABLE
 *      below maps messages to violation codes (first match wins, after the wrappers in WRAPPERS
 *      are stripped); a row may name a code per op where the same message means different things
 *      for a stored row (`read`) and for a protocol event (`upgrade_v0`).  A message no row
 *      matches is replied UNMAPPED with upstream's message; a crash (TypeError and the like) is
 *      UNMAPPED with the error name in front.  The reply message is always upstream's full text.
 *      A row whose code is `{}` is a message deliberately left UNMAPPED in every op.
 *  T6  A v1 log given to `upgrade_v0`: with validation 'transformed' the catalog passes input that
 *      is already current through its identity restorer unvalidated, which is no answer to the
 *      protocol's question (is this a log the edge lets through: spec/PROTOCOL.md, `upgrade_v0`).
 *      The driver holds it to assertReleasedV1MigrationSource, the check upstream's edge applies
 *      to its own output (the interrupted-turn restart admitted), and to the Session's surface
 *      fold (SESSION), after the identity restore.
 *  T7  A reply that cannot be serialised (JSON.stringify overflowing on a very deep value) is
 *      replied UNMAPPED with a "driver:" message instead of killing the driver.
 */

import { createInterface } from 'node:readline'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'

// Keep stdout for replies only: anything the packages log goes to stderr.
for (const method of ['log', 'info', 'debug', 'warn', 'trace']) console[method] = console.error

const {
  createSessionFormatCatalog,
  isSessionFormatJsonObject,
  sessionFormatCount,
  sessionFormatSafeInteger,
  SessionFormatError,
  SessionFormatUnsupportedMigrationError,
} = await import('@deepseek-ai/dsh-session-format')
const {
  RELEASED_V0_EVENT_DISPOSITIONS,
  assertReleasedArtifactRelationships,
  assertReleasedEventPayload,
  assertReleasedSurfaceMetadata,
  assertReleasedV1Header,
  releasedV0SessionFormatCodec,
  releasedV1SessionFormatCodec,
  sessionFormatV0ToV1,
} = await import('@deepseek-ai/dsh-session-format-v0-to-v1')
// The installed Session's surface fold (SESSION below).  The `./surface` export has no runtime
// imports, so none of dsh-session's peers is needed.
const { foldSurface } = await import('@deepseek-ai/dsh-session/surface')

// ---- the error table (T5) ----------------------------------------------------------------------

/** Prefixes upstream wraps around a refusal; stripped (repeatedly) before the table is consulted. */
const WRAPPERS = [
  // chain.throwUnsupportedRefusal around a stage / header-edge error.
  /^@deepseek-ai\/dsh-session-format-v0-to-v1 refuses this format v0 Session(?: header)?: /,
  // MigratingSessionFormatRestore.finish around restoreTransformedCurrent (validation 'transformed').
  /^Session migration from v0 to v1 refuses the transformed artifact: /,
]

/**
 * Upstream message -> violation code.  [regex, code] or [regex, {read: code, upgrade_v0: code}]
 * (an op missing from the object is UNMAPPED); first match wins.
 */
export const ERROR_TABLE = [
  // -- the v0-to-v1 edge's refusals (SessionFormatUnsupportedMigrationError) ------------------
  [/^session ".*" contains unsupported legacy request\/header-delta event at seq \d+$/s, 'LEGACY_HEADER_DELTA'],
  [/^session ".*" contains unsupported legacy mode\/set event at seq \d+$/s, 'LEGACY_MODE_SET'],
  [/^session ".*" contains unsupported request\/header reason "fallback" at seq \d+$/s, 'LEGACY_FALLBACK_REASON'],
  [/^format v0 contains unknown historical event type .* at seq \d+; migration refuses unknown historical events even when ignorable$/s, 'LEGACY_UNKNOWN_TYPE'],
  [/^format v1 contains unknown required event type .* at seq \d+$/s, 'UNKNOWN_EVENT_TYPE'],
  [/^stored Session uses newer format v\d+; this build writes v\d+$/, 'FORMAT_VERSION_UNSUPPORTED'],

  // -- the header line (catalog dispatch, then the codec's physical header) ---------------------
  // `read` mirrors upstream's reader framing (T4 R1/R2); these two messages are the reader's own.
  [/^empty or header-less session log$/, 'JSONL_HEADER_MISSING'],
  [/^corrupt session log: header line is not valid JSON$/, 'JSONL_MALFORMED_LINE'],
  [/^corrupt session log: first line is not a JSON object$/, 'JSONL_MALFORMED_LINE'],
  [/^corrupt session log: header version is not a non-negative safe integer$/, 'JSONL_HEADER_INVALID'],
  // A first line that is JSON but not an object: a malformed line when read, a bad header object
  // when handed over as `log.header`.
  [/^Session header must be a JSON object$/, { read: 'JSONL_MALFORMED_LINE', upgrade_v0: 'JSONL_HEADER_INVALID' }],
  [/^Session format version must be a non-negative safe integer$/, 'JSONL_HEADER_INVALID'],
  [/^released v\d+ physical header /, 'JSONL_HEADER_INVALID'],
  [/^expected released v\d+ physical Session header$/, 'JSONL_HEADER_INVALID'],
  [/^released v\d+ header /, 'JSONL_HEADER_INVALID'],
  [/^format v\d+ header /, 'JSONL_HEADER_INVALID'],
  // seedLength larger than the events read (codec scanner finish).
  [/^Session inheritedEventCount exceeds its event count$/, 'JSONL_HEADER_INVALID'],

  // -- rows (the codec's scanner; in `read` these are faulty rows proven committed) -------------
  [/^corrupt session log: row \d+ is not valid JSON$/, 'JSONL_MALFORMED_LINE'],
  [/^released Session row \d+ has seq gap \(expected \d+, got .*\)$/s, 'SEQ_NOT_CONTIGUOUS'],
  [/^released Session row \d+ must be a JSON object$/, { read: 'JSONL_MALFORMED_LINE', upgrade_v0: 'ENVELOPE_NOT_OBJECT' }],
  [/^released Session row \d+ is malformed$/, { read: 'JSONL_MALFORMED_LINE' }],
  [/^released Session row \d+ seq must be a non-negative safe integer$/, { read: 'JSONL_MALFORMED_LINE' }],
  [/^released (text|reasoning|tool-call)-chunks row \d+ /, { read: 'JSONL_MALFORMED_LINE' }],
  // -- the Session's surface fold (SESSION; dsh-session lib/types/surface.js), one rule a message --
  // Before the bare `sourceEventSeqs …` rows below, which are the codec's range decoding.
  [/^session event seq \d+ is not contiguous; expected \d+$/, 'SEQ_NOT_CONTIGUOUS'],
  [/^session event ".*" is not surface-eligible and cannot carry surfaceOp$/s, 'SURFACE_OP_FORBIDDEN'],
  [/^session event ".*" is not surface-eligible and cannot carry sourceEventSeqs$/s, 'SOURCES_FORBIDDEN'],
  [/^session event ".*" is surface-eligible and requires a surfaceOp marker$/s, 'SURFACE_OP_MISSING'],
  [/^session event ".*" carries an invalid (replace )?surfaceOp$/s, 'SURFACE_OP_INVALID'],
  [/^surface replace: start seq \d+ not found in surface$/, 'REPLACE_START_NOT_ON_SURFACE'],
  [/^surface replace: end seq \d+ not found in surface$/, 'REPLACE_END_NOT_ON_SURFACE'],
  [/^surface replace: start seq \d+ \(index \d+\) is after end seq \d+ \(index \d+\)$/, 'REPLACE_RANGE_INVERTED'],
  [/^sourceEventSeqs on event at seq \d+ must be an array when present$/, 'SOURCES_INVALID'],
  [/^session event ".*" sourceEventSeqs must densely contain non-negative safe integers$/s, 'SOURCES_INVALID'],
  [/^sourceEventSeqs must not be empty except on assistant\/message$/, 'SOURCES_EMPTY'],
  [/^sourceEventSeqs must not contain duplicates$/, 'SOURCES_DUPLICATE'],
  [/^sourceEventSeqs must reference earlier events: \d+ >= current seq \d+$/, 'SOURCES_NOT_EARLIER'],
  [/^surface replace: sourceEventSeqs must include every shadowed surface node; missing [\d, ]+$/, 'SOURCES_MISSING_SHADOWED'],
  [/^tool\/result surface replacement must rewrite exactly one current node$/, 'TOOL_REWRITE_SPAN'],
  [/^tool\/result surface replacement must target a current tool\/result$/, 'TOOL_REWRITE_TARGET'],
  [/^tool\/result surface replacement may change only content$/, 'TOOL_REWRITE_CHANGES'],

  // decodeSeqRanges (range-encoded provenance): no type/seq in the message.
  [/^sourceEventSeqs (must be an array|member must be a non-negative safe integer)$/, { read: 'JSONL_MALFORMED_LINE', upgrade_v0: 'SOURCES_INVALID' }],
  [/^sourceEventSeqs /, { read: 'JSONL_MALFORMED_LINE' }],

  // -- the v1 envelope (assertReleasedV1Artifact's coordinates, rebuilt below) -----------------
  [/^Session event \d+ must be a JSON object$/, 'ENVELOPE_NOT_OBJECT'],
  [/^Session event \d+ type must be a string$/, 'ENVELOPE_BAD_TYPE'],
  [/^Session event \d+ has unexpected member "surfaceOp"$/, 'SURFACE_OP_FORBIDDEN'],
  [/^Session event \d+ has unexpected member "sourceEventSeqs"$/, 'SOURCES_FORBIDDEN'],
  [/^Session event \d+ has unexpected member /, 'ENVELOPE_UNKNOWN_KEY'],
  [/^Session event \d+ lacks required member /, 'ENVELOPE_MISSING_KEY'],
  [/^Session event \d+ has non-dense seq /, 'SEQ_NOT_CONTIGUOUS'],
  [/^Session event \d+ time must be a safe integer$/, 'ENVELOPE_BAD_TIME'],
  [/^Session event \d+ ignorable must be true when present$/, 'ENVELOPE_BAD_IGNORABLE'],

  // -- surface metadata (assertReleasedSurfaceMetadata) and surface replay (relationships) -----
  [/^(user|assistant)\/message \d+ sourceEventSeqs (must be an array|member must be a non-negative safe integer)$/, 'SOURCES_INVALID'],
  [/^tool\/result \d+ sourceEventSeqs (must be an array|member must be a non-negative safe integer)$/, 'SOURCES_INVALID'],
  [/^[a-z/]+ \d+ sourceEventSeqs must be non-empty$/, 'SOURCES_EMPTY'],
  [/^[a-z/]+ \d+ surfaceOp (must be a JSON object|has unexpected member .*|lacks required member .*|must replace)$/, 'SURFACE_OP_INVALID'],
  [/^[a-z/]+ \d+ surface (start|end) must be a non-negative safe integer$/, 'SURFACE_OP_INVALID'],
  [/^(user\/message|assistant\/message|tool\/result) requires a surfaceOp marker$/, 'SURFACE_OP_MISSING'],
  [/^(user\/message|assistant\/message|tool\/result) replacement sourceEventSeqs omit a shadowed surface node$/, 'SOURCES_MISSING_SHADOWED'],
  // Deliberately NOT mapped (one message, several rules): "<type> <seq> sourceEventSeqs must be
  // unique earlier seqs" (duplicate or not earlier), "<type> <seq> has an invalid surface
  // replacement" and "<type> replacement range is not on the current surface" (start, end or
  // inverted range), "turn/start N does not open expected turn M" (already open or wrong number).

  // -- payloads (assertReleasedEventPayload / assertReleasedPayloadSemantics) ------------------
  // A legacy rewriting tool/result whose target has no message id (N4): no code says that.
  [/^tool\/result \d+ replacement cites a message without identity$/, {}],
  [/^user\/message \d+ /, 'USER_MESSAGE_INVALID'],
  [/^assistant\/message \d+ /, 'ASSISTANT_MESSAGE_INVALID'],
  [/^tool\/result \d+ /, 'TOOL_RESULT_INVALID'],
  [/^turn\/end \d+ (data )?reason/, 'TURN_END_REASON_INVALID'],
  [/^(turn\/start|turn\/end|step\/start|step\/end) \d+ (turn|step) must be /, 'TRACE_DATA_INVALID'],
  [/^(turn\/start|turn\/end|step\/start|step\/end) \d+ data (has unexpected|lacks required) member /, 'TRACE_DATA_INVALID'],

  // -- the trace (assertReleasedArtifactRelationships), where one message is one rule ----------
  // "turn/start N does not open expected turn M" is several rules (already open, wrong number).
  [/^turn\/start .* does not open expected turn \d+$/s, {}],
  [/^turn\/end .* crosses an open step$/s, 'STEP_STILL_OPEN'],

  // -- relationships (assertReleasedArtifactRelationships), one message per rule ---------------
  [/^current-generation delivery marker names the wrong Session$/, 'DELIVERY_MARKER_WRONG_SESSION'],
  [/^compaction\/summary repeats$/, 'COMPACTION_SUMMARY_REPEATED'],
  [/^compaction\/start overlaps an open compaction$/, 'COMPACTION_OVERLAP'],
  [/^successful compaction\/end requires one summary$/, 'COMPACTION_SUMMARY_MISSING'],
  [/^turn\/(start|end) crosses an open compaction$/, 'COMPACTION_CROSSES_TURN'],
  [/^command\/done .* has invalid sourceEventSeq$/s, 'COMMAND_DONE_SOURCE_INVALID'],
  [/^command\/run repeats commandId /, 'COMMAND_RUN_REPEATED'],
  [/^tool\/code-dispatch does not match its start$/, 'PTC_SETTLE_MISMATCH'],
  [/^tool\/code-dispatch-start repeats subCallId$/, 'PTC_START_REPEATED'],
  [/^llm\/retry-started does not match its scheduled turn and step$/, 'RETRY_START_MISMATCH'],
  [/^llm\/retry-started repeats one scheduled attempt$/, 'RETRY_START_REPEATED'],
  [/^tool\/result .* is not the exact TOOL_NOT_STARTED repair$/s, 'TOOL_RESULT_NOT_EXACT_REPAIR'],
  [/^llm\/retry (reuses retryId .* across policy chains|must preserve retryId across one policy chain)$/s, 'RETRY_ID_INVALID'],

  // -- any other type's payload ("<type> <seq> …"): the v1 table, or the v0 source at the edge --
  [/^[a-z][a-z-]*(\/[a-z-]+)* \d+ /, { read: 'PAYLOAD_INVALID', upgrade_v0: 'LEGACY_SOURCE_INVALID' }],
]

const stripWrappers = (message) => {
  let text = message
  for (let changed = true; changed; ) {
    changed = false
    for (const wrapper of WRAPPERS) {
      const next = text.replace(wrapper, '')
      if (next !== text) (text = next), (changed = true)
    }
  }
  return text
}

/** The violation code for an upstream error message under `op`, or UNMAPPED. */
export function codeFor(message, op) {
  const code = tableCode(stripWrappers(message), op)
  // The edge wraps every problem of a v0 source; past the retired forms and the reading order,
  // each is a malformed source whatever rule it names.
  if (V0_SOURCE.test(message) && !V0_OWN_CODES.has(code)) return 'LEGACY_SOURCE_INVALID'
  return code
}

const V0_SOURCE = /^@deepseek-ai\/dsh-session-format-v0-to-v1 refuses this format v0 Session: /
const V0_OWN_CODES = new Set([
  'LEGACY_HEADER_DELTA', 'LEGACY_MODE_SET', 'LEGACY_FALLBACK_REASON', 'LEGACY_UNKNOWN_TYPE',
  'SEQ_NOT_CONTIGUOUS', 'ENVELOPE_NOT_OBJECT',
])

function tableCode(text, op) {
  for (const [pattern, code] of ERROR_TABLE) {
    if (!pattern.test(text)) continue
    if (typeof code === 'string') return code
    return code[op] ?? 'UNMAPPED'
  }
  return 'UNMAPPED'
}

const UPSTREAM_ERRORS = new Set(['Error', 'SessionFormatError', 'SessionFormatUnsupportedMigrationError'])

/** A reply error for anything upstream threw. */
function upstreamError(error, op) {
  if (!(error instanceof Error)) return { code: 'UNMAPPED', message: `non-Error thrown: ${String(error)}` }
  if (!UPSTREAM_ERRORS.has(error.name)) return { code: 'UNMAPPED', message: `${error.name}: ${error.message}` }
  return { code: codeFor(error.message, op), message: error.message }
}

class BadRequest extends Error {}

// ---- VALIDATORS: upstream's test-facade validators, rebuilt --------------------------------------
//
// Source: zsagi1368/deepseek-harness-zDSH, packages/session/session-format-v0-to-v1/src/testing/
// validation.ts (assertReleasedV1Artifact, assertReleasedV1MigrationSource).  The npm package does
// not export them, nor two of their helpers:
//   * assertReleasedSessionFormatHeader(header, 1)  is exactly the exported assertReleasedV1Header.
//   * assertReleasedArtifactCoordinates(artifact, false, RELEASED_V0_EVENT_TYPE_SET, false, true)
//     is rebuilt as releasedV1Coordinates below, line for line from the npm lib (index.js,
//     region lib/types/validation.js), with the same messages.  The exported
//     restoreReleasedV1Artifact(artifact, types) runs the same loop with frozenEnvelope = false
//     (surfaceOp / sourceEventSeqs admitted on every type, no assertReleasedSurfaceMetadata), so
//     it cannot stand in for it; it is not called.  It is the format half of production's
//     restore only: production follows it with the Session's restore (SESSION below), which
//     refuses surfaceOp / sourceEventSeqs on every type but the three surface types, as the frozen
//     envelope does, so on those members the frozen check gives production's verdict.
//   * assertReleasedV0Keys is rebuilt as exactKeys (same messages).

const RELEASED_V0_EVENT_TYPE_SET = new Set(Object.keys(RELEASED_V0_EVENT_DISPOSITIONS))
const EVENT_REQUIRED = ['type', 'seq', 'time', 'data']
const SURFACE_EVENT_TYPES = new Set(['user/message', 'assistant/message', 'tool/result'])
const SURFACE_OPTIONAL = ['ignorable', 'sourceEventSeqs', 'surfaceOp']
const LOG_OPTIONAL = ['ignorable']

function exactKeys(record, required, optional, label) {
  const allowed = new Set([...required, ...optional])
  const unexpected = Object.keys(record).find((key) => !allowed.has(key))
  if (unexpected !== undefined) throw new SessionFormatError(`${label} has unexpected member ${JSON.stringify(unexpected)}`)
  const missing = required.find((key) => !Object.hasOwn(record, key))
  if (missing !== undefined) throw new SessionFormatError(`${label} lacks required member ${JSON.stringify(missing)}`)
}

/** assertReleasedArtifactCoordinates(artifact, false, RELEASED_V0_EVENT_TYPE_SET, false, true). */
function releasedV1Coordinates(artifact) {
  const inheritedEventCount = sessionFormatCount(artifact.inheritedEventCount, 'Session inheritedEventCount')
  if (inheritedEventCount > artifact.events.length)
    throw new SessionFormatError('Session inheritedEventCount exceeds its event count')
  if (!artifact.header.isSeeded && inheritedEventCount !== 0)
    throw new SessionFormatError('unseeded Session inheritedEventCount must be 0')
  for (let index = 0; index < artifact.events.length; index += 1) {
    const record = artifact.events[index]
    if (!isSessionFormatJsonObject(record)) throw new SessionFormatError(`Session event ${index} must be a JSON object`)
    const type = record.type
    if (typeof type !== 'string') throw new SessionFormatError(`Session event ${index} type must be a string`)
    const disposition = RELEASED_V0_EVENT_DISPOSITIONS[type]
    const currentKnown = RELEASED_V0_EVENT_TYPE_SET.has(type)
    const ignorableCurrent = !currentKnown && record.ignorable === true
    if (!currentKnown && !ignorableCurrent)
      throw new SessionFormatUnsupportedMigrationError(
        `format v1 contains unknown required event type ${JSON.stringify(type)} at seq ${index}`,
      )
    const surface = disposition !== undefined ? SURFACE_EVENT_TYPES.has(type) : type === 'steering/message'
    exactKeys(record, EVENT_REQUIRED, surface ? SURFACE_OPTIONAL : LOG_OPTIONAL, `Session event ${index}`)
    if (record.seq !== index)
      throw new SessionFormatError(`Session event ${index} has non-dense seq ${JSON.stringify(record.seq)}`)
    sessionFormatSafeInteger(record.time, `Session event ${index} time`)
    if (record.ignorable !== undefined && record.ignorable !== true)
      throw new SessionFormatError(`Session event ${index} ignorable must be true when present`)
    if (surface) assertReleasedSurfaceMetadata(record, index, type, 'allow-empty-assistant')
  }
}

// ---- SESSION: the installed Session's restore, as production runs it after the format checks ------
//
// Upstream's production read of a stored log does not stop at the format package.  The catalog that
// scripts/gen-session-format-catalog.ts generates (published: dsh-session-format-catalog
// lib/index.js, `sessionFormatCatalog`) restores the current version with
// `restoreReleased<Vn>Artifact(artifact, KNOWN_SESSION_EVENT_TYPES)` and then
// `validateInstalledCurrentSessionArtifact`, which is `Session.fromRestore(…)`; the JSONL backend
// reads a current generation with `scanLog` / `SessionLogScanner`, `validateStoredEvents`
// (dsh-session-persistence) and `Session.fromRestore` (session-persistence-jsonl src/index.ts,
// `decodeStoredLog`; the coordinator's load), and verifies every migrated generation with
// `validateStoredEvents` + `Session.fromRestore` before it publishes it (src/generation.ts,
// `verifyCurrentGeneration`).  `Session.fromRestore` puts every event through
// `SurfaceManager.validateNext`, i.e. the surface fold's `planSurfaceEvent`: contiguity, surface
// eligibility (surfaceOp and sourceEventSeqs only on user/message, assistant/message and
// tool/result, whatever the type, an unknown ignorable one included), replace ranges, provenance
// and the tool-result rewrite rule.  No Session of format v1 was published; the surface rules did
// not change from v0 to v1, so the published Session's fold (`foldSurface`, the same
// `planSurfaceEvent`) stands in for it.  Only the fold is taken: the rest of that Session's restore
// (its v0 header, its v0-era message and header checks) belongs to format v0, and the payloads are
// the format package's released table above.

/** The installed Session's restore of the surface: throws what `Session.fromRestore` would. */
function assertRestoredSurface(artifact) {
  foldSurface(artifact.events)
}

/** testing/validation.ts assertReleasedV1Artifact: the exact released-v1 logical artifact. */
function assertReleasedV1Artifact(artifact) {
  assertReleasedV1Header(artifact.header)
  releasedV1Coordinates(artifact)
  for (const event of artifact.events) {
    if (RELEASED_V0_EVENT_DISPOSITIONS[event.type] !== undefined) assertReleasedEventPayload(event, 1)
  }
  assertReleasedArtifactRelationships(artifact)
}

/** testing/validation.ts assertReleasedV1MigrationSource: v1 input accepted by the v1-to-v2 edge. */
function assertReleasedV1MigrationSource(artifact) {
  assertReleasedV1Header(artifact.header)
  releasedV1Coordinates(artifact)
  for (const event of artifact.events) {
    if (RELEASED_V0_EVENT_DISPOSITIONS[event.type] !== undefined) assertReleasedEventPayload(event, 1)
  }
  assertReleasedArtifactRelationships(artifact, { legacyInterruptedTurnRestart: true })
}

// ---- the catalog, as in testing/restore.ts -------------------------------------------------------

const unusedEncoder = {
  encodeHeader: (header) => header,
  encodeEvent: (event) => event,
}

const catalog = createSessionFormatCatalog({
  currentVersion: 1,
  codecs: [releasedV0SessionFormatCodec, releasedV1SessionFormatCodec],
  currentEncoder: unusedEncoder,
  migrations: [sessionFormatV0ToV1],
  restoreCurrent(artifact) {
    assertReleasedV1Artifact(artifact)
    assertRestoredSurface(artifact)
    return artifact
  },
  restoreTransformedCurrent(artifact) {
    assertReleasedV1MigrationSource(artifact)
    assertRestoredSurface(artifact)
    return artifact
  },
  restoreCurrentHeader(header) {
    assertReleasedV1Header(header)
    return header
  },
})

/** T2: the physical header line of a restored artifact. */
function headerLine(header, inheritedEventCount) {
  const line = { type: 'session', version: header.version, id: header.id, createdAt: header.createdAt }
  if (header.cwd !== undefined) line.cwd = header.cwd
  if (header.parentSession !== undefined) line.parentSession = header.parentSession
  if (header.isSeeded) line.seedLength = inheritedEventCount
  if (header.origin !== undefined) line.origin = header.origin
  line.delegationDepth = header.delegationDepth
  if (header.agentPreset !== undefined) line.agentPreset = header.agentPreset
  return line
}

function replyLog(artifact) {
  return { header: headerLine(artifact.header, artifact.inheritedEventCount), events: [...artifact.events] }
}

// ---- read: upstream's reader framing (T4) ---------------------------------------------------------

const NEWLINE = 0x0a

/** generation.ts storedVersion: the reader's own look at the version before the catalog's. */
function storedVersion(header) {
  if (typeof header !== 'object' || header === null || Array.isArray(header))
    throw new Error('corrupt session log: first line is not a JSON object')
  const version = header.version
  if (!Number.isSafeInteger(version) || version < 0 || Object.is(version, -0))
    throw new Error('corrupt session log: header version is not a non-negative safe integer')
  return version
}

function readStored(text) {
  const bytes = Buffer.from(text, 'utf8')
  const headerEnd = bytes.indexOf(NEWLINE)
  if (headerEnd === -1) throw new Error('empty or header-less session log')
  let headerValue
  try {
    headerValue = JSON.parse(bytes.subarray(0, headerEnd).toString('utf8'))
  } catch {
    throw new Error('corrupt session log: header line is not valid JSON')
  }
  // Production reads a historical (v0) log with validation 'transformed' (the catalog's README), which
  // checks the migrated artifact as the edge's own output; a current (v1) log gets 'current', since
  // 'transformed' skips every semantic check of input that is already current.
  const validation = storedVersion(headerValue) === 0 ? 'transformed' : 'current'
  const restore = catalog.createRestore(headerValue, { recovery: 'recoverable', validation })
  const bodyEnd = bytes.lastIndexOf(NEWLINE)
  let issue
  let rowIndex = 0
  for (let start = headerEnd + 1; start <= bodyEnd; ) {
    const end = bytes.indexOf(NEWLINE, start)
    const line = bytes.subarray(start, end)
    start = end + 1
    const index = rowIndex
    rowIndex += 1
    let row
    try {
      row = JSON.parse(line.toString('utf8'))
    } catch {
      issue ??= new Error(`corrupt session log: row ${index + 1} is not valid JSON`)
      continue
    }
    if (issue !== undefined) {
      if (typeof row === 'object' && row !== null && row.type === 'turn/end') throw issue
      continue
    }
    restore.decodeRow(row)
  }
  return restore.finish()
}

// ---- ops ------------------------------------------------------------------------------------------

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)

const CAPABILITIES = ['legacy', 'read']
const require = createRequire(import.meta.url)
const edgeVersion = JSON.parse(
  readFileSync(require.resolve('@deepseek-ai/dsh-session-format-v0-to-v1/package.json'), 'utf8'),
).version

const NOT_SUPPORTED =
  'the session-format packages only read and convert stored logs (capabilities: legacy, read)'

const ops = {
  hello: () => ({
    protocol: 'sessionlog-driver/1',
    implementation: { name: '@deepseek-ai/dsh-session-format-v0-to-v1', version: edgeVersion },
    capabilities: CAPABILITIES,
    format_version: catalog.currentVersion,
  }),
  bye: () => null,
  upgrade_v0: (request) => {
    const log = request.log
    if (!isObject(log)) throw new BadRequest('log must be an object')
    if (!('header' in log)) throw new BadRequest('log needs a header')
    if (!Array.isArray(log.events)) throw new BadRequest('log.events must be an array')
    const restore = catalog.createRestore(log.header, { recovery: 'strict', validation: 'transformed' })
    for (const event of log.events) restore.decodeRow(event)
    const artifact = restore.finish()
    // T6: current input comes back through the identity restorer unvalidated; it is held to what
    // upstream's v1 edge accepts as its source, as the edge's own output is.
    if (isObject(log.header) && log.header.version === 1) {
      assertReleasedV1MigrationSource(artifact)
      assertRestoredSurface(artifact)
    }
    return { log: replyLog(artifact) }
  },
  read: (request) => {
    if (typeof request.jsonl !== 'string') throw new BadRequest('jsonl must be a string')
    return replyLog(readStored(request.jsonl))
  },
}

function handle(request) {
  const id = request.id
  const op = ops[request.op]
  if (op === undefined) return fail(id, 'UNSUPPORTED', `${JSON.stringify(request.op)}: ${NOT_SUPPORTED}`)
  try {
    return { id, ok: true, result: op(request) }
  } catch (error) {
    if (error instanceof BadRequest) return fail(id, 'BAD_REQUEST', error.message)
    const { code, message } = upstreamError(error, request.op)
    return fail(id, code, message)
  }
}

function fail(id, code, message) {
  return { id, ok: false, error: { code, message } }
}

function write(reply) {
  return new Promise((resolve, reject) => {
    process.stdout.write(`${JSON.stringify(reply)}\n`, (error) => (error ? reject(error) : resolve()))
  })
}

async function main() {
  // The suite closing its end of the pipe is the end of the run, not a crash.
  process.stdout.on('error', (error) => {
    console.error(`stdout: ${error.message}`)
    process.exit(error.code === 'EPIPE' ? 0 : 1)
  })
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })
  for await (const line of lines) {
    if (line.trim() === '') continue
    let request
    try {
      request = JSON.parse(line)
    } catch (error) {
      console.error(`unreadable request: ${error.message}`)
      continue
    }
    if (!isObject(request)) {
      console.error('unreadable request: not a JSON object')
      continue
    }
    let reply
    try {
      reply = handle(request)
      JSON.stringify(reply) // a reply that cannot be serialised must not kill the driver
    } catch (error) {
      reply = fail(request.id, 'UNMAPPED', `driver: could not build the reply: ${error?.name}: ${error?.message}`)
    }
    await write(reply)
    if (request.op === 'bye') break
  }
  process.exit(0)
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main()
