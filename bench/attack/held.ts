import { connect, type Socket } from 'node:net'
import { promisify } from 'node:util'
import { gzip, gzipSync } from 'node:zlib'
import { keepAlive, text, type Answer } from './http.js'
import { median, microseconds, scale, sleep, type PhaseSpec } from './context.js'
import { ABC, access, AGENCY_IDS, agencyOf, attachmentHeaders, basic, createClientBody, foreignStrings, INTEGRATIONS, JSON_TYPE, liveClients, logNote, receipt, TS } from './world.js'

/** The classes that held before: cross-access, timing, gzip bombs, slow headers. */

type Version = '4.0' | '3.0' | '1'
interface Op {
  name: string
  /** Scope needed beyond the subscription. */
  scope?: string
  write?: boolean
  request(agencyId: number, uuid: () => string): { method: string; path: string; headers?: Record<string, string>; body?: string | Buffer }
}

const q = (v: Version) => (v === '1' ? '' : `?version=${v}`)
const qa = (v: Version) => (v === '1' ? '?' : `?version=${v}&`)
const clientOf = (a: number) => liveClients(a)[0]?.clientNumber ?? 1000
const policyOf = (a: number) => liveClients(a).find((c) => (c.policies ?? []).length > 0)?.policies?.[0].policyNumber ?? 'NONE-1'
const jsonBody = (o: unknown) => ({ headers: JSON_TYPE, body: JSON.stringify(o) })

function readOps (v: Version): Op[] {
  const ops: Op[] = [
    { name: `offices ${v}`, request: (a) => ({ method: 'GET', path: `/vendor/agency/${a}/offices${q(v)}` }) },
    { name: `changed clients ${v}`, scope: 'client-read', request: (a) => ({ method: 'GET', path: `/vendor/agency/${a}/clients${q(v)}` }) },
    { name: `deleted clients ${v}`, scope: 'client-read', request: (a) => ({ method: 'GET', path: `/vendor/agency/${a}/clients${qa(v)}deleted=true` }) },
    { name: `get client ${v}`, scope: 'client-read', request: (a) => ({ method: 'GET', path: `/vendor/agency/${a}/client/${clientOf(a)}${q(v)}` }) },
    {
      name: `batch read ${v}`,
      scope: 'client-read',
      request: (a) => ({ method: 'POST', path: `/vendor/agency/${a}/clients${q(v)}`, ...jsonBody(v === '1' ? [clientOf(a), 1001, 2001] : { clientNumbers: [clientOf(a), 1001, 2001] }) })
    }
  ]
  if (v !== '1') {
    ops.push({ name: `search ${v}`, scope: 'client-read', request: (a) => ({ method: 'GET', path: `/vendor/agency/${a}/clients/search${qa(v)}policyNumber=${encodeURIComponent(policyOf(a))}` }) })
    ops.push({ name: `get client with invoices ${v}`, scope: 'client-read', request: (a) => ({ method: 'GET', path: `/vendor/agency/${a}/client/${clientOf(a)}${qa(v)}include=Details,Policies,Invoices` }) })
  }
  return ops
}

const ATTACHMENT_BODY = gzipSync(Buffer.from('%PDF-1.4 cross-access'))

const OPS: Op[] = [
  ...readOps('4.0'), ...readOps('3.0'), ...readOps('1'),
  { name: 'users 4.0', scope: 'user-list', request: (a) => ({ method: 'GET', path: `/vendor/agency/${a}/users?version=4.0` }) },
  { name: 'log note 4.0', scope: 'create-log-attachment-task', write: true, request: (a, id) => ({ method: 'POST', path: `/vendor/agency/${a}/client/${clientOf(a)}/log?version=4.0`, ...jsonBody(logNote(id())) }) },
  { name: 'receipts 4.0', scope: 'create-log-attachment-task', write: true, request: (a, id) => ({ method: 'POST', path: `/vendor/agency/${a}/client/${clientOf(a)}/receipts?version=4.0`, ...jsonBody([receipt(id())]) }) },
  { name: 'create client 4.0', scope: 'client-create', write: true, request: (a, id) => ({ method: 'POST', path: `/vendor/agency/${a}/client?version=4.0`, ...jsonBody(createClientBody(`matrix-${id()}`)) }) },
  { name: 'log note 1', scope: 'create-log-attachment-task', write: true, request: (a, id) => ({ method: 'POST', path: `/vendor/agency/${a}/client/${clientOf(a)}`, ...jsonBody({ Action: 1, Body: 'b', Description: 'd', RefId: id(), TS }) }) },
  {
    name: 'attachment 4.0',
    scope: 'create-log-attachment-task',
    write: true,
    request: (a, id) => ({ method: 'POST', path: `/vendor/agency/${a}/client/${clientOf(a)}/attachment?version=4.0`, headers: attachmentHeaders('', id()), body: ATTACHMENT_BODY })
  }
]

/** The short run's endpoints: every 4.0 one, and of versions 3.0 and 1 the client reads. */
const SHORT_OPS = OPS.filter((op) => op.name.endsWith('4.0') || /^(get client|batch read|log note) (3\.0|1)$/.test(op.name))

const crossAccess: PhaseSpec = {
  name: 'cross-access',
  title: 'Cross-access matrix: every integration (and a wrong secret) × every agency × read and write endpoints',
  budgetMs: { short: 4_000, full: 45_000 },
  async run (run) {
    const p = run.phase
    await run.request({ method: 'POST', path: '/_sandbox/reset' })
    const agent = keepAlive(4)
    const ops = run.options.short ? SHORT_OPS : OPS
    const cells: { clientId: string; auth: string; wrong: boolean; agencyId: number; op: Op }[] = []
    // The short run tries a wrong secret on one endpoint per agency, the full run on every one.
    for (const i of INTEGRATIONS) {
      for (const agencyId of AGENCY_IDS) {
        for (const [k, op] of ops.entries()) {
          cells.push({ clientId: i.clientId, auth: i.auth, wrong: false, agencyId, op })
          if (!run.options.short || k === 0) cells.push({ clientId: i.clientId, auth: i.wrong, wrong: true, agencyId, op })
        }
      }
    }
    const rounds = scale(run, 1, 6)
    let allowed = 0
    await run.pool(cells.length * rounds, 4, async (n) => {
      const cell = cells[n % cells.length]
      const { available, scopes } = access(cell.clientId, cell.agencyId)
      const req = cell.op.request(cell.agencyId, () => run.rng.uuid())
      const a: Answer = await run.request({ ...req, headers: { ...req.headers, authorization: cell.auth }, agent })
      const what = `${cell.wrong ? 'wrong secret of ' : ''}${cell.clientId} × ${cell.agencyId} × ${cell.op.name}: ${a.status}`
      const ok = a.status >= 200 && a.status < 300
      const scopeMissing = cell.op.scope !== undefined && !scopes.has(cell.op.scope)
      if (cell.wrong) {
        if (ok) p.leak(`${what} (wrong secret accepted)`)
        p.check('401 for a wrong secret', a.status === 401, what)
      } else if (!available) {
        if (ok) p.leak(`${what} (agency not available to the integration)`)
        p.check('403 for an agency the integration may not see', a.status === 403, what)
      } else if (scopeMissing) {
        if (ok) p.leak(`${what} (scope ${cell.op.scope} missing)`)
        p.check('403 for a missing scope', a.status === 403, what)
      } else {
        const expected = cell.op.write === true && agencyOf(cell.agencyId)?.connected === false && !cell.op.name.startsWith('create') ? 202 : 200
        if (a.status === expected) allowed++
        p.check('allowed requests answer as documented (429 for create beyond 25/s)', a.status === expected || (a.status === 429 && cell.op.name.startsWith('create')), what)
      }
      let parsed: unknown = text(a)
      try {
        parsed = JSON.parse(text(a))
      } catch {
        // a text answer is checked as one string
      }
      const foreign = foreignStrings(parsed, cell.agencyId)
      if (foreign.length > 0) p.leak(`${what}: another agency's data: ${foreign.slice(0, 2).join('; ')}`)
    })
    agent.destroy()
    p.figure('Cells (integration × agency × endpoint × right/wrong secret)', cells.length)
    p.figure('Rounds', rounds)
    p.figure('Allowed cells answered 200/202', allowed)
    await run.request({ method: 'POST', path: '/_sandbox/reset' })
  }
}

const timing: PhaseSpec = {
  name: 'timing',
  title: 'Timing: unknown user vs known user with a wrong secret, interleaved on one connection',
  budgetMs: { short: 1_500, full: 15_000 },
  async run (run) {
    const p = run.phase
    const agent = keepAlive(1)
    const wrongUser = basic('no-such-integration', 'nw-sandbox-secret')
    const wrongSecret = basic('northwind-crm', 'not-the-secret-x')
    const n = scale(run, 150, 3000)
    const times: Record<'user' | 'secret', number[]> = { user: [], secret: [] }
    const one = async (kind: 'user' | 'secret', keep: boolean) => {
      const a = await run.request({ path: '/vendor/agencies?version=4.0', headers: { authorization: kind === 'user' ? wrongUser : wrongSecret }, agent })
      p.check('401 for wrong credentials', a.status === 401, `${kind}: ${a.status}`)
      if (keep) times[kind].push(a.ms)
    }
    for (let i = 0; i < 50; i++) await one(i % 2 === 0 ? 'user' : 'secret', false) // warm-up
    for (let i = 0; i < n && !p.expired; i++) {
      const order: ('user' | 'secret')[] = run.rng.next() < 0.5 ? ['user', 'secret'] : ['secret', 'user']
      for (const kind of order) await one(kind, true)
    }
    agent.destroy()
    const mu = median(times.user)
    const ms = median(times.secret)
    run.timingDifferenceMs = ms - mu
    p.figure('Requests each (interleaved, random order per pair)', times.user.length)
    p.figure('Median ms: unknown user / wrong secret', `${mu.toFixed(3)} / ${ms.toFixed(3)}`)
    p.figure('Difference of the medians (µs)', microseconds(ms - mu))
    p.check('medians differ by less than 0.5 ms', Math.abs(ms - mu) < 0.5, `${microseconds(ms - mu)} µs`)
  }
}

const gzipAsync = promisify(gzip)

const gzipBombs: PhaseSpec = {
  name: 'gzip-bombs',
  title: 'Gzip bombs: attachment bodies that decompress far beyond 5 MiB',
  budgetMs: { short: 2_000, full: 10_000 },
  async run (run) {
    const p = run.phase
    const zeros64 = await gzipAsync(Buffer.alloc(64 * 1024 * 1024), { level: 9 })
    const random = Buffer.alloc(Math.floor(5.5 * 1024 * 1024))
    for (let i = 0; i < random.length; i += 4) random.writeUInt32LE(Math.floor(run.rng.next() * 2 ** 32), i)
    const bombs = [
      { name: '64 MiB of zeros in one member', body: zeros64 },
      { name: '1 GiB of zeros in 16 members', body: Buffer.concat(Array.from({ length: 16 }, () => zeros64)) },
      { name: '5.5 MiB of random bytes, stored', body: await gzipAsync(random, { level: 0 }) }
    ]
    const client = liveClients(1001)[4].clientNumber
    const repeat = scale(run, 2, 12)
    await run.pool(bombs.length * repeat, 2, async (i) => {
      const bomb = bombs[i % bombs.length]
      const a = await run.request({ method: 'POST', path: `/vendor/agency/1001/client/${client}/attachment?version=4.0`, headers: attachmentHeaders(ABC, run.rng.uuid()), body: bomb.body })
      p.check('400 `File exceeds max size of 5 MB.` for an attachment that decompresses beyond 5 MiB (the live service\'s answer)', a.status === 400 && text(a).includes('File exceeds max size of 5 MB.'), `${bomb.name}: ${a.status} ${text(a).slice(0, 80)}`)
    })
    p.figure('Bombs (wire size → decompressed)', bombs.map((b) => `${b.name}: ${(b.body.length / 1024).toFixed(0)} KiB`).join('; '))
    p.figure('Sent', bombs.length * repeat)
  }
}

const slowHeaders: PhaseSpec = {
  name: 'slow-headers',
  title: 'Slow headers: many connections sending their headers a line at a time while partners keep calling',
  budgetMs: { short: 2_500, full: 20_000 },
  async run (run) {
    const p = run.phase
    const url = new URL(run.target.origin)
    const count = scale(run, 40, 200)
    const seconds = scale(run, 1.5, 15)
    const sockets: Socket[] = []
    let closedByServer = 0
    for (let i = 0; i < count; i++) {
      const s = connect(Number(url.port), url.hostname, () => s.write(`GET /_sandbox/health HTTP/1.1\r\nHost: ${url.host}\r\n`))
      s.on('error', () => {})
      s.on('close', () => closedByServer++)
      sockets.push(s)
      p.tried++
    }
    const stopAt = Date.now() + seconds * 1000
    const drip = setInterval(() => {
      for (const [i, s] of sockets.entries()) if (!s.destroyed) s.write(`X-Slow-${i}: ${Date.now() % 1000}\r\n`)
    }, 500)
    const agent = keepAlive(2)
    let answered = 0
    const latencies: number[] = []
    const partner = async () => {
      while (Date.now() < stopAt && !p.expired) {
        const a = await run.request({ path: '/vendor/agencies?version=4.0', headers: { authorization: ABC }, agent })
        p.check('partner requests answer 200 meanwhile', a.status === 200, `${a.status} ${a.error ?? ''}`)
        if (a.status === 200) answered++
        latencies.push(a.ms)
        await sleep(20)
      }
    }
    await Promise.all([partner(), partner()])
    clearInterval(drip)
    const open = sockets.filter((s) => !s.destroyed).length
    const closed = closedByServer
    for (const s of sockets) s.destroy()
    agent.destroy()
    p.check('health probes answered throughout', p.probeFailures === 0, `${p.probeFailures} probes failed`)
    p.figure('Slow connections / seconds', `${count} / ${seconds}`)
    p.figure('Still open at the end (the rest closed by the server)', `${open} (${closed} closed)`)
    p.figure('Partner requests answered; slowest (ms)', `${answered}; ${Math.max(0, ...latencies).toFixed(1)}`)
  }
}

export const HELD_PHASES: PhaseSpec[] = [crossAccess, timing, gzipBombs, slowHeaders]
