import { Type, type TSchema } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchemaCompiler } from 'fastify'
import type { Grant } from '../domain/access.js'
import { badRequest, invalidField, unauthorized } from '../errors.js'
import { bindPart, liveSentenceAt, type BindingFault, type RequestPart } from '../schemas/bind.js'
import { toApiError } from './errors.js'
import { lazyValidatorFactory, VALIDATOR_OPTIONS } from './lazy-validators.js'
import { checkPlainIntegers } from './plain-integers.js'
import { sendEncodedAnswers } from './send-bytes.js'
import type { Scope } from '../schemas/common.js'
import type { ApiVersion } from '../versions/index.js'
import type { OperationId } from '../versions/operations.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Client Id of the authenticated integration ('' before authentication). */
    integrationId: string
    /** The integration's grant on the path's agency, for routes with an {agencyId}. */
    grant: Grant | null
    /** Things the sandbox tolerated, such as ignored unknown keys (journaled). */
    warnings: string[] | null
    /** The route's operation, once the pipeline has checked access (null before, or off the table's routes). */
    operation: OperationId | null
    /** The route's API version, once the pipeline has checked access (undefined before, or off the table's routes). */
    apiVersion: ApiVersion | undefined
  }
  interface FastifyContextConfig {
    /** The operation a partner-API route serves. */
    operation?: OperationId
    /** The API version of the route (the router chose it by the version parameter). */
    apiVersion?: ApiVersion
    /** How validation errors name a field (e.g. the spec's PascalCase for write bodies). */
    fieldName?: (field: string, context: string) => string
  }
}

const AGENCY_ID = /^\d{1,10}$/

/** The query schema of a route that takes no parameters: every one it is sent is ignored, with a warning. */
const NO_PARAMETERS = Type.Object({}, { additionalProperties: false })

type Compile = (route: unknown) => unknown
/** Validator compilers of every vendor scope, made once: bodies without type coercion, text parts with it. */
let compilers: { body: Compile, text: Compile } | undefined

/**
 * Vendor validators: bodies are validated without Ajv's type coercion (`true`, `[29]` or `"0x1d"`
 * for an integer is refused, not bent into 1 or 29): the binder has already converted what the
 * live service accepts (`"29"`). Query, path and headers are text the schemas type, so their
 * validators convert it. Each compiles on a route's first use (lazy-validators.ts).
 */
const vendorValidatorCompiler = ((route: { httpPart?: string }) => {
  compilers ??= {
    body: lazyValidatorFactory()({}, { customOptions: { ...VALIDATOR_OPTIONS, coerceTypes: false } }),
    text: lazyValidatorFactory()({}, { customOptions: VALIDATOR_OPTIONS })
  }
  return (route.httpPart === 'body' ? compilers.body : compilers.text)(route)
}) as unknown as FastifySchemaCompiler<unknown>

type ValidationError = Parameters<typeof toApiError>[0]

/**
 * A validation error whose failing field the live service answers with a known sentence (see
 * markLiveSentence) as a 400 with that sentence as its detail and the fields as usual; undefined
 * for any other error (the app's error handler answers it).
 */
function withLiveSentence (error: ValidationError, request: FastifyRequest): Error | undefined {
  const context = error.validationContext
  const partSchema = context === undefined ? undefined : (request.routeOptions.schema as Record<string, TSchema> | undefined)?.[context]
  if (error.validation === undefined || context === undefined || partSchema === undefined) return undefined
  const sentence = error.validation
    .map((e) => liveSentenceAt(partSchema, e.keyword === 'required' ? `${e.instancePath}/${String(e.params.missingProperty)}` : e.instancePath))
    .find((s) => s !== undefined)
  if (sentence === undefined) return undefined
  const rename = request.routeOptions.config.fieldName
  const errors = (toApiError(error).errors ?? []).map((e) => ({ ...e, field: rename === undefined ? e.field : rename(e.field, context) }))
  return badRequest(errors.length === 1 ? sentence : `${sentence}; ${errors.length} fields are invalid; see errors`, errors)
}

/** Binding faults as a validation error of the request part, named like the validator's (and renamed by the route's fieldName). */
function refuse (faults: BindingFault[], part: RequestPart): void {
  if (faults.length === 0) return
  throw Object.assign(new Error(`the request's ${part} does not bind`), {
    statusCode: 400,
    validationContext: part,
    validation: faults.map((f) => ({ instancePath: f.pointer, keyword: 'binding', message: f.message, params: {} }))
  })
}

/** What a vendor route's hooks know of it: the registration loop gives it, so nothing is looked up per request. */
export interface VendorRoute {
  operation: OperationId
  apiVersion: ApiVersion
  /** Scope the agency must have granted; absent: the subscription alone suffices. */
  scope?: Scope
  schema: { params?: TSchema, querystring?: TSchema, body?: TSchema, headers?: TSchema }
  /** Reshapes the raw body before binding (3.0/4.0 batch reads: a bare array of numbers). */
  reshapeBody?: (body: unknown) => unknown
}

type Hook = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => void

/** A hook running `step`, which throws the request's refusal. */
const hookOf = (step: (request: FastifyRequest) => void): Hook => (request, _reply, done) => {
  try {
    step(request)
  } catch (e) {
    return done(e as Error)
  }
  done()
}

/**
 * The vendor scope's shared parts: request decorations, validators, the answer to validation
 * errors, and sending encoded answers as they are (send-bytes.ts). Each route's own steps are
 * vendorRouteHooks'.
 */
export async function vendorPipeline (app: FastifyInstance): Promise<void> {
  app.decorateRequest('integrationId', '')
  app.decorateRequest('grant', null)
  app.decorateRequest('warnings', null)
  app.decorateRequest('operation', null)
  app.decorateRequest('apiVersion', undefined)

  app.setValidatorCompiler(vendorValidatorCompiler)
  // Validation errors the live service answers with a known sentence; the app's handler answers the rest.
  app.setErrorHandler((error: ValidationError, request) => {
    throw withLiveSentence(error, request) ?? error
  })
  sendEncodedAnswers(app)
}

/**
 * A vendor route's request pipeline: the credentials (decoded once with the request's world, see
 * request-context.ts) checked against the world's integrations, then the path ids, the agency
 * grant and the scope (onRequest: a caller without access is answered before its body is even
 * read, so 401 and 403 come before body errors and a refused caller cannot make the sandbox parse
 * megabytes), then binding the query, body and headers as the live service's .NET binder does
 * (src/schemas/bind.ts), then validation.
 */
export function vendorRouteHooks (route: VendorRoute): { onRequest: Hook, preValidation: Hook } {
  const { schema } = route
  const querySchema = schema.querystring ?? NO_PARAMETERS

  /** Checks the credentials, the path ids, the grant and the scope (throws a 401, 400 or 403); notes the operation and version. */
  function checkAccess (request: FastifyRequest): void {
    request.operation = route.operation
    request.apiVersion = route.apiVersion
    const { credentials, world } = request
    const integration = credentials === null ? undefined : world.access.authenticate(credentials.clientId, credentials.secret)
    if (integration === undefined) throw unauthorized()
    request.integrationId = integration.clientId
    const params = request.params as Record<string, string> | undefined
    // Path ids are plain digits: no signs, spaces, exponents or `Infinity` for coercion to bend.
    for (const name of ['agencyId', 'clientId'] as const) {
      const value = params?.[name]
      if (value !== undefined && !AGENCY_ID.test(value)) throw invalidField(name, `must be a positive whole number, got '${value.slice(0, 40)}'`)
    }
    const agencyId = params?.agencyId
    if (agencyId !== undefined) {
      const grant = world.access.grant(request.integrationId, Number(agencyId))
      if (route.scope !== undefined) world.access.requireScope(grant, route.scope)
      request.grant = grant
    }
  }

  /** Binds the query, body and headers as the live service's binder does (throws a 400); the body as sent is kept for the journal by observe.ts. */
  function bindRequest (request: FastifyRequest): void {
    const warnings: string[] = []

    const query = bindPart(request.query, querySchema, 'querystring', warnings)
    refuse(query.faults, 'querystring')
    request.query = query.value
    checkPlainIntegers(request, schema)

    if (route.reshapeBody !== undefined) request.body = route.reshapeBody(request.body)
    const bodySchema = schema.body
    // Ajv coerces a scalar into an array only in its own copy at the root: refuse it here.
    if (bodySchema?.type === 'array' && request.body !== undefined && !Array.isArray(request.body)) {
      throw invalidField('(body)', 'must be a JSON array')
    }
    if (bodySchema !== undefined && request.body !== undefined && request.body !== null && typeof request.body === 'object') {
      const body = bindPart(request.body, bodySchema, 'body', warnings)
      refuse(body.faults, 'body')
      request.body = body.value
    }

    const headersSchema = schema.headers
    if (headersSchema !== undefined) {
      const headers = bindPart(request.headers, headersSchema, 'headers', warnings)
      refuse(headers.faults, 'headers')
      // canonical spellings (an enumeration's) replace what was sent; other headers stay as they are
      for (const [name, value] of Object.entries(headers.value as Record<string, string>)) {
        if (request.headers[name] !== value) request.headers[name] = value
      }
    }
    if (warnings.length > 0) request.warnings = warnings
  }

  return { onRequest: hookOf(checkAccess), preValidation: hookOf(bindRequest) }
}

/** The grant set by the pipeline; routes with {agencyId} always have one. */
export function grantOf (request: FastifyRequest): Grant {
  if (request.grant === null) throw new Error('route has no agency grant; is {agencyId} in its path?')
  return request.grant
}
