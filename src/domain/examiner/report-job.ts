import { inflateRawSync } from 'node:zlib'
import type { ClientVersion } from '../../db/clients.js'
import type { Report, ReportWorld, Session } from '../../schemas/examiner.js'
import { requestDecoder } from './codec.js'
import type { RecordedRequest } from './records.js'
import { buildReport, type DeclaredMirror } from './report.js'
import { CLIENT_CHANGED } from './records.js'
import { syncAgencies } from './sync.js'

/**
 * What computing one report takes, in the form it crosses to the report worker: the session's
 * chunks as stored (compressed), which of their requests are the session's, and its mirrors.
 * The agencies' clients are asked for once the requests are read (only the agencies synced), and
 * each mirror's client list when the sync check reaches it (one at a time).
 */
export interface ReportJob {
  session: Session
  /** Chunks the session recorded on its own (sessions started before the world's log): all its requests. */
  ownChunks: Array<{ firstSeq: number, requests: Uint8Array }>
  /** Chunks of the world's log; the session's requests among them are those `range` names. */
  chunks: Array<{ firstSeq: number, requests: Uint8Array }>
  /** The log positions and Client Id of the session's requests, and their most (own chunks counted). */
  range: { fromSeq: number, toSeq: number, clientId: string | null, cap: number }
  /** The session's mirrors; their client lists are read one at a time, as the sync check needs them (MirrorClients). */
  mirrors: Array<{ agencyId: number, upTo: number | null, postedMs: number, postedSeq: number | null }>
  /** The world's time the session's records end (its end, or when an open session's report was asked for). */
  horizonMs: number
  /** The world the session belongs to, as the report names it. */
  world: ReportWorld
}

/** A mirror's client list, the JSON text of [clientNumber, modifiedMs] pairs. */
export type MirrorClients = (agencyId: number) => Promise<string>

/** An agency's clients as columns (compact to send to the worker: three typed arrays, not an object per client). */
export interface ClientColumns {
  numbers: Float64Array
  deleted: Uint8Array
  modifiedMs: Float64Array
}

export function toColumns (clients: readonly ClientVersion[]): ClientColumns {
  const columns = { numbers: new Float64Array(clients.length), deleted: new Uint8Array(clients.length), modifiedMs: new Float64Array(clients.length) }
  clients.forEach((c, i) => {
    columns.numbers[i] = c.clientNumber
    columns.deleted[i] = c.deleted ? 1 : 0
    columns.modifiedMs[i] = c.modifiedMs
  })
  return columns
}

function fromColumns (columns: ClientColumns): ClientVersion[] {
  return Array.from(columns.numbers, (clientNumber, i) => ({ clientNumber, deleted: columns.deleted[i] === 1, modifiedMs: columns.modifiedMs[i] }))
}

/** The session's requests, numbered from 1 in the order they were recorded. */
export function sessionRequests (job: ReportJob): RecordedRequest[] {
  const decode = requestDecoder()
  const read = (chunk: { firstSeq: number, requests: Uint8Array }) => decode(inflateRawSync(chunk.requests).toString('utf8'), chunk.firstSeq)
  const requests: RecordedRequest[] = []
  const add = (r: RecordedRequest) => {
    r.seq = requests.length + 1
    requests.push(r)
  }
  for (const chunk of job.ownChunks) read(chunk).forEach(add)
  const { range } = job
  // the world's changes are the session's whatever its Client Id, and count for no cap
  let counted = requests.length
  for (const chunk of job.chunks) {
    for (const r of read(chunk)) {
      if (r.seq < range.fromSeq || r.seq >= range.toSeq) continue
      const change = r.operation === CLIENT_CHANGED
      if (!change && range.clientId !== null && r.clientId !== range.clientId) continue
      if (!change && counted >= range.cap) continue
      if (!change) counted++
      r.logSeq = r.seq
      if (r.arrivedAt !== undefined) r.arrivedAfter = recordsBefore(requests, r.arrivedAt)
      add(r)
    }
  }
  return requests
}

/** How many of the requests so far (in log order) came before this log position: those of the session's own chunks, then the log's before it. */
function recordsBefore (requests: readonly RecordedRequest[], logSeq: number): number {
  let low = 0
  let high = requests.length
  while (low < high) {
    const middle = (low + high) >>> 1
    const at = requests[middle].logSeq
    if (at === undefined || at < logSeq) low = middle + 1
    else high = middle
  }
  return low
}

/**
 * The declared mirrors, each client list parsed when the sync check reads it (once): a session's
 * mirrors (up to 20 of 100,000 clients) are never all parsed at once. Each has its place among
 * the session's requests: after every request recorded before it was posted.
 */
export function declaredMirrors (job: ReportJob, requests: readonly RecordedRequest[], mirrorClients: MirrorClients): DeclaredMirror[] {
  return job.mirrors.map((m) => ({
    agencyId: m.agencyId,
    upTo: m.upTo,
    postedMs: m.postedMs,
    after: m.postedSeq === null ? undefined : requests.filter((r) => r.logSeq === undefined || r.logSeq < m.postedSeq!).length,
    clients: async () => JSON.parse(await mirrorClients(m.agencyId)) as Array<[number, number]>
  }))
}

/** Reads the job's requests, asks for the clients of the agencies it compares, and judges the session. */
export async function runReportJob (job: ReportJob, clientsOf: (agencies: number[]) => Promise<Map<number, ClientColumns>>, mirrorClients: MirrorClients): Promise<Report> {
  const requests = sessionRequests(job)
  const mirrors = declaredMirrors(job, requests, mirrorClients)
  const columns = await clientsOf(syncAgencies(requests, mirrors))
  return await buildReport({ session: job.session, requests, mirrors, horizonMs: job.horizonMs, world: job.world, clientsOf: (agencyId) => fromColumns(columns.get(agencyId) ?? EMPTY) })
}

const EMPTY: ClientColumns = { numbers: new Float64Array(0), deleted: new Uint8Array(0), modifiedMs: new Float64Array(0) }
