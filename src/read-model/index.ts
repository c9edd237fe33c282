import type { ChangeSignal, ClientIdsQuery, ClientRow, IntegrationRow } from '../db/index.js'
import { ANY_TABLE } from '../db/unit-of-work.js'
import type { AgencyEntry } from '../schemas/agency.js'
import type { ClientGroup } from '../schemas/client.js'
import { ACCESS_TABLES, createAccessReads, type AccessSources, type Grant } from './access.js'
import { createClientReads, type ClientSources } from './clients.js'
import type { EncodedJson } from './encoded.js'

export { EncodedJson } from './encoded.js'
export { clientJson, clientJsonPieces } from './client-json.js'
export type { Grant } from './access.js'

/**
 * What the partner API reads, answered from memory where it can be: the one place that keeps
 * answers derived from the data. What a commit may have changed (the clients it wrote, or
 * everything) is dropped when the repositories signal it, so the next read after any change is
 * answered from the database; inside a transaction (uncommitted writes) every read goes to the
 * database and nothing is kept.
 */
export interface ReadModel {
  /** The integration these credentials belong to (the secret compared in constant time), or undefined. */
  credentials(clientId: string, clientSecret: string): IntegrationRow | undefined
  /**
   * What an integration may do with an agency: its subscription's scopes on an active agency;
   * undefined when it is not subscribed, opted out, or the agency is unknown or inactive.
   */
  grant(clientId: string, agencyId: number): Grant | undefined
  /** The agencies listed for an integration: subscribed, not opted out, active; in subscription order. */
  agencyList(clientId: string): AgencyEntry[]
  /** Ids of the agency's clients matching the query, ascending, as a JSON array. */
  changedIdsJson(agencyId: number, query: ClientIdsQuery): EncodedJson
  /** A live client (not deleted), or undefined. */
  liveClient(agencyId: number, clientNumber: number): Readonly<ClientRow> | undefined
  /** A live client as the 3.0/4.0 JSON object with these groups in this order, or undefined. */
  clientJson(agencyId: number, clientNumber: number, groups: readonly ClientGroup[]): EncodedJson | undefined
  /** The live clients among `clientNumbers` (distinct), in that order. */
  liveClients(agencyId: number, clientNumbers: readonly number[]): ClientRow[]
  /** The live clients among `clientNumbers` (distinct), in that order, as a 3.0/4.0 JSON array with these groups. */
  batchJson(agencyId: number, clientNumbers: readonly number[], groups: readonly ClientGroup[]): EncodedJson
  /** The live clients with a policy of exactly this number, ascending. */
  policyHolders(agencyId: number, policyNumber: string): readonly Readonly<ClientRow>[]
  /** policyHolders() as a 3.0/4.0 JSON array with these groups. */
  searchJson(agencyId: number, policyNumber: string, groups: readonly ClientGroup[]): EncodedJson
}

/** The tables client answers are read from. */
const CLIENT_TABLES: readonly string[] = ['clients', 'policies']
/** Clients written in one commit past which everything kept is dropped rather than each of them. */
const FORGET_AT_MOST = 64

export interface ReadModelOptions {
  /** Bytes of batch-read client JSON kept in memory (16 MiB by default). */
  batchCacheBytes?: number
  /** Bytes of changed-clients listings kept in memory (16 MiB by default). */
  listingCacheBytes?: number
  /** Bytes of one-client answers kept in memory (4 MiB by default). */
  answerCacheBytes?: number
}

export function createReadModel (
  sources: AccessSources & { clients: ClientSources },
  changes: ChangeSignal,
  options: ReadModelOptions = {}
): ReadModel {
  const access = createAccessReads(sources)
  const clients = createClientReads(sources.clients, options)
  changes.onCommit(({ tables, unscoped, clients: written }) => {
    // a write to a client (a log note, an attachment) leaves the integrations, agencies and grants as they were
    if (tables.has(ANY_TABLE) || ACCESS_TABLES.some((t) => tables.has(t))) access.clear()
    // and the other clients: when only client commands wrote what client answers are read from, each
    // client they wrote is forgotten (many at once: all, as quickly), else everything kept
    if (unscoped.has(ANY_TABLE) || CLIENT_TABLES.some((t) => unscoped.has(t)) || written.length > FORGET_AT_MOST) clients.clear()
    else for (const [agencyId, clientNumber] of written) clients.forget(agencyId, clientNumber)
  })
  /** Keep what is read only outside transactions: inside one, the data may still be rolled back. */
  const keep = () => !changes.inTransaction
  return {
    credentials: (clientId, clientSecret) => access.credentials(clientId, clientSecret, keep()),
    grant: (clientId, agencyId) => access.grant(clientId, agencyId, keep()),
    agencyList: (clientId) => access.agencyList(clientId, keep()),
    changedIdsJson: (agencyId, query) => clients.changedIdsJson(agencyId, query, keep()),
    liveClient: (agencyId, clientNumber) => clients.liveClient(agencyId, clientNumber, keep()),
    clientJson: (agencyId, clientNumber, groups) => clients.clientJson(agencyId, clientNumber, groups, keep()),
    liveClients: (agencyId, clientNumbers) => clients.liveClients(agencyId, clientNumbers),
    batchJson: (agencyId, clientNumbers, groups) => clients.batchJson(agencyId, clientNumbers, groups, keep()),
    policyHolders: (agencyId, policyNumber) => clients.policyHolders(agencyId, policyNumber, keep()),
    searchJson: (agencyId, policyNumber, groups) => clients.searchJson(agencyId, policyNumber, groups, keep())
  }
}
