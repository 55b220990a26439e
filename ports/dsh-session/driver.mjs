#!/usr/bin/env node
/**
 * sessionlog-driver/1 driver for the published @deepseek-ai/dsh-session, its JSONL persistence
 * backend and its compaction package (all pinned in package.json).
 *
 * Run it with the Node 22 that npm installs next to it:
 *     ports/dsh-session/node_modules/.bin/node ports/dsh-session/driver.mjs [--omit GROUP ...]
 * Under a plain Node 20 it still runs every group that needs no persistence (see T11).
 * `--omit GROUP` leaves a group out of `hello` (its ops then reply UNSUPPORTED), e.g. `--omit read`
 * for a suite whose schema does not know the `read` group yet.
 *
 * Speaks JSON Lines on stdin/stdout (one reply per request, written before the next request is
 * read); everything else goes to stderr.  Every answer comes from the packages' PUBLIC API:
 *
 *   session  reset/seed/append/state  a live Session made by `ctx.sessions.create` in a cordis
 *            Context that has loaded InvariantRegistry (@deepseek-ai/dsh-invariants), SessionStore
 *            and the package's `@deepseek-ai/dsh-session/invariant` companion, so the turn / step /
 *            tool-pairing trace checks run on seed and on every append.  `state.header` is
 *            `session.requestHeader()` (null when undefined).
 *   surface  fold_surface             `foldSurface(events)`.
 *   header   fold_header              `foldRequestHeader(events)` (null when undefined).
 *   repair   repair                   `interruptedTurnClosers(events)`.
 *   jsonl    save                     `JsonlSessionPersistence.create(meta)` + `.append(id, events)`
 *                                     (the real writer, packed chunk rows on), then `.readRaw(id)`:
 *                                     the file's own text.
 *            load                     the text written to the session's file, then
 *                                     `JsonlSessionPersistence.load(id)` (the coordinator's
 *                                     prepare/commit path: scan, legacy normalisation, vocabulary
 *                                     check, crash-repair closers made durable, seed validation),
 *                                     then published as the current live session (T15).
 *   read     read                     the text written to the session's file, then
 *                                     `JsonlSessionPersistence.readFrom(id, 0)`: the detached,
 *                                     non-mutating stored read (no session, no closers).
 *   compaction cuts                   `toolPairingBalancedBefore/After(session, seq)` from
 *                                     @deepseek-ai/dsh-compaction over a scratch seeded session;
 *                                     `region` by @deepseek-ai/dsh-compaction-basic's region
 *                                     check, restated over those two functions (T17).
 *
 * Not declared, replied UNSUPPORTED (upstream has no standalone public API for them):
 *   header_decision  the writer rule is inlined in a private method of AgentLoop
 *                    (@deepseek-ai/dsh-agent-loop 0.1.0-rc.8); it has no `series` reason either.
 *   legacy           upstream writes format v0 and has no v0-to-v1 edge.
 *
 * `hello.format_version` is the package's own SESSION_FORMAT_VERSION (0): that is what it writes
 * (the driver only renumbers the header line, T13).
 *
 * TRANSLATIONS (pure plumbing; nothing here accepts or refuses on upstream's behalf except where
 * the request cannot be expressed through the API at all, and then the message says "driver:"):
 *
 *  T1  seq/time of appended events.  `Session.append(type, data, intent?)` assigns `seq = log
 *      length` and `time = Date.now()`; the protocol sends whole events.  The driver checks that
 *      the event's seq equals `session.seq` (else SEQ_NOT_CONTIGUOUS, "driver:"), and pins
 *      `Date.now` to the event's time for the duration of the call, so the logged event is the
 *      one sent.  A seq/time that is not a safe integer cannot be produced by upstream's own
 *      stamping (ENVELOPE_BAD_SEQ / ENVELOPE_BAD_TIME, "driver:").  A negative time is passed
 *      through (upstream seeds accept negative times too).
 *  T2  The envelope of an appended event is built by upstream from (type, data, intent), so
 *      members the API has no parameter for cannot be expressed: unknown envelope keys
 *      (ENVELOPE_UNKNOWN_KEY), a missing or non-string type (ENVELOPE_MISSING_KEY /
 *      ENVELOPE_BAD_TYPE), `ignorable` other than true (ENVELOPE_BAD_IGNORABLE), and
 *      `ignorable: true` itself, which upstream's append cannot write: that one is refused with
 *      UNMAPPED ("driver: ...") so that it shows up as a divergence instead of being dropped.
 *      A missing `data` is passed as `undefined` and judged by upstream.
 *  T3  `surfaceOp` / `sourceEventSeqs` go into the `intent` argument exactly as sent (only the
 *      members present), for every type; upstream decides whether the type may carry them.
 *  T4  End-of-seed marker.  Seeding goes through `ctx.sessions.create(id, {seed})`, whose Session
 *      constructor appends `session/end-seed {}` itself unless the seed already ends with one; its
 *      time is `Date.now()`, pinned to the time of the last seed event (0 for an empty seed).
 *  T5  Sessions.  Each reset/seed/load creates a NEW live session with a fresh id
 *      (`conformance-<n>`) in its own cordis fiber, so a seed is validated while the previous
 *      session is still live; only when it is accepted is the previous fiber disposed (which
 *      removes its session from the store).  A refused seed therefore leaves the previous session
 *      in place by construction; a refused append is upstream's own doing (checks run before
 *      the push).  `reset.header` supplies `createdAt` to the live session (the store stamps
 *      version 0 itself) and is kept whole as the header line `save` writes (T14).
 *  T6  fold_surface: `replace_generation` is `replacements.length` (upstream increments its
 *      generation once per replacement, and foldSurface returns every replacement), and
 *      `shadowedSeqs` is renamed `shadowed`.
 *  T7  repair mirrors upstream's own load path (PersistenceCoordinator.prepareCore in
 *      @deepseek-ai/dsh-session-persistence): closers = `interruptedTurnClosers(events)`, then the
 *      repaired log `events + closers` is validated by seeding a scratch live session (store +
 *      invariants) that is disposed straight away.  A refusal there refuses the request.
 *  T8  Transport: requests are parsed with JSON.parse, so an integer beyond 2^53 arrives as the
 *      nearest double — the only value a JavaScript caller could ever hand to the package.
 *  T9  Errors.  Upstream throws plain Errors (and InvariantError, code "INVARIANT") with only a
 *      message.  ERROR_TABLE below maps messages to violation codes (first match wins; the
 *      InvariantError prefix and the seed wrapper "invalid seed event at index N: " are stripped
 *      first).  A message no row matches, or one that names several rules at once (the seed's
 *      catch-all "invalid event envelope"), is replied as UNMAPPED with the raw message; a crash
 *      (TypeError and the like) is UNMAPPED with the error name in front.  The persistence
 *      packages' SessionPersistenceCorruptionError ("stored session ... failed validation: ...")
 *      is mapped through the error it wraps (`cause`); SessionFormatUnsupportedError is mapped
 *      by its message.  The driver's private storage path is shown as `<store>` in messages.
 *  T10 An append that upstream commits but whose resulting state cannot be read (state reads
 *      `session.requestHeader()`, which can throw) is replied UNMAPPED with a "driver: upstream
 *      ACCEPTED ..." message: the protocol's append reply carries the state, and the driver
 *      will not invent one.  The following `state` request shows the same error.
 *  T11 Runtime.  @deepseek-ai/dsh-session-persistence-jsonl imports the zstd API of node:zlib
 *      (Node >= 22.15) at module load, so the driver runs under the npm package `node@22.23.3`.
 *      The persistence packages are imported lazily: when the import fails (plain Node 20),
 *      `jsonl` and `read` are left out of `hello` and the reason is written to stderr; the other
 *      groups run unchanged.  Likewise for @deepseek-ai/dsh-compaction and `compaction`.
 *  T12 Storage.  Each save/load/read loads a fresh JsonlSessionPersistence plugin (root: a new
 *      directory under the driver's private mkdtemp directory; `compression: "none"` so the file
 *      is plain JSONL; every other option at upstream's default, so `packChunks` is on) into a
 *      persistence Context of its own (InvariantRegistry + SessionStore + the /invariant
 *      companion, like the live one), and disposes it and removes the directory afterwards.
 *      load/read put the text where the backend looks for the header line's own session:
 *      `locate({id, cwd})` of that line (id "conformance" when the line has no string id; when
 *      `locate` throws on the cwd, `locate({id})`; on the id, the placeholder's place), then ask
 *      for that id.  Nothing else is parsed or checked by the driver: upstream reads the file.
 *      A text that cannot even be written there (say, an id too long for a file name) is
 *      refused UNMAPPED with a "driver:" message.
 *  T13 Format version.  Upstream 0.1.0-rc.8 writes and reads only format version 0
 *      (SESSION_FORMAT_VERSION); the suite's v1 physical layout is v0's with `version: 1` (an
 *      identity edge).  So on the way in, a header line whose (last) `version` member is the
 *      number 1 gets that one value token rewritten to `0` in the text (nothing else on the
 *      line changes: key order, spacing, other members, even `-0`, stay byte for byte); a v0
 *      line is passed unchanged (rc.8 reads it as its own format, legacy normalisation
 *      included); any other version is passed unchanged for upstream to refuse.  On the way
 *      out, `save` renumbers the written line 0 -> the current header's version (1, or 0 after
 *      a v0 reset), and load/read report the header line in v1 form (T15, T16).
 *  T14 save writes the current live session's events through `create(meta)` + `append(id, events)`
 *      with meta = the current header line (reset's, or the loaded one) minus `type`, version 0
 *      (T13).  The reply is `readRaw(id).content`, the exact file text.  A session with no events
 *      is never materialized upstream (the file is created lazily with the first batch), so
 *      `readRaw` finds nothing: that save is refused UNMAPPED ("driver: upstream stored nothing").
 *  T15 load.  `loadStored(id)` (the backend's pure read that `load` itself starts with) gives
 *      `dropped_torn_tail` (its torn marker is present whenever the scan kept less than the whole
 *      file: a torn final line or a dropped damaged suffix) and the number of events kept; then
 *      `load(id)` runs the real load path and returns the balanced log; `closers` is how many
 *      events it added.  The balanced log then becomes the current session the way a resume
 *      publishes one: `sessions.prepare(id, {seed, meta, seedSource: "persistence"})`
 *      (Session.fromRestore) + `enter` + `announce` in the driver's live Context (the invariant
 *      companion checks the trace on announce).  fromRestore appends `session/end-seed {}` unless
 *      the log already ends with one (T4; `Date.now` pinned to the last event's time), so the
 *      state counts it.  The live session keeps a fresh id (T5); the header line (in v1 form,
 *      built from the header upstream read, as its toHeaderLine writes it) becomes the one
 *      `save` writes.  A refusal anywhere leaves the previous session in place.
 *  T16 read replies `{header, events}` from `readFrom(id, 0)`: header = the header upstream read,
 *      in its own toHeaderLine member order, with `version: 1`; events exactly as returned.
 *      readFrom checks no event envelope, so it can return an event the protocol's reply schema
 *      cannot carry (a negative time, a non-string type, no data when ignorable); the driver
 *      replies it anyway, and the suite reports that as a port fault at the field: it is
 *      upstream's answer, not one the driver makes up.
 *  T17 cuts seeds a scratch live session from `events` (as T7 validates) and asks
 *      `toolPairingBalancedBefore(session, nodes[0])` and `toolPairingBalancedAfter(session, s)`
 *      for every surface node s: that is the N + 1 cuts.  An empty surface has no seq to ask
 *      about; its single cut is replied `[true]` (upstream's balance cache starts from that
 *      value).  `around` is `[before(seq), after(seq)]`; a seq off the surface is upstream's own
 *      "surface seq N not found" (NOT_ON_SURFACE).  A surface on which a tool/result closes a
 *      call no earlier node opened is refused by upstream's balance cache ("tool/result at
 *      surface seq N has no matching tool-call", TOOL_PAIRING_NEGATIVE); the session itself
 *      accepted it on seed, as it accepts any contiguous replacement.  The whole `balanced` list
 *      is computed first, so on such a surface that refusal comes before `seq` or `region` are
 *      looked at.  `region: {start, end}` is then checked by `validateSurfaceRegion(session,
 *      start, end)`, the check @deepseek-ai/dsh-compaction-basic 0.1.0-rc.8 runs before a
 *      compaction writes anything; that package is not installed and does not export it, so
 *      the driver restates its body line for line, with its own messages, over the released
 *      `toolPairingBalancedBefore/After`: start on the surface, end on the surface, start not
 *      after end (surface positions), the cut before start, the cut after end.  `shadowed` is
 *      its `shadowedSeqs`.  A `seq`, `region.start` or `region.end` that is not a number is a
 *      BAD_REQUEST (upstream compares seqs with ===, so no other JSON value can name a node).
 */

import { createInterface } from 'node:readline'
import { readFileSync, rmSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'

// Keep stdout for replies only: anything the packages log goes to stderr.
for (const method of ['log', 'info', 'debug', 'warn', 'trace']) console[method] = console.error

const { Context } = await import('@deepseek-ai/cordis')
const { default: InvariantRegistry } = await import('@deepseek-ai/dsh-invariants')
const { SessionStore, SESSION_FORMAT_VERSION, foldSurface, foldRequestHeader, interruptedTurnClosers } = await import(
  '@deepseek-ai/dsh-session'
)
const sessionInvariant = await import('@deepseek-ai/dsh-session/invariant')

// T11: the persistence and compaction packages are imported lazily, so that a runtime that cannot
// load one of them still runs every other group.
const MISSING = {}
let JsonlSessionPersistence
try {
  ;({ JsonlSessionPersistence } = await import('@deepseek-ai/dsh-session-persistence-jsonl'))
} catch (error) {
  MISSING.jsonl = MISSING.read = `@deepseek-ai/dsh-session-persistence-jsonl cannot be imported on Node ${process.versions.node} (${error.name}: ${error.message}); run the driver with ports/dsh-session/node_modules/.bin/node (Node 22)`
  console.error(`driver: groups jsonl and read left out: ${MISSING.jsonl}`)
}
let toolPairingBalancedBefore, toolPairingBalancedAfter
try {
  ;({ toolPairingBalancedBefore, toolPairingBalancedAfter } = await import('@deepseek-ai/dsh-compaction'))
} catch (error) {
  MISSING.compaction = `@deepseek-ai/dsh-compaction cannot be imported (${error.name}: ${error.message})`
  console.error(`driver: group compaction left out: ${MISSING.compaction}`)
}

/** Upstream error message -> violation code.  [regex, code]; first match wins. */
export const ERROR_TABLE = [
  // Surface (foldSurface, SurfaceManager.validateNext, Session.append, seeds).
  [/^session event seq \d+ is not contiguous; expected \d+$/, 'SEQ_NOT_CONTIGUOUS'],
  [/^session event ".*" is not surface-eligible and cannot carry surfaceOp$/, 'SURFACE_OP_FORBIDDEN'],
  [/^session event ".*" is not surface-eligible and cannot carry sourceEventSeqs$/, 'SOURCES_FORBIDDEN'],
  [/^session event ".*" is surface-eligible and requires a surfaceOp marker$/, 'SURFACE_OP_MISSING'],
  [/^session event ".*" carries an invalid surfaceOp$/, 'SURFACE_OP_INVALID'],
  [/^session event ".*" carries an invalid replace surfaceOp$/, 'SURFACE_OP_INVALID'],
  [/^surface replace: start seq \d+ not found in surface$/, 'REPLACE_START_NOT_ON_SURFACE'],
  [/^surface replace: end seq \d+ not found in surface$/, 'REPLACE_END_NOT_ON_SURFACE'],
  [/^surface replace: start seq \d+ \(index \d+\) is after end seq \d+ \(index \d+\)$/, 'REPLACE_RANGE_INVERTED'],
  [/^sourceEventSeqs on event at seq \d+ must be an array when present$/, 'SOURCES_INVALID'],
  [/^session event ".*" sourceEventSeqs must densely contain non-negative safe integers$/, 'SOURCES_INVALID'],
  [/^sourceEventSeqs must not be empty except on assistant\/message$/, 'SOURCES_EMPTY'],
  [/^sourceEventSeqs must not contain duplicates$/, 'SOURCES_DUPLICATE'],
  [/^sourceEventSeqs must reference earlier events: \d+ >= current seq \d+$/, 'SOURCES_NOT_EARLIER'],
  [/^surface replace: sourceEventSeqs must include every shadowed surface node; missing [\d, ]+$/, 'SOURCES_MISSING_SHADOWED'],
  [/^tool\/result surface replacement must rewrite exactly one current node$/, 'TOOL_REWRITE_SPAN'],
  [/^tool\/result surface replacement must target a current tool\/result$/, 'TOOL_REWRITE_TARGET'],
  [/^tool\/result surface replacement may change only content$/, 'TOOL_REWRITE_CHANGES'],
  // Seeds: envelope, JSON, contiguity, legacy vocabulary, request headers, message shapes.
  [/^seed event at index \d+ has seq .* \(expected \d+\); seed must be contiguous from 0$/, 'SEQ_NOT_CONTIGUOUS'],
  [/^seed event at index \d+ is not losslessly JSON-serializable$/, 'JSON_NOT_LOSSLESS'],
  [/^session event ".*" carries non-JSON-serializable (data|surface metadata)$/, 'JSON_NOT_LOSSLESS'],
  [/ uses unsupported legacy request\/header-delta format$/, 'LEGACY_HEADER_DELTA'],
  [/ uses unsupported legacy request\/header reason "fallback"$/, 'LEGACY_FALLBACK_REASON'],
  [/^seed request\/header at index \d+ lacks provider\/model$/, 'HEADER_NOT_PINNED'],
  [/^seed request\/header at index \d+ has an invalid reasoningEffort$/, 'HEADER_INVALID'],
  [/^seed request\/header at index \d+ has invalid adapterDefaults$/, 'HEADER_ADAPTER_DEFAULTS_INVALID'],
  [/^seed user\/message at index \d+ /, 'USER_MESSAGE_INVALID'],
  [/^seed assistant\/message at index \d+ /, 'ASSISTANT_MESSAGE_INVALID'],
  [/^seed tool\/result at index \d+ /, 'TOOL_RESULT_INVALID'],
  // Trace invariants (InvariantError from the /invariant companion, prefix stripped).
  [/^seq must strictly increase: saw .* after .*$/, 'SEQ_NOT_CONTIGUOUS'],
  [/^turn\/start .* while turn .* is still open$/, 'TURN_ALREADY_OPEN'],
  [/^turn\/start expected turn .*, got .*$/, 'TURN_NUMBER'],
  [/^turn\/end .* does not match open turn .*$/, 'TURN_END_MISMATCH'],
  [/^turn\/end .* while step .* is still open$/, 'STEP_STILL_OPEN'],
  [/^step\/start in turn .* but open turn is .*$/, 'STEP_OUTSIDE_TURN'],
  [/^step\/start .* while step .* is still open$/, 'STEP_ALREADY_OPEN'],
  [/^step\/start expected step .* in turn .*, got .*$/, 'STEP_NUMBER'],
  [/^step\/end names turn .*\/step .* but open is turn .*\/step .*$/, 'STEP_END_MISMATCH'],
  [/^(assistant\/chunk|assistant\/message|tool\/call|tool\/result) names turn .*\/step .* but open is turn .*$/, 'EVENT_OUTSIDE_STEP'],
  [/^tool\/result for .* with no prior tool\/call in this step$/, 'TOOL_RESULT_UNPAIRED'],
  [/^tool\/result surface replacement appended outside any open turn$/, 'EVENT_OUTSIDE_TURN'],
  [/^.* appended outside any open turn \(core execution events must be turn-enclosed\)$/, 'EVENT_OUTSIDE_TURN'],
  // Stored logs (@deepseek-ai/dsh-session-persistence-jsonl: SessionLogScanner, header line, file
  // identity; @deepseek-ai/dsh-session-persistence: the coordinator's read path).
  [/^empty or header-less session log$/, 'JSONL_HEADER_MISSING'],
  [/^corrupt session log: header line is not valid JSON$/, 'JSONL_MALFORMED_LINE'],
  [/^corrupt session log: first line is not a session header$/, 'JSONL_HEADER_INVALID'],
  [/^session header uses retired policy baseline fields$/, 'JSONL_HEADER_INVALID'],
  [/^corrupt session log: unparsable committed event at line \d+$/, 'JSONL_MALFORMED_LINE'],
  [/^corrupt session log: seq gap in committed region at line \d+ \(expected \d+, got .*\)$/, 'SEQ_NOT_CONTIGUOUS'],
  [/^corrupt session log ".*": (requested id .* does not match header id|header id cannot name a storage path|header id .* and cwd identify )/, 'JSONL_HEADER_INVALID'],
  [/^stored session identity mismatch: /, 'JSONL_HEADER_INVALID'],
  [/^cannot encode an empty (path segment|project path)$/, 'JSONL_HEADER_INVALID'],
  [/^session ".*" uses log format v.*, (but this harness reads only|older than the supported) v\d+/, 'FORMAT_VERSION_UNSUPPORTED'],
  [/^session ".*" contains event type ".*" \(seq \d+\) unknown to this harness and not marked ignorable/, 'UNKNOWN_EVENT_TYPE'],
  [/^session ".*" contains unsupported legacy request\/header-delta event at seq \d+$/, 'LEGACY_HEADER_DELTA'],
  [/^session ".*" contains unsupported legacy mode\/set event at seq \d+$/, 'LEGACY_MODE_SET'],
  [/^session ".*" contains unsupported legacy request\/header reason "fallback" at seq \d+$/, 'LEGACY_FALLBACK_REASON'],
  [/^session ".*" contains malformed pre-react-loop turn\/start at seq \d+$/, 'TRACE_DATA_INVALID'],
  [/^session ".*" contains malformed pre-react-loop turn\/end at seq \d+$/, 'TURN_END_REASON_INVALID'],
  // The restored header (Session.fromRestore -> validateSessionHeader) and the per-event message
  // check of the read path (adoptSessionEvent: "session event at seq N ..."; only the messages
  // that name one event type are mapped).
  [/^session header (version|id|createdAt|cwd|parentSession|seedLength|origin|delegationDepth|agentPreset) /, 'JSONL_HEADER_INVALID'],
  [/^session header is not a plain JSON record$/, 'JSONL_HEADER_INVALID'],
  [/^session event at seq \d+ message must have (model source|role "assistant")$/, 'ASSISTANT_MESSAGE_INVALID'],
  [/^session event at seq \d+ message (must have tool source|must contain one tool-result block|has mismatched tool call ids)$/, 'TOOL_RESULT_INVALID'],
  // Tool-pairing balance (@deepseek-ai/dsh-compaction).
  [/^tool-pairing balance: surface seq .* not found$/, 'NOT_ON_SURFACE'],
  [/^tool-pairing balance: tool\/result at surface seq \d+ has no matching tool-call/, 'TOOL_PAIRING_NEGATIVE'],
  // Compaction regions (@deepseek-ai/dsh-compaction-basic validateSurfaceRegion, restated, T17).
  [/^compactRegion: start seq .* not found in surface$/, 'REPLACE_START_NOT_ON_SURFACE'],
  [/^compactRegion: end seq .* not found in surface$/, 'REPLACE_END_NOT_ON_SURFACE'],
  [/^compactRegion: start seq .* \(position \d+\) is after end seq .* \(position \d+\) on the surface$/, 'REPLACE_RANGE_INVERTED'],
  [/^compactRegion: (start|end) seq .* is not a balanced boundary /, 'REPLACE_SPLITS_TOOL_PAIR'],
  // Deliberately NOT mapped (several rules share one message): "seed event at index N has an
  // invalid event envelope" (unknown key, missing data, bad type/seq/time or ignorable);
  // "session event at seq N lacks an identified message" / "... has invalid source|content" /
  // "... must have role \"user\"" (user/message or tool/result); "session \"id\" not found"
  // (the driver put the file where the backend does not look, T12).
]

const INVARIANT_PREFIX = /^invariant violated by "[^"]*": /
const SEED_WRAPPER = /^invalid seed event at index \d+: /

/** The violation code for an upstream error message, or UNMAPPED. */
export function codeFor(message) {
  let text = message.replace(INVARIANT_PREFIX, '').replace(SEED_WRAPPER, '')
  text = text.replace(INVARIANT_PREFIX, '')
  for (const [pattern, code] of ERROR_TABLE) if (pattern.test(text)) return code
  return 'UNMAPPED'
}

class Refusal extends Error {
  constructor(code, message) {
    super(message)
    this.code = code
  }
}
class BadRequest extends Error {}

/** Errors whose message is upstream's refusal text (the rest are crashes: UNMAPPED with the name). */
const MESSAGE_ERRORS = new Set(['Error', 'InvariantError', 'SessionFormatUnsupportedError'])

/** A reply error for anything upstream threw (T9). */
function upstreamError(error) {
  if (!(error instanceof Error)) return { code: 'UNMAPPED', message: `non-Error thrown: ${String(error)}` }
  if (error.name === 'SessionPersistenceCorruptionError' && error.cause instanceof Error) {
    // "stored session "<id>" failed validation: <String(cause)>": the cause is the refusal.
    return { code: upstreamError(error.cause).code, message: scrub(`${error.name}: ${error.message}`) }
  }
  const plain = MESSAGE_ERRORS.has(error.name)
  const code = plain ? codeFor(error.message) : 'UNMAPPED'
  const message = plain && error.name !== 'SessionFormatUnsupportedError' ? error.message : `${error.name}: ${error.message}`
  return { code, message: scrub(message) }
}

// ---- the clock (T1, T4) ----------------------------------------------------------------------
const realNow = Date.now
function atTime(time, fn) {
  Date.now = () => time
  try {
    return fn()
  } finally {
    Date.now = realNow
  }
}

// ---- live sessions (T5) ----------------------------------------------------------------------
const ctx = new Context()
await ctx.plugin(InvariantRegistry)
await ctx.plugin(SessionStore)
await ctx.plugin(sessionInvariant)

const DEFAULT_HEADER = { type: 'session', version: 1, id: 'conformance', createdAt: 0, delegationDepth: 0 }
let counter = 0
let createdAt = 0
let currentHeader = DEFAULT_HEADER
let current

/** Run `build(child)` in a new fiber that owns the session it returns; throws what upstream throws. */
async function sessionFiber(name, build) {
  let session
  const fiber = ctx.plugin({
    name,
    inject: ['sessions'],
    apply: (child) => {
      session = build(child)
    },
  })
  try {
    await fiber
  } catch (error) {
    await fiber.dispose()
    throw error
  }
  if (session === undefined) throw new Error('driver: session was not created')
  return { session, fiber }
}

/** A new live session (fresh id, own fiber); throws what upstream throws, leaving nothing behind. */
function openSession(seed, time) {
  const id = `conformance-${++counter}`
  const options = { meta: { createdAt }, ...(seed === undefined ? {} : { seed }) }
  return sessionFiber('sessionlog-conformance-session', (child) => atTime(time, () => child.sessions.create(id, options)))
}

/**
 * T15: publish a stored log as a live session the way a resume does: prepare it from persistence
 * values (Session.fromRestore), then enter + announce it, as `sessions.create` does for a seed.
 */
function openRestored(events, meta, time) {
  const id = `conformance-${++counter}`
  return sessionFiber('sessionlog-conformance-restored', (child) => {
    const session = atTime(time, () =>
      child.sessions.prepare(id, { seed: events, meta: { ...meta, id }, seedSource: 'persistence' }),
    )
    child.effect(function* () {
      yield child.sessions.enter(session)
      child.sessions.announce(session)
    }, 'sessionlog-conformance restore')
    return session
  })
}

async function replaceCurrent(next) {
  const previous = current
  current = next
  if (previous !== undefined) await previous.fiber.dispose()
}

function stateOf(session) {
  const header = session.requestHeader()
  return {
    length: session.seq,
    nodes: [...session.surface.nodes],
    replace_generation: session.surface.replaceGeneration,
    header: header === undefined ? null : header,
  }
}

// ---- stored logs (T12-T16) -------------------------------------------------------------------
let privateRoot
let persistenceContext
let storeCounter = 0

/** The driver's private path in a message, replaced by `<store>` so that messages are stable. */
function scrub(message) {
  return privateRoot === undefined ? message : message.split(privateRoot).join('<store>')
}

/** T12: run `fn(backend)` against a fresh JsonlSessionPersistence in a directory of its own. */
async function withStore(fn) {
  privateRoot ??= await mkdtemp(join(tmpdir(), 'sessionlog-dsh-session-'))
  if (persistenceContext === undefined) {
    const store = new Context()
    await store.plugin(InvariantRegistry)
    await store.plugin(SessionStore)
    await store.plugin(sessionInvariant)
    persistenceContext = store
  }
  const root = join(privateRoot, `store-${++storeCounter}`)
  const fiber = persistenceContext.plugin(JsonlSessionPersistence, { root, compression: 'none' })
  try {
    await fiber
    return await fn(persistenceContext.sessionPersistence)
  } finally {
    await fiber.dispose()
    await rm(root, { recursive: true, force: true })
  }
}

/** The top-level members of one valid JSON object text: key and value span, in text order. */
function objectMembers(text) {
  const members = []
  let i = 0
  const ws = () => {
    while (i < text.length && ' \t\r\n'.includes(text[i])) i++
  }
  const skipString = () => {
    i++ // opening quote
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1
    i++
  }
  const skipValue = () => {
    if (text[i] === '"') return skipString()
    if (text[i] === '{' || text[i] === '[') {
      let depth = 0
      do {
        if (text[i] === '"') {
          skipString()
          continue
        }
        if (text[i] === '{' || text[i] === '[') depth++
        else if (text[i] === '}' || text[i] === ']') depth--
        i++
      } while (depth > 0)
      return
    }
    while (i < text.length && !',}] \t\r\n'.includes(text[i])) i++
  }
  ws()
  i++ // {
  for (;;) {
    ws()
    if (text[i] === '}') return members
    const keyStart = i
    skipString()
    const key = JSON.parse(text.slice(keyStart, i))
    ws()
    i++ // :
    ws()
    const start = i
    skipValue()
    members.push({ key, start, end: i })
    ws()
    if (text[i] === ',') i++
  }
}

/**
 * T13: the text with its header line's `version` number `from` rewritten to `to`, touching only
 * that value token; any other text (no header line, not a JSON object, another version) unchanged.
 */
function renumberHeader(text, from, to) {
  const newline = text.indexOf('\n')
  if (newline === -1) return text
  const line = text.slice(0, newline)
  let parsed
  try {
    parsed = JSON.parse(line)
  } catch {
    return text
  }
  if (!isObject(parsed) || parsed.version !== from || from === to) return text
  const member = objectMembers(line).findLast((m) => m.key === 'version')
  const edited = line.slice(0, member.start) + String(to) + line.slice(member.end)
  return edited + text.slice(newline)
}

/** T12: where the backend looks for the session the text's header line names, and that id. */
function placement(backend, text) {
  const newline = text.indexOf('\n')
  let header
  try {
    header = JSON.parse(newline === -1 ? text : text.slice(0, newline))
  } catch {
    header = undefined
  }
  const id = isObject(header) && typeof header.id === 'string' ? header.id : 'conformance'
  const cwd = isObject(header) && 'cwd' in header ? { cwd: header.cwd } : {}
  // The header's own place; if its cwd cannot name a directory, the place its id alone names (the
  // backend finds the file by id in any project directory, then judges the cwd itself); if the id
  // cannot name one either, a placeholder (the backend then fails on the id itself).
  for (const meta of [{ id, ...cwd }, { id }, { id: 'conformance' }]) {
    try {
      return { id, path: backend.locate(meta).path }
    } catch {
      // try the next place
    }
  }
  throw new Error('driver: the backend cannot locate even a placeholder session')
}

/** T12/T13: write the stored text where the backend reads it; the id to ask the backend for. */
async function place(backend, text) {
  const { id, path } = placement(backend, text)
  try {
    await mkdir(dirname(path), { recursive: true })
    await writeFile(path, renumberHeader(text, 1, 0), 'utf8')
  } catch (error) {
    throw new Refusal('UNMAPPED', scrub(`driver: cannot place the log where the backend reads it: ${error.message}`))
  }
  return id
}

/** T15/T16: a SessionHeader upstream read, as the v1 header line (upstream's toHeaderLine order). */
function headerLineOf(meta) {
  return {
    type: 'session',
    version: 1,
    id: meta.id,
    createdAt: meta.createdAt,
    ...(meta.cwd !== undefined ? { cwd: meta.cwd } : {}),
    ...(meta.parentSession !== undefined ? { parentSession: meta.parentSession } : {}),
    ...(meta.seedLength !== undefined ? { seedLength: meta.seedLength } : {}),
    ...(meta.origin !== undefined ? { origin: meta.origin } : {}),
    delegationDepth: meta.delegationDepth ?? 0,
    ...(meta.agentPreset !== undefined ? { agentPreset: meta.agentPreset } : {}),
  }
}

/** T14: the SessionHeader `create` takes for a header line: its members but `type`, version 0. */
function metaOf(line) {
  const { type: _type, ...meta } = line
  return { ...meta, version: SESSION_FORMAT_VERSION }
}

// ---- ops ---------------------------------------------------------------------------------------
const ENVELOPE_KEYS = new Set(['type', 'seq', 'time', 'data', 'surfaceOp', 'sourceEventSeqs', 'ignorable'])
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)
const isSafeNatural = (v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0

function eventsArg(request) {
  if (!Array.isArray(request.events)) throw new BadRequest('events must be an array')
  return request.events
}

function textArg(request) {
  if (typeof request.jsonl !== 'string') throw new BadRequest('jsonl must be a string')
  return request.jsonl
}

function seedTime(events) {
  const last = events.at(-1)
  return isObject(last) && typeof last.time === 'number' ? last.time : 0
}

/** T1/T2: what the protocol event becomes as an append call, or a driver refusal. */
function appendCall(event, nextSeq) {
  if (!isObject(event)) throw new Refusal('ENVELOPE_NOT_OBJECT', 'driver: the event is not an object')
  const extra = Object.keys(event).filter((k) => !ENVELOPE_KEYS.has(k))
  if (extra.length > 0)
    throw new Refusal('ENVELOPE_UNKNOWN_KEY', `driver: Session.append cannot write envelope key(s) ${extra.join(', ')}`)
  const missing = ['type', 'seq', 'time'].filter((k) => !(k in event))
  if (missing.length > 0) throw new Refusal('ENVELOPE_MISSING_KEY', `driver: the event lacks ${missing.join(', ')}`)
  if (typeof event.type !== 'string') throw new Refusal('ENVELOPE_BAD_TYPE', 'driver: Session.append takes a string type')
  if (!isSafeNatural(event.seq))
    throw new Refusal('ENVELOPE_BAD_SEQ', `driver: upstream assigns seq = log length; ${JSON.stringify(event.seq)} is not one`)
  if (typeof event.time !== 'number' || !Number.isSafeInteger(event.time))
    throw new Refusal('ENVELOPE_BAD_TIME', `driver: Date.now() cannot return ${JSON.stringify(event.time)}`)
  if ('ignorable' in event) {
    if (event.ignorable !== true) throw new Refusal('ENVELOPE_BAD_IGNORABLE', 'driver: ignorable must be absent or true')
    throw new Refusal('UNMAPPED', 'driver: Session.append(type, data, intent) has no way to write `ignorable: true`')
  }
  if (event.seq !== nextSeq)
    throw new Refusal('SEQ_NOT_CONTIGUOUS', `driver: event seq ${event.seq} is not the session's next seq ${nextSeq}`)
  const intent = {}
  if ('surfaceOp' in event) intent.surfaceOp = event.surfaceOp
  if ('sourceEventSeqs' in event) intent.sourceEventSeqs = event.sourceEventSeqs
  return { intent: Object.keys(intent).length > 0 ? [intent] : [] }
}

const require = createRequire(import.meta.url)
const upstreamVersion = JSON.parse(readFileSync(require.resolve('@deepseek-ai/dsh-session/package.json'), 'utf8')).version

/** Which group each op belongs to (hello and bye belong to none). */
const GROUP_OF = {
  reset: 'session',
  seed: 'session',
  append: 'session',
  state: 'session',
  fold_surface: 'surface',
  fold_header: 'header',
  header_decision: 'header',
  repair: 'repair',
  save: 'jsonl',
  load: 'jsonl',
  read: 'read',
  upgrade_v0: 'legacy',
  cuts: 'compaction',
}
const GROUPS = ['session', 'surface', 'header', 'repair', 'jsonl', 'read', 'legacy', 'compaction']

/** Groups upstream cannot serve at all, and why (the suite reports them as unsupported). */
const NOT_UPSTREAM = {
  legacy: 'upstream writes format v0 and has no v0-to-v1 edge',
  ...MISSING,
}
/** Ops of a declared group that have no standalone upstream API (replied UNSUPPORTED). */
const NOT_STANDALONE = {
  header_decision:
    'the request-header writer rule is inlined in a private AgentLoop method (@deepseek-ai/dsh-agent-loop); no standalone public API',
}

/** `--omit GROUP` (repeatable): leave a group out of hello. */
function omittedGroups(argv) {
  const omitted = {}
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--omit' && i + 1 < argv.length) omitted[argv[++i]] = 'left out with --omit'
    else if (argv[i].startsWith('--omit=')) omitted[argv[i].slice('--omit='.length)] = 'left out with --omit'
    else console.error(`driver: ignoring argument ${JSON.stringify(argv[i])}`)
  }
  return omitted
}
const UNDECLARED = { ...NOT_UPSTREAM, ...omittedGroups(process.argv.slice(2)) }
const CAPABILITIES = GROUPS.filter((group) => UNDECLARED[group] === undefined)

const ops = {
  hello: async () => ({
    protocol: 'sessionlog-driver/1',
    implementation: { name: '@deepseek-ai/dsh-session', version: upstreamVersion },
    capabilities: CAPABILITIES,
    format_version: SESSION_FORMAT_VERSION,
  }),
  bye: async () => null,
  reset: async (request) => {
    let header = DEFAULT_HEADER
    if ('header' in request) {
      if (!isObject(request.header)) throw new BadRequest('header must be an object')
      header = request.header
    }
    createdAt = isSafeNatural(header.createdAt) ? header.createdAt : 0
    await replaceCurrent(await openSession(undefined, createdAt))
    currentHeader = header
    return null
  },
  seed: async (request) => {
    const events = eventsArg(request)
    const next = await openSession(events, seedTime(events))
    await replaceCurrent(next)
    return stateOf(next.session)
  },
  append: async (request) => {
    if (!('event' in request)) throw new BadRequest('append needs an event')
    const { session } = current
    const event = request.event
    const { intent } = appendCall(event, session.seq)
    atTime(event.time, () => session.append(event.type, event.data, ...intent))
    try {
      return stateOf(session)
    } catch (error) {
      const { message } = upstreamError(error)
      throw new Refusal(
        'UNMAPPED',
        `driver: upstream ACCEPTED the event (committed at seq ${event.seq}) but reading the state then failed: ${message}`,
      )
    }
  },
  state: async () => stateOf(current.session),
  fold_surface: async (request) => {
    const { nodes, replacements } = foldSurface(eventsArg(request))
    return {
      nodes,
      replace_generation: replacements.length,
      replacements: replacements.map((r) => ({ seq: r.seq, start: r.start, end: r.end, shadowed: r.shadowedSeqs })),
    }
  },
  fold_header: async (request) => {
    const header = foldRequestHeader(eventsArg(request))
    return { header: header === undefined ? null : header }
  },
  repair: async (request) => {
    const events = eventsArg(request)
    const closers = interruptedTurnClosers(events)
    const repaired = [...events, ...closers]
    const scratch = await openSession(repaired, seedTime(repaired))
    await scratch.fiber.dispose()
    return { closers }
  },
  save: async () => {
    const events = current.session.events.map((event) => structuredClone(event))
    const meta = metaOf(currentHeader)
    const content = await withStore(async (backend) => {
      await backend.create(meta)
      if (events.length > 0) await backend.append(meta.id, events)
      const raw = await backend.readRaw(meta.id)
      if (raw === undefined)
        throw new Refusal(
          'UNMAPPED',
          'driver: upstream stored nothing: a session with no events is never materialized (the file is written with the first append batch), so there is no file text to reply',
        )
      return raw.content
    })
    return { jsonl: renumberHeader(content, SESSION_FORMAT_VERSION, currentHeader.version === 0 ? 0 : 1) }
  },
  load: async (request) => {
    const text = textArg(request)
    const { meta, events, dropped, closers } = await withStore(async (backend) => {
      const id = await place(backend, text)
      let stored
      try {
        stored = await backend.loadStored(id)
      } catch {
        stored = undefined // load(id) starts with this same read and throws the same error itself
      }
      const inspection = await backend.load(id)
      if (stored === undefined) throw new Error(`driver: the backend's pure read failed where load(${JSON.stringify(id)}) did not`)
      return {
        meta: structuredClone(inspection.meta),
        events: inspection.events.map((event) => structuredClone(event)),
        dropped: stored.tornMarker !== undefined,
        closers: inspection.events.length - stored.events.length,
      }
    })
    const next = await openRestored(events, meta, seedTime(events))
    await replaceCurrent(next)
    currentHeader = headerLineOf(meta)
    createdAt = meta.createdAt
    return { ...stateOf(next.session), dropped_torn_tail: dropped, closers }
  },
  read: async (request) => {
    const text = textArg(request)
    return withStore(async (backend) => {
      const id = await place(backend, text)
      const { meta, events } = await backend.readFrom(id, 0)
      return { header: headerLineOf(meta), events }
    })
  },
  cuts: async (request) => {
    const events = eventsArg(request)
    if ('seq' in request && typeof request.seq !== 'number') throw new BadRequest('seq must be a number')
    const region = request.region
    if ('region' in request && (typeof region !== 'object' || region === null || Array.isArray(region)))
      throw new BadRequest('region must be an object {start, end}')
    if ('region' in request && (typeof region.start !== 'number' || typeof region.end !== 'number'))
      throw new BadRequest('region.start and region.end must be numbers')
    const scratch = await openSession(events, seedTime(events))
    try {
      const { session } = scratch
      const nodes = [...session.surface.nodes]
      const balanced =
        nodes.length === 0
          ? [true]
          : [
              toolPairingBalancedBefore(session, nodes[0]),
              ...nodes.map((seq) => toolPairingBalancedAfter(session, seq)),
            ]
      const result = { nodes, balanced }
      if ('seq' in request)
        result.around = [toolPairingBalancedBefore(session, request.seq), toolPairingBalancedAfter(session, request.seq)]
      if ('region' in request) result.shadowed = validateSurfaceRegion(session, region.start, region.end).shadowedSeqs
      return result
    } finally {
      await scratch.fiber.dispose()
    }
  },
}

/**
 * T17: `validateSurfaceRegion` of @deepseek-ai/dsh-compaction-basic 0.1.0-rc.8 (lib/index.js, not
 * exported), restated unchanged: the span a compaction of start..end would replace, or the
 * released refusal.  Balance comes from the released @deepseek-ai/dsh-compaction functions.
 */
function validateSurfaceRegion(session, start, end) {
  const nodes = session.surface.nodes
  const startIdx = nodes.indexOf(start)
  const endIdx = nodes.indexOf(end)
  if (startIdx === -1) throw new Error(`compactRegion: start seq ${start} not found in surface`)
  if (endIdx === -1) throw new Error(`compactRegion: end seq ${end} not found in surface`)
  if (startIdx > endIdx)
    throw new Error(
      `compactRegion: start seq ${start} (position ${startIdx}) is after end seq ${end} (position ${endIdx}) on the surface`,
    )
  if (!toolPairingBalancedBefore(session, nodes[startIdx]))
    throw new Error(`compactRegion: start seq ${start} is not a balanced boundary (would split a step's tool-call/result pair)`)
  if (!toolPairingBalancedAfter(session, nodes[endIdx]))
    throw new Error(`compactRegion: end seq ${end} is not a balanced boundary (would split a step, or the step is still open)`)
  return { start, end, startIdx, endIdx, shadowedSeqs: nodes.slice(startIdx, endIdx + 1) }
}

async function handle(request) {
  const id = request.id
  const group = GROUP_OF[request.op]
  if (group !== undefined && UNDECLARED[group] !== undefined) return fail(id, 'UNSUPPORTED', UNDECLARED[group])
  if (NOT_STANDALONE[request.op] !== undefined) return fail(id, 'UNSUPPORTED', NOT_STANDALONE[request.op])
  const op = ops[request.op]
  if (op === undefined) return fail(id, 'UNSUPPORTED', `unknown op ${JSON.stringify(request.op)}`)
  try {
    return { id, ok: true, result: await op(request) }
  } catch (error) {
    if (error instanceof BadRequest) return fail(id, 'BAD_REQUEST', error.message)
    if (error instanceof Refusal) return fail(id, error.code, error.message)
    const { code, message } = upstreamError(error)
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

function removePrivateRoot() {
  if (privateRoot !== undefined) rmSync(privateRoot, { recursive: true, force: true })
}

async function main() {
  process.on('exit', removePrivateRoot)
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(1))
  current = await openSession(undefined, 0)
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
    await write(await handle(request))
    if (request.op === 'bye') break
  }
  await current?.fiber.dispose()
  process.exit(0)
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main()
