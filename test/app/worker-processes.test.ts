/**
 * Fixture bodies and examiner reports are read and computed in worker processes
 * (src/worker-process.ts): how their runners answer when such a process runs out of its heap or
 * is killed before it answers.
 */
import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ROOT } from '../../src/config.js'
import { ApiError } from '../../src/errors.js'
import { ReportRunner } from '../../src/domain/examiner/report-runner.js'
import type { ReportJob } from '../../src/domain/examiner/report-job.js'
import { FixtureRunner } from '../../src/domain/worlds/fixture-runner.js'
import { testConfig } from '../helpers/app.js'
import { runs } from '../helpers/process-tree.js'
import { stubWorker } from '../helpers/stub-worker.js'

function fixtureRunnerWith (t: Test, onJob: string): FixtureRunner {
  const runner = new FixtureRunner({ workerFile: stubWorker(t, onJob), migrationsDir: testConfig().migrationsDir })
  t.teardown(() => runner.close())
  return runner
}

function reportRunnerWith (t: Test, onJob: string): ReportRunner {
  const runner = new ReportRunner({ workerFile: stubWorker(t, onJob) })
  t.teardown(() => runner.close())
  return runner
}

/** What V8 writes before it aborts a process that reached its heap limit, then the abort. */
const OUT_OF_HEAP = "process.stderr.write('FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\\n', () => process.abort())"
const KILLED = "process.kill(process.pid, 'SIGKILL')"
const report = (runner: ReportRunner) => runner.run({} as ReportJob, async () => [], () => undefined)

/** What a promise expected to fail failed with. */
async function failureOf (promise: Promise<unknown>): Promise<ApiError> {
  return await promise.then(() => { throw new Error('it did not fail') }, (e: unknown) => e as ApiError)
}

const BODY = new TextEncoder().encode('{"agencies":[]}')

t.test('a fixture worker out of its heap: 507 naming the bound, and the next body gets a new worker', async (t) => {
  const runner = fixtureRunnerWith(t, OUT_OF_HEAP)
  const refused = await failureOf(runner.reset(BODY, 1000, false, 'default'))
  t.equal(refused.status, 507)
  t.match(refused.detail, /needs more than the 256 MB/)
  t.notOk(runner.running, 'the worker is gone')
  t.equal((await failureOf(runner.reset(BODY, 1000, false, 'default'))).status, 507, 'the next body started a worker of its own')
})

t.test('a fixture worker killed before it answers: 503 with Retry-After (never a 500), nothing applied', async (t) => {
  const runner = fixtureRunnerWith(t, KILLED)
  const failed = await failureOf(runner.agency(BODY, 1000, 'default'))
  t.same([failed.status, failed.code, failed.headers], [503, 'worker-stopped', { 'retry-after': '1' }])
  t.match(failed.detail, /SIGKILL/)
  t.equal(runner.reading, 0, 'no body is left waiting')
})

t.test('a report worker out of its heap: 507 naming the bound', async (t) => {
  const failed = await failureOf(report(reportRunnerWith(t, OUT_OF_HEAP)))
  t.equal(failed.status, 507)
  t.match(failed.detail, /needs more than the 256 MB/)
})

t.test('a report worker killed before it answers: 503 with Retry-After, and the next report gets a new worker', async (t) => {
  const runner = reportRunnerWith(t, KILLED)
  const failed = await failureOf(report(runner))
  t.same([failed.status, failed.code, failed.headers], [503, 'report-failed', { 'retry-after': '1' }])
  t.match(failed.detail, /its worker stopped: SIGKILL/)
  t.equal((await failureOf(report(runner))).status, 503, 'the next report started a worker of its own')
})

t.test('a worker process ends with the sandbox, even one killed outright with a job in progress', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-orphan-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const pidFile = join(dir, 'worker.pid')
  // a worker that notes its pid and never answers, its job waiting on a timer (which alone would
  // keep a process running after its channel closed); a sandbox that waits for it
  const worker = stubWorker(t, `setInterval(() => {}, 1000); import('node:fs').then((fs) => fs.writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)))`)
  const runnerModule = pathToFileURL(join(ROOT, 'dist', 'src', 'domain', 'worlds', 'fixture-runner.js')).href
  const sandbox = spawn(process.execPath, ['--input-type=module', '-e', `
    import { FixtureRunner } from ${JSON.stringify(runnerModule)}
    await new FixtureRunner({ workerFile: new URL(${JSON.stringify(worker.href)}), migrationsDir: ${JSON.stringify(testConfig().migrationsDir)} }).agency(new Uint8Array(2), 10)
  `], { stdio: 'ignore' })
  t.teardown(() => { sandbox.kill('SIGKILL') })
  const workerPid = await until(() => existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : undefined)
  t.ok(workerPid !== undefined && runs(workerPid), 'the worker runs its job')
  sandbox.kill('SIGKILL')
  t.ok(await until(() => runs(workerPid!) ? undefined : true), 'the worker is gone soon after the sandbox was killed')
})

/** The first value `probe` gives within 10 s, polling every 50 ms (undefined: none came). */
async function until<T> (probe: () => T | undefined): Promise<T | undefined> {
  for (const started = Date.now(); Date.now() - started < 10_000; await new Promise((resolve) => setTimeout(resolve, 50))) {
    const value = probe()
    if (value !== undefined) return value
  }
  return undefined
}
