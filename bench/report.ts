import { readFileSync } from 'node:fs'
import { cpus, release, type } from 'node:os'
import type { ProfileSummary, SelfTime } from './profile.js'
import { CREATE_LIMIT, CREATE_RATE, type ScenarioId } from './scenarios.js'
import { startupLine, startupTargets, type StartupResult } from './startup.js'

/** The benchmark's results: their shape, the targets of issue 7, and RESULTS.md. */

export interface Machine {
  cpuModel: string
  cpus: number
  memoryMb: number
  node: string
  os: string
  /** Load averages (1, 5, 15 min) when the run started and ended: other work on the machine. */
  loadAverage?: { before: number[]; after: number[] }
}

export interface Side {
  rps: number
  p50Ms: number
  p99Ms: number
  meanMs: number
  /** Requests/s of each round, in order (the figures above are medians over the rounds). */
  rounds?: number[]
  requests: number
  errors: number
  statuses: Record<string, number>
  seconds: number
  /** CPU used during the measurement, in cores (1 = one core busy all the time): the server, the load generator, every other process. */
  cpu: { server: number; load: number; other: number }
}

export interface SecondRow {
  second: number
  accepted: number
  limited: number
  other: number
}

export interface ScenarioResult {
  id: ScenarioId
  title: string
  sandbox: Side
  ceiling: Side
  /** sandbox requests/s ÷ ceiling requests/s. */
  /** Median of the rounds' sandbox/ceiling ratios. */
  ratio: number
  /** Sandbox/ceiling of each round. */
  ratios?: number[]
  /** The sandbox with a single connection: the service time of one request, without queueing. */
  oneConnection?: { rps: number; p50Ms: number; p99Ms: number; meanMs: number }
  /** Mean size of the answers' bodies, bytes. */
  responseBytes?: number
  /** RSS of the sandbox once the scenario ran, MB. */
  sandboxRssMb: number | null
  /** Peak RSS of the sandbox during the scenario (sampled), MB. */
  sandboxPeakRssMb?: number
  /** Create client: answers by the second their request was sent in. */
  perSecond?: SecondRow[]
}

/** One pass of a full sync over a number of connections. */
export interface SyncPass {
  connections: number
  /** From the first request to the last answer. */
  seconds: number
  rps: number
  p50Ms: number
  p99Ms: number
  errors: number
  /** Cores the sandbox used during the pass. */
  sandboxCores: number
}

/** Every live client read once in batches (no ceiling: it would hold every answer in memory). */
export interface SyncResult {
  clients: number
  batches: number
  passes: SyncPass[]
}

export interface JournalResult {
  /** Requests of the first round. */
  requests: number
  /** Requests of each later round. */
  laterRequests: number
  /** Status of GET /_sandbox/requests (404: no journal endpoint yet). */
  endpointStatus: number
  /** Entries the journal keeps (its x-journal-capacity header). */
  capacity: number | null
  /** Id of the newest entry once all rounds ran: entries recorded since start. */
  recorded: number | null
  rssBeforeMb: number
  rssAfterFirstMb: number
  /** RSS after each later round. */
  rssAfterLaterMb: number[]
}

export interface TargetResult {
  target: string
  measured: string
  /** null: not measured in this run. */
  pass: boolean | null
}

export interface Results {
  date: string
  command: string
  machine: Machine
  settings: {
    quick: boolean
    measure: string
    warmup: string
    /** A number given with --connections, else what each scenario uses. */
    connections: number | string
    /** Rounds per scenario, alternated (absent in results of the build before rounds). */
    rounds?: number
    tool: string
    profiled: boolean
  }
  data: {
    agencyId: number
    clients: number
    liveClients: number
    fixtureMb: number
    databaseMb: number
    built: { fixture?: number; database?: number }
  }
  /** Spawn to healthy over the benchmark's database: the bundle, a bare Fastify server, dist/src. */
  startup: StartupResult | null
  memory: { peakRssMb: number; hwmMb: number | null; samples: number; journal: JournalResult | null }
  scenarios: ScenarioResult[]
  /** Measured with the batch-200 scenario. */
  sync?: SyncResult
  targets: TargetResult[]
  /** --profile: both servers ran under node --cpu-prof. */
  profile?: { sandbox: ProfileSummary; ceiling: ProfileSummary }
}

export function machine (): Machine {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8')
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? cpus()[0]?.model ?? 'unknown'
  const count = cpuinfo.match(/^processor\s*:/gm)?.length ?? cpus().length
  const memKb = Number(/^MemTotal:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? 0)
  return { cpuModel: model, cpus: count, memoryMb: Math.round(memKb / 1024), node: process.version, os: `${type()} ${release()}` }
}

// ---------------------------------------------------------------------------------------------
// Targets

/** RSS growth, once the journal is full, that still counts as flat (V8 sizes its heap in steps). */
export const FLAT_RSS_MB = 16

const pct = (ratio: number) => `${(ratio * 100).toFixed(0)}%`
const ms = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2))

export function evaluateTargets (r: Omit<Results, 'targets'>): TargetResult[] {
  const s = (id: ScenarioId) => r.scenarios.find((x) => x.id === id)
  const targets: TargetResult[] = []
  const add = (target: string, measured: string | null, pass: boolean | null) =>
    targets.push({ target, measured: measured ?? 'not measured', pass: measured === null ? null : pass })

  // latency targets are judged under the run's connections; the one-connection figure is the time of one request alone
  const latency = (x: ScenarioResult, pick: 'p50Ms' | 'p99Ms') =>
    `${ms(x.sandbox[pick])} ms` + (x.oneConnection === undefined ? '' : ` (one connection: ${ms(x.oneConnection[pick])} ms)`)

  const ratioTarget = (id: ScenarioId, name: string, least: number) => {
    const x = s(id)
    add(`${name}: at least ${pct(least)} of the ceiling's requests/s`, x ? pct(x.ratio) : null, x ? x.ratio >= least : null)
  }
  const get = s('get-client')
  ratioTarget('get-client', 'get client (default includes)', 0.8)
  add('get client: p99 at most twice the ceiling\'s under the same load',
    get ? `${ms(get.sandbox.p99Ms)} ms against ${ms(get.ceiling.p99Ms)} ms` : null, get ? get.sandbox.p99Ms <= 2 * get.ceiling.p99Ms : null)
  const batch = s('batch-200')
  add('batch of 200: p99 under 50 ms', batch ? latency(batch, 'p99Ms') : null, batch ? batch.sandbox.p99Ms < 50 : null)
  ratioTarget('batch-200', 'batch of 200', 0.7)
  const all = s('changed-all')
  add(`changed clients, all ${r.data.liveClients.toLocaleString('en-US')} ids: p50 under 30 ms`, all ? latency(all, 'p50Ms') : null, all ? all.sandbox.p50Ms < 30 : null)
  ratioTarget('changed-all', 'changed clients, all ids', 0.8)
  const recent = s('changed-recent')
  add('changed clients, recent asOf: p50 under 3 ms', recent ? latency(recent, 'p50Ms') : null, recent ? recent.sandbox.p50Ms < 3 : null)
  ratioTarget('changed-recent', 'changed clients, recent asOf', 0.8)
  ratioTarget('search-policy', 'search by policy number', 0.8)
  ratioTarget('log-note', 'log-note writes, against the write ceiling', 0.6)
  for (const row of startupTargets(r.startup, r.data.clients)) add(...row)
  // the kernel's high-water mark also catches a peak between two samples
  const peak = Math.max(r.memory.peakRssMb, r.memory.hwmMb ?? 0)
  add(
    'peak RSS under 200 MB',
    `${r.memory.peakRssMb.toFixed(0)} MB sampled, ${r.memory.hwmMb === null ? '?' : r.memory.hwmMb.toFixed(0)} MB VmHWM`,
    peak < 200
  )
  const j = r.memory.journal
  const lastRss = j?.rssAfterLaterMb[j.rssAfterLaterMb.length - 1]
  add(
    `RSS flat after the journal is full (after the last of ${j?.rssAfterLaterMb.length ?? '?'} more rounds, less than ${FLAT_RSS_MB} MB above the RSS after the first ${j?.requests.toLocaleString('en-US') ?? '?'} requests)`,
    j && lastRss !== undefined
      ? `${[j.rssBeforeMb, j.rssAfterFirstMb, ...j.rssAfterLaterMb].map((v) => v.toFixed(0)).join(' → ')} MB` +
        (j.endpointStatus === 404 ? ' (no journal endpoint yet: GET /_sandbox/requests is 404)' : '')
      : null,
    j && lastRss !== undefined ? lastRss - j.rssAfterFirstMb < FLAT_RSS_MB : null
  )
  const create = s('create-client')
  const rows = create?.perSecond ?? []
  add(
    `create client: exactly ${CREATE_LIMIT} accepted per second under ${CREATE_RATE}/s offered`,
    create ? `accepted per second: ${rows.map((x) => x.accepted).join(', ')}` + (rows.some((x) => x.other > 0) ? ' (unexpected statuses)' : '') : null,
    create ? rows.length > 0 && rows.every((x) => x.accepted === CREATE_LIMIT && x.other === 0) : null
  )
  return targets
}

// ---------------------------------------------------------------------------------------------
// Rendering

const int = (v: number) => Math.round(v).toLocaleString('en-US')
const verdict = (pass: boolean | null) => (pass === null ? '–' : pass ? 'PASS' : 'MISS')

function table (header: string[], rows: string[][], align: ('l' | 'r')[]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`
  return [line(header), line(align.map((a) => (a === 'r' ? '---:' : '---'))), ...rows.map(line)].join('\n')
}

/** The load generator used (nearly) a whole core while the ceiling ran: the ceiling may be faster than measured. */
const LOAD_BOUND_CORES = 0.9
const loadBound = (x: ScenarioResult) => x.ceiling.cpu.load >= LOAD_BOUND_CORES && x.ceiling.cpu.server < LOAD_BOUND_CORES

export function scenarioTable (r: Results): string {
  return table(
    ['Scenario', 'Answer bytes', 'Sandbox req/s', 'p50 ms', 'p99 ms', 'Ceiling req/s', 'p50 ms', 'p99 ms', 'Sandbox/ceiling', 'Each round', 'Errors'],
    r.scenarios.map((x) => [
      x.title,
      x.responseBytes === undefined ? '' : int(x.responseBytes),
      int(x.sandbox.rps), ms(x.sandbox.p50Ms), ms(x.sandbox.p99Ms),
      int(x.ceiling.rps), ms(x.ceiling.p50Ms), ms(x.ceiling.p99Ms),
      pct(x.ratio) + (loadBound(x) ? ' †' : ''),
      (x.ratios ?? []).map((v) => v.toFixed(2)).join(', '),
      String(x.sandbox.errors + x.ceiling.errors)
    ]),
    ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l', 'r']
  )
}

function cpuTable (r: Results): string {
  const cores = (s: Side) => [s.cpu.server, s.cpu.load, s.cpu.other].map((v) => v.toFixed(2))
  return table(
    ['Scenario', 'Sandbox', 'Load generator', 'Other processes', 'Ceiling', 'Load generator', 'Other processes'],
    r.scenarios.map((x) => [x.id, ...cores(x.sandbox), ...cores(x.ceiling)]),
    ['l', 'r', 'r', 'r', 'r', 'r', 'r']
  )
}

export function targetTable (r: Results): string {
  return table(['Target', 'Measured', 'Result'], r.targets.map((t) => [t.target, t.measured, verdict(t.pass)]), ['l', 'l', 'l'])
}

export function renderMarkdown (r: Results): string {
  const m = r.machine
  const out: string[] = []
  out.push('# Benchmark results', '')
  out.push(`${r.date} · \`${r.command}\`${r.settings.quick ? ' · **quick smoke run: tiny data, not a measurement**' : ''}${r.settings.profiled ? ' · **sandbox under --cpu-prof: slower than normal**' : ''}`, '')
  out.push('## Machine', '')
  out.push(table(['CPU', 'Cores', 'Memory', 'Node', 'OS'], [[m.cpuModel, String(m.cpus), `${(m.memoryMb / 1024).toFixed(1)} GiB`, m.node, m.os]], ['l', 'r', 'r', 'l', 'l']), '')
  out.push(
    `Sandbox, ceiling and load generator share these ${m.cpus} cores. Load: ${r.settings.tool}, ${r.settings.connections} connections, ` +
      `${r.settings.rounds ?? 1} rounds of ${r.settings.measure} per scenario and server` +
      (r.settings.warmup === 'none' ? ' without warm-up' : ` after ${r.settings.warmup} of warm-up`) +
      ', the order alternating (sandbox then ceiling, ceiling then sandbox, ...); each figure is the median over the rounds, ' +
      'and the ratio the median of the rounds\' ratios. ' +
      'The ceiling of reads is a bare Fastify server (`bench/ceiling.ts`) answering the very bytes the sandbox answered for the same ' +
      'request, from memory, on the same route patterns and behind the same Basic-auth check. The ceiling of log-note writes ' +
      '(`bench/write-ceiling.ts`) is a bare Fastify server over better-sqlite3 doing what such a write must: route, parse the JSON, ' +
      'check Basic credentials and that the client exists, validate Channel, RefId and TS, insert in one transaction (WAL, ' +
      '`synchronous=NORMAL`), RefId unique (the same body answers again, another 409), answer `Created`.',
    ''
  )
  const d = r.data
  out.push('## Data', '')
  out.push(
    `Agency ${d.agencyId}: ${int(d.clients)} clients (${int(d.liveClients)} not deleted), generated by \`generateFixture\` ` +
      `(fixture ${d.fixtureMb.toFixed(0)} MB, database ${d.databaseMb.toFixed(0)} MB, each run on a fresh copy of it).` +
      (d.built.fixture !== undefined ? ` Fixture generated in this run in ${d.built.fixture.toFixed(1)} s.` : '') +
      (d.built.database !== undefined ? ` Database seeded in this run in ${d.built.database.toFixed(1)} s.` : ''),
    ''
  )
  out.push('## Scenarios', '')
  out.push(scenarioTable(r), '')
  out.push(
    'Requests/s counts answers with the expected status; latencies are measured per request by the load generator.' +
      (r.scenarios.some(loadBound)
        ? ' † The load generator, not the ceiling, was the bottleneck of the ceiling run (it used a whole core while the ' +
          'ceiling did not): the ceiling is at least that fast, so the ratio is an upper bound.'
        : ''),
    ''
  )
  const alone = r.scenarios.filter((x) => x.oneConnection !== undefined)
  if (alone.length > 0) {
    out.push('### The sandbox with one connection', '')
    out.push(
      `With ${r.settings.connections} connections in a closed loop a request waits behind the others (p50 ≈ connections ÷ requests/s); ` +
        'with one connection the latency is the time one request takes.',
      ''
    )
    out.push(table(['Scenario', 'req/s', 'p50 ms', 'p99 ms'], alone.map((x) => [
      x.title, int(x.oneConnection?.rps ?? 0), ms(x.oneConnection?.p50Ms ?? 0), ms(x.oneConnection?.p99Ms ?? 0)
    ]), ['l', 'r', 'r', 'r']), '')
  }
  if (r.sync !== undefined) {
    const y = r.sync
    out.push('### A first full sync: every client read once', '')
    out.push(
      `Every one of the ${int(y.clients)} live clients, in ${int(y.batches)} batches of 200 sent in turn (\`bench/scenarios.ts\`, ` +
        '`syncVariants`). Unlike the batch scenario above, which rotates over 20 batches whose answers the sandbox keeps in ' +
        'memory once read, no client is asked twice within a pass, so every batch is read from SQLite: this is the cold ' +
        'path. No ceiling: it would have to hold every answer in memory.',
      ''
    )
    out.push(table(['Connections', 'Pass s', 'req/s', 'p50 ms', 'p99 ms', 'Sandbox cores', 'Errors'], y.passes.map((x) => [
      String(x.connections), x.seconds.toFixed(2), int(x.rps), ms(x.p50Ms), ms(x.p99Ms), x.sandboxCores.toFixed(2), String(x.errors)
    ]), ['r', 'r', 'r', 'r', 'r', 'r', 'r']), '')
  }
  out.push('### CPU during the measurements', '')
  out.push(cpuTable(r), '')
  out.push(
    'Cores used (1.00 = one core busy all the time). A server near 1.00 is the bottleneck, as it should be; a load ' +
      'generator near 1.00 would bound the figures by the load generator instead, and CPU used by other processes ' +
      'is noise from the machine.' +
      (m.loadAverage !== undefined ? ` Load average (1, 5, 15 min): ${m.loadAverage.before.join(', ')} at the start, ${m.loadAverage.after.join(', ')} at the end.` : ''),
    ''
  )
  const create = r.scenarios.find((x) => x.id === 'create-client')
  if (create?.perSecond !== undefined) {
    out.push('### Create client, second by second (sandbox)', '')
    out.push(table(['Second', 'Accepted (200)', 'Limited (429)', 'Other'], create.perSecond.map((x) => [String(x.second + 1), String(x.accepted), String(x.limited), String(x.other)]), ['r', 'r', 'r', 'r']), '')
  }
  out.push('## Start-up and memory', '')
  if (r.startup !== null) out.push(startupLine(r.startup))
  out.push(`- Peak RSS of the sandbox during the run (VmRSS sampled every 100 ms, ${r.memory.samples} samples): **${r.memory.peakRssMb.toFixed(0)} MB**` +
    (r.memory.hwmMb !== null ? ` (kernel high-water mark VmHWM: ${r.memory.hwmMb.toFixed(0)} MB).` : '.'))
  const j = r.memory.journal
  if (j !== null) {
    out.push(
      `- Journal: RSS ${j.rssBeforeMb.toFixed(0)} MB before, ${j.rssAfterFirstMb.toFixed(0)} MB after ${int(j.requests)} requests ` +
        `(\`GET /vendor/agencies?version=4.0\`), then ${j.rssAfterLaterMb.map((v) => v.toFixed(0)).join(', ')} MB after each of ` +
        `${j.rssAfterLaterMb.length} more rounds of ${int(j.laterRequests)}. ` +
        (j.endpointStatus === 404
          ? '`GET /_sandbox/requests` answered 404: no journal in this build.'
          : `Journal capacity ${j.capacity === null ? 'unknown' : int(j.capacity)} entries; ${j.recorded === null ? 'no' : int(j.recorded)} requests journaled since start.`)
    )
  }
  const rss = r.scenarios.filter((x) => x.sandboxRssMb !== null).map((x) =>
    `${x.id} ${x.sandboxPeakRssMb === undefined ? '' : `${x.sandboxPeakRssMb.toFixed(0)} / `}${x.sandboxRssMb?.toFixed(0)}`)
  if (rss.length > 0) out.push(`- RSS per scenario, peak during it / after it (MB): ${rss.join(', ')}.`)
  out.push('')
  out.push('## Targets', '')
  out.push(targetTable(r), '')
  if (r.profile !== undefined) {
    const selfTable = (rows: SelfTime[]) =>
      table(['Function', 'Location', 'Self ms', 'Share'], rows.map((f) => [f.name, f.location, int(f.selfMs), `${f.selfPct.toFixed(1)}%`]), ['l', 'l', 'r', 'r'])
    const { sandbox, ceiling } = r.profile
    out.push('## CPU profiles', '')
    out.push(`Sandbox (\`profiles/${sandbox.files.join('`, `')}\`): ${int(sandbox.busyMs)} ms busy, ${int(sandbox.idleMs)} ms idle, ` +
      'start-up, warm-up and measurement together. Self time, share of busy time:', '')
    out.push(selfTable(sandbox.functions), '')
    out.push('By file or package:', '')
    out.push(table(['File or package', 'Self ms', 'Share'], sandbox.byFile.map((f) => [f.name, int(f.selfMs), `${f.selfPct.toFixed(1)}%`]), ['l', 'r', 'r']), '')
    out.push("The sandbox's own functions, inclusive of what they call:", '')
    out.push(selfTable(sandbox.project), '')
    out.push(`Ceiling (${ceiling.files.length} process${ceiling.files.length === 1 ? '' : 'es'}, one per scenario): ${int(ceiling.busyMs)} ms busy, ${int(ceiling.idleMs)} ms idle. Self time:`, '')
    out.push(selfTable(ceiling.functions), '')
  }
  out.push('Raw figures: `results.json` next to this file. Run again with `npm run bench` (`-- --help` for the options).', '')
  return out.join('\n')
}
