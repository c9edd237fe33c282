import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { deflateRawSync } from 'node:zlib'
import Database from 'better-sqlite3'
import { buildApp } from '../../../src/app.js'
import { AGENCY, basic, build, demoFixture, NORTHWIND, testConfig, type Teardown } from '../../helpers/app.js'
import { findingOf, reportOf, startSession, vendor } from '../../helpers/examiner.js'
import type { Report, ReportSummary, Session } from '../../../src/schemas/examiner.js'

const ctl = (app: Awaited<ReturnType<typeof build>>, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) =>
  app.inject({ method, url: `/_sandbox${url}`, ...(payload === undefined ? {} : { payload: payload as string }) })

t.test('a session starts, is listed, records, ends with a summary, and ending again answers the same', async (t) => {
  const app = await build(t)
  const res = await ctl(app, 'POST', '/sessions', { name: 'nightly sync', clientId: 'abc' })
  t.equal(res.statusCode, 201)
  const session = res.json() as Session
  t.match(session, { name: 'nightly sync', clientId: 'abc', recorded: 0, capped: false })
  t.notOk('endedAt' in session, 'open: no endedAt')
  t.ok(Number.isInteger(session.id) && session.id > 0)

  const unnamed = await ctl(app, 'POST', '/sessions')
  t.equal(unnamed.statusCode, 201, 'no body: every integration, a default name')
  t.equal(unnamed.json().clientId, null)

  await vendor(app, 'GET', '/vendor/agencies?version=4.0')
  await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/offices?version=4.0`)
  t.equal((await ctl(app, 'GET', `/sessions/${session.id}`)).json().recorded, 2, 'recorded before any flush')
  t.same((await ctl(app, 'GET', '/sessions')).json().map((s: Session) => s.id), [session.id, unnamed.json().id])

  const end = await ctl(app, 'POST', `/sessions/${session.id}/end`)
  t.equal(end.statusCode, 200)
  const summary = end.json() as ReportSummary
  t.ok(summary.session.endedAt, 'ended')
  t.equal(summary.session.recorded, 2)
  t.equal(summary.verdict, 'no-evidence', 'two requests, no sync: nothing to judge the integration by')
  t.same(summary.evidence, { requests: 2, listings: 0, clientReads: 0 })
  t.same(summary.counts, { error: 0, warning: 0, info: 1 })
  t.same(summary.findings.map((f) => f.rule), ['checklist-incomplete'])

  await vendor(app, 'GET', '/vendor/agencies?version=4.0')
  t.equal((await ctl(app, 'GET', `/sessions/${session.id}`)).json().recorded, 2, 'an ended session records nothing more')
  t.equal((await ctl(app, 'GET', `/sessions/${unnamed.json().id}`)).json().recorded, 3, 'the open one goes on')
  const again = await ctl(app, 'POST', `/sessions/${session.id}/end`)
  t.equal(again.statusCode, 200)
  t.same(again.json(), summary, 'ending again answers the same summary')
})

t.test('unknown sessions and bad input answer 404 and 400 naming the field', async (t) => {
  const app = await build(t)
  for (const [method, url] of [['GET', '/sessions/99'], ['POST', '/sessions/99/end'], ['GET', '/sessions/99/report']] as const) {
    const res = await ctl(app, method, url)
    t.equal(res.statusCode, 404, `${method} ${url}`)
    t.match(res.json().detail, /No session 99/)
  }
  t.equal((await ctl(app, 'POST', '/sessions/99/mirror', { agencyId: 1001, clients: [] })).statusCode, 404)
  t.equal((await ctl(app, 'GET', '/sessions/abc')).statusCode, 400)
  const tooLong = await ctl(app, 'POST', '/sessions', { name: 'x'.repeat(201) })
  t.equal(tooLong.statusCode, 400)
  t.match(tooLong.json().errors, [{ field: 'name' }])
  const { id } = await startSession(app)
  const badTime = await ctl(app, 'POST', `/sessions/${id}/mirror`, { agencyId: 1001, clients: [{ clientNumber: 1000, modified: 'yesterday' }] })
  t.equal(badTime.statusCode, 400)
  t.match(badTime.json().errors, [{ field: 'clients[0].modified' }])
  const badNumber = await ctl(app, 'POST', `/sessions/${id}/mirror`, { agencyId: 1001, clients: [{ clientNumber: 'x', modified: '2026-01-01T00:00:00Z' }] })
  t.equal(badNumber.statusCode, 400)
  t.match(badNumber.json().errors[0].field, /clients\[0\]\.clientNumber/)
  const many = Array.from({ length: 50_000 }, () => ({ clientNumber: 0, modified: 'x' }))
  const bad = await ctl(app, 'POST', `/sessions/${id}/mirror`, { agencyId: 1001, clients: many })
  t.equal(bad.statusCode, 400, 'a long bad list answers its first errors')
  t.ok(bad.json().errors.length <= 20)
  t.equal((await ctl(app, 'GET', `/sessions/${id}/report?format=pdf`)).statusCode, 400)
})

t.test('every request presenting the Client Id is recorded: fault answers, 401s, 429s; others and the console are not', async (t) => {
  const app = await build(t)
  const session = await startSession(app, { clientId: 'abc' })
  await ctl(app, 'POST', '/faults', { match: { path: '/vendor/agency/*/offices' }, effect: { status: 503 }, times: 1 })
  await ctl(app, 'POST', '/faults', { match: { path: '/vendor/agency/*/users' }, effect: { status: 429, headers: { 'retry-after': '7' } }, times: 1 })
  t.equal((await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/offices?version=4.0`)).statusCode, 503)
  t.equal((await vendor(app, 'GET', `/vendor/agency/${AGENCY.main}/users?version=4.0`)).statusCode, 429)
  t.equal((await vendor(app, 'GET', '/vendor/agencies?version=4.0', { authorization: basic('abc', 'wrong') })).statusCode, 401)
  t.equal((await vendor(app, 'GET', '/vendor/agencies?version=4.0', { authorization: NORTHWIND })).statusCode, 200, 'another integration')
  // what the console's page sends: its cookie (a partner sending its header is recorded: test/app/console-header.test.ts)
  const cookie = String((await app.inject({ url: '/_sandbox/ui/' })).headers['set-cookie']).split(';')[0]
  await vendor(app, 'GET', '/vendor/agencies?version=4.0', { headers: { cookie } })
  await vendor(app, 'GET', '/vendor/nowhere?version=4.0')
  const report = await reportOf(app, session.id)
  t.equal(report.session.recorded, 4, '503 fault, 429 fault, 401 and the unknown route; not northwind, not the console')
  const statuses = Object.fromEntries(report.coverage.operations.filter((o) => Object.keys(o.outcomes).length > 0).map((o) => [o.operation, o.outcomes]))
  t.same(statuses, { agencies: { 401: 1 }, offices: { 503: 1 }, users: { 429: 1 } })
  t.match(findingOf(report, 'auth-failed'), { count: 1, examples: [{ method: 'GET', path: '/vendor/agencies', status: 401 }] })
  const journal = (await ctl(app, 'GET', '/requests')).json() as Array<{ id: number, status: number }>
  t.equal(findingOf(report, 'auth-failed')!.examples[0].journalId, journal.find((e) => e.status === 401)!.id, 'examples name the journal entry')
})

t.test('sessions open at once each record their own integration\'s requests', async (t) => {
  const app = await build(t)
  const abc = await startSession(app, { clientId: 'abc' })
  const northwind = await startSession(app, { clientId: 'northwind-crm' })
  const everyone = await startSession(app, {})
  await vendor(app, 'GET', '/vendor/agencies?version=4.0')
  await vendor(app, 'GET', '/vendor/agencies?version=4.0', { authorization: NORTHWIND })
  await vendor(app, 'GET', '/vendor/agencies?version=4.0', { authorization: NORTHWIND })
  const recorded = async (id: number) => (await ctl(app, 'GET', `/sessions/${id}`)).json().recorded
  t.equal(await recorded(abc.id), 1)
  t.equal(await recorded(northwind.id), 2)
  t.equal(await recorded(everyone.id), 3)
})

t.test('a dropped connection is recorded with status 0', async (t) => {
  const app = await build(t)
  const session = await startSession(app, {})
  await ctl(app, 'POST', '/faults', { match: { path: '/vendor/agency/*/offices' }, effect: { drop: true }, times: 1 })
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  await t.rejects(fetch(`${url}/vendor/agency/${AGENCY.main}/offices?version=4.0`, { headers: { authorization: basic('abc', '123') } }))
  const report = await reportOf(app, session.id)
  t.same(report.coverage.operations.find((o) => o.operation === 'offices')?.outcomes, { 0: 1 })
})

t.test('reports in JUnit and HTML', async (t) => {
  const app = await build(t)
  const { id } = await startSession(app)
  await vendor(app, 'GET', '/vendor/agencies?version=4.0', { authorization: basic('abc', 'wrong') })
  const junit = await ctl(app, 'GET', `/sessions/${id}/report?format=junit`)
  t.equal(junit.statusCode, 200)
  t.match(junit.headers['content-type'], /xml/)
  t.match(junit.body, /<testsuite[\s\S]*auth-failed[\s\S]*<failure/)
  const html = await ctl(app, 'GET', `/sessions/${id}/report?format=html`)
  t.equal(html.statusCode, 200)
  t.match(html.headers['content-type'], /text\/html/)
  t.match(html.body, /auth-failed/)
  t.equal((await ctl(app, 'GET', `/sessions/${id}/report?format=json`)).json().verdict, 'fail')
})

/** A config on a database file of its own (removed after the test), for tests that restart the app. */
function onFile (t: Teardown) {
  const dir = mkdtempSync(join(tmpdir(), 'examiner-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'sandbox.db')
  return { file, config: testConfig({ db: file }) }
}

t.test('a session survives a restart on a file database, and recording goes on', async (t) => {
  const { config } = onFile(t)
  const first = await buildApp(config, { fixture: demoFixture() })
  const { id } = await startSession(first)
  await vendor(first, 'GET', '/vendor/agencies?version=4.0')
  await vendor(first, 'GET', `/vendor/agency/${AGENCY.main}/offices?version=4.0`)
  await first.close()

  const second = await buildApp(config, { fixture: demoFixture() })
  t.teardown(() => second.close())
  const listed = (await second.inject({ method: 'GET', url: `/_sandbox/sessions/${id}` })).json() as Session
  t.match(listed, { id, recorded: 2 })
  t.notOk('endedAt' in listed, 'still open')
  await vendor(second, 'GET', `/vendor/agency/${AGENCY.main}/users?version=4.0`)
  const report = await reportOf(second, id)
  t.equal(report.session.recorded, 3)
  const used = report.coverage.operations.filter((o) => Object.keys(o.outcomes).length > 0).map((o) => o.operation)
  t.same(used, ['agencies', 'offices', 'users'], 'requests before and after the restart')
})

t.test('requests recorded in the first format (a JSON array per chunk) are read with those recorded since', async (t) => {
  const { file, config } = onFile(t)
  const first = await buildApp(config, { fixture: demoFixture() })
  const { id } = await startSession(first)
  await first.close()
  // Two requests as a build before the line format wrote them.
  const atMs = Date.now()
  const old = [
    [atMs, atMs, 120, 'GET', '/vendor/agencies', 0, 'agencies', 'version=4.0', 200, 1, 'abc', { listedAgencies: [AGENCY.main] }],
    [atMs + 5, atMs + 5, 80, 'GET', `/vendor/agency/${AGENCY.main}/client/1001`, '3.0', 'getClient', 0, 404, 2, 'abc', 0]
  ]
  const db = new Database(file)
  db.prepare('INSERT INTO examiner_records (session_id, first_seq, count, requests) VALUES (?, 1, 2, ?)').run(id, deflateRawSync(JSON.stringify(old)))
  db.prepare('UPDATE examiner_sessions SET recorded = 2 WHERE session_id = ?').run(id)
  db.close()

  const second = await buildApp(config, { fixture: demoFixture() })
  t.teardown(() => second.close())
  await vendor(second, 'GET', `/vendor/agency/${AGENCY.main}/users?version=4.0`)
  const report = await reportOf(second, id)
  t.equal(report.session.recorded, 3)
  const outcomes = Object.fromEntries(report.coverage.operations.filter((o) => Object.keys(o.outcomes).length > 0).map((o) => [`${o.operation} ${o.version}`, o.outcomes]))
  t.same(Object.keys(outcomes).sort(), ['agencies 4.0', 'getClient 3.0', 'users 4.0'], 'the operation and version of each, old and new')
  t.same(outcomes['getClient 3.0'], { 404: 1 })
})

t.test('a Client Id and a URL holding tabs, quotes and line breaks are recorded as sent', async (t) => {
  const app = await build(t)
  const { id } = await startSession(app, {})
  const odd = 'tab\there "quoted"\nnext'
  await app.inject({ method: 'GET', url: '/vendor/agencies?version=4.0', headers: { authorization: `Basic ${Buffer.from(`${odd}:x`).toString('base64')}` } })
  await vendor(app, 'GET', '/vendor/agencies?version=4.0&note=a%09b\tc\t&Colour=x')
  const report = await reportOf(app, id)
  t.equal(report.session.recorded, 2)
  const auth = findingOf(report, 'auth-failed')
  t.equal(auth?.count, 1, 'the odd Client Id is one failed authentication')
  t.match(auth?.examples[0], { method: 'GET', path: '/vendor/agencies', status: 401 })
  t.match(findingOf(report, 'unknown-fields')?.message ?? '', /note.*Colour|Colour.*note/, 'the query, tabs and all, is read back whole')
})

t.test('the report is JSON the schema describes', async (t) => {
  const app = await build(t)
  const { id } = await startSession(app)
  await vendor(app, 'GET', '/vendor/agencies?version=4.0')
  const report: Report = await reportOf(app, id)
  const { ReportSchema } = await import('../../../src/schemas/examiner.js')
  const { schemaErrors } = await import('../../helpers/app.js')
  t.same(schemaErrors(ReportSchema, report), [])
})
