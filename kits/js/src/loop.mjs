/**
 * The protocol loop of sessionlog-driver/1 (spec/PROTOCOL.md): read requests line by line from
 * stdin, dispatch each to the port's handler for its op, write one reply line per request to
 * stdout before reading the next, and answer `hello` and `bye` itself.
 *
 * - A handler returns the op's `result` (or a promise of it); it refuses by throwing a
 *   `Refusal(code, message)`, which becomes `{ok: false, error: {code, message}}`.
 * - An op of a capability group the port did not declare, or one the port has no handler for,
 *   is answered `UNSUPPORTED`; an op the protocol does not know, or a request without an integer
 *   `id`, `BAD_REQUEST`.
 * - Any other exception is a bug of the port: it is logged to stderr with its stack and answered
 *   `UNMAPPED` with its message, and the loop goes on.
 * - A line that is not JSON is logged to stderr and skipped (the suite never sends one).
 * - `bye` is answered, stdout is flushed, and the process exits with status 0; so does the end
 *   of stdin.
 *
 * Requests are read with the kit's exact-number reader and replies written with its writer
 * (json.mjs): an integer beyond 2^53 reaches the handler as a `bigint`, `-0.0` as `-0`.
 */

import { createInterface } from 'node:readline'

import { parseJson, stringifyJson } from './json.mjs'

export const PROTOCOL = 'sessionlog-driver/1'

/** The capability group of every op (`hello` and `bye` belong to none: they are always supported). */
export const OP_GROUPS = Object.freeze({
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
  store_create: 'storage',
  store_open: 'storage',
  store_append: 'storage',
  store_checkpoint: 'storage',
  store_close: 'storage',
})

/** A refusal: `code` is a violation code of invariants.md or a protocol code. */
export class Refusal extends Error {
  constructor(code, message) {
    super(message)
    this.name = 'Refusal'
    this.code = code
  }
}

/** The reply to one parsed request, given the port (see `runDriver`). */
export async function answer(port, request) {
  const id = request !== null && typeof request === 'object' ? request.id : undefined
  if (typeof id !== 'number' || !Number.isInteger(id)) {
    return { id: typeof id === 'number' ? id : 0, ok: false, error: { code: 'BAD_REQUEST', message: 'request has no integer id' } }
  }
  const op = request.op
  try {
    if (op === 'hello') {
      return {
        id,
        ok: true,
        result: {
          protocol: PROTOCOL,
          implementation: port.implementation,
          capabilities: [...port.capabilities],
          format_version: port.formatVersion ?? 1,
        },
      }
    }
    if (op === 'bye') return { id, ok: true, result: null }
    if (typeof op !== 'string' || !Object.hasOwn(OP_GROUPS, op)) {
      throw new Refusal('BAD_REQUEST', `unknown op ${JSON.stringify(op)}`)
    }
    const handler = port.handlers[op]
    if (!port.capabilities.includes(OP_GROUPS[op]) || typeof handler !== 'function') {
      throw new Refusal('UNSUPPORTED', `op ${op} belongs to the undeclared group ${OP_GROUPS[op]}`)
    }
    const result = await handler(request)
    return { id, ok: true, result: result === undefined ? null : result }
  } catch (error) {
    if (error instanceof Refusal) return { id, ok: false, error: { code: error.code, message: error.message } }
    process.stderr.write(`${op}: ${error?.stack ?? error}\n`)
    return { id, ok: false, error: { code: 'UNMAPPED', message: `port error: ${error?.message ?? error}` } }
  }
}

function write(output, text) {
  return new Promise((resolve, reject) => output.write(text, (error) => (error ? reject(error) : resolve())))
}

/**
 * Run the loop until `bye` or the end of input.
 *
 * `port` is `{implementation: {name, version}, capabilities: [group, ...], formatVersion?,
 * handlers: {op: (request) => result}}`.  Returns after the reply to `bye` is flushed (or at the
 * end of input); `exit: true` (the default) then ends the process with status 0.
 */
export async function runDriver(port, { input = process.stdin, output = process.stdout, exit = true } = {}) {
  const lines = createInterface({ input, crlfDelay: Infinity })
  for await (const line of lines) {
    if (line.trim() === '') continue
    let request
    try {
      request = parseJson(line)
    } catch (error) {
      process.stderr.write(`skipped a request line that is not JSON: ${error.message}\n`)
      continue
    }
    const reply = await answer(port, request)
    await write(output, `${stringifyJson(reply)}\n`)
    if (request?.op === 'bye' && reply.ok) break
  }
  lines.close()
  if (exit) process.exit(0)
}
