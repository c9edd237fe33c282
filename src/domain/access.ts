import { createHash, timingSafeEqual } from 'node:crypto'
import { UntilChange, type AgencyRow, type IntegrationRow, type Store } from '../db/store.js'
import { agencyUnavailable, scopeMissing } from '../errors.js'
import type { AgencyEntry } from '../schemas/agency.js'
import type { Scope } from '../schemas/common.js'

/** What an integration may do with one agency. */
export interface Grant {
  agency: AgencyRow
  scopes: ReadonlySet<string>
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest()
const NO_SECRET = digest('\u0000no integration\u0000')

export function createAccess(store: Store) {
  /** Digest of each integration's secret (rows are cached by the store, so this is per change). */
  const secrets = new WeakMap<IntegrationRow, Buffer>()
  const secretDigest = (i: IntegrationRow) => {
    let d = secrets.get(i)
    if (d === undefined) secrets.set(i, (d = digest(i.clientSecret)))
    return d
  }
  /**
   * Credentials that authenticated, while nothing changed in the store: a partner sends the same
   * header with every request, and hashing its secret each time is a tenth of a read's cost.
   * Only correct pairs enter it, so a wrong secret always takes the constant-time comparison.
   */
  const accepted = new UntilChange<string, IntegrationRow>(store, 1000)
  /** Grants (the checks passed), per agency and integration, while nothing changed. */
  const grants = new UntilChange<string, Grant>(store, 10_000)
  /**
   * The integration's grant on an agency. Unknown, not subscribed, opted out and inactive
   * agencies all answer the same 403, so nothing reveals which.
   */
  function loadGrant(clientId: string, agencyId: number): Grant {
    const sub = store.getSubscription(clientId, agencyId)
    if (sub === undefined || sub.optedOut) throw agencyUnavailable()
    const agency = store.getAgency(agencyId)
    if (agency === undefined || !agency.active) throw agencyUnavailable()
    return { agency, scopes: new Set(sub.scopes) }
  }

  return {
    /** The integration these credentials belong to; the secret is compared in constant time. */
    authenticate(clientId: string, clientSecret: string): IntegrationRow | undefined {
      const key = clientId + '\u0000' + clientSecret
      const known = accepted.get(key)
      if (known !== undefined) return known
      const integration = store.getIntegration(clientId)
      const expected = integration === undefined ? NO_SECRET : secretDigest(integration)
      const matches = timingSafeEqual(expected, digest(clientSecret))
      if (integration === undefined || !matches) return undefined
      return accepted.set(key, integration)
    },

    /** The integration's grant on an agency (see loadGrant), cached while nothing changed. */
    grant(clientId: string, agencyId: number): Grant {
      const key = agencyId + '\u0000' + clientId
      return grants.get(key) ?? grants.set(key, loadGrant(clientId, agencyId))
    },

    requireScope(grant: Grant, scope: Scope): void {
      if (!grant.scopes.has(scope)) throw scopeMissing(scope)
    },

    /** Agencies listed for the integration: subscribed, not opted out, active. */
    listAgencies(clientId: string): AgencyEntry[] {
      return store
        .listSubscriptions(clientId)
        .filter((s) => !s.optedOut && store.getAgency(s.agencyId)?.active === true)
        .map((s) => ({ agencyId: s.agencyId, scopes: s.scopes as Scope[] }))
    }
  }
}

export type Access = ReturnType<typeof createAccess>
