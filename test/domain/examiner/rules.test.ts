import t from 'tap'
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { AGENCY, basic, build } from '../../helpers/app.js'
import { findingOf, reportOf, sleep, startSession, vendor } from '../../helpers/examiner.js'
import { createClientBody, logNote } from '../../helpers/writes.js'
import { RULES } from '../../../src/schemas/examiner.js'

/**
 * Each traffic rule, broken by one integration and kept by another: the finding is present with
 * the right examples, or absent.
 */

const ctl = (app: FastifyInstance, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) =>
  app.inject({ method, url: `/_sandbox${url}`, ...(payload === undefined ? {} : { payload: payload as string }) })

/** Ids of the journal entries, newest last. */
const journalIds = async (app: FastifyInstance) => ((await ctl(app, 'GET', '/requests')).json() as Array<{ id: number }>).map((e) => e.id)
const lastJournalId = async (app: FastifyInstance) => (await journalIds(app)).at(-1)!

/** A session of integration abc that has listed its agencies (so agency-not-listed stays quiet). */
async function session (app: FastifyInstance) {
  const s = await startSession(app, { clientId: 'abc' })
  await vendor(app, 'GET', '/vendor/agencies?version=4.0')
  return s.id
}

const LOG = (agencyId: number, client = 1000) => `/vendor/agency/${agencyId}/client/${client}/log?version=4.0`
const ONE = (client = 1000) => `/vendor/agency/${AGENCY.main}/client/${client}?version=4.0`

t.test('retry-after-ignored', async (t) => {
  t.test('a request repeated at once after its 429 breaks it', async (t) => {
    const app = await build(t)
    const id = await session(app)
    await ctl(app, 'POST', '/faults', { match: { path: '/vendor/agency/*/client/*' }, effect: { status: 429, headers: { 'retry-after': '2' } }, times: 1 })
    t.equal((await vendor(app, 'GET', ONE())).statusCode, 429)
    t.equal((await vendor(app, 'GET', ONE())).statusCode, 200)
    const repeat = await lastJournalId(app)
    const finding = findingOf(await reportOf(app, id), 'retry-after-ignored')
    t.match(finding, { severity: 'error', count: 1, examples: [{ journalId: repeat, method: 'GET', path: '/vendor/agency/1001/client/1000', status: 200 }] })
    t.match(finding!.examples[0].detail, /after the 429 of request \d+ asking for 2 s/)
  })
  t.test('a request repeated after its Retry-After keeps it', async (t) => {
    const app = await build(t)
    const id = await session(app)
    await ctl(app, 'POST', '/faults', { match: { path: '/vendor/agency/*/client/*' }, effect: { status: 429, headers: { 'retry-after': '1' } }, times: 1 })
    t.equal((await vendor(app, 'GET', ONE())).statusCode, 429)
    t.equal((await vendor(app, 'GET', ONE(1001))).statusCode, 200, 'another request meanwhile is no repeat')
    await sleep(1050)
    t.equal((await vendor(app, 'GET', ONE())).statusCode, 200)
    const report = await reportOf(app, id)
    t.notOk(findingOf(report, 'retry-after-ignored'))
    t.match(report.coverage.checklist.find((c) => c.item === '429-handled'), { exercised: true })
  })
})

t.test('write-resent-after-202', async (t) => {
  t.test('a saved write sent again under a new RefId breaks it', async (t) => {
    const app = await build(t)
    const id = await session(app)
    const note = logNote()
    t.equal((await vendor(app, 'POST', LOG(AGENCY.disconnected), { payload: note })).statusCode, 202)
    const first = await lastJournalId(app)
    t.equal((await vendor(app, 'POST', LOG(AGENCY.disconnected), { payload: { ...note, refId: randomUUID() } })).statusCode, 202)
    const resend = await lastJournalId(app)
    const report = await reportOf(app, id)
    const finding = findingOf(report, 'write-resent-after-202')
    t.match(finding, { severity: 'error', count: 1, examples: [{ journalId: resend, method: 'POST', status: 202 }] })
    t.match(finding!.examples[0].detail, new RegExp(`request ${first} \\(answered 202\\)`))
    t.notOk(findingOf(report, 'write-retried-new-refid'), 'counted once, under the 202 rule')
    t.match(report.coverage.checklist.find((c) => c.item === '202-handled'), { exercised: false, journalId: first })
  })
  t.test('a saved write taken as success, or retried with its RefId, keeps it', async (t) => {
    const app = await build(t)
    const id = await session(app)
    const note = logNote()
    t.equal((await vendor(app, 'POST', LOG(AGENCY.disconnected), { payload: note })).statusCode, 202)
    t.equal((await vendor(app, 'POST', LOG(AGENCY.disconnected), { payload: note })).statusCode, 202, 'same RefId: answered as before')
    t.equal((await vendor(app, 'POST', LOG(AGENCY.disconnected), { payload: logNote({ note: 'another note' }) })).statusCode, 202)
    const report = await reportOf(app, id)
    t.notOk(findingOf(report, 'write-resent-after-202'))
    t.match(report.coverage.checklist.find((c) => c.item === '202-handled'), { exercised: true })
  })
})

t.test('write-retried-new-refid', async (t) => {
  t.test('the same content under a new RefId after a 200 breaks it (log notes, in any key casing, and created clients)', async (t) => {
    const app = await build(t)
    const id = await session(app)
    const note = logNote()
    t.equal((await vendor(app, 'POST', LOG(AGENCY.main), { payload: note })).statusCode, 200)
    const pascal = { RefId: randomUUID(), TS: note.ts, Channel: note.channel, Note: note.note }
    t.equal((await vendor(app, 'POST', LOG(AGENCY.main), { payload: pascal })).statusCode, 200)
    const retry = await lastJournalId(app)
    const body = createClientBody({ RefId: randomUUID() })
    t.equal((await vendor(app, 'POST', `/vendor/agency/${AGENCY.main}/client?version=4.0`, { payload: body })).statusCode, 200)
    t.equal((await vendor(app, 'POST', `/vendor/agency/${AGENCY.main}/client?version=4.0`, { payload: { ...body, RefId: randomUUID() } })).statusCode, 200)
    const finding = findingOf(await reportOf(app, id), 'write-retried-new-refid')
    t.match(finding, { severity: 'error', count: 2, examples: [{ journalId: retry, status: 200 }, { path: '/vendor/agency/1001/client' }] })
  })
  t.test('a retry with the same RefId, or different content, keeps it', async (t) => {
    const app = await build(t)
    const id = await session(app)
    const note = logNote()
    await vendor(app, 'POST', LOG(AGENCY.main), { payload: note })
    await vendor(app, 'POST', LOG(AGENCY.main), { payload: note })
    await vendor(app, 'POST', LOG(AGENCY.main), { payload: logNote({ note: '<p>Second call</p>' }) })
    await vendor(app, 'POST', LOG(AGENCY.main, 1001), { payload: { ...note, refId: randomUUID() } })
    t.notOk(findingOf(await reportOf(app, id), 'write-retried-new-refid'), 'the same note on another client is another write')
  })
})

t.test('refid-conflict', async (t) => {
  t.test('a RefId reused with a different body breaks it', async (t) => {
    const app = await build(t)
    const id = await session(app)
    const note = logNote()
    t.equal((await vendor(app, 'POST', LOG(AGENCY.main), { payload: note })).statusCode, 200)
    t.equal((await vendor(app, 'POST', LOG(AGENCY.main), { payload: { ...note, note: '<p>Changed</p>' } })).statusCode, 409)
    const reuse = await lastJournalId(app)
    t.match(findingOf(await reportOf(app, id), 'refid-conflict'), { severity: 'error', count: 1, examples: [{ journalId: reuse, status: 409 }] })
  })
  t.test('a RefId reused after a 400 (nothing was recorded) keeps it', async (t) => {
    const app = await build(t)
    const id = await session(app)
    const note = logNote()
    t.equal((await vendor(app, 'POST', LOG(AGENCY.main), { payload: { ...note, channel: 0 } })).statusCode, 400)
    t.equal((await vendor(app, 'POST', LOG(AGENCY.main), { payload: note })).statusCode, 200)
    t.notOk(findingOf(await reportOf(app, id), 'refid-conflict'))
  })
})

t.test('n-plus-one-reads', async (t) => {
  t.test('20 single reads of one agency within a minute break it', async (t) => {
    const app = await build(t)
    const id = await session(app)
    for (let n = 1000; n < 1025; n++) await vendor(app, 'GET', ONE(n))
    const ids = await journalIds(app)
    const finding = findingOf(await reportOf(app, id), 'n-plus-one-reads')
    t.match(finding, { severity: 'warning', count: 1, examples: [{ journalId: ids.at(-6), path: '/vendor/agency/1001/client/1019' }] }, 'one run, shown at its 20th read')
  })
  t.test('19 single reads, or batches, keep it', async (t) => {
    const app = await build(t)
    const id = await session(app)
    for (let n = 1000; n < 1019; n++) await vendor(app, 'GET', ONE(n))
    for (let i = 0; i < 30; i++) await vendor(app, 'POST', `/vendor/agency/${AGENCY.main}/clients?version=4.0`, { payload: [1000 + i] })
    t.notOk(findingOf(await reportOf(app, id), 'n-plus-one-reads'))
  })
})

t.test('batch-over-limit', async (t) => {
  const numbers = (n: number) => Array.from({ length: n }, (_, i) => 1000 + i)
  t.test('a batch of 201 breaks it', async (t) => {
    const app = await build(t)
    const id = await session(app)
    t.equal((await vendor(app, 'POST', `/vendor/agency/${AGENCY.main}/clients?version=4.0`, { payload: { clientNumbers: numbers(201) } })).statusCode, 400)
    t.match(findingOf(await reportOf(app, id), 'batch-over-limit'), { severity: 'error', count: 1, examples: [{ journalId: await lastJournalId(app), status: 400, detail: '201 client numbers' }] })
  })
  t.test('a batch of 200 keeps it', async (t) => {
    const app = await build(t)
    const id = await session(app)
    t.equal((await vendor(app, 'POST', `/vendor/agency/${AGENCY.main}/clients?version=4.0`, { payload: numbers(200) })).statusCode, 200)
    t.notOk(findingOf(await reportOf(app, id), 'batch-over-limit'))
  })
})

t.test('full-sync-repeated', async (t) => {
  const list = (app: FastifyInstance, query = '') => vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/clients?version=4.0${query}`)
  t.test('a second listing without asOf breaks it', async (t) => {
    const app = await build(t)
    const id = await session(app)
    await list(app)
    await list(app, '&deleted=true')
    await list(app)
    t.match(findingOf(await reportOf(app, id), 'full-sync-repeated'), { severity: 'warning', count: 1, examples: [{ journalId: await lastJournalId(app) }] })
  })
  t.test('a full listing then listings with asOf keep it', async (t) => {
    const app = await build(t)
    const id = await session(app)
    await list(app)
    await list(app, `&asOf=${new Date().toISOString()}`)
    await list(app, `&asOf=${new Date().toISOString()}&deleted=true`)
    t.notOk(findingOf(await reportOf(app, id), 'full-sync-repeated'))
  })
})

t.test('create-rate-exceeded', async (t) => {
  const create = (app: FastifyInstance) => vendor(app, 'POST', `/vendor/agency/${AGENCY.main}/client?version=4.0`, { payload: createClientBody({ RefId: randomUUID() }) })
  t.test('creations over the rate break it', async (t) => {
    const app = await build(t)
    const id = await session(app)
    const answers = await Promise.all(Array.from({ length: 30 }, () => create(app)))
    const refused = answers.filter((a) => a.statusCode === 429).length
    t.ok(refused >= 1, `${refused} refused`)
    t.match(findingOf(await reportOf(app, id), 'create-rate-exceeded'), { severity: 'warning', count: refused, examples: [{ status: 429 }] })
  })
  t.test('creations within the rate, and an injected 429, keep it', async (t) => {
    const app = await build(t)
    const id = await session(app)
    await ctl(app, 'POST', '/faults', { match: { method: 'POST', path: '/vendor/agency/*/client' }, effect: { status: 429, headers: { 'retry-after': '1' } }, times: 1 })
    t.equal((await create(app)).statusCode, 429)
    for (let i = 0; i < 5; i++) t.equal((await create(app)).statusCode, 200)
    t.notOk(findingOf(await reportOf(app, id), 'create-rate-exceeded'))
  })
})

t.test('auth-failed', async (t) => {
  t.test('a wrong secret breaks it', async (t) => {
    const app = await build(t)
    const id = await session(app)
    t.equal((await vendor(app, 'GET', ONE(), { authorization: basic('abc', 'not-the-secret') })).statusCode, 401)
    t.match(findingOf(await reportOf(app, id), 'auth-failed'), { severity: 'error', count: 1, examples: [{ journalId: await lastJournalId(app), status: 401 }] })
  })
  t.test('good credentials keep it', async (t) => {
    const app = await build(t)
    const id = await session(app)
    await vendor(app, 'GET', ONE())
    t.notOk(findingOf(await reportOf(app, id), 'auth-failed'))
  })
})

t.test('agency-not-listed', async (t) => {
  t.test('requests to an agency before (or without) any agencies call break it', async (t) => {
    const app = await build(t)
    const { id } = await startSession(app, { clientId: 'abc' })
    await vendor(app, 'GET', ONE())
    const unlisted = await lastJournalId(app)
    await vendor(app, 'GET', `/vendor/agency/${AGENCY.optedOut}/offices?version=4.0`)
    const finding = findingOf(await reportOf(app, id), 'agency-not-listed')
    t.match(finding, { severity: 'warning', count: 2, examples: [{ journalId: unlisted }, { path: '/vendor/agency/1003/offices', status: 403 }] })
    t.match(finding!.message, /1001, 1003/)
  })
  t.test('requests to listed agencies keep it', async (t) => {
    const app = await build(t)
    const id = await session(app)
    await vendor(app, 'GET', ONE())
    await vendor(app, 'GET', `/vendor/agency/${AGENCY.disconnected}/offices?version=4.0`)
    t.notOk(findingOf(await reportOf(app, id), 'agency-not-listed'))
  })
})

t.test('unknown-fields', async (t) => {
  t.test('ignored body keys and query parameters break it, named', async (t) => {
    const app = await build(t)
    const id = await session(app)
    t.equal((await vendor(app, 'POST', LOG(AGENCY.main), { payload: logNote({ Notte: 'typo' }) })).statusCode, 200)
    const typo = await lastJournalId(app)
    t.equal((await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/clients?version=4.0&since=2026-01-01T00:00:00Z`)).statusCode, 200)
    const finding = findingOf(await reportOf(app, id), 'unknown-fields')
    t.match(finding, { severity: 'warning', count: 2, examples: [{ journalId: typo, detail: 'ignored: key Notte' }, { detail: 'ignored: query since' }] })
    t.match(finding!.message, /logNote key Notte, changedClients query since/)
  })
  t.test('known keys and parameters keep it', async (t) => {
    const app = await build(t)
    const id = await session(app)
    await vendor(app, 'POST', LOG(AGENCY.main), { payload: logNote() })
    await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/clients?version=4.0&asOf=2026-01-01T00:00:00Z&deleted=true`)
    await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/clients?VERSION=4.0&ASOF=2026-01-01T00:00:00Z&Deleted=TRUE`)
    await vendor(app, 'GET', `${ONE()}&include=Details,People`)
    t.notOk(findingOf(await reportOf(app, id), 'unknown-fields'))
  })
})

t.test('the 403 checklist item, and the verdict', async (t) => {
  const app = await build(t)
  const id = await session(app)
  t.equal((await vendor(app, 'GET', `/vendor/agency/${AGENCY.limited}/users?version=4.0`)).statusCode, 403, 'scope user-list missing')
  let report = await reportOf(app, id)
  t.match(report.coverage.checklist.find((c) => c.item === '403-handled'), { exercised: false }, 'nothing after the 403 yet')
  await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/offices?version=4.0`)
  report = await reportOf(app, id)
  t.match(report.coverage.checklist.find((c) => c.item === '403-handled'), { exercised: true })
  t.equal(report.verdict, 'no-evidence', 'no sync yet: no evidence, whatever the findings')
  await vendor(app, 'GET', ONE())
  report = await reportOf(app, id)
  t.same(report.evidence, { requests: 4, listings: 0, clientReads: 1 })
  t.equal(report.verdict, 'pass', 'info only')
  await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/offices?version=4.0&sinse=x`)
  t.equal((await reportOf(app, id)).verdict, 'warn', 'a warning')
  await vendor(app, 'GET', ONE(), { authorization: basic('abc', 'nope') })
  report = await reportOf(app, id)
  t.equal(report.verdict, 'fail', 'an error')
  t.same(report.findings.map((f) => f.severity), ['error', 'warning', 'info'], 'errors first')
})

t.test('every catalogued rule has a stable id, a one-line title and a fix', async (t) => {
  const ids = RULES.map((r) => r.id)
  t.equal(new Set(ids).size, ids.length)
  for (const r of RULES) {
    t.match(r.id, /^[a-z0-9]+(-[a-z0-9]+)*$/)
    t.notMatch(r.title, /\n/)
    t.ok(r.fix.length > 10)
  }
})
