import type { Db } from '../../db/database.js'
import { createRepositories, UnitOfWork, type AgencyRow, type IntegrationRow, type OfficeRow, type Repositories, type UserRow } from '../../db/index.js'
import type { ClientVersion } from '../../db/clients.js'
import type { Fixture } from '../../fixture/schema.js'
import { badRequest, notFound } from '../../errors.js'
import { createReadModel, type ReadModelOptions } from '../../read-model/index.js'
import { createAccess } from '../access.js'
import { createAdmin } from '../admin.js'
import { createClients } from '../clients.js'
import type { Clock } from '../clock.js'
import { createClientCreator } from '../create-client.js'
import type { SlidingWindow } from '../sliding-window.js'
import { exportWorld } from '../world.js'
import { createWrites } from '../writes.js'

/** Clients read per turn of the event loop for the examiner (about 10 ms). */
const CLIENT_VERSIONS_PAGE = 20_000

export interface AgencyPatch {
  connected?: boolean
  active?: boolean
  supportsIncludes?: boolean
  defaultOfficeId?: number
}

/**
 * A world's data and the rules over it: one database, its repositories and read model, and the
 * domain services partner requests and the control plane call. Rebuilt whole when a world in
 * memory returns to its starting point (a fresh copy of its database), so nothing of it is kept
 * anywhere else: the world hands out these services, never copies of them.
 */
export interface WorldDataOptions {
  clock: Clock
  createBudget: SlidingWindow
  readModel?: ReadModelOptions
  /** The Client Id an integration gets in this world (see worlds/world-ids.ts). */
  clientIdOf?: (clientId: string) => string
  /** The Client Secret an integration gets with its Client Id in this world (absent: it keeps the one it came with). */
  secretOf?: (clientId: string) => string
  /** Throws (a 507) when the world cannot grow by this many bytes: asked before a large content is written. */
  room?: (bytes: number) => void
}

/**
 * Bytes a database takes: its pages in use (page_count × page_size), what a database in memory
 * holds, uncommitted pages of the open transaction included; a prepared statement, a few
 * microseconds, so it may be asked after every commit.
 */
export function bytesOf (db: Db): () => number {
  return pagesOf(db, 'page_count')
}

/** Bytes of a database's free pages (its free list), which a write fills before the database grows. */
const freeBytesOf = (db: Db): () => number => pagesOf(db, 'freelist_count')

function pagesOf (db: Db, pragma: 'page_count' | 'freelist_count'): () => number {
  const pages = db.prepare(`PRAGMA ${pragma}`).pluck()
  const pageSize = db.pragma('page_size', { simple: true }) as number
  return () => (pages.get() as number) * pageSize
}

export function openWorldData (db: Db, { clock, createBudget, readModel, clientIdOf, secretOf, room }: WorldDataOptions): WorldData {
  const sql = new UnitOfWork(db)
  const repos = createRepositories(sql)
  const reads = createReadModel(repos, repos.changes, readModel)
  const writes = createWrites(repos, clock, room)

  /**
   * Changes an agency's flags in one transaction; reconnecting applies its pending writes
   * (in arrival order) before answering.
   */
  function patchAgency (agencyId: number, patch: AgencyPatch) {
    const agency = repos.agencies.getAgency(agencyId)
    if (agency === undefined) throw notFound(`No agency ${agencyId}; GET /_sandbox/state lists the agencies`)
    if (patch.defaultOfficeId !== undefined) {
      const office = repos.agencies.listOffices(agencyId).find((o) => o.officeId === patch.defaultOfficeId)
      const message = office === undefined
        ? `office ${patch.defaultOfficeId} is not an office of agency ${agencyId}`
        : office.archived ? `office ${patch.defaultOfficeId} is archived and cannot receive new clients; choose an office that is not archived` : undefined
      if (message !== undefined) throw badRequest(`defaultOfficeId: ${message}`, [{ field: 'defaultOfficeId', message }])
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
    db,
    sql,
    repos,
    access: createAccess(reads),
    clients: createClients(reads),
    writes,
    admin: createAdmin(repos, clock, clientIdOf),
    creator: createClientCreator(repos, clock, createBudget),
    patchAgency,
    /** The integrations with their secrets (for whoever created the world, and the state export). */
    integrations: () => repos.access.listIntegrations(),
    offices: (agencyId: number) => repos.agencies.listOffices(agencyId),
    activeUsers: (agencyId: number) => repos.agencies.listActiveUsers(agencyId),
    state: () => exportWorld(repos),
    /**
     * Gives every integration the Client Id it has in this world, and with it the world's secret,
     * after a fixture or a snapshot is loaded (one already named so keeps its secret: it was given
     * then, or chosen by whoever added it to the world).
     */
    adoptIntegrations () {
      if (clientIdOf === undefined) return
      repos.transaction(() => {
        for (const { clientId } of repos.access.listIntegrations()) {
          const own = clientIdOf(clientId)
          if (own === clientId) continue
          repos.access.renameIntegration(clientId, own)
          if (secretOf !== undefined) repos.access.setSecret(own, secretOf(own))
        }
      })
    },
    /**
     * Every client of an agency, deleted ones too, with its latest change (the truth the examiner
     * compares with), read in pages that let other requests run between them.
     */
    async clientVersions (agencyId: number) {
      const all: ClientVersion[] = []
      for (;;) {
        const page = repos.clients.clientVersions(agencyId, all.at(-1)?.clientNumber ?? 0, CLIENT_VERSIONS_PAGE)
        all.push(...page)
        if (page.length < CLIENT_VERSIONS_PAGE) return all
        await new Promise((resolve) => setImmediate(resolve))
      }
    },
    /** Bytes the database takes (pages in use), for the worlds' memory bounds. */
    bytes: bytesOf(db),
    freeBytes: freeBytesOf(db),
    counts: () => ({
      integrations: repos.access.countIntegrations(),
      agencies: repos.agencies.countAgencies(),
      clients: repos.clients.countClients(),
      writes: repos.writes.countWrites()
    })
  }
}

export interface WorldData {
  db: Db
  sql: UnitOfWork
  repos: Repositories
  access: ReturnType<typeof createAccess>
  clients: ReturnType<typeof createClients>
  writes: ReturnType<typeof createWrites>
  admin: ReturnType<typeof createAdmin>
  creator: ReturnType<typeof createClientCreator>
  patchAgency: (agencyId: number, patch: AgencyPatch) => { agency: AgencyRow, applied: number }
  integrations: () => IntegrationRow[]
  offices: (agencyId: number) => OfficeRow[]
  activeUsers: (agencyId: number) => UserRow[]
  state: () => Fixture
  adoptIntegrations: () => void
  clientVersions: (agencyId: number) => Promise<ClientVersion[]>
  bytes: () => number
  freeBytes: () => number
  counts: () => { integrations: number, agencies: number, clients: number, writes: ReturnType<Repositories['writes']['countWrites']> }
}
