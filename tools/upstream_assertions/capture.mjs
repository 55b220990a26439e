#!/usr/bin/env node
/**
 * Capture upstream's own test assertions for the v0-to-v1 format edge as data.
 *
 *   node --experimental-strip-types tools/upstream_assertions/capture.mjs SPEC_DIR [--out DIR]
 *
 * SPEC_DIR holds upstream's spec files (`*.spec.ts` of packages/session/session-format-v0-to-v1/tests
 * in zsagi1368/deepseek-harness-zDSH); nothing is fetched here.  Each spec file is imported under a
 * small vitest stand-in (vitest.mjs), with its `../src/...` imports served by the published build
 * pinned in ports/dsh-format (src.mjs, facade.mjs, hooks.mjs).  Its tests then run, and every call
 * they make to an instrumented entry point is recorded with upstream's outcome and what the test
 * asserted about it (see vitest.mjs).  A call becomes a case only when upstream's outcome is exactly
 * what the test expected and its input has a JSON form; everything else is listed under `excluded`.
 *
 * Writes DIR/<name>.json per spec file (default DIR: spec/vectors/upstream).  Needs Node 22 (type
 * stripping); ports/dsh-session/node_modules/.bin/node is one.
 */

import { createHash } from 'node:crypto'
import { readFileSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs'
import { register, createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const ROOT = path.resolve(fileURLToPath(new URL('../..', import.meta.url)))
const FORMAT_PORT = path.join(ROOT, 'ports', 'dsh-format')
const SESSION_PORT = path.join(ROOT, 'ports', 'dsh-session')
const FORMAT = 'sessionlog-upstream-assertions/1'

function parseArgs(argv) {
  const args = { specDir: null, out: path.join(ROOT, 'spec', 'vectors', 'upstream') }
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index]
    if (arg === '--out') args.out = path.resolve(argv[++index])
    else if (args.specDir === null) args.specDir = path.resolve(arg)
    else throw new Error(`unexpected argument ${arg}`)
  }
  if (args.specDir === null) throw new Error('usage: capture.mjs SPEC_DIR [--out DIR]')
  return args
}

const args = parseArgs(process.argv.slice(2))
register('./hooks.mjs', import.meta.url, {
  data: { specDir: args.specDir, formatPort: FORMAT_PORT, sessionPort: SESSION_PORT },
})

const { state } = await import('./recorder.mjs')
const { takeRegistered } = await import('./vitest.mjs')

// ---- where an error was thrown: the innermost frame in an upstream build -----------------------

const requireFormat = createRequire(path.join(FORMAT_PORT, 'package.json'))
const packageJson = (name) => JSON.parse(readFileSync(requireFormat.resolve(`${name}/package.json`), 'utf8'))
const BUILDS = [
  ['@deepseek-ai/dsh-session-format-v0-to-v1', ''],
  ['@deepseek-ai/dsh-session-format', 'format/'],
].map(([name, prefix]) => {
  const file = path.join(path.dirname(requireFormat.resolve(`${name}/package.json`)), 'lib', 'index.js')
  const regions = []
  readFileSync(file, 'utf8').split('\n').forEach((line, index) => {
    const match = /^\/\/#region lib\/types\/(.+)\.js$/.exec(line)
    if (match) regions.push([index + 1, match[1]])
  })
  return { url: pathToFileURL(file).href, prefix, regions }
})

/** Up to three upstream frames (innermost first) of the innermost `cause` of `error`. */
state.locate = (error) => {
  let origin = error
  while (origin?.cause instanceof Error) origin = origin.cause
  const frames = []
  for (const line of String(origin.stack ?? '').split('\n').slice(1)) {
    const frame = /^\s+at (?:(.*?) \()?(file:\/\/.+?):(\d+):\d+\)?$/.exec(line)
    if (frame === null) continue
    const build = BUILDS.find((candidate) => candidate.url === frame[2])
    if (build === undefined) continue
    const lineNumber = Number(frame[3])
    const region = build.regions.filter(([start]) => start <= lineNumber).at(-1)?.[1] ?? '?'
    const fn = (frame[1] ?? '<anonymous>').replace(/^(?:new |Object\.|Module\.)/, '')
    const name = `${build.prefix}${region}:${fn}`
    if (frames.at(-1) !== name) frames.push(name)
    if (frames.length === 3) break
  }
  return frames
}

// ---- run one spec file ---------------------------------------------------------------------------

function caseOf(record, source, test, index) {
  const expected = { accepted: record.outcome.accepted }
  if (record.outcome.accepted) expected.output = record.outcome.output.value
  else {
    expected.error = record.outcome.error.message
    expected.error_class = record.outcome.error.class
    expected.thrown_by = record.outcome.error.stage
  }
  expected.asserted = [record.expectation.assertion, ...record.checks.filter((check) => check !== record.expectation.assertion)]
  return { source, test, index, op: record.op, input: record.input.value, expected }
}

function exclusion(record) {
  if (record.status !== null) return record.status
  if (record.expectation === null) return 'no expectation'
  if (record.expectation.accepted !== record.outcome.accepted) {
    return record.outcome.accepted ? 'accepted, test expected a refusal' : `refused (${record.outcome.error.message}), test expected acceptance`
  }
  if (!record.input.ok) return `input has no JSON form: ${record.input.why}`
  if (record.outcome.accepted && !record.outcome.output.ok) return `output has no JSON form: ${record.outcome.output.why}`
  return null
}

async function runSpec(file) {
  const source = `tests/${path.basename(file)}`
  const text = readFileSync(file, 'utf8')
  state.source = source
  await import(pathToFileURL(file).href)
  const tests = takeRegistered()
  const cases = []
  const excluded = []
  const failures = []
  let unattributed = 0
  let assertions = 0
  for (const { name, body } of tests) {
    const test = { name, records: [], pending: [], lastCovered: [], failures: [], unattributed: 0, assertions: 0 }
    state.test = test
    let error
    try {
      await body()
    } catch (caught) {
      error = caught
    } finally {
      state.test = null
      state.ctx = null
      state.depth = 0
    }
    for (const record of test.pending) {
      if (record.outcome.accepted) record.expectation ??= { accepted: true, assertion: 'returns' }
      else record.status = 'threw outside an assertion (the test errors)'
    }
    if (error !== undefined) failures.push({ test: name, detail: `test threw: ${error?.message ?? error}` })
    for (const detail of test.failures) failures.push({ test: name, detail })
    unattributed += test.unattributed
    assertions += test.assertions
    let index = 0
    for (const record of test.records) {
      const reason = exclusion(record)
      if (reason === null) cases.push(caseOf(record, source, name, index++))
      else excluded.push({ test: name, op: record.op, reason })
    }
  }
  const edge = packageJson('@deepseek-ai/dsh-session-format-v0-to-v1')
  const format = packageJson('@deepseek-ai/dsh-session-format')
  return {
    format: FORMAT,
    source,
    spec_sha256: createHash('sha256').update(text).digest('hex'),
    upstream: { [edge.name]: edge.version, [format.name]: format.version },
    tests: tests.length,
    assertions,
    calls: cases.length + excluded.length,
    unattributed_throws: unattributed,
    failed_assertions: failures,
    excluded,
    cases,
  }
}

function write(file, capture) {
  const { cases, excluded, failed_assertions: failures, ...head } = capture
  const lines = (items) => (items.length === 0 ? '[]' : `[\n${items.map((item) => `  ${JSON.stringify(item)}`).join(',\n')}\n ]`)
  const body = Object.entries(head).map(([key, value]) => ` ${JSON.stringify(key)}: ${JSON.stringify(value)}`)
  body.push(` "failed_assertions": ${lines(failures)}`, ` "excluded": ${lines(excluded)}`, ` "cases": ${lines(cases)}`)
  writeFileSync(file, `{\n${body.join(',\n')}\n}\n`)
}

mkdirSync(args.out, { recursive: true })
const specs = readdirSync(args.specDir).filter((name) => name.endsWith('.spec.ts')).sort()
if (specs.length === 0) throw new Error(`no *.spec.ts in ${args.specDir}`)
for (const name of specs) {
  const capture = await runSpec(path.join(args.specDir, name))
  const out = path.join(args.out, `${name.replace(/\.spec\.ts$/, '')}.json`)
  write(out, capture)
  console.log(`${capture.source}: ${capture.tests} tests, ${capture.assertions} assertions, ${capture.calls} calls, ${capture.cases.length} cases, `
    + `${capture.excluded.length} excluded, ${capture.failed_assertions.length} failed assertions -> ${path.relative(ROOT, out)}`)
}
