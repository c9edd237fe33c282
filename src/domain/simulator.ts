import type { Faker } from '@faker-js/faker'
import type { Repositories } from '../db/index.js'
import { badRequest } from '../errors.js'
import type { FixtureClient } from '../fixture/schema.js'
import { MAX_CLIENT_NUMBER } from '../schemas/common.js'
import type { Clock } from './clock.js'
import { insertClient, replaceClient, rowToClient } from './world.js'

/**
 * The agency activity simulator: keeps changing clients the way an agency does (people and
 * contact edits, new policies, status changes, new clients, deletions), each change moving
 * `modified`, deterministically from its seed. It runs in real time (a timer) or in clock
 * time (each clock advance makes the changes that period would have seen).
 */

export interface SimulatorSettings {
  ratePerMinute: number
  seed: number
  /** Agencies to change (default: every active agency). */
  agencies?: number[]
  /** true: changes happen only when the sandbox clock is advanced. */
  clockTime?: boolean
}

export interface SimulatorStatus {
  running: boolean
  settings: SimulatorSettings | null
  changes: number
  byKind: Record<string, number>
}

export type ChangeKind = 'person' | 'contact' | 'policy' | 'status' | 'newClient' | 'delete'

/** Relative weights of the kinds of change. */
const WEIGHTS: [ChangeKind, number][] = [['person', 30], ['contact', 25], ['policy', 15], ['status', 15], ['newClient', 10], ['delete', 5]]
const STATUSES = ['Active', 'DeadFile', 'Prospect', 'Lead'] as const
/** Lines of business of new policies, with the policy type each reads with. */
const LOB_TYPES = { AUTOP: 'Auto', HOME: 'Home', PUMBR: 'Umbrella', BOAT: 'Boat', CGL: 'General Liability', BOP: 'Business Owners', WORK: 'Workers Compensation', AUTOB: 'Commercial Auto' } as const
const LOBS = Object.keys(LOB_TYPES) as (keyof typeof LOB_TYPES)[]

/** The data the simulator changes: read at each change, as a world's data may be replaced by a reset. */
export type SimulatorData = () => Pick<Repositories, 'agencies' | 'clients' | 'transaction'>

export function createSimulator (data: SimulatorData, clock: Clock, loadFaker: (seed: number) => Promise<{ faker: Faker; generateClient: typeof import('../fixture/generate.js').generateClient }>) {
  let settings: SimulatorSettings | null = null
  let timer: NodeJS.Timeout | null = null
  let tools: Awaited<ReturnType<typeof loadFaker>> | null = null
  let changes = 0
  let carry = 0
  const byKind: Record<string, number> = {}

  function pickKind (f: Faker): ChangeKind {
    const total = WEIGHTS.reduce((s, [, w]) => s + w, 0)
    let roll = f.number.int({ min: 0, max: total - 1 })
    for (const [kind, w] of WEIGHTS) {
      if (roll < w) return kind
      roll -= w
    }
    return 'person'
  }

  function agencyIds (): number[] {
    const wanted = settings?.agencies
    return data().agencies.listAgencies().filter((a) => a.active && (wanted === undefined || wanted.includes(a.agencyId))).map((a) => a.agencyId)
  }

  /**
   * Offices an agency may put a new client in, the one most clients get first: open offices
   * only (an archived one takes no new client), the real ones before the agency-level office 0.
   */
  function newClientOffices (agencyId: number, defaultOfficeId: number): number[] {
    const open = data().agencies.listOffices(agencyId).filter((o) => !o.archived).map((o) => o.officeId)
    const ordered = [...open.filter((id) => id !== 0), ...open.filter((id) => id === 0)]
    return ordered.length > 0 ? ordered : [defaultOfficeId]
  }

  /** One change at time `at`; returns its kind, or null when there is nothing to change. */
  function changeOnce (at: string): ChangeKind | null {
    if (tools === null) return null
    const f = tools.faker
    const agencies = agencyIds()
    if (agencies.length === 0) return null
    const agencyId = f.helpers.arrayElement(agencies)
    const repos = data()
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
        officeIds: newClientOffices(agencyId, agency.defaultOfficeId),
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
    switch (kind) {
      case 'person': {
        const people = c.people ?? []
        if (people.length === 0) return changeStatus(c)
        const p = f.helpers.arrayElement(people)
        const field = f.helpers.arrayElement(['lastName', 'occupation', 'maritalStatus'] as const)
        p[field] = field === 'lastName' ? f.person.lastName() : field === 'occupation' ? f.person.jobTitle() : f.helpers.arrayElement(['Single', 'Married', 'Divorced', 'Widowed'])
        p.modified = at
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

    function changeStatus (client: FixtureClient): ChangeKind {
      client.details.status = f.helpers.arrayElement(STATUSES.filter((s) => s !== client.details.status))
      save(client)
      return 'status'
    }
  }

  function run (count: number, fromMs: number, toMs: number): void {
    for (let i = 0; i < count; i++) {
      const at = new Date(Math.round(fromMs + ((i + 1) * (toMs - fromMs)) / count)).toISOString()
      const kind = changeOnce(at)
      if (kind === null) return
      changes++
      byKind[kind] = (byKind[kind] ?? 0) + 1
    }
  }

  function stop (): void {
    if (timer !== null) clearInterval(timer)
    timer = null
    settings = null
  }

  return {
    async start (next: SimulatorSettings): Promise<SimulatorStatus> {
      if (!(next.ratePerMinute > 0 && next.ratePerMinute <= 60_000)) {
        throw badRequest('ratePerMinute must be above 0 and at most 60000', [{ field: 'ratePerMinute', message: 'must be in (0, 60000]' }])
      }
      stop()
      tools = await loadFaker(next.seed)
      settings = next
      changes = 0
      carry = 0
      for (const k of Object.keys(byKind)) delete byKind[k]
      if (next.clockTime !== true) {
        const interval = Math.max(10, Math.round(60_000 / next.ratePerMinute))
        const perTick = Math.max(1, Math.round((next.ratePerMinute * interval) / 60_000))
        timer = setInterval(() => {
          const now = clock.nowMs()
          run(perTick, now, now)
        }, interval)
        timer.unref()
      }
      return this.status()
    },
    stop (): SimulatorStatus {
      stop()
      return this.status()
    },
    /** Clock-time mode: the changes of the period [from, to], spread over it. */
    onAdvance (fromMs: number, toMs: number): void {
      if (settings === null || settings.clockTime !== true || toMs <= fromMs) return
      const exact = (settings.ratePerMinute * (toMs - fromMs)) / 60_000 + carry
      const count = Math.floor(exact)
      carry = exact - count
      run(count, fromMs, toMs)
    },
    status (): SimulatorStatus {
      return { running: settings !== null, settings, changes, byKind: { ...byKind } }
    }
  }
}

export type Simulator = ReturnType<typeof createSimulator>
