import { connect, type Socket } from 'node:net'
import { performance } from 'node:perf_hooks'
import { gzipSync } from 'node:zlib'
import { send, text, type Answer, type Call } from './http.js'
import { mb, sleep, type PhaseSpec, type Run } from './context.js'
import { fixtureOf } from './bounded.js'
import { attachmentHeaders, basic, fixture, JSON_TYPE, liveClients, logNote, receipt } from './world.js'

/**
 * Worlds that keep to their bounds and to themselves: growth past a world's maxBytes, the
 * fixture's Client Secret on a created world, idle readers of a large world's state document
 * beside another world's work, requests in flight across a delete, and text the store cannot
 * hold in names and fault rules.
 */

const MiB = 1024 * 1024
const AGENCY = 1001
const CLIENT = liveClients(AGENCY)[3].clientNumber
/** What the sandbox promises another world while one world's readers hold their answers. */
const ANSWERED_WITHIN_MS = 10_000
/**
 * An unread answer is cut after 10 s, and a world holds one place on the worker: its four idle
 * readers are served, and cut, one after another (four stalls of 10 s, and a margin for each).
 */
const ALL_CUT_MS = 4 * 13_000

interface Created { id: string, maxBytes: number, integrations: Array<{ clientId: string, clientSecret: string }> }

const json = <T>(a: Answer): T => JSON.parse(text(a)) as T
const isProblem = (a: Answer) => /^application\/problem\+json/.test(String(a.headers['content-type'] ?? ''))

/**
 * A request whose answer may hold a world's Client Secrets by design (a create answer, a world's
 * facts or state document): counted, past the run's leak check. `boundExpected`: a 507 (a world at
 * its bound) is the answer sought, checked by the phase rather than counted as a 5xx.
 */
async function unchecked (run: Run, call: Omit<Call, 'timeoutMs'> & { timeoutMs?: number }, boundExpected = false): Promise<Answer> {
  const p = run.phase
  p.tried++
  const a = await send(run.target.origin, { timeoutMs: 30_000, ...call })
  if (a.status >= 500 && !(boundExpected && a.status === 507)) {
    p.fiveXX++
    p.incident(`${a.status} for ${call.method ?? 'GET'} ${call.path}: ${text(a).slice(0, 160)}`)
  } else if (a.status === 0) p.unanswered++
  return a
}

async function createWorld (run: Run, body: object | string): Promise<Created | undefined> {
  const a = await unchecked(run, { method: 'POST', path: '/_sandbox/worlds', headers: JSON_TYPE, body: typeof body === 'string' ? body : JSON.stringify(body), timeoutMs: 60_000 })
  run.phase.check('a world is created (201)', a.status === 201, `${a.status} ${text(a).slice(0, 160)}`)
  return a.status === 201 ? json<Created>(a) : undefined
}

async function deleteWorld (run: Run, id: string): Promise<void> {
  const a = await run.request({ method: 'DELETE', path: `/_sandbox/worlds/${id}` })
  run.phase.check('the world is deleted (204)', a.status === 204, `${a.status} ${text(a).slice(0, 120)}`)
}

const authOf = (world: Created, i = 0) => basic(world.integrations[i].clientId, world.integrations[i].clientSecret)

/** A gzipped PDF of about `bytes` bytes from the run's generator (random bytes: gzip leaves them as large). */
function pdf (run: Run, bytes: number): Buffer {
  const body = Buffer.alloc(bytes)
  for (let i = 0; i < bytes; i += 4) body.writeUInt32LE(Math.floor(run.rng.next() * 0x1_0000_0000), Math.min(i, bytes - 4))
  body.write('%PDF-1.4 ', 0, 'latin1')
  return gzipSync(body, { level: 1 })
}

const growth: PhaseSpec = {
  name: 'world-growth',
  title: 'Growth past a world\'s bound: attachments, then log notes, to a world created with a small maxBytes until 507; then more of each kind (attachments, notes, receipts)',
  budgetMs: { short: 0, full: 30_000 },
  async run (run) {
    const p = run.phase
    const maxBytes = 32 * MiB
    // The server's whole memory is measured, so the phase starts from a fresh process.
    await run.target.restart()
    run.target.startPhase()
    const rssAtStart = run.target.rssKb() ?? 0
    const world = await createWorld(run, { name: 'attack: growth', maxBytes, ttlSeconds: 0 })
    if (world === undefined) return
    const auth = authOf(world)
    const attachment = pdf(run, 1024 * 1024)
    const note = 'n'.repeat(100_000)
    const vendor = (path: string) => `/vendor/agency/${AGENCY}/client/${CLIENT}/${path}?version=4.0`
    // A 507 is the answer this phase drives the world to: it is checked here, not counted as a failure.
    const post = (path: string, headers: Record<string, string>, body: string | Buffer) => unchecked(run, { method: 'POST', path, headers, body }, true)
    const kinds = {
      attachment: () => post(vendor('attachment'), attachmentHeaders(auth, run.rng.uuid()), attachment),
      'log note': () => post(vendor('log'), { authorization: auth, ...JSON_TYPE }, JSON.stringify(logNote(run.rng.uuid(), note))),
      receipt: () => post(vendor('receipts'), { authorization: auth, ...JSON_TYPE }, JSON.stringify([{ ...receipt(run.rng.uuid()), logNote: note }]))
    }
    p.figure('world bound (maxBytes)', `${(maxBytes / MiB).toFixed(0)} MiB`)
    // Large writes until the first refusal, then smaller ones until the world takes none.
    const cap = 120
    for (const kind of ['attachment', 'log note'] as const) {
      let accepted = 0
      let last: Answer | undefined
      for (let i = 0; i < cap && !p.expired; i++) {
        last = await kinds[kind]()
        if (last.status !== 200) break
        accepted++
      }
      p.figure(`${kind}s taken before the first refusal`, accepted)
      if (last === undefined || p.expired) return
      const problem = isProblem(last) ? json<{ type?: string, detail?: string }>(last) : {}
      p.check('507 problem of type world-bound-reached once the world is full', last.status === 507 && problem.type?.endsWith('/world-bound-reached') === true, `${kind}: ${last.status} ${text(last).slice(0, 160)}`)
      const detail = problem.detail ?? ''
      p.check('the 507 names the world, its bound, the bytes it holds and that nothing was applied',
        detail.includes(world.id) && detail.includes(String(maxBytes)) && /holds \d+ bytes/.test(detail) && detail.includes('nothing was applied'), detail.slice(0, 200))
    }

    const facts = async () => {
      const a = await unchecked(run, { path: `/_sandbox/worlds/${world.id}` })
      return a.status === 200 ? json<{ bytes: number }>(a).bytes : -1
    }
    const writes = async () => {
      const a = await run.request({ path: `/_sandbox/worlds/${world.id}/agencies/${AGENCY}/writes` })
      return a.status === 200 ? json<unknown[]>(a).length : -1
    }
    const held = await facts()
    const written = await writes()
    p.figure('bytes the world holds at its bound', held)
    p.check('the world holds no more than its bound', held > 0 && held <= maxBytes, `${held} of ${maxBytes}`)
    // Every kind of write, past the bound: each a 507, none applied.
    const more = 24
    const names = Object.keys(kinds) as Array<keyof typeof kinds>
    for (let i = 0; i < more && !p.expired; i++) {
      const a = await kinds[names[i % names.length]]()
      p.check('every write past the bound is a 507', a.status === 507, `${names[i % names.length]}: ${a.status} ${text(a).slice(0, 120)}`)
    }
    const heldAfter = await facts()
    const writtenAfter = await writes()
    p.check('nothing more is applied: the same bytes and the same writes', heldAfter === held && writtenAfter === written, `bytes ${held} -> ${heldAfter}, writes ${written} -> ${writtenAfter}`)
    const peakKb = run.target.phasePeakKb()
    const limitMb = maxBytes / MiB + 150
    p.figure('server RSS at the start / at its peak', `${mb(rssAtStart).toFixed(0)} MB / ${mb(peakKb).toFixed(0)} MB`)
    p.check('the server\'s RSS stays within the bound plus 150 MB', mb(peakKb) <= limitMb, `${mb(peakKb).toFixed(0)} MB against ${limitMb.toFixed(0)} MB`)
    await deleteWorld(run, world.id)
  }
}

const secrets: PhaseSpec = {
  name: 'world-secrets',
  title: 'A created world\'s Client Ids with the fixture\'s secrets, another world\'s and guessed ones: 401; its own secrets from the create answer: 200',
  budgetMs: { short: 0, full: 8_000 },
  async run (run) {
    const p = run.phase
    const worlds = [await createWorld(run, { name: 'attack: secrets', ttlSeconds: 0 }), await createWorld(run, { name: 'attack: secrets too', ttlSeconds: 0 })]
    const [a, b] = worlds
    if (a === undefined || b === undefined) return
    const agencies = (auth: string) => run.request({ path: '/vendor/agencies?version=4.0', headers: { authorization: auth } })
    for (const [i, own] of a.integrations.entries()) {
      const fixtureSecret = fixture.integrations.find((f) => own.clientId.startsWith(`${f.clientId}@`))?.clientSecret
      p.check('each Client Id names its world (ends with @<id>) and comes from the fixture', fixtureSecret !== undefined && own.clientId.endsWith(`@${a.id}`), own.clientId)
      const refused = await agencies(basic(own.clientId, fixtureSecret ?? '123'))
      p.check('the fixture\'s secret is refused on a created world (401)', refused.status === 401, `${own.clientId}: ${refused.status}`)
      if (refused.status === 200) p.leak(`${own.clientId} opened with the fixture's secret`)
      const other = await agencies(basic(own.clientId, b.integrations[i].clientSecret))
      p.check('another world\'s secret is refused (401)', other.status === 401, `${own.clientId}: ${other.status}`)
      if (other.status === 200) p.leak(`${own.clientId} opened with another world's secret`)
      const accepted = await agencies(authOf(a, i))
      p.check('its own secret, from the create answer, is accepted (200)', accepted.status === 200, `${own.clientId}: ${accepted.status} ${text(accepted).slice(0, 120)}`)
    }
    const guesses = 60
    for (let i = 0; i < guesses && !p.expired; i++) {
      const guess = await agencies(basic(a.integrations[0].clientId, run.rng.uuid().replaceAll('-', '').slice(0, 22)))
      p.check('a guessed secret is refused (401)', guess.status === 401, `${guess.status}`)
      if (guess.status === 200) p.leak('a guessed secret opened a world')
    }
    const demo = await agencies(basic('abc', '123'))
    p.check('the default world keeps the fixture\'s secrets (200)', demo.status === 200, `${demo.status}`)
    // The listing goes through the run's leak check; it must not hold the worlds' secrets either.
    const listing = text(await run.request({ path: '/_sandbox/worlds' }))
    const shown = [...a.integrations, ...b.integrations].filter((i) => listing.includes(i.clientSecret))
    p.check('no world\'s secret in the listing', shown.length === 0, shown.map((i) => i.clientId).join(', '))
    if (shown.length > 0) p.leak('a world\'s secret in GET /_sandbox/worlds')
    for (const w of worlds) if (w !== undefined) await deleteWorld(run, w.id)
  }
}

/** A request for a state document on a socket of its own that never reads the answer. */
function idleReader (origin: string, path: string): Socket {
  const url = new URL(origin)
  const socket = connect(Number(url.port), url.hostname, () => {
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nConnection: close\r\n\r\n`)
    socket.pause()
  })
  socket.on('error', () => {})
  return socket
}

const idleReaders: PhaseSpec = {
  name: 'idle-readers',
  title: 'Four readers of a large world\'s state document that never read it, while another world\'s state document, reset and a new world from a fixture answer within 10 s; the idle answers are cut one after another (the world holds one place on the worker), then the large world\'s document is read',
  budgetMs: { short: 0, full: 80_000 },
  async run (run) {
    const p = run.phase
    // The full run's document is larger than the sockets' buffers (4 MiB to send, 128 KiB to receive), so the readers hold their answers.
    const { body, clients } = fixtureOf(6 * MiB)
    const large = await createWorld(run, `{"name":"attack: large","ttlSeconds":0,"fixture":${body}}`)
    const other = await createWorld(run, { name: 'attack: other', ttlSeconds: 0 })
    if (large === undefined || other === undefined) return
    p.figure('large world', `${(Buffer.byteLength(body) / MiB).toFixed(1)} MiB fixture, ${clients.toLocaleString('en-US')} clients`)
    const readers = Array.from({ length: 4 }, () => idleReader(run.target.origin, `/_sandbox/worlds/${large.id}/state`))
    p.tried += readers.length
    const closed = readers.map((socket) => new Promise<number>((resolve) => socket.on('close', () => resolve(performance.now()))))
    const opened = performance.now()
    try {
      await sleep(300) // the readers' requests reach the server
      const timed = async (what: string, call: Omit<Call, 'timeoutMs'>, ok: number) => {
        const a = await unchecked(run, { ...call, timeoutMs: ANSWERED_WITHIN_MS + 5_000 })
        p.figure(what, `${a.status || a.error}, ${(a.ms / 1000).toFixed(1)} s`)
        p.check('work beside the idle readers is answered within 10 s', a.status === ok && a.ms < ANSWERED_WITHIN_MS, `${what}: ${a.status} ${a.error ?? ''} in ${a.ms.toFixed(0)} ms ${text(a).slice(0, 120)}`)
      }
      await timed('another world\'s state document, while the readers wait', { path: `/_sandbox/worlds/${other.id}/state`, maxBody: 64 * MiB }, 200)
      await timed('another world\'s reset, while the readers wait', { method: 'POST', path: `/_sandbox/worlds/${other.id}/reset` }, 200)
      const fixtureBody = fixtureOf(2 * MiB).body
      await timed('another world\'s reset to a 2 MiB fixture, while the readers wait', { method: 'POST', path: `/_sandbox/worlds/${other.id}/reset`, headers: JSON_TYPE, body: fixtureBody }, 200)
      const created = await unchecked(run, { method: 'POST', path: '/_sandbox/worlds', headers: JSON_TYPE, body: `{"name":"attack: during","ttlSeconds":0,"fixture":${fixtureBody}}`, timeoutMs: ANSWERED_WITHIN_MS + 5_000 })
      p.figure('a new world from a 2 MiB fixture, while the readers wait', `${created.status || created.error}, ${(created.ms / 1000).toFixed(1)} s`)
      p.check('another world\'s work is answered within 10 s', created.status === 201 && created.ms < ANSWERED_WITHIN_MS, `new world: ${created.status} in ${created.ms.toFixed(0)} ms`)
      if (created.status === 201) await deleteWorld(run, json<Created>(created).id)
      // The idle answers are cut after 10 s unread, their place freed: the world's next reader takes
      // it, and is cut in turn. A reader sees that only once it reads: what it then gets ends short
      // (no last chunk), and ends at once.
      await sleep(Math.max(0, ALL_CUT_MS - (performance.now() - opened)))
      const taken = await Promise.all(readers.map(async (socket, i) => {
        let bytes = 0
        let tail = ''
        socket.on('data', (chunk: Buffer) => {
          bytes += chunk.byteLength
          tail = (tail + chunk.toString('latin1')).slice(-5)
        })
        socket.resume()
        const ended = await Promise.race([closed[i].then(() => true), sleep(5_000).then(() => false)])
        return { bytes, cut: ended && tail !== '0\r\n\r\n' }
      }))
      const cut = taken.filter((r) => r.cut)
      p.check(`the server cuts every answer nobody reads (${ALL_CUT_MS / 1000} s after they were asked)`, cut.length === readers.length, `${cut.length} of ${readers.length} cut`)
      p.figure('bytes each idle reader got once it read (reset connections: its own buffer only)', taken.map((r) => `${(r.bytes / 1024).toFixed(0)} KiB${r.cut ? '' : ' (not cut)'}`).join(', '))
      await timed('the large world\'s state document, read once its idle readers are cut', { path: `/_sandbox/worlds/${large.id}/state`, maxBody: 64 * MiB }, 200)
    } finally {
      for (const socket of readers) socket.destroy()
    }
    await deleteWorld(run, large.id)
    await deleteWorld(run, other.id)
  }
}

const PARTNER = (auth: string, uuid: () => string) => [
  { method: 'POST', path: `/vendor/agency/${AGENCY}/client/${CLIENT}/log?version=4.0`, headers: { authorization: auth, ...JSON_TYPE }, body: () => JSON.stringify(logNote(uuid())) },
  { method: 'GET', path: `/vendor/agency/${AGENCY}/clients?version=4.0`, headers: { authorization: auth } }
]
const CONTROL = (id: string) => [
  { method: 'POST', path: `/_sandbox/worlds/${id}/faults`, headers: JSON_TYPE, body: () => JSON.stringify({ match: { path: '/vendor/nowhere' }, effect: { status: 418 } }) },
  { method: 'PUT', path: `/_sandbox/worlds/${id}/clock`, headers: JSON_TYPE, body: () => JSON.stringify({ now: '2031-01-02T03:04:05Z' }) },
  { method: 'POST', path: `/_sandbox/worlds/${id}/sessions`, headers: JSON_TYPE, body: () => JSON.stringify({ name: 'in flight' }) },
  { method: 'PATCH', path: `/_sandbox/worlds/${id}/agencies/${AGENCY}`, headers: JSON_TYPE, body: () => JSON.stringify({ supportsIncludes: false }) },
  { method: 'POST', path: `/_sandbox/worlds/${id}/reset` },
  { method: 'GET', path: `/_sandbox/worlds/${id}/agencies/${AGENCY}/writes` }
]

const deleteInFlight: PhaseSpec = {
  name: 'delete-in-flight',
  title: 'Partner and control requests streamed to a world while it is deleted: never a 5xx, only 401 (partner) and 404 (control) once it is gone',
  budgetMs: { short: 0, full: 20_000 },
  async run (run) {
    const p = run.phase
    const rounds = 6
    const perRound = 400
    const parallel = 12
    let inFlight = 0
    let after = 0
    for (let r = 0; r < rounds && !p.expired; r++) {
      const world = await createWorld(run, { name: `attack: deleted ${r}`, ttlSeconds: 0 })
      if (world === undefined) return
      const calls = [...PARTNER(authOf(world), run.rng.uuid).map((c) => ({ ...c, partner: true })), ...CONTROL(world.id).map((c) => ({ ...c, partner: false }))]
      let deletedAt = Infinity
      const deleteAfter = Math.floor(perRound / 4)
      let answered = 0
      let reached = () => {}
      const deleting = new Promise<void>((resolve) => { reached = resolve }).then(async () => {
        const a = await run.request({ method: 'DELETE', path: `/_sandbox/worlds/${world.id}` })
        p.check('the world is deleted under traffic (204)', a.status === 204, `${a.status} ${text(a).slice(0, 120)}`)
        deletedAt = performance.now()
      })
      await run.pool(perRound, parallel, async (i) => {
        const c = calls[i % calls.length]
        const sent = performance.now()
        const a = await run.request({ method: c.method, path: c.path, headers: c.headers, body: c.body?.() })
        if (++answered === deleteAfter) reached()
        const gone = c.partner ? 401 : 404
        if (sent > deletedAt) {
          after++
          p.check('sent after the delete: 401 (partner) or 404 (control)', a.status === gone, `${c.method} ${c.path.split('?')[0]}: ${a.status} ${text(a).slice(0, 100)}`)
        } else if (performance.now() > deletedAt || a.status === gone) {
          inFlight++
          p.check('in flight across the delete: answered as before it, or 401 (partner) / 404 (control)', a.status < 400 || a.status === gone, `${c.method} ${c.path.split('?')[0]}: ${a.status} ${text(a).slice(0, 100)}`)
        }
      })
      reached() // the world is deleted even when the phase's time ran out first
      await deleting
      const gone = await run.request({ path: `/_sandbox/worlds/${world.id}/agencies/${AGENCY}/writes` })
      p.check('the deleted world is gone (404)', gone.status === 404, `${gone.status}`)
    }
    p.figure('requests answered after the delete began / sent after it', `${inFlight} / ${after}`)
  }
}

/** Each a string JSON.stringify writes as an escape. */
const UNSTORABLE = [
  { what: 'NUL', text: 'a\u0000b' },
  { what: 'lone high surrogate', text: 'a\ud800b' },
  { what: 'lone low surrogate', text: 'a\udc00' },
  { what: 'high surrogate at the end', text: 'name\udbff' },
  { what: 'two high surrogates', text: '\ud800\ud800\udc00' }
]

const unstorableText: PhaseSpec = {
  name: 'unstorable-text',
  title: 'NUL and lone surrogates in world, tenant and session names and in fault rules: a 400 naming the field, nothing stored',
  budgetMs: { short: 0, full: 8_000 },
  async run (run) {
    const p = run.phase
    const world = await createWorld(run, { name: 'attack: text', ttlSeconds: 0 })
    const cases = [
      { name: 'world name', path: '/_sandbox/worlds', body: (s: string) => ({ name: s }), field: 'name' },
      { name: 'tenant name', path: '/_sandbox/tenants', body: (s: string) => ({ name: s }), field: 'name' },
      { name: 'session name', path: '/_sandbox/sessions', body: (s: string) => ({ name: s }), field: 'name' },
      { name: 'fault rule path', path: '/_sandbox/faults', body: (s: string) => ({ match: { path: s }, effect: { status: 503 } }), field: 'match.path' },
      { name: 'fault rule method', path: '/_sandbox/faults', body: (s: string) => ({ match: { method: s }, effect: { status: 503 } }), field: 'match.method' },
      { name: 'fault rule client id', path: '/_sandbox/faults', body: (s: string) => ({ match: { clientId: s }, effect: { status: 503 } }), field: 'match.clientId' },
      { name: 'fault rule answer body', path: '/_sandbox/faults', body: (s: string) => ({ effect: { status: 503, body: { message: [s] } } }), field: 'effect.body.message[0]' },
      { name: 'fault rule header', path: '/_sandbox/faults', body: (s: string) => ({ effect: { status: 503, headers: { 'x-why': s } } }), field: 'effect.headers.x-why' },
      ...(world === undefined
        ? []
        : [
            { name: 'a world\'s session name', path: `/_sandbox/worlds/${world.id}/sessions`, body: (s: string) => ({ name: s }), field: 'name' },
            { name: 'a world\'s fault rule path', path: `/_sandbox/worlds/${world.id}/faults`, body: (s: string) => ({ match: { path: s }, effect: { status: 503 } }), field: 'match.path' }
          ])
    ]
    const bad = UNSTORABLE
    const count = async (path: string) => {
      const a = await unchecked(run, { path })
      if (a.status !== 200) return -1
      const body = json<unknown[] | { worlds?: unknown[], tenants?: unknown[] }>(a)
      return (Array.isArray(body) ? body : body.worlds ?? body.tenants ?? []).length
    }
    const stores = ['/_sandbox/worlds', '/_sandbox/tenants', '/_sandbox/sessions', '/_sandbox/faults', ...(world === undefined ? [] : [`/_sandbox/worlds/${world.id}/sessions`, `/_sandbox/worlds/${world.id}/faults`])]
    const before = await Promise.all(stores.map(count))
    for (const c of cases) {
      for (const b of bad) {
        if (p.expired) return
        const a = await run.request({ method: 'POST', path: c.path, headers: JSON_TYPE, body: JSON.stringify(c.body(b.text)) })
        const error = a.status === 400 && isProblem(a) ? json<{ errors?: Array<{ field: string, message: string }> }>(a).errors?.[0] : undefined
        p.check('400 naming the field and why (NUL, surrogate)', error?.field === c.field && (b.what === 'NUL' ? /NUL/ : /surrogate/).test(error.message),
          `${c.name}, ${b.what}: ${a.status} ${text(a).slice(0, 140)}`)
      }
    }
    const after = await Promise.all(stores.map(count))
    p.check('nothing stored: the worlds, tenants, sessions and fault rules as they were', after.every((n, i) => n === before[i]), stores.map((s, i) => `${s} ${before[i]} -> ${after[i]}`).join(', '))
    if (world !== undefined) await deleteWorld(run, world.id)
  }
}

export const WORLD_BOUND_PHASES: PhaseSpec[] = [growth, secrets, idleReaders, deleteInFlight, unstorableText]
