import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Heads } from '../db/postgres/catalogue.js'
import type { HostedWorlds } from '../domain/worlds/hosted-worlds.js'
import type { WriteTurn } from '../domain/worlds/replica.js'
import type { World } from '../domain/worlds/world.js'
import { storageUnreachable, toResponse } from '../errors.js'
import { OPERATIONS } from '../versions/operations.js'
import { applySharedFaults } from './observe.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Hosted mode: what the request must be caught up to (read before its world is chosen). */
    hostedHeads?: Heads
    /** Hosted mode: the world whose replica the request was caught up on. */
    caughtUpWorld?: World
    /** Hosted mode: the turn of a request that may write its world, committed before it is answered. */
    writeTurn?: WriteTurn
    /** Hosted mode: ends the request's use of its world's copy (a copy in use is never dropped). */
    releaseCopy?: () => void
  }
}

/** Methods that never write: they only wait for the replica to hold what was acknowledged before them. */
const READS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** Control calls that change the catalogue (hosted-worlds.ts), not a world's data: they take no world's turn. */
const CATALOGUE_ROUTES = new Set(['POST /_sandbox/worlds', 'DELETE /_sandbox/worlds/:worldId', 'POST /_sandbox/tenants', 'DELETE /_sandbox/tenants/:tenantId'])

/**
 * Hosted mode over PostgreSQL (src/domain/worlds/replica.ts, hosted-worlds.ts): every request
 * first learns the heads (the catalogue's version, each world's log) and, when the catalogue is
 * behind, reloads it, before its world is chosen; then it waits until its world's replica holds
 * every write acknowledged before it arrived; one that may write takes the world's turn once its
 * body is read and checked, and its commit reaches PostgreSQL before its answer leaves (a failed
 * commit answers 503 instead). `commitBeforeAnswering` is registered before any other onSend hook
 * (a fault may drop the answer in one), `shareWorlds` before the request context (which chooses
 * the world), `waitForReplica` after it.
 */
export function commitBeforeAnswering (app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const turn = request.writeTurn
    if (turn === undefined) return payload
    request.writeTurn = undefined
    try {
      await turn.commit()
      return payload
    } catch (e) {
      const answer = toResponse(storageUnreachable(e))
      reply.code(answer.status).headers(answer.headers).header('content-type', answer.contentType)
      return answer.body
    }
  })
  // a request that ended without an answer (its client left) still commits what it wrote
  const settle = async (request: FastifyRequest) => {
    const turn = request.writeTurn
    request.writeTurn = undefined
    await turn?.commit().catch(() => undefined)
  }
  app.addHook('onResponse', settle)
  app.addHook('onRequestAbort', settle)
}

// The hooks below are written with callbacks: most requests need nothing waited for (what the
// instance heard is trusted, its replica caught up, the request only reads), and a callback hook
// answers those without the promises an async hook costs, on every request.

/** Goes on with `value` at once, or once it resolves when it is a promise (its failure to `fail`). */
function whenReady<T> (value: T | Promise<T>, next: (ready: T) => void, fail: (e: Error) => void): void {
  if (value instanceof Promise) value.then(next, fail)
  else next(value)
}

export function shareWorlds (app: FastifyInstance, hosted: HostedWorlds): void {
  app.addHook('onRequest', (request, reply, done) => {
    whenReady(hosted.freshNow() ?? hosted.fresh(), (heads) => {
      request.hostedHeads = heads
      done()
    }, done)
  })
}

export function waitForReplica (app: FastifyInstance, hosted: HostedWorlds): void {
  /** Brings the request's world to its head: undefined when there is nothing to wait for. */
  const catchUp = (request: FastifyRequest): Promise<void> | undefined => {
    const world = request.world
    if (request.caughtUpWorld === world || request.hostedHeads === undefined) return undefined
    request.caughtUpWorld = world
    request.releaseCopy?.()
    request.releaseCopy = hosted.use(world)
    const replica = hosted.replicaOf(world)
    const head = request.hostedHeads.worlds.get(world.id) ?? 0
    // a world this instance holds no copy of is loaded here, from its log's latest snapshot
    return replica === undefined || replica.caughtUpNow(head) ? undefined : replica.caughtUp(head)
  }
  const release = (request: FastifyRequest) => {
    request.releaseCopy?.()
    request.releaseCopy = undefined
  }
  app.addHook('onResponse', (request, reply, done) => { release(request); done() })
  app.addHook('onRequestAbort', (request, done) => { release(request); done() })
  // a partner request's world is chosen by the request context, a control request's by its path's
  // world id in the route's own hook: caught up on the first, then again if the route chose another
  app.addHook('onRequest', (request, reply, done) => whenReady(catchUp(request), () => done(), done))
  app.addHook('preParsing', (request, reply, payload, done) => whenReady(catchUp(request), () => done(null, payload), done))
  // a partner request's fault rules, once its world holds those made before it: their counts decided in PostgreSQL
  app.addHook('onRequest', (request, reply, done) => applySharedFaults(request, reply, done, storageUnreachable))
  app.addHook('preHandler', (request, reply, done) => {
    const replica = hosted.replicaOf(request.world)
    // a partner operation says whether it writes (a batch read is a POST); a control call writes unless it is a GET
    const operation = request.operation ?? null
    const writes = operation === null ? !READS.has(request.method) : OPERATIONS[operation].writes === true
    if (replica === undefined || !writes || CATALOGUE_ROUTES.has(`${request.method} ${request.routeOptions.url ?? ''}`)) {
      done()
      return
    }
    whenReady(replica.beginWrite(), (turn) => {
      request.writeTurn = turn
      done()
    }, done)
  })
}
