import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { World } from '../../src/domain/worlds/world.js'
import { badRequest } from '../../src/errors.js'
import { FIXTURE_BODY_LIMIT } from '../../src/http/json-body.js'
import { WorldCreateBody, WorldCreatedSchema, WorldIdParams, WorldListSchema, WorldSchema } from '../../src/schemas/worlds.js'
import type { ControlOptions } from './options.js'
import { worldScope, type ControlTokens } from './tokens.js'

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString())

/** What GET /_sandbox/worlds tells of a world. */
function describe (world: World) {
  return {
    id: world.id,
    name: world.name,
    source: world.source,
    createdAt: new Date(world.createdAtMs).toISOString(),
    lastUsedAt: new Date(world.lastUsedMs).toISOString(),
    expiresAt: iso(world.expiresAtMs),
    ttlSeconds: world.ttlMs / 1000,
    bytes: world.bytes(),
    integrations: world.admin.listIntegrations().map((i) => i.clientId),
    counts: world.counts()
  }
}

/**
 * The worlds of the process: create one (a copy of the start-up fixture, of a fixture document, or
 * of a world as it stands now), list them, look at one, delete one.
 */
export default async function worldsControl (fastify: FastifyInstance, { worlds, tokens }: ControlOptions & { tokens: ControlTokens }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.post('/worlds', {
    bodyLimit: FIXTURE_BODY_LIMIT,
    onRequest: tokens.sandboxOnly,
    schema: {
      summary: 'Create a world: isolated data, clock, faults, journal and sessions, reached by its own Client Ids',
      body: WorldCreateBody,
      response: { 201: WorldCreatedSchema }
    },
    // No body at all is a world of the start-up fixture.
    preValidation: (request, _reply, done) => {
      request.body ??= {}
      done()
    }
  }, async (request, reply) => {
    const { name, from, fixture, ttlSeconds } = request.body
    if (from !== undefined && fixture !== undefined) {
      throw badRequest('give either from (a world to copy) or fixture (a fixture document), not both', [{ field: 'from', message: 'cannot be combined with fixture' }])
    }
    let validated
    if (fixture !== undefined) {
      const { invalidFixture, validateFixture } = await import('../../src/fixture/validate.js')
      const result = validateFixture(fixture, { owned: true })
      if (!result.ok) {
        const report = { ...result.report, listed: result.report.listed.map((e) => ({ ...e, field: `fixture.${e.field}` })) }
        throw invalidFixture(report, 'The world\'s fixture')
      }
      validated = result.fixture
    }
    const world = await worlds.create({ name, from, fixture: validated, ttlSeconds })
    reply.code(201).send({
      id: world.id,
      name: world.name,
      integrations: world.integrations(),
      token: world.token ?? '',
      expiresAt: iso(world.expiresAtMs)
    })
  })

  app.get('/worlds', {
    onRequest: tokens.sandboxOnly,
    schema: { summary: 'Every world: the default one first, then the worlds created, oldest first', response: { 200: WorldListSchema } }
  }, () => ({
    worlds: [worlds.default, ...worlds.list()].map(describe),
    limits: { ...worlds.limits, bytes: worlds.bytes() }
  }))

  await app.register(async function oneWorld (scope) {
    worldScope(scope, worlds, tokens)
    scope.withTypeProvider<TypeBoxTypeProvider>().get('/worlds/:worldId', {
      schema: { summary: 'One world', params: WorldIdParams, response: { 200: WorldSchema } }
    }, (request) => describe(request.world))
    scope.withTypeProvider<TypeBoxTypeProvider>().delete('/worlds/:worldId', {
      schema: { summary: 'Delete a world: its credentials answer 401 from now on', params: WorldIdParams }
    }, (request, reply) => {
      worlds.delete(request.world.id)
      reply.code(204).send()
    })
  })
}
