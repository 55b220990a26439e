/**
 * The rules of one event of a v1 session log, in the model's check order (model/session.py): the
 * envelope and lossless JSON, contiguity, the vocabulary, the payload, the surface, the trace,
 * then the relationships between events.  Pure functions: a refused event changes nothing.
 *
 * The payload tables come from the kit's schema validator; the rules that are not one payload's
 * shape (messages' finer codes, request headers, the trace, the surface, the relationships) are
 * written here, after model/messages.py, header.py, trace.py, surface.py and relationships.py.
 */

import { createPayloadValidator, isObject, isSafeInteger, isSafeNatural, jsonEqual, losslessProblem, Refusal } from '../src/index.mjs'

const payloads = createPayloadValidator()

export const END_SEED = 'session/end-seed'
const ENVELOPE_KEYS = new Set(['type', 'seq', 'time', 'data', 'ignorable', 'surfaceOp', 'sourceEventSeqs'])
const REQUIRED_KEYS = ['type', 'seq', 'time', 'data']
const SURFACE_TYPES = new Set(['user/message', 'assistant/message', 'tool/result'])
const LEGACY_TYPES = { 'request/header-delta': 'LEGACY_HEADER_DELTA', 'mode/set': 'LEGACY_MODE_SET' }
const TRACE_TYPES = new Set(['turn/start', 'turn/end', 'step/start', 'step/end', 'tool/call', 'assistant/chunk'])
const STEP_SCOPED = new Set(['assistant/chunk', 'assistant/message', 'tool/call', 'tool/result'])
const TURN_SCOPED = new Set(['request/header', 'request/context'])
const TYPE_CODES = {
  'user/message': 'USER_MESSAGE_INVALID',
  'assistant/message': 'ASSISTANT_MESSAGE_INVALID',
  'tool/result': 'TOOL_RESULT_INVALID',
  'request/header': 'HEADER_INVALID',
  [END_SEED]: 'END_SEED_INVALID',
}

/** Whether `type` is in the v1 vocabulary: every type with a published payload schema. */
export function isKnownType(type) {
  return payloads.has(type)
}

const fail = (code, message) => new Refusal(code, message)
const nonEmpty = (v) => typeof v === 'string' && v !== ''
const asObject = (v) => (isObject(v) ? v : null)
const asArray = (v) => (Array.isArray(v) ? v : null)
const asInt = (v) => (isSafeInteger(v) ? v : null)

// -- the envelope (model/event.py) ---------------------------------------------------------------

/** The decoded event, or the refusal of its envelope (INV-LOG-1..4). */
export function decodeEvent(raw) {
  if (!isObject(raw)) return fail('ENVELOPE_NOT_OBJECT', 'event is not a JSON object')
  const extra = Object.keys(raw).filter((k) => !ENVELOPE_KEYS.has(k)).sort()
  if (extra.length) return fail('ENVELOPE_UNKNOWN_KEY', `event has unknown envelope key(s) ${extra}`)
  const missing = REQUIRED_KEYS.filter((k) => !Object.hasOwn(raw, k))
  if (missing.length) return fail('ENVELOPE_MISSING_KEY', `event lacks envelope key(s) ${missing}`)
  const { type, seq, time } = raw
  if (!nonEmpty(type)) return fail('ENVELOPE_BAD_TYPE', 'event type must be a non-empty string')
  if (!isSafeNatural(seq)) return fail('ENVELOPE_BAD_SEQ', `event ${type} seq is not a non-negative safe integer`)
  if (!isSafeInteger(time)) return fail('ENVELOPE_BAD_TIME', `event seq ${seq} time is not a safe integer`)
  if (Object.hasOwn(raw, 'ignorable') && raw.ignorable !== true) {
    return fail('ENVELOPE_BAD_IGNORABLE', `event seq ${seq} ignorable must be absent or true`)
  }
  for (const key of ['data', 'surfaceOp', 'sourceEventSeqs']) {
    const problem = Object.hasOwn(raw, key) ? losslessProblem(raw[key]) : null
    if (problem !== null) return fail('JSON_NOT_LOSSLESS', `event seq ${seq} ${key} is not lossless JSON: ${problem}`)
  }
  let surfaceOp = null
  if (Object.hasOwn(raw, 'surfaceOp')) {
    const op = raw.surfaceOp
    if (op === 'append') surfaceOp = { op: 'append' }
    else if (isObject(op) && op.op === 'replace') {
      const keys = Object.keys(op)
      if (keys.length !== 3 || !['op', 'start', 'end'].every((k) => keys.includes(k)) || !isSafeNatural(op.start) || !isSafeNatural(op.end)) {
        return fail('SURFACE_OP_INVALID', `event seq ${seq}: invalid replace surfaceOp`)
      }
      surfaceOp = { op: 'replace', start: op.start, end: op.end }
    } else return fail('SURFACE_OP_INVALID', `event seq ${seq}: invalid surfaceOp`)
  }
  let sources = null
  if (Object.hasOwn(raw, 'sourceEventSeqs')) {
    if (!Array.isArray(raw.sourceEventSeqs) || !raw.sourceEventSeqs.every(isSafeNatural)) {
      return fail('SOURCES_INVALID', `event seq ${seq}: sourceEventSeqs must be an array of non-negative safe integers`)
    }
    sources = raw.sourceEventSeqs
  }
  return { type, seq, time, data: raw.data, ignorable: Object.hasOwn(raw, 'ignorable'), surfaceOp, sources, raw }
}

// -- messages (model/messages.py) ------------------------------------------------------------------

function messageProblem(message, role) {
  const msg = asObject(message)
  if (msg === null || !nonEmpty(msg.id)) return 'lacks an identified message'
  if (msg.role !== role) return `message must have role "${role}"`
  const source = asObject(msg.source)
  if (source === null || !nonEmpty(source.kind)) return 'message has an invalid source'
  const content = asArray(msg.content)
  if (content === null) return 'message content must be an array'
  if (!content.every((b) => isObject(b) && nonEmpty(b.type))) return 'message content blocks must be objects with a string type'
  return null
}

const turnStepProblem = (d) => (isSafeNatural(d.turn) && isSafeNatural(d.step) ? null : 'turn and step must be non-negative integers')
const unknownMembers = (obj, allowed) => Object.keys(obj).filter((k) => !allowed.includes(k))

function assistantProblem(data) {
  const obj = asObject(data)
  if (obj === null) return 'data must be an object'
  const extra = unknownMembers(obj, ['turn', 'step', 'message', 'usage', 'interrupted'])
  if (extra.length) return `has unknown data member(s) ${extra}`
  const problem = turnStepProblem(obj) ?? messageProblem(obj.message, 'assistant')
  if (problem !== null) return problem
  const source = obj.message.source
  if (source.kind !== 'model' || !nonEmpty(source.provider) || !nonEmpty(source.model)) return 'message must have a model source with provider and model'
  if (Object.hasOwn(obj, 'interrupted') && obj.interrupted !== true) return 'interrupted must be absent or true'
  for (const block of obj.message.content) {
    if (block.type !== 'tool-call') continue
    if (!nonEmpty(block.id)) return 'tool-call block lacks an id'
    if (typeof block.name !== 'string' || typeof block.arguments !== 'string') return 'tool-call block needs a string name and raw string arguments'
  }
  return null
}

function toolResultProblem(data) {
  const obj = asObject(data)
  if (obj === null) return 'data must be an object'
  const extra = unknownMembers(obj, ['turn', 'step', 'message', 'error', 'meta'])
  if (extra.length) return `has unknown data member(s) ${extra}`
  const problem = turnStepProblem(obj) ?? messageProblem(obj.message, 'user')
  if (problem !== null) return problem
  const { source, content } = obj.message
  const block = content.length === 1 ? asObject(content[0]) : null
  if (source.kind !== 'tool' || !nonEmpty(source.callId)) return 'message must have a tool source with a callId'
  if (block === null || block.type !== 'tool-result' || !Array.isArray(block.content)) return 'message must contain exactly one tool-result block with array content'
  if (block.toolCallId !== source.callId) return 'message has mismatched tool call ids'
  if (Object.hasOwn(block, 'isError') && typeof block.isError !== 'boolean') return 'tool-result isError must be a boolean'
  if (Object.hasOwn(obj, 'error')) {
    const e = asObject(obj.error)
    const keys = e === null ? [] : Object.keys(e).sort()
    if (e === null || keys.join() !== 'code,name' || !Object.values(e).every((v) => typeof v === 'string')) return 'error must be {name, code} strings'
  }
  return null
}

function messageViolation(event) {
  const checks = {
    'user/message': () => messageProblem(event.data, 'user'),
    'assistant/message': () => assistantProblem(event.data),
    'tool/result': () => toolResultProblem(event.data),
  }
  const check = checks[event.type]
  const problem = check === undefined ? null : check()
  return problem === null ? null : fail(TYPE_CODES[event.type], `${event.type} ${problem}`)
}

// -- request headers (model/header.py) ---------------------------------------------------------------

/** The canonical form of a header: empty system, empty tools and marker-free adapterDefaults absent. */
export function canonicalHeader(header) {
  const out = {}
  for (const [key, value] of Object.entries(header)) {
    if (key === 'system' && value === '') continue
    if (key === 'tools' && Array.isArray(value) && value.length === 0) continue
    if (key === 'adapterDefaults' && !(isObject(value) && Object.values(value).some((v) => v === true))) continue
    out[key] = value
  }
  return out
}

function headerShapeViolation(header) {
  const obj = asObject(header)
  if (obj === null) return fail('HEADER_INVALID', 'request/header header must be an object')
  if (unknownMembers(obj, ['config', 'adapterDefaults', 'system', 'tools']).length) return fail('HEADER_INVALID', 'request/header header has unknown members')
  const config = asObject(obj.config)
  if (config === null || !nonEmpty(config.provider) || !nonEmpty(config.model)) return fail('HEADER_NOT_PINNED', 'request/header lacks provider/model')
  if (Object.hasOwn(config, 'reasoningEffort') && !nonEmpty(config.reasoningEffort)) return fail('HEADER_INVALID', 'request/header has an invalid reasoningEffort')
  if (Object.hasOwn(config, 'maxTokens') && !(isSafeNatural(config.maxTokens) && config.maxTokens !== 0)) return fail('HEADER_INVALID', 'request/header has an invalid maxTokens')
  if (Object.hasOwn(obj, 'adapterDefaults')) {
    const defaults = asObject(obj.adapterDefaults)
    if (defaults === null || Object.entries(defaults).some(([k, v]) => !['reasoningEffort', 'maxTokens'].includes(k) || v !== true || !Object.hasOwn(config, k))) {
      return fail('HEADER_ADAPTER_DEFAULTS_INVALID', 'request/header adapterDefaults may only mark reasoningEffort/maxTokens present in config')
    }
  }
  if (Object.hasOwn(obj, 'system') && typeof obj.system !== 'string') return fail('HEADER_INVALID', 'request/header system must be a string')
  if (Object.hasOwn(obj, 'tools')) {
    if (!Array.isArray(obj.tools)) return fail('HEADER_INVALID', 'request/header tools must be an array')
    if (!obj.tools.every((t) => isObject(t) && nonEmpty(t.name))) return fail('HEADER_INVALID', 'request/header tools must be objects with a name')
  }
  return null
}

function headerEventViolation(data) {
  const obj = asObject(data)
  if (obj === null) return fail('HEADER_INVALID', 'request/header data must be an object')
  if (obj.reason === 'fallback') return fail('LEGACY_FALLBACK_REASON', 'request/header uses the legacy reason "fallback"')
  if (unknownMembers(obj, ['header', 'reason', 'startsSeries']).length || !Object.hasOwn(obj, 'header') || !Object.hasOwn(obj, 'reason')) {
    return fail('HEADER_INVALID', 'request/header data must be {header, reason, startsSeries?}')
  }
  if (!['initial', 'resume', 'change', 'series'].includes(obj.reason)) return fail('HEADER_REASON_INVALID', 'request/header has an invalid reason')
  if (Object.hasOwn(obj, 'startsSeries') && obj.startsSeries !== true) return fail('HEADER_INVALID', 'request/header startsSeries must be absent or true')
  const shape = headerShapeViolation(obj.header)
  if (shape !== null) return shape
  const released = payloads.validate('request/header', data, { seq: 0 })
  if (released !== null) return fail('HEADER_INVALID', `request/header data: ${released}`)
  if (!jsonEqual(canonicalHeader(obj.header), obj.header)) return fail('HEADER_NOT_CANONICAL', 'request/header snapshot is not canonical')
  return null
}

// -- payloads (model/session.py `payload_problem`, model/trace.py `trace_data_problem`) --------------

function traceDataViolation(event) {
  const problem = payloads.validate(event.type, event.data, { seq: event.seq })
  if (problem === null) return null
  // A turn/end whose only problem is its reason has its own code (the model reports members in order).
  const reasonOnly =
    event.type === 'turn/end' &&
    isObject(event.data) &&
    Object.hasOwn(event.data, 'reason') &&
    payloads.validate(event.type, { ...event.data, reason: { kind: 'completed' } }, { seq: event.seq }) === null
  return fail(reasonOnly ? 'TURN_END_REASON_INVALID' : 'TRACE_DATA_INVALID', `${event.type} at seq ${event.seq} data: ${problem}`)
}

function payloadViolation(event) {
  if (!isKnownType(event.type)) return null
  if (event.type === 'request/header') return headerEventViolation(event.data)
  const specific = messageViolation(event) ?? (TRACE_TYPES.has(event.type) ? traceDataViolation(event) : null)
  if (specific !== null || TRACE_TYPES.has(event.type)) return specific
  if (event.type === END_SEED && !(isObject(event.data) && Object.keys(event.data).length === 0)) {
    return fail('END_SEED_INVALID', `session/end-seed at seq ${event.seq} data must be {}`)
  }
  const problem = payloads.validate(event.type, event.data, { seq: event.seq })
  return problem === null ? null : fail(TYPE_CODES[event.type] ?? 'PAYLOAD_INVALID', `${event.type} at seq ${event.seq} data: ${problem}`)
}

// -- the surface (model/surface.py) ----------------------------------------------------------------

function withoutResultContent(data) {
  const obj = asObject(data)
  const message = obj === null ? null : asObject(obj.message)
  const content = message === null ? null : asArray(message.content)
  const block = content && content.length ? asObject(content[0]) : null
  if (block === null) return data
  const { content: _dropped, ...blank } = block
  return { ...obj, message: { ...message, content: [blank, ...content.slice(1)] } }
}

function provenanceViolation(event, shadowed) {
  const sources = event.sources
  if (sources !== null) {
    if (sources.length === 0 && event.type !== 'assistant/message') return fail('SOURCES_EMPTY', `sourceEventSeqs at seq ${event.seq} must not be empty`)
    if (new Set(sources).size !== sources.length) return fail('SOURCES_DUPLICATE', `sourceEventSeqs at seq ${event.seq} must not contain duplicates`)
    if (sources.some((s) => s >= event.seq)) return fail('SOURCES_NOT_EARLIER', `sourceEventSeqs at seq ${event.seq} must reference earlier events`)
  }
  const cited = new Set(sources ?? [])
  if (shadowed.some((s) => !cited.has(s))) return fail('SOURCES_MISSING_SHADOWED', `replace at seq ${event.seq}: sourceEventSeqs must include every shadowed node`)
  return null
}

/** Where a surface event goes (`{start, end, replacement}` over `nodes`), `null` for a log-only event, or the refusal. */
function planSurface(nodes, log, event) {
  const eligible = SURFACE_TYPES.has(event.type)
  if (!eligible && event.surfaceOp !== null) return fail('SURFACE_OP_FORBIDDEN', `event ${event.type} at seq ${event.seq} cannot carry surfaceOp`)
  if (!eligible && event.sources !== null) return fail('SOURCES_FORBIDDEN', `event ${event.type} at seq ${event.seq} cannot carry sourceEventSeqs`)
  if (eligible && event.surfaceOp === null) return fail('SURFACE_OP_MISSING', `event ${event.type} at seq ${event.seq} requires surfaceOp`)
  const op = event.surfaceOp
  if (op === null) return null
  if (op.op === 'append') return provenanceViolation(event, []) ?? { start: nodes.length, end: nodes.length, replaced: false, shadowed: [] }
  const startIndex = nodes.indexOf(op.start)
  const endIndex = nodes.indexOf(op.end)
  if (startIndex < 0) return fail('REPLACE_START_NOT_ON_SURFACE', `replace start seq ${op.start} is not on the surface`)
  if (endIndex < 0) return fail('REPLACE_END_NOT_ON_SURFACE', `replace end seq ${op.end} is not on the surface`)
  if (startIndex > endIndex) return fail('REPLACE_RANGE_INVERTED', `replace start seq ${op.start} is after end seq ${op.end}`)
  const shadowed = nodes.slice(startIndex, endIndex + 1)
  const problem = provenanceViolation(event, shadowed)
  if (problem !== null) return problem
  if (event.type === 'tool/result') {
    if (shadowed.length !== 1) return fail('TOOL_REWRITE_SPAN', `tool/result replace at seq ${event.seq} must rewrite exactly one node`)
    const target = log[shadowed[0]]
    if (target.type !== 'tool/result') return fail('TOOL_REWRITE_TARGET', `tool/result replace at seq ${event.seq} must target a tool/result`)
    if (!jsonEqual(withoutResultContent(target.data), withoutResultContent(event.data))) {
      return fail('TOOL_REWRITE_CHANGES', `tool/result replace at seq ${event.seq} may change only content`)
    }
  }
  return { start: startIndex, end: endIndex + 1, replaced: true, shadowed }
}

// -- the trace (model/trace.py) --------------------------------------------------------------------

export const OPEN_TRACE = Object.freeze({ openTurn: null, lastTurn: 0, openStep: null, lastStep: 0, stepCalls: new Set() })

function callIdOfResult(data) {
  const callId = asObject(asObject(asObject(data)?.message)?.source)?.callId
  return typeof callId === 'string' ? callId : null
}

function traceTransition(state, event) {
  const data = asObject(event.data)
  const turn = data === null ? null : asInt(data.turn)
  const step = data === null ? null : asInt(data.step)
  const where = `${event.type} at seq ${event.seq}`
  switch (event.type) {
    case 'turn/start':
      if (state.openTurn !== null) return fail('TURN_ALREADY_OPEN', `${where} while turn ${state.openTurn} is still open`)
      if (turn !== state.lastTurn + 1) return fail('TURN_NUMBER', `${where} must start turn ${state.lastTurn + 1}`)
      return { ...OPEN_TRACE, openTurn: turn, lastTurn: turn }
    case 'turn/end':
      if (state.openTurn === null || turn !== state.openTurn) return fail('TURN_END_MISMATCH', `${where} does not match open turn ${state.openTurn}`)
      if (state.openStep !== null) return fail('STEP_STILL_OPEN', `${where} while step ${state.openStep} is still open`)
      return { ...OPEN_TRACE, lastTurn: state.lastTurn }
    case 'step/start':
      if (state.openTurn === null || turn !== state.openTurn) return fail('STEP_OUTSIDE_TURN', `${where} names turn ${turn}; open turn is ${state.openTurn}`)
      if (state.openStep !== null) return fail('STEP_ALREADY_OPEN', `${where} while step ${state.openStep} is still open`)
      if (step !== state.lastStep + 1) return fail('STEP_NUMBER', `${where} must start step ${state.lastStep + 1}`)
      return { ...state, openStep: step, lastStep: step, stepCalls: new Set() }
    case 'step/end':
      if (state.openStep === null || turn !== state.openTurn || step !== state.openStep) return fail('STEP_END_MISMATCH', `${where} does not match the open step`)
      return { ...state, openStep: null, stepCalls: new Set() }
    default:
  }
  if (event.type === 'tool/result' && event.surfaceOp?.op === 'replace') {
    return state.openTurn === null ? fail('EVENT_OUTSIDE_TURN', `${where} rewrites a tool result outside any open turn`) : state
  }
  if (STEP_SCOPED.has(event.type)) {
    if (state.openStep === null || turn !== state.openTurn || step !== state.openStep) {
      return fail('EVENT_OUTSIDE_STEP', `${where} names ${turn}/${step}; open turn/step is ${state.openTurn}/${state.openStep}`)
    }
    if (event.type === 'tool/call') return { ...state, stepCalls: new Set([...state.stepCalls, String(data.callId)]) }
    if (event.type === 'tool/result') {
      const callId = callIdOfResult(event.data)
      if (state.stepCalls.has(callId)) {
        const calls = new Set(state.stepCalls)
        calls.delete(callId)
        return { ...state, stepCalls: calls }
      }
      if (asObject(data.error)?.code === 'TOOL_NOT_STARTED') return state
      return fail('TOOL_RESULT_UNPAIRED', `${where} answers ${callId} with no prior tool/call in this step`)
    }
    return state
  }
  if (TURN_SCOPED.has(event.type) && state.openTurn === null) return fail('EVENT_OUTSIDE_TURN', `${where} must be inside an open turn`)
  return state
}

// -- one event --------------------------------------------------------------------------------------

/**
 * Check one raw candidate against a session `{events, nodes, generation, trace, relations}`; return
 * the session with it appended, or a `Refusal`.  The given session is not changed.
 */
export function admit(session, raw, relationTransition) {
  const event = decodeEvent(raw)
  if (event instanceof Refusal) return event
  if (event.seq !== session.events.length) return fail('SEQ_NOT_CONTIGUOUS', `event seq ${event.seq} is not contiguous; expected ${session.events.length}`)
  const legacy = LEGACY_TYPES[event.type]
  if (legacy !== undefined) return fail(legacy, `event seq ${event.seq} uses the legacy type ${event.type}`)
  if (!isKnownType(event.type) && !event.ignorable) return fail('UNKNOWN_EVENT_TYPE', `event seq ${event.seq} has unknown type ${event.type} and is not ignorable`)
  const payload = payloadViolation(event)
  if (payload !== null) return payload
  const plan = planSurface(session.nodes, session.events, event)
  if (plan instanceof Refusal) return plan
  const trace = traceTransition(session.trace, event)
  if (trace instanceof Refusal) return trace
  const relations = relationTransition(session.relations, event, session.events, session.nodes)
  if (relations instanceof Refusal) return relations
  let { nodes, generation, header } = session
  if (plan !== null) {
    nodes = [...nodes.slice(0, plan.start), event.seq, ...nodes.slice(plan.end)]
    generation += plan.replaced ? 1 : 0
  }
  if (event.type === 'request/header') header = canonicalHeader(event.data.header)
  return { events: [...session.events, event], nodes, generation, trace, relations, header }
}
