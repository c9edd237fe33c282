import type { ClientIdsQuery } from '../db/index.js'

/**
 * Changed-clients listings as the bytes sent, bounded by their bytes, as maps of maps like a
 * PairCache with a third level: by agency, then by filter (deleted or not, the office), then by
 * the instant they list changes since. A poll looks them up by numbers and a short text, where one
 * key text joining them all had to be made and hashed for every poll. A write to one of an
 * agency's clients drops that agency's listings (deleteAll); past the byte budget everything
 * starts over, and a listing dropped stays counted until then.
 */
export class ListingCache {
  private readonly byAgency = new Map<number, Map<string, Map<number, Buffer>>>()
  private used = 0

  constructor (private readonly budgetBytes: number) {}

  get (agencyId: number, query: ClientIdsQuery): Buffer | undefined {
    return this.byAgency.get(agencyId)?.get(filterOf(query))?.get(query.sinceMs ?? NaN)
  }

  set (agencyId: number, query: ClientIdsQuery, json: Buffer): Buffer {
    if (this.used + json.length > this.budgetBytes) this.clear()
    let byFilter = this.byAgency.get(agencyId)
    if (byFilter === undefined) this.byAgency.set(agencyId, (byFilter = new Map()))
    const filter = filterOf(query)
    let bySince = byFilter.get(filter)
    if (bySince === undefined) byFilter.set(filter, (bySince = new Map()))
    bySince.set(query.sinceMs ?? NaN, json)
    this.used += json.length
    return json
  }

  deleteAll (agencyId: number): void {
    this.byAgency.delete(agencyId)
  }

  clear (): void {
    this.byAgency.clear()
    this.used = 0
  }
}

/** A query's filter as a short text: `1|` for deleted clients of every office, `0|12` for live ones of office 12. */
const filterOf = (query: ClientIdsQuery): string => `${query.deleted ? 1 : 0}|${query.officeId ?? ''}`
