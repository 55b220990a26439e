/**
 * Payload validation against the published JSON Schemas (spec/vectors/schemas/*.json, draft
 * 2020-12) with Ajv.
 *
 * Besides JSON Schema itself, the kit checks two of the schemas' annotations, because both are
 * about one payload alone: `x-earlierThanEventSeq` (the integer is lower than the seq of the event
 * carrying the data) and `x-relations` (the cross-member rules: equal, notAbove, sumOf,
 * flagIfAnyPositive, itemIndex, uniqueMember, membersWithin, goalStateRestatement).
 * `x-discriminant`, `x-mergeExtensible` and `x-opaque` are documentation: the schemas already say
 * in JSON Schema what they mean.  Everything between events (the trace, the surface, the
 * relationships of invariants.md) is the port's own business.
 *
 * Validate only values that passed `losslessProblem` (json.mjs): Ajv reads numbers as doubles.
 */

import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import Ajv2020 from 'ajv/dist/2020.js'

import { jsonEqual } from './equality.mjs'
import { isObject } from './json.mjs'

/** Where the published schemas live in this repository. */
export const SCHEMA_DIRECTORY = fileURLToPath(new URL('../../../spec/vectors/schemas/', import.meta.url))

/** The schema file name of an event type's payload: `tool/result` is `tool.result.schema.json`. */
export function schemaFile(eventType, generation = 1) {
  const stem = eventType.replaceAll('/', '.')
  return generation === 1 ? `${stem}.schema.json` : `${stem}.v${generation}.schema.json`
}

// -- x-relations: the cross-member rules (model/shapes.py `relation_problem`) --------------------

const MISSING = Symbol('missing')

function valueAt(value, path) {
  for (const step of path) {
    if (typeof step === 'number') {
      if (!Array.isArray(value) || step < -value.length || step >= value.length) return MISSING
      value = value[step < 0 ? value.length + step : step]
    } else {
      if (!isObject(value) || !Object.hasOwn(value, step)) return MISSING
      value = value[step]
    }
  }
  return value
}

function numbersAt(value, paths) {
  const found = paths.map((p) => valueAt(value, p))
  return found.every((n) => typeof n === 'number') ? found : null
}

/** JavaScript's `===` on JSON scalars (`1` is `1.0`, `true` is not `1`). */
function sameScalar(a, b) {
  return (a === null || typeof a !== 'object') && a === b
}

function restatedGoal(source) {
  if (source.kind !== 'goal' || !Object.hasOwn(source, 'change')) return null
  const change = source.change
  if (!isObject(change)) return null
  const clear = change.operation === 'clear'
  const ref = change[clear ? 'cleared' : 'goal']
  if (!isObject(ref)) return null
  const members = clear ? ['cleared', 'clearedAt'] : ['goal', 'roundsStarted', 'createdAt', 'updatedAt']
  const payload = {}
  for (const name of members) if (Object.hasOwn(change, name)) payload[name] = change[name]
  const content = [{ type: 'text', text: `<goal_state>${JSON.stringify(payload)}</goal_state>` }]
  return [ref.id, ref.revision, content]
}

/** Whether one `x-relations` entry holds on `value` (a relation between absent members holds). */
export function relationHolds(relation, value) {
  switch (relation.relation) {
    case 'equal': {
      const left = valueAt(value, relation.left)
      const right = valueAt(value, relation.right)
      return left === MISSING || right === MISSING || jsonEqual(left, right)
    }
    case 'notAbove': {
      const pair = numbersAt(value, [relation.lesser, relation.greater])
      return pair === null || pair[0] <= pair[1]
    }
    case 'sumOf': {
      const numbers = numbersAt(value, [relation.total, ...relation.parts])
      return numbers === null || numbers[0] === numbers.slice(1).reduce((x, y) => x + y, 0)
    }
    case 'flagIfAnyPositive': {
      const flag = valueAt(value, relation.flag)
      const counts = numbersAt(value, relation.counts)
      return typeof flag !== 'boolean' || counts === null || flag === counts.some((n) => n > 0)
    }
    case 'itemIndex':
    case 'uniqueMember': {
      if (!Array.isArray(value)) return true
      const seen = []
      for (const [index, item] of value.entries()) {
        if (!isObject(item) || !Object.hasOwn(item, relation.member)) continue
        const member = item[relation.member]
        if (relation.relation === 'itemIndex' && !sameScalar(member, index)) return false
        if (relation.relation === 'uniqueMember' && seen.some((s) => jsonEqual(member, s))) return false
        seen.push(member)
      }
      return true
    }
    case 'membersWithin': {
      const source = valueAt(value, relation.source)
      const target = valueAt(value, relation.target)
      if (!isObject(source) || !isObject(target)) return true
      return Object.keys(source).every((name) => Object.hasOwn(target, name))
    }
    case 'goalStateRestatement': {
      const source = valueAt(value, ['source'])
      const restated = isObject(source) ? restatedGoal(source) : null
      if (restated === null) return true
      const [goalId, revision, content] = restated
      if (!(sameScalar(source.goalId, goalId) && sameScalar(source.revision, revision))) return false
      const actual = valueAt(value, ['content'])
      return actual !== MISSING && jsonEqual(actual, content)
    }
    default:
      throw new Error(`unknown x-relations entry ${JSON.stringify(relation)}`)
  }
}

// -- the validator ----------------------------------------------------------------------------------

/**
 * A validator over every schema in `directory`: `validate(eventType, data, {seq, generation})`
 * returns `null` when the payload is valid, else a one-line reason naming the first failing
 * location; `validateHeaderLine(line)` does the same for a stored header line.
 */
export function createPayloadValidator({ directory = SCHEMA_DIRECTORY } = {}) {
  const context = { seq: Infinity }
  const ajv = new Ajv2020({ allErrors: false, strict: true, strictRequired: false, allowUnionTypes: true })
  for (const keyword of ['x-discriminant', 'x-mergeExtensible', 'x-opaque']) ajv.addKeyword({ keyword })
  ajv.addKeyword({
    keyword: 'x-earlierThanEventSeq',
    schemaType: 'boolean',
    validate: (wanted, data) => !wanted || typeof data !== 'number' || data < context.seq,
    errors: false,
  })
  ajv.addKeyword({
    keyword: 'x-relations',
    schemaType: 'array',
    validate: (relations, data) => relations.every((relation) => relationHolds(relation, data)),
    errors: false,
  })
  // Each schema is compiled the first time it is used, so that a driver answers `hello` at once.
  const names = new Set(readdirSync(directory).filter((n) => n.endsWith('.schema.json')))
  const compiled = new Map()
  function compiledFor(name) {
    if (!names.has(name)) throw new Error(`no schema ${name} in ${directory}`)
    if (!compiled.has(name)) compiled.set(name, ajv.compile(JSON.parse(readFileSync(join(directory, name), 'utf8'))))
    return compiled.get(name)
  }

  function run(name, data) {
    const check = compiledFor(name)
    if (check(data)) return null
    const [error] = check.errors ?? []
    const where = error === undefined ? '$' : `$${error.instancePath.replaceAll('/', '.')}`
    return `${where} ${error?.message ?? `breaks ${error?.keyword}`}`
  }

  return {
    /** Whether a payload schema exists for `eventType` in `generation`. */
    has(eventType, generation = 1) {
      return names.has(schemaFile(eventType, generation))
    },
    /** `null` when `data` is a valid payload of `eventType`, else the first problem. */
    validate(eventType, data, { seq = Number.MAX_SAFE_INTEGER, generation = 1 } = {}) {
      let name = schemaFile(eventType, generation)
      if (generation !== 1 && !names.has(name)) name = schemaFile(eventType)
      context.seq = seq
      try {
        return run(name, data)
      } finally {
        context.seq = Infinity
      }
    },
    /** `null` when `line` is a valid stored header line, else the first problem. */
    validateHeaderLine(line) {
      return run('header-line.schema.json', line)
    },
  }
}
