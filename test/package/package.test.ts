import t from 'tap'
import { execFile, execFileSync, spawn, spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { ROOT } from '../../src/config.js'
import { DEMO } from '../helpers/app.js'
import { processTree, stillRunning } from '../helpers/process-tree.js'

interface PackageJson {
  name: string
  version: string
  private?: boolean
  license: string
  engines: { node: string }
  bin: Record<string, string>
  dependencies: Record<string, string>
  files: string[]
}

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as PackageJson

// A compile of better-sqlite3 from source (when no prebuilt binary is at hand) takes minutes on a busy machine.
t.setTimeout(600_000)

/** `npm pack` without scripts (npm test has built dist already): the tarball's path and file list. */
function pack (into: string): { tarball: string; files: string[] } {
  const out = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', into], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
  const [info] = JSON.parse(out) as [{ filename: string; files: { path: string }[] }]
  return { tarball: join(into, info.filename), files: info.files.map((f) => f.path) }
}

interface Run { code: number | null, stdout: string, stderr: string }

/** Runs a command to completion without blocking this process's event loop. */
function run (command: string, args: string[], options: { cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number }): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: options.cwd, env: options.env, encoding: 'utf8', timeout: options.timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr })
    })
  })
}

t.test('package.json is publishable and honest', async (t) => {
  t.notOk(pkg.private, 'not private: it can be published to the registry')
  t.equal(pkg.license, 'MIT')
  t.match(readFileSync(join(ROOT, 'LICENSE'), 'utf8'), /MIT License/, 'the LICENSE file package.json names')
  t.equal(pkg.bin['agency-sandbox'], 'dist/bundle/cli.js', 'the bin runs the bundle (npm run build writes it)')
  t.match(pkg.engines.node, />=20/)
  t.notOk('overrides' in pkg, 'no overrides: they bind only this repository, never a partner\'s install')
})

t.test('the packed package holds everything `serve` and the examples need, and nothing of the repo beside it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-pack-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const { files } = pack(dir)
  for (const needed of ['dist/bundle/cli.js', 'dist/src/cli.js', 'dist/src/index.js', 'dist/src/index.d.ts', 'dist/routes/control/index.js', 'public/console/index.html',
    'fixtures/demo.json', 'fixtures/schema.json', 'LICENSE', 'README.md', 'docs/README.md', 'docs/contract.md', 'package.json',
    'examples/python/agency_sandbox.py', 'examples/python/conftest.py', 'examples/node/sandbox-process.mjs', 'examples/java/src/test/java/example/AgencySandbox.java',
    'examples/dotnet/SandboxFixture.cs', 'examples/go/go.mod', 'examples/go/sandbox.go', 'examples/go/world.go']) {
    t.ok(files.includes(needed), `packs ${needed}`)
  }
  t.ok(files.some((f) => /^migrations\/\d+-.*\.sql$/.test(f)), 'packs the migrations')
  t.ok(files.some((f) => /^dist\/bundle\/chunks\/.+\.js$/.test(f)), 'packs the bundle\'s lazily loaded chunks')
  t.notOk(files.includes('dist/bundle.meta.json'), 'not the bundler\'s report')
  t.notOk(files.some((f) => /^(test|bench|src|routes|\.ci)\//.test(f) || f.startsWith('dist/test/') || f.startsWith('dist/bench/')), 'no sources, tests or benchmarks')
})

/**
 * Where a consumer install finds a prebuilt better-sqlite3, as prebuild-install would find one it
 * downloaded: a local prebuilds folder (`local-prebuilds` in the project's .prebuild-installrc).
 * The registry, npm's cache, the install scripts and the binary's load check all run as for any
 * partner; only the C++ compile, which is better-sqlite3's own build and the one the checkout's
 * `npm ci` has just done, is not repeated when the checkout holds the same version for the same
 * Node ABI and platform. Otherwise the consumer install compiles, and its binary is kept here
 * for the next run.
 */
const PREBUILDS = join(ROOT, 'node_modules', '.cache', 'agency-sandbox-consumer-prebuilds')

function prebuildName (version: string): string {
  return `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`
}

/** A prebuild archive (build/Release/better_sqlite3.node) of the better-sqlite3 installed in `packageDir`; its source. */
function keepPrebuild (packageDir: string, source: string): string | undefined {
  const binary = join(packageDir, 'build', 'Release', 'better_sqlite3.node')
  if (!existsSync(binary)) return undefined
  const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string }
  const archive = join(PREBUILDS, prebuildName(version))
  if (existsSync(archive)) return `${version}, kept earlier`
  mkdirSync(PREBUILDS, { recursive: true })
  execFileSync('tar', ['-czf', archive, '-C', packageDir, 'build/Release/better_sqlite3.node'])
  return `${version}, ${source}`
}

/** The environment of a partner's shell: none of this repository's or tap's settings, no sandbox URL or command. */
function partnerEnv (): NodeJS.ProcessEnv {
  const env = { ...process.env }
  for (const key of Object.keys(env)) {
    if (/^(AGENCY_SANDBOX_|TAP|_TAP|NODE_OPTIONS$|NODE_V8_COVERAGE$|npm_)/.test(key)) delete env[key]
  }
  return env
}

const pytest = spawnSync('/usr/bin/python3', ['-m', 'pytest', '--version'], { encoding: 'utf8' })

t.test('a partner\'s own repository: pack, npm install of the tarball, then the Python and Node examples find node_modules/.bin/agency-sandbox themselves', async (t) => {
  const timeline: string[] = []
  const started = Date.now()
  let last = started
  const step = (what: string) => {
    const now = Date.now()
    timeline.push(`${what}: ${((now - last) / 1000).toFixed(1)} s (at ${((now - started) / 1000).toFixed(1)} s)`)
    last = now
  }
  t.teardown(() => t.comment(`timeline of a partner's first minute\n  ${timeline.join('\n  ')}`))

  const dir = mkdtempSync(join(tmpdir(), 'sandbox-partner-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const { tarball } = pack(dir)
  step('npm pack')

  const project = join(dir, 'partner-repo')
  mkdirSync(project)
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'partner-tests', version: '1.0.0', private: true }, null, 2))
  const seeded = keepPrebuild(join(ROOT, 'node_modules', 'better-sqlite3'), 'from the checkout\'s npm ci')
  writeFileSync(join(project, '.prebuild-installrc'), `local-prebuilds=${PREBUILDS}\n`)
  const env = partnerEnv()
  const install = await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--save-dev', tarball], { cwd: project, env, timeoutMs: 540_000 })
  const installed = join(project, 'node_modules', 'better-sqlite3')
  const compiled = existsSync(join(installed, 'build', 'Release', 'obj.target'))
  step(`npm install ${tarball.split('/').pop()} (better-sqlite3 ${compiled ? 'compiled from source' : `prebuilt: ${seeded ?? 'kept earlier'}`})`)
  t.equal(install.code, 0, install.code === 0 ? 'npm install of the tarball succeeds' : install.stdout + install.stderr)
  t.notMatch(install.stdout + install.stderr, /EBADENGINE/, `no engine warning for a consumer on Node ${process.versions.node}`)
  if (compiled) keepPrebuild(installed, 'compiled by the last consumer install')
  const cookie = await run('npm', ['ls', 'cookie', '--all', '--json'], { cwd: project, env, timeoutMs: 60_000 })
  t.notMatch(cookie.stdout, /"version": "2\./, 'the consumer\'s tree holds no cookie@2 (it needs Node 22)')

  const bin = join(project, 'node_modules', '.bin', 'agency-sandbox')
  t.ok(existsSync(bin), 'npm linked the bin')

  t.test('`npx agency-sandbox serve` in the partner\'s repository answers the API, the console and the docs', async (t) => {
    const child = spawn('npx', ['--no-install', 'agency-sandbox', 'serve', '--port', '0', '--db', ':memory:'], {
      cwd: project, env: { ...env, LOG_PRETTY: 'false' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true
    })
    const exited = new Promise((resolve) => child.on('exit', resolve))
    // npx runs the bin through a shell: the whole process group, not only npx
    const tree = () => processTree(child.pid!)
    t.teardown(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {}
    })
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no listening line in 30 s')), 30_000)
      for (const stream of [child.stdout!, child.stderr!]) {
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
    t.equal((await fetch(`${url}/vendor/agencies?version=4.0`, { headers: { authorization: DEMO } })).status, 200, 'the vendor API')
    const consolePage = await fetch(`${url}/_sandbox/ui`)
    t.equal(consolePage.status, 200, 'the console (public/ is in the package)')
    t.match(await consolePage.text(), /<html/i)
    t.equal((await fetch(`${url}/openapi/4.0.json`)).status, 200, 'the OpenAPI documents')
    t.equal((await fetch(`${url}/docs/`)).status, 200, 'Swagger UI')
    const processes = tree()
    process.kill(-child.pid!, 'SIGTERM')
    await exited
    t.same(await stillRunning(processes, 15_000), [], 'nothing left once its group is stopped')
    step('npx agency-sandbox serve answered and stopped')
  })

  t.test('the Python example, copied from the package, passes under Debian\'s pytest', { skip: pytest.status === 0 ? false : '/usr/bin/python3 -m pytest is missing (apt-get install python3-pytest; .ci/run does)' }, async (t) => {
    const tests = join(project, 'tests')
    mkdirSync(tests)
    for (const file of ['agency_sandbox.py', 'conftest.py', 'partner_sync.py', 'test_partner_sync.py']) {
      copyFileSync(join(project, 'node_modules', 'agency-sandbox', 'examples', 'python', file), join(tests, file))
    }
    const result = await run('/usr/bin/python3', ['-m', 'pytest', '-q', '-p', 'no:cacheprovider'], { cwd: tests, env, timeoutMs: 180_000 })
    step('first pytest run green (the fixture starts node_modules/.bin/agency-sandbox)')
    t.equal(result.code, 0, result.code === 0 ? 'pytest passes' : result.stdout + result.stderr)
    t.match(result.stdout, /5 passed/)
  })

  t.test('the Node example, copied from the package, passes under node --test', async (t) => {
    const tests = join(project, 'test')
    mkdirSync(tests)
    for (const file of ['sandbox-process.mjs', 'partner-sync.test.mjs']) {
      copyFileSync(join(project, 'node_modules', 'agency-sandbox', 'examples', 'node', file), join(tests, file))
    }
    const result = await run(process.execPath, ['--test', 'partner-sync.test.mjs'], { cwd: tests, env, timeoutMs: 180_000 })
    step('node --test green')
    t.equal(result.code, 0, result.code === 0 ? 'node --test passes' : result.stdout + result.stderr)
    t.match(result.stdout, /# pass 4/)
    t.match(result.stdout, /# fail 0/)
  })
})
