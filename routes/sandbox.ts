import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../src/config.js'
import type { Sandbox } from '../src/domain/sandbox.js'

export interface ControlOptions {
  sandbox: Sandbox
  config: Config
}

/** The control plane under /_sandbox: outside vendor auth and rate limits. */
export default async function controlRoutes(fastify: FastifyInstance, { config }: ControlOptions) {
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
}
