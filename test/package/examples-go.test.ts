import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT } from '../../src/config.js'
import { GO_KIT, goEnv, goMissing } from '../helpers/go.js'
import { countingLauncher, runs } from '../helpers/process-tree.js'

/**
 * The Go kit (examples/go, standard library only) as a Go team runs it: `go test -parallel 8 ./...`
 * against the checkout's built CLI, one sandbox for the test binary, each test in a world of its
 * own; with a signing key, so that the signed report is checked too. No network: no module proxy,
 * the build cache in a folder of its own.
 */

const missing = goMissing()
const work = mkdtempSync(join(tmpdir(), 'sandbox-go-kit-'))
t.teardown(() => rmSync(work, { recursive: true, force: true }))
const signingKey = join(work, 'signing-key.pem')
writeFileSync(signingKey, String(generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' })))

function run (t: Test, command: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null, out: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: GO_KIT, env, stdio: ['ignore', 'pipe', 'pipe'] })
    t.teardown(() => { child.kill('SIGKILL') })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.stderr.on('data', (d: Buffer) => (out += d.toString()))
    child.once('close', (code) => resolve({ code, out }))
  })
}

/** The kit's environment: the sandbox started through a launcher that counts what it starts. */
function kitEnv (t: Test) {
  const folder = mkdtempSync(join(work, 'run-'))
  const launcher = countingLauncher(folder, join(ROOT, 'dist', 'bundle', 'cli.js'))
  const env = { ...goEnv(work), AGENCY_SANDBOX_CMD: launcher.command, SANDBOX_SIGNING_KEY: signingKey }
  t.teardown(() => { for (const pid of launcher.started().filter(runs)) process.kill(pid, 'SIGKILL') })
  return { env, launcher }
}

/** Every test of the run passed (none skipped, none failed), the world tests among them. */
function allPassed (t: Test, out: string): void {
  t.notMatch(out, /--- (FAIL|SKIP)/, 'no test failed or skipped')
  const passed = [...out.matchAll(/--- PASS: (\S+)/g)].map((m) => m[1])
  for (const name of ['TestAFirstSyncReadsEveryClientInBatchesOf200', 'TestALogNoteWhoseAnswerIsLostIsWrittenOnce', 'TestAnExaminedSyncGetsASignedReport', 'TestEachWorldIsItsOwn/8_notes_in_2034', 'TestCanonicalJSON']) {
    t.ok(passed.includes(name), `${name} passed`)
  }
  t.ok(passed.length >= 20, `${passed.length} tests and subtests passed`)
}

t.test('go test -parallel 8 ./... in examples/go passes against the built CLI, with one sandbox, stopped at the end', { skip: missing }, async (t) => {
  const { env, launcher } = kitEnv(t)
  const test = await run(t, 'go', ['test', '-count=1', '-parallel', '8', '-v', './...'], env)
  t.equal(test.code, 0, test.code === 0 ? 'go test exits 0' : test.out)
  allPassed(t, test.out)
  const started = launcher.started()
  t.equal(started.length, 1, `one sandbox for the run (started: ${started.join(', ')})`)
  t.same(started.filter(runs), [], 'stopped by the time go test ended: no process left')
})

t.test('cmd/with-sandbox: one sandbox around the whole go test run, every package\'s tests attached to it', { skip: missing }, async (t) => {
  const { env, launcher } = kitEnv(t)
  const withSandbox = join(work, 'with-sandbox')
  const build = await run(t, 'go', ['build', '-o', withSandbox, './cmd/with-sandbox'], env)
  t.equal(build.code, 0, build.out)
  const test = await run(t, withSandbox, ['go', 'test', '-count=1', '-parallel', '8', '-v', './...'], env)
  t.equal(test.code, 0, test.code === 0 ? 'exits with go test\'s status, 0' : test.out)
  allPassed(t, test.out)
  t.equal(launcher.started().length, 1, 'the tests started none of their own: they attached')
  t.same(launcher.started().filter(runs), [], 'stopped once the command ended')

  const failing = await run(t, withSandbox, ['sh', '-c', 'exit 3'], env)
  t.equal(failing.code, 3, 'the command\'s status is the exit status')
  t.equal(launcher.started().length, 2)
  t.same(launcher.started().filter(runs), [], 'stopped after a failing command too')
})

t.test('without AGENCY_SANDBOX_URL, AGENCY_SANDBOX_CMD or an installed agency-sandbox, every test fails naming the three ways', { skip: missing }, async (t) => {
  const env: NodeJS.ProcessEnv = { ...goEnv(work), PATH: `${join(process.execPath, '..')}:/usr/bin:/bin` }
  delete env.AGENCY_SANDBOX_CMD
  const test = await run(t, 'go', ['test', '-count=1', '-run', 'TestA503IsRetried', './partnersync'], env)
  t.not(test.code, 0)
  t.match(test.out, /AGENCY_SANDBOX_URL=http:\/\/127\.0\.0\.1:8080 {2}attach/)
  t.match(test.out, /AGENCY_SANDBOX_CMD='node \/path\/to\/agency-sandbox\/dist\/bundle\/cli\.js'/)
  t.match(test.out, /node_modules\/\.bin\/agency-sandbox is found from .*examples\/go\/partnersync upwards/)
})
