import type { Db } from '../db/database.js'
import { createRepositories, UnitOfWork, type Repositories } from '../db/index.js'
import type { Fixture } from '../fixture/schema.js'
import type { FixtureStamp } from '../fixture/stamp.js'
import { createReadModel, type ReadModelOptions } from '../read-model/index.js'
import { createSessionRepository } from '../db/sessions.js'
import { createExaminer } from './examiner/sessions.js'
import { createAccess } from './access.js'
import { createClients } from './clients.js'
import { Clock } from './clock.js'
import { CREATE_CLIENT_RATE, createClientCreator } from './create-client.js'
import { SlidingWindow } from './sliding-window.js'
import { exportWorld, loadWorld } from './world.js'
import { createAdmin } from './admin.js'
import { Faults } from './faults.js'
import { Journal } from './journal.js'
import { createSimulator } from './simulator.js'
import { createWrites } from './writes.js'
import { badRequest, notFound } from '../errors.js'

/** Parts of the sandbox a reset can keep as they are. */
export const RESET_PARTS = ['data', 'journal', 'faults', 'clock', 'simulator', 'rateWindows'] as const
export type ResetPart = typeof RESET_PARTS[number]

export interface AgencyPatch {
  connected?: boolean
  active?: boolean
  supportsIncludes?: boolean
  defaultOfficeId?: number
}

export interface SandboxOptions {
  db: Db
  /**
   * The start-up fixture: seeds an empty database and is what `reset` returns to. Loaded only
   * when needed, so a start over an existing database does not read it.
   */
  fixture: Fixture | (() => Promise<Fixture>)
  fixtureSource: string
  /**
   * Identifies the start-up fixture file's content, so the database remembers what seeded it and
   * a start over data seeded from another fixture can say so (absent: a fixture given in memory).
   */
  fixtureFile?: { quick(): string | undefined; stamp(): FixtureStamp }
  /** Seed from the start-up fixture even over existing data (`--reset-on-start`). */
  reseed?: boolean
  clock?: Clock
  /** Entries the request journal keeps (oldest dropped). */
  journalSize?: number
  /** Bytes the request journal may hold (oldest dropped). */
  journalBytes?: number
  /** How much the read model keeps in memory. */
  readModel?: ReadModelOptions
}

/** The emulated agency world: every rule of the vendor API, no HTTP. */
export async function createSandbox (options: SandboxOptions) {
  const { db, fixture, fixtureSource, fixtureFile, clock = new Clock(), journalSize = 1000, journalBytes, readModel } = options
  const sql = new UnitOfWork(db)
  const repos = createRepositories(sql)
  const reads = createReadModel(repos, repos.changes, readModel)
  let startFixture = typeof fixture === 'function' ? undefined : fixture
  // stamped when the file is read, so that it describes the content loaded, not a later edit
  let startStamp: FixtureStamp | undefined
  const initial = async () => {
    if (startFixture === undefined) {
      startStamp = fixtureFile?.stamp()
      startFixture = await (fixture as () => Promise<Fixture>)()
    }
    return startFixture
  }
  const seedFromStart = async () => {
    const start = await initial()
    loadWorld(repos, start, fixtureSource, clock.iso(), startStamp)
  }
  const seededNow = options.reseed === true || repos.meta.get('seeded_at') === undefined
  if (seededNow) await seedFromStart()
  const fixtureMismatch = seededNow || fixtureFile === undefined ? undefined : seededFromOtherFixture(repos.meta, fixtureSource, fixtureFile)
  const access = createAccess(reads)
  const clients = createClients(reads)
  const writes = createWrites(repos, clock)
  const admin = createAdmin(repos, clock)
  const journal = new Journal(journalSize, journalBytes)
  const faults = new Faults()
  // Examiner sessions are not part of the world: reset and fixtures leave them alone.
  const examiner = createExaminer({ repo: createSessionRepository(sql), clock })
  const simulator = createSimulator(repos, clock, async (seed) => {
    const { createFaker, generateClient } = await import('../fixture/generate.js')
    return { faker: createFaker(seed), generateClient }
  })
  let source = fixtureSource
  const createBudget = new SlidingWindow(CREATE_CLIENT_RATE.max, CREATE_CLIENT_RATE.windowMs)
  const creator = createClientCreator(repos, clock, createBudget)

  /**
   * Changes an agency's flags in one transaction; reconnecting applies its pending writes
   * (in arrival order) before answering.
   */
  function patchAgency (agencyId: number, patch: AgencyPatch) {
    const agency = repos.agencies.getAgency(agencyId)
    if (agency === undefined) throw notFound(`No agency ${agencyId}; GET /_sandbox/state lists the agencies`)
    if (patch.defaultOfficeId !== undefined && !repos.agencies.listOffices(agencyId).some((o) => o.officeId === patch.defaultOfficeId)) {
      throw badRequest(`defaultOfficeId: office ${patch.defaultOfficeId} is not an office of agency ${agencyId}`, [
        { field: 'defaultOfficeId', message: `office ${patch.defaultOfficeId} is not an office of agency ${agencyId}` }
      ])
    }
    if (patch.defaultOfficeId !== undefined && repos.agencies.listOffices(agencyId).some((o) => o.officeId === patch.defaultOfficeId && o.archived)) {
      const message = `office ${patch.defaultOfficeId} is archived and cannot receive new clients; choose an office that is not archived`
      throw badRequest(`defaultOfficeId: ${message}`, [{ field: 'defaultOfficeId', message }])
    }
    return repos.transaction(() => {
      for (const flag of ['active', 'connected', 'supportsIncludes'] as const) {
        if (patch[flag] !== undefined) repos.agencies.setAgencyFlag(agencyId, flag, patch[flag])
      }
      if (patch.defaultOfficeId !== undefined) repos.agencies.setDefaultOffice(agencyId, patch.defaultOfficeId)
      const applied = patch.connected === true ? writes.applyPending(agencyId) : 0
      return { agency: repos.agencies.getAgency(agencyId)!, applied }
    })
  }

  return {
    clock,
    access,
    clients,
    writes,
    creator,
    admin,
    journal,
    faults,
    examiner,
    simulator,
    patchAgency,
    /** True when this start seeded the database (false: existing data was kept). */
    seededNow,
    /** Set when the kept data was seeded from another fixture than the start-up one: what to tell the user. */
    fixtureMismatch,
    offices: (agencyId: number) => repos.agencies.listOffices(agencyId),
    activeUsers: (agencyId: number) => repos.agencies.listActiveUsers(agencyId),
    /**
     * A clean slate: the simulator stops, the clock runs in real time again, the data returns to
     * the start-up fixture (or the given one) with its pending writes, and the journal, fault
     * rules and create-client rate windows are emptied; `keep` names the parts to leave alone.
     * Examiner sessions are records of test runs, not part of the world, and stay.
     */
    async reset (next?: Fixture, nextSource = fixtureSource, keep: readonly ResetPart[] = []): Promise<void> {
      const keeps = (part: ResetPart) => keep.includes(part)
      if (!keeps('simulator')) simulator.stop()
      if (!keeps('clock')) clock.reset()
      if (!keeps('data')) {
        if (next === undefined) await seedFromStart()
        else loadWorld(repos, next, nextSource, clock.iso())
        source = nextSource
      }
      if (!keeps('journal')) journal.clear()
      if (!keeps('faults')) faults.clear()
      if (!keeps('rateWindows')) createBudget.clear()
    },
    state: () => exportWorld(repos),
    get source () {
      return source
    },
    counts () {
      return {
        integrations: repos.access.countIntegrations(),
        agencies: repos.agencies.countAgencies(),
        clients: repos.clients.countClients(),
        writes: repos.writes.countWrites(),
        journal: journal.size,
        faults: faults.list().length
      }
    }
  }
}

export type Sandbox = Awaited<ReturnType<typeof createSandbox>>

/**
 * Compares what seeded the database with the start-up fixture file: undefined when they are the
 * same content (an untouched file is recognised by its size and time, without reading it), else
 * the warning to print. A database seeded before stamps were recorded, from the same path, adopts
 * the file's stamp.
 */
function seededFromOtherFixture (
  meta: Repositories['meta'],
  fixtureSource: string,
  fixtureFile: NonNullable<SandboxOptions['fixtureFile']>
): string | undefined {
  const quick = fixtureFile.quick()
  if (quick !== undefined && quick === meta.get('seeded_quick')) return undefined
  const from = meta.get('seeded_from') ?? '(unknown)'
  const recorded = meta.get('seeded_sha256')
  const fix = 'The existing data is kept: start with --reset-on-start (SANDBOX_RESET_ON_START=true) or POST /_sandbox/reset to seed from the fixture.'
  let stamp: FixtureStamp
  try {
    stamp = fixtureFile.stamp()
  } catch (e) {
    return `the fixture ${fixtureSource} cannot be read (${(e as Error).message}); the database holds data seeded from ${from}. A reset will fail until the file is there.`
  }
  if (stamp.sha256 === recorded || (recorded === undefined && from === fixtureSource)) {
    meta.set('seeded_sha256', stamp.sha256)
    meta.set('seeded_quick', stamp.quick)
    return undefined
  }
  if (recorded === '' || recorded === undefined) {
    return `the database holds data from ${from}, not from the fixture ${fixtureSource}. ${fix}`
  }
  return `the database was seeded from ${from} (sha256 ${recorded.slice(0, 12)}…), but the fixture ${fixtureSource} has other content (sha256 ${stamp.sha256.slice(0, 12)}…). ${fix}`
}
