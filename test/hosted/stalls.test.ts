/**
 * Hosted mode while PostgreSQL stalls (every server process frozen with SIGSTOP, its connections
 * open): health answers at once, 503 `degraded` naming PostgreSQL, never 200; once the owner's
 * lease on its world has run out (it cannot renew it), partner reads and writes are answered 503
 * with Retry-After within their bounds instead of waiting for the server; once it resumes, health
 * answers 200 again and the world is taken again from its log, with the write acknowledged before
 * the stall and the open examiner session as its records were last written. Nothing logs a
 * TypeError. Health's probe is cached, so a flood of health calls asks PostgreSQL once.
 */
import t from 'tap'
import { startScratchPostgres, type ScratchPostgres } from '../../scripts/scratch-postgres.js'
import { PROBE_CACHE_MS, StorageProbe } from '../../src/db/postgres/probe.js'
import { withoutPostgres, sleep } from '../helpers/hosted.js'
import { PgProxy } from '../helpers/pg-proxy.js'
import { serveProcess, type Served } from '../helpers/process.js'
import { createClientBody } from '../helpers/writes.js'

const AUTH = { authorization: 'Basic ' + Buffer.from('abc:123').toString('base64') }
const JSON_HEADERS = { 'content-type': 'application/json' }

t.setTimeout(300_000)

/** A call's answer and how long it took. */
async function timed (url: string, init: RequestInit = {}) {
  const started = Date.now()
  const res = await fetch(url, init)
  const text = await res.text()
  return { status: res.status, retryAfter: res.headers.get('retry-after'), requestId: res.headers.get('x-request-id'), text, ms: Date.now() - started }
}

t.test('PostgreSQL frozen', { skip: withoutPostgres, timeout: 240_000 }, async (t) => {
  const postgres: ScratchPostgres = await startScratchPostgres()
  t.teardown(() => postgres.destroy())
  const served: Served = await serveProcess({ SANDBOX_DATABASE_URL: postgres.url, SANDBOX_DB: ':memory:', SANDBOX_PG_STATEMENT_TIMEOUT_MS: '1000', SANDBOX_PG_CONNECT_TIMEOUT_MS: '1000' })
  t.teardown(() => served.child.kill('SIGKILL'))
  const base = served.url

  const session = await (await fetch(`${base}/_sandbox/sessions`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ name: 'through a stall', clientId: 'abc' }) })).json() as { id: number }
  t.equal((await timed(`${base}/_sandbox/health`)).status, 200, 'healthy before')
  t.equal((await timed(`${base}/vendor/agency/1001/client/1000?version=4.0`, { headers: AUTH })).status, 200)
  const before = await timed(`${base}/vendor/agency/1001/client?version=4.0`, { method: 'POST', headers: { ...AUTH, ...JSON_HEADERS }, body: JSON.stringify(createClientBody()) })
  t.equal(before.status, 200, 'a write acknowledged before the stall')
  const { clientNumber } = JSON.parse(before.text) as { clientNumber: number }
  // the session's records written to the world's log (the examiner's flush, every 100 ms)
  await sleep(500)

  postgres.freeze()
  const frozenAt = Date.now()
  t.teardown(() => postgres.thaw())
  // past the cached answer of the last probe
  await sleep(PROBE_CACHE_MS + 100)

  const health = await Promise.all(Array.from({ length: 20 }, async () => await timed(`${base}/_sandbox/health`)))
  t.same([...new Set(health.map((h) => h.status))], [503], 'health answers 503, never 200, while PostgreSQL is frozen')
  const body = JSON.parse(health[0].text) as { status: string, problems: string[] }
  t.equal(body.status, 'degraded')
  t.match(body.problems.join(' '), /PostgreSQL did not answer within 800 ms/, 'naming what is wrong')
  const slowestHealth = Math.max(...health.map((h) => h.ms))
  t.comment(`health answered in ${slowestHealth} ms at most`)
  t.ok(slowestHealth < 3000, 'at once, not after the stall')

  // past the owner's lease (2 s), which it could not renew
  await sleep(Math.max(0, frozenAt + 2500 - Date.now()))
  const read = await timed(`${base}/vendor/agency/1001/client/1000?version=4.0`, { headers: AUTH })
  const write = await timed(`${base}/vendor/agency/1001/client?version=4.0`, { method: 'POST', headers: { ...AUTH, ...JSON_HEADERS }, body: JSON.stringify(createClientBody()) })
  for (const [what, answer] of [['a read', read], ['a write', write]] as const) {
    t.equal(answer.status, 503, `${what} is answered 503`)
    t.equal(answer.retryAfter, '1', 'with Retry-After')
    t.comment(`${what} answered in ${answer.ms} ms`)
    // a claim of the world is given up after the lease's 2 s
    t.ok(answer.ms < 6000, `${what} within its bounds, not after the stall`)
  }

  postgres.thaw()
  let healthy = 0
  for (let i = 0; i < 40 && healthy !== 200; i++) {
    healthy = (await timed(`${base}/_sandbox/health`)).status
    if (healthy !== 200) await sleep(250)
  }
  t.equal(healthy, 200, 'healthy again once PostgreSQL resumes')

  let there = 0
  for (let i = 0; i < 40 && there !== 200; i++) {
    there = (await timed(`${base}/vendor/agency/1001/client/${clientNumber}?version=4.0`, { headers: AUTH })).status
    if (there !== 200) await sleep(250)
  }
  t.equal(there, 200, 'the world is taken again from its log, with the write acknowledged before the stall')
  const kept = await (await fetch(`${base}/_sandbox/sessions/${session.id}`)).json() as { recorded: number }
  t.ok(kept.recorded >= 2, `and the open examiner session with the requests recorded before it (${kept.recorded})`)
  t.notMatch(served.lines.join('\n'), /TypeError/, 'no TypeError logged')
})

t.test('health asks PostgreSQL once for a flood of calls, and again once its answer is old', { skip: withoutPostgres }, async (t) => {
  const postgres: ScratchPostgres = await startScratchPostgres()
  t.teardown(() => postgres.destroy())
  const proxy = new PgProxy(postgres.port)
  const url = await proxy.listen()
  t.teardown(async () => await proxy.close())
  const probe = new StorageProbe(url)
  const answers = await Promise.all(Array.from({ length: 50 }, async () => await probe.check()))
  t.ok(answers.every((a) => a.ok), 'PostgreSQL answers')
  t.equal(proxy.connections, 1, '50 checks at once: one question')
  await probe.check()
  t.equal(proxy.connections, 1, 'a check soon after: the same answer')
  await sleep(PROBE_CACHE_MS + 50)
  await probe.check()
  t.equal(proxy.connections, 2, 'a check once the answer is old: a new question')
})
