import { test } from 'node:test'
import assert from 'node:assert/strict'

import { isSafeInteger, losslessProblem, MAX_NESTING, parseJson, stringifyJson } from '../src/json.mjs'

test('an integer beyond 2^53 reads exactly and writes back in the same digits', () => {
  const value = parseJson('{"n": 9007199254740993}')
  assert.equal(value.n, 9007199254740993n)
  assert.equal(stringifyJson(value), '{"n":9007199254740993}')
})

test('2^64 reads exactly, not rounded', () => {
  assert.equal(parseJson('18446744073709551616'), 18446744073709551616n)
})

test('a float -0.0 keeps its sign and writes back as a float', () => {
  const value = parseJson('-0.0')
  assert.ok(Object.is(value, -0))
  assert.equal(stringifyJson(value), '-0.0')
  assert.ok(Object.is(parseJson(stringifyJson(value)), -0))
})

test('an integer -0 is the integer 0', () => {
  assert.ok(Object.is(parseJson('-0'), 0))
})

test('1e300 round-trips to the same double, spelled as a float', () => {
  const text = stringifyJson(parseJson('1e300'))
  assert.equal(text, '1e+300')
  assert.equal(parseJson(text), 1e300)
})

test('an integral float beyond 2^53 is written as a float, never in integer digits', () => {
  const text = stringifyJson(parseJson('-4.607427877621723e16'))
  assert.match(text, /e/)
  assert.equal(typeof parseJson(text), 'number')
  assert.equal(parseJson(text), -4.607427877621723e16)
})

test('safe integers and fractions keep their plain spelling', () => {
  assert.equal(stringifyJson(parseJson('[1, -7, 0.1, 9007199254740991]')), '[1,-7,0.1,9007199254740991]')
})

test('a duplicated key keeps its last value', () => {
  assert.deepEqual(parseJson('{"a": 1, "a": 2}'), { a: 2 })
})

test('text that is not JSON is refused', () => {
  assert.throws(() => parseJson('{"a": NaN}'), SyntaxError)
  assert.throws(() => parseJson('{"a": 1,}'), SyntaxError)
})

test('a non-finite number has no JSON spelling', () => {
  assert.throws(() => stringifyJson({ a: Infinity }), TypeError)
})

test('the lossless rule refuses unsafe integers, -0, infinities and deep nesting, and nothing else', () => {
  assert.equal(losslessProblem(parseJson('{"a": [1, 1.5, 1e300, "x", null, true]}')), null)
  assert.match(losslessProblem(parseJson('{"a": [9007199254740992]}')), /\$\.a\[0\] is an integer outside the safe range/)
  assert.match(losslessProblem(parseJson('{"a": -0.0}')), /\$\.a is -0/)
  assert.match(losslessProblem(parseJson('1e400')), /not a finite number/)
  const deep = (n) => '['.repeat(n) + ']'.repeat(n)
  assert.equal(losslessProblem(parseJson(deep(MAX_NESTING))), null)
  assert.match(losslessProblem(parseJson(deep(MAX_NESTING + 1))), /nests deeper/)
})

test('1.0 is a safe integer, 2^53 and -0 are not', () => {
  assert.ok(isSafeInteger(parseJson('1.0')))
  assert.ok(!isSafeInteger(parseJson('9007199254740992')))
  assert.ok(!isSafeInteger(parseJson('-0.0')))
})
