import type { FastifyInstance, FastifyRequest } from 'fastify'
import { timingSafeEqual } from 'node:crypto'
import { tokenDigest, type TokenHolders } from '../../src/domain/worlds/control-tokens.js'
import type { WorldRegistry } from '../../src/domain/worlds/registry.js'
import type { Tenant, TokenHolder } from '../../src/domain/worlds/tenants.js'
import type { KnownWorld } from '../../src/domain/worlds/world.js'
import { ApiError, notFound, tenantRoutesNeedAdministrator, tenantTokenOnDefaultWorld } from '../../src/errors.js'

const tokenRequired = () => new ApiError(401, 'control-token', 'Unauthorized',
  "This sandbox protects its control API: send Authorization: Bearer <SANDBOX_CONTROL_TOKEN>, a tenant's token for its worlds (/_sandbox/worlds), or a world's token for that world's routes",
  undefined, false, { 'www-authenticate': 'Bearer realm="agency-sandbox control"' })

/**
 * Who calls the control plane. The administrator: the sandbox's token, or, when the sandbox has
 * none, anyone who shows no tenant's token (the plane is open on loopback, as it always was). A
 * tenant, by its token, set or not: its holder is confined to its worlds either way. A world, by
 * its token. Nobody: no token, or one the sandbox never made, while the sandbox has a token.
 */
export type ControlCaller =
  | { kind: 'administrator' }
  | { kind: 'tenant', tenant: Tenant }
  | { kind: 'world', world: KnownWorld }
  | { kind: 'nobody' }

export interface ControlTokens {
  callerOf: (request: FastifyRequest) => ControlCaller
  /** The tenant whose token the request shows, if any. */
  tenantOf: (request: FastifyRequest) => Tenant | undefined
  /** Whether the request's caller administers the sandbox (its token, or any caller of a sandbox without one). */
  administers: (request: FastifyRequest) => boolean
  /** onRequest hook of the default world's routes (and the console): the administrator's; a tenant's token is 403. */
  sandboxOnly: (request: FastifyRequest) => Promise<void>
  /** onRequest hook of the tenants' routes: the administrator's alone; a tenant's or a world's token is 403. */
  administratorOnly: (request: FastifyRequest) => Promise<void>
  /** onRequest hook of routes a tenant calls for its own worlds (create, list) as the administrator does for all. */
  administratorOrTenant: (request: FastifyRequest) => Promise<void>
  /**
   * Whether the request may open this world's routes: `refused` (401) without a token that could;
   * `unknown` (404) when the world does not exist for the caller.
   */
  worldAccess: (request: FastifyRequest, world: KnownWorld | undefined) => 'open' | 'unknown' | 'refused'
}

const ADMINISTRATOR: ControlCaller = { kind: 'administrator' }
const NOBODY: ControlCaller = { kind: 'nobody' }

const bearerToken = (request: FastifyRequest): string | undefined => {
  const header = request.headers.authorization
  if (typeof header !== 'string') return undefined
  const value = header.trim()
  return value.startsWith('Bearer ') ? value.slice(7) : undefined
}

/** The console's page loads without a token and then asks for it. */
export const isConsolePage = (request: FastifyRequest) => {
  const path = request.url.split('?')[0]
  return request.method === 'GET' && (path === '/_sandbox/ui' || path.startsWith('/_sandbox/ui/'))
}

/**
 * The control tokens: the sandbox's (SANDBOX_CONTROL_TOKEN), compared in constant time, and those
 * the sandbox made (each world's, each tenant's), found by their digest (control-tokens.ts).
 */
export function controlTokens (sandboxToken: string | undefined, holders: TokenHolders<TokenHolder>): ControlTokens {
  const expected = sandboxToken === undefined ? undefined : tokenDigest(sandboxToken)
  const open = expected === undefined

  const callerOf = (request: FastifyRequest): ControlCaller => {
    const token = bearerToken(request)
    if (token === undefined) return open ? ADMINISTRATOR : NOBODY
    // both looked at, whichever matches, so the time taken does not tell which token was close
    const holder = holders.find(token)
    const bySandbox = expected !== undefined && timingSafeEqual(tokenDigest(token), expected)
    if (bySandbox) return ADMINISTRATOR
    if (holder?.kind === 'tenant') {
      // named in the request's log line and metrics
      request.callerTenant = holder.tenant.id
      return { kind: 'tenant', tenant: holder.tenant }
    }
    if (holder !== undefined) return { kind: 'world', world: holder.world }
    return open ? ADMINISTRATOR : NOBODY
  }
  /** The administrator, or a world's token on a sandbox without a control token (where it opens everything, as it always did). */
  const actsAsAdministrator = (caller: ControlCaller) => caller.kind === 'administrator' || (open && caller.kind === 'world')

  return {
    callerOf,
    tenantOf (request) {
      const caller = callerOf(request)
      return caller.kind === 'tenant' ? caller.tenant : undefined
    },
    administers: (request) => actsAsAdministrator(callerOf(request)),
    async sandboxOnly (request) {
      if (isConsolePage(request)) return
      const caller = callerOf(request)
      if (caller.kind === 'tenant') throw tenantTokenOnDefaultWorld()
      if (!actsAsAdministrator(caller)) throw tokenRequired()
    },
    async administratorOnly (request) {
      const caller = callerOf(request)
      if (caller.kind === 'tenant' || caller.kind === 'world') throw tenantRoutesNeedAdministrator(caller.kind)
      if (caller.kind !== 'administrator') throw tokenRequired()
    },
    async administratorOrTenant (request) {
      if (isConsolePage(request)) return
      const caller = callerOf(request)
      if (caller.kind !== 'tenant' && !actsAsAdministrator(caller)) throw tokenRequired()
    },
    worldAccess (request, world) {
      const caller = callerOf(request)
      if (actsAsAdministrator(caller)) return world === undefined ? 'unknown' : 'open'
      // a tenant cannot tell another's world (or the default one) from a world that does not exist
      if (caller.kind === 'tenant') return world !== undefined && world.tenantId === caller.tenant.id ? 'open' : 'unknown'
      return caller.kind === 'world' && world !== undefined && caller.world.id === world.id ? 'open' : 'refused'
    }
  }
}

/**
 * The world the path's {worldId} names, once the caller may open it (held here or, in hosted mode,
 * by another instance): an unknown or expired world is a 404, and so is a world of another tenant
 * (or one no tenant made) to a tenant, which cannot tell them apart.
 */
export function worldOfPath (request: FastifyRequest, worlds: WorldRegistry, tokens: ControlTokens): KnownWorld {
  const { worldId } = request.params as { worldId: string }
  const world = worlds.find(worldId)
  const access = tokens.worldAccess(request, world)
  if (access === 'refused') throw tokenRequired()
  if (access === 'unknown' || world === undefined) {
    throw notFound(`No world ${worldId.slice(0, 40)}; GET /_sandbox/worlds lists the worlds (a world idle past its ttlSeconds is deleted)`)
  }
  return world
}

/**
 * The routes of the world named by the path's {worldId}: the world becomes the request's (and is
 * marked used), once the caller may open it (worldOfPath). In hosted mode the request reached
 * the world's owner (plugins/owner-routing.ts), which holds it.
 */
export function worldScope (app: FastifyInstance, worlds: WorldRegistry, tokens: ControlTokens): void {
  app.addHook('onRequest', async (request) => {
    const known = worldOfPath(request, worlds, tokens)
    const world = worlds.get(known.id)
    if (world === undefined) throw notFound(`No world ${known.id}; GET /_sandbox/worlds lists the worlds`)
    world.touch()
    request.world = world
  })
}
