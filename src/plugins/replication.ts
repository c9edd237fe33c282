import type { FastifyInstance, FastifyRequest, preHandlerHookHandler, preParsingHookHandler } from 'fastify'
import type { Heads } from '../db/postgres/catalogue.js'
import type { HostedWorlds } from '../domain/worlds/hosted-worlds.js'
import type { WriteTurn } from '../domain/worlds/replica.js'
import type { World } from '../domain/worlds/world.js'
import { storageUnreachable, toResponse } from '../errors.js'
import { OPERATIONS, type OperationId } from '../versions/operations.js'
import { applySharedFaults } from './observe.js'
import { deletedWorldError } from './request-context.js'

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

// The hooks here are written with callbacks: most requests need nothing waited for (what the
// instance heard is trusted, its replica caught up, the request only reads), and a callback hook
// answers those without the promises an async hook costs, on every request.

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
  // every request property is decorated: one added later would give requests shapes of their own, slowing every read of them
  app.decorateRequest('writeTurn', undefined)
  app.addHook('onSend', (request, reply, payload, done) => {
    const turn = request.writeTurn
    if (turn === undefined) return done(null, payload)
    request.writeTurn = undefined
    turn.commit().then(() => done(null, payload), (e) => {
      const answer = toResponse(storageUnreachable(e))
      reply.code(answer.status).headers(answer.headers).header('content-type', answer.contentType)
      done(null, answer.body)
    })
  })
}

/** Goes on with `value` at once, or once it resolves when it is a promise (its failure to `fail`). */
function whenReady<T> (value: T | Promise<T>, next: (ready: T) => void, fail: (e: Error) => void): void {
  if (value instanceof Promise) value.then(next, fail)
  else next(value)
}

export function shareWorlds (app: FastifyInstance, hosted: HostedWorlds): void {
  app.decorateRequest('hostedHeads', undefined)
  app.addHook('onRequest', (request, reply, done) => {
    whenReady(hosted.freshNow() ?? hosted.fresh(), (heads) => {
      request.hostedHeads = heads
      done()
    }, done)
  })
}

export function waitForReplica (app: FastifyInstance, hosted: HostedWorlds): void {
  app.decorateRequest('caughtUpWorld', undefined)
  app.decorateRequest('releaseCopy', undefined)
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
  const catchUpAgain: preParsingHookHandler = (request, reply, payload, done) => whenReady(catchUp(request), () => done(null, payload), done)
  /** Takes the world's turn for a request that may write (a route of reads and writes decides by the method). */
  const takeTurn: preHandlerHookHandler = (request, reply, done) => {
    const replica = hosted.replicaOf(request.world)
    if (replica === undefined || !writes(request.method, request.routeOptions.config.operation)) return done()
    whenReady(replica.beginWrite(), (turn) => {
      request.writeTurn = turn
      // deleted while the request waited for its turn: it writes nothing (its turn is given back as it ends)
      done(request.world.deleted ? deletedWorldError(request) : undefined)
    }, done)
  }
  // a request that ended, answered or not (its client left), commits what it wrote, then gives its copy back
  const settle = (request: FastifyRequest, done: () => void) => {
    const turn = request.writeTurn
    request.writeTurn = undefined
    const release = () => {
      request.releaseCopy?.()
      request.releaseCopy = undefined
      done()
    }
    if (turn === undefined) release()
    else turn.commit().then(release, release)
  }
  app.addHook('onResponse', (request, reply, done) => settle(request, done))
  app.addHook('onRequestAbort', settle)
  // a partner request's world is chosen by the request context; then its fault rules, once its
  // world holds those made before it: their counts decided in PostgreSQL
  app.addHook('onRequest', (request, reply, done) => whenReady(catchUp(request), () => applySharedFaults(request, reply, done, storageUnreachable), done))
  // Hooks only the routes that need them carry (a partner read needs neither): a control route's
  // world is chosen by its path's world id, in its own hook, so it is caught up again before its
  // body is read; a route that may write takes its world's turn once its body is checked.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    if (route.url.includes(':worldId')) route.preParsing = [...hooksOf(route.preParsing), catchUpAgain]
    if (methods.some((m) => writes(m, route.config?.operation) && !CATALOGUE_ROUTES.has(`${m} ${route.url}`))) {
      route.preHandler = [...hooksOf(route.preHandler), takeTurn]
    }
  })
}

/** A partner operation says whether it writes (a batch read is a POST); any other call writes unless it is a read. */
const writes = (method: string, operation: OperationId | undefined): boolean =>
  operation === undefined ? !READS.has(method) : OPERATIONS[operation].writes === true

const hooksOf = <T>(hooks: T | T[] | undefined): T[] => hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks]
