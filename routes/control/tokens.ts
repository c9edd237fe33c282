import type { FastifyInstance, FastifyRequest } from 'fastify'
import { createHash, timingSafeEqual } from 'node:crypto'
import type { WorldRegistry } from '../../src/domain/worlds/registry.js'
import type { World } from '../../src/domain/worlds/world.js'
import { ApiError, notFound } from '../../src/errors.js'

const digest = (s: string) => createHash('sha256').update(s).digest()

const tokenRequired = () => new ApiError(401, 'control-token', 'Unauthorized',
  "This sandbox protects its control API: send Authorization: Bearer <SANDBOX_CONTROL_TOKEN>, or a world's token for that world's routes",
  undefined, false, { 'www-authenticate': 'Bearer realm="agency-sandbox control"' })

export interface ControlTokens {
  /** onRequest hook of routes only the sandbox's token opens (when one is set); the console's page is open, as is health. */
  sandboxOnly: (request: FastifyRequest) => Promise<void>
  /** Whether the request may use the world's routes: no token set, the sandbox's token, or the world's own. */
  opens: (request: FastifyRequest, world: World | undefined) => boolean
}

/** The control tokens: the sandbox's (SANDBOX_CONTROL_TOKEN) and each world's, compared in constant time. */
export function controlTokens (sandboxToken: string | undefined): ControlTokens {
  const expected = sandboxToken === undefined ? undefined : digest(`Bearer ${sandboxToken}`)
  const given = (request: FastifyRequest) => {
    const header = request.headers.authorization
    return typeof header === 'string' ? digest(header.trim()) : undefined
  }
  const opens = (request: FastifyRequest, world: World | undefined): boolean => {
    if (expected === undefined) return true
    const presented = given(request)
    if (presented === undefined) return false
    // both compared, whichever matches, so the time taken does not tell which token was close
    const bySandbox = timingSafeEqual(presented, expected)
    const byWorld = world?.token !== undefined && timingSafeEqual(presented, digest(`Bearer ${world.token}`))
    return bySandbox || byWorld
  }
  return {
    opens,
    async sandboxOnly (request) {
      if (expected === undefined) return
      // The console's page loads without a token and then asks for it.
      const path = request.url.split('?')[0]
      if (request.method === 'GET' && (path === '/_sandbox/ui' || path.startsWith('/_sandbox/ui/'))) return
      if (!opens(request, undefined)) throw tokenRequired()
    }
  }
}

/**
 * The routes of the world named by the path's {worldId}: the world becomes the request's (and is
 * marked used), once the token opens it; an unknown or expired world is a 404.
 */
export function worldScope (app: FastifyInstance, worlds: WorldRegistry, tokens: ControlTokens): void {
  app.addHook('onRequest', async (request) => {
    const { worldId } = request.params as { worldId: string }
    const world = worlds.get(worldId)
    if (!tokens.opens(request, world)) throw tokenRequired()
    if (world === undefined) {
      throw notFound(`No world ${worldId.slice(0, 40)}; GET /_sandbox/worlds lists the worlds (a world idle past its ttlSeconds is deleted)`)
    }
    world.touch()
    request.world = world
  })
}
