import t, { type Test } from 'tap'
import { execFile, spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { loadConfig, ROOT } from '../../src/config.js'
import { startServer } from '../../src/server.js'
import { buildGoTest, goEnv, goMissing } from '../helpers/go.js'
import { CLI } from '../helpers/process.js'
import { countingLauncher, runs } from '../helpers/process-tree.js'

/** The examples start the sandbox the way a partner's suite would; here the built CLI stands in for `npx agency-sandbox`. */
const env = { ...process.env, AGENCY_SANDBOX_CMD: `${process.execPath} ${CLI}`, AGENCY_SANDBOX_URL: '' }
const NODE_EXAMPLES = join(ROOT, 'examples', 'node')
const PYTHON_EXAMPLES = join(ROOT, 'examples', 'python')
/** What the package's bin runs. */
const BUNDLED_CLI = join(ROOT, 'dist', 'bundle', 'cli.js')

/** A launcher for AGENCY_SANDBOX_CMD that counts the sandboxes a run starts, in a folder removed after the test. */
function counted (t: Test) {
  const folder = mkdtempSync(join(tmpdir(), 'sandbox-kit-'))
  t.teardown(() => rmSync(folder, { recursive: true, force: true }))
  return countingLauncher(folder, BUNDLED_CLI)
}

/** One sandbox started for the whole run, and none of it left running once the run has ended. */
function oneSandboxStoppedOnce (t: Test, started: number[]) {
  t.equal(started.length, 1, `one sandbox for the whole run (started: ${started.join(', ')})`)
  t.same(started.filter(runs), [], 'stopped by the time the run ended: no process left')
}

t.test('the Node example suite passes against a real sandbox process', async (t) => {
  const run = spawnSync(process.execPath, ['--test', join(NODE_EXAMPLES, 'partner-sync.test.mjs')], { env, encoding: 'utf8', timeout: 90_000 })
  t.equal(run.status, 0, run.stdout + run.stderr)
  t.match(run.stdout, /# pass 4/, 'four example tests ran')
  t.match(run.stdout, /# fail 0/)
})

t.test('the Node examples in parallel: node --test --test-concurrency=4 inside run-with-sandbox.mjs, each world test in its own world, one sandbox', async (t) => {
  const launcher = counted(t)
  const files = ['partner-sync.test.mjs', 'worlds.test.mjs', 'sdk-worlds.test.mjs']
  const run = spawnSync(process.execPath, ['run-with-sandbox.mjs', process.execPath, '--test', '--test-concurrency=4', ...files],
    { cwd: NODE_EXAMPLES, env: { ...env, AGENCY_SANDBOX_CMD: launcher.command }, encoding: 'utf8', timeout: 120_000 })
  t.equal(run.status, 0, run.stdout + run.stderr)
  t.match(run.stdout, /# pass 16/, 'the default world\'s 4 tests and the 12 world tests ran')
  t.match(run.stdout, /# fail 0/)
  oneSandboxStoppedOnce(t, launcher.started())
})

const python = spawnSync('python3', ['--version'], { encoding: 'utf8' })

t.test('the Python example suite passes with the standard library alone', { skip: python.status === 0 ? false : 'python3 is not installed' }, async (t) => {
  const run = spawnSync('python3', ['run_without_pytest.py'], { cwd: PYTHON_EXAMPLES, env, encoding: 'utf8', timeout: 90_000 })
  t.equal(run.status, 0, run.stdout + run.stderr)
  t.match(run.stdout, /5 of 5 example tests passed/)
})

const pytest = spawnSync('python3', ['-m', 'pytest', '--version'], { encoding: 'utf8' })

t.test('and with pytest, through conftest.py, where pytest is installed', { skip: pytest.status === 0 ? false : 'pytest is not installed' }, async (t) => {
  const run = spawnSync('python3', ['-m', 'pytest', '-q', '-p', 'no:cacheprovider'], { cwd: PYTHON_EXAMPLES, env, encoding: 'utf8', timeout: 120_000 })
  t.equal(run.status, 0, run.stdout + run.stderr)
  t.match(run.stdout, /17 passed/, 'the default world\'s 5 tests and the 12 world tests')
})

/** Debian's python3 with its pytest and pytest-xdist (python3-pytest-xdist). */
const DEBIAN_PYTHON = '/usr/bin/python3'
const xdist = spawnSync(DEBIAN_PYTHON, ['-c', 'import pytest, xdist'], { encoding: 'utf8' })

t.test('pytest -n 4 (pytest-xdist): the workers share one sandbox, each world test in its own world', {
  skip: xdist.status === 0 ? false : `${DEBIAN_PYTHON} has no pytest-xdist (apt-get install python3-pytest-xdist; .ci/run does)`
}, async (t) => {
  const launcher = counted(t)
  const run = spawnSync(DEBIAN_PYTHON, ['-m', 'pytest', '-n', '4', '-p', 'no:cacheprovider'],
    { cwd: PYTHON_EXAMPLES, env: { ...env, AGENCY_SANDBOX_CMD: launcher.command }, encoding: 'utf8', timeout: 180_000 })
  t.equal(run.status, 0, run.stdout + run.stderr)
  t.match(run.stdout, /17 passed/)
  t.match(run.stdout, /gw0 \[17\] \/ gw1 \[17\] \/ gw2 \[17\] \/ gw3 \[17\]/, 'four xdist workers ran them')
  oneSandboxStoppedOnce(t, launcher.started())
})

/** The Go kit's driver (a go test binary, test/package/lifecycle/go), built into `dir`. */
function goDriver (dir: string): string {
  const binary = join(dir, 'go-driver.test')
  buildGoTest(join(import.meta.dirname, 'lifecycle', 'go'), binary, goEnv(dir))
  return binary
}

/**
 * Where the fixtures find a sandbox, first match wins: AGENCY_SANDBOX_URL, AGENCY_SANDBOX_CMD, then
 * node_modules/.bin/agency-sandbox from the current directory upwards (or on PATH); with none of
 * them they fail naming all three. Each case runs the fixture's start from a folder of its own.
 */
t.test('the fixtures find the sandbox by URL, then command, then the installed bin, else name the three ways', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'sandbox-find-'))
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  const deep = join(root, 'project', 'tests', 'integration')
  mkdirSync(deep, { recursive: true })
  const binDir = join(root, 'project', 'node_modules', '.bin')
  mkdirSync(binDir, { recursive: true })
  const broken = join(root, 'broken-sandbox')
  writeFileSync(broken, '#!/bin/sh\necho "this is not the sandbox" >&2\nexit 3\n')
  chmodSync(broken, 0o755)
  const installBin = (script: string) => {
    rmSync(join(binDir, 'agency-sandbox'), { force: true })
    writeFileSync(join(binDir, 'agency-sandbox'), script)
    chmodSync(join(binDir, 'agency-sandbox'), 0o755)
  }
  const working = `#!/bin/sh\nexec '${process.execPath}' '${CLI}' "$@"\n`
  const bare: NodeJS.ProcessEnv = { ...process.env, PATH: '/usr/bin:/bin' }
  delete bare.AGENCY_SANDBOX_URL
  delete bare.AGENCY_SANDBOX_CMD

  const FIXTURES = [
    { name: 'Node', command: process.execPath, args: ['--input-type=module', '-e', `const { SandboxProcess } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'examples', 'node', 'sandbox-process.mjs')).href)}); const s = await SandboxProcess.start({ timeoutMs: 20000 }); console.log('reached ' + s.url); await s.stop()`] },
    ...(python.status === 0
      ? [{ name: 'Python', command: 'python3', args: ['-c', `import sys; sys.path.insert(0, ${JSON.stringify(join(ROOT, 'examples', 'python'))}); from agency_sandbox import Sandbox; s = Sandbox.start(20); print('reached ' + s.url); s.stop()`] }]
      : []),
    // a go test binary of the Go kit, run from the deep folder as `go test` runs one from its package's
    ...(goMissing() === false ? [{ name: 'Go', command: goDriver(root), args: ['-test.run', '^TestDriver$', 'reach'] }] : [])
  ]
  const server = await startServer(loadConfig({ SANDBOX_DB: ':memory:', LOG_LEVEL: 'silent', PORT: '0' }))
  t.teardown(() => server.close())
  const start = (fixture: typeof FIXTURES[number], env: NodeJS.ProcessEnv) => new Promise<{ code: number | null, out: string }>((resolve) => {
    execFile(fixture.command, fixture.args, { cwd: deep, env, encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, out: stdout + stderr }))
  })

  for (const fixture of FIXTURES) {
    installBin(working)
    let r = await start(fixture, { ...bare, AGENCY_SANDBOX_URL: server.url, AGENCY_SANDBOX_CMD: broken })
    t.match(r.out, `reached ${server.url}`, `${fixture.name}: AGENCY_SANDBOX_URL comes first`)

    installBin(`#!/bin/sh\nexec '${broken}' "$@"\n`)
    r = await start(fixture, { ...bare, AGENCY_SANDBOX_CMD: `${process.execPath} ${CLI}` })
    t.match(r.out, /reached http:\/\/127\.0\.0\.1:\d+/, `${fixture.name}: then AGENCY_SANDBOX_CMD, before an installed bin`)

    installBin(working)
    r = await start(fixture, bare)
    t.match(r.out, /reached http:\/\/127\.0\.0\.1:\d+/, `${fixture.name}: then node_modules/.bin/agency-sandbox, two folders up`)

    rmSync(join(binDir, 'agency-sandbox'))
    r = await start(fixture, bare)
    t.not(r.code, 0, `${fixture.name}: with none of them the start fails`)
    t.match(r.out, /AGENCY_SANDBOX_URL=.*\n.*AGENCY_SANDBOX_CMD=.*\n.*install the package/, `${fixture.name}: naming the three ways`)
    t.match(r.out, /not on the npm registry yet/)
  }
})
