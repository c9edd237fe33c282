import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { draining } from '../errors.js'
import type { SandboxMetrics } from '../metrics/registry.js'
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
   * Called once the drain has begun, before the requests in flight are waited for: where an
   * instance gives up what it holds for the others (hosted mode's world leases) so that they
   * take it at once rather than when it runs out.
   */
  handOver(): Promise<void>
}

/**
 * The operator's view of every request, at its two ends, at almost no cost: its id echoed
 * (`x-request-id`: src/http/request-id.ts made it), its place among the requests in flight, and
 * its refusal once the instance drains; when it completes, its count and latency (metrics) and
 * its line in the log, naming its world and tenant (request-log.ts). Registered before any other
 * hook, so a request refused here is still journaled in its world (request-world.ts).
 */
export function observeOperations (app: FastifyInstance, operations: Operations, requestLog: OneLineRequestLog): void {
  const { drain, metrics } = operations
  app.decorate('operations', operations)
  app.decorateRequest('callerTenant', undefined)
  // A callback hook, not an async one: it runs on every request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    if (drain.refusing) return done(draining())
    drain.track(reply)
    done()
  })
  requestLog.completed = (request: FastifyRequest, reply: FastifyReply) => {
    drain.done(reply)
    const world = worldOf(request, app.worlds)
    metrics.requests.count(request.routeOptions.url, request.method, reply.statusCode, world.id, tenantOf(request), reply.elapsedTime / 1000)
  }
}

/** The tenant a request is about: its world's, or the tenant whose token a control call shows ('' for none). */
export function tenantOf (request: FastifyRequest): string {
  return request.world?.tenantId ?? request.callerTenant ?? ''
}
