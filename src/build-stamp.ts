import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from './package-root.js'

/**
 * What identifies the code that runs, for the reports it judges (`judgedBy.build`): written once
 * by `npm run build` (scripts/bundle.ts) beside the bundle, read once per process here.
 * `git:<commit>` when the build ran in a clean checkout of this package's own repository,
 * `sha256:<hex>` of the bundle's files otherwise (no git, or changes not committed), `unknown`
 * when nothing was built.
 */

export const BUILD_STAMP_FILE = join(ROOT, 'dist', 'bundle', 'build.json')

export const BUILD_STAMP = /^(git:[0-9a-f]{40}|sha256:[0-9a-f]{64})$/

export const BUILD: string = (() => {
  try {
    const { build } = JSON.parse(readFileSync(BUILD_STAMP_FILE, 'utf8')) as { build?: unknown }
    if (typeof build === 'string' && BUILD_STAMP.test(build)) return build
  } catch {
    // not built: run from the sources
  }
  return 'unknown'
})()
