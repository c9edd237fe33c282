/**
 * The control plane's largest work happens away from the event loop that answers requests:
 * reports (a session at its cap of 200,000 requests, several at once, mirrors at their caps) on
 * the report worker, and bodies at their caps (8 MiB fixture documents for a reset, a new world
 * or an agency; mirrors of 100,000 clients) on the fixture worker. Each test asks for the work,
 * then checks that health requests are answered while it runs (a count, not a time: a blocked
 * loop answers none), and comments the longest event-loop delay measured meanwhile. An ended
 * session's report is computed once, however often it is ended or read.
 */
import t from 'tap'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import type { Fixture } from '../../src/fixture/schema.js'
import { FIXTURE_BODY_LIMIT } from '../../src/http/json-body.js'
import { MIRROR_CLIENTS_MAX, SESSION_REQUEST_CAP } from '../../src/schemas/examiner.js'
import { AGENCY, build, demoFixture } from '../helpers/app.js'
import { findingOf, reportOf, startSession, vendor } from '../helpers/examiner.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Runs `work` and asks for health every few milliseconds until it is answered (the pause lets the
 * event loop reach its next turn, which an injected request may not need); `started` tells when
 * the work has left this thread, from which point health is counted.
 */
async function whileRunning<T> (app: FastifyInstance, work: () => Promise<T>, started: () => boolean): Promise<{ result: T, answered: number, handedOver: boolean, maxDelayMs: number }> {
  const delay = monitorEventLoopDelay({ resolution: 5 })
  delay.enable()
  const state = { done: false }
  const running = work().finally(() => { state.done = true })
  let answered = 0
  let handedOver = false
  while (!state.done) {
    await sleep(5)
    if (!handedOver) handedOver = started()
    if (!handedOver || state.done) continue
    const health = await app.inject({ url: '/_sandbox/health' })
    if (health.statusCode === 200 && !state.done) answered++
  }
  const result = await running
  delay.disable()
  return { result, answered, handedOver, maxDelayMs: delay.max / 1e6 }
}

async function recordAtCap (app: FastifyInstance): Promise<number> {
  const { examiner } = app.worlds.default
  const { id } = await examiner.start({ name: 'at its cap', clientId: 'abc' })
  const at = Date.now()
  for (let i = 0; i < SESSION_REQUEST_CAP; i++) {
    examiner.record({ atMs: at + i, realMs: at + i, elapsedMs: 1, journalId: i + 1, clientId: 'abc', method: 'GET', url: `/vendor/agency/1001/client/${1000 + (i % 250)}?version=4.0`, operation: 'getClient', status: 200 })
  }
  examiner.close()
  return id
}

t.test("an ended session's report is computed once, however often it is ended and read", async (t) => {
  const app = await build(t)
  const { reports } = app.worlds
  const session = await startSession(app)
  await vendor(app, 'GET', '/vendor/agencies?version=4.0')
  await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/clients?version=4.0`)
  const before = reports.computed
  const ends = await Promise.all([1, 2, 3].map(() => app.inject({ method: 'POST', url: `/_sandbox/sessions/${session.id}/end` })))
  t.same(ends.map((r) => r.statusCode), [200, 200, 200], 'ending three times at once')
  t.same(ends[1].json(), ends[0].json(), 'each answers the same summary')
  for (const format of ['json', 'junit', 'html', 'json', 'json']) {
    t.equal((await app.inject({ url: `/_sandbox/sessions/${session.id}/report?format=${format}` })).statusCode, 200)
  }
  t.equal((await app.inject({ method: 'POST', url: `/_sandbox/sessions/${session.id}/end` })).statusCode, 200, 'and once more')
  t.equal(reports.computed - before, 1, 'one report computed')
})

t.test('reports at the cap (200,000 requests), one and four at once, are computed while other requests are answered', { timeout: 180_000 }, async (t) => {
  const app = await build(t)
  const id = await recordAtCap(app)
  const { reports } = app.worlds
  let before = reports.computed
  const one = await whileRunning(app, () => reportOf(app, id), () => reports.computed > before)
  t.equal(one.result.session.recorded, SESSION_REQUEST_CAP)
  t.ok(one.handedOver, 'the report went to the report worker')
  t.ok(one.answered >= 5, `health answered ${one.answered} times while it was computed`)
  t.comment(`one report at the cap: longest event-loop delay ${one.maxDelayMs.toFixed(0)} ms`)
  before = reports.computed
  const four = await whileRunning(app, () => Promise.all([1, 2, 3, 4].map(() => reportOf(app, id))), () => reports.computed > before)
  t.equal(four.result.length, 4)
  t.ok(four.answered >= 5, `health answered ${four.answered} times while they were computed`)
  t.comment(`four reports at the cap at once: longest event-loop delay ${four.maxDelayMs.toFixed(0)} ms`)
})

/** A mirror of `count` clients numbered from 1000 (most unknown to the demo agency). */
const mirrorOf = (agencyId: number, count: number) => JSON.stringify({
  agencyId,
  clients: Array.from({ length: count }, (_, i) => ({ clientNumber: 1000 + i, modified: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString() }))
})

t.test('mirrors at their cap are read on the fixture worker, and the report compares them one at a time', { timeout: 180_000 }, async (t) => {
  const app = await build(t)
  const { fixtures } = app.worlds
  const session = await startSession(app)
  for (const agencyId of [AGENCY.main, AGENCY.limited]) {
    const body = mirrorOf(agencyId, MIRROR_CLIENTS_MAX)
    const posted = await whileRunning(app, () => app.inject({ method: 'POST', url: `/_sandbox/sessions/${session.id}/mirror`, headers: { 'content-type': 'application/json' }, payload: body }),
      () => fixtures.reading > 0)
    t.same(posted.result.json(), { agencyId, clients: MIRROR_CLIENTS_MAX }, `${(body.length / 1048576).toFixed(1)} MiB posted`)
    t.ok(posted.handedOver, 'the body went to the fixture worker')
    t.ok(posted.answered >= 1, `health answered ${posted.answered} times while it was read`)
    t.comment(`a mirror of ${MIRROR_CLIENTS_MAX} clients: longest event-loop delay ${posted.maxDelayMs.toFixed(0)} ms`)
  }
  const over = await app.inject({ method: 'POST', url: `/_sandbox/sessions/${session.id}/mirror`, headers: { 'content-type': 'application/json' }, payload: mirrorOf(AGENCY.main, MIRROR_CLIENTS_MAX + 1) })
  t.equal(over.statusCode, 400, 'one client more is refused')
  t.equal(over.json().errors[0].field, 'clients')
  const report = await reportOf(app, session.id)
  const declared = report.sync.filter((s) => s.source === 'declared')
  t.same(declared.map((s) => s.agencyId), [AGENCY.main, AGENCY.limited], 'both mirrors compared')
  t.ok(findingOf(report, 'mirror-unknown'), 'numbers the agencies never had are found')
})

/** A fixture of about `bytes`: the demo's first agency with its clients copied under new numbers. */
function largeFixture (bytes: number): Fixture {
  const fixture = demoFixture()
  const agency = fixture.agencies.find((a) => a.agencyId === AGENCY.main)!
  const originals = agency.clients.slice()
  let copy = 1
  while (JSON.stringify(fixture).length < bytes - 40_000) {
    for (const c of originals) agency.clients.push({ ...structuredClone(c), clientNumber: c.clientNumber + copy * 10_000 })
    copy++
    if (JSON.stringify(fixture).length > bytes) {
      agency.clients.splice(agency.clients.length - originals.length)
      break
    }
  }
  return fixture
}

t.test('fixture bodies at their cap (a reset, a new world, an agency) are read on the fixture worker', { timeout: 180_000 }, async (t) => {
  const app = await build(t)
  const { fixtures } = app.worlds
  const fixture = largeFixture(FIXTURE_BODY_LIMIT)
  const clients = fixture.agencies.reduce((n, a) => n + a.clients.length, 0)
  const post = (url: string, body: string) => () => app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: body })
  const cases: Array<[string, () => Promise<LightMyRequestResponse>, (res: LightMyRequestResponse) => void]> = [
    ['POST /_sandbox/reset', post('/_sandbox/reset', JSON.stringify(fixture)), (res) => t.equal(res.json().counts.clients, clients)],
    ['POST /_sandbox/worlds', post('/_sandbox/worlds', JSON.stringify({ fixture })), (res) => t.equal(res.statusCode, 201, res.body)],
    ['POST /_sandbox/agencies', post('/_sandbox/agencies', JSON.stringify({ ...fixture.agencies.find((a) => a.agencyId === AGENCY.main)!, agencyId: 9001 })), (res) => t.equal(res.statusCode, 201, res.body)]
  ]
  for (const [name, work, check] of cases) {
    const run = await whileRunning(app, work, () => fixtures.reading > 0)
    check(run.result)
    t.ok(run.handedOver, `${name}: the body went to the fixture worker`)
    t.ok(run.answered >= 1, `${name}: health answered ${run.answered} times while it was read and loaded`)
    t.comment(`${name} with ${(JSON.stringify(fixture).length / 1048576).toFixed(1)} MiB: longest event-loop delay ${run.maxDelayMs.toFixed(0)} ms`)
  }
  t.equal((await app.inject({ url: '/vendor/agency/9001/offices?version=4.0', headers: { authorization: 'Basic YWJjOjEyMw==' } })).statusCode, 403, 'the agency was added (and abc has no subscription to it)')
  t.equal((await app.inject({ url: '/_sandbox/agencies' })).json().length, fixture.agencies.length + 1, 'the reset fixture\'s agencies and the one added')
})

for (const where of ['in memory', 'in a file']) {
  t.test(`the state of a world (${where}) loaded from a fixture at the cap is written on the fixture worker`, { timeout: 180_000 }, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-state-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    const app = await build(t, { fixture: largeFixture(FIXTURE_BODY_LIMIT), config: { db: where === 'in memory' ? ':memory:' : join(dir, 'sandbox.db') } })
    const { fixtures } = app.worlds
    const run = await whileRunning(app, () => app.inject({ url: '/_sandbox/state' }), () => fixtures.reading > 0)
    t.equal(run.result.statusCode, 200)
    t.equal(run.result.body, JSON.stringify(app.worlds.default.state()), 'byte for byte the document the world makes')
    t.ok(run.handedOver, 'the state went to the fixture worker')
    t.ok(run.answered >= 1, `health answered ${run.answered} times while it was written`)
    t.comment(`state of ${(run.result.body.length / 1048576).toFixed(1)} MiB: longest event-loop delay ${run.maxDelayMs.toFixed(0)} ms`)
  })
}
