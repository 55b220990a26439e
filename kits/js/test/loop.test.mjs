import { test } from 'node:test'
import assert from 'node:assert/strict'
import { PassThrough } from 'node:stream'

import { parseJson } from '../src/json.mjs'
import { Refusal, runDriver } from '../src/loop.mjs'

/** Run the loop over `lines` with `port` and return the parsed replies. */
async function exchange(port, lines) {
  const input = new PassThrough()
  const output = new PassThrough()
  let text = ''
  output.on('data', (chunk) => {
    text += chunk
  })
  const done = runDriver(port, { input, output, exit: false })
  input.end(lines.map((l) => `${l}\n`).join(''))
  await done
  return text.split('\n').filter((l) => l !== '').map(parseJson)
}

const port = {
  implementation: { name: 'echo', version: '1.0.0' },
  capabilities: ['session'],
  handlers: {
    state: () => ({ length: 0, nodes: [], replace_generation: 0, header: null }),
    append: (request) => {
      if (typeof request.event.seq === 'bigint') throw new Refusal('JSON_NOT_LOSSLESS', 'seq beyond 2^53')
      return { seq: request.event.seq }
    },
    reset: () => {
      throw new TypeError('boom')
    },
  },
}

test('hello declares the protocol, the implementation and the capabilities', async () => {
  const [reply] = await exchange(port, ['{"id": 1, "op": "hello"}'])
  assert.deepEqual(reply, {
    id: 1,
    ok: true,
    result: { protocol: 'sessionlog-driver/1', implementation: { name: 'echo', version: '1.0.0' }, capabilities: ['session'], format_version: 1 },
  })
})

test('a request is dispatched to its handler and answered with the same id', async () => {
  const [reply] = await exchange(port, ['{"id": 7, "op": "state"}'])
  assert.deepEqual(reply, { id: 7, ok: true, result: { length: 0, nodes: [], replace_generation: 0, header: null } })
})

test('a refusal becomes an error reply, and the handler sees exact numbers', async () => {
  const [refused, accepted] = await exchange(port, [
    '{"id": 2, "op": "append", "event": {"seq": 9007199254740993}}',
    '{"id": 3, "op": "append", "event": {"seq": 4}}',
  ])
  assert.deepEqual(refused, { id: 2, ok: false, error: { code: 'JSON_NOT_LOSSLESS', message: 'seq beyond 2^53' } })
  assert.deepEqual(accepted, { id: 3, ok: true, result: { seq: 4 } })
})

test('an undeclared group is UNSUPPORTED, an unknown op BAD_REQUEST, a bug UNMAPPED', async () => {
  const original = process.stderr.write
  process.stderr.write = () => true
  try {
    const replies = await exchange(port, ['{"id": 4, "op": "cuts", "events": []}', '{"id": 5, "op": "frobnicate"}', '{"id": 6, "op": "reset"}'])
    assert.deepEqual(replies.map((r) => r.error.code), ['UNSUPPORTED', 'BAD_REQUEST', 'UNMAPPED'])
    assert.deepEqual(replies.map((r) => r.id), [4, 5, 6])
  } finally {
    process.stderr.write = original
  }
})

test('a line that is not JSON is skipped, and bye ends the loop after its reply', async () => {
  const original = process.stderr.write
  process.stderr.write = () => true
  try {
    const replies = await exchange(port, ['not json', '{"id": 8, "op": "bye"}', '{"id": 9, "op": "state"}'])
    assert.deepEqual(replies, [{ id: 8, ok: true, result: null }])
  } finally {
    process.stderr.write = original
  }
})
