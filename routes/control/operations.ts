import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { ControlOptions } from './options.js'
import type { ControlTokens } from './tokens.js'

/**
 * The instance's own routes, for its operator: its health (no token: load balancers and
 * orchestrators ask it) and its metrics (the administrator's, like the tenants' routes). Neither
 * needs a world's data, nor waits for PostgreSQL beyond health's own short probe (`instance`).
 */
export default async function operationsControl (fastify: FastifyInstance, { config, tokens }: ControlOptions & { tokens: ControlTokens }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.route({
    method: 'GET',
    url: '/health',
    config: { instance: true },
    schema: {
      summary: 'Health: 200 while the sandbox serves; 503 naming what is wrong (hosted mode: PostgreSQL unreachable or slow), within a second (never needs the control token)',
      response: {
        200: Type.Object({ status: Type.Literal('ok'), version: Type.String() }),
        503: Type.Object({
          status: Type.Literal('degraded'),
          version: Type.String(),
          problems: Type.Array(Type.String(), { description: 'what is wrong, one sentence each' })
        })
      }
    },
    handler: async (_request, reply) => {
      const problems = await fastify.operations.problems()
      if (problems.length === 0) return { status: 'ok' as const, version: config.version }
      return reply.code(503).header('retry-after', '1').send({ status: 'degraded' as const, version: config.version, problems })
    }
  })

  app.route({
    method: 'GET',
    url: '/metrics',
    config: { instance: true },
    onRequest: tokens.administratorOnly,
    schema: {
      summary: "This instance's metrics in the Prometheus text format (the sandbox's control token when it has one; docs/operations.md lists them)"
    },
    handler: async (_request, reply) => {
      const { metrics } = fastify.operations
      const text = await metrics.text()
      return reply.type(metrics.contentType).send(text)
    }
  })
}
