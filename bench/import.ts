import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join, resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import Database from 'better-sqlite3'
import { ROOT } from '../src/config.js'
import { listMigrations } from '../src/db/database.js'
import { prepareData, workingCopy, type BenchData } from './data.js'
import { cpuSeconds, freePort, loadAverage, machineBusySeconds, RssSampler, spawnServer, statusKb } from './processes.js'
import { machine } from './report.js'

/**
 * The import's figure of issue 18: `agency-sandbox import` of the benchmark's 100,000-client
 * agency (about 1% deleted) from a sandbox process on 127.0.0.1, each run against a fresh copy
 * of the seeded database. Per run: wall time, requests, the importer's CPU time and peak RSS,
 * the upstream's CPU time and peak RSS while it answered, and the machine's load, since other
 * work on the machine inflates wall time but hardly the CPU times. `--help` lists the options.
 */

const HELP = `Usage: node dist/bench/import.js [options]

  --runs N          imports measured (default 1), each against a fresh upstream
  --baseline DIR    another built checkout (DIR/dist/src/cli.js): its upstream and importer run
                    too, alternating with this one (baseline, current, current, baseline, ...)
  --concurrency N   the import's --concurrency (default: the import's own)
  --timeout S       an import still running after S seconds is killed (default 600)
  --clients N       clients of the generated agency (default 100000; bench/data is reused)
  --out FILE        the report (default bench/IMPORT.md)
  --help            this text`

const HERE = fileURLToPath(new URL('.', import.meta.url))
const USAGE_PRELOAD = pathToFileURL(join(HERE, 'import-usage.js')).href
const CLI = join(ROOT, 'dist', 'src', 'cli.js')

interface Settings { runs: number; baseline?: string; concurrency?: number; timeoutS: number; clients: number; out: string }

interface Side { name: string; root: string; cli: string }

export interface ImportRun {
  side: string
  /** Spawn of the importer to its exit. */
  wallSeconds: number
  /** What the importer printed as its own time. */
  reportedSeconds: number
  requests: number
  clients: number
  deleted: number
  importerCpuSeconds: number
  importerPeakRssMb: number
  upstreamCpuSeconds: number
  /** Sampled every 100 ms while the import ran. */
  upstreamPeakRssMb: number
  /** Peak since the upstream started (start-up included). */
  upstreamHwmMb: number
  /** CPU seconds the rest of the machine used meanwhile (busy time minus both processes). */
  otherCpuSeconds: number
  loadBefore: number[]
  loadAfter: number[]
  schemaVersion: number
  outputBytes: number
}

function settingsOf (argv: string[]): Settings | null {
  const { values } = parseArgs({
    args: argv,
    options: {
      runs: { type: 'string' },
      baseline: { type: 'string' },
      concurrency: { type: 'string' },
      timeout: { type: 'string' },
      clients: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h' }
    },
    strict: true
  })
  if (values.help === true) return null
  const int = (name: string, value: string | undefined, fallback: number, max: number): number => {
    if (value === undefined) return fallback
    const n = Number(value)
    if (!Number.isInteger(n) || n < 1 || n > max) throw new Error(`--${name} must be a whole number from 1 to ${max}, got '${value}'`)
    return n
  }
  return {
    runs: int('runs', values.runs, 1, 20),
    baseline: values.baseline === undefined ? undefined : resolve(values.baseline),
    concurrency: values.concurrency === undefined ? undefined : int('concurrency', values.concurrency, 4, 32),
    timeoutS: int('timeout', values.timeout, 600, 3600),
    clients: int('clients', values.clients, 100_000, 1_000_000),
    out: resolve(values.out ?? join(ROOT, 'bench', 'IMPORT.md'))
  }
}

/** The schema version of the copy the upstream will open (a baseline must not get this build's indexes). */
function schemaVersion (file: string): number {
  const db = new Database(file, { readonly: true })
  try {
    return db.pragma('user_version', { simple: true }) as number
  } finally {
    db.close()
  }
}

/** Runs the importer to its exit, killed after `timeoutS`; resolves with its output and usage. */
function runImporter (side: Side, args: string[], usageFile: string, timeoutS: number) {
  const started = performance.now()
  const child = spawn(process.execPath, ['--import', USAGE_PRELOAD, side.cli, 'import', ...args], {
    env: { ...process.env, IMPORT_USAGE_FILE: usageFile },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (b: Buffer) => { stdout += b.toString() })
  child.stderr.on('data', (b: Buffer) => { stderr = (stderr + b.toString()).slice(-8192) })
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutS * 1000)
  return new Promise<{ code: number | null; stdout: string; stderr: string; wallSeconds: number }>((resolve) => {
    child.on('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr, wallSeconds: (performance.now() - started) / 1000 })
    })
  })
}

async function oneRun (side: Side, data: BenchData, s: Settings): Promise<ImportRun> {
  const copy = workingCopy(data)
  const dir = mkdtempSync(join(tmpdir(), 'agency-import-bench-'))
  try {
    const version = schemaVersion(copy.file)
    const known = Math.max(0, ...listMigrations(join(side.root, 'migrations')).map((m) => m.version))
    if (version > known) {
      throw new Error(`${data.dbFile} is at schema version ${version}, beyond ${side.name}'s ${known}: its upstream would read a schema it does not know (seed the database with that build, or drop --baseline)`)
    }
    const port = await freePort()
    const upstream = await spawnServer({
      args: [side.cli, 'serve'],
      env: { PORT: String(port), HOST: '127.0.0.1', SANDBOX_DB: copy.file, SANDBOX_FIXTURES: data.fixtureFile, LOG_LEVEL: 'warn', LOG_PRETTY: 'false' },
      port,
      healthPath: '/_sandbox/health',
      pollMs: 50,
      timeoutMs: 180_000
    })
    try {
      const rss = new RssSampler(upstream.pid).start()
      const cpu0 = cpuSeconds(upstream.pid) ?? 0
      const busy0 = machineBusySeconds()
      const loadBefore = loadAverage()
      const out = join(dir, 'imported.json')
      const usageFile = join(dir, 'usage.json')
      const args = ['--from', upstream.origin, '--client-id', data.credentials.clientId, '--client-secret', data.credentials.clientSecret, '--out', out]
      if (s.concurrency !== undefined) args.push('--concurrency', String(s.concurrency))
      const run = await runImporter(side, args, usageFile, s.timeoutS)
      const busy = machineBusySeconds() - busy0
      const upstreamCpu = (cpuSeconds(upstream.pid) ?? cpu0) - cpu0
      rss.stop()
      if (run.code !== 0) throw new Error(`the import exited with ${run.code}:\n${run.stdout}\n${run.stderr}`)
      const m = /(\d[\d,]*) clients? and (\d[\d,]*) deleted clients? in ([\d.]+) s \((\d[\d,]*) requests?/.exec(run.stdout)
      if (m === null) throw new Error(`no summary line in the import's output:\n${run.stdout}`)
      const num = (text: string) => Number(text.replace(/,/g, ''))
      const usage = JSON.parse(readFileSync(usageFile, 'utf8')) as { userSeconds: number; systemSeconds: number; maxRssKb: number }
      const importerCpu = usage.userSeconds + usage.systemSeconds
      return {
        side: side.name,
        wallSeconds: run.wallSeconds,
        reportedSeconds: Number(m[3]),
        requests: num(m[4]),
        clients: num(m[1]),
        deleted: num(m[2]),
        importerCpuSeconds: importerCpu,
        importerPeakRssMb: usage.maxRssKb / 1024,
        upstreamCpuSeconds: upstreamCpu,
        upstreamPeakRssMb: rss.peakKb / 1024,
        upstreamHwmMb: (statusKb(upstream.pid, 'VmHWM') ?? 0) / 1024,
        otherCpuSeconds: Math.max(0, busy - importerCpu - upstreamCpu),
        loadBefore,
        loadAfter: loadAverage(),
        schemaVersion: version,
        outputBytes: existsSync(out) ? statSync(out).size : 0
      }
    } finally {
      await upstream.stop()
    }
  } finally {
    copy.remove()
    rmSync(dir, { recursive: true, force: true })
  }
}

const f1 = (n: number) => n.toFixed(1)
const loads = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ')

export function renderReport (runs: ImportRun[], s: Settings, data: BenchData): string {
  const m = machine()
  const rows = runs.map((r, i) =>
    `| ${i + 1} | ${r.side} | ${f1(r.wallSeconds)} | ${r.requests.toLocaleString('en-US')} | ${f1(r.importerCpuSeconds)} | ${f1(r.upstreamCpuSeconds)} | ` +
    `${f1(r.importerPeakRssMb)} | ${f1(r.upstreamPeakRssMb)} | ${f1(r.otherCpuSeconds)} | ${loads(r.loadBefore)} → ${loads(r.loadAfter)} |`)
  const first = runs[0]
  const current = runs.filter((r) => r.side === 'current')
  const worst = (pick: (r: ImportRun) => number) => Math.max(...current.map(pick))
  const verdict = current.length === 0
    ? []
    : [`This build: at most ${f1(worst((r) => r.wallSeconds))} s and ${f1(worst((r) => r.importerPeakRssMb))} MB over ${current.length} run${current.length === 1 ? '' : 's'} ` +
        `(target: under 60 s and 250 MB): ${worst((r) => r.wallSeconds) < 60 && worst((r) => r.importerPeakRssMb) < 250 ? 'met' : 'missed'}.`, '']
  return [
    '# Import of a 100,000-client agency (issue 18)',
    '',
    `\`node dist/bench/import.js${s.runs > 1 ? ` --runs ${s.runs}` : ''}${s.concurrency !== undefined ? ` --concurrency ${s.concurrency}` : ''}${s.baseline !== undefined ? ' --baseline DIR' : ''}\`, ` +
      `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, on ${m.cpus} × ${m.cpuModel}, ${m.memoryMb.toLocaleString('en-US')} MB, Node ${m.node}.`,
    '',
    `Upstream: \`agency-sandbox serve\` on 127.0.0.1 over a copy of the seeded database of \`${data.fixtureFile.replace(ROOT + '/', '')}\` ` +
      `(${data.clients.toLocaleString('en-US')} clients, seed ${data.seed}); importer: \`agency-sandbox import\` with its defaults${s.concurrency !== undefined ? ` but --concurrency ${s.concurrency}` : ''}, ` +
      `writing ${first === undefined ? '?' : `${first.clients.toLocaleString('en-US')} clients and ${first.deleted.toLocaleString('en-US')} deleted ones (${f1(first.outputBytes / 1e6)} MB)`}.`,
    '',
    '| Run | Build | Wall (s) | Requests | Importer CPU (s) | Upstream CPU (s) | Importer peak RSS (MB) | Upstream peak RSS (MB) | Other CPU on the machine (s) | Load average before → after |',
    '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
    ...rows,
    '',
    ...verdict,
    'Wall: from the importer\'s spawn to its exit. CPU: user + system; the importer\'s and its peak RSS from',
    'getrusage at its exit, the upstream\'s from /proc while the import ran (its RSS sampled every 100 ms).',
    'Other CPU: what the rest of the machine used meanwhile (2 cores give 2 CPU seconds a second), the',
    'figure that says how much of the wall time other work took.',
    ''
  ].join('\n')
}

async function main (): Promise<void> {
  const s = settingsOf(process.argv.slice(2))
  if (s === null) {
    process.stdout.write(HELP + '\n')
    return
  }
  const log = (line: string) => process.stderr.write(line + '\n')
  const data = await prepareData({ dir: join(ROOT, 'bench', 'data'), clients: s.clients, fresh: false, cli: CLI, log })
  const current: Side = { name: 'current', root: ROOT, cli: CLI }
  const sides: Side[] = [current]
  if (s.baseline !== undefined) {
    const cli = join(s.baseline, 'dist', 'src', 'cli.js')
    if (!existsSync(cli)) throw new Error(`${cli} does not exist: build the baseline checkout first`)
    // named by its folder, so that the report tells which build it was (before-<commit>, say)
    sides.unshift({ name: basename(s.baseline), root: s.baseline, cli })
  }
  // ABBA order, so that a machine getting busier or quieter weighs on both builds alike
  const order: Side[] = []
  for (let i = 0; i < s.runs; i++) order.push(...(i % 2 === 0 ? sides : [...sides].reverse()))
  const runs: ImportRun[] = []
  for (const side of order) {
    log(`run ${runs.length + 1}/${order.length}: ${side.name}`)
    const r = await oneRun(side, data, s)
    log(`  ${f1(r.wallSeconds)} s wall, ${r.requests} requests, importer ${f1(r.importerCpuSeconds)} s CPU / ${f1(r.importerPeakRssMb)} MB, ` +
      `upstream ${f1(r.upstreamCpuSeconds)} s CPU / ${f1(r.upstreamPeakRssMb)} MB, load ${loads(r.loadBefore)} → ${loads(r.loadAfter)}`)
    runs.push(r)
  }
  const report = renderReport(runs, s, data)
  writeFileSync(s.out, report)
  process.stdout.write(report)
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`)
  process.exitCode = 1
})
