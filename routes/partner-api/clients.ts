import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ClientRow } from '../../src/db/store.js'
import { grantOf } from '../../src/plugins/vendor.js'
import type { ClientGroup } from '../../src/schemas/client.js'
import type { ClientReader } from '../../src/versions/clients.js'
import type { OperationHandlers } from './operation.js'

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

/** The groups this read returns; sets the Denied header when one was withheld. */
function groupsOf(reader: ClientReader, request: FastifyRequest, reply: FastifyReply): ClientGroup[] {
  const { groups, denied } = reader.groups(grantOf(request), (request.query as { include?: string }).include)
  if (denied.length > 0) reply.header('denied', denied.join(','))
  return groups
}

/** Answers clients in the version's shape. */
function answer(reader: ClientReader, reply: FastifyReply, rows: ClientRow[], groups: ClientGroup[], one: boolean) {
  const json = reader.render(rows, groups)
  sendJson(reply, one ? json.slice(1, -1) : json)
}

/** Client reads (spec endpoints 3 to 6); `mapping` is the version's client reader. */
export const clientHandlers: OperationHandlers<'changedClients' | 'getClient' | 'batchClients' | 'searchClients'> = {
  changedClients: ({ sandbox }) => ({
    handler: (request, reply) => {
      sendJson(reply, sandbox.clients.changedIdsJson(grantOf(request).agency.agencyId, request.query))
    }
  }),

  getClient: ({ sandbox, mapping: reader }) => ({
    serializerCompiler: noSerializer,
    handler: (request, reply) => {
      const row = sandbox.clients.get(grantOf(request).agency.agencyId, request.params.clientId)
      answer(reader, reply, [row], groupsOf(reader, request, reply), true)
    }
  }),

  batchClients: ({ sandbox, mapping: reader }) => ({
    serializerCompiler: noSerializer,
    handler: (request, reply) => {
      const body = request.body as number[] | { clientNumbers: number[] }
      const numbers = Array.isArray(body) ? body : body.clientNumbers
      const answer = reader.batch(sandbox.clients, grantOf(request).agency.agencyId, numbers, groupsOf(reader, request, reply))
      // once every byte is with the kernel the buffer is free for a later answer (not when the client left early)
      if (Buffer.isBuffer(answer)) reply.raw.once('finish', () => sandbox.clients.recycle(answer))
      sendJson(reply, answer)
    }
  }),

  searchClients: ({ sandbox, mapping: reader }) => ({
    serializerCompiler: noSerializer,
    handler: (request, reply) => {
      const rows = sandbox.clients.searchByPolicyNumber(grantOf(request).agency.agencyId, request.query.policyNumber)
      answer(reader, reply, rows, groupsOf(reader, request, reply), false)
    }
  })
}
