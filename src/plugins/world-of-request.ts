import type { FastifyRequest } from 'fastify'
import { worldIdOfClientId } from '../domain/worlds/world-ids.js'
import { basicCredentials } from '../http/basic-credentials.js'
import { OPERATIONS, type OperationId } from '../versions/operations.js'

/** Where the control routes of any world are (routes/control/index.ts registers each of them unprefixed too, for the default world). */
const WORLD_PREFIX = '/_sandbox/worlds/:worldId'

/**
 * The control routes about one world, among the URLs registered: those under /worlds/{worldId}
 * (the world itself included) and their unprefixed twins of the default world. A world's
 * deletion is not among them (isWorldDeletion).
 */
export function worldRouteUrls (urls: Iterable<string>): Set<string> {
  const world = new Set<string>()
  for (const url of urls) {
    if (url === WORLD_PREFIX) world.add(url)
    if (!url.startsWith(`${WORLD_PREFIX}/`)) continue
    world.add(url)
    world.add(`/_sandbox${url.slice(WORLD_PREFIX.length)}`)
  }
  return world
}

/**
 * Which world a request is about, as hosted mode routes it to the world's owner (owner-routing.ts):
 * a partner request's by its Basic user name's `@<world id>` (else the default world), a control
 * route of one world by its path (`worldRoutes`: worldRouteUrls). Undefined: a request of the
 * process (health, documents, the console, the worlds' list and creation, a world's deletion,
 * tenants), answered by whichever instance it reaches.
 */
export function worldOfRequest (request: FastifyRequest, worldRoutes: ReadonlySet<string>): string | undefined {
  if (request.url.startsWith('/vendor/')) {
    const clientId = basicCredentials(request.headers.authorization)?.clientId
    return (clientId === undefined ? undefined : worldIdOfClientId(clientId)) ?? 'default'
  }
  const url = request.routeOptions.url
  if (url === undefined || !worldRoutes.has(url) || (request.method === 'DELETE' && url === WORLD_PREFIX)) return undefined
  return (request.params as { worldId?: string }).worldId ?? 'default'
}

/** A world's deletion: answered by the world's owner when one holds it (it gives the world up before it answers), else by any instance. */
export const isWorldDeletion = (request: FastifyRequest): boolean =>
  request.method === 'DELETE' && request.routeOptions.url === WORLD_PREFIX

const READS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** A partner operation says whether it writes (a batch read is a POST); any other call writes unless it is a read. */
export const mayWrite = (method: string, operation: OperationId | undefined): boolean =>
  operation === undefined ? !READS.has(method) : OPERATIONS[operation].writes === true
