import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { RESET_PARTS, type ResetPart } from '../../src/domain/worlds/world.js'
import { invalidField } from '../../src/errors.js'
import { FIXTURE_BODY_LIMIT } from '../../src/http/json-body.js'
import type { ControlOptions } from './options.js'

/** Info, reset and state: one world as a whole. */
export default async function worldControl (fastify: FastifyInstance, { config }: ControlOptions) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const startedAt = new Date().toISOString()

  app.route({
    method: 'GET',
    url: '/info',
    schema: { summary: 'Version, clock, counts and settings' },
    handler: ({ world }) => ({
      version: config.version,
      startedAt,
      world: { id: world.id, name: world.name },
      clock: world.clock.state(),
      counts: world.counts(),
      fixture: world.source,
      simulator: world.simulator.status(),
      settings: {
        host: config.host,
        port: config.port,
        db: config.db,
        fixtures: config.fixtures,
        logLevel: config.logLevel,
        journalSize: config.journalSize,
        journalBytes: config.journalBytes,
        controlToken: config.controlToken !== undefined,
        allowedHosts: config.allowedHosts
      }
    })
  })

  app.route({
    method: 'POST',
    url: '/reset',
    bodyLimit: FIXTURE_BODY_LIMIT,
    schema: {
      summary: 'A clean slate: data, pending writes, journal, faults, clock, simulator and rate windows back to the start; {"keep": [parts]} keeps parts; a fixture document as body resets to that fixture',
      body: Type.Optional(Type.Unknown({ description: 'a fixture document (fixtures/schema.json)' }))
    },
    handler: async (request) => {
      const { world } = request
      const { keep, fixture } = resetRequest(request.body)
      let warnings: string[] = []
      if (fixture === undefined) {
        await world.reset(undefined, keep)
      } else {
        const { invalidFixture, validateFixture } = await import('../../src/fixture/validate.js')
        const result = validateFixture(fixture, { owned: true })
        if (!result.ok) throw invalidFixture(result.report)
        warnings = result.warnings
        for (const line of warnings) request.log.warn(`fixture posted to /_sandbox/reset: ${line}`)
        await world.reset({ fixture: result.fixture, source: '(posted to /_sandbox/reset)' }, keep)
      }
      // what an earlier fixture format held and was converted, one line per field
      return { status: 'reset', fixture: world.source, kept: keep, counts: world.counts(), ...(warnings.length > 0 ? { warnings } : {}) }
    }
  })

  app.route({
    method: 'GET',
    url: '/state',
    schema: { summary: 'The whole state as a fixture document; POST it to /_sandbox/reset to restore it' },
    handler: (request, reply) => {
      reply.type('application/json; charset=utf-8').send(JSON.stringify(request.world.state()))
    }
  })
}

/**
 * What a reset body asks for: nothing (a clean slate), `{keep: [...]}`, a fixture document, or a
 * fixture document with `keep` beside its keys.
 */
function resetRequest (body: unknown): { keep: ResetPart[], fixture?: unknown } {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    if (body === undefined || body === null) return { keep: [] }
    throw invalidField('(body)', 'must be a fixture document, {"keep": [parts]}, or empty')
  }
  const { keep, ...rest } = body as Record<string, unknown>
  if (keep !== undefined && (!Array.isArray(keep) || keep.some((part) => !(RESET_PARTS as readonly unknown[]).includes(part)))) {
    throw invalidField('keep', `must be a list of parts to keep: ${RESET_PARTS.join(', ')}`)
  }
  return { keep: (keep ?? []) as ResetPart[], ...(Object.keys(rest).length === 0 ? {} : { fixture: rest }) }
}
