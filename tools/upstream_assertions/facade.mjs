/**
 * What the spec files import as `../src/testing/restore.ts` and `../src/testing/validation.ts`:
 * upstream's test facades, rebuilt on the published build (they are not part of it).
 *
 * Source of the wiring: public repository zsagi1368/deepseek-harness-zDSH,
 * packages/session/session-format-v0-to-v1/src/testing/{restore,validation}.ts (the same wiring as
 * ports/dsh-format/driver.mjs).  The two helpers those files import and the package does not export,
 * `assertReleasedSessionFormatHeader` and `assertReleasedArtifactCoordinates`, are the build's own
 * functions: hooks.mjs adds an export line for them to the published lib/index.js (nothing else in
 * that file changes), so every check below runs the published code.
 *
 * Operations recorded:
 *   restore_v0_to_v1     restoreV0ToV1(header, rows, recovery = 'strict'): catalog restore with
 *                        validation 'transformed' (v0 rows through the codec, the v0-to-v1 stage
 *                        and assertReleasedV1MigrationSource)
 *   restore_v1           restoreV1(header, rows, recovery = 'strict'): validation 'current'
 *                        (assertReleasedV1Artifact)
 *   assert_v0_source_artifact, assert_normalized_v0_artifact, assert_v1_migration_source,
 *   assert_v1_artifact, assert_v1_physical_artifact: the five facade validators on an artifact
 */

import { createSessionFormatCatalog } from '@deepseek-ai/dsh-session-format'
import * as upstream from '@deepseek-ai/dsh-session-format-v0-to-v1'
import { boundary } from './recorder.mjs'

const {
  RELEASED_V0_EVENT_DISPOSITIONS,
  assertReleasedArtifactRelationships,
  assertReleasedEventPayload,
  assertReleasedV1Header,
  releasedV0SessionFormatCodec,
  releasedV1SessionFormatCodec,
  sessionFormatV0ToV1,
} = upstream
const assertReleasedSessionFormatHeader = upstream.__assertReleasedSessionFormatHeader
const assertReleasedArtifactCoordinates = upstream.__assertReleasedArtifactCoordinates
if (typeof assertReleasedSessionFormatHeader !== 'function' || typeof assertReleasedArtifactCoordinates !== 'function') {
  throw new Error('the published build was not loaded through hooks.mjs (its internal validators are not exposed)')
}

const RELEASED_V0_EVENT_TYPE_SET = new Set(Object.keys(RELEASED_V0_EVENT_DISPOSITIONS))

// ---- testing/validation.ts ---------------------------------------------------------------------------

function v0SourceArtifact(artifact) {
  assertReleasedSessionFormatHeader(artifact.header, 0)
  assertReleasedArtifactCoordinates(artifact, true, RELEASED_V0_EVENT_TYPE_SET, false, true)
}

function normalizedV0Artifact(artifact) {
  assertReleasedSessionFormatHeader(artifact.header, 0)
  assertReleasedArtifactCoordinates(artifact, false, RELEASED_V0_EVENT_TYPE_SET, false, true)
  for (const event of artifact.events) assertReleasedEventPayload(event, 0)
  assertReleasedArtifactRelationships(artifact, { legacyInterruptedTurnRestart: true })
}

function v1MigrationSource(artifact) {
  assertReleasedSessionFormatHeader(artifact.header, 1)
  assertReleasedArtifactCoordinates(artifact, false, RELEASED_V0_EVENT_TYPE_SET, false, true)
  for (const event of artifact.events) {
    if (RELEASED_V0_EVENT_DISPOSITIONS[event.type] !== undefined) assertReleasedEventPayload(event, 1)
  }
  assertReleasedArtifactRelationships(artifact, { legacyInterruptedTurnRestart: true })
}

function v1Artifact(artifact) {
  assertReleasedSessionFormatHeader(artifact.header, 1)
  assertReleasedArtifactCoordinates(artifact, false, RELEASED_V0_EVENT_TYPE_SET, false, true)
  for (const event of artifact.events) {
    if (RELEASED_V0_EVENT_DISPOSITIONS[event.type] !== undefined) assertReleasedEventPayload(event, 1)
  }
  assertReleasedArtifactRelationships(artifact)
}

function v1PhysicalArtifact(artifact) {
  assertReleasedSessionFormatHeader(artifact.header, 1)
  assertReleasedArtifactCoordinates(artifact, false, undefined, true)
}

function validator(op, check) {
  return (artifact) => boundary(op, () => ({ artifact }), () => check(artifact), () => null)
}

export const assertReleasedV0SourceArtifact = validator('assert_v0_source_artifact', v0SourceArtifact)
export const assertNormalizedReleasedV0Artifact = validator('assert_normalized_v0_artifact', normalizedV0Artifact)
export const assertReleasedV1MigrationSource = validator('assert_v1_migration_source', v1MigrationSource)
export const assertReleasedV1Artifact = validator('assert_v1_artifact', v1Artifact)
export const assertReleasedV1PhysicalArtifact = validator('assert_v1_physical_artifact', v1PhysicalArtifact)

// ---- testing/restore.ts ------------------------------------------------------------------------------

const unusedEncoder = {
  encodeHeader: (header) => header,
  encodeEvent: (event) => event,
}

const catalog = createSessionFormatCatalog({
  currentVersion: 1,
  codecs: [releasedV0SessionFormatCodec, releasedV1SessionFormatCodec],
  currentEncoder: unusedEncoder,
  migrations: [sessionFormatV0ToV1],
  restoreCurrent(artifact) {
    v1Artifact(artifact)
    return artifact
  },
  restoreTransformedCurrent(artifact) {
    v1MigrationSource(artifact)
    return artifact
  },
  restoreCurrentHeader(header) {
    assertReleasedV1Header(header)
    return header
  },
})

function restore(header, rows, recovery, validation) {
  const current = catalog.createRestore(header, { recovery, validation })
  for (const row of rows) current.decodeRow(row)
  return current.finish()
}

export function restoreV0ToV1(header, rows, recovery = 'strict') {
  return boundary(
    'restore_v0_to_v1',
    () => ({ header, rows: [...rows], recovery }),
    () => restore(header, rows, recovery, 'transformed'),
  )
}

export function restoreV1(header, rows, recovery = 'strict') {
  return boundary(
    'restore_v1',
    () => ({ header, rows: [...rows], recovery }),
    () => restore(header, rows, recovery, 'current'),
  )
}
