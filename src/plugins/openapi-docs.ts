import swagger, { type SwaggerOptions } from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import Fastify, { type FastifyInstance } from 'fastify'
import { documentedSchema } from '../schemas/documented.js'
import { apiVersionConstraint } from '../versions/index.js'
import type { OperationId } from '../versions/operations.js'
import { lazySerializerFactory, lazyValidatorFactory } from './lazy-validators.js'
import { controlOperationId, enumsAsEnum, vendorErrors } from './openapi-answers.js'
import { hoistNamedSchemas } from './openapi-components.js'
import { DOCUMENT_NAMES, type DescribeScope, type DocsInstance, type Documents, type DocumentName } from './openapi-documents.js'

/**
 * OpenAPI documents generated from the routes' TypeBox schemas by @fastify/swagger: one per
 * vendor version (each version is its own scope with its own generator) and one for the control
 * API. The error answers each vendor operation can give are added to it (openapi-answers.ts). This module
 * is loaded on the first request for a document or for Swagger UI (see openapi.ts).
 */

/**
 * A string answer is sent as text/plain (the writes' `Created`, routes/partner-api/writes.ts), so
 * the document says so: a client generated from `application/json` would parse `Created` as JSON.
 */
function asPlainText (schema: unknown): unknown {
  const s = schema as { type?: unknown; description?: string } | undefined
  return s?.type === 'string' ? { description: s.description, content: { 'text/plain': { schema } } } : schema
}

interface QuerySchema {
  type?: string
  properties?: Record<string, unknown>
  required?: string[]
}

/**
 * The document of a version pins its `version` parameter (required, that one value), so Swagger
 * UI's "Try it out" sends it; version 1 requests carry none. Validation is not changed: the
 * route constraint already routes by the parameter.
 */
function pinVersion (query: QuerySchema | undefined, name: DocumentName): QuerySchema | undefined {
  if (query?.properties?.version === undefined) return query
  const { version: _omitted, ...others } = query.properties
  if (name === '1') return { ...query, properties: others, required: (query.required ?? []).filter((r) => r !== 'version') }
  const version = { type: 'string', enum: [name], default: name, description: `the API version: always ${name} in this document` }
  return { ...query, properties: { version, ...others }, required: ['version', ...(query.required ?? []).filter((r) => r !== 'version')] }
}

/** The group an operation is listed under in Swagger UI. */
function vendorTag (url: string, method: string): string {
  if (url.endsWith('/users')) return 'users'
  if (url === '/vendor/agencies' || url.endsWith('/offices')) return 'agencies'
  const isWrite = /\/(log|attachment|receipts)$/.test(url) || url.endsWith('/client') || (method === 'POST' && url.endsWith('/client/:clientId'))
  return isWrite ? 'writes' : 'clients'
}

/** Control calls are grouped by their first path segment (`/_sandbox/clock/advance` → clock). */
const controlTag = (url: string) => url.split('/')[2] ?? 'sandbox'

export function swaggerOptions (name: DocumentName, version: string): SwaggerOptions {
  const vendor = name !== 'control'
  const title = vendor ? `Agency Integration API ${name === '1' ? '1 (no version parameter)' : name} (agency-sandbox)` : 'agency-sandbox control API'
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title,
        version,
        description: vendor
          ? `The vendor interface as the sandbox emulates it. ${name === '1' ? 'Version 1 requests carry no version parameter.' : `Every request carries ?version=${name}.`} HTTP Basic authentication: Client Id and Client Secret.`
          : 'Reset, seed, inspect, break and time-travel the sandbox. Outside vendor authentication; with SANDBOX_CONTROL_TOKEN set, send Authorization: Bearer <token>.'
      },
      components: vendor ? { securitySchemes: { basic: { type: 'http', scheme: 'basic' } } } : {},
      security: vendor ? [{ basic: [] }] : []
    },
    transform: ({ schema, url, route }) => {
      if (schema === undefined) return { schema, url }
      const method = String(Array.isArray(route.method) ? route.method[0] : route.method)
      if (!vendor) return { schema: { ...schema, tags: [controlTag(url)], operationId: controlOperationId(method, url) }, url }
      // a route of the operations table (routes/partner-api) names its operation
      const operationId = (route.config as { operation?: OperationId } | undefined)?.operation
      const answers = Object.entries((schema.response as Record<string, unknown> | undefined) ?? {}).map(([status, s]) => [status, asPlainText(documentedSchema(s))])
      const response = { ...(operationId === undefined ? {} : vendorErrors(operationId)), ...Object.fromEntries(answers) }
      const querystring = pinVersion(schema.querystring as QuerySchema | undefined, name)
      const body = schema.body === undefined ? {} : { body: documentedSchema(schema.body) }
      return { schema: { ...schema, ...body, response, ...(operationId === undefined ? {} : { operationId }), tags: [vendorTag(url, method)], ...(querystring === undefined ? {} : { querystring }) }, url }
    },
    // every document is OpenAPI 3.1 (above), so the generator hands over `openapiObject`
    transformObject: (document) => {
      const openapi = enumsAsEnum((document as { openapiObject: object }).openapiObject)
      return vendor ? hoistNamedSchemas(openapi, name) : openapi
    }
  }
}

/** Swagger UI at /docs listing the four documents, in an instance of its own. */
async function registerUi (app: FastifyInstance): Promise<void> {
  await app.register(async function docsUi (scope) {
    // Swagger UI needs a generator in its own scope (it has no routes); the UI lists the four documents.
    await scope.register(swagger, swaggerOptions('4.0', 'docs'))
    await scope.register(swaggerUi, {
      routePrefix: '/docs',
      uiConfig: {
        urls: DOCUMENT_NAMES.map((n) => ({ url: `/openapi/${n}.json`, name: n === 'control' ? 'control API' : `vendor ${n}` })),
        'urls.primaryName': 'vendor 4.0'
      } as never
    })
  })
}

/** An instance answering Swagger UI's routes only: the documents come from the build. */
export async function buildUiInstance (): Promise<DocsInstance> {
  const app = Fastify({ logger: false })
  await registerUi(app)
  await app.ready()
  return { app, docs: {} }
}

/** How many instances with every route this process built (the tests check the build's documents spare it). */
export let docsInstancesBuilt = 0

/**
 * A Fastify instance holding the same routes as the sandbox (registered by `register`, never
 * listening, never answering partners), each scope with its generator, and Swagger UI at /docs.
 */
export async function buildDocsInstance (version: string, register: (app: FastifyInstance, describe: DescribeScope) => Promise<void>): Promise<DocsInstance> {
  docsInstancesBuilt++
  const app = Fastify({
    logger: false,
    schemaController: { compilersFactory: { buildValidator: lazyValidatorFactory() as never, buildSerializer: lazySerializerFactory() as never } }
  })
  app.addConstraintStrategy(apiVersionConstraint as unknown as Parameters<typeof app.addConstraintStrategy>[0])
  // The routes below are here for their schemas only: this instance answers Swagger UI's routes
  // and nothing else, whatever URL reaches it (its handlers hold the live sandbox).
  app.addHook('onRequest', async (request, reply) => {
    const route = request.routeOptions.url
    if (route === undefined || (route !== '/docs' && !route.startsWith('/docs/'))) return reply.code(404).send()
  })
  const docs: Documents = {}
  await register(app, async (scope, name) => {
    await scope.register(swagger, swaggerOptions(name, version))
    docs[name] = () => scope.swagger()
  })
  await registerUi(app)
  await app.ready()
  return { app, docs }
}
