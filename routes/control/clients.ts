import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { ClientInput, ClientPatch } from '../../src/domain/admin.js'
import { AgencyIdParams, ClientNumberParams, ClientPatchBody, ClientPutBody, ClientSearchQuery } from '../../src/schemas/control.js'
import type { ControlOptions } from './options.js'

/** Agency-side client changes a partner must sync, and a view of clients in read-model form. */
export default async function clientControl (fastify: FastifyInstance, _options: ControlOptions) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.get('/agencies/:agencyId/clients', {
    schema: { summary: 'Find clients by name, address, policy number or number (read-model form, deleted ones included)', params: AgencyIdParams, querystring: ClientSearchQuery }
  }, (request) => request.world.admin.searchClients(request.params.agencyId, request.query.q ?? '', request.query.limit ?? 50))

  app.get('/agencies/:agencyId/clients/:clientNumber', {
    schema: { summary: 'A client with every group and its deleted flag', params: ClientNumberParams }
  }, (request) => request.world.admin.getClient(request.params.agencyId, request.params.clientNumber))

  app.put('/agencies/:agencyId/clients/:clientNumber', {
    schema: { summary: 'Create or replace a client in read-model form', params: ClientNumberParams, body: ClientPutBody }
  }, (request, reply) => {
    const { created, client } = request.world.admin.putClient(request.params.agencyId, request.params.clientNumber, request.body as unknown as ClientInput)
    reply.code(created ? 201 : 200).send(client)
  })

  app.patch('/agencies/:agencyId/clients/:clientNumber', {
    schema: { summary: 'Merge a change into a client; moves modified', params: ClientNumberParams, body: ClientPatchBody }
  }, (request) => request.world.admin.patchClient(request.params.agencyId, request.params.clientNumber, request.body as ClientPatch))

  app.delete('/agencies/:agencyId/clients/:clientNumber', {
    schema: { summary: 'Mark a client deleted; moves modified', params: ClientNumberParams }
  }, (request) => request.world.admin.deleteClient(request.params.agencyId, request.params.clientNumber))
}
