import { randomUUID } from 'node:crypto'
import type { AgencyRow, Repositories } from '../db/index.js'
import { clientNumbersExhausted, tooManyRequests, validationFailed, type FieldError } from '../errors.js'
import { NO_DATE } from '../schemas/client.js'
import { MAX_CLIENT_NUMBER } from '../schemas/common.js'
import { LINES_OF_BUSINESS } from '../schemas/lob.js'
import { DEFAULT_OPERATOR_STATUS, driverOf } from '../fixture/complete.js'
import type { ClientCreateRequest } from '../schemas/writes.js'
import { parseTimestamp } from '../time.js'
import type { Clock } from './clock.js'
import { SlidingWindow } from './sliding-window.js'
import { checkEffectiveDate, checkPeopleRules } from './write-rules.js'
import type { Origin } from './writes.js'
import { insertClient } from './world.js'

/** ClientCreateRequest after binding and schema validation (camelCase). */
export type CreateClientCommand = ClientCreateRequest

/**
 * A create-client request as bound: a body that passed the schema, or any JSON that did not, with
 * the schema's errors (field paths as the spec writes them), so the rules add theirs to the same answer.
 */
export type CreateClientRequest =
  | { valid: true, body: CreateClientCommand }
  | { valid: false, body: unknown, schemaErrors: FieldError[] }

/** Accepted create-client requests per integration: 25 in any one second. */
export const CREATE_CLIENT_RATE = { max: 25, windowMs: 1000 }

/** The objects among a body's People, in order (the body may have failed the schema). */
function peopleOf (body: unknown): object[] {
  if (typeof body !== 'object' || body === null || !('people' in body) || !Array.isArray(body.people)) return []
  return body.people.filter((p): p is object => typeof p === 'object' && p !== null)
}

/** A body's Policy, whatever it is (the body may have failed the schema). */
function policyOf (body: unknown): unknown {
  return typeof body === 'object' && body !== null && 'policy' in body ? body.policy : undefined
}

/** The rules a schema cannot express, on any body: the First/Second people rule and the effective date. */
function ruleErrorsOf (body: unknown): FieldError[] {
  return [...checkPeopleRules(peopleOf(body)), ...checkEffectiveDate(policyOf(body))]
}

/** Lines of business whose policies have vehicles and drivers. */
const AUTO_LINES = new Set(['AUTOP', 'AUTOB'])

/** Task roles that need an agency default user, keyed by both spellings of the CSR role. */
const ROLE_KEY: Record<string, string> = { Csr: 'Csr', CSR: 'Csr', Producer: 'Producer', Agent1: 'Agent1', Agent2: 'Agent2', Agent3: 'Agent3' }

/**
 * A DateOnly of the request as the live service writes dates back: the calendar date at
 * midnight without a zone (`2024-10-08T00:00:00`), whatever time or zone the caller added.
 */
const localDate = (d: string) => `${d.slice(0, 10)}T00:00:00`
const dateTime = (d: string | undefined) => (d === undefined ? undefined : localDate(d))

/**
 * Client creation. `budget` is the accepted-creations window per integration, kept in the clock's
 * real time (not the time the sandbox clock was set to); only a creation that happened is counted.
 */
export function createClientCreator (repos: Pick<Repositories, 'agencies' | 'clients' | 'writes' | 'transaction'>, clock: Clock, budget = new SlidingWindow(CREATE_CLIENT_RATE.max, CREATE_CLIENT_RATE.windowMs)) {
  /** Rules beyond the schema, on a body that passed it. */
  function check (agency: AgencyRow, cmd: CreateClientCommand): FieldError[] {
    const errors: FieldError[] = []
    for (const [field, value] of [['Log.TS', cmd.log.ts], ['Task.DueDate', cmd.task?.dueDate]] as const) {
      if (value !== undefined && parseTimestamp(value) === null) errors.push({ field, message: `'${value}' is not a real date and time` })
    }
    if (cmd.officeId !== undefined) {
      const office = repos.agencies.listOffices(agency.agencyId).find((o) => o.officeId === cmd.officeId)
      if (office === undefined) {
        errors.push({ field: 'OfficeId', message: `office ${cmd.officeId} is not an office of this agency (see GET /vendor/agency/{agencyId}/offices)` })
      } else if (office.archived) {
        errors.push({
          field: 'OfficeId',
          message: `office ${cmd.officeId} is archived and cannot receive new clients; send the OfficeId of an office listed with archived: false, or leave OfficeId out for the agency's default office`
        })
      }
    }
    const role = cmd.task?.assignedToRole
    if (role !== undefined && ROLE_KEY[role] !== undefined) {
      const userId = agency.defaultUsers[ROLE_KEY[role]]
      if (userId === undefined || !repos.agencies.listUsers(agency.agencyId).some((u) => u.userId === userId)) {
        errors.push({ field: 'Task.AssignedToRole', message: `the agency has no default user for the ${role} role; assign the task to another role or to SpecifiedUser` })
      }
    }
    if (role === 'SpecifiedUser') {
      const email = cmd.task?.assignedToEmail?.trim() ?? ''
      if (email === '') errors.push({ field: 'Task.AssignedToEmail', message: 'is required when AssignedToRole is SpecifiedUser' })
      else if (!repos.agencies.listActiveUsers(agency.agencyId).some((u) => u.email?.toLowerCase() === email.toLowerCase())) {
        errors.push({ field: 'Task.AssignedToEmail', message: `${email} is not the email of an active user of this agency` })
      }
    }
    return errors
  }

  /** Creates the client, its policy shell, log note and task; returns the new client number. */
  function insert (agency: AgencyRow, cmd: CreateClientCommand, origin: Origin): number {
    const now = clock.iso()
    const users = repos.agencies.listUsers(agency.agencyId)
    const username = (role: string) => users.find((u) => u.userId === agency.defaultUsers[role])?.username
    return repos.transaction(() => {
      const clientNumber = repos.clients.maxClientNumber(agency.agencyId) + 1
      if (clientNumber > MAX_CLIENT_NUMBER) throw clientNumbersExhausted(agency.agencyId)
      let legacy = clientNumber * 100
      const record = () => ({ id: randomUUID(), modified: now, legacyId: ++legacy })
      // a field the request does not give is absent (undefined is left out of the stored JSON), never null
      const people = cmd.people.map((p) => ({
        ...record(),
        firstName: p.firstName,
        lastName: p.lastName,
        mainContactType: p.mainContactType,
        dateOfBirth: dateTime(p.dateOfBirth),
        driverLicenseNumber: p.driverLicenseNumber
      }))
      // each owner's contacts (the client's own, each person's) are numbered from 1 in the order given
      const contacts = (list: readonly { type: string; value: string }[] | undefined, personId: string | null) => (list ?? []).map((c, i) => ({
        ...record(), type: c.type, data: c.value, personId, isBillingContact: false, allowMassEmail: false, priority: i + 1
      }))
      const officeId = cmd.officeId ?? agency.defaultOfficeId
      const b = cmd.businessDetail
      const m = cmd.mailingAddress
      const address = m === undefined
        ? undefined
        : { address1: m.address1, address2: m.address2, city: m.city, state: m.state, zip: m.zip, countryCode: 'US' }
      const lobs = cmd.policy?.loBs ?? []
      // an auto line's shell lists the people who hold a licence as its drivers (principal operators until the agency says otherwise)
      const drivers = lobs.some((code) => AUTO_LINES.has(code))
        ? people.filter((p) => p.driverLicenseNumber !== undefined).map((p) => driverOf(p, DEFAULT_OPERATOR_STATUS, cmd.policy?.state))
        : []
      // the policy shell carries every field the client model marks non-optional, empty where the request gave nothing
      const policies = cmd.policy === undefined
        ? []
        : [{
            ...record(),
            policyNumber: cmd.policy.policyNumber ?? '',
            policyIndex: 0,
            statusDate: NO_DATE,
            type: '',
            title: '',
            applicationType: cmd.policy.applicationType ?? 'Undefined',
            policyState: cmd.policy.state,
            effectiveDate: dateTime(cmd.policy.effectiveDate),
            paymentPlan: '',
            premiumMode: '',
            numberOfTerms: 0,
            program: '',
            raterCode: 0,
            officeId,
            loBs: lobs.map((code) => ({ code, name: LINES_OF_BUSINESS[code] ?? code })),
            coverages: [],
            drivers,
            autos: [],
            boats: [],
            boatOperators: [],
            additionalInterests: [],
            locations: [],
            locationReferences: []
          }]
      // an open record: the create request's licenseNum and naics are kept beyond the read model's named fields
      const details = {
        id: randomUUID(),
        modified: now,
        clientType: 'Customer',
        status: cmd.status ?? 'Prospect',
        isPersonal: b === undefined,
        isCommercial: b !== undefined,
        companyName: b?.companyName,
        dbaName: b?.dbaName,
        businessType: b?.businessType,
        feinNum: b?.feinNum,
        website: b?.website,
        licenseNum: b?.licenseNum,
        naics: b?.naics,
        agencyNum: String(agency.agencyId),
        officeId,
        // the creation date in the live format of client dates (`2026-11-22T00:00:00`)
        clientSince: localDate(now),
        allowCrossSell: true,
        source: cmd.source,
        producer: username('Producer'),
        csr: username('Csr'),
        mainContacts: people.filter((p) => p.mainContactType === 'First' || p.mainContactType === 'Second').map((p) => p.id),
        mailingAddress: address
      }
      insertClient(repos.clients, agency.agencyId, {
        clientNumber,
        details,
        people,
        contacts: [...contacts(cmd.contacts, null), ...cmd.people.flatMap((p, i) => contacts(p.contacts, people[i].id))],
        claims: [],
        policies,
        invoices: []
      })
      const task = cmd.task === undefined
        ? undefined
        : {
            ...cmd.task,
            assignedToUserId: ROLE_KEY[cmd.task.assignedToRole] === undefined ? undefined : agency.defaultUsers[ROLE_KEY[cmd.task.assignedToRole]]
          }
      const policyId = cmd.log.policyId ?? policies[0]?.id
      repos.writes.insertWrite({
        agencyId: agency.agencyId,
        clientNumber,
        kind: 'client',
        refId: randomUUID(),
        integration: origin.integration,
        apiVersion: origin.apiVersion,
        status: 'applied',
        fingerprint: '',
        receivedAt: now,
        appliedAt: now,
        data: { ...cmd.log, policyId, task }
      })
      return clientNumber
    })
  }

  return {
    /**
     * Creates a client from a bound request that arrived at `arrivedAt` (the clock's real time);
     * returns its number. The checks come in this order, each answering every fault it finds at
     * once: the body (schema and rules, 400), the agency's data (offices, default users, 400), then
     * the integration's budget (429). Only a creation that happened uses the budget, at the time
     * its request arrived.
     */
    create (agency: AgencyRow, request: CreateClientRequest, origin: Origin, arrivedAt = clock.realMs()): number {
      const ruleErrors = ruleErrorsOf(request.body)
      if (!request.valid) throw validationFailed([...request.schemaErrors, ...ruleErrors])
      const errors = [...ruleErrors, ...check(agency, request.body)]
      if (errors.length > 0) throw validationFailed(errors)
      if (!budget.hasRoom(origin.integration, arrivedAt)) {
        throw tooManyRequests(`At most ${budget.max} create-client requests per second per integration; wait 1 second before retrying`, 1)
      }
      const clientNumber = insert(agency, request.body, origin)
      budget.record(origin.integration, arrivedAt)
      return clientNumber
    },

    /** What is left of the integration's create-client budget now. */
    budget: (integration: string) => ({ limit: budget.max, ...budget.state(integration, clock.realMs()) })
  }
}

export type ClientCreator = ReturnType<typeof createClientCreator>
