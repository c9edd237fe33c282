/**
 * Answers that never reach the client: a fault's dropAnswer handles the request (a write is
 * applied) and then closes the connection, and a client may close it before its answer. Both
 * leave a trace (journal and examiner sessions, with the status the request had), so "the write
 * was applied but the answer was lost" can be simulated, and a retry under a new RefId is caught
 * by write-retried-new-refid.
 */
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { request as httpRequest } from 'node:http'
import { buildApp } from '../../src/app.js'
import { AGENCY, build, DEMO, demoFixture, testConfig } from '../helpers/app.js'
import { findingOf, reportOf, sleep, startSession } from '../helpers/examiner.js'
import { logNote } from '../helpers/writes.js'

const ctl = (app: FastifyInstance, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) =>
  app.inject({ method, url: `/_sandbox${url}`, ...(payload === undefined ? {} : { payload: payload as object }) })

const client = demoFixture().agencies.find((a) => a.agencyId === AGENCY.main)!.clients.find((c) => !c.deleted)!
const LOG_PATH = `/vendor/agency/${AGENCY.main}/client/${client.clientNumber}/log?version=4.0`

interface Sent { status: number | null, error: string | null }

/** A log note over a real socket; `abortAfterMs`: the client closes the connection after that long. */
function postLog (url: string, body: unknown, abortAfterMs?: number): Promise<Sent> {
  return new Promise((resolve) => {
    const text = JSON.stringify(body)
    const req = httpRequest(url + LOG_PATH, {
      method: 'POST',
      headers: { authorization: DEMO, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }
    }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode ?? null, error: null }))
    })
    req.on('error', (e) => resolve({ status: null, error: e.message }))
    if (abortAfterMs !== undefined) setTimeout(() => req.destroy(), abortAfterMs)
    req.end(text)
  })
}

const journal = async (app: FastifyInstance) => (await ctl(app, 'GET', '/requests?method=POST')).json() as Array<Record<string, unknown>>
const appliedNotes = async (app: FastifyInstance) =>
  ((await ctl(app, 'GET', `/agencies/${AGENCY.main}/writes?kind=log`)).json() as Array<{ refId: string, status: string }>)

t.test('dropAnswer: validated like the other effects', async (t) => {
  const app = await build(t)
  for (const [effect, field] of [
    [{ dropAnswer: true, status: 200 }, /status/],
    [{ dropAnswer: true, drop: true }, /drop/],
    [{ dropAnswer: true, body: 'x' }, /body/],
    [{ dropAnswer: true, headers: { a: 'b' } }, /headers/]
  ] as const) {
    const res = await ctl(app, 'POST', '/faults', { effect })
    t.equal(res.statusCode, 400, JSON.stringify(effect))
    t.equal(res.json().errors[0].field, 'effect.dropAnswer')
    t.match(res.json().detail, field)
  }
  t.equal((await ctl(app, 'POST', '/faults', { effect: { dropAnswer: true } })).statusCode, 201)
  t.equal((await ctl(app, 'POST', '/faults', { effect: { dropAnswer: true, delayMs: 10 } })).statusCode, 201, 'a delay first')
  t.equal((await ctl(app, 'POST', '/faults', { effect: { dropAnswer: false } })).statusCode, 400, 'dropAnswer false alone does nothing')
})

t.test('[B: Lost answers] a write applied, its answer dropped, then retried under a new RefId: journaled, and the report flags write-retried-new-refid', async (t) => {
  const app = await build(t)
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  const session = await startSession(app)
  const fault = (await ctl(app, 'POST', '/faults', { match: { method: 'POST', path: '/vendor/agency/*/client/*/log' }, effect: { dropAnswer: true }, times: 1 })).json()
  const first = logNote({ note: 'Called about the renewal' })
  const lost = await postLog(url, first)
  t.equal(lost.status, null, `the client gets no answer (${lost.error})`)
  t.match(await appliedNotes(app), [{ refId: first.refId, status: 'applied' }], 'the write was applied')
  const [entry] = await journal(app)
  t.match(entry, { status: 200, answerLost: 'dropped', fault: fault.id }, 'journaled with the status it would have had, and the mark')

  // the careless retry: the same note under a new RefId
  const retried = await postLog(url, { ...first, refId: crypto.randomUUID() })
  t.equal(retried.status, 200)
  t.equal((await appliedNotes(app)).length, 2, 'the agency now has the note twice')
  const report = await reportOf(app, session.id)
  const finding = findingOf(report, 'write-retried-new-refid')
  t.ok(finding, 'the report flags the retry')
  t.match(finding?.examples[0].detail, /answer dropped by fault rule fault-1/)
  t.equal(findingOf(report, 'refid-conflict'), undefined)
})

t.test('a retry with the same RefId after a dropped answer is what the report wants', async (t) => {
  const app = await build(t)
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  const session = await startSession(app)
  await ctl(app, 'POST', '/faults', { match: { path: '/vendor/agency/*/client/*/log' }, effect: { dropAnswer: true }, times: 1 })
  const note = logNote()
  t.equal((await postLog(url, note)).status, null)
  t.equal((await postLog(url, note)).status, 200, 'the repeat answers as the first did')
  t.equal((await appliedNotes(app)).length, 1)
  t.equal(findingOf(await reportOf(app, session.id), 'write-retried-new-refid'), undefined)
})

/** Journal entries of POST requests, once there are `count` (a request the client left is journaled when handled). */
async function journaled (app: FastifyInstance, count: number) {
  let entries = await journal(app)
  for (let i = 0; i < 150 && entries.length < count; i++) {
    await sleep(20)
    entries = await journal(app)
  }
  return entries
}

t.test('[B: Lost answers] a request whose client leaves while it is handled is journaled with its outcome, and recorded by sessions', async (t) => {
  // a slow handler: log notes take 300 ms once their body is read
  const app = await buildApp(testConfig(), { fixture: demoFixture() })
  t.teardown(() => app.close())
  app.addHook('preHandler', async (request) => {
    if (request.url.includes('/log')) await sleep(300)
  })
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  const session = await startSession(app)
  const note = logNote()
  const gone = await postLog(url, note, 50)
  t.equal(gone.status, null, `the client left (${gone.error})`)
  t.match(await journaled(app, 1), [{ status: 200, answerLost: 'abandoned' }], 'journaled once handled, with the status it had')
  t.match(await appliedNotes(app), [{ refId: note.refId, status: 'applied' }], 'the write was applied all the same')
  t.equal((await postLog(url, { ...note, refId: crypto.randomUUID() })).status, 200)
  const report = await reportOf(app, session.id)
  t.match(findingOf(report, 'write-retried-new-refid')?.examples[0].detail, /handled with 200 after the client closed the connection/)
  t.same(report.coverage.operations.find((o) => o.operation === 'logNote')?.outcomes, { 200: 2 })
})

t.test('a request whose client leaves before its body is read (a fault delays it) is journaled unanswered: nothing was written', async (t) => {
  const app = await build(t)
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  const session = await startSession(app)
  await ctl(app, 'POST', '/faults', { match: { path: '/vendor/agency/*/client/*/log' }, effect: { delayMs: 300 }, times: 1 })
  const note = logNote()
  t.equal((await postLog(url, note, 50)).status, null)
  t.match(await journaled(app, 1), [{ status: 0, answerLost: 'abandoned', fault: 'fault-1' }])
  await sleep(400)
  t.same(await appliedNotes(app), [], 'its body was never read, nor the write applied')
  t.equal((await journal(app)).length, 1, 'journaled once')
  t.same((await reportOf(app, session.id)).coverage.operations.find((o) => o.operation === 'logNote')?.outcomes, { 0: 1 })
})

t.test('a request the client leaves while its body is sent is journaled too', async (t) => {
  const app = await build(t)
  const url = new URL(await app.listen({ host: '127.0.0.1', port: 0 }))
  const { connect } = await import('node:net')
  await new Promise<void>((resolve) => {
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.write(`POST ${LOG_PATH} HTTP/1.1\r\nhost: x\r\nauthorization: ${DEMO}\r\ncontent-type: application/json\r\ncontent-length: 500\r\n\r\n{"refId":`)
      setTimeout(() => {
        socket.destroy()
        resolve()
      }, 50)
    })
  })
  let entries = await journal(app)
  for (let i = 0; i < 100 && entries.length === 0; i++) {
    await sleep(20)
    entries = await journal(app)
  }
  t.equal(entries.length, 1)
  t.match(entries[0], { answerLost: 'abandoned', path: LOG_PATH.split('?')[0] })
  t.same(await appliedNotes(app), [], 'nothing was written')
})
