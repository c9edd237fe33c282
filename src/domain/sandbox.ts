import type { Db } from '../db/database.js'
import { createRepositories, UnitOfWork } from '../db/index.js'
import type { Fixture } from '../fixture/schema.js'
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
  clock?: Clock
  /** Entries the request journal keeps (oldest dropped). */
  journalSize?: number
  /** Bytes the request journal may hold (oldest dropped). */
  journalBytes?: number
  /** How much the read model keeps in memory. */
  readModel?: ReadModelOptions
}

/** The emulated agency world: every rule of the vendor API, no HTTP. */
export async function createSandbox ({ db, fixture, fixtureSource, clock = new Clock(), journalSize = 1000, journalBytes, readModel }: SandboxOptions) {
  const sql = new UnitOfWork(db)
  const repos = createRepositories(sql)
  const reads = createReadModel(repos, repos.changes, readModel)
  let startFixture = typeof fixture === 'function' ? undefined : fixture
  const initial = async () => (startFixture ??= await (fixture as () => Promise<Fixture>)())
  let seededNow = false
  if (repos.meta.get('seeded_at') === undefined) {
    loadWorld(repos, await initial(), fixtureSource, clock.iso())
    seededNow = true
  }
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
        loadWorld(repos, next ?? (await initial()), nextSource, clock.iso())
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
