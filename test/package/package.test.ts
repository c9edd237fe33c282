import t from 'tap'
import { execFileSync, spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { ROOT } from '../../src/config.js'
import { DEMO } from '../helpers/app.js'

interface PackageJson {
  name: string
  private?: boolean
  license: string
  engines: { node: string }
  bin: Record<string, string>
  dependencies: Record<string, string>
  files: string[]
}

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as PackageJson

/** `npm pack` without scripts (npm test has built dist already): the tarball's path and file list. */
function pack (into: string): { tarball: string; files: string[] } {
  const out = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', into], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
  const [info] = JSON.parse(out) as [{ filename: string; files: { path: string }[] }]
  return { tarball: join(into, info.filename), files: info.files.map((f) => f.path) }
}

t.test('package.json is publishable and honest', async (t) => {
  t.notOk(pkg.private, 'not private: `npx agency-sandbox` can find it once published')
  t.equal(pkg.license, 'MIT')
  t.match(readFileSync(join(ROOT, 'LICENSE'), 'utf8'), /MIT License/, 'the LICENSE file package.json names')
  t.equal(pkg.bin['agency-sandbox'], 'dist/bundle/cli.js', 'the bin runs the bundle (npm run build writes it)')
  t.match(pkg.engines.node, />=20/)
})

t.test('the packed package holds everything `serve` needs, and nothing of the repo beside it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-pack-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const { files } = pack(dir)
  for (const needed of ['dist/bundle/cli.js', 'dist/src/cli.js', 'dist/src/index.js', 'dist/src/index.d.ts', 'dist/routes/control/index.js', 'public/console/index.html',
    'fixtures/demo.json', 'fixtures/schema.json', 'LICENSE', 'README.md', 'package.json']) {
    t.ok(files.includes(needed), `packs ${needed}`)
  }
  t.ok(files.some((f) => /^migrations\/\d+-.*\.sql$/.test(f)), 'packs the migrations')
  t.ok(files.some((f) => /^dist\/bundle\/chunks\/.+\.js$/.test(f)), 'packs the bundle\'s lazily loaded chunks')
  t.notOk(files.includes('dist/bundle.meta.json'), 'not the bundler\'s report')
  t.notOk(files.some((f) => /^(test|bench|src|routes|\.ci)\//.test(f) || f.startsWith('dist/test/') || f.startsWith('dist/bench/')), 'no sources, tests or benchmarks')
})

t.test('installed from its tarball, `npx agency-sandbox serve` answers the API, the console and the docs', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-install-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const { tarball } = pack(dir)
  const project = join(dir, 'project')
  const installed = join(project, 'node_modules', 'agency-sandbox')
  mkdirSync(installed, { recursive: true })
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'partner-tests', private: true }))
  execFileSync('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1'])
  // The registry install would fetch (and compile) the dependencies; link the repo's copies instead, so the
  // test checks the package's own contents and bin without the network.
  for (const dep of Object.keys(pkg.dependencies)) {
    const target = join(project, 'node_modules', dep)
    mkdirSync(join(target, '..'), { recursive: true })
    if (!existsSync(target)) symlinkSync(join(ROOT, 'node_modules', dep), target, 'dir')
  }
  mkdirSync(join(project, 'node_modules', '.bin'), { recursive: true })
  symlinkSync(join('..', 'agency-sandbox', ...pkg.bin['agency-sandbox'].split('/')), join(project, 'node_modules', '.bin', 'agency-sandbox'))
  chmodSync(join(installed, pkg.bin['agency-sandbox']), 0o755) // as npm's bin linking does

  const child = spawn('npx', ['--no-install', 'agency-sandbox', 'serve', '--port', '0', '--db', ':memory:'], {
    cwd: project, env: { ...process.env, LOG_PRETTY: 'false' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true
  })
  // npx runs the bin through a shell: signal the whole process group, not only npx.
  const stop = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal)
    } catch {}
  }
  const exited = new Promise((resolve) => child.on('exit', resolve))
  t.teardown(() => stop('SIGKILL'))
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no listening line in 20 s')), 20_000)
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        const m = /(http:\/\/127\.0\.0\.1:\d+)/.exec(line)
        if (m !== null && /listening/i.test(line)) {
          clearTimeout(timer)
          resolve(m[1])
        }
      })
    }
    child.on('exit', (code) => reject(new Error(`exited with ${code}`)))
  })
  const agencies = await fetch(`${url}/vendor/agencies?version=4.0`, { headers: { authorization: DEMO } })
  t.equal(agencies.status, 200, 'the vendor API')
  const consolePage = await fetch(`${url}/_sandbox/ui`)
  t.equal(consolePage.status, 200, 'the console (public/ is in the package)')
  t.match(await consolePage.text(), /<html/i)
  const docs = await fetch(`${url}/openapi/4.0.json`)
  t.equal(docs.status, 200, 'the OpenAPI documents')
  const swagger = await fetch(`${url}/docs/`)
  t.equal(swagger.status, 200, 'Swagger UI')
  stop('SIGTERM')
  await exited
})
