import { connect } from 'node:net'
import { performance } from 'node:perf_hooks'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { validateFixture } from '../../src/fixture/validate.js'
import { send, text, type Answer } from './http.js'
import { scale, sleep, type PhaseSpec, type Run } from './context.js'
import { ABC, fixture, JSON_TYPE, liveClients, logNote } from './world.js'

/**
 * Work whose size a caller chooses, each at its cap: a simulator catch-up at the largest advance,
 * reports over a session at its request cap (several at once), mirrors at their caps, fixture
 * bodies at their cap, the state document of a world of 100,000 clients, and a flood of requests whose answers never arrive (abandoned by the
 * client, or dropped by a fault after the write). The event loop must keep answering health
 * (the run's probe) and memory stay under its target while each runs.
 */

const MiB = 1024 * 1024
const SESSION_CAP = 200_000
const MIRROR_CAP = 100_000
const MIRRORS_PER_SESSION = 20
const FIXTURE_LIMIT = 8 * MiB
const MAX_ADVANCE_SECONDS = 315_360_000
const CHANGES_PER_ADVANCE = 10_000

const json = <T>(a: Answer): T => JSON.parse(text(a)) as T
const post = (run: Run, path: string, body: unknown, timeoutMs = 60_000) =>
  run.request({ method: 'POST', path, headers: JSON_TYPE, body: typeof body === 'string' ? body : JSON.stringify(body), timeoutMs })
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`

const catchUp: PhaseSpec = {
  name: 'simulator-catch-up',
  title: 'Simulator catch-up at the largest advance (315,360,000 s at 60,000 changes a minute), then a day at 30 a minute',
  budgetMs: { short: 0, full: 25_000 },
  async run (run) {
    const p = run.phase
    await run.request({ method: 'POST', path: '/_sandbox/reset' })
    await run.request({ method: 'PUT', path: '/_sandbox/clock', headers: JSON_TYPE, body: JSON.stringify({ now: '2026-12-01T00:00:00Z', frozen: true }) })
    for (const [rate, advance] of [[60_000, MAX_ADVANCE_SECONDS], [30, 86_400]] as const) {
      if (p.expired) return
      await post(run, '/_sandbox/simulator', { ratePerMinute: rate, seed: 1, clockTime: true })
      const started = performance.now()
      const res = await post(run, '/_sandbox/clock/advance', { seconds: advance })
      const took = performance.now() - started
      const made = res.status === 200 ? json<{ simulator?: { changes: number, skipped: number } }>(res).simulator : undefined
      const wanted = Math.floor((rate * advance) / 60)
      p.check('the advance is answered with at most 10,000 changes and the rest said to be skipped',
        made !== undefined && made.changes === CHANGES_PER_ADVANCE && made.skipped === wanted - CHANGES_PER_ADVANCE, `${res.status} ${text(res).slice(0, 200)}`)
      p.figure(`${advance.toLocaleString('en-US')} s at ${rate.toLocaleString('en-US')} a minute: changes made / skipped, time`, `${made?.changes ?? '-'} / ${made?.skipped.toLocaleString('en-US') ?? '-'}, ${seconds(took)}`)
    }
    await run.request({ method: 'DELETE', path: '/_sandbox/simulator' })
    await run.request({ method: 'POST', path: '/_sandbox/reset' })
    p.check('the server lives on', await run.healthy())
  }
}

/** Records a session of SESSION_CAP requests in the database file (no server holds it): the API would take minutes. */
async function recordAtCap (dbFile: string): Promise<number> {
  const app = await buildApp(loadConfig({ SANDBOX_DB: dbFile, LOG_LEVEL: 'warn', LOG_PRETTY: 'false' }))
  try {
    const { examiner } = app.worlds.default
    const { id } = await examiner.start({ name: 'attack: at its cap', clientId: 'abc' })
    const live = liveClients(1001).map((c) => c.clientNumber)
    const at = Date.now()
    for (let i = 0; i < SESSION_CAP; i++) {
      const client = live[i % live.length]
      examiner.record({ atMs: at + i, realMs: at + i, elapsedMs: 1, journalId: i + 1, clientId: 'abc', method: 'GET', url: `/vendor/agency/1001/client/${client}?version=4.0`, operation: 'getClient', status: 200 })
    }
    examiner.close()
    return id
  } finally {
    await app.close()
  }
}

const reportsAtCap: PhaseSpec = {
  name: 'reports-at-cap',
  title: 'Reports over a session at its cap of 200,000 requests: one, four at once, then ended twice and read again',
  budgetMs: { short: 0, full: 45_000 },
  async run (run) {
    const p = run.phase
    let id = 0
    await run.target.restart(async (dbFile) => { id = await recordAtCap(dbFile) })
    run.target.startPhase() // the restart's own memory is not the phase's
    const report = async () => {
      const started = performance.now()
      const res = await run.request({ path: `/_sandbox/sessions/${id}/report`, timeoutMs: 60_000 })
      p.check('the report is answered', res.status === 200, `${res.status} ${text(res).slice(0, 200)}`)
      return performance.now() - started
    }
    p.figure('one report at the cap', seconds(await report()))
    const started = performance.now()
    await Promise.all([report(), report(), report(), report()])
    p.figure('four at once', seconds(performance.now() - started))
    const ends = await Promise.all([1, 2].map(() => run.request({ method: 'POST', path: `/_sandbox/sessions/${id}/end`, timeoutMs: 60_000 })))
    p.check('ending twice answers the same summary', ends.every((e) => e.status === 200) && text(ends[0]) === text(ends[1]), ends.map((e) => e.status).join(', '))
    const kept = performance.now()
    for (let i = 0; i < 5; i++) await report()
    p.figure('five reads of the ended session\'s kept report', seconds(performance.now() - kept))
    await run.request({ method: 'DELETE', path: `/_sandbox/sessions/${id}` })
    p.check('the server lives on', await run.healthy())
  }
}

const mirrorBody = (agencyId: number, count: number) => JSON.stringify({
  agencyId,
  clients: Array.from({ length: count }, (_, i) => ({ clientNumber: 1000 + i, modified: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString() }))
})

const mirrorsAtCap: PhaseSpec = {
  name: 'mirrors-at-cap',
  title: 'Mirrors at their caps: 20 agencies of 100,000 clients in one session, one client and one agency more, the report',
  budgetMs: { short: 0, full: 60_000 },
  async run (run) {
    const p = run.phase
    const agencies = Array.from({ length: MIRRORS_PER_SESSION + 1 }, (_, i) => 7001 + i)
    const template = fixture.agencies.find((a) => a.agencyId === 1001)!
    for (const agencyId of agencies) {
      await post(run, '/_sandbox/agencies', { ...template, agencyId, name: `Attack ${agencyId}`, clients: template.clients.slice(0, 2) })
    }
    const session = json<{ id: number }>(await post(run, '/_sandbox/sessions', { clientId: 'abc' }))
    let slowest = 0
    for (const agencyId of agencies.slice(0, MIRRORS_PER_SESSION)) {
      if (p.expired) break
      const started = performance.now()
      const res = await post(run, `/_sandbox/sessions/${session.id}/mirror`, mirrorBody(agencyId, MIRROR_CAP))
      slowest = Math.max(slowest, performance.now() - started)
      p.check('a mirror at its cap is taken', res.status === 200, `${res.status} ${text(res).slice(0, 200)}`)
    }
    p.figure(`slowest of ${MIRRORS_PER_SESSION} mirrors of ${MIRROR_CAP.toLocaleString('en-US')} clients (${(mirrorBody(7001, MIRROR_CAP).length / MiB).toFixed(1)} MiB)`, seconds(slowest))
    const over = await post(run, `/_sandbox/sessions/${session.id}/mirror`, mirrorBody(agencies[0], MIRROR_CAP + 1))
    p.check('one client more is a 400', over.status === 400, `${over.status}`)
    const extra = await post(run, `/_sandbox/sessions/${session.id}/mirror`, mirrorBody(agencies[MIRRORS_PER_SESSION], 10))
    p.check('one agency more is a 409', extra.status === 409, `${extra.status}`)
    const started = performance.now()
    const reports = await Promise.all([1, 2].map(() => run.request({ path: `/_sandbox/sessions/${session.id}/report`, timeoutMs: 120_000 })))
    p.check('the report over every mirror is answered', reports.every((r) => r.status === 200), reports.map((r) => `${r.status} ${text(r).slice(0, 120)}`).join('; '))
    p.figure('two reports at once over 20 mirrors at their cap', seconds(performance.now() - started))
    await run.request({ method: 'DELETE', path: `/_sandbox/sessions/${session.id}` })
    for (const agencyId of agencies) await run.request({ method: 'DELETE', path: `/_sandbox/agencies/${agencyId}` })
    p.check('the server lives on', await run.healthy())
  }
}

/** The demo fixture with agency 1001's clients copied under new numbers until it is just under `bytes`. */
export function fixtureOf (bytes: number): { body: string, clients: number } {
  const doc = structuredClone(fixture) as typeof fixture
  const agency = doc.agencies.find((a) => a.agencyId === 1001)!
  const originals = agency.clients.slice()
  const size = () => Buffer.byteLength(JSON.stringify(doc))
  for (let copy = 1; size() < bytes; copy++) {
    agency.clients.push(...originals.map((c) => ({ ...structuredClone(c), clientNumber: c.clientNumber + copy * 10_000 })))
    if (size() > bytes) {
      agency.clients.splice(agency.clients.length - originals.length)
      break
    }
  }
  return { body: JSON.stringify(doc), clients: doc.agencies.reduce((n, a) => n + a.clients.length, 0) }
}

const fixtureBodies: PhaseSpec = {
  name: 'fixture-bodies-at-cap',
  title: 'Fixture documents at the 8 MiB cap: a reset, a new world, an agency (then the demo again)',
  budgetMs: { short: 3_000, full: 20_000 },
  async run (run) {
    const p = run.phase
    const { body, clients } = fixtureOf(FIXTURE_LIMIT)
    p.figure('document', `${(Buffer.byteLength(body) / MiB).toFixed(2)} MiB, ${clients.toLocaleString('en-US')} clients`)
    let started = performance.now()
    const reset = await post(run, '/_sandbox/reset', body)
    p.figure('reset', seconds(performance.now() - started))
    p.check('a reset to the document at the cap', reset.status === 200 && json<{ counts: { clients: number } }>(reset).counts.clients === clients, `${reset.status} ${text(reset).slice(0, 200)}`)
    if (!run.options.short) {
      started = performance.now()
      // sent past the run's leak check: a new world's answer gives its integrations' secrets, by design
      p.tried++
      const world = await send(run.target.origin, { method: 'POST', path: '/_sandbox/worlds', headers: JSON_TYPE, body: `{"fixture":${body}}`, timeoutMs: 60_000 })
      p.figure('new world', seconds(performance.now() - started))
      p.check('a world of the document at the cap', world.status === 201, `${world.status} ${text(world).slice(0, 200)}`)
      if (world.status === 201) await run.request({ method: 'DELETE', path: `/_sandbox/worlds/${json<{ id: string }>(world).id}` })
      const agency = (JSON.parse(body) as typeof fixture).agencies.find((a) => a.agencyId === 1001)!
      started = performance.now()
      const added = await post(run, '/_sandbox/agencies', { ...agency, agencyId: 8001 })
      p.figure('agency', seconds(performance.now() - started))
      p.check('an agency of (almost) the document\'s size', added.status === 201, `${added.status} ${text(added).slice(0, 200)}`)
    }
    const back = await run.request({ method: 'POST', path: '/_sandbox/reset', timeoutMs: 60_000 })
    p.check('back to the demo fixture', back.status === 200, `${back.status}`)
    p.check('the server lives on', await run.healthy())
  }
}

const STATE_CLIENTS = 100_000

/**
 * Loads a world of STATE_CLIENTS clients into the database file (no server holds it): the demo's
 * agencies and one more of small clients, which no fixture body (8 MiB) could carry at once.
 */
async function loadLargeWorld (dbFile: string, uuid: () => string): Promise<void> {
  const app = await buildApp(loadConfig({ SANDBOX_DB: dbFile, LOG_LEVEL: 'warn', LOG_PRETTY: 'false' }))
  try {
    const doc = structuredClone(fixture)
    const template = doc.agencies.find((a) => a.agencyId === 1001)!
    const more = STATE_CLIENTS - doc.agencies.reduce((n, a) => n + a.clients.length, 0)
    const modified = new Date(Date.UTC(2026, 0, 1)).toISOString()
    const clients = Array.from({ length: more }, (_, i) => ({ clientNumber: 1000 + i, details: { id: uuid(), modified, officeId: 1, status: 'Active', isPersonal: true, isCommercial: false } }))
    doc.agencies.push({ ...template, agencyId: 9101, name: 'Attack: state at size', clients })
    const result = validateFixture(doc, { owned: true })
    if (!result.ok) throw new Error(`the large world's fixture is invalid: ${JSON.stringify(result.report.listed.slice(0, 3))}`)
    await app.worlds.default.reset({ fixture: result.fixture, source: '(attack: state at size)' })
  } finally {
    await app.close()
  }
}

const stateAtSize: PhaseSpec = {
  name: 'state-at-size',
  title: 'The state document of a world of 100,000 clients: read five times, one at a time, then three at once',
  budgetMs: { short: 0, full: 40_000 },
  async run (run) {
    const p = run.phase
    await run.target.restart((dbFile) => loadLargeWorld(dbFile, run.rng.uuid))
    run.target.startPhase() // the restart's own memory is not the phase's
    const from = Date.now()
    // sent past the run's leak check: the state document holds the integrations' secrets, by design
    const read = async () => {
      p.tried++
      const started = performance.now()
      const res = await send(run.target.origin, { path: '/_sandbox/state', timeoutMs: 60_000, maxBody: 64 * MiB })
      p.check('the state is answered', res.status === 200, `${res.status} ${text(res).slice(0, 200)}`)
      return { body: text(res), ms: performance.now() - started }
    }
    const first = await read()
    const clients = first.body.startsWith('{') ? (JSON.parse(first.body) as typeof fixture).agencies.reduce((n, a) => n + a.clients.length, 0) : 0
    p.check('the state holds every client', clients === STATE_CLIENTS, `${clients}`)
    p.figure('document', `${(Buffer.byteLength(first.body) / MiB).toFixed(1)} MiB, ${clients.toLocaleString('en-US')} clients`)
    const times = [first.ms]
    for (let i = 0; i < 4 && !p.expired; i++) times.push((await read()).ms)
    p.figure(`${times.length} reads one at a time`, `${seconds(Math.min(...times))} to ${seconds(Math.max(...times))} each`)
    const started = performance.now()
    const together = await Promise.all([read(), read(), read()])
    p.figure('three at once', seconds(performance.now() - started))
    p.check('every read answers the same bytes', together.every((r) => r.body === first.body))
    await sleep(300) // the loop monitor's last sample of the reads
    p.figure('longest event-loop block while the state was read', `${run.target.loopDelayMs(from, Date.now()).toFixed(0)} ms`)
    await run.target.restart(async (dbFile) => {
      const app = await buildApp(loadConfig({ SANDBOX_DB: dbFile, LOG_LEVEL: 'warn', LOG_PRETTY: 'false' }))
      await app.worlds.default.reset().finally(() => app.close())
    })
    p.check('the server lives on', await run.healthy())
  }
}

/** A request written whole on its own socket, closed after `closeAfterMs` whatever came back. */
function leave (origin: string, request: string, closeAfterMs: number): Promise<void> {
  const url = new URL(origin)
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.write(request)
      setTimeout(() => socket.destroy(), closeAfterMs)
    })
    socket.on('error', () => {})
    socket.on('close', () => resolve())
  })
}

const abandoned: PhaseSpec = {
  name: 'abandoned-requests',
  title: 'Requests whose answers never arrive: writes, reads and half-sent bodies their client leaves, writes whose answers a fault drops',
  budgetMs: { short: 2_000, full: 12_000 },
  async run (run) {
    const p = run.phase
    const origin = run.target.origin
    const client = liveClients(1001)[0].clientNumber
    const logPath = `/vendor/agency/1001/client/${client}/log?version=4.0`
    const writes = async () => json<unknown[]>(await run.request({ path: '/_sandbox/agencies/1001/writes?kind=log' })).length
    await run.request({ method: 'DELETE', path: '/_sandbox/requests' })
    await run.request({ method: 'DELETE', path: '/_sandbox/faults' })
    const before = await writes()
    // every log note is held 200 ms by a fault; its client leaves after 20
    await post(run, '/_sandbox/faults', { match: { method: 'POST', path: '/vendor/agency/*/client/*/log' }, effect: { delayMs: 200 } })
    const count = scale(run, 60, 300)
    const head = (method: string, path: string, length?: number) =>
      `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${ABC}\r\n${length === undefined ? '' : `Content-Type: application/json\r\nContent-Length: ${length}\r\n`}\r\n`
    await run.pool(count, 30, async (i) => {
      p.tried++
      const note = JSON.stringify(logNote(run.rng.uuid(), `abandoned ${i}`))
      if (i % 3 === 0) await leave(origin, head('POST', logPath, Buffer.byteLength(note)) + note, 20)
      else if (i % 3 === 1) await leave(origin, head('GET', '/vendor/agency/1001/clients?version=4.0'), 0)
      else await leave(origin, head('POST', logPath, 5000) + note.slice(0, 20), 20) // half a body
    })
    await sleep(400) // the held notes' delays end
    await run.request({ method: 'DELETE', path: '/_sandbox/faults' })
    const entries = json<Array<{ answerLost?: string }>>(await run.request({ path: '/_sandbox/requests?limit=100000' }))
    const left = entries.filter((e) => e.answerLost === 'abandoned').length
    p.figure('requests left by their client / journaled as abandoned', `${count} / ${left}`)
    p.check('requests their client left are journaled as abandoned', left >= Math.floor(count / 3), `${left} of ${count}`)
    p.check('no write their client left before the body was read was applied', (await writes()) === before, `${(await writes()) - before} applied`)

    // writes applied whose answers a fault drops
    const dropped = scale(run, 20, 100)
    await post(run, '/_sandbox/faults', { match: { method: 'POST', path: '/vendor/agency/*/client/*/log' }, effect: { dropAnswer: true }, times: dropped })
    await run.request({ method: 'DELETE', path: '/_sandbox/requests' })
    const writesBefore = await writes()
    await run.pool(dropped, 10, async () => {
      p.tried++
      const a = await send(origin, { method: 'POST', path: logPath, headers: { authorization: ABC, ...JSON_TYPE }, body: JSON.stringify(logNote(run.rng.uuid())), timeoutMs: 10_000 })
      p.check('a dropped answer: the connection closes without one', a.status === 0, `${a.status}`)
    })
    const journaled = json<Array<{ answerLost?: string, status: number }>>(await run.request({ path: '/_sandbox/requests?limit=100000' }))
    p.check('each write whose answer was dropped was applied', (await writes()) - writesBefore === dropped, `${(await writes()) - writesBefore} of ${dropped}`)
    p.check('and journaled with its status and the mark', journaled.filter((e) => e.answerLost === 'dropped' && e.status === 200).length === dropped,
      `${journaled.filter((e) => e.answerLost === 'dropped').length} of ${dropped}`)
    await run.request({ method: 'DELETE', path: '/_sandbox/faults' })
    await run.request({ method: 'POST', path: '/_sandbox/reset' })
    p.check('the server lives on', await run.healthy())
  }
}

export const BOUNDED_PHASES: PhaseSpec[] = [catchUp, reportsAtCap, mirrorsAtCap, fixtureBodies, stateAtSize, abandoned]
