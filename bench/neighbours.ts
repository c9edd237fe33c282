import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { Agent, request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { gzipSync } from 'node:zlib'
import { ROOT } from '../src/config.js'
import { freePort, loadAverage, RssSampler, spawnServer, statusKb, type ServerProcess } from './processes.js'
import { summarize, type LatencySummary } from './stats.js'

/**
 * Noisy neighbours (`npm run build && node dist/bench/neighbours.js`): one world of a `serve`
 * process on 127.0.0.1 hammered by wrk over 32 connections while another world's latency is
 * measured by one client, request after request, alone first and then during the hammer; each
 * scenario with each SANDBOX_WORLD_REQUESTS given (0: unbounded, as before the bound). Hammers:
 * log notes (writes), batch reads of 50 clients, attachments of 5 MiB sent as 5 KB of gzip (the
 * world's bound of 64 MiB reached within seconds, every upload after it a 507: the server's RSS is
 * sampled), and ten worlds' simulators at 6,000 changes a minute. Each row is run `--runs` times (3),
 * the limits taken in turn, and reported by its medians. Writes bench/NEIGHBOURS.md.
 */

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    limits: { type: 'string', default: '0,4' },
    runs: { type: 'string', default: '3' },
    only: { type: 'string' },
    out: { type: 'string', default: join(ROOT, 'bench', 'NEIGHBOURS.md') }
  }
})
const DURATION_S = Number(values.duration)
const CONNECTIONS = Number(values.connections)
const LIMITS = values.limits.split(',').map(Number)
const RUNS = Number(values.runs)
const MiB = 1024 * 1024
const WORLD_MAX_BYTES = 64 * MiB
/** The issue's targets: the victim's p99 at most this many times its quiet p99; RSS within the world's bound plus this. */
const P99_RATIO_TARGET = 3
const RSS_HEADROOM_MB = 150
const CLI = join(ROOT, 'dist', 'src', 'cli.js')
const AGENCY = 1001

interface World { id: string, authorization: string }

/** What a hammer did: requests answered, those not 2xx (a world at its bound answers 507), over how long. */
interface HammerResult { requests: number, refused: number, seconds: number }

interface Scenario {
  name: string
  title: string
  /** Hammers `world` (or starts other worlds' simulators); resolves when it ends, with what it did. */
  hammer: (server: ServerProcess, world: World, dir: string) => Promise<HammerResult | undefined>
}

type Victim = LatencySummary & { requests: number }

interface Outcome {
  scenario: string
  limit: number
  quiet: Victim
  during: Victim
  hammer: HammerResult | undefined
  rssBeforeMb: number
  rssPeakMb: number
}

async function call (origin: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(origin + path, { method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await res.text()
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`)
  return text === '' ? undefined : JSON.parse(text)
}

async function createWorld (origin: string, name: string): Promise<World> {
  const created = await call(origin, 'POST', '/_sandbox/worlds', { name, ttlSeconds: 0 }) as { id: string, integrations: Array<{ clientId: string, clientSecret: string }> }
  const abc = created.integrations[0]
  return { id: created.id, authorization: 'Basic ' + Buffer.from(`${abc.clientId}:${abc.clientSecret}`).toString('base64') }
}

/** One client reading a client of `world`, request after request, for `seconds`: each answer's time. */
async function victim (origin: string, world: World, seconds: number): Promise<LatencySummary & { requests: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const url = new URL(`${origin}/vendor/agency/${AGENCY}/client/1000?version=4.0`)
  const times: number[] = []
  const end = performance.now() + seconds * 1000
  try {
    while (performance.now() < end) {
      const started = performance.now()
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(url, { agent, headers: { authorization: world.authorization } }, (res) => {
          res.resume()
          res.on('end', () => resolve(res.statusCode ?? 0))
        })
        req.on('error', reject)
        req.end()
      })
      if (status !== 200) throw new Error(`the victim's read answered ${status}`)
      times.push(performance.now() - started)
    }
  } finally {
    agent.destroy()
  }
  return { ...summarize(Float64Array.from(times)), requests: times.length }
}

/** wrk over CONNECTIONS connections for DURATION_S with a Lua script: its summary line (requests, rate, status counts). */
function wrk (origin: string, path: string, script: string): Promise<HammerResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${DURATION_S}s`, '--timeout', '10s', '-s', script, origin + path], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d: Buffer) => { out += d.toString() })
    child.stderr.on('data', (d: Buffer) => { out += d.toString() })
    child.on('error', reject)
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`wrk exited with ${code}: ${out}`))
      const total = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0)
      const refused = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0)
      resolve({ requests: total, refused, seconds: DURATION_S })
    })
  })
}

/** A Lua script for wrk: `request` builds each request (a fresh id each time). */
function luaScript (dir: string, name: string, request: string, init = ''): string {
  const file = join(dir, `${name}.lua`)
  writeFileSync(file, `${init}
local n = 0
local function uuid ()
  n = n + 1
  return string.format("%08x-0000-4000-8000-%012d", math.random(0, 2147483647), n)
end
request = function ()
${request}
end
`)
  return file
}

const SCENARIOS: Scenario[] = [
  {
    name: 'writes',
    title: 'log notes (each a commit)',
    hammer: async (server, world, dir) => wrk(server.origin, `/vendor/agency/${AGENCY}/client/1000/log?version=4.0`, luaScript(dir, 'writes', `
  local body = '{"refId":"' .. uuid() .. '","ts":"2026-11-20T10:00:00Z","channel":29,"note":"from the hammer"}'
  return wrk.format("POST", nil, { ["Authorization"] = "${world.authorization}", ["Content-Type"] = "application/json" }, body)`))
  },
  {
    name: 'reads',
    title: 'batch reads of 50 clients',
    hammer: async (server, world, dir) => wrk(server.origin, `/vendor/agency/${AGENCY}/clients?version=4.0`, luaScript(dir, 'reads', `
  return wrk.format("POST", nil, { ["Authorization"] = "${world.authorization}", ["Content-Type"] = "application/json" }, body)`,
    `local numbers = {}
for i = 0, 49 do numbers[#numbers + 1] = tostring(1000 + i) end
body = '{"clientNumbers":[' .. table.concat(numbers, ",") .. ']}'`))
  },
  {
    name: 'attachments',
    title: 'attachments of 5 MiB as 5 KB of gzip, past the world\'s 64 MiB bound',
    hammer: async (server, world, dir) => {
      const file = join(dir, 'attachment.gz')
      writeFileSync(file, gzipSync(Buffer.concat([Buffer.from('%PDF-1.4 '), Buffer.alloc(5 * MiB - 100)]), { level: 9 }))
      const b64 = (text: string) => Buffer.from(text).toString('base64')
      return await wrk(server.origin, `/vendor/agency/${AGENCY}/client/1000/attachment?version=4.0`, luaScript(dir, 'attachments', `
  return wrk.format("POST", nil, { ["Authorization"] = "${world.authorization}", ["Content-Type"] = "application/octet-stream",
    ["RefId"] = uuid(), ["TS"] = "2026-11-20T10:00:00Z", ["Channel"] = "33", ["Desc"] = "${b64('scan')}",
    ["FileName"] = "${b64('scan.pdf')}", ["FileExt"] = "pdf", ["LogNote"] = "${b64('received')}" }, body)`,
      `local f = io.open("${file}", "rb")
body = f:read("*a")
f:close()`))
    }
  },
  {
    name: 'simulators',
    title: 'ten worlds\' simulators at 6,000 changes a minute (no wrk)',
    hammer: async (server) => {
      const worlds = await Promise.all(Array.from({ length: 10 }, async (_, i) => await createWorld(server.origin, `simulated ${i}`)))
      for (const [i, w] of worlds.entries()) await call(server.origin, 'POST', `/_sandbox/worlds/${w.id}/simulator`, { ratePerMinute: 6000, seed: i + 1 })
      await new Promise((resolve) => setTimeout(resolve, DURATION_S * 1000))
      for (const w of worlds) await call(server.origin, 'DELETE', `/_sandbox/worlds/${w.id}`)
      return undefined
    }
  }
]

async function run (scenario: Scenario, limit: number, dir: string): Promise<Outcome> {
  const port = await freePort()
  const server = await spawnServer({
    args: [CLI, 'serve'],
    env: { PORT: String(port), HOST: '127.0.0.1', SANDBOX_DB: ':memory:', LOG_LEVEL: 'warn', LOG_PRETTY: 'false', SANDBOX_WORLD_MAX_BYTES: String(WORLD_MAX_BYTES), SANDBOX_WORLD_REQUESTS: String(limit) },
    port,
    healthPath: '/_sandbox/health',
    pollMs: 50,
    timeoutMs: 60_000
  })
  try {
    const quietWorld = await createWorld(server.origin, 'victim')
    const loud = await createWorld(server.origin, 'hammered')
    await victim(server.origin, quietWorld, 1) // warm up
    const quiet = await victim(server.origin, quietWorld, DURATION_S)
    const rssBeforeMb = (statusKb(server.pid, 'VmRSS') ?? 0) / 1024
    const rss = new RssSampler(server.pid, 50).start()
    const [hammer, during] = await Promise.all([scenario.hammer(server, loud, dir), victim(server.origin, quietWorld, DURATION_S)])
    rss.stop()
    return { scenario: scenario.name, limit, quiet, during, hammer, rssBeforeMb, rssPeakMb: rss.peakKb / 1024 }
  } finally {
    await server.stop()
  }
}

const f1 = (x: number) => x.toFixed(1)
const f2 = (x: number) => x.toFixed(2)
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const limitName = (limit: number) => (limit === 0 ? 'unbounded (0)' : String(limit))

/** The runs of one scenario and limit, as one row: the median of each figure. */
function row (runs: Outcome[]): string {
  const { scenario, limit } = runs[0]
  const m = (pick: (o: Outcome) => number) => median(runs.map(pick))
  const ratios = runs.map((o) => o.during.p99Ms / o.quiet.p99Ms)
  const ratio = median(ratios)
  const held = scenario === 'simulators' ? '' : ratio <= P99_RATIO_TARGET ? ' (held)' : ' (missed)'
  const hammer = runs[0].hammer === undefined
    ? '10 simulators'
    : `${Math.round(m((o) => (o.hammer?.requests ?? 0) / (o.hammer?.seconds ?? 1))).toLocaleString('en-US')}/s` +
      (m((o) => o.hammer?.refused ?? 0) > 0 ? ` (${Math.round(m((o) => (o.hammer?.refused ?? 0) / (o.hammer?.requests ?? 1)) * 100)}% 507)` : '')
  return `| ${scenario} | ${limitName(limit)} | ${f2(m((o) => o.quiet.p50Ms))} / ${f2(m((o) => o.quiet.p99Ms))} | ${f2(m((o) => o.during.p50Ms))} / ${f2(m((o) => o.during.p99Ms))} | ` +
    `${f1(ratio)}${held} (${ratios.map(f1).join(', ')}) | ${Math.round(m((o) => o.quiet.requests)).toLocaleString('en-US')} / ${Math.round(m((o) => o.during.requests)).toLocaleString('en-US')} | ${hammer} | ` +
    `${m((o) => o.rssBeforeMb).toFixed(0)} / ${m((o) => o.rssPeakMb).toFixed(0)} (highest ${Math.max(...runs.map((o) => o.rssPeakMb)).toFixed(0)}) |`
}

function report (outcomes: Outcome[], started: Date, load: number[][]): string {
  const lines = [
    '# Noisy neighbours',
    '',
    `Generated by \`node dist/bench/neighbours.js\` (bench/neighbours.ts) on ${started.toISOString().slice(0, 10)}: Node ${process.version}, ${RUNS} runs of each row, ` +
      `load average ${load[0].map(f2).join(' ')} at the start, ${load[1].map(f2).join(' ')} at the end (the machine, 2 cores, is shared: figures move with its load).`,
    '',
    `A \`serve\` process on 127.0.0.1 (SQLite in memory, SANDBOX_WORLD_MAX_BYTES ${WORLD_MAX_BYTES / MiB} MiB). The victim is one world's client reading a client ` +
      `(GET /vendor/agency/${AGENCY}/client/1000), one request after another, for ${DURATION_S} s alone, then ${DURATION_S} s while another world is hammered: ` +
      `wrk over ${CONNECTIONS} connections (one thread), or ten worlds' simulators. Each run starts a server of its own, for each SANDBOX_WORLD_REQUESTS in turn ` +
      '(a world\'s requests in progress at once, one started per turn of the event loop; 0: unbounded, the sandbox before the bound). ' +
      'Each figure is the median of the runs; the ratio\'s runs are in parentheses.',
    '',
    `| Hammer | SANDBOX_WORLD_REQUESTS | Victim alone p50 / p99 (ms) | Victim during p50 / p99 (ms) | p99 during / alone (target ≤ ${P99_RATIO_TARGET}) | Victim reads alone / during | Hammer | Server RSS before / peak (MB) |`,
    '|---|---|---|---|---|---|---|---|'
  ]
  for (const scenario of SCENARIOS) {
    for (const limit of LIMITS) {
      const runs = outcomes.filter((o) => o.scenario === scenario.name && o.limit === limit)
      if (runs.length > 0) lines.push(row(runs))
    }
  }
  const rssTarget = WORLD_MAX_BYTES / 1e6 + RSS_HEADROOM_MB
  const attachments = LIMITS.map((limit) => outcomes.filter((o) => o.scenario === 'attachments' && o.limit === limit)).filter((runs) => runs.length > 0)
  lines.push('', `RSS under the attachment hammer (target: the world's bound, ${(WORLD_MAX_BYTES / 1e6).toFixed(0)} MB, plus ${RSS_HEADROOM_MB} MB = ${rssTarget.toFixed(0)} MB), the highest of the runs: ` +
    (attachments.length === 0
      ? 'not run.'
      : attachments.map((runs) => {
        const peak = Math.max(...runs.map((o) => o.rssPeakMb))
        return `${peak.toFixed(0)} MB with SANDBOX_WORLD_REQUESTS ${limitName(runs[0].limit)} (${peak <= rssTarget ? 'held' : 'missed'})`
      }).join('; ') + '.'))
  lines.push('', 'Hammers: ' + SCENARIOS.map((s) => `${s.name}, ${s.title}`).join('; ') + '. The simulators have no target: they change their own worlds on timers, ' +
    'each change a commit on the event loop, outside any request; the row shows what ten of them cost another world.')
  return lines.join('\n') + '\n'
}

async function main (): Promise<void> {
  const started = new Date()
  const loadAtStart = loadAverage()
  const dir = mkdtempSync(join(tmpdir(), 'neighbours-'))
  const outcomes: Outcome[] = []
  try {
    for (const scenario of SCENARIOS.filter((s) => values.only === undefined || values.only.split(',').includes(s.name))) {
      for (let i = 0; i < RUNS; i++) {
        // the limits in turn within each run, the order reversed every other run
        for (const limit of i % 2 === 0 ? LIMITS : [...LIMITS].reverse()) {
          const outcome = await run(scenario, limit, dir)
          console.log(`${scenario.name} (SANDBOX_WORLD_REQUESTS ${limit}, run ${i + 1}): victim p99 ${f2(outcome.quiet.p99Ms)} → ${f2(outcome.during.p99Ms)} ms; ` +
            `${outcome.hammer === undefined ? 'simulators' : `${outcome.hammer.requests} requests (${outcome.hammer.refused} not 2xx)`}; RSS peak ${outcome.rssPeakMb.toFixed(0)} MB`)
          outcomes.push(outcome)
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  writeFileSync(values.out, report(outcomes, started, [loadAtStart, loadAverage()]))
  console.log(`report: ${values.out}`)
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
