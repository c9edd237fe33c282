import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { ROOT } from '../src/config.js'
import { startScratchPostgres, type ScratchPostgres } from '../scripts/scratch-postgres.js'
import { prepareData, workingCopy, type BenchData } from './data.js'
import { report, SIDES, type FaultRun, type Row, type SideId } from './hosted-report.js'
import { audit, newLedger, writer, type Ledger } from './ledger.js'
import { freePort, spawnServer, type ServerProcess } from './processes.js'
import { buildScenarios, type Scenario } from './scenarios.js'
import { median } from './stats.js'
import { rate, runWrk } from './hosted-wrk.js'
import { startNginxFront, type NginxFront } from '../scripts/nginx-front.js'

/**
 * Hosted mode, one owner per world (`npm run build && node dist/bench/hosted.js`): a throw-away
 * PostgreSQL cluster and instances of the sandbox over it, against one instance over SQLite with
 * the same data, all on 127.0.0.1, Debian's wrk as the load generator.
 * - side by side in each run, on instances started for it: reads and writes of one world through
 *   its owner, through another instance (forwarded), and on the SQLite instance;
 * - the owner killed under writes, PostgreSQL frozen 10 s under reads and writes, and a commit
 *   made slow for 14 s (a synchronous standby that does not exist) under creates, each with a
 *   ledger of the writes (bench/ledger.ts).
 * Every load bounded in time.
 */

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '10000' },
    runs: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '16' },
    out: { type: 'string', default: join(ROOT, 'bench', 'HOSTED.md') }
  }
})
const RUNS = Number(values.runs)
const SECONDS = Number(values.duration)
const CONNECTIONS = Number(values.connections)
const SCENARIOS = ['get-client', 'changed-recent', 'search-policy', 'log-note'] as const
const CLI = join(ROOT, 'dist', 'src', 'cli.js')
const log = (line: string) => console.log(`[hosted] ${line}`)
const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))

async function serve (env: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort()
  return await spawnServer({
    args: [CLI, 'serve'],
    env: { PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', LOG_PRETTY: 'false', ...env },
    port,
    healthPath: '/_sandbox/health',
    pollMs: 50,
    timeoutMs: 300_000
  })
}

const basicOf = (data: BenchData) => 'Basic ' + Buffer.from(`${data.credentials.clientId}:${data.credentials.clientSecret}`).toString('base64')
/** The demo fixture's world, which the fault runs write to (bench/ledger.ts). */
const DEMO = { authorization: 'Basic ' + Buffer.from('abc:123').toString('base64'), path: '/vendor/agency/1001/client/1001?version=4.0' }

interface WorldRequest { authorization: string, path: string }

/** One read of the world through `origin` (its first may take it, or load it: a long wait); true when it was forwarded to the owner. */
async function askWorld (origin: string, { authorization, path }: WorldRequest): Promise<boolean> {
  const answer = await fetch(`${origin}${path}`, { headers: { authorization }, signal: AbortSignal.timeout(300_000) })
  await answer.arrayBuffer()
  if (answer.status !== 200) throw new Error(`the world answered ${answer.status} through ${origin}`)
  return answer.headers.has('x-sandbox-forwarded-by')
}

/** The default world taken by `owner` (its first request claims it, loading or seeding it), and reached once through `other`. */
async function takeWorld (owner: ServerProcess, other: ServerProcess, request: WorldRequest): Promise<void> {
  for (const server of [owner, other]) await askWorld(server.origin, request)
}

/**
 * The default world taken through nginx, as the recipe routes it (the instance its hash of the
 * world picks takes the world on its first request), then reached once through the other instance:
 * answers which of `pair` owns it.
 */
async function takeThroughFront (front: NginxFront, pair: ServerProcess[], request: WorldRequest): Promise<{ owner: ServerProcess, other: ServerProcess }> {
  await askWorld(front.origin, request)
  const firstForwards = await askWorld(pair[0].origin, request)
  const secondForwards = await askWorld(pair[1].origin, request)
  if (firstForwards === secondForwards) throw new Error('exactly one of the two instances should forward the world\'s requests')
  return firstForwards ? { owner: pair[1], other: pair[0] } : { owner: pair[0], other: pair[1] }
}

/**
 * Each scenario on each side in turn (the order rotating from run to run), every run on instances
 * started for it; a ratio is each run's rate against the SQLite instance's in the same run.
 */
async function sideBySide (data: BenchData, scenarios: Scenario[], hostedEnv: Record<string, string>, sqliteFile: string): Promise<Row[]> {
  const measured = SCENARIOS.map(() => Object.fromEntries(SIDES.map((side) => [side, { rate: [] as number[], p99: [] as number[] }])) as Record<SideId, { rate: number[], p99: number[] }>)
  for (let run = 0; run < RUNS; run++) {
    const started: ServerProcess[] = []
    let front: NginxFront | undefined
    try {
      const sqlite = await serve({ SANDBOX_DB: sqliteFile })
      started.push(sqlite)
      const pair = [await serve(hostedEnv), await serve(hostedEnv)]
      started.push(...pair)
      front = await startNginxFront(pair[0].origin, pair[1].origin)
      const { owner, other } = await takeThroughFront(front, pair, { authorization: basicOf(data), path: `/vendor/agency/${data.agencyId}/client/${data.liveClientNumbers[0]}?version=4.0` })
      const origins: Record<SideId, string> = { sqlite: sqlite.origin, owner: owner.origin, forwarded: other.origin, nginx: front.origin }
      // each side warmed first (its compiler, its connections), with the reads and the writes it is measured on
      for (const side of SIDES) {
        for (const id of ['get-client', 'log-note']) {
          await runWrk({ origin: origins[side], authorization: basicOf(data), variants: scenarios.find((s) => s.id === id)!.variants, connections: CONNECTIONS, seconds: 1 })
        }
      }
      for (const [i, id] of SCENARIOS.entries()) {
        const scenario = scenarios.find((s) => s.id === id)!
        for (let k = 0; k < SIDES.length; k++) {
          const side = SIDES[(k + run) % SIDES.length]
          const result = await runWrk({ origin: origins[side], authorization: basicOf(data), variants: scenario.variants, connections: CONNECTIONS, seconds: SECONDS })
          if (result.non2xx + result.errors > 0) log(`${id} on ${side}: ${result.non2xx} answers not 2xx, ${result.errors} socket errors of ${result.requests}`)
          measured[i][side].rate.push(rate(result))
          measured[i][side].p99.push(result.p99Ms)
        }
      }
    } finally {
      front?.stop()
      for (const server of started) await server.stop(10_000)
    }
    log(`side by side, run ${run + 1} of ${RUNS} done`)
  }
  return SCENARIOS.map((id, i) => {
    const runs = measured[i]
    const figures = (side: SideId) => {
      const ratios = runs[side].rate.map((r, run) => r / runs.sqlite.rate[run])
      return { rate: median(runs[side].rate), p99: median(runs[side].p99), ratio: { median: median(ratios), low: Math.min(...ratios), high: Math.max(...ratios) } }
    }
    const row: Row = { id, sqlite: figures('sqlite'), owner: figures('owner'), forwarded: figures('forwarded'), nginx: figures('nginx') }
    log(`${id}: SQLite ${row.sqlite.rate.toFixed(0)}/s, owner ${row.owner.rate.toFixed(0)}/s (${row.owner.ratio.median.toFixed(2)}), through another ${row.forwarded.rate.toFixed(0)}/s (${row.forwarded.ratio.median.toFixed(2)}), through nginx ${row.nginx.rate.toFixed(0)}/s (${row.nginx.ratio.median.toFixed(2)})`)
    return row
  })
}

/** Reads through both instances until stopped, each answer noted in the ledger's list. */
async function reader (urls: () => string[], ledger: Ledger, run: { stop: boolean }): Promise<void> {
  for (let i = 0; !run.stop; i++) {
    const began = Date.now()
    try {
      const answer = await fetch(`${urls()[i % urls().length]}${DEMO.path}`, { headers: { authorization: DEMO.authorization }, signal: AbortSignal.timeout(30_000) })
      await answer.arrayBuffer()
      ledger.answers.push({ status: answer.status, ms: Date.now() - began, retryAfter: answer.headers.get('retry-after'), atMs: began })
    } catch (e) {
      ledger.answers.push({ status: (e as Error).name === 'TimeoutError' ? -1 : 0, ms: Date.now() - began, retryAfter: null, atMs: began })
    }
    await sleep(10)
  }
}

/** What a fault run's ledger says: how long answers took, what they were, and the audit. */
async function faultRun (name: string, url: string, writes: Ledger, reads: Ledger, from: number, to: number): Promise<FaultRun> {
  const answers = [...writes.answers, ...reads.answers]
  const statuses: Record<string, number> = {}
  for (const answer of answers) statuses[answer.status] = (statuses[answer.status] ?? 0) + 1
  const after = answers.filter((answer) => answer.status === 200 && answer.atMs >= from).map((answer) => answer.atMs + answer.ms)
  const result: FaultRun = {
    name,
    requests: answers.length,
    statuses,
    slowestMs: Math.max(...answers.filter((answer) => answer.status !== 0).map((answer) => answer.ms)),
    againAfterMs: after.length === 0 ? Infinity : Math.min(...after) - from,
    faultMs: to - from,
    acknowledged: writes.notes.length + writes.clients.length,
    notApplied: writes.notApplied.length + writes.createsNotApplied.length,
    audit: await audit(url, writes)
  }
  log(`${name}: ${JSON.stringify({ ...result, audit: { missing: result.audit.missing.length, twice: result.audit.twice.length, falselyRefused: result.audit.falselyRefused.length } })}`)
  return result
}

/** The owner of the default world killed outright (SIGKILL) under writes sent through both instances. */
async function killOwner (hostedEnv: Record<string, string>): Promise<FaultRun> {
  const [owner, other] = [await serve(hostedEnv), await serve(hostedEnv)]
  try {
    await takeWorld(owner, other, DEMO)
    const writes = newLedger()
    const run = { stop: false }
    let urls = [owner.origin, other.origin]
    const load = Array.from({ length: 4 }, async () => await writer(() => urls, writes, run, 30_000))
    await sleep(3000)
    const killedAt = Date.now()
    owner.child.kill('SIGKILL')
    urls = [other.origin]
    await sleep(6000)
    run.stop = true
    await Promise.all(load)
    return await faultRun('the owner killed (SIGKILL) under writes through both instances', other.origin, writes, newLedger(), killedAt, killedAt)
  } finally {
    await other.stop(10_000)
    await owner.stop(1000)
  }
}

/** PostgreSQL frozen (SIGSTOP) for 10 s under reads and writes through both instances. */
async function freeze (postgres: ScratchPostgres, hostedEnv: Record<string, string>): Promise<FaultRun> {
  const [owner, other] = [await serve(hostedEnv), await serve(hostedEnv)]
  try {
    await takeWorld(owner, other, DEMO)
    const [writes, reads] = [newLedger(), newLedger()]
    const run = { stop: false }
    const urls = () => [owner.origin, other.origin]
    const load = [...Array.from({ length: 3 }, async () => await writer(urls, writes, run, 30_000)), reader(urls, reads, run)]
    await sleep(2000)
    const from = Date.now()
    postgres.freeze()
    await sleep(10_000)
    postgres.thaw()
    const to = Date.now()
    await sleep(5000)
    run.stop = true
    await Promise.all(load)
    return await faultRun('PostgreSQL frozen (SIGSTOP) for 10 s under reads and writes', owner.origin, writes, reads, from, to)
  } finally {
    await other.stop(10_000)
    await owner.stop(10_000)
  }
}

/** Commits waiting 14 s for a synchronous standby that does not exist, under creates (and log notes) through both instances. */
async function slowCommit (url: string, hostedEnv: Record<string, string>): Promise<FaultRun> {
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  // every connection the instances open from now on waits for the standby once one is named
  await admin.query('ALTER DATABASE faults SET synchronous_commit = on')
  const [owner, other] = [await serve(hostedEnv), await serve(hostedEnv)]
  try {
    await takeWorld(owner, other, DEMO)
    const writes = newLedger()
    const run = { stop: false }
    const load = Array.from({ length: 3 }, async () => await writer(() => [owner.origin, other.origin], writes, run, 30_000, 2))
    await sleep(2000)
    const from = Date.now()
    await admin.query("ALTER SYSTEM SET synchronous_standby_names = 'standby_that_does_not_exist'")
    await admin.query('SELECT pg_reload_conf()')
    await sleep(14_000)
    await admin.query('ALTER SYSTEM RESET synchronous_standby_names')
    await admin.query('SELECT pg_reload_conf()')
    const to = Date.now()
    await sleep(5000)
    run.stop = true
    await Promise.all(load)
    return await faultRun('commits waiting 14 s for a synchronous standby that does not exist, under creates and log notes', owner.origin, writes, newLedger(), from, to)
  } finally {
    await admin.query('ALTER DATABASE faults RESET synchronous_commit').catch(() => undefined)
    await admin.end()
    await other.stop(10_000)
    await owner.stop(10_000)
  }
}

async function main (): Promise<void> {
  const started = Date.now()
  const data = await prepareData({ dir: join(ROOT, 'bench', 'data'), clients: Number(values.clients), fresh: false, cli: CLI, log })
  const scenarios = buildScenarios(data, { rotate: 1000, batches: 50, writeClients: 100, rateSeconds: 10 })
  let postgres: ScratchPostgres | undefined
  const copy = workingCopy(data)
  try {
    postgres = await startScratchPostgres()
    const hostedEnv = { SANDBOX_DATABASE_URL: postgres.url, SANDBOX_FIXTURES: data.fixtureFile }
    const rows = await sideBySide(data, scenarios, hostedEnv, copy.file)
    // the fault runs on the demo fixture's world: a database of its own
    const admin = new pg.Client({ connectionString: postgres.url })
    await admin.connect()
    await admin.query('CREATE DATABASE faults')
    await admin.end()
    const faultsUrl = postgres.url.replace(/\/postgres$/, '/faults')
    const faultEnv = { SANDBOX_DATABASE_URL: faultsUrl }
    const faults = [await killOwner(faultEnv), await freeze(postgres, faultEnv), await slowCommit(faultsUrl, faultEnv)]
    writeFileSync(resolve(values.out), report({ data, settings: { connections: CONNECTIONS, seconds: SECONDS, runs: RUNS }, rows, faults, seconds: (Date.now() - started) / 1000 }))
    log(`written ${values.out}`)
  } finally {
    copy.remove()
    postgres?.destroy()
  }
}

await main()
