import { versionOf } from '../../versions/index.js'
import type { AnswerLost } from '../journal.js'
import type { RecordedRequest } from './records.js'

/**
 * How recorded requests are kept: recording is on the path of every vendor request while a
 * session is open, so a recording point gives only what it has at hand (the raw query, no
 * parsing) and each request is stored as one short line of text (LINE_FORMAT); what can be
 * derived (the agency and client in the path, the query's parameters) is derived when a report
 * reads them back.
 */

/** What a recording point gives: the request without its place in a session. */
export interface RequestRecord {
  atMs: number
  realMs: number
  elapsedMs: number
  method: string
  /** The path and query as sent (a long one is cut when written: keptUrl). */
  url: string
  operation?: string
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
  /** The answer never reached the client: dropped by a fault rule, or abandoned by the client. */
  answerLost?: AnswerLost
  /** A listing's place in the log when it arrived (Examiner.arrival): changes from there on came after it. */
  arrivedAt?: number
}

/** Longest path kept (as the journal keeps it). */
const MAX_PATH = 2048
/** Longest query string kept. */
export const MAX_QUERY = 2048
const MAX_QUERY_KEYS = 20
const MAX_QUERY_VALUE = 200

type Extra = { version?: string } & Pick<RequestRecord, 'clients' | 'batchSize' | 'listedAgencies' | 'writes' | 'retryAfterS' | 'faultId' | 'warnings' | 'answerLost' | 'arrivedAt'>

/**
 * The line format (chunks written since format 2): a header line `2<TAB>atBase<TAB>realBase`,
 * then one line per request, its fields separated by tabs:
 *
 *   at − atBase, real − realBase, elapsed (hundredths of a ms), status, journalId, method,
 *   operation, clientId (JSON), extra (JSON), path[?query]
 *
 * An absent field is empty. Times are kept relative to the examiner's start so they stay small
 * integers, which V8 turns into text several times faster than 13-digit ones; text a caller
 * chose (the Client Id, warnings, RefIds) is JSON, so it holds no tab or line break; the URL is
 * last, so a tab in it cannot shift a field, and the HTTP parser never lets a line break into
 * one. Writing a flush's requests as lines costs about a quarter of JSON.stringify over arrays
 * (the format of chunks written before, still read).
 */
export const LINE_FORMAT = '2'

/** Bases the line times are relative to: one pair per examiner, written in each chunk's header. */
export interface TimeBases { atMs: number, realMs: number }

export function chunkHeader (bases: TimeBases): string {
  return `${LINE_FORMAT}\t${bases.atMs}\t${bases.realMs}`
}

/** Line breaks cannot reach a URL through the HTTP parser; one given some other way is escaped. */
const noLineBreak = (text: string) => (text.includes('\n') || text.includes('\r') ? text.replace(/\r/g, '%0D').replace(/\n/g, '%0A') : text)

/** The Client Id's JSON text: the last one is kept, as one integration usually sends them all. */
let lastClientId: string | undefined
let lastClientIdJson = ''
function clientIdJson (clientId: string | undefined): string {
  if (clientId === undefined) return ''
  if (clientId !== lastClientId) {
    lastClientId = clientId
    lastClientIdJson = JSON.stringify(clientId)
  }
  return lastClientIdJson
}

/** The fields most requests lack, as JSON; `version` is given only when the query was cut (else it is read from the query). */
function extraJson (r: RequestRecord, version: string | undefined): string {
  if (version === undefined && r.clients === undefined && r.batchSize === undefined && r.listedAgencies === undefined &&
    r.writes === undefined && r.retryAfterS === undefined && r.faultId === undefined && r.warnings === undefined && r.answerLost === undefined && r.arrivedAt === undefined) return ''
  const extra: Extra = {
    version,
    clients: r.clients,
    batchSize: r.batchSize,
    listedAgencies: r.listedAgencies,
    writes: r.writes,
    retryAfterS: r.retryAfterS,
    faultId: r.faultId,
    warnings: r.warnings,
    answerLost: r.answerLost,
    arrivedAt: r.arrivedAt
  }
  return JSON.stringify(extra)
}

/**
 * The URL as a session keeps it: the path cut at MAX_PATH and the query at MAX_QUERY characters
 * (`queryCut` tells whether the query was); the URL itself when neither is longer.
 */
function keptUrl (url: string): { url: string, queryCut: boolean } {
  const queryAt = url.indexOf('?')
  const pathLength = queryAt === -1 ? url.length : queryAt
  const queryCut = queryAt !== -1 && url.length - queryAt - 1 > MAX_QUERY
  if (pathLength <= MAX_PATH && !queryCut) return { url, queryCut }
  const path = pathLength > MAX_PATH ? `${url.slice(0, MAX_PATH - 1)}…` : url.slice(0, pathLength)
  return { url: queryAt === -1 ? path : `${path}?${url.slice(queryAt + 1, queryAt + 1 + MAX_QUERY)}`, queryCut }
}

/** One request as a line of a chunk (see LINE_FORMAT). */
export function encodeRequest (r: RequestRecord, bases: TimeBases): string {
  const { url, queryCut } = keptUrl(r.url)
  return `${Math.round(r.atMs - bases.atMs)}\t${Math.round(r.realMs - bases.realMs)}\t${Math.round(r.elapsedMs * 100)}\t${r.status}\t${r.journalId}\t` +
    `${r.method}\t${r.operation ?? ''}\t${clientIdJson(r.clientId)}\t${extraJson(r, queryCut ? versionOf(r.url) : undefined)}\t${noLineBreak(url)}`
}

/** A line of a chunk with another journal id (its fifth field). */
export function withJournalId (line: string, journalId: number): string {
  let start = -1
  for (let field = 0; field < 4; field++) start = line.indexOf('\t', start + 1)
  const end = line.indexOf('\t', start + 1)
  return `${line.slice(0, start + 1)}${journalId}${line.slice(end)}`
}

/** [atMs, realMs, elapsed (hundredths of a ms), method, path, version, operation, query, status, journalId, clientId, extra]; 0 for absent. */
type JsonRequest = [number, number, number, string, string, string | 0, string | 0, string | 0, number, number, string | 0, Extra | 0]

/** The fields of a recorded request, whichever format kept them. */
interface Fields {
  atMs: number
  realMs: number
  elapsed: number
  status: number
  journalId: number
  method: string
  operation: string | undefined
  clientId: string | undefined
  extra: Extra | undefined
  path: string
  query: string | undefined
}

/** Each request of a chunk's text, in order, in either format (a JSON array before format 2). */
function * chunkFields (text: string): Generator<Fields> {
  if (text.startsWith('[')) {
    for (const [atMs, realMs, elapsed, method, path, version, operation, query, status, journalId, clientId, extra] of JSON.parse(text) as JsonRequest[]) {
      yield {
        atMs,
        realMs,
        elapsed,
        status,
        journalId,
        method,
        path,
        operation: operation === 0 ? undefined : operation,
        clientId: clientId === 0 ? undefined : clientId,
        extra: extra === 0 && version === 0 ? undefined : { ...(extra === 0 ? {} : extra), ...(version === 0 ? {} : { version }) },
        query: query === 0 ? undefined : query
      }
    }
    return
  }
  let end = text.indexOf('\n')
  const [format, atBase, realBase] = text.slice(0, end === -1 ? text.length : end).split('\t')
  if (format !== LINE_FORMAT) throw new Error(`recorded requests in an unknown format '${format.slice(0, 20)}'`)
  const clientIds = new Map<string, string>()
  while (end !== -1) {
    const start = end + 1
    end = text.indexOf('\n', start)
    const line = text.slice(start, end === -1 ? text.length : end)
    const tabs: number[] = []
    for (let at = -1; tabs.length < 9;) tabs.push(at = line.indexOf('\t', at + 1))
    const field = (i: number) => line.slice(i === 0 ? 0 : tabs[i - 1] + 1, tabs[i])
    const clientText = field(7)
    let clientId = clientIds.get(clientText)
    if (clientText !== '' && clientId === undefined) clientIds.set(clientText, (clientId = JSON.parse(clientText) as string))
    const extraText = field(8)
    const url = line.slice(tabs[8] + 1)
    const queryAt = url.indexOf('?')
    yield {
      atMs: Number(atBase) + Number(field(0)),
      realMs: Number(realBase) + Number(field(1)),
      elapsed: Number(field(2)),
      status: Number(field(3)),
      journalId: Number(field(4)),
      method: field(5),
      operation: field(6) === '' ? undefined : field(6),
      clientId,
      extra: extraText === '' ? undefined : JSON.parse(extraText) as Extra,
      path: queryAt === -1 ? url : url.slice(0, queryAt),
      query: queryAt === -1 ? undefined : url.slice(queryAt + 1)
    }
  }
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
 * A string of its own: a slice of a chunk's text would keep the whole text alive for as long as
 * the request it names (a session at its cap would hold every chunk it read).
 */
const detached = (text: string) => Buffer.from(text, 'utf8').toString('utf8')

/**
 * A decoder for one reading of a session: paths, query strings and operations repeat, so what is
 * derived from each is worked out once and shared (the decoded requests are only read), and the
 * text of each chunk can be let go once it is decoded. It gives the
 * requests of each chunk in order, numbered from the chunk's first.
 */
export function requestDecoder (): (chunkText: string, firstSeq: number) => RecordedRequest[] {
  const queries = new Map<string, { query: Record<string, string>, version: string }>()
  const paths = new Map<string, { path: string, agencyId?: number, clients?: number[] }>()
  const operations = new Map<string, string>()
  return (chunkText, firstSeq) => {
    const requests: RecordedRequest[] = []
    for (const { atMs, realMs, elapsed, status, journalId, method, operation, clientId, extra, path, query } of chunkFields(chunkText)) {
      let parsed = query === undefined ? undefined : queries.get(query)
      if (query !== undefined && parsed === undefined) queries.set(detached(query), (parsed = { query: queryOf(query), version: versionOf(`?${query}`) }))
      let inPath = paths.get(path)
      if (inPath === undefined) {
        const agency = AGENCY_IN_PATH.exec(path)
        const client = CLIENT_IN_PATH.exec(path)
        const own = detached(path)
        paths.set(own, (inPath = {
          path: own,
          ...(agency === null ? {} : { agencyId: Number(agency[1]) }),
          ...(client === null ? {} : { clients: [Number(client[1])] })
        }))
      }
      const r: RecordedRequest = {
        seq: firstSeq + requests.length, atMs, realMs, elapsedMs: elapsed / 100, method, path: inPath.path, version: extra?.version ?? parsed?.version ?? '1', status, journalId
      }
      if (operation !== undefined) {
        let known = operations.get(operation)
        if (known === undefined) operations.set((known = detached(operation)), known)
        r.operation = known
      }
      if (parsed !== undefined) r.query = parsed.query
      if (clientId !== undefined) r.clientId = clientId
      if (inPath.agencyId !== undefined) r.agencyId = inPath.agencyId
      if (extra !== undefined) {
        if (extra.clients !== undefined && extra.clients !== null) r.clients = extra.clients
        if (extra.batchSize !== undefined && extra.batchSize !== null) r.batchSize = extra.batchSize
        if (extra.listedAgencies !== undefined && extra.listedAgencies !== null) r.listedAgencies = extra.listedAgencies
        if (extra.writes !== undefined && extra.writes !== null) r.writes = extra.writes
        if (extra.retryAfterS !== undefined && extra.retryAfterS !== null) r.retryAfterS = extra.retryAfterS
        if (extra.faultId !== undefined && extra.faultId !== null) r.faultId = extra.faultId
        if (extra.warnings !== undefined && extra.warnings !== null) r.warnings = extra.warnings
        if (extra.answerLost === 'dropped' || extra.answerLost === 'abandoned') r.answerLost = extra.answerLost
        if (typeof extra.arrivedAt === 'number') r.arrivedAt = extra.arrivedAt
      }
      if (r.clients === undefined && inPath.clients !== undefined) r.clients = inPath.clients
      requests.push(r)
    }
    return requests
  }
}
