/**
 * Exact-number JSON, as sessionlog-driver/1 and the stored form require (spec/PROTOCOL.md, "Values";
 * docs/conformance/on-disk-format.md).
 *
 * Reading keeps every number exact and keeps the one distinction the format draws between
 * numbers, integer or float:
 *
 * - an integer token (no fraction, no exponent) within ±(2^53 − 1) is a `number`; `-0` written as
 *   an integer is the integer 0, as Python's reader and the model read it;
 * - an integer token beyond the safe range is a `bigint`, so `2**64` stays `18446744073709551616`
 *   and a port can refuse it (`JSON_NOT_LOSSLESS`) instead of reading a rounded value;
 * - a float token (a fraction or an exponent) is a `number`: `-0.0` stays `-0` (refused by the
 *   lossless rule), `1e400` is `Infinity` (refused too).
 *
 * Writing spells every value so that a reader reads back the same value: a `bigint` in its digits,
 * an integral `number` beyond the safe range (which can only be a float) with an exponent
 * (`4.6e+16`, never `46000000000000000`, which a reader takes for an unsafe integer), `-0` as
 * `-0.0`, any other number as `JSON.stringify` writes it (the shortest text that reads back the
 * same double).  A non-finite number has no JSON spelling and is refused.
 *
 * A duplicated object key keeps its last value, as `JSON.parse` and Python's `json` do.
 */

import { parse, stringify } from 'lossless-json'

/** The largest integer every JSON reader reads exactly: 2^53 − 1. */
export const MAX_SAFE_INTEGER = Number.MAX_SAFE_INTEGER

/** The deepest a value an event carries may nest (a scalar is at depth 0). */
export const MAX_NESTING = 256

const INTEGER_TOKEN = /^-?(?:0|[1-9][0-9]*)$/

/** The value of one JSON number token (see the module comment). */
export function parseNumberToken(token) {
  if (INTEGER_TOKEN.test(token)) {
    const value = Number(token)
    if (Number.isSafeInteger(value)) return value === 0 ? 0 : value
    return BigInt(token)
  }
  return Number(token)
}

/** Parse one JSON text exactly; throws a `SyntaxError` when `text` is not JSON. */
export function parseJson(text) {
  return parse(text, null, {
    parseNumber: parseNumberToken,
    onDuplicateKey: ({ newValue }) => newValue,
  })
}

/** Whether `value` is a `number` this module writes in a spelling other than `JSON.stringify`'s. */
function needsFloatSpelling(value) {
  return typeof value === 'number' && (Object.is(value, -0) || (Number.isInteger(value) && !Number.isSafeInteger(value)))
}

const NUMBER_STRINGIFIERS = [
  {
    test: (value) => typeof value === 'number' && !Number.isFinite(value),
    stringify: (value) => {
      throw new TypeError(`${value} is not a JSON number`)
    },
  },
  {
    test: needsFloatSpelling,
    stringify: (value) => (Object.is(value, -0) ? '-0.0' : value.toExponential()),
  },
]

/** The JSON text of `value`, numbers spelled to read back exactly (see the module comment). */
export function stringifyJson(value) {
  const text = stringify(value, null, undefined, NUMBER_STRINGIFIERS)
  if (text === undefined) throw new TypeError('the value has no JSON form')
  return text
}

/** Whether `value` is a plain JSON object (not an array, not null). */
export function isObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Whether `value` is a JSON number as read here: a `number` or a `bigint`. */
export function isNumber(value) {
  return typeof value === 'number' || typeof value === 'bigint'
}

/**
 * Whether `value` is an integral number within ±(2^53 − 1), not `-0`.  JSON has one number type:
 * `1.0` reads as the integer 1.
 */
export function isSafeInteger(value) {
  return typeof value === 'number' && Number.isSafeInteger(value) && !Object.is(value, -0)
}

/** Whether `value` is a non-negative safe integer. */
export function isSafeNatural(value) {
  return isSafeInteger(value) && value >= 0
}

/**
 * The first reason `value` is not a lossless JSON value, or `null` when it is one: an integer
 * outside the safe range, `-0`, a non-finite number, or nesting deeper than `MAX_NESTING`.  The
 * walk is iterative, so a value of any depth gets its answer.
 */
export function losslessProblem(value) {
  const stack = [[value, '$', 0]]
  while (stack.length > 0) {
    const [item, path, depth] = stack.pop()
    if (typeof item === 'object' && item !== null && depth === MAX_NESTING) {
      return `${path} nests deeper than ${MAX_NESTING} levels`
    }
    if (item === null || typeof item === 'boolean' || typeof item === 'string') continue
    if (typeof item === 'bigint') return `${path} is an integer outside the safe range`
    if (typeof item === 'number') {
      if (!Number.isFinite(item)) return `${path} is not a finite number`
      if (Object.is(item, -0)) return `${path} is -0`
      continue
    }
    if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i -= 1) stack.push([item[i], `${path}[${i}]`, depth + 1])
      continue
    }
    if (isObject(item)) {
      const keys = Object.keys(item)
      for (let i = keys.length - 1; i >= 0; i -= 1) stack.push([item[keys[i]], `${path}.${keys[i]}`, depth + 1])
      continue
    }
    return `${path} is a ${typeof item}, not a JSON value`
  }
  return null
}
