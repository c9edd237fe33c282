import type { Db } from '../db/database.js'
import { createStore } from '../db/store.js'
import type { Fixture } from '../fixture/schema.js'
import { createAccess } from './access.js'
import { createClients } from './clients.js'
import { Clock } from './clock.js'
import { createClientCreator } from './create-client.js'
import { loadWorld } from './world.js'
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
}

/** The emulated agency world: every rule of the vendor API, no HTTP. */
export async function createSandbox({ db, fixture, fixtureSource, clock = new Clock() }: SandboxOptions) {
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
    patchAgency,
    /** True when this start seeded the database (false: existing data was kept). */
    seededNow,
    offices: (agencyId: number) => store.listOffices(agencyId),
    activeUsers: (agencyId: number) => store.listActiveUsers(agencyId),
    /** Back to the start-up fixture, or to the given one. */
    async reset(next?: Fixture, source = fixtureSource): Promise<void> {
      loadWorld(store, next ?? (await initial()), source, clock.iso())
    },
    counts() {
      return { clients: store.countClients(), writes: store.countWrites() }
    }
  }
}

export type Sandbox = Awaited<ReturnType<typeof createSandbox>>
