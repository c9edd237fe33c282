import type { ClientRow } from '../db/index.js'
import { EncodedJson, type ReadModel } from '../read-model/index.js'
import { badRequest, clientNotFound, invalidField } from '../errors.js'
import type { ClientGroup } from '../schemas/client.js'
import { parseTimestamp } from '../time.js'

export const MAX_BATCH = 200

export interface ChangedQuery {
  asOf?: string
  officeId?: number
  deleted?: boolean
}

/** A version's own shape of a client, made from the stored one (absent: the stored 4.0 JSON is the answer). */
export type ClientConversion = (client: Readonly<ClientRow>) => Record<string, unknown>

const encode = (value: unknown) => new EncodedJson(JSON.stringify(value))

type ClientReads = Pick<ReadModel, 'changedIdsJson' | 'liveClient' | 'clientJson' | 'liveClients' | 'batchJson' | 'policyHolders' | 'searchJson'>

/** Client reads: the rules (asOf, batch size, 404) over the read model's answers. */
export function createClients (reads: ClientReads) {
  return {
    /**
     * Ids of the clients changed since `asOf` (all when absent), ascending, as JSON. Changed
     * means details.modified > asOf. `deleted=true` lists only deleted clients; otherwise they are left out.
     */
    changedIdsJson (agencyId: number, q: ChangedQuery): EncodedJson {
      let sinceMs: number | null = null
      if (q.asOf !== undefined) {
        sinceMs = parseTimestamp(q.asOf)
        if (sinceMs === null) throw invalidField('asOf', `'${q.asOf}' is not an ISO 8601 date-time such as 2024-10-08T14:30:00Z`)
      }
      return reads.changedIdsJson(agencyId, { deleted: q.deleted === true, officeId: q.officeId ?? null, sinceMs })
    },

    /** A live client; deleted and unknown clients are 404. */
    get (agencyId: number, clientNumber: number): Readonly<ClientRow> {
      const row = reads.liveClient(agencyId, clientNumber)
      if (row === undefined) throw clientNotFound(clientNumber)
      return row
    },

    /** get() as the 3.0/4.0 JSON object with `groups` in that order. */
    clientJson (agencyId: number, clientNumber: number, groups: readonly ClientGroup[]): EncodedJson {
      const json = reads.clientJson(agencyId, clientNumber, groups)
      if (json === undefined) throw clientNotFound(clientNumber)
      return json
    },

    /** Live clients among `numbers`, in request order, each once; unknown and deleted are left out. */
    batch (agencyId: number, numbers: number[]): ClientRow[] {
      checkBatch(numbers)
      return reads.liveClients(agencyId, distinct(numbers))
    },

    /** What batch() finds, as the JSON array a 3.0/4.0 batch read answers (`groups` in that order). */
    batchJson (agencyId: number, numbers: number[], groups: readonly ClientGroup[]): EncodedJson {
      checkBatch(numbers)
      return reads.batchJson(agencyId, distinct(numbers), groups)
    },

    /** Live clients with a policy of exactly this number, ascending. */
    searchByPolicyNumber (agencyId: number, policyNumber: string): readonly Readonly<ClientRow>[] {
      return reads.policyHolders(agencyId, policyNumber)
    },

    /** One client's answer: the stored 4.0 JSON with these groups, or the version's conversion of it (404 when unknown or deleted). */
    one (agencyId: number, clientNumber: number, groups: readonly ClientGroup[], convert?: ClientConversion): EncodedJson {
      return convert === undefined ? this.clientJson(agencyId, clientNumber, groups) : encode(convert(this.get(agencyId, clientNumber)))
    },

    /** A batch read's answer, stored or converted. */
    many (agencyId: number, numbers: number[], groups: readonly ClientGroup[], convert?: ClientConversion): EncodedJson {
      return convert === undefined ? this.batchJson(agencyId, numbers, groups) : encode(this.batch(agencyId, numbers).map(convert))
    },

    /** A policy-number search's answer, stored or converted. */
    search (agencyId: number, policyNumber: string, groups: readonly ClientGroup[], convert?: ClientConversion): EncodedJson {
      return convert === undefined ? this.searchJson(agencyId, policyNumber, groups) : encode(this.searchByPolicyNumber(agencyId, policyNumber).map(convert))
    },

    /** searchByPolicyNumber() as the JSON array a 3.0/4.0 search answers. */
    searchJson (agencyId: number, policyNumber: string, groups: readonly ClientGroup[]): EncodedJson {
      return reads.searchJson(agencyId, policyNumber, groups)
    }
  }
}

/** A batch read takes at most MAX_BATCH numbers (a 400 naming the count and the fix). */
export function checkBatchSize (count: number): void {
  if (count > MAX_BATCH) {
    throw badRequest(`at most ${MAX_BATCH} client numbers per request; split the ${count} numbers into batches of ${MAX_BATCH}`, [
      { field: 'clientNumbers', message: `at most ${MAX_BATCH} client numbers per request, got ${count}` }
    ])
  }
}

const checkBatch = (numbers: number[]) => checkBatchSize(numbers.length)

/**
 * The numbers once each, in their order. A list in ascending order, as a sync that batches the
 * changed-ids listing sends it, is distinct as it is: one comparison a number instead of a Set
 * (the Set of 200 was about 3% of a batch read whose clients are kept).
 */
function distinct (numbers: readonly number[]): readonly number[] {
  for (let i = 1; i < numbers.length; i++) if (!(numbers[i] > numbers[i - 1])) return [...new Set(numbers)]
  return numbers
}

export type Clients = ReturnType<typeof createClients>
