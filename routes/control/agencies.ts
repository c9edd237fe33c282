import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import {
  FixtureAgencySchema, FixtureIntegrationSchema, FixtureOfficeSchema, FixtureUserSchema
} from '../../src/fixture/schema.js'
import { fixtureFormValidator, fixtureFormWarnings } from '../../src/fixture/validate.js'
import {
  AgencyIdParams, AgencyPatchBody, AttachmentParams, IntegrationParams, OfficeParams, SubscriptionParams,
  SubscriptionPatchBody, UserParams, WritesQuery
} from '../../src/schemas/control.js'
import { attachmentDisposition } from '../../src/http/content-disposition.js'
import { FIXTURE_BODY_LIMIT, UNPARSED_JSON_BYTES, UnparsedJson, useJsonBodies } from '../../src/http/json-body.js'
import type { ControlOptions } from './options.js'

/** Integrations, subscriptions, agencies, offices, users and the writes agencies received. */
export default async function agencyControl (fastify: FastifyInstance, { worlds }: ControlOptions) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.get('/integrations', { schema: { summary: 'Integrations and their agency subscriptions (secrets are in /_sandbox/state)' } },
    (request) => request.world.admin.listIntegrations())

  app.post('/integrations', { schema: { summary: 'Add an integration (vendor credentials)', body: FixtureIntegrationSchema } },
    (request, reply) => {
      reply.code(201).send({ clientId: request.world.admin.addIntegration(request.body) })
    })

  app.delete('/integrations/:clientId', { schema: { summary: 'Remove an integration', params: IntegrationParams } },
    (request, reply) => {
      request.world.admin.removeIntegration(request.params.clientId)
      reply.code(204).send()
    })

  app.patch('/integrations/:clientId/agencies/:agencyId', {
    schema: { summary: "Change (or create) an integration's subscription: scopes, opted out", params: SubscriptionParams, body: SubscriptionPatchBody }
  }, (request) => request.world.admin.patchSubscription(request.params.clientId, request.params.agencyId, request.body))

  app.delete('/integrations/:clientId/agencies/:agencyId', { schema: { summary: 'Unsubscribe an integration from an agency', params: SubscriptionParams } },
    (request, reply) => {
      request.world.admin.removeSubscription(request.params.clientId, request.params.agencyId)
      reply.code(204).send()
    })

  app.get('/agencies', { schema: { summary: 'Agencies with their flags, offices and users' } }, (request) => request.world.admin.listAgencies())

  // Validated like a fixture (at most 200 errors), not by Ajv listing an error per bad item of a long
  // client list; a large body is left unparsed by this scope and read on the fixture worker.
  await app.register(async function addAgencyScope (scope) {
    useJsonBodies(scope, { emptyIsAbsent: true, unparsedAbove: UNPARSED_JSON_BYTES })
    scope.withTypeProvider<TypeBoxTypeProvider>().post('/agencies', {
      bodyLimit: FIXTURE_BODY_LIMIT,
      validatorCompiler: fixtureFormValidator,
      schema: { summary: 'Add an agency (fixture form, clients included)', body: FixtureAgencySchema }
    }, async (request, reply) => {
      const body: unknown = request.body
      const { agency, warnings } = body instanceof UnparsedJson
        ? await worlds.fixtures.agency(body.bytes, body.maxValues, request.world.id)
        : { agency: request.body, warnings: fixtureFormWarnings(request.body) }
      await request.world.admin.addAgency(agency)
      // what an earlier fixture format held and was converted, one line per field
      for (const line of warnings) request.log.warn(`agency posted to /_sandbox/agencies: ${line}`)
      const agencyId = 'agency' in agency ? agency.agency.agencyId : agency.agencyId
      reply.code(201).send({ agencyId, ...(warnings.length > 0 ? { warnings } : {}) })
    })
  })

  app.patch('/agencies/:agencyId', {
    schema: { summary: "Change an agency's flags; reconnecting applies its pending writes before answering", params: AgencyIdParams, body: AgencyPatchBody }
  }, (request) => {
    const { agency, applied } = request.world.patchAgency(request.params.agencyId, request.body)
    const { defaultUsers: _defaultUsers, ...flags } = agency
    return { ...flags, appliedPendingWrites: applied }
  })

  app.delete('/agencies/:agencyId', { schema: { summary: 'Remove an agency with everything it holds', params: AgencyIdParams } },
    (request, reply) => {
      request.world.admin.removeAgency(request.params.agencyId)
      reply.code(204).send()
    })

  app.post('/agencies/:agencyId/offices', { schema: { summary: 'Add an office', params: AgencyIdParams, body: FixtureOfficeSchema } },
    (request, reply) => {
      request.world.admin.addOffice(request.params.agencyId, request.body)
      reply.code(201).send(request.body)
    })

  app.delete('/agencies/:agencyId/offices/:officeId', { schema: { summary: 'Remove an office without clients', params: OfficeParams } },
    (request, reply) => {
      request.world.admin.removeOffice(request.params.agencyId, request.params.officeId)
      reply.code(204).send()
    })

  app.post('/agencies/:agencyId/users', { schema: { summary: 'Add a user', params: AgencyIdParams, body: FixtureUserSchema } },
    (request, reply) => {
      request.world.admin.addUser(request.params.agencyId, request.body)
      reply.code(201).send(request.body)
    })

  app.delete('/agencies/:agencyId/users/:userId', { schema: { summary: 'Remove a user (and any default role it held)', params: UserParams } },
    (request, reply) => {
      request.world.admin.removeUser(request.params.agencyId, request.params.userId)
      reply.code(204).send()
    })

  app.get('/agencies/:agencyId/writes', {
    schema: {
      summary: 'Writes received for the agency (log notes, attachments, receipts, created clients), in arrival order',
      params: AgencyIdParams,
      querystring: WritesQuery
    }
  }, (request) =>
    request.world.writes.list(request.params.agencyId, request.query).map((w) => ({
      seq: w.seq,
      refId: w.refId,
      kind: w.kind,
      status: w.status,
      clientNumber: w.clientNumber,
      integration: w.integration,
      version: w.apiVersion,
      receivedAt: w.receivedAt,
      appliedAt: w.appliedAt,
      data: w.data
    })))

  app.get('/agencies/:agencyId/attachments/:refId/content', {
    schema: { summary: 'The stored bytes of an attachment, with its content type', params: AttachmentParams }
  }, (request, reply) => {
    const file = request.world.writes.attachmentContent(request.params.agencyId, request.params.refId)
    return reply
      .type(file.contentType)
      .header('content-disposition', attachmentDisposition(file.fileName))
      .send(file.content)
  })
}
