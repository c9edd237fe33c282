/**
 * The start-up fixture file is read (and validated) only when needed. At start, to seed an empty
 * database, where it starts; over data kept from an earlier start, the first reset to it reads it
 * on the fixture worker, not on the event loop that answers requests. Either way the answers are
 * the same: the fixture's data, its warnings, and a file that became invalid is the same error.
 */
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { execFile } from 'node:child_process'
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { buildApp } from '../../src/app.js'
import { FixtureRunner } from '../../src/domain/worlds/fixture-runner.js'
import { ROOT } from '../../src/config.js'
import { demoFixture, grownDemoFixture, testConfig, type Teardown } from '../helpers/app.js'
import { stubWorker } from '../helpers/stub-worker.js'

/** A database file seeded from a copy of the demo fixture by one app, then opened by another (the data kept). */
async function secondStart (t: Teardown): Promise<{ app: FastifyInstance, fixtureFile: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-start-fixture-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const fixtureFile = join(dir, 'fixture.json')
  copyFileSync(join(ROOT, 'fixtures', 'demo.json'), fixtureFile)
  // no fixture given: the apps read the file, as `serve` does
  const config = testConfig({ db: join(dir, 'sandbox.db'), fixtures: fixtureFile })
  const first = await buildApp(config)
  await first.close()
  const app = await buildApp(config)
  t.teardown(() => app.close())
  return { app, fixtureFile }
}

const INVALID = '{"integrations": [], "agencies": [{"agencyId": "one"}]}'
const clients = demoFixture().agencies.reduce((n, a) => n + a.clients.length, 0)

t.test('over kept data, the first reset reads the start-up fixture file (on the fixture worker), and answers its data', async (t) => {
  const { app } = await secondStart(t)
  const res = await app.inject({ method: 'POST', url: '/_sandbox/reset' })
  t.equal(res.statusCode, 200, res.body)
  t.equal(res.json().counts.clients, clients, 'the fixture\'s clients')
  const again = await app.inject({ method: 'POST', url: '/_sandbox/reset' })
  t.same(again.json(), res.json(), 'a second reset answers the same (the fixture read once)')
})

t.test('a start-up fixture file made invalid after the start: the reset fails as a read at start would (the error in the log), and the server answers on', async (t) => {
  const { app, fixtureFile } = await secondStart(t)
  writeFileSync(fixtureFile, INVALID)
  const res = await app.inject({ method: 'POST', url: '/_sandbox/reset' })
  t.equal(res.statusCode, 500, res.body)
  t.equal((await app.inject({ url: '/_sandbox/health' })).statusCode, 200)
})

/** A stub fixture worker's answer: a fixture naming the file it was asked for, and one warning. */
const READ_ON_THE_WORKER = "send({ id, outcome: { ok: true, file: { fixture: { readOnTheWorker: job.file }, warnings: ['from the worker'] } } })"

t.test('the runner asks its worker for a fixture file up to the body cap, with its warnings; a larger file is read where it is asked', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-start-fixture-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const runner = new FixtureRunner({ workerFile: stubWorker(t, READ_ON_THE_WORKER), migrationsDir: testConfig().migrationsDir })
  t.teardown(() => runner.close())
  const demo = join(ROOT, 'fixtures', 'demo.json')
  const warnings: string[] = []
  t.same(await runner.fixtureFile(demo, (line) => warnings.push(line)), { readOnTheWorker: demo }, 'read on the worker')
  t.same(warnings, ['from the worker'], 'its warnings reported')
  const large = join(dir, 'large.json')
  writeFileSync(large, JSON.stringify(grownDemoFixture((fixture) => JSON.stringify(fixture).length > 8 * 1024 * 1024)))
  const read = await runner.fixtureFile(large) as unknown as { agencies?: unknown[], readOnTheWorker?: string }
  t.equal(read.readOnTheWorker, undefined, 'a file over 8 MiB is not sent to the worker (its heap is bounded for bodies)')
  t.equal(read.agencies?.length, demoFixture().agencies.length, 'it is read here')
})

t.test('a file the worker cannot read is read where it is asked: the same FixtureError as a read at start', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-start-fixture-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const failing = stubWorker(t, "send({ id, failure: 'cannot' })")
  const runner = new FixtureRunner({ workerFile: failing, migrationsDir: testConfig().migrationsDir })
  t.teardown(() => runner.close())
  const file = join(dir, 'fixture.json')
  writeFileSync(file, INVALID)
  await t.rejects(runner.fixtureFile(file), { name: 'FixtureError', source: file, message: /agencies\[0\]\.agencyId/ })
  copyFileSync(join(ROOT, 'fixtures', 'demo.json'), file)
  t.equal((await runner.fixtureFile(file)).agencies.length, demoFixture().agencies.length, 'a valid one is read whole')
})

t.test('a command that waits only for the worker gets its answer: the worker process keeps it running while it has a job', async (t) => {
  const dist = (path: string) => pathToFileURL(join(ROOT, 'dist', 'src', ...path.split('/'))).href
  // nothing but the job keeps this process's event loop running (no server, no timer)
  const script = `
    import { FixtureRunner } from ${JSON.stringify(dist('domain/worlds/fixture-runner.js'))}
    const runner = new FixtureRunner({ workerFile: new URL(${JSON.stringify(dist('domain/worlds/fixture-worker.js'))}), migrationsDir: ${JSON.stringify(testConfig().migrationsDir)} })
    const fixture = await runner.fixtureFile(${JSON.stringify(join(ROOT, 'fixtures', 'demo.json'))})
    console.log('agencies', fixture.agencies.length)
  `
  const done = await new Promise<{ code: number | null, stdout: string }>((resolve) => {
    execFile(process.execPath, ['--input-type=module', '-e', script], { timeout: 30_000 }, (error, stdout) => resolve({ code: error === null ? 0 : (error.code as number | null) ?? null, stdout }))
  })
  t.equal(done.code, 0, 'the command ends by itself (13: it ended with the job unanswered)')
  t.equal(done.stdout.trim(), `agencies ${demoFixture().agencies.length}`, 'with the fixture read on the worker')
})
