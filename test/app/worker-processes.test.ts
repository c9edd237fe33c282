/**
 * Fixture bodies and examiner reports are read and computed in worker processes
 * (src/worker-process.ts): how their runners answer when such a process runs out of its heap or
 * is killed before it answers.
 */
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ApiError } from '../../src/errors.js'
import { ReportRunner } from '../../src/domain/examiner/report-runner.js'
import type { ReportJob } from '../../src/domain/examiner/report-job.js'
import { FixtureRunner } from '../../src/domain/worlds/fixture-runner.js'
import { testConfig } from '../helpers/app.js'

/** A worker module that runs `onJob` (JavaScript) for each job it is sent. */
function workerThat (t: Test, onJob: string): URL {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-worker-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'worker.mjs')
  writeFileSync(file, `process.on('disconnect', () => process.exit(0))\nprocess.on('message', () => { ${onJob} })\n`)
  return pathToFileURL(file)
}

function fixtureRunnerWith (t: Test, onJob: string): FixtureRunner {
  const runner = new FixtureRunner({ workerFile: workerThat(t, onJob), migrationsDir: testConfig().migrationsDir })
  t.teardown(() => runner.close())
  return runner
}

function reportRunnerWith (t: Test, onJob: string): ReportRunner {
  const runner = new ReportRunner({ workerFile: workerThat(t, onJob) })
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
  const refused = await failureOf(runner.reset(BODY, 1000))
  t.equal(refused.status, 507)
  t.match(refused.detail, /needs more than the 256 MB/)
  t.notOk(runner.running, 'the worker is gone')
  t.equal((await failureOf(runner.reset(BODY, 1000))).status, 507, 'the next body started a worker of its own')
})

t.test('a fixture worker killed before it answers: 503 with Retry-After (never a 500), nothing applied', async (t) => {
  const runner = fixtureRunnerWith(t, KILLED)
  const failed = await failureOf(runner.agency(BODY, 1000))
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
