#!/usr/bin/env node
/**
 * An example port built on the kit: a session log in plain JavaScript that declares the
 * `session` group (reset, seed, append, state) and speaks sessionlog-driver/1 through the kit's
 * loop.  Check it with
 *
 *     .venv/bin/python -m sessionlog_spec check --port 'node kits/js/example/driver.mjs' --only session --profile ci
 */

import { Refusal, runDriver } from '../src/index.mjs'
import { appendEvent, emptySession, observe, seedSession } from './session.mjs'

let session = emptySession()

function argument(request, name, check, what) {
  const value = request[name]
  if (!check(value)) throw new Refusal('BAD_REQUEST', `${request.op} needs ${name}: ${what}`)
  return value
}

await runDriver({
  implementation: { name: 'sessionlog-kit-example', version: '0.1.0' },
  capabilities: ['session'],
  handlers: {
    reset() {
      session = emptySession()
      return null
    },
    seed(request) {
      session = seedSession(argument(request, 'events', Array.isArray, 'an array of events'))
      return observe(session)
    },
    append(request) {
      if (!Object.hasOwn(request, 'event')) throw new Refusal('BAD_REQUEST', 'append needs event')
      session = appendEvent(session, request.event)
      return observe(session)
    },
    state() {
      return observe(session)
    },
  },
})
