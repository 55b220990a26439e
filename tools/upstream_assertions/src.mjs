/**
 * What the spec files import as `../src/index.ts` and `../src/validation.ts`: the published
 * `@deepseek-ai/dsh-session-format-v0-to-v1` build, re-exported, with the entry points the tests
 * call instrumented (recorder.mjs `boundary`).  Every name not overridden here is the package's own
 * export, untouched.
 *
 * Operations recorded (the `op` of a captured case):
 *   migrate_header         sessionFormatV0ToV1.migrateHeader(header)
 *   stage_transform_event  stage.transformEvent(event, ctx) on a stage from createStage(input); the
 *                          input carries the stage's creation input and every earlier call on it
 *   stage_transform_run    stage.transformRun(run, ctx) (the run is recorded expanded)
 *   decode_header          codec.decodeHeader(header) of the released v0 / v1 codec
 *   decode_rows            codec.createDecoder(header, recovery) then decodeRow(row, ctx)... and
 *                          finish(ctx): one record per decodeRow / finish with the rows so far
 *                          (createDecoder itself only when it throws)
 *   assert_event_payload   assertReleasedEventPayload(event, version)
 *   assert_payload_semantics  assertReleasedPayloadSemantics(event, version)
 *   assert_surface_metadata   assertReleasedSurfaceMetadata(record, seq, type, assistantSources)
 *   assert_v1_header       assertReleasedV1Header(header)
 *   assert_artifact_relationships  assertReleasedArtifactRelationships(artifact, options)
 *   restore_released_v1_artifact   restoreReleasedV1Artifact(artifact, knownEventTypes)
 */

import * as upstream from '@deepseek-ai/dsh-session-format-v0-to-v1'
import { boundary } from './recorder.mjs'

export * from '@deepseek-ai/dsh-session-format-v0-to-v1'

/** A context that forwards to `context` and remembers what was emitted (runs expanded). */
function capturing(context) {
  const emitted = []
  return {
    emitted,
    context: {
      emitEvent(event) {
        emitted.push(event)
        context.emitEvent(event)
      },
      emitRun(run) {
        emitted.push(...run.expand())
        context.emitRun(run)
      },
    },
  }
}

function expandedRun(run) {
  return { runType: run.runType, firstSeq: run.firstSeq, eventCount: run.eventCount, events: [...run.expand()] }
}

function stageInput(input) {
  return {
    sourceHeader: input.sourceHeader,
    targetHeader: input.targetHeader,
    sourceInheritedEventCount: input.sourceInheritedEventCount,
    sourceKind: input.sourceKind,
  }
}

function instrumentStage(stage, input) {
  const history = []
  return {
    get headerInheritedEventCount() {
      return stage.headerInheritedEventCount
    },
    transformEvent(event, context) {
      const before = [...history]
      const { emitted, context: wrapped } = capturing(context)
      try {
        return boundary(
          'stage_transform_event',
          () => ({ stage: stageInput(input), history: before, event }),
          () => stage.transformEvent(event, wrapped),
          () => emitted,
        )
      } catch (error) {
        history.push({ event, refused: true })
        throw error
      } finally {
        if (history.length === before.length) history.push({ event })
      }
    },
    transformRun(run, context) {
      const before = [...history]
      const expanded = expandedRun(run)
      const { emitted, context: wrapped } = capturing(context)
      try {
        return boundary(
          'stage_transform_run',
          () => ({ stage: stageInput(input), history: before, run: expanded }),
          () => stage.transformRun(run, wrapped),
          () => emitted,
        )
      } finally {
        for (const event of expanded.events) history.push({ event })
      }
    },
  }
}

export const sessionFormatV0ToV1 = Object.freeze({
  ...upstream.sessionFormatV0ToV1,
  migrateHeader: (header) => boundary(
    'migrate_header',
    () => ({ header }),
    () => upstream.sessionFormatV0ToV1.migrateHeader(header),
  ),
  createStage: (input) => instrumentStage(upstream.sessionFormatV0ToV1.createStage(input), input),
})

function instrumentDecoder(decoder, version, header, recovery) {
  const rows = []
  return {
    get header() {
      return decoder.header
    },
    get headerInheritedEventCount() {
      return decoder.headerInheritedEventCount
    },
    decodeRow(row, context) {
      rows.push(row)
      const seen = [...rows]
      const { emitted, context: wrapped } = capturing(context)
      return boundary(
        'decode_rows',
        () => ({ codecVersion: version, header, recovery, rows: seen, finish: false }),
        () => decoder.decodeRow(row, wrapped),
        () => emitted,
      )
    },
    finish(context) {
      const seen = [...rows]
      return boundary(
        'decode_rows',
        () => ({ codecVersion: version, header, recovery, rows: seen, finish: true }),
        () => decoder.finish(context),
        (inheritedEventCount) => ({ inheritedEventCount }),
      )
    },
  }
}

function instrumentCodec(codec) {
  return Object.freeze({
    ...codec,
    decodeHeader: (header) => boundary(
      'decode_header',
      () => ({ codecVersion: codec.version, header }),
      () => codec.decodeHeader(header),
    ),
    createDecoder: (header, recovery) => {
      const decoder = boundary(
        'decode_rows',
        () => ({ codecVersion: codec.version, header, recovery, rows: [], finish: false }),
        () => codec.createDecoder(header, recovery),
        () => [],
        true,
      )
      return instrumentDecoder(decoder, codec.version, header, recovery)
    },
  })
}

export const releasedV0SessionFormatCodec = instrumentCodec(upstream.releasedV0SessionFormatCodec)
export const releasedV1SessionFormatCodec = instrumentCodec(upstream.releasedV1SessionFormatCodec)

export function assertReleasedEventPayload(event, version) {
  return boundary('assert_event_payload', () => ({ event, version }), () => upstream.assertReleasedEventPayload(event, version), () => null)
}

export function assertReleasedPayloadSemantics(event, version) {
  return boundary('assert_payload_semantics', () => ({ event, version }), () => upstream.assertReleasedPayloadSemantics(event, version), () => null)
}

export function assertReleasedSurfaceMetadata(record, seq, type, assistantSources) {
  return boundary(
    'assert_surface_metadata',
    () => ({ record, seq, type, assistantSources }),
    () => upstream.assertReleasedSurfaceMetadata(record, seq, type, assistantSources),
    () => null,
  )
}

export function assertReleasedV1Header(header) {
  return boundary('assert_v1_header', () => ({ header }), () => upstream.assertReleasedV1Header(header), () => null)
}

export function assertReleasedArtifactRelationships(artifact, options) {
  return boundary(
    'assert_artifact_relationships',
    () => (options === undefined ? { artifact } : { artifact, options }),
    () => upstream.assertReleasedArtifactRelationships(artifact, options),
    () => null,
  )
}

export function restoreReleasedV1Artifact(artifact, knownEventTypes) {
  return boundary(
    'restore_released_v1_artifact',
    () => ({ artifact, knownEventTypes: [...knownEventTypes].sort() }),
    () => upstream.restoreReleasedV1Artifact(artifact, knownEventTypes),
  )
}
