/**
 * Soak (issue 8): a mixed partner workload of reads and writes from several integrations (abc,
 * northwind-crm, and a few calls of idle-vendor) over many keep-alive connections, against a
 * sandbox process on 127.0.0.1, bounded in time and in request count. Samples the server's RSS
 * (/proc/<pid>/status VmRSS) every second, counts statuses, and reports requests, errors other
 * than the intended 429s of create client (must be 0), RSS start/peak/end, and the request journal
 * (GET /_sandbox/info counts.journal, when the sandbox has it). Writes bench/SOAK.md.
 *
 *   node dist/bench/soak.js [--seconds 180] [--requests N] [--connections 50] [--seed 1] [--no-report]
 *   node dist/bench/soak.js --url http://127.0.0.1:8080 --pid <server pid>     (against a running sandbox)
 *
 * Exit 1 when a request failed (any status or connection error not expected for its operation),
 * or when the RSS at the end is more than --max-rss-growth (default 1.5) times the RSS a quarter
 * into the run (memory not flat).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { Agent, request as httpRequest } from 'node:http'
import { freePort } from '../scripts/free-port.js'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT } from '../src/config.js'
import { pickOperation, rng, soakOperations, type Answer } from './soak/workload.js'

// ------------------------------------------------------------------------------------------------
// Options
// ------------------------------------------------------------------------------------------------

const USAGE = `Usage: node dist/bench/soak.js [--seconds 180] [--requests N] [--connections 50] [--seed 1]
         [--max-rss-growth 1.5] [--no-report] [--url http://127.0.0.1:PORT --pid PID]`
const KNOWN = new Set(['--seconds', '--requests', '--connections', '--seed', '--max-rss-growth', '--no-report', '--url', '--pid'])
if (process.argv.includes('--help')) {
  console.log(USAGE)
  process.exit(0)
}
const unknown = process.argv.slice(2).filter((a) => a.startsWith('--') && !KNOWN.has(a))
if (unknown.length > 0) {
  // a mistyped option must not start a three-minute run
  console.error(`unknown option ${unknown.join(', ')}\n${USAGE}`)
  process.exit(2)
}

function option (name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`)
  if (i === -1) return fallback
  const value = Number(process.argv[i + 1])
  if (!Number.isFinite(value) || value < 0) {
    console.error(`--${name} needs a non-negative number`)
    process.exit(2)
  }
  return value
}
function textOption (name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? undefined : process.argv[i + 1]
}
const SECONDS = option('seconds', 180)
const MAX_REQUESTS = option('requests', Number.POSITIVE_INFINITY)
const CONNECTIONS = option('connections', 50)
const SEED = option('seed', 1)
const MAX_RSS_GROWTH = option('max-rss-growth', 1.5)
const REPORT = !process.argv.includes('--no-report')
const TARGET_URL = textOption('url')
const TARGET_PID = textOption('pid')

if (TARGET_URL !== undefined && !/^http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?\/?$/.test(TARGET_URL)) {
  console.error('--url must be a loopback address (http://127.0.0.1:PORT): the soak never leaves this machine')
  process.exit(2)
}

const CLI = join(ROOT, 'dist', 'src', 'cli.js')

// ------------------------------------------------------------------------------------------------
// HTTP over keep-alive connections
// ------------------------------------------------------------------------------------------------

const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS, maxFreeSockets: CONNECTIONS })
let base = ''

function send (method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, base)
    const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname + url.search, method, headers, agent, timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error('timeout after 30 s')))
    req.on('error', reject)
    if (body !== undefined) req.setHeader('content-length', Buffer.byteLength(body))
    req.end(body)
  })
}

const OPS = soakOperations(send)

// ------------------------------------------------------------------------------------------------
// Measurement
// ------------------------------------------------------------------------------------------------

const counts = new Map<string, Map<number, number>>()
const latencies = new Map<string, number[]>()
const errors: string[] = []
let errorCount = 0
let intended429 = 0
let sent = 0
let reconnects = 0

function record (op: string, status: number, ms: number): void {
  const byStatus = counts.get(op) ?? new Map<number, number>()
  byStatus.set(status, (byStatus.get(status) ?? 0) + 1)
  counts.set(op, byStatus)
  const list = latencies.get(op) ?? []
  if (list.length < 200_000) list.push(ms)
  latencies.set(op, list)
}

const percentile = (sorted: number[], p: number) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))])

function rssKb (pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m === null ? 0 : Number(m[1])
  } catch {
    return 0
  }
}

async function info (): Promise<{ journal?: number; capacity?: number; writes?: string; clients?: number }> {
  try {
    const a = await send('GET', '/_sandbox/info')
    if (a.status !== 200) return {}
    const body = JSON.parse(a.body) as { counts?: { journal?: number; writes?: unknown; clients?: number }; settings?: { journalSize?: number } }
    // writes: a number, or {pending, applied}
    const w = body.counts?.writes
    const writes = w === undefined
      ? undefined
      : typeof w === 'object' && w !== null
        ? Object.entries(w).map(([k, v]) => `${String(v)} ${k}`).join(' + ')
        : String(w)
    return { journal: body.counts?.journal, capacity: body.settings?.journalSize, writes, clients: body.counts?.clients }
  } catch {
    return {}
  }
}

async function waitHealthy (deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    try {
      const a = await send('GET', '/_sandbox/health')
      if (a.status === 200) return
    } catch {
      // not yet listening
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error('the sandbox did not answer /_sandbox/health in time')
}

// ------------------------------------------------------------------------------------------------
// Main
// ------------------------------------------------------------------------------------------------

async function main (): Promise<void> {
  let child: ChildProcess | undefined
  let pid: number
  let dir: string | undefined
  let db: string | undefined
  let output = ''
  if (TARGET_URL !== undefined) {
    base = TARGET_URL.replace(/\/$/, '')
    pid = Number(TARGET_PID ?? 0)
    if (!(pid > 0)) console.error('warning: no --pid given, RSS is not sampled')
  } else {
    if (!existsSync(CLI)) {
      console.error(`${CLI} is missing: build first (npx tsc -p tsconfig.build.json)`)
      process.exit(2)
    }
    dir = mkdtempSync(join(tmpdir(), 'sandbox-soak-'))
    db = join(dir, 'sandbox.db')
    const port = await freePort()
    base = `http://127.0.0.1:${port}`
    child = spawn(process.execPath, [CLI, 'serve'], {
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', SANDBOX_DB: db, LOG_LEVEL: 'warn', LOG_PRETTY: 'false' },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    const keep = (d: Buffer) => (output = (output + d.toString()).slice(-20_000))
    child.stdout!.on('data', keep)
    child.stderr!.on('data', keep)
    pid = child.pid!
  }
  await waitHealthy(Date.now() + 30_000)

  const before = await info()
  const rssStart = pid > 0 ? rssKb(pid) : 0
  const samples: { t: number; rss: number }[] = []
  const started = Date.now()
  const deadline = started + SECONDS * 1000
  const sampler = setInterval(() => {
    if (pid > 0) samples.push({ t: (Date.now() - started) / 1000, rss: rssKb(pid) })
  }, 1000)
  // Agency 1004 reconnects every 10 s (its pending writes are applied) and disconnects again.
  // The last one may still be running when the workers stop: it is awaited before the agent's
  // sockets are destroyed, which would otherwise cut it off ("socket hang up").
  let reconnecting: Promise<void> = Promise.resolve()
  const reconnector = setInterval(() => {
    reconnecting = (async () => {
      try {
        for (const connected of [true, false]) {
          const a = await send('PATCH', '/_sandbox/agencies/1004', { 'content-type': 'application/json' }, JSON.stringify({ connected }))
          if (a.status !== 200) throw new Error(`PATCH 1004 connected=${connected} answered ${a.status}`)
        }
        reconnects++
      } catch (e) {
        errorCount++
        if (errors.length < 20) errors.push(`reconnect: ${(e as Error).message}`)
      }
    })()
  }, 10_000)

  let lastProgress = started
  const worker = async (i: number) => {
    const r = rng(SEED * 1009 + i)
    while (Date.now() < deadline && sent < MAX_REQUESTS) {
      sent++
      const op = pickOperation(OPS, r)
      const t0 = performance.now()
      try {
        const res = await op.run(r)
        record(op.name, res.status, performance.now() - t0)
        if (res.intended429 === true) intended429++
        else if (!res.ok) {
          errorCount++
          if (errors.length < 20) errors.push(`${op.name}: ${res.status} ${res.detail ?? ''}`)
        }
      } catch (e) {
        record(op.name, 0, performance.now() - t0)
        errorCount++
        if (errors.length < 20) errors.push(`${op.name}: ${(e as Error).message}`)
      }
      if (i === 0 && Date.now() - lastProgress >= 30_000) {
        lastProgress = Date.now()
        const last = samples.at(-1)?.rss ?? 0
        console.log(`  ${Math.round((Date.now() - started) / 1000)} s: ${sent} requests, ${errorCount} errors, RSS ${(last / 1024).toFixed(1)} MiB`)
      }
    }
  }
  console.log(`soak: ${CONNECTIONS} connections against ${base} for ${SECONDS} s${Number.isFinite(MAX_REQUESTS) ? ` or ${MAX_REQUESTS} requests` : ''}`)
  await Promise.all(Array.from({ length: CONNECTIONS }, (_, i) => worker(i)))
  clearInterval(sampler)
  clearInterval(reconnector)
  await reconnecting
  const elapsed = (Date.now() - started) / 1000
  if (pid > 0) samples.push({ t: elapsed, rss: rssKb(pid) })
  const after = await info()
  const health = await send('GET', '/_sandbox/health').then((a) => a.status, () => 0)
  agent.destroy()

  let exitCode: number | null | undefined
  let dbBytes = 0
  if (child !== undefined) {
    child.kill('SIGTERM')
    exitCode = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        child!.kill('SIGKILL')
      }, 20_000)
      child!.once('exit', (code) => {
        clearTimeout(timer)
        resolve(code)
      })
    })
    for (const f of [db!, `${db}-wal`]) if (existsSync(f)) dbBytes += statSync(f).size
    rmSync(dir!, { recursive: true, force: true })
  }

  // Figures
  const rssValues = samples.map((s) => s.rss)
  const rssPeak = Math.max(rssStart, ...rssValues)
  const rssEnd = rssValues.at(-1) ?? rssStart
  const quarter = samples.find((s) => s.t >= elapsed / 4)?.rss ?? rssStart
  const growth = quarter > 0 ? rssEnd / quarter : 1
  const flat = pid === 0 || growth <= MAX_RSS_GROWTH
  const mib = (kb: number) => `${(kb / 1024).toFixed(1)} MiB`
  const statusTotals = new Map<number, number>()
  for (const byStatus of counts.values()) for (const [s, n] of byStatus) statusTotals.set(s, (statusTotals.get(s) ?? 0) + n)
  const total = [...statusTotals.values()].reduce((a, b) => a + b, 0)
  const journalBounded = after.journal === undefined || after.capacity === undefined || after.journal <= after.capacity

  const summary = `soak: ${total} requests in ${elapsed.toFixed(0)} s (${(total / elapsed).toFixed(0)}/s), ${errorCount} errors, ${intended429} intended 429s; ` +
    `RSS start ${mib(rssStart)}, peak ${mib(rssPeak)}, end ${mib(rssEnd)} (${flat ? 'flat' : 'GROWING'}: end/quarter ${growth.toFixed(2)}); ` +
    `journal ${after.journal ?? 'n/a'}${after.capacity === undefined ? '' : `/${after.capacity}`}`
  console.log(summary)
  if (errors.length > 0) console.log('errors:\n  ' + errors.join('\n  '))

  if (REPORT) {
    const rows = OPS.map((op) => {
      const byStatus = counts.get(op.name) ?? new Map<number, number>()
      const sorted = [...(latencies.get(op.name) ?? [])].sort((a, b) => a - b)
      const n = sorted.length
      const statuses = [...byStatus].sort((a, b) => a[0] - b[0]).map(([s, c]) => `${s === 0 ? 'conn. error' : s}: ${c}`).join(', ')
      return `| ${op.name} | ${n} | ${statuses} | ${percentile(sorted, 50).toFixed(1)} | ${percentile(sorted, 99).toFixed(1)} |`
    })
    const every = Math.max(1, Math.floor(samples.length / 12))
    const curve = samples.filter((_, i) => i % every === 0 || i === samples.length - 1).map((s) => `| ${s.t.toFixed(0)} | ${mib(s.rss)} |`)
    const lines = [
      '# Soak', '',
      `\`node dist/bench/soak.js --seconds ${SECONDS} --connections ${CONNECTIONS}${Number.isFinite(MAX_REQUESTS) ? ` --requests ${MAX_REQUESTS}` : ''}\` ` +
        `(${new Date().toISOString().slice(0, 10)}, Node ${process.version}, 127.0.0.1, ${TARGET_URL === undefined ? 'a sandbox process on a temporary file database' : TARGET_URL})`, '',
      'Mixed partner workload over keep-alive connections: integrations abc (1001, 1002, 1004 disconnected) and northwind-crm (1001 read-only, 2001),',
      'a few agency lists as idle-vendor; versions 4.0, 3.0 and 1; reads (agencies, offices, changed clients, get client, batch, search, users) and',
      'writes (log notes with idempotent repeats, attachments, receipts, create client at more than its 25/s limit, pending writes to 1004, which',
      'reconnects every 10 s).', '',
      '| Figure | Value |', '|---|---|',
      `| Requests | ${total} in ${elapsed.toFixed(0)} s (${(total / elapsed).toFixed(0)}/s) |`,
      `| Errors (anything but the expected status of the operation; 429s of create client excluded) | ${errorCount} |`,
      `| Intended 429s (create client over 25/s per integration) | ${intended429} |`,
      `| Statuses | ${[...statusTotals].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s === 0 ? 'connection error' : s}: ${n}`).join(', ')} |`,
      `| Reconnects of 1004 | ${reconnects} |`,
      `| Server RSS start / peak / end | ${mib(rssStart)} / ${mib(rssPeak)} / ${mib(rssEnd)} |`,
      `| RSS end / RSS a quarter in | ${growth.toFixed(2)} (${flat ? 'flat' : 'growing'}; limit ${MAX_RSS_GROWTH}) |`,
      `| Request journal (GET /_sandbox/info counts.journal) | ${after.journal === undefined ? 'not reported' : `${before.journal ?? '?'} before, ${after.journal} after${after.capacity === undefined ? '' : `, capacity ${after.capacity} (${journalBounded ? 'bounded' : 'OVER CAPACITY'})`}`} |`,
      `| Clients; writes in the database | ${before.clients ?? '?'}; ${before.writes ?? '?'} before, ${after.clients ?? '?'}; ${after.writes ?? '?'} after |`,
      ...(child === undefined ? [] : [`| Database file + WAL at the end | ${(dbBytes / 1024 / 1024).toFixed(1)} MiB |`, `| Exit code after SIGTERM | ${String(exitCode)} |`]),
      `| Health after the run | ${health} |`, '',
      '| Operation | Requests | Statuses | p50 ms | p99 ms |', '|---|---|---|---|---|', ...rows, '',
      '| Seconds | Server RSS |', '|---|---|', ...curve, '',
      ...(errors.length > 0 ? ['Errors (first 20):', '', ...errors.map((e) => `- ${e}`), ''] : [])
    ]
    writeFileSync(join(ROOT, 'bench', 'SOAK.md'), lines.join('\n'))
    console.log(`wrote ${join(ROOT, 'bench', 'SOAK.md')}`)
  }
  if (child !== undefined && exitCode !== 0) console.log(`the sandbox exited with ${String(exitCode)} after SIGTERM:\n${output.slice(-2000)}`)
  process.exit(errorCount === 0 && flat && journalBounded && health === 200 ? 0 : 1)
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
