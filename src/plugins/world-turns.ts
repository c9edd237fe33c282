import type { ServerResponse } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest, RequestPayload } from 'fastify'
import { tooManyRequests } from '../errors.js'
import { REQUESTS_WAITING, type RequestTurns } from '../domain/worlds/request-turns.js'
import { hasBody } from '../http/has-body.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The world whose turn the request holds (null: it holds none). */
    worldTurn: RequestTurns | null
  }
}

/** Gives back the turn the request holds, once, whichever end comes first. */
function giveBack (request: FastifyRequest): void {
  const turns = request.worldTurn
  if (turns === null) return
  request.worldTurn = null
  turns.leave()
}

/** Requests still in progress once their hooks returned, by their response (whose 'close' ends them). */
const inProgress = new WeakMap<ServerResponse, FastifyRequest>()

/** The 'close' listener of those responses: one function for all of them, so no closure per request. */
function giveBackOnClose (this: ServerResponse): void {
  const request = inProgress.get(this)
  if (request === undefined) return
  inProgress.delete(this)
  giveBack(request)
}

type Done = (error: Error | null, payload: RequestPayload) => void

/** True once the request's connection is gone: its response will emit no more 'close'. */
const hasEnded = (request: FastifyRequest, reply: FastifyReply): boolean =>
  reply.raw.destroyed || request.raw.destroyed || request.raw.socket?.destroyed === true

/** A Content-Length over the route's body limit: the body parser answers 413 without reading the body. */
function announcedTooLarge (request: FastifyRequest): boolean {
  const length = request.headers['content-length']
  if (length === undefined) return false
  // Fastify's route limit is the server's when the route sets none
  return Number(length) > (request.routeOptions.bodyLimit ?? Number.POSITIVE_INFINITY)
}

/** The request goes on holding its world's turn. */
function proceed (turns: RequestTurns, request: FastifyRequest, reply: FastifyReply, payload: RequestPayload, done: Done): void {
  request.worldTurn = turns
  try {
    // a request without a body runs to its answer inside this call, which gives the turn back (onSend)
    done(null, payload)
  } finally {
    // still held: it goes on later (a body to read, a worker); whatever ends it (a client that
    // leaves mid-body, an answer never sent), its response's end gives the turn back
    if (request.worldTurn !== null) {
      if (hasEnded(request, reply)) {
        // its client left before the turn was taken (a fault's delay, a wait): 'close' has been and gone
        giveBack(request)
      } else {
        inProgress.set(reply.raw, request)
        reply.raw.on('close', giveBackOnClose)
      }
    }
  }
}

/**
 * Each world's requests in progress are bounded (src/domain/worlds/request-turns.ts): a request
 * takes its world's turn once its world is known and it may open it (after authentication and
 * fault rules: a refused caller or a delayed answer takes none), before its body is read, and
 * gives it back as soon as its answer is ready (or it ends otherwise), not when a slow reader has
 * taken it. Registered before the other answer hooks: one of them may stop a dropped answer.
 * A request that starts at once costs a few counts: no callback, and no listener unless it is
 * still in progress when its hooks return.
 */
export function takeWorldTurns (app: FastifyInstance): void {
  app.decorateRequest('worldTurn', null)
  app.addHook('preParsing', (request: FastifyRequest, reply, payload, done) => {
    // the instance's own routes (health, metrics) wait for no world; nor does a body announced over
    // the route's limit, refused (413) from its headers
    if (request.routeOptions.config.instance === true || announcedTooLarge(request)) return done(null, payload)
    const { world } = request
    const turns = world.requests
    const bodiless = !hasBody(request.headers)
    if (turns.startNow(bodiless)) return proceed(turns, request, reply, payload, done)
    const entered = turns.enter(() => {
      // its client left while it waited: it takes no turn
      if (request.raw.destroyed) {
        turns.leave()
        return done(null, payload)
      }
      proceed(turns, request, reply, payload, done)
    }, bodiless)
    if (!entered) {
      done(tooManyRequests(`World ${world.id} has ${REQUESTS_WAITING} requests waiting behind those in progress; send this one again in a moment`, 1), payload)
    }
  })
  // the answer is ready: the turn goes back before it is written (a slow reader holds no turn)
  app.addHook('onSend', (request, _reply, payload, done) => {
    giveBack(request)
    done(null, payload)
  })
}
