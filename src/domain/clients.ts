import { UntilChange, type ClientRow, type GroupColumn, type Store } from '../db/store.js'
import { badRequest, clientNotFound, invalidField } from '../errors.js'
import { parseTimestamp } from '../time.js'

export const MAX_BATCH = 200
/** Memory the cached full listings may take. */
const MAX_LISTING_BYTES = 16 * 1024 * 1024

export interface ChangedQuery {
  asOf?: string
  officeId?: number
  deleted?: boolean
}

export function createClients(store: Store) {
  /**
   * Full id listings (no asOf) as UTF-8 JSON, kept until any client or agency changes; bounded
   * by size, so office and deleted variants of many big agencies start it over.
   */
  const listings = new UntilChange<string, Buffer>(store, MAX_LISTING_BYTES, (json) => json.length)

  return {
    /**
     * changedIds as JSON; the full listing (100,000 ids, 600 kB, in a big agency) is cached as
     * the bytes sent, so repeating it costs no encoding.
     */
    changedIdsJson(agencyId: number, q: ChangedQuery): string | Buffer {
      if (q.asOf !== undefined) return JSON.stringify(this.changedIds(agencyId, q))
      const key = `${agencyId}|${q.deleted === true ? 1 : 0}|${q.officeId ?? ''}`
      return listings.get(key) ?? listings.set(key, Buffer.from(JSON.stringify(this.changedIds(agencyId, q))))
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
    batch(agencyId: number, numbers: number[]): ClientRow[] {
      checkBatch(numbers)
      if (numbers.length === 0) return []
      const unique = [...new Set(numbers)]
      const rows = new Map(store.getClientsIn(agencyId, unique).map((r) => [r.clientNumber, r]))
      return unique.flatMap((n) => rows.get(n) ?? [])
    },

    /**
     * What batch() finds, as the JSON array a 3.0/4.0 batch read answers (each client
     * `{"clientNumber":N,…}` with `groups` in that order), in UTF-8.
     */
    batchJson(agencyId: number, numbers: number[], groups: readonly GroupColumn[]): Buffer {
      checkBatch(numbers)
      return store.clientsJsonIn(agencyId, [...new Set(numbers)], groups)
    },

    /** Gives back an answer of batchJson once it has been sent, for a later answer to reuse. */
    recycle(answer: Buffer): void {
      store.recycleAnswer(answer)
    },

    /** Live clients with a policy of exactly this number, ascending. */
    searchByPolicyNumber(agencyId: number, policyNumber: string): ClientRow[] {
      return store.searchByPolicyNumber(agencyId, policyNumber)
    }
  }
}

/** A batch read takes at most MAX_BATCH numbers. */
function checkBatch(numbers: number[]): void {
  if (numbers.length > MAX_BATCH) {
    throw badRequest(`at most ${MAX_BATCH} client numbers per request; split the ${numbers.length} numbers into batches of ${MAX_BATCH}`, [
      { field: 'clientNumbers', message: `at most ${MAX_BATCH} client numbers per request, got ${numbers.length}` }
    ])
  }
}

export type Clients = ReturnType<typeof createClients>
