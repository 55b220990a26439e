#!/usr/bin/env node
/**
 * The released v1 payload and relationship rules as a JSON Lines oracle, for check_generated.py.
 *
 * Every answer comes from the published package @deepseek-ai/dsh-session-format-v0-to-v1 (the copy
 * pinned by ports/dsh-format, or the lib/index.js named by RELEASED_ORACLE_LIB): its exported
 * `assertReleasedEventPayload(event, version)`, `assertReleasedArtifactRelationships(artifact)` and
 * `assertReleasedV1Header(header)`.  Nothing here accepts or refuses on upstream's behalf except the
 * envelope check of an artifact (`coordinates`), which is rebuilt line for line from the package's
 * own assertReleasedArtifactCoordinates(artifact, false, <released types>, false, true), as
 * ports/dsh-format/driver.mjs does (the package does not export it).
 *
 * One request per line, one reply per line, in order:
 *
 *   {op: "payload", event, version?}       -> {ok: true} | {ok: false, stage: "payload", message}
 *       assertReleasedEventPayload(event, version ?? 1); an event whose type is outside the released
 *       inventory is answered {ok: true, unknown: true} (upstream never looks at its data).
 *   {op: "artifact", header, events, inheritedEventCount?, payload?}
 *       -> {ok: true} | {ok: false, stage, message, seq?}
 *       The logical v1 artifact `{header, events, inheritedEventCount}` (header: `{version: 1, id,
 *       createdAt, isSeeded, delegationDepth, cwd?, parentSession?, origin?, agentPreset?}`), checked
 *       in upstream's restore order: stage "header" (assertReleasedV1Header), "coordinates" (dense
 *       seqs, envelope members, surface metadata), "payload" (every event of a released type, the
 *       first refusal with its seq; skipped when `payload` is false, for a caller that checks every
 *       event's payload on its own), "relationships" (assertReleasedArtifactRelationships).
 *   {op: "batch", requests: [...]}         -> {ok: true, replies: [...]}   (one reply per request)
 *   {op: "hello"}                          -> {ok: true, version, types: [...released types]}
 *   {op: "bye"}                            -> {ok: true}, then exit.
 *
 * An answer that is neither an acceptance nor upstream's SessionFormatError (a TypeError inside
 * the package on a malformed value) is a refusal too, with `crash: true`.
 */

import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath, pathToFileURL } from 'node:url'

for (const method of ['log', 'info', 'debug', 'warn', 'trace']) console[method] = console.error

const HERE = dirname(fileURLToPath(import.meta.url))
const PACKAGE_DIR = join(HERE, '..', '..', 'ports', 'dsh-format', 'node_modules', '@deepseek-ai', 'dsh-session-format-v0-to-v1')
const LIB = resolve(process.env.RELEASED_ORACLE_LIB ?? join(PACKAGE_DIR, 'lib', 'index.js'))
const PACKAGE_JSON = join(dirname(dirname(LIB)), 'package.json')

const {
  RELEASED_V0_EVENT_DISPOSITIONS,
  assertReleasedArtifactRelationships,
  assertReleasedEventPayload,
  assertReleasedSurfaceMetadata,
  assertReleasedV1Header,
} = await import(pathToFileURL(LIB).href)

let packageVersion = null
try {
  packageVersion = JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')).version
} catch {
  packageVersion = null
}

const RELEASED_TYPES = new Set(Object.keys(RELEASED_V0_EVENT_DISPOSITIONS))
const EVENT_REQUIRED = ['type', 'seq', 'time', 'data']
const SURFACE_EVENT_TYPES = new Set(['user/message', 'assistant/message', 'tool/result'])
const SURFACE_OPTIONAL = ['ignorable', 'sourceEventSeqs', 'surfaceOp']
const LOG_OPTIONAL = ['ignorable']

class Refusal extends Error {
  constructor(stage, message, seq) {
    super(message)
    this.stage = stage
    this.seq = seq
  }
}

const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value)

function exactKeys(record, required, optional, label) {
  const allowed = new Set([...required, ...optional])
  const unexpected = Object.keys(record).find((key) => !allowed.has(key))
  if (unexpected !== undefined) throw new Error(`${label} has unexpected member ${JSON.stringify(unexpected)}`)
  const missing = required.find((key) => !Object.hasOwn(record, key))
  if (missing !== undefined) throw new Error(`${label} lacks required member ${JSON.stringify(missing)}`)
}

function isSafeCount(value) {
  return Number.isSafeInteger(value) && value >= 0 && !Object.is(value, -0)
}

/** assertReleasedArtifactCoordinates(artifact, false, RELEASED_TYPES, false, true), rebuilt. */
function coordinates(artifact) {
  const inherited = artifact.inheritedEventCount
  if (!isSafeCount(inherited)) throw new Error('Session inheritedEventCount must be a non-negative safe integer')
  if (inherited > artifact.events.length) throw new Error('Session inheritedEventCount exceeds its event count')
  if (!artifact.header.isSeeded && inherited !== 0) throw new Error('unseeded Session inheritedEventCount must be 0')
  artifact.events.forEach((record, index) => {
    if (!isObject(record)) throw new Error(`Session event ${index} must be a JSON object`)
    const type = record.type
    if (typeof type !== 'string') throw new Error(`Session event ${index} type must be a string`)
    const known = RELEASED_TYPES.has(type)
    if (!known && record.ignorable !== true)
      throw new Error(`format v1 contains unknown required event type ${JSON.stringify(type)} at seq ${index}`)
    const surface = known && SURFACE_EVENT_TYPES.has(type)
    exactKeys(record, EVENT_REQUIRED, surface ? SURFACE_OPTIONAL : LOG_OPTIONAL, `Session event ${index}`)
    if (record.seq !== index) throw new Error(`Session event ${index} has non-dense seq ${JSON.stringify(record.seq)}`)
    if (!Number.isSafeInteger(record.time)) throw new Error(`Session event ${index} time must be a safe integer`)
    if (record.ignorable !== undefined && record.ignorable !== true)
      throw new Error(`Session event ${index} ignorable must be true when present`)
    if (surface) assertReleasedSurfaceMetadata(record, index, type, 'allow-empty-assistant')
  })
}

const UPSTREAM_ERRORS = new Set(['SessionFormatError', 'SessionFormatUnsupportedMigrationError'])

/** Run one stage; a throw becomes a Refusal of that stage (a non-upstream error is marked a crash). */
function staged(stage, run, seq) {
  try {
    run()
  } catch (error) {
    if (error instanceof Refusal) throw error
    const upstream = error instanceof Error && (UPSTREAM_ERRORS.has(error.name) || error.constructor === Error)
    const refusal = new Refusal(stage, upstream ? error.message : `${error?.name}: ${error?.message}`, seq)
    refusal.crash = !upstream
    throw refusal
  }
}

function payload(request) {
  const event = request.event
  if (!isObject(event) || !RELEASED_TYPES.has(event.type)) return { ok: true, unknown: true }
  staged('payload', () => assertReleasedEventPayload(event, request.version ?? 1), event.seq)
  return { ok: true }
}

function artifact(request) {
  if (!Array.isArray(request.events)) throw new Refusal('request', 'events must be an array')
  const value = { header: request.header, events: request.events, inheritedEventCount: request.inheritedEventCount ?? 0 }
  staged('header', () => assertReleasedV1Header(value.header))
  staged('coordinates', () => coordinates(value))
  for (const event of request.payload === false ? [] : value.events) {
    if (RELEASED_TYPES.has(event.type)) staged('payload', () => assertReleasedEventPayload(event, 1), event.seq)
  }
  staged('relationships', () => assertReleasedArtifactRelationships(value))
  return { ok: true }
}

function answer(request) {
  try {
    switch (request?.op) {
      case 'payload':
        return payload(request)
      case 'artifact':
        return artifact(request)
      case 'batch':
        return { ok: true, replies: (request.requests ?? []).map(answer) }
      case 'hello':
        return { ok: true, version: packageVersion, lib: LIB, types: [...RELEASED_TYPES].sort() }
      case 'bye':
        return { ok: true }
      default:
        return { ok: false, stage: 'request', message: `unknown op ${JSON.stringify(request?.op)}` }
    }
  } catch (error) {
    if (error instanceof Refusal) {
      const reply = { ok: false, stage: error.stage, message: error.message }
      if (error.seq !== undefined) reply.seq = error.seq
      if (error.crash) reply.crash = true
      return reply
    }
    return { ok: false, stage: 'oracle', message: `${error?.name}: ${error?.message}`, crash: true }
  }
}

function write(reply) {
  return new Promise((done, fail) => {
    process.stdout.write(`${JSON.stringify(reply)}\n`, (error) => (error ? fail(error) : done()))
  })
}

process.stdout.on('error', (error) => process.exit(error.code === 'EPIPE' ? 0 : 1))
for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  if (line.trim() === '') continue
  let request
  try {
    request = JSON.parse(line)
  } catch (error) {
    await write({ ok: false, stage: 'request', message: `unreadable request: ${error.message}` })
    continue
  }
  await write(answer(request))
  if (request?.op === 'bye') break
}
process.exit(0)
