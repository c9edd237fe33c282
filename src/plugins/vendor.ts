import fastifyBasicAuth from '@fastify/basic-auth'
import type { TSchema } from '@sinclair/typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Grant } from '../domain/access.js'
import type { Sandbox } from '../domain/sandbox.js'
import { invalidField, unauthorized } from '../errors.js'
import { bindKeys } from '../schemas/bind.js'
import type { Scope } from '../schemas/common.js'
import type { ApiVersion } from '../versions/index.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Client Id of the authenticated integration ('' before authentication). */
    integrationId: string
    /** The integration's grant on the path's agency, for routes with an {agencyId}. */
    grant: Grant | null
    /** Things the sandbox tolerated, such as ignored unknown keys (journaled). */
    warnings: string[] | null
  }
  interface FastifyContextConfig {
    /** Scope the agency must have granted; absent: the subscription alone suffices. */
    scope?: Scope
    /** How validation errors name a field (e.g. the spec's PascalCase for write bodies). */
    fieldName?: (field: string, context: string) => string
  }
}

const AGENCY_ID = /^\d{1,10}$/

/** What each vendor route file receives: the domain and the one version it registers. */
export interface VendorRouteOptions {
  sandbox: Sandbox
  version: ApiVersion
}

/**
 * The vendor scope's request pipeline: Basic auth (onRequest), then the agency grant and
 * scope (preValidation, so 403 comes before body errors), then case-insensitive body binding.
 */
export async function vendorPipeline(app: FastifyInstance, { sandbox }: { sandbox: Sandbox }): Promise<void> {
  app.decorateRequest('integrationId', '')
  app.decorateRequest('grant', null)
  app.decorateRequest('warnings', null)

  await app.register(fastifyBasicAuth, {
    authenticate: false,
    strictCredentials: false,
    validate(clientId, clientSecret, request, _reply, done) {
      const integration = sandbox.access.authenticate(clientId, clientSecret)
      if (integration === undefined) return done(unauthorized())
      request.integrationId = integration.clientId
      done()
    }
  })
  app.addHook('onRequest', app.basicAuth)

  app.addHook('preValidation', (request: FastifyRequest, _reply, done) => {
    try {
      bindRequest(request)
    } catch (e) {
      return done(e as Error)
    }
    done()
  })

  /** Checks the path ids, the grant and the scope, and binds the body's keys (throws an ApiError). */
  function bindRequest(request: FastifyRequest): void {
    const params = request.params as Record<string, string> | undefined
    // Path ids are plain digits: no signs, spaces, exponents or `Infinity` for coercion to bend.
    for (const name of ['agencyId', 'clientId'] as const) {
      const value = params?.[name]
      if (value !== undefined && !AGENCY_ID.test(value)) throw invalidField(name, `must be a positive whole number, got '${value.slice(0, 40)}'`)
    }
    const agencyId = params?.agencyId
    if (agencyId !== undefined) {
      const grant = sandbox.access.grant(request.integrationId, Number(agencyId))
      const scope = request.routeOptions.config.scope
      if (scope !== undefined) sandbox.access.requireScope(grant, scope)
      request.grant = grant
    }
    const bodySchema = request.routeOptions.schema?.body as TSchema | undefined
    // Ajv coerces a scalar into an array only in its own copy at the root: refuse it here.
    if (bodySchema?.type === 'array' && request.body !== undefined && !Array.isArray(request.body)) {
      throw invalidField('(body)', 'must be a JSON array')
    }
    if (bodySchema !== undefined && request.body !== undefined && request.body !== null && typeof request.body === 'object') {
      const warnings: string[] = []
      request.body = bindKeys(request.body, bodySchema, warnings)
      if (warnings.length > 0) request.warnings = warnings
    }
  }
}

/** The grant set by the pipeline; routes with {agencyId} always have one. */
export function grantOf(request: FastifyRequest): Grant {
  if (request.grant === null) throw new Error('route has no agency grant; is {agencyId} in its path?')
  return request.grant
}
