import type { IntegrationRow } from '../db/index.js'
import type { Grant, ReadModel } from '../read-model/index.js'
import { agencyUnavailable, scopeMissing } from '../errors.js'
import type { AgencyEntry } from '../schemas/agency.js'
import type { Scope } from '../schemas/common.js'

export type { Grant } from '../read-model/index.js'

/** Who a partner request comes from, and what it may do with the agency it names. */
export function createAccess (reads: Pick<ReadModel, 'credentials' | 'grant' | 'agencyList'>) {
  return {
    /** The integration these credentials belong to; undefined when they match none. */
    authenticate (clientId: string, clientSecret: string): IntegrationRow | undefined {
      return reads.credentials(clientId, clientSecret)
    },

    /**
     * The integration's grant on an agency. Unknown, not subscribed, opted out and inactive
     * agencies all answer the same 403, so nothing reveals which.
     */
    grant (clientId: string, agencyId: number): Grant {
      const grant = reads.grant(clientId, agencyId)
      if (grant === undefined) throw agencyUnavailable()
      return grant
    },

    requireScope (grant: Grant, scope: Scope): void {
      if (!grant.scopes.has(scope)) throw scopeMissing(scope)
    },

    /** Agencies listed for the integration: subscribed, not opted out, active. */
    listAgencies (clientId: string): AgencyEntry[] {
      return reads.agencyList(clientId)
    }
  }
}

export type Access = ReturnType<typeof createAccess>
