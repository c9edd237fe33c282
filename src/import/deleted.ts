import { numberIn, VendorClient, type ApiVersion } from './http.js'

/**
 * What the vendor API tells about deleted clients: only their numbers, through
 * `clients?deleted=true`, narrowed by `asOf` (deleted after it) and `officeId`. Their bodies
 * are never answered. The import learns each one's deletion time by bisection on `asOf`
 * (millisecond precision: the listing answers `modified > asOf`), and its office by asking
 * the listing of each office, so that the imported sandbox lists the same deleted clients for
 * any `asOf` and `officeId`.
 */

export interface DeletedClient {
  clientNumber: number
  officeId: number
}

/** Bounds of the search: every deletion time lies in (EARLIEST, LATEST]. */
const EARLIEST = Date.UTC(1900, 0, 1)
const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59, 999)

type Limit = <T>(fn: () => Promise<T>) => Promise<T>

export interface DeletedProbe {
  client: VendorClient
  version: ApiVersion
  agencyId: number
  limit: Limit
  /** Set when the import stops: the search ends instead of going on alone. */
  stop?: { aborted: boolean }
  /** Called after each listing request of the bisection. */
  onRequest?: () => void
}

async function deletedIds (p: DeletedProbe, query: Record<string, string>): Promise<Set<number>> {
  const path = VendorClient.path(`/vendor/agency/${p.agencyId}/clients`, p.version, { deleted: 'true', ...query })
  const ids = await p.limit(() => p.client.getJsonArray(path))
  p.onRequest?.()
  return new Set(ids.map(numberIn))
}

/**
 * Deletion time of each id: the interval (lo, hi] that holds them is halved until it is one
 * millisecond wide. Ids are separated as soon as one query tells them apart, so the cost is
 * about log2(gap between neighbouring deletions in ms) requests per id, the halvings above
 * shared. `workers` intervals are searched at once, depth first from a stack, so the intervals
 * waiting stay few (a breadth-first search would hold every level of the whole tree).
 */
export async function deletionTimes (p: DeletedProbe, ids: number[], workers: number): Promise<Map<number, number>> {
  const times = new Map<number, number>()
  const stack: Array<{ lo: number; hi: number; group: number[] }> = ids.length === 0 ? [] : [{ lo: EARLIEST, hi: LATEST, group: [...ids] }]
  let busy = 0
  const waiting: Array<() => void> = []
  const wakeAll = () => waiting.splice(0).forEach((resolve) => resolve())
  const worker = async (): Promise<void> => {
    for (;;) {
      if (p.stop?.aborted === true) {
        // an unfinished search must not pass for a finished one
        wakeAll()
        throw new Error('the import stopped')
      }
      const next = stack.pop()
      if (next === undefined) {
        if (busy === 0) {
          wakeAll()
          return
        }
        // another worker may still push halves: wait for it
        await new Promise<void>((resolve) => waiting.push(resolve))
        continue
      }
      const { lo, hi, group } = next
      if (hi - lo <= 1) {
        for (const id of group) times.set(id, hi)
        continue
      }
      busy++
      const mid = Math.floor((lo + hi) / 2)
      try {
        const after = await deletedIds(p, { asOf: new Date(mid).toISOString() })
        const earlier = group.filter((id) => !after.has(id))
        const later = group.filter((id) => after.has(id))
        if (earlier.length > 0) stack.push({ lo, hi: mid, group: earlier })
        if (later.length > 0) stack.push({ lo: mid, hi, group: later })
      } finally {
        busy--
        wakeAll()
      }
    }
  }
  await Promise.all(Array.from({ length: workers }, worker))
  return times
}

/** The office of each deleted id, from the listing of each office (ids in none: undefined). */
export async function deletedOffices (p: DeletedProbe, officeIds: number[]): Promise<Map<number, number>> {
  const offices = new Map<number, number>()
  const answers = await Promise.all(officeIds.map((officeId) => deletedIds(p, { officeId: String(officeId) })))
  answers.forEach((ids, i) => {
    for (const id of ids) if (!offices.has(id)) offices.set(id, officeIds[i])
  })
  return offices
}

/** Deleted clients with their offices, ascending by number (their times come from deletionTimes). */
export async function deletedClients (p: DeletedProbe, ids: number[], officeIds: number[], defaultOfficeId: number): Promise<DeletedClient[]> {
  if (ids.length === 0) return []
  const offices = await deletedOffices(p, officeIds)
  return [...ids].sort((a, b) => a - b).map((clientNumber) => ({ clientNumber, officeId: offices.get(clientNumber) ?? defaultOfficeId }))
}
