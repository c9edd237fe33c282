import { copyFileSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { generateFixture } from '../src/fixture/generate.js'
import type { Fixture } from '../src/fixture/schema.js'
import { freePort, spawnServer } from './processes.js'

/**
 * The benchmark's data: a generated fixture of one agency, the database the sandbox seeds from it
 * on its first start, and a small manifest of what the scenarios need (live client numbers,
 * policy numbers, a recent asOf), so later runs never parse the fixture again. All three are
 * made once and reused; `fresh` rebuilds them.
 */

export const SEED = 7

/** asOf of the "recent" scenario: this many clients changed after it. */
const RECENT_CHANGES = 10
/** Policy numbers kept for the search scenario. */
const POLICY_SAMPLE = 2000

export interface Manifest {
  seed: number
  clients: number
  agencyId: number
  credentials: { clientId: string; clientSecret: string }
  /** Client numbers of the clients that are not deleted, ascending. */
  liveClientNumbers: number[]
  /** Policy numbers of live clients, spread over the agency. */
  policyNumbers: string[]
  /** An asOf after which only a handful of clients changed, and how many. */
  recent: { asOf: string; changed: number }
}

export interface BenchData extends Manifest {
  fixtureFile: string
  dbFile: string
  dbBytes: number
  fixtureBytes: number
  /** What this run had to build, with the time it took (seconds). */
  built: { fixture?: number; database?: number }
}

export interface DataOptions {
  dir: string
  clients: number
  fresh: boolean
  /** The built sandbox CLI (dist/src/cli.js). */
  cli: string
  log: (line: string) => void
}

function manifestOf (fixture: Fixture): Manifest {
  const agency = fixture.agencies[0]
  const integration = fixture.integrations.find((i) => i.agencies.some((s) => s.agencyId === agency.agencyId))
  if (integration === undefined) throw new Error(`no integration is subscribed to agency ${agency.agencyId}`)
  const live = agency.clients.filter((c) => c.deleted !== true).sort((a, b) => a.clientNumber - b.clientNumber)
  const stride = Math.max(1, Math.floor(live.length / POLICY_SAMPLE))
  const policyNumbers: string[] = []
  for (let i = 0; i < live.length && policyNumbers.length < POLICY_SAMPLE; i += stride) {
    const number = live[i].policies?.[0]?.policyNumber
    if (typeof number === 'string' && number !== '') policyNumbers.push(number)
  }
  const modified = live.map((c) => Date.parse(c.details.modified)).sort((a, b) => b - a)
  const asOfMs = modified[Math.min(RECENT_CHANGES, modified.length - 1)]
  return {
    seed: SEED,
    clients: agency.clients.length,
    agencyId: agency.agencyId,
    credentials: { clientId: integration.clientId, clientSecret: integration.clientSecret },
    liveClientNumbers: live.map((c) => c.clientNumber),
    policyNumbers,
    recent: { asOf: new Date(asOfMs).toISOString(), changed: modified.filter((m) => m > asOfMs).length }
  }
}

function removeDb (file: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true })
}

/** Seeds a new database by starting the sandbox once on an empty file. */
async function seedDatabase (opts: DataOptions, fixtureFile: string, dbFile: string): Promise<void> {
  const building = dbFile + '.building'
  removeDb(building)
  const port = await freePort()
  const sandbox = await spawnServer({
    // the seeding start holds the whole fixture in memory once; the measured starts never do
    args: ['--max-old-space-size=8192', opts.cli, 'serve'],
    env: { PORT: String(port), SANDBOX_DB: building, SANDBOX_FIXTURES: fixtureFile, LOG_LEVEL: 'warn', LOG_PRETTY: 'false' },
    port,
    healthPath: '/_sandbox/health',
    pollMs: 50,
    timeoutMs: 30 * 60_000
  }).catch((e: unknown) => {
    removeDb(building)
    throw e
  })
  const code = await sandbox.stop(120_000)
  if (code !== 0) throw new Error(`the seeding sandbox exited with ${code}:\n${sandbox.output()}`)
  if (existsSync(building + '-wal')) renameSync(building + '-wal', dbFile + '-wal')
  renameSync(building, dbFile)
}

/** Makes (or reuses) the fixture, the seeded database and the manifest in `opts.dir`. */
export async function prepareData (opts: DataOptions): Promise<BenchData> {
  const name = opts.clients % 1000 === 0 ? `${opts.clients / 1000}k` : String(opts.clients)
  const fixtureFile = join(opts.dir, `fixture-${name}.json`)
  const manifestFile = join(opts.dir, `fixture-${name}.manifest.json`)
  const dbFile = join(opts.dir, `bench-${name}.db`)
  const built: BenchData['built'] = {}
  // git leaves the folder out of a fresh clone (its files are generated)
  mkdirSync(opts.dir, { recursive: true })

  if (opts.fresh) {
    for (const f of [fixtureFile, manifestFile]) rmSync(f, { force: true })
    removeDb(dbFile)
  }

  let manifest: Manifest | undefined
  if (!existsSync(fixtureFile)) {
    opts.log(`generating ${fixtureFile}: 1 agency x ${opts.clients} clients (seed ${SEED})`)
    const started = performance.now()
    const fixture = generateFixture({
      agencies: 1,
      clients: opts.clients,
      seed: SEED,
      onProgress: (done, total) => {
        if (done % 20_000 === 0) opts.log(`  ${done}/${total} clients`)
      }
    })
    manifest = manifestOf(fixture)
    writeFileSync(fixtureFile + '.part', JSON.stringify(fixture) + '\n')
    renameSync(fixtureFile + '.part', fixtureFile)
    built.fixture = (performance.now() - started) / 1000
    removeDb(dbFile) // a database seeded from another fixture would not match
  }
  if (manifest === undefined && existsSync(manifestFile)) manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest
  if (manifest === undefined) manifest = manifestOf(JSON.parse(readFileSync(fixtureFile, 'utf8')) as Fixture)
  writeFileSync(manifestFile, JSON.stringify(manifest) + '\n')

  if (!existsSync(dbFile)) {
    opts.log(`seeding ${dbFile} (first start of the sandbox on an empty database)`)
    const started = performance.now()
    await seedDatabase(opts, fixtureFile, dbFile)
    built.database = (performance.now() - started) / 1000
  }

  return {
    ...manifest,
    fixtureFile,
    dbFile,
    dbBytes: statSync(dbFile).size,
    fixtureBytes: statSync(fixtureFile).size,
    built
  }
}

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Copies made by this process: each has a name of its own. */
let copiesMade = 0

/**
 * A copy of the seeded database for one run (`work-<pid>-<n>.db` next to it), so every run starts
 * from the same state; each call makes a copy of its own (the side-by-side comparison serves two,
 * one per server: one file for both would have two processes write to one database). Copies left
 * by runs that were killed are removed.
 */
export function workingCopy (data: BenchData): { file: string; remove: () => void } {
  const dir = dirname(data.dbFile)
  for (const name of readdirSync(dir)) {
    const m = /^work-(\d+)(?:-\d+)?\.db(-wal|-shm)?$/.exec(name)
    if (m !== null && !isRunning(Number(m[1]))) rmSync(join(dir, name), { force: true })
  }
  const file = join(dir, `work-${process.pid}-${++copiesMade}.db`)
  removeDb(file)
  copyFileSync(data.dbFile, file, constants.COPYFILE_FICLONE)
  if (existsSync(data.dbFile + '-wal')) copyFileSync(data.dbFile + '-wal', file + '-wal')
  return { file, remove: () => removeDb(file) }
}
