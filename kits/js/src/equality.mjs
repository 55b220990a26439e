/**
 * JSON equality as the conformance suite compares values (spec/PROTOCOL.md, "Values";
 * `json_equal` in model/json_value.py): key order does not matter, `1` equals `1.0`, `true` is
 * not `1`, and a number is compared as the double it is when either side is a float, so a float
 * beyond 2^53 written back in integer digits is the same number.
 *
 * Numbers are those `json.mjs` reads: a `bigint` is an integer beyond the safe range, a `number`
 * is a safe integer or a float (an integral `number` beyond the safe range can only be a float).
 */

import { isObject } from './json.mjs'

/** Whether two JSON numbers (`number` or `bigint`) are the same number. */
export function sameNumber(a, b) {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a === b
  if (typeof a === 'number' && typeof b === 'number') return a === b
  // One side is an integer beyond the safe range, the other a number: equal only as doubles, and
  // an integer beyond every double is no double's value.
  const [big, other] = typeof a === 'bigint' ? [a, b] : [b, a]
  const asDouble = Number(big)
  return Number.isFinite(asDouble) && asDouble === other
}

/** JSON equality of two values read by `json.mjs` (or built from plain JavaScript values). */
export function jsonEqual(a, b) {
  const numeric = (v) => typeof v === 'number' || typeof v === 'bigint'
  if (numeric(a) && numeric(b)) return sameNumber(a, b)
  if (numeric(a) || numeric(b)) return false
  if (typeof a === 'boolean' || typeof a === 'string' || typeof b === 'boolean' || typeof b === 'string') {
    return typeof a === typeof b && a === b
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]))
  }
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a)
    if (keys.length !== Object.keys(b).length) return false
    return keys.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]))
  }
  return a === null && b === null
}
