import type { FixtureOffice, FixtureUser } from '../fixture/schema.js'
import { SCOPES, type Scope } from '../schemas/common.js'
import { deletedClients, type DeletedClient } from './deleted.js'
import { numberIn, UnexpectedAnswer, VendorClient, type ApiVersion } from './http.js'
import { limiter } from './limit.js'

/**
 * The first phase of an import: everything but the client bodies, read through the vendor
 * API. Small (the id lists are the largest part), kept in memory and in the checkpoint.
 */

export interface AgencySurvey {
  agencyId: number
  scopes: Scope[]
  /** Learned from version 3.0 answering `include=Details` with more groups (the agency flag is false then). */
  supportsIncludes: boolean
  offices: FixtureOffice[]
  defaultOfficeId: number
  users: FixtureUser[]
  /** Live client numbers, ascending. */
  liveIds: number[]
  /** Deleted clients with their offices; their deletion times are searched while the clients are read. */
  deleted: DeletedClient[]
}

export interface SurveyOptions {
  client: VendorClient
  version: '4.0' | '3.0'
  /** Only these agencies (undefined: every agency listed). */
  agencies?: number[]
  concurrency: number
  warn: (message: string) => void
  /** Something the fixture cannot hold, left out: `kind` counts it for the summary. */
  leftOut: (kind: string, message: string) => void
  /** Phase lines: `agency 1001: 260 clients, 6 deleted`. */
  note: (message: string) => void
}

const OFFICE_STRINGS = ['officeDescription', 'subAgencyName', 'addressLine1', 'addressLine2', 'city', 'state', 'zipcode'] as const
const OFFICE_KEYS = new Set<string>(['officeId', 'primaryOffice', 'archived', ...OFFICE_STRINGS])
const USER_KEYS = new Set(['userId', 'username', 'firstName', 'lastName', 'email', 'homeOffice'])
const isId = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 2147483647
/** Office ids start at 0: the live service lists the agency-level office 0 besides the real ones. */
const isOfficeId = (v: unknown): v is number => v === 0 || isId(v)
type Rec = Record<string, unknown>

/** A JSON value as a short quote for a message. */
const quote = (v: unknown) => {
  const text = JSON.stringify(v) ?? String(v)
  return text.length > 60 ? `${text.slice(0, 60)}…` : text
}
const isRecord = (v: unknown): v is Rec => v !== null && typeof v === 'object' && !Array.isArray(v)

/** Ids ascending, once each; entries that are no id are left out and said. */
function idList (list: unknown[], at: string, leftOut: SurveyOptions['leftOut']): number[] {
  const ids = list.map(numberIn)
  const bad = list.filter((_, i) => !isId(ids[i]))
  if (bad.length > 0) leftOut('listed client numbers that are no id', `${at}: ${bad.length} listed client number${bad.length === 1 ? '' : 's'} that are no id (${quote(bad[0])}) left out`)
  return [...new Set(ids.filter(isId))].sort((a, b) => a - b)
}

function officeOf (raw: unknown, at: string, o: SurveyOptions): FixtureOffice | undefined {
  if (!isRecord(raw) || !isOfficeId(raw.officeId)) {
    o.leftOut('offices without a valid office id', `${at}: office ${quote(isRecord(raw) ? raw.officeId : raw)} left out: fixture offices have ids from 0 to 2147483647`)
    return undefined
  }
  const warn = o.warn
  const unknown = Object.keys(raw).filter((k) => !OFFICE_KEYS.has(k))
  if (unknown.length > 0) o.leftOut('office fields outside the fixture\'s office', `${at}: office ${raw.officeId}: ${unknown.join(', ')} left out (not in the fixture's office)`)
  const office: Rec = { officeId: raw.officeId }
  for (const key of OFFICE_STRINGS) {
    const v = raw[key]
    if (typeof v !== 'string' && v !== undefined) warn(`${at}: office ${raw.officeId}: ${key} ${quote(v)} written as a string`)
    // an object is written as its JSON: String() would call a `toString` key of the answer
    office[key] = typeof v === 'string' ? v : v === undefined || v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v)
  }
  office.primaryOffice = raw.primaryOffice === true
  if (raw.archived !== undefined && typeof raw.archived !== 'boolean') warn(`${at}: office ${raw.officeId}: archived ${quote(raw.archived)} is no boolean; written as false`)
  // the fixture's key order, which is the order the sandbox answers in
  return {
    officeId: office.officeId as number,
    officeDescription: office.officeDescription as string,
    subAgencyName: office.subAgencyName as string,
    primaryOffice: office.primaryOffice as boolean,
    addressLine1: office.addressLine1 as string,
    addressLine2: office.addressLine2 as string,
    city: office.city as string,
    state: office.state as string,
    zipcode: office.zipcode as string,
    // written only when set: false is the fixture's default, and 3.0 answers have no archived
    ...(raw.archived === true ? { archived: true } : {})
  }
}

function userOf (raw: unknown, offices: Set<number>, at: string, o: SurveyOptions): FixtureUser | undefined {
  if (!isRecord(raw) || !isId(raw.userId) || typeof raw.username !== 'string' || raw.username.length !== 3) {
    o.leftOut('users without an id or a 3-character username', `${at}: user ${quote(isRecord(raw) ? raw.userId : raw)} left out: a user needs an id from 1 and a 3-character username`)
    return undefined
  }
  const unknown = Object.keys(raw).filter((k) => !USER_KEYS.has(k))
  if (unknown.length > 0) o.leftOut('user fields outside the fixture\'s user', `${at}: user ${raw.userId}: ${unknown.join(', ')} left out (not in the fixture's user)`)
  // the fixture's key order, which is the order the sandbox answers in
  const named = { userId: raw.userId, username: raw.username } as FixtureUser
  for (const key of ['firstName', 'lastName', 'email'] as const) if (typeof raw[key] === 'string') named[key] = raw[key]
  if (isOfficeId(raw.homeOffice)) {
    if (offices.has(raw.homeOffice)) named.homeOffice = raw.homeOffice
    else o.leftOut('home offices not among the offices listed', `${at}: user ${raw.userId}: homeOffice ${raw.homeOffice} is not among the offices listed; left out`)
  }
  return { ...named, active: true }
}

/** Agencies and their scopes; in version 3.0 the listing has ids only and scopes are inferred per agency later. */
async function listAgencies (o: SurveyOptions): Promise<Array<{ agencyId: number; scopes?: Scope[] }>> {
  const path = VendorClient.path('/vendor/agencies', o.version)
  const listed = await o.client.getJsonArray(path)
  const known = new Set<string>(SCOPES)
  const seen = new Set<number>()
  const agencies = listed.flatMap((entry) => {
    const agencyId = o.version === '3.0' ? numberIn(entry) : isRecord(entry) ? entry.agencyId : undefined
    if (!isId(agencyId)) {
      o.leftOut('agency entries without an agency id', `GET ${path}: entry ${quote(entry)} left out: no agency id from 1 to 2147483647`)
      return []
    }
    if (seen.has(agencyId)) {
      o.leftOut('agencies listed more than once', `agency ${agencyId} is listed more than once; the first entry is imported`)
      return []
    }
    seen.add(agencyId)
    if (o.version === '3.0') return [{ agencyId }]
    const e = entry as Rec
    const scopes = Array.isArray(e.scopes) ? e.scopes.filter((s): s is string => typeof s === 'string') : []
    const unknown = scopes.filter((s) => !known.has(s))
    if (unknown.length > 0) o.leftOut('scopes unknown to the sandbox', `agency ${agencyId}: scopes ${unknown.join(', ')} left out (unknown to the sandbox)`)
    return [{ agencyId, scopes: [...new Set(scopes.filter((s): s is Scope => known.has(s)))] }]
  })
  const wanted = o.agencies === undefined ? undefined : new Set(o.agencies)
  for (const id of o.agencies ?? []) {
    if (!agencies.some((a) => a.agencyId === id)) o.warn(`agency ${id} is not listed for this integration; left out`)
  }
  return agencies.filter((a) => wanted === undefined || wanted.has(a.agencyId)).sort((a, b) => a.agencyId - b.agencyId)
}

/** 200 with a JSON array, or undefined for the 4xx answers a missing scope or version gives. */
async function optionalArray (client: VendorClient, path: string): Promise<unknown[] | undefined> {
  const answer = await client.get(path)
  if (answer.status >= 400 && answer.status < 500) return undefined
  return client.expectArray('GET', path, answer)
}

async function surveyAgency (o: SurveyOptions, agencyId: number, listedScopes: Scope[] | undefined): Promise<AgencySurvey> {
  const { client, version } = o
  const at = `agency ${agencyId}`
  const base = `/vendor/agency/${agencyId}`
  const scopes = new Set<Scope>(listedScopes ?? [])
  // only the 4.0 listing says which offices are archived: a 3.0 import reads it when it may
  const listed = (version === '3.0' ? await optionalArray(client, VendorClient.path(`${base}/offices`, '4.0')) : undefined) ??
    await client.getJsonArray(VendorClient.path(`${base}/offices`, version))
  const offices: FixtureOffice[] = []
  const officeSeen = new Set<number>()
  for (const office of listed.flatMap((raw) => officeOf(raw, at, o) ?? [])) {
    if (officeSeen.has(office.officeId)) o.leftOut('offices listed more than once', `${at}: office ${office.officeId} is listed more than once; the first entry is imported`)
    else {
      officeSeen.add(office.officeId)
      offices.push(office)
    }
  }
  if (offices.length === 0) {
    o.warn(`${at}: no office listed; a placeholder office 1 is written (a fixture agency needs one)`)
    offices.push({ officeId: 1, officeDescription: 'Office 1', subAgencyName: '', primaryOffice: true, addressLine1: '', addressLine2: '', city: '', state: '', zipcode: '' })
  }
  if (offices.every((of) => of.archived === true)) {
    // the fixture's default office may not be archived: keep the first one open, and say so
    o.warn(`${at}: every office is archived; office ${offices[0].officeId} written as not archived, to be the default office`)
    delete offices[0].archived
  }
  // a new client lands in the default office: an open one, a real office before the agency-level office 0
  const open = offices.filter((of) => of.archived !== true)
  const defaultOfficeId = (open.find((of) => of.primaryOffice) ?? open.find((of) => of.officeId !== 0) ?? open[0]).officeId
  const officeIds = new Set(offices.map((of) => of.officeId))

  // users: 4.0 only, with the user-list scope; a 3.0 import tries 4.0 to learn the scope
  const users: FixtureUser[] = []
  if (version === '3.0' || scopes.has('user-list')) {
    const answer = await optionalArray(client, VendorClient.path(`${base}/users`, '4.0'))
    if (answer !== undefined) {
      scopes.add('user-list')
      const userSeen = new Set<number>()
      for (const user of answer.flatMap((raw) => userOf(raw, officeIds, at, o) ?? [])) {
        if (userSeen.has(user.userId)) o.leftOut('users listed more than once', `${at}: user ${user.userId} is listed more than once; the first entry is imported`)
        else {
          userSeen.add(user.userId)
          users.push(user)
        }
      }
    }
  }

  let liveIds: number[] = []
  let deletedNumbers: number[] = []
  if (version === '3.0' || scopes.has('client-read')) {
    const all = await optionalArray(client, VendorClient.path(`${base}/clients`, version))
    if (all !== undefined) {
      scopes.add('client-read')
      liveIds = idList(all, at, o.leftOut)
      const live = new Set(liveIds)
      deletedNumbers = idList(await client.getJsonArray(VendorClient.path(`${base}/clients`, version, { deleted: 'true' })), at, o.leftOut).filter((n) => {
        if (!live.has(n)) return true
        o.leftOut('clients listed both live and deleted', `${at}: client ${n} is listed both live and deleted; imported as live`)
        return false
      })
    } else o.warn(`${at}: the client listing is not available (no client-read scope): no clients imported`)
  }

  // version 3.0's include flag, and in a 3.0 import the invoice opt-in: one client read
  let supportsIncludes = true
  if (liveIds.length > 0) {
    const probe = VendorClient.path(`${base}/client/${liveIds[0]}`, '3.0', { include: 'Details,Invoices' })
    const answer = await client.get(probe)
    const read = answer.status === 200 ? client.parse('GET', probe, answer) : undefined
    if (isRecord(read)) {
      const body = read
      supportsIncludes = !('people' in body)
      if (version === '3.0' && 'invoices' in body) scopes.add('invoice-read')
    }
  }
  if (version === '3.0') scopes.add('create-log-attachment-task')

  const deleted = await deletedClients({ client, version, agencyId, limit: limiter(o.concurrency) }, deletedNumbers, [...officeIds], defaultOfficeId)
  o.note(`${at}: ${offices.length} offices, ${users.length} users, ${liveIds.length} clients, ${deleted.length} deleted`)
  return {
    agencyId,
    // 4.0: as listed (the sandbox answers them in fixture order); 3.0: inferred, in the sandbox's order
    scopes: listedScopes ?? SCOPES.filter((s) => scopes.has(s)),
    supportsIncludes,
    offices,
    defaultOfficeId,
    users,
    liveIds,
    deleted
  }
}

/** Every agency the integration sees (or those asked for), ascending by id. */
export async function survey (o: SurveyOptions): Promise<AgencySurvey[]> {
  const agencies = await listAgencies(o)
  const surveyed: AgencySurvey[] = []
  for (const a of agencies) {
    try {
      surveyed.push(await surveyAgency(o, a.agencyId, a.scopes))
    } catch (e) {
      // an agency that became unavailable since the listing (403) is left out; anything else stops the import
      if (!(e instanceof UnexpectedAnswer && e.status === 403)) throw e
      o.leftOut('agencies no longer available (403)', `agency ${a.agencyId}: ${e.message}; left out`)
    }
  }
  return surveyed
}

export type { ApiVersion }
