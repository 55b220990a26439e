import { test } from 'node:test'
import assert from 'node:assert/strict'

import { jsonEqual } from '../src/equality.mjs'
import { parseJson } from '../src/json.mjs'

const equal = (a, b) => jsonEqual(parseJson(a), parseJson(b))

test('key order does not matter', () => {
  assert.ok(equal('{"a": 1, "b": [2, 3]}', '{"b": [2, 3], "a": 1}'))
})

test('1 equals 1.0', () => {
  assert.ok(equal('1', '1.0'))
})

test('true is not 1, and null is only null', () => {
  assert.ok(!equal('true', '1'))
  assert.ok(!equal('false', '0'))
  assert.ok(!equal('null', '0'))
  assert.ok(!equal('null', 'false'))
  assert.ok(equal('null', 'null'))
})

test('a string is not the number it spells', () => {
  assert.ok(!equal('"1"', '1'))
})

test('a float beyond 2^53 equals its integer digits as JSON.stringify writes them', () => {
  assert.ok(equal('-4.607427877621723e16', '-46074278776217230'))
})

test('two integers beyond 2^53 are compared exactly', () => {
  assert.ok(!equal('9007199254740993', '9007199254740992'))
  assert.ok(equal('9007199254740993', '9007199254740993'))
})

test('an integer beyond every double equals no float', () => {
  assert.ok(!equal('1' + '0'.repeat(400), '1e300'))
})

test('-0.0 equals 0, as doubles do', () => {
  assert.ok(equal('-0.0', '0'))
})

test('arrays compare in order and by length; an object is not an array', () => {
  assert.ok(!equal('[1, 2]', '[2, 1]'))
  assert.ok(!equal('[1]', '[1, 1]'))
  assert.ok(!equal('{}', '[]'))
  assert.ok(!equal('{"a": 1}', '{"a": 1, "b": 1}'))
  assert.ok(!equal('{"a": 1}', '{"b": 1}'))
})
