import { build } from 'esbuild'
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { BUILD_STAMP_FILE } from '../src/build-stamp.js'
import { ROOT } from '../src/config.js'

/**
 * Bundles the compiled CLI (dist/src/cli.js) into dist/bundle/, the file the bin and the image run.
 * Start-up was mostly module loading: Fastify, TypeBox's many ESM files, Ajv and ~150 modules of
 * our own, each resolved and read on its own. One file per code path loads several times faster.
 * dist/src stays as tsc wrote it: the library entry (`startSandbox`) and the tests import it.
 * Nothing here moves a file the code finds at run time: config.ts walks up from its own file (now
 * a chunk under dist/bundle/) to package.json, which is still the package root.
 *
 * `npm run build` runs this after tsc. `--analyze` also prints the largest inputs of each output.
 */

/**
 * Packages left in node_modules and loaded from there at run time. Each must be a dependency in
 * package.json (checked below): a nested copy a bundle cannot find would fail only on install.
 */
export const EXTERNAL: Readonly<Record<string, string>> = {
  'better-sqlite3': 'a native addon, found by `bindings` beside its own package',
  pino: 'starts its transports in worker threads from files of its own package',
  'pino-pretty': 'loaded by name, and only for LOG_PRETTY=true',
  '@fastify/swagger': 'loaded only for the docs; kept beside Swagger UI, which it configures',
  '@fastify/swagger-ui': 'serves Swagger UI\'s static files from its package folder',
  '@faker-js/faker': 'large, and loaded only by generate, the simulator and the anonymiser'
}

export const BUNDLE_DIR = join(ROOT, 'dist', 'bundle')

/**
 * A bundled CommonJS module that calls `require` (Fastify's dependencies, for Node's built-ins and
 * the externals) needs one in an ES module: each output file makes its own, resolving from itself.
 */
const REQUIRE_BANNER = 'import { createRequire as __bundleCreateRequire } from \'node:module\'; ' +
  'const require = __bundleCreateRequire(import.meta.url);'

async function bundle (analyze: boolean): Promise<void> {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
  const undeclared = Object.keys(EXTERNAL).filter((name) => pkg.dependencies[name] === undefined)
  if (undeclared.length > 0) throw new Error(`bundle: externals missing from package.json dependencies: ${undeclared.join(', ')}`)

  // chunk names carry a hash: drop the last build's, so the folder holds only what the entry reaches
  rmSync(BUNDLE_DIR, { recursive: true, force: true })
  const result = await build({
    // the metafile's paths are relative to the package root, wherever the build runs from
    absWorkingDir: ROOT,
    entryPoints: { cli: join(ROOT, 'dist', 'src', 'cli.js') },
    outdir: BUNDLE_DIR,
    bundle: true,
    // the CLI's dynamic imports (server, fixture validator, generator, docs, importer, hosted mode) stay lazy chunks
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: Object.keys(EXTERNAL),
    chunkNames: 'chunks/[name]-[hash]',
    banner: { js: REQUIRE_BANNER },
    // stack traces map back to dist/src with `node --enable-source-maps`; the sources stay out of the maps
    sourcemap: 'linked',
    sourcesContent: false,
    legalComments: 'eof',
    metafile: true,
    logLevel: 'warning'
  })
  // executable, as npm makes a bin on install, so that ./dist/bundle/cli.js runs in a checkout too
  chmodSync(join(BUNDLE_DIR, 'cli.js'), 0o755)
  writeFileSync(BUILD_STAMP_FILE, JSON.stringify({ build: buildStamp() }) + '\n')
  // beside the bundle, not in it (the package ships dist/bundle): read by the bundle test
  writeFileSync(join(ROOT, 'dist', 'bundle.meta.json'), JSON.stringify(result.metafile))

  const outputs = Object.entries(result.metafile.outputs).filter(([file]) => file.endsWith('.js'))
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`
  const total = outputs.reduce((n, [, o]) => n + o.bytes, 0)
  console.log(`bundle: ${relative(ROOT, BUNDLE_DIR)}/cli.js and ${outputs.length - 1} chunks, ${kb(total)} in all`)
  if (analyze) {
    for (const [file, output] of outputs.sort((a, b) => b[1].bytes - a[1].bytes)) {
      const inputs = Object.entries(output.inputs).sort((a, b) => b[1].bytesInOutput - a[1].bytesInOutput).slice(0, 5)
      console.log(`  ${file} ${kb(output.bytes)}: ${inputs.map(([name, i]) => `${name} ${kb(i.bytesInOutput)}`).join(', ')}`)
    }
  }
}

const git = (...args: string[]) => spawnSync('git', ['-C', ROOT, ...args], { encoding: 'utf8' })

/**
 * What identifies this build in the reports it judges (src/build-stamp.ts): the commit, when the
 * package is the top of a clean git checkout (not a package installed inside another repository,
 * whose commit says nothing of this code), else the SHA-256 of the bundle's files, by name.
 */
function buildStamp (): string {
  const top = git('rev-parse', '--show-toplevel')
  const commit = git('rev-parse', 'HEAD').stdout.trim()
  const clean = git('status', '--porcelain', '--untracked-files=no')
  if (top.status === 0 && realpathSync(top.stdout.trim()) === realpathSync(ROOT) && /^[0-9a-f]{40}$/.test(commit) && clean.status === 0 && clean.stdout.trim() === '') {
    return `git:${commit}`
  }
  const hash = createHash('sha256')
  const files = (readdirSync(BUNDLE_DIR, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile() && entry.name !== 'build.json')
    .map((entry) => relative(BUNDLE_DIR, join(entry.parentPath, entry.name)))
    .sort()
  for (const file of files) hash.update(`${file}\n`).update(readFileSync(join(BUNDLE_DIR, file)))
  return `sha256:${hash.digest('hex')}`
}

await bundle(process.argv.includes('--analyze'))
