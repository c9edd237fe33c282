import { invalidField, notFound } from '../../errors.js'
import type { Fixture } from '../../fixture/schema.js'
import type { Tenant } from './tenants.js'
import type { World } from './world.js'

/** What POST /_sandbox/worlds asks of the registry. */
export interface NewWorld {
  name?: string
  /** `default` or a world id: a copy of that world's data as it stands now. */
  from?: string
  /** A fixture document (validated): the world's data and its starting point. */
  fixture?: Fixture
  /** The snapshot of a database holding a fixture document (made away from the event loop: fixture-job.ts). */
  snapshot?: Buffer
  ttlSeconds?: number
  /** Bytes its data may take (default: the limits' worldMaxBytes, never above their maxBytes). */
  maxBytes?: number
  /** `fixture`: its integrations keep the secrets of what it starts from (none of a tenant's); else each gets one of the world's own. */
  secrets?: 'fixture'
  /** The tenant creating the world: it alone may control it (and `from` may name only its own worlds). */
  owner?: Tenant
}

/**
 * Checks a new world's request against what it names: `from` (found, and the tenant's own when a
 * tenant asks), its bound (never above the bound on all worlds), `secrets: "fixture"` (where no
 * tenant is involved). Answers the world's bound.
 */
export function checkNewWorld (request: NewWorld, from: Pick<World, 'tenantId'> | undefined, limits: { maxBytes: number, worldMaxBytes: number }): number {
  const { owner } = request
  const maxBytes = request.maxBytes ?? limits.worldMaxBytes
  if (maxBytes > limits.maxBytes) {
    throw invalidField('maxBytes', `must be at most ${limits.maxBytes}, the bytes all the worlds may take together (SANDBOX_WORLDS_MAX_BYTES); it is ${maxBytes}`)
  }
  // a tenant copies only its own worlds; any other is unknown to it, as everywhere else
  if (request.from !== undefined && (from === undefined || (owner !== undefined && from.tenantId !== owner.id))) {
    throw notFound(`No world ${request.from.slice(0, 40)} to copy (from); GET /_sandbox/worlds lists the worlds`)
  }
  if (request.secrets === 'fixture' && (owner !== undefined || from?.tenantId !== undefined)) {
    throw invalidField('secrets', `must be left out for ${owner !== undefined ? "a tenant's world" : "a copy of a tenant's world"}: its integrations get secrets of their own, given in the answer`)
  }
  return maxBytes
}
