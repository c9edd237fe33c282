import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { Readable } from 'node:stream'
import { POSTED_RESET_SOURCE, readResetBody } from '../../src/domain/worlds/fixture-job.js'
import { sha256Hex } from '../../src/domain/worlds/starts.js'
import { FIXTURE_BODY_LIMIT, postedBytes, UNPARSED_JSON_BYTES, UnparsedJson, useJsonBodies } from '../../src/http/json-body.js'
import type { ControlOptions } from './options.js'

/** Info, reset and state: one world as a whole. */
export default async function worldControl (fastify: FastifyInstance, { config, worlds }: ControlOptions) {
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

  // A large body (a fixture document) is read on the fixture worker: this scope leaves it unparsed.
  await app.register(async function resetScope (scope) {
    useJsonBodies(scope, { emptyIsAbsent: true, unparsedAbove: UNPARSED_JSON_BYTES, keepBytes: true })
    scope.route({
      method: 'POST',
      url: '/reset',
      bodyLimit: FIXTURE_BODY_LIMIT,
      schema: {
        summary: 'A clean slate: data, pending writes, journal, faults, clock, simulator and rate windows back to the start; {"keep": [parts]} keeps parts; a fixture document as body resets to that fixture',
        body: Type.Optional(Type.Unknown({ description: 'a fixture document (fixtures/schema.json)' }))
      },
      handler: async (request) => {
        const { world } = request
        const body = request.body
        // a large fixture for a world in memory comes back as a database to swap in whole
        const { keep, prepared, snapshot, warnings } = body instanceof UnparsedJson
          ? await worlds.fixtures.reset(body.bytes, body.maxValues, world.swapsData, world.id)
          : readResetBody(body)
        // what an earlier fixture format held and was converted, one line per field
        for (const line of warnings) request.log.warn(`fixture posted to /_sandbox/reset: ${line}`)
        const source = POSTED_RESET_SOURCE
        // a report of the world names the fixture it was reset to by its bytes' digest
        const posted = postedBytes(request)
        const digest = snapshot === undefined && prepared === undefined ? undefined : posted === undefined ? undefined : await sha256Hex(posted)
        await world.reset(snapshot !== undefined ? { snapshot, source, digest } : prepared !== undefined ? { fixture: prepared, source, digest } : undefined, keep)
        return { status: 'reset', fixture: world.source, kept: keep, counts: world.counts(), ...(warnings.length > 0 ? { warnings } : {}) }
      }
    })
  })

  app.route({
    method: 'GET',
    url: '/state',
    schema: { summary: 'The whole state as a fixture document; POST it to /_sandbox/reset to restore it' },
    handler: async (request, reply) => {
      // sent piece by piece: the pieces are not joined into one more copy of the document; a
      // large world's are written as they are sent (chunked: its length is known at its end)
      const document = await request.world.stateDocument(worlds.fixtures)
      reply.type('application/json; charset=utf-8')
      if (!Array.isArray(document)) {
        // A document given up (its reader took nothing for a while) ends its connection with a
        // reset: what the kernel still held for that reader, up to megabytes, is dropped at once
        // rather than kept for a reader that may never take it.
        document.once('error', () => request.raw.socket?.resetAndDestroy())
        return reply.send(document)
      }
      reply.header('content-length', document.reduce((n, piece) => n + piece.byteLength, 0))
      return reply.send(document.length === 1 ? document[0] : Readable.from(document, { objectMode: false }))
    }
  })
}
