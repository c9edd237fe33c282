import type { Query, UnitOfWork } from './unit-of-work.js'

/** Clients and the index of their policy numbers. */

/** A client as stored: each data group is the JSON text the partner API answers. */
export interface ClientRow {
  agencyId: number
  clientNumber: number
  deleted: boolean
  modifiedMs: number
  officeId: number
  details: string
  people: string
  contacts: string
  claims: string
  policies: string
  invoices: string
}

export type GroupColumn = 'details' | 'people' | 'contacts' | 'claims' | 'policies' | 'invoices'
export const GROUP_COLUMNS: readonly GroupColumn[] = ['details', 'people', 'contacts', 'claims', 'policies', 'invoices']

/** One piece of text SQLite joins per client: literal text, or the text of a column. */
export type ConcatPiece = { text: string } | { column: 'client_number' | GroupColumn }

export interface PolicyKey {
  policyId: string
  policyNumber: string
  policyIndex: number
}

/** A client's number, whether it is deleted, and its latest change (its deletion, once deleted). */
export interface ClientVersion {
  clientNumber: number
  deleted: boolean
  modifiedMs: number
}

export interface ClientIdsQuery {
  deleted: boolean
  officeId: number | null
  /** Only clients modified after this instant (ms); null: all. */
  sinceMs: number | null
}

interface RawClient {
  agency_id: number;
  client_number: number;
  deleted: number;
  modified_ms: number;
  office_id: number
  details: string;
  people: string;
  contacts: string;
  claims: string;
  policies: string;
  invoices: string
}
const toClient = (r: RawClient): ClientRow => ({
  agencyId: r.agency_id,
  clientNumber: r.client_number,
  deleted: r.deleted === 1,
  modifiedMs: r.modified_ms,
  officeId: r.office_id,
  details: r.details,
  people: r.people,
  contacts: r.contacts,
  claims: r.claims,
  policies: r.policies,
  invoices: r.invoices
})
const asParams = (c: ClientRow) => ({ ...c, deleted: c.deleted ? 1 : 0 })

const COLUMNS = 'agency_id, client_number, deleted, modified_ms, office_id, details, people, contacts, claims, policies, invoices'
const C_COLUMNS = COLUMNS.split(', ').map((c) => 'c.' + c).join(', ')
const sqlText = (text: string) => `'${text.replace(/'/g, "''")}'`

export function createClientRepository (sql: UnitOfWork) {
  type IdsParams = { agencyId: number; deleted: number; officeId: number | null; since?: number }
  const idsAll = sql.query<IdsParams, number>(
    `SELECT client_number FROM clients INDEXED BY clients_ids
     WHERE agency_id = @agencyId AND deleted = @deleted AND (@officeId IS NULL OR office_id = @officeId)
     ORDER BY client_number`
  ).pluck()
  // the index holds the number and office too (migration 005), so no row of the table is read
  const idsSince = sql.query<IdsParams, number>(
    `SELECT client_number FROM clients INDEXED BY clients_changed_ids
     WHERE agency_id = @agencyId AND deleted = @deleted AND modified_ms > @since
       AND (@officeId IS NULL OR office_id = @officeId)
     ORDER BY client_number`
  ).pluck()
  const client = sql.query<[number, number], RawClient>(`SELECT ${COLUMNS} FROM clients WHERE agency_id = ? AND client_number = ?`)
  const liveIn = sql.query<[number, string], RawClient>(
    `SELECT ${COLUMNS} FROM clients WHERE agency_id = ? AND deleted = 0 AND client_number IN (SELECT value FROM json_each(?))`
  )
  const ofAgency = sql.query<[number], RawClient>(`SELECT ${COLUMNS} FROM clients WHERE agency_id = ? ORDER BY client_number`)
  const byPolicyNumber = sql.query<{ agencyId: number; policyNumber: string }, RawClient>(
    `SELECT ${C_COLUMNS} FROM clients c
     WHERE c.agency_id = @agencyId AND c.deleted = 0 AND c.client_number IN
       (SELECT p.client_number FROM policies p WHERE p.agency_id = @agencyId AND p.policy_number = @policyNumber)
     ORDER BY c.client_number`
  )
  const byText = sql.query<{ agencyId: number; like: string; plain: string; limit: number }, RawClient>(
    `SELECT ${COLUMNS} FROM clients WHERE agency_id = @agencyId
       AND (details LIKE @like OR people LIKE @like OR policies LIKE @like OR CAST(client_number AS TEXT) = @plain)
     ORDER BY client_number LIMIT @limit`
  )
  const ofAgencyAfter = sql.query<[number, number, number], RawClient>(`SELECT ${COLUMNS} FROM clients WHERE agency_id = ? AND client_number > ? ORDER BY client_number LIMIT ?`)
  const versions = sql.query<[number, number, number], { client_number: number; deleted: number; modified_ms: number }>(
    'SELECT client_number, deleted, modified_ms FROM clients WHERE agency_id = ? AND client_number > ? ORDER BY client_number LIMIT ?'
  )
  const maxNumber = sql.query<[number], { n: number | null }>('SELECT max(client_number) AS n FROM clients WHERE agency_id = ?')
  const count = sql.query<[], { n: number }>('SELECT count(*) AS n FROM clients')
  const countInOffice = sql.query<[number, number], { n: number }>('SELECT count(*) AS n FROM clients WHERE agency_id = ? AND office_id = ?')
  type RowParams = { agencyId: number, clientNumber: number }
  const rowClient = (c: RowParams) => [c.agencyId, c.clientNumber] as const
  const insert = sql.clientCommand<[RowParams]>(
    `INSERT INTO clients (${COLUMNS})
     VALUES (@agencyId, @clientNumber, @deleted, @modifiedMs, @officeId, @details, @people, @contacts, @claims, @policies, @invoices)`,
    rowClient
  )
  const update = sql.clientCommand<[RowParams]>(
    `UPDATE clients SET deleted = @deleted, modified_ms = @modifiedMs, office_id = @officeId, details = @details, people = @people,
       contacts = @contacts, claims = @claims, policies = @policies, invoices = @invoices
     WHERE agency_id = @agencyId AND client_number = @clientNumber`,
    rowClient
  )
  const deletedFlag = sql.query<[number, number], number>('SELECT deleted FROM clients WHERE agency_id = ? AND client_number = ?').pluck()
  // details.modified moved in place, by SQLite: the row's JSON is never parsed and written again here
  const TOUCH = "UPDATE clients SET details = json_set(details, '$.modified', ?), modified_ms = ? WHERE agency_id = ? AND client_number = ?"
  const touchedClient = (_modified: string, _modifiedMs: number, agencyId: number, clientNumber: number) => [agencyId, clientNumber] as const
  const touch = sql.clientCommand<[string, number, number, number]>(TOUCH, touchedClient)
  // the same for a live client only: the write that moves it learns from the row count whether it is there
  const touchLive = sql.clientCommand<[string, number, number, number]>(`${TOUCH} AND deleted = 0`, touchedClient)

  const insertPolicy = sql.clientCommand<[number, number, string, string, number]>(
    'INSERT OR IGNORE INTO policies (agency_id, client_number, policy_id, policy_number, policy_index) VALUES (?, ?, ?, ?, ?)',
    (agencyId, clientNumber) => [agencyId, clientNumber]
  )
  const deletePolicies = sql.clientCommand<[number, number]>(
    'DELETE FROM policies WHERE agency_id = ? AND client_number = ?',
    (agencyId, clientNumber) => [agencyId, clientNumber]
  )
  const policiesOf = sql.query<[number, number], { policy_id: string; policy_number: string; policy_index: number }>(
    'SELECT policy_id, policy_number, policy_index FROM policies WHERE agency_id = ? AND client_number = ? ORDER BY policy_index'
  )

  /**
   * One statement per list of pieces (kept by the list's identity: callers reuse their lists).
   * Rows come back as text: a BLOB becomes a Node buffer of its own, an allocation each, which
   * costs more than the text and its copy into an answer.
   */
  const concatStatements = new WeakMap<readonly ConcatPiece[], Query<[string, number], [number, string]>>()
  const concatStatement = (pieces: readonly ConcatPiece[]) => {
    let statement = concatStatements.get(pieces)
    if (statement === undefined) {
      const terms = pieces.map((p) => {
        if ('text' in p) return sqlText(p.text)
        if (p.column !== 'client_number' && !GROUP_COLUMNS.includes(p.column)) throw new Error(`unknown client column ${String(p.column)}`)
        return 'c.' + p.column
      })
      // CROSS JOIN keeps the requested numbers as the outer loop (one primary-key lookup each); with a plain
      // JOIN the planner may scan every client of the agency for each batch
      statement = sql.query<[string, number], [number, string]>(
        `SELECT c.client_number, concat(${terms.join(', ')})
         FROM json_each(?) j CROSS JOIN clients c ON c.agency_id = ? AND c.client_number = j.value AND c.deleted = 0`
      ).raw()
      concatStatements.set(pieces, statement)
    }
    return statement
  }

  return {
    /** Client numbers, ascending: live or deleted ones, of one office or all, changed since an instant or ever. */
    clientIds (agencyId: number, q: ClientIdsQuery): number[] {
      const base = { agencyId, deleted: q.deleted ? 1 : 0, officeId: q.officeId }
      return q.sinceMs === null ? idsAll.all(base) : idsSince.all({ ...base, since: q.sinceMs })
    },
    /** Whether the client is there and not deleted (its row's other columns are not read). */
    isLiveClient: (agencyId: number, clientNumber: number): boolean => deletedFlag.get(agencyId, clientNumber) === 0,
    getClient (agencyId: number, clientNumber: number): ClientRow | undefined {
      const r = client.get(agencyId, clientNumber)
      return r === undefined ? undefined : toClient(r)
    },
    /** Live (not deleted) clients among the given numbers, in no particular order. */
    liveClientsIn: (agencyId: number, clientNumbers: readonly number[]): ClientRow[] =>
      liveIn.all(agencyId, JSON.stringify(clientNumbers)).map(toClient),
    /**
     * The live clients among `clientNumbers`, each as its number and the pieces joined by SQLite
     * in that order, in no particular order; others are left out.
     */
    concatLiveClientsIn: (agencyId: number, clientNumbers: readonly number[], pieces: readonly ConcatPiece[]): Array<[number, string]> =>
      concatStatement(pieces).all(JSON.stringify(clientNumbers), agencyId),
    listClients: (agencyId: number): ClientRow[] => ofAgency.all(agencyId).map(toClient),
    /** The agency's clients numbered above `after`, ascending, at most `limit` (a page of listClients). */
    listClientsAfter: (agencyId: number, after: number, limit: number): ClientRow[] => ofAgencyAfter.all(agencyId, after, limit).map(toClient),
    /** Live clients with a policy of exactly this number, ascending. */
    searchByPolicyNumber: (agencyId: number, policyNumber: string): ClientRow[] =>
      byPolicyNumber.all({ agencyId, policyNumber }).map(toClient),
    /** Clients whose name, details or policy numbers contain the text (or whose number is it). */
    searchClients: (agencyId: number, text: string, limit: number): ClientRow[] =>
      byText.all({ agencyId, like: `%${text.replace(/[%_\\]/g, '')}%`, plain: text.trim(), limit }).map(toClient),
    /** Clients of an agency numbered after `after`, deleted ones too, with their latest change, ascending: a page of at most `limit`. */
    clientVersions: (agencyId: number, after = 0, limit = -1): ClientVersion[] =>
      versions.all(agencyId, after, limit).map((r) => ({ clientNumber: r.client_number, deleted: r.deleted === 1, modifiedMs: r.modified_ms })),
    maxClientNumber: (agencyId: number): number => maxNumber.get(agencyId)?.n ?? 0,
    countClients: (): number => count.get()?.n ?? 0,
    countOfficeClients: (agencyId: number, officeId: number): number => countInOffice.get(agencyId, officeId)?.n ?? 0,

    insertClient (c: ClientRow): void {
      insert.run(asParams(c))
    },
    /** Replaces a stored client's row (same agency and number). */
    updateClient (c: ClientRow): void {
      update.run(asParams(c))
    },
    /** Sets the client's details.modified (an ISO instant) and modified_ms, its other details as they are. */
    touchClient (agencyId: number, clientNumber: number, modified: string, modifiedMs: number): void {
      touch.run(modified, modifiedMs, agencyId, clientNumber)
    },
    /** touchClient for a live client; false, nothing written, when the client is not there or deleted. */
    touchLiveClient: (agencyId: number, clientNumber: number, modified: string, modifiedMs: number): boolean =>
      touchLive.run(modified, modifiedMs, agencyId, clientNumber).changes === 1,

    insertPolicy (agencyId: number, clientNumber: number, p: PolicyKey): void {
      insertPolicy.run(agencyId, clientNumber, p.policyId, p.policyNumber, p.policyIndex)
    },
    deleteClientPolicies: (agencyId: number, clientNumber: number): void => { deletePolicies.run(agencyId, clientNumber) },
    listClientPolicies: (agencyId: number, clientNumber: number): PolicyKey[] =>
      policiesOf.all(agencyId, clientNumber).map((r) => ({ policyId: r.policy_id, policyNumber: r.policy_number, policyIndex: r.policy_index }))
  }
}

export type ClientRepository = ReturnType<typeof createClientRepository>
