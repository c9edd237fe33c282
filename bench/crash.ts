/**
 * Crash safety (issue 8): starts the built sandbox on a file database, sends a stream of writes of
 * every kind from a few concurrent loops (log notes, attachments, receipts, created clients,
 * pending writes to the disconnected agency 1004, and now and then a reconnect that applies the
 * pending writes), kills the process with SIGKILL at a random (seeded) moment, checks the database
 * file (integrity, foreign keys), restarts the sandbox on it and checks through the API that
 *   - every write acknowledged with 200/202 before the kill is present exactly once, with the
 *     status it was acknowledged with (a 202 may since have been applied by a reconnect),
 *   - every created client (200 with clientNumber) reads back with the data it was created with,
 *   - nothing is half-written: no attachment row without its content (and the content has the
 *     size and SHA-256 the row records), no created client without its `client` log note and no
 *     such note without its client, no applied write whose client's `modified` did not move.
 * Writes that were in flight at the kill may be there or not, but never twice.
 *
 *   node dist/bench/crash.js [--rounds 50] [--seed 1] [--kill-min-ms 150] [--kill-max-ms 1500] [--loops 4] [--no-report]
 *
 * Prints `crash-safety: N rounds, M acknowledged writes checked, L lost, D duplicated` and exits 1
 * on any loss, duplicate, half-written write or unexpected answer. The long form (10 rounds or
 * more) also writes bench/CRASH.md.
 */
import Database from 'better-sqlite3'
import { spawn, type ChildProcess } from 'node:child_process'
import { createHash, randomUUID } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { gzipSync } from 'node:zlib'
import { ROOT } from '../src/config.js'
import { seededRandom } from '../src/domain/random.js'

// ------------------------------------------------------------------------------------------------
// Options, paths, seeded randomness
// ------------------------------------------------------------------------------------------------

function option (name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`)
  if (i === -1) return fallback
  const value = Number(process.argv[i + 1])
  if (!Number.isFinite(value)) {
    console.error(`--${name} needs a number`)
    process.exit(2)
  }
  return value
}
const ROUNDS = option('rounds', 50)
const SEED = option('seed', 1)
const KILL_MIN_MS = option('kill-min-ms', 150)
const KILL_MAX_MS = option('kill-max-ms', 1500)
const LOOPS = option('loops', 4)
const REPORT = !process.argv.includes('--no-report') && ROUNDS >= 10
const VERBOSE = process.argv.includes('--verbose')

const CLI = join(ROOT, 'dist', 'src', 'cli.js')

function rng (seed: number) {
  const next = seededRandom(seed)
  return {
    next,
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)],
    bytes: (n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(next() * 256)))
  }
}
type Rng = ReturnType<typeof rng>

// ------------------------------------------------------------------------------------------------
// The demo world the writes target
// ------------------------------------------------------------------------------------------------

interface FixtureClient {
  clientNumber: number
  deleted?: boolean
  invoices?: { id: string }[]
  policies?: { id: string }[]
}
interface FixtureAgency {
  agencyId: number
  connected?: boolean
  clients: FixtureClient[]
}
const fixture = JSON.parse(readFileSync(join(ROOT, 'fixtures', 'demo.json'), 'utf8')) as { agencies: FixtureAgency[] }
const agencyOf = (id: number) => fixture.agencies.find((a) => a.agencyId === id)!
const live = (id: number) => agencyOf(id).clients.filter((c) => !c.deleted)
const FIXTURE_MAX = new Map(fixture.agencies.map((a) => [a.agencyId, Math.max(...a.clients.map((c) => c.clientNumber))]))

const ABC = 'Basic ' + Buffer.from('abc:123').toString('base64')
const NORTHWIND = 'Basic ' + Buffer.from('northwind-crm:nw-sandbox-secret').toString('base64')
const DISCONNECTED = 1004

interface Target {
  agencyId: number
  auth: string
  clients: FixtureClient[]
  create: boolean
}
const TARGETS: Target[] = [
  { agencyId: 1001, auth: ABC, clients: live(1001), create: true },
  { agencyId: 1002, auth: ABC, clients: live(1002), create: false },
  { agencyId: DISCONNECTED, auth: ABC, clients: live(DISCONNECTED), create: true },
  { agencyId: 2001, auth: NORTHWIND, clients: live(2001), create: true }
]
const WRITE_AGENCIES = TARGETS.map((t) => t.agencyId)

// ------------------------------------------------------------------------------------------------
// The ledger: what the sandbox acknowledged
// ------------------------------------------------------------------------------------------------

type Kind = 'log' | 'attachment' | 'receipt' | 'client'
interface Acked {
  agencyId: number
  kind: Kind
  refId: string
  clientNumber: number
  /** 200 = applied when acknowledged, 202 = pending. */
  status: 200 | 202
  round: number
  size?: number
  sha256?: string
  /** Created clients: the marker in their log note and first name. */
  marker?: string
}
const acked = new Map<string, Acked>()
const ackedClients = new Map<string, Acked>() // `${agency}/${clientNumber}`
const keyOf = (agencyId: number, kind: string, refId: string) => `${agencyId}/${kind}/${refId.toLowerCase()}`
const verifiedContent = new Set<string>()
/** Created clients already read back after a restart (the last restart reads every one again). */
const verifiedClients = new Set<string>()

const stats = { rounds: 0, sent: 0, acked: 0, inDoubt: 0, rejected: 0, limited: 0, checked: 0, lost: 0, duplicated: 0, halfWritten: 0, unexpected: 0, reconnects: 0 }
const problems: string[] = []
function problem (kind: 'lost' | 'duplicated' | 'halfWritten' | 'unexpected', message: string): void {
  stats[kind]++
  if (problems.length < 50) problems.push(`${kind}: ${message}`)
  if (VERBOSE || problems.length <= 10) console.error(`  ${kind}: ${message}`)
}

// ------------------------------------------------------------------------------------------------
// The sandbox process
// ------------------------------------------------------------------------------------------------

interface Server {
  child: ChildProcess
  url: string
  lines: string[]
  exited: Promise<number | null>
}

function serve (db: string): Promise<Server> {
  const child = spawn(process.execPath, [CLI, 'serve'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', SANDBOX_DB: db, LOG_LEVEL: 'info', LOG_PRETTY: 'false' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const lines: string[] = []
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no listening line in 20 s:\n' + lines.slice(-20).join('\n'))), 20_000)
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => {
        if (lines.length < 2000) lines.push(line)
        const m = /"url":"(http:[^"]+)"/.exec(line)
        if (m !== null && /listening/.test(line)) {
          clearTimeout(timer)
          resolve({ child, url: m[1], lines, exited })
        }
      })
    }
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`the sandbox exited with ${code} before listening:\n${lines.slice(-20).join('\n')}`))
    })
  })
}

async function kill (server: Server): Promise<void> {
  server.child.kill('SIGKILL')
  await server.exited
}

// ------------------------------------------------------------------------------------------------
// Writes
// ------------------------------------------------------------------------------------------------

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64')
const TS = '2026-11-20T10:00:00Z'

interface Outcome {
  status: number
  body: string
}

async function call (base: string, path: string, init: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<Outcome> {
  const res = await fetch(base + path, { method: init.method ?? 'GET', headers: init.headers, body: init.body, signal: AbortSignal.timeout(30_000) })
  return { status: res.status, body: await res.text() }
}

/** One random write; records it in the ledger when acknowledged. Throws when the connection fails (the kill). */
async function oneWrite (base: string, r: Rng, round: number): Promise<void> {
  const target = r.pick(TARGETS)
  const c = r.pick(target.clients)
  const roll = r.next()
  const refId = randomUUID()
  const json = (body: unknown) => ({ headers: { authorization: target.auth, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  stats.sent++
  let kind: Kind
  let res: Outcome
  let extra: Partial<Acked> = {}
  if (roll < 0.3) {
    kind = 'log'
    res = await call(base, `/vendor/agency/${target.agencyId}/client/${c.clientNumber}/log?version=4.0`, {
      method: 'POST', ...json({ refId, ts: TS, channel: r.int(1, 56), note: `crash round ${round} ${refId}`, ...(c.policies?.length ? { policyId: c.policies[0].id } : {}) })
    })
  } else if (roll < 0.55) {
    kind = 'attachment'
    const content = Buffer.concat([Buffer.from('%PDF-'), r.bytes(r.int(1, 48 * 1024))]) // a pdf's signature, then random bytes
    extra = { size: content.length, sha256: createHash('sha256').update(content).digest('hex') }
    const v1 = r.next() < 0.25
    const headers: Record<string, string> = v1
      ? {
          RefId: refId,
          TS,
          Action: '33',
          Desc: b64('crash test'),
          FileName: b64(`scan ${round}`),
          FileExt: 'pdf',
          LogBody: b64('received'),
          LogDescription: b64('scan'),
          SuspendedFor: 'Producer',
          SuspendedForInitials: '',
          SuspenseCategory: b64('Docs'),
          SuspenseDueDate: '2026-12-01T00:00:00Z'
        }
      : { RefId: refId, TS, Channel: '33', Desc: b64('crash test'), FileName: b64(`file ${round}`), FileExt: 'pdf', LogNote: b64('received') }
    res = await call(base, `/vendor/agency/${target.agencyId}/client/${c.clientNumber}/attachment${v1 ? '' : '?version=4.0'}`, {
      method: 'POST', headers: { authorization: target.auth, 'content-type': 'application/octet-stream', ...headers }, body: gzipSync(content)
    })
  } else if (roll < 0.8) {
    kind = 'receipt'
    const invoice = c.invoices?.[0]
    const items = [{ refId, ts: TS, channel: 4, logNote: `receipt ${round}`, total: 1.25, ...(invoice !== undefined && r.next() < 0.7 ? { invoices: [{ invoiceId: invoice.id, amount: 1.25 }], total: 1.25 } : {}) }]
    res = await call(base, `/vendor/agency/${target.agencyId}/client/${c.clientNumber}/receipts?version=4.0`, { method: 'POST', ...json(items) })
    if (res.status === 200 || res.status === 202) {
      const answers = JSON.parse(res.body) as { refId: string; code: number }[]
      if (answers[0]?.code !== 200) {
        problem('unexpected', `receipt item answered ${res.body.slice(0, 200)}`)
        return
      }
    }
  } else {
    if (!target.create) {
      stats.sent--
      return oneWrite(base, r, round)
    }
    kind = 'client'
    const marker = `crash-${refId}`
    res = await call(base, `/vendor/agency/${target.agencyId}/client?version=4.0`, {
      method: 'POST',
      ...json({ People: [{ FirstName: 'Crash', LastName: marker.slice(0, 20), MainContactType: 'First' }], Log: { Channel: 29, Note: marker, TS }, Status: 'Prospect' })
    })
    if (res.status === 429) {
      stats.limited++
      return
    }
    if (res.status === 200) {
      const clientNumber = (JSON.parse(res.body) as { clientNumber: number }).clientNumber
      const entry: Acked = { agencyId: target.agencyId, kind, refId: marker, clientNumber, status: 200, round, marker }
      ackedClients.set(`${target.agencyId}/${clientNumber}`, entry)
      stats.acked++
      return
    }
  }
  if (res.status === 200 || res.status === 202) {
    acked.set(keyOf(target.agencyId, kind, refId), { agencyId: target.agencyId, kind, refId, clientNumber: c.clientNumber, status: res.status, round, ...extra })
    stats.acked++
    const expected = target.agencyId === DISCONNECTED && !reconnected ? 202 : 200
    if (target.agencyId !== DISCONNECTED && res.status !== expected) problem('unexpected', `${kind} to ${target.agencyId} answered ${res.status}`)
  } else {
    stats.rejected++
    problem('unexpected', `${kind} to ${target.agencyId}/${c.clientNumber} answered ${res.status} ${res.body.slice(0, 200)}`)
  }
}

/** True while a reconnect of 1004 is in progress (its writes may then answer 200). */
let reconnected = false

async function reconnectCycle (base: string): Promise<void> {
  reconnected = true
  stats.reconnects++
  const on = await call(base, `/_sandbox/agencies/${DISCONNECTED}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"connected":true}' })
  if (on.status !== 200) problem('unexpected', `reconnect answered ${on.status} ${on.body.slice(0, 200)}`)
  const off = await call(base, `/_sandbox/agencies/${DISCONNECTED}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"connected":false}' })
  if (off.status !== 200) problem('unexpected', `disconnect answered ${off.status} ${off.body.slice(0, 200)}`)
  reconnected = false
}

async function writeLoop (base: string, r: Rng, round: number, stopped: () => boolean): Promise<void> {
  while (!stopped()) {
    try {
      if (r.next() < 0.02) await reconnectCycle(base)
      else await oneWrite(base, r, round)
    } catch {
      // The kill: this request's outcome is unknown (it may or may not be stored, but never twice).
      stats.inDoubt++
      if (stopped()) return
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  }
}

// ------------------------------------------------------------------------------------------------
// Checks
// ------------------------------------------------------------------------------------------------

/** The database file after the kill, before the restart: SQLite's own view of it. */
function checkFile (db: string): string {
  const conn = new Database(db, { fileMustExist: true })
  try {
    const integrity = conn.pragma('integrity_check', { simple: true })
    if (integrity !== 'ok') problem('halfWritten', `integrity_check: ${String(integrity)}`)
    const fk = conn.pragma('foreign_key_check') as unknown[]
    if (fk.length > 0) problem('halfWritten', `foreign_key_check: ${JSON.stringify(fk.slice(0, 3))}`)
    const orphanAttachments = conn.prepare("SELECT count(*) FROM writes w WHERE w.kind = 'attachment' AND NOT EXISTS (SELECT 1 FROM attachment_content c WHERE c.write_seq = w.seq)").pluck().get() as number
    if (orphanAttachments > 0) problem('halfWritten', `${orphanAttachments} attachment rows without content`)
    return String(conn.pragma('journal_mode', { simple: true }))
  } finally {
    conn.close()
  }
}

interface WriteView {
  seq: number
  refId: string
  kind: Kind
  status: 'pending' | 'applied'
  clientNumber: number
  appliedAt: string | null
  data: Record<string, unknown>
}

async function verify (base: string, everything = false): Promise<void> {
  const authOf = (agencyId: number) => TARGETS.find((t) => t.agencyId === agencyId)!.auth
  const seen = new Map<string, WriteView[]>()
  const modifiedCache = new Map<string, number>()
  const modifiedOf = async (agencyId: number, clientNumber: number) => {
    const key = `${agencyId}/${clientNumber}`
    if (!modifiedCache.has(key)) {
      const res = await call(base, `/vendor/agency/${agencyId}/client/${clientNumber}?version=4.0&include=Details`, { headers: { authorization: authOf(agencyId) } })
      modifiedCache.set(key, res.status === 200 ? Date.parse((JSON.parse(res.body) as { details: { modified: string } }).details.modified) : NaN)
    }
    return modifiedCache.get(key)!
  }

  for (const agencyId of WRITE_AGENCIES) {
    const res = await call(base, `/_sandbox/agencies/${agencyId}/writes`)
    if (res.status !== 200) {
      problem('unexpected', `writes of ${agencyId} answered ${res.status}`)
      continue
    }
    const list = JSON.parse(res.body) as WriteView[]
    for (const w of list) {
      const key = keyOf(agencyId, w.kind, w.refId)
      seen.set(key, [...(seen.get(key) ?? []), w])
    }
    // Nothing half-written: attachments with their bytes, applied writes that moved their client.
    for (const w of list) {
      if (w.kind === 'attachment' && !verifiedContent.has(`${agencyId}/${w.seq}`)) {
        const content = await fetch(`${base}/_sandbox/agencies/${agencyId}/attachments/${w.refId}/content`)
        const bytes = Buffer.from(await content.arrayBuffer())
        if (content.status !== 200) problem('halfWritten', `attachment ${w.refId} of ${agencyId}: content answered ${content.status}`)
        else if (bytes.length !== w.data.size || createHash('sha256').update(bytes).digest('hex') !== w.data.sha256) {
          problem('halfWritten', `attachment ${w.refId} of ${agencyId}: content is ${bytes.length} bytes, the row says ${String(w.data.size)}`)
        } else verifiedContent.add(`${agencyId}/${w.seq}`)
      }
      if (w.status === 'applied' && w.appliedAt !== null) {
        const modified = await modifiedOf(agencyId, w.clientNumber)
        if (!(modified >= Date.parse(w.appliedAt))) {
          problem('halfWritten', `${w.kind} ${w.refId} of ${agencyId} applied at ${w.appliedAt}, but client ${w.clientNumber} was modified ${new Date(modified).toISOString()}`)
        }
      }
    }
    // Created clients and their `client` notes: one for one.
    const ids = await call(base, `/vendor/agency/${agencyId}/clients?version=4.0`, { headers: { authorization: authOf(agencyId) } })
    const created = (JSON.parse(ids.body) as number[]).filter((n) => n > FIXTURE_MAX.get(agencyId)!)
    const notes = list.filter((w) => w.kind === 'client')
    const noted = new Set(notes.map((w) => w.clientNumber))
    for (const n of created) if (!noted.has(n)) problem('halfWritten', `client ${n} of ${agencyId} exists without its client log note`)
    const exists = new Set(created)
    for (const w of notes) if (!exists.has(w.clientNumber)) problem('halfWritten', `client log note ${w.refId} of ${agencyId} names client ${w.clientNumber}, which does not exist`)
    const markers = new Map<string, number>()
    for (const w of notes) markers.set(String(w.data.note), (markers.get(String(w.data.note)) ?? 0) + 1)
    for (const [marker, count] of markers) if (count > 1) problem('duplicated', `client created ${count} times: ${marker}`)
  }

  for (const [key, list] of seen) if (list.length > 1) problem('duplicated', `${key} listed ${list.length} times`)

  for (const [key, a] of acked) {
    stats.checked++
    const found = seen.get(key)
    if (found === undefined || found.length === 0) {
      problem('lost', `${a.kind} ${a.refId} acknowledged ${a.status} to ${a.agencyId}/${a.clientNumber} in round ${a.round}`)
      continue
    }
    const w = found[0]
    if (w.clientNumber !== a.clientNumber) problem('halfWritten', `${key}: stored for client ${w.clientNumber}, sent to ${a.clientNumber}`)
    if (a.status === 200 && w.status !== 'applied') problem('lost', `${key}: acknowledged 200 (created) but stored ${w.status}`)
    if (a.kind === 'attachment' && (w.data.sha256 !== a.sha256 || w.data.size !== a.size)) problem('halfWritten', `${key}: stored ${String(w.data.size)} bytes, sent ${a.size}`)
  }

  for (const [key, a] of ackedClients) {
    stats.checked++
    if (!everything && verifiedClients.has(key)) continue
    verifiedClients.add(key)
    const res = await call(base, `/vendor/agency/${a.agencyId}/client/${a.clientNumber}?version=4.0&include=Details,People`, { headers: { authorization: authOf(a.agencyId) } })
    if (res.status !== 200) {
      problem('lost', `client ${key} created (200) in round ${a.round} reads back ${res.status}`)
      continue
    }
    const client = JSON.parse(res.body) as { people: { lastName: string }[] }
    if (client.people?.[0]?.lastName !== a.marker!.slice(0, 20)) problem('halfWritten', `client ${key} reads back with people ${JSON.stringify(client.people).slice(0, 120)}`)
    const notes = await call(base, `/_sandbox/agencies/${a.agencyId}/writes?kind=client&clientNumber=${a.clientNumber}`)
    const list = JSON.parse(notes.body) as WriteView[]
    if (list.length !== 1 || list[0].data.note !== a.marker) problem('halfWritten', `client ${key}: ${list.length} client log notes (${JSON.stringify(list.map((w) => w.data.note))})`)
  }
}

// ------------------------------------------------------------------------------------------------
// Rounds
// ------------------------------------------------------------------------------------------------

async function main (): Promise<void> {
  if (!existsSync(CLI)) {
    console.error(`${CLI} is missing: build first (npx tsc -p tsconfig.build.json)`)
    process.exit(2)
  }
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-crash-'))
  const db = join(dir, 'sandbox.db')
  const r = rng(SEED)
  const started = Date.now()
  let journalMode = '?'
  const killMoments: number[] = []
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      const server = await serve(db)
      // A kill during a reconnect cycle can leave 1004 connected: start every round disconnected.
      const reset = await call(server.url, `/_sandbox/agencies/${DISCONNECTED}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"connected":false}' })
      if (reset.status !== 200) problem('unexpected', `disconnect at round start answered ${reset.status}`)
      await verify(server.url)

      let stopped = false
      const killAfter = r.int(KILL_MIN_MS, KILL_MAX_MS)
      killMoments.push(killAfter)
      const loops = Array.from({ length: LOOPS }, (_, i) => writeLoop(server.url, rng(SEED * 1000 + round * 10 + i), round, () => stopped))
      const ackedBefore = stats.acked
      await new Promise((resolve) => setTimeout(resolve, killAfter))
      stopped = true
      await kill(server)
      await Promise.all(loops)
      stats.rounds = round
      journalMode = checkFile(db)
      if (VERBOSE || round % 10 === 0 || round === ROUNDS) {
        console.log(`round ${round}: killed after ${killAfter} ms, ${stats.acked - ackedBefore} writes acknowledged this round, ${acked.size + ackedClients.size} in the ledger`)
      }
    }
    // The last restart: everything acknowledged in the last round is checked too.
    const server = await serve(db)
    stats.checked = 0
    await verify(server.url, true)
    server.child.kill('SIGTERM')
    await server.exited
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  const summary = `crash-safety: ${stats.rounds} rounds, ${stats.checked} acknowledged writes checked, ${stats.lost} lost, ${stats.duplicated} duplicated`
  console.log(summary)
  console.log(`  ${stats.sent} writes sent, ${stats.acked} acknowledged, ${stats.inDoubt} failed at a kill (in flight or refused), ${stats.limited} rate-limited (429), ` +
    `${stats.reconnects} reconnects of ${DISCONNECTED}; ${stats.halfWritten} half-written, ${stats.unexpected} unexpected answers; journal_mode=${journalMode}; ${seconds} s`)
  if (REPORT) {
    const lines = [
      '# Crash safety', '',
      `\`node dist/bench/crash.js --rounds ${ROUNDS} --seed ${SEED}\` (${new Date().toISOString().slice(0, 10)}, ${seconds} s)`, '',
      '| Figure | Value |', '|---|---|',
      `| Rounds (SIGKILL at a random moment, restart on the same file) | ${stats.rounds} |`,
      `| Kill moment after the writes start | ${Math.min(...killMoments)}-${Math.max(...killMoments)} ms (seeded) |`,
      `| Writes sent (log notes, attachments v4/v1, receipts, created clients; 1004 pending) | ${stats.sent} |`,
      `| Acknowledged (200/202) | ${stats.acked} |`,
      `| Failed at a kill (in flight or refused; outcome unknown, present at most once) | ${stats.inDoubt} |`,
      `| Reconnects of 1004 (pending writes applied) | ${stats.reconnects} |`,
      `| Acknowledged writes checked after the last restart | ${stats.checked} |`,
      `| Lost | ${stats.lost} |`, `| Duplicated | ${stats.duplicated} |`, `| Half-written | ${stats.halfWritten} |`,
      `| Unexpected answers | ${stats.unexpected} |`,
      `| SQLite journal mode of the file | ${journalMode} |`, '',
      ...(problems.length > 0 ? ['Problems:', '', ...problems.map((p) => `- ${p}`), ''] : [])
    ]
    writeFileSync(join(ROOT, 'bench', 'CRASH.md'), lines.join('\n'))
  }
  process.exit(stats.lost + stats.duplicated + stats.halfWritten + stats.unexpected > 0 ? 1 : 0)
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
