/**
 * The relationships between events (INV-REL), after model/relationships.py: tool lifecycles,
 * compactions, retries, programmatic tool calls, commands, titles and delivery markers.
 *
 * Members are compared as JavaScript's `===` compares them: each is turned into a token string
 * (numbers by value, strings and booleans by type and value, `null`, absent), and an object or
 * array member into a token equal to nothing else.  A transition returns a new state or a
 * `Refusal`; it never changes the state it is given.
 */

import { isObject, isSafeInteger, jsonEqual, Refusal } from '../src/index.mjs'

const NOT_STARTED_TEXT = 'The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed.'
const TITLE_PLUGIN = 'dsh-session-title-llm'
const TITLE_FRAME_PREFIX = 'Generate the session title from this JSON array of human messages:\n'
const COMMAND_TYPES = new Set(['command/run', 'command/done'])

const ABSENT = 'absent'
const NULL = 'null'
let unique = 0

function token(value) {
  if (typeof value === 'boolean') return `b:${value}`
  if (typeof value === 'number') return `n:${value}`
  if (typeof value === 'string') return `s:${value}`
  if (value === null) return NULL
  unique += 1
  return `o:${unique}`
}
const member = (obj, key) => (isObject(obj) && Object.hasOwn(obj, key) ? token(obj[key]) : ABSENT)
const string = (text) => `s:${text}`
const number = (value) => `n:${value}`
const objectAt = (obj, key) => (isObject(obj) && isObject(obj[key]) ? obj[key] : null)
const arrayAt = (obj, key) => (isObject(obj) && Array.isArray(obj[key]) ? obj[key] : [])
const fail = (code, message) => new Refusal(code, message)

/** The state before the first event of a log (delivery markers are checked only with an identity). */
export function openRelations(identity = null) {
  return {
    identity,
    openTurn: NULL,
    openStep: NULL,
    endedSteps: 0,
    tools: [],
    provider: ABSENT,
    compaction: null,
    chains: new Map(),
    retryIds: new Set(),
    scheduled: new Map(),
    retriesStarted: new Set(),
    ptcRoots: new Map(),
    ptcStarts: new Map(),
    commands: new Set(),
  }
}

const withEntry = (map, key, value) => new Map(map).set(key, value)
const withItem = (set, item) => new Set(set).add(item)

function unresolved(state, event) {
  if (state.tools.length === 0) return null
  return fail('TOOL_CALL_UNRESOLVED', `${event.type} at seq ${event.seq} leaves an advertised tool call unresolved`)
}

function isNotStartedRepair(event, data) {
  const error = objectAt(data, 'error')
  const message = objectAt(data, 'message')
  const source = objectAt(message, 'source')
  const callId = source?.callId
  const content = arrayAt(message, 'content')
  const block = isObject(content[0]) ? content[0] : null
  const inner = arrayAt(block, 'content')
  const text = inner.length === 1 && isObject(inner[0]) ? inner[0] : null
  return (
    member(error, 'name') === string('ToolNotStartedError') &&
    member(error, 'code') === string('TOOL_NOT_STARTED') &&
    event.sources === null &&
    typeof callId === 'string' &&
    member(message, 'id') === string(`interrupted-tool-result-${callId}-${event.seq}`) &&
    member(block, 'isError') === 'b:true' &&
    member(text, 'type') === string('text') &&
    member(text, 'text') === string(NOT_STARTED_TEXT)
  )
}

function crossing(compaction) {
  return fail('COMPACTION_CROSSES_TURN', `the turn boundary at seq ${compaction.crossedAt} crosses the compaction started at seq ${compaction.startSeq}`)
}

function ownerProblem(state, event, named) {
  const c = state.compaction
  if (c === null || member(named, 'compactionId') !== c.compactionId || member(named, 'sourceCommandId') !== c.sourceCommandId) {
    return fail('COMPACTION_NOT_OWNED', `${event.type} at seq ${event.seq} names a compaction that is not the open one`)
  }
  return null
}

function turnProblem(state, event, owner) {
  return owner === state.openTurn ? null : fail('COMPACTION_TURN_MISMATCH', `${event.type} at seq ${event.seq} is not in its compaction's turn`)
}

function indexOn(surface, value) {
  return isSafeInteger(value) ? surface.indexOf(value) : -1
}

function spanProblem(event, data, surface) {
  const range = objectAt(data, 'shadowedRange')
  const start = indexOn(surface, range?.start)
  const end = indexOn(surface, range?.end)
  const expected = start < 0 || end < start ? [] : surface.slice(start, end + 1)
  const named = arrayAt(data, 'shadowedSeqs')
  if (expected.length !== named.length || expected.some((s, i) => number(s) !== token(named[i]))) {
    return fail('COMPACTION_SPAN_NOT_ON_SURFACE', `${event.type} at seq ${event.seq} shadowedSeqs do not name an exact span of the current surface`)
  }
  return null
}

function earlier(log, value) {
  return isSafeInteger(value) && value >= 0 && value < log.length ? log[value] : null
}

function humanText(message) {
  return arrayAt(message.data, 'content')
    .filter((b) => isObject(b) && b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text)
    .join('\n')
}

function citedHumans(event, data, log) {
  const cited = []
  for (const raw of arrayAt(data, 'messageSeqs')) {
    const source = earlier(log, raw)
    if (source === null || source.type !== 'user/message' || member(objectAt(source.data, 'source'), 'kind') !== string('user')) {
      return fail('TITLE_SOURCE_NOT_HUMAN', `${event.type} at seq ${event.seq} cites a seq that is not a human user/message`)
    }
    cited.push([source.seq, humanText(source)])
  }
  return cited
}

const HANDLERS = {
  'turn/start': (s, e, d) => ({ ...s, openTurn: member(d, 'turn'), openStep: NULL, endedSteps: 0, tools: [] }),
  'turn/end': (s, e) => unresolved(s, e) ?? { ...s, openTurn: NULL },
  'step/start': (s, e, d) => ({ ...s, openStep: member(d, 'step') }),
  'step/end': (s, e) => unresolved(s, e) ?? { ...s, openStep: NULL, endedSteps: s.endedSteps + 1, tools: [] },
  'assistant/message': (s, e, d) => {
    const tools = [...s.tools]
    for (const block of arrayAt(objectAt(d, 'message'), 'content')) {
      if (member(block, 'type') !== string('tool-call')) continue
      const call = member(block, 'id')
      if (tools.some((lc) => lc.call === call)) {
        return fail('TOOL_CALL_ID_REPEATED', `assistant/message at seq ${e.seq} advertises a tool call already pending in this step`)
      }
      tools.push({ call, name: member(block, 'name'), arguments: member(block, 'arguments'), started: false })
    }
    return { ...s, tools }
  },
  'tool/call': (s, e, d) => {
    const call = member(d, 'callId')
    const lc = s.tools.find((x) => x.call === call)
    if (lc === undefined || lc.started || lc.name !== member(d, 'name') || lc.arguments !== member(d, 'arguments')) {
      return fail('TOOL_CALL_NOT_ADVERTISED', `tool/call at seq ${e.seq} does not match one advertised, not yet started tool call`)
    }
    return { ...s, tools: s.tools.map((x) => (x === lc ? { ...x, started: true } : x)) }
  },
  'tool/result': (s, e, d) => {
    if (e.surfaceOp?.op !== 'append') return s
    const call = member(objectAt(objectAt(d, 'message'), 'source'), 'callId')
    const lc = s.tools.find((x) => x.call === call)
    if (lc === undefined) return fail('TOOL_RESULT_UNADVERTISED', `tool/result at seq ${e.seq} answers a call no assistant message of this step left pending`)
    if (!lc.started && !isNotStartedRepair(e, d)) {
      return fail('TOOL_RESULT_NOT_EXACT_REPAIR', `tool/result at seq ${e.seq} answers a call that never started, but is not the exact repair result`)
    }
    return { ...s, tools: s.tools.filter((x) => x !== lc) }
  },
  'request/header': (s, e, d) => ({ ...s, provider: member(objectAt(objectAt(d, 'header'), 'config'), 'provider') }),
  'compaction/start': (s, e, d) => {
    const c = s.compaction
    if (c !== null && c.crossedAt !== null) return crossing(c)
    if (c !== null) return fail('COMPACTION_OVERLAP', `compaction/start at seq ${e.seq} overlaps the compaction started at seq ${c.startSeq}`)
    const owner = member(d, 'turn')
    const problem = turnProblem(s, e, owner)
    if (problem !== null) return problem
    const compaction = { compactionId: member(d, 'compactionId'), sourceCommandId: member(d, 'sourceCommandId'), turn: owner, startSeq: e.seq, summarized: false, crossedAt: null }
    return { ...s, compaction }
  },
  'compaction/summary': (s, e, d, log, surface) => {
    const owned = ownerProblem(s, e, d)
    if (owned !== null) return owned
    const c = s.compaction
    let problem = turnProblem(s, e, c.turn)
    if (problem === null && c.summarized) problem = fail('COMPACTION_SUMMARY_REPEATED', `compaction/summary at seq ${e.seq} repeats the summary`)
    problem = problem ?? spanProblem(e, d, surface)
    return problem ?? { ...s, compaction: { ...c, summarized: true } }
  },
  'compaction/end': (s, e, d) => {
    const c = s.compaction
    if (c !== null && c.crossedAt !== null) return crossing(c)
    const owned = ownerProblem(s, e, d)
    if (owned !== null) return owned
    if (member(d, 'turn') !== c.turn) return fail('COMPACTION_TURN_MISMATCH', `compaction/end at seq ${e.seq} names another turn than its compaction's`)
    let problem = turnProblem(s, e, c.turn)
    if (problem === null && !Object.hasOwn(d, 'error') && !c.summarized) {
      problem = fail('COMPACTION_SUMMARY_MISSING', `compaction/end at seq ${e.seq} reports success, but its compaction has no summary`)
    }
    return problem ?? { ...s, compaction: null }
  },
  'compaction/prune': (s, e, d, log, surface) => spanProblem(e, d, surface) ?? s,
  'user/message': (s, e, d) => {
    const source = objectAt(d, 'source')
    if (e.surfaceOp?.op === 'append' || member(source, 'kind') !== string('plugin') || member(source, 'plugin') !== string('compact')) return s
    return ownerProblem(s, e, source) ?? s
  },
  'session/end-seed': (s) => ({ ...s, compaction: null }),
  'llm/retry': (s, e, d) => {
    const step = s.openStep !== NULL ? s.openStep : number(s.endedSteps)
    if (s.openTurn === NULL || member(d, 'turn') !== s.openTurn || member(d, 'step') !== step) {
      return fail('RETRY_OUTSIDE_STEP', `llm/retry at seq ${e.seq} is not at the current turn and step`)
    }
    const provider = member(d, 'provider')
    if (provider !== s.provider) return fail('RETRY_PROVIDER_MISMATCH', `llm/retry at seq ${e.seq} names another provider than the latest request/header`)
    const chain = JSON.stringify([member(d, 'turn'), member(d, 'step'), provider, member(d, 'policyKey')])
    const prior = s.chains.get(chain)
    const retryId = member(d, 'retryId')
    const expected = prior === undefined ? 1 : typeof prior.retry === 'number' ? prior.retry + 1 : null
    if (expected === null || member(d, 'retry') !== number(expected)) return fail('RETRY_NUMBER_INVALID', `llm/retry at seq ${e.seq} must be attempt ${expected ?? '?'} of its policy chain`)
    if (prior !== undefined && prior.retryId !== retryId) return fail('RETRY_ID_INVALID', `llm/retry at seq ${e.seq} changes the retryId of its policy chain`)
    if (prior === undefined && s.retryIds.has(retryId)) return fail('RETRY_ID_INVALID', `llm/retry at seq ${e.seq} reuses the retryId of another policy chain`)
    const attempt = JSON.stringify([retryId, member(d, 'retry')])
    const where = JSON.stringify([member(d, 'turn'), member(d, 'step')])
    return {
      ...s,
      chains: withEntry(s.chains, chain, { retryId, retry: d.retry }),
      retryIds: withItem(s.retryIds, retryId),
      scheduled: s.scheduled.has(attempt) ? s.scheduled : withEntry(s.scheduled, attempt, where),
    }
  },
  'llm/retry-started': (s, e, d) => {
    const attempt = JSON.stringify([member(d, 'retryId'), member(d, 'retry')])
    const where = s.scheduled.get(attempt)
    if (where === undefined) return fail('RETRY_START_UNPAIRED', `llm/retry-started at seq ${e.seq} starts an attempt no llm/retry scheduled`)
    if (where !== JSON.stringify([member(d, 'turn'), member(d, 'step')])) return fail('RETRY_START_MISMATCH', `llm/retry-started at seq ${e.seq} names another turn or step than its llm/retry`)
    if (s.retriesStarted.has(attempt)) return fail('RETRY_START_REPEATED', `llm/retry-started at seq ${e.seq} starts an attempt a second time`)
    return { ...s, retriesStarted: withItem(s.retriesStarted, attempt) }
  },
  'command/run': (s, e, d) => {
    const command = member(d, 'commandId')
    if (s.commands.has(command)) return fail('COMMAND_RUN_REPEATED', `command/run at seq ${e.seq} repeats its commandId`)
    return { ...s, commands: withItem(s.commands, command) }
  },
  'command/done': (s, e, d, log) => {
    if (!s.commands.has(member(d, 'commandId'))) return fail('COMMAND_DONE_UNPAIRED', `command/done at seq ${e.seq} has no prior command/run`)
    if (Object.hasOwn(d, 'sourceEventSeq')) {
      const source = earlier(log, d.sourceEventSeq)
      if (member(d, 'kind') !== string('success') || (source !== null && COMMAND_TYPES.has(source.type))) {
        return fail('COMMAND_DONE_SOURCE_INVALID', `command/done at seq ${e.seq} cites sourceEventSeq, which only a success may, and never a command event`)
      }
    }
    return s
  },
  'session/title': (s, e, d, log) => {
    const userTitle = member(objectAt(d, 'source'), 'kind') === string('user')
    if ((arrayAt(d, 'messageSeqs').length === 0) !== userTitle) return fail('TITLE_SEQS_CARDINALITY', `session/title at seq ${e.seq} messageSeqs must be empty exactly for a user title`)
    const cited = citedHumans(e, d, log)
    return cited instanceof Refusal ? cited : s
  },
  'session/title-llm-request': (s, e, d, log) => {
    const cited = citedHumans(e, d, log)
    if (cited instanceof Refusal) return cited
    const messages = arrayAt(d, 'messages')
    const message = isObject(messages[0]) ? messages[0] : null
    const content = arrayAt(message, 'content')
    const framed = isObject(content[0]) ? content[0] : null
    const frame = `${TITLE_FRAME_PREFIX}[${cited.map(([seq, text]) => `{"seq":${seq},"text":${JSON.stringify(text)}}`).join(',')}]`
    const source = objectAt(message, 'source')
    if (
      messages.length !== 1 ||
      member(message, 'role') !== string('user') ||
      content.length !== 1 ||
      member(source, 'kind') !== string('plugin') ||
      member(source, 'plugin') !== string(TITLE_PLUGIN) ||
      member(framed, 'type') !== string('text') ||
      member(framed, 'text') !== string(frame)
    ) {
      return fail('TITLE_REQUEST_FRAMING', `session/title-llm-request at seq ${e.seq} messages are not the one framed message of its messageSeqs`)
    }
    return s
  },
  'session-log-deepseek/delivery-accepted': (s, e, d) => {
    const identity = s.identity
    if (identity === null) return s
    let generation = member(d, 'sessionFormatVersion')
    if (generation === ABSENT || generation === NULL) generation = number(0)
    if (generation !== number(identity.formatVersion)) return s
    const inherited = identity.hasParent && e.seq < identity.inheritedEventCount
    if (!inherited && member(d, 'sessionId') !== string(identity.sessionId)) {
      return fail('DELIVERY_MARKER_WRONG_SESSION', `delivery marker at seq ${e.seq} names another session`)
    }
    return s
  },
}

function ptc(s, e, d) {
  const where = `${e.type} at seq ${e.seq}`
  if (s.openTurn === NULL) return fail('PTC_OUTSIDE_TURN', `${where} is outside an open turn`)
  const root = member(d, 'rootCallId')
  const parent = member(d, 'parentCallId')
  const child = member(d, 'subCallId')
  const known = s.ptcRoots.get(child)
  if (known !== undefined && known !== root) return fail('PTC_ANCESTRY_INVALID', `${where} moves its subCallId to another rootCallId`)
  if (parent !== root && s.ptcRoots.get(parent) !== root) return fail('PTC_ANCESTRY_INVALID', `${where} parentCallId is neither the root nor a call under it`)
  const args = [Object.hasOwn(d, 'arguments'), d.arguments]
  let starts = s.ptcStarts
  if (e.type === 'tool/code-dispatch-start') {
    if (starts.has(child)) return fail('PTC_START_REPEATED', `${where} starts its subCallId a second time`)
    starts = withEntry(starts, child, { root, parent, name: member(d, 'name'), args, settled: false })
  } else {
    const start = starts.get(child)
    if (start === undefined || start.settled) return fail('PTC_SETTLE_UNPAIRED', `${where} settles a subCallId which has no unsettled start`)
    if (start.root !== root || start.parent !== parent || start.name !== member(d, 'name') || start.args[0] !== args[0] || !jsonEqual(start.args[1] ?? null, args[1] ?? null)) {
      return fail('PTC_SETTLE_MISMATCH', `${where} settles a different call than its start`)
    }
    starts = withEntry(starts, child, { ...start, settled: true })
  }
  return { ...s, ptcRoots: withEntry(s.ptcRoots, child, root), ptcStarts: starts }
}
HANDLERS['tool/code-dispatch-start'] = ptc
HANDLERS['tool/code-dispatch'] = ptc

/**
 * The relationship state after `event` (given the log and the surface before it), or the refusal.
 * `known(type)` says whether a type is in the v1 vocabulary: unknown types relate to nothing.
 */
export function relationTransition(state, event, log, surface, known) {
  if (!known(event.type)) return state
  const data = isObject(event.data) ? event.data : {}
  if ((event.type === 'turn/start' || event.type === 'turn/end') && state.compaction !== null && state.compaction.crossedAt === null) {
    state = { ...state, compaction: { ...state.compaction, crossedAt: event.seq } }
  }
  const handler = HANDLERS[event.type]
  return handler === undefined ? state : handler(state, event, data, log, surface)
}

/** INV-REL-11: the verdict on a complete log: a turn boundary crossed a compaction no end-seed retired. */
export function relationFinish(state) {
  const c = state.compaction
  return c !== null && c.crossedAt !== null ? crossing(c) : null
}
