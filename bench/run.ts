import { randomUUID } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { ROOT } from '../src/config.js'
import { prepareData, workingCopy, type BenchData } from './data.js'
import { runLoad, sideOf, type LoadRun } from './load-run.js'
import { freePort, loadAverage, RssSampler, spawnServer, statusKb, type ServerProcess } from './processes.js'
import { summarizeProfile } from './profile.js'
import { UUID_PLACEHOLDER, type Budget, type CeilingFile, type LoadJob, type StoredResponse } from './protocol.js'
import {
  evaluateTargets, machine, renderMarkdown, scenarioTable, targetTable,
  type JournalResult, type Results, type ScenarioResult, type SyncResult
} from './report.js'
import { buildScenarios, syncVariants, type Scenario } from './scenarios.js'
import { HELP, settingsOf, UsageError, type Settings } from './settings.js'
import { measureStartups, type StartupResult } from './startup.js'
import { rateOf, summarize } from './stats.js'

/**
 * The benchmark of issue 7 (`npm run bench`): the sandbox on a 100,000-client database against a
 * bare Fastify ceiling serving the same bytes, scenario by scenario, with start-up time (the bundled
 * bin against a bare Fastify server) and memory. Writes RESULTS.md and results.json; `--startup`
 * measures start-up alone and updates those. `--help` lists the options.
 */

const HERE = fileURLToPath(new URL('.', import.meta.url))
const CEILING_SCRIPT = join(HERE, 'ceiling.js')
/** The tsc output: builds the data, and serves the scenarios (a CPU profile then names each source file). */
const CLI = join(ROOT, 'dist', 'src', 'cli.js')
/** The bundled bin users run (`npm run build` writes it): its start-up is the one measured against the floor. */
const BUNDLE = join(ROOT, 'dist', 'bundle', 'cli.js')
const HEALTH = '/_sandbox/health'
const JOURNAL_PATH = '/vendor/agencies?version=4.0'

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`)
const budgetText = (b: Budget) => ('amount' in b ? `${b.amount.toLocaleString('en-US')} requests` : `${b.seconds} s`)
const mb = (kb: number | null) => (kb === null ? 0 : kb / 1024)
const authorization = (d: BenchData) => 'Basic ' + Buffer.from(`${d.credentials.clientId}:${d.credentials.clientSecret}`).toString('base64')

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
    bare: () => spawnCeiling(settings, bareFile, 'startup', undefined),
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
      connections: settings.connections,
      warmup: null,
      measure: { amount },
      expect: [200]
    }, sandbox.pid)
    if (result.requests !== amount) throw new Error(`journal round answered ${result.requests} of ${amount}: ${JSON.stringify(result.statuses)}`)
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

/** Asks the sandbox each distinct request of the scenario once, for the ceiling to replay. */
async function storeResponses (scenario: Scenario, origin: string, auth: string): Promise<StoredResponse[]> {
  const stored: StoredResponse[] = []
  const seen = new Set<string>()
  for (const v of scenario.variants) {
    const key = `${v.method} ${v.path} ${v.body ?? ''}`
    if (seen.has(key)) continue
    seen.add(key)
    const body = v.body === undefined ? undefined : v.body.split(UUID_PLACEHOLDER).join(randomUUID())
    const res = await fetch(origin + v.path, {
      method: v.method,
      headers: body === undefined ? { authorization: auth } : { authorization: auth, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body })
    })
    const payload = await res.text()
    if (res.status !== 200) throw new Error(`${scenario.id}: ${v.method} ${v.path} answered ${res.status}: ${payload.slice(0, 500)}`)
    stored.push({
      method: v.method,
      url: v.path,
      ...(v.body === undefined ? {} : { body: v.body }),
      status: res.status,
      contentType: res.headers.get('content-type') ?? 'application/json; charset=utf-8',
      payload
    })
  }
  return stored
}

/** A ceiling serving the sandbox's answers to the scenario's requests, taken now. */
async function startCeiling (
  settings: Settings, scenario: Scenario, sandbox: ServerProcess, data: BenchData, profileName: string | undefined
): Promise<{ ceiling: ServerProcess; stored: StoredResponse[] }> {
  const file: CeilingFile = {
    credentials: data.credentials,
    routes: [scenario.route],
    responses: await storeResponses(scenario, sandbox.origin, authorization(data))
  }
  return { ceiling: await spawnCeiling(settings, file, scenario.id, profileName), stored: file.responses }
}

/** A ceiling process answering `file`'s responses, once healthy. */
async function spawnCeiling (settings: Settings, file: CeilingFile, name: string, profileName: string | undefined): Promise<ServerProcess> {
  const responsesFile = join(settings.tempDir, `ceiling-${name}.json`)
  writeFileSync(responsesFile, JSON.stringify(file))
  const port = await freePort()
  return spawnServer({
    args: [...profileFlags(settings, profileName), CEILING_SCRIPT, responsesFile, '--port', String(port)],
    env: {},
    port,
    healthPath: '/_ceiling/health',
    pollMs: 5,
    timeoutMs: 30_000
  })
}

/** Mean body size of the stored answers. */
const meanBytes = (stored: StoredResponse[]): number =>
  stored.reduce((sum, a) => sum + Buffer.byteLength(a.payload), 0) / Math.max(1, stored.length)

const halve = (b: Budget): Budget => ('amount' in b ? { amount: Math.ceil(b.amount / 2) } : { seconds: b.seconds / 2 })

async function measureScenario (
  settings: Settings, scenario: Scenario, sandbox: ServerProcess, ceiling: ServerProcess, auth: string, stored: StoredResponse[]
): Promise<ScenarioResult> {
  const job = (server: ServerProcess, measure: Budget, warmup: Budget | null, connections = settings.connections): LoadJob => ({
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
    // sandbox, ceiling, ceiling, sandbox, each for half the time: a change in the machine's load weighs on both alike
    const half = halve(settings.measure)
    const s1 = await on(sandbox, job(sandbox, half, settings.warmup))
    const c1 = await on(ceiling, job(ceiling, half, settings.warmup))
    const c2 = await on(ceiling, job(ceiling, half, null))
    const s2 = await on(sandbox, job(sandbox, half, null))
    sandboxRuns = [s1, s2]
    ceilingRuns = [c1, c2]
    // one connection at a time: the time one request takes, without queueing behind the others
    alone = await on(sandbox, job(sandbox, settings.serviceTime, null, 1))
  }
  const sandboxRss = statusKb(sandbox.pid, 'VmRSS')
  const s = sideOf(sandboxRuns)
  const c = sideOf(ceilingRuns)
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
    ratio: c.rps > 0 ? s.rps / c.rps : 0,
    responseBytes: Math.round(meanBytes(stored)),
    ...(alone === undefined ? {} : { oneConnection: { rps: rateOf(alone.result), ...summarize(alone.result.latencies) } }),
    sandboxRssMb: sandboxRss === null ? null : mb(sandboxRss),
    ...(perSecond === undefined ? {} : { perSecond })
  }
}

/** One full sync on one connection (what a partner's first sync waits for), then one on all of them. */
async function measureSync (settings: Settings, sandbox: ServerProcess, data: BenchData): Promise<SyncResult> {
  const variants = syncVariants(data)
  const passes = []
  for (const connections of [1, settings.connections]) {
    const { result, cpu } = await runLoad({
      origin: sandbox.origin,
      authorization: authorization(data),
      variants,
      connections,
      warmup: null,
      measure: { amount: variants.length },
      expect: [200]
    }, sandbox.pid)
    const pass = { connections, seconds: result.seconds, rps: rateOf(result), ...summarize(result.latencies), errors: result.errors, sandboxCores: cpu.server }
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
      const { ceiling, stored } = await startCeiling(settings, scenario, sandbox, data, ceilingProfile)
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
        connections: settings.connections,
        tool: `autocannon ${(createRequire(import.meta.url)('autocannon/package.json') as { version: string }).version} (create client: an even-paced HTTP client)`,
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
