import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { ROOT } from '../src/config.js'
import { startScratchPostgres, type ScratchPostgres } from '../scripts/scratch-postgres.js'
import { prepareData, workingCopy, type BenchData } from './data.js'
import { runLoad } from './load-run.js'
import { freePort, spawnServer, type ServerProcess } from './processes.js'
import type { LoadJob } from './protocol.js'
import { buildScenarios, type Scenario } from './scenarios.js'
import { report, SIDES, type ReadRow, type SideId } from './hosted-report.js'
import { median, rateOf, summarize } from './stats.js'

/**
 * Hosted mode on one machine (`npm run build && node dist/bench/hosted.js`): a throw-away
 * PostgreSQL cluster, instances of the sandbox over it, and Debian's nginx round-robin in front.
 * - reads: an instance over PostgreSQL (of each mode) against one over SQLite (the same data), in
 *   turn, every run on instances started for it, each ratio taken within its run;
 * - create client over PostgreSQL: latency at 20 creates a second (under the limit of 25);
 * - a write on instance A read on instance B: the delay from A's acknowledgement until B answers
 *   it, by another client, and reads by the writer's own next request that missed it;
 * - the shared request journal and examiner sessions: reads and counts after requests answered by both;
 * - two instances behind nginx against one: throughput, and errors when one is killed mid-run.
 * Everything on 127.0.0.1, every load bounded in time.
 */

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '10000' },
    runs: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '10' },
    out: { type: 'string', default: join(ROOT, 'bench', 'HOSTED.md') }
  }
})
const RUNS = Number(values.runs)
const SECONDS = Number(values.duration)
const CONNECTIONS = Number(values.connections)
const READS = ['get-client', 'changed-all', 'changed-recent', 'batch-200', 'search-policy'] as const
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

/** Connections of the second reads table: what PostgreSQL's share of the cores costs at more connections. */
const MANY_CONNECTIONS = 64

function job (origin: string, data: BenchData, scenario: Pick<Scenario, 'variants' | 'expect'>, extra: Partial<LoadJob> = {}): LoadJob {
  return {
    origin,
    authorization: 'Basic ' + Buffer.from(`${data.credentials.clientId}:${data.credentials.clientSecret}`).toString('base64'),
    variants: scenario.variants,
    connections: CONNECTIONS,
    warmup: { seconds: 1 },
    measure: { seconds: SECONDS },
    expect: scenario.expect,
    ...extra
  }
}

/** What one read table measures: its scenarios, at how many connections. */
interface ReadPlan { ids: readonly string[], connections: number }

/**
 * Requests per second of each side, every run on instances started for it, loaded in turn (the
 * order rotating); a side's ratio is taken run by run against the SQLite instance of the same
 * run (bench/hosted-report.ts says why). One table of rows per plan.
 */
async function reads (data: BenchData, scenarios: Scenario[], start: (side: SideId) => Promise<ServerProcess>, plans: ReadPlan[]): Promise<ReadRow[][]> {
  type Runs = Record<SideId, { rate: number[], p99: number[] }>
  const measured = plans.map((plan) => plan.ids.map(() => Object.fromEntries(SIDES.map((side) => [side, { rate: [] as number[], p99: [] as number[] }])) as Runs))
  for (let run = 0; run < RUNS; run++) {
    const started: ServerProcess[] = []
    try {
      const servers = {} as Record<SideId, ServerProcess>
      for (const side of SIDES) {
        servers[side] = await start(side)
        started.push(servers[side])
      }
      for (const [p, plan] of plans.entries()) {
        for (const [i, id] of plan.ids.entries()) {
          const scenario = scenarios.find((s) => s.id === id)!
          for (let k = 0; k < SIDES.length; k++) {
            const side = SIDES[(k + run) % SIDES.length]
            const { result } = await runLoad(job(servers[side].origin, data, scenario, { connections: plan.connections }), servers[side].pid)
            measured[p][i][side].rate.push(rateOf(result))
            measured[p][i][side].p99.push(result.latency.p99Ms)
          }
        }
      }
    } finally {
      for (const server of started) await server.stop(5000)
    }
    log(`reads, run ${run + 1} of ${RUNS} done`)
  }
  return plans.map((plan, p) => plan.ids.map((id, i) => {
    const runs = measured[p][i]
    const figures = (side: SideId) => {
      const ratios = runs[side].rate.map((rate, run) => rate / runs.sqlite.rate[run])
      return { rate: median(runs[side].rate), p99: median(runs[side].p99), ratio: { median: median(ratios), low: Math.min(...ratios), high: Math.max(...ratios) } }
    }
    const row = { id, sqlite: figures('sqlite'), strict: figures('strict'), notified: figures('notified') }
    log(`${id}, ${plan.connections} connections: SQLite ${row.sqlite.rate.toFixed(0)}/s, PostgreSQL strict ${row.strict.rate.toFixed(0)}/s (${row.strict.ratio.median.toFixed(2)}), notified ${row.notified.rate.toFixed(0)}/s (${row.notified.ratio.median.toFixed(2)})`)
    return row
  }))
}

/** Create-client latency at 20 a second for 10 s (open loop). */
async function creates (data: BenchData, scenarios: Scenario[], server: ServerProcess) {
  const scenario = scenarios.find((s) => s.id === 'create-client')!
  const { result } = await runLoad({ ...job(server.origin, data, { variants: scenario.variants, expect: [200] }), connections: 4, warmup: null, measure: { seconds: 10 }, rate: 20 }, server.pid)
  return { ...result.latency, requests: result.requests, errors: result.errors }
}

/** Creates on A, each read on B by another client until it answers: the delay after A's acknowledgement. */
async function visibility (data: BenchData, a: ServerProcess, b: ServerProcess) {
  const authorization = 'Basic ' + Buffer.from(`${data.credentials.clientId}:${data.credentials.clientSecret}`).toString('base64')
  const body = JSON.stringify({ people: [{ firstName: 'Ada', lastName: 'Visible', mainContactType: 'First' }], log: { channel: 29, note: 'n', ts: '2026-11-20T10:00:00Z' } })
  const delays: number[] = []
  let staleFirstReads = 0
  for (let i = 0; i < 200; i++) {
    const created = await fetch(`${a.origin}/vendor/agency/${data.agencyId}/client?version=4.0`, { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body })
    const acknowledged = performance.now()
    if (created.status !== 200) throw new Error(`create answered ${created.status}`)
    const { clientNumber } = await created.json() as { clientNumber: number }
    for (let attempt = 0; ; attempt++) {
      const read = await fetch(`${b.origin}/vendor/agency/${data.agencyId}/client/${clientNumber}?version=4.0`, { headers: { authorization } })
      await read.arrayBuffer()
      if (read.status === 200) break
      if (attempt === 0) staleFirstReads++
      if (performance.now() - acknowledged > 5000) throw new Error(`client ${clientNumber} not visible on B after 5 s`)
    }
    delays.push(performance.now() - acknowledged)
    await sleep(45) // under the create-client limit
  }
  return { ...summarize(Float64Array.from(delays)), samples: delays.length, staleFirstReads }
}

/**
 * The shared request journal: ten reads answered by A and B in turn, then the journal read on A
 * (every instance ships its entries before the read is answered): how long the read takes, and
 * how many of the ten it missed.
 */
async function journalReads (data: BenchData, a: ServerProcess, b: ServerProcess) {
  const authorization = 'Basic ' + Buffer.from(`${data.credentials.clientId}:${data.credentials.clientSecret}`).toString('base64')
  const took: number[] = []
  let missing = 0
  for (let round = 0; round < 100; round++) {
    for (let i = 0; i < 10; i++) {
      const read = await fetch(`${(i % 2 === 0 ? a : b).origin}/vendor/agency/${data.agencyId}/clients?version=4.0&round=${round}`, { headers: { authorization } })
      await read.arrayBuffer()
    }
    const began = performance.now()
    const answer = await fetch(`${a.origin}/_sandbox/requests?limit=10`)
    if (!answer.ok) throw new Error(`the journal read answered ${answer.status}: ${await answer.text()}`)
    const entries = await answer.json() as Array<{ query: Record<string, string> }>
    took.push(performance.now() - began)
    missing += 10 - entries.filter((e) => e.query.round === String(round)).length
  }
  return { ...summarize(Float64Array.from(took)), samples: took.length, missing }
}

/**
 * Examiner sessions shared by the instances: get client on A with no session open and with one
 * recording every request, in turn (each session then ended: the time its end and report take);
 * then a session's count read on A after ten reads answered by A and B in turn (how long, and how
 * many of the ten it missed).
 */
async function sessions (data: BenchData, scenarios: Scenario[], a: ServerProcess, b: ServerProcess) {
  const control = async (origin: string, method: string, path: string) => {
    const answer = await fetch(`${origin}/_sandbox${path}`, method === 'POST' ? { method, headers: { 'content-type': 'application/json' }, body: '{}' } : { method })
    const text = await answer.text()
    if (!answer.ok) throw new Error(`${method} ${path}: ${answer.status} ${text}`)
    return (text === '' ? {} : JSON.parse(text)) as { id: number, recorded: number }
  }
  const getClient = scenarios.find((s) => s.id === 'get-client')!
  const rates = { without: [] as number[], recording: [] as number[] }
  const ends: Array<{ ms: number, recorded: number }> = []
  for (let run = 0; run < RUNS; run++) {
    rates.without.push(rateOf((await runLoad(job(a.origin, data, getClient), a.pid)).result))
    const { id } = await control(a.origin, 'POST', '/sessions')
    rates.recording.push(rateOf((await runLoad(job(a.origin, data, getClient), a.pid)).result))
    const recorded = (await control(b.origin, 'GET', `/sessions/${id}`)).recorded
    const began = performance.now()
    await control(b.origin, 'POST', `/sessions/${id}/end`)
    ends.push({ ms: performance.now() - began, recorded })
    await control(a.origin, 'DELETE', `/sessions/${id}`)
  }
  const authorization = 'Basic ' + Buffer.from(`${data.credentials.clientId}:${data.credentials.clientSecret}`).toString('base64')
  const { id } = await control(a.origin, 'POST', '/sessions')
  const took: number[] = []
  let missing = 0
  for (let round = 1; round <= 100; round++) {
    for (let i = 0; i < 10; i++) await (await fetch(`${(i % 2 === 0 ? a : b).origin}/vendor/agency/${data.agencyId}/clients?version=4.0`, { headers: { authorization } })).arrayBuffer()
    const began = performance.now()
    const { recorded } = await control(a.origin, 'GET', `/sessions/${id}`)
    took.push(performance.now() - began)
    missing += round * 10 - recorded
  }
  await control(a.origin, 'DELETE', `/sessions/${id}`)
  return { without: median(rates.without), recording: median(rates.recording), ends, count: { ...summarize(Float64Array.from(took)), samples: took.length, missing } }
}

/** Debian's nginx, round-robin over the instances; retries only what HTTP calls idempotent (nginx's default). */
async function startNginx (upstreams: ServerProcess[]): Promise<{ origin: string, stop: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-nginx-'))
  const port = await freePort()
  const servers = upstreams.map((u) => `    server ${new URL(u.origin).host} max_fails=1 fail_timeout=2s;`).join('\n')
  writeFileSync(join(dir, 'nginx.conf'), `worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream sandbox {
${servers}
    keepalive 32;
  }
  server {
    listen 127.0.0.1:${port};
    client_max_body_size 64m;
    location / {
      proxy_pass http://sandbox;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_next_upstream error timeout http_502 http_503;
    }
  }
}
`)
  const child: ChildProcess = spawn('nginx', ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: 'ignore' })
  for (let i = 0; i < 100; i++) {
    if ((await fetch(`http://127.0.0.1:${port}/_sandbox/health`).then((r) => r.status, () => 0)) === 200) break
    await sleep(50)
  }
  return { origin: `http://127.0.0.1:${port}`, stop: () => { child.kill('SIGTERM'); rmSync(dir, { recursive: true, force: true }) } }
}

async function main (): Promise<void> {
  const started = Date.now()
  const data = await prepareData({ dir: join(ROOT, 'bench', 'data'), clients: Number(values.clients), fresh: false, cli: CLI, log })
  const scenarios = buildScenarios(data, { rotate: 1000, batches: 50, writeClients: 100, rateSeconds: 10 })
  let postgres: ScratchPostgres | undefined
  const servers: ServerProcess[] = []
  const copy = workingCopy(data)
  try {
    postgres = await startScratchPostgres()
    const hostedEnv = { SANDBOX_DATABASE_URL: postgres.url, SANDBOX_FIXTURES: data.fixtureFile }
    const sideEnv: Record<SideId, Record<string, string>> = {
      sqlite: { SANDBOX_DB: copy.file },
      strict: hostedEnv,
      notified: { ...hostedEnv, SANDBOX_HOSTED_READS: 'notified' }
    }
    const a = await serve(hostedEnv)
    servers.push(a)
    log(`first instance over an empty database: seeded and healthy in ${a.startupMs.toFixed(0)} ms`)
    const b = await serve(hostedEnv)
    servers.push(b)
    log(`second instance: from the log in ${b.startupMs.toFixed(0)} ms`)
    const n = await serve(sideEnv.notified)
    servers.push(n)
    const [readRows, manyRows] = await reads(data, scenarios, async (side) => await serve(sideEnv[side]), [
      { ids: READS, connections: CONNECTIONS },
      { ids: ['get-client', 'changed-all'], connections: MANY_CONNECTIONS }
    ])
    const sqlite = await serve(sideEnv.sqlite)
    servers.push(sqlite)

    const createOverPg = await creates(data, scenarios, a)
    await sleep(1100)
    const createOverSqlite = await creates(data, scenarios, sqlite)
    log(`create client p99: PostgreSQL ${createOverPg.p99Ms.toFixed(1)} ms, SQLite ${createOverSqlite.p99Ms.toFixed(1)} ms`)
    await sleep(1100)
    const seen = await visibility(data, a, b)
    log(`visible on B (strict) after A's acknowledgement: p50 ${seen.p50Ms.toFixed(1)} ms, p99 ${seen.p99Ms.toFixed(1)} ms; first reads that missed it: ${seen.staleFirstReads}`)
    await sleep(1100)
    const seenNotified = await visibility(data, a, n)
    log(`visible on N (notified): p50 ${seenNotified.p50Ms.toFixed(1)} ms, p99 ${seenNotified.p99Ms.toFixed(1)} ms; first reads that missed it: ${seenNotified.staleFirstReads}`)
    // stopped as a deploy stops it (it leaves the journal's instances): the journal reads measure the two that stay
    await n.stop(5000)
    const journal = await journalReads(data, a, b)
    log(`journal read on A of what A and B answered: p50 ${journal.p50Ms.toFixed(1)} ms, p99 ${journal.p99Ms.toFixed(1)} ms; entries missed: ${journal.missing}`)
    const examined = await sessions(data, scenarios, a, b)
    log(`get client on A: ${examined.without.toFixed(0)}/s, ${examined.recording.toFixed(0)}/s while a session records; ends ${examined.ends.map((e) => `${e.recorded} requests in ${e.ms.toFixed(0)} ms`).join(', ')}; count p50 ${examined.count.p50Ms.toFixed(1)} ms, p99 ${examined.count.p99Ms.toFixed(1)} ms, missed ${examined.count.missing}`)

    const getClient = scenarios.find((s) => s.id === 'get-client')!
    const nginx = await startNginx([a, b])
    const one = (await runLoad(job(a.origin, data, getClient), a.pid)).result
    const two = (await runLoad(job(nginx.origin, data, getClient), a.pid)).result
    log(`get client: one instance ${rateOf(one).toFixed(0)}/s, two behind nginx ${rateOf(two).toFixed(0)}/s`)
    // one instance killed mid-run: reads (nginx retries them on the other) and log notes (not retried)
    const logNote = scenarios.find((s) => s.id === 'log-note')!
    const killAt = SECONDS * 500
    const killer = sleep(1000 + killAt).then(() => b.child.kill('SIGKILL'))
    const [readsKilled, writesKilled] = await Promise.all([
      runLoad(job(nginx.origin, data, getClient), a.pid),
      runLoad({ ...job(nginx.origin, data, logNote), connections: 2 }, a.pid)
    ])
    await killer
    nginx.stop()
    log(`one of two killed mid-run: reads ${readsKilled.result.errors} errors of ${readsKilled.result.requests + readsKilled.result.errors}, log notes ${writesKilled.result.errors} errors of ${writesKilled.result.requests + writesKilled.result.errors}`)

    writeFileSync(resolve(values.out), report({
      data,
      settings: { connections: CONNECTIONS, manyConnections: MANY_CONNECTIONS, seconds: SECONDS, runs: RUNS },
      readRows,
      manyRows,
      createOverPg,
      createOverSqlite,
      seen,
      seenNotified,
      journal,
      examined,
      startup: { seeded: a.startupMs, fromLog: b.startupMs },
      nginx: { one: rateOf(one), two: rateOf(two) },
      killed: { reads: readsKilled.result, writes: writesKilled.result },
      seconds: (Date.now() - started) / 1000
    }))
    log(`written ${values.out}`)
  } finally {
    for (const server of servers) await server.stop(5000)
    copy.remove()
    postgres?.destroy()
  }
}

await main()
