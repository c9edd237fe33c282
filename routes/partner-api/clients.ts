import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ClientRow } from '../../src/db/store.js'
import { grantOf, type VendorRouteOptions } from '../../src/plugins/vendor.js'
import type { ClientGroup } from '../../src/schemas/client.js'
import {
  AgencyParams, BatchBody, ChangedClientsQuery, ClientIdList, ClientParams, IncludeQuery, SearchQuery, VersionQuery
} from '../../src/schemas/requests.js'
import { clientReaders } from '../../src/versions/clients.js'

const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * Client answers are JSON text joined from the stored groups, never serialized: the response
 * schemas document and test them, and compiling a serializer for them would only slow start-up.
 */
const noSerializer = () => (data: unknown) => JSON.stringify(data)

/** Answers JSON made without a serializer (client groups are stored as JSON). */
function sendJson(reply: FastifyReply, json: string | Buffer): void {
  reply.type(JSON_TYPE).send(json)
}

/** Client reads (spec endpoints 3 to 6) in every version that has them. */
export default async function clientRoutes(fastify: FastifyInstance, { sandbox, version }: VendorRouteOptions) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  /** The groups this read returns; sets the Denied header when one was withheld. */
  function groupsOf(request: FastifyRequest, reply: FastifyReply): ClientGroup[] {
    const { groups, denied } = clientReaders[version].groups(grantOf(request), (request.query as { include?: string }).include)
    if (denied.length > 0) reply.header('denied', denied.join(','))
    return groups
  }

  /** Answers clients in the version's shape. */
  function answer(reply: FastifyReply, rows: ClientRow[], groups: ClientGroup[], one: boolean) {
    const json = clientReaders[version].render(rows, groups)
    sendJson(reply, one ? json.slice(1, -1) : json)
  }

  const reader = clientReaders[version]
  const readQuery = reader.include ? IncludeQuery : VersionQuery

  app.route({
    method: 'GET',
    url: '/vendor/agency/:agencyId/clients',
    constraints: { apiVersion: version },
    config: { scope: 'client-read' },
    schema: {
      summary: 'Ids of the clients changed since asOf (all when absent), ascending',
      params: AgencyParams,
      querystring: ChangedClientsQuery,
      response: { 200: ClientIdList }
    },
    handler: (request, reply) => {
      sendJson(reply, sandbox.clients.changedIdsJson(grantOf(request).agency.agencyId, request.query))
    }
  })

  app.route({
    method: 'GET',
    url: '/vendor/agency/:agencyId/client/:clientId',
    constraints: { apiVersion: version },
    config: { scope: 'client-read' },
    serializerCompiler: noSerializer,
    schema: {
      summary: 'One client',
      params: ClientParams,
      querystring: readQuery,
      response: { 200: reader.schema }
    },
    handler: (request, reply) => {
      const row = sandbox.clients.get(grantOf(request).agency.agencyId, request.params.clientId)
      answer(reply, [row], groupsOf(request, reply), true)
    }
  })

  app.route({
    method: 'POST',
    url: '/vendor/agency/:agencyId/clients',
    constraints: { apiVersion: version },
    config: { scope: 'client-read' },
    serializerCompiler: noSerializer,
    // 3.0/4.0: one caller posts a bare array of numbers; bind it as {clientNumbers}.
    preValidation: async (request) => {
      if (version !== '1' && Array.isArray(request.body)) request.body = { clientNumbers: request.body }
    },
    schema: {
      summary: 'Batch read of up to 200 clients',
      params: AgencyParams,
      querystring: readQuery,
      body: version === '1' ? Type.Array(Type.Integer({ minimum: 1, maximum: 2147483647 }), { description: 'up to 200 client ids' }) : BatchBody,
      response: { 200: Type.Array(reader.schema) }
    },
    handler: (request, reply) => {
      const body = request.body as number[] | { clientNumbers: number[] }
      const numbers = Array.isArray(body) ? body : body.clientNumbers
      const answer = reader.batch(sandbox.clients, grantOf(request).agency.agencyId, numbers, groupsOf(request, reply))
      // once every byte is with the kernel the buffer is free for a later answer (not when the client left early)
      if (Buffer.isBuffer(answer)) reply.raw.once('finish', () => sandbox.clients.recycle(answer))
      sendJson(reply, answer)
    }
  })

  if (version === '1') return // version 1 has no search

  app.route({
    method: 'GET',
    url: '/vendor/agency/:agencyId/clients/search',
    constraints: { apiVersion: version },
    config: { scope: 'client-read' },
    serializerCompiler: noSerializer,
    schema: {
      summary: 'Clients with a policy of exactly this number',
      params: AgencyParams,
      querystring: SearchQuery,
      response: { 200: Type.Array(reader.schema) }
    },
    handler: (request, reply) => {
      const rows = sandbox.clients.searchByPolicyNumber(grantOf(request).agency.agencyId, request.query.policyNumber)
      answer(reply, rows, groupsOf(request, reply), false)
    }
  })
}
