import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { MAX_MIRRORS_PER_SESSION, MAX_OPEN_SESSIONS } from '../../../src/domain/examiner/sessions.js'
import type { Report, Session } from '../../../src/schemas/examiner.js'
import { AGENCY, build } from '../../helpers/app.js'
import { findingOf, reportOf, startSession, vendor } from '../../helpers/examiner.js'

/**
 * Sessions that can be trusted: a report is kept when its session ends, whatever happens to the
 * data after; a reset ends the sessions a test left open; sessions can be deleted; their number
 * and their mirrors are bounded; a change missed at a frozen instant is still reported.
 */

const ctl = (app: FastifyInstance, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
  app.inject({ method, url: `/_sandbox${url}`, ...(payload === undefined ? {} : { payload: payload as string }) })

/** The careless integration's batch of 201 numbers: a batch-over-limit error. */
const overLimit = (app: FastifyInstance) =>
  vendor(app, 'POST', `/vendor/agency/${AGENCY.main}/clients?version=4.0`, { payload: { clientNumbers: Array.from({ length: 201 }, (_, i) => 1000 + i) } })

const rulesOf = (report: Report) => report.findings.map((f) => `${f.rule} ${f.count}`)

t.test('a report is kept when its session ends: the same verdict and findings after a reset and new traffic', async (t) => {
  const app = await build(t)
  const { id } = await startSession(app)
  await overLimit(app)
  const ended = await ctl(app, 'POST', `/sessions/${id}/end`)
  t.equal(ended.json().verdict, 'fail')
  const atEnd = await reportOf(app, id)
  t.ok(findingOf(atEnd, 'batch-over-limit'))
  t.equal(atEnd.session.endedBy, 'end')

  await ctl(app, 'POST', '/reset')
  await vendor(app, 'GET', '/vendor/agencies?version=4.0')
  const later = await reportOf(app, id)
  t.same(later, atEnd, 'the report it ended with, whole')
  t.same((await ctl(app, 'POST', `/sessions/${id}/end`)).json(), ended.json(), 'ending it again answers the same summary')
})

t.test('the sync check of an ended session is judged against the data as it stood when it ended', async (t) => {
  const app = await build(t)
  const { id } = await startSession(app)
  const ids = (await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/clients?version=4.0`)).json() as number[]
  const stored: Array<{ clientNumber: number, modified: string }> = []
  for (let i = 0; i < ids.length; i += 200) {
    const batch = await vendor(app, 'POST', `/vendor/agency/${AGENCY.main}/clients?version=4.0`, { payload: { clientNumbers: ids.slice(i, i + 200) } })
    for (const c of batch.json() as Array<{ clientNumber: number, details: { modified: string } }>) stored.push({ clientNumber: c.clientNumber, modified: c.details.modified })
  }
  await ctl(app, 'POST', `/sessions/${id}/mirror`, { agencyId: AGENCY.main, clients: stored })
  await ctl(app, 'POST', `/sessions/${id}/end`)
  const atEnd = await reportOf(app, id)
  t.equal(findingOf(atEnd, 'mirror-stale'), undefined, 'a true mirror when it ended')
  // the agency changes a client afterwards: the session's verdict must not change
  await ctl(app, 'PATCH', `/agencies/${AGENCY.main}/clients/${stored[0].clientNumber}`, { details: { status: 'DeadFile' } })
  await ctl(app, 'PUT', '/clock', { now: '2031-01-01T00:00:00Z' })
  t.same(rulesOf(await reportOf(app, id)), rulesOf(atEnd))
  t.same((await reportOf(app, id)).sync, atEnd.sync)
})

t.test('a reset ends the open sessions, their reports say so; keep: sessions leaves them open', async (t) => {
  const app = await build(t)
  const left = await startSession(app)
  await overLimit(app)
  await ctl(app, 'POST', '/reset')
  const session = (await ctl(app, 'GET', `/sessions/${left.id}`)).json() as Session
  t.ok(session.endedAt, 'ended by the reset')
  t.equal(session.endedBy, 'reset')
  const report = await reportOf(app, left.id)
  t.equal(report.session.endedBy, 'reset', 'the report says what ended it')
  t.ok(findingOf(report, 'batch-over-limit'), 'judged on what it recorded before the reset')
  await vendor(app, 'GET', '/vendor/agencies?version=4.0')
  t.equal((await ctl(app, 'GET', `/sessions/${left.id}`)).json().recorded, 1, 'it records nothing after')

  const kept = await startSession(app)
  await ctl(app, 'POST', '/reset', { keep: ['sessions'] })
  await vendor(app, 'GET', '/vendor/agencies?version=4.0')
  const open = (await ctl(app, 'GET', `/sessions/${kept.id}`)).json() as Session
  t.notOk(open.endedAt, 'kept open')
  t.equal(open.recorded, 1, 'and recording')
})

t.test('a session is deleted with its report and mirrors', async (t) => {
  const app = await build(t)
  const open = await startSession(app)
  const ended = await startSession(app)
  await ctl(app, 'POST', `/sessions/${ended.id}/end`)
  for (const { id } of [open, ended]) {
    t.equal((await ctl(app, 'DELETE', `/sessions/${id}`)).statusCode, 204)
    t.equal((await ctl(app, 'GET', `/sessions/${id}`)).statusCode, 404)
    t.equal((await ctl(app, 'GET', `/sessions/${id}/report`)).statusCode, 404)
  }
  t.equal((await ctl(app, 'DELETE', `/sessions/${open.id}`)).statusCode, 404, 'once')
  await vendor(app, 'GET', '/vendor/agencies?version=4.0')
  t.same((await ctl(app, 'GET', '/sessions')).json(), [])
})

t.test(`at most ${MAX_OPEN_SESSIONS} open sessions per world, each request recorded once whatever their number`, async (t) => {
  const app = await build(t)
  const sessions: Session[] = []
  for (let i = 0; i < MAX_OPEN_SESSIONS; i++) sessions.push(await startSession(app, i % 2 === 0 ? { clientId: 'abc' } : {}))
  const refused = await ctl(app, 'POST', '/sessions', { clientId: 'abc' })
  t.equal(refused.statusCode, 409)
  t.match(refused.json().detail, /open sessions, its most/)
  for (let i = 0; i < 10; i++) await vendor(app, 'GET', '/vendor/agencies?version=4.0')
  // the requests kept once in the world's log of recorded requests, in chunks (hosted mode: in the world's own database of records)
  const logged = async () => app.worlds.default.records.query<[], { n: number }>("SELECT coalesce(sum(count), 0) AS n FROM examiner_log WHERE world_id = 'default'").get()?.n
  t.equal((await ctl(app, 'GET', `/sessions/${sessions[0].id}`)).json().recorded, 10)
  t.equal((await ctl(app, 'GET', `/sessions/${sessions[MAX_OPEN_SESSIONS - 1].id}`)).json().recorded, 10)
  t.equal(await logged(), 10, `10 requests logged once each for ${MAX_OPEN_SESSIONS} sessions`)
  t.equal((await ctl(app, 'DELETE', `/sessions/${sessions[0].id}`)).statusCode, 204)
  t.equal((await ctl(app, 'POST', '/sessions', {})).statusCode, 201, 'room again')
  await ctl(app, 'POST', '/reset')
  t.equal(await logged(), 0, 'the reset ended them all, and the log they shared is gone')
})

t.test('mirrors: of an agency the world has, of at most 20 agencies, never of an ended session', async (t) => {
  const app = await build(t)
  const { id } = await startSession(app)
  const post = (agencyId: number) => ctl(app, 'POST', `/sessions/${id}/mirror`, { agencyId, clients: [] })
  const unknown = await post(999999)
  t.equal(unknown.statusCode, 404)
  t.match(unknown.json().detail, /No agency 999999/)
  for (let n = 0; n < MAX_MIRRORS_PER_SESSION; n++) {
    const agencyId = 5000 + n
    const added = await ctl(app, 'POST', '/agencies', {
      agencyId,
      name: `Agency ${n}`,
      defaultOfficeId: 1,
      users: [],
      clients: [],
      offices: [{ officeId: 1, officeDescription: 'Main', subAgencyName: '', primaryOffice: true, addressLine1: '', addressLine2: '', city: '', state: '', zipcode: '' }]
    })
    t.equal(added.statusCode, 201, `agency ${agencyId}`)
    t.equal((await post(agencyId)).statusCode, 200)
  }
  const over = await post(AGENCY.main)
  t.equal(over.statusCode, 409)
  t.match(over.json().detail, /mirrors of 20 agencies/)
  t.equal((await post(5000)).statusCode, 200, 'a mirror of an agency already mirrored replaces it')
  await ctl(app, 'POST', `/sessions/${id}/end`)
  t.equal((await post(5001)).statusCode, 409, 'an ended session takes no mirror')
})

t.test('a change made and missed while the clock stands still is reported', async (t) => {
  const app = await build(t)
  await ctl(app, 'PUT', '/clock', { now: '2027-01-04T09:00:00Z', frozen: true })
  const { id } = await startSession(app)
  const first = await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/clients?version=4.0`)
  const syncedAt = new Date(String(first.headers.date)).toISOString()
  const ids = first.json() as number[]
  const stored = new Map<number, string>()
  for (let i = 0; i < ids.length; i += 200) {
    const batch = await vendor(app, 'POST', `/vendor/agency/${AGENCY.main}/clients?version=4.0`, { payload: { clientNumbers: ids.slice(i, i + 200) } })
    for (const c of batch.json() as Array<{ clientNumber: number, details: { modified: string } }>) stored.set(c.clientNumber, c.details.modified)
  }
  // the agency changes a client at the very instant of the sync
  await ctl(app, 'PATCH', `/agencies/${AGENCY.main}/clients/1007`, { details: { status: 'Lead' } })
  // the next sync asks for changes since it last synced, as the Date header said: the change is not listed
  const next = await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/clients?version=4.0&asOf=${encodeURIComponent(syncedAt)}`)
  t.same(next.json(), [], 'the live service would not list it either')
  await ctl(app, 'POST', `/sessions/${id}/mirror`, { agencyId: AGENCY.main, clients: [...stored].map(([clientNumber, modified]) => ({ clientNumber, modified })) })
  const report = await reportOf(app, id)
  t.equal(report.verdict, 'fail')
  const declared = report.sync.find((s) => s.source === 'declared')
  const inferred = report.sync.find((s) => s.source === 'inferred')
  t.same(declared?.stale.clientNumbers, [1007], 'the mirror holds the client as it was before the change')
  t.same(inferred?.stale.clientNumbers, [1007], 'its last read came before the change')
  t.ok(findingOf(report, 'mirror-stale'))
  t.ok(findingOf(report, 'sync-stale'))
})
