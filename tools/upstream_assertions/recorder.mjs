/**
 * The recording state shared by the test-framework shim (vitest.mjs) and the instrumented upstream
 * entry points (src.mjs, facade.mjs).
 *
 * Every call a test makes to an instrumented entry point at depth 0 (not from inside another
 * instrumented call) becomes a RECORD: the operation, its input as JSON (snapshotted before the
 * call, since upstream may not mutate it but the test may later), and upstream's outcome (the output
 * as JSON, or the error's class, message and the upstream function that threw it).  The shim then
 * attaches what the test asserted about the record (see vitest.mjs); the capture keeps only records
 * whose outcome is exactly what the test asserted.
 */

import { types } from 'node:util'

Error.stackTraceLimit = 200

export const state = {
  /** The spec file being run, relative to the package (`tests/legacy.spec.ts`). */
  source: null,
  /** The running test: `{name, records, pending, failures}`, or null outside a test body. */
  test: null,
  /** The innermost `expect(fn)` being evaluated: `{records, parent}`, or null. */
  ctx: null,
  depth: 0,
  /** Maps an error's stack frame to the upstream region/function that threw (set by capture.mjs). */
  locate: () => [],
}

/** Why `value` has no JSON form that means the same to a JSON reader, or null when it has one. */
export function unrepresentable(value, path = '$') {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return null
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return `${path} is ${value}`
    if (Object.is(value, -0)) return `${path} is -0`
    return null
  }
  if (value === undefined) return `${path} is undefined`
  if (typeof value !== 'object') return `${path} is a ${typeof value}`
  if (types.isProxy(value)) return `${path} is a Proxy`
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index += 1) {
      if (!(index in value)) return `${path}[${index}] is a hole`
      const why = unrepresentable(value[index], `${path}[${index}]`)
      if (why !== null) return why
    }
    return null
  }
  const proto = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) return `${path} is a ${value.constructor?.name ?? 'non-plain object'}`
  for (const key of Object.keys(value)) {
    const why = unrepresentable(value[key], `${path}.${key}`)
    if (why !== null) return why
  }
  return null
}

/** `{ok: true, value}` (a detached JSON copy) or `{ok: false, why}`. */
export function snapshot(thunk) {
  let value
  try {
    value = thunk()
  } catch (error) {
    return { ok: false, why: `reading it threw ${error?.message ?? error}` }
  }
  const why = unrepresentable(value)
  if (why !== null) return { ok: false, why }
  return { ok: true, value: JSON.parse(JSON.stringify(value)) }
}

function describeError(error) {
  if (!(error instanceof Error)) return { class: typeof error, message: String(error), stage: [] }
  return { class: error.name, message: error.message, stage: state.locate(error) }
}

/**
 * Run one instrumented call.  `input` and `output` are thunks building the JSON view of the call's
 * input and result; `onlyOnThrow` records the call only when it throws (a constructor whose success
 * is subsumed by the calls made on what it returns).
 */
export function boundary(op, input, call, output = (result) => result, onlyOnThrow = false) {
  if (state.depth > 0 || state.test === null) return call()
  const inputSnapshot = snapshot(input)
  state.depth += 1
  let result
  let error
  let threw = false
  try {
    result = call()
  } catch (caught) {
    threw = true
    error = caught
  } finally {
    state.depth -= 1
  }
  if (!threw && onlyOnThrow) return result
  const record = {
    op,
    input: inputSnapshot,
    thrown: threw ? error : undefined,
    outcome: threw ? { accepted: false, error: describeError(error) } : { accepted: true, output: snapshot(() => output(result)) },
    expectation: null,
    status: null,
    checks: [],
  }
  state.test.records.push(record)
  if (state.ctx !== null) state.ctx.records.push(record)
  else state.test.pending.push(record)
  if (threw) throw error
  return result
}
