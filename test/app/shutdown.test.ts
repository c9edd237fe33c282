/**
 * SIGTERM ends `agency-sandbox serve` promptly whatever runs: a simulator catch-up, long reports,
 * a request held by a fault. In-flight requests get SANDBOX_DRAIN_SECONDS (0 here but for the
 * last test), then work a request waits on stops (its request answers), requests still in flight
 * are answered 503 with Retry-After, and the examiner's recordings are written and the database
 * closed. The target is 2 s from the drain's end; the bound asserted below leaves room for a
 * loaded machine. Before, a catch-up held the event loop so the signal was never handled, and a
 * request in flight kept the process for 10 s. test/app/drain.test.ts has the drain under load.
 */
import t from 'tap'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../../src/app.js'
import { DEMO, demoFixture, testConfig } from '../helpers/app.js'
import { serveProcess, type Served } from '../helpers/process.js'

/** Far below what the sandbox took before (10 s, or never), far above the 2 s it takes now. */
const EXIT_BOUND_MS = 6_000

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const json = { 'content-type': 'application/json' }

async function stopped (t: { comment: (message: string) => void }, served: Served): Promise<{ code: number | null, ms: number }> {
  const started = Date.now()
  served.child.kill('SIGTERM')
  const code = await Promise.race([served.exited, sleep(30_000).then(() => 'still running' as const)])
  const ms = Date.now() - started
  if (code === 'still running') served.child.kill('SIGKILL')
  t.comment(`exited ${ms} ms after SIGTERM (code ${code})`)
  return { code: code === 'still running' ? null : code, ms }
}

t.test('during a simulator catch-up at the largest advance', async (t) => {
  const served = await serveProcess({ SANDBOX_DB: ':memory:', SANDBOX_DRAIN_SECONDS: '0' })
  t.teardown(() => served.child.kill('SIGKILL'))
  const c = served.url + '/_sandbox'
  await fetch(`${c}/clock`, { method: 'PUT', headers: json, body: JSON.stringify({ now: '2026-12-01T00:00:00Z', frozen: true }) })
  t.equal((await fetch(`${c}/simulator`, { method: 'POST', headers: json, body: JSON.stringify({ ratePerMinute: 60000, seed: 1, clockTime: true }) })).status, 200)
  const advance = fetch(`${c}/clock/advance`, { method: 'POST', headers: json, body: JSON.stringify({ seconds: 315_360_000 }) })
    .then(async (res) => ({ status: res.status, body: await res.json() as { simulator?: { changes: number } } }), () => ({ status: 0, body: {} as { simulator?: { changes: number } } }))
  let changes = 0
  while (changes === 0) changes = ((await (await fetch(`${c}/simulator`)).json()) as { changes: number }).changes
  t.ok(changes < 10_000, `the catch-up is under way (${changes} changes)`)
  const { code, ms } = await stopped(t, served)
  t.equal(code, 0, 'a clean exit')
  t.ok(ms < EXIT_BOUND_MS, `ended ${ms} ms after the signal`)
  const answered = await advance
  t.equal(answered.status, 200, 'the advance was answered with the changes made before the signal')
  t.ok((answered.body.simulator?.changes ?? 10_000) < 10_000)
})

t.test('during long reports (a session at its cap of 200,000 requests, several asked at once)', { timeout: 180_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-shutdown-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const db = join(dir, 'sandbox.db')
  // the session, recorded in the database the server will open
  const app = await buildApp(testConfig({ db }), { fixture: demoFixture() })
  const { examiner } = app.worlds.default
  const { id } = await examiner.start({ name: 'at its cap', clientId: 'abc' })
  const at = Date.now()
  for (let i = 0; i < 200_000; i++) {
    examiner.record({ atMs: at + i, realMs: at + i, elapsedMs: 1, journalId: i + 1, clientId: 'abc', method: 'GET', url: `/vendor/agency/1001/client/${1000 + (i % 250)}?version=4.0`, operation: 'getClient', status: 200 })
  }
  await app.close()

  const served = await serveProcess({ SANDBOX_DB: db, SANDBOX_DRAIN_SECONDS: '0' })
  t.teardown(() => served.child.kill('SIGKILL'))
  const reports = Array.from({ length: 8 }, () => fetch(`${served.url}/_sandbox/sessions/${id}/report`).then((res) => res.status, () => 0))
  await sleep(500) // the first report is being computed, the others wait for the worker
  const { code, ms } = await stopped(t, served)
  t.equal(code, 0, 'a clean exit')
  t.ok(ms < EXIT_BOUND_MS, `ended ${ms} ms after the signal`)
  const statuses = await Promise.all(reports)
  t.ok(statuses.every((s) => s === 503 || s === 0), `reports in progress answer 503 (or their connection closed): ${statuses.join(', ')}`)
})

t.test('while a slow request is in flight (a fault holds it for a minute): answered 503 with Retry-After after the drain, the database closed cleanly', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-shutdown-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const db = join(dir, 'sandbox.db')
  const served = await serveProcess({ SANDBOX_DB: db, SANDBOX_DRAIN_SECONDS: '2' })
  t.teardown(() => served.child.kill('SIGKILL'))
  await fetch(`${served.url}/_sandbox/faults`, { method: 'POST', headers: json, body: JSON.stringify({ match: { path: '/vendor/agencies' }, effect: { status: 503, delayMs: 60_000 } }) })
  const session = await (await fetch(`${served.url}/_sandbox/sessions`, { method: 'POST', headers: json, body: '{}' })).json() as { id: number }
  await fetch(`${served.url}/vendor/agency/1001/offices?version=4.0`, { headers: { authorization: DEMO } })
  const slow = fetch(`${served.url}/vendor/agencies?version=4.0`, { headers: { authorization: DEMO } })
    .then(async (res) => ({ status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text() }), () => ({ status: 0, retryAfter: null, body: '' }))
  await sleep(300)
  const { code, ms } = await stopped(t, served)
  t.equal(code, 0, 'the database closed cleanly: exit 0')
  t.ok(ms >= 2000 - 100, `the request in flight had the drain's 2 s (${ms} ms)`)
  t.ok(ms < 2000 + EXIT_BOUND_MS, `ended ${ms} ms after the signal`)
  const answered = await slow
  t.equal(answered.status, 503, 'the held request was answered 503')
  t.equal(answered.retryAfter, '1', 'with Retry-After')
  t.match(answered.body, /not done within the 2 s it gives requests in flight/)
  t.match(served.lines.join('\n'), /1 request still in flight after 2 s: answered 503/)
  t.notOk(existsSync(db + '-wal'), 'the database was closed (its write-ahead log checkpointed)')

  // the session's recordings were written before the database closed
  const again = await serveProcess({ SANDBOX_DB: db })
  t.teardown(() => again.child.kill('SIGKILL'))
  const kept = await (await fetch(`${again.url}/_sandbox/sessions/${session.id}`)).json() as { recorded: number }
  t.ok(kept.recorded >= 1, `the session kept its recorded requests (${kept.recorded})`)
  again.child.kill('SIGTERM')
  t.equal(await again.exited, 0)
})
