import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { draining } from '../errors.js'
import type { SandboxMetrics } from '../metrics/registry.js'
import { UNMATCHED_ROUTE, type RouteStats } from '../metrics/requests.js'
import { Drain } from './drain.js'
import type { OneLineRequestLog } from './request-log.js'
import { worldOf } from './request-world.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** What an operator asks of this instance: its health, its metrics, its drain. */
    operations: Operations
  }
  interface FastifyRequest {
    /** The tenant whose token a control call shows (routes/control/tokens.ts), for the log and the metrics. */
    callerTenant: string | undefined
  }
  interface FastifyContextConfig {
    /** A route about this instance (health, metrics): it needs no world's data, and never waits for PostgreSQL. */
    instance?: boolean
    /** The route's request counts by method, made as it is registered. */
    requestStats?: ReadonlyMap<string, RouteStats>
  }
}

export interface Operations {
  readonly metrics: SandboxMetrics
  readonly drain: Drain
  /** What is wrong with this instance now (empty: nothing), learnt within a second. */
  problems(): Promise<string[]>
  /**
   * Called once the requests in flight are answered (or answered 503 at the drain's end): where
   * an instance gives up what it holds for the others (hosted mode's world leases, each world's
   * last records written first) so that they take it at once rather than when it runs out.
   */
  handOver(): Promise<void>
}

/** What the first hook a request passes does first (the request context's, or its own in hosted mode): its id echoed, its refusal while the instance drains, its tracking. */
export type Admit = (request: FastifyRequest, reply: FastifyReply) => Error | undefined

/**
 * The operator's view of every request, at its two ends, at almost no cost: when it arrives
 * (`admit`), its id echoed (`x-request-id`: src/http/request-id.ts made it), its refusal once the
 * instance drains, its place among the requests in flight; when it completes, its count and
 * latency (metrics) and its line in the log, naming its world and tenant (request-log.ts). The
 * first hook a request passes calls `admit`: the request context's (a hook of its own would cost
 * every request a few percent), or, in hosted mode, whose first hook may wait for PostgreSQL, one
 * registered here, before any other. A request refused here is still journaled in its world
 * (request-world.ts).
 */
export function observeOperations (app: FastifyInstance, operations: Operations, requestLog: OneLineRequestLog, ownHook: boolean): Admit {
  const { drain, metrics } = operations
  app.decorate('operations', operations)
  app.decorateRequest('callerTenant', undefined)
  app.decorateReply('drainSlot', -1)
  const admit: Admit = (request, reply) => {
    reply.header('x-request-id', request.id)
    if (drain.refusing) return draining()
    drain.track(reply)
    return undefined
  }
  // A callback hook, not an async one: it runs on every request.
  if (ownHook) app.addHook('onRequest', (request, reply, done) => done(admit(request, reply)))
  const { requests } = metrics
  const count = (stats: RouteStats, request: FastifyRequest, reply: FastifyReply) => {
    const world = request.world ?? worldOf(request, app.worlds)
    requests.count(stats, reply.statusCode, world, world.tenantId ?? request.callerTenant ?? '', reply.elapsedTime / 1000)
  }
  // each route's counts are made as it is registered and kept in its config: no lookup by its path per request
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    const requestStats = new Map(methods.map((method) => [String(method), requests.routeStats(route.url, String(method))]))
    route.config = { ...route.config, requestStats }
  })
  const unmatched = new Map<string, RouteStats>()
  // as each request completes (the request log's step after the journal's): its count, and its end for the drain
  requestLog.operations = (request: FastifyRequest, reply: FastifyReply) => {
    drain.done(reply)
    const { config } = request.routeOptions
    const stats = config.requestStats === undefined
      ? unmatchedStats(request.method)
      : config.requestStats.get(request.method) ?? requests.routeStats(config.url, request.method)
    count(stats, request, reply)
  }
  /** The counts of requests no route matched (a 404 of the router), by method. */
  function unmatchedStats (method: string): RouteStats {
    let stats = unmatched.get(method)
    if (stats === undefined) unmatched.set(method, stats = requests.routeStats(UNMATCHED_ROUTE, method))
    return stats
  }
  return admit
}

/** The tenant a request is about: its world's, or the tenant whose token a control call shows ('' for none). */
export function tenantOf (request: FastifyRequest): string {
  return request.world?.tenantId ?? request.callerTenant ?? ''
}
