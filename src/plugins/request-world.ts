import type { FastifyRequest } from 'fastify'
import type { WorldRegistry } from '../domain/worlds/registry.js'
import type { World } from '../domain/worlds/world.js'
import { basicCredentials } from '../http/basic-credentials.js'

/**
 * The world a request is about, chosen once: a partner request's by the Client Id of its Basic
 * credentials (decoded here, once), any other request's the default world (a control route of
 * another world makes that one the request's later: routes/control/tokens.ts). The request context
 * chooses it first thing; a request answered before that (refused while the instance drains, or
 * while PostgreSQL cannot be reached) is given it when it is recorded, so it is journaled in its
 * world all the same.
 */
export function worldOf (request: FastifyRequest, worlds: WorldRegistry): World {
  if (request.world !== null) return request.world
  if (!request.url.startsWith('/vendor/')) {
    request.world = worlds.default
    return request.world
  }
  request.credentials ??= basicCredentials(request.headers.authorization)
  request.world = worlds.forClientId(request.credentials?.clientId)
  return request.world
}
