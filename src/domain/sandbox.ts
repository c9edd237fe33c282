import type { Db } from '../db/database.js'
import { createStore } from '../db/store.js'
import type { Fixture } from '../fixture/schema.js'
import { createAccess } from './access.js'
import { createClients } from './clients.js'
import { Clock } from './clock.js'
import { createClientCreator } from './create-client.js'
import { exportWorld, loadWorld } from './world.js'
import { createAdmin } from './admin.js'
import { Faults } from './faults.js'
import { Journal } from './journal.js'
import { createSimulator } from './simulator.js'
import { createWrites } from './writes.js'
import { badRequest, notFound } from '../errors.js'

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
}

/** The emulated agency world: every rule of the vendor API, no HTTP. */
export async function createSandbox({ db, fixture, fixtureSource, clock = new Clock(), journalSize = 1000, journalBytes }: SandboxOptions) {
  const store = createStore(db)
  let startFixture = typeof fixture === 'function' ? undefined : fixture
  const initial = async () => (startFixture ??= await (fixture as () => Promise<Fixture>)())
  let seededNow = false
  if (store.getMeta('seeded_at') === undefined) {
    loadWorld(store, await initial(), fixtureSource, clock.iso())
    seededNow = true
  }
  const access = createAccess(store)
  const clients = createClients(store)
  const writes = createWrites(store, clock)
  const admin = createAdmin(store, clock)
  const journal = new Journal(journalSize, journalBytes)
  const faults = new Faults()
  const simulator = createSimulator(store, clock, async (seed) => {
    const { createFaker, generateClient } = await import('../fixture/generate.js')
    return { faker: createFaker(seed), generateClient }
  })
  let source = fixtureSource
  const creator = createClientCreator(store, clock)

  /**
   * Changes an agency's flags in one transaction; reconnecting applies its pending writes
   * (in arrival order) before answering.
   */
  function patchAgency(agencyId: number, patch: AgencyPatch) {
    const agency = store.getAgency(agencyId)
    if (agency === undefined) throw notFound(`No agency ${agencyId}; GET /_sandbox/state lists the agencies`)
    if (patch.defaultOfficeId !== undefined && !store.listOffices(agencyId).some((o) => o.officeId === patch.defaultOfficeId)) {
      throw badRequest(`defaultOfficeId: office ${patch.defaultOfficeId} is not an office of agency ${agencyId}`, [
        { field: 'defaultOfficeId', message: `office ${patch.defaultOfficeId} is not an office of agency ${agencyId}` }
      ])
    }
    return store.transaction(() => {
      for (const flag of ['active', 'connected', 'supportsIncludes'] as const) {
        if (patch[flag] !== undefined) store.setAgencyFlag(agencyId, flag, patch[flag])
      }
      if (patch.defaultOfficeId !== undefined) store.setDefaultOffice(agencyId, patch.defaultOfficeId)
      const applied = patch.connected === true ? writes.applyPending(agencyId) : 0
      return { agency: store.getAgency(agencyId)!, applied }
    })
  }

  return {
    store,
    clock,
    access,
    clients,
    writes,
    creator,
    admin,
    journal,
    faults,
    simulator,
    patchAgency,
    /** True when this start seeded the database (false: existing data was kept). */
    seededNow,
    offices: (agencyId: number) => store.listOffices(agencyId),
    activeUsers: (agencyId: number) => store.listActiveUsers(agencyId),
    /** Back to the start-up fixture, or to the given one; the journal and fault rules are kept. */
    async reset(next?: Fixture, nextSource = fixtureSource): Promise<void> {
      loadWorld(store, next ?? (await initial()), nextSource, clock.iso())
      source = nextSource
    },
    state: () => exportWorld(store),
    get source() {
      return source
    },
    counts() {
      return {
        integrations: store.countIntegrations(), agencies: store.countAgencies(), clients: store.countClients(),
        writes: store.countWrites(), journal: journal.size, faults: faults.list().length
      }
    }
  }
}

export type Sandbox = Awaited<ReturnType<typeof createSandbox>>
