import { maxHeaderSize, STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import {
  ambiguousVersion, ApiError, badRequest, emptyJsonBody, headersTooLarge, internalError, invalidJson, malformedRequest, payloadTooLarge, requestTimeout,
  routeNotFound, toResponse, unauthorized,
  unsupportedMediaType, unsupportedVersion, validationFailed, worldDeleted, type FieldError
} from '../errors.js'
import { distinctVersions, rawVersion, versionOf, UNSUPPORTED } from '../versions/index.js'
import { sandboxDate } from '../http/date-header.js'

interface AjvError {
  instancePath: string
  keyword: string
  message?: string
  params: Record<string, unknown>
  parentSchema?: { description?: string }
}

/** `/People/1/FirstName` → `People[1].FirstName` */
function jsonPath (instancePath: string, context: string, prefix = ''): string {
  const parts = instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
  let out = prefix
  for (const p of parts) out = /^\d+$/.test(p) ? `${out}[${p}]` : out === '' ? p : `${out}.${p}`
  return out === '' ? (context === 'body' ? '(body)' : context) : out
}

const TYPE_NAMES: Record<string, string> = {
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  object: 'a JSON object',
  array: 'a JSON array',
  null: 'null'
}

function describe (e: AjvError): { sub?: string; message: string } {
  const p = e.params
  switch (e.keyword) {
    case 'required':
      return { sub: String(p.missingProperty), message: 'is required' }
    case 'additionalProperties':
      return { sub: String(p.additionalProperty), message: 'is not a known field' }
    case 'type':
      return { message: `must be ${String(p.type).split(',').map((t) => TYPE_NAMES[t] ?? t).join(' or ')}` }
    case 'maxLength':
      return { message: `must be at most ${String(p.limit)} characters` }
    case 'minLength':
      return { message: Number(p.limit) === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters` }
    case 'maxItems':
      return { message: `must have at most ${String(p.limit)} items` }
    case 'minItems':
      return { message: `must have at least ${String(p.limit)} item${Number(p.limit) === 1 ? '' : 's'}` }
    case 'maximum':
    case 'minimum':
    case 'exclusiveMaximum':
    case 'exclusiveMinimum':
      return { message: `must be ${String(p.comparison)} ${String(p.limit)}` }
    case 'pattern':
    case 'format':
      return { message: e.parentSchema?.description === undefined ? `has an invalid format (${e.message ?? ''})` : `must be ${e.parentSchema.description}` }
    case 'enum':
      return { message: `must be one of ${(p.allowedValues as unknown[]).join(', ')}` }
    case 'uniqueItems':
      return { message: 'must not repeat items' }
    default:
      return { message: e.message ?? 'is invalid' }
  }
}

/**
 * Field errors listed in one answer at most: ASP.NET MVC's MaxModelValidationErrors default. A
 * body of many bad items (a long array of `{}`) must not make an answer, or the work to build it,
 * grow with the body.
 */
export const MAX_FIELD_ERRORS = 200
/** Validator errors read to find them (a field can have several, e.g. one per union member). */
const MAX_ERRORS_READ = MAX_FIELD_ERRORS * 10

/** Turns ajv errors into field errors: one per field, unions of literals as "must be one of …". */
export function fieldErrors (errors: AjvError[], context: string): FieldError[] {
  const byPath = new Map<string, AjvError[]>()
  for (const e of errors.length > MAX_ERRORS_READ ? errors.slice(0, MAX_ERRORS_READ) : errors) {
    const list = byPath.get(e.instancePath)
    if (list === undefined) byPath.set(e.instancePath, [e])
    else list.push(e)
  }
  const out: FieldError[] = []
  const seen = new Set<string>()
  for (const [instancePath, list] of byPath) {
    const consts = list.filter((e) => e.keyword === 'const')
    const union = list.find((e) => e.keyword === 'anyOf')
    let chosen: { field: string; message: string }[]
    if (union !== undefined && consts.length > 0) {
      const allowed = consts.map((e) => JSON.stringify(e.params.allowedValue)).join(', ')
      chosen = [{ field: jsonPath(instancePath, context), message: `must be one of ${allowed}` }]
    } else {
      chosen = list
        .filter((e) => e.keyword !== 'anyOf' || list.length === 1)
        .map((e) => {
          const d = describe(e)
          const base = jsonPath(instancePath, context)
          const field = d.sub === undefined ? base : base === '(body)' || base === context ? d.sub : jsonPath(`${instancePath}/${d.sub}`, context)
          return { field, message: d.message }
        })
    }
    for (const c of chosen) {
      const key = `${c.field}\u0000${c.message}`
      if (!seen.has(key)) {
        seen.add(key)
        out.push(c)
        if (out.length === MAX_FIELD_ERRORS) return out
      }
    }
  }
  return out
}

/** What the error answer may say about the request it refuses. */
export interface RequestFacts {
  contentType?: string
  bodyLimit?: number
}

/** `application/json; charset=utf-8` → `application/json` (printable, at most 100 characters). */
const mediaType = (header: string | undefined) =>
  (header ?? '').split(';')[0].trim().replace(/[^\x21-\x7e]/g, '?').slice(0, 100)

const sizeText = (bytes: number) =>
  bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`

/** Maps any error to the one body shape of src/errors.ts. */
export function toApiError (err: FastifyError & { validation?: AjvError[]; validationContext?: string }, facts: RequestFacts = {}): ApiError {
  if (err instanceof ApiError) return err
  if (err.validation !== undefined) {
    const errors = fieldErrors(err.validation, err.validationContext ?? 'body')
    return errors.length < MAX_FIELD_ERRORS
      ? validationFailed(errors)
      : badRequest(`${MAX_FIELD_ERRORS} or more fields are invalid; the first ${MAX_FIELD_ERRORS} are listed`, errors)
  }
  const status = err.statusCode ?? 500
  if (status === 401) return unauthorized()
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE': {
      const type = mediaType(facts.contentType)
      return unsupportedMediaType(`Content-Type ${type === '' ? '(none)' : type} is not accepted here; send application/json`)
    }
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return payloadTooLarge(facts.bodyLimit === undefined
        ? 'The request body is larger than this endpoint accepts'
        : `The request body is larger than the ${sizeText(facts.bodyLimit)} this endpoint accepts`)
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return emptyJsonBody()
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case undefined:
      if (err instanceof SyntaxError || err.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
        return invalidJson(err.message)
      }
  }
  if (status >= 400 && status < 500) return new ApiError(status, 'client-error', STATUS_CODES[status] ?? 'Bad Request', err.message)
  return internalError()
}

export function sendError (reply: FastifyReply, err: ApiError): FastifyReply {
  const r = toResponse(err)
  return reply.code(r.status).headers(r.headers).type(r.contentType).send(r.body)
}

/** Error and not-found handling for the whole app. */
export function registerErrorHandling (app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    // whatever failed, a world deleted (or expired) while the request was handled answers as deleted (its database is closed)
    if (request.world?.deleted === true && request.routeOptions.config?.removesWorld !== true) return sendError(reply, worldDeleted(request.world.id, request.url.startsWith('/vendor/')))
    let err = toApiError(error, { contentType: request.headers['content-type'], bodyLimit: request.routeOptions.bodyLimit })
    const rename = request.routeOptions.config?.fieldName
    const context = (error as { validationContext?: string }).validationContext
    if (rename !== undefined && context !== undefined && err.errors !== undefined) {
      err = validationFailed(err.errors.map((e) => ({ ...e, field: rename(e.field, context) })))
    }
    // a failure of the sandbox is logged; a bound a caller reached (507) is its answer, not a failure
    if (err.status >= 500 && err.status !== 507) request.log.error({ err: error }, 'request failed')
    // A streamed body cut off at the limit: Fastify asks to close the connection, and closing it
    // while the client still sends makes the kernel reset it, which can discard the 413 before the
    // client reads it. Kept open instead, the rest of the body is read and dropped (never kept)
    // until it ends or the request timeout (60 s) passes, and the client reads its 413.
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' && request.headers['content-length'] === undefined) reply.removeHeader('connection')
    return sendError(reply, err)
  })
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const url = request.url
    const path = url.split('?')[0]
    if (path.startsWith('/vendor/') && versionOf(url) === UNSUPPORTED) {
      const given = distinctVersions(url)
      return sendError(reply, given.length > 1 ? ambiguousVersion(given) : unsupportedVersion(rawVersion(url) ?? ''))
    }
    const hint = path.startsWith('/vendor/')
      ? `version ${versionOf(url)} has no such operation (see the version matrix in the README)`
      : undefined
    return sendError(reply, routeNotFound(request.method, path, hint))
  })
}

/**
 * Answers requests the HTTP parser refused before any route saw them (headers too large,
 * malformed framing, a request that took too long) with a problem body like every other error,
 * then closes the connection: the parser cannot resume after such an error. Fastify calls it
 * with the app as `this`.
 */
export function clientErrorHandler (this: FastifyInstance, err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const problem = err.code === 'HPE_HEADER_OVERFLOW'
    ? headersTooLarge(maxHeaderSize)
    : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? requestTimeout()
      : malformedRequest()
  const r = toResponse(problem)
  if (!socket.writable) {
    socket.destroy()
    return
  }
  const head = [`HTTP/1.1 ${r.status} ${problem.title}`, `Date: ${sandboxDate(this)}`, `Content-Type: ${r.contentType}`,
    `Content-Length: ${Buffer.byteLength(r.body)}`, 'X-Content-Type-Options: nosniff', 'Connection: close']
  socket.end(`${head.join('\r\n')}\r\n\r\n${r.body}`, () => socket.destroy())
}
