import type { Problem } from './schemas/common.js'

/**
 * The one place error answers are made. The domain throws ApiError; the HTTP layer turns it
 * into a response with `toResponse`. 401 and the agency 403 answer the documented sentences as
 * text/plain; everything else is application/problem+json.
 */

export interface FieldError {
  field: string
  message: string
}

export const MESSAGES = {
  unauthorized: 'The provided credentials are invalid',
  agencyUnavailable: 'The requested agency is not available to the vendor',
  noAgencies: 'No agencies are available to the vendor'
} as const

const PROBLEM_BASE = 'https://agency-sandbox.dev/problems/'

export class ApiError extends Error {
  constructor (
    readonly status: number,
    readonly code: string,
    readonly title: string,
    readonly detail: string,
    readonly errors?: FieldError[],
    /** Answer the detail as a text/plain sentence instead of a problem body. */
    readonly plain = false,
    readonly headers: Record<string, string> = {}
  ) {
    super(detail)
    this.name = 'ApiError'
  }
}

export const unauthorized = () =>
  new ApiError(401, 'unauthorized', 'Unauthorized', MESSAGES.unauthorized, undefined, true, {
    'www-authenticate': 'Basic realm="Agency Integration API", charset="UTF-8"'
  })

export const agencyUnavailable = () =>
  new ApiError(403, 'agency-unavailable', 'Forbidden', MESSAGES.agencyUnavailable, undefined, true)

export const scopeMissing = (scope: string) =>
  new ApiError(403, 'scope-missing', 'Forbidden',
    `The agency has not granted the ${scope} scope to this integration; grant it with PATCH /_sandbox/integrations/{clientId}/agencies/{agencyId}`)

export const clientNotFound = (clientNumber: number) =>
  new ApiError(404, 'client-not-found', 'Not Found', `Client ${clientNumber} does not exist in this agency`)

export const badRequest = (detail: string, errors?: FieldError[]) =>
  new ApiError(400, 'bad-request', 'Bad Request', detail, errors)

/** One field is wrong: a 400 naming it. */
export const invalidField = (field: string, message: string) =>
  badRequest(`${field}: ${message}`, [{ field, message }])

export const validationFailed = (errors: FieldError[]) =>
  badRequest(
    errors.length === 1 ? `${errors[0].field}: ${errors[0].message}` : `${errors.length} fields are invalid; see errors`,
    errors
  )

export const unsupportedVersion = (value: string) =>
  new ApiError(400, 'unsupported-version', 'Bad Request',
    `unsupported version '${value}'; use 4.0 or 3.0, or omit it for version 1`,
    [{ field: 'version', message: 'must be 4.0 or 3.0, or omitted for version 1' }])

/** `version` given more than once with different values: ASP.NET API Versioning's AmbiguousApiVersion. */
export const ambiguousVersion = (values: readonly string[]) =>
  new ApiError(400, 'ambiguous-version', 'Bad Request',
    `ambiguous version: the request gives version ${values.map((v) => `'${v}'`).join(' and ')}; give it once (4.0 or 3.0, or omit it for version 1)`,
    [{ field: 'version', message: 'must be given once (or repeated with the same value)' }])

export const routeNotFound = (method: string, path: string, hint?: string) =>
  new ApiError(404, 'not-found', 'Not Found', `No operation ${method} ${path}${hint === undefined ? '' : `; ${hint}`}`)

export const notFound = (detail: string) => new ApiError(404, 'not-found', 'Not Found', detail)

export const conflict = (detail: string) => new ApiError(409, 'conflict', 'Conflict', detail)

/**
 * A world deleted (or expired) while a request to it was handled: to a partner request the world's
 * credentials answer 401, as they do from then on; to a control request the world is a 404.
 */
export const worldDeleted = (worldId: string, partner = false): ApiError => partner
  ? unauthorized()
  : notFound(`No world ${worldId.slice(0, 40)}: it was deleted (or expired) while this request was handled; nothing more was applied to it`)

/** The final report of a session that has not ended (it would be provisional, and unsigned). */
export const sessionStillOpen = (id: number) =>
  conflict(`Session ${id} is still open: its report so far is provisional and unsigned; end it first (POST …/sessions/${id}/end)`)

export const tooManyRequests = (detail: string, retryAfterSeconds: number) =>
  new ApiError(429, 'too-many-requests', 'Too Many Requests', detail, undefined, false, {
    'retry-after': String(retryAfterSeconds)
  })

export const insufficientStorage = (detail: string) => new ApiError(507, 'insufficient-storage', 'Insufficient Storage', detail)

const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`

/**
 * A write, reset or load that would take a world's data past its bound: nothing was applied.
 * `fix`: how to make room (a created world's, or the default world's).
 */
export const worldBoundReached = (worldId: string, held: number, wanted: number, maxBytes: number, fix: string) =>
  new ApiError(507, 'world-bound-reached', 'Insufficient Storage',
    `World ${worldId} holds ${held} bytes (${mib(held)}) of the ${maxBytes} (${mib(maxBytes)}) its bound allows (maxBytes), ` +
    `and this request would take it to ${wanted} bytes; nothing was applied. ${fix}`)

/** A write, reset, load or new world that would take the worlds of the process past the bound on them all: nothing was applied. */
export const worldsBoundReached = (held: number, wanted: number, maxBytes: number, fix: string) =>
  new ApiError(507, 'worlds-bound-reached', 'Insufficient Storage',
    `The worlds of this sandbox hold ${held} bytes (${mib(held)}) of the ${maxBytes} (${mib(maxBytes)}) they may take together ` +
    `(SANDBOX_WORLDS_MAX_BYTES), and this request would take them to ${wanted} bytes; nothing was applied. ${fix}`)

export const payloadTooLarge = (detail: string) => new ApiError(413, 'payload-too-large', 'Payload Too Large', detail)

export const headersTooLarge = (maxBytes: number) =>
  new ApiError(431, 'header-fields-too-large', 'Request Header Fields Too Large',
    `The request line and headers are larger than the ${Math.round(maxBytes / 1024)} KiB this server reads; send fewer or shorter headers`)

export const requestTimeout = () =>
  new ApiError(408, 'request-timeout', 'Request Timeout', 'The request did not arrive in time; send it again')

export const malformedRequest = () =>
  new ApiError(400, 'malformed-request', 'Bad Request', 'The request is not valid HTTP/1.1 (request line, headers or framing)')

export const emptyJsonBody = () => badRequest('The body is empty; send a JSON document', [{ field: '(body)', message: 'is required' }])

export const invalidJson = (reason: string) =>
  badRequest(`The body is not valid JSON: ${reason}`, [{ field: '(body)', message: 'must be valid JSON' }])

export const jsonTooDeep = (maxDepth: number) =>
  badRequest(`The JSON nests objects and arrays more than ${maxDepth} levels deep; at most ${maxDepth} levels are accepted`,
    [{ field: '(body)', message: `must not nest objects and arrays more than ${maxDepth} levels deep` }])

export const jsonTooManyValues = (maxValues: number) =>
  badRequest(`The JSON holds more than ${maxValues} values (objects, arrays and items); this endpoint accepts at most ${maxValues}`,
    [{ field: '(body)', message: `must hold at most ${maxValues} values` }])

export const unsupportedMediaType = (detail: string) =>
  new ApiError(415, 'unsupported-media-type', 'Unsupported Media Type', detail)

export const shuttingDown = () =>
  new ApiError(503, 'shutting-down', 'Service Unavailable', 'The sandbox is shutting down; work in progress was stopped: send the request again in a moment (to another instance, or to this one once it is back)',
    undefined, false, { 'retry-after': '1' })

/** A request that arrived after the instance began to drain (SIGTERM): not handled. */
export const draining = () =>
  new ApiError(503, 'shutting-down', 'Service Unavailable', 'The sandbox is shutting down and takes no new requests; nothing was applied: send the request again in a moment (to another instance, or to this one once it is back)',
    undefined, false, { 'retry-after': '1', connection: 'close' })

/** A request still in flight when the drain's time was up: answered so, whatever it was doing. */
export const drainTimeUp = (seconds: number) => {
  const detail = `The sandbox is shutting down and this request was not done within the ${seconds} s it gives requests in flight (SANDBOX_DRAIN_SECONDS): ` +
    'a write it made may or may not have been applied; read before sending it again (a write with a RefId: retry with the same RefId)'
  return new ApiError(503, 'shutting-down', 'Service Unavailable', detail, undefined, false, { 'retry-after': '1', connection: 'close' })
}

/** A worker process (fixture bodies) ended before it answered, killed or crashed: nothing was applied. */
export const workerStopped = (worker: string, how: string) =>
  new ApiError(503, 'worker-stopped', 'Service Unavailable', `The sandbox's ${worker} stopped (${how}) before it answered; nothing was applied: send the request again`, undefined, false, { 'retry-after': '1' })

/** The shared database (hosted mode) cannot be reached or failed a write: nothing was applied. */
export const storageUnavailable = (detail: string) =>
  new ApiError(503, 'storage-unavailable', 'Service Unavailable', detail, undefined, false, { 'retry-after': '1' })

/** What a caller whose write may or may not have been applied should do before sending it again. */
export type RetryAdvice = 'same-ref-id' | 'look-for-client' | 'check-first'

const RETRY_ADVICE: Record<RetryAdvice, string> = {
  'same-ref-id': 'retry with the same RefId (the sandbox applies a RefId once)',
  'look-for-client': 'the client may have been created: look for it before creating it again ' +
    '(GET /vendor/agency/{agencyId}/clients?asOf=<a time before your request> lists the clients changed since)',
  'check-first': 'the change may have been made: read what it changes (GET) before sending it again'
}

/** A 503 that says the outcome of a write is unknown (src/db/postgres/outcomes.ts): never that nothing was applied. */
export class OutcomeUnknownAnswer extends ApiError {
  constructor (readonly reason: string, readonly advice: RetryAdvice) {
    super(503, 'outcome-unknown', 'Service Unavailable', `The sandbox's database: ${reason}: outcome unknown; ${RETRY_ADVICE[advice]}`,
      undefined, false, { 'retry-after': '1' })
  }
}

/**
 * What a step that needed PostgreSQL failed with: a refusal (a bound reached) as it is; a write
 * whose outcome could not be learnt (outcomes.ts, OutcomeUnknown), a 503 saying so, with `advice`
 * for the request it answers; anything else, a 503 saying that nothing was applied, which is then
 * known (a commit's lost answer is resolved first).
 */
export const storageUnreachable = (e: unknown, advice?: RetryAdvice): ApiError => {
  if (e instanceof OutcomeUnknownAnswer) return advice === undefined || advice === e.advice ? e : new OutcomeUnknownAnswer(e.reason, advice)
  if (e instanceof ApiError) return e
  const message = e instanceof Error ? e.message : String(e)
  // by name: the PostgreSQL modules (outcomes.ts) load only in hosted mode
  if (e instanceof Error && e.name === 'OutcomeUnknown') return new OutcomeUnknownAnswer(message, advice ?? 'check-first')
  if (e instanceof Error && e.name === 'NotApplied') return storageUnavailable(`The sandbox's database: ${message}. Nothing was applied; retry in a moment`)
  return storageUnavailable(`The sandbox's database (PostgreSQL) cannot be reached: ${message}. Nothing was applied; retry in a moment`)
}

/** Hosted mode: a write whose append to its world's log is known not to have happened. */
export const writeNotApplied = (reason: string) =>
  storageUnavailable(`The write did not reach the sandbox's database (PostgreSQL): ${reason}. Nothing was applied; retry in a moment`)

/** Hosted mode: the world's owner cannot answer now (it is being taken over, or PostgreSQL cannot be reached). */
export const worldUnavailable = (worldId: string, reason: string) =>
  storageUnavailable(`World ${worldId} cannot be served at the moment (${reason}); retry in a moment`)

export const internalError = () =>
  new ApiError(500, 'internal', 'Internal Server Error', 'The sandbox failed to handle this request; see its log')

export function problemBody (err: ApiError): Problem {
  const body: Problem = { type: PROBLEM_BASE + err.code, title: err.title, status: err.status, detail: err.detail }
  if (err.errors !== undefined && err.errors.length > 0) body.errors = err.errors
  return body
}

/** Everything the HTTP layer needs to answer an ApiError. */
export function toResponse (err: ApiError): { status: number; contentType: string; headers: Record<string, string>; body: string } {
  if (err.plain) {
    return { status: err.status, contentType: 'text/plain; charset=utf-8', headers: err.headers, body: err.detail }
  }
  return {
    status: err.status,
    contentType: 'application/problem+json; charset=utf-8',
    headers: err.headers,
    body: JSON.stringify(problemBody(err))
  }
}

/** A control-plane request under a Host name this sandbox does not answer to (DNS rebinding). */
export const misdirectedHost = (host: string) =>
  new ApiError(421, 'misdirected-host', 'Misdirected Request',
    `This sandbox's control API does not answer to the host name '${host}': it answers loopback names (localhost), IP addresses ` +
    `and the names listed in SANDBOX_ALLOWED_HOSTS (serve --allowed-hosts); add '${host}' there if the sandbox is served under that name`,
    [{ field: 'Host', message: `'${host}' is not among SANDBOX_ALLOWED_HOSTS` }])

/** A control-plane request a page of another origin made (cross-site request forgery). */
export const crossSiteRequest = (from: string) =>
  new ApiError(403, 'cross-site-request', 'Forbidden',
    `The control API answers only its own pages and programs that are not browsers; this request came from ${from}. ` +
    'Call it from your tests or a terminal, or use the console this sandbox serves at /_sandbox/ui')

/** A state-changing control request from a browser that could have come from any page. */
export const controlNeedsJson = () =>
  unsupportedMediaType('A browser request that changes the sandbox must be sent with Content-Type: application/json ' +
    '(an empty body is fine) or with an X-Sandbox-Console header, which no other site\'s page can send without asking first')

/** Create client in an agency whose client numbers have reached the largest a client number can be. */
export const clientNumbersExhausted = (agencyId: number) =>
  conflict(`Agency ${agencyId} has no client numbers left: a new client takes the agency's highest number + 1, and its highest is ` +
    '2147483647, the largest a client number can be (a 32-bit integer); reset the sandbox to a fixture whose client numbers leave room')

/** A tenant's token on a route of the default world or of the process, which belong to the programme's administrator. */
export const tenantTokenOnDefaultWorld = () =>
  new ApiError(403, 'tenant-token', 'Forbidden',
    "A tenant's token opens only the worlds the tenant created: call /_sandbox/worlds/{id}/... for one of them " +
    '(POST /_sandbox/worlds creates one, GET /_sandbox/worlds lists them); the unprefixed routes are the default world\'s, ' +
    "which only the sandbox's control token (SANDBOX_CONTROL_TOKEN) opens")

/** A tenant's or a world's token on the tenants' routes, which only the programme's administrator may call. */
export const tenantRoutesNeedAdministrator = (holder: 'tenant' | 'world') =>
  new ApiError(403, 'administrator-only', 'Forbidden',
    'Tenants are managed with the sandbox\'s control token (SANDBOX_CONTROL_TOKEN), held by the programme\'s administrator; ' +
    (holder === 'tenant'
      ? "a tenant's token creates and controls its own worlds only (/_sandbox/worlds)"
      : "a world's token opens only that world's routes (/_sandbox/worlds/{id}/...)"))

/** A tenant holds as many worlds as its quota allows. */
export const tenantQuotaReached = (tenantId: string, maxWorlds: number, held = maxWorlds) =>
  conflict(`Tenant ${tenantId} holds ${held} worlds, ${held > maxWorlds ? 'more than ' : ''}its quota (maxWorlds ${maxWorlds}); DELETE /_sandbox/worlds/{id} a world it ` +
    'no longer needs (GET /_sandbox/worlds lists them), or ask the programme\'s administrator to raise the quota: ' +
    `PATCH /_sandbox/tenants/${tenantId} {"maxWorlds": N} with the sandbox's control token`)

/** The sandbox holds as many tenants as it may. */
export const tooManyTenants = (maxTenants: number) =>
  conflict(`This sandbox holds ${maxTenants} tenants, its most; DELETE /_sandbox/tenants/{id} the tenants you no longer need`)

export const tenantNotFound = (tenantId: string) =>
  notFound(`No tenant ${tenantId.slice(0, 40)}; GET /_sandbox/tenants lists the tenants`)
