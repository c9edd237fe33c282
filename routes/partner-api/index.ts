import type { TSchema } from '@sinclair/typebox'
import type { FastifyInstance, RouteHandlerMethod, RouteOptions } from 'fastify'
import type { ApiVersion } from '../../src/versions/index.js'
import { OPERATIONS, operationsOf, type OperationId } from '../../src/versions/operations.js'
import { agencyHandlers } from './agencies.js'
import { clientHandlers } from './clients.js'
import type { OperationHandler } from './operation.js'
import { vendorRouteHooks } from '../../src/plugins/vendor.js'
import { writeHandlers } from './writes.js'

/** Every operation's handler, by operation id. */
const HANDLERS: { readonly [K in OperationId]: OperationHandler<K> } = { ...agencyHandlers, ...clientHandlers, ...writeHandlers }

/** What the partner-API scope of one version receives. */
export interface PartnerApiOptions {
  version: ApiVersion
}

/**
 * The partner API of one version: each operation of the table (src/versions/operations.ts) that
 * the version has, registered once with the version's constraint, URL, scope and schemas.
 */
export default async function partnerApiRoutes (app: FastifyInstance, { version }: PartnerApiOptions): Promise<void> {
  for (const id of operationsOf(version)) await registerOperation(app, id, version)
}

/** The schema parts that are set (Fastify and the OpenAPI generator read a present key as a schema). */
function definedParts (parts: Record<string, TSchema | string | Record<number, TSchema> | undefined>) {
  return Object.fromEntries(Object.entries(parts).filter(([, value]) => value !== undefined))
}

async function registerOperation<K extends OperationId> (app: FastifyInstance, id: K, version: ApiVersion): Promise<void> {
  const operation = OPERATIONS[id]
  const binding = operation.versions[version]
  if (binding === undefined) return
  const route = HANDLERS[id]({ version, mapping: binding.mapping })
  const { bindBody } = binding
  const { checkBody } = route
  // the route's check of the raw body first, then the version's reshaping of it
  const reshapeBody = checkBody === undefined
    ? bindBody
    : (body: unknown) => {
        checkBody(body)
        return bindBody === undefined ? body : bindBody(body)
      }
  const pipeline = vendorRouteHooks({
    operation: id,
    apiVersion: version,
    scope: operation.scope,
    schema: { params: operation.params, querystring: binding.querystring, body: binding.body, headers: binding.headers },
    reshapeBody
  })
  const options: RouteOptions = {
    method: operation.method,
    url: binding.url ?? operation.url,
    constraints: { apiVersion: version },
    // bindBody reshapes the raw body before the vendor pipeline binds it (src/plugins/vendor.ts)
    config: { operation: id, apiVersion: version, fieldName: route.fieldName },
    schema: definedParts({
      summary: binding.summary ?? operation.summary,
      params: operation.params,
      querystring: binding.querystring,
      headers: binding.headers,
      body: binding.body,
      response: binding.response
    }),
    // The handler reads the request as the schemas above type it (see OperationRequests).
    handler: route.handler as RouteHandlerMethod,
    ...(route.attachValidation === undefined ? {} : { attachValidation: route.attachValidation }),
    ...(route.serializerCompiler === undefined ? {} : { serializerCompiler: route.serializerCompiler }),
    // the pipeline's steps first (access, then binding), then the route's own
    onRequest: route.onRequest === undefined ? pipeline.onRequest : [pipeline.onRequest, route.onRequest].flat(),
    preValidation: pipeline.preValidation,
    ...(route.onSend === undefined ? {} : { onSend: route.onSend })
  }
  const rawBodyLimit = route.rawBodyLimit
  if (rawBodyLimit === undefined) {
    app.route(options)
    return
  }
  // A body taken as bytes needs its own parser, so the route gets a scope of its own.
  await app.register(async function rawBody (scope) {
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: rawBodyLimit }, (_request, body, done) => done(null, body))
    scope.route({ ...options, bodyLimit: rawBodyLimit })
  })
}
