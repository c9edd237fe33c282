import type { FastifyReply, FastifyRequest } from 'fastify'
import { grantOf } from '../../src/plugins/vendor.js'
import type { ClientGroup } from '../../src/schemas/client.js'
import type { ClientReader } from '../../src/versions/clients.js'
import type { OperationHandlers } from './operation.js'

/** The groups this read returns; sets the Denied header when one was withheld. */
function groupsOf (reader: ClientReader, request: FastifyRequest, reply: FastifyReply): ClientGroup[] {
  const { groups, denied } = reader.groups(grantOf(request), (request.query as { include?: string }).include)
  if (denied.length > 0) reply.header('denied', denied.join(','))
  return groups
}

/**
 * Client reads (spec endpoints 3 to 6); `mapping` is the version's client reader. Each handler
 * returns the answer already encoded as JSON (client groups are stored as the JSON the API
 * answers), which the vendor scope sends as it is (src/plugins/send-bytes.ts): the response
 * schemas document and test the answers, no serializer runs.
 */
export const clientHandlers: OperationHandlers<'changedClients' | 'getClient' | 'batchClients' | 'searchClients'> = {
  changedClients: () => ({
    handler: (request) => request.world.clients.changedIdsJson(grantOf(request).agency.agencyId, request.query)
  }),

  getClient: ({ mapping: reader }) => ({
    handler: (request, reply) =>
      reader.one(request.world.clients, grantOf(request).agency.agencyId, request.params.clientId, groupsOf(reader, request, reply))
  }),

  batchClients: ({ mapping: reader }) => ({
    handler: (request, reply) => {
      const body = request.body as number[] | { clientNumbers: number[] }
      const numbers = Array.isArray(body) ? body : body.clientNumbers
      return reader.batch(request.world.clients, grantOf(request).agency.agencyId, numbers, groupsOf(reader, request, reply))
    }
  }),

  searchClients: ({ mapping: reader }) => ({
    handler: (request, reply) =>
      reader.search(request.world.clients, grantOf(request).agency.agencyId, request.query.policyNumber, groupsOf(reader, request, reply))
  })
}
