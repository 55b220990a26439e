#!/usr/bin/env node
/**
 * Fold + validate benchmark for the published @deepseek-ai/dsh-session, driven by
 * bench_compare.py (which generates the logs and prints the side-by-side table).
 *
 *   node bench.mjs [--repeat N] LOG.json ...
 *
 * Each LOG.json is a JSON array of v1 events (a whole valid log from seq 0).  For every file it
 * prints one JSON line on stdout:
 *
 *   {file, events, read_ms, parse_ms, fold_surface_ms, seed_detached_ms, seed_live_ms}
 *
 * read_ms/parse_ms are reading the file and JSON.parse (measured once, reported separately);
 * the other three are medians over --repeat runs on the parsed array (run under --expose-gc, a
 * full collection precedes every timed call):
 *   fold_surface_ms   foldSurface(events): surface rules only;
 *   seed_detached_ms  Session.create(id, events): snapshot + envelope, header and message shapes,
 *                     contiguity and the surface, plus the end-of-seed marker;
 *   seed_live_ms      ctx.sessions.create(id, {seed}) in a Context with InvariantRegistry,
 *                     SessionStore and the /invariant companion: the above plus the turn/step/tool
 *                     trace replay, which is the closest match to a full v1 validation.
 * Process start-up and module loading are not in any of these; bench_compare.py measures them
 * separately with `--startup`, which imports everything and exits.
 */

import { readFileSync } from 'node:fs'

for (const method of ['log', 'info', 'debug', 'warn', 'trace']) console[method] = console.error

const { Context } = await import('@deepseek-ai/cordis')
const { default: InvariantRegistry } = await import('@deepseek-ai/dsh-invariants')
const { Session, SessionId, SessionStore, foldSurface } = await import('@deepseek-ai/dsh-session')
const sessionInvariant = await import('@deepseek-ai/dsh-session/invariant')

const args = process.argv.slice(2)
if (args[0] === '--startup') process.exit(0)
let repeat = 5
const files = []
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--repeat') repeat = Number(args[++i])
  else files.push(args[i])
}

const ctx = new Context()
await ctx.plugin(InvariantRegistry)
await ctx.plugin(SessionStore)
await ctx.plugin(sessionInvariant)

function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

function timed(fn) {
  globalThis.gc?.()
  const start = performance.now()
  const result = fn()
  return [performance.now() - start, result]
}

let counter = 0
async function seedLive(events) {
  const id = `bench-${++counter}`
  let ms
  const fiber = ctx.plugin({
    name: 'bench-session',
    inject: ['sessions'],
    apply: (child) => {
      ;[ms] = timed(() => child.sessions.create(id, { seed: events, meta: { createdAt: 0 } }))
    },
  })
  await fiber
  await fiber.dispose()
  return ms
}

for (const file of files) {
  const [readMs, text] = timed(() => readFileSync(file, 'utf8'))
  const [parseMs, events] = timed(() => JSON.parse(text))
  const fold = []
  const detached = []
  const live = []
  // One untimed warm-up of each path, then the timed repeats.
  for (let run = 0; run <= repeat; run++) {
    const [foldMs, folded] = timed(() => foldSurface(events))
    const [detachedMs, session] = timed(() => Session.create(SessionId(`bench-detached-${run}`), events))
    const liveMs = await seedLive(events)
    if (folded.nodes.length === 0 && events.length > 0) throw new Error('empty surface: not a realistic log')
    if (session.seq !== events.length + 1) throw new Error(`seeded ${session.seq} events, expected ${events.length + 1}`)
    if (run === 0) continue
    fold.push(foldMs)
    detached.push(detachedMs)
    live.push(liveMs)
  }
  const line = {
    file,
    events: events.length,
    read_ms: readMs,
    parse_ms: parseMs,
    fold_surface_ms: median(fold),
    seed_detached_ms: median(detached),
    seed_live_ms: median(live),
  }
  process.stdout.write(`${JSON.stringify(line)}\n`)
}
