import { createHash, timingSafeEqual } from 'node:crypto'
import type { AccessRepository, AgencyRepository, AgencyRow, IntegrationRow } from '../db/index.js'
import type { AgencyEntry } from '../schemas/agency.js'
import type { Scope } from '../schemas/common.js'
import { BoundedCache, PairCache } from './bounded-cache.js'

/** What an integration may do with one agency. */
export interface Grant {
  agency: AgencyRow
  scopes: ReadonlySet<string>
}

export type AccessSources = {
  access: Pick<AccessRepository, 'getIntegration' | 'getSubscription' | 'listSubscriptions'>
  agencies: Pick<AgencyRepository, 'getAgency'>
}

/** The tables access is read from: a commit that wrote none of them leaves what is kept here as it is. */
export const ACCESS_TABLES: readonly string[] = ['integrations', 'subscriptions', 'agencies']

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest()
const NO_SECRET = digest('\u0000no integration\u0000')

/**
 * Every partner request reads its integration, subscription and agency: tiny tables, kept in
 * memory with what is derived from them (the digest of each secret, the credentials that
 * passed, the grants) until the next change.
 */
export function createAccessReads (sources: AccessSources) {
  /** Each integration with the digest of its secret (undefined: unknown client id). */
  const integrations = new BoundedCache<string, { row: IntegrationRow; secret: Buffer } | undefined>(10_000)
  /**
   * Credentials that authenticated: a partner sends the same header with every request, and
   * hashing its secret each time is a tenth of a read's cost. Only correct pairs enter, so a
   * wrong secret always takes the constant-time comparison.
   */
  const accepted = new BoundedCache<string, IntegrationRow>(1000)
  /** Grants by agency and Client Id (null: none). */
  const grants = new PairCache<string, Grant | null>(10_000)
  const agencies = new BoundedCache<number, AgencyRow | undefined>(10_000)

  const loadIntegration = (clientId: string) => {
    const row = sources.access.getIntegration(clientId)
    return row === undefined ? undefined : { row, secret: digest(row.clientSecret) }
  }
  const agency = (agencyId: number, keep: boolean) =>
    keep ? agencies.getOrLoad(agencyId, () => sources.agencies.getAgency(agencyId)) : sources.agencies.getAgency(agencyId)

  const loadGrant = (clientId: string, agencyId: number, keep: boolean): Grant | null => {
    const subscription = sources.access.getSubscription(clientId, agencyId)
    if (subscription === undefined || subscription.optedOut) return null
    const row = agency(agencyId, keep)
    if (row === undefined || !row.active) return null
    return Object.freeze({ agency: Object.freeze(row), scopes: new Set(subscription.scopes) })
  }

  return {
    credentials (clientId: string, clientSecret: string, keep: boolean): IntegrationRow | undefined {
      const key = clientId + '\u0000' + clientSecret
      const known = keep ? accepted.get(key) : undefined
      if (known !== undefined) return known
      const integration = keep ? integrations.getOrLoad(clientId, () => loadIntegration(clientId)) : loadIntegration(clientId)
      const matches = timingSafeEqual(integration?.secret ?? NO_SECRET, digest(clientSecret))
      if (integration === undefined || !matches) return undefined
      return keep ? accepted.set(key, integration.row) : integration.row
    },

    grant (clientId: string, agencyId: number, keep: boolean): Grant | undefined {
      const grant = keep ? grants.get(agencyId, clientId) ?? grants.set(agencyId, clientId, loadGrant(clientId, agencyId, keep)) : loadGrant(clientId, agencyId, keep)
      return grant ?? undefined
    },

    agencyList (clientId: string, keep: boolean): AgencyEntry[] {
      return sources.access
        .listSubscriptions(clientId)
        .filter((s) => !s.optedOut && agency(s.agencyId, keep)?.active === true)
        .map((s) => ({ agencyId: s.agencyId, scopes: s.scopes as Scope[] }))
    },

    clear (): void {
      integrations.clear()
      accepted.clear()
      grants.clear()
      agencies.clear()
    }
  }
}
