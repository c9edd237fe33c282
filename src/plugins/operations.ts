import type { FastifyInstance, FastifyReply, FastifyRequest, onResponseHookHandler } from 'fastify'
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
  // each route counts its own requests, with its counts at hand (no lookup of the route per request)
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    const stats = new Map(methods.map((method) => [String(method), requests.routeStats(route.url, String(method))]))
    const only = methods.length === 1 ? stats.get(String(methods[0])) : undefined
    const counted: onResponseHookHandler = (request, reply, done) => {
      count(only ?? stats.get(request.method) ?? requests.routeStats(route.url, request.method), request, reply)
      done()
    }
    route.onResponse = [...hooksOf(route.onResponse), counted]
  })
  const unmatched = new Map<string, RouteStats>()
  requestLog.completed = (request: FastifyRequest, reply: FastifyReply) => {
    drain.done(reply)
    // no route's hook counted it
    if (request.is404) {
      let stats = unmatched.get(request.method)
      if (stats === undefined) unmatched.set(request.method, stats = requests.routeStats(UNMATCHED_ROUTE, request.method))
      count(stats, request, reply)
    }
  }
  return admit
}

/** The tenant a request is about: its world's, or the tenant whose token a control call shows ('' for none). */
export function tenantOf (request: FastifyRequest): string {
  return request.world?.tenantId ?? request.callerTenant ?? ''
}

const hooksOf = <T>(hooks: T | T[] | undefined): T[] => hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks]
