import { versionOf } from '../../versions/index.js'
import type { RecordedRequest } from './records.js'

/**
 * How recorded requests are kept: recording is on the path of every vendor request while a
 * session is open, so a recording point gives only what it has at hand (the raw query, no
 * parsing) and each request is stored as a short JSON array; what can be derived (the agency
 * and client in the path, the query's parameters) is derived when a report reads them back.
 */

/** What a recording point gives: the request without its place in a session. */
export interface RequestRecord {
  atMs: number
  realMs: number
  elapsedMs: number
  method: string
  path: string
  /** Given only when the query was cut (else read from the query when reporting). */
  version?: string
  operation?: string
  /** The query string as sent, without the `?` (cut at MAX_QUERY). */
  query?: string
  status: number
  journalId: number
  clientId?: string
  /** A batch read's client numbers (a path's client is read from the path). */
  clients?: number[]
  batchSize?: number
  listedAgencies?: number[]
  writes?: Array<[string, string]>
  retryAfterS?: number
  faultId?: string
  warnings?: string[]
}

/** Longest query string kept. */
export const MAX_QUERY = 2048
const MAX_QUERY_KEYS = 20
const MAX_QUERY_VALUE = 200

type Extra = Pick<RequestRecord, 'clients' | 'batchSize' | 'listedAgencies' | 'writes' | 'retryAfterS' | 'faultId' | 'warnings'>
/**
 * [atMs, realMs, elapsed (hundredths of a ms), method, path, version, operation, query, status,
 * journalId, clientId, extra]; 0 for absent. Whole numbers only: they are written faster.
 */
export type StoredRequest = [number, number, number, string, string, string | 0, string | 0, string | 0, number, number, string | 0, Extra | 0]

export function encodeRequest (r: RequestRecord): StoredRequest {
  let extra: Extra | 0 = 0
  if (r.clients !== undefined || r.batchSize !== undefined || r.listedAgencies !== undefined || r.writes !== undefined ||
    r.retryAfterS !== undefined || r.faultId !== undefined || r.warnings !== undefined) {
    extra = { clients: r.clients, batchSize: r.batchSize, listedAgencies: r.listedAgencies, writes: r.writes, retryAfterS: r.retryAfterS, faultId: r.faultId, warnings: r.warnings }
  }
  return [
    Math.round(r.atMs), Math.round(r.realMs), Math.round(r.elapsedMs * 100), r.method, r.path, r.version ?? 0, r.operation ?? 0, r.query ?? 0,
    r.status, r.journalId, r.clientId ?? 0, extra
  ]
}

const AGENCY_IN_PATH = /^\/vendor\/agency\/(\d{1,10})(?:\/|$)/
const CLIENT_IN_PATH = /^\/vendor\/agency\/\d{1,10}\/client\/(\d{1,10})(?:\/|$)/

function queryOf (text: string): Record<string, string> {
  const query: Record<string, string> = {}
  let keys = 0
  for (const [key, value] of new URLSearchParams(text)) {
    if (key in query) continue
    if (++keys > MAX_QUERY_KEYS) break
    query[key.slice(0, MAX_QUERY_VALUE)] = value.slice(0, MAX_QUERY_VALUE)
  }
  return query
}

/**
 * A decoder for one reading of a session: paths and query strings repeat, so what is derived
 * from each is worked out once and shared (the decoded requests are only read).
 */
export function requestDecoder (): (stored: StoredRequest, seq: number) => RecordedRequest {
  const queries = new Map<string, { query: Record<string, string>, version: string }>()
  const paths = new Map<string, { agencyId?: number, clients?: number[] }>()
  return (stored, seq) => {
    const [atMs, realMs, elapsed, method, path, version, operation, query, status, journalId, clientId, extra] = stored
    let parsed = query === 0 ? undefined : queries.get(query)
    if (query !== 0 && parsed === undefined) queries.set(query, (parsed = { query: queryOf(query), version: versionOf(`?${query}`) }))
    const r: RecordedRequest = {
      seq, atMs, realMs, elapsedMs: elapsed / 100, method, path, version: version !== 0 ? version : (parsed?.version ?? '1'), status, journalId
    }
    if (operation !== 0) r.operation = operation
    if (parsed !== undefined) r.query = parsed.query
    if (clientId !== 0) r.clientId = clientId
    let inPath = paths.get(path)
    if (inPath === undefined) {
      const agency = AGENCY_IN_PATH.exec(path)
      const client = CLIENT_IN_PATH.exec(path)
      paths.set(path, (inPath = {
        ...(agency === null ? {} : { agencyId: Number(agency[1]) }),
        ...(client === null ? {} : { clients: [Number(client[1])] })
      }))
    }
    if (inPath.agencyId !== undefined) r.agencyId = inPath.agencyId
    if (extra !== 0) {
      if (extra.clients !== undefined && extra.clients !== null) r.clients = extra.clients
      if (extra.batchSize !== undefined && extra.batchSize !== null) r.batchSize = extra.batchSize
      if (extra.listedAgencies !== undefined && extra.listedAgencies !== null) r.listedAgencies = extra.listedAgencies
      if (extra.writes !== undefined && extra.writes !== null) r.writes = extra.writes
      if (extra.retryAfterS !== undefined && extra.retryAfterS !== null) r.retryAfterS = extra.retryAfterS
      if (extra.faultId !== undefined && extra.faultId !== null) r.faultId = extra.faultId
      if (extra.warnings !== undefined && extra.warnings !== null) r.warnings = extra.warnings
    }
    if (r.clients === undefined && inPath.clients !== undefined) r.clients = inPath.clients
    return r
  }
}
