import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../src/config.js'
import type { Sandbox } from '../src/domain/sandbox.js'
import {
  AgencyIdParams, AgencyPatchBody, AgencyStateSchema, AttachmentParams, WriteViewSchema, WritesQuery
} from '../src/schemas/control.js'

export interface ControlOptions {
  sandbox: Sandbox
  config: Config
}

/** The control plane under /_sandbox: outside vendor auth and rate limits. */
export default async function controlRoutes(fastify: FastifyInstance, { sandbox, config }: ControlOptions) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.route({
    method: 'GET',
    url: '/health',
    schema: {
      summary: 'Liveness: 200 once the sandbox serves',
      response: { 200: Type.Object({ status: Type.Literal('ok'), version: Type.String() }) }
    },
    handler: () => ({ status: 'ok' as const, version: config.version })
  })

  app.route({
    method: 'PATCH',
    url: '/agencies/:agencyId',
    schema: {
      summary: "Change an agency's flags; reconnecting applies its pending writes before answering",
      params: AgencyIdParams,
      body: AgencyPatchBody,
      response: { 200: AgencyStateSchema }
    },
    handler: (request) => {
      const { agency, applied } = sandbox.patchAgency(request.params.agencyId, request.body)
      const { defaultUsers: _defaultUsers, ...flags } = agency
      return { ...flags, appliedPendingWrites: applied }
    }
  })

  app.route({
    method: 'GET',
    url: '/agencies/:agencyId/writes',
    schema: {
      summary: 'Writes received for the agency (log notes, attachments, receipts, created clients), in arrival order',
      params: AgencyIdParams,
      querystring: WritesQuery,
      response: { 200: Type.Array(WriteViewSchema) }
    },
    handler: (request) =>
      sandbox.writes.list(request.params.agencyId, request.query).map((w) => ({
        seq: w.seq, refId: w.refId, kind: w.kind, status: w.status, clientNumber: w.clientNumber,
        integration: w.integration, version: w.apiVersion, receivedAt: w.receivedAt, appliedAt: w.appliedAt, data: w.data
      }))
  })

  app.route({
    method: 'GET',
    url: '/agencies/:agencyId/attachments/:refId/content',
    schema: { summary: 'The stored bytes of an attachment, with its content type', params: AttachmentParams },
    handler: (request, reply) => {
      const file = sandbox.writes.attachmentContent(request.params.agencyId, request.params.refId)
      return reply
        .type(file.contentType)
        .header('content-disposition', `attachment; filename="${file.fileName.replace(/["\\\r\n]/g, '_')}"`)
        .send(file.content)
    }
  })
}
