import type { FastifyRequest } from 'fastify'
import { HEADER_NAMES } from '../domain/attachments.js'
import { MAX_QUERY, type RequestRecord } from '../domain/examiner/codec.js'
import type { Examiner } from '../domain/examiner/sessions.js'
import { writeItems } from '../domain/examiner/records.js'
import type { Sandbox } from '../domain/sandbox.js'
import { capWarnings } from '../domain/journal.js'
import { OPERATIONS, type OperationId } from '../versions/operations.js'
import { versionOf } from '../versions/index.js'

/**
 * What an examiner session records of a vendor request, taken from Fastify's request at the
 * journal's recording points (observe.ts): called only while a session is open.
 */

/** Operation ids by method and route URL, for every version's URL of each operation. */
const OPERATION_BY_ROUTE = new Map<string, OperationId>()
for (const id of Object.keys(OPERATIONS) as OperationId[]) {
  const operation = OPERATIONS[id]
  for (const binding of Object.values(operation.versions) as Array<{ url?: string }>) {
    OPERATION_BY_ROUTE.set(`${operation.method} ${binding.url ?? operation.url}`, id)
  }
}

/** Paths longer than this are kept cut, as the journal keeps them. */
const MAX_PATH = 2048
/** Client numbers of a batch kept per request (the count is whole). */
const MAX_CLIENT_NUMBERS = 1000
const DIGITS = /^\d{1,10}$/
const WRITE_OPERATIONS = new Set<string>(['logNote', 'attachment', 'receipts', 'createClient'])

/** Retry-After in seconds (a number of seconds, or an HTTP date from now). */
function retryAfterSeconds (header: unknown, nowMs: number): number | undefined {
  const value = Array.isArray(header) ? header[0] : header
  if (typeof value === 'number') return value
  if (typeof value !== 'string' || value.trim() === '') return undefined
  if (/^\s*\d+\s*$/.test(value)) return Number(value)
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - nowMs) / 1000))
}

/** The attachment's metadata headers, lower-case names, text values. */
function metadataHeaders (request: FastifyRequest): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(request.headers)) {
    if (HEADER_NAMES[name] !== undefined && value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value
  }
  return headers
}

/** The client numbers of a batch read (a path's client is read from the path when reporting). */
function batchOf (request: FastifyRequest): Pick<RequestRecord, 'clients' | 'batchSize'> {
  const body = request.body as { clientNumbers?: unknown } | undefined
  const numbers = Array.isArray(body?.clientNumbers) ? body.clientNumbers : undefined
  if (numbers === undefined) return {}
  const clients: number[] = []
  for (const n of numbers) {
    if (clients.length === MAX_CLIENT_NUMBERS) break
    const value = typeof n === 'string' && DIGITS.test(n.trim()) ? Number(n) : n
    if (Number.isSafeInteger(value)) clients.push(value as number)
  }
  return { clients, batchSize: numbers.length }
}

/** Records the request in the open sessions that take its Client Id (see Examiner.record). */
export function examineRequest (sandbox: Sandbox, examiner: Examiner, request: FastifyRequest, answer: {
  status: number
  elapsedMs: number
  journalId: number
  /** The Client Id presented (Basic user name), checked or not. */
  clientId: string | null
  retryAfter?: unknown
}): void {
  if (!examiner.wants(answer.clientId)) return
  const { method, url } = request
  const queryAt = url.indexOf('?')
  const path = queryAt === -1 ? url : url.slice(0, queryAt)
  const routeUrl = request.routeOptions?.url
  const operation = routeUrl === undefined ? undefined : OPERATION_BY_ROUTE.get(`${method === 'HEAD' ? 'GET' : method} ${routeUrl}`)
  const realMs = sandbox.clock.realMs()
  const record: RequestRecord = {
    atMs: sandbox.clock.nowMs(),
    realMs: realMs - answer.elapsedMs,
    elapsedMs: answer.elapsedMs,
    method,
    path: path.length > MAX_PATH ? `${path.slice(0, MAX_PATH - 1)}…` : path,
    status: answer.status,
    journalId: answer.journalId
  }
  if (operation !== undefined) record.operation = operation
  if (queryAt !== -1) record.query = url.slice(queryAt + 1, queryAt + 1 + MAX_QUERY)
  // The version is read from the query when reporting, unless the query was cut.
  if (url.length - queryAt - 1 > MAX_QUERY) record.version = versionOf(url)
  if (answer.clientId !== null) record.clientId = answer.clientId
  if (request.faultId !== null) record.faultId = request.faultId
  if (request.warnings !== null && request.warnings !== undefined && request.warnings.length > 0) record.warnings = capWarnings(request.warnings)
  const retryAfterS = answer.retryAfter === undefined ? undefined : retryAfterSeconds(answer.retryAfter, realMs)
  if (retryAfterS !== undefined) record.retryAfterS = retryAfterS
  if (operation === 'batchClients') Object.assign(record, batchOf(request))
  if (operation === 'agencies' && answer.status === 200 && request.integrationId !== '' && request.integrationId !== undefined) {
    record.listedAgencies = sandbox.access.listAgencies(request.integrationId).map((a) => a.agencyId)
  }
  if (operation !== undefined && WRITE_OPERATIONS.has(operation)) {
    const writes = writeItems(operation, request.sentBody, operation === 'attachment' ? metadataHeaders(request) : undefined)
    if (writes !== undefined) record.writes = writes
  }
  examiner.record(record)
}
