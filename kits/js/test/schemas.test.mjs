import { test } from 'node:test'
import assert from 'node:assert/strict'

import { createPayloadValidator, relationHolds } from '../src/schemas.mjs'

const payloads = createPayloadValidator()

test('a valid payload is accepted', () => {
  assert.equal(payloads.validate('turn/start', { turn: 1 }), null)
  assert.equal(payloads.validate('turn/end', { turn: 1, reason: { kind: 'completed' } }), null)
})

test('a broken payload is refused, naming where', () => {
  assert.match(payloads.validate('turn/start', { turn: -1 }), /^\$\.turn /)
  assert.notEqual(payloads.validate('turn/start', { turn: 1, extra: true }), null)
  assert.notEqual(payloads.validate('turn/start', {}), null)
  assert.notEqual(payloads.validate('turn/end', { turn: 1, reason: { kind: '' } }), null)
})

test('x-earlierThanEventSeq refuses a seq that is not earlier than the event', () => {
  const data = { title: 't', messageSeqs: [5], source: { kind: 'fallback' } }
  assert.equal(payloads.validate('session/title', data, { seq: 6 }), null)
  assert.match(payloads.validate('session/title', data, { seq: 5 }), /^\$\.messageSeqs\.0 /)
})

test('x-relations: notAbove holds when the lesser is not above the greater', () => {
  const relation = { relation: 'notAbove', lesser: ['retry'], greater: ['maxRetries'] }
  assert.ok(relationHolds(relation, { retry: 2, maxRetries: 3 }))
  assert.ok(!relationHolds(relation, { retry: 4, maxRetries: 3 }))
  assert.ok(relationHolds(relation, { retry: 4 }))
})

test('x-relations: itemIndex, uniqueMember, sumOf and equal', () => {
  assert.ok(relationHolds({ relation: 'itemIndex', member: 'index' }, [{ index: 0 }, { index: 1 }]))
  assert.ok(!relationHolds({ relation: 'itemIndex', member: 'index' }, [{ index: 1 }]))
  assert.ok(!relationHolds({ relation: 'uniqueMember', member: 'id' }, [{ id: 'a' }, { id: 'a' }]))
  assert.ok(relationHolds({ relation: 'sumOf', total: ['t'], parts: [['a'], ['b']] }, { t: 3, a: 1, b: 2 }))
  assert.ok(!relationHolds({ relation: 'sumOf', total: ['t'], parts: [['a'], ['b']] }, { t: 4, a: 1, b: 2 }))
  assert.ok(relationHolds({ relation: 'equal', left: ['a', -1], right: ['b'] }, { a: [0, 7], b: 7 }))
  assert.ok(!relationHolds({ relation: 'equal', left: ['a', -1], right: ['b'] }, { a: [7, 0], b: 7 }))
})

test('the stored header line is validated', () => {
  assert.equal(payloads.validateHeaderLine({ type: 'session', version: 1, id: 's', createdAt: 0, delegationDepth: 0 }), null)
  assert.notEqual(payloads.validateHeaderLine({ type: 'session', version: 1, id: 's', createdAt: 0 }), null)
})
