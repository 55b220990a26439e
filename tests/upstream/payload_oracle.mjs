#!/usr/bin/env node
/**
 * The released payload rules as an oracle: @deepseek-ai/dsh-session-format-v0-to-v1 (installed in
 * ports/dsh-format/node_modules), asked through its exported assertReleasedEventPayload.
 *
 * Reads JSON Lines on stdin, answers one line on stdout per request, in order:
 *
 *   {"type", "seq", "data", "version"}  ->  {"ok": true}
 *                                        |  {"ok": false, "error": "<message>", "kind": "<error class>"}
 *   {"inventory": true}                 ->  {"types": RELEASED_V0_EVENT_TYPES,
 *                                            "dispositions": RELEASED_V0_EVENT_DISPOSITIONS}
 *
 * Requests are parsed with JSON.parse, as a stored line would be.  `kind` is the class of what
 * was thrown (SessionFormatError, SessionFormatUnsupportedMigrationError, or another error such
 * as a TypeError, which is still a refusal).
 */
import { createInterface } from 'node:readline'

const PACKAGE = new URL(
  '../../ports/dsh-format/node_modules/@deepseek-ai/dsh-session-format-v0-to-v1/lib/index.js',
  import.meta.url,
)
const { assertReleasedEventPayload, RELEASED_V0_EVENT_TYPES, RELEASED_V0_EVENT_DISPOSITIONS } = await import(PACKAGE.href)

function answer(request) {
  if (request.inventory === true) {
    return { types: RELEASED_V0_EVENT_TYPES, dispositions: RELEASED_V0_EVENT_DISPOSITIONS }
  }
  try {
    assertReleasedEventPayload({ type: request.type, seq: request.seq, data: request.data }, request.version)
    return { ok: true }
  } catch (error) {
    return { ok: false, error: String(error?.message ?? error), kind: error?.name ?? typeof error }
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })
for await (const line of lines) {
  if (line.trim() === '') continue
  let reply
  try {
    reply = answer(JSON.parse(line))
  } catch (error) {
    reply = { ok: false, error: `bad request: ${error}`, kind: 'request' }
  }
  process.stdout.write(`${JSON.stringify(reply)}\n`)
}
