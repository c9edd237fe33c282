import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { ROOT } from '../src/config.js'
import { cpuSeconds, freePort, spawnServer, type ServerProcess } from './processes.js'
import { pinTo } from './side-by-side.js'
import { median } from './stats.js'

/**
 * What this build costs per request against another build, measured with wrk (`npm run build &&
 * node dist/bench/request-cost.js --other DIR [--pin]`, DIR a checkout of the other build with its
 * own `npm run build`): both serve the demo fixture in memory and are loaded at the same time, each
 * by its own wrk, with the same requests; with --pin both servers share CPU 0 and both wrk CPU 1,
 * so the ratio of their request counts is the ratio of their costs whatever else the machine does.
 * Each run is one measurement; the figure is their median. Written for the request path's
 * bookkeeping (request ids, metrics, the drain's tracking).
 */

const HELP = 'Usage: node dist/bench/request-cost.js --other DIR [--only IDS] [--runs N] [--duration S] [--connections N] [--pin]'
const DEMO = 'Basic ' + Buffer.from('abc:123').toString('base64')

const SCENARIOS = [
  { id: 'get-client', path: '/vendor/agency/1001/client/1000?version=4.0' },
  { id: 'agencies', path: '/vendor/agencies?version=4.0' },
  { id: 'unknown-client', path: '/vendor/agency/1001/client/999999?version=4.0' }
]

async function serve (root: string): Promise<ServerProcess> {
  const port = await freePort()
  return await spawnServer({
    args: [join(root, 'dist', 'src', 'cli.js'), 'serve'],
    env: { PORT: String(port), HOST: '127.0.0.1', SANDBOX_DB: ':memory:', LOG_LEVEL: 'warn', LOG_PRETTY: 'false' },
    port,
    healthPath: '/_sandbox/health',
    pollMs: 100,
    timeoutMs: 120_000
  })
}

interface WrkResult { requests: number, perSecond: number, p50Ms: number, p99Ms: number, errors: number }

/** One wrk run (on CPU `cpu` when pinned): its totals and latency percentiles. */
async function wrk (url: string, seconds: number, connections: number, cpu: number | undefined): Promise<WrkResult> {
  const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-H', `Authorization: ${DEMO}`, url]
  const [command, argv] = cpu === undefined ? ['wrk', args] : ['taskset', ['-c', String(cpu), 'wrk', ...args]]
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'inherit'] })
    let text = ''
    child.stdout.on('data', (chunk: Buffer) => { text += chunk.toString('utf8') })
    child.on('error', reject)
    child.on('exit', (code) => code === 0 ? resolve(text) : reject(new Error(`wrk exited with ${code}:\n${text}`)))
  })
  const number = (pattern: RegExp) => Number(pattern.exec(output)?.[1] ?? NaN)
  const ms = (pattern: RegExp) => {
    const m = pattern.exec(output)
    if (m === null) return NaN
    const value = Number(m[1])
    return m[2] === 'us' ? value / 1000 : m[2] === 's' ? value * 1000 : value
  }
  return {
    requests: number(/(\d+) requests in/),
    perSecond: number(/Requests\/sec:\s+([\d.]+)/),
    p50Ms: ms(/50%\s+([\d.]+)(us|ms|s)/),
    p99Ms: ms(/99%\s+([\d.]+)(us|ms|s)/),
    errors: number(/Non-2xx or 3xx responses: (\d+)/) || 0
  }
}

const { values } = parseArgs({
  options: {
    other: { type: 'string' },
    only: { type: 'string' },
    runs: { type: 'string', default: '7' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '10' },
    pin: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false }
  }
})
if (values.help || values.other === undefined) {
  console.log(HELP)
} else {
  const other = resolve(values.other)
  if (!existsSync(join(other, 'dist', 'src', 'cli.js'))) throw new Error(`${other} has no build: run npm ci && npm run build there`)
  const servers: [ServerProcess, ServerProcess] = [await serve(ROOT), await serve(other)]
  try {
    const pinned = values.pin && servers.every((s) => pinTo(s.pid, 0))
    if (values.pin) console.log(pinned ? 'pinned: both servers on CPU 0, both wrk on CPU 1' : 'could not pin')
    console.log(`this build: ${ROOT}; the other: ${other}; wrk -t1 -c${values.connections} -d${values.duration}s, ${values.runs} runs`)
    for (const scenario of SCENARIOS.filter((s) => values.only === undefined || values.only.split(',').includes(s.id))) {
      const ratios: number[] = []
      const cpuRatios: number[] = []
      for (let run = 0; run < Number(values.runs); run++) {
        const cpuBefore = servers.map((s) => cpuSeconds(s.pid) ?? 0)
        const [mine, theirs] = await Promise.all(servers.map(async (s) => await wrk(s.origin + scenario.path, Number(values.duration), Number(values.connections), pinned ? 1 : undefined)))
        // CPU per request of each server in this run, in microseconds
        const cpu = servers.map((s, i) => ((cpuSeconds(s.pid) ?? 0) - cpuBefore[i]) * 1e6 / Math.max(1, [mine, theirs][i].requests))
        ratios.push(mine.requests / Math.max(1, theirs.requests))
        cpuRatios.push(cpu[0] / Math.max(1e-9, cpu[1]))
        const line = (r: WrkResult, us: number) => `${Math.round(r.perSecond).toLocaleString('en-US')}/s, ${us.toFixed(1)} µs of CPU per request, p50 ${r.p50Ms.toFixed(2)} ms, p99 ${r.p99Ms.toFixed(2)} ms`
        console.log(`  ${scenario.id} run ${run + 1}: this ${line(mine, cpu[0])}; the other ${line(theirs, cpu[1])}`)
      }
      const signed = (x: number) => `${x >= 1 ? '+' : ''}${((x - 1) * 100).toFixed(1)}%`
      console.log(`${scenario.id}: this build ${signed(median(ratios))} requests, ${signed(median(cpuRatios))} CPU per request, against the other ` +
        `(medians of ${ratios.length}; requests each run ${ratios.map((x) => x.toFixed(3)).join(', ')})`)
    }
  } finally {
    for (const s of servers) await s.stop()
  }
}
