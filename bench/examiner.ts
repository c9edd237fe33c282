import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { buildApp } from '../src/app.js'
import { loadConfig, ROOT } from '../src/config.js'
import type { FastifyRequest } from 'fastify'
import type { RequestRecord } from '../src/domain/examiner/codec.js'
import { examineRequest } from '../src/plugins/examine.js'
import { cpuSeconds, freePort, spawnServer, type ServerProcess } from './processes.js'
import { loadGets, pinTo } from './side-by-side.js'

/**
 * The examiner's figures: a report over a session of 100,000 recorded requests (target under
 * 2 s); what recording costs per request in CPU time (in process, steady whatever else runs on
 * the machine); and get-client throughput with and without a session recording it (target:
 * under 5% fewer requests per second), two servers side by side on 127.0.0.1.
 * `node dist/bench/examiner.js --help`.
 */

const HELP = `Usage: node dist/bench/examiner.js [options]

  --requests N     recorded requests the report is timed over (default 100000)
  --runs N         side-by-side throughput runs (default 10)
  --duration S     seconds per throughput run (default 4)
  --connections N  concurrent connections (default 10)
  --only WHAT      report, cost or throughput (default all three)
  --pin            throughput: both servers on CPU 0, this process and its load generator on CPU 1
                   (Linux taskset): the two servers split one CPU, so their request counts compare
                   their costs
  --session-client ID  the Client Id the session records (default abc, the load's); another one
                   records nothing and shows the method's own spread
  --sessions N     throughput: sessions open at once on the recording server (default 1): they share
                   the world's log, so recording should cost the same with 1 or 1,000`

const AGENCY = 1001
const AUTH = 'Basic ' + Buffer.from('abc:123').toString('base64')

/** A synthetic test run: listings, batch and single reads, writes, throttled and refused requests. */
function syntheticRequest (i: number, startMs: number, live: readonly number[]): RequestRecord {
  const atMs = startMs + i * 10
  const base = { atMs, realMs: atMs, elapsedMs: 1, journalId: i + 1, clientId: 'abc' }
  const client = live[i % live.length]
  switch (i % 50) {
    case 0: return { ...base, method: 'GET', url: `/vendor/agency/${AGENCY}/clients?${i % 100 === 0 ? 'version=4.0' : `version=4.0&asOf=${new Date(atMs - 60_000).toISOString()}`}`, operation: 'changedClients', status: 200 }
    case 1: return { ...base, method: 'GET', url: `/vendor/agency/${AGENCY}/clients?version=4.0&deleted=true`, operation: 'changedClients', status: 200 }
    case 2: return { ...base, method: 'POST', url: `/vendor/agency/${AGENCY}/clients?version=4.0`, operation: 'batchClients', clients: live.slice(0, 200), batchSize: 200, status: 200 }
    case 3: return { ...base, method: 'POST', url: `/vendor/agency/${AGENCY}/client/${client}/log?version=4.0`, operation: 'logNote', writes: [[randomUUID(), String(i % 7)]], status: i % 3 === 0 ? 202 : 200 }
    case 4: return { ...base, method: 'GET', url: `/vendor/agency/${AGENCY}/client/${client}?version=4.0`, operation: 'getClient', status: 429, retryAfterS: 1 }
    case 5: return { ...base, method: 'GET', url: '/vendor/agencies?version=4.0', operation: 'agencies', listedAgencies: [1001, 1002, 1004], status: 200 }
    case 6: return { ...base, method: 'GET', url: `/vendor/agency/${AGENCY}/client/${client}?version=4.0&Include=x`, operation: 'getClient', status: 401, warnings: ['ignored unknown key Notte'] }
    default: return { ...base, method: 'GET', url: `/vendor/agency/${AGENCY}/client/${client}?version=4.0`, operation: 'getClient', status: 200 }
  }
}

async function timeReport (requests: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'examiner-bench-'))
  const app = await buildApp(loadConfig({ SANDBOX_DB: join(dir, 'sandbox.db'), LOG_LEVEL: 'warn', LOG_PRETTY: 'false' }))
  try {
    const { examiner } = app.worlds.default
    const live = (await app.inject({ method: 'GET', url: `/vendor/agency/${AGENCY}/clients?version=4.0`, headers: { authorization: AUTH } })).json() as number[]
    const { id } = await examiner.start({ name: 'report bench', clientId: 'abc' })
    const startMs = Date.now()
    const seeded = performance.now()
    for (let i = 0; i < requests; i++) examiner.record(syntheticRequest(i, startMs, live))
    examiner.close()
    console.log(`recorded ${requests.toLocaleString('en-US')} requests (in memory and written) in ${Math.round(performance.now() - seeded)} ms`)
    const times: number[] = []
    for (let run = 0; run < 3; run++) {
      const started = performance.now()
      const report = await examiner.report(id)
      times.push(performance.now() - started)
      if (run === 0) console.log(`report: ${report.session.recorded.toLocaleString('en-US')} requests, verdict ${report.verdict}, ${report.findings.length} findings (${report.findings.map((f) => `${f.rule} ${f.count}`).join(', ')})`)
    }
    const text = times.map((ms) => `${Math.round(ms)} ms`).join(', ')
    console.log(`report over ${requests.toLocaleString('en-US')} recorded requests: ${text} (target < 2000 ms)`)
  } finally {
    await app.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * CPU time the recording point adds to one get-client request: examineRequest (what is taken
 * from the request) and Examiner.record, flushes included, over a request as Fastify presents it.
 */
async function recordingCost (): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'examiner-bench-'))
  const app = await buildApp(loadConfig({ SANDBOX_DB: join(dir, 'sandbox.db'), LOG_LEVEL: 'warn', LOG_PRETTY: 'false' }))
  try {
    const world = app.worlds.default
    const requests = Array.from({ length: 250 }, (_, i) => ({
      method: 'GET',
      url: `/vendor/agency/${AGENCY}/client/${1000 + i}?version=4.0`,
      operation: 'getClient',
      params: { agencyId: String(AGENCY), clientId: String(1000 + i) },
      faultId: null,
      warnings: null,
      integrationId: 'abc',
      headers: {},
      body: undefined,
      sentBody: undefined
    }) as unknown as FastifyRequest)
    const perRound = 100_000
    const costs: number[] = []
    for (let round = 0; round < 6; round++) {
      const { id } = await world.examiner.start({ name: `cost ${round}`, clientId: 'abc' })
      const before = process.cpuUsage()
      for (let i = 0; i < perRound; i++) {
        examineRequest(world, requests[i % requests.length], { atMs: world.clock.nowMs(), status: 200, elapsedMs: 0.4, journalId: i + 1, clientId: 'abc', warnings: [] })
      }
      world.examiner.close()
      const used = process.cpuUsage(before)
      if (round > 0) costs.push((used.user + used.system) / perRound) // the first round compiles
      await world.examiner.end(id)
    }
    costs.sort((a, b) => a - b)
    console.log(`recording cost per request: ${costs.map((c) => c.toFixed(2)).join(', ')} µs of CPU (median ${costs[Math.floor(costs.length / 2)].toFixed(2)} µs)`)
  } finally {
    await app.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Get-client over the agency's clients in turn. */
function load (origin: string, clients: readonly number[], seconds: number, connections: number) {
  return loadGets(origin, AUTH, clients.map((n) => `/vendor/agency/${AGENCY}/client/${n}?version=4.0`), seconds, connections)
}

async function control (origin: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(origin + '/_sandbox' + path, {
    method, ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } })
  })
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`)
  return res.status === 204 ? undefined : res.json()
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted.length % 2 === 1 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2
}
const signed = (ratio: number) => `${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(1)}%`

/**
 * Get-client throughput with a session recording against without one, side by side: two `serve`
 * processes on the same data run at the same time under the same load, one of them with a
 * session open, the roles swapped every run. Whatever else slows the machine slows both alike,
 * which runs one after the other cannot promise (on a shared machine consecutive runs differ by
 * 15–25%). With --pin both servers share CPU 0, so each run splits one CPU between them and the
 * ratio of their request counts is the ratio of their costs; the load generator has CPU 1.
 * `--session-client` opens the session for another Client Id: nothing is recorded, and the
 * figure shows the method's own spread (it should be near 0).
 */
async function throughput (runs: number, seconds: number, connections: number, pin: boolean, sessionClient: string, sessionCount: number): Promise<void> {
  const dirs: string[] = []
  const servers: ServerProcess[] = []
  try {
    for (let i = 0; i < 2; i++) {
      const dir = mkdtempSync(join(tmpdir(), 'examiner-bench-'))
      dirs.push(dir)
      const port = await freePort()
      servers.push(await spawnServer({
        args: [join(ROOT, 'dist', 'src', 'cli.js'), 'serve'],
        env: { PORT: String(port), HOST: '127.0.0.1', SANDBOX_DB: join(dir, 'sandbox.db'), LOG_LEVEL: 'warn', LOG_PRETTY: 'false' },
        port,
        healthPath: '/_sandbox/health',
        pollMs: 100,
        timeoutMs: 30_000
      }))
    }
    if (pin) {
      const pinned = servers.every((s) => pinTo(s.pid, 0)) && pinTo(process.pid, 1)
      console.log(pinned ? 'pinned: both servers on CPU 0, the load generator on CPU 1' : 'could not pin (taskset missing or refused): the runs share the CPUs')
    }
    const listing = await fetch(`${servers[0].origin}/vendor/agency/${AGENCY}/clients?version=4.0`, { headers: { authorization: AUTH } })
    const clients = (await listing.json()) as number[]
    // Warm-up: both servers, long enough for the JIT to settle; then once with a session on each.
    await Promise.all(servers.map((s) => load(s.origin, clients, 8, connections)))
    for (const s of servers) {
      const warm = (await control(s.origin, 'POST', '/sessions', { name: 'warm-up', clientId: sessionClient })) as { id: number }
      await load(s.origin, clients, 2, connections)
      await control(s.origin, 'POST', `/sessions/${warm.id}/end`)
    }
    const rates: number[] = []
    const cpus: number[] = []
    for (let run = 0; run < runs; run++) {
      const [recording, idle] = run % 2 === 0 ? servers : [servers[1], servers[0]]
      const sessions: Array<{ id: number }> = []
      for (let i = 0; i < sessionCount; i++) sessions.push((await control(recording.origin, 'POST', '/sessions', { name: `throughput ${run + 1}.${i + 1}`, clientId: sessionClient })) as { id: number })
      const cpuBefore = [cpuSeconds(recording.pid) ?? 0, cpuSeconds(idle.pid) ?? 0]
      const [withSession, without] = await Promise.all([load(recording.origin, clients, seconds, connections), load(idle.origin, clients, seconds, connections)])
      const cpuMicros = [
        ((cpuSeconds(recording.pid) ?? 0) - cpuBefore[0]) * 1e6 / Math.max(1, withSession.requests),
        ((cpuSeconds(idle.pid) ?? 0) - cpuBefore[1]) * 1e6 / Math.max(1, without.requests)
      ]
      const summary = { session: (await control(recording.origin, 'GET', `/sessions/${sessions[0].id}`)) as { recorded: number } }
      // deleted rather than ended: ending computes each one's report
      for (const { id } of sessions) await control(recording.origin, 'DELETE', `/sessions/${id}`)
      rates.push(withSession.requests / Math.max(1, without.requests))
      cpus.push(cpuMicros[0] / cpuMicros[1])
      console.log(`run ${run + 1}: with ${sessionCount} session${sessionCount === 1 ? '' : 's'} ${withSession.requests.toLocaleString('en-US')} requests (${summary.session.recorded.toLocaleString('en-US')} recorded, ` +
        `${cpuMicros[0].toFixed(1)} µs of CPU each), without ${without.requests.toLocaleString('en-US')} (${cpuMicros[1].toFixed(1)} µs): ` +
        `throughput ${signed(rates[rates.length - 1])}, CPU per request ${signed(cpus[cpus.length - 1])}` +
        `${withSession.errors + without.errors > 0 ? ` (${withSession.errors + without.errors} not 2xx or failed)` : ''}`)
    }
    console.log(`get-client with ${sessionCount} session${sessionCount === 1 ? '' : 's'} recording, against without (median of ${runs} side-by-side runs): throughput ${signed(median(rates))} ` +
      `(target: no worse than -5%), server CPU per request ${signed(median(cpus))}`)
  } finally {
    for (const s of servers) await s.stop()
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  }
}

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '10' },
    duration: { type: 'string', default: '4' },
    connections: { type: 'string', default: '10' },
    only: { type: 'string' },
    pin: { type: 'boolean', default: false },
    'session-client': { type: 'string', default: 'abc' },
    sessions: { type: 'string', default: '1' },
    help: { type: 'boolean', default: false }
  }
})
if (values.help) {
  console.log(HELP)
} else {
  const count = (name: string, text: string, max: number) => {
    const n = Number(text)
    if (!Number.isInteger(n) || n < 1 || n > max) throw new Error(`--${name} must be a whole number from 1 to ${max}`)
    return n
  }
  if (values.only === undefined || values.only === 'report') await timeReport(count('requests', values.requests, 1_000_000))
  if (values.only === undefined || values.only === 'cost') await recordingCost()
  if (values.only === undefined || values.only === 'throughput') await throughput(count('runs', values.runs, 10), count('duration', values.duration, 60), count('connections', values.connections, 100), values.pin, values['session-client'], count('sessions', values.sessions, 1000))
}
