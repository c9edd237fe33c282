/**
 * Hosted mode: a world's examiner sessions live with the world's owner, in its log. A session
 * started through one instance records the requests sent through either, is counted, listed,
 * reported and ended alike through either; the sync check places a change made through one among
 * the reads sent through the other in the order they happened; a mirror posted through one is
 * judged through the other; a delete or a reset through one holds for both; an owner killed
 * outright leaves the session, with what it had recorded, to the instance that takes the world over.
 */
import t from 'tap'
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

  t.test('examiner sessions through two instances', { timeout: 200_000, skip }, async (t) => {
    const [a, b] = await Promise.all([cluster.start(), cluster.start()])

    await t.test('started through A, it records what is sent through both, and both count it alike', async (t) => {
      const started = await control<Session>(a.url, 'POST', '/sessions', { name: 'across', clientId: 'abc' })
      t.equal(started.status, 201, 'started through A')
      for (let n = 0; n < 10; n++) t.equal((await vendor(n % 2 === 0 ? b.url : a.url, '/agencies')).status, 200)
      await vendor(b.url, '/agencies', { headers: OTHER })
      const onB = await session(b.url, started.json.id)
      t.match(onB, { id: started.json.id, name: 'across', clientId: 'abc', recorded: 10, capped: false }, 'B counts the ten, five of them sent through A, and not another integration\'s')
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

    await t.test('a session holds nothing answered before it started, on either instance', async (t) => {
      const first = (await control<Session>(a.url, 'POST', '/sessions', {})).json
      for (let n = 0; n < 5; n++) await vendor(b.url, '/agencies')
      const second = (await control<Session>(a.url, 'POST', '/sessions', {})).json
      await vendor(b.url, '/agencies')
      t.equal((await session(a.url, first.id)).recorded, 6, 'the first holds all six')
      t.equal((await session(a.url, second.id)).recorded, 1, 'the second only the one after its start')
      for (const { id } of [first, second]) await control(b.url, 'DELETE', `/sessions/${id}`)
    })

    await t.test('a report names each request by its id in the world\'s journal, whichever instance it was sent through', async (t) => {
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

    await t.test('the owner killed outright: the instance that takes the world over holds the session and what it recorded', async (t) => {
      const { json: { id } } = await control<Session>(a.url, 'POST', '/sessions', { clientId: 'abc' })
      for (let n = 0; n < 5; n++) await vendor(b.url, '/agencies')
      await vendor(a.url, '/agencies')
      const owner = (await fetch(`${a.url}/_sandbox/sessions`)).headers.get('x-sandbox-instance') ?? ''
      const [killed, survivor] = Number(owner.split(':')[1]) === a.child.pid ? [a, b] : [b, a]
      // the examiner's records reach the world's log within FLUSH_INTERVAL_MS, and its 100 ms flush
      await sleep(500)
      killed.child.kill('SIGKILL')
      await killed.exited
      const began = Date.now()
      const answer = await control<Session>(survivor.url, 'GET', `/sessions/${id}`)
      t.equal(answer.status, 200, `answered after ${Date.now() - began} ms`)
      t.equal(answer.json.recorded, 6, 'the six requests sent before the kill')
      t.equal(answer.json.endedAt, undefined, 'still open')
      await vendor(survivor.url, '/agencies')
      t.equal((await session(survivor.url, id)).recorded, 7, 'and recording on the survivor')
      t.equal((await control(survivor.url, 'POST', `/sessions/${id}/end`)).status, 200, 'it ends there')
      const journal = (await control<unknown[]>(survivor.url, 'GET', '/requests')).json
      t.ok(journal.length <= 2, `the request journal began again on the survivor (${journal.length} entries)`)
    })
  })
}
