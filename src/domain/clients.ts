import type { ClientRow, GroupColumn, Store } from '../db/store.js'
import { badRequest, clientNotFound, invalidField } from '../errors.js'
import { parseTimestamp } from './time.js'

export const MAX_BATCH = 200

export interface ChangedQuery {
  asOf?: string
  officeId?: number
  deleted?: boolean
}

export function createClients(store: Store) {
  /** Full id listings (no asOf) as JSON, kept until any client or agency changes. */
  const listings = new Map<string, string>()
  let listingsGeneration = -1

  return {
    /** changedIds as JSON text; the full listing (100,000 ids in a big agency) is cached. */
    changedIdsJson(agencyId: number, q: ChangedQuery): string {
      if (q.asOf !== undefined) return JSON.stringify(this.changedIds(agencyId, q))
      if (listingsGeneration !== store.generation()) {
        listings.clear()
        listingsGeneration = store.generation()
      }
      const key = `${agencyId}|${q.deleted === true ? 1 : 0}|${q.officeId ?? ''}`
      let json = listings.get(key)
      if (json === undefined) {
        if (listings.size >= 1000) listings.clear()
        json = JSON.stringify(this.changedIds(agencyId, q))
        listings.set(key, json)
      }
      return json
    },

    /**
     * Ids of the clients changed since `asOf` (all when absent), ascending. Changed means
     * details.modified > asOf. `deleted=true` lists only deleted clients; otherwise they are left out.
     */
    changedIds(agencyId: number, q: ChangedQuery): number[] {
      let sinceMs: number | null = null
      if (q.asOf !== undefined) {
        sinceMs = parseTimestamp(q.asOf)
        if (sinceMs === null) throw invalidField('asOf', `'${q.asOf}' is not an ISO 8601 date-time such as 2024-10-08T14:30:00Z`)
      }
      return store.clientIds(agencyId, { deleted: q.deleted === true, officeId: q.officeId ?? null, sinceMs })
    },

    /** A live client; deleted and unknown clients are 404. */
    get(agencyId: number, clientNumber: number): ClientRow {
      const row = store.getClient(agencyId, clientNumber)
      if (row === undefined || row.deleted) throw clientNotFound(clientNumber)
      return row
    },

    /** Live clients among `numbers`, in request order, each once; unknown and deleted are left out. */
    batch(agencyId: number, numbers: number[], groups?: readonly GroupColumn[]): ClientRow[] {
      if (numbers.length > MAX_BATCH) {
        throw badRequest(`at most ${MAX_BATCH} client numbers per request; split the ${numbers.length} numbers into batches of ${MAX_BATCH}`, [
          { field: 'clientNumbers', message: `at most ${MAX_BATCH} client numbers per request, got ${numbers.length}` }
        ])
      }
      if (numbers.length === 0) return []
      const unique = [...new Set(numbers)]
      const rows = new Map(store.getClientsIn(agencyId, unique, groups).map((r) => [r.clientNumber, r]))
      return unique.flatMap((n) => rows.get(n) ?? [])
    },

    /** Live clients with a policy of exactly this number, ascending. */
    searchByPolicyNumber(agencyId: number, policyNumber: string): ClientRow[] {
      return store.searchByPolicyNumber(agencyId, policyNumber)
    }
  }
}

export type Clients = ReturnType<typeof createClients>
