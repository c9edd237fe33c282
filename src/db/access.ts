import type { UnitOfWork } from './unit-of-work.js'

/** Integrations and their subscriptions to agencies. */

export interface IntegrationRow {
  clientId: string
  clientSecret: string
  name: string
}

export interface SubscriptionRow {
  clientId: string
  agencyId: number
  scopes: string[]
  optedOut: boolean
}

interface RawIntegration { client_id: string; client_secret: string; name: string }
interface RawSubscription { client_id: string; agency_id: number; scopes: string; opted_out: number }

const toIntegration = (r: RawIntegration): IntegrationRow => ({ clientId: r.client_id, clientSecret: r.client_secret, name: r.name })
const toSubscription = (r: RawSubscription): SubscriptionRow => ({
  clientId: r.client_id,
  agencyId: r.agency_id,
  scopes: JSON.parse(r.scopes) as string[],
  optedOut: r.opted_out === 1
})

const SUBSCRIPTION = 'SELECT client_id, agency_id, scopes, opted_out FROM subscriptions'

export function createAccessRepository (sql: UnitOfWork) {
  const integration = sql.query<[string], RawIntegration>('SELECT client_id, client_secret, name FROM integrations WHERE client_id = ?')
  const integrations = sql.query<[], RawIntegration>('SELECT client_id, client_secret, name FROM integrations ORDER BY rowid')
  const insertIntegration = sql.command<[string, string, string]>('INSERT INTO integrations (client_id, client_secret, name) VALUES (?, ?, ?)')
  const deleteIntegration = sql.command<[string]>('DELETE FROM integrations WHERE client_id = ?')
  const setSecret = sql.command<[string, string]>('UPDATE integrations SET client_secret = ? WHERE client_id = ?')
  const countIntegrations = sql.query<[], { n: number }>('SELECT count(*) AS n FROM integrations')

  const subscription = sql.query<[string, number], RawSubscription>(`${SUBSCRIPTION} WHERE client_id = ? AND agency_id = ?`)
  const subscriptionsOf = sql.query<[string], RawSubscription>(`${SUBSCRIPTION} WHERE client_id = ? ORDER BY position, agency_id`)
  const subscriptions = sql.query<[], RawSubscription>(`${SUBSCRIPTION} ORDER BY client_id, position, agency_id`)
  const insertSubscription = sql.command<[string, number, string, number, number]>(
    'INSERT INTO subscriptions (client_id, agency_id, scopes, opted_out, position) VALUES (?, ?, ?, ?, ?)'
  )
  const updateSubscription = sql.command<[string, number, string, number]>(
    'UPDATE subscriptions SET scopes = ?, opted_out = ? WHERE client_id = ? AND agency_id = ?'
  )
  const deleteSubscription = sql.command<[string, number]>('DELETE FROM subscriptions WHERE client_id = ? AND agency_id = ?')
  // A rename touches both ends of the subscriptions' foreign key: checked at commit, once both are renamed.
  const deferForeignKeys = sql.command<[]>('PRAGMA defer_foreign_keys = ON')
  const renames = [
    'UPDATE integrations SET client_id = ? WHERE client_id = ?',
    'UPDATE subscriptions SET client_id = ? WHERE client_id = ?',
    'UPDATE writes SET integration = ? WHERE integration = ?'
  ].map((text) => sql.command<[string, string]>(text))

  return {
    getIntegration (clientId: string): IntegrationRow | undefined {
      const r = integration.get(clientId)
      return r === undefined ? undefined : toIntegration(r)
    },
    listIntegrations: (): IntegrationRow[] => integrations.all().map(toIntegration),
    insertIntegration: (i: IntegrationRow): void => { insertIntegration.run(i.clientId, i.clientSecret, i.name) },
    deleteIntegration: (clientId: string): boolean => deleteIntegration.run(clientId).changes > 0,
    setSecret: (clientId: string, secret: string): void => { setSecret.run(secret, clientId) },
    countIntegrations: (): number => countIntegrations.get()?.n ?? 0,

    getSubscription (clientId: string, agencyId: number): SubscriptionRow | undefined {
      const r = subscription.get(clientId, agencyId)
      return r === undefined ? undefined : toSubscription(r)
    },
    /** The integration's subscriptions, in the order they were added. */
    listSubscriptions: (clientId: string): SubscriptionRow[] => subscriptionsOf.all(clientId).map(toSubscription),
    listAllSubscriptions: (): SubscriptionRow[] => subscriptions.all().map(toSubscription),
    /** `position` orders the integration's subscriptions (its agency list). */
    insertSubscription (s: SubscriptionRow, position: number): void {
      insertSubscription.run(s.clientId, s.agencyId, JSON.stringify(s.scopes), s.optedOut ? 1 : 0, position)
    },
    updateSubscription (s: SubscriptionRow): void {
      updateSubscription.run(JSON.stringify(s.scopes), s.optedOut ? 1 : 0, s.clientId, s.agencyId)
    },
    deleteSubscription: (clientId: string, agencyId: number): boolean => deleteSubscription.run(clientId, agencyId).changes > 0,
    /** Gives an integration another Client Id, in its subscriptions and the writes it sent too (in one transaction). */
    renameIntegration (from: string, to: string): void {
      sql.transaction(() => {
        deferForeignKeys.run()
        for (const rename of renames) rename.run(to, from)
      })
    }
  }
}

export type AccessRepository = ReturnType<typeof createAccessRepository>
