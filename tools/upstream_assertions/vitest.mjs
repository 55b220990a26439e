/**
 * The part of vitest's API the upstream spec files use (`describe`, `it`/`test`, `it.each`,
 * `expect` with the matchers they call), recording what each assertion says about the instrumented
 * calls it covers:
 *
 *   expect(fn).toThrow(p)      fn runs; the recorded call whose error escaped fn is EXPECTED REFUSED
 *                              (with the asserted pattern); calls in fn that returned are not
 *                              asserted (the test would pass whatever they did) and are dropped.
 *   expect(fn).not.toThrow()   every recorded call in fn is EXPECTED ACCEPTED.
 *   expect(value).matcher(..)  every call recorded since the previous value assertion (outside any
 *                              expect(fn)) fed `value` (none: the calls the previous one covered);
 *                              it is EXPECTED ACCEPTED, and the matcher's name is kept in `checks`.
 *                              A failing matcher marks them failed.
 *   end of the test            calls never covered by an assertion returned, or the test would have
 *                              failed: EXPECTED ACCEPTED (implicit).
 *
 * A failing assertion does not stop the test (as `expect.soft`): it marks the calls it covers, and
 * the capture reports it.  Test names are `describe > it`, with `it.each` placeholders filled in.
 */

import { isDeepStrictEqual } from 'node:util'
import { state } from './recorder.mjs'

const suites = []
const registered = []

export function describe(name, body) {
  suites.push(name)
  try {
    body()
  } finally {
    suites.pop()
  }
}

function register(name, body) {
  registered.push({ name: [...suites, name].join(' > '), body })
}

function formatName(template, args) {
  let next = 0
  return template.replace(/%[sdifjo#%]/g, (token) => {
    if (token === '%%') return '%'
    if (token === '%#') return String(next)
    const value = args[next++]
    if (token === '%j' || token === '%o') return JSON.stringify(value)
    return String(value)
  })
}

export function it(name, body) {
  register(name, body)
}
it.each = (table) => (template, body) => {
  for (const row of table) {
    const args = Array.isArray(row) ? row : [row]
    register(formatName(template, args), () => body(...args))
  }
}
export const test = it

/** Take (and clear) the tests the last imported spec file registered. */
export function takeRegistered() {
  return registered.splice(0, registered.length)
}

// ---- equality, as vitest's `equals` for the JSON-like values the specs compare ---------------------

function isObject(value) {
  return value !== null && typeof value === 'object'
}

/** vitest `toEqual`: recursive equality that ignores properties whose value is undefined. */
export function looseEqual(a, b) {
  if (Object.is(a, b)) return true
  if (!isObject(a) || !isObject(b)) return false
  if (a instanceof Set || b instanceof Set) {
    if (!(a instanceof Set && b instanceof Set) || a.size !== b.size) return false
    return [...a].every((member) => [...b].some((other) => looseEqual(member, other)))
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a)) return a.length === b.length && a.every((member, index) => looseEqual(member, b[index]))
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b) && !(isPlain(a) && isPlain(b))) return false
  const keys = new Set([...Object.keys(a), ...Object.keys(b)])
  for (const key of keys) {
    if (a[key] === undefined && b[key] === undefined) continue
    if (!looseEqual(a[key], b[key])) return false
  }
  return true
}

function isPlain(value) {
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** vitest `toMatchObject`: `expected`'s members, recursively, are in `actual`. */
function matchesObject(actual, expected) {
  if (!isObject(expected)) return looseEqual(actual, expected)
  if (!isObject(actual)) return false
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && actual.length === expected.length
      && expected.every((member, index) => matchesObject(actual[index], member))
  }
  return Object.keys(expected).every((key) => key in actual && matchesObject(actual[key], expected[key]))
}

function property(value, path) {
  let current = value
  for (const key of path.split('.')) {
    if (!isObject(current) || !(key in current)) return { found: false }
    current = current[key]
  }
  return { found: true, value: current }
}

function throwMatches(error, expected) {
  if (expected === undefined) return true
  const message = error instanceof Error ? error.message : String(error)
  if (expected instanceof RegExp) return expected.test(message)
  if (typeof expected === 'string') return message.includes(expected)
  if (typeof expected === 'function') return error instanceof expected
  if (expected instanceof Error) return message === expected.message
  return false
}

function describeExpected(expected) {
  if (expected === undefined) return null
  if (expected instanceof RegExp) return String(expected)
  if (typeof expected === 'string') return JSON.stringify(expected)
  if (typeof expected === 'function') return expected.name
  return String(expected)
}

// ---- expect ----------------------------------------------------------------------------------------

function fail(label, detail) {
  state.test.failures.push(label === undefined ? detail : `${label}: ${detail}`)
}

function runCollecting(fn) {
  const ctx = { records: [], parent: state.ctx }
  state.ctx = ctx
  let threw = false
  let error
  try {
    fn()
  } catch (caught) {
    threw = true
    error = caught
  } finally {
    state.ctx = ctx.parent
  }
  return { ctx, threw, error }
}

function throwAssertion(actual, expected, negated, label) {
  if (typeof actual !== 'function') throw new TypeError('toThrow needs a function')
  const { ctx, threw, error } = runCollecting(actual)
  if (negated) {
    const pass = !threw
    for (const record of ctx.records) {
      if (pass) record.expectation = { accepted: true, assertion: 'not.toThrow()' }
      else record.status = 'assertion failed'
    }
    if (!pass) fail(label, `expected no throw, got ${error?.message ?? error}`)
    return
  }
  const pass = threw && throwMatches(error, expected)
  const pattern = describeExpected(expected)
  for (const record of ctx.records) {
    if (!pass) record.status = 'assertion failed'
    else if (record.thrown === error) record.expectation = { accepted: false, assertion: pattern === null ? 'toThrow()' : `toThrow(${pattern})` }
    else record.status = 'not asserted'
  }
  if (!pass) fail(label, threw ? `threw ${error?.message ?? error}, not ${pattern}` : `expected a throw (${pattern})`)
  else if (!ctx.records.some((record) => record.thrown === error)) state.test.unattributed += 1
}

function valueAssertion(name, pass, label, detail) {
  // The calls since the previous value assertion; none: a further assertion on the same results.
  const fresh = state.test.pending.splice(0, state.test.pending.length)
  const covered = fresh.length > 0 ? fresh : state.test.lastCovered
  state.test.lastCovered = covered
  for (const record of covered) {
    record.checks.push(name)
    if (!pass) record.status = 'assertion failed'
    else record.expectation ??= { accepted: true, assertion: name }
  }
  if (!pass) fail(label, `${name}: ${detail}`)
}

function matchers(actual, negated, label) {
  const check = (name, ok, detail) => {
    valueAssertion(negated ? `not.${name}` : name, negated ? !ok : ok, label, detail)
  }
  return {
    toThrow: (expected) => throwAssertion(actual, expected, negated, label),
    toThrowError: (expected) => throwAssertion(actual, expected, negated, label),
    toEqual: (expected) => check('toEqual', looseEqual(actual, expected), 'values differ'),
    toStrictEqual: (expected) => check('toStrictEqual', isDeepStrictEqual(actual, expected), 'values differ'),
    toMatchObject: (expected) => check('toMatchObject', matchesObject(actual, expected), 'no match'),
    toBe: (expected) => check('toBe', Object.is(actual, expected), `${String(actual)} is not ${String(expected)}`),
    toHaveLength: (length) => check('toHaveLength', actual?.length === length, `length ${actual?.length}, not ${length}`),
    toContain: (member) => check('toContain', actual?.includes?.(member) === true, 'not contained'),
    toHaveProperty: (path, ...value) => {
      const found = property(actual, path)
      check('toHaveProperty', found.found && (value.length === 0 || looseEqual(found.value, value[0])), `property ${path}`)
    },
    toBeGreaterThan: (bound) => check('toBeGreaterThan', actual > bound, `${actual} <= ${bound}`),
    toBeDefined: () => check('toBeDefined', actual !== undefined, 'undefined'),
    toBeUndefined: () => check('toBeUndefined', actual === undefined, 'defined'),
    toBeTruthy: () => check('toBeTruthy', Boolean(actual), 'falsy'),
  }
}

export function expect(actual, label) {
  if (state.test !== null) state.test.assertions += 1
  const positive = matchers(actual, false, label)
  positive.not = matchers(actual, true, label)
  return positive
}
