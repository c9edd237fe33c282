import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { ROOT } from '../src/config.js'
import { prepareData, workingCopy, type BenchData } from './data.js'
import { runLoad } from './load-run.js'
import { freePort, spawnServer, type ServerProcess } from './processes.js'
import { buildScenarios, type Scenario } from './scenarios.js'
import { pinTo } from './side-by-side.js'
import { median } from './stats.js'

/**
 * This build against another, side by side (`npm run build && node dist/bench/versus.js --other
 * DIR`, DIR a checkout of the other build with its own `npm run build`): both serve a copy of the
 * benchmark's 100,000-client database and are loaded at the same time, scenario by scenario, with
 * the same requests. With --pin both servers share CPU 0 and the load generators CPU 1: the ratio
 * of their request counts is then the ratio of their costs, whatever else the machine does (runs
 * one after the other on a shared machine differ by 15-25%). The closed-loop scenarios of `npm run bench`
 * and log-note writes by default (each scenario on its own connections, or --connections); each run of each scenario is one measurement, and the figure is their median.
 */

const HELP = 'Usage: node dist/bench/versus.js --other DIR [--only IDS] [--runs N] [--duration S] [--connections N] [--pin]'
const CLOSED_LOOPS = ['get-client', 'get-client-all', 'batch-200', 'changed-all', 'changed-recent', 'search-policy', 'log-note']

async function serve (root: string, db: string): Promise<ServerProcess> {
  const port = await freePort()
  return spawnServer({
    args: [join(root, 'dist', 'src', 'cli.js'), 'serve'],
    env: { PORT: String(port), HOST: '127.0.0.1', SANDBOX_DB: db, LOG_LEVEL: 'warn', LOG_PRETTY: 'false' },
    port,
    healthPath: '/_sandbox/health',
    pollMs: 100,
    timeoutMs: 120_000
  })
}

/** Both servers under the scenario's load at once; this build's request count over the other's. */
async function sideBySide (scenario: Scenario, data: BenchData, servers: [ServerProcess, ServerProcess], seconds: number, connections: number) {
  const authorization = 'Basic ' + Buffer.from(`${data.credentials.clientId}:${data.credentials.clientSecret}`).toString('base64')
  const job = (server: ServerProcess) => runLoad({
    origin: server.origin,
    authorization,
    variants: scenario.variants,
    connections,
    warmup: { seconds: 1 },
    measure: { seconds },
    expect: scenario.expect
  }, server.pid)
  const [mine, other] = await Promise.all(servers.map(job))
  return { mine: mine.result.requests, other: other.result.requests, errors: mine.result.errors + other.result.errors }
}

const { values } = parseArgs({
  options: {
    other: { type: 'string' },
    only: { type: 'string' },
    runs: { type: 'string', default: '5' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string' },
    pin: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false }
  }
})
if (values.help || values.other === undefined) {
  console.log(HELP)
} else {
  const other = resolve(values.other)
  if (!existsSync(join(other, 'dist', 'src', 'cli.js'))) throw new Error(`${other} has no build: run npm ci && npm run build there`)
  const data = await prepareData({ dir: join(ROOT, 'bench', 'data'), clients: 100_000, fresh: false, cli: join(ROOT, 'dist', 'src', 'cli.js'), log: (line) => console.log(`[versus] ${line}`) })
  const ids = values.only?.split(',') ?? CLOSED_LOOPS
  const scenarios = buildScenarios(data, { rotate: 1000, batches: 20, writeClients: 100, rateSeconds: 5 }).filter((s) => ids.includes(s.id))
  const copies = [workingCopy(data), workingCopy(data)]
  const mine = await serve(ROOT, copies[0].file)
  // the other build may refuse to start (a database of a newer schema): this one is stopped then
  const servers: [ServerProcess, ServerProcess] = [mine, await serve(other, copies[1].file).catch(async (e: unknown) => {
    await mine.stop()
    for (const c of copies) c.remove()
    throw e
  })]
  try {
    if (values.pin) console.log(servers.every((s) => pinTo(s.pid, 0)) && pinTo(process.pid, 1) ? 'pinned: both servers on CPU 0, the load on CPU 1' : 'could not pin')
    console.log(`this build: ${ROOT}; the other: ${other}`)
    for (const scenario of scenarios) {
      const ratios: number[] = []
      for (let run = 0; run < Number(values.runs); run++) {
        const r = await sideBySide(scenario, data, servers, Number(values.duration), values.connections === undefined ? scenario.connections : Number(values.connections))
        ratios.push(r.mine / Math.max(1, r.other))
        console.log(`  ${scenario.id} run ${run + 1}: this ${r.mine.toLocaleString('en-US')} requests, the other ${r.other.toLocaleString('en-US')}${r.errors > 0 ? ` (${r.errors} errors)` : ''}`)
      }
      const m = median(ratios)
      console.log(`${scenario.id}: this build ${m >= 1 ? '+' : ''}${((m - 1) * 100).toFixed(1)}% requests against the other (median of ${ratios.length}; each run ${ratios.map((x) => x.toFixed(2)).join(', ')})`)
    }
  } finally {
    for (const s of servers) await s.stop()
    for (const c of copies) c.remove()
  }
}
