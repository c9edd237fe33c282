import t from 'tap'
import { join } from 'node:path'
import { ROOT } from '../../../src/config.js'
import { closeDatabase, openDatabase } from '../../../src/db/database.js'
import { createSessionRepository } from '../../../src/db/sessions.js'
import { UnitOfWork } from '../../../src/db/unit-of-work.js'
import { Clock } from '../../../src/domain/clock.js'
import { ReportRunner } from '../../../src/domain/examiner/report-runner.js'
import { createExaminer, FLUSH_INTERVAL_MS, type RequestRecord } from '../../../src/domain/examiner/sessions.js'
import { AGENCY, build } from '../../helpers/app.js'
import { TEST_WORLD } from '../../helpers/examiner.js'
import { startSession, sleep, vendor } from '../../helpers/examiner.js'

function open (t: { teardown: (fn: () => void) => void }) {
  const db = openDatabase({ file: ':memory:', migrationsDir: join(ROOT, 'migrations') })
  t.teardown(() => closeDatabase(db))
  const sql = new UnitOfWork(db)
  let commits = 0
  sql.onCommit(() => commits++)
  return { db, sql, commits: () => commits }
}

const request = (over: Partial<RequestRecord> = {}): RequestRecord => ({
  atMs: 0, realMs: 0, elapsedMs: 1, method: 'GET', url: '/vendor/agencies?version=4.0', operation: 'agencies', status: 200, journalId: 1, clientId: 'abc', ...over
})

t.test('a session records up to its cap, then stops and is marked capped (also after a restart)', async (t) => {
  const { sql } = open(t)
  const clock = new Clock()
  const examiner = createExaminer({ repo: createSessionRepository(sql), clock, cap: 5, clientsOf: async () => [], agencyExists: () => true, reports: new ReportRunner(), worldFacts: async () => TEST_WORLD })
  const { id } = await examiner.start({ clientId: 'abc' })
  for (let i = 1; i <= 4; i++) examiner.record(request({ journalId: i }))
  t.match(await examiner.get(id), { recorded: 4, capped: false })
  examiner.record(request({ journalId: 5 }))
  t.match(await examiner.get(id), { recorded: 5, capped: false }, 'exactly the cap: nothing left out yet')
  for (let i = 6; i <= 9; i++) examiner.record(request({ journalId: i }))
  t.match(await examiner.get(id), { recorded: 5, capped: true })
  examiner.close()
  const reopened = createExaminer({ repo: createSessionRepository(sql), clock, cap: 5, clientsOf: async () => [], agencyExists: () => true, reports: new ReportRunner(), worldFacts: async () => TEST_WORLD })
  t.match(await reopened.get(id), { recorded: 5, capped: true }, 'the count and the mark are stored')
  reopened.record(request({ journalId: 10 }))
  const report = await reopened.report(id)
  t.equal(report.session.recorded, 5)
  t.same(report.coverage.operations.find((o) => o.operation === 'agencies')?.outcomes, { 200: 5 }, 'the first five requests')
})

t.test('recorded requests are written in one transaction per flush, without the change signal', async (t) => {
  const { db, sql, commits } = open(t)
  const examiner = createExaminer({ repo: createSessionRepository(sql), clock: new Clock(), clientsOf: async () => [], agencyExists: () => true, reports: new ReportRunner(), worldFacts: async () => TEST_WORLD })
  const { id } = await examiner.start({})
  for (let i = 1; i <= 50; i++) examiner.record(request({ journalId: i }))
  const count = () => (db.prepare('SELECT coalesce(sum(count), 0) AS n FROM examiner_log').get() as { n: number }).n
  t.equal(count(), 0, 'waiting in memory')
  await sleep(FLUSH_INTERVAL_MS * 3)
  t.equal(count(), 50, 'written by the timer')
  t.equal((db.prepare('SELECT count(*) AS n FROM examiner_log').get() as { n: number }).n, 1, 'one chunk')
  await examiner.mirror(id, { agencyId: 1001, clients: [{ clientNumber: 1000, modified: '2026-01-01T00:00:00Z' }] })
  await examiner.end(id)
  t.equal(commits(), 0, 'starting, recording, mirrors and ending signal no change to the read model')
})

t.test('recording every read does not drop the cached reads', async (t) => {
  const app = await build(t)
  const read = () => vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/client/1000?version=4.0`)
  await startSession(app)
  const first = await read()
  t.equal(first.statusCode, 200)
  // A cached row is the same frozen object on every read; a dropped cache loads a new one.
  const cachedBefore = app.worlds.default.clients.get(AGENCY.main, 1000)
  t.equal(app.worlds.default.clients.get(AGENCY.main, 1000), cachedBefore, 'cached')
  await sleep(FLUSH_INTERVAL_MS * 3)
  await read()
  await sleep(FLUSH_INTERVAL_MS * 3)
  t.equal((await app.inject({ method: 'GET', url: '/_sandbox/sessions/1' })).json().recorded, 2, 'both reads recorded and flushed')
  t.equal(app.worlds.default.clients.get(AGENCY.main, 1000), cachedBefore, 'the same cached row after flushes of recorded requests')
  await app.inject({ method: 'PATCH', url: `/_sandbox/agencies/${AGENCY.main}/clients/1000`, payload: { details: { status: 'DeadFile' } } })
  t.not(app.worlds.default.clients.get(AGENCY.main, 1000), cachedBefore, 'a change to the data drops it (the check can fail)')
})
