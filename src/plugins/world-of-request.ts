import type { FastifyRequest, RouteOptions } from 'fastify'
import { worldIdOfClientId } from '../domain/worlds/world-ids.js'
import { basicCredentials } from '../http/basic-credentials.js'
import { OPERATIONS, type OperationId } from '../versions/operations.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A control route about one world (the default one unprefixed, else the path's {worldId}): hosted mode answers it at the world's owner. */
    worldRoute?: boolean
  }
}

/**
 * Which world a request is about, as hosted mode routes it to the world's owner (owner-routing.ts):
 * a partner request's by its Basic user name's `@<world id>` (else the default world), a control
 * route of one world by its path (routes/control/index.ts marks them). Undefined: a request of
 * the process (health, documents, the console, the worlds' list and creation, a world's deletion,
 * tenants), answered by whichever instance it reaches.
 */
export function worldOfRequest (request: FastifyRequest): string | undefined {
  if (request.url.startsWith('/vendor/')) {
    const clientId = basicCredentials(request.headers.authorization)?.clientId
    return (clientId === undefined ? undefined : worldIdOfClientId(clientId)) ?? 'default'
  }
  if (request.routeOptions.config.worldRoute !== true) return undefined
  return (request.params as { worldId?: string }).worldId ?? 'default'
}

/** A world's deletion: answered by the world's owner when one holds it (it gives the world up before it answers), else by any instance. */
export const isWorldDeletion = (request: FastifyRequest): boolean =>
  request.method === 'DELETE' && request.routeOptions.url === '/_sandbox/worlds/:worldId'

/** Whether a route is a world's (its requests may take the world's turn to write). */
export const isWorldRoute = (route: Pick<RouteOptions, 'url' | 'config'>): boolean =>
  route.url.startsWith('/vendor/') || (route.config as { worldRoute?: boolean } | undefined)?.worldRoute === true

const READS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** A partner operation says whether it writes (a batch read is a POST); any other call writes unless it is a read. */
export const mayWrite = (method: string, operation: OperationId | undefined): boolean =>
  operation === undefined ? !READS.has(method) : OPERATIONS[operation].writes === true
