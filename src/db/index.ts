import { createAccessRepository, type AccessRepository } from './access.js'
import { createAgencyRepository, type AgencyRepository } from './agencies.js'
import { createClientRepository, type ClientRepository } from './clients.js'
import type { ChangeSignal, UnitOfWork } from './unit-of-work.js'
import { createStaging, type Staging } from './staging.js'
import { createWriteRepository, type WriteRepository } from './writes.js'

export type { AccessRepository, IntegrationRow, SubscriptionRow } from './access.js'
export type { AgencyFlag, AgencyRepository, AgencyRow, OfficeRow, UserRow } from './agencies.js'
export type { ClientIdsQuery, ClientRepository, ClientRow, ConcatPiece, GroupColumn, PolicyKey } from './clients.js'
export { UnitOfWork, type CapturedStep, type ChangeSignal, type Command, type Query } from './unit-of-work.js'
export type { WriteFilter, WriteKind, WriteRepository, WriteRow, WriteStatus } from './writes.js'

/** Every table of the world, children first (the order rows are deleted in). */
const WORLD_TABLES = [
  'attachment_content', 'writes', 'policies', 'clients', 'users', 'offices', 'subscriptions', 'agencies', 'integrations'
] as const

/** The sandbox's storage: one repository per resource, and the one way to write (`transaction`). */
export interface Repositories {
  access: AccessRepository
  agencies: AgencyRepository
  clients: ClientRepository
  writes: WriteRepository
  meta: {
    get(key: string): string | undefined
    set(key: string, value: string): void
  }
  /** Deletes every row of the world (not the schema). */
  clearWorld(): void
  /** Clients staged in the connection's temporary tables, to replace a world's data in a short transaction. */
  staging: Staging
  /** Runs `fn` in one transaction (nested calls join it); see UnitOfWork. */
  transaction<T>(fn: () => T): T
  /** Signals each commit, for the read model. */
  changes: ChangeSignal
}

/** The repositories over one database; every statement comes from `sql`, so every write signals through it. */
export function createRepositories (sql: UnitOfWork): Repositories {
  const getMeta = sql.query<[string], { value: string }>('SELECT value FROM meta WHERE key = ?')
  const setMeta = sql.command<[string, string]>(
    'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value'
  )
  const clear = WORLD_TABLES.map((table) => sql.command<[]>(`DELETE FROM ${table}`))
  return {
    access: createAccessRepository(sql),
    agencies: createAgencyRepository(sql),
    clients: createClientRepository(sql),
    writes: createWriteRepository(sql),
    meta: {
      get: (key) => getMeta.get(key)?.value,
      set: (key, value) => { setMeta.run(key, value) }
    },
    clearWorld: () => sql.transaction(() => clear.forEach((statement) => statement.run())),
    staging: createStaging(sql),
    transaction: (fn) => sql.transaction(fn),
    changes: sql
  }
}
