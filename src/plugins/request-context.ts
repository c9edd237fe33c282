import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import type { WorldRegistry } from '../domain/worlds/registry.js'
import type { World } from '../domain/worlds/world.js'
import { Readable } from 'node:stream'
import { toResponse, worldDeleted, type ApiError } from '../errors.js'
import type { Credentials } from '../http/basic-credentials.js'
import { guardControlRequest } from './control-guard.js'
import { stampDate } from '../http/date-header.js'
import { isListing } from './examine.js'
import { applyFaults, recordLostAnswer } from './observe.js'
import type { Admit } from './operations.js'
import { worldOf } from './request-world.js'

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The world the request is about: a partner request's by its Client Id, a control request's by
     * the world id in its path (routes/control/tokens.ts), any other request's the default world.
     */
    world: World
    /** The Basic credentials a partner request presents (checked by the vendor pipeline), decoded once. */
    credentials: Credentials | null
    /** Where a partner request stood among its world's examiner records when it arrived (null: no session recorded then). */
    examinerArrival: number | null
  }
  interface FastifyContextConfig {
    /** The route deletes the world it is about (DELETE /_sandbox/worlds/{id}): its own answer stands. */
    removesWorld?: boolean
  }
}

/**
 * The request's context, built once, in the one hook every request passes first: what the
 * operator sees of it (`admit`: its id, its refusal while the instance drains), the answer's
 * nosniff header (no body is ever read as another type than it is sent as); for a partner
 * request, its Basic credentials decoded and its world chosen by their Client Id (which marks the
 * world used) and, for a listing an examiner session records, its place among the world's records, then
 * the world's fault rules; for any other, the default world and, under
 * /_sandbox, the control plane's guard. Nothing after this parses the credentials or the world
 * again; the route's operation and version come with the route (src/plugins/vendor.ts).
 */
export function buildRequestContext (app: FastifyInstance, worlds: WorldRegistry, config: Pick<Config, 'host' | 'allowedHosts'>, admit?: Admit): void {
  app.decorateRequest('world', null as unknown as World)
  app.decorateRequest('credentials', null)
  app.decorateRequest('examinerArrival', null)
  // A callback hook, not an async one: it runs on every request and most return at once.
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done) => {
    reply.header('x-content-type-options', 'nosniff')
    // the request's id, and its refusal while the instance drains (operations.ts), unless a hook before did it
    const refused = admit?.(request, reply)
    if (refused !== undefined) return done(refused)
    const world = worldOf(request, worlds)
    if (!request.url.startsWith('/vendor/')) return done(guardControlRequest(request, reply, config))
    const { credentials } = request
    world.touch()
    // a change the world makes while a listing is answered must be placed after it (sync.ts)
    const { examiner } = world
    if (examiner.recording && isListing(request.routeOptions.config.operation) && examiner.wants(credentials?.clientId ?? null)) {
      request.examinerArrival = examiner.arrival()
    }
    applyFaults(request, reply, done)
  })

  // A world deleted (or expired) while a request to it waited for its body or its turn: nothing is applied to it.
  app.addHook('preHandler', (request, reply, done) => {
    done(request.world?.deleted === true ? deletedWorldError(request) : undefined)
  })

  // And the one hook every answer passes last: dated by its world's clock, unless it is lost (observe.ts).
  app.addHook('onSend', (request, reply, payload, done) => {
    // a request to a world deleted while it was handled answers as a request after the delete would
    const answer = request.world?.deleted === true ? answerOfDeleted(request, reply, payload) : payload
    stampDate(app, request, reply)
    // a dropped answer is never written: the hook chain stops here
    if (recordLostAnswer(request, reply) !== 'dropped') done(null, answer)
  })
}

const isPartnerRequest = (request: FastifyRequest) => request.url.startsWith('/vendor/')

/** What a request to a world deleted meanwhile answers: 401 to a partner request, 404 to a control one. */
export const deletedWorldError = (request: FastifyRequest): ApiError => worldDeleted(request.world.id, isPartnerRequest(request))

/** The answer, unless its world was deleted while it was handled: then the deleted world's answer (a body being streamed stops). */
function answerOfDeleted (request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
  const error = deletedWorldError(request)
  if (request.routeOptions.config.removesWorld === true || reply.statusCode === error.status) return payload
  if (payload instanceof Readable) payload.destroy()
  const answer = toResponse(error)
  reply.code(answer.status).headers(answer.headers).header('content-type', answer.contentType).removeHeader('content-length')
  return answer.body
}
