import type { Faker } from '@faker-js/faker'
import type { Repositories } from '../db/index.js'
import { DEFAULT_OPERATOR_STATUS, driverOf } from '../fixture/complete.js'
import type { FixtureClient } from '../fixture/schema.js'
import { MAX_CLIENT_NUMBER } from '../schemas/common.js'
import { insertClient, replaceClient, rowToClient } from './world.js'

/**
 * One change of the agency activity simulator: a person or contact edit, a new policy, a status
 * change, a new client or a deletion, each moving `modified`, drawn from the simulator's seeded
 * generator. What it changes and when is decided by the simulator (simulator.ts).
 */

export type ChangeKind = 'person' | 'contact' | 'policy' | 'status' | 'newClient' | 'delete'

/** The data the simulator changes: read at each change, as a world's data may be replaced by a reset. */
export type SimulatorData = () => Pick<Repositories, 'agencies' | 'clients' | 'transaction'>

/** The generator the changes are drawn from, and the client builder (loaded on first use). */
export interface ChangeTools {
  faker: Faker
  generateClient: typeof import('../fixture/generate.js').generateClient
}

/** Relative weights of the kinds of change. */
const WEIGHTS: [ChangeKind, number][] = [['person', 30], ['contact', 25], ['policy', 15], ['status', 15], ['newClient', 10], ['delete', 5]]
const TOTAL_WEIGHT = WEIGHTS.reduce((s, [, w]) => s + w, 0)
const STATUSES = ['Active', 'DeadFile', 'Prospect', 'Lead'] as const
/** Lines of business of new policies, with the policy type each reads with. */
const LOB_TYPES = { AUTOP: 'Auto', HOME: 'Home', PUMBR: 'Umbrella', BOAT: 'Boat', CGL: 'General Liability', BOP: 'Business Owners', WORK: 'Workers Compensation', AUTOB: 'Commercial Auto' } as const
const LOBS = Object.keys(LOB_TYPES) as (keyof typeof LOB_TYPES)[]

function pickKind (f: Faker): ChangeKind {
  let roll = f.number.int({ min: 0, max: TOTAL_WEIGHT - 1 })
  for (const [kind, w] of WEIGHTS) {
    if (roll < w) return kind
    roll -= w
  }
  return 'person'
}

/**
 * Offices an agency may put a new client in, the one most clients get first: open offices
 * only (an archived one takes no new client), the real ones before the agency-level office 0.
 */
function newClientOffices (repos: ReturnType<SimulatorData>, agencyId: number, defaultOfficeId: number): number[] {
  const open = repos.agencies.listOffices(agencyId).filter((o) => !o.archived).map((o) => o.officeId)
  const ordered = [...open.filter((id) => id !== 0), ...open.filter((id) => id === 0)]
  return ordered.length > 0 ? ordered : [defaultOfficeId]
}

/**
 * One change at time `at` to one of `wanted`'s agencies (default: every active agency); returns
 * its kind, or null when there is nothing to change. Call it in a transaction of the data's.
 */
export function changeOnce (data: SimulatorData, tools: ChangeTools, at: string, wanted: readonly number[] | undefined): ChangeKind | null {
  const f = tools.faker
  const repos = data()
  const agencies = repos.agencies.listAgencies().filter((a) => a.active && (wanted === undefined || wanted.includes(a.agencyId))).map((a) => a.agencyId)
  if (agencies.length === 0) return null
  const agencyId = f.helpers.arrayElement(agencies)
  const ids = repos.clients.clientIds(agencyId, { deleted: false, officeId: null, sinceMs: null })
  let kind = pickKind(f)
  if (ids.length === 0) kind = 'newClient'
  // an agency whose highest client number is the largest there is gets no new client
  if (kind === 'newClient' && repos.clients.maxClientNumber(agencyId) >= MAX_CLIENT_NUMBER) {
    if (ids.length === 0) return null
    kind = 'status'
  }
  const save = (c: FixtureClient) => {
    c.details.modified = at
    repos.transaction(() => replaceClient(repos.clients, agencyId, c))
  }
  if (kind === 'newClient') {
    const agency = repos.agencies.getAgency(agencyId)!
    const clientNumber = repos.clients.maxClientNumber(agencyId) + 1
    const client = tools.generateClient(f, {
      clientNumber,
      officeIds: newClientOffices(repos, agencyId, agency.defaultOfficeId),
      now: new Date(at),
      modified: new Date(at),
      userNames: repos.agencies.listUsers(agencyId).map((u) => u.username),
      policyNumberPrefix: `SIM${agencyId}-`,
      agencyNum: String(agency.agencyId)
    })
    repos.transaction(() => insertClient(repos.clients, agencyId, client))
    return kind
  }
  const clientNumber = f.helpers.arrayElement(ids)
  const c = rowToClient(repos.clients.getClient(agencyId, clientNumber)!)
  const changeStatus = (client: FixtureClient): ChangeKind => {
    client.details.status = f.helpers.arrayElement(STATUSES.filter((s) => s !== client.details.status))
    save(client)
    return 'status'
  }
  switch (kind) {
    case 'person': {
      const people = c.people ?? []
      if (people.length === 0) return changeStatus(c)
      const p = f.helpers.arrayElement(people)
      const field = f.helpers.arrayElement(['lastName', 'occupation', 'maritalStatus'] as const)
      p[field] = field === 'lastName' ? f.person.lastName() : field === 'occupation' ? f.person.jobTitle() : f.helpers.arrayElement(['Single', 'Married', 'Divorced', 'Widowed'])
      p.modified = at
      // a driver is the person: it reads with the person's new name
      for (const policy of c.policies ?? []) for (const d of policy.drivers ?? []) if (field === 'lastName' && d.personId === p.id) d.lastName = p.lastName ?? undefined
      break
    }
    case 'contact': {
      const contacts = c.contacts ?? []
      if (contacts.length === 0) return changeStatus(c)
      const k = f.helpers.arrayElement(contacts)
      k.data = /Email/.test(k.type) ? f.internet.email().toLowerCase() : /Phone|Fax|Pager/.test(k.type) ? f.phone.number({ style: 'national' }) : f.internet.url()
      k.modified = at
      break
    }
    case 'policy': {
      const policies = c.policies ?? []
      const index = policies.length
      const code = f.helpers.arrayElement(LOBS)
      const day = at.slice(0, 10) + 'T00:00:00'
      policies.push({
        id: f.string.uuid(),
        modified: at,
        policyNumber: `SIM${agencyId}-${clientNumber}-${String(index + 1).padStart(2, '0')}-${f.string.alphanumeric({ length: 4, casing: 'upper' })}`,
        policyIndex: index,
        status: 'Active',
        statusDate: day,
        type: LOB_TYPES[code],
        title: code,
        applicationType: c.details.isCommercial ? 'Commercial' : 'Personal',
        effectiveDate: day,
        term: '12M',
        premium: f.number.int({ min: 300, max: 9000 }),
        paymentPlan: '',
        premiumMode: 'Annualize',
        numberOfTerms: 1,
        program: '',
        raterCode: 0,
        loBs: [{ code, name: code }],
        carrier: f.company.name(),
        // an auto policy's drivers are the client's people who hold a licence
        drivers: code === 'AUTOP' || code === 'AUTOB'
          ? (c.people ?? []).filter((x) => typeof x.driverLicenseNumber === 'string').map((x) => driverOf(x, DEFAULT_OPERATOR_STATUS, c.details.mailingAddress?.state ?? undefined))
          : [],
        boats: [],
        boatOperators: [],
        additionalInterests: [],
        locationReferences: []
      })
      c.policies = policies
      break
    }
    case 'status':
      return changeStatus(c)
    case 'delete':
      c.deleted = true
      break
  }
  save(c)
  return kind
}
