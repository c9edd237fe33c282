import type { Static } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify'
import type { AgencyParams, ChangedClientsQuery, ClientParams, SearchQuery } from '../../src/schemas/requests.js'
import type { ClientCreateRequest } from '../../src/schemas/writes.js'
import type { ApiVersion } from '../../src/versions/index.js'
import type { OperationId, OperationMappings } from '../../src/versions/operations.js'

/**
 * What a partner-API route file gives the registration loop for one operation: its handler, made
 * for one version with that version's mapping, and the few route options only HTTP needs. The
 * method, URL, scope and schemas come from the operation table (src/versions/operations.ts).
 */

/** What the handler of an operation is made with (the world is the request's: `request.world`). */
export interface OperationContext<Mapping> {
  version: ApiVersion
  mapping: Mapping
}

type AgencyPath = Static<typeof AgencyParams>
type ClientPath = Static<typeof ClientParams>

/**
 * The request each operation's handler reads, as its table schemas type it (the loop registers
 * the handler with exactly those schemas). Bodies and headers that differ per version stay
 * unknown here: the version's mapping reads them.
 */
export interface OperationRequests {
  agencies: object
  offices: { Params: AgencyPath }
  users: { Params: AgencyPath }
  changedClients: { Params: AgencyPath, Querystring: Static<typeof ChangedClientsQuery> }
  getClient: { Params: ClientPath, Querystring: { include?: string } }
  batchClients: { Params: AgencyPath, Querystring: { include?: string }, Body: unknown }
  searchClients: { Params: AgencyPath, Querystring: Static<typeof SearchQuery> }
  logNote: { Params: ClientPath, Body: unknown }
  attachment: { Params: ClientPath, Body: unknown }
  receipts: { Params: ClientPath, Body: unknown[] }
  /** The body has this type only when it passed the schema (the route takes schema errors itself). */
  createClient: { Params: AgencyPath, Body: ClientCreateRequest }
}

export type OperationRequest<K extends OperationId> = FastifyRequest<OperationRequests[K]>

/** The route of one operation in one version, as far as the table does not say it. */
export interface OperationRoute<K extends OperationId> {
  handler: (request: OperationRequest<K>, reply: FastifyReply) => unknown
  /** How validation errors name a field (e.g. the spec's PascalCase for write bodies). */
  fieldName?: (field: string, context: string) => string
  /** Checks the raw body before it is bound and validated (throws a 400): a bound on the work those do. */
  checkBody?: (body: unknown) => void
  /** The body is taken as raw bytes up to this many (any Content-Type), not parsed. */
  rawBodyLimit?: number
  /** Schema errors reach the handler instead of answering 400 at once. */
  attachValidation?: boolean
  /** Answers are JSON text made without a serializer. */
  serializerCompiler?: () => (data: unknown) => string
  onRequest?: RouteShorthandOptions['onRequest']
  onSend?: RouteShorthandOptions['onSend']
}

/** Who sent a write, for the write listing. */
export const originOf = (request: FastifyRequest, version: ApiVersion) => ({ integration: request.integrationId, apiVersion: version })

/** Makes the route of an operation for one version. */
export type OperationHandler<K extends OperationId> = (context: OperationContext<OperationMappings[K]>) => OperationRoute<K>

/** A route file's handlers, one per operation it serves. */
export type OperationHandlers<K extends OperationId> = { readonly [Id in K]: OperationHandler<Id> }
