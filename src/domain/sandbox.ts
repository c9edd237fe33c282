import type { Db } from '../db/database.js'
import { createStore } from '../db/store.js'
import type { Fixture } from '../fixture/schema.js'
import { createAccess } from './access.js'
import { createClients } from './clients.js'
import { Clock } from './clock.js'
import { loadWorld } from './world.js'

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

  return {
    store,
    clock,
    access,
    clients,
    /** True when this start seeded the database (false: existing data was kept). */
    seededNow,
    offices: (agencyId: number) => store.listOffices(agencyId),
    activeUsers: (agencyId: number) => store.listActiveUsers(agencyId),
    /** Back to the start-up fixture, or to the given one. */
    async reset(next?: Fixture, source = fixtureSource): Promise<void> {
      loadWorld(store, next ?? (await initial()), source, clock.iso())
    },
    counts() {
      return { clients: store.countClients() }
    }
  }
}

export type Sandbox = Awaited<ReturnType<typeof createSandbox>>
