import type { FastifyReply, FastifyRequest } from 'fastify'
import { checkBatchSize } from '../../src/domain/clients.js'
import { includeGroups } from '../../src/domain/includes.js'
import { grantOf } from '../../src/plugins/vendor.js'
import type { ClientGroup } from '../../src/schemas/client.js'
import type { ClientShape } from '../../src/versions/clients.js'
import type { OperationHandlers } from './operation.js'

/** The groups this read returns, as the version reads `include`; sets the Denied header when one was withheld. */
function groupsOf (shape: ClientShape, request: FastifyRequest, reply: FastifyReply): readonly ClientGroup[] {
  const { groups, denied } = includeGroups(shape.include, grantOf(request), (request.query as { include?: string }).include)
  if (denied.length > 0) reply.header('denied', denied.join(','))
  return groups
}

/**
 * A batch body's list of client numbers (a bare array, or clientNumbers in any case) longer than a
 * batch may be is refused before its items are bound and validated one by one.
 */
function checkBatchLength (body: unknown): void {
  const list = Array.isArray(body)
    ? body
    : typeof body === 'object' && body !== null ? Object.entries(body).find(([key]) => key.toLowerCase() === 'clientnumbers')?.[1] : undefined
  if (Array.isArray(list)) checkBatchSize(list.length)
}

/**
 * Client reads (spec endpoints 3 to 6); `mapping` is the version's client shape. Each handler
 * returns the answer already encoded as JSON (client groups are stored as the JSON the API
 * answers, and a version's conversion is encoded once), which the vendor scope sends as it is
 * (src/plugins/send-bytes.ts): the response schemas document and test the answers, no
 * serializer runs.
 */
export const clientHandlers: OperationHandlers<'changedClients' | 'getClient' | 'batchClients' | 'searchClients'> = {
  changedClients: () => ({
    handler: (request) => request.world.clients.changedIdsJson(grantOf(request).agency.agencyId, request.query)
  }),

  getClient: ({ mapping: shape }) => ({
    handler: (request, reply) =>
      request.world.clients.one(grantOf(request).agency.agencyId, request.params.clientId, groupsOf(shape, request, reply), shape.convert)
  }),

  batchClients: ({ mapping: shape }) => ({
    checkBody: checkBatchLength,
    handler: (request, reply) => {
      const body = request.body as number[] | { clientNumbers: number[] }
      const numbers = Array.isArray(body) ? body : body.clientNumbers
      return request.world.clients.many(grantOf(request).agency.agencyId, numbers, groupsOf(shape, request, reply), shape.convert)
    }
  }),

  searchClients: ({ mapping: shape }) => ({
    handler: (request, reply) =>
      request.world.clients.search(grantOf(request).agency.agencyId, request.query.policyNumber, groupsOf(shape, request, reply), shape.convert)
  })
}
