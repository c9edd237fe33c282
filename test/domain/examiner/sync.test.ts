import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { AGENCY, build, queryHosted } from '../../helpers/app.js'
import { findingOf, reportOf, startSession, vendor } from '../../helpers/examiner.js'
import type { Report, SyncCheck } from '../../../src/schemas/examiner.js'
import { FLUSH_INTERVAL_MS } from '../../../src/domain/examiner/sessions.js'

/**
 * The sync rules, declared (the mirror the partner posts) and inferred (from its requests), each
 * broken by one integration and kept by another. Agency 1001 has 260 clients, 6 of them deleted.
 */

const DELETED = [1100, 1192, 1209, 1210, 1220, 1231]
const ctl = (app: FastifyInstance, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
  app.inject({ method, url: `/_sandbox${url}`, ...(payload === undefined ? {} : { payload: payload as string }) })
const advance = (app: FastifyInstance, seconds = 60) => ctl(app, 'POST', '/clock/advance', { seconds })
const now = async (app: FastifyInstance): Promise<string> => (await ctl(app, 'GET', '/clock')).json().now
const lastJournalId = async (app: FastifyInstance) => ((await ctl(app, 'GET', '/requests')).json() as Array<{ id: number }>).at(-1)!.id

type Stored = Map<number, string>

/** Lists changed clients (with the query) and reads every id in batches of 200; returns what was stored. */
async function sync (app: FastifyInstance, query = '', stored: Stored = new Map(), skip: number[] = []): Promise<Stored> {
  const res = await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/clients?version=4.0${query}`)
  const ids = (res.json() as number[]).filter((n) => !skip.includes(n))
  for (let i = 0; i < ids.length; i += 200) {
    const batch = await vendor(app, 'POST', `/vendor/agency/${AGENCY.main}/clients?version=4.0`, { payload: { clientNumbers: ids.slice(i, i + 200) } })
    for (const c of batch.json() as Array<{ clientNumber: number, details: { modified: string } }>) stored.set(c.clientNumber, c.details.modified)
  }
  return stored
}

/** Lists deleted clients and drops them from the store. */
async function syncDeleted (app: FastifyInstance, stored: Stored, query = ''): Promise<void> {
  const res = await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/clients?version=4.0&deleted=true${query}`)
  for (const n of res.json() as number[]) stored.delete(n)
}

async function begin (app: FastifyInstance) {
  await ctl(app, 'PUT', '/clock', { now: '2027-01-04T09:00:00Z', frozen: true })
  const { id } = await startSession(app, { clientId: 'abc' })
  await vendor(app, 'GET', '/vendor/agencies?version=4.0')
  return id
}

const mirror = (app: FastifyInstance, id: number, stored: Stored, extra: Record<string, unknown> = {}) =>
  ctl(app, 'POST', `/sessions/${id}/mirror`, { agencyId: AGENCY.main, clients: [...stored].map(([clientNumber, modified]) => ({ clientNumber, modified })), ...extra })

const check = (report: Report, source: 'declared' | 'inferred'): SyncCheck => report.sync.find((s) => s.agencyId === AGENCY.main && s.source === source)!
const SYNC_RULES = ['mirror-missing', 'mirror-stale', 'mirror-deleted-kept', 'mirror-unknown', 'sync-missed', 'sync-stale', 'deletion-missed', 'deleted-never-synced']
const syncFindings = (report: Report) => report.findings.filter((f) => SYNC_RULES.includes(f.rule)).map((f) => f.rule)
const empty = { count: 0, clientNumbers: [] }

/** A full sync, then the agency changes client 1000 and deletes 1001, then `second` (a second sync from the first one's start, or more changes). */
async function twoSyncs (app: FastifyInstance, second: (stored: Stored, asOf: string) => Promise<void>): Promise<{ id: number, stored: Stored }> {
  const id = await begin(app)
  const firstStart = await now(app)
  const stored = await sync(app)
  await syncDeleted(app, stored)
  await advance(app)
  await ctl(app, 'PATCH', `/agencies/${AGENCY.main}/clients/1000`, { details: { status: 'DeadFile' } })
  await ctl(app, 'DELETE', `/agencies/${AGENCY.main}/clients/1001`)
  await advance(app)
  await second(stored, firstStart)
  return { id, stored }
}

/** The second sync as it should be: changed clients since the first one's start, read, and the deletions since. */
const incremental = (app: FastifyInstance) => async (stored: Stored, asOf: string) => {
  await sync(app, `&asOf=${asOf}`, stored)
  await syncDeleted(app, stored, `&asOf=${asOf}`)
}

t.test('a complete sync, deletions observed and a true mirror: no sync finding, two clean checks', async (t) => {
  const app = await build(t)
  const id = await begin(app)
  const stored = await sync(app)
  await syncDeleted(app, stored)
  t.equal(stored.size, 254)
  t.equal((await mirror(app, id, stored)).statusCode, 200)
  const report = await reportOf(app, id)
  t.same(syncFindings(report), [])
  t.match(check(report, 'declared'), { missing: empty, stale: empty, deletedKept: empty, unknown: empty })
  t.match(check(report, 'inferred'), { missing: empty, stale: empty, deletedKept: empty, unknown: empty })
})

t.test('declared: missing, stale, deleted kept and unknown clients are named', async (t) => {
  const app = await build(t)
  const id = await begin(app)
  const stored = await sync(app)
  await syncDeleted(app, stored)
  stored.delete(1005)
  stored.set(1006, '2001-01-01T00:00:00Z')
  stored.set(1100, '2001-01-01T00:00:00Z')
  stored.set(999999, '2001-01-01T00:00:00Z')
  await mirror(app, id, stored)
  const report = await reportOf(app, id)
  t.same(syncFindings(report), ['mirror-missing', 'mirror-stale', 'mirror-deleted-kept', 'mirror-unknown'])
  for (const rule of ['mirror-missing', 'mirror-stale', 'mirror-deleted-kept', 'mirror-unknown']) {
    t.match(findingOf(report, rule), { severity: 'error', count: 1 }, rule)
  }
  t.match(check(report, 'declared'), {
    missing: { count: 1, clientNumbers: [1005] },
    stale: { count: 1, clientNumbers: [1006] },
    deletedKept: { count: 1, clientNumbers: [1100] },
    unknown: { count: 1, clientNumbers: [999999] }
  })
})

t.test('declared: upTo compares a partial mirror only up to that client number', async (t) => {
  const app = await build(t)
  const id = await begin(app)
  const stored = await sync(app)
  await syncDeleted(app, stored)
  const part = new Map([...stored].filter(([n]) => n <= 1050))
  await mirror(app, id, part, { upTo: 1050 })
  let report = await reportOf(app, id)
  t.same(syncFindings(report), [])
  t.match(check(report, 'declared'), { upTo: 1050, missing: empty })
  await mirror(app, id, part)
  report = await reportOf(app, id)
  t.match(findingOf(report, 'mirror-missing'), { count: 254 - part.size }, 'without upTo the rest is missing; the later post replaces the earlier')
})

t.test('changes after the partner\'s last listing are not held against it (a simulator changing data)', async (t) => {
  const app = await build(t)
  // the partner syncs once; the agency changes 1000, deletes 1001 and adds 5000 after it
  const { id, stored } = await twoSyncs(app, async () => {
    await ctl(app, 'PUT', `/agencies/${AGENCY.main}/clients/5000`, { clientNumber: 5000, details: { officeId: 1, modified: await now(app) } })
    await advance(app)
  })
  await mirror(app, id, stored)
  const report = await reportOf(app, id)
  t.same(syncFindings(report), [])
})

t.test('a change made while a listing\'s answer is sent is not held against it (the listing could not hold it)', async (t) => {
  // The change commits after the listing read the agency and before the listing is recorded (a
  // simulator's timer can fire there): it is placed after the listing, where it happened for the partner.
  const app = await build(t, {
    beforeReady: (app) => app.addHook('onSend', async (request, _reply, payload) => {
      if (request.headers['x-change-while-answered'] === undefined) return payload
      await advance(app)
      await ctl(app, 'PATCH', `/agencies/${AGENCY.main}/clients/1000`, { details: { status: 'DeadFile' } })
      // the answer takes a while to leave (a long listing, a busy machine): over PostgreSQL, the
      // recorded requests' timer ships the change before the listing is recorded, and must not place it first
      await new Promise((resolve) => setTimeout(resolve, 3 * FLUSH_INTERVAL_MS))
      return payload
    })
  })
  const id = await begin(app)
  const firstStart = await now(app)
  const stored = await sync(app)
  await syncDeleted(app, stored)
  await advance(app)
  const listing = await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/clients?version=4.0&asOf=${firstStart}`, { headers: { 'x-change-while-answered': '1' } })
  t.same(listing.json(), [], 'the listing was read before the change')
  await syncDeleted(app, stored, `&asOf=${firstStart}`)
  await mirror(app, id, stored)
  const report = await reportOf(app, id)
  t.same(syncFindings(report), [])
  t.match(check(report, 'declared'), { stale: empty }, 'the mirror is current as of the listing')
  t.match(check(report, 'inferred'), { stale: empty }, 'so are the reads')
})

t.test('over PostgreSQL, what a session records reaches the world\'s log without a write (the 100 ms flush)', async (t) => {
  const app = await build(t)
  const entries = async () => Number(await queryHosted(app, "SELECT count(*) FROM world_log WHERE world_id = 'default' AND records IS NOT NULL"))
  if (Number.isNaN(await entries())) {
    t.pass('over SQLite the records are in the world\'s own file')
    return
  }
  await begin(app)
  const before = await entries()
  await vendor(app, 'GET', '/vendor/agencies?version=4.0')
  const deadline = performance.now() + 2000
  while (await entries() === before && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, FLUSH_INTERVAL_MS))
  t.ok(await entries() > before, `in the log within 2 s (the records' timer runs every ${FLUSH_INTERVAL_MS} ms, the world's flush every 100 ms)`)
})

t.test('a change committed once the session ended, while its report is computed, is not judged', async (t) => {
  // Its modified time can be within the session (a simulator stamps a change when its tick comes
  // and makes it a moment later; here the clock stands still), but the session's log never held
  // it: what the client was at the end is not known.
  const app = await build(t)
  const { id, stored } = await twoSyncs(app, incremental(app))
  await mirror(app, id, stored)
  await advance(app)
  const [ended, changed] = await Promise.all([
    ctl(app, 'POST', `/sessions/${id}/end`),
    ctl(app, 'PATCH', `/agencies/${AGENCY.main}/clients/1000`, { details: { status: 'Active' } })
  ])
  t.same([ended.statusCode, changed.statusCode], [200, 200])
  t.equal(changed.json().details.modified, await now(app), 'changed at the instant the session ended')
  const report = await reportOf(app, id)
  t.same(syncFindings(report), [])
  t.match(check(report, 'declared'), { stale: empty })
})

t.test('inferred: sync-missed names the clients listed and never read', async (t) => {
  t.test('three skipped clients break it', async (t) => {
    const app = await build(t)
    const id = await begin(app)
    const stored = await sync(app, '', new Map(), [1003, 1004, 1250])
    await syncDeleted(app, stored)
    const report = await reportOf(app, id)
    t.same(syncFindings(report), ['sync-missed'])
    const finding = findingOf(report, 'sync-missed')!
    t.match(finding, { severity: 'error', count: 3, examples: [{ method: 'GET', path: '/vendor/agency/1001/clients', status: 200 }] })
    t.match(finding.examples[0].detail, /3 clients listed but never read \(1003, 1004, 1250\)/)
    t.match(check(report, 'inferred'), { missing: { count: 3, clientNumbers: [1003, 1004, 1250] } })
  })
})

t.test('inferred: sync-stale and deletion-missed after a change between two syncs', async (t) => {
  t.test('listing again without reading or listing deletions breaks both', async (t) => {
    const app = await build(t)
    const { id } = await twoSyncs(app, async (_stored, asOf) => {
      await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/clients?version=4.0&asOf=${asOf}`)
    })
    const report = await reportOf(app, id)
    t.same(syncFindings(report), ['sync-stale', 'deletion-missed'])
    t.match(findingOf(report, 'sync-stale'), { count: 1, examples: [{ method: 'POST', path: '/vendor/agency/1001/clients', detail: /client 1000 read at .*, changed at/ }] })
    t.match(findingOf(report, 'deletion-missed'), { count: 1, examples: [{ journalId: await lastJournalId(app), detail: /\(1001\)/ }] })
    t.match(check(report, 'inferred'), { stale: { count: 1, clientNumbers: [1000] }, deletedKept: { count: 1, clientNumbers: [1001] } })
  })
  t.test('an incremental sync from the previous start keeps both', async (t) => {
    const app = await build(t)
    const { id } = await twoSyncs(app, incremental(app))
    const report = await reportOf(app, id)
    t.same(syncFindings(report), [])
  })
  t.test('an asOf at the end of the previous sync misses the changes made during it', async (t) => {
    const app = await build(t)
    const { id } = await twoSyncs(app, async (stored) => {
      const late = new Date(Date.parse(await now(app)) - 30_000).toISOString()
      await sync(app, `&asOf=${late}`, stored)
      await syncDeleted(app, stored, `&asOf=${late}`)
    })
    t.same(syncFindings(await reportOf(app, id)), ['sync-stale', 'deletion-missed'])
  })
  t.test('a 404 on reading a deleted client counts as observing the deletion', async (t) => {
    const app = await build(t)
    const { id } = await twoSyncs(app, async (stored, asOf) => {
      await sync(app, `&asOf=${asOf}`, stored)
      t.equal((await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/client/1001?version=4.0`)).statusCode, 404)
    })
    t.same(syncFindings(await reportOf(app, id)), [])
  })
})

t.test('deleted-never-synced', async (t) => {
  t.test('an agency with deleted clients synced without deleted=true breaks it', async (t) => {
    const app = await build(t)
    const id = await begin(app)
    await sync(app)
    const listing = (await ctl(app, 'GET', '/requests?path=/vendor/agency/1001/clients&method=GET')).json().at(-1).id
    const report = await reportOf(app, id)
    t.match(findingOf(report, 'deleted-never-synced'), { severity: 'error', count: 1, examples: [{ journalId: listing }] })
    t.match(findingOf(report, 'deleted-never-synced')!.message, /1001/)
  })
  t.test('an agency without deleted clients, or deletions listed, keeps it', async (t) => {
    const app = await build(t)
    const id = await begin(app)
    await vendor(app, 'GET', `/vendor/agency/${AGENCY.limited}/clients?version=4.0`)
    const stored = await sync(app)
    await syncDeleted(app, stored)
    t.notOk(findingOf(await reportOf(app, id), 'deleted-never-synced'))
  })
})

t.test('the deleted clients of the demo agency are the ones this test names', async (t) => {
  const app = await build(t)
  const res = await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/clients?version=4.0&deleted=true`)
  t.same(res.json(), DELETED)
})
