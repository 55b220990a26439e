/**
 * A session log in plain JavaScript: the log and the surface, trace, request header and
 * relationship state derived from it (model/session.py).  `append` and `seed` either return a
 * new session or throw a `Refusal`; the session they were given is never changed.
 */

import { Refusal } from '../src/index.mjs'
import { admit, END_SEED, isKnownType, OPEN_TRACE } from './rules.mjs'
import { openRelations, relationFinish, relationTransition } from './relations.mjs'

const relate = (state, event, log, surface) => relationTransition(state, event, log, surface, isKnownType)

/** An empty session: no events, no end-of-seed marker. */
export function emptySession() {
  return { events: [], nodes: [], generation: 0, trace: OPEN_TRACE, relations: openRelations(), header: null }
}

/** The session with one raw event appended (the whole v1 contract), or a thrown `Refusal`. */
export function appendEvent(session, raw) {
  const next = admit(session, raw, relate)
  if (next instanceof Refusal) throw next
  return next
}

/**
 * A session built from `raws` from seq 0 and closed by one `session/end-seed` marker at seq =
 * seed length with the time of the last seed event (0 for an empty seed), unless the seed already
 * ends with one (INV-LOG-10); a refusal names the seed index.
 */
export function seedSession(raws) {
  let session = emptySession()
  for (const [index, raw] of raws.entries()) {
    const next = admit(session, raw, relate)
    if (next instanceof Refusal) throw new Refusal(next.code, `seed index ${index}: ${next.message}`)
    session = next
  }
  const last = session.events.at(-1)
  if (last?.type !== END_SEED) {
    session = appendEvent(session, { type: END_SEED, seq: session.events.length, time: last?.time ?? 0, data: {} })
  }
  const unfinished = relationFinish(session.relations)
  if (unfinished !== null) throw new Refusal(unfinished.code, `seed index ${raws.length - 1}: ${unfinished.message}`)
  return session
}

/** What the suite observes of a session (the protocol's `state`). */
export function observe(session) {
  return { length: session.events.length, nodes: session.nodes, replace_generation: session.generation, header: session.header }
}
