#!/usr/bin/env node
/**
 * sessionlog-driver/1 driver for the published @deepseek-ai/dsh-session (pinned in package.json).
 *
 * Speaks JSON Lines on stdin/stdout (one reply per request, written before the next request is
 * read); everything else goes to stderr.  Every answer comes from the package's PUBLIC API:
 *
 *   session  reset/seed/append/state  a live Session made by `ctx.sessions.create` in a cordis
 *            Context that has loaded InvariantRegistry (@deepseek-ai/dsh-invariants), SessionStore
 *            and the package's `@deepseek-ai/dsh-session/invariant` companion, so the turn / step /
 *            tool-pairing trace checks run on seed and on every append.  `state.header` is
 *            `session.requestHeader()` (null when undefined).
 *   surface  fold_surface             `foldSurface(events)`.
 *   header   fold_header              `foldRequestHeader(events)` (null when undefined).
 *   repair   repair                   `interruptedTurnClosers(events)`.
 *
 * Not declared, replied UNSUPPORTED (upstream has no standalone public API for them):
 *   header_decision  the writer rule is inlined in a private method of AgentLoop
 *                    (@deepseek-ai/dsh-agent-loop 0.1.0-rc.8); it has no `series` reason either.
 *   jsonl            @deepseek-ai/dsh-session-persistence-jsonl 0.1.0-rc.8 imports the zstd API of
 *                    node:zlib (createZstdDecompress, Node >= 22.15) at module load, so it cannot
 *                    even be imported on the project's Node 20; the abstract coordinator in
 *                    @deepseek-ai/dsh-session-persistence needs a backend we would have to write.
 *   legacy           upstream writes format v0 and has no v0-to-v1 edge.
 *   compaction       tool-pairing cuts live in @deepseek-ai/dsh-compaction*, not in this package.
 *
 * `hello.format_version` is the package's own SESSION_FORMAT_VERSION (0): that is what it writes.
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
 *  T5  Sessions.  Each reset/seed creates a NEW live session with a fresh id
 *      (`conformance-<n>`) in its own cordis fiber, so a seed is validated while the previous
 *      session is still live; only when it is accepted is the previous fiber disposed (which
 *      removes its session from the store).  A refused seed therefore leaves the previous session
 *      in place by construction; a refused append is upstream's own doing (checks run before
 *      the push).  `reset.header` only supplies `createdAt` (the store stamps version 0 itself).
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
 *      (TypeError and the like) is UNMAPPED with the error name in front.
 *  T10 An append that upstream commits but whose resulting state cannot be read (state reads
 *      `session.requestHeader()`, which can throw) is replied UNMAPPED with a "driver: upstream
 *      ACCEPTED ..." message: the protocol's append reply carries the state, and the driver
 *      will not invent one.  The following `state` request shows the same error.
 */

import { createInterface } from 'node:readline'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'

// Keep stdout for replies only: anything the packages log goes to stderr.
for (const method of ['log', 'info', 'debug', 'warn', 'trace']) console[method] = console.error

const { Context } = await import('@deepseek-ai/cordis')
const { default: InvariantRegistry } = await import('@deepseek-ai/dsh-invariants')
const { SessionStore, SESSION_FORMAT_VERSION, foldSurface, foldRequestHeader, interruptedTurnClosers } = await import(
  '@deepseek-ai/dsh-session'
)
const sessionInvariant = await import('@deepseek-ai/dsh-session/invariant')

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
  // Deliberately NOT mapped (several rules share one message): "seed event at index N has an
  // invalid event envelope" (unknown key, missing data, bad type/seq/time or ignorable).
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

/** A reply error for anything upstream threw. */
function upstreamError(error) {
  if (!(error instanceof Error)) return { code: 'UNMAPPED', message: `non-Error thrown: ${String(error)}` }
  const plain = error.name === 'Error' || error.name === 'InvariantError'
  const code = plain ? codeFor(error.message) : 'UNMAPPED'
  return { code, message: plain ? error.message : `${error.name}: ${error.message}` }
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

let counter = 0
let createdAt = 0
let current

/** A new live session (fresh id, own fiber); throws what upstream throws, leaving nothing behind. */
async function openSession(seed, time) {
  const id = `conformance-${++counter}`
  let session
  const options = { meta: { createdAt }, ...(seed === undefined ? {} : { seed }) }
  const fiber = ctx.plugin({
    name: 'sessionlog-conformance-session',
    inject: ['sessions'],
    apply: (child) => {
      session = atTime(time, () => child.sessions.create(id, options))
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

// ---- ops ---------------------------------------------------------------------------------------
const ENVELOPE_KEYS = new Set(['type', 'seq', 'time', 'data', 'surfaceOp', 'sourceEventSeqs', 'ignorable'])
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)
const isSafeNatural = (v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0

function eventsArg(request) {
  if (!Array.isArray(request.events)) throw new BadRequest('events must be an array')
  return request.events
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

const CAPABILITIES = ['session', 'surface', 'header', 'repair']
const require = createRequire(import.meta.url)
const upstreamVersion = JSON.parse(readFileSync(require.resolve('@deepseek-ai/dsh-session/package.json'), 'utf8')).version

const NOT_STANDALONE = {
  header_decision:
    'the request-header writer rule is inlined in a private AgentLoop method (@deepseek-ai/dsh-agent-loop); no standalone public API',
  save: '@deepseek-ai/dsh-session-persistence-jsonl cannot be imported on Node 20 (needs the zstd API of node:zlib)',
  load: '@deepseek-ai/dsh-session-persistence-jsonl cannot be imported on Node 20 (needs the zstd API of node:zlib)',
  upgrade_v0: 'upstream writes format v0 and has no v0-to-v1 edge',
  cuts: 'tool-pairing cuts live in @deepseek-ai/dsh-compaction*, not in @deepseek-ai/dsh-session',
}

const ops = {
  hello: async () => ({
    protocol: 'sessionlog-driver/1',
    implementation: { name: '@deepseek-ai/dsh-session', version: upstreamVersion },
    capabilities: CAPABILITIES,
    format_version: SESSION_FORMAT_VERSION,
  }),
  bye: async () => null,
  reset: async (request) => {
    if ('header' in request) {
      if (!isObject(request.header)) throw new BadRequest('header must be an object')
      createdAt = isSafeNatural(request.header.createdAt) ? request.header.createdAt : 0
    } else createdAt = 0
    await replaceCurrent(await openSession(undefined, createdAt))
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
}

async function handle(request) {
  const id = request.id
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

async function main() {
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
