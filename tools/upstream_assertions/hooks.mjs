/**
 * Module hooks for capture.mjs (registered with `module.register`):
 *
 *   resolve  `vitest` -> vitest.mjs; a spec file's `../src/index.ts` and `../src/validation.ts` ->
 *            src.mjs; `../src/testing/restore.ts` and `../src/testing/validation.ts` -> facade.mjs;
 *            `@deepseek-ai/dsh-session` -> the build installed in ports/dsh-session; every other
 *            `@deepseek-ai/...` imported from outside node_modules -> the builds pinned in
 *            ports/dsh-format.
 *   load     the published `dsh-session-format-v0-to-v1/lib/index.js` gains one trailing export
 *            line exposing two internal validators the test facades use (facade.mjs); its code is
 *            otherwise served unchanged.
 */

import { pathToFileURL } from 'node:url'
import path from 'node:path'

const here = new URL('.', import.meta.url)
let specDir = null
let formatParent = null
let sessionParent = null

export function initialize(data) {
  specDir = pathToFileURL(path.resolve(data.specDir) + path.sep).href
  formatParent = pathToFileURL(path.join(data.formatPort, 'package.json')).href
  sessionParent = pathToFileURL(path.join(data.sessionPort, 'package.json')).href
}

const SOURCES = {
  '../src/index.ts': 'src.mjs',
  '../src/validation.ts': 'src.mjs',
  '../src/testing/restore.ts': 'facade.mjs',
  '../src/testing/validation.ts': 'facade.mjs',
}

export async function resolve(specifier, context, nextResolve) {
  const parent = context.parentURL ?? ''
  if (specifier === 'vitest') return { url: new URL('vitest.mjs', here).href, shortCircuit: true }
  if (parent.startsWith(specDir) && specifier.startsWith('../src/')) {
    const target = SOURCES[specifier]
    if (target === undefined) throw new Error(`no stand-in for ${specifier} (imported by ${parent})`)
    return { url: new URL(target, here).href, shortCircuit: true }
  }
  if (specifier.startsWith('@deepseek-ai/') && !parent.includes('/node_modules/')) {
    const from = specifier === '@deepseek-ai/dsh-session' ? sessionParent : formatParent
    return nextResolve(specifier, { ...context, parentURL: from })
  }
  return nextResolve(specifier, context)
}

const EDGE = '/@deepseek-ai/dsh-session-format-v0-to-v1/lib/index.js'
const EXPOSED = '\nexport { assertReleasedSessionFormatHeader as __assertReleasedSessionFormatHeader, '
  + 'assertReleasedArtifactCoordinates as __assertReleasedArtifactCoordinates };\n'

export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context)
  if (url.endsWith(EDGE)) {
    return { ...result, source: String(result.source) + EXPOSED, shortCircuit: true }
  }
  return result
}
