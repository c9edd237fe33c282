/**
 * Hosted mode: examiner sessions are one for every instance. A session started on one records
 * what both answer from the next request on, is counted, listed, reported and ended alike on
 * either; the sync check places a change committed on one among the reads answered by the other
 * in the order they happened; a mirror posted on one is judged on the other; a delete or a reset
 * on one reaches the other; an instance killed outright leaves what it shipped in the session.
 */
import t from 'tap'
import pg from 'pg'
import { controlCall, hostedInstances, sleep, withoutPostgres } from '../helpers/hosted.js'
import type { Report, ReportSummary, Session } from '../../src/schemas/examiner.js'

const AUTH = { authorization: 'Basic ' + Buffer.from('abc:123').toString('base64') }
const OTHER = { authorization: 'Basic ' + Buffer.from('northwind-crm:nw-sandbox-secret').toString('base64') }
const AGENCY = 1001
const JSON_BODY = { 'content-type': 'application/json' }

t.setTimeout(240_000)

const skip = withoutPostgres
{
  const cluster = hostedInstances(t)
  const control = controlCall
  const vendor = async (url: string, path: string, init: { method?: string, body?: unknown, headers?: Record<string, string> } = {}) => {
    const answer = await fetch(`${url}/vendor${path}${path.includes('?') ? '&' : '?'}version=4.0`, {
      method: init.method ?? 'GET',
      headers: { ...(init.headers ?? AUTH), ...(init.body === undefined ? {} : JSON_BODY) },
      body: init.body === undefined ? undefined : JSON.stringify(init.body)
    })
    const text = await answer.text()
    return { status: answer.status, json: (text === '' ? undefined : JSON.parse(text)) as unknown }
  }
  const session = async (url: string, id: number) => (await control<Session>(url, 'GET', `/sessions/${id}`)).json
  const rules = (report: Report) => report.findings.map((f) => f.rule)

  /** Lists the agency's clients and reads them all in batches: a full sync of the agency. */
  const fullSync = async (url: string) => {
    const listed = (await vendor(url, `/agency/${AGENCY}/clients`)).json as number[]
    for (let i = 0; i < listed.length; i += 200) {
      await vendor(url, `/agency/${AGENCY}/clients`, { method: 'POST', body: { clientNumbers: listed.slice(i, i + 200) } })
    }
    return listed.length
  }

  t.test('one set of examiner sessions for two instances', { timeout: 200_000, skip }, async (t) => {
    const [a, b] = await Promise.all([cluster.start(), cluster.start()])

    await t.test('started on A, it records what both answer, and both count it alike', async (t) => {
      const started = await control<Session>(a.url, 'POST', '/sessions', { name: 'across', clientId: 'abc' })
      t.equal(started.status, 201, 'started on A')
      // B's very next request: it learns of the session before answering (the open sessions travel with the commit)
      for (let n = 0; n < 10; n++) t.equal((await vendor(n % 2 === 0 ? b.url : a.url, '/agencies')).status, 200)
      await vendor(b.url, '/agencies', { headers: OTHER })
      const onB = await session(b.url, started.json.id)
      t.match(onB, { id: started.json.id, name: 'across', clientId: 'abc', recorded: 10, capped: false }, 'B counts the ten, five of them answered by A, and not another integration\'s')
      t.same(await session(a.url, started.json.id), onB, 'A counts the same')
      t.same((await control<Session[]>(a.url, 'GET', '/sessions')).json, [onB], 'and lists it')
      const report = (await control<Report>(b.url, 'GET', `/sessions/${started.json.id}/report`)).json
      t.same(report.coverage.operations.find((o) => o.operation === 'agencies')?.outcomes, { 200: 10 }, 'B\'s report holds the ten')

      const ended = await control<ReportSummary>(b.url, 'POST', `/sessions/${started.json.id}/end`)
      t.equal(ended.status, 200, 'ended on B')
      for (let n = 0; n < 4; n++) await vendor(n % 2 === 0 ? a.url : b.url, '/agencies')
      const onA = await session(a.url, started.json.id)
      t.match(onA, { recorded: 10, endedBy: 'end' }, 'A sees it ended, and nothing recorded after the end')
      t.ok(onA.endedAt !== undefined, 'with its end time')
      t.same((await control<ReportSummary>(a.url, 'POST', `/sessions/${started.json.id}/end`)).json, ended.json, 'ending again on A answers the summary it ended with')
      t.equal((await control(a.url, 'DELETE', `/sessions/${started.json.id}`)).status, 204, 'deleted on A')
      t.equal((await control(b.url, 'GET', `/sessions/${started.json.id}`)).status, 404, 'gone on B')
    })

    /**
     * A full sync on B, then a change committed on A, then a listing on B: the partner must read the
     * changed client again. Read on A after the listing, it did; not read, the report says it kept
     * a stale client. Either way only by the order of the change among requests answered elsewhere.
     */
    for (const reread of [true, false]) {
      await t.test(`a change committed on one is placed among the other's requests (${reread ? 'read again' : 'not read again'})`, async (t) => {
        const { json: { id } } = await control<Session>(a.url, 'POST', '/sessions', { clientId: 'abc' })
        await vendor(a.url, '/agencies')
        t.ok(await fullSync(b.url) > 200, 'a full sync on B')
        t.equal((await control(a.url, 'PATCH', `/agencies/${AGENCY}/clients/1000`, { details: { status: 'DeadFile' } })).status, 200, 'client 1000 changed on A')
        t.equal((await vendor(b.url, `/agency/${AGENCY}/clients`)).status, 200, 'listed again on B')
        if (reread) t.equal((await vendor(a.url, `/agency/${AGENCY}/client/1000`)).status, 200, 'read again on A')
        const report = (await control<Report>(b.url, 'GET', `/sessions/${id}/report`)).json
        if (reread) t.notOk(rules(report).includes('sync-stale'), 'no stale client: the read came after the change')
        else t.match(report.findings.find((f) => f.rule === 'sync-stale'), { count: 1 }, 'client 1000 is stale: read before the change, not after')
        await control(a.url, 'DELETE', `/sessions/${id}`)
      })
    }

    await t.test('a change is noted once, by the instance that committed it (not again by each that replays it)', async (t) => {
      const { json: { id } } = await control<Session>(a.url, 'POST', '/sessions', { clientId: 'abc' })
      await control(a.url, 'PATCH', `/agencies/${AGENCY}/clients/1000`, { details: { status: 'Active' } })
      t.equal((await vendor(b.url, `/agency/${AGENCY}/client/1000`)).status, 200, 'B holds the change')
      t.equal((await session(b.url, id)).recorded, 1, 'after every instance shipped')
      const db = new pg.Client({ connectionString: cluster.url() })
      await db.connect()
      const { rows } = await db.query<{ n: string }>(
        'SELECT count(*) AS n FROM examiner_records r JOIN examiner_sessions s ON s.session_id = $1 WHERE r.world_id = s.world_id AND r.change AND r.seq >= s.start_seq', [id])
      await db.end()
      t.equal(Number(rows[0].n), 1, 'one change in the session\'s records')
      await control(a.url, 'DELETE', `/sessions/${id}`)
    })

    await t.test('a session holds nothing answered before it started, on either instance', async (t) => {
      const first = (await control<Session>(a.url, 'POST', '/sessions', {})).json
      // B's requests are still in its memory (shipped within 100 ms) when the second session starts
      for (let n = 0; n < 5; n++) await vendor(b.url, '/agencies')
      const second = (await control<Session>(a.url, 'POST', '/sessions', {})).json
      await vendor(b.url, '/agencies')
      t.equal((await session(a.url, first.id)).recorded, 6, 'the first holds all six')
      t.equal((await session(a.url, second.id)).recorded, 1, 'the second only the one after its start')
      for (const { id } of [first, second]) await control(b.url, 'DELETE', `/sessions/${id}`)
    })

    await t.test('a report names each request by its id in the shared journal, whichever instance answered it', async (t) => {
      // A's own journal runs well ahead of B's: an id of either's own journal names another request in the shared one
      for (let n = 0; n < 30; n++) await vendor(a.url, '/agencies?before=1')
      const { json: { id } } = await control<Session>(a.url, 'POST', '/sessions', { clientId: 'abc' })
      await vendor(b.url, `/agency/${AGENCY}/clients?answeredBy=b`)
      await vendor(a.url, `/agency/${AGENCY}/clients?answeredBy=a`)
      const report = (await control<Report>(b.url, 'GET', `/sessions/${id}/report`)).json
      const examples = report.findings.find((f) => f.rule === 'agency-not-listed')?.examples ?? []
      const journal = (await control<Array<{ id: number, query: Record<string, string> }>>(a.url, 'GET', '/requests?limit=1000')).json
      // the two arrived a few milliseconds apart, on two processes' clocks: their order is not asserted
      t.same(examples.map((e) => journal.find((entry) => entry.id === e.journalId)?.query.answeredBy).sort(), ['a', 'b'], 'each example is the journal entry of the request it names')
      await control(a.url, 'DELETE', `/sessions/${id}`)
    })

    await t.test('a mirror posted on A is judged on B', async (t) => {
      const { json: { id } } = await control<Session>(b.url, 'POST', '/sessions', { clientId: 'abc' })
      await vendor(a.url, '/agencies')
      const posted = await control(a.url, 'POST', `/sessions/${id}/mirror`, { agencyId: AGENCY, clients: [{ clientNumber: 999_999, modified: '2026-01-01T00:00:00Z' }] })
      t.equal(posted.status, 200, 'posted on A')
      const report = (await control<Report>(b.url, 'GET', `/sessions/${id}/report`)).json
      t.match(report.sync.find((s) => s.agencyId === AGENCY && s.source === 'declared'), { unknown: { count: 1, clientNumbers: [999_999] } }, 'B compares it')
      await control(b.url, 'DELETE', `/sessions/${id}`)
    })

    await t.test('a reset on B ends the sessions A started', async (t) => {
      const { json: { id } } = await control<Session>(a.url, 'POST', '/sessions', {})
      t.equal((await control(b.url, 'POST', '/reset')).status, 200)
      t.match(await session(a.url, id), { endedBy: 'reset' }, 'ended by the reset, on A')
      await vendor(a.url, '/agencies')
      t.equal((await session(b.url, id)).recorded, 0, 'recording nothing after it')
    })

    await t.test('records of a world deleted before they were moved are dropped, not kept forever', async (t) => {
      const db = new pg.Client({ connectionString: cluster.url() })
      await db.connect()
      await db.query("INSERT INTO examiner_shipped (instance, world_id, first_local_seq, real_ms, client_ids, changes, lines) VALUES ('late', 'w-deleted', 1, '{0}', '{abc}', '{f}', 'x')")
      t.equal((await fetch(`${b.url}/_sandbox/requests`)).status, 200, 'a read moves what was shipped')
      const { rows } = await db.query<{ n: string }>("SELECT (SELECT count(*) FROM examiner_records WHERE world_id = 'w-deleted') + (SELECT count(*) FROM examiner_shipped) AS n")
      await db.end()
      t.equal(Number(rows[0].n), 0, 'neither moved nor left waiting')
    })

    await t.test('an instance killed outright: what it shipped stays in the session', async (t) => {
      const { json: { id } } = await control<Session>(a.url, 'POST', '/sessions', { clientId: 'abc' })
      for (let n = 0; n < 5; n++) await vendor(b.url, '/agencies')
      await vendor(a.url, '/agencies')
      // shipped within FLUSH_INTERVAL_MS
      await sleep(500)
      b.child.kill('SIGKILL')
      await b.exited
      const began = Date.now()
      let answer = await control<Session>(a.url, 'GET', `/sessions/${id}`)
      if (answer.status === 503) answer = await control<Session>(a.url, 'GET', `/sessions/${id}`)
      t.equal(answer.status, 200, `answered after ${Date.now() - began} ms`)
      t.equal(answer.json.recorded, 6, 'the five B answered and the one A answered')
      t.equal((await control(a.url, 'POST', `/sessions/${id}/end`)).status, 200, 'and it ends on the survivor')
    })
  })
}
