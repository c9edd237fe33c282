import type Database from 'better-sqlite3'
import { BufferPool } from './buffer-pool.js'
import { ByteSlabs, NOT_KEPT } from './byte-slabs.js'
import type { Db } from './database.js'

/**
 * Every SQL statement of the sandbox, prepared once per database, with row mappers at the
 * edge: callers never see raw rows or 0/1 booleans.
 */

export interface IntegrationRow {
  clientId: string
  clientSecret: string
  name: string
}

export interface AgencyRow {
  agencyId: number
  name: string
  active: boolean
  connected: boolean
  supportsIncludes: boolean
  defaultOfficeId: number
  defaultUsers: Record<string, number>
}

export interface SubscriptionRow {
  clientId: string
  agencyId: number
  scopes: string[]
  optedOut: boolean
}

export interface OfficeRow {
  officeId: number
  officeDescription: string
  subAgencyName: string
  primaryOffice: boolean
  addressLine1: string
  addressLine2: string
  city: string
  state: string
  zipcode: string
}

export interface UserRow {
  userId: number
  username: string
  firstName: string | null
  lastName: string | null
  email: string | null
  homeOffice: number | null
  active: boolean
}

/** A client as stored: each data group is the JSON text the vendor API answers. */
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

export type WriteKind = 'log' | 'attachment' | 'receipt' | 'client'
export type WriteStatus = 'pending' | 'applied'

export interface WriteRow {
  seq: number
  agencyId: number
  clientNumber: number
  kind: WriteKind
  refId: string
  integration: string
  apiVersion: string
  status: WriteStatus
  fingerprint: string
  receivedAt: string
  appliedAt: string | null
  data: Record<string, unknown>
}

export interface WriteFilter {
  kind?: WriteKind
  status?: WriteStatus
  clientNumber?: number
}

export interface PolicyKey {
  policyId: string
  policyNumber: string
  policyIndex: number
}

const bool = (v: unknown): boolean => v === 1
const int = (v: boolean | undefined): number => (v === true ? 1 : 0)

interface RawAgency {
  agency_id: number; name: string; active: number; connected: number; supports_includes: number
  default_office_id: number; default_users: string
}
const toAgency = (r: RawAgency): AgencyRow => ({
  agencyId: r.agency_id,
  name: r.name,
  active: bool(r.active),
  connected: bool(r.connected),
  supportsIncludes: bool(r.supports_includes),
  defaultOfficeId: r.default_office_id,
  defaultUsers: JSON.parse(r.default_users) as Record<string, number>
})

interface RawClient {
  agency_id: number; client_number: number; deleted: number; modified_ms: number; office_id: number
  details: string; people: string; contacts: string; claims: string; policies: string; invoices: string
}
const toClient = (r: RawClient): ClientRow => ({
  agencyId: r.agency_id,
  clientNumber: r.client_number,
  deleted: bool(r.deleted),
  modifiedMs: r.modified_ms,
  officeId: r.office_id,
  details: r.details,
  people: r.people,
  contacts: r.contacts,
  claims: r.claims,
  policies: r.policies,
  invoices: r.invoices
})

interface RawUser {
  user_id: number; username: string; first_name: string | null; last_name: string | null
  email: string | null; home_office: number | null; active: number
}
const toUser = (r: RawUser): UserRow => ({
  userId: r.user_id,
  username: r.username,
  firstName: r.first_name,
  lastName: r.last_name,
  email: r.email,
  homeOffice: r.home_office,
  active: bool(r.active)
})

interface RawOffice {
  office_id: number; office_description: string; sub_agency_name: string; primary_office: number
  address_line1: string; address_line2: string; city: string; state: string; zipcode: string
}
const toOffice = (r: RawOffice): OfficeRow => ({
  officeId: r.office_id,
  officeDescription: r.office_description,
  subAgencyName: r.sub_agency_name,
  primaryOffice: bool(r.primary_office),
  addressLine1: r.address_line1,
  addressLine2: r.address_line2,
  city: r.city,
  state: r.state,
  zipcode: r.zipcode
})

interface RawWrite {
  seq: number; agency_id: number; client_number: number; kind: string; ref_id: string; integration: string
  api_version: string; status: string; fingerprint: string; received_at: string; applied_at: string | null; data: string
}
const toWrite = (r: RawWrite): WriteRow => ({
  seq: r.seq,
  agencyId: r.agency_id,
  clientNumber: r.client_number,
  kind: r.kind as WriteKind,
  refId: r.ref_id,
  integration: r.integration,
  apiVersion: r.api_version,
  status: r.status as WriteStatus,
  fingerprint: r.fingerprint,
  receivedAt: r.received_at,
  appliedAt: r.applied_at,
  data: JSON.parse(r.data) as Record<string, unknown>
})

export type GroupColumn = 'details' | 'people' | 'contacts' | 'claims' | 'policies' | 'invoices'
const GROUP_COLUMNS: readonly GroupColumn[] = ['details', 'people', 'contacts', 'claims', 'policies', 'invoices']

const CLIENT_COLUMNS =
  'agency_id, client_number, deleted, modified_ms, office_id, details, people, contacts, claims, policies, invoices'

export function createStore(db: Db, options: StoreOptions = {}) {
  const s = {
    getMeta: db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?'),
    setMeta: db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value'),

    getIntegration: db.prepare<[string], { client_id: string; client_secret: string; name: string }>(
      'SELECT client_id, client_secret, name FROM integrations WHERE client_id = ?'
    ),
    listIntegrations: db.prepare<[], { client_id: string; client_secret: string; name: string }>(
      'SELECT client_id, client_secret, name FROM integrations ORDER BY rowid'
    ),
    insertIntegration: db.prepare('INSERT INTO integrations (client_id, client_secret, name) VALUES (?, ?, ?)'),

    getAgency: db.prepare<[number], RawAgency>('SELECT * FROM agencies WHERE agency_id = ?'),
    listAgencies: db.prepare<[], RawAgency>('SELECT * FROM agencies ORDER BY rowid'),
    insertAgency: db.prepare(
      `INSERT INTO agencies (agency_id, name, active, connected, supports_includes, default_office_id, default_users)
       VALUES (@agencyId, @name, @active, @connected, @supportsIncludes, @defaultOfficeId, @defaultUsers)`
    ),

    getSubscription: db.prepare<[string, number], { scopes: string; opted_out: number }>(
      'SELECT scopes, opted_out FROM subscriptions WHERE client_id = ? AND agency_id = ?'
    ),
    listSubscriptions: db.prepare<[string], { agency_id: number; scopes: string; opted_out: number }>(
      'SELECT agency_id, scopes, opted_out FROM subscriptions WHERE client_id = ? ORDER BY position, agency_id'
    ),
    listAllSubscriptions: db.prepare<[], { client_id: string; agency_id: number; scopes: string; opted_out: number }>(
      'SELECT client_id, agency_id, scopes, opted_out FROM subscriptions ORDER BY client_id, position, agency_id'
    ),
    insertSubscription: db.prepare(
      'INSERT INTO subscriptions (client_id, agency_id, scopes, opted_out, position) VALUES (?, ?, ?, ?, ?)'
    ),

    listOffices: db.prepare<[number], RawOffice>('SELECT * FROM offices WHERE agency_id = ? ORDER BY office_id'),
    insertOffice: db.prepare(
      `INSERT INTO offices (agency_id, office_id, office_description, sub_agency_name, primary_office,
         address_line1, address_line2, city, state, zipcode)
       VALUES (@agencyId, @officeId, @officeDescription, @subAgencyName, @primaryOffice,
         @addressLine1, @addressLine2, @city, @state, @zipcode)`
    ),

    listUsers: db.prepare<[number], RawUser>('SELECT * FROM users WHERE agency_id = ? ORDER BY user_id'),
    listActiveUsers: db.prepare<[number], RawUser>('SELECT * FROM users WHERE agency_id = ? AND active = 1 ORDER BY user_id'),
    insertUser: db.prepare(
      `INSERT INTO users (agency_id, user_id, username, first_name, last_name, email, home_office, active)
       VALUES (@agencyId, @userId, @username, @firstName, @lastName, @email, @homeOffice, @active)`
    ),

    clientIdsAll: db
      .prepare<{ agencyId: number; deleted: number; officeId: number | null }, number>(
        `SELECT client_number FROM clients INDEXED BY clients_ids
         WHERE agency_id = @agencyId AND deleted = @deleted AND (@officeId IS NULL OR office_id = @officeId)
         ORDER BY client_number`
      )
      .pluck(),
    clientIdsSince: db
      .prepare<{ agencyId: number; deleted: number; officeId: number | null; since: number }, number>(
        `SELECT client_number FROM clients INDEXED BY clients_changed
         WHERE agency_id = @agencyId AND deleted = @deleted AND modified_ms > @since
           AND (@officeId IS NULL OR office_id = @officeId)
         ORDER BY client_number`
      )
      .pluck(),
    getClient: db.prepare<[number, number], RawClient>(
      `SELECT ${CLIENT_COLUMNS} FROM clients WHERE agency_id = ? AND client_number = ?`
    ),
    getClientsIn: db.prepare<[number, string], RawClient>(
      `SELECT ${CLIENT_COLUMNS} FROM clients
       WHERE agency_id = ? AND deleted = 0 AND client_number IN (SELECT value FROM json_each(?))`
    ),
    listClients: db.prepare<[number], RawClient>(
      `SELECT ${CLIENT_COLUMNS} FROM clients WHERE agency_id = ? ORDER BY client_number`
    ),
    searchByPolicyNumber: db.prepare<{ agencyId: number; policyNumber: string }, RawClient>(
      `SELECT ${CLIENT_COLUMNS.split(', ').map((c) => 'c.' + c).join(', ')} FROM clients c
       WHERE c.agency_id = @agencyId AND c.deleted = 0 AND c.client_number IN
         (SELECT p.client_number FROM policies p WHERE p.agency_id = @agencyId AND p.policy_number = @policyNumber)
       ORDER BY c.client_number`
    ),
    insertClient: db.prepare(
      `INSERT INTO clients (${CLIENT_COLUMNS})
       VALUES (@agencyId, @clientNumber, @deleted, @modifiedMs, @officeId, @details, @people, @contacts, @claims, @policies, @invoices)`
    ),
    maxClientNumber: db.prepare<[number], { n: number | null }>('SELECT max(client_number) AS n FROM clients WHERE agency_id = ?'),
    countClients: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM clients'),

    insertPolicy: db.prepare(
      'INSERT OR IGNORE INTO policies (agency_id, client_number, policy_id, policy_number, policy_index) VALUES (?, ?, ?, ?, ?)'
    ),
    updateClientDetails: db.prepare(
      'UPDATE clients SET details = ?, modified_ms = ? WHERE agency_id = ? AND client_number = ?'
    ),
    setAgencyFlag: {
      active: db.prepare('UPDATE agencies SET active = ? WHERE agency_id = ?'),
      connected: db.prepare('UPDATE agencies SET connected = ? WHERE agency_id = ?'),
      supportsIncludes: db.prepare('UPDATE agencies SET supports_includes = ? WHERE agency_id = ?'),
      defaultOfficeId: db.prepare('UPDATE agencies SET default_office_id = ? WHERE agency_id = ?')
    },
    getWrite: db.prepare<[number, string, string], RawWrite>('SELECT * FROM writes WHERE agency_id = ? AND kind = ? AND ref_id = ?'),
    getWriteByRef: db.prepare<[number, string], RawWrite>('SELECT * FROM writes WHERE agency_id = ? AND ref_id = ? ORDER BY seq LIMIT 1'),
    insertWrite: db.prepare(
      `INSERT INTO writes (agency_id, client_number, kind, ref_id, integration, api_version, status, fingerprint, received_at, applied_at, data)
       VALUES (@agencyId, @clientNumber, @kind, @refId, @integration, @apiVersion, @status, @fingerprint, @receivedAt, @appliedAt, @data)`
    ),
    listWrites: db.prepare<{ agencyId: number; kind: string | null; status: string | null; clientNumber: number | null }, RawWrite>(
      `SELECT * FROM writes WHERE agency_id = @agencyId
         AND (@kind IS NULL OR kind = @kind) AND (@status IS NULL OR status = @status)
         AND (@clientNumber IS NULL OR client_number = @clientNumber)
       ORDER BY seq`
    ),
    listAllWrites: db.prepare<[], RawWrite>('SELECT * FROM writes ORDER BY seq'),
    deleteClient: db.prepare('DELETE FROM clients WHERE agency_id = ? AND client_number = ?'),
    deleteClientPolicies: db.prepare('DELETE FROM policies WHERE agency_id = ? AND client_number = ?'),
    updateClient: db.prepare(
      `UPDATE clients SET deleted = @deleted, modified_ms = @modifiedMs, office_id = @officeId, details = @details, people = @people,
         contacts = @contacts, claims = @claims, policies = @policies, invoices = @invoices
       WHERE agency_id = @agencyId AND client_number = @clientNumber`
    ),
    searchClients: db.prepare<{ agencyId: number; like: string; plain: string; limit: number }, RawClient>(
      `SELECT ${CLIENT_COLUMNS} FROM clients WHERE agency_id = @agencyId
         AND (details LIKE @like OR people LIKE @like OR policies LIKE @like OR CAST(client_number AS TEXT) = @plain)
       ORDER BY client_number LIMIT @limit`
    ),
    deleteIntegration: db.prepare('DELETE FROM integrations WHERE client_id = ?'),
    deleteAgency: db.prepare('DELETE FROM agencies WHERE agency_id = ?'),
    deleteSubscription: db.prepare('DELETE FROM subscriptions WHERE client_id = ? AND agency_id = ?'),
    updateSubscription: db.prepare('UPDATE subscriptions SET scopes = ?, opted_out = ? WHERE client_id = ? AND agency_id = ?'),
    deleteOffice: db.prepare('DELETE FROM offices WHERE agency_id = ? AND office_id = ?'),
    deleteUser: db.prepare('DELETE FROM users WHERE agency_id = ? AND user_id = ?'),
    setDefaultUsers: db.prepare('UPDATE agencies SET default_users = ? WHERE agency_id = ?'),
    countOfficeClients: db.prepare<[number, number], { n: number }>('SELECT count(*) AS n FROM clients WHERE agency_id = ? AND office_id = ?'),
    countIntegrations: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM integrations'),
    countAgencies: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM agencies'),
    markApplied: db.prepare("UPDATE writes SET status = 'applied', applied_at = ? WHERE seq = ?"),
    countWrites: db.prepare<[], { pending: number | null; applied: number | null }>(
      "SELECT sum(status = 'pending') AS pending, sum(status = 'applied') AS applied FROM writes"
    ),
    insertContent: db.prepare('INSERT INTO attachment_content (write_seq, content) VALUES (?, ?)'),
    getContent: db.prepare<[number], { content: Buffer }>('SELECT content FROM attachment_content WHERE write_seq = ?'),
    listClientPolicies: db.prepare<[number, number], { policy_id: string; policy_number: string; policy_index: number }>(
      'SELECT policy_id, policy_number, policy_index FROM policies WHERE agency_id = ? AND client_number = ? ORDER BY policy_index'
    )
  }

  /**
   * Clients as the JSON objects a 3.0/4.0 read answers, `{"clientNumber":N,"<group>":<stored JSON>,…}`,
   * joined by SQLite from the stored group JSON. Read as text: a SQLite BLOB becomes a Node
   * buffer of its own (an allocation each), which costs more than the text and its copy into
   * the answer. One statement per combination of groups.
   */
  const fragmentStatements = new Map<string, Database.Statement<[string, number], [number, string]>>()
  const fragmentStatement = (groups: readonly GroupColumn[]) => {
    const key = groups.join(',')
    let stmt = fragmentStatements.get(key)
    if (stmt === undefined) {
      for (const g of groups) if (!GROUP_COLUMNS.includes(g)) throw new Error(`unknown client group column ${g}`)
      const members = groups.map((g) => `, ',"${g}":', c.${g}`).join('')
      stmt = db
        .prepare<[string, number], [number, string]>(
          `SELECT c.client_number, concat('{"clientNumber":', c.client_number${members}, '}')
           FROM json_each(?) j JOIN clients c ON c.agency_id = ? AND c.client_number = j.value AND c.deleted = 0`
        )
        .raw()
      fragmentStatements.set(key, stmt)
    }
    return stmt
  }

  const parseSubscription = (clientId: string, r: { agency_id: number; scopes: string; opted_out: number }): SubscriptionRow => ({
    clientId,
    agencyId: r.agency_id,
    scopes: JSON.parse(r.scopes) as string[],
    optedOut: bool(r.opted_out)
  })

  const api = {
    getMeta: (key: string): string | undefined => s.getMeta.get(key)?.value,
    setMeta: (key: string, value: string): void => void s.setMeta.run(key, value),

    getIntegration(clientId: string): IntegrationRow | undefined {
      const r = s.getIntegration.get(clientId)
      return r === undefined ? undefined : { clientId: r.client_id, clientSecret: r.client_secret, name: r.name }
    },
    listIntegrations: (): IntegrationRow[] =>
      s.listIntegrations.all().map((r) => ({ clientId: r.client_id, clientSecret: r.client_secret, name: r.name })),
    insertIntegration: (i: IntegrationRow): void => void s.insertIntegration.run(i.clientId, i.clientSecret, i.name),

    getAgency(agencyId: number): AgencyRow | undefined {
      const r = s.getAgency.get(agencyId)
      return r === undefined ? undefined : toAgency(r)
    },
    listAgencies: (): AgencyRow[] => s.listAgencies.all().map(toAgency),
    insertAgency(a: AgencyRow): void {
      s.insertAgency.run({
        agencyId: a.agencyId, name: a.name, active: int(a.active), connected: int(a.connected),
        supportsIncludes: int(a.supportsIncludes), defaultOfficeId: a.defaultOfficeId, defaultUsers: JSON.stringify(a.defaultUsers)
      })
    },

    getSubscription(clientId: string, agencyId: number): SubscriptionRow | undefined {
      const r = s.getSubscription.get(clientId, agencyId)
      return r === undefined ? undefined : parseSubscription(clientId, { agency_id: agencyId, ...r })
    },
    listSubscriptions: (clientId: string): SubscriptionRow[] =>
      s.listSubscriptions.all(clientId).map((r) => parseSubscription(clientId, r)),
    listAllSubscriptions: (): SubscriptionRow[] =>
      s.listAllSubscriptions.all().map((r) => parseSubscription(r.client_id, r)),
    insertSubscription(sub: SubscriptionRow, position: number): void {
      s.insertSubscription.run(sub.clientId, sub.agencyId, JSON.stringify(sub.scopes), int(sub.optedOut), position)
    },

    listOffices: (agencyId: number): OfficeRow[] => s.listOffices.all(agencyId).map(toOffice),
    insertOffice(agencyId: number, o: OfficeRow): void {
      s.insertOffice.run({ agencyId, ...o, primaryOffice: int(o.primaryOffice) })
    },

    listUsers: (agencyId: number): UserRow[] => s.listUsers.all(agencyId).map(toUser),
    listActiveUsers: (agencyId: number): UserRow[] => s.listActiveUsers.all(agencyId).map(toUser),
    insertUser(agencyId: number, u: UserRow): void {
      s.insertUser.run({ agencyId, ...u, active: int(u.active) })
    },

    clientIds(agencyId: number, opts: { deleted: boolean; officeId: number | null; sinceMs: number | null }): number[] {
      const base = { agencyId, deleted: int(opts.deleted), officeId: opts.officeId }
      return opts.sinceMs === null ? s.clientIdsAll.all(base) : s.clientIdsSince.all({ ...base, since: opts.sinceMs })
    },
    getClient(agencyId: number, clientNumber: number): ClientRow | undefined {
      const r = s.getClient.get(agencyId, clientNumber)
      return r === undefined ? undefined : toClient(r)
    },
    /** Live (not deleted) clients among the given numbers, in no particular order. */
    getClientsIn: (agencyId: number, clientNumbers: number[]): ClientRow[] =>
      s.getClientsIn.all(agencyId, JSON.stringify(clientNumbers)).map(toClient),
    /**
     * The live clients among `clientNumbers`, each as the JSON object a 3.0/4.0 read answers
     * with the given groups in that order, in no particular order; others are left out.
     */
    clientFragments: (agencyId: number, clientNumbers: number[], groups: readonly GroupColumn[]): Array<[number, string]> =>
      fragmentStatement(groups).all(JSON.stringify(clientNumbers), agencyId),
    listClients: (agencyId: number): ClientRow[] => s.listClients.all(agencyId).map(toClient),
    searchByPolicyNumber: (agencyId: number, policyNumber: string): ClientRow[] =>
      s.searchByPolicyNumber.all({ agencyId, policyNumber }).map(toClient),
    insertClient(c: ClientRow): void {
      s.insertClient.run({ ...c, deleted: int(c.deleted) })
    },
    maxClientNumber: (agencyId: number): number => s.maxClientNumber.get(agencyId)?.n ?? 0,
    countClients: (): number => s.countClients.get()?.n ?? 0,

    insertPolicy(agencyId: number, clientNumber: number, p: PolicyKey): void {
      s.insertPolicy.run(agencyId, clientNumber, p.policyId, p.policyNumber, p.policyIndex)
    },
    listClientPolicies: (agencyId: number, clientNumber: number): PolicyKey[] =>
      s.listClientPolicies.all(agencyId, clientNumber).map((r) => ({
        policyId: r.policy_id, policyNumber: r.policy_number, policyIndex: r.policy_index
      })),

    updateClientDetails(agencyId: number, clientNumber: number, details: string, modifiedMs: number): void {
      s.updateClientDetails.run(details, modifiedMs, agencyId, clientNumber)
    },
    setAgencyFlag(agencyId: number, flag: 'active' | 'connected' | 'supportsIncludes', value: boolean): void {
      s.setAgencyFlag[flag].run(int(value), agencyId)
    },
    setDefaultOffice(agencyId: number, officeId: number): void {
      s.setAgencyFlag.defaultOfficeId.run(officeId, agencyId)
    },

    getWrite(agencyId: number, kind: WriteKind, refId: string): WriteRow | undefined {
      const r = s.getWrite.get(agencyId, kind, refId)
      return r === undefined ? undefined : toWrite(r)
    },
    /** The first write with this RefId, of any kind. */
    getWriteByRef(agencyId: number, refId: string): WriteRow | undefined {
      const r = s.getWriteByRef.get(agencyId, refId)
      return r === undefined ? undefined : toWrite(r)
    },
    insertWrite(w: Omit<WriteRow, 'seq'>): number {
      return Number(s.insertWrite.run({ ...w, data: JSON.stringify(w.data) }).lastInsertRowid)
    },
    listWrites: (agencyId: number, f: WriteFilter = {}): WriteRow[] =>
      s.listWrites.all({ agencyId, kind: f.kind ?? null, status: f.status ?? null, clientNumber: f.clientNumber ?? null }).map(toWrite),
    markApplied: (seq: number, at: string): void => void s.markApplied.run(at, seq),
    listAllWrites: (): WriteRow[] => s.listAllWrites.all().map(toWrite),
    /** Replaces a stored client's row (same agency and number). */
    updateClient(c: ClientRow): void {
      s.updateClient.run({ ...c, deleted: int(c.deleted) })
    },
    deleteClientPolicies: (agencyId: number, clientNumber: number): void => void s.deleteClientPolicies.run(agencyId, clientNumber),
    deleteClient: (agencyId: number, clientNumber: number): void => void s.deleteClient.run(agencyId, clientNumber),
    /** Clients whose name, details or policy numbers contain the text (or whose number is it). */
    searchClients: (agencyId: number, text: string, limit: number): ClientRow[] =>
      s.searchClients.all({ agencyId, like: `%${text.replace(/[%_\\]/g, '')}%`, plain: text.trim(), limit }).map(toClient),
    deleteIntegration: (clientId: string): boolean => s.deleteIntegration.run(clientId).changes > 0,
    deleteAgency: (agencyId: number): boolean => s.deleteAgency.run(agencyId).changes > 0,
    deleteSubscription: (clientId: string, agencyId: number): boolean => s.deleteSubscription.run(clientId, agencyId).changes > 0,
    updateSubscription(sub: SubscriptionRow): void {
      s.updateSubscription.run(JSON.stringify(sub.scopes), int(sub.optedOut), sub.clientId, sub.agencyId)
    },
    deleteOffice: (agencyId: number, officeId: number): boolean => s.deleteOffice.run(agencyId, officeId).changes > 0,
    deleteUser: (agencyId: number, userId: number): boolean => s.deleteUser.run(agencyId, userId).changes > 0,
    setDefaultUsers: (agencyId: number, users: Record<string, number>): void => void s.setDefaultUsers.run(JSON.stringify(users), agencyId),
    countOfficeClients: (agencyId: number, officeId: number): number => s.countOfficeClients.get(agencyId, officeId)?.n ?? 0,
    countIntegrations: (): number => s.countIntegrations.get()?.n ?? 0,
    countAgencies: (): number => s.countAgencies.get()?.n ?? 0,
    countWrites(): { pending: number; applied: number } {
      const r = s.countWrites.get()
      return { pending: r?.pending ?? 0, applied: r?.applied ?? 0 }
    },
    insertContent: (seq: number, content: Buffer): void => void s.insertContent.run(seq, content),
    getContent: (seq: number): Buffer | undefined => s.getContent.get(seq)?.content,

    /** Deletes every row of the world (not the schema), children first. */
    clearAll(): void {
      db.exec('DELETE FROM attachment_content; DELETE FROM writes; DELETE FROM policies; DELETE FROM clients; DELETE FROM users; DELETE FROM offices; DELETE FROM subscriptions; DELETE FROM agencies; DELETE FROM integrations;')
    },
    transaction: <T>(fn: () => T): T => db.transaction(fn)()
  }
  return withReadCache(api, options.fragmentCacheBytes ?? FRAGMENT_CACHE_BYTES)
}

/**
 * A cache of answers derived from the store, emptied whenever the store changes (its generation
 * moves) and when what it holds passes `budget` (counted by `weigh`: entries by default).
 */
export class UntilChange<K, V> {
  private readonly map = new Map<K, V>()
  private used = 0
  private seen = -1

  constructor(
    private readonly store: { generation(): number },
    private readonly budget: number,
    private readonly weigh: (value: V) => number = () => 1
  ) {}

  get(key: K): V | undefined {
    if (this.seen !== this.store.generation()) {
      this.clear()
      this.seen = this.store.generation()
    }
    return this.map.get(key)
  }

  set(key: K, value: V): V {
    const weight = this.weigh(value)
    if (this.used + weight > this.budget) this.clear()
    this.map.set(key, value)
    this.used += weight
    return value
  }

  private clear(): void {
    this.map.clear()
    this.used = 0
  }
}

/** Store methods that change integrations, subscriptions or agencies. */
const ACCESS_MUTATORS = [
  'insertIntegration', 'deleteIntegration', 'insertAgency', 'deleteAgency', 'setAgencyFlag', 'setDefaultOffice',
  'setDefaultUsers', 'insertSubscription', 'updateSubscription', 'deleteSubscription', 'clearAll'
] as const

/** Store methods that change clients (their ids, deleted flags, offices or modified times). */
const CLIENT_MUTATORS = [
  'insertClient', 'updateClient', 'updateClientDetails', 'deleteClient', 'insertPolicy', 'deleteClientPolicies'
] as const

/** Clients (and policy-number searches) kept in memory; past this many, the cache starts over. */
const CLIENT_CACHE_ENTRIES = 2048
/**
 * Bytes of batch-read answers kept per client by default (about 5,500 clients of 3 kB), and how
 * many clients (absent ones too) at most; past either, the cache starts over.
 */
const FRAGMENT_CACHE_BYTES = 16 * 1024 * 1024
const FRAGMENT_CACHE_ENTRIES = 100_000
/** A client the cache knows not to be there (unknown or deleted). */
const ABSENT = -1

export interface StoreOptions {
  /** Bytes of batch-read answers kept in memory (FRAGMENT_CACHE_BYTES by default). */
  fragmentCacheBytes?: number
}

/**
 * Every vendor request reads its integration, subscription and agency: tiny tables that change
 * only through this store. They are cached in memory and forgotten on any change to them or to
 * a client, and when a transaction fails (it may have cached rows it then rolled back). The
 * clients a partner reads again (one client, a policy-number search) are cached the same way,
 * up to CLIENT_CACHE_ENTRIES.
 */
function withReadCache<T extends {
  getIntegration(clientId: string): unknown
  getAgency(agencyId: number): unknown
  getSubscription(clientId: string, agencyId: number): unknown
  getClient(agencyId: number, clientNumber: number): unknown
  searchByPolicyNumber(agencyId: number, policyNumber: string): unknown
  clientFragments(agencyId: number, clientNumbers: number[], groups: readonly GroupColumn[]): Array<[number, string]>
  transaction<R>(fn: () => R): R
}>(api: T, fragmentBudget: number): T & CachedReads {
  /** Counts changes to clients and agencies, so derived answers know when to recompute. */
  let generation = 0
  const integrations = new Map<string, unknown>()
  const agencies = new Map<number, unknown>()
  const subscriptions = new Map<string, unknown>()
  const clients = new Map<string, unknown>()
  /** Batch-read answer bytes per client, by agency and groups: their handle in `slabs`, or ABSENT. */
  const fragments = new Map<string, Map<number, number>>()
  // slabs of 1 MiB, or one slab as large as a smaller budget
  const slabs = new ByteSlabs(fragmentBudget, Math.max(1, Math.min(1024 * 1024, fragmentBudget)))
  /** Batch answers are written into buffers given back once sent (recycleAnswer). */
  const answers = new BufferPool()
  let fragmentEntries = 0
  /** The cache filled up during a request: the next request starts it over (this one still uses its handles). */
  let fragmentsFull = false
  const forgetFragments = () => {
    fragments.clear()
    slabs.reset()
    fragmentEntries = 0
    fragmentsFull = false
  }
  const forget = () => {
    generation++
    integrations.clear()
    agencies.clear()
    subscriptions.clear()
    clients.clear()
    forgetFragments()
  }
  const cached = <K, V>(map: Map<K, V>, key: K, load: () => V, limit = 10_000): V => {
    if (map.has(key)) return map.get(key) as V
    if (map.size >= limit) map.clear() // unknown ids are cached too: keep that bounded
    const value = load()
    map.set(key, value)
    return value
  }
  const { getIntegration, getAgency, getSubscription, getClient, searchByPolicyNumber, clientFragments, transaction } = api
  const out = { ...api } as Record<string, unknown>
  out.getIntegration = (clientId: string) => cached(integrations, clientId, () => getIntegration(clientId))
  out.getAgency = (agencyId: number) => cached(agencies, agencyId, () => getAgency(agencyId))
  out.getSubscription = (clientId: string, agencyId: number) =>
    cached(subscriptions, `${agencyId}\u0000${clientId}`, () => getSubscription(clientId, agencyId))
  // cached rows are shared by every reader: frozen, so none can change another's copy
  out.getClient = (agencyId: number, clientNumber: number) =>
    cached(clients, `${agencyId}|${clientNumber}`, () => Object.freeze(getClient(agencyId, clientNumber)), CLIENT_CACHE_ENTRIES)
  out.searchByPolicyNumber = (agencyId: number, policyNumber: string) =>
    cached(clients, `${agencyId}\u0000${policyNumber}`, () => {
      const rows = searchByPolicyNumber(agencyId, policyNumber) as object[]
      return Object.freeze(rows.map((r) => Object.freeze(r)))
    }, CLIENT_CACHE_ENTRIES)
  out.clientsJsonIn = (agencyId: number, clientNumbers: number[], groups: readonly GroupColumn[]): Buffer => {
    // starting over between requests, never during one: its handles stay valid
    if (fragmentsFull) forgetFragments()
    const key = `${agencyId}|${groups.join(',')}`
    let kept = fragments.get(key)
    if (kept === undefined) fragments.set(key, (kept = new Map()))
    // this request's parts by position: a handle, text read now (not kept: the cache is full), or ABSENT
    const found: Array<number | string | undefined> = []
    const missing: number[] = []
    for (const n of clientNumbers) {
      const part = kept.get(n)
      found.push(part)
      if (part === undefined) missing.push(n)
    }
    if (missing.length > 0) {
      const read = new Map(clientFragments(agencyId, missing, groups))
      for (let i = 0; i < clientNumbers.length; i++) {
        if (found[i] !== undefined) continue
        const n = clientNumbers[i]
        const text = read.get(n)
        let part: number | string = ABSENT
        if (text !== undefined) {
          const bytes = Buffer.byteLength(text, 'utf8')
          // a client larger than a slab is answered, never kept; a full cache keeps nothing more
          const handle = fragmentsFull || bytes > slabs.slabBytes ? NOT_KEPT : slabs.keep(text, bytes)
          if (handle === NOT_KEPT && bytes <= slabs.slabBytes) fragmentsFull = true
          part = handle === NOT_KEPT ? text : handle
        }
        found[i] = part
        if (typeof part === 'number' && !fragmentsFull) {
          kept.set(n, part)
          if (++fragmentEntries >= FRAGMENT_CACHE_ENTRIES) fragmentsFull = true
        }
      }
    }
    return slabs.jsonArray(found.filter((part): part is number | string => part !== ABSENT), (length) => answers.take(length))
  }
  out.recycleAnswer = (answer: Buffer): void => answers.give(answer)
  out.transaction = <R>(fn: () => R): R => {
    try {
      return transaction(fn)
    } catch (e) {
      forget()
      throw e
    }
  }
  out.generation = () => generation
  for (const name of [...ACCESS_MUTATORS, ...CLIENT_MUTATORS]) {
    const original = (api as unknown as Record<string, (...args: unknown[]) => unknown>)[name]
    out[name] = (...args: unknown[]) => {
      forget()
      return original(...args)
    }
  }
  return out as unknown as T & CachedReads
}

/** What the read cache adds to the store. */
export interface CachedReads {
  /** Counts changes to clients and agencies, so derived answers know when to recompute. */
  generation(): number
  /**
   * The live clients among `clientNumbers` (distinct), in that order, as the JSON array a 3.0 or
   * 4.0 batch read answers, with the given groups in that order, in UTF-8. Each client's bytes
   * come from SQLite once and are kept (up to the store's fragmentCacheBytes) until anything changes.
   */
  clientsJsonIn(agencyId: number, clientNumbers: number[], groups: readonly GroupColumn[]): Buffer
  /**
   * Takes back an answer of clientsJsonIn once nothing reads it any more (it has been sent), to
   * write a later answer into; anything else is ignored. Optional: an answer never given back
   * is collected as usual.
   */
  recycleAnswer(answer: Buffer): void
}

export type Store = ReturnType<typeof createStore>
