import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { FaultRule } from '../domain/faults.js'
import { capPath, pathOf } from '../domain/glob.js'
import { capWarnings, detachedCopy, MAX_BODY_TEXT, type AnswerLost, type RecordedBody } from '../domain/journal.js'
import { sentJsonText } from '../http/json-body.js'
import { versionOf } from '../versions/index.js'
import { sha256Hex as sha256 } from '../sha256.js'
import { isConsoleRequest } from './console-cookie.js'
import type { OneLineRequestLog } from './request-log.js'
import { examineRequest } from './examine.js'
import { worldOf } from './request-world.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The body as the partner sent it (before key binding), for the journal. */
    sentBody: unknown
    /** Fault rule that answered this request. */
    faultId: string | null
    /** The answer never reached the client: a fault rule dropped it, or the client closed the connection first. */
    answerLost: AnswerLost | null
    /** Recorded in the journal (and open sessions) already. */
    journaled: boolean
    /** The body is read (or there is none): the handler runs, and its answer reaches onSend. */
    bodyRead: boolean
  }
}

/** Headers never journaled. */
const PRIVATE_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'host', 'connection', 'content-length', 'user-agent', 'accept', 'accept-encoding'])

/** Vendor traffic of a partner: everything under /vendor but the web console's own reads (its cookie: console-cookie.ts). */
const isVendor = (request: FastifyRequest) => request.url.startsWith('/vendor/') && !isConsoleRequest(request)
/** The agency id the router found in the path, as sent (the vendor pipeline checks its digits). */
const agencyParam = (request: FastifyRequest): string | undefined => (request.params as { agencyId?: string } | undefined)?.agencyId
const agencyOf = (param: string | undefined): number | null => (param === undefined || !/^\d{1,10}$/.test(param) ? null : Number(param))

/** The Client Id a request claims (Basic user name), whether or not its secret is right. */
const claimedClientId = (request: FastifyRequest): string | null => request.credentials?.clientId ?? null

/** The body's size as the Content-Length header gives it, when the body was never read. */
function declaredBytes (request: FastifyRequest): RecordedBody | undefined {
  const length = Number(request.headers['content-length'])
  return length > 0 ? { about: { bytes: length, read: false } } : undefined
}

/**
 * What the journal keeps of a write's body, compactly: the JSON text (whole up to
 * MAX_BODY_TEXT characters, else its start) or a summary of a binary body, and only for
 * authenticated requests. Any other body the sandbox read is kept as its size and SHA-256;
 * one it never read (a 401, a fault answered first) as its declared size.
 */
function journalBody (request: FastifyRequest): RecordedBody | undefined {
  if (request.method === 'GET' || request.method === 'HEAD') return undefined
  const body = request.sentBody
  if (body === undefined) return declaredBytes(request)
  const authenticated = request.integrationId !== '' && request.integrationId !== undefined
  if (Buffer.isBuffer(body)) {
    if (!authenticated) return { about: { bytes: body.length, sha256: sha256(body) } }
    const headers = Object.fromEntries(Object.entries(request.headers).filter(([k]) => !PRIVATE_HEADERS.has(k)))
    return { about: { binary: true, bytes: body.length, gzip: body.length > 1 && body[0] === 0x1f && body[1] === 0x8b, sha256: sha256(body), headers } }
  }
  // the text as sent; a body our JSON parser did not read (no partner route has one now) is written out
  let text = sentJsonText(request)
  if (text === undefined) {
    try {
      text = JSON.stringify(body)
    } catch {
      return declaredBytes(request) // not representable as JSON again; the size is what is left to tell
    }
  }
  if (!authenticated) return { about: { bytes: Buffer.byteLength(text), sha256: sha256(text) } }
  if (text.length <= MAX_BODY_TEXT) return { json: text }
  return { about: { truncated: true, bytes: Buffer.byteLength(text), text: detachedCopy(text.slice(0, MAX_BODY_TEXT)) } }
}

function answerFault (request: FastifyRequest, reply: FastifyReply, rule: FaultRule): FastifyReply | undefined {
  const { effect } = rule
  request.faultId = rule.id
  if (effect.dropAnswer === true) {
    request.answerLost = 'dropped' // the request goes on; its answer is dropped when sent (recordLostAnswer)
    return undefined
  }
  if (effect.drop === true) {
    reply.hijack()
    request.raw.socket?.destroy()
    return reply
  }
  if (effect.status === undefined) return undefined
  reply.code(effect.status).headers(effect.headers ?? {})
  if (effect.body === undefined) {
    return reply.type('application/problem+json; charset=utf-8').send(JSON.stringify({
      type: 'https://agency-sandbox.dev/problems/injected-fault',
      title: 'Injected fault',
      status: effect.status,
      detail: `Answered by sandbox fault rule ${rule.id}`
    }))
  }
  return typeof effect.body === 'string' ? reply.send(effect.body) : reply.type('application/json; charset=utf-8').send(JSON.stringify(effect.body))
}

/**
 * The world's fault rules for a partner request (the request context hook calls this once the
 * request has its world, before authentication, so a fault can stand in for any answer): a rule
 * that applies answers, drops the connection or waits; `done` goes on otherwise.
 */
export function applyFaults (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
  const { world } = request
  if (!world.faults.active || !isVendor(request)) return done()
  actOnFault(request, reply, world.faults.decide(faultRequestOf(request)), done)
}

const faultRequestOf = (request: FastifyRequest) => ({
  method: request.method,
  path: capPath(pathOf(request.url)),
  version: request.routeOptions.config.apiVersion ?? versionOf(request.url),
  clientId: claimedClientId(request),
  agencyId: agencyOf(agencyParam(request))
})

function actOnFault (request: FastifyRequest, reply: FastifyReply, rule: FaultRule | undefined, done: (error?: Error) => void): void {
  if (rule === undefined) return done()
  request.faultId = rule.id // already while a delay runs: a client that leaves then is journaled with it
  const apply = () => {
    let answered: FastifyReply | undefined
    try {
      answered = answerFault(request, reply, rule)
    } catch (e) {
      return done(e as Error)
    }
    if (answered === undefined) return done()
    if (rule.effect.drop === true) record(request, 0, rule.effect.delayMs ?? 0)
    // answered: the hook chain stops here (the reply is sent or hijacked), without calling done
  }
  if (rule.effect.delayMs !== undefined && rule.effect.delayMs > 0) setTimeout(apply, rule.effect.delayMs)
  else apply()
}

/**
 * Journals the request in its world, and records it in the world's open examiner sessions that
 * take its Client Id (fault answers, 401s and 429s included); parsing its URL and formatting the
 * time wait until the journal is read, which keeps nothing of the request but its fields.
 */
function record (request: FastifyRequest, status: number, durationMs: number, retryAfter?: unknown): void {
  const { method, url, faultId, answerLost } = request
  // a request answered before its context was built (refused while PostgreSQL cannot be reached) has its world chosen now
  const world = request.world ?? worldOf(request, request.server.worlds)
  request.journaled = true
  const atMs = world.clock.nowMs()
  const integration = request.integrationId === '' || request.integrationId === undefined ? null : request.integrationId
  const warnings = request.warnings === null || request.warnings === undefined ? [] : capWarnings(request.warnings)
  const journalId = world.journal.record({
    url,
    requestId: request.id,
    method,
    version: request.apiVersion ?? versionOf(url),
    integration,
    agencyId: agencyOf(agencyParam(request)),
    status,
    durationMs,
    warnings,
    body: journalBody(request),
    fault: faultId,
    answerLost
  }, atMs)
  if (world.examiner.recording) {
    examineRequest(world, request, { atMs, status, elapsedMs: durationMs, journalId, clientId: integration ?? claimedClientId(request), warnings, retryAfter, answerLost })
  }
}

/**
 * Answers that will never arrive are recorded as they are sent, with the status they had (the
 * request context's onSend hook asks): a fault's dropAnswer (the request was handled, then its
 * connection is closed instead), and a request whose client closed the connection first
 * (the request log's completion never comes for either). False when the answer goes on as usual.
 */
export function recordLostAnswer (request: FastifyRequest, reply: FastifyReply): 'dropped' | 'recorded' | false {
  if ((request.answerLost === null && request.raw.socket?.destroyed !== true) || request.journaled || !isVendor(request)) return false
  if (request.answerLost === 'dropped') {
    record(request, reply.statusCode, reply.elapsedTime)
    reply.hijack()
    request.raw.socket?.destroy()
    return 'dropped'
  }
  request.answerLost = 'abandoned'
  record(request, reply.statusCode, reply.elapsedTime)
  return 'recorded'
}

/** When a partner request's answer is sent (or is lost): the world's request journal and examiner sessions. */
export function observeVendorTraffic (app: FastifyInstance, requestLog: OneLineRequestLog): void {
  app.decorateRequest('sentBody', undefined)
  app.decorateRequest('faultId', null)
  app.decorateRequest('answerLost', null)
  app.decorateRequest('journaled', false)
  app.decorateRequest('bodyRead', false)

  // A client that left before its body was read: the request is never handled (no body is read from
  // a closed connection), so it is recorded now, unanswered (status 0).
  app.addHook('onRequestAbort', (request, done) => {
    if (!request.journaled && !request.bodyRead && isVendor(request)) {
      request.answerLost = 'abandoned'
      record(request, 0, 0)
    }
    done()
  })

  // Every vendor request whose body was read, a route's or not (an unknown operation's 404 too).
  app.addHook('preValidation', (request, _reply, done) => {
    if (isVendor(request)) {
      request.sentBody = request.body
      request.bodyRead = true
    }
    done()
  })

  // Every answer sent, as it completes (the request log's first step, which Fastify calls then).
  requestLog.journal = (request, reply) => {
    // Only a 429's Retry-After is judged (the examiner's retry-after-ignored rule).
    if (isVendor(request) && !request.journaled) {
      record(request, reply.statusCode, reply.elapsedTime, reply.statusCode === 429 && (request.world ?? worldOf(request, request.server.worlds)).examiner.recording ? reply.getHeader('retry-after') : undefined)
    }
  }
}
