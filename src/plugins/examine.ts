import type { FastifyRequest } from 'fastify'
import { HEADER_NAMES } from '../versions/attachment-headers.js'
import type { RequestRecord } from '../domain/examiner/codec.js'
import type { AnswerLost } from '../domain/journal.js'
import { writeItems } from '../domain/examiner/records.js'
import type { World } from '../domain/worlds/world.js'

/**
 * What an examiner session records of a vendor request, taken from Fastify's request at the
 * journal's recording points (observe.ts): called only while a session is open.
 */

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

/** A listing of changed clients: its record carries where it arrived among the records (Examiner.arrival). */
export const isListing = (operation: string | undefined): boolean => operation === 'changedClients'

/** Records the request in the world's open sessions that take its Client Id (see Examiner.record). */
export function examineRequest (world: World, request: FastifyRequest, answer: {
  /** Sandbox clock at the answer, as the journal took it. */
  atMs: number
  status: number
  elapsedMs: number
  journalId: number
  /** The Client Id presented (Basic user name), checked or not. */
  clientId: string | null
  /** As the journal keeps them (capped). */
  warnings: string[]
  retryAfter?: unknown
  /** The answer never reached the client (journal.ts). */
  answerLost?: AnswerLost | null
}): void {
  const { examiner } = world
  if (!examiner.wants(answer.clientId)) return
  // Set by the vendor pipeline; a request answered before it (a fault, a 401) reads its route.
  const operation = request.operation ?? request.routeOptions?.config?.operation
  const realMs = world.clock.realMs()
  // Every field in the literal, absent ones undefined: one object shape for every request.
  const record: RequestRecord = {
    atMs: answer.atMs,
    realMs: realMs - answer.elapsedMs,
    elapsedMs: answer.elapsedMs,
    method: request.method,
    url: request.url,
    status: answer.status,
    journalId: answer.journalId,
    operation,
    clientId: answer.clientId ?? undefined,
    faultId: request.faultId ?? undefined,
    warnings: answer.warnings.length > 0 ? answer.warnings : undefined,
    retryAfterS: answer.retryAfter === undefined ? undefined : retryAfterSeconds(answer.retryAfter, realMs),
    answerLost: answer.answerLost ?? undefined,
    // a listing holds what was committed by the time its handler read the agency: changes after its arrival are not expected of the partner
    arrivedAt: isListing(operation) ? request.examinerArrival ?? undefined : undefined
  }
  if (operation === 'batchClients') Object.assign(record, batchOf(request))
  if (operation === 'agencies' && answer.status === 200 && request.integrationId !== '' && request.integrationId !== undefined) {
    record.listedAgencies = world.access.listAgencies(request.integrationId).map((a) => a.agencyId)
  }
  if (operation !== undefined && WRITE_OPERATIONS.has(operation)) {
    const writes = writeItems(operation, request.sentBody, operation === 'attachment' ? metadataHeaders(request) : undefined)
    if (writes !== undefined) record.writes = writes
  }
  examiner.record(record)
}
