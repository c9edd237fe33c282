/**
 * SIGTERM ends `agency-sandbox serve` promptly whatever runs: a simulator catch-up, long reports,
 * a request held by a fault. Work a request waits on stops first (its request answers), in-flight
 * requests get SHUTDOWN_GRACE_MS, then the examiner's recordings are written and the database
 * closed at once. The target is 2 s from the signal; the bound asserted below leaves room for a
 * loaded machine. Before, a catch-up held the event loop so the signal was never handled, and a
 * request in flight kept the process for 10 s.
 */
import t from 'tap'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../../src/app.js'
import { SHUTDOWN_GRACE_MS } from '../../src/server.js'
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
  const served = await serveProcess({ SANDBOX_DB: ':memory:' })
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

  const served = await serveProcess({ SANDBOX_DB: db })
  t.teardown(() => served.child.kill('SIGKILL'))
  const reports = Array.from({ length: 8 }, () => fetch(`${served.url}/_sandbox/sessions/${id}/report`).then((res) => res.status, () => 0))
  await sleep(500) // the first report is being computed, the others wait for the worker
  const { code, ms } = await stopped(t, served)
  t.equal(code, 0, 'a clean exit')
  t.ok(ms < EXIT_BOUND_MS, `ended ${ms} ms after the signal`)
  const statuses = await Promise.all(reports)
  t.ok(statuses.every((s) => s === 503 || s === 0), `reports in progress answer 503 (or their connection closed): ${statuses.join(', ')}`)
})

t.test('while a slow request is in flight (a fault holds it for a minute): cut short after the grace, the database closed cleanly', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-shutdown-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const db = join(dir, 'sandbox.db')
  const served = await serveProcess({ SANDBOX_DB: db })
  t.teardown(() => served.child.kill('SIGKILL'))
  await fetch(`${served.url}/_sandbox/faults`, { method: 'POST', headers: json, body: JSON.stringify({ match: { path: '/vendor/agencies' }, effect: { status: 503, delayMs: 60_000 } }) })
  const session = await (await fetch(`${served.url}/_sandbox/sessions`, { method: 'POST', headers: json, body: '{}' })).json() as { id: number }
  await fetch(`${served.url}/vendor/agency/1001/offices?version=4.0`, { headers: { authorization: DEMO } })
  const slow = fetch(`${served.url}/vendor/agencies?version=4.0`, { headers: { authorization: DEMO } }).then((res) => res.status, () => 0)
  await sleep(300)
  const { code, ms } = await stopped(t, served)
  t.equal(code, 0, 'the database closed cleanly: exit 0')
  t.ok(ms >= SHUTDOWN_GRACE_MS - 100, `the request in flight had its grace (${ms} ms)`)
  t.ok(ms < EXIT_BOUND_MS, `ended ${ms} ms after the signal`)
  t.equal(await slow, 0, 'the held request got no answer')
  t.match(served.lines.join('\n'), /still in flight after 1500 ms: closing now/)
  t.notOk(existsSync(db + '-wal'), 'the database was closed (its write-ahead log checkpointed)')

  // the session's recordings were written before the database closed
  const again = await serveProcess({ SANDBOX_DB: db })
  t.teardown(() => again.child.kill('SIGKILL'))
  const kept = await (await fetch(`${again.url}/_sandbox/sessions/${session.id}`)).json() as { recorded: number }
  t.ok(kept.recorded >= 1, `the session kept its recorded requests (${kept.recorded})`)
  again.child.kill('SIGTERM')
  t.equal(await again.exited, 0)
})
