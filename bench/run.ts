import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { ROOT } from '../src/config.js'
import { prepareData, workingCopy, type BenchData } from './data.js'
import { runLoad, sideOf, type LoadRun } from './load-run.js'
import { freePort, loadAverage, RssSampler, spawnServer, statusKb, type ServerProcess } from './processes.js'
import { summarizeProfile } from './profile.js'
import type { Budget, CeilingFile, LoadJob, StoredResponse } from './protocol.js'
import {
  evaluateTargets, machine, renderMarkdown, scenarioTable, targetTable,
  type JournalResult, type Results, type ScenarioResult, type SyncResult
} from './report.js'
import { buildScenarios, READ_CONNECTIONS, syncVariants, WRITE_CONNECTIONS, type Scenario } from './scenarios.js'
import { authorizationOf, spawnCeiling, startCeiling } from './ceilings.js'
import { wrkVersion } from './wrk.js'
import { HELP, settingsOf, UsageError, type Settings } from './settings.js'
import { measureStartups, type StartupResult } from './startup.js'
import { median, rateOf } from './stats.js'

/**
 * The benchmark (`npm run bench`): the sandbox on a 100,000-client database against a bare
 * Fastify ceiling serving the same bytes (for log-note writes, a bare write over SQLite), scenario
 * by scenario in alternated rounds under wrk, with start-up time (the bundled
 * bin against a bare Fastify server) and memory. Writes RESULTS.md and results.json; `--startup`
 * measures start-up alone and updates those. `--help` lists the options.
 */

/** The tsc output: builds the data, and serves the scenarios (a CPU profile then names each source file). */
const CLI = join(ROOT, 'dist', 'src', 'cli.js')
/** The bundled bin users run (`npm run build` writes it): its start-up is the one measured against the floor. */
const BUNDLE = join(ROOT, 'dist', 'bundle', 'cli.js')
const HEALTH = '/_sandbox/health'
const JOURNAL_PATH = '/vendor/agencies?version=4.0'

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`)
const budgetText = (b: Budget) => ('amount' in b ? `${b.amount.toLocaleString('en-US')} requests` : `${b.seconds} s`)
const mb = (kb: number | null) => (kb === null ? 0 : kb / 1024)
const authorization = authorizationOf

/** Node flags that write a CPU profile named `name` into the output's profiles/ on exit. */
function profileFlags (settings: Settings, name: string | undefined): string[] {
  return name === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${join(settings.out, 'profiles')}`, `--cpu-prof-name=${name}`]
}

async function startSandbox (settings: Settings, db: string, data: BenchData, profileName?: string, cli = CLI): Promise<ServerProcess> {
  const port = await freePort()
  return spawnServer({
    args: [...profileFlags(settings, profileName), cli, 'serve'],
    env: { PORT: String(port), SANDBOX_DB: db, SANDBOX_FIXTURES: data.fixtureFile, LOG_LEVEL: 'warn', LOG_PRETTY: 'false' },
    port,
    healthPath: HEALTH,
    pollMs: 5,
    timeoutMs: 60_000
  })
}

// ---------------------------------------------------------------------------------------------
// Phases

/** Start-ups over the benchmark's database: the bundle, a bare Fastify server, then dist/src, in rounds. */
function startups (settings: Settings, db: string, data: BenchData): Promise<StartupResult | null> {
  const bareFile: CeilingFile = { credentials: data.credentials, routes: [], responses: [] }
  return measureStartups(settings.startupRuns, {
    bundle: () => startSandbox(settings, db, data, undefined, BUNDLE),
    bare: () => spawnCeiling({ tempDir: settings.tempDir, nodeFlags: [] }, bareFile, 'startup'),
    unbundled: () => startSandbox(settings, db, data, undefined, CLI)
  }, log)
}

/**
 * `--startup`: new start-up figures in the results a full run wrote in `out`, with when and under
 * which load they were taken; RESULTS.md is written again and the rest keeps its own date.
 */
async function startupOnly (settings: Settings, command: string): Promise<Results> {
  const file = join(settings.out, 'results.json')
  let previous: Results
  try {
    previous = JSON.parse(readFileSync(file, 'utf8')) as Results
  } catch (e) {
    throw new Error(`--startup updates the results of a full run, and ${file} cannot be read (${(e as Error).message}): run the full benchmark first`)
  }
  const before = loadAverage()
  const data = await prepareData({ dir: settings.dataDir, clients: settings.clients, fresh: settings.fresh, cli: CLI, log })
  const work = workingCopy(data)
  try {
    const startup = await startups(settings, work.file, data)
    if (startup === null) throw new Error('--startup-runs must be at least 1')
    startup.measured = { date: new Date().toISOString(), command, loadAverage: { before, after: loadAverage() } }
    const results: Results = { ...previous, startup }
    results.targets = evaluateTargets(results)
    return results
  } finally {
    work.remove()
  }
}

/** Rounds of cheap requests after the first one, to see whether RSS stays flat once the journal is full. */
const JOURNAL_LATER_ROUNDS = 3

/**
 * RSS before and after `journalRequests` cheap requests (each one journal entry), then after
 * each of three more rounds of half as many.
 */
async function measureJournal (settings: Settings, sandbox: ServerProcess, data: BenchData): Promise<JournalResult> {
  const round = async (amount: number): Promise<number> => {
    const { result } = await runLoad({
      origin: sandbox.origin,
      authorization: authorization(data),
      variants: [{ method: 'GET', path: JOURNAL_PATH }],
      connections: settings.syncConnections,
      warmup: null,
      measure: { amount },
      expect: [200]
    }, sandbox.pid)
    // wrk stops on the amount-th answer, and answers already read in that turn still count: a few more is fine
    if (result.requests < amount) throw new Error(`journal round answered ${result.requests} of ${amount}: ${JSON.stringify(result.statuses)}`)
    await sleep(500)
    return mb(statusKb(sandbox.pid, 'VmRSS'))
  }
  const before = mb(statusKb(sandbox.pid, 'VmRSS'))
  const afterFirst = await round(settings.journalRequests)
  const later: number[] = []
  for (let i = 0; i < JOURNAL_LATER_ROUNDS; i++) later.push(await round(Math.ceil(settings.journalRequests / 2)))
  // the journal's capacity, and the id of its newest entry (entries recorded so far)
  const endpoint = await fetch(`${sandbox.origin}/_sandbox/requests?limit=1`)
  const newest = endpoint.status === 200 ? ((await endpoint.json()) as { id?: number }[])[0]?.id ?? null : (await endpoint.arrayBuffer(), null)
  const capacity = endpoint.headers.get('x-journal-capacity')
  log(`journal: RSS ${[before, afterFirst, ...later].map((v) => v.toFixed(0)).join(' → ')} MB`)
  return {
    requests: settings.journalRequests,
    laterRequests: Math.ceil(settings.journalRequests / 2),
    endpointStatus: endpoint.status,
    capacity: capacity === null ? null : Number(capacity),
    recorded: newest,
    rssBeforeMb: before,
    rssAfterFirstMb: afterFirst,
    rssAfterLaterMb: later
  }
}

/** Mean body size of the stored answers. */
const meanBytes = (stored: StoredResponse[]): number =>
  stored.reduce((sum, a) => sum + Buffer.byteLength(a.payload), 0) / Math.max(1, stored.length)

async function measureScenario (
  settings: Settings, scenario: Scenario, sandbox: ServerProcess, ceiling: ServerProcess, auth: string, stored: StoredResponse[]
): Promise<ScenarioResult> {
  const job = (server: ServerProcess, measure: Budget, warmup: Budget | null, connections = settings.connections ?? scenario.connections): LoadJob => ({
    origin: server.origin, authorization: auth, variants: scenario.variants, connections, expect: scenario.expect, warmup, measure
  })
  const on = (server: ServerProcess, j: LoadJob) => runLoad(j, server.pid)
  let sandboxRuns: LoadRun[]
  let ceilingRuns: LoadRun[]
  let alone: LoadRun | undefined
  if (scenario.rate !== undefined) {
    // a fixed offered rate, once per server; the rate limit remembers the last second, so pause before each
    const paced = (server: ServerProcess): LoadJob => ({ ...job(server, { seconds: scenario.rate?.seconds ?? 1 }, null), rate: scenario.rate?.perSecond })
    await sleep(1100)
    sandboxRuns = [await on(sandbox, paced(sandbox))]
    await sleep(1100)
    ceilingRuns = [await on(ceiling, paced(ceiling))]
  } else {
    // rounds of both, the order alternating (sandbox first, then ceiling first, ...): a change in
    // the machine's load weighs on both alike, and the medians drop a round another process spoiled
    sandboxRuns = []
    ceilingRuns = []
    for (let round = 0; round < settings.rounds; round++) {
      const warmup = round === 0 ? settings.warmup : null
      const order: [ServerProcess, LoadRun[]][] = [[sandbox, sandboxRuns], [ceiling, ceilingRuns]]
      if (round % 2 === 1) order.reverse()
      for (const [server, runs] of order) runs.push(await on(server, job(server, settings.measure, warmup)))
    }
    // one connection at a time: the time one request takes, without queueing behind the others
    alone = await on(sandbox, job(sandbox, settings.serviceTime, null, 1))
  }
  const sandboxRss = statusKb(sandbox.pid, 'VmRSS')
  const s = sideOf(sandboxRuns)
  const c = sideOf(ceilingRuns)
  const ratios = sandboxRuns.map((run, i) => rateOf(run.result) / Math.max(1e-9, rateOf(ceilingRuns[i].result)))
  const perSecond = sandboxRuns[0].result.perSecond?.map((row) => {
    const accepted = row.byStatus['200'] ?? 0
    const limited = row.byStatus['429'] ?? 0
    const total = Object.values(row.byStatus).reduce((a, b) => a + b, 0)
    return { second: row.second, accepted, limited, other: total - accepted - limited }
  })
  return {
    id: scenario.id,
    title: scenario.title,
    sandbox: s,
    ceiling: c,
    // the median of the rounds' ratios: each round's two runs saw the same machine
    ratio: median(ratios),
    ratios,
    responseBytes: Math.round(meanBytes(stored)),
    ...(alone === undefined ? {} : { oneConnection: { rps: rateOf(alone.result), ...alone.result.latency } }),
    sandboxRssMb: sandboxRss === null ? null : mb(sandboxRss),
    ...(perSecond === undefined ? {} : { perSecond })
  }
}

/** One full sync on one connection (what a partner's first sync waits for), then one on all of them. */
async function measureSync (settings: Settings, sandbox: ServerProcess, data: BenchData): Promise<SyncResult> {
  const variants = syncVariants(data)
  const passes = []
  for (const connections of [1, settings.syncConnections]) {
    const { result, cpu } = await runLoad({
      origin: sandbox.origin,
      authorization: authorization(data),
      variants,
      connections,
      warmup: null,
      measure: { amount: variants.length },
      expect: [200]
    }, sandbox.pid)
    const pass = { connections, seconds: result.seconds, rps: rateOf(result), ...result.latency, errors: result.errors, sandboxCores: cpu.server }
    passes.push(pass)
    log(`full sync, ${connections} connection${connections === 1 ? '' : 's'}: ${variants.length} batches in ${pass.seconds.toFixed(2)} s, ` +
      `${pass.rps.toFixed(0)} req/s, p99 ${pass.p99Ms.toFixed(2)} ms`)
  }
  return { clients: data.liveClientNumbers.length, batches: variants.length, passes }
}

// ---------------------------------------------------------------------------------------------

async function bench (settings: Settings, command: string): Promise<Results> {
  mkdirSync(settings.dataDir, { recursive: true })
  const loadBefore = loadAverage()
  const data = await prepareData({ dir: settings.dataDir, clients: settings.clients, fresh: settings.fresh, cli: CLI, log })
  const work = workingCopy(data)
  const cleanups: (() => Promise<unknown> | void)[] = [() => work.remove()]
  try {
    const startup = await startups(settings, work.file, data)

    const stamp = new Date().toISOString().replace(/[:.]/g, '-')
    const profileOf = (server: string) => (settings.profile ? `${server}-${stamp}.cpuprofile` : undefined)
    const sandboxProfile = profileOf(`sandbox-${settings.partial ? settings.scenarios.join('+') : 'all'}`)
    const sandbox = await startSandbox(settings, work.file, data, sandboxProfile)
    cleanups.unshift(() => sandbox.stop())
    const rss = new RssSampler(sandbox.pid, 100).start()
    log(`sandbox ${sandbox.origin} (pid ${sandbox.pid}) healthy in ${sandbox.startupMs.toFixed(0)} ms`)

    const journal = settings.journalRequests > 0 ? await measureJournal(settings, sandbox, data) : null

    const auth = authorization(data)
    const scenarios = buildScenarios(data, settings.sizes).filter((s) => settings.scenarios.includes(s.id))
    const results: ScenarioResult[] = []
    const ceilingProfiles: string[] = []
    for (const scenario of scenarios) {
      // the answers are taken just before the scenario runs, so writes of earlier scenarios count for both servers
      const ceilingProfile = profileOf(`ceiling-${scenario.id}`)
      if (ceilingProfile !== undefined) ceilingProfiles.push(ceilingProfile)
      const { ceiling, stored } = await startCeiling({ tempDir: settings.tempDir, nodeFlags: profileFlags(settings, ceilingProfile) }, scenario, sandbox, data)
      cleanups.unshift(() => ceiling.stop())
      rss.startPhase()
      const r = { ...(await measureScenario(settings, scenario, sandbox, ceiling, auth, stored)), sandboxPeakRssMb: mb(rss.phasePeakKb) }
      await ceiling.stop()
      results.push(r)
      log(`${scenario.id}: sandbox ${r.sandbox.rps.toFixed(0)} req/s p50 ${r.sandbox.p50Ms.toFixed(2)} p99 ${r.sandbox.p99Ms.toFixed(2)} ms · ` +
        `ceiling ${r.ceiling.rps.toFixed(0)} req/s p50 ${r.ceiling.p50Ms.toFixed(2)} p99 ${r.ceiling.p99Ms.toFixed(2)} ms · ${(100 * r.ratio).toFixed(0)}%`)
    }

    let sync: SyncResult | undefined
    if (settings.scenarios.includes('batch-200')) {
      rss.startPhase()
      sync = await measureSync(settings, sandbox, data)
    }

    rss.sample()
    rss.stop()
    const hwm = statusKb(sandbox.pid, 'VmHWM')
    const code = await sandbox.stop()
    if (code !== 0) throw new Error(`the sandbox exited with ${code} on SIGTERM:\n${sandbox.output()}`)

    const measured: Omit<Results, 'targets'> = {
      date: new Date().toISOString(),
      command,
      machine: { ...machine(), loadAverage: { before: loadBefore, after: loadAverage() } },
      settings: {
        quick: settings.quick,
        measure: budgetText(settings.measure),
        warmup: settings.warmup === null ? 'none' : budgetText(settings.warmup),
        connections: settings.connections ?? `${READ_CONNECTIONS} for reads, ${WRITE_CONNECTIONS} for writes`,
        rounds: settings.rounds,
        tool: `${wrkVersion()}, one thread (create client: an even-paced HTTP client in Node)`,
        profiled: settings.profile
      },
      data: {
        agencyId: data.agencyId,
        clients: data.clients,
        liveClients: data.liveClientNumbers.length,
        fixtureMb: data.fixtureBytes / 1024 / 1024,
        databaseMb: data.dbBytes / 1024 / 1024,
        built: data.built
      },
      startup,
      memory: { peakRssMb: mb(rss.peakKb), hwmMb: hwm === null ? null : mb(hwm), samples: rss.samples, journal },
      scenarios: results,
      ...(sync === undefined ? {} : { sync })
    }
    if (sandboxProfile !== undefined) {
      const summary = (names: string[]) => summarizeProfile(names.map((n) => join(settings.out, 'profiles', n)), ROOT)
      measured.profile = { sandbox: summary([sandboxProfile]), ceiling: summary(ceilingProfiles) }
    }
    return { ...measured, targets: evaluateTargets(measured) }
  } finally {
    for (const cleanup of cleanups) await cleanup()
  }
}

async function main (): Promise<number> {
  let settings: Settings | null
  try {
    settings = settingsOf(process.argv.slice(2))
  } catch (e) {
    if (!(e instanceof UsageError)) throw e
    console.error(`bench: ${e.message}\n\n${HELP}`)
    return 2
  }
  if (settings === null) {
    console.log(HELP)
    return 0
  }
  const command = ['node dist/bench/run.js', ...process.argv.slice(2)].join(' ')
  try {
    const started = performance.now()
    const results = settings.startupOnly ? await startupOnly(settings, command) : await bench(settings, command)
    mkdirSync(settings.out, { recursive: true })
    writeFileSync(join(settings.out, 'results.json'), JSON.stringify(results, null, 2) + '\n')
    writeFileSync(join(settings.out, 'RESULTS.md'), renderMarkdown(results))
    console.log(`\n${scenarioTable(results)}\n\n${targetTable(results)}\n`)
    log(`wrote ${join(settings.out, 'RESULTS.md')} and results.json in ${((performance.now() - started) / 1000).toFixed(0)} s`)
    return 0
  } catch (e) {
    console.error('bench: failed:', e instanceof Error ? e.stack ?? e.message : e)
    return 1
  } finally {
    // the temp dir holds the quick run's data and the ceiling's answers; keep the quick run's output if it went there
    if (settings.out !== settings.tempDir) rmSync(settings.tempDir, { recursive: true, force: true })
    else for (const f of readdirSync(settings.tempDir)) if (!['RESULTS.md', 'results.json'].includes(f)) rmSync(join(settings.tempDir, f), { recursive: true, force: true })
  }
}

process.exitCode = await main()
