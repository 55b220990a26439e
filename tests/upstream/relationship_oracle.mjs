#!/usr/bin/env node
/**
 * The released relationship rules as an oracle: `assertReleasedArtifactRelationships` of the
 * published @deepseek-ai/dsh-session-format-v0-to-v1 (pinned in ports/dsh-format/package.json).
 *
 * Reads JSON lines from stdin, one artifact per line, and writes one JSON line per artifact to
 * stdout, in order, after the whole input was read (a batch: one process answers many artifacts).
 *
 *   in:  {"header": <v1 session header line>, "events": [<event>, ...], "extensions"?: {...}}
 *   out: {"ok": true}
 *        {"ok": false, "stage": "payload" | "surface" | "relationships", "seq"?: n, "error": <message>}
 *
 * The header line is the physical one (`{type: "session", version, id, createdAt, delegationDepth,
 * parentSession?, seedLength?, ...}`); the artifact handed to upstream is its logical form, as the
 * released v1 codec decodes it: `isSeeded` is whether `seedLength` is present and
 * `inheritedEventCount` is `seedLength` (0 when absent).  Events are logical (plain
 * `sourceEventSeqs` arrays, no packed rows).
 *
 * Before the relationships, every event of the frozen inventory is checked with
 * `assertReleasedEventPayload(event, 1)` and every surface event with
 * `assertReleasedSurfaceMetadata(..., 'allow-empty-assistant')`, both as the released v1 validator
 * runs them, so that a refusal is attributed to the stage that made it: an artifact meant to test a
 * relationship must pass the first two stages.
 *
 * `extensions` is passed through to `assertReleasedArtifactRelationships` (the v1 reader passes
 * none; the v0 edge's migration source validator passes `{legacyInterruptedTurnRestart: true}`).
 *
 * The package is imported from ports/dsh-format/node_modules, or from the directory named by the
 * first argument (a folder holding node_modules/@deepseek-ai/dsh-session-format-v0-to-v1).
 */

import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

// Keep stdout for replies only.
for (const method of ['log', 'info', 'debug', 'warn', 'trace']) console[method] = console.error

const here = fileURLToPath(new URL('.', import.meta.url))
const portDir = process.argv[2] ?? resolve(here, '../../ports/dsh-format')
const entry = resolve(portDir, 'node_modules/@deepseek-ai/dsh-session-format-v0-to-v1/lib/index.js')
const {
  RELEASED_V0_EVENT_DISPOSITIONS,
  assertReleasedArtifactRelationships,
  assertReleasedEventPayload,
  assertReleasedSurfaceMetadata,
} = await import(pathToFileURL(entry).href)

const SURFACE_TYPES = new Set(['user/message', 'assistant/message', 'tool/result'])

/** The logical artifact the released v1 codec decodes from `header` and `events`. */
function artifactOf(header, events) {
  const logical = {
    version: header.version,
    id: header.id,
    createdAt: header.createdAt,
    isSeeded: header.seedLength !== undefined,
    delegationDepth: header.delegationDepth,
  }
  for (const key of ['cwd', 'parentSession', 'origin', 'agentPreset']) {
    if (header[key] !== undefined) logical[key] = header[key]
  }
  return { header: logical, events, inheritedEventCount: header.seedLength ?? 0 }
}

function messageOf(error) {
  return error instanceof Error ? `${error.name === 'SessionFormatError' ? '' : `${error.name}: `}${error.message}` : String(error)
}

/** The oracle's answer for one request. */
function answer(request) {
  const artifact = artifactOf(request.header, request.events)
  for (const event of artifact.events) {
    if (RELEASED_V0_EVENT_DISPOSITIONS[event.type] === undefined) continue
    try {
      assertReleasedEventPayload(event, 1)
    } catch (error) {
      return { ok: false, stage: 'payload', seq: event.seq, error: messageOf(error) }
    }
    if (!SURFACE_TYPES.has(event.type)) continue
    try {
      assertReleasedSurfaceMetadata(event, event.seq, event.type, 'allow-empty-assistant')
    } catch (error) {
      return { ok: false, stage: 'surface', seq: event.seq, error: messageOf(error) }
    }
  }
  try {
    assertReleasedArtifactRelationships(artifact, request.extensions ?? {})
  } catch (error) {
    return { ok: false, stage: 'relationships', error: messageOf(error) }
  }
  return { ok: true }
}

const lines = readFileSync(0, 'utf8').split('\n').filter((line) => line.trim() !== '')
const replies = lines.map((line) => {
  try {
    return answer(JSON.parse(line))
  } catch (error) {
    return { ok: false, stage: 'request', error: messageOf(error) }
  }
})
process.stdout.write(replies.map((reply) => JSON.stringify(reply) + '\n').join(''))
