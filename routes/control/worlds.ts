import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { readWorldBody } from '../../src/domain/worlds/fixture-job.js'
import type { World, WorldListing } from '../../src/domain/worlds/world.js'
import { FIXTURE_BODY_LIMIT, UNPARSED_JSON_BYTES, UnparsedJson, useJsonBodies } from '../../src/http/json-body.js'
import { WorldCreateBody, WorldCreatedSchema, WorldIdParams, WorldListSchema, WorldWithSecretsSchema } from '../../src/schemas/worlds.js'
import type { ControlOptions } from './options.js'
import { worldOfPath, worldScope, type ControlTokens } from './tokens.js'

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString())

/** The creation body is checked by readWorldBody, on the worker for a large one: the route takes it as it comes. */
const checkedWhereRead = () => (value: unknown) => ({ value })

/** The world's integrations with their secrets: for its creator, and whoever holds a token that opens it. */
const credentialsOf = (integrations: ReturnType<World['integrations']>) => integrations.map(({ clientId, clientSecret, name }) => ({ clientId, clientSecret, name }))

/** What GET /_sandbox/worlds tells of a world. */
function describe ({ world, data, journal, faults }: WorldListing) {
  return {
    id: world.id,
    name: world.name,
    source: world.source,
    tenant: world.tenantId ?? null,
    createdAt: new Date(world.createdAtMs).toISOString(),
    lastUsedAt: new Date(world.lastUsedMs).toISOString(),
    expiresAt: iso(world.expiresAtMs),
    ttlSeconds: world.ttlMs / 1000,
    bytes: data.bytes,
    maxBytes: world.maxBytes ?? null,
    integrations: data.integrations,
    counts: { ...data.counts, journal, faults }
  }
}

/**
 * The worlds of the process: create one (a copy of the start-up fixture, of a fixture document, or
 * of a world as it stands now), list them, look at one, delete one.
 */
export default async function worldsControl (fastify: FastifyInstance, { worlds, config, tokens }: ControlOptions & { tokens: ControlTokens }) {
  // A tenant's token creates and lists the tenant's own worlds; the sandbox's token, every world.
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  // A large body (with a fixture document) is read on the fixture worker: this scope leaves it
  // unparsed, and the body is checked where it is read (fixture-job.ts), whatever its size.
  await app.register(async function createScope (scope) {
    useJsonBodies(scope, { emptyIsAbsent: true, unparsedAbove: UNPARSED_JSON_BYTES })
    scope.withTypeProvider<TypeBoxTypeProvider>().post('/worlds', {
      bodyLimit: FIXTURE_BODY_LIMIT,
      onRequest: tokens.administratorOrTenant,
      validatorCompiler: checkedWhereRead,
      schema: {
        summary: 'Create a world: isolated data, clock, faults, journal and sessions, reached by its own Client Ids',
        body: WorldCreateBody,
        response: { 201: WorldCreatedSchema }
      }
    }, async (request, reply) => {
      const owner = tokens.tenantOf(request)
      // before a large fixture is read: a tenant at its quota learns it at once
      if (owner !== undefined) worlds.checkQuota(owner)
      const body: unknown = request.body
      const { name, from, ttlSeconds, maxBytes, secrets, snapshot, warnings } = body instanceof UnparsedJson
        // a creator's large bodies take one place on the worker at a time, as a world's do
        ? await worlds.fixtures.world(body.bytes, body.maxValues, `creator:${owner?.id ?? 'administrator'}`)
        : readWorldBody(body, { migrationsDir: config.migrationsDir, nowIso: new Date().toISOString() })
      for (const line of warnings) request.log.warn(`fixture posted to /_sandbox/worlds: ${line}`)
      const { world, integrations, token } = await worlds.create({ name, from, snapshot, ttlSeconds, maxBytes, secrets, owner })
      reply.code(201).send({
        id: world.id,
        name: world.name,
        integrations: credentialsOf(integrations),
        token,
        expiresAt: iso(world.expiresAtMs),
        maxBytes: world.maxBytes ?? null,
        ...(warnings.length > 0 ? { warnings } : {})
      })
    })
  })

  app.get('/worlds', {
    onRequest: tokens.administratorOrTenant,
    schema: {
      summary: "Every world: the default one first, then the worlds created, oldest first (to a tenant's token, the tenant's worlds)",
      response: { 200: WorldListSchema }
    }
  }, async (request) => {
    const owner = tokens.tenantOf(request)
    const listed = await worlds.listing(owner?.id)
    const described = listed.map(describe)
    if (owner === undefined) return { worlds: described, limits: { ...worlds.limits, bytes: worlds.bytes() } }
    return {
      worlds: described,
      limits: { maxWorlds: owner.maxWorlds, maxBytes: worlds.limits.maxBytes, bytes: listed.reduce((sum, { data }) => sum + data.bytes, 0) }
    }
  })

  await app.register(async function oneWorld (scope) {
    worldScope(scope, worlds, tokens)
    scope.withTypeProvider<TypeBoxTypeProvider>().get('/worlds/:worldId', {
      schema: { summary: "One world, with its integrations' secrets (to whoever holds its token, its tenant's, or the sandbox's)", params: WorldIdParams, response: { 200: WorldWithSecretsSchema } }
    }, (request) => ({ ...describe(request.world.listing()), credentials: credentialsOf(request.world.integrations()) }))
  })

  // any instance deletes a world (hosted mode: in the catalogue, and its owner gives it up)
  app.delete('/worlds/:worldId', {
    onRequest: async (request) => { worldOfPath(request, worlds, tokens) },
    config: { removesWorld: true },
    schema: { summary: 'Delete a world: its credentials answer 401 from now on', params: WorldIdParams }
  }, async (request, reply) => {
    await worlds.remove(worldOfPath(request, worlds, tokens).id)
    reply.code(204).send()
  })
}
