import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { validationFailed } from '../../src/errors.js'
import { FIXTURE_BODY_LIMIT } from '../../src/http/json-body.js'
import type { ControlOptions } from './options.js'

/** Info, reset and state: the sandbox as a whole. */
export default async function worldControl (fastify: FastifyInstance, { sandbox, config }: ControlOptions) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const startedAt = new Date().toISOString()

  app.route({
    method: 'GET',
    url: '/info',
    schema: { summary: 'Version, clock, counts and settings' },
    handler: () => ({
      version: config.version,
      startedAt,
      clock: sandbox.clock.state(),
      counts: sandbox.counts(),
      fixture: sandbox.source,
      simulator: sandbox.simulator.status(),
      settings: {
        host: config.host,
        port: config.port,
        db: config.db,
        fixtures: config.fixtures,
        logLevel: config.logLevel,
        journalSize: config.journalSize,
        journalBytes: config.journalBytes,
        controlToken: config.controlToken !== undefined
      }
    })
  })

  app.route({
    method: 'POST',
    url: '/reset',
    bodyLimit: FIXTURE_BODY_LIMIT,
    schema: {
      summary: 'Back to the start-up fixture; with a fixture document as body, to that fixture instead',
      body: Type.Optional(Type.Unknown({ description: 'a fixture document (fixtures/schema.json)' }))
    },
    handler: async (request) => {
      const body = request.body
      if (body === undefined || body === null || (typeof body === 'object' && Object.keys(body).length === 0)) {
        await sandbox.reset()
      } else {
        const { validateFixture } = await import('../../src/fixture/validate.js')
        const result = validateFixture(body, { owned: true })
        if (!result.ok) throw validationFailed(result.errors)
        await sandbox.reset(result.fixture, '(posted to /_sandbox/reset)')
      }
      return { status: 'reset', fixture: sandbox.source, counts: sandbox.counts() }
    }
  })

  app.route({
    method: 'GET',
    url: '/state',
    schema: { summary: 'The whole state as a fixture document; POST it to /_sandbox/reset to restore it' },
    handler: (_request, reply) => {
      reply.type('application/json; charset=utf-8').send(JSON.stringify(sandbox.state()))
    }
  })
}
