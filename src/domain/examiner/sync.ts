import type { ClientVersion } from '../../db/clients.js'
import { CLIENT_NUMBERS_PER_SET, type ClientSet, type SyncCheck } from '../../schemas/examiner.js'
import { parseTimestamp } from '../../time.js'
import { CLIENT_CHANGED, count, queryIsTrue, queryValue, Tally, type RecordedRequest, type RuleOutcomes } from './records.js'

/**
 * The sync check, two ways. Declared: the mirror a partner posted, compared with the agency.
 * Inferred: from the requests alone, for each agency the session listed (changed clients):
 * clients it never read, clients it last read before their latest change, deletions it never
 * observed. Both compare with the agency as of the partner's last listing (changes after it
 * could not be known yet), so a simulator changing data during the run gives no false finding.
 * A change the session saw (the world's changes are logged among its requests) is placed by its
 * order among them, not by its time: under a frozen clock a change and the listing after it
 * share one instant, and a partner that missed the change must not pass.
 * The clients are read after the session's records end (a report is computed on a worker), so a
 * client changed after that (after `horizonMs`) is in a state the session never had a chance to
 * see, and what it was before is no longer known: it is not judged.
 */

export interface DeclaredMirror {
  agencyId: number
  upTo: number | null
  postedMs: number
  /** How many of the session's records came before it was posted (undefined: not known, posted before this was kept). */
  after?: number
  /** [clientNumber, modifiedMs] as the partner stored them: read when the sync check reaches the mirror, one mirror at a time. */
  clients: () => Promise<Array<[number, number]>>
}

/** Every client of an agency, deleted too (a client's modifiedMs is its deletion time once deleted). */
export type ClientsOf = (agencyId: number) => readonly ClientVersion[]

/** What the session did with one agency. */
interface AgencySync {
  agencyId: number
  /** Successful listings of changed clients (not deleted=true), in order. */
  listings: RecordedRequest[]
  /** Successful deleted=true listings. */
  deletedListings: Array<{ atMs: number, seq: number, asOfMs: number | null }>
  /** Sandbox time of the first listing without asOf (null: every listing passed asOf). */
  fullAtMs: number | null
  /** Earliest asOf passed (ms), for incremental-only syncs. */
  earliestAsOfMs: number | null
  /** Per client: sandbox time and request of its last successful read. */
  lastRead: Map<number, RecordedRequest>
  /** Per client: when a read of it answered 404 (the deletion was observed). */
  notFoundAt: Map<number, { atMs: number, seq: number }>
  /** Per client: the place (seq) of its last change the session saw. */
  changedAt: Map<number, number>
}

/**
 * When a listing saw the agency: its arrival (a change made while it was answered may be in it or
 * not, so it is not expected of the partner). Reads count at their answer (`atMs`), so a change
 * made while a read was answered is not held against it.
 */
const listedAt = (r: RecordedRequest) => r.atMs - Math.ceil(r.elapsedMs)

/**
 * A listing's place among the records: where it arrived, when that was kept (a change recorded
 * while it was answered came after what it could list), else where it was answered.
 */
const placeOf = (listing: RecordedRequest): { seq: number } =>
  listing.arrivedAfter === undefined ? listing : { seq: listing.arrivedAfter + 0.5 }

/**
 * Whether a client's latest change came after a request: by their order when the session saw
 * the change, else by time (a change before the session, or a request recorded before changes
 * were). `atMs` is the request's instant as the caller counts it (a listing's arrival, a read's answer).
 */
function changedAfter (changeSeq: number | undefined, c: ClientVersion, request: { seq: number } | undefined, atMs: number): boolean {
  return changeSeq !== undefined && request !== undefined ? changeSeq > request.seq : c.modifiedMs > atMs
}

const setOf = (numbers: number[]): ClientSet => {
  numbers.sort((a, b) => a - b)
  return { count: numbers.length, clientNumbers: numbers.slice(0, CLIENT_NUMBERS_PER_SET) }
}

function agencySyncs (requests: readonly RecordedRequest[]): Map<number, AgencySync> {
  const syncs = new Map<number, AgencySync>()
  const of = (agencyId: number) => {
    let s = syncs.get(agencyId)
    if (s === undefined) {
      s = { agencyId, listings: [], deletedListings: [], fullAtMs: null, earliestAsOfMs: null, lastRead: new Map(), notFoundAt: new Map(), changedAt: new Map() }
      syncs.set(agencyId, s)
    }
    return s
  }
  for (const r of requests) {
    if (r.agencyId === undefined) continue
    if (r.operation === CLIENT_CHANGED) {
      if (r.clients !== undefined) of(r.agencyId).changedAt.set(r.clients[0], r.seq)
    } else if (r.operation === 'changedClients' && r.status === 200) {
      const s = of(r.agencyId)
      const asOf = queryValue(r, 'asOf')
      const asOfMs = asOf === undefined ? null : parseTimestamp(asOf)
      if (queryIsTrue(r, 'deleted')) {
        s.deletedListings.push({ atMs: r.atMs, seq: r.seq, asOfMs })
        continue
      }
      s.listings.push(r)
      if (asOf === undefined) s.fullAtMs ??= listedAt(r)
      else if (asOfMs !== null && (s.earliestAsOfMs === null || asOfMs < s.earliestAsOfMs)) s.earliestAsOfMs = asOfMs
    } else if ((r.operation === 'getClient' || r.operation === 'batchClients') && r.clients !== undefined) {
      const target = of(r.agencyId)
      if (r.status === 200) for (const n of r.clients) target.lastRead.set(n, r)
      else if (r.status === 404 && r.operation === 'getClient') target.notFoundAt.set(r.clients[0], { atMs: r.atMs, seq: r.seq })
    }
  }
  // Agencies read but never listed were not synced: nothing to infer for them.
  for (const [agencyId, s] of syncs) if (s.listings.length === 0 && s.deletedListings.length === 0) syncs.delete(agencyId)
  return syncs
}

function inferred (s: AgencySync, clients: readonly ClientVersion[], horizonMs: number, tallies: Record<'missed' | 'stale' | 'deletion' | 'neverDeleted', Tally>): SyncCheck | undefined {
  if (s.listings.length === 0) return undefined
  const last = s.listings[s.listings.length - 1]
  const asOfMs = listedAt(last)
  /** Changes after this instant were not listed to the partner (its window starts here). */
  const windowStart = s.fullAtMs !== null ? -Infinity : (s.earliestAsOfMs ?? -Infinity)
  const missing: number[] = []
  const stale: number[] = []
  const deletionMissed: number[] = []
  const known = new Set<number>()
  let anyDeleted = false
  for (const c of clients) {
    known.add(c.clientNumber)
    if (c.modifiedMs > horizonMs) continue
    const read = s.lastRead.get(c.clientNumber)
    const changeSeq = s.changedAt.get(c.clientNumber)
    /** Changed in the session, or in the partner's window (its sync could have listed it). */
    const inWindow = changeSeq !== undefined || c.modifiedMs > windowStart
    if (changedAfter(changeSeq, c, placeOf(last), asOfMs)) continue
    if (c.deleted) {
      anyDeleted = true
      // The partner had it: read in this session before the deletion, or from before an incremental-only sync.
      const had = (read !== undefined && changedAfter(changeSeq, c, read, read.atMs)) || (s.fullAtMs === null && inWindow)
      if (!had) continue
      const notFound = s.notFoundAt.get(c.clientNumber)
      const observed = s.deletedListings.some((d) => !changedAfter(changeSeq, c, d, d.atMs) && (d.asOfMs === null || d.asOfMs < c.modifiedMs)) ||
        (notFound !== undefined && !changedAfter(changeSeq, c, notFound, notFound.atMs))
      if (!observed) deletionMissed.push(c.clientNumber)
      continue
    }
    if (read === undefined) {
      if (inWindow) missing.push(c.clientNumber)
    } else if (changedAfter(changeSeq, c, read, read.atMs)) {
      stale.push(c.clientNumber)
      tallies.stale.add(read, `client ${c.clientNumber} read at ${new Date(read.atMs).toISOString()}, changed at ${new Date(c.modifiedMs).toISOString()}`)
    }
  }
  const unknown = [...s.lastRead.keys()].filter((n) => !known.has(n))
  const detail = (what: string, numbers: number[]) => `agency ${s.agencyId}: ${count(numbers.length, 'client')} ${what} (${numbers.slice(0, 5).join(', ')}${numbers.length > 5 ? ', …' : ''})`
  if (missing.length > 0) {
    tallies.missed.add(last, detail('listed but never read', missing), missing.length)
    tallies.missed.name(s.agencyId)
  }
  if (stale.length > 0) tallies.stale.name(s.agencyId)
  if (deletionMissed.length > 0) {
    tallies.deletion.add(last, detail('deleted and never observed as deleted', deletionMissed), deletionMissed.length)
    tallies.deletion.name(s.agencyId)
  }
  if (anyDeleted && s.deletedListings.length === 0) {
    tallies.neverDeleted.add(last, `agency ${s.agencyId} has deleted clients; no deleted=true listing was made`)
    tallies.neverDeleted.name(s.agencyId)
  }
  return {
    agencyId: s.agencyId,
    source: 'inferred',
    asOf: new Date(asOfMs).toISOString(),
    missing: setOf(missing),
    stale: setOf(stale),
    deletedKept: setOf(deletionMissed),
    unknown: setOf(unknown)
  }
}

function declared (mirror: DeclaredMirror, mirrored: Array<[number, number]>, clients: readonly ClientVersion[], syncs: Map<number, AgencySync>, horizonMs: number,
  tallies: Record<'missing' | 'stale' | 'deletedKept' | 'unknown', Tally>): SyncCheck {
  // The agency as of the partner's last listing before it posted the mirror (else the post itself).
  const sync = syncs.get(mirror.agencyId)
  const before = (r: RecordedRequest) => (mirror.after !== undefined ? r.seq <= mirror.after : r.atMs <= mirror.postedMs)
  const listings = sync?.listings.filter(before) ?? []
  const lastListing = listings.at(-1)
  const asOfMs = lastListing !== undefined ? listedAt(lastListing) : mirror.postedMs
  /** Where the comparison stands among the records: the last listing, else the post itself. */
  const asOf = lastListing !== undefined ? placeOf(lastListing) : (mirror.after !== undefined ? { seq: mirror.after + 0.5 } : undefined)
  const upTo = mirror.upTo ?? Infinity
  const stored = new Map<number, number>()
  for (const [n, modifiedMs] of mirrored) if (n <= upTo) stored.set(n, modifiedMs)
  const sets = { missing: [] as number[], stale: [] as number[], deletedKept: [] as number[], unknown: [] as number[] }
  const known = new Set<number>()
  for (const c of clients) {
    if (c.clientNumber > upTo) continue
    known.add(c.clientNumber)
    const mine = stored.get(c.clientNumber)
    if (c.modifiedMs > horizonMs) continue
    if (changedAfter(sync?.changedAt.get(c.clientNumber), c, asOf, asOfMs)) continue
    if (c.deleted) {
      if (mine !== undefined) sets.deletedKept.push(c.clientNumber)
    } else if (mine === undefined) {
      sets.missing.push(c.clientNumber)
    } else if (mine < c.modifiedMs) {
      sets.stale.push(c.clientNumber)
    }
  }
  for (const n of stored.keys()) if (!known.has(n)) sets.unknown.push(n)
  for (const key of ['missing', 'stale', 'deletedKept', 'unknown'] as const) {
    if (sets[key].length === 0) continue
    tallies[key].add(undefined, undefined, sets[key].length)
    tallies[key].name(mirror.agencyId)
  }
  return {
    agencyId: mirror.agencyId,
    source: 'declared',
    ...(mirror.upTo === null ? {} : { upTo: mirror.upTo }),
    asOf: new Date(asOfMs).toISOString(),
    missing: setOf(sets.missing),
    stale: setOf(sets.stale),
    deletedKept: setOf(sets.deletedKept),
    unknown: setOf(sets.unknown)
  }
}

/** The agencies whose clients the sync check compares: those the session listed, and those it declared mirrors of. */
export function syncAgencies (requests: readonly RecordedRequest[], mirrors: readonly DeclaredMirror[]): number[] {
  return [...new Set([...mirrors.map((m) => m.agencyId), ...agencySyncs(requests).keys()])]
}

/** The sync section of the report and the sync rules' outcomes. */
export async function syncChecks (requests: readonly RecordedRequest[], mirrors: readonly DeclaredMirror[], clientsOf: ClientsOf, horizonMs: number): Promise<{ sync: SyncCheck[], outcomes: RuleOutcomes }> {
  const syncs = agencySyncs(requests)
  const cache = new Map<number, readonly ClientVersion[]>()
  const truth = (agencyId: number) => {
    let clients = cache.get(agencyId)
    if (clients === undefined) cache.set(agencyId, (clients = clientsOf(agencyId)))
    return clients
  }
  const t = {
    missing: new Tally(),
    stale: new Tally(),
    deletedKept: new Tally(),
    unknown: new Tally(),
    missed: new Tally(),
    staleReads: new Tally(),
    deletion: new Tally(),
    neverDeleted: new Tally()
  }
  const sync: SyncCheck[] = []
  for (const mirror of mirrors) sync.push(declared(mirror, await mirror.clients(), truth(mirror.agencyId), syncs, horizonMs, t))
  for (const s of [...syncs.values()].sort((a, b) => a.agencyId - b.agencyId)) {
    const check = inferred(s, truth(s.agencyId), horizonMs, { missed: t.missed, stale: t.staleReads, deletion: t.deletion, neverDeleted: t.neverDeleted })
    if (check !== undefined) sync.push(check)
  }
  const clientsIn = (tally: Tally, what: string) => `${count(tally.count, 'client')} ${what} (agencies ${tally.list()})`
  const outcomes: RuleOutcomes = new Map([
    ['deleted-never-synced', { tally: t.neverDeleted, message: `${count(t.neverDeleted.count, 'agency', 'agencies')} with deleted clients never listed with deleted=true (${t.neverDeleted.list()})` }],
    ['mirror-missing', { tally: t.missing, message: clientsIn(t.missing, 'missing from the declared mirror') }],
    ['mirror-stale', { tally: t.stale, message: clientsIn(t.stale, 'older in the declared mirror than their latest change') }],
    ['mirror-deleted-kept', { tally: t.deletedKept, message: clientsIn(t.deletedKept, 'deleted but kept in the declared mirror') }],
    ['mirror-unknown', { tally: t.unknown, message: clientsIn(t.unknown, 'in the declared mirror that the agency never had') }],
    ['sync-missed', { tally: t.missed, message: clientsIn(t.missed, 'changed before the last listing and never read') }],
    ['sync-stale', { tally: t.staleReads, message: clientsIn(t.staleReads, 'last read before a change made before the last listing') }],
    ['deletion-missed', { tally: t.deletion, message: clientsIn(t.deletion, 'deleted before the last listing and never observed as deleted') }]
  ])
  return { sync, outcomes }
}
