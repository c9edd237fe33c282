/**
 * The start-up fixture file is read (and validated) only when needed. At start, to seed an empty
 * database, where it starts; over data kept from an earlier start, the first reset to it reads it
 * on the fixture worker, not on the event loop that answers requests. Either way the answers are
 * the same: the fixture's data, its warnings, and a file that became invalid is the same error.
 */
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../../src/app.js'
import { FixtureRunner } from '../../src/domain/worlds/fixture-runner.js'
import { ROOT } from '../../src/config.js'
import { demoFixture, grownDemoFixture, testConfig, type Teardown } from '../helpers/app.js'

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

/** A fixture worker that answers every job with a fixture naming the file it was asked for, and one warning. */
const STUB_WORKER = new URL('data:text/javascript,' + encodeURIComponent(`
  import { parentPort } from 'node:worker_threads'
  parentPort.on('message', ({ id, job }) => parentPort.postMessage({ id, outcome: { ok: true, file: { fixture: { readOnTheWorker: job.file }, warnings: ['from the worker'] } } }))
`))

t.test('the runner asks its worker for a fixture file up to the body cap, with its warnings; a larger file is read where it is asked', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-start-fixture-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const runner = new FixtureRunner({ workerFile: STUB_WORKER, migrationsDir: testConfig().migrationsDir })
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
  const failing = new URL('data:text/javascript,' + encodeURIComponent(`
    import { parentPort } from 'node:worker_threads'
    parentPort.on('message', ({ id }) => parentPort.postMessage({ id, failure: 'cannot' }))
  `))
  const runner = new FixtureRunner({ workerFile: failing, migrationsDir: testConfig().migrationsDir })
  t.teardown(() => runner.close())
  const file = join(dir, 'fixture.json')
  writeFileSync(file, INVALID)
  await t.rejects(runner.fixtureFile(file), { name: 'FixtureError', source: file, message: /agencies\[0\]\.agencyId/ })
  copyFileSync(join(ROOT, 'fixtures', 'demo.json'), file)
  t.equal((await runner.fixtureFile(file)).agencies.length, demoFixture().agencies.length, 'a valid one is read whole')
})
