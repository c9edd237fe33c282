import { randomUUID } from 'node:crypto'
import type { Repositories } from '../db/index.js'
import { badRequest, conflict, notFound, validationFailed, type FieldError } from '../errors.js'
import type { FixtureAgency, FixtureClient, FixtureIntegration, FixtureOffice, FixtureUser } from '../fixture/schema.js'
import { clientErrors } from '../fixture/validate.js'
import type { Clock } from './clock.js'
import { insertClient, officeRow, prepareAgency, replaceClient, rowToClient, userRow, type PreparedAgency } from './world.js'
import { addAgencyInTurns } from './world-load.js'

/**
 * What the control plane changes in the world: integrations, subscriptions, agencies,
 * offices, users, and agency-side client changes that a partner must sync (each moves
 * `details.modified` to the sandbox clock).
 */

export interface SubscriptionPatch {
  scopes?: string[]
  optedOut?: boolean
}

/** A client as PUT by the control plane: the read model, `modified` optional. */
export type ClientInput = Omit<FixtureClient, 'clientNumber' | 'details'> & {
  clientNumber?: number
  details: Omit<FixtureClient['details'], 'modified'> & { modified?: string }
}

/** A PATCH of a client: details merged key by key; any group given replaces the stored one. */
export interface ClientPatch {
  details?: Record<string, unknown>
  people?: unknown[]
  contacts?: unknown[]
  claims?: unknown[]
  policies?: unknown[]
  invoices?: unknown[]
  deleted?: boolean
}

/** An agency's own consistency (its default office, its clients' offices, unique client numbers): a 400 listing every error. */
export function agencyErrors (a: FixtureAgency): FieldError[] {
  const offices = new Set(a.offices.map((o) => o.officeId))
  const errors: FieldError[] = []
  if (!offices.has(a.defaultOfficeId)) errors.push({ field: 'defaultOfficeId', message: `office ${a.defaultOfficeId} is not among the agency's offices` })
  else if (a.offices.some((o) => o.officeId === a.defaultOfficeId && o.archived === true)) {
    errors.push({ field: 'defaultOfficeId', message: `office ${a.defaultOfficeId} is archived; choose an office that is not archived` })
  }
  if (new Set(a.clients.map((c) => c.clientNumber)).size !== a.clients.length) errors.push({ field: 'clients', message: 'client numbers must be unique' })
  a.clients.forEach((c, i) => {
    if (!offices.has(c.details.officeId)) errors.push({ field: `clients[${i}].details.officeId`, message: `office ${c.details.officeId} is not among the agency's offices` })
  })
  return errors
}

/** A validated agency checked for its own consistency and made into rows. */
export function checkedAgency (a: FixtureAgency): PreparedAgency {
  const errors = agencyErrors(a)
  if (errors.length > 0) throw validationFailed(errors)
  return prepareAgency(a)
}

/**
 * `clientIdOf` gives a new integration the Client Id it has in this world (a world other than the
 * default one adds its suffix; see worlds/world-ids.ts).
 */
export function createAdmin (
  repos: Pick<Repositories, 'access' | 'agencies' | 'clients' | 'transaction' | 'staging'>, clock: Clock, clientIdOf = (clientId: string) => clientId
) {
  const agencyOrThrow = (agencyId: number) => {
    const agency = repos.agencies.getAgency(agencyId)
    if (agency === undefined) throw notFound(`No agency ${agencyId}`)
    return agency
  }
  const officeIds = (agencyId: number) => new Set(repos.agencies.listOffices(agencyId).map((o) => o.officeId))

  function checkOffice (agencyId: number, officeId: number, field: string): void {
    if (!officeIds(agencyId).has(officeId)) {
      throw validationFailed([{ field, message: `office ${officeId} is not an office of agency ${agencyId}` }])
    }
  }

  /** Stores a client (insert or replace), re-indexing its policies. */
  function save (agencyId: number, client: FixtureClient, replace: boolean): void {
    if (replace) replaceClient(repos.clients, agencyId, client)
    else insertClient(repos.clients, agencyId, client)
  }

  return {
    listIntegrations () {
      const subs = repos.access.listAllSubscriptions()
      return repos.access.listIntegrations().map((i) => ({
        clientId: i.clientId,
        name: i.name,
        agencies: subs.filter((s) => s.clientId === i.clientId).map((s) => ({ agencyId: s.agencyId, scopes: s.scopes, optedOut: s.optedOut }))
      }))
    },

    /** Adds an integration and answers its Client Id in this world. */
    addIntegration (added: FixtureIntegration): string {
      const i = { ...added, clientId: clientIdOf(added.clientId) }
      if (repos.access.getIntegration(i.clientId) !== undefined) throw conflict(`Integration ${i.clientId} already exists; DELETE it first or choose another clientId`)
      const errors: FieldError[] = []
      i.agencies.forEach((s, n) => {
        if (repos.agencies.getAgency(s.agencyId) === undefined) errors.push({ field: `agencies[${n}].agencyId`, message: `agency ${s.agencyId} does not exist` })
      })
      if (errors.length > 0) throw validationFailed(errors)
      repos.transaction(() => {
        repos.access.insertIntegration({ clientId: i.clientId, clientSecret: i.clientSecret, name: i.name })
        i.agencies.forEach((s, n) => repos.access.insertSubscription({ clientId: i.clientId, agencyId: s.agencyId, scopes: s.scopes, optedOut: s.optedOut === true }, n))
      })
      return i.clientId
    },

    removeIntegration (clientId: string): void {
      if (!repos.access.deleteIntegration(clientId)) throw notFound(`No integration ${clientId}`)
    },

    /** Changes (or creates) an integration's subscription to an agency. */
    patchSubscription (clientId: string, agencyId: number, patch: SubscriptionPatch) {
      if (repos.access.getIntegration(clientId) === undefined) throw notFound(`No integration ${clientId}`)
      agencyOrThrow(agencyId)
      return repos.transaction(() => {
        const current = repos.access.getSubscription(clientId, agencyId)
        const next = { clientId, agencyId, scopes: patch.scopes ?? current?.scopes ?? [], optedOut: patch.optedOut ?? current?.optedOut ?? false }
        if (current === undefined) repos.access.insertSubscription(next, repos.access.listSubscriptions(clientId).length)
        else repos.access.updateSubscription(next)
        return { agencyId, scopes: next.scopes, optedOut: next.optedOut, created: current === undefined }
      })
    },

    removeSubscription (clientId: string, agencyId: number): void {
      if (!repos.access.deleteSubscription(clientId, agencyId)) throw notFound(`Integration ${clientId} is not subscribed to agency ${agencyId}`)
    },

    listAgencies () {
      return repos.agencies.listAgencies().map((a) => ({ ...a, offices: repos.agencies.listOffices(a.agencyId), users: repos.agencies.listUsers(a.agencyId) }))
    },

    /** Adds an agency with its clients: as posted (validated), or its rows prepared on the fixture worker; its clients are staged in turns. */
    async addAgency (a: FixtureAgency | PreparedAgency): Promise<void> {
      const prepared = 'agency' in a ? a : checkedAgency(a)
      const { agencyId } = prepared.agency
      if (repos.agencies.getAgency(agencyId) !== undefined) throw conflict(`Agency ${agencyId} already exists; DELETE it first or choose another agencyId`)
      await addAgencyInTurns(repos, prepared)
    },

    removeAgency (agencyId: number): void {
      if (!repos.agencies.deleteAgency(agencyId)) throw notFound(`No agency ${agencyId}`)
    },

    addOffice (agencyId: number, o: FixtureOffice): void {
      agencyOrThrow(agencyId)
      if (officeIds(agencyId).has(o.officeId)) throw conflict(`Agency ${agencyId} already has office ${o.officeId}`)
      repos.agencies.insertOffice(agencyId, officeRow(o))
    },

    removeOffice (agencyId: number, officeId: number): void {
      const agency = agencyOrThrow(agencyId)
      if (agency.defaultOfficeId === officeId) throw conflict(`Office ${officeId} is the agency's default office; PATCH defaultOfficeId first`)
      const used = repos.clients.countOfficeClients(agencyId, officeId)
      if (used > 0) throw conflict(`Office ${officeId} has ${used} clients; move them first`)
      if (!repos.agencies.deleteOffice(agencyId, officeId)) throw notFound(`Agency ${agencyId} has no office ${officeId}`)
    },

    addUser (agencyId: number, u: FixtureUser): void {
      agencyOrThrow(agencyId)
      const users = repos.agencies.listUsers(agencyId)
      if (users.some((x) => x.userId === u.userId)) throw conflict(`Agency ${agencyId} already has user ${u.userId}`)
      if (u.homeOffice !== undefined) checkOffice(agencyId, u.homeOffice, 'homeOffice')
      repos.agencies.insertUser(agencyId, userRow(u))
    },

    removeUser (agencyId: number, userId: number): void {
      const agency = agencyOrThrow(agencyId)
      const roles = Object.entries(agency.defaultUsers).filter(([, id]) => id === userId).map(([role]) => role)
      repos.transaction(() => {
        if (!repos.agencies.deleteUser(agencyId, userId)) throw notFound(`Agency ${agencyId} has no user ${userId}`)
        if (roles.length > 0) {
          repos.agencies.setDefaultUsers(agencyId, Object.fromEntries(Object.entries(agency.defaultUsers).filter(([, id]) => id !== userId)))
        }
      })
    },

    /** A client as stored (read model with every group and the deleted flag), or 404. */
    getClient (agencyId: number, clientNumber: number): FixtureClient {
      agencyOrThrow(agencyId)
      const row = repos.clients.getClient(agencyId, clientNumber)
      if (row === undefined) throw notFound(`Agency ${agencyId} has no client ${clientNumber}`)
      return rowToClient(row)
    },

    searchClients (agencyId: number, text: string, limit: number) {
      agencyOrThrow(agencyId)
      return repos.clients.searchClients(agencyId, text, limit).map(rowToClient)
    },

    /** Creates or replaces a client as the agency would; `modified` moves to now unless given. */
    putClient (agencyId: number, clientNumber: number, input: ClientInput): { created: boolean; client: FixtureClient } {
      agencyOrThrow(agencyId)
      if (input.clientNumber !== undefined && input.clientNumber !== clientNumber) {
        throw badRequest(`clientNumber ${input.clientNumber} in the body differs from ${clientNumber} in the path`, [{ field: 'clientNumber', message: `must be ${clientNumber} or absent` }])
      }
      checkOffice(agencyId, input.details.officeId, 'details.officeId')
      const client: FixtureClient = {
        ...input,
        clientNumber,
        details: { ...input.details, modified: input.details.modified ?? clock.iso() }
      }
      const errors = clientErrors(client)
      if (errors.length > 0) throw validationFailed(errors)
      const created = repos.clients.getClient(agencyId, clientNumber) === undefined
      repos.transaction(() => save(agencyId, client, !created))
      return { created, client: rowToClient(repos.clients.getClient(agencyId, clientNumber)!) }
    },

    /** Merges a change into a client and moves its modified time. */
    patchClient (agencyId: number, clientNumber: number, patch: ClientPatch): FixtureClient {
      agencyOrThrow(agencyId)
      const row = repos.clients.getClient(agencyId, clientNumber)
      if (row === undefined) throw notFound(`Agency ${agencyId} has no client ${clientNumber}`)
      const current = rowToClient(row)
      const details = { ...current.details, ...(patch.details ?? {}), modified: clock.iso() } as FixtureClient['details']
      if (patch.details?.officeId !== undefined) checkOffice(agencyId, details.officeId, 'details.officeId')
      const next = {
        ...current,
        details,
        ...(patch.people === undefined ? {} : { people: patch.people }),
        ...(patch.contacts === undefined ? {} : { contacts: patch.contacts }),
        ...(patch.claims === undefined ? {} : { claims: patch.claims }),
        ...(patch.policies === undefined ? {} : { policies: patch.policies }),
        ...(patch.invoices === undefined ? {} : { invoices: patch.invoices }),
        ...(patch.deleted === undefined ? {} : { deleted: patch.deleted })
      } as FixtureClient
      const errors = clientErrors(next)
      if (errors.length > 0) throw validationFailed(errors)
      repos.transaction(() => save(agencyId, next, true))
      return rowToClient(repos.clients.getClient(agencyId, clientNumber)!)
    },

    /** Marks a client deleted (changed-clients with deleted=true finds it). */
    deleteClient (agencyId: number, clientNumber: number): FixtureClient {
      return this.patchClient(agencyId, clientNumber, { deleted: true })
    },

    newId: () => randomUUID()
  }
}

export type Admin = ReturnType<typeof createAdmin>
