import type { ClientIdsQuery, ClientRepository, ClientRow, ConcatPiece } from '../db/index.js'
import type { ClientGroup } from '../schemas/client.js'
import { BatchAnswers } from './batch-answers.js'
import { PairCache } from './bounded-cache.js'
import { clientJson, clientJsonPieces, clientsJson } from './client-json.js'
import { EncodedJson } from './encoded.js'
import { ListingCache } from './listing-cache.js'

export type ClientSources = Pick<
  ClientRepository, 'clientIds' | 'getClient' | 'liveClientsIn' | 'concatLiveClientsIn' | 'searchByPolicyNumber'
>

/** Clients kept in memory, and policy-number searches kept; past this many of each, that cache starts over. */
const CLIENT_CACHE_ENTRIES = 2048
/** Memory the changed-clients listings may take, unless the world says less. */
const LISTING_CACHE_BYTES = 16 * 1024 * 1024
/** A client kept, or a search's result kept: what an answer kept as bytes is kept by. */
type Kept = Readonly<ClientRow> | readonly Readonly<ClientRow>[]

/** Memory the one-client and search answers kept as bytes may take (about 1,200 clients of 3 kB), unless the world says less. */
const ANSWER_CACHE_BYTES = 4 * 1024 * 1024

/**
 * Client reads: the clients and searches a partner reads again, and the changed-clients listings
 * as the bytes sent (100,000 ids are 600 kB: repeating one costs no encoding).
 */
export function createClientReads (sources: ClientSources, budgets: { batchCacheBytes?: number, listingCacheBytes?: number, answerCacheBytes?: number } = {}) {
  /** Rows by agency and number (null: no such client); frozen, as every reader shares them. */
  const rows = new PairCache<number, Readonly<ClientRow> | null>(CLIENT_CACHE_ENTRIES)
  /** Search results by agency and policy number, frozen too: a write to one client drops its agency's, however many. */
  const searches = new PairCache<string, readonly Readonly<ClientRow>[]>(CLIENT_CACHE_ENTRIES)
  const listings = new ListingCache(budgets.listingCacheBytes ?? LISTING_CACHE_BYTES)
  const batches = new BatchAnswers(sources, budgets.batchCacheBytes)
  /**
   * The answers of kept clients and kept searches as the bytes sent, by the kept row (or search
   * result) and the pieces of their groups: a write that drops the row, or its agency's
   * searches, drops them with it (the next read keeps a new one); past the budget, they start over.
   */
  const answerBudget = budgets.answerCacheBytes ?? ANSWER_CACHE_BYTES
  let answers = new WeakMap<Kept, Map<readonly ConcatPiece[], Buffer>>()
  let answerBytes = 0
  const answerOf = <K extends Kept>(kept: K, pieces: readonly ConcatPiece[], encode: (kept: K, pieces: readonly ConcatPiece[]) => string): Buffer => {
    let byPieces = answers.get(kept)
    const known = byPieces?.get(pieces)
    if (known !== undefined) return known
    const body = Buffer.from(encode(kept, pieces))
    if (answerBytes + body.length > answerBudget) {
      answers = new WeakMap()
      answerBytes = 0
      byPieces = undefined
    }
    if (byPieces === undefined) answers.set(kept, (byPieces = new Map()))
    byPieces.set(pieces, body)
    answerBytes += body.length
    return body
  }
  /** The answer of a kept client or search; one read inside a transaction is not kept, nor is its answer. */
  const answer = <K extends Kept>(kept: K, groups: readonly ClientGroup[], encode: (kept: K, pieces: readonly ConcatPiece[]) => string, keep: boolean): EncodedJson => {
    const pieces = clientJsonPieces(groups)
    return new EncodedJson(keep ? answerOf(kept, pieces, encode) : encode(kept, pieces))
  }

  const readClient = (agencyId: number, clientNumber: number): Readonly<ClientRow> | null => {
    const row = sources.getClient(agencyId, clientNumber)
    return row === undefined ? null : Object.freeze(row)
  }
  const client = (agencyId: number, clientNumber: number, keep: boolean): Readonly<ClientRow> | undefined => {
    const row = keep ? rows.get(agencyId, clientNumber) ?? rows.set(agencyId, clientNumber, readClient(agencyId, clientNumber)) : readClient(agencyId, clientNumber)
    return row === null || row.deleted ? undefined : row
  }
  const readSearch = (agencyId: number, policyNumber: string) => Object.freeze(sources.searchByPolicyNumber(agencyId, policyNumber).map((r) => Object.freeze(r)))
  const policyHolders = (agencyId: number, policyNumber: string, keep: boolean): readonly Readonly<ClientRow>[] =>
    keep ? searches.get(agencyId, policyNumber) ?? searches.set(agencyId, policyNumber, readSearch(agencyId, policyNumber)) : readSearch(agencyId, policyNumber)

  return {
    changedIdsJson (agencyId: number, q: ClientIdsQuery, keep: boolean): EncodedJson {
      if (!keep) return new EncodedJson(JSON.stringify(sources.clientIds(agencyId, q)))
      // a listing since an instant too: partners poll with the same asOf until something changes
      return new EncodedJson(listings.get(agencyId, q) ?? listings.set(agencyId, q, Buffer.from(JSON.stringify(sources.clientIds(agencyId, q)))))
    },

    liveClient: client,

    clientJson (agencyId: number, clientNumber: number, groups: readonly ClientGroup[], keep: boolean): EncodedJson | undefined {
      const row = client(agencyId, clientNumber, keep)
      return row === undefined ? undefined : answer(row, groups, clientJson, keep)
    },

    /** Live clients among `clientNumbers` (distinct), in that order; unknown and deleted ones left out. */
    liveClients (agencyId: number, clientNumbers: readonly number[]): ClientRow[] {
      if (clientNumbers.length === 0) return []
      const found = new Map(sources.liveClientsIn(agencyId, clientNumbers).map((r) => [r.clientNumber, r]))
      return clientNumbers.flatMap((n) => found.get(n) ?? [])
    },

    batchJson (agencyId: number, clientNumbers: readonly number[], groups: readonly ClientGroup[], keep: boolean): EncodedJson {
      return batches.json(agencyId, clientNumbers, groups.join(','), clientJsonPieces(groups), keep)
    },

    policyHolders,

    searchJson (agencyId: number, policyNumber: string, groups: readonly ClientGroup[], keep: boolean): EncodedJson {
      return answer(policyHolders(agencyId, policyNumber, keep), groups, clientsJson, keep)
    },

    /**
     * A commit wrote this client's rows and nothing else they are read from: what is kept of it,
     * and its agency's listings and searches (which it may now join, leave or change), are dropped.
     */
    forget (agencyId: number, clientNumber: number): void {
      rows.delete(agencyId, clientNumber)
      searches.deleteAll(agencyId)
      listings.deleteAll(agencyId)
      batches.forget(agencyId, clientNumber)
    },

    clear (): void {
      rows.clear()
      searches.clear()
      listings.clear()
      batches.clear()
    }
  }
}
