import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { performance } from 'node:perf_hooks'
import { ROOT } from '../src/config.js'
import { freePort, spawnServer, statusKb, type ServerProcess } from './processes.js'
import { loadGets, pinTo } from './side-by-side.js'
import { median } from './stats.js'

/**
 * The figures of worlds (`npm run build && node dist/bench/worlds.js`), each against real `serve`
 * processes on 127.0.0.1:
 * - create: POST /_sandbox/worlds from the demo fixture, one after another (the first makes the
 *   start-up fixture's snapshot and is reported apart); reset: POST /_sandbox/worlds/{id}/reset;
 * - memory: the server's RSS with the default world alone, and with 100 demo-sized worlds alive,
 *   each used (its agencies, a client, a batch of 50, a log note);
 * - fork: POST /_sandbox/worlds {from: 'default'} over the benchmark's 100,000-client database
 *   (bench/data/bench-100k.db, made by `npm run bench`), three times;
 * - throughput: get-client on the default world of two servers loaded at the same time, one with
 *   100 worlds alive, the roles swapped every run; with --pin both servers share CPU 0, so the
 *   ratio of their request counts is the ratio of their costs, and the load generator has CPU 1.
 */

const HELP = 'Usage: node dist/bench/worlds.js [--only create,memory,fork,throughput] [--runs N] [--duration S] [--pin]'
const AUTH = 'Basic ' + Buffer.from('abc:123').toString('base64')
const AGENCY = 1001
const WORLDS = 100
const CLI = join(ROOT, 'dist', 'src', 'cli.js')
const BENCH_DB = join(ROOT, 'bench', 'data', 'bench-100k.db')

async function serve (env: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort()
  return spawnServer({
    args: [CLI, 'serve'],
    env: { PORT: String(port), HOST: '127.0.0.1', SANDBOX_DB: ':memory:', LOG_LEVEL: 'warn', LOG_PRETTY: 'false', SANDBOX_MAX_WORLDS: '1000', SANDBOX_WORLDS_MAX_BYTES: String(8 * 1024 ** 3), ...env },
    port,
    healthPath: '/_sandbox/health',
    pollMs: 50,
    timeoutMs: 120_000
  })
}

async function call<T> (origin: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const res = await fetch(origin + path, {
    method, headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await res.text()
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`)
  return (/json/.test(res.headers.get('content-type') ?? '') ? JSON.parse(text) : text) as T
}

interface Created { id: string, integrations: Array<{ clientId: string, clientSecret: string }> }

const timed = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
  const start = performance.now()
  const value = await fn()
  return [value, performance.now() - start]
}
const ms = (x: number) => `${x.toFixed(1)} ms`
const mb = (kb: number | null) => `${((kb ?? 0) / 1024).toFixed(0)} MB`
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]

/** Uses a world as a test would: its agencies, a client, a batch, a log note. */
async function use (origin: string, world: Created, n: number): Promise<void> {
  const abc = world.integrations[0]
  const authorization = 'Basic ' + Buffer.from(`${abc.clientId}:${abc.clientSecret}`).toString('base64')
  await call(origin, 'GET', '/vendor/agencies?version=4.0', undefined, { authorization })
  await call(origin, 'GET', `/vendor/agency/${AGENCY}/client/1000?version=4.0`, undefined, { authorization })
  await call(origin, 'POST', `/vendor/agency/${AGENCY}/clients?version=4.0`, { clientNumbers: Array.from({ length: 50 }, (_, i) => 1000 + i) }, { authorization })
  await call(origin, 'POST', `/vendor/agency/${AGENCY}/client/1000/log?version=4.0`, {
    refId: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`, ts: '2026-11-20T10:00:00Z', channel: 29, note: 'bench'
  }, { authorization })
}

async function createAndMemory (): Promise<void> {
  const server = await serve({})
  try {
    await call(server.origin, 'GET', '/vendor/agencies?version=4.0', undefined, { authorization: AUTH })
    const alone = statusKb(server.pid, 'VmRSS')
    const [first, firstMs] = await timed(() => call<Created>(server.origin, 'POST', '/_sandbox/worlds', {}))
    const worlds = [first]
    const creates: number[] = []
    for (let i = 1; i < WORLDS; i++) {
      const [world, took] = await timed(() => call<Created>(server.origin, 'POST', '/_sandbox/worlds', {}))
      worlds.push(world)
      creates.push(took)
    }
    const resets: number[] = []
    for (const world of worlds) resets.push((await timed(() => call(server.origin, 'POST', `/_sandbox/worlds/${world.id}/reset`)))[1])
    for (const [i, world] of worlds.entries()) await use(server.origin, world, i + 1)
    const withWorlds = statusKb(server.pid, 'VmRSS')
    const deletes: number[] = []
    for (const world of worlds) deletes.push((await timed(() => call(server.origin, 'DELETE', `/_sandbox/worlds/${world.id}`)))[1])
    console.log(`create a world from the demo fixture: first ${ms(firstMs)} (makes the snapshot), then median ${ms(median(creates))}, p95 ${ms(percentile(creates, 0.95))} over ${creates.length} (target: median under 10 ms)`)
    console.log(`reset a demo-sized world: median ${ms(median(resets))}, p95 ${ms(percentile(resets, 0.95))} over ${resets.length} (target: under 10 ms)`)
    console.log(`delete a world: median ${ms(median(deletes))}`)
    console.log(`RSS: the default world alone ${mb(alone)}; with ${WORLDS} demo-sized worlds alive and used ${mb(withWorlds)} (target: under 400 MB), ` +
      `about ${(((withWorlds ?? 0) - (alone ?? 0)) / 1024 / WORLDS).toFixed(2)} MB a world; after deleting them ${mb(statusKb(server.pid, 'VmRSS'))}`)
  } finally {
    await server.stop()
  }
}

async function fork (): Promise<void> {
  if (!existsSync(BENCH_DB)) {
    console.log(`fork: skipped, ${BENCH_DB} is missing (npm run bench makes it)`)
    return
  }
  const dir = mkdtempSync(join(tmpdir(), 'worlds-bench-'))
  try {
    copyFileSync(BENCH_DB, join(dir, 'sandbox.db'))
    const server = await serve({ SANDBOX_DB: join(dir, 'sandbox.db') })
    try {
      const before = statusKb(server.pid, 'VmRSS')
      const times: number[] = []
      for (let i = 0; i < 3; i++) {
        const [world, took] = await timed(() => call<Created>(server.origin, 'POST', '/_sandbox/worlds', { from: 'default' }))
        times.push(took)
        const view = await call<{ bytes: number, counts: { clients: number } }>(server.origin, 'GET', `/_sandbox/worlds/${world.id}`)
        console.log(`fork ${i + 1}: ${ms(took)}, ${view.counts.clients.toLocaleString('en-US')} clients, ${(view.bytes / 1048576).toFixed(0)} MiB, RSS ${mb(statusKb(server.pid, 'VmRSS'))}`)
        await call(server.origin, 'DELETE', `/_sandbox/worlds/${world.id}`)
      }
      console.log(`fork a world of 100,000 clients: median ${ms(median(times))} (target: under 1 s); RSS before ${mb(before)}`)
    } finally {
      await server.stop()
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Get-client on the default world, over 250 clients in turn. */
const load = (origin: string, seconds: number, connections: number) =>
  loadGets(origin, AUTH, Array.from({ length: 250 }, (_, i) => `/vendor/agency/${AGENCY}/client/${1000 + i}?version=4.0`), seconds, connections)

async function throughput (runs: number, seconds: number, pin: boolean): Promise<void> {
  const servers = [await serve({}), await serve({})]
  try {
    if (pin) console.log(servers.every((s) => pinTo(s.pid, 0)) && pinTo(process.pid, 1) ? 'pinned: both servers on CPU 0, the load on CPU 1' : 'could not pin')
    await Promise.all(servers.map((s) => load(s.origin, 6, 10)))
    const ratios: number[] = []
    for (let run = 0; run < runs; run++) {
      const [many, one] = run % 2 === 0 ? servers : [servers[1], servers[0]]
      const worlds: Created[] = []
      for (let i = 0; i < WORLDS; i++) worlds.push(await call<Created>(many.origin, 'POST', '/_sandbox/worlds', {}))
      for (const [i, world] of worlds.entries()) await use(many.origin, world, i + 1)
      // the creations' garbage collected and the JIT settled on both before the measurement
      await Promise.all([load(many.origin, 2, 10), load(one.origin, 2, 10)])
      const [withWorlds, alone] = await Promise.all([load(many.origin, seconds, 10), load(one.origin, seconds, 10)])
      ratios.push(withWorlds.requests / Math.max(1, alone.requests))
      console.log(`run ${run + 1}: with ${WORLDS} worlds ${withWorlds.requests.toLocaleString('en-US')} requests, RSS ${mb(statusKb(many.pid, 'VmRSS'))}; ` +
        `alone ${alone.requests.toLocaleString('en-US')}, RSS ${mb(statusKb(one.pid, 'VmRSS'))}: ${((ratios.at(-1)! - 1) * 100).toFixed(1)}%`)
      for (const world of worlds) await call(many.origin, 'DELETE', `/_sandbox/worlds/${world.id}`)
    }
    console.log(`get-client with ${WORLDS} worlds alive against one world (median of ${runs} side-by-side runs): ${((median(ratios) - 1) * 100).toFixed(1)}% (target: within 5%)`)
  } finally {
    for (const s of servers) await s.stop()
  }
}

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    runs: { type: 'string', default: '6' },
    duration: { type: 'string', default: '5' },
    pin: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false }
  }
})
if (values.help) {
  console.log(HELP)
} else {
  const only = values.only === undefined ? undefined : new Set(values.only.split(','))
  const wanted = (name: string) => only === undefined || only.has(name)
  if (wanted('create') || wanted('memory')) await createAndMemory()
  if (wanted('fork')) await fork()
  if (wanted('throughput')) await throughput(Number(values.runs), Number(values.duration), values.pin)
}
