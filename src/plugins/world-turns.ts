import type { FastifyInstance, FastifyRequest } from 'fastify'
import { tooManyRequests } from '../errors.js'
import { REQUESTS_WAITING } from '../domain/worlds/request-turns.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Ends the request's turn among its world's requests in progress (null: it holds none). */
    leaveWorld: (() => void) | null
  }
}

/**
 * Each world's requests in progress are bounded (src/domain/worlds/request-turns.ts): a request
 * takes its world's turn once its world is known and it may open it (after authentication and
 * fault rules: a refused caller or a delayed answer takes none), before its body is read, and
 * gives it back as soon as its answer is ready (or it ends otherwise), not when a slow reader has
 * taken it. Registered before the other answer hooks: one of them may stop a dropped answer.
 */
export function takeWorldTurns (app: FastifyInstance): void {
  app.decorateRequest('leaveWorld', null)
  const leave = (request: FastifyRequest) => {
    const leaveWorld = request.leaveWorld
    request.leaveWorld = null
    leaveWorld?.()
  }
  app.addHook('preParsing', (request, reply, payload, done) => {
    const { world } = request
    const entered = world.requests.enter(() => {
      // its client left while it waited: it takes no turn
      if (request.raw.destroyed) {
        world.requests.leave()
        return done(null, payload)
      }
      let left = false
      request.leaveWorld = () => {
        if (left) return
        left = true
        world.requests.leave()
      }
      // whatever else ends it (a client that leaves mid-body, an answer never sent): its response's end
      reply.raw.once('close', () => leave(request))
      done(null, payload)
    })
    if (!entered) {
      done(tooManyRequests(`World ${world.id} has ${REQUESTS_WAITING} requests waiting behind those in progress; send this one again in a moment`, 1), payload)
    }
  })
  // the answer is ready: the turn goes back before it is written (a slow reader holds no turn)
  app.addHook('onSend', (request, reply, payload, done) => {
    leave(request)
    done(null, payload)
  })
}
