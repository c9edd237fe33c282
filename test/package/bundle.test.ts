import t from 'tap'
import type { Metafile } from 'esbuild'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { PACKAGE_VERSION, ROOT } from '../../src/config.js'
import { DEMO } from '../helpers/app.js'

/**
 * The bundled CLI (dist/bundle/cli.js, written by `npm run build`) is what the bin, `npm start`
 * and the image run. Everything the bundle leaves to node_modules or finds on disk at run time
 * is checked from it: the package root (package.json, migrations, fixtures), the console's files,
 * Swagger UI's static files, better-sqlite3, and pino-pretty in pino's transport worker.
 */

const BUNDLE = join(ROOT, 'dist', 'bundle', 'cli.js')
const UNBUNDLED = join(ROOT, 'dist', 'src', 'cli.js')

interface Started {
  url: string
  lines: string[]
  stop(): Promise<number | null>
}

/** `node dist/bundle/cli.js serve` on a free port, once a line says where it listens. */
function serveBundle (env: Record<string, string>): Promise<Started> {
  const child = spawn(process.execPath, [BUNDLE, 'serve'], {
    env: { ...process.env, PORT: '0', SANDBOX_DB: ':memory:', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const lines: string[] = []
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const stop = async () => {
    child.kill('SIGTERM')
    return await exited
  }
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no listening line in 20 s:\n' + lines.join('\n'))), 20_000)
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        lines.push(line)
        const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(line)
        if (m !== null) {
          clearTimeout(timer)
          resolve({ url: m[1], lines, stop })
        }
      })
    }
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`exited with ${code} before listening:\n${lines.join('\n')}`))
    })
  })
}

/** Runs a CLI to completion. */
function run (cli: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('exit', (code) => resolve({ code, stdout, stderr }))
  })
}

/** Waits until a line matches, or fails after `ms`. */
async function lineMatching (lines: string[], pattern: RegExp, ms = 5000): Promise<string | undefined> {
  const until = Date.now() + ms
  while (Date.now() < until) {
    const found = lines.find((l) => pattern.test(l))
    if (found !== undefined) return found
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return undefined
}

t.test('serve from the bundle: the API, the console, the documents and Swagger UI with its static files', async (t) => {
  const served = await serveBundle({ LOG_PRETTY: 'false' })
  t.teardown(() => served.stop())
  const listening = served.lines.find((l) => /listening on/.test(l)) ?? ''
  t.match(listening, new RegExp(`agency-sandbox ${PACKAGE_VERSION.replace(/\./g, '\\.')} listening`), 'found package.json above the bundle')
  const health = await fetch(`${served.url}/_sandbox/health`)
  t.equal(health.status, 200, 'healthy (better-sqlite3 and the migrations loaded)')
  const agencies = await fetch(`${served.url}/vendor/agencies?version=4.0`, { headers: { authorization: DEMO } })
  t.equal(agencies.status, 200, 'the vendor API over the demo fixture')
  t.ok(((await agencies.json()) as unknown[]).length > 0, 'the demo agencies')
  const consolePage = await fetch(`${served.url}/_sandbox/ui`)
  t.equal(consolePage.status, 200, 'the console')
  t.match(await consolePage.text(), /<html/i)
  const doc = await fetch(`${served.url}/openapi/4.0.json`)
  t.equal(doc.status, 200, 'the OpenAPI document (its generator a lazily loaded chunk)')
  t.match(((await doc.json()) as { openapi: string }).openapi, /^3\./)
  const page = await fetch(`${served.url}/docs/`)
  t.equal(page.status, 200, 'Swagger UI')
  const css = await fetch(`${served.url}/docs/static/swagger-ui.css`)
  t.equal(css.status, 200, 'Swagger UI\'s static files, from @fastify/swagger-ui\'s own folder')
  t.ok((await css.text()).length > 1000)
  t.equal(await served.stop(), 0, 'stops cleanly on SIGTERM')
})

t.test('LOG_PRETTY=true: pino-pretty, left out of the bundle, formats the lines', async (t) => {
  const served = await serveBundle({ LOG_PRETTY: 'true' })
  t.teardown(() => served.stop())
  t.ok(served.lines.some((l) => /^\s+Console\s+http:\/\//.test(l)), 'the banner')
  await fetch(`${served.url}/vendor/agencies?version=4.0`, { headers: { authorization: DEMO } })
  const line = await lineMatching(served.lines, /INFO.*GET \/vendor\/agencies 200 [\d.]+ ms/)
  t.ok(line !== undefined, 'a pretty request line:\n' + served.lines.join('\n'))
  t.notOk(line?.trimStart().startsWith('{'), 'not JSON')
})

t.test('generate and validate from the bundle, byte for byte as dist/src', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-bundle-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const bundled = join(dir, 'bundled.json')
  const unbundled = join(dir, 'unbundled.json')
  const args = ['generate', '--agencies', '2', '--clients', '40', '--seed', '7', '--out']
  const made = await run(BUNDLE, [...args, bundled])
  t.equal(made.code, 0, made.stderr)
  t.equal((await run(UNBUNDLED, [...args, unbundled])).code, 0)
  t.ok(readFileSync(bundled).equals(readFileSync(unbundled)), 'the same fixture as the unbundled CLI writes')

  const valid = await run(BUNDLE, ['validate', bundled])
  t.equal(valid.code, 0, valid.stderr)
  t.match(valid.stdout, /valid fixture/)
  const broken = join(dir, 'broken.json')
  writeFileSync(broken, JSON.stringify({ agencies: [{ id: 'x' }] }))
  const invalid = await run(BUNDLE, ['validate', broken])
  t.equal(invalid.code, 1, 'an invalid fixture fails')
  t.match(invalid.stderr, /error/)
})

t.test('what the bundle loads at start-up: lazily imported modules stay in their own chunks', async (t) => {
  const meta = JSON.parse(readFileSync(join(ROOT, 'dist', 'bundle.meta.json'), 'utf8')) as Metafile
  const outputOf = (entry: string) => Object.keys(meta.outputs).find((file) => meta.outputs[file].entryPoint === entry)
  /** Every input a chunk and the chunks it imports statically load (what importing it runs). */
  const loadedBy = (file: string | undefined, seen = new Set<string>(), inputs = new Set<string>()): Set<string> => {
    if (file === undefined || seen.has(file)) return inputs
    seen.add(file)
    for (const input of Object.keys(meta.outputs[file].inputs)) inputs.add(input)
    for (const i of meta.outputs[file].imports) if (i.kind === 'import-statement' && i.external !== true) loadedBy(i.path, seen, inputs)
    return inputs
  }
  const cli = loadedBy(outputOf('dist/src/cli.js'))
  t.ok(cli.has('dist/src/config.js'))
  t.notOk(cli.has('dist/src/server.js'), 'the CLI alone loads no server: validate, generate and report start quickly')
  const serve = loadedBy(outputOf('dist/src/server.js'), new Set(), new Set(cli))
  t.ok(serve.has('dist/src/app.js'), 'serve loads the app')
  const externals = (file: string | undefined, seen = new Set<string>()): string[] => {
    if (file === undefined || seen.has(file)) return []
    seen.add(file)
    return meta.outputs[file].imports.flatMap((i) => i.kind !== 'import-statement' ? [] : i.external === true ? [i.path] : externals(i.path, seen))
  }
  const loaded = [...externals(outputOf('dist/src/cli.js')), ...externals(outputOf('dist/src/server.js'))]
  for (const name of ['@faker-js/faker', '@fastify/swagger', '@fastify/swagger-ui']) {
    t.notOk(loaded.some((p) => p === name || p.startsWith(name + '/')), `serve does not load ${name} before it is needed`)
  }
  // (the fixture validator's module is loaded by the control plane's checks; its schemas compile on first use)
  for (const lazy of ['dist/src/fixture/generate.js', 'dist/src/plugins/openapi-docs.js', 'dist/src/import/commands.js',
    'dist/src/domain/item-validator.js',
    // hosted mode's forwarding (reply-from and its own undici) and its worlds: a tenth of a file-backed start-up
    'dist/src/plugins/owner-routing.js', 'dist/src/domain/worlds/hosting.js']) {
    t.ok(outputOf(lazy) !== undefined, `${lazy} is a chunk of its own`)
    t.notOk(serve.has(lazy), `serve does not load ${lazy} before it is needed`)
  }
})
