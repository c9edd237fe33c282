import type { AgencyRow, ClientRepository, ClientRow, IntegrationRow, OfficeRow, PolicyKey, Repositories, SubscriptionRow, UserRow, WriteRow } from '../db/index.js'
import type { Fixture, FixtureAgency, FixtureClient, FixtureOffice, FixtureUser } from '../fixture/schema.js'
import { completedPolicy, peopleById } from '../fixture/complete.js'
import type { FixtureStamp } from '../fixture/stamp.js'
import { parseTimestamp } from '../time.js'

/**
 * Turns a fixture client into its stored form (each group as the JSON the API answers). A policy
 * lacking a field the read model requires gets it here, once, so reads only join stored text.
 */
export function clientToRow (agencyId: number, c: FixtureClient): ClientRow {
  const people = c.policies?.some((p) => (p.drivers ?? []).length > 0) === true ? peopleById(c.people) : undefined
  const policies = (c.policies ?? []).map((p, i) => completedPolicy(p, i, people))
  return {
    agencyId,
    clientNumber: c.clientNumber,
    deleted: c.deleted === true,
    modifiedMs: parseTimestamp(c.details.modified) ?? 0,
    officeId: c.details.officeId,
    details: JSON.stringify(c.details),
    people: JSON.stringify(c.people ?? []),
    contacts: JSON.stringify(c.contacts ?? []),
    claims: JSON.stringify(c.claims ?? []),
    policies: JSON.stringify(policies),
    invoices: JSON.stringify(c.invoices ?? [])
  }
}

type ClientWrites = Pick<ClientRepository, 'insertClient' | 'updateClient' | 'insertPolicy' | 'deleteClientPolicies'>

/** Replaces a stored client (same agency and number) and re-indexes its policies; call it in a transaction. */
export function replaceClient (clients: ClientWrites, agencyId: number, c: FixtureClient): void {
  clients.deleteClientPolicies(agencyId, c.clientNumber)
  clients.updateClient(clientToRow(agencyId, c))
  indexPolicies(clients, agencyId, c)
}

function indexPolicies (clients: ClientWrites, agencyId: number, c: FixtureClient): void {
  ;(c.policies ?? []).forEach((p, i) =>
    clients.insertPolicy(agencyId, c.clientNumber, { policyId: p.id, policyNumber: p.policyNumber ?? '', policyIndex: p.policyIndex ?? i })
  )
}

/** Inserts a client and indexes its policies; call it in a transaction. */
export function insertClient (clients: ClientWrites, agencyId: number, c: FixtureClient): void {
  clients.insertClient(clientToRow(agencyId, c))
  indexPolicies(clients, agencyId, c)
}

/** The whole world as a fixture document: resetting to it reproduces every answer. */
export function exportWorld ({ access, agencies: agencyRows, clients, writes: writeRows }: Repositories, { withClients = true }: { withClients?: boolean } = {}): Fixture {
  const subscriptions = access.listAllSubscriptions()
  const agencies = agencyRows.listAgencies().map((a) => ({
    agencyId: a.agencyId,
    name: a.name,
    active: a.active,
    connected: a.connected,
    supportsIncludes: a.supportsIncludes,
    defaultOfficeId: a.defaultOfficeId,
    offices: agencyRows.listOffices(a.agencyId),
    users: agencyRows.listUsers(a.agencyId).map((u) => ({
      userId: u.userId,
      username: u.username,
      ...(u.firstName === null ? {} : { firstName: u.firstName }),
      ...(u.lastName === null ? {} : { lastName: u.lastName }),
      ...(u.email === null ? {} : { email: u.email }),
      ...(u.homeOffice === null ? {} : { homeOffice: u.homeOffice }),
      active: u.active
    })),
    defaultUsers: a.defaultUsers,
    clients: withClients ? clients.listClients(a.agencyId).map(rowToClient) : []
  }))
  const integrations = access.listIntegrations().map((i) => ({
    ...i,
    agencies: subscriptions.filter((s) => s.clientId === i.clientId).map((s) => ({ agencyId: s.agencyId, scopes: s.scopes, optedOut: s.optedOut }))
  }))
  const writes = writeRows.listAllWrites().map((w) => {
    const content = w.kind === 'attachment' ? writeRows.getContent(w.seq) : undefined
    return {
      agencyId: w.agencyId,
      clientNumber: w.clientNumber,
      kind: w.kind,
      refId: w.refId,
      integration: w.integration,
      version: w.apiVersion,
      status: w.status,
      receivedAt: w.receivedAt,
      appliedAt: w.appliedAt,
      fingerprint: w.fingerprint,
      data: w.data,
      ...(content === undefined ? {} : { content: content.toString('base64') })
    }
  })
  return { integrations, agencies, writes } as Fixture
}

/** A stored client back in fixture form (its groups parsed). */
export function rowToClient (r: ClientRow): FixtureClient {
  return {
    clientNumber: r.clientNumber,
    deleted: r.deleted,
    details: JSON.parse(r.details) as FixtureClient['details'],
    people: JSON.parse(r.people) as FixtureClient['people'],
    contacts: JSON.parse(r.contacts) as FixtureClient['contacts'],
    claims: JSON.parse(r.claims) as FixtureClient['claims'],
    policies: JSON.parse(r.policies) as FixtureClient['policies'],
    invoices: JSON.parse(r.invoices) as FixtureClient['invoices']
  }
}

/** An office's row as the fixture describes it (not archived unless it says so). */
export const officeRow = (o: FixtureOffice) => ({
  officeId: o.officeId,
  officeDescription: o.officeDescription,
  subAgencyName: o.subAgencyName,
  primaryOffice: o.primaryOffice,
  addressLine1: o.addressLine1,
  addressLine2: o.addressLine2,
  city: o.city,
  state: o.state,
  zipcode: o.zipcode,
  archived: o.archived ?? false
})

/** A user's row as the fixture describes it (absent names, e-mail and home office stored as null). */
export const userRow = (u: FixtureUser) => ({
  userId: u.userId,
  username: u.username,
  firstName: u.firstName ?? null,
  lastName: u.lastName ?? null,
  email: u.email ?? null,
  homeOffice: u.homeOffice ?? null,
  active: u.active
})

/**
 * A fixture as the rows it becomes: everything loading it takes but the inserts (the groups of
 * each client already JSON text), so that the part that grows with the document can be made away
 * from the event loop (fixture-job.ts) and passed over as plain data.
 */
export interface PreparedWorld {
  prepared: true
  agencies: PreparedAgency[]
  integrations: Array<{ integration: IntegrationRow, subscriptions: SubscriptionRow[] }>
  /** Each write with its attachment bytes in base64. */
  writes: Array<{ write: Omit<WriteRow, 'seq'>, content?: string }>
}

export interface PreparedAgency {
  agency: AgencyRow
  offices: OfficeRow[]
  users: UserRow[]
  clients: Array<{ row: ClientRow, policies: PolicyKey[] }>
}

export function prepareAgency (a: FixtureAgency): PreparedAgency {
  return {
    agency: {
      agencyId: a.agencyId,
      name: a.name,
      active: a.active ?? true,
      connected: a.connected ?? true,
      supportsIncludes: a.supportsIncludes ?? true,
      defaultOfficeId: a.defaultOfficeId,
      defaultUsers: Object.fromEntries(Object.entries(a.defaultUsers ?? {}).filter(([, v]) => v !== undefined)) as Record<string, number>
    },
    offices: a.offices.map(officeRow),
    users: a.users.map(userRow),
    clients: a.clients.map((c) => prepareClient(a.agencyId, c))
  }
}

export type PreparedClient = PreparedAgency['clients'][number]

/** A client's row and the keys of its policies. */
export function prepareClient (agencyId: number, c: FixtureClient): PreparedClient {
  return {
    row: clientToRow(agencyId, c),
    policies: (c.policies ?? []).map((p, i) => ({ policyId: p.id, policyNumber: p.policyNumber ?? '', policyIndex: p.policyIndex ?? i }))
  }
}

/** Inserts one prepared agency with its offices, users and clients (the caller holds the transaction). */
export function insertPreparedAgency ({ agencies, clients }: Pick<Repositories, 'agencies' | 'clients'>, a: PreparedAgency): void {
  agencies.insertAgency(a.agency)
  for (const o of a.offices) agencies.insertOffice(a.agency.agencyId, o)
  for (const u of a.users) agencies.insertUser(a.agency.agencyId, u)
  for (const c of a.clients) {
    clients.insertClient(c.row)
    for (const p of c.policies) clients.insertPolicy(a.agency.agencyId, c.row.clientNumber, p)
  }
}

/** The fixture's rows; without `clients`, its agencies come without their clients (staged in turns instead: world-load.ts). */
export function prepareWorld (fixture: Fixture, { clients = true }: { clients?: boolean } = {}): PreparedWorld {
  return {
    prepared: true,
    agencies: fixture.agencies.map((a) => prepareAgency(clients ? a : { ...a, clients: [] })),
    integrations: fixture.integrations.map((i) => ({
      integration: { clientId: i.clientId, clientSecret: i.clientSecret, name: i.name },
      subscriptions: i.agencies.map((s) => ({ clientId: i.clientId, agencyId: s.agencyId, scopes: s.scopes, optedOut: s.optedOut === true }))
    })),
    writes: (fixture.writes ?? []).map((w) => ({
      write: {
        agencyId: w.agencyId,
        clientNumber: w.clientNumber,
        kind: w.kind,
        refId: w.refId,
        integration: w.integration,
        apiVersion: w.version,
        status: w.status,
        fingerprint: w.fingerprint ?? '',
        receivedAt: w.receivedAt,
        appliedAt: w.appliedAt,
        data: w.data
      },
      ...(w.content === undefined ? {} : { content: w.content })
    }))
  }
}

/**
 * Replaces the whole world with the fixture's (or the rows prepared from one), in one
 * transaction (one change for the read model). `stamp`: the content of the fixture file loaded,
 * remembered so that a later start can tell another fixture from it.
 */
export function loadWorld (repositories: Repositories, content: Fixture | PreparedWorld, source: string, nowIso: string, stamp?: FixtureStamp): void {
  const world = 'prepared' in content ? content : prepareWorld(content)
  repositories.transaction(() => {
    repositories.clearWorld()
    for (const a of world.agencies) insertPreparedAgency(repositories, a)
    insertRest(repositories, world, source, nowIso, stamp)
  })
}

/** Everything but the agencies (the caller holds the transaction): integrations, writes, and what seeded the world. */
export function insertRest (repositories: Repositories, world: PreparedWorld, source: string, nowIso: string, stamp?: FixtureStamp): void {
  const { access, writes, meta } = repositories
  for (const { integration, subscriptions } of world.integrations) {
    access.insertIntegration(integration)
    subscriptions.forEach((s, position) => access.insertSubscription(s, position))
  }
  for (const { write, content: bytes } of world.writes) {
    const seq = writes.insertWrite(write)
    if (bytes !== undefined) writes.insertContent(seq, Buffer.from(bytes, 'base64'))
  }
  meta.set('seeded_from', source)
  meta.set('seeded_at', nowIso)
  meta.set('seeded_sha256', stamp?.sha256 ?? '')
  meta.set('seeded_quick', stamp?.quick ?? '')
}
