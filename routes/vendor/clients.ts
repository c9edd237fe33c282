import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ClientRow } from '../../src/db/store.js'
import type { Grant } from '../../src/domain/access.js'
import { parseInclude, resolveGroups } from '../../src/domain/includes.js'
import type { Sandbox } from '../../src/domain/sandbox.js'
import { grantOf } from '../../src/plugins/vendor.js'
import { ClientSchema } from '../../src/schemas/client.js'
import {
  BatchBody, ChangedClientsQuery, ClientIdList, ClientParams, IncludeQuery, AgencyParams, SearchQuery
} from '../../src/schemas/requests.js'
import { renderClient, renderClients } from '../../src/versions/clients.js'
import { API_VERSIONS, type ApiVersion } from '../../src/versions/index.js'

const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * Client answers are JSON text joined from the stored groups, never serialized: the response
 * schemas document and test them, and compiling a serializer for them would only slow start-up.
 */
const noSerializer = () => (data: unknown) => JSON.stringify(data)

/** Answers JSON text made without a serializer (client groups are stored as JSON). */
function sendJson(reply: FastifyReply, json: string): void {
  reply.type(JSON_TYPE).send(json)
}

/** Client reads (spec endpoints 3 to 6). */
export default async function clientRoutes(fastify: FastifyInstance, { sandbox }: { sandbox: Sandbox }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  /** Groups to return and the Denied header, per the version's include rules. */
  function groupsFor(reply: FastifyReply, grant: Grant, include: string | undefined) {
    const result = resolveGroups(parseInclude(include), grant.scopes.has('invoice-read'))
    if (result.denied.length > 0) reply.header('denied', result.denied.join(','))
    return result.groups
  }

  function answerClients(request: FastifyRequest, reply: FastifyReply, include: string | undefined, rows: ClientRow[]) {
    const groups = groupsFor(reply, grantOf(request), include)
    sendJson(reply, renderClients(rows, groups))
  }

  for (const version of API_VERSIONS) {
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
        const ids = sandbox.clients.changedIds(grantOf(request).agency.agencyId, request.query)
        sendJson(reply, JSON.stringify(ids))
      }
    })
  }

  const READ_VERSIONS: ApiVersion[] = ['4.0']
  for (const version of READ_VERSIONS) {
    app.route({
      method: 'GET',
      url: '/vendor/agency/:agencyId/client/:clientId',
      constraints: { apiVersion: version },
      config: { scope: 'client-read' },
      serializerCompiler: noSerializer,
      schema: {
        summary: 'One client',
        params: ClientParams,
        querystring: IncludeQuery,
        response: { 200: ClientSchema }
      },
      handler: (request, reply) => {
        const grant = grantOf(request)
        const row = sandbox.clients.get(grant.agency.agencyId, request.params.clientId)
        const groups = groupsFor(reply, grant, request.query.include)
        sendJson(reply, renderClient(row, groups))
      }
    })

    app.route({
      method: 'POST',
      url: '/vendor/agency/:agencyId/clients',
      constraints: { apiVersion: version },
      config: { scope: 'client-read' },
      serializerCompiler: noSerializer,
      // One caller posts a bare array of numbers: bind it as {clientNumbers}.
      preValidation: async (request) => {
        if (Array.isArray(request.body)) request.body = { clientNumbers: request.body }
      },
      schema: {
        summary: 'Batch read of up to 200 clients',
        params: AgencyParams,
        querystring: IncludeQuery,
        body: BatchBody,
        response: { 200: Type.Array(ClientSchema) }
      },
      handler: (request, reply) => {
        const rows = sandbox.clients.batch(grantOf(request).agency.agencyId, request.body.clientNumbers)
        answerClients(request, reply, request.query.include, rows)
      }
    })

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
        response: { 200: Type.Array(ClientSchema) }
      },
      handler: (request, reply) => {
        const rows = sandbox.clients.searchByPolicyNumber(grantOf(request).agency.agencyId, request.query.policyNumber)
        answerClients(request, reply, request.query.include, rows)
      }
    })
  }
}
