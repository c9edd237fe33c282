import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { TSchema } from '@sinclair/typebox'
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import { Value } from '@sinclair/typebox/value'
import type { FastifyInstance } from 'fastify'
import { renderJunit } from '../../src/domain/examiner/render-junit.js'
import { renderHtml } from '../../src/domain/examiner/render-html.js'
import { firstErrors } from '../../src/domain/examiner/mirror-body.js'
import { signReport } from '../../src/domain/examiner/signature.js'
import { sessionStillOpen, validationFailed } from '../../src/errors.js'
import { UNPARSED_JSON_BYTES, UnparsedJson, useJsonBodies } from '../../src/http/json-body.js'
import {
  MirrorAcceptedSchema, MirrorBody, ReportQuery, ReportSchema, ReportSummarySchema, SessionIdParams, SessionSchema, SessionStartBody
} from '../../src/schemas/examiner.js'
import type { Report } from '../../src/schemas/examiner.js'
import { Type } from '@sinclair/typebox'
import type { ControlOptions } from './options.js'

/**
 * A mirror of 100,000 clients (MIRROR_CLIENTS_MAX) is about 6.5 MiB as JSON (8 MiB with long
 * timestamps); a larger agency compares its clients up to a number with upTo.
 */
export const MIRROR_BODY_LIMIT = 8 * 1024 * 1024

/** The report's other formats (JSON is the route's own answer). */
const RENDERERS: Record<'junit' | 'html', { type: string, render: (report: Report) => string }> = {
  junit: { type: 'application/xml; charset=utf-8', render: renderJunit },
  html: { type: 'text/html; charset=utf-8', render: renderHtml }
}

/**
 * A long client list is checked by TypeBox and reports its first errors, instead of Ajv
 * collecting an error for every bad item. Path parameters are converted first (the id is text),
 * after plain-integers checked they are digits. A large body is left unparsed, to be read and
 * checked on the fixture worker.
 */
function firstErrorsValidator ({ schema, httpPart }: { schema: unknown, httpPart?: string }) {
  let check: TypeCheck<TSchema> | undefined
  return (input: unknown) => {
    if (input instanceof UnparsedJson) return { value: input }
    check ??= TypeCompiler.Compile(schema as TSchema)
    const data = httpPart === 'body' ? input : Value.Convert(schema as TSchema, input)
    if (check.Check(data)) return { value: data }
    return { error: validationFailed(firstErrors(check, data)) }
  }
}

/** Examiner sessions: record a test run of an integration and report whether it is ready for the live service. */
export default async function sessionControl (fastify: FastifyInstance, { worlds, config }: ControlOptions) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { signingKey, signerName } = config

  app.post('/sessions', {
    schema: {
      summary: 'Start recording the vendor requests of one integration (clientId) or of all',
      body: SessionStartBody,
      response: { 201: SessionSchema }
    },
    // No body at all is a session of every integration with a default name.
    preValidation: (request, _reply, done) => {
      request.body ??= {}
      done()
    }
  }, async (request, reply) => {
    const { world, body } = request
    return reply.code(201).send(await world.examiner.start({ ...body, clientId: world.sessionClientId(body.clientId) }))
  })

  app.get('/sessions', { schema: { summary: 'Sessions, oldest first', response: { 200: Type.Array(SessionSchema) } } }, (request) => request.world.examiner.list())

  app.get('/sessions/:id', { schema: { summary: 'One session', params: SessionIdParams, response: { 200: SessionSchema } } },
    (request) => request.world.examiner.get(request.params.id))

  app.post('/sessions/:id/end', {
    schema: { summary: 'Stop recording and sum up the report, which is kept: the session\'s report from now on (ending an ended session answers it again)', params: SessionIdParams, response: { 200: ReportSummarySchema } }
  }, (request) => request.world.examiner.end(request.params.id))

  app.delete('/sessions/:id', {
    schema: { summary: 'Delete a session, open or ended, with its recorded requests, mirrors and report', params: SessionIdParams }
  }, async (request, reply) => {
    await request.world.examiner.delete(request.params.id)
    return reply.code(204).send()
  })

  // A large mirror (up to 100,000 clients, 8 MiB) is read on the fixture worker: this scope leaves it unparsed.
  await app.register(async function mirrorScope (scope) {
    useJsonBodies(scope, { emptyIsAbsent: true, unparsedAbove: UNPARSED_JSON_BYTES })
    scope.withTypeProvider<TypeBoxTypeProvider>().post('/sessions/:id/mirror', {
      bodyLimit: MIRROR_BODY_LIMIT,
      validatorCompiler: firstErrorsValidator,
      schema: {
        summary: 'What the integration stored for an agency after its sync (compared in the report; a later post for the agency replaces it)',
        params: SessionIdParams,
        body: MirrorBody,
        response: { 200: MirrorAcceptedSchema }
      }
    }, async (request) => {
      const body: unknown = request.body
      const mirror = body instanceof UnparsedJson ? await worlds.fixtures.mirror(body.bytes, body.maxValues, request.world.id) : request.body
      return request.world.examiner.mirror(request.params.id, mirror)
    })
  })

  app.get('/sessions/:id/report', {
    schema: {
      summary: 'The report: verdict, findings rule by rule, sync check, coverage (format=junit or html for CI and people); an ended session\'s JSON report is signed when the sandbox has a signing key',
      params: SessionIdParams,
      querystring: ReportQuery,
      response: { 200: ReportSchema }
    }
  }, async (request, reply) => {
    const format = request.query.format ?? 'json'
    const report = await request.world.examiner.report(request.params.id)
    if (request.query.final === true && report.session.endedAt === undefined) throw sessionStillOpen(report.session.id)
    if (format === 'json') {
      const signed = signingKey === undefined ? undefined : await signReport(report, { key: signingKey, signerName })
      // the signed text goes out as it was signed (its canonical form), not re-serialized by the response schema
      return signed === undefined ? reply.send(report) : reply.type('application/json; charset=utf-8').send(signed.text as never)
    }
    const renderer = RENDERERS[format]
    // A rendered text: Fastify sends a string as it is (the response schema describes the JSON form).
    return reply.type(renderer.type).send(renderer.render(report) as never)
  })
}
