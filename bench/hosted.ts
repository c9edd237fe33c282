import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { ROOT } from '../src/config.js'
import { startScratchPostgres, type ScratchPostgres } from '../scripts/scratch-postgres.js'
import { prepareData, workingCopy, type BenchData } from './data.js'
import { runLoad } from './load-run.js'
import { freePort, spawnServer, type ServerProcess } from './processes.js'
import type { LoadJob } from './protocol.js'
import { buildScenarios, type Scenario } from './scenarios.js'
import { median, rateOf, summarize } from './stats.js'

/**
 * Hosted mode on one machine (`npm run build && node dist/bench/hosted.js`): a throw-away
 * PostgreSQL cluster, instances of the sandbox over it, and Debian's nginx round-robin in front.
 * - reads: one instance over PostgreSQL against one over SQLite (the same data), run after run in
 *   turn, each the median of its runs;
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

const SIDES = ['sqlite', 'strict', 'notified'] as const
type SideId = typeof SIDES[number]
type ReadRow = { id: string } & Record<SideId, { rate: number, p99: number }>

/** Requests per second of each server, run after run in turn (the order rotating); the medians. */
async function reads (data: BenchData, scenarios: Scenario[], servers: Record<SideId, ServerProcess>, ids: readonly string[] = READS, connections = CONNECTIONS): Promise<ReadRow[]> {
  const rows: ReadRow[] = []
  for (const id of ids) {
    const scenario = scenarios.find((s) => s.id === id)!
    const rates = Object.fromEntries(SIDES.map((side) => [side, { rate: [] as number[], p99: [] as number[] }])) as Record<SideId, { rate: number[], p99: number[] }>
    for (let run = 0; run < RUNS; run++) {
      for (let i = 0; i < SIDES.length; i++) {
        const side = SIDES[(i + run) % SIDES.length]
        const { result } = await runLoad(job(servers[side].origin, data, scenario, { connections }), servers[side].pid)
        rates[side].rate.push(rateOf(result))
        rates[side].p99.push(summarize(result.latencies).p99Ms)
      }
    }
    const row = { id, ...Object.fromEntries(SIDES.map((side) => [side, { rate: median(rates[side].rate), p99: median(rates[side].p99) }])) } as ReadRow
    log(`${id}: SQLite ${row.sqlite.rate.toFixed(0)}/s, PostgreSQL strict ${row.strict.rate.toFixed(0)}/s (${(row.strict.rate / row.sqlite.rate).toFixed(2)}), notified ${row.notified.rate.toFixed(0)}/s (${(row.notified.rate / row.sqlite.rate).toFixed(2)})`)
    rows.push(row)
  }
  return rows
}

/** Create-client latency at 20 a second for 10 s (open loop). */
async function creates (data: BenchData, scenarios: Scenario[], server: ServerProcess) {
  const scenario = scenarios.find((s) => s.id === 'create-client')!
  const { result } = await runLoad({ ...job(server.origin, data, { variants: scenario.variants, expect: [200] }), connections: 4, warmup: null, measure: { seconds: 10 }, rate: 20 }, server.pid)
  return { ...summarize(result.latencies), requests: result.requests, errors: result.errors }
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
    const sqlite = await serve({ SANDBOX_DB: copy.file })
    servers.push(sqlite)
    const a = await serve(hostedEnv)
    servers.push(a)
    log(`first instance over an empty database: seeded and healthy in ${a.startupMs.toFixed(0)} ms`)
    const b = await serve(hostedEnv)
    servers.push(b)
    log(`second instance: from the log in ${b.startupMs.toFixed(0)} ms`)
    const n = await serve({ ...hostedEnv, SANDBOX_HOSTED_READS: 'notified' })
    servers.push(n)

    const readRows = await reads(data, scenarios, { sqlite, strict: a, notified: n })
    const manyRows = await reads(data, scenarios, { sqlite, strict: a, notified: n }, ['get-client', 'changed-all'], MANY_CONNECTIONS)
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
    n.child.kill('SIGKILL')
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

type Figures = {
  data: BenchData
  readRows: ReadRow[]
  manyRows: ReadRow[]
  createOverPg: Awaited<ReturnType<typeof creates>>
  createOverSqlite: Awaited<ReturnType<typeof creates>>
  seen: Awaited<ReturnType<typeof visibility>>
  seenNotified: Awaited<ReturnType<typeof visibility>>
  journal: Awaited<ReturnType<typeof journalReads>>
  examined: Awaited<ReturnType<typeof sessions>>
  startup: { seeded: number, fromLog: number }
  nginx: { one: number, two: number }
  killed: { reads: { requests: number, errors: number, statuses: Record<string, number> }, writes: { requests: number, errors: number, statuses: Record<string, number> } }
  seconds: number
}

function readTable (rows: ReadRow[]): string {
  const ratio = (r: ReadRow, side: SideId) => (r[side].rate / r.sqlite.rate).toFixed(2)
  return rows.map((r) => `| ${r.id} | ${r.sqlite.rate.toFixed(0)} | ${r.strict.rate.toFixed(0)} | ${ratio(r, 'strict')} | ${r.notified.rate.toFixed(0)} | ${ratio(r, 'notified')} | ${r.sqlite.p99.toFixed(1)} / ${r.strict.p99.toFixed(1)} / ${r.notified.p99.toFixed(1)} |`).join('\n')
}

function report (f: Figures): string {
  const ms = (n: number) => n.toFixed(1)
  const held = (ok: boolean) => (ok ? 'yes' : '**no**')
  const ratio = (r: ReadRow, side: SideId) => r[side].rate / r.sqlite.rate
  const targeted = (rows: ReadRow[], connections: number) => rows
    .filter((r) => r.id === 'get-client' || r.id.startsWith('changed'))
    .map((r) => ({ ...r, id: `${r.id} (${connections} connections)` }))
  const readTargets = [...targeted(f.readRows, CONNECTIONS), ...targeted(f.manyRows, MANY_CONNECTIONS)]
  return `# Hosted mode

Generated by \`node dist/bench/hosted.js\` (bench/hosted.ts) on ${new Date().toISOString().slice(0, 10)}: ${f.seconds.toFixed(0)} s, Node ${process.version}, ${cpus().length} cores (load average ${loadavg()[0].toFixed(2)} at the end). A throw-away PostgreSQL cluster (scripts/scratch-postgres.ts: fsync off, as a test cluster), instances of \`agency-sandbox serve\` over it with the benchmark's fixture of ${f.data.clients.toLocaleString('en-US')} clients, an instance over SQLite with the same data, and Debian's nginx, all on 127.0.0.1 of this one machine: the database, the instances, nginx and the load generators share its ${cpus().length} cores.

Two ways an instance learns of commits made by others (\`SANDBOX_HOSTED_READS\`): **strict**, the default, acknowledges a write only once every other instance has heard it announced (or its lease ran out), so an instance answers from what it heard while it listens within its lease, asking PostgreSQL for the heads otherwise, and no read misses a write acknowledged before it; **notified** does not wait at the write, so a read may miss a write acknowledged a moment before on another instance. Both ask PostgreSQL while the listening connection is down.

## Targets

| Target | Strict | Held | Notified | Held |
|---|---|---|---|---|
${readTargets.map((r) => `| ${r.id} over PostgreSQL ≥ 0.8 of SQLite | ${ratio(r, 'strict').toFixed(2)} | ${held(ratio(r, 'strict') >= 0.8)} | ${ratio(r, 'notified').toFixed(2)} | ${held(ratio(r, 'notified') >= 0.8)} |`).join('\n')}
| a write on A read on B by another client, p99 < 50 ms after the acknowledgement | ${ms(f.seen.p99Ms)} ms | ${held(f.seen.p99Ms < 50)} | ${ms(f.seenNotified.p99Ms)} ms | ${held(f.seenNotified.p99Ms < 50)} |
| stale reads by the writer's next request on the other instance | ${f.seen.staleFirstReads} of ${f.seen.samples} | ${held(f.seen.staleFirstReads === 0)} | ${f.seenNotified.staleFirstReads} of ${f.seenNotified.samples} | ${held(f.seenNotified.staleFirstReads === 0)} |
| create client p99 over PostgreSQL < 20 ms | ${ms(f.createOverPg.p99Ms)} ms | ${held(f.createOverPg.p99Ms < 20)} | (writes are the same) | |

## Reads, one instance over each store

Requests per second, ${CONNECTIONS} connections, ${SECONDS} s runs after a 1 s warm-up, median of ${RUNS} runs each, the three instances in turn (the order rotating).

| Scenario | SQLite (/s) | PostgreSQL strict (/s) | Ratio | PostgreSQL notified (/s) | Ratio | p99 SQLite / strict / notified (ms) |
|---|---|---|---|---|---|---|
${readTable(f.readRows)}

The same at ${MANY_CONNECTIONS} connections:

| Scenario | SQLite (/s) | PostgreSQL strict (/s) | Ratio | PostgreSQL notified (/s) | Ratio | p99 SQLite / strict / notified (ms) |
|---|---|---|---|---|---|---|
${readTable(f.manyRows)}

## Writes and visibility

| Figure | Value |
|---|---|
| create client, 20/s for 10 s, over PostgreSQL: p50 / p99 | ${ms(f.createOverPg.p50Ms)} / ${ms(f.createOverPg.p99Ms)} ms (${f.createOverPg.requests} created, ${f.createOverPg.errors} errors) |
| the same over SQLite: p50 / p99 | ${ms(f.createOverSqlite.p50Ms)} / ${ms(f.createOverSqlite.p99Ms)} ms |
| created on A, answered by B (strict): p50 / p99 after A's acknowledgement | ${ms(f.seen.p50Ms)} / ${ms(f.seen.p99Ms)} ms over ${f.seen.samples} creates |
| created on A, answered by N (notified): p50 / p99 | ${ms(f.seenNotified.p50Ms)} / ${ms(f.seenNotified.p99Ms)} ms over ${f.seenNotified.samples} creates |
| the request journal read on A after ten reads answered by A and B in turn: p50 / p99 of the read (every instance ships first) | ${ms(f.journal.p50Ms)} / ${ms(f.journal.p99Ms)} ms over ${f.journal.samples} reads; entries missed: ${f.journal.missing} of ${f.journal.samples * 10} |
| get client on A (strict), no session open / a session recording every request (median of ${RUNS} runs each, in turn) | ${f.examined.without.toFixed(0)}/s / ${f.examined.recording.toFixed(0)}/s (${(f.examined.recording / f.examined.without).toFixed(2)}) |
| each such session ended on B (its report judged there from what A recorded) | ${f.examined.ends.map((e) => `${e.recorded.toLocaleString('en-US')} requests: ${e.ms.toFixed(0)} ms`).join('; ')} |
| a session's count read on A after ten reads answered by A and B in turn: p50 / p99 | ${ms(f.examined.count.p50Ms)} / ${ms(f.examined.count.p99Ms)} ms over ${f.examined.count.samples} reads; requests missed: ${f.examined.count.missing} of ${f.examined.count.samples * 10} |
| first instance over an empty database (seeds the log from the fixture) | ${f.startup.seeded.toFixed(0)} ms to healthy |
| second instance (replays the log) | ${f.startup.fromLog.toFixed(0)} ms to healthy |

## Two instances behind nginx

| Figure | Value |
|---|---|
| get client, one instance directly | ${f.nginx.one.toFixed(0)}/s |
| get client, two instances behind nginx (round-robin, keep-alive) | ${f.nginx.two.toFixed(0)}/s |
| one of the two SIGKILLed mid-run: get client errors | ${f.killed.reads.errors} of ${f.killed.reads.requests + f.killed.reads.errors} (statuses ${JSON.stringify(f.killed.reads.statuses)}) |
| the same run: log notes (POST, which nginx does not retry) errors | ${f.killed.writes.errors} of ${f.killed.writes.requests + f.killed.writes.errors} (statuses ${JSON.stringify(f.killed.writes.statuses)}) |

On one machine two instances share the same ${cpus().length} cores with PostgreSQL, nginx and the load generators, so a second instance adds no capacity here; the figure shows what nginx costs and that the pair answers as one. Capacity beyond one machine is estimated in the README ("Hosting for a partner programme").
`
}

await main()
